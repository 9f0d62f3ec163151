// Heatmap features: colour scales (known value → matplotlib's RGB per colormap, linear
// and log, fixed and auto range) and their labels, typed tokens (splitting, per-token input
// vectors and sessions vs NumPy fixtures of tests/reference/make_token_fixtures.py, the
// permutation lesson), trimmed padding and hidden keys with renormalisation, pooled images and
// exact hover, zoom and pan, the row strip, PNG at a DPI, SVG/PDF structure, one file per head,
// data export round trips (CSV, NPY via readNpy, NPZ, JSON), the control and view panels, and
// `attnlab heatmap --tokens/--batch-dir/--data`.

#include "handmaderesult.h"
#include "testutil.h"

#include "core/engine/sessioninputs.h"
#include "core/io/npy.h"
#include "ui/charts/rowmetricschart.h"
#include "ui/export/dataexport.h"
#include "ui/panels/controlpanel.h"
#include "ui/panels/heatmapviewpanel.h"
#include "ui/render/heatmaprenderer.h"
#include "ui/session/resultview.h"
#include "ui/session/sessioncompute.h"
#include "ui/session/tokenizer.h"
#include "ui/views/heatmapactions.h"
#include "ui/views/heatmapwidget.h"

#include <QCheckBox>
#include <QComboBox>
#include <QDir>
#include <QFile>
#include <QImageReader>
#include <QJsonArray>
#include <QJsonDocument>
#include <QJsonObject>
#include <QLabel>
#include <QLineEdit>
#include <QPainter>
#include <QProcess>
#include <QRegularExpression>
#include <QSignalSpy>
#include <QSpinBox>
#include <QSvgRenderer>
#include <QTemporaryDir>
#include <QTest>
#include <QWheelEvent>
#include <QXmlStreamReader>

#include <cmath>
#include <limits>

using namespace attn;

namespace {

using attn::test::makeResult;

std::shared_ptr<const SessionResult> compute(const SessionParameters &p)
{
    return std::make_shared<SessionResult>(computeSession(p));
}

QJsonObject readJson(const QString &path)
{
    QFile f(path);
    if (!f.open(QIODevice::ReadOnly))
        return {};
    return QJsonDocument::fromJson(f.readAll()).object();
}

MatrixD jsonMatrix(const QJsonArray &rows)
{
    MatrixD m(rows.size(), rows.isEmpty() ? 0 : rows.at(0).toArray().size());
    for (int i = 0; i < rows.size(); ++i) {
        const QJsonArray row = rows.at(i).toArray();
        for (int j = 0; j < row.size(); ++j)
            m(i, j) = row.at(j).isNull() ? -std::numeric_limits<double>::infinity()
                                         : row.at(j).toDouble();
    }
    return m;
}

// Texts of the <text> elements of an SVG, and whether it parsed.
QStringList svgTexts(const QByteArray &svg, QString *error)
{
    QStringList texts;
    QXmlStreamReader xml(svg);
    while (!xml.atEnd()) {
        xml.readNext();
        if (xml.isStartElement() && xml.name() == QLatin1String("text"))
            texts << xml.readElementText(QXmlStreamReader::IncludeChildElements).trimmed();
    }
    if (xml.hasError() && error)
        *error = xml.errorString();
    return texts;
}

QString fixture(const QString &relative)
{
    return QStringLiteral(ATTN_FIXTURE_DIR "/") + relative;
}

} // namespace

class TestHeatmapFeatures : public QObject
{
    Q_OBJECT

private:
    QJsonObject m_colormaps;
    QJsonObject m_tokens;

private slots:
    void initTestCase()
    {
        m_colormaps = readJson(fixture(QStringLiteral("colormaps/colormaps.json")));
        QVERIFY(!m_colormaps.isEmpty());
        m_tokens = readJson(fixture(QStringLiteral("tokens/tokens.json")));
        QVERIFY(!m_tokens.isEmpty());
    }

    // ---- colour scales ----

    // A cell of value v shows matplotlib's cmap(norm(v)) (fixtures/colormaps: Normalize and
    // LogNorm), for every colormap, linear and log, with the fixed range (weights: [0, 1], log
    // [1e-4, 1]) or an auto range spanning the tile's min … max.
    void colourMapping_data()
    {
        QTest::addColumn<QString>("map");
        QTest::addColumn<bool>("log");
        QTest::addColumn<double>("vmin");
        QTest::addColumn<double>("vmax");
        QTest::addColumn<double>("value");
        QTest::addColumn<QColor>("rgb");
        int rows = 0;
        for (const char *kind : {"linear", "log"}) {
            const bool log = QLatin1String(kind) == QLatin1String("log");
            for (const QJsonValue &e : m_colormaps.value(QLatin1String(kind)).toArray()) {
                const QJsonArray a = e.toArray();
                const QString map = a.at(0).toString();
                const double vmin = a.at(1).toDouble(), vmax = a.at(2).toDouble();
                const double v = a.at(3).toDouble();
                if (map == QLatin1String("RdBu_r") || vmin < 0 || v < vmin || v > vmax)
                    continue; // weights: sequential maps, values inside the range
                const QJsonArray c = a.at(4).toArray();
                QTest::addRow("%s %s [%g, %g] v=%g", qPrintable(map), kind, vmin, vmax, v)
                    << map << log << vmin << vmax << v
                    << QColor(c.at(0).toInt(), c.at(1).toInt(), c.at(2).toInt());
                ++rows;
            }
        }
        QVERIFY(rows >= 20);
    }
    void colourMapping()
    {
        QFETCH(QString, map);
        QFETCH(bool, log);
        QFETCH(double, vmin);
        QFETCH(double, vmax);
        QFETCH(double, value);
        QFETCH(QColor, rgb);
        const bool fixed = vmin == (log ? 1e-4 : 0.0) && vmax == 1.0;
        // Cells: the value, and (for the auto range) the range's ends.
        auto r = makeResult(1, 1, 3, [&](int, int, int j) {
            return j == 0 ? value : j == 1 ? vmin : vmax;
        });
        HeatmapRenderer renderer;
        renderer.setResult(r);
        HeatmapOptions o;
        o.view = HeatmapView::SingleHead;
        o.colormap = *Colormap::fromName(map);
        o.scale = log ? ColorScale::Log : ColorScale::Linear;
        o.autoRange = !fixed;
        renderer.setOptions(o);
        QCOMPARE(renderer.norm().vmin, vmin);
        QCOMPARE(renderer.norm().vmax, vmax);
        const QImage image = renderer.tileImage(0);
        QCOMPARE(QColor(image.pixel(0, 0)), rgb);
    }

    void weightOneIsTopOfFixedScale_data()
    {
        QTest::addColumn<int>("scale");
        QTest::newRow("linear") << int(ColorScale::Linear);
        QTest::newRow("log") << int(ColorScale::Log);
    }
    void weightOneIsTopOfFixedScale()
    {
        QFETCH(int, scale);
        auto r = makeResult(1, 1, 2, [](int, int, int j) { return j == 0 ? 1.0 : 0.3; });
        for (ColormapId id :
             {ColormapId::Viridis, ColormapId::Magma, ColormapId::Cividis, ColormapId::Grayscale}) {
            HeatmapRenderer renderer;
            renderer.setResult(r);
            HeatmapOptions o;
            o.colormap = id;
            o.scale = ColorScale(scale);
            renderer.setOptions(o);
            QCOMPARE(renderer.norm().vmax, 1.0);
            QCOMPARE(QRgb(renderer.tileImage(0).pixel(0, 0)), Colormap(id).entry(255));
        }
    }

    // The colourbar names the colormap, the scale and the range mode; the caption repeats them.
    void colorbarNamesColormapAndScale_data()
    {
        QTest::addColumn<int>("colormap");
        QTest::addColumn<int>("scale");
        QTest::addColumn<bool>("autoRange");
        QTest::addColumn<QString>("first");
        QTest::addColumn<QString>("range");
        QTest::newRow("viridis linear fixed")
            << int(ColormapId::Viridis) << int(ColorScale::Linear) << false << "viridis, linear"
            << "fixed [0, 1]";
        QTest::newRow("magma log fixed")
            << int(ColormapId::Magma) << int(ColorScale::Log) << false << "magma, log"
            << "fixed [0.0001, 1]";
        QTest::newRow("cividis linear auto")
            << int(ColormapId::Cividis) << int(ColorScale::Linear) << true << "cividis, linear"
            << "auto [0.1, 0.7]";
        QTest::newRow("gray log auto")
            << int(ColormapId::Grayscale) << int(ColorScale::Log) << true << "gray, log"
            << "auto [0.1, 0.7]";
    }
    void colorbarNamesColormapAndScale()
    {
        QFETCH(int, colormap);
        QFETCH(int, scale);
        QFETCH(bool, autoRange);
        QFETCH(QString, first);
        QFETCH(QString, range);
        HeatmapRenderer renderer;
        // Values 0.1, 0.3, 0.5, 0.7: the auto range is [0.1, 0.7].
        renderer.setResult(
            makeResult(2, 2, 2, [](int, int i, int j) { return 0.1 + 0.2 * (2 * i + j); }));
        HeatmapOptions o;
        o.colormap = ColormapId(colormap);
        o.scale = ColorScale(scale);
        o.autoRange = autoRange;
        renderer.setOptions(o);
        const QStringList lines = renderer.colorbarLines();
        QCOMPARE(lines.value(0), first);
        QCOMPARE(lines.value(1), range);
        QVERIFY(renderer.captionText().contains(first + QStringLiteral(", ") + range));
        // Written into the exports: the SVG holds the colourbar text.
        QTemporaryDir dir;
        const QString path = dir.filePath(QStringLiteral("bar.svg"));
        QString error;
        QVERIFY2(renderer.saveSvg(path, QSize(900, 600), &error), qPrintable(error));
        QFile f(path);
        QVERIFY(f.open(QIODevice::ReadOnly));
        const QStringList texts = svgTexts(f.readAll(), &error);
        QVERIFY2(error.isEmpty(), qPrintable(error));
        QVERIFY2(texts.contains(first), qPrintable(texts.join(QLatin1Char('|'))));
        QVERIFY(texts.contains(range));
    }

    // ---- tokens ----

    void splitTokens_data()
    {
        QTest::addColumn<QString>("text");
        QTest::addColumn<QStringList>("tokens");
        QTest::newRow("empty") << QString() << QStringList();
        QTest::newRow("blank") << QStringLiteral("  \t\n ") << QStringList();
        QTest::newRow("words") << QStringLiteral("the cat sat")
                               << QStringList {"the", "cat", "sat"};
        QTest::newRow("multiple spaces and tabs")
            << QStringLiteral("  the   cat\t\tsat \n") << QStringList {"the", "cat", "sat"};
        QTest::newRow("punctuation")
            << QStringLiteral("The cat, sat.") << QStringList {"The", "cat", ",", "sat", "."};
        QTest::newRow("punctuation runs") << QStringLiteral("Wait...what?!")
                                          << QStringList {"Wait", ".", ".", ".", "what", "?", "!"};
        QTest::newRow("apostrophe") << QStringLiteral("don't") << QStringList {"don", "'", "t"};
        QTest::newRow("digits") << QStringLiteral("in 2017 (v2)")
                                << QStringList {"in", "2017", "(", "v2", ")"};
        QTest::newRow("accented letters") << QStringLiteral("naïve café") // precomposed
                                          << QStringList {"naïve", "café"};
        QTest::newRow("combining mark")
            << QStringLiteral("cafe\u0301 ok") << QStringList {QStringLiteral("cafe\u0301"), "ok"};
        QTest::newRow("greek and cyrillic")
            << QStringLiteral("Ελλάδα и Россия") << QStringList {"Ελλάδα", "и", "Россия"};
        QTest::newRow("cjk run") << QStringLiteral("東京は、大きい。")
                                 << QStringList {"東京は", "、", "大きい", "。"};
        QTest::newRow("symbols and emoji")
            << QStringLiteral("a+b=c 😀!") << QStringList {"a", "+", "b", "=", "c", "😀", "!"};
        QTest::newRow("special tokens")
            << QStringLiteral("<s> Hi [SEP] bye</s><|endoftext|>")
            << QStringList {"<s>", "Hi", "[SEP]", "bye", "</s>", "<|endoftext|>"};
        QTest::newRow("brackets that are not special tokens")
            << QStringLiteral("a < b [ c ] <> [x y]")
            << QStringList {"a", "<", "b", "[", "c", "]", "<", ">", "[", "x", "y", "]"};
        QTest::newRow("no-break space and zero-width space")
            << QStringLiteral("a\u00a0b\u200bc") << QStringList {"a", "b", "c"};
    }
    void splitTokens()
    {
        QFETCH(QString, text);
        QFETCH(QStringList, tokens);
        QCOMPARE(attn::splitTokens(text), tokens);
    }

    // Each token's vector equals NumPy's default_rng(seed + 2**64 · fnv1a64(utf8)).standard_normal.
    void tokenVectorsMatchNumPy()
    {
        const QJsonArray cases = m_tokens.value(QLatin1String("vectors")).toArray();
        QVERIFY(cases.size() >= 8);
        for (const QJsonValue &c : cases) {
            const QJsonObject o = c.toObject();
            const QString token = o.value(QLatin1String("token")).toString();
            const quint64 seed = o.value(QLatin1String("seed")).toString().toULongLong();
            const int d = o.value(QLatin1String("d_model")).toInt();
            QCOMPARE(tokenHash(token.toStdString()),
                     o.value(QLatin1String("hash")).toString().toULongLong());
            const VectorD v = tokenEmbedding(token.toStdString(), seed, d);
            const QJsonArray want = o.value(QLatin1String("vector")).toArray();
            QCOMPARE(v.size(), want.size());
            for (int k = 0; k < d; ++k)
                QCOMPARE(v(k), want.at(k).toDouble()); // bit for bit
        }
        QVERIFY_THROWS_EXCEPTION(InvalidArgument, tokenEmbedding("x", 0, -1));
    }

    // A session with typed tokens equals the NumPy computation where row i of X is the vector of
    // token i (before positional encoding).
    void tokenSessionsMatchNumPy_data()
    {
        QTest::addColumn<QJsonObject>("session");
        for (const QJsonValue &c : m_tokens.value(QLatin1String("sessions")).toArray())
            QTest::newRow(qPrintable(c.toObject().value(QLatin1String("name")).toString()))
                << c.toObject();
    }
    void tokenSessionsMatchNumPy()
    {
        QFETCH(QJsonObject, session);
        QString error;
        const auto params = SessionParameters::fromJson(
            session.value(QLatin1String("params")).toObject(), &error);
        QVERIFY2(params, qPrintable(error));
        QVERIFY(!params->tokens.empty());
        const SessionResult r = computeSession(*params);
        QVERIFY2(r.ok(), qPrintable(r.error));
        const QJsonArray heads = session.value(QLatin1String("weights")).toArray();
        QCOMPARE(r.headCount(), heads.size());
        for (int h = 0; h < r.headCount(); ++h)
            ATTN_COMPARE_CLOSE(r.weights[std::size_t(h)], jsonMatrix(heads.at(h).toArray()), 1e-12,
                               0.0);
        QCOMPARE(r.queryLabel(0), params->tokenList().first());
    }

    // The E5 lesson: with positional encoding off, reordering the words permutes the weights
    // exactly (W'[i][j] = W[π(i)][π(j)]); with it on, the weights change.
    void permutationLesson_data()
    {
        QTest::addColumn<bool>("positional");
        QTest::addColumn<int>("dtype");
        QTest::newRow("PE off float64") << false << int(DType::Float64);
        QTest::newRow("PE on float64") << true << int(DType::Float64);
        QTest::newRow("PE off float32") << false << int(DType::Float32);
        QTest::newRow("PE on float32") << true << int(DType::Float32);
    }
    void permutationLesson()
    {
        QFETCH(bool, positional);
        QFETCH(int, dtype);
        const QStringList sentence = attn::splitTokens(QStringLiteral("the cat sat on a mat ."));
        // π: the reordered sentence's position i holds the original's token π(i).
        const std::vector<int> pi = {5, 2, 0, 6, 1, 4, 3};
        QStringList reordered;
        for (int k : pi)
            reordered << sentence.at(k);
        SessionParameters p;
        p.dModel = 16;
        p.heads = 2;
        p.seed = 11;
        p.positional = positional;
        p.dtype = DType(dtype);
        p.setTokens(sentence);
        p.n = int(sentence.size());
        const auto a = compute(p);
        p.setTokens(reordered);
        const auto b = compute(p);
        QVERIFY(a->ok() && b->ok());
        const double tol = p.dtype == DType::Float32 ? 1e-5 : 1e-12;
        double largest = 0;
        for (int h = 0; h < p.heads; ++h) {
            MatrixD permuted(p.n, p.n);
            for (int i = 0; i < p.n; ++i)
                for (int j = 0; j < p.n; ++j)
                    permuted(i, j)
                        = a->weights[std::size_t(h)](pi[std::size_t(i)], pi[std::size_t(j)]);
            if (!positional)
                ATTN_COMPARE_CLOSE(b->weights[std::size_t(h)], permuted, tol, 0.0);
            largest
                = std::max(largest, (b->weights[std::size_t(h)] - permuted).cwiseAbs().maxCoeff());
        }
        if (positional)
            QVERIFY2(largest > 1e-3, qPrintable(QString::number(largest)));
        // The axes carry the reordered words.
        for (int i = 0; i < p.n; ++i)
            QCOMPARE(b->queryLabel(i), reordered.at(i));
    }

    // ---- trim padding, hide keys ----

    void trimPadding_data()
    {
        QTest::addColumn<int>("kind");
        QTest::addColumn<int>("queries");
        QTest::addColumn<int>("keys");
        QTest::newRow("encoder") << int(AttentionKind::EncoderSelf) << 5 << 5;
        QTest::newRow("decoder") << int(AttentionKind::DecoderCausal) << 5 << 5;
        QTest::newRow("cross: keys only") << int(AttentionKind::EncoderDecoder) << 8 << 7;
    }
    void trimPadding()
    {
        QFETCH(int, kind);
        QFETCH(int, queries);
        QFETCH(int, keys);
        SessionParameters p;
        p.n = 8;
        p.nK = 10;
        p.dModel = 16;
        p.heads = 2;
        p.kind = AttentionKind(kind);
        p.mask = MaskChoice::KeyPadding;
        p.paddingCount = 3;
        const auto full = compute(p);
        QVERIFY(full->ok());
        ViewTransform t;
        t.trimPadding = true;
        const auto shown = applyViewTransform(full, t);
        QVERIFY(shown->ok());
        QCOMPARE(int(shown->queryCount()), queries);
        QCOMPARE(int(shown->keyCount()), keys);
        QVERIFY(!shown->renormalized);
        QVERIFY(shown->viewNote.contains(QLatin1String("real tokens only")));
        for (int h = 0; h < p.heads; ++h) {
            const MatrixD block = full->weights[std::size_t(h)].topLeftCorner(queries, keys);
            ATTN_COMPARE_CLOSE(shown->weights[std::size_t(h)], block, 0.0, 0.0);
            // Metrics over real tokens only: recomputed from the shown rows, which still sum to
            // 1 (padded keys had weight 0).
            const RowMetrics want = rowMetrics(block, shown->fullyMasked[std::size_t(h)]);
            QCOMPARE(shown->metrics[std::size_t(h)].entropy.size(), Index(queries));
            ATTN_COMPARE_CLOSE(shown->metrics[std::size_t(h)].entropy, want.entropy, 1e-12, 0.0);
            ATTN_COMPARE_CLOSE(shown->metrics[std::size_t(h)].jacobianNorm, want.jacobianNorm,
                               1e-12, 0.0);
            for (int i = 0; i < queries; ++i)
                QVERIFY(std::abs(shown->weights[std::size_t(h)].row(i).sum() - 1.0) < 1e-12);
        }
        // The per-row metrics chart says so.
        RowMetricsChart chart;
        chart.setResult(shown);
        auto *info = chart.findChild<QLabel *>(QStringLiteral("rowMetricsInfo"));
        QVERIFY(info);
        QTRY_VERIFY(info->text().contains(QLatin1String("real tokens only")));
        QVERIFY(
            info->text().contains(QStringLiteral("%1 rows \u00d7 %2 keys").arg(queries).arg(keys)));

        // Trimming without a padding mask changes nothing (the same object).
        p.mask = MaskChoice::None;
        const auto plain = compute(p);
        QCOMPARE(applyViewTransform(plain, t), plain);
    }

    void hideKeys_data()
    {
        QTest::addColumn<QList<int>>("hidden");
        QTest::addColumn<bool>("renormalize");
        QTest::addColumn<bool>("causal");
        QTest::newRow("BOS renormalised") << QList<int> {0} << true << false;
        QTest::newRow("BOS raw") << QList<int> {0} << false << false;
        QTest::newRow("keys 0 and 3 renormalised") << QList<int> {0, 3} << true << false;
        QTest::newRow("BOS causal renormalised: row 0 has nothing left")
            << QList<int> {0} << true << true;
        QTest::newRow("out of range ignored") << QList<int> {2, 99} << true << false;
    }
    void hideKeys()
    {
        QFETCH(QList<int>, hidden);
        QFETCH(bool, renormalize);
        QFETCH(bool, causal);
        SessionParameters p;
        p.n = 7;
        p.dModel = 12;
        p.heads = 3;
        p.seed = 4;
        p.mask = causal ? MaskChoice::Causal : MaskChoice::None;
        const auto full = compute(p);
        ViewTransform t;
        t.hiddenKeys = hidden;
        t.renormalize = renormalize;
        const auto shown = applyViewTransform(full, t);
        QVERIFY(shown->ok());
        std::vector<int> kept;
        for (int j = 0; j < p.n; ++j)
            if (!hidden.contains(j))
                kept.push_back(j);
        QCOMPARE(int(shown->keyCount()), int(kept.size()));
        QCOMPARE(shown->renormalized, renormalize);
        HeatmapRenderer renderer;
        renderer.setResult(shown);
        QCOMPARE(renderer.colorbarLines().value(2),
                 renormalize ? QStringLiteral("renormalised") : QStringLiteral("raw weights"));
        QVERIFY(shown->viewNote.contains(renormalize ? QLatin1String("renormalised")
                                                     : QLatin1String("raw")));
        for (int h = 0; h < p.heads; ++h) {
            const MatrixD &w = full->weights[std::size_t(h)];
            const MatrixD &s = shown->weights[std::size_t(h)];
            for (int i = 0; i < p.n; ++i) {
                double keptSum = 0;
                for (int k : kept)
                    keptSum += w(i, k);
                const bool nothingLeft = !(keptSum > 0);
                QCOMPARE(bool(shown->fullyMasked[std::size_t(h)][std::size_t(i)]),
                         renormalize && nothingLeft);
                for (std::size_t c = 0; c < kept.size(); ++c) {
                    QCOMPARE(shown->originalKey(int(c)), kept[c]);
                    const double want = !renormalize ? w(i, kept[c])
                        : nothingLeft                ? 0.0
                                                     : w(i, kept[c]) / keptSum;
                    QVERIFY(std::abs(s(i, Index(c)) - want) <= 1e-15 * std::max(1.0, want));
                }
                if (renormalize && !nothingLeft) // rows sum to 1 over the kept keys
                    QVERIFY2(std::abs(s.row(i).sum() - 1.0) < 1e-12,
                             qPrintable(QString::number(s.row(i).sum(), 'g', 17)));
            }
        }
        // The tooltip reports the computation's key index and says which weights these are.
        const QString tip = renderer.describeCell({0, 0, false, int(p.n) - 1, 0});
        QVERIFY2(tip.contains(QStringLiteral("key j = %1").arg(kept.front())), qPrintable(tip));
        QVERIFY(tip.contains(renormalize ? QLatin1String("weight (renormalised)")
                                         : QLatin1String("weight (raw)")));
    }

    // Hidden keys are named in ranges, hidden first: hiding keys 0 … 1022 of n = 1024 does not
    // enumerate 1 023 numbers behind "Shown:".
    void hiddenKeysNoteUsesRanges_data()
    {
        QTest::addColumn<QList<int>>("values");
        QTest::addColumn<QString>("text");
        QList<int> most;
        for (int j = 0; j < 1023; ++j)
            most << j;
        QTest::newRow("empty") << QList<int> {} << QString();
        QTest::newRow("one") << QList<int> {5} << QStringLiteral("5");
        QTest::newRow("two adjacent stay two") << QList<int> {3, 4} << QStringLiteral("3, 4");
        QTest::newRow("unsorted, repeated, ranges")
            << QList<int> {9, 0, 1, 2, 2, 7, 8, 12} << QStringLiteral("0\u20132, 7\u20139, 12");
        QTest::newRow("0-1022") << most << QStringLiteral("0\u20131022");
    }
    void hiddenKeysNoteUsesRanges()
    {
        QFETCH(QList<int>, values);
        QFETCH(QString, text);
        QCOMPARE(rangesText(values), text);
    }
    void hiddenKeysNoteOnLongSequence()
    {
        auto r
            = makeResult(1, 4, 1024, [](int, int, int j) { return j == 1023 ? 0.5 : 0.5 / 1023; });
        ViewTransform t;
        for (int j = 0; j < 1023; ++j)
            t.hiddenKeys << j;
        t.renormalize = true;
        const auto shown = applyViewTransform(r, t);
        QVERIFY(shown->ok());
        QVERIFY2(shown->viewNote.startsWith(
                     QStringLiteral("hidden: 0\u20131022 \u00b7 shown: 1023 \u00b7 weights "
                                    "renormalised")),
                 qPrintable(shown->viewNote));
        QVERIFY(shown->viewNote.size() < 100);
    }

    // From HeatmapWidget::asyncTransformCells on, the transform runs on a worker thread: the
    // previous picture stays until the newest transform is ready.
    void longSequenceTransformIsAsynchronous()
    {
        const int n = 2048, padding = 48;
        MatrixB state = MatrixB::Zero(n, n);
        state.rightCols(padding).setConstant(MaskPadding);
        auto r = makeResult(
            1, n, n, [](int, int, int j) { return j < 2000 ? 1.0 / 2000 : 0.0; }, state);
        r->params.mask = MaskChoice::KeyPadding;
        r->params.paddingCount = padding;
        QVERIFY(qint64(n) * n >= HeatmapWidget::asyncTransformCells);
        HeatmapWidget widget;
        widget.setResult(r);
        QSignalSpy shownSpy(&widget, &HeatmapWidget::shownResultChanged);
        QSignalSpy busy(&widget, &HeatmapWidget::transformingChanged);
        ViewTransform trim;
        trim.trimPadding = true;
        widget.setViewTransform(trim);
        ViewTransform trimAndHide = trim;
        trimAndHide.hiddenKeys = {0};
        widget.setViewTransform(trimAndHide); // supersedes the first
        QVERIFY(widget.isTransforming());
        QCOMPARE(widget.result(), std::shared_ptr<const SessionResult>(r)); // still the old one
        QTRY_VERIFY_WITH_TIMEOUT(!widget.isTransforming(), 60000);
        QCOMPARE(shownSpy.count(), 1); // only the newest was shown
        QCOMPARE(busy.count(), 2);
        QCOMPARE(widget.result()->queryCount(), Index(n - padding));
        QCOMPARE(widget.result()->keyCount(), Index(n - padding - 1));
        QVERIFY(widget.result()->renormalized);
        QVERIFY(std::abs(widget.result()->weights[0].row(7).sum() - 1.0) < 1e-12);
    }

    void hideEveryKeyIsAnError()
    {
        SessionParameters p;
        p.n = 3;
        p.dModel = 4;
        p.heads = 1;
        ViewTransform t;
        t.hiddenKeys = {0, 1, 2};
        const auto shown = applyViewTransform(compute(p), t);
        QVERIFY(!shown->ok());
        QVERIFY(shown->error.contains(QLatin1String("every key")));
    }

    void parseKeyList_data()
    {
        QTest::addColumn<QString>("text");
        QTest::addColumn<bool>("ok");
        QTest::addColumn<QList<int>>("keys");
        QTest::newRow("empty") << QString() << true << QList<int>();
        QTest::newRow("one") << QStringLiteral("0") << true << QList<int> {0};
        QTest::newRow("comma list unsorted")
            << QStringLiteral("3, 0,3") << true << QList<int> {0, 3};
        QTest::newRow("spaces") << QStringLiteral(" 1 2 ") << true << QList<int> {1, 2};
        QTest::newRow("range") << QStringLiteral("5-7") << true << QList<int> {5, 6, 7};
        QTest::newRow("spaced range and dash")
            << QStringLiteral("0, 5 – 6") << true << QList<int> {0, 5, 6};
        QTest::newRow("negative") << QStringLiteral("-1") << false << QList<int>();
        QTest::newRow("reversed range") << QStringLiteral("7-5") << false << QList<int>();
        QTest::newRow("garbage") << QStringLiteral("bos") << false << QList<int>();
    }
    void parseKeyList()
    {
        QFETCH(QString, text);
        QFETCH(bool, ok);
        QFETCH(QList<int>, keys);
        QList<int> got;
        QString error;
        QCOMPARE(attn::parseKeyList(text, &got, &error), ok);
        if (ok)
            QCOMPARE(got, keys);
        else
            QVERIFY(!error.isEmpty());
    }

    // ---- pooling, hover, zoom ----

    // w(i, j) = (8i + j)/64 on 8 × 8, pooled into 2 × 2 pixels of 4 × 4 cells: block (by, bx)
    // has max (8(4by+3) + 4bx+3)/64 and mean (8(4by+1.5) + 4bx+1.5)/64.
    void pooledImageValues_data()
    {
        QTest::addColumn<int>("pooling");
        QTest::newRow("max") << int(HeatmapPooling::Max);
        QTest::newRow("mean") << int(HeatmapPooling::Mean);
    }
    void pooledImageValues()
    {
        QFETCH(int, pooling);
        HeatmapRenderer renderer;
        renderer.setResult(
            makeResult(1, 8, 8, [](int, int i, int j) { return (8 * i + j) / 64.0; }));
        HeatmapOptions o;
        o.pooling = HeatmapPooling(pooling);
        o.autoRange = true; // [0, 63/64]
        renderer.setOptions(o);
        const QImage image = renderer.tileImage(0, QSize(2, 2));
        QCOMPARE(image.size(), QSize(2, 2));
        const Colormap cmap(ColormapId::Viridis);
        const ColorNorm norm = renderer.norm();
        QCOMPARE(norm.vmax, 63.0 / 64.0);
        for (int by = 0; by < 2; ++by)
            for (int bx = 0; bx < 2; ++bx) {
                const double off = pooling == int(HeatmapPooling::Max) ? 3.0 : 1.5;
                const double v = (8 * (4 * by + off) + 4 * bx + off) / 64.0;
                QCOMPARE(QRgb(image.pixel(bx, by)), cmap.map(norm(v)));
            }
        // A zoom window pools only its cells: rows 4…7, keys 0…3 at one pixel → block (1, 0).
        o.window = QRect(0, 4, 4, 4);
        renderer.setOptions(o);
        const QImage one = renderer.tileImage(0, QSize(1, 1));
        QCOMPARE(one.size(), QSize(1, 1));
        const double off = pooling == int(HeatmapPooling::Max) ? 3.0 : 1.5;
        QCOMPARE(QRgb(one.pixel(0, 0)), cmap.map(norm((8 * (4 + off) + off) / 64.0)));
    }

    // Long sequences are drawn from an image pooled to the device pixels; hovering still reports
    // the exact cell and its exact value, whole matrix or zoomed.
    void hoverOnPooledImage_data()
    {
        QTest::addColumn<QRect>("window");
        QTest::newRow("whole 1536 x 1536") << QRect();
        QTest::newRow("zoomed 300 x 300 at (1000, 700)") << QRect(1000, 700, 300, 300);
    }
    void hoverOnPooledImage()
    {
        QFETCH(QRect, window);
        constexpr int n = 1536;
        HeatmapRenderer renderer;
        renderer.setResult(
            makeResult(1, n, n, [](int, int i, int j) { return (double(i) * n + j) / (n * n); }));
        HeatmapOptions o;
        o.view = HeatmapView::SingleHead;
        o.window = window;
        renderer.setOptions(o);
        const QRectF bounds(0, 0, 700, 560);
        const HeatmapLayout lay = renderer.layout(bounds);
        const QRect cells = window.isEmpty() ? QRect(0, 0, n, n) : window;
        QCOMPARE(lay.cells, cells);
        QVERIFY(lay.cellSize < 1.0 || !window.isEmpty());
        const QImage image = renderer.render(bounds.size().toSize());
        QVERIFY(!image.isNull());
        if (window.isEmpty()) // pooled: fewer pixels than cells
            QVERIFY(renderer.tileImage(0, lay.tiles[0].map.size().toSize()).width() < n);
        const QRectF map = lay.tiles[0].map;
        for (int k = 0; k < 40; ++k) {
            const int i = cells.top() + (k * 997) % cells.height();
            const int j = cells.left() + (k * 613 + 17) % cells.width();
            const QPointF at(map.left() + (j - cells.left() + 0.5) * lay.cellSize,
                             map.top() + (i - cells.top() + 0.5) * lay.cellSize);
            const HeatmapHit hit = renderer.cellAt(bounds, at);
            QVERIFY(hit.valid());
            QCOMPARE(hit.row, i);
            QCOMPARE(hit.col, j);
            QVERIFY(renderer.cellRect(bounds, hit).contains(at));
            const QString value = QString::number((double(i) * n + j) / (n * n), 'g', 6);
            QVERIFY2(renderer.describeCell(hit).contains(QStringLiteral("weight ") + value),
                     qPrintable(renderer.describeCell(hit)));
        }
    }

    void zoomAndPan()
    {
        HeatmapWidget widget;
        widget.resize(900, 700);
        widget.setResult(makeResult(1, 64, 64, [](int, int i, int j) { return (i + j) / 128.0; }));
        widget.showSingleHead(0);
        QCOMPARE(widget.visibleCells(), QRect(0, 0, 64, 64));
        QVERIFY(!widget.isZoomed());
        QSignalSpy changed(&widget, &HeatmapWidget::visibleCellsChanged);

        // Zoom ×2 around cell (10, 20): that cell stays under the pointer.
        const HeatmapLayout lay = widget.renderer().layout(widget.heatmapBounds());
        const QPointF anchor(lay.tiles[0].map.left() + 20.5 * lay.cellSize,
                             lay.tiles[0].map.top() + 10.5 * lay.cellSize);
        widget.zoomBy(2.0, anchor);
        QCOMPARE(widget.visibleCells().size(), QSize(32, 32));
        QVERIFY(widget.isZoomed());
        QCOMPARE(changed.count(), 1);
        const HeatmapHit under = widget.cellAt(anchor);
        QCOMPARE(under.row, 10);
        QCOMPARE(under.col, 20);

        // Pan by cells, clamped to the matrix.
        const QRect before = widget.visibleCells();
        widget.panBy(3, -2);
        QCOMPARE(widget.visibleCells(), before.translated(-2, 3));
        widget.panBy(1000, 1000);
        QCOMPARE(widget.visibleCells(), QRect(32, 32, 32, 32));

        // Keyboard: + zooms in, − out, arrows pan, 0 shows every cell.
        QTest::keyClick(&widget, Qt::Key_Plus);
        QCOMPARE(widget.visibleCells().width(), 26); // 32 / 1.25, rounded
        const int left = widget.visibleCells().left();
        QTest::keyClick(&widget, Qt::Key_Left); // an eighth of the window
        QCOMPARE(widget.visibleCells().left(), left - 26 / 8);
        QTest::keyClick(&widget, Qt::Key_Minus);
        QCOMPARE(widget.visibleCells().width(), 33);
        QTest::keyClick(&widget, Qt::Key_0);
        QCOMPARE(widget.visibleCells(), QRect(0, 0, 64, 64));
        QVERIFY(!widget.isZoomed());

        // Never fewer than 4 cells per side.
        widget.zoomBy(1000.0);
        QCOMPARE(widget.visibleCells().size(), QSize(4, 4));
        widget.resetZoom();

        // The wheel zooms around the pointer.
        const HeatmapLayout lay2 = widget.renderer().layout(widget.heatmapBounds());
        const QPointF at(lay2.tiles[0].map.left() + 40.5 * lay2.cellSize,
                         lay2.tiles[0].map.top() + 50.5 * lay2.cellSize);
        QWheelEvent wheel(at, widget.mapToGlobal(at), QPoint(), QPoint(0, 240), Qt::NoButton,
                          Qt::NoModifier, Qt::NoScrollPhase, false);
        QApplication::sendEvent(&widget, &wheel);
        QCOMPARE(widget.visibleCells().width(), 41); // 64 / 1.25²
        QCOMPARE(widget.cellAt(at).row, 50);
        QCOMPARE(widget.cellAt(at).col, 40);

        // Dragging pans by the cells moved over.
        const QRect w0 = widget.visibleCells();
        const qreal cell = widget.renderer().layout(widget.heatmapBounds()).cellSize;
        const QPoint start = at.toPoint();
        QTest::mousePress(&widget, Qt::LeftButton, Qt::NoModifier, start);
        QMouseEvent move(QEvent::MouseMove, QPointF(start) + QPointF(5 * cell, 0),
                         widget.mapToGlobal(QPointF(start) + QPointF(5 * cell, 0)), Qt::NoButton,
                         Qt::LeftButton, Qt::NoModifier);
        QApplication::sendEvent(&widget, &move);
        QTest::mouseRelease(&widget, Qt::LeftButton, Qt::NoModifier,
                            (QPointF(start) + QPointF(5 * cell, 0)).toPoint());
        QCOMPARE(widget.visibleCells(), w0.translated(-5, 0));

        // A result of another shape shows every cell again.
        widget.setResult(makeResult(1, 10, 10, [](int, int, int) { return 0.1; }));
        QCOMPARE(widget.visibleCells(), QRect(0, 0, 10, 10));
    }

    // The row strip: the hovered row's keys around the hovered one, coloured like the heatmap,
    // with tokens and values.
    void rowStrip()
    {
        auto r = makeResult(2, 40, 40, [](int h, int i, int j) { return (h + i + j) % 7 / 7.0; });
        for (int k = 0; k < 40; ++k)
            r->params.tokens.push_back(QStringLiteral("t%1").arg(k).toStdString());
        HeatmapRenderer renderer;
        renderer.setResult(r);
        HeatmapOptions o;
        o.fontPixelSize = 12;
        renderer.setOptions(o);
        const QRectF bounds(0, 0, 900, 44);
        const HeatmapHit hit {1, 1, false, 5, 30};
        const HeatmapRenderer::RowStrip strip = renderer.rowStrip(bounds, hit);
        QVERIFY(strip.cells.size() >= 5);
        QVERIFY(strip.cells.size() < 40); // only what fits
        QVERIFY(strip.title.contains(QLatin1String("head 1")));
        QVERIFY(strip.title.contains(QStringLiteral("query 5 \u201ct5\u201d")));
        int hovered = 0;
        const Colormap cmap(ColormapId::Viridis);
        for (const HeatmapRenderer::StripCell &c : strip.cells) {
            QVERIFY(bounds.contains(c.box));
            const double w = r->weights[1](5, c.key);
            QCOMPARE(c.color, cmap.map(renderer.norm()(w)));
            QCOMPARE(c.value, QString::number(w, 'f', 3));
            QCOMPARE(c.label, QStringLiteral("t%1").arg(c.key));
            hovered += c.hovered ? 1 : 0;
            if (c.hovered)
                QCOMPARE(c.key, 30);
        }
        QCOMPARE(hovered, 1);
        // The painted strip shows the colours.
        QImage image(900, 44, QImage::Format_RGB32);
        image.fill(Qt::white);
        QPainter painter(&image);
        renderer.paintRowStrip(&painter, bounds, hit);
        painter.end();
        const HeatmapRenderer::StripCell &c = strip.cells.first();
        QCOMPARE(QRgb(image.pixel(c.box.left() + 2, c.box.top() + 2)) | 0xff000000u, c.color);
    }

    void computingBanner()
    {
        // A computation that takes longer than half a second gets a banner saying the heatmaps
        // still show the previous parameters; a quick one never flashes it.
        HeatmapWidget w;
        w.resize(400, 300);
        w.setResult(makeResult(1, 4, 4, [](int, int, int) { return 0.25; }));
        const QImage before = w.grab().toImage();
        w.setComputing(true);
        w.setComputing(false); // a quick computation
        QTest::qWait(700);
        QVERIFY(!w.isComputingBannerShown());
        w.setComputing(true);
        QVERIFY(!w.isComputingBannerShown()); // not at once
        QTRY_VERIFY_WITH_TIMEOUT(w.isComputingBannerShown(), 3000);
        const QImage during = w.grab().toImage();
        QVERIFY(during != before); // the banner is painted
        w.setComputing(false);
        QVERIFY(!w.isComputingBannerShown());
        QCOMPARE(w.grab().toImage(), before);
    }

    void bannersTakeTheirOwnSpace()
    {
        // A notice ("Not computed for …") or the computing banner pushes the heatmaps down
        // instead of covering the caption and the first tiles' titles; the widget shows one
        // banner at a time, the newer one, and the heatmaps get the space back without it.
        HeatmapWidget w;
        w.resize(500, 400);
        w.setResult(makeResult(4, 6, 6, [](int h, int i, int j) { return (h + i + j) % 5 / 5.0; }));
        const QRectF free = w.heatmapBounds();
        QCOMPARE(free.top(), 0.0);
        w.setNotice(QStringLiteral("Not computed for n = 4096: the heatmaps and Steps show the "
                                   "previous parameters, n = 8.\nNot computed: over budget"),
                    QStringLiteral("Not computed: over budget"));
        (void)w.grab(); // paints the banner
        const QRectF banner = w.bannerRect();
        QVERIFY(!banner.isEmpty());
        QCOMPARE(banner.top(), 0.0);
        QCOMPARE(banner.width(), qreal(w.width()));
        const QRectF bounds = w.heatmapBounds();
        QVERIFY2(bounds.top() >= banner.bottom(), qPrintable(QString::number(bounds.top())));
        const HeatmapLayout lay = w.renderer().layout(bounds);
        QVERIFY(!lay.tiles.isEmpty());
        QVERIFY(lay.caption.top() >= banner.bottom());
        for (const HeatmapLayout::Tile &tile : lay.tiles)
            QVERIFY2(!tile.frame.intersects(banner), qPrintable(tile.title));

        // The computing banner replaces the stale refusal (not beside it) …
        w.setComputing(true);
        QTRY_VERIFY_WITH_TIMEOUT(w.isComputingBannerShown(), 3000);
        QVERIFY2(w.noticeText().isEmpty(), qPrintable(w.noticeText()));
        QVERIFY(w.heatmapBounds().top() >= w.bannerRect().bottom());
        QVERIFY(w.bannerRect().height() < banner.height()); // one line, not two banners
        // … and a newer refusal replaces the computing banner.
        w.setNotice(QStringLiteral("Not computed: d_model must split into h heads"));
        QVERIFY(!w.isComputingBannerShown());
        w.setComputing(false);
        w.setNotice(QString());
        QVERIFY(w.bannerRect().isEmpty());
        QCOMPARE(w.heatmapBounds(), free);
    }

    // ---- exports ----

    void svgHasOneTilePerHead_data()
    {
        QTest::addColumn<int>("heads");
        QTest::addColumn<int>("view");
        QTest::addColumn<int>("tiles");
        QTest::newRow("grid h=1") << 1 << int(HeatmapView::Grid) << 1;
        QTest::newRow("grid h=2: heads and the mean") << 2 << int(HeatmapView::Grid) << 3;
        QTest::newRow("grid h=4") << 4 << int(HeatmapView::Grid) << 5;
        QTest::newRow("single head") << 4 << int(HeatmapView::SingleHead) << 1;
    }
    void svgHasOneTilePerHead()
    {
        QFETCH(int, heads);
        QFETCH(int, view);
        QFETCH(int, tiles);
        SessionParameters p;
        p.n = 6;
        p.dModel = 8 * heads;
        p.heads = heads;
        p.setTokens(attn::splitTokens(QStringLiteral("the cat sat on the mat")));
        HeatmapRenderer renderer;
        renderer.setResult(compute(p));
        HeatmapOptions o;
        o.view = HeatmapView(view);
        o.head = 1 % heads;
        o.colormap = ColormapId::Magma;
        renderer.setOptions(o);
        QTemporaryDir dir;
        const QString path = dir.filePath(QStringLiteral("v.svg"));
        QString error;
        QVERIFY2(renderer.saveSvg(path, QSize(1000, 700), &error), qPrintable(error));
        QFile f(path);
        QVERIFY(f.open(QIODevice::ReadOnly));
        const QByteArray bytes = f.readAll();
        const QStringList texts = svgTexts(bytes, &error);
        QVERIFY2(error.isEmpty(), qPrintable(error));
        int titles = 0;
        for (const QString &t : texts)
            titles += t.startsWith(QLatin1String("head ")) || t == QLatin1String("mean over heads");
        QCOMPARE(titles, tiles);
        QVERIFY(texts.contains(QStringLiteral("magma, linear")));
        QCOMPARE(texts.count(QStringLiteral("query i (row)")), tiles);
        QCOMPARE(texts.count(QStringLiteral("key j (column)")), tiles);
        QVERIFY(texts.contains(QStringLiteral("5:mat"))); // token labels, with their positions
        const QString all = texts.join(QLatin1Char(' '));
        QVERIFY(all.contains(QLatin1String("n=6, d_model=")));
        QVERIFY(all.contains(QLatin1String("seed=0")));
        QVERIFY(all.contains(QLatin1String("colour: magma, linear, fixed [0, 1]")));
        QVERIFY(QSvgRenderer(bytes).isValid());
    }

    void pdfHasAPage()
    {
        SessionParameters p;
        HeatmapRenderer renderer;
        renderer.setResult(compute(p));
        QTemporaryDir dir;
        const QString path = dir.filePath(QStringLiteral("v.pdf"));
        QString error;
        QVERIFY2(renderer.savePdf(path, QSize(800, 500), &error), qPrintable(error));
        QFile f(path);
        QVERIFY(f.open(QIODevice::ReadOnly));
        const QByteArray bytes = f.readAll();
        QVERIFY(bytes.startsWith("%PDF-"));
        // One page object ("/Type /Page", not "/Type /Pages").
        const QRegularExpression page(QStringLiteral("/Type\\s*/Page(?!s)"));
        int pages = 0;
        for (auto it = page.globalMatch(QString::fromLatin1(bytes)); it.hasNext(); it.next())
            ++pages;
        QCOMPARE(pages, 1);
        QVERIFY(bytes.contains("/MediaBox"));
    }

    void pngAtDpi_data()
    {
        QTest::addColumn<QSize>("pixels");
        QTest::addColumn<double>("dpi");
        QTest::newRow("screen 96") << QSize(900, 600) << 96.0;
        QTest::newRow("print 300") << QSize(1800, 1200) << 300.0;
        QTest::newRow("odd 150") << QSize(1001, 777) << 150.0;
    }
    void pngAtDpi()
    {
        QFETCH(QSize, pixels);
        QFETCH(double, dpi);
        HeatmapRenderer renderer;
        renderer.setResult(compute(SessionParameters()));
        QTemporaryDir dir;
        const QString path = dir.filePath(QStringLiteral("v.png"));
        QString error;
        QVERIFY2(renderer.savePngAtDpi(path, pixels, dpi, &error), qPrintable(error));
        QImageReader reader(path);
        QCOMPARE(reader.format(), QByteArray("png"));
        const QImage image = reader.read();
        QCOMPARE(image.size(), pixels);
        QCOMPARE(image.dotsPerMeterX(), qRound(dpi / 0.0254));
        // At 96 dpi one pixel is one logical pixel: the PNG is the on-screen picture.
        if (dpi == 96.0)
            QCOMPARE(image.convertToFormat(QImage::Format_RGB32),
                     renderer.render(pixels).convertToFormat(QImage::Format_RGB32));
        QVERIFY(!renderer.savePngAtDpi(path, pixels, 10.0, &error));
        QVERIFY(error.contains(QLatin1String("dpi")));
    }

    // One file per head, plus the mean when h > 1 (the grid's tiles).
    void batchExport_data()
    {
        QTest::addColumn<int>("heads");
        QTest::addColumn<QString>("format");
        QTest::addColumn<QStringList>("files");
        QTest::newRow("h=1 png") << 1 << "png" << QStringList {"head-0.png"};
        QTest::newRow("h=4 png") << 4 << "png"
                                 << QStringList {"head-0.png", "head-1.png", "head-2.png",
                                                 "head-3.png", "head-mean.png"};
        QTest::newRow("h=2 svg") << 2 << "svg"
                                 << QStringList {"head-0.svg", "head-1.svg", "head-mean.svg"};
        QTest::newRow("h=3 pdf") << 3 << "pdf"
                                 << QStringList {"head-0.pdf", "head-1.pdf", "head-2.pdf",
                                                 "head-mean.pdf"};
    }
    void batchExport()
    {
        QFETCH(int, heads);
        QFETCH(QString, format);
        QFETCH(QStringList, files);
        SessionParameters p;
        p.dModel = 4 * heads;
        p.heads = heads;
        HeatmapRenderer renderer;
        renderer.setResult(compute(p));
        HeatmapOptions o;
        o.colormap = ColormapId::Cividis;
        renderer.setOptions(o);
        QTemporaryDir dir;
        const QString folder = dir.filePath(QStringLiteral("heads/new"));
        QStringList written;
        QString error;
        QVERIFY2(exportEachHead(renderer, folder, QStringLiteral("head"), format, QSize(600, 500),
                                144, &written, &error),
                 qPrintable(error));
        QCOMPARE(written.size(), heads + (heads > 1 ? 1 : 0));
        QStringList names = QDir(folder).entryList(QDir::Files, QDir::Name);
        QStringList want = files;
        want.sort();
        QCOMPARE(names, want);
        if (format == QLatin1String("svg")) { // each file is one tile: that head's
            QFile f(QDir(folder).filePath(QStringLiteral("head-1.svg")));
            QVERIFY(f.open(QIODevice::ReadOnly));
            const QStringList texts = svgTexts(f.readAll(), &error);
            QVERIFY(texts.contains(QStringLiteral("head 1")));
            QVERIFY(!texts.contains(QStringLiteral("head 0")));
            QVERIFY(texts.contains(QStringLiteral("cividis, linear")));
        }
        if (format == QLatin1String("png"))
            QCOMPARE(QImage(QDir(folder).filePath(files.first())).size(), QSize(600, 500));
        QVERIFY(!exportEachHead(renderer, folder, QStringLiteral("head"), QStringLiteral("bmp"),
                                QSize(600, 500), 96, nullptr, &error));
    }

    // ---- data export ----

    void dataExportRoundTrip_data()
    {
        QTest::addColumn<bool>("transformed");
        QTest::newRow("as computed") << false;
        QTest::newRow("padding trimmed, key 0 hidden and renormalised") << true;
    }
    void dataExportRoundTrip()
    {
        QFETCH(bool, transformed);
        SessionParameters p;
        p.n = 6;
        p.dModel = 12;
        p.heads = 3;
        p.seed = 9;
        p.mask = MaskChoice::KeyPadding;
        p.paddingCount = 2;
        p.setTokens(attn::splitTokens(QStringLiteral("Hello, \"world\" ok")));
        QCOMPARE(int(p.tokens.size()), 6);
        std::shared_ptr<const SessionResult> r = compute(p);
        if (transformed) {
            ViewTransform t;
            t.trimPadding = true;
            t.hiddenKeys = {0};
            r = applyViewTransform(r, t);
        }
        QVERIFY(r->ok());
        const int h = r->headCount();
        const Index nQ = r->queryCount(), nK = r->keyCount();
        QTemporaryDir dir;
        QStringList written;
        QString error;

        // NPZ: every array; NPY: one file each, read back with readNpy.
        const QString npz = dir.filePath(QStringLiteral("run.npz"));
        QVERIFY2(exportData(*r, npz, &written, &error), qPrintable(error));
        QCOMPARE(written, QStringList {npz});
        const NpyArray weights = readNpzMember(npz.toStdString(), "weights");
        QCOMPARE(weights.shape, (std::vector<std::int64_t> {h, nQ, nK}));
        for (int k = 0; k < h; ++k)
            ATTN_COMPARE_CLOSE(weights.slice<double>(k, "weights"), r->weights[std::size_t(k)], 0.0,
                               0.0);
        written.clear();
        const QString npy = dir.filePath(QStringLiteral("run.npy"));
        QVERIFY2(exportData(*r, npy, &written, &error), qPrintable(error));
        QVERIFY(written.contains(dir.filePath(QStringLiteral("run_weights.npy"))));
        QCOMPARE(written.size(), 13);
        const NpyArray scores
            = readNpy(dir.filePath(QStringLiteral("run_scores.npy")).toStdString());
        for (int k = 0; k < h; ++k)
            ATTN_COMPARE_CLOSE(scores.slice<double>(k, "scores"), r->scores[std::size_t(k)], 0.0,
                               0.0);
        const NpyArray scaled
            = readNpy(dir.filePath(QStringLiteral("run_scaled_scores.npy")).toStdString());
        ATTN_COMPARE_CLOSE(scaled.slice<double>(0, "scaled"), r->scaledScores[0], 0.0, 0.0);
        const NpyArray mean
            = readNpy(dir.filePath(QStringLiteral("run_weights_mean.npy")).toStdString());
        ATTN_COMPARE_CLOSE(mean.toMatrix<double>("mean"), r->weightsMean, 0.0, 0.0);
        const NpyArray entropy
            = readNpy(dir.filePath(QStringLiteral("run_entropy.npy")).toStdString());
        QCOMPARE(entropy.shape, (std::vector<std::int64_t> {h, nQ}));
        for (int k = 0; k < h; ++k)
            for (Index i = 0; i < nQ; ++i)
                QCOMPARE(entropy.values[std::size_t(k * nQ + i)],
                         r->metrics[std::size_t(k)].entropy(i));
        const NpyArray keyIndex
            = readNpy(dir.filePath(QStringLiteral("run_key_index.npy")).toStdString());
        QCOMPARE(keyIndex.type, NpyType::Int64);
        for (Index j = 0; j < nK; ++j)
            QCOMPARE(int(keyIndex.values[std::size_t(j)]), r->originalKey(int(j)));
        const NpyArray mask
            = readNpy(dir.filePath(QStringLiteral("run_mask_state.npy")).toStdString());
        QCOMPARE(mask.type, NpyType::UInt8);
        QCOMPARE(mask.values.back(), double(r->maskState(nQ - 1, nK - 1)));

        // JSON: exact doubles, −inf as null, labels and the view note.
        const QString json = dir.filePath(QStringLiteral("run.json"));
        QVERIFY2(exportData(*r, json, nullptr, &error), qPrintable(error));
        const QJsonObject o = readJson(json);
        QCOMPARE(o.value(QLatin1String("format")).toString(), QStringLiteral("attnlab-data"));
        QCOMPARE(o.value(QLatin1String("renormalized")).toBool(), transformed);
        QCOMPARE(o.value(QLatin1String("view")).toString(), r->viewNote);
        QCOMPARE(o.value(QLatin1String("parameters")).toObject(), r->params.toJson());
        // The last two keys are padding; trimmed away, no exported cell is masked.
        QCOMPARE(o.value(QLatin1String("masked_by")).toString(),
                 transformed ? QStringLiteral("none") : QStringLiteral("padding"));
        const QJsonArray heads = o.value(QLatin1String("heads")).toArray();
        QCOMPARE(heads.size(), h);
        for (int k = 0; k < h; ++k) {
            const QJsonObject head = heads.at(k).toObject();
            ATTN_COMPARE_CLOSE(jsonMatrix(head.value(QLatin1String("weights")).toArray()),
                               r->weights[std::size_t(k)], 0.0, 0.0);
            ATTN_COMPARE_CLOSE(jsonMatrix(head.value(QLatin1String("scaled_scores")).toArray()),
                               r->scaledScores[std::size_t(k)], 0.0, 0.0);
            const QJsonArray effective = head.value(QLatin1String("metrics"))
                                             .toObject()
                                             .value(QLatin1String("effective_terms"))
                                             .toArray();
            QCOMPARE(effective.size(), int(nQ));
            for (Index i = 0; i < nQ; ++i)
                QCOMPARE(effective.at(int(i)).toDouble(),
                         r->metrics[std::size_t(k)].effectiveTerms(i));
        }
        const QJsonArray keyLabels = o.value(QLatin1String("key_labels")).toArray();
        QCOMPARE(keyLabels.size(), int(nK));
        QCOMPARE(keyLabels.at(0).toString(), r->keyLabel(0));

        // CSV: one row per cell (heads, then the mean), quoted tokens; metrics file beside it.
        const QString csv = dir.filePath(QStringLiteral("run.csv"));
        written.clear();
        QVERIFY2(exportData(*r, csv, &written, &error), qPrintable(error));
        QCOMPARE(written, (QStringList {csv, dir.filePath(QStringLiteral("run_metrics.csv"))}));
        QFile f(csv);
        QVERIFY(f.open(QIODevice::ReadOnly | QIODevice::Text));
        const QStringList lines
            = QString::fromUtf8(f.readAll()).split(QLatin1Char('\n'), Qt::SkipEmptyParts);
        QCOMPARE(lines.first(),
                 QStringLiteral("head,query,key,query_label,key_label,weight,"
                                "raw_score,scaled_score,mask"));
        QCOMPARE(lines.size(), 1 + int((h + 1) * nQ * nK));
        int checked = 0;
        for (int row = 1; row < lines.size(); ++row) {
            // Split on commas outside quotes.
            QStringList fields;
            QString field;
            bool quoted = false;
            const QString &line = lines.at(row);
            for (int c = 0; c < line.size(); ++c) {
                const QChar ch = line.at(c);
                if (ch == QLatin1Char('"')) {
                    if (quoted && c + 1 < line.size() && line.at(c + 1) == QLatin1Char('"')) {
                        field += ch;
                        ++c;
                    } else {
                        quoted = !quoted;
                    }
                } else if (ch == QLatin1Char(',') && !quoted) {
                    fields << field;
                    field.clear();
                } else {
                    field += ch;
                }
            }
            fields << field;
            QCOMPARE(fields.size(), 9);
            if (fields.at(0) == QLatin1String("mean"))
                continue;
            const int k = fields.at(0).toInt();
            const int qi = fields.at(1).toInt(), kj = fields.at(2).toInt();
            // Shown position of the computation's key kj.
            int c = 0;
            while (r->originalKey(c) != kj)
                ++c;
            QCOMPARE(fields.at(3), r->params.queryLabel(qi));
            QCOMPARE(fields.at(4), r->params.keyLabel(kj));
            QCOMPARE(fields.at(5).toDouble(), r->weights[std::size_t(k)](qi, c));
            QCOMPARE(fields.at(6).toDouble(), r->scores[std::size_t(k)](qi, c));
            const double s = r->scaledScores[std::size_t(k)](qi, c);
            if (std::isinf(s))
                QCOMPARE(fields.at(7), QStringLiteral("-inf"));
            else
                QCOMPARE(fields.at(7).toDouble(), s);
            QCOMPARE(fields.at(8) == QLatin1String("allowed"), r->maskState(qi, c) == 0);
            ++checked;
        }
        QCOMPARE(checked, int(h * nQ * nK));
        QFile m(dir.filePath(QStringLiteral("run_metrics.csv")));
        QVERIFY(m.open(QIODevice::ReadOnly | QIODevice::Text));
        QCOMPARE(QString::fromUtf8(m.readLine()).trimmed(),
                 QStringLiteral("head,query,query_label,max_weight,entropy,effective_terms,"
                                "jacobian_norm,row_sum_error,fully_masked"));
        QCOMPARE(QString::fromUtf8(m.readAll()).count(QLatin1Char('\n')), int(h * nQ));
    }

    void dataExportErrors()
    {
        const auto r = compute(SessionParameters());
        QTemporaryDir dir;
        QString error;
        QVERIFY(!exportData(*r, dir.filePath(QStringLiteral("x.txt")), nullptr, &error));
        QVERIFY(error.contains(QLatin1String("unknown data format")));
        QVERIFY(
            !exportData(*r, dir.filePath(QStringLiteral("missing/dir/x.json")), nullptr, &error));
        QVERIFY(error.contains(QLatin1String("cannot write")));
        SessionResult failed;
        failed.error = QStringLiteral("bad");
        QVERIFY(!exportData(failed, dir.filePath(QStringLiteral("x.npz")), nullptr, &error));
        QVERIFY(QDir(dir.path()).entryList(QDir::Files).isEmpty());
    }

    // ---- panels ----

    void controlPanelTokens()
    {
        ControlPanel panel;
        QSignalSpy edited(&panel, &ControlPanel::parametersEdited);
        auto *edit = panel.findChild<QLineEdit *>(QStringLiteral("tokensEdit"));
        auto *nSpin = panel.findChild<QSpinBox *>(QStringLiteral("nSpin"));
        QVERIFY(edit && nSpin);
        QCOMPARE(nSpin->maximum(), 4096);
        QVERIFY(!edit->toolTip().isEmpty());
        edit->setText(QStringLiteral("The cat, sat."));
        QCOMPARE(edited.count(), 1);
        QCOMPARE(panel.parameters().tokenList(), (QStringList {"The", "cat", ",", "sat", "."}));
        QCOMPARE(panel.parameters().n, 5);
        QVERIFY(!nSpin->isEnabled());
        edit->setText(QStringLiteral("The  cat , sat . ")); // same tokens: no new edit
        QCOMPARE(edited.count(), 1);
        edit->clear();
        QCOMPARE(edited.count(), 2);
        QVERIFY(panel.parameters().tokens.empty());
        QCOMPARE(panel.parameters().n, 5); // n stays, now free again
        QVERIFY(nSpin->isEnabled());
        // Parameters from outside (an opened session) show their tokens.
        SessionParameters p;
        p.setTokens(QStringList {"a", "b", "c"});
        p.n = 3;
        panel.setParameters(p);
        QCOMPARE(edit->text(), QStringLiteral("a b c"));
        QCOMPARE(edited.count(), 2);
    }

    void viewPanelDrivesWidget()
    {
        HeatmapWidget widget;
        HeatmapViewPanel panel(&widget);
        SessionParameters p;
        p.mask = MaskChoice::KeyPadding;
        p.paddingCount = 2;
        widget.setResult(compute(p));
        panel.colormapCombo()->setCurrentIndex(
            panel.colormapCombo()->findData(int(ColormapId::Magma)));
        QCOMPARE(widget.options().colormap, ColormapId::Magma);
        panel.scaleCombo()->setCurrentIndex(1);
        QCOMPARE(widget.options().scale, ColorScale::Log);
        panel.rangeCombo()->setCurrentIndex(1);
        QVERIFY(widget.options().autoRange);
        panel.poolingCombo()->setCurrentIndex(
            panel.poolingCombo()->findData(int(HeatmapPooling::Mean)));
        QCOMPARE(widget.options().pooling, HeatmapPooling::Mean);
        QSignalSpy shown(&widget, &HeatmapWidget::shownResultChanged);
        panel.trimPaddingCheck()->setChecked(true);
        QCOMPARE(shown.count(), 1);
        QCOMPARE(widget.result()->queryCount(), Index(6));
        QCOMPARE(widget.sessionResult()->queryCount(), Index(8));
        panel.hideKeysEdit()->setText(QStringLiteral("0"));
        QCOMPARE(widget.viewTransform().hiddenKeys, QList<int> {0});
        QVERIFY(widget.result()->renormalized);
        panel.renormalizeCheck()->setChecked(false);
        QVERIFY(!widget.result()->renormalized);
        panel.hideKeysEdit()->setText(QStringLiteral("zero")); // refused: the last valid stays
        QCOMPARE(widget.viewTransform().hiddenKeys, QList<int> {0});
        // Options set from outside (an opened session) show in the panel.
        HeatmapOptions o = widget.options();
        o.colormap = ColormapId::Cividis;
        widget.setOptions(o);
        QCOMPARE(ColormapId(panel.colormapCombo()->currentData().toInt()), ColormapId::Cividis);
    }

    void exportActionsWriteFiles()
    {
        QWidget parent;
        auto *widget = new HeatmapWidget(&parent);
        widget->resize(900, 600);
        SessionParameters p;
        p.heads = 2;
        p.dModel = 16;
        widget->setResult(compute(p));
        HeatmapOptions o = widget->options();
        o.colormap = ColormapId::Grayscale;
        widget->setOptions(o);
        widget->zoomBy(2.0);
        HeatmapActions actions(widget, &parent);
        QCOMPARE(actions.fileActions().size(), 3);
        QCOMPARE(actions.exportViewAction()->shortcut(),
                 QKeySequence(QStringLiteral("Ctrl+Shift+E")));
        QTemporaryDir dir;
        QString error;
        // The export is the view as shown (zoom window, colormap) on a white page.
        const QString svg = dir.filePath(QStringLiteral("view.svg"));
        QVERIFY2(actions.exportView(svg, QSize(900, 600), 96, &error), qPrintable(error));
        QFile f(svg);
        QVERIFY(f.open(QIODevice::ReadOnly));
        const QStringList texts = svgTexts(f.readAll(), &error);
        QVERIFY(texts.contains(QStringLiteral("gray, linear")));
        const QString png = dir.filePath(QStringLiteral("view.png"));
        QVERIFY2(actions.exportView(png, QSize(1200, 800), 192, &error), qPrintable(error));
        QCOMPARE(QImage(png).size(), QSize(1200, 800));
        QCOMPARE(QImage(png).pixel(2, 2) | 0xff000000u, qRgb(255, 255, 255));
        QStringList written;
        QVERIFY2(actions.exportHeads(dir.filePath(QStringLiteral("heads")), QStringLiteral("png"),
                                     QSize(500, 400), 96, &written, &error),
                 qPrintable(error));
        QCOMPARE(written.size(), 3);
        written.clear();
        QVERIFY2(actions.exportData(dir.filePath(QStringLiteral("d.npz")), &written, &error),
                 qPrintable(error));
        QCOMPARE(written.size(), 1);
        // Zoom actions reach the widget.
        actions.zoomResetAction()->trigger();
        QVERIFY(!widget->isZoomed());
        actions.zoomInAction()->trigger();
        QVERIFY(widget->isZoomed());
    }

    // ---- command line ----

    void cliTokensBatchAndData()
    {
        QTemporaryDir dir;
        QProcess process;
        process.setProcessChannelMode(QProcess::MergedChannels);
        const QString out = dir.filePath(QStringLiteral("t.svg"));
        const QString batch = dir.filePath(QStringLiteral("batch"));
        const QString data = dir.filePath(QStringLiteral("t.npz"));
        process.start(QStringLiteral(ATTNLAB_EXE),
                      {QStringLiteral("heatmap"), QStringLiteral("--tokens"),
                       QStringLiteral("the cat sat, on the mat"), QStringLiteral("--heads"),
                       QStringLiteral("2"), QStringLiteral("--colormap"), QStringLiteral("magma"),
                       QStringLiteral("--scale"), QStringLiteral("log"), QStringLiteral("--range"),
                       QStringLiteral("auto"), QStringLiteral("--out"), out,
                       QStringLiteral("--batch-dir"), batch, QStringLiteral("--format"),
                       QStringLiteral("svg"), QStringLiteral("--data"), data});
        QVERIFY(process.waitForFinished(60000));
        QVERIFY2(process.exitCode() == 0, process.readAll().constData());
        QFile f(out);
        QVERIFY(f.open(QIODevice::ReadOnly));
        QString error;
        const QStringList texts = svgTexts(f.readAll(), &error);
        QVERIFY(texts.contains(QStringLiteral("magma, log")));
        QVERIFY(texts.contains(QStringLiteral("3:,"))); // the comma token at position 3
        QVERIFY(texts.first().startsWith(QLatin1String("n=7,"))); // the caption: n follows
        QCOMPARE(QDir(batch).entryList(QDir::Files, QDir::Name),
                 (QStringList {"head-0.svg", "head-1.svg", "head-mean.svg"}));
        // The data equal the window's computation for the same parameters.
        SessionParameters p;
        p.setTokens(attn::splitTokens(QStringLiteral("the cat sat, on the mat")));
        p.n = int(p.tokens.size());
        p.dModel = 16;
        p.heads = 2;
        const auto r = compute(p);
        const NpyArray w = readNpzMember(data.toStdString(), "weights");
        ATTN_COMPARE_CLOSE(w.slice<double>(1, "weights"), r->weights[1], 0.0, 0.0);

        // PNG at a DPI: exactly --width × --height pixels.
        const QString png = dir.filePath(QStringLiteral("t.png"));
        process.start(QStringLiteral(ATTNLAB_EXE),
                      {QStringLiteral("heatmap"), QStringLiteral("--dpi"), QStringLiteral("300"),
                       QStringLiteral("--width"), QStringLiteral("1500"),
                       QStringLiteral("--height"), QStringLiteral("1000"), QStringLiteral("--mask"),
                       QStringLiteral("padding"), QStringLiteral("--trim-padding"),
                       QStringLiteral("--hide-keys"), QStringLiteral("0"), QStringLiteral("--out"),
                       png});
        QVERIFY(process.waitForFinished(60000));
        QVERIFY2(process.exitCode() == 0, process.readAll().constData());
        const QImage image(png);
        QCOMPARE(image.size(), QSize(1500, 1000));
        QCOMPARE(image.dotsPerMeterX(), qRound(300 / 0.0254));
    }

    void cliBadArguments_data()
    {
        QTest::addColumn<QStringList>("arguments");
        QTest::addColumn<QString>("message");
        QTest::newRow("n does not match tokens")
            << QStringList {"--tokens", "a b", "--n", "3", "--out", "x.png"}
            << "does not match the 2 tokens";
        QTest::newRow("blank tokens")
            << QStringList {"--tokens", "  ", "--out", "x.png"} << "no tokens";
        QTest::newRow("no output") << QStringList {"--n", "4"} << "--out is required";
        QTest::newRow("bad data suffix") << QStringList {"--data", "x.txt"} << "--data";
        QTest::newRow("bad hide-keys")
            << QStringList {"--hide-keys", "bos", "--out", "x.png"} << "--hide-keys";
        QTest::newRow("bad pooling")
            << QStringList {"--pooling", "median", "--out", "x.png"} << "--pooling";
        QTest::newRow("bad dpi") << QStringList {"--dpi", "5", "--out", "x.png"} << "--dpi";
        QTest::newRow("steps view with batch")
            << QStringList {"--view", "steps", "--out", "x.png", "--batch-dir", "d"}
            << "--batch-dir and --data go with --view grid or head";
        // Options that would be ignored are refused, naming what they need.
        QTest::newRow("option without its value") << QStringList {"--n", "--out", "x.png"}
                                                  << "--n needs a value: '--out' is the next "
                                                     "option";
        QTest::newRow("padding without the padding mask")
            << QStringList {"--mask", "causal", "--padding", "3", "--out", "x.png"}
            << "--padding 3 has no effect without --mask padding";
        QTest::newRow("raw without hide-keys")
            << QStringList {"--raw", "--out", "x.png"} << "--raw has no effect without --hide-keys";
        QTest::newRow("compare key twice")
            << QStringList {"--view", "compare", "--compare", "alpha=0,scale=on", "--out", "x.png"}
            << "--compare: the scale (alpha) is given twice";
        QTest::newRow("compare tau twice")
            << QStringList {"--view", "compare", "--compare", "tau=2,temperature=3",
                            "--out",  "x.png"}
            << "--compare: tau is given twice";
    }
    void cliBadArguments()
    {
        QFETCH(QStringList, arguments);
        QFETCH(QString, message);
        QTemporaryDir dir;
        QProcess process;
        process.setWorkingDirectory(dir.path());
        process.setProcessChannelMode(QProcess::MergedChannels);
        process.start(QStringLiteral(ATTNLAB_EXE),
                      QStringList {QStringLiteral("heatmap")} + arguments);
        QVERIFY(process.waitForFinished(60000));
        const QString output = QString::fromUtf8(process.readAll());
        QCOMPARE(process.exitCode(), 2);
        QVERIFY2(output.contains(message), qPrintable(output));
        QVERIFY(QDir(dir.path()).entryList(QDir::Files).isEmpty());
    }
};

QTEST_MAIN(TestHeatmapFeatures)
#include "tst_heatmapfeatures.moc"
