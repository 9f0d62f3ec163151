// `attnlab heads` end to end: runs the built executable (ATTNLAB_EXE) on the stacks of
// tests/reference/fixtures/headscores/ (written by tests/reference/make_headscore_fixtures.py)
// and compares the json and csv numbers with NumPy's to 1e-12; refusals exit 2 with a message
// naming the problem and print nothing on standard output. With --model, the json of the tiny
// checkpoints of fixtures/models/ against tests/reference/make_head_contribution_fixtures.py
// (fixtures/heads_models/): through the float32 forward, so to 1e-5.

#include "cli/cliprocess.h"
#include "testutil.h"

#include "core/analysis/headscores.h"
#include "core/io/npy.h"
#include "ui/render/colormap.h"

#include <QImage>
#include <QJsonArray>
#include <QJsonDocument>
#include <QJsonObject>
#include <QObject>
#include <QTemporaryDir>
#include <QTest>

#include <cmath>
#include <limits>
#include <map>
#include <string>

using namespace attn;
using attn::test::CliRun;
using attn::test::runAttnlab;

namespace {

constexpr double kTol = 1e-12;

const char *const kScores[] = {"previous_token", "duplicate_token", "induction", "sink",
                               "entropy",        "effective_terms", "distance"};

QString fixturePath(const QString &name)
{
    return QStringLiteral(ATTN_FIXTURE_DIR "/headscores/%1.npz").arg(name);
}

std::map<std::string, NpyArray> load(const QString &name)
{
    std::map<std::string, NpyArray> arrays;
    NpzStrings strings;
    for (auto &[n, a] : readNpz(fixturePath(name).toStdString(),
                                std::numeric_limits<std::uint64_t>::max(), &strings))
        arrays.emplace(n, std::move(a));
    return arrays;
}

/// NumPy's (L, H) score; the pattern scores are (4, L, H) by option.
MatrixD expected(const std::map<std::string, NpyArray> &f, const std::string &name, int option)
{
    const NpyArray &a = f.at(name);
    return a.ndim() == 3 ? a.slice<double>(option, name) : a.toMatrix<double>(name);
}

std::map<std::string, NpyArray> loadNpz(const QString &path)
{
    std::map<std::string, NpyArray> arrays;
    for (auto &[n, a] : readNpz(path.toStdString()))
        arrays.emplace(n, std::move(a));
    return arrays;
}

QString modelDir(const QString &name)
{
    return QStringLiteral(ATTN_FIXTURE_DIR "/models/%1").arg(name);
}

/// The largest |a − b| over two equally long lists (infinity when the lengths differ).
double worst(const std::vector<double> &a, const std::vector<double> &b)
{
    if (a.size() != b.size())
        return std::numeric_limits<double>::infinity();
    double w = 0;
    for (std::size_t i = 0; i < a.size(); ++i)
        w = std::max(w, std::abs(a[i] - b[i]));
    return w;
}

std::vector<double> flat(const MatrixD &m)
{
    std::vector<double> out;
    for (Index i = 0; i < m.rows(); ++i)
        for (Index j = 0; j < m.cols(); ++j)
            out.push_back(m(i, j));
    return out;
}

/// A json score ([[per head] per layer], null for NaN) as a matrix.
MatrixD jsonMatrix(const QJsonArray &layers)
{
    const Index L = layers.size(), H = L ? layers.at(0).toArray().size() : 0;
    MatrixD m(L, H);
    for (Index l = 0; l < L; ++l) {
        const QJsonArray row = layers.at(l).toArray();
        for (Index h = 0; h < H; ++h) {
            const QJsonValue v = row.at(h);
            m(l, h) = v.isNull() ? std::nan("") : v.toDouble();
        }
    }
    return m;
}

QStringList optionArguments(int option)
{
    QStringList args;
    if (option & 1)
        args << QStringLiteral("--exclude-bos");
    if (option & 2)
        args << QStringLiteral("--exclude-current");
    return args;
}

/// The csv's column `name` as an (L, H) matrix (rows are (layer, head) in C order).
MatrixD csvColumn(const QByteArray &csv, const QString &name, Index layers, Index heads)
{
    const QList<QByteArray> lines = csv.trimmed().split('\n');
    const QList<QByteArray> header = lines.at(0).split(',');
    const qsizetype c = header.indexOf(name.toUtf8());
    MatrixD m = MatrixD::Constant(layers, heads, -1);
    for (qsizetype r = 1; r < lines.size() && c >= 0; ++r) {
        const QList<QByteArray> cells = lines.at(r).split(',');
        m(cells.at(0).toInt(), cells.at(1).toInt())
            = cells.at(c) == "nan" ? std::nan("") : cells.at(c).toDouble();
    }
    return m;
}

} // namespace

class TestCliHeads : public QObject
{
    Q_OBJECT

private slots:
    void initTestCase() { QVERIFY(m_dir.isValid()); }

    void jsonMatchesNumPy_data()
    {
        QTest::addColumn<QString>("file");
        QTest::addColumn<int>("option");
        for (const char *file : {"random_f64", "strings", "random_f32", "masked"}) {
            for (int o = 0; o < 4; ++o) {
                const QString row = QStringLiteral("%1 option %2").arg(QLatin1String(file)).arg(o);
                QTest::newRow(qPrintable(row)) << QString::fromLatin1(file) << o;
            }
        }
    }

    void jsonMatchesNumPy()
    {
        QFETCH(QString, file);
        QFETCH(int, option);
        const auto f = load(file);
        const CliRun r = runAttnlab(QStringList {QStringLiteral("heads"), QStringLiteral("--in"),
                                                 fixturePath(file), QStringLiteral("--format"),
                                                 QStringLiteral("json")}
                                    + optionArguments(option));
        QVERIFY2(r.exitCode == 0, r.err.constData());
        QJsonParseError error;
        const QJsonObject json = QJsonDocument::fromJson(r.out, &error).object();
        QVERIFY2(error.error == QJsonParseError::NoError, r.out.constData());
        QCOMPARE(json.keys(), (QStringList {"heads", "layers", "scores"}));
        const MatrixD sink = expected(f, "sink", option);
        QCOMPARE(json.value("layers").toInt(), int(sink.rows()));
        QCOMPARE(json.value("heads").toInt(), int(sink.cols()));
        const QJsonObject scores = json.value("scores").toObject();
        QCOMPARE(scores.size(), qsizetype(std::size(kScores)));
        for (const char *name : kScores) {
            const MatrixD got = jsonMatrix(scores.value(QLatin1String(name)).toArray());
            const MatrixD want = expected(f, name, option);
            const auto report = attn::test::compareClose(got, want, kTol);
            QVERIFY2(report.ok,
                     qPrintable(QLatin1String(name) + QLatin1String(": ") + report.message()));
        }
    }

    void csvMatchesNumPy()
    {
        const auto f = load(QStringLiteral("masked"));
        const CliRun r = runAttnlab({QStringLiteral("heads"), QStringLiteral("--in"),
                                     fixturePath(QStringLiteral("masked")),
                                     QStringLiteral("--format"), QStringLiteral("csv")});
        QVERIFY2(r.exitCode == 0, r.err.constData());
        QVERIFY(r.out.startsWith("layer,head,previous_token,duplicate_token,induction,sink,"
                                 "entropy,effective_terms,distance,sink_flag,zero_rows\n"));
        for (const char *name : kScores)
            ATTN_COMPARE_CLOSE(csvColumn(r.out, QLatin1String(name), 1, 3), expected(f, name, 0),
                               kTol, 0.0);
        ATTN_COMPARE_CLOSE(csvColumn(r.out, QStringLiteral("sink_flag"), 1, 3),
                           expected(f, "sink_flag", 0), 0.0, 0.0);
        ATTN_COMPARE_CLOSE(csvColumn(r.out, QStringLiteral("zero_rows"), 1, 3),
                           expected(f, "zero_rows", 0), 0.0, 0.0);
    }

    void sinkEpsilon()
    {
        // The planted induction head puts 6 of its 11 rows on the BOS: sink = 6/11 ≈ 0.545.
        for (const auto &[epsilon, flag] : {std::pair {"0.5", 1.0}, std::pair {"0.6", 0.0}}) {
            const CliRun r = runAttnlab({QStringLiteral("heads"), QStringLiteral("--in"),
                                         fixturePath(QStringLiteral("planted")),
                                         QStringLiteral("--format"), QStringLiteral("csv"),
                                         QStringLiteral("--sink-epsilon"), QLatin1String(epsilon)});
            QVERIFY2(r.exitCode == 0, r.err.constData());
            QCOMPARE(csvColumn(r.out, QStringLiteral("sink_flag"), 1, 4)(0, 2), flag);
            QCOMPARE(csvColumn(r.out, QStringLiteral("sink"), 1, 4)(0, 2), 6.0 / 11.0);
        }
    }

    void tokensOption()
    {
        // The fixture's ids [0, 2, 5, 2, 3, 2, 5, 2, 3] as strings: the same duplicates.
        const auto f = load(QStringLiteral("random_f64"));
        const QString in = fixturePath(QStringLiteral("random_f64"));
        CliRun r = runAttnlab({QStringLiteral("heads"), QStringLiteral("--in"), in,
                               QStringLiteral("--format"), QStringLiteral("csv"),
                               QStringLiteral("--tokens"), QStringLiteral("<s>,b,e,b,c,b,e,b,c")});
        QVERIFY2(r.exitCode == 0, r.err.constData());
        ATTN_COMPARE_CLOSE(csvColumn(r.out, QStringLiteral("induction"), 2, 3),
                           expected(f, "induction", 0), kTol, 0.0);
        // Nine different tokens: no duplicates, both token scores exactly 0.
        r = runAttnlab({QStringLiteral("heads"), QStringLiteral("--in"), in,
                        QStringLiteral("--format"), QStringLiteral("csv"),
                        QStringLiteral("--tokens"), QStringLiteral("a,b,c,d,e,f,g,h,i")});
        QVERIFY2(r.exitCode == 0, r.err.constData());
        QCOMPARE(csvColumn(r.out, QStringLiteral("duplicate_token"), 2, 3), MatrixD::Zero(2, 3));
        QCOMPARE(csvColumn(r.out, QStringLiteral("induction"), 2, 3), MatrixD::Zero(2, 3));
    }

    void withoutTokens()
    {
        // Only the weights: the token scores are null, the others NumPy's.
        const auto f = load(QStringLiteral("random_f64"));
        const QString in = m_dir.filePath(QStringLiteral("bare.npz"));
        writeNpz(in.toStdString(), {{"attentions", f.at("attentions")}});
        const CliRun r = runAttnlab({QStringLiteral("heads"), QStringLiteral("--in"), in,
                                     QStringLiteral("--format"), QStringLiteral("json")});
        QVERIFY2(r.exitCode == 0, r.err.constData());
        QVERIFY2(r.err.contains("no tokens"), r.err.constData());
        const QJsonObject scores = QJsonDocument::fromJson(r.out).object()["scores"].toObject();
        QVERIFY(jsonMatrix(scores["induction"].toArray()).array().isNaN().all());
        QVERIFY(jsonMatrix(scores["duplicate_token"].toArray()).array().isNaN().all());
        ATTN_COMPARE_CLOSE(jsonMatrix(scores["previous_token"].toArray()),
                           expected(f, "previous_token", 0), kTol, 0.0);
    }

    void table()
    {
        const CliRun r
            = runAttnlab({QStringLiteral("heads"), QStringLiteral("--in"),
                          fixturePath(QStringLiteral("strings")), QStringLiteral("--exclude-bos")});
        QVERIFY2(r.exitCode == 0, r.err.constData());
        QVERIFY2(r.out.contains("array 'weights' float64 (2, 7, 7), 1 layers x 2 heads, n = 7"),
                 r.out.constData());
        QVERIFY(r.out.contains("tokens from array 'tokens'; pattern scores: first key excluded"));
        // header, rule, one line per head, a blank line, three notes
        const QList<QByteArray> lines = r.out.split('\n');
        QCOMPARE(lines.size(), 2 + 2 + 1 + 3 + 1);
        // The rows' scores, rounded to 4 decimals, are NumPy's with the first key excluded.
        const auto f = load(QStringLiteral("strings"));
        for (int h = 0; h < 2; ++h) {
            const QList<QByteArray> cells = lines.at(2 + h).simplified().split(' ');
            QCOMPARE(cells.size(), 2 + qsizetype(std::size(kScores)) + 2);
            for (std::size_t k = 0; k < std::size(kScores); ++k) {
                const double want = expected(f, kScores[k], 1)(0, h);
                QVERIFY2(std::abs(cells.at(2 + qsizetype(k)).toDouble() - want) <= 0.5e-4,
                         kScores[k]);
            }
        }
    }

    void atlasFigure_data()
    {
        QTest::addColumn<QString>("file");
        QTest::addColumn<QString>("score");
        QTest::addColumn<bool>("noValue"); // a head with nothing to measure: a grey cell
        QTest::newRow("planted sink")
            << QStringLiteral("planted") << QStringLiteral("sink") << false;
        QTest::newRow("planted induction")
            << QStringLiteral("planted") << QStringLiteral("induction") << false;
        QTest::newRow("masked previous")
            << QStringLiteral("masked") << QStringLiteral("previous_token") << true;
    }

    // Every head's cell in the PNG has the viridis colour of NumPy's score on [0, 1].
    void atlasFigure()
    {
        QFETCH(QString, file);
        QFETCH(QString, score);
        QFETCH(bool, noValue);
        const QString png = m_dir.filePath(file + score + QStringLiteral(".png"));
        const CliRun r
            = runAttnlab({QStringLiteral("heads"), QStringLiteral("--in"), fixturePath(file),
                          QStringLiteral("--out"), png, QStringLiteral("--score"), score});
        QVERIFY2(r.exitCode == 0, r.err.constData());
        const QImage image(png);
        QVERIFY(!image.isNull());
        std::map<QRgb, int> pixels;
        for (int y = 0; y < image.height(); ++y) {
            for (int x = 0; x < image.width(); ++x)
                ++pixels[image.pixel(x, y) | 0xff000000u];
        }
        const MatrixD values = expected(load(file), score.toStdString(), 0);
        const Colormap viridis(ColormapId::Viridis);
        for (Index h = 0; h < values.cols(); ++h) {
            const double v = values(0, h);
            const QRgb colour = std::isnan(v) ? qRgb(208, 208, 208) : viridis.map(v);
            // a cell is at least 14 × 14 pixels
            QVERIFY2(pixels[colour] >= 14 * 14,
                     qPrintable(QStringLiteral("head %1 (%2): colour %3 on %4 pixels")
                                    .arg(h)
                                    .arg(v)
                                    .arg(colour, 0, 16)
                                    .arg(pixels[colour])));
        }
        QCOMPARE(values.array().isNaN().any(), noValue);
    }

    void atlasVectorFiles()
    {
        for (const char *suffix : {"svg", "pdf"}) {
            const QString out = m_dir.filePath(QStringLiteral("atlas.") + QLatin1String(suffix));
            const CliRun r
                = runAttnlab({QStringLiteral("heads"), QStringLiteral("--in"),
                              fixturePath(QStringLiteral("random_f64")), QStringLiteral("--out"),
                              out, QStringLiteral("--score"), QStringLiteral("entropy"),
                              QStringLiteral("--format"), QStringLiteral("json")});
            QVERIFY2(r.exitCode == 0, r.err.constData());
            QVERIFY(r.out.startsWith("{\"layers\": 2, \"heads\": 3")); // the scores as well
            QFile f(out);
            QVERIFY(f.open(QIODevice::ReadOnly));
            const QByteArray bytes = f.readAll();
            if (QLatin1String(suffix) == QLatin1String("svg"))
                QVERIFY(bytes.contains("<title>entropy by layer and head</title>"));
            else
                QVERIFY(bytes.startsWith("%PDF"));
        }
    }

    void modelJson_data()
    {
        QTest::addColumn<QString>("name");
        QTest::newRow("gpt2") << QStringLiteral("gpt2");
        QTest::newRow("llama_gqa") << QStringLiteral("llama_gqa");
    }

    /// --model --ids with --contributions: every json key against the reference, and --out-npz.
    void modelJson()
    {
        QFETCH(QString, name);
        const auto f = loadNpz(QStringLiteral(ATTN_FIXTURE_DIR "/heads_models/%1.npz").arg(name));
        QStringList ids;
        for (double id : f.at("ids").values)
            ids << QString::number(std::int64_t(id));
        const QString npz = m_dir.filePath(name + QStringLiteral("_contributions.npz"));
        QFile::remove(npz);
        const CliRun r = runAttnlab({"heads", "--model", modelDir(name), "--ids", ids.join(','),
                                     "--format", "json", "--prefix-tokens", "5", "--prefix-draws",
                                     "2", "--seed", "7", "--contributions", "--out-npz", npz});
        QVERIFY2(r.exitCode == 0, r.err.constData());
        const QJsonObject json = QJsonDocument::fromJson(r.out).object();
        const QJsonObject scores = json.value("scores").toObject();
        const NpyArray &attention = f.at("attention");
        const Index L = attention.shape[0], H = attention.shape[1], n = attention.shape[2];
        QCOMPARE(json.value("layers").toInt(), int(L));

        // The stack's scores: the reference's attention scored with the ids as tokens.
        const std::vector<std::int64_t> tokens(f.at("ids").values.begin(),
                                               f.at("ids").values.end());
        const HeadScores expectedScores
            = headScores<double>(attention.values, {L, H, n}, tokens, {});
        const std::pair<const char *, const MatrixD *> stackScores[]
            = {{"previous_token", &expectedScores.previousToken},
               {"duplicate_token", &expectedScores.duplicateToken},
               {"induction", &expectedScores.induction},
               {"sink", &expectedScores.sink},
               {"entropy", &expectedScores.entropy}};
        for (const auto &[key, matrix] : stackScores) {
            const double e = worst(flat(jsonMatrix(scores.value(key).toArray())), flat(*matrix));
            QVERIFY2(e <= 1e-5, qPrintable(QStringLiteral("%1: %2").arg(key).arg(e)));
        }

        double prefix = 0, contributions = 0;
        for (const char *key :
             {"prefix_matching", "value_norm_sink", "value_norm_mass", "ablation_kl"}) {
            const double e = worst(flat(jsonMatrix(scores.value(key).toArray())), f.at(key).values);
            QVERIFY2(e <= 1e-5, qPrintable(QStringLiteral("%1: %2").arg(key).arg(e)));
            double &largest = std::string(key) == "prefix_matching" ? prefix : contributions;
            largest = std::max(largest, e);
        }
        std::vector<double> collapse;
        for (const QJsonValue v : json.value("rank_collapse").toArray())
            collapse.push_back(v.toDouble());
        const double collapseError = worst(collapse, f.at("rank_collapse").values);
        QVERIFY(collapseError <= 1e-5);
        std::vector<double> rollout;
        for (const QJsonValue row : json.value("rollout").toArray())
            for (const QJsonValue v : row.toArray())
                rollout.push_back(v.toDouble());
        const double rolloutError = worst(rollout, f.at("rollout").values);
        QVERIFY(rolloutError <= 1e-5);
        const QJsonObject top1 = json.value("ablation_top1").toObject();
        QCOMPARE(top1.value("original").toInteger(), std::int64_t(f.at("top1").values[0]));
        QCOMPARE(flat(jsonMatrix(top1.value("ablated").toArray())), f.at("ablation_top1").values);

        const auto written = loadNpz(npz);
        const double normError
            = worst(written.at("value_norms").values, f.at("value_norms").values);
        QVERIFY(normError <= 1e-5);
        QCOMPARE(written.at("rollout").values, rollout); // the json's, digit for digit
        QCOMPARE(written.at("ids").values, f.at("ids").values);
        qInfo("%s: prefix_matching %.2e, contributions %.2e, rank_collapse %.2e, rollout %.2e, "
              "value_norms %.2e",
              qPrintable(name), prefix, contributions, collapseError, rolloutError, normError);
    }

    /// --ablation mean: ablation_kl and ablation_top1 are those of the reference's mean
    /// ablation (each of the head's output rows replaced by their mean over the positions).
    void meanAblationJson()
    {
        const auto f = loadNpz(QStringLiteral(ATTN_FIXTURE_DIR "/heads_models/gpt2.npz"));
        QStringList ids;
        for (double id : f.at("ids").values)
            ids << QString::number(std::int64_t(id));
        const CliRun r
            = runAttnlab({"heads", "--model", modelDir(QStringLiteral("gpt2")), "--ids",
                          ids.join(','), "--format", "json", "--prefix-tokens", "5",
                          "--prefix-draws", "2", "--contributions", "--ablation", "mean"});
        QVERIFY2(r.exitCode == 0, r.err.constData());
        const QJsonObject json = QJsonDocument::fromJson(r.out).object();
        QCOMPARE(json.value("ablation").toString(), QStringLiteral("mean"));
        const double e = worst(
            flat(jsonMatrix(json.value("scores").toObject().value("ablation_kl").toArray())),
            f.at("mean_ablation_kl").values);
        QVERIFY2(e <= 1e-5, qPrintable(QString::number(e)));
        QCOMPARE(
            flat(jsonMatrix(json.value("ablation_top1").toObject().value("ablated").toArray())),
            f.at("mean_ablation_top1").values);
    }

    /// --text through the folder's tokenizer (a WordPiece tokenizer.json whose word "wK" is id
    /// K, no special tokens) gives the json of --ids; the table has its per-layer section.
    void modelText()
    {
        QTemporaryDir dir;
        QVERIFY(dir.isValid());
        const QString gpt2 = modelDir(QStringLiteral("gpt2"));
        for (const char *file : {"config.json", "model.safetensors"})
            QVERIFY(QFile::copy(gpt2 + "/" + file, dir.filePath(QLatin1String(file))));
        QStringList vocab;
        for (int k = 0; k < 48; ++k)
            vocab << QStringLiteral("\"w%1\": %1").arg(k);
        QFile json(dir.filePath(QStringLiteral("tokenizer.json")));
        QVERIFY(json.open(QIODevice::WriteOnly));
        json.write(QStringLiteral(R"({"version": "1.0", "added_tokens": [], "normalizer": null,
            "pre_tokenizer": {"type": "BertPreTokenizer"}, "post_processor": null,
            "model": {"type": "WordPiece", "unk_token": "w0", "vocab": {%1}}})")
                       .arg(vocab.join(QStringLiteral(", ")))
                       .toUtf8());
        json.close();
        const auto f = loadNpz(QStringLiteral(ATTN_FIXTURE_DIR "/heads_models/gpt2.npz"));
        QStringList ids, words;
        for (double id : f.at("ids").values) {
            ids << QString::number(std::int64_t(id));
            words << QStringLiteral("w%1").arg(std::int64_t(id));
        }
        const QStringList common
            = {"--format", "json", "--prefix-tokens", "5", "--prefix-draws", "2", "--seed", "7"};
        const CliRun byText = runAttnlab(
            QStringList {"heads", "--model", dir.path(), "--text", words.join(' ')} + common);
        QVERIFY2(byText.exitCode == 0, byText.err.constData());
        const CliRun byIds
            = runAttnlab(QStringList {"heads", "--model", gpt2, "--ids", ids.join(',')} + common);
        QVERIFY2(byIds.exitCode == 0, byIds.err.constData());
        QCOMPARE(byText.out, byIds.out);
        const QJsonObject scores
            = QJsonDocument::fromJson(byIds.out).object().value("scores").toObject();
        QVERIFY(worst(flat(jsonMatrix(scores.value("prefix_matching").toArray())),
                      f.at("prefix_matching").values)
                <= 1e-5);
        QVERIFY(!QJsonDocument::fromJson(byIds.out).object().contains("rollout"));

        const CliRun table = runAttnlab(
            {"heads", "--model", gpt2, "--ids", ids.join(','), "--prefix-tokens", "5"});
        QVERIFY2(table.exitCode == 0, table.err.constData());
        QVERIFY(table.out.contains("prefix_matching"));
        QVERIFY(table.out.contains("rank_collapse"));
        QVERIFY(table.out.contains("gpt2 (2 layers x 4 heads) on 10 tokens"));

        // The atlas of a model-only score.
        const QString png = dir.filePath(QStringLiteral("prefix.png"));
        const CliRun figure
            = runAttnlab({"heads", "--model", gpt2, "--ids", ids.join(','), "--prefix-tokens", "5",
                          "--out", png, "--score", "prefix_matching"});
        QVERIFY2(figure.exitCode == 0, figure.err.constData());
        QVERIFY(!QImage(png).isNull());
    }

    void refusals_data()
    {
        QTest::addColumn<QStringList>("arguments"); // "@name" → a file in the temporary folder
        QTest::addColumn<QStringList>("message");
        const QString f64 = fixturePath(QStringLiteral("random_f64"));
        QTest::newRow("no --in") << QStringList {}
                                 << QStringList {"give either --in <file> or --model <dir>"};
        const QString gpt2 = modelDir(QStringLiteral("gpt2"));
        QTest::newRow("--in and --model") << QStringList {"--in", f64, "--model", gpt2}
                                          << QStringList {"either --in <file> or --model"};
        QTest::newRow("model without ids")
            << QStringList {"--model", gpt2} << QStringList {"either --text or --ids"};
        QTest::newRow("--ids without --model")
            << QStringList {"--in", f64, "--ids", "1,2"} << QStringList {"--ids needs --model"};
        QTest::newRow("--tokens with --model")
            << QStringList {"--model", gpt2, "--ids", "1,2", "--tokens", "a,b"}
            << QStringList {"--tokens is for --in"};
        QTest::newRow("id outside the vocabulary")
            << QStringList {"--model", gpt2, "--ids", "1,48,2"}
            << QStringList {"token id 48 at position 1", "[0, 48)"};
        QTest::newRow("past learned positions")
            << QStringList {"--model", gpt2, "--ids", "1,2", "--prefix-tokens", "25"}
            << QStringList {"--prefix-tokens 25", "50 tokens", "learned positions for 16", "<= 8"};
        // llama_gqa (RoPE: no position limit) on 200 ids: 2·4·200²·12 bytes is 3.7 MiB.
        const QString manyIds = QStringList(200, QStringLiteral("1")).join(QLatin1Char(','));
        QTest::newRow("memory budget")
            << QStringList {"--model",
                            modelDir(QStringLiteral("llama_gqa")),
                            "--ids",
                            manyIds,
                            "--memory-budget-mib",
                            "1",
                            "--contributions"}
            << QStringList {"2 layers x 4 heads", "200 x 200 x 12 bytes", "(--contributions)",
                            "over --memory-budget-mib 1 MiB"};
        QTest::newRow("contribution score without --contributions")
            << QStringList {"--model", gpt2,     "--ids",   "1,2",
                            "--out",   "@a.png", "--score", "value_norm_sink"}
            << QStringList {"--score must be one of", "prefix_matching", "value_norm_sink"};
        QTest::newRow("model score with --in")
            << QStringList {"--in", f64, "--out", "@a.png", "--score", "prefix_matching"}
            << QStringList {"--score must be one of", "'prefix_matching'"};
        QTest::newRow("NaN weight") << QStringList {"--in", "@nan.npz"}
                                    << QStringList {"layer 0, head 0, row 1, column 1 holds nan",
                                                    "attention weights must be finite"};
        QTest::newRow("--ablation without --contributions")
            << QStringList {"--model", gpt2, "--ids", "1,2", "--ablation", "mean"}
            << QStringList {"--ablation chooses how --contributions ablates heads"};
        QTest::newRow("unknown --ablation")
            << QStringList {"--model",         gpt2,         "--ids", "1,2",
                            "--contributions", "--ablation", "half"}
            << QStringList {"--ablation must be zero or mean, got 'half'"};
        QTest::newRow("--out-npz without --contributions")
            << QStringList {"--model", gpt2, "--ids", "1,2", "--out-npz", "@c.npz"}
            << QStringList {"give --contributions too"};
        QTest::newRow("missing file")
            << QStringList {"--in", "@absent.npz"} << QStringList {"absent.npz", "does not exist"};
        QTest::newRow("folder") << QStringList {"--in", "@"}
                                << QStringList {"is a folder", "not a regular file"};
        QTest::newRow("not an npz")
            << QStringList {"--in", "@text.npz"} << QStringList {"text.npz"};
        QTest::newRow("a single .npy")
            << QStringList {"--in", "@stack.npy"}
            << QStringList {"stack.npy", "is an .npy file", "np.savez('run.npz', attentions=a"};
        QTest::newRow("1-d") << QStringList {"--in", "@flat.npz"}
                             << QStringList {"'weights'", "(5,)", "is not attention weights"};
        QTest::newRow("not square")
            << QStringList {"--in", "@wide.npz"}
            << QStringList {"(2, 3, 4)", "not square", "3 queries", "4 keys"};
        QTest::newRow("batch axis")
            << QStringList {"--in", "@batch.npz"} << QStringList {"(1, 2, 1, 3, 3)", "batch"};
        QTest::newRow("no weights")
            << QStringList {"--in", "@other.npz"} << QStringList {"holds no attention weights"};
        QTest::newRow("--tokens count")
            << QStringList {"--in", f64, "--tokens", "a,b"}
            << QStringList {"--tokens holds 2 tokens", "(2, 3, 9, 9)", "n = 9"};
        QTest::newRow("ids count") << QStringList {"--in", "@short_ids.npz"}
                                   << QStringList {"array 'ids' holds 3 tokens", "n = 9"};
        QTest::newRow("float ids")
            << QStringList {"--in", "@float_ids.npz"} << QStringList {"'ids'", "integer token ids"};
        QTest::newRow("format") << QStringList {"--in", f64, "--format", "xml"}
                                << QStringList {"--format must be table, csv or json", "xml"};
        QTest::newRow("sink epsilon")
            << QStringList {"--in", f64, "--sink-epsilon", "2"} << QStringList {"--sink-epsilon"};
        QTest::newRow("figure suffix") << QStringList {"--in", f64, "--out", "@atlas.txt"}
                                       << QStringList {"atlas.txt", ".png, .svg or .pdf"};
        QTest::newRow("score without --out")
            << QStringList {"--in", f64, "--score", "sink"} << QStringList {"give --out too"};
        QTest::newRow("unknown score")
            << QStringList {"--in", f64, "--out", "@atlas.png", "--score", "copying"}
            << QStringList {"--score must be one of", "copying"};
    }

    /// Rows that are not distributions (here each sums to 1.5) are scored, with a note naming
    /// the worst row.
    void unnormalisedRowsNoted()
    {
        NpyArray a;
        a.type = NpyType::Float64;
        a.shape = {1, 3, 3};
        a.values.assign(9, 0.5);
        const QString file = m_dir.filePath(QStringLiteral("unnormalised.npz"));
        writeNpz(file.toStdString(), {{"weights", a}});
        const CliRun r = runAttnlab({"heads", "--in", file, "--format", "json"});
        QVERIFY2(r.exitCode == 0, r.err.constData());
        QVERIFY2(
            r.err.contains("do not sum to 1 (worst |sum - 1| = 0.5 at layer 0, head 0, row 0)"),
            r.err.constData());
    }

    /// A stack of signed weights (head 0 is A1 - 0.5 A2, rows summing to 0.5, with negative
    /// previous-token weights) is scored as the window's Atlas scores it (headScores on the
    /// stored values), with a note, and its figure draws the scores on RdBu_r centred on 0.
    void signedStackScoredAsTheAtlas()
    {
        NpyArray a;
        a.type = NpyType::Float64;
        a.shape = {1, 2, 3, 3};
        a.values = {0.5, 0, 0, -0.25, 0.75, 0, 0.25, -0.25, 0.5, // head 0
                    1,   0, 0, 1,     0,    0, 0,    1,     0}; // head 1
        const QString file = m_dir.filePath(QStringLiteral("signed.npz"));
        writeNpz(file.toStdString(), {{"weights", a}});
        const QString png = m_dir.filePath(QStringLiteral("signed.png"));
        const CliRun r = runAttnlab(
            {"heads", "--in", file, "--format", "json", "--out", png, "--score", "previous_token"});
        QVERIFY2(r.exitCode == 0, r.err.constData());
        QVERIFY2(r.err.contains("'weights' holds negative weights (first at layer 0, head 0, "
                                "row 1, column 0: -0.25)"),
                 r.err.constData());
        QVERIFY2(r.err.contains("as the window's Atlas"), r.err.constData());
        QVERIFY2(!r.err.contains("do not sum to 1"), r.err.constData());

        // The same numbers as the Atlas: headScores on the stored values.
        const HeadScores want = headScores<double>(a.values, {1, 2, 3}, {});
        const QJsonObject scores
            = QJsonDocument::fromJson(r.out).object().value("scores").toObject();
        const MatrixD previous = jsonMatrix(scores.value("previous_token").toArray());
        QCOMPARE(previous.rows(), 1);
        QCOMPARE(previous.cols(), 2);
        QVERIFY(std::abs(previous(0, 0) - (-1.0 / 3.0)) <= kTol); // (-0.25 - 0.25) / 1.5
        QVERIFY(std::abs(previous(0, 1) - 2.0 / 3.0) <= kTol);
        for (const auto &[name, matrix] : headScoreColumns(want)) {
            const MatrixD got = jsonMatrix(scores.value(QLatin1String(name)).toArray());
            QVERIFY2(got.rows() == 1 && got.cols() == 2, name);
            for (Index h = 0; h < 2; ++h) {
                const double w = (*matrix)(0, h);
                QVERIFY2(std::isnan(w) ? std::isnan(got(0, h)) : std::abs(got(0, h) - w) <= kTol,
                         name);
            }
        }

        // The figure: each head's cell in RdBu_r at its score over [-2/3, 2/3].
        const QImage image(png);
        QVERIFY(!image.isNull());
        std::map<QRgb, int> pixels;
        for (int y = 0; y < image.height(); ++y)
            for (int x = 0; x < image.width(); ++x)
                ++pixels[image.pixel(x, y) | 0xff000000u];
        const Colormap rdbu(ColormapId::RdBu);
        const ColorNorm norm = ColorNorm::symmetric(2.0 / 3.0);
        for (Index h = 0; h < 2; ++h) {
            const QRgb colour = rdbu.map(norm(previous(0, h)));
            QVERIFY2(pixels[colour] >= 14 * 14,
                     qPrintable(QStringLiteral("head %1: colour %2 on %3 pixels")
                                    .arg(h)
                                    .arg(colour, 0, 16)
                                    .arg(pixels[colour])));
        }
    }

    void refusals()
    {
        QFETCH(QStringList, arguments);
        QFETCH(QStringList, message);
        writeRefusalInputs();
        for (QString &a : arguments) {
            if (a.startsWith(QLatin1Char('@')))
                a = m_dir.filePath(a.mid(1));
        }
        const CliRun r = runAttnlab(QStringList {QStringLiteral("heads")} + arguments);
        QCOMPARE(r.exitCode, 2);
        QVERIFY2(r.out.isEmpty(), r.out.constData());
        for (const QString &part : message)
            QVERIFY2(r.err.contains(part.toUtf8()), qPrintable(r.err + " lacks " + part));
    }

private:
    /// The bad inputs of refusals(), written once.
    void writeRefusalInputs()
    {
        if (QFile::exists(m_dir.filePath(QStringLiteral("flat.npz"))))
            return;
        const auto path
            = [&](const char *name) { return m_dir.filePath(QLatin1String(name)).toStdString(); };
        const auto array = [](std::vector<std::int64_t> shape, NpyType type) {
            NpyArray a;
            a.shape = std::move(shape);
            a.type = type;
            a.values.assign(std::size_t(a.size()), type == NpyType::Float64 ? 0.25 : 1.0);
            return a;
        };
        QFile text(m_dir.filePath(QStringLiteral("text.npz")));
        QVERIFY(text.open(QIODevice::WriteOnly));
        text.write("not a zip archive\n");
        text.close();
        writeNpz(path("flat.npz"), {{"weights", array({5}, NpyType::Float64)}});
        writeNpz(path("wide.npz"), {{"weights", array({2, 3, 4}, NpyType::Float64)}});
        writeNpz(path("batch.npz"), {{"attentions", array({1, 2, 1, 3, 3}, NpyType::Float64)}});
        writeNpz(path("other.npz"),
                 {{"a", array({3, 3}, NpyType::Float64)}, {"b", array({3, 3}, NpyType::Float64)}});
        const auto f = load(QStringLiteral("random_f64"));
        writeNpz(path("short_ids.npz"),
                 {{"attentions", f.at("attentions")}, {"ids", array({3}, NpyType::Int64)}});
        writeNpz(path("float_ids.npz"),
                 {{"attentions", f.at("attentions")}, {"ids", array({9}, NpyType::Float64)}});
        NpyArray nan = array({1, 3, 3}, NpyType::Float64);
        nan.values[4] = std::nan("");
        writeNpz(path("nan.npz"), {{"weights", nan}});
        writeNpy(path("stack.npy"), array({1, 2, 3, 3}, NpyType::Float64));
    }

    QTemporaryDir m_dir;
};

QTEST_MAIN(TestCliHeads)
#include "tst_cli_heads.moc"
