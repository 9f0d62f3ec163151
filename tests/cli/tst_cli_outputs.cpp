// The output files of every command, run as a user would (QProcess on the built binary): a
// target that is not a regular file (FIFO, folder), a symbolic link, a read-only file, a missing
// or read-only folder, two outputs naming one file or an output naming the input are refused
// before anything is computed (exit 2, a message naming the option) and left as they were.
// Also: an option given twice is refused, naming it; every command's help names the command.

#include "cliprocess.h"

#include <QDir>
#include <QFile>
#include <QFileInfo>
#include <QJsonArray>
#include <QJsonDocument>
#include <QJsonObject>
#include <QProcess>
#include <QTemporaryDir>
#include <QTest>

#include <memory>
#include <string>

#include <sys/stat.h>
#include <unistd.h>

namespace {

struct Run
{
    int exitCode = -1;
    QString out, err;
};

Run attnlab(const QStringList &arguments)
{
    const attn::test::CliRun r = attn::test::runAttnlab(arguments);
    return {r.exitCode, QString::fromUtf8(r.out), QString::fromUtf8(r.err)};
}

QByteArray contents(const QString &path)
{
    QFile f(path);
    return f.open(QIODevice::ReadOnly) ? f.readAll() : QByteArray();
}

bool isFifo(const QString &path)
{
    struct stat st
    {
    };
    return ::lstat(QFile::encodeName(path).constData(), &st) == 0 && S_ISFIFO(st.st_mode);
}

} // namespace

class TestCliOutputs : public QObject
{
    Q_OBJECT

private slots:
    void init();
    void refusedTargets_data();
    void refusedTargets();
    void readOnlyFolder();
    void standardOutputStillWorks();
    void distinctOutputsStillWork();
    void repeatedOption_data();
    void repeatedOption();
    void sessionOptionsMayBeOverridden();
    void helpNamesTheCommand_data();
    void helpNamesTheCommand();
    void parseErrorsReadAlike_data();
    void parseErrorsReadAlike();

private:
    std::unique_ptr<QTemporaryDir> m_dir;
    QString path(const QString &name) const { return m_dir->filePath(name); }
};

// A fresh folder for every test function and row, holding:
//   fifo, fifo.png  FIFOs (mkfifo)
//   folder/         a folder
//   ro.json         a read-only (0444) file holding "keep"
//   link.json       a symbolic link to target.json (holding "target")
//   batch/head-0.svg  a FIFO where a --batch-dir export would write
//   in.npz          an input file for compute (its content does not matter: refused before)
void TestCliOutputs::init()
{
    m_dir = std::make_unique<QTemporaryDir>();
    QVERIFY(m_dir->isValid());
    QCOMPARE(::mkfifo(QFile::encodeName(path("fifo")).constData(), 0644), 0);
    QCOMPARE(::mkfifo(QFile::encodeName(path("fifo.png")).constData(), 0644), 0);
    QVERIFY(QDir(m_dir->path()).mkdir(QStringLiteral("folder")));
    QVERIFY(QDir(m_dir->path()).mkdir(QStringLiteral("batch")));
    QCOMPARE(::mkfifo(QFile::encodeName(path("batch/head-0.svg")).constData(), 0644), 0);
    for (const auto &[name, text] :
         {std::pair {"ro.json", "keep"}, {"target.json", "target"}, {"in.npz", "not an npz"}}) {
        QFile f(path(QString::fromLatin1(name)));
        QVERIFY(f.open(QIODevice::WriteOnly));
        f.write(text);
    }
    QVERIFY(QFile::setPermissions(path("ro.json"),
                                  QFile::ReadOwner | QFile::ReadGroup | QFile::ReadOther));
    QVERIFY(QFile::link(path("target.json"), path("link.json")));
}

void TestCliOutputs::refusedTargets_data()
{
    // "@x" stands for the file x in the test's folder.
    QTest::addColumn<QStringList>("arguments");
    QTest::addColumn<QString>("message"); // substring of stderr
    const QStringList e1 {"experiment", "E1", "--n", "4"};
    QTest::newRow("experiment --out FIFO")
        << e1 + QStringList {"--out", "@fifo"} << "--out '@fifo' is a FIFO (named pipe)";
    QTest::newRow("experiment --out folder")
        << e1 + QStringList {"--out", "@folder"} << "--out '@folder' is a folder";
    QTest::newRow("experiment --out in a missing folder")
        << e1 + QStringList {"--out", "@missing/e1.txt"} << "the folder '@missing' does not exist";
    QTest::newRow("experiment --out read-only")
        << e1 + QStringList {"--out", "@ro.json"} << "--out '@ro.json' is read-only";
    QTest::newRow("experiment --out symbolic link")
        << e1 + QStringList {"--out", "@link.json"} << "--out '@link.json' is a symbolic link";
    QTest::newRow("experiment --out and --figure one file")
        << e1 + QStringList {"--out", "@same.png", "--figure", "@same.png"}
        << "--figure '@same.png' and --out '@same.png' are the same file";
    QTest::newRow("experiment --out and --figure one file via ./")
        << e1 + QStringList {"--out", "@same.png", "--figure", "@folder/../same.png"}
        << "are the same file";
    QTest::newRow("experiment --figure in a missing folder (no --out left behind)")
        << e1 + QStringList {"--out", "@e1.json", "--figure", "@missing/e1.png"}
        << "--figure '@missing/e1.png': the folder '@missing' does not exist";
    QTest::newRow("experiment --figure FIFO")
        << e1 + QStringList {"--figure", "@fifo.png"} << "is a FIFO";
    QTest::newRow("experiment --list --out FIFO")
        << QStringList {"experiment", "--list", "--out", "@fifo"} << "--out '@fifo' is a FIFO";
    QTest::newRow("sweep --out FIFO")
        << QStringList {"sweep", "--trials", "1", "--out", "@fifo"} << "--out '@fifo' is a FIFO";
    QTest::newRow("sweep --out folder")
        << QStringList {"sweep", "--trials", "1", "--out", "@folder"} << "is a folder";
    QTest::newRow("bench --out read-only")
        << QStringList {"bench", "--n", "8", "--out", "@ro.json"} << "'@ro.json' is read-only";
    QTest::newRow("bench --out in a missing folder")
        << QStringList {"bench", "--n", "8", "--out", "@missing/b.txt"} << "does not exist";
    QTest::newRow("compute --out FIFO")
        << QStringList {"compute", "--in", "@in.npz", "--out", "@fifo"} << "is a FIFO";
    QTest::newRow("compute --out read-only")
        << QStringList {"compute", "--in", "@in.npz", "--out", "@ro.json"} << "is read-only";
    QTest::newRow("compute --out is the input through a link")
        << QStringList {"compute", "--in", "@target.json", "--out", "@folder/../target.json"}
        << "is the input file";
    QTest::newRow("compute --in folder")
        << QStringList {"compute", "--in", "@folder", "--out", "@o.npz"}
        << "input '@folder' is a folder, not a regular file";
    QTest::newRow("compute --in FIFO")
        << QStringList {"compute", "--in", "@fifo", "--out", "@o.npz"}
        << "input '@fifo' is a FIFO (named pipe), not a regular file";
    const QStringList heatmap {"heatmap", "--n", "4", "--heads", "1", "--d-model", "4"};
    QTest::newRow("heatmap --out FIFO")
        << heatmap + QStringList {"--out", "@fifo", "--format", "png"} << "is a FIFO";
    QTest::newRow("heatmap --out folder")
        << heatmap + QStringList {"--out", "@folder", "--format", "svg"} << "is a folder";
    QTest::newRow("heatmap --out symbolic link")
        << heatmap + QStringList {"--out", "@link.json", "--format", "pdf"} << "symbolic link";
    QTest::newRow("heatmap --out in a missing folder")
        << heatmap + QStringList {"--out", "@missing/h.png"} << "does not exist";
    QTest::newRow("heatmap --data read-only")
        << heatmap + QStringList {"--data", "@ro.json"} << "--data '@ro.json' is read-only";
    QTest::newRow("heatmap --out and --data one file")
        << heatmap + QStringList {"--out", "@x.json", "--format", "png", "--data", "@x.json"}
        << "are the same file";
    QTest::newRow("heatmap --out is the metrics file --data writes")
        << heatmap + QStringList {"--data", "@s.csv", "--out", "@s_metrics.csv", "--format", "png"}
        << "--out '@s_metrics.csv' is one of the files --data '@s.csv' writes (s_metrics.csv)";
    QTest::newRow("heatmap --out is a head file of --batch-dir")
        << heatmap + QStringList {"--batch-dir", "@folder", "--out", "@folder/head-0.png"}
        << "--out '@folder/head-0.png' is one of the files --batch-dir '@folder' writes "
           "(head-*.png)";
    QTest::newRow("heatmap --batch-dir holding a FIFO head file")
        << heatmap + QStringList {"--batch-dir", "@batch", "--format", "svg"}
        << "--batch-dir '@batch/head-0.svg' is a FIFO";
    QTest::newRow("heatmap --batch-dir is a file")
        << heatmap + QStringList {"--batch-dir", "@target.json"} << "is a file, not a folder";
}

void TestCliOutputs::refusedTargets()
{
    QFETCH(QStringList, arguments);
    QFETCH(QString, message);
    const QString prefix = m_dir->path() + QLatin1Char('/');
    for (QString &a : arguments)
        if (a.startsWith(QLatin1Char('@')))
            a = prefix + a.mid(1);
    message.replace(QLatin1Char('@'), prefix);
    const QStringList before
        = QDir(m_dir->path())
              .entryList(QDir::AllEntries | QDir::System | QDir::Hidden | QDir::NoDotAndDotDot);

    const Run r = attnlab(arguments);
    QCOMPARE(r.exitCode, 2);
    QVERIFY2(r.err.contains(message), qPrintable(r.err));
    QVERIFY(r.out.isEmpty());
    // Everything as it was: the FIFOs, the read-only file, the link; no new file (no --out left
    // behind by a refused --figure), no temporary file.
    QVERIFY(isFifo(path("fifo")));
    QVERIFY(isFifo(path("fifo.png")));
    QVERIFY(isFifo(path("batch/head-0.svg")));
    QCOMPARE(contents(path("ro.json")), QByteArray("keep"));
    QVERIFY(!(QFileInfo(path("ro.json")).permissions() & QFile::WriteOwner));
    QVERIFY(QFileInfo(path("link.json")).isSymLink());
    QCOMPARE(contents(path("target.json")), QByteArray("target"));
    QVERIFY(QFileInfo(path("folder")).isDir());
    QCOMPARE(QDir(m_dir->path())
                 .entryList(QDir::AllEntries | QDir::System | QDir::Hidden | QDir::NoDotAndDotDot),
             before);
    QCOMPARE(QDir(path("folder")).entryList(QDir::AllEntries | QDir::NoDotAndDotDot),
             QStringList());
}

void TestCliOutputs::readOnlyFolder()
{
    // Root may write into a 0555 folder, so the refusal only shows for other users.
    if (::geteuid() == 0)
        QSKIP("running as root: a read-only folder is writable");
    QVERIFY(QFile::setPermissions(path("folder"), QFile::ReadOwner | QFile::ExeOwner));
    const Run r = attnlab({"experiment", "E1", "--n", "4", "--out", path("folder/e1.txt")});
    QVERIFY(QFile::setPermissions(path("folder"),
                                  QFile::ReadOwner | QFile::WriteOwner | QFile::ExeOwner));
    QCOMPARE(r.exitCode, 2);
    QVERIFY2(r.err.contains(QStringLiteral("is not writable")), qPrintable(r.err));
    QCOMPARE(QDir(path("folder")).entryList(QDir::AllEntries | QDir::NoDotAndDotDot),
             QStringList());
}

void TestCliOutputs::standardOutputStillWorks()
{
    for (const QStringList &arguments :
         {QStringList {"experiment", "E1", "--n", "4", "--out", "-"},
          QStringList {"experiment", "--list", "--out", "-"},
          QStringList {"sweep", "--trials", "1", "--keys", "4", "--dk", "4", "--out", "-"}}) {
        const Run r = attnlab(arguments);
        QCOMPARE(r.exitCode, 0);
        QVERIFY2(!r.out.isEmpty(), qPrintable(arguments.join(QLatin1Char(' '))));
    }
}

void TestCliOutputs::distinctOutputsStillWork()
{
    // A writable existing file is replaced; a new file in a folder reached through "..".
    QFile old(path("e1.csv"));
    QVERIFY(old.open(QIODevice::WriteOnly));
    old.write("old");
    old.close();
    const Run r = attnlab({"experiment", "E1", "--n", "4", "--format", "csv", "--out",
                           path("e1.csv"), "--figure", path("folder/../e1.png")});
    QCOMPARE(r.exitCode, 0);
    QVERIFY(contents(path("e1.csv")).startsWith("query,key_0,key_1,key_2,key_3,row_sum,"));
    QVERIFY(contents(path("e1.png")).startsWith("\x89PNG"));
}

void TestCliOutputs::repeatedOption_data()
{
    QTest::addColumn<QStringList>("arguments");
    QTest::addColumn<QString>("option");
    QTest::newRow("experiment --n twice")
        << QStringList {"experiment", "E1", "--n", "5", "--n", "6"} << "--n";
    QTest::newRow("experiment --d-k and --d_k (one parameter, two spellings)")
        << QStringList {"experiment", "E3", "--d-k", "4", "--d_k", "8"} << "--d-k";
    QTest::newRow("experiment --format twice")
        << QStringList {"experiment", "--list", "--format", "csv", "--format", "json"}
        << "--format";
    QTest::newRow("experiment --list twice")
        << QStringList {"experiment", "--list", "--list"} << "--list";
    QTest::newRow("compute --in twice")
        << QStringList {"compute", "--in", "a.npz", "--in", "b.npz", "--out", "c.npz"} << "--in";
    QTest::newRow("sweep --trials twice")
        << QStringList {"sweep", "--trials", "1", "--trials", "2"} << "--trials";
    QTest::newRow("bench --n twice") << QStringList {"bench", "--n", "8", "--n=16"} << "--n";
    QTest::newRow("heatmap --heads twice")
        << QStringList {"heatmap", "--heads", "2", "--heads", "4", "--out", "x.png"} << "--heads";
}

void TestCliOutputs::repeatedOption()
{
    QFETCH(QStringList, arguments);
    QFETCH(QString, option);
    const Run r = attnlab(arguments);
    QCOMPARE(r.exitCode, 2);
    QVERIFY2(r.err.contains(option + QLatin1String(" is given more than once")), qPrintable(r.err));
    QVERIFY(r.out.isEmpty());
}

void TestCliOutputs::sessionOptionsMayBeOverridden()
{
    // heatmap --session puts the session's options (here --n 11, --heads 4) in front of the
    // command line's: --n given again on the command line is not "given twice", and it wins.
    const QString session = path("s.attnlab.json");
    QFile f(session);
    QVERIFY(f.open(QIODevice::WriteOnly));
    f.write(R"({"format":"attnlab-session","version":1,
 "parameters":{"version":1,"n":11,"n_k":10,"d_model":64,"heads":4,"seed":"0","kind":"decoder",
 "mask":"none","padding":2,"scale_exponent":0.5,"temperature":1,"positional":true,
 "dtype":"float64"}})");
    f.close();
    const QString data = path("s.json");
    const Run r = attnlab({"heatmap", "--session", session, "--n", "3", "--data", data});
    QVERIFY2(r.exitCode == 0, qPrintable(r.err));
    const QJsonObject json = QJsonDocument::fromJson(contents(data)).object();
    QCOMPARE(json.value(QStringLiteral("query_labels")).toArray().size(), 3);
    QCOMPARE(json.value(QStringLiteral("heads")).toArray().size(), 4); // the session's
}

void TestCliOutputs::helpNamesTheCommand_data()
{
    QTest::addColumn<QStringList>("arguments");
    QTest::addColumn<QString>("usage");
    QTest::newRow("experiment") << QStringList {"experiment", "--help"}
                                << "Usage: attnlab experiment [options] [E<k>]\n";
    QTest::newRow("experiment E8") << QStringList {"experiment", "E8", "--help"}
                                   << "Usage: attnlab experiment [options] [E<k>]\n";
    QTest::newRow("heatmap") << QStringList {"heatmap", "--help"}
                             << "Usage: attnlab heatmap [options]";
    QTest::newRow("sweep") << QStringList {"sweep", "-h"} << "Usage: attnlab sweep [options]";
    QTest::newRow("compute") << QStringList {"compute", "--help"}
                             << "Usage: attnlab compute [options]";
    QTest::newRow("bench") << QStringList {"bench", "--help"} << "Usage: attnlab bench [options]";
}

void TestCliOutputs::helpNamesTheCommand()
{
    QFETCH(QStringList, arguments);
    QFETCH(QString, usage);
    const Run r = attnlab(arguments);
    QCOMPARE(r.exitCode, 0);
    QVERIFY2(r.out.startsWith(usage), qPrintable(r.out.left(200)));
}

void TestCliOutputs::parseErrorsReadAlike_data()
{
    // QCommandLineParser says "Unknown option 'bogus'." (no dashes, capital, full stop); every
    // command says it as its other usage errors read, naming the option as written.
    QTest::addColumn<QStringList>("arguments");
    QTest::addColumn<QString>("firstLine");
    for (const char *command : {"heatmap", "sweep", "compute", "bench", "train"})
        QTest::newRow((std::string(command) + " --bogus").c_str())
            << QStringList {QLatin1String(command), QStringLiteral("--bogus")}
            << QStringLiteral("attnlab %1: unknown option '--bogus'").arg(QLatin1String(command));
    QTest::newRow("experiment E1 --bogus")
        << QStringList {"experiment", "E1", "--bogus"}
        << QStringLiteral("attnlab experiment: unknown option '--bogus'");
    QTest::newRow("heatmap -z") << QStringList {"heatmap", "-z"}
                                << QStringLiteral("attnlab heatmap: unknown option '-z'");
    QTest::newRow("heatmap --bogus=3")
        << QStringList {"heatmap", "--bogus=3"}
        << QStringLiteral("attnlab heatmap: unknown option '--bogus'");
    QTest::newRow("heatmap --n without its value")
        << QStringList {"heatmap", "--n"}
        << QStringLiteral("attnlab heatmap: missing value after '--n'");
}

void TestCliOutputs::parseErrorsReadAlike()
{
    QFETCH(QStringList, arguments);
    QFETCH(QString, firstLine);
    const Run r = attnlab(arguments);
    QCOMPARE(r.exitCode, 2);
    QCOMPARE(r.err.section(QLatin1Char('\n'), 0, 0), firstLine);
    QVERIFY2(r.err.contains(QStringLiteral("--help")), qPrintable(r.err));
}

QTEST_GUILESS_MAIN(TestCliOutputs)
#include "tst_cli_outputs.moc"
