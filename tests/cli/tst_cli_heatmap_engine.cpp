// `attnlab heatmap` through QProcess, what is computed behind the picture: the tile engine's
// pooled view beyond n = 4096 (pinned queries, axes, its notes, --compute auto), the --data
// export of the numbers shown, --generator torch and sessions saved on the Long tab.

#include <QFile>
#include <QImage>
#include <QImageReader>
#include <QJsonArray>
#include <QJsonDocument>
#include <QJsonObject>
#include <QProcess>
#include <QRegularExpression>
#include <QTemporaryDir>
#include <QTest>

#include "cli/heatmapcli.h"

#include "core/io/npy.h"

#include "ui/svgtext.h"

#include <algorithm>
#include <cmath>
#include <tuple>
#include <utility>
#include <vector>

using attn::listNpz;
using attn::NpyArray;
using attn::readNpzMember;

class TestCliHeatmapEngine : public attn::test::HeatmapCliTest
{
    Q_OBJECT

private slots:
    void initTestCase() { QVERIFY(m_dir.isValid()); }

    // --differential-lambda with one λ per head, --gate-bias and --latent-dim (with
    // --latent-absorbed) give, in the --data export, the weights the NumPy reference computes
    // from the documented draws (tests/reference/make_session_fixtures.py), and each head's
    // mean row sum of those weights.
    void variantsMatchNumPy_data()
    {
        QTest::addColumn<QString>("fixtureCase");
        QTest::addColumn<QStringList>("args");
        const auto split
            = [](const char *text) { return QString::fromLatin1(text).split(QLatin1Char(' ')); };
        QTest::newRow("per-head lambda")
            << QStringLiteral("differential per-head lambda")
            << split("--n 6 --d-model 12 --heads 3 --seed 17 --kind decoder "
                     "--differential-lambda 0.2,-0.4,1.5");
        QTest::newRow("per-head lambda, spaces")
            << QStringLiteral("differential per-head lambda")
            << (split("--n 6 --d-model 12 --heads 3 --seed 17 --kind decoder --differential-lambda")
                << QStringLiteral("0.2 -0.4 1.5"));
        QTest::newRow("gate") << QStringLiteral("gate causal")
                              << split("--n 7 --d-model 12 --heads 3 --seed 4 --mask causal "
                                       "--positional sinusoidal --gate-bias=-0.75");
        QTest::newRow("latent") << QStringLiteral("latent decompressed causal")
                                << split("--n 9 --d-model 16 --heads 4 --seed 6 --kind decoder "
                                         "--latent-dim 6 --latent-rope-dim 4");
        QTest::newRow("latent absorbed")
            << QStringLiteral("latent decompressed causal")
            << split("--n 9 --d-model 16 --heads 4 --seed 6 --kind decoder --latent-dim 6 "
                     "--latent-rope-dim 4 --latent-absorbed");
        // The tile engine's pixels at one cell each: the same weights, from rows whose max
        // and sum it keeps (the sink in the denominator, A₂ beside A₁, the gate per row).
        QTest::newRow("tiles: learned sink")
            << QStringLiteral("learned sink causal")
            << split("--compute tiles --n 7 --d-model 12 --heads 3 --seed 8 --mask causal "
                     "--sink-logit 1.25");
        QTest::newRow("tiles: per-head lambda")
            << QStringLiteral("differential per-head lambda")
            << split("--compute tiles --n 6 --d-model 12 --heads 3 --seed 17 --kind decoder "
                     "--differential-lambda 0.2,-0.4,1.5");
        QTest::newRow("tiles: differential, padding, positions")
            << QStringLiteral("differential padding")
            << split("--compute tiles --n 6 --d-model 8 --heads 2 --seed 13 --mask padding "
                     "--padding 2 --positional sinusoidal --differential-lambda 0.65");
        QTest::newRow("tiles: gate")
            << QStringLiteral("gate causal")
            << split("--compute tiles --n 7 --d-model 12 --heads 3 --seed 4 --mask causal "
                     "--positional sinusoidal --gate-bias=-0.75");
        QTest::newRow("tiles: gate, learned sink, cross, padding")
            << QStringLiteral("gate learned sink cross")
            << split("--compute tiles --n 5 --n-k 6 --d-model 8 --heads 2 --seed 9 --kind cross "
                     "--mask padding --padding 2 --sink-logit 0.5 --gate-bias 1.5");
        QTest::newRow("tiles: latent, gate, learned sink")
            << QStringLiteral("latent gate sink")
            << split("--compute tiles --n 6 --d-model 8 --heads 2 --seed 2 --latent-dim 3 "
                     "--latent-rope-dim 2 --sink-logit=-0.5 --gate-bias 0.25");
    }
    void variantsMatchNumPy()
    {
        QFETCH(QString, fixtureCase);
        QFETCH(QStringList, args);
        QFile fixture(QStringLiteral(ATTN_FIXTURE_DIR "/session/session.json"));
        QVERIFY(fixture.open(QIODevice::ReadOnly));
        QJsonArray expected;
        for (const QJsonValue &c : QJsonDocument::fromJson(fixture.readAll())
                                       .object()
                                       .value(QStringLiteral("cases"))
                                       .toArray())
            if (c.toObject().value(QStringLiteral("name")).toString() == fixtureCase)
                expected = c.toObject().value(QStringLiteral("weights")).toArray();
        QVERIFY2(!expected.isEmpty(), qPrintable(fixtureCase));
        const QString json = m_dir.filePath(QStringLiteral("variant.json"));
        const Run r = run(args
                          + QStringList {QStringLiteral("--out"),
                                         m_dir.filePath(QStringLiteral("variant.png")),
                                         QStringLiteral("--data"), json});
        QVERIFY2(r.exitCode == 0, qPrintable(r.err));
        QFile data(json);
        QVERIFY(data.open(QIODevice::ReadOnly));
        const QJsonArray heads = QJsonDocument::fromJson(data.readAll())
                                     .object()
                                     .value(QStringLiteral("heads"))
                                     .toArray();
        QCOMPARE(heads.size(), expected.size());
        for (int h = 0; h < heads.size(); ++h) {
            const QJsonObject head = heads.at(h).toObject();
            const QJsonArray ours = head.value(QStringLiteral("weights")).toArray();
            const QJsonArray numpy = expected.at(h).toArray();
            QCOMPARE(ours.size(), numpy.size());
            double worst = 0, rowSums = 0;
            for (int i = 0; i < numpy.size(); ++i) {
                const QJsonArray a = ours.at(i).toArray(), b = numpy.at(i).toArray();
                QCOMPARE(a.size(), b.size());
                for (int j = 0; j < b.size(); ++j) {
                    worst = std::max(worst, std::abs(a.at(j).toDouble() - b.at(j).toDouble()));
                    rowSums += b.at(j).toDouble();
                }
            }
            QVERIFY2(worst <= 1e-12, qPrintable(QString::number(worst)));
            if (args.contains(QStringLiteral("tiles")))
                continue; // the pooled export holds the pixels' weights only
            const double meanRowSum = rowSums / double(numpy.size());
            if (fixtureCase.startsWith(QLatin1String("latent"))) {
                QVERIFY(!head.contains(QStringLiteral("mean_row_sum"))); // plain softmax rows
            } else {
                QVERIFY2(
                    std::abs(head.value(QStringLiteral("mean_row_sum")).toDouble() - meanRowSum)
                        <= 1e-12,
                    qPrintable(QString::number(meanRowSum)));
            }
            if (fixtureCase.startsWith(QLatin1String("gate"))) {
                const QJsonArray gate = head.value(QStringLiteral("gate")).toArray();
                QCOMPARE(gate.size(), numpy.size());
                for (const QJsonValue &g : gate)
                    QVERIFY(g.toDouble() > 0.0 && g.toDouble() < 1.0);
            }
        }
    }

    // Beyond n = 4096 the heatmap is the tile engine's pooled view, whose rows are pixels of
    // several queries: --pin-query names a query of the sequence, and the caption the first query
    // of the pixel row that holds it (n = 8192 on 1024 rows: 8 queries a row, 1000 starts one).
    void pinQueryInPooledView_data()
    {
        QTest::addColumn<QString>("pin");
        QTest::addColumn<QString>("caption");
        QTest::newRow("first query of a pixel row")
            << QStringLiteral("1000") << QStringLiteral("pinned query 1000");
        QTest::newRow("inside a pixel row")
            << QStringLiteral("1027") << QStringLiteral("pinned query 1024");
        QTest::newRow("last query")
            << QStringLiteral("8191") << QStringLiteral("pinned query 8184");
    }
    void pinQueryInPooledView()
    {
        QFETCH(QString, pin);
        QFETCH(QString, caption);
        const QString svg = m_dir.filePath(QStringLiteral("pooled-pin.svg"));
        const Run r
            = run({QStringLiteral("--n"), QStringLiteral("8192"), QStringLiteral("--d-model"),
                   QStringLiteral("8"), QStringLiteral("--heads"), QStringLiteral("1"),
                   QStringLiteral("--pin-query"), pin, QStringLiteral("--out"), svg});
        QVERIFY2(r.exitCode == 0, qPrintable(r.err));
        QFile file(svg);
        QVERIFY(file.open(QIODevice::ReadOnly));
        const QString words = QString::fromUtf8(file.readAll())
                                  .remove(QRegularExpression(QStringLiteral("<[^>]*>")))
                                  .simplified();
        const QRegularExpressionMatch pinned
            = QRegularExpression(QStringLiteral("pinned query \\d+")).match(words);
        QVERIFY2(pinned.hasMatch(), qPrintable(words.left(400)));
        QCOMPARE(pinned.captured(0), caption);
    }

    // --pin-query and --sort-heads reach the export: the caption names the pinned query (its
    // token) and the order, and the tile titles follow the order of the mean row entropies,
    // which the --data export of the same run states per row.
    void pinAndSortInExport()
    {
        const QString svg = m_dir.filePath(QStringLiteral("pin-sort.svg"));
        const QString json = m_dir.filePath(QStringLiteral("pin-sort.json"));
        const Run r
            = run({QStringLiteral("--tokens"), QStringLiteral("the cat sat on the mat"),
                   QStringLiteral("--d-model"), QStringLiteral("16"), QStringLiteral("--heads"),
                   QStringLiteral("4"), QStringLiteral("--pin-query"), QStringLiteral("2"),
                   QStringLiteral("--sort-heads"), QStringLiteral("entropy"),
                   QStringLiteral("--sort-descending"), QStringLiteral("--width"),
                   QStringLiteral("900"), QStringLiteral("--height"), QStringLiteral("600"),
                   QStringLiteral("--out"), svg, QStringLiteral("--data"), json});
        QCOMPARE(r.exitCode, 0);
        QFile file(svg);
        QVERIFY(file.open(QIODevice::ReadOnly));
        const QString text = QString::fromUtf8(file.readAll());
        // The caption wraps over several <text> elements: their words, one space apart.
        const QString words
            = QString(text).remove(QRegularExpression(QStringLiteral("<[^>]*>"))).simplified();
        QVERIFY2(words.contains(QStringLiteral("pinned query 2:sat")), qPrintable(words.left(400)));
        QVERIFY(words.contains(QStringLiteral("heads by mean entropy, descending")));
        // The mean row entropy of each head from the data export (no masks: every row counts).
        QFile data(json);
        QVERIFY(data.open(QIODevice::ReadOnly));
        const QJsonArray heads = QJsonDocument::fromJson(data.readAll())
                                     .object()
                                     .value(QStringLiteral("heads"))
                                     .toArray();
        QCOMPARE(heads.size(), 4);
        std::vector<std::pair<double, int>> means;
        for (const QJsonValue &head : heads) {
            const QJsonArray e = head.toObject()
                                     .value(QStringLiteral("metrics"))
                                     .toObject()
                                     .value(QStringLiteral("entropy"))
                                     .toArray();
            double sum = 0;
            for (const QJsonValue &v : e)
                sum += v.toDouble();
            means.emplace_back(-sum / e.size(),
                               head.toObject().value(QStringLiteral("head")).toInt());
        }
        std::sort(means.begin(), means.end()); // highest mean first
        // Tile titles in document order: "head k" (or a shorter form) then "mean over heads".
        std::vector<int> titled;
        const QRegularExpression title(QStringLiteral(">\\s*(?:head |h)(\\d)\\s*<"));
        for (auto it = title.globalMatch(text); it.hasNext();)
            titled.push_back(it.next().captured(1).toInt());
        QCOMPARE(int(titled.size()), 4);
        for (int k = 0; k < 4; ++k)
            QCOMPARE(titled[std::size_t(k)], means[std::size_t(k)].second);
    }

    // The tile engine's view (--compute tiles) draws the same picture as the full matrices
    // where every cell has its own pixel: only the caption says how it was computed.
    void tileEngineMatchesFullView()
    {
        const QString full = m_dir.filePath(QStringLiteral("full.png"));
        const QString tiles = m_dir.filePath(QStringLiteral("tiles.png"));
        const QStringList common {
            QStringLiteral("--n"),     QStringLiteral("300"),     QStringLiteral("--d-model"),
            QStringLiteral("64"),      QStringLiteral("--heads"), QStringLiteral("4"),
            QStringLiteral("--mask"),  QStringLiteral("causal"),  QStringLiteral("--dtype"),
            QStringLiteral("float32"), QStringLiteral("--range"), QStringLiteral("fixed")};
        const Run a = runComputed(common, "full", "--out", full);
        QVERIFY2(a.exitCode == 0, qPrintable(a.err));
        const Run b = runComputed(common, "tiles", "--out", tiles);
        QVERIFY2(b.exitCode == 0, qPrintable(b.err));
        const QImage ia(full), ib(tiles);
        QCOMPARE(ia.size(), ib.size());
        // Below the caption (one line at this width): every pixel equal.
        int differing = 0, compared = 0;
        for (int y = 40; y < ia.height(); ++y)
            for (int x = 0; x < ia.width(); ++x, ++compared)
                differing += ia.pixel(x, y) != ib.pixel(x, y);
        QVERIFY2(differing == 0,
                 qPrintable(QStringLiteral("%1 of %2 pixels differ").arg(differing).arg(compared)));
        QVERIFY(ia != ib); // the captions differ

        // Without --range the tile engine's view is coloured as the Long tab colours it and says
        // so; with --range, and for the full matrices, nothing is said.
        const QString autoTiles = m_dir.filePath(QStringLiteral("tiles-auto.png"));
        const Run c = runComputed(common.mid(0, common.size() - 2), "tiles", "--out", autoTiles);
        QVERIFY2(c.exitCode == 0, qPrintable(c.err));
        QVERIFY2(c.err.contains(QLatin1String("coloured log10 over the five decades below its "
                                              "largest weight")),
                 qPrintable(c.err));
        QVERIFY(!a.err.contains(QLatin1String("coloured")));
        QVERIFY(!b.err.contains(QLatin1String("coloured")));
    }

    // Multi-head latent attention on the tile engine (the Long tab's, and n > 4096): each head's
    // decompressed queries and keys of width d_k + d_r with the scale (d_k + d_r)^(−α); at one
    // cell per pixel its weights are the full matrices' (absorbed there).
    // The tile engine's weights at one cell a pixel against the full matrices' (--data), for
    // what the tile engine computes beyond plain attention: MLA, RoPE (both conventions), ALiBi
    // (causal and symmetric), g < h key heads (each the mean of its group), with windows,
    // cross-attention and differential attention's second layer.
    void tileEngineDrawsLatentAttention_data()
    {
        QTest::addColumn<QString>("args");
        QTest::newRow("MLA absorbed, causal, window")
            << QStringLiteral("--n 40 --d-model 16 --heads 4 --seed 3 --mask causal --window 12 "
                              "--latent-dim 6 --latent-rope-dim 4 --latent-absorbed");
        QTest::newRow("RoPE half, g = 2, causal, window")
            << QStringLiteral("--n 40 --d-model 16 --heads 4 --seed 5 --mask causal --window 9 "
                              "--positional rope --kv-heads 2");
        QTest::newRow("RoPE interleaved, base 500, g = 1, differential")
            << QStringLiteral("--n 40 --d-model 16 --heads 4 --seed 6 --positional rope "
                              "--rope-convention interleaved --rope-base 500 --kv-heads 1 "
                              "--differential-lambda 0.5");
        QTest::newRow("ALiBi, causal, window, gate")
            << QStringLiteral("--n 40 --d-model 16 --heads 4 --seed 8 --mask causal --window 7 "
                              "--positional alibi --gate-bias 0.5");
        QTest::newRow("ALiBi symmetric, padding, differential")
            << QStringLiteral("--n 40 --d-model 16 --heads 4 --seed 9 --mask padding --padding 6 "
                              "--positional alibi --differential-lambda 0.7");
        QTest::newRow("cross, RoPE, g = 2, padding, learned sink")
            << QStringLiteral("--n 30 --n-k 40 --d-model 16 --heads 4 --seed 7 --kind cross "
                              "--mask padding --padding 5 --positional rope --kv-heads 2 "
                              "--sink-logit 0.5");
    }
    void tileEngineDrawsLatentAttention()
    {
        QFETCH(QString, args);
        const QStringList common = args.split(QLatin1Char(' '));
        const QString full = m_dir.filePath(QStringLiteral("mla-full.json"));
        const QString tiles = m_dir.filePath(QStringLiteral("mla-tiles.json"));
        const Run a = runComputed(common, "full", "--data", full);
        QVERIFY2(a.exitCode == 0, qPrintable(a.err));
        const Run b = runComputed(common, "tiles", "--data", tiles);
        QVERIFY2(b.exitCode == 0, qPrintable(b.err));
        const auto heads = [](const QString &path) {
            QFile f(path);
            return f.open(QIODevice::ReadOnly) ? QJsonDocument::fromJson(f.readAll())
                                                     .object()
                                                     .value(QStringLiteral("heads"))
                                                     .toArray()
                                               : QJsonArray();
        };
        const QJsonArray ha = heads(full), hb = heads(tiles);
        QCOMPARE(ha.size(), 4);
        QCOMPARE(hb.size(), 4);
        double worst = 0;
        for (int h = 0; h < 4; ++h) {
            const QJsonArray wa = ha.at(h).toObject().value(QStringLiteral("weights")).toArray();
            const QJsonArray wb = hb.at(h).toObject().value(QStringLiteral("weights")).toArray();
            QVERIFY(wa.size() >= 30);
            QCOMPARE(wb.size(), wa.size());
            const int nK = wa.at(0).toArray().size();
            QCOMPARE(wb.at(0).toArray().size(), nK);
            for (int i = 0; i < wa.size(); ++i)
                for (int j = 0; j < nK; ++j)
                    worst = std::max(worst,
                                     std::abs(wa.at(i).toArray().at(j).toDouble()
                                              - wb.at(i).toArray().at(j).toDouble()));
        }
        QVERIFY2(worst <= 1e-12, qPrintable(QString::number(worst)));
    }

    // Signed weights through the tile engine keep the diverging scale, and the note says so
    // (not the log scale of a plain map's tiles).
    void tileEngineSignedNote()
    {
        const Run r
            = run({QStringLiteral("--compute"), QStringLiteral("tiles"), QStringLiteral("--n"),
                   QStringLiteral("300"), QStringLiteral("--d-model"), QStringLiteral("8"),
                   QStringLiteral("--differential-lambda"), QStringLiteral("0.8"),
                   QStringLiteral("--out"), m_dir.filePath(QStringLiteral("signed-tiles.png"))});
        QVERIFY2(r.exitCode == 0, qPrintable(r.err));
        QVERIFY2(
            r.err.contains(QLatin1String("signed weights (A1 - lambda A2) is coloured RdBu_r")),
            qPrintable(r.err));
        QVERIFY2(!r.err.contains(QLatin1String("log10")), qPrintable(r.err));
    }

    // The window notes of a pooled view name the sequence's length, not its pixels'; the same
    // budget takes the data as .json, written as it goes.
    void tileEngineNotesNameTheSequence()
    {
        const QString png = m_dir.filePath(QStringLiteral("note.png"));
        const Run a = run(
            {QStringLiteral("--n"), QStringLiteral("5000"), QStringLiteral("--d-model"),
             QStringLiteral("8"), QStringLiteral("--heads"), QStringLiteral("1"),
             QStringLiteral("--window"), QStringLiteral("6000"), QStringLiteral("--out"), png});
        QVERIFY2(a.exitCode == 0, qPrintable(a.err));
        QVERIFY2(a.err.contains(QLatin1String("--window 6000 is not shorter than the sequence "
                                              "(n = 5000)")),
                 qPrintable(a.err));
        const QString json = m_dir.filePath(QStringLiteral("budget.json"));
        const Run b = run({QStringLiteral("--n"), QStringLiteral("512"), QStringLiteral("--heads"),
                           QStringLiteral("2"), QStringLiteral("--data"), json,
                           QStringLiteral("--memory-budget-mib"), QStringLiteral("50")});
        QVERIFY2(b.exitCode == 0, qPrintable(b.err));
    }

    // The axes of a pooled view end on the last position, as the full matrices' do: 4095 at
    // n = 4096 (4 cells a pixel), not the last pixel's first query, 4092.
    void pooledAxesEndOnTheLastPosition()
    {
        for (const char *mode : {"full", "tiles"}) {
            const QString svg = m_dir.filePath(QStringLiteral("axes-%1.svg").arg(mode));
            const Run r = runComputed({QStringLiteral("--n"), QStringLiteral("4096"),
                                       QStringLiteral("--d-model"), QStringLiteral("8"),
                                       QStringLiteral("--heads"), QStringLiteral("1"),
                                       QStringLiteral("--range"), QStringLiteral("fixed")},
                                      mode, "--out", svg);
            QVERIFY2(r.exitCode == 0, qPrintable(r.err));
            const attn::test::SvgTexts texts = attn::test::readSvgTextsFile(svg);
            QVERIFY2(texts.error.isEmpty(), qPrintable(texts.error));
            QVERIFY2(texts.texts.count(QStringLiteral("4095")) == 2, mode); // both axes
            QVERIFY2(!texts.texts.contains(QStringLiteral("4092")), mode);
        }
    }

    // --data with the tile engine writes its pooled view. Where every cell has its own pixel
    // (n = 300 < 1024) the weights and mask states are those of the full matrices; a sliding
    // window longer than 4096 keys applies to a long sequence.
    void tileEngineData()
    {
        const QString full = m_dir.filePath(QStringLiteral("data-full.npz"));
        const QString tiles = m_dir.filePath(QStringLiteral("data-tiles.npz"));
        const QStringList common {QStringLiteral("--n"),       QStringLiteral("300"),
                                  QStringLiteral("--d-model"), QStringLiteral("16"),
                                  QStringLiteral("--heads"),   QStringLiteral("2"),
                                  QStringLiteral("--window"),  QStringLiteral("40"),
                                  QStringLiteral("--sinks"),   QStringLiteral("2")};
        const Run a = runComputed(common, "full", "--data", full);
        QVERIFY2(a.exitCode == 0, qPrintable(a.err));
        const Run b = runComputed(common, "tiles", "--data", tiles);
        QVERIFY2(b.exitCode == 0, qPrintable(b.err));
        QVERIFY2(b.err.contains(QLatin1String("--data writes the tile engine's pooled view, 300 x "
                                              "300 pixels a head")),
                 qPrintable(b.err));
        for (const char *name : {"weights", "weights_mean", "mask_state"}) {
            const NpyArray x = readNpzMember(full.toStdString(), name);
            const NpyArray y = readNpzMember(tiles.toStdString(), name);
            QCOMPARE(x.shape, y.shape);
            double worst = 0;
            for (std::size_t k = 0; k < x.values.size(); ++k)
                worst = std::max(worst, std::abs(x.values[k] - y.values[k]));
            QVERIFY2(worst <= 1e-12, qPrintable(QStringLiteral("%1: %2").arg(name).arg(worst)));
        }
        // The full matrices' own arrays (scores, per-row metrics) are not in the pooled view.
        const std::vector<std::string> members = listNpz(tiles.toStdString());
        QVERIFY(std::find(members.begin(), members.end(), "scores") == members.end());
        QVERIFY(std::find(members.begin(), members.end(), "weights") != members.end());
        // Nor are their CSV columns.
        const QString csvPath = m_dir.filePath(QStringLiteral("data-tiles.csv"));
        const Run csvRun = runComputed({QStringLiteral("--n"), QStringLiteral("40")}, "tiles",
                                       "--data", csvPath);
        QVERIFY2(csvRun.exitCode == 0, qPrintable(csvRun.err));
        QFile csv(csvPath);
        QVERIFY(csv.open(QIODevice::ReadOnly | QIODevice::Text));
        QCOMPARE(csv.readLine().trimmed(),
                 QByteArray("head,query,key,query_label,key_label,weight,mask"));

        // n = 5000 > 4096 with a window of 4500 keys: pooled 5 x 5 cells a pixel. The last
        // pixel row holds queries 4995 … 4999, which see keys 496 … 4999 at the widest: its
        // pixels of keys 0 … 494 are masked, and from keys 495 … 499 on they are not.
        const QString longData = m_dir.filePath(QStringLiteral("data-long.npz"));
        const Run c
            = run({QStringLiteral("--n"), QStringLiteral("5000"), QStringLiteral("--d-model"),
                   QStringLiteral("8"), QStringLiteral("--heads"), QStringLiteral("1"),
                   QStringLiteral("--window"), QStringLiteral("4500"), QStringLiteral("--data"),
                   longData});
        QVERIFY2(c.exitCode == 0, qPrintable(c.err));
        QVERIFY2(!c.err.contains(QLatin1String("masks no key")), qPrintable(c.err));
        const NpyArray w = readNpzMember(longData.toStdString(), "weights");
        QCOMPARE(w.shape, (std::vector<std::int64_t> {1, 1000, 1000}));
        const NpyArray q = readNpzMember(longData.toStdString(), "query_index");
        QCOMPARE(q.values[1], 5.0);
        const NpyArray m = readNpzMember(longData.toStdString(), "mask_state");
        const std::size_t last = std::size_t(999) * 1000;
        QVERIFY(m.values[last + 0] != 0 && m.values[last + 98] != 0);
        QVERIFY(m.values[last + 99] == 0 && m.values[last + 999] == 0);
    }

    // --compute auto: the tile engine once the full matrices would exceed 256 MiB, and the
    // caption says which pooling the pixels show.
    void autoComputeSwitchesToTiles_data()
    {
        QTest::addColumn<int>("n");
        QTest::addColumn<QString>("pooling");
        QTest::addColumn<QString>("note");
        QTest::addColumn<QStringList>("extra");
        QTest::newRow("n 300: full") << 300 << QStringLiteral("max") << QString() << QStringList();
        QTest::newRow("n 1600: tiles, max")
            << 1600 << QStringLiteral("max")
            << QStringLiteral("tile engine: max of 2 \u00d7 2 cells per pixel") << QStringList();
        // The tile engine applies the gate (and the other variants) too.
        QTest::newRow("n 1600 with the gate: tiles") // a longer caption: wrapped after "per"
            << 1600 << QStringLiteral("max")
            << QStringLiteral("tile engine: max of 2 \u00d7 2 cells per")
            << QStringList {QStringLiteral("--gate-bias"), QStringLiteral("1")};
        QTest::newRow("n 1600 with ALiBi: tiles")
            << 1600 << QStringLiteral("max")
            << QStringLiteral("tile engine: max of 2 \u00d7 2 cells per")
            << QStringList {QStringLiteral("--positional"), QStringLiteral("alibi")};
        QTest::newRow("n 5000: tiles, mean")
            << 5000 << QStringLiteral("mean")
            << QStringLiteral("tile engine: mean of 5 \u00d7 5 cells per pixel") << QStringList();
    }
    void autoComputeSwitchesToTiles()
    {
        QFETCH(int, n);
        QFETCH(QString, pooling);
        QFETCH(QString, note);
        QFETCH(QStringList, extra);
        const QString svg = m_dir.filePath(QStringLiteral("auto-%1.svg").arg(n));
        const Run r = run(
            QStringList {QStringLiteral("--n"), QString::number(n), QStringLiteral("--d-model"),
                         QStringLiteral("16"), QStringLiteral("--heads"), QStringLiteral("4"),
                         QStringLiteral("--pooling"), pooling, QStringLiteral("--out"), svg}
            + extra);
        QVERIFY2(r.exitCode == 0, qPrintable(r.err));
        QFile f(svg);
        QVERIFY(f.open(QIODevice::ReadOnly));
        const QString text = QString::fromUtf8(f.readAll());
        const QString &expected = note;
        if (note.isEmpty())
            QVERIFY(!text.contains(QLatin1String("tile engine")));
        else
            QVERIFY2(text.contains(expected), qPrintable(expected));
    }

    void generatorTorch()
    {
        // --generator torch (and a session saying "generator": "torch") gives the weights
        // torch.nn.MultiheadAttention returns (tests/reference/make_session_torch_fixtures.py).
        QFile fixture(QStringLiteral(ATTN_FIXTURE_DIR "/session/session_torch.json"));
        QVERIFY(fixture.open(QIODevice::ReadOnly));
        const QJsonArray cases
            = QJsonDocument::fromJson(fixture.readAll()).object().value("cases").toArray();
        QJsonObject c;
        for (const QJsonValue &v : cases)
            if (v.toObject().value("name").toString() == QLatin1String("decoder padding float64"))
                c = v.toObject();
        QVERIFY(!c.isEmpty());
        const QJsonObject p = c.value("params").toObject();
        const QString data = m_dir.filePath(QStringLiteral("torch.json"));
        const Run r = run({"--n", QString::number(p.value("n").toInt()), "--d-model",
                           QString::number(p.value("d_model").toInt()), "--heads",
                           QString::number(p.value("heads").toInt()), "--seed",
                           p.value("seed").toString(), "--kind", "decoder", "--mask", "padding",
                           "--padding", "2", "--generator", "torch", "--data", data});
        QVERIFY2(r.exitCode == 0, qPrintable(r.err));
        QFile out(data);
        QVERIFY(out.open(QIODevice::ReadOnly));
        const QJsonObject json = QJsonDocument::fromJson(out.readAll()).object();
        QCOMPARE(json.value("parameters").toObject().value("generator").toString(),
                 QStringLiteral("torch"));
        const QJsonArray heads = json.value("heads").toArray();
        const QJsonArray want = c.value("weights").toArray();
        QCOMPARE(heads.size(), want.size());
        double worst = 0;
        for (qsizetype h = 0; h < heads.size(); ++h) {
            const QJsonArray got = heads[h].toObject().value("weights").toArray();
            const QJsonArray rows = want[h].toArray();
            QCOMPARE(got.size(), rows.size());
            for (qsizetype i = 0; i < rows.size(); ++i)
                for (qsizetype j = 0; j < rows[i].toArray().size(); ++j)
                    worst = std::max(
                        worst,
                        std::abs(got[i].toArray()[j].toDouble() - rows[i].toArray()[j].toDouble()));
        }
        QVERIFY2(worst <= 1e-12, qPrintable(QString::number(worst)));

        // The same through a saved session: the generator is part of the parameters.
        const QString session = m_dir.filePath(QStringLiteral("torch.attnlab.json"));
        QFile s(session);
        QVERIFY(s.open(QIODevice::WriteOnly));
        QJsonObject params = p;
        params.insert("version", 1);
        s.write(
            QJsonDocument(
                QJsonObject {{"format", "attnlab-session"}, {"version", 1}, {"parameters", params}})
                .toJson());
        s.close();
        const QString data2 = m_dir.filePath(QStringLiteral("torch2.json"));
        const Run r2 = run({"--session", session, "--data", data2});
        QVERIFY2(r2.exitCode == 0, qPrintable(r2.err));
        QFile out2(data2);
        QVERIFY(out2.open(QIODevice::ReadOnly));
        QCOMPARE(QJsonDocument::fromJson(out2.readAll()).object().value("heads").toArray(), heads);
    }

    // A session saved with a model run: its parameters are the stack's placeholders, so the
    // command refuses it (exit 2) and names the command that runs the model, writing nothing.
    void sessionWithModelIsRefused()
    {
        const QString session = m_dir.filePath(QStringLiteral("model.attnlab.json"));
        QFile s(session);
        QVERIFY(s.open(QIODevice::WriteOnly));
        const QJsonObject params {{"version", 1}, {"n", 4}, {"d_model", 4}, {"heads", 4}};
        const QJsonObject model {{"folder", m_dir.path()}, {"text", "the cat"}, {"shown", true}};
        s.write(QJsonDocument(QJsonObject {{"format", "attnlab-session"},
                                           {"version", 1},
                                           {"parameters", params},
                                           {"model", model}})
                    .toJson());
        s.close();
        const QString png = m_dir.filePath(QStringLiteral("model-session.png"));
        const Run r = run({"--session", session, "--out", png});
        QCOMPARE(r.exitCode, 2);
        QVERIFY2(r.err.contains(QStringLiteral("holds a run of the model in"))
                     && r.err.contains(QStringLiteral("attnlab model --model")),
                 qPrintable(r.err));
        QVERIFY(!QFile::exists(png));
    }

    // A session saved on the Long tab: the command line draws the session's own n and says how
    // to draw the Long tab's map; with --n given it says nothing.
    void sessionOnTheLongTabSaysSo()
    {
        const QString session = m_dir.filePath(QStringLiteral("long.attnlab.json"));
        QFile s(session);
        QVERIFY(s.open(QIODevice::WriteOnly));
        const QJsonObject params {{"version", 1}, {"n", 6}, {"d_model", 8}, {"heads", 2}};
        // The Heads view's saved range and scale (fixed, linear) are not the Long tab's.
        const QJsonObject view {
            {"tabs", QJsonArray {"longMapView"}},
            {"heatmap", QJsonObject {{"range", "fixed"}, {"scale", "linear"}}},
            {"long_map", QJsonObject {{"n", 5000}, {"head", -1}, {"pooling", "mean"}}}};
        s.write(QJsonDocument(QJsonObject {{"format", "attnlab-session"},
                                           {"version", 1},
                                           {"parameters", params},
                                           {"view", view}})
                    .toJson());
        s.close();
        const QString png = m_dir.filePath(QStringLiteral("long-session.png"));
        const Run a = run({"--session", session, "--out", png});
        QVERIFY2(a.exitCode == 0, qPrintable(a.err));
        QCOMPARE(a.err.section(QLatin1Char('\n'), 0, 0),
                 QStringLiteral("attnlab heatmap: note: the session shows the Long tab (n = 5000); "
                                "this draws the Heads view of its parameters: add --n 5000 --view "
                                "head --head mean --pooling mean for the Long tab's map"));
        // Following the note (with -n, the short form --help lists) draws the Long tab's map in
        // the Long tab's colours: log over the five decades below its largest weight.
        const QString svg = m_dir.filePath(QStringLiteral("long-session.svg"));
        const Run b = run({"--session", session, "-n", "5000", "--view", "head", "--head", "mean",
                           "--pooling", "mean", "--out", svg});
        QVERIFY2(b.exitCode == 0, qPrintable(b.err));
        QVERIFY2(!b.err.contains(QLatin1String("the session shows the Long tab")),
                 qPrintable(b.err));
        QVERIFY2(b.err.contains(QLatin1String("log10 over the five decades below its largest")),
                 qPrintable(b.err));
        QFile f(svg);
        QVERIFY(f.open(QIODevice::ReadOnly));
        QVERIFY(QString::fromUtf8(f.readAll())
                    .contains(QStringLiteral("tile engine: mean of 5 \u00d7 5 cells per pixel")));
    }

    void dataExportNamesWindowMaskedCells_data()
    {
        QTest::addColumn<int>("window");
        QTest::addColumn<int>("sinks");
        QTest::addColumn<int>("padding"); // last keys padding (0: no padding mask)
        QTest::newRow("w 3") << 3 << 0 << 0;
        QTest::newRow("w 2, 1 sink") << 2 << 1 << 0;
        QTest::newRow("w 3, padding 2") << 3 << 0 << 2;
    }

    // A cell outside the sliding window was exported "allowed" while the heatmap hatched it:
    // the CSV's mask column and the JSON's mask_state give every cell's state, by the window's
    // definition (query i sees the w keys i - w < j <= i, plus the sinks j < s; keys j > i are
    // causal-masked; the last m keys padding).
    void dataExportNamesWindowMaskedCells()
    {
        QFETCH(int, window);
        QFETCH(int, sinks);
        QFETCH(int, padding);
        const int n = 7;
        const QString stem
            = m_dir.filePath(QStringLiteral("window_%1_%2_%3").arg(window).arg(sinks).arg(padding));
        QStringList args {QStringLiteral("--n"),       QString::number(n),
                          QStringLiteral("--d-model"), QStringLiteral("8"),
                          QStringLiteral("--heads"),   QStringLiteral("1"),
                          QStringLiteral("--window"),  QString::number(window)};
        if (sinks > 0)
            args << QStringLiteral("--sinks") << QString::number(sinks);
        if (padding > 0)
            args << QStringLiteral("--mask") << QStringLiteral("padding")
                 << QStringLiteral("--padding") << QString::number(padding);
        for (const QString &suffix : {QStringLiteral(".csv"), QStringLiteral(".json")}) {
            const Run r = run(args + QStringList {QStringLiteral("--data"), stem + suffix});
            QVERIFY2(r.exitCode == 0, qPrintable(r.err));
        }
        auto expected = [&](int i, int j, QString *field) {
            int bits = 0;
            QStringList parts;
            if (j > i) {
                bits |= 1;
                parts << QStringLiteral("causal");
            }
            if (j >= n - padding) {
                bits |= 2;
                parts << QStringLiteral("padding");
            }
            if (j <= i - window && j >= sinks) {
                bits |= 8;
                parts << QStringLiteral("window");
            }
            *field = parts.isEmpty() ? QStringLiteral("allowed") : parts.join(QLatin1Char('+'));
            return bits;
        };
        QFile csv(stem + QStringLiteral(".csv"));
        QVERIFY(csv.open(QIODevice::ReadOnly | QIODevice::Text));
        const QStringList lines
            = QString::fromUtf8(csv.readAll()).split(QLatin1Char('\n'), Qt::SkipEmptyParts);
        QCOMPARE(lines.size(), 1 + n * n);
        QVERIFY(lines.front().endsWith(QLatin1String(",mask")));
        int windowCells = 0;
        for (int i = 0; i < n; ++i) {
            for (int j = 0; j < n; ++j) {
                const QStringList fields = lines[1 + i * n + j].split(QLatin1Char(','));
                QCOMPARE(fields[1].toInt(), i);
                QCOMPARE(fields[2].toInt(), j);
                QString field;
                windowCells += (expected(i, j, &field) & 8) ? 1 : 0;
                QCOMPARE(fields.back(), field);
            }
        }
        QVERIFY(windowCells > 0);
        QFile json(stem + QStringLiteral(".json"));
        QVERIFY(json.open(QIODevice::ReadOnly));
        const QJsonArray state = QJsonDocument::fromJson(json.readAll())
                                     .object()
                                     .value(QStringLiteral("mask_state"))
                                     .toArray();
        QCOMPARE(state.size(), n);
        for (int i = 0; i < n; ++i) {
            for (int j = 0; j < n; ++j) {
                QString field;
                QCOMPARE(state[i].toArray()[j].toInt(), expected(i, j, &field));
            }
        }
    }
};

QTEST_GUILESS_MAIN(TestCliHeatmapEngine)
#include "tst_cli_heatmap_engine.moc"
