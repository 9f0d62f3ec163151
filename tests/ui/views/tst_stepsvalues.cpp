// Steps view values: tooltips list head, query, key, tokens, raw and scaled score, mask state,
// weight, row entropy and effective terms (computed here independently); token labels keep
// their positions; the scaled and masked scores equal raw · d_k^(−α)/τ (or −∞ when masked), and
// the RoPE and ALiBi steps equal the rotation and the bias computed here from their formulas.

#include "stepstest.h"

#include <QFontMetricsF>

using namespace stepstest;

namespace {

/// Parameters of `n` tokens, `dModel` and `heads`; the rest as SessionParameters has them.
SessionParameters sized(int n, int dModel, int heads)
{
    SessionParameters p;
    p.n = n;
    p.dModel = dModel;
    p.heads = heads;
    return p;
}

} // namespace

class TestStepsValues : public QObject
{
    Q_OBJECT

private slots:
    void tooltip_data()
    {
        QTest::addColumn<SessionParameters>("params");
        QTest::addColumn<int>("head");
        QTest::addColumn<int>("row");
        QTest::addColumn<int>("col");
        QTest::addColumn<QString>("maskText");
        QTest::addColumn<QString>("queryToken");
        QTest::addColumn<QString>("keyToken");

        SessionParameters p = sized(5, 16, 2);
        p.seed = 3;
        p.setTokens({QStringLiteral("the"), QStringLiteral("cat"), QStringLiteral("sat"),
                     QStringLiteral("on"), QStringLiteral("mat")});
        QTest::newRow("allowed cell, tokens") << p << 1 << 2 << 3 << QStringLiteral("allowed")
                                              << QStringLiteral("sat") << QStringLiteral("on");

        SessionParameters causal = p;
        causal.tokens.clear();
        causal.kind = AttentionKind::DecoderCausal;
        QTest::newRow("causal-masked cell")
            << causal << 0 << 1 << 3 << QStringLiteral("causal-masked") << QString() << QString();
        QTest::newRow("causal allowed cell")
            << causal << 1 << 3 << 1 << QStringLiteral("allowed") << QString() << QString();

        SessionParameters padding = p;
        padding.n = 6;
        padding.tokens.clear();
        padding.mask = MaskChoice::KeyPadding;
        padding.paddingCount = 2;
        QTest::newRow("padding-masked cell")
            << padding << 1 << 0 << 5 << QStringLiteral("padding-masked") << QString() << QString();

        SessionParameters both = padding;
        both.kind = AttentionKind::DecoderCausal;
        QTest::newRow("causal + padding cell")
            << both << 0 << 1 << 5 << QStringLiteral("causal + padding-masked") << QString()
            << QString();

        SessionParameters cross;
        cross.kind = AttentionKind::EncoderDecoder;
        cross.n = 3;
        cross.nK = 4;
        cross.dModel = 8;
        cross.heads = 2;
        cross.setTokens({QStringLiteral("q0"), QStringLiteral("q1"), QStringLiteral("q2"),
                         QStringLiteral("k0"), QStringLiteral("k1"), QStringLiteral("k2"),
                         QStringLiteral("k3")});
        QTest::newRow("cross-attention tokens") << cross << 1 << 2 << 3 << QStringLiteral("allowed")
                                                << QStringLiteral("q2") << QStringLiteral("k3");

        SessionParameters fully = padding;
        fully.paddingCount = fully.n; // every key is padding: every row fully masked
        QTest::newRow("fully masked row")
            << fully << 0 << 2 << 1 << QStringLiteral("padding-masked") << QString() << QString();
    }
    void tooltip()
    {
        QFETCH(SessionParameters, params);
        QFETCH(int, head);
        QFETCH(int, row);
        QFETCH(int, col);
        QFETCH(QString, maskText);
        QFETCH(QString, queryToken);
        QFETCH(QString, keyToken);

        const ResultPtr r = compute(params);
        QVERIFY2(r->ok(), qPrintable(r->error));
        StepsRenderer renderer;
        renderer.setResult(r);
        renderer.setHead(head);
        const std::size_t h = std::size_t(head);

        // Expected text, built from the result's matrices and independent row statistics.
        const double raw = r->scores[h](row, col);
        const double scale
            = std::pow(double(params.dK()), -params.scaleExponent) / params.temperature;
        const bool masked = maskText != QLatin1String("allowed");
        QStringList expected;
        expected << QStringLiteral("head %1 of %2").arg(head).arg(params.heads);
        expected << QStringLiteral("query i = %1 (row)").arg(row)
                + (queryToken.isEmpty() ? QString()
                                        : QStringLiteral(": \u201c%1\u201d").arg(queryToken));
        expected << QStringLiteral("key j = %1 (column)").arg(col)
                + (keyToken.isEmpty() ? QString()
                                      : QStringLiteral(": \u201c%1\u201d").arg(keyToken));
        expected << QStringLiteral("raw score Q K\u1d40 = ") + shown(raw);
        if (masked)
            expected << QStringLiteral(
                            "scaled score = \u2212\u221e (masked; raw \u00d7 scale would "
                            "be %1)")
                            .arg(shown(raw * r->scale));
        else
            expected << QStringLiteral("scaled score = %1 (raw \u00d7 scale %2)")
                            .arg(shown(r->scaledScores[h](row, col)), shown(r->scale));
        expected << QStringLiteral("mask: ") + maskText;
        expected << QStringLiteral("weight = ") + shown(r->weights[h](row, col));
        double sum = 0, sumSq = 0, entropy = 0;
        for (Index j = 0; j < r->keyCount(); ++j) {
            const double w = r->weights[h](row, j);
            sum += w;
            sumSq += w * w;
            if (w > 0)
                entropy -= w * std::log(w);
        }
        if (sum == 0.0)
            expected << QStringLiteral("row %1: fully masked (all weights 0)").arg(row);
        else
            expected << QStringLiteral("row %1: entropy %2 nats, effective terms %3")
                            .arg(row)
                            .arg(QString::number(entropy, 'g', 4),
                                 QString::number(1.0 / sumSq, 'g', 4));

        QCOMPARE(std::abs(r->scale - scale) <= 1e-15 * scale, true);
        QCOMPARE(renderer.describeCell({StepsRenderer::Weights, row, col}),
                 expected.join(QLatin1Char('\n')));
        // The same text from any of the three panels (they are linked).
        QCOMPARE(renderer.describeCell({StepsRenderer::RawScores, row, col}),
                 expected.join(QLatin1Char('\n')));

        // Through the widget: hovering the cell's centre in panel 1 gives the same tooltip.
        StepsView view;
        view.resize(1500, 600);
        view.setResult(r);
        view.setHead(head);
        view.show();
        QVERIFY(QTest::qWaitForWindowExposed(&view));
        FigureCanvas *canvas = view.canvas();
        const PanelFigureLayout lay = view.renderer().layout(QRectF(canvas->rect()));
        const QPointF centre = cellRect(lay, StepsRenderer::ScaledScores, row, col).center();
        QCOMPARE(canvas->toolTipAt(centre), expected.join(QLatin1Char('\n')));
    }

    // Typed tokens label the axes with their positions, as the heads grid does, so a repeated
    // word can be told apart; cross attention numbers its keys from 0 after the query tokens.
    void tokenLabelsCarryPositions()
    {
        SessionParameters p = sized(3, 8, 1);
        p.setTokens({QStringLiteral("the"), QStringLiteral("cat"), QStringLiteral("the")});
        FigureAxes axes = FigureAxes::of(*compute(p));
        const QStringList self {QStringLiteral("0:the"), QStringLiteral("1:cat"),
                                QStringLiteral("2:the")};
        QCOMPARE(axes.queries, self);
        QCOMPARE(axes.keys, self);
        SessionParameters cross = p;
        cross.kind = AttentionKind::EncoderDecoder;
        cross.n = 2;
        cross.nK = 3;
        cross.tokens = {"a", "b", "x", "y"};
        axes = FigureAxes::of(*compute(cross));
        QCOMPARE(axes.queries, (QStringList {QStringLiteral("0:a"), QStringLiteral("1:b")}));
        // Two key tokens for three keys: the third key has its position alone.
        QCOMPARE(axes.keys,
                 (QStringList {QStringLiteral("0:x"), QStringLiteral("1:y"), QStringLiteral("2")}));
    }

    // A result the heatmap view trimmed (padding) and reduced (a hidden key): axis labels and
    // tooltips name the positions of the computation, not the shown row and column numbers.
    void transformedResultKeepsOriginalPositions()
    {
        SessionParameters p = sized(6, 16, 2);
        p.mask = MaskChoice::KeyPadding;
        p.paddingCount = 2;
        ViewTransform t;
        t.trimPadding = true;
        t.hiddenKeys = {0};
        const ResultPtr shownResult = applyViewTransform(compute(p), t);
        QVERIFY2(shownResult->ok(), qPrintable(shownResult->error));
        QCOMPARE(shownResult->keyCount(), Index(3)); // keys 1, 2, 3
        const FigureAxes axes = FigureAxes::of(*shownResult);
        QCOMPARE(axes.keys,
                 (QStringList {QStringLiteral("1"), QStringLiteral("2"), QStringLiteral("3")}));
        QCOMPARE(axes.queries.size(), 4);
        StepsRenderer renderer;
        renderer.setResult(shownResult);
        const QStringList lines
            = renderer.describeCell({StepsRenderer::Weights, 2, 0}).split(QLatin1Char('\n'));
        QCOMPARE(lines.at(1), QStringLiteral("query i = 2 (row)"));
        QCOMPARE(lines.at(2), QStringLiteral("key j = 1 (column)"));
    }

    void scaledScoreEqualsScoreTimesScale_data()
    {
        QTest::addColumn<SessionParameters>("params");
        QTest::addColumn<double>("tolerance");
        SessionParameters p = sized(6, 32, 4);
        p.seed = 11;
        QTest::newRow("1/sqrt(d_k)") << p << 1e-12;
        SessionParameters unscaled = p;
        unscaled.scaleExponent = 0.0;
        QTest::newRow("unscaled") << unscaled << 1e-12;
        SessionParameters tau = p;
        tau.scaleExponent = 0.3;
        tau.temperature = 2.5;
        tau.kind = AttentionKind::DecoderCausal;
        QTest::newRow("alpha 0.3, tau 2.5, causal") << tau << 1e-12;
        SessionParameters padding = p;
        padding.mask = MaskChoice::KeyPadding;
        padding.paddingCount = 2;
        QTest::newRow("padding") << padding << 1e-12;
        SessionParameters f32 = tau;
        f32.dtype = DType::Float32;
        QTest::newRow("float32, causal") << f32 << 1e-5;
    }
    // Differential attention: the Steps show A₁ and A₂ (each on the weights' fixed [0, 1]
    // scale) before the signed A₁ − λA₂, drawn on RdBu_r centred on 0 over its largest |w|,
    // whose row-sum check is against 1 − λ.
    void differentialShowsBothSoftmaxes()
    {
        SessionParameters p;
        p.n = 7;
        p.dModel = 16;
        p.heads = 2;
        p.kind = AttentionKind::DecoderCausal;
        p.differential = true;
        p.lambda = 0.7;
        const ResultPtr r = compute(p);
        QVERIFY2(r->ok(), qPrintable(r->error));
        StepsRenderer renderer;
        renderer.setResult(r);
        renderer.setHead(1);
        QCOMPARE(renderer.panelCount(), 5);
        QCOMPARE(renderer.panelIndex(StepsRenderer::Weights), 4);
        QCOMPARE(renderer.panel(2).values, &r->firstWeights[1]);
        QCOMPARE(renderer.panel(3).values, &r->secondWeights[1]);
        const FigurePanel &signedPanel = renderer.panel(4);
        QCOMPARE(signedPanel.values, &r->weights[1]);
        QCOMPARE(signedPanel.colormap, ColormapId::RdBu);
        const double largest = r->weights[1].cwiseAbs().maxCoeff();
        QCOMPARE(signedPanel.norm.vmax, largest);
        QCOMPARE(signedPanel.norm.vmin, -largest);
        QCOMPARE(signedPanel.expectedRowSum, 1.0 - 0.7);
        QVERIFY2(
            signedPanel.statistics.last().startsWith(QStringLiteral("worst |row sum \u2212 0.3|")),
            qPrintable(signedPanel.statistics.last()));
    }

    // The head-wise gate: the weights panel shows σ(g_i)·W and gives the mean row sum, the
    // mean gate, in place of a row-sum "error".
    void gateShowsTheMeanGate()
    {
        SessionParameters p;
        p.n = 6;
        p.dModel = 8;
        p.heads = 2;
        p.outputGate = true;
        p.gateBias = -0.5;
        const ResultPtr r = compute(p);
        QVERIFY2(r->ok(), qPrintable(r->error));
        StepsRenderer renderer;
        renderer.setResult(r);
        renderer.setHead(1);
        const FigurePanel &weights = renderer.panel(renderer.panelIndex(StepsRenderer::Weights));
        QCOMPARE(weights.values, &r->weights[1]);
        QVERIFY(weights.title.contains(QStringLiteral("gated")));
        const double meanGate = r->gate[1].mean();
        QVERIFY(std::abs(r->meanRowSum[1] - meanGate) <= 1e-12);
        QCOMPARE(weights.statistics.last(),
                 QStringLiteral("mean row sum %1 (the mean gate)")
                     .arg(QString::number(r->meanRowSum[1], 'g', 4)));
    }

    // The gate's title puts σ(gᵢ) in front of what it scales and is no wider than the ungated
    // differential title, which a 1280 × 800 window shows whole (the gated one was cut there).
    void gatedTitlesAreNoWiderThanTheUngated()
    {
        SessionParameters p;
        p.n = 6;
        p.dModel = 8;
        p.heads = 2;
        p.differential = true;
        p.lambda = 0.5;
        const auto title = [](const SessionParameters &params) {
            const ResultPtr r = compute(params);
            StepsRenderer renderer;
            renderer.setResult(r);
            renderer.setHead(0);
            return renderer.panel(renderer.panelIndex(StepsRenderer::Weights)).title;
        };
        const QString ungated = title(p);
        p.outputGate = true;
        const QString gated = title(p);
        QCOMPARE(gated,
                 QStringLiteral("5 \u00b7 \u03c3(g\u1d62)\u00b7(A\u2081 \u2212 "
                                "\u03bbA\u2082), \u03bb = 0.5 (signed, gated)"));
        p.differential = false;
        const QString gatedPlain = title(p);
        QCOMPARE(gatedPlain,
                 QStringLiteral("3 \u00b7 gated weights \u03c3(g\u1d62)\u00b7softmax(row)"));
        p.learnedSink = true;
        p.sinkLogit = 1.0;
        const QString gatedSink = title(p);
        QCOMPARE(gatedSink,
                 QStringLiteral("3 \u00b7 \u03c3(g\u1d62)\u00b7W, learned sink b = 1 (gated)"));
        const QFontMetricsF bold(figure::makeFont(13, true));
        for (const QString &t : {gated, gatedPlain, gatedSink})
            QVERIFY2(bold.horizontalAdvance(t) <= bold.horizontalAdvance(ungated),
                     qPrintable(t + QStringLiteral(" is wider than ") + ungated));
    }

    void scaledScoreEqualsScoreTimesScale()
    {
        QFETCH(SessionParameters, params);
        QFETCH(double, tolerance);
        const ResultPtr r = compute(params);
        QVERIFY2(r->ok(), qPrintable(r->error));
        const double scale
            = std::pow(double(params.dK()), -params.scaleExponent) / params.temperature;
        for (int head = 0; head < params.heads; ++head) {
            StepsRenderer renderer;
            renderer.setResult(r);
            renderer.setHead(head);
            QCOMPARE(renderer.panelCount(), 3);
            const MatrixD &raw = *renderer.panel(StepsRenderer::RawScores).values;
            const MatrixD &scaled = *renderer.panel(StepsRenderer::ScaledScores).values;
            const MatrixD &weights = *renderer.panel(StepsRenderer::Weights).values;
            QCOMPARE(&raw, &r->scores[std::size_t(head)]);
            QCOMPARE(&weights, &r->weights[std::size_t(head)]);
            // Expected scaled panel: raw · scale, −∞ where the mask says so.
            MatrixD expected = raw * scale;
            for (Index i = 0; i < raw.rows(); ++i)
                for (Index j = 0; j < raw.cols(); ++j)
                    if (r->maskState(i, j))
                        expected(i, j) = -std::numeric_limits<double>::infinity();
            ATTN_COMPARE_CLOSE(scaled, expected, 0.0, tolerance);
        }
    }

    // RoPE as its own step: panel 1 is Q Kᵀ of the projected, unrotated queries and keys,
    // panel 2 the scores of q and k rotated here from the formulas (interleaved pairs
    // (x[2i], x[2i+1]) or halves (x[i], x[i + d_k/2]) by pos·θ_i, θ_i = base^(−2i/d_k)).
    void ropeStepEqualsExplicitRotation_data()
    {
        QTest::addColumn<int>("convention");
        QTest::newRow("half") << int(RopeConvention::Half);
        QTest::newRow("interleaved") << int(RopeConvention::Interleaved);
    }
    void ropeStepEqualsExplicitRotation()
    {
        QFETCH(int, convention);
        SessionParameters p = sized(7, 16, 2);
        p.seed = 11;
        p.rope = true;
        p.ropeConvention = RopeConvention(convention);
        p.ropeBase = 100.0;
        const ResultPtr r = compute(p);
        QVERIFY2(r->ok(), qPrintable(r->error));
        const SessionInputs<double> in = sessionInputs<double>(engineParameters(p));
        const Index d = p.dModel, dK = p.dK();
        const MatrixD &w = in.layer.inProjWeight();
        const VectorD &b = in.layer.inProjBias();
        MatrixD q = in.query * w.topRows(d).transpose();
        MatrixD k = in.query * w.middleRows(d, d).transpose();
        q.rowwise() += b.segment(0, d).transpose();
        k.rowwise() += b.segment(d, d).transpose();
        auto rotate = [&](const MatrixD &x) {
            MatrixD y = x;
            for (Index pos = 0; pos < x.rows(); ++pos)
                for (Index head = 0; head < p.heads; ++head)
                    for (Index i = 0; i < dK / 2; ++i) {
                        const double angle
                            = double(pos) * std::pow(p.ropeBase, -2.0 * double(i) / double(dK));
                        const Index a
                            = head * dK + (convention == int(RopeConvention::Half) ? i : 2 * i);
                        const Index c = head * dK
                            + (convention == int(RopeConvention::Half) ? i + dK / 2 : 2 * i + 1);
                        y(pos, a) = x(pos, a) * std::cos(angle) - x(pos, c) * std::sin(angle);
                        y(pos, c) = x(pos, c) * std::cos(angle) + x(pos, a) * std::sin(angle);
                    }
            return y;
        };
        const MatrixD qr = rotate(q), kr = rotate(k);
        for (int head = 0; head < p.heads; ++head) {
            StepsRenderer renderer;
            renderer.setResult(r);
            renderer.setHead(head);
            QCOMPARE(renderer.panelCount(), 4);
            QCOMPARE(renderer.positionKind(), StepsRenderer::PositionKind::Rope);
            QCOMPARE(renderer.panelIndex(StepsRenderer::PositionStep), 1);
            QCOMPARE(renderer.panelIndex(StepsRenderer::Weights), 3);
            const MatrixD unrotated
                = q.middleCols(head * dK, dK) * k.middleCols(head * dK, dK).transpose();
            const MatrixD rotated
                = qr.middleCols(head * dK, dK) * kr.middleCols(head * dK, dK).transpose();
            ATTN_COMPARE_CLOSE(
                *renderer.panel(renderer.panelIndex(StepsRenderer::RawScores)).values, unrotated,
                1e-12, 1e-12);
            ATTN_COMPARE_CLOSE(
                *renderer.panel(renderer.panelIndex(StepsRenderer::PositionStep)).values, rotated,
                1e-12, 1e-12);
            // The rotation changes the scores (position 0 is not rotated: row 0 with key 0 is).
            QVERIFY(std::abs(unrotated(6, 2) - rotated(6, 2)) > 1e-6);
            QCOMPARE(unrotated(0, 0), rotated(0, 0));
            QVERIFY(renderer.panel(1).title.contains(convention == int(RopeConvention::Half)
                                                         ? QStringLiteral("half")
                                                         : QStringLiteral("interleaved")));
            const QString tip = renderer.describeCell({1, 6, 2});
            QVERIFY2(tip.contains(QStringLiteral("rotated score (RoPE) = ") + shown(rotated(6, 2))),
                     qPrintable(tip));
        }
    }

    // ALiBi as its own step: the bias panel is −m_h·|i − j| (−m_h·(i − j) causal) with
    // m_h = 2^(−8(h+1)/H) worked out here for H = 4 (m = 1/4, 1/16, 1/64, 1/256), and the
    // scaled panel is raw · scale + bias on the allowed cells.
    void alibiStepIsTheBias_data()
    {
        QTest::addColumn<bool>("causal");
        QTest::newRow("no mask: -m|i-j|") << false;
        QTest::newRow("causal: -m(i-j)") << true;
    }
    void alibiStepIsTheBias()
    {
        QFETCH(bool, causal);
        SessionParameters p = sized(5, 16, 4);
        p.seed = 3;
        p.alibi = true;
        if (causal)
            p.kind = AttentionKind::DecoderCausal;
        const ResultPtr r = compute(p);
        QVERIFY2(r->ok(), qPrintable(r->error));
        const double slopes[4] = {0.25, 0.0625, 0.015625, 0.00390625};
        const double scale = 1.0 / std::sqrt(double(p.dK()));
        for (int head = 0; head < 4; ++head) {
            StepsRenderer renderer;
            renderer.setResult(r);
            renderer.setHead(head);
            QCOMPARE(renderer.panelCount(), 4);
            QCOMPARE(renderer.positionKind(), StepsRenderer::PositionKind::Alibi);
            const MatrixD &bias = *renderer.panel(1).values;
            const MatrixD &raw = *renderer.panel(0).values;
            const MatrixD &scaled = *renderer.panel(2).values;
            QCOMPARE(bias.rows(), 5);
            for (Index i = 0; i < 5; ++i)
                for (Index j = 0; j < 5; ++j) {
                    const double distance = causal ? double(i - j) : std::abs(double(i - j));
                    QCOMPARE(bias(i, j), -slopes[head] * distance);
                    if (!r->maskState(i, j))
                        QVERIFY(std::abs(scaled(i, j) - (raw(i, j) * scale + bias(i, j))) < 1e-12);
                }
            QVERIFY2(renderer.panel(1).title.contains(QString::number(slopes[head], 'g', 4)),
                     qPrintable(renderer.panel(1).title));
            QVERIFY(renderer.captionLines().front().contains(
                causal ? QStringLiteral("\u2212m\u00b7(i \u2212 j)")
                       : QStringLiteral("\u2212m\u00b7|i \u2212 j|")));
        }
        // Hidden keys: the bias panel shows the kept columns.
        ViewTransform t;
        t.hiddenKeys = {1};
        const ResultPtr v = applyViewTransform(r, t);
        StepsRenderer renderer;
        renderer.setResult(v);
        renderer.setHead(0);
        QCOMPARE(renderer.panelCount(), 4);
        QCOMPARE(renderer.panel(1).values->cols(), 4);
        QCOMPARE((*renderer.panel(1).values)(4, 1), -0.25 * 2.0); // query 4, key 2
    }
};

QTEST_MAIN(TestStepsValues)
#include "tst_stepsvalues.moc"
