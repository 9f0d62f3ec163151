// `attnlab experiment` and `attnlab sweep` run as a user would (QProcess on the built binary):
// listing, the three formats, NumPy's digits for E1–E3, --out, --figure, help, and exit status 2
// with a message naming the bad argument.

#include "cliprocess.h"

#include <QFile>
#include <QImage>
#include <QJsonArray>
#include <QJsonDocument>
#include <QJsonObject>
#include <QTemporaryDir>
#include <QTest>

namespace {

using Run = attn::test::CliRun;

Run attnlab(const QStringList &arguments)
{
    return attn::test::runAttnlab(arguments);
}

QByteArray fixture(const QString &name)
{
    QFile f(QStringLiteral(ATTN_FIXTURE_DIR "/experiments/") + name);
    return f.open(QIODevice::ReadOnly) ? f.readAll() : QByteArray();
}

} // namespace

class TestCliExperiment : public QObject
{
    Q_OBJECT

private slots:
    void list_data();
    void list();
    void jsonHasIdParamsRows();
    void textTable();
    void csvEqualsNumpy_data();
    void csvEqualsNumpy();
    void outFile();
    void figure_data();
    void figure();
    void help();
    void helpShowsDefaults_data();
    void helpShowsDefaults();
    void e8SingleSizeExponentNotAvailable();
    void badArguments_data();
    void badArguments();
};

void TestCliExperiment::list_data()
{
    QTest::addColumn<QString>("format");
    QTest::newRow("table") << "table";
    QTest::newRow("csv") << "csv";
    QTest::newRow("json") << "json";
}

void TestCliExperiment::list()
{
    QFETCH(QString, format);
    const Run r = attnlab({"experiment", "--list", "--format", format});
    QCOMPARE(r.exitCode, 0);
    for (int k : {1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 14, 15, 16})
        QVERIFY2(r.out.contains(QStringLiteral("E%1").arg(k).toLatin1()), r.out.constData());
    QVERIFY(r.out.contains("The mask-convention trap"));
    if (format == QLatin1String("json")) {
        const QJsonArray rows = QJsonDocument::fromJson(r.out).object().value("rows").toArray();
        QCOMPARE(rows.size(), 15);
        QCOMPARE(rows[11].toObject().value("id").toString(), QStringLiteral("E12"));
        QCOMPARE(rows[14].toObject().value("id").toString(), QStringLiteral("E16"));
    }
}

void TestCliExperiment::jsonHasIdParamsRows()
{
    const Run r = attnlab({"experiment", "e6", "--offset", "7", "--format", "json"});
    QCOMPARE(r.exitCode, 0);
    QJsonParseError error;
    const QJsonObject o = QJsonDocument::fromJson(r.out, &error).object();
    QVERIFY2(error.error == QJsonParseError::NoError, qPrintable(error.errorString()));
    QCOMPARE(o.value("id").toString(), QStringLiteral("E6"));
    const QJsonObject params = o.value("params").toObject();
    QCOMPARE(params.value("offset").toInt(), 7); // given
    QCOMPARE(params.value("d_model").toInt(), 16); // default filled in
    const QJsonArray rows = o.value("rows").toArray();
    QCOMPARE(rows.size(), 8);
    const QStringList columns = {"pair", "omega", "angle", "max_error"};
    for (const QJsonValue &row : rows) {
        QCOMPARE(row.toObject().keys().size(), columns.size());
        for (const QString &c : columns)
            QVERIFY2(row.toObject().contains(c), qPrintable(c));
        QVERIFY(row.toObject().value("max_error").toDouble() <= 1e-13);
        QCOMPARE(row.toObject().value("angle").toDouble(),
                 row.toObject().value("omega").toDouble() * 7.0);
    }
    QVERIFY(o.value("scalars").toObject().value("worst_error").toDouble() <= 1e-13);
}

void TestCliExperiment::textTable()
{
    const Run r = attnlab({"experiment", "E7"});
    QCOMPARE(r.exitCode, 0);
    const QList<QByteArray> lines = r.out.split('\n');
    QVERIFY(lines.value(0).startsWith("E7"));
    QCOMPARE(lines.value(2).simplified(), QByteArray("position change_no_mask change_causal"));
    // Positions 0–4 print an exact 0.0 in the causal column.
    int zeros = 0;
    for (const QByteArray &line : lines) {
        const QList<QByteArray> cells = line.simplified().split(' ');
        if (cells.size() == 3 && cells[2] == "0.0")
            ++zeros;
    }
    QCOMPARE(zeros, 5);
}

void TestCliExperiment::csvEqualsNumpy_data()
{
    QTest::addColumn<QStringList>("arguments");
    QTest::addColumn<QString>("fixture");
    QTest::newRow("experiment E1")
        << QStringList {"experiment", "E1", "--format", "csv"} << "e1_one_head.csv";
    QTest::newRow("experiment E2")
        << QStringList {"experiment", "E2", "--format", "csv"} << "e2_scaling_sweep.csv";
    QTest::newRow("experiment E3")
        << QStringList {"experiment", "E3", "--format", "csv"} << "e3_softmax_collapse.csv";
    QTest::newRow("sweep as in the issue")
        << QStringList {"sweep", "--seed",           "1",        "--trials", "4000", "--keys", "16",
                        "--dk",  "4,16,64,256,1024", "--format", "csv"}
        << "e2_scaling_sweep.csv";
}

void TestCliExperiment::csvEqualsNumpy()
{
    QFETCH(QStringList, arguments);
    QFETCH(QString, fixture);
    const QByteArray expected = ::fixture(fixture);
    QVERIFY(!expected.isEmpty());
    const Run r = attnlab(arguments);
    QCOMPARE(r.exitCode, 0);
    QCOMPARE(r.out, expected);
}

void TestCliExperiment::outFile()
{
    QTemporaryDir dir;
    QVERIFY(dir.isValid());
    const QString path = dir.filePath("e3.json");
    const Run toFile
        = attnlab({"experiment", "E3", "--keys", "300", "--format", "json", "--out", path});
    QCOMPARE(toFile.exitCode, 0);
    QVERIFY(toFile.out.isEmpty());
    const Run toStdout = attnlab({"experiment", "E3", "--keys", "300", "--format", "json"});
    QFile f(path);
    QVERIFY(f.open(QIODevice::ReadOnly));
    QCOMPARE(f.readAll(), toStdout.out);

    const QString sweepPath = dir.filePath("sweep.csv");
    const Run sweep = attnlab(
        {"sweep", "--trials", "100", "--dk", "4,8", "--format", "csv", "--out", sweepPath});
    QCOMPARE(sweep.exitCode, 0);
    QFile s(sweepPath);
    QVERIFY(s.open(QIODevice::ReadOnly));
    QCOMPARE(s.readAll().count('\n'), 3); // header + two d_k
}

void TestCliExperiment::figure_data()
{
    QTest::addColumn<QString>("id");
    QTest::addColumn<QString>("file");
    QTest::newRow("E10 png") << "E10"
                             << "e10.png";
    QTest::newRow("E5 svg") << "E5"
                            << "e5.svg";
}

void TestCliExperiment::figure()
{
    QFETCH(QString, id);
    QFETCH(QString, file);
    QTemporaryDir dir;
    const QString path = dir.filePath(file);
    const Run r = attnlab({"experiment", id, "--figure", path, "--figure-size", "640x480"});
    QCOMPARE(r.exitCode, 0);
    QVERIFY(r.out.contains("query") || r.out.contains("position"));
    QFile f(path);
    QVERIFY2(f.open(QIODevice::ReadOnly), qPrintable(path));
    const QByteArray bytes = f.readAll();
    if (file.endsWith(QLatin1String(".png"))) {
        const QImage image = QImage::fromData(bytes, "PNG");
        QCOMPARE(image.size(), QSize(640, 480));
    } else {
        QVERIFY(bytes.contains("<svg"));
    }
}

void TestCliExperiment::help()
{
    const Run all = attnlab({"experiment", "--help"});
    QCOMPARE(all.exitCode, 0);
    for (const char *text : {"--list", "--format", "--figure", "E12", "--heads-list",
                             "--vector-scale", "columns: d_k, score_std, sqrt_dk"})
        QVERIFY2(all.out.contains(text), text);
    const Run one = attnlab({"experiment", "E8", "--help"});
    QCOMPARE(one.exitCode, 0);
    QVERIFY(one.out.contains("--memory-budget-mib"));
    QVERIFY(!one.out.contains("--heads-list"));
    const Run sweep = attnlab({"sweep", "--help"});
    QCOMPARE(sweep.exitCode, 0);
    QVERIFY(sweep.out.contains("--dk"));
}

void TestCliExperiment::helpShowsDefaults_data()
{
    QTest::addColumn<QStringList>("arguments");
    QTest::addColumn<QStringList>("lines"); // each must appear on one help line, in this order
    QTest::newRow("sweep") << QStringList {"sweep", "--help"}
                           << QStringList {"--trials", "[default: 4000]"};
    QTest::newRow("sweep list") << QStringList {"sweep", "--help"}
                                << QStringList {"--dk", "[default: 4,16,64,256,1024]"};
    QTest::newRow("experiment") << QStringList {"experiment", "--help"}
                                << QStringList {"--format", "[default: table]"};
    QTest::newRow("experiment figure size") << QStringList {"experiment", "--help"}
                                            << QStringList {"--figure-size", "[default: 1200x800]"};
    QTest::newRow("E8 repeats") << QStringList {"experiment", "E8", "--help"}
                                << QStringList {"--repeats", "[default: 5, range 1-1000]"};
    QTest::newRow("E8 n list") << QStringList {"experiment", "E8", "--help"}
                               << QStringList {"--n <list>",
                                               "[default: 512,1024,2048,4096, each 1-65536]"};
    QTest::newRow("E8 kernel choice")
        << QStringList {"experiment", "E8", "--help"}
        << QStringList {"--kernel", "[default: materialized]", "materialized | streaming | loop"};
    QTest::newRow("E8 seed") << QStringList {"experiment", "E8", "--help"}
                             << QStringList {"--seed <int>",
                                             "[default: 0, range 0-18446744073709551615]"};
    QTest::newRow("compute") << QStringList {"compute", "--help"}
                             << QStringList {"--dtype", "[default: float64]"};
    QTest::newRow("compute budget") << QStringList {"compute", "--help"}
                                    << QStringList {"--memory-budget-mib", "[default: 2048]"};
    QTest::newRow("bench") << QStringList {"bench", "--help"}
                           << QStringList {"--repeat", "[default: 5]"};
    QTest::newRow("heatmap budget") << QStringList {"heatmap", "--help"}
                                    << QStringList {"--memory-budget-mib", "[default: 2048]"};
}

void TestCliExperiment::helpShowsDefaults()
{
    QFETCH(QStringList, arguments);
    QFETCH(QStringList, lines);
    const Run r = attnlab(arguments);
    QCOMPARE(r.exitCode, 0);
    // QCommandLineParser wraps long descriptions: join each option's continuation lines.
    QStringList entries;
    for (const QString &line : QString::fromUtf8(r.out).split(QLatin1Char('\n'))) {
        const QString t = line.trimmed();
        // An option starts at column 2 (a continuation is indented further).
        const bool option = line.startsWith(QLatin1String("  -"))
            || line.startsWith(QLatin1String("       --")); // an experiment's parameter
        if (option || entries.isEmpty())
            entries << t;
        else
            entries.last() += QLatin1Char(' ') + t;
    }
    bool found = false;
    for (const QString &entry : entries) {
        if (!entry.startsWith(lines.first()))
            continue;
        qsizetype at = 0;
        found = true;
        for (const QString &part : lines) {
            at = entry.indexOf(part, at);
            if (at < 0) {
                found = false;
                break;
            }
        }
        if (found)
            break;
    }
    QVERIFY2(found, r.out.constData());
}

void TestCliExperiment::e8SingleSizeExponentNotAvailable()
{
    // Regression (new-user trial): one n printed "fitted exponent ... nan".
    const Run text = attnlab({"experiment", "E8", "--n", "32", "--repeats", "1"});
    QCOMPARE(text.exitCode, 0);
    QVERIFY2(!text.out.contains("nan"), text.out.constData());
    QVERIFY2(text.out.contains("n/a (needs"), text.out.constData());
    QVERIFY2(text.out.contains("# fitted_exponent = n/a"), text.out.constData());
    const Run json
        = attnlab({"experiment", "E8", "--n", "32", "--repeats", "1", "--format", "json"});
    QCOMPARE(json.exitCode, 0);
    const QJsonObject o = QJsonDocument::fromJson(json.out).object();
    QVERIFY(o.value("scalars").toObject().contains("fitted_exponent"));
    QVERIFY(o.value("scalars").toObject().value("fitted_exponent").isNull());
    // Two sizes give a number.
    const Run two
        = attnlab({"experiment", "E8", "--n", "16,32", "--repeats", "1", "--format", "json"});
    QCOMPARE(two.exitCode, 0);
    QVERIFY(QJsonDocument::fromJson(two.out)
                .object()
                .value("scalars")
                .toObject()
                .value("fitted_exponent")
                .isDouble());
}

void TestCliExperiment::badArguments_data()
{
    QTest::addColumn<QStringList>("arguments");
    QTest::addColumn<QString>("mentioned");
    QTest::newRow("unknown experiment") << QStringList {"experiment", "E13"} << "E13";
    QTest::newRow("no experiment") << QStringList {"experiment"} << "--list";
    QTest::newRow("two experiments") << QStringList {"experiment", "E1", "E2"} << "E1', 'E2";
    QTest::newRow("parameter of another experiment")
        << QStringList {"experiment", "E2", "--heads", "4"} << "--heads";
    QTest::newRow("unknown option") << QStringList {"experiment", "E2", "--bogus", "1"} << "bogus";
    QTest::newRow("bad integer") << QStringList {"experiment", "E2", "--trials", "abc"} << "trials";
    QTest::newRow("out of range") << QStringList {"experiment", "E1", "--n", "0"} << "'n'";
    QTest::newRow("bad list") << QStringList {"experiment", "E3", "--d-k", "16,x"} << "d_k";
    QTest::newRow("bad choice") << QStringList {"experiment", "E8", "--kernel", "magic"}
                                << "kernel";
    QTest::newRow("over memory budget")
        << QStringList {"experiment", "E8", "--n", "60000"} << "n = 60000";
    QTest::newRow("bad format") << QStringList {"experiment", "E1", "--format", "xml"}
                                << "--format";
    QTest::newRow("bad figure size")
        << QStringList {"experiment", "E1", "--figure", "x.png", "--figure-size", "big"}
        << "--figure-size";
    QTest::newRow("sweep bad dk") << QStringList {"sweep", "--dk", "4,x"} << "--dk";
    QTest::newRow("sweep zero trials") << QStringList {"sweep", "--trials", "0"} << "--trials";
    QTest::newRow("sweep bad format") << QStringList {"sweep", "--format", "yaml"} << "--format";
    QTest::newRow("sweep stray argument") << QStringList {"sweep", "E2"} << "'E2'";
}

void TestCliExperiment::badArguments()
{
    QFETCH(QStringList, arguments);
    QFETCH(QString, mentioned);
    const Run r = attnlab(arguments);
    QCOMPARE(r.exitCode, 2);
    QVERIFY2(QString::fromUtf8(r.err).contains(mentioned), r.err.constData());
    QVERIFY(r.out.isEmpty());
}

QTEST_GUILESS_MAIN(TestCliExperiment)
#include "tst_cli_experiment.moc"
