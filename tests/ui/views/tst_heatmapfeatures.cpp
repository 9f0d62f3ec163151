// Heatmap features: colour scales (known value → matplotlib's RGB per colormap, linear
// and log, fixed and auto range) and their labels, typed tokens (splitting, per-token input
// vectors and sessions vs NumPy fixtures of tests/reference/make_token_fixtures.py, the
// permutation lesson), trimmed padding and hidden keys with renormalisation, pooled images and
// exact hover, zoom and pan, the row strip. Files, data exports, the panels and the command line
// are tested in tst_heatmapexports.cpp.

#include "heatmaptest.h"

using namespace heatmaptest;

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
        QTest::newRow("escaped space and punctuation")
            << QStringLiteral("New\\ York don\\'t \\<s\\> \\\\ end\\")
            << QStringList {"New York", "don't", "<s>", "\\", "end", "\\"};
    }
    // joinTokens gives the text that splits back into exactly the tokens, whatever they hold.
    void joinTokensRoundTrip_data()
    {
        QTest::addColumn<QStringList>("tokens");
        QTest::addColumn<QString>("text");
        QTest::newRow("plain words")
            << QStringList {"the", "cat", ",", "<s>"} << QStringLiteral("the cat , <s>");
        QTest::newRow("space") << QStringList {"New York", "is"} << QStringLiteral("New\\ York is");
        QTest::newRow("punctuation inside")
            << QStringList {"don't", "U.S."} << QStringLiteral("don\\'t U\\.S\\.");
        QTest::newRow("backslashes")
            << QStringList {"\\", "a\\", "\\b"} << QStringLiteral("\\\\ a\\\\ \\\\b");
        QTest::newRow("special token glued to a word")
            << QStringList {"x<s>", "[CLS]"} << QStringLiteral("x\\<s\\> [CLS]");
        QTest::newRow("tab and zero-width space")
            << QStringList {QStringLiteral("a\tb"), QStringLiteral("c\u200bd")}
            << QStringLiteral("a\\\tb c\\\u200bd");
        QTest::newRow("emoji pair")
            << QStringList {QStringLiteral("😀😀")} << QStringLiteral("\\😀\\😀");
    }
    void joinTokensRoundTrip()
    {
        QFETCH(QStringList, tokens);
        QFETCH(QString, text);
        QCOMPARE(attn::joinTokens(tokens), text);
        QCOMPARE(attn::splitTokens(text), tokens);
    }
    // The Tensors panel's labels: a label keeps its punctuation, a backslash keeps a space or a
    // backslash in it, and the field's text splits back into the same labels.
    void joinLabelsRoundTrip_data()
    {
        QTest::addColumn<QStringList>("labels");
        QTest::addColumn<QString>("text");
        QTest::newRow("punctuation stays")
            << QStringList {"don't", "U.S.", ".", "<s>"} << QStringLiteral("don't U.S. . <s>");
        QTest::newRow("space") << QStringList {"New York", "is"} << QStringLiteral("New\\ York is");
        QTest::newRow("backslashes") << QStringList {"\\", "a\\b"} << QStringLiteral("\\\\ a\\\\b");
        QTest::newRow("tab") << QStringList {QStringLiteral("a\tb")} << QStringLiteral("a\\\tb");
    }
    void joinLabelsRoundTrip()
    {
        QFETCH(QStringList, labels);
        QFETCH(QString, text);
        QCOMPARE(attn::joinLabels(labels), text);
        QCOMPARE(attn::splitLabels(text), labels);
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
};

QTEST_MAIN(TestHeatmapFeatures)
#include "tst_heatmapfeatures.moc"
