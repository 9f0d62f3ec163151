// `attnlab experiment` and `attnlab sweep` run as a user would (QProcess on the built binary):
// listing, the three formats, NumPy's digits for E1–E3, --out, --figure (the library's export of
// the same result, pixel for pixel), help, and exit status 2 with a message naming the bad
// argument.

#include "cliprocess.h"
#include "core/experiments/experiments.h"
#include "imagecompare.h"
#include "ui/charts/experimentfigure.h"

#include <QCoreApplication>
#include <QDir>
#include <QFile>
#include <QImage>
#include <QJsonArray>
#include <QJsonDocument>
#include <QJsonObject>
#include <QTemporaryDir>
#include <QTest>

#include <algorithm>
#include <cmath>

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
    void figureEqualsLibraryExport_data();
    void figureEqualsLibraryExport();
    void help();
    void helpShowsDefaults_data();
    void helpShowsDefaults();
    void e8SingleSizeExponentNotAvailable();
    void torchListings();
    void badArguments_data();
    void badArguments();
    void dkSpellings_data();
    void dkSpellings();
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
    for (int k = 1; k <= 20; ++k)
        QVERIFY2(r.out.contains(QStringLiteral("E%1").arg(k).toLatin1()), r.out.constData());
    QVERIFY(r.out.contains("The mask-convention trap"));
    if (format == QLatin1String("json")) {
        const QJsonArray rows = QJsonDocument::fromJson(r.out).object().value("rows").toArray();
        QCOMPARE(rows.size(), 20);
        QCOMPARE(rows[12].toObject().value("id").toString(), QStringLiteral("E13"));
        QCOMPARE(rows[15].toObject().value("id").toString(), QStringLiteral("E16"));
        QCOMPARE(rows[16].toObject().value("id").toString(), QStringLiteral("E17"));
        QCOMPARE(rows[19].toObject().value("id").toString(), QStringLiteral("E20"));
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

void TestCliExperiment::figureEqualsLibraryExport_data()
{
    QTest::addColumn<QString>("id");
    QTest::addColumn<QStringList>("params"); // name=value, as runExperiment takes them
    QTest::addColumn<QSize>("size");
    // Parameters other than the defaults, spelt with underscores (the CLI's options take
    // dashes): they reach the run, the plotted numbers and the figure's footer.
    QTest::newRow("E3 lines") << "E3" << QStringList {"d_k=8,32,128", "keys=300", "seed=3"}
                              << QSize(700, 380);
    QTest::newRow("E15 bars and heatmaps")
        << "E15" << QStringList {"n=40", "heads=4", "window=6", "sinks=2", "fraction=0.8"}
        << QSize(820, 560);
}

// `attnlab experiment <id> --<param> … --figure f.png --figure-size WxH` writes the figure the
// library exports for the result of runExperiment with the same parameters at the same size:
// every pixel equal (the same code on the same machine draws the same image). On a mismatch
// both images and a map of the differing pixels are saved next to the test executable.
void TestCliExperiment::figureEqualsLibraryExport()
{
    QFETCH(QString, id);
    QFETCH(QStringList, params);
    QFETCH(QSize, size);
    attn::ExperimentParams parameters;
    QStringList arguments = {"experiment", id};
    for (const QString &p : params) {
        const QString name = p.section(QLatin1Char('='), 0, 0);
        const QString value = p.section(QLatin1Char('='), 1);
        parameters[name.toStdString()] = value.toStdString();
        arguments << QStringLiteral("--")
                + QString(name).replace(QLatin1Char('_'), QLatin1Char('-'))
                  << value;
    }
    QTemporaryDir dir;
    const QString cliPath = dir.filePath(QStringLiteral("cli.png"));
    const QString libraryPath = dir.filePath(QStringLiteral("library.png"));
    arguments << "--figure" << cliPath << "--figure-size"
              << QStringLiteral("%1x%2").arg(size.width()).arg(size.height()) << "--format"
              << "csv";
    const Run r = attnlab(arguments);
    QVERIFY2(r.exitCode == 0, r.err.constData());

    const attn::ExperimentResult result = attn::runExperiment(id.toStdString(), parameters);
    QVERIFY(QString::fromStdString(result.table.toCsv()).toUtf8() == r.out); // the same run
    QString error;
    QVERIFY2(attn::exportExperimentFigure(result, libraryPath, size, &error), qPrintable(error));

    QImage cli, library;
    QVERIFY2(cli.load(cliPath, "PNG"), qPrintable(cliPath));
    QVERIFY2(library.load(libraryPath, "PNG"), qPrintable(libraryPath));
    QCOMPARE(cli.size(), size);
    QCOMPARE(library.size(), size);
    const attn::test::ImageDifference d = attn::test::compareImages(cli, library, 0);
    if (d.differing > 0) {
        const QString kept = attn::test::keepImages(
            QDir(QCoreApplication::applicationDirPath()).filePath(QStringLiteral("figure-cli")),
            id.toLower(), cli, library, d);
        QFAIL(qPrintable(QStringLiteral("%1: %2 of %3 pixels of the CLI's figure differ from the "
                                        "library's export (%4)")
                             .arg(id)
                             .arg(d.differing)
                             .arg(d.total)
                             .arg(kept)));
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

namespace {

/// `attnlab args… --format json`'s rows, or an empty list after a failure.
QJsonArray jsonRows(const QStringList &arguments)
{
    const Run r = attnlab(arguments + QStringList {"--format", "json"});
    if (r.exitCode != 0) {
        qWarning("%s", r.err.constData());
        return {};
    }
    return QJsonDocument::fromJson(r.out).object().value("rows").toArray();
}

/// Python's f"{v:.1e}", the tutorial's print format.
QString printed(double v)
{
    return QString::asprintf("%.1e", v);
}

bool close(double got, double expected)
{
    return std::abs(got - expected) <= 1e-12 * std::max(1.0, std::abs(expected));
}

} // namespace

void TestCliExperiment::torchListings()
{
    // The PyTorch listings of tests/reference/torch_listings.py, run in torch: with --generator
    // torch the app draws the same layer and tokens, so its numbers equal torch's to rounding
    // (the forward pass is not bit-exact) and print the tutorial's lines.
    const QJsonObject ref = QJsonDocument::fromJson(fixture("torch_listings.json")).object();
    QVERIFY(!ref.isEmpty());

    const QJsonObject e7 = ref.value("E7").toObject();
    const QJsonArray e7Rows = jsonRows({"experiment", "E7", "--generator", "torch"});
    QCOMPARE(e7Rows.size(), 8);
    for (qsizetype i = 0; i < e7Rows.size(); ++i) {
        const QJsonObject row = e7Rows[i].toObject();
        for (const char *column : {"change_no_mask", "change_causal"}) {
            const double got = row.value(column).toDouble();
            const double want = e7.value(column).toArray()[i].toDouble();
            QVERIFY2(close(got, want),
                     qPrintable(QStringLiteral("E7 %1[%2]: %3 vs torch %4")
                                    .arg(column)
                                    .arg(i)
                                    .arg(got, 0, 'g', 17)
                                    .arg(want, 0, 'g', 17)));
        }
        QCOMPARE(printed(row.value("change_no_mask").toDouble()),
                 e7.value("printed_no_mask").toArray()[i].toString());
        QCOMPARE(printed(row.value("change_causal").toDouble()),
                 e7.value("printed_causal").toArray()[i].toString());
        if (i < 5)
            QCOMPARE(row.value("change_causal").toDouble(), 0.0);
    }
    // The tutorial's lines themselves.
    QCOMPARE(e7.value("printed_no_mask").toArray().toVariantList(),
             QVariantList({"2.3e-01", "3.4e-01", "3.3e-01", "2.9e-01", "2.5e-01", "3.4e-01",
                           "2.8e-01", "2.8e-01"}));
    QCOMPARE(e7.value("printed_causal").toArray().toVariantList(),
             QVariantList({"0.0e+00", "0.0e+00", "0.0e+00", "0.0e+00", "0.0e+00", "4.1e-01",
                           "2.0e-01", "2.8e-01"}));

    const QJsonObject e5 = ref.value("E5").toObject();
    const Run r5 = attnlab({"experiment", "E5", "--generator", "torch", "--format", "json"});
    QCOMPARE(r5.exitCode, 0);
    const QJsonObject o5 = QJsonDocument::fromJson(r5.out).object();
    const QJsonArray e5Rows = o5.value("rows").toArray();
    QCOMPARE(e5Rows.size(), 7);
    for (qsizetype i = 0; i < e5Rows.size(); ++i)
        QCOMPARE(e5Rows[i].toObject().value("source_position").toInt(),
                 e5.value("permutation").toArray()[i].toInt());
    const double error = o5.value("scalars").toObject().value("max_diff_with_positions").toDouble();
    QVERIFY2(close(error, e5.value("error").toDouble()),
             qPrintable(QString::number(error, 'g', 17)));
    QCOMPARE(QStringLiteral("error ") + printed(error), e5.value("printed").toString());
    QCOMPARE(e5.value("printed").toString(), QStringLiteral("error 2.1e-01"));
    QVERIFY(o5.value("scalars").toObject().value("max_diff_no_positions").toDouble() < 1e-14);

    const QJsonArray e4 = ref.value("E4").toObject().value("rows").toArray();
    const QJsonArray e4Rows = jsonRows({"experiment", "E4", "--generator", "torch"});
    QCOMPARE(e4Rows.size(), e4.size());
    for (qsizetype i = 0; i < e4Rows.size(); ++i) {
        const QJsonObject got = e4Rows[i].toObject(), want = e4[i].toObject();
        QCOMPARE(got.value("h").toInt(), want.value("h").toInt());
        for (const char *column : {"mean_max_weight", "mean_entropy_nats"})
            QVERIFY2(
                close(got.value(column).toDouble(), want.value(column).toDouble()),
                qPrintable(QStringLiteral("E4 h=%1 %2").arg(want.value("h").toInt()).arg(column)));
    }

    const QJsonObject e2 = ref.value("E2").toObject();
    QStringList dks;
    for (const QJsonValue &v : e2.value("d_k").toArray())
        dks << QString::number(v.toInt());
    const QStringList sweep = {"--seed",      QString::number(e2.value("seed").toInt()),
                               "--trials",    QString::number(e2.value("trials").toInt()),
                               "--keys",      QString::number(e2.value("keys").toInt()),
                               "--generator", "torch"};
    const QJsonArray bySweep = jsonRows(QStringList {"sweep", "--dk", dks.join(',')} + sweep);
    const QJsonArray byExperiment
        = jsonRows(QStringList {"experiment", "E2", "--d-k", dks.join(',')} + sweep);
    const QJsonArray e2Want = e2.value("rows").toArray();
    QCOMPARE(bySweep.size(), e2Want.size());
    QCOMPARE(byExperiment, bySweep);
    for (qsizetype i = 0; i < bySweep.size(); ++i) {
        const QJsonObject got = bySweep[i].toObject(), want = e2Want[i].toObject();
        for (const QString &column : want.keys())
            QVERIFY2(close(got.value(column).toDouble(), want.value(column).toDouble()),
                     qPrintable(QStringLiteral("E2 d_k=%1 %2: %3 vs torch %4")
                                    .arg(want.value("d_k").toInt())
                                    .arg(column)
                                    .arg(got.value(column).toDouble(), 0, 'g', 17)
                                    .arg(want.value(column).toDouble(), 0, 'g', 17)));
    }
    // NumPy's streams give other numbers: the option really switches the generator.
    const QJsonArray numpyRows = jsonRows({"experiment", "E7"});
    QVERIFY(numpyRows.size() == 8 && numpyRows[0] != e7Rows[0]);
}

void TestCliExperiment::badArguments_data()
{
    QTest::addColumn<QStringList>("arguments");
    QTest::addColumn<QString>("mentioned");
    QTest::newRow("unknown experiment") << QStringList {"experiment", "E99"} << "E99";
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
    QTest::newRow("bad generator")
        << QStringList {"experiment", "E7", "--generator", "jax"} << "generator";
    QTest::newRow("generator of an experiment without one")
        << QStringList {"experiment", "E1", "--generator", "torch"} << "--generator";
    QTest::newRow("sweep bad generator")
        << QStringList {"sweep", "--generator", "Torch"} << "--generator";
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

QTEST_MAIN(TestCliExperiment)

void TestCliExperiment::dkSpellings_data()
{
    QTest::addColumn<QStringList>("arguments");
    QTest::newRow("experiment --d-k") << QStringList {"experiment", "E2", "--d-k", "4,8"};
    QTest::newRow("experiment --d_k") << QStringList {"experiment", "E2", "--d_k", "4,8"};
    QTest::newRow("experiment --dk") << QStringList {"experiment", "E2", "--dk", "4,8"};
    QTest::newRow("sweep --dk") << QStringList {"sweep", "--dk", "4,8"};
    QTest::newRow("sweep --d-k") << QStringList {"sweep", "--d-k", "4,8"};
}

// d_k is spelt --dk, --d-k or --d_k in `attnlab experiment` and `attnlab sweep` alike, and
// every spelling gives the same table (E2 and sweep are the same sweep).
void TestCliExperiment::dkSpellings()
{
    QFETCH(QStringList, arguments);
    const Run r = attnlab(arguments + QStringList {"--trials", "50", "--format", "csv"});
    QVERIFY2(r.exitCode == 0, r.err.constData());
    const Run reference
        = attnlab({"experiment", "E2", "--d-k", "4,8", "--trials", "50", "--format", "csv"});
    QCOMPARE(reference.exitCode, 0);
    QCOMPARE(r.out, reference.out);
    QCOMPARE(r.out.count('\n'), 3); // header + two d_k
}

#include "tst_cli_experiment.moc"
