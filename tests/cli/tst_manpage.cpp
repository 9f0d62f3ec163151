// The manual page (docs/attnlab.1) documents every option that `attnlab --help` and each
// `attnlab <command> --help` print, each in its own section, so the two cannot drift apart;
// and it is a man page man(1) reads without warnings.

#include <QFile>
#include <QProcess>
#include <QRegularExpression>
#include <QStandardPaths>
#include <QTest>

namespace {

QString runHelp(const QStringList &args)
{
    QProcess process;
    process.setProgram(QStringLiteral(ATTNLAB_EXE));
    process.setArguments(args);
    process.start();
    if (!process.waitForFinished(60000) || process.exitCode() != 0)
        return {};
    return QString::fromUtf8(process.readAllStandardOutput());
}

/// The options of the "Options:" block of a --help text: "-n", "--d-model", … (aliases too).
QStringList helpOptions(const QString &help)
{
    QStringList options;
    bool inOptions = false;
    // An option starts its line after QCommandLineParser's indent of two spaces; a description
    // wrapped onto the next line (deeper indent) may begin with an option it mentions
    // ("--window.") and is not one.
    static const QRegularExpression lead(QStringLiteral("^ {1,4}(-[^\\s<]+(?:,\\s*-[^\\s<]+)*)"));
    for (const QString &line : help.split(QLatin1Char('\n'))) {
        if (line.startsWith(QLatin1String("Options:"))) {
            inOptions = true;
            continue;
        }
        if (inOptions && !line.isEmpty() && !line.at(0).isSpace())
            break; // the next block ("Arguments:", "Experiments …")
        if (!inOptions)
            continue;
        const auto m = lead.match(line);
        if (!m.hasMatch())
            continue;
        for (QString name : m.captured(1).split(QLatin1Char(','))) {
            name = name.trimmed();
            if (name.contains(QLatin1Char('=')))
                name = name.left(name.indexOf(QLatin1Char('=')));
            options << name;
        }
    }
    return options;
}

/// How troff source writes an option: every '-' escaped.
QString troff(const QString &option)
{
    QString t = option;
    return t.replace(QLatin1String("-"), QLatin1String("\\-"));
}

} // namespace

class TestManPage : public QObject
{
    Q_OBJECT

private slots:
    void initTestCase()
    {
        QFile f(QStringLiteral(ATTN_MANPAGE));
        QVERIFY2(f.open(QIODevice::ReadOnly), ATTN_MANPAGE);
        m_page = QString::fromUtf8(f.readAll());
        QVERIFY(m_page.startsWith(QLatin1String(".\\\""))
                || m_page.startsWith(QLatin1String(".TH")));
    }

    void everyOptionDocumented_data()
    {
        QTest::addColumn<QString>("command"); // empty: the window (top level)
        QTest::newRow("window") << QString();
        for (const char *c : {"heatmap", "animate", "sweep", "experiment", "compute", "bench",
                              "train", "model", "heads", "tokenize"})
            QTest::newRow(c) << QString::fromLatin1(c);
    }

    void everyOptionDocumented()
    {
        QFETCH(QString, command);
        const QString help
            = runHelp(command.isEmpty() ? QStringList {QStringLiteral("--help")}
                                        : QStringList {command, QStringLiteral("--help")});
        QVERIFY2(!help.isEmpty(), "no --help output");
        const QStringList options = helpOptions(help);
        QVERIFY2(options.size() >= 2, qPrintable(help));

        // The command's own section: from its .SS heading (or .SH OPTIONS) to the next heading.
        const QString heading = command.isEmpty() ? QStringLiteral(".SH OPTIONS")
                                                  : QStringLiteral(".SS \"attnlab %1").arg(command);
        const qsizetype start = m_page.indexOf(heading);
        QVERIFY2(start >= 0, qPrintable(QStringLiteral("no section '%1'").arg(heading)));
        static const QRegularExpression next(QStringLiteral("\\n\\.S[SH] "));
        const auto end = next.match(m_page, start + heading.size());
        const QString section
            = m_page.mid(start, end.hasMatch() ? end.capturedStart() - start : -1);

        QStringList missing;
        for (const QString &option : options) {
            if (option == QLatin1String("-h") || option == QLatin1String("--help"))
                continue; // documented once for every command
            if (!section.contains(troff(option)))
                missing << option;
        }
        QVERIFY2(missing.isEmpty(),
                 qPrintable(QStringLiteral("not in the man page's %1 section: %2")
                                .arg(heading, missing.join(QStringLiteral(", ")))));
        // And every command is listed in `attnlab --help`.
        if (!command.isEmpty())
            QVERIFY(runHelp({QStringLiteral("--help")}).contains(command));
    }

    void manReadsItWithoutWarnings()
    {
        const QString man = QStandardPaths::findExecutable(QStringLiteral("man"));
        if (man.isEmpty())
            QSKIP("man(1) is not installed");
        QProcess process;
        QProcessEnvironment env = QProcessEnvironment::systemEnvironment();
        env.insert(QStringLiteral("LC_ALL"), QStringLiteral("C.UTF-8"));
        env.insert(QStringLiteral("MANWIDTH"), QStringLiteral("100"));
        process.setProcessEnvironment(env);
        process.start(
            man,
            {QStringLiteral("--warnings"), QStringLiteral("-l"), QStringLiteral(ATTN_MANPAGE)});
        QVERIFY(process.waitForFinished(60000));
        const QString warnings = QString::fromUtf8(process.readAllStandardError());
        const QString text = QString::fromUtf8(process.readAllStandardOutput());
        QVERIFY2(warnings.trimmed().isEmpty(), qPrintable(warnings));
        QVERIFY(text.contains(QLatin1String("attnlab - see and measure")));
    }

private:
    QString m_page;
};

QTEST_MAIN(TestManPage)
#include "tst_manpage.moc"
