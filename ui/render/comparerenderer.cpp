#include "ui/render/comparerenderer.h"

#include "core/analysis/metrics.h"
#include "core/attention/mask.h"
#include "core/attention/variants.h"

#include <algorithm>
#include <cmath>
#include <limits>

namespace attn {

namespace {

QString number(double v)
{
    return PanelFigure::formatValue(v);
}

} // namespace

SessionParameters CompareVariant::apply(const SessionParameters &a) const
{
    SessionParameters b = a;
    b.scaleExponent = scaleExponent;
    b.temperature = temperature;
    b.dModel = dK * a.heads;
    const bool cross = a.kind == AttentionKind::EncoderDecoder;
    switch (mask) {
    case Mask::None:
        if (!cross)
            b.kind = AttentionKind::EncoderSelf;
        b.mask = MaskChoice::None;
        break;
    case Mask::Causal:
        if (!cross && a.kind == AttentionKind::DecoderCausal) {
            b.mask = MaskChoice::None; // the decoder kind is causal already
        } else {
            b.mask = MaskChoice::Causal;
        }
        break;
    case Mask::Padding:
        if (!cross)
            b.kind = AttentionKind::EncoderSelf;
        b.mask = MaskChoice::KeyPadding;
        break;
    case Mask::CausalPadding:
        if (cross) {
            b.mask = MaskChoice::Causal; // cross-attention holds one mask choice
        } else {
            b.kind = AttentionKind::DecoderCausal;
            b.mask = MaskChoice::KeyPadding;
        }
        break;
    }
    return b;
}

CompareVariant::Mask CompareVariant::maskOf(const SessionParameters &p)
{
    const bool causal = p.causalMasked();
    const bool padding = p.mask == MaskChoice::KeyPadding;
    if (causal && padding)
        return Mask::CausalPadding;
    if (causal)
        return Mask::Causal;
    return padding ? Mask::Padding : Mask::None;
}

CompareVariant CompareVariant::from(const SessionParameters &p)
{
    CompareVariant v;
    v.scaleExponent = p.scaleExponent;
    v.temperature = p.temperature;
    v.mask = maskOf(p);
    v.dK = p.dK();
    return v;
}

QString CompareVariant::maskName(Mask m)
{
    switch (m) {
    case Mask::None:
        return QStringLiteral("none");
    case Mask::Causal:
        return QStringLiteral("causal");
    case Mask::Padding:
        return QStringLiteral("key padding");
    case Mask::CausalPadding:
        return QStringLiteral("causal + key padding");
    }
    return {};
}

QStringList compareDifferences(const SessionParameters &a, const SessionParameters &b)
{
    QStringList d;
    if (a.dModel != b.dModel)
        d << QStringLiteral("d_k %1 \u2192 %2 (d_model %3 \u2192 %4)")
                 .arg(a.dK())
                 .arg(b.dK())
                 .arg(a.dModel)
                 .arg(b.dModel);
    if (a.scaleExponent != b.scaleExponent)
        d << QStringLiteral("scale %1 \u2192 %2")
                 .arg(scaleFormula(a.scaleExponent, 1.0), scaleFormula(b.scaleExponent, 1.0));
    if (a.temperature != b.temperature)
        d << QStringLiteral("\u03c4 %1 \u2192 %2")
                 .arg(QString::number(a.temperature, 'g', 4),
                      QString::number(b.temperature, 'g', 4));
    const auto ma = CompareVariant::maskOf(a), mb = CompareVariant::maskOf(b);
    if (ma != mb || (a.mask == MaskChoice::KeyPadding && a.paddingCount != b.paddingCount))
        d << QStringLiteral("mask %1 \u2192 %2")
                 .arg(CompareVariant::maskName(ma), CompareVariant::maskName(mb));
    if (a.seed != b.seed)
        d << QStringLiteral("seed %1 \u2192 %2").arg(a.seed).arg(b.seed);
    if (a.positional != b.positional)
        d << QStringLiteral("positional encoding %1 \u2192 %2")
                 .arg(a.positional ? QStringLiteral("on") : QStringLiteral("off"),
                      b.positional ? QStringLiteral("on") : QStringLiteral("off"));
    if (a.dtype != b.dtype)
        d << QStringLiteral("dtype %1 \u2192 %2").arg(dtypeId(a.dtype), dtypeId(b.dtype));
    return d;
}

QString sharedInputsNote(const SessionParameters &a, const SessionParameters &b)
{
    const bool crossA = a.kind == AttentionKind::EncoderDecoder;
    const bool crossB = b.kind == AttentionKind::EncoderDecoder;
    if (a.seed != b.seed || a.n != b.n || a.heads != b.heads || crossA != crossB
        || (crossA && a.nK != b.nK) || a.positional != b.positional || a.dtype != b.dtype)
        return QStringLiteral("Different inputs: A and B differ in seed, n, h, kind, positional "
                              "encoding or dtype.");
    if (a.dModel == b.dModel)
        return QStringLiteral("Same inputs: A and B share seed %1, the layer's weights and the "
                              "input vectors X (d_model = %2 in both); only the scale, "
                              "temperature and mask can differ.")
            .arg(a.seed)
            .arg(a.dModel);
    return QStringLiteral("Not the same numbers: A and B share seed %1, n, h and the mask "
                          "positions, but d_model differs (%2 vs %3), so the layer's weights and "
                          "the inputs X have other shapes and are different draws from that seed.")
        .arg(a.seed)
        .arg(a.dModel)
        .arg(b.dModel);
}

CompareRenderer::CompareRenderer()
{
    rebuild();
}

CompareRenderer::CompareRenderer(const CompareRenderer &other)
    : PanelFigure(other)
    , m_a(other.m_a)
    , m_b(other.m_b)
    , m_head(other.m_head)
    , m_weightsColormap(other.m_weightsColormap)
{
    rebuild();
}

CompareRenderer &CompareRenderer::operator=(const CompareRenderer &other)
{
    if (this == &other)
        return *this;
    PanelFigure::operator=(other);
    m_a = other.m_a;
    m_b = other.m_b;
    m_head = other.m_head;
    m_weightsColormap = other.m_weightsColormap;
    rebuild();
    return *this;
}

void CompareRenderer::setResults(std::shared_ptr<const SessionResult> a,
                                 std::shared_ptr<const SessionResult> b)
{
    m_a = std::move(a);
    m_b = std::move(b);
    rebuild();
}

void CompareRenderer::setHead(int head)
{
    if (head == m_head)
        return;
    m_head = head;
    rebuild();
}

bool CompareRenderer::comparable() const
{
    return m_a && m_b && m_a->ok() && m_b->ok() && m_a->headCount() > 0
        && m_a->headCount() == m_b->headCount() && m_a->queryCount() == m_b->queryCount()
        && m_a->keyCount() == m_b->keyCount();
}

int CompareRenderer::head() const
{
    if (!comparable())
        return -1;
    return std::clamp(m_head, 0, m_a->headCount());
}

bool CompareRenderer::showsMean() const
{
    return comparable() && head() == m_a->headCount();
}

void CompareRenderer::setWeightsColormap(ColormapId id)
{
    if (id == ColormapId::RdBu)
        id = ColormapId::Viridis;
    if (id == m_weightsColormap)
        return;
    m_weightsColormap = id;
    rebuild();
}

void CompareRenderer::showMessage(const QString &text)
{
    QStringList caption = captionLines();
    if (caption.isEmpty())
        caption << QStringLiteral("A/B comparison");
    setMessage(caption, text);
}

QString CompareRenderer::documentTitle() const
{
    return QStringLiteral("Attention Lab: A/B comparison");
}

CompareMetrics CompareRenderer::metrics(const SessionResult &r, int head)
{
    CompareMetrics m;
    const int h = int(r.metrics.size());
    if (h == 0)
        return m;
    const int first = head >= h ? 0 : std::max(head, 0);
    const int last = head >= h ? h - 1 : first;
    for (int k = first; k <= last; ++k) {
        const MetricsSummary s = summarize(r.metrics[std::size_t(k)]);
        m.meanMaxWeight += s.meanMaxWeight;
        m.meanEntropy += s.meanEntropy;
        m.meanEffectiveTerms += s.meanEffectiveTerms;
        m.meanJacobianNorm += s.meanJacobianNorm;
    }
    const double count = last - first + 1;
    m.meanMaxWeight /= count;
    m.meanEntropy /= count;
    m.meanEffectiveTerms /= count;
    m.meanJacobianNorm /= count;
    return m;
}

CompareMetrics CompareRenderer::metricsA() const
{
    return comparable() ? metrics(*m_a, head()) : CompareMetrics {};
}

CompareMetrics CompareRenderer::metricsB() const
{
    return comparable() ? metrics(*m_b, head()) : CompareMetrics {};
}

void CompareRenderer::rebuild()
{
    m_identical = false;
    m_diff = std::make_shared<MatrixD>();
    m_diffMask = std::make_shared<MatrixB>();
    holdData({m_a, m_b, m_diff, m_diffMask}); // the panels point into these
    QStringList caption {QStringLiteral("A/B comparison: weights of A and B and their difference "
                                        "B \u2212 A")};
    if (m_a && m_a->ok())
        caption << QStringLiteral("A: ") + m_a->params.caption();
    if (m_b && m_b->ok())
        caption << QStringLiteral("B: ") + m_b->params.caption();
    if (!m_a || !m_b) {
        setMessage(caption,
                   !m_a ? QStringLiteral("No result for A yet")
                        : QStringLiteral("Computing B\u2026"));
        return;
    }
    if (!m_a->ok() || !m_b->ok()) {
        setMessage(caption,
                   !m_a->ok() ? QStringLiteral("Cannot compute A: ") + m_a->error
                              : QStringLiteral("Cannot compute B: ") + m_b->error);
        return;
    }
    if (!comparable()) {
        setMessage(caption,
                   QStringLiteral("A and B differ in shape (A: %1\u00d7%2, h=%3; B: %4\u00d7%5, "
                                  "h=%6): nothing to subtract")
                       .arg(m_a->queryCount())
                       .arg(m_a->keyCount())
                       .arg(m_a->headCount())
                       .arg(m_b->queryCount())
                       .arg(m_b->keyCount())
                       .arg(m_b->headCount()));
        return;
    }
    const SessionResult &a = *m_a;
    const SessionResult &b = *m_b;
    const int h = head();
    const bool mean = h == a.headCount();
    const MatrixD &wa = mean ? a.weightsMean : a.weights[std::size_t(h)];
    const MatrixD &wb = mean ? b.weightsMean : b.weights[std::size_t(h)];
    MatrixD &diff = *m_diff;
    diff = wb - wa; // n_q × n_k
    const bool maskA = a.maskState.rows() == a.queryCount() && a.maskState.cols() == a.keyCount();
    const bool maskB = b.maskState.rows() == b.queryCount() && b.maskState.cols() == b.keyCount();
    if (maskA && maskB) {
        MatrixB &diffMask = *m_diffMask;
        diffMask = MatrixB::Zero(diff.rows(), diff.cols());
        for (Index k = 0; k < diff.size(); ++k) {
            const std::uint8_t sa = a.maskState.data()[k], sb = b.maskState.data()[k];
            if (sa && sb)
                diffMask.data()[k] = std::uint8_t(sa | sb); // masked in both: no difference
        }
    }
    const std::size_t flagsHead = mean ? 0 : std::size_t(h);

    auto weightsPanel = [&](const SessionResult &r, const MatrixD &w, const QString &title) {
        FigurePanel p;
        p.title = title;
        p.quantity = QStringLiteral("weight");
        p.values = &w;
        const bool hasMask
            = r.maskState.rows() == r.queryCount() && r.maskState.cols() == r.keyCount();
        p.maskState = hasMask ? &r.maskState : nullptr;
        p.fullyMasked = flagsHead < r.fullyMasked.size() ? &r.fullyMasked[flagsHead] : nullptr;
        p.colormap = m_weightsColormap;
        p.norm = ColorNorm::linear(0.0, 1.0);
        p.rangeNote = QStringLiteral("fixed [0, 1]");
        p.poolMax = true;
        p.wholeRowSumError = wholeRowSumError(r, mean ? r.headCount() : int(h));
        if (r.signedWeights) {
            // Differential attention's A₁ − λA₂: diverging, centred on 0, rows summing to 1 − λ.
            makeDiverging(p);
            p.quantity = QStringLiteral("signed weight");
            p.wholeRowSumError = std::numeric_limits<double>::quiet_NaN();
            if (!r.lambda.empty())
                p.expectedRowSum = 1.0 - r.lambda.front();
        }
        setWeightStatistics(p);
        // A learned sink or the gate: rows sum below 1 by design; the statistics give the mean
        // row sum instead of an "error".
        const std::size_t k = mean ? std::size_t(0) : std::size_t(h);
        if ((!r.learnedSinkMass.empty() || !r.gate.empty()) && !p.statistics.isEmpty()
            && !r.meanRowSum.empty()) {
            const double sum = mean ? meanRowSumOverHeads(r.meanRowSum)
                                    : r.meanRowSum.at(std::min(k, r.meanRowSum.size() - 1));
            p.statistics.last() = QStringLiteral("mean row sum %1 (%2)")
                                      .arg(QString::number(sum, 'g', 4),
                                           !r.gate.empty() ? QStringLiteral("gated")
                                                           : QStringLiteral("1 \u2212 sink mass"));
        }
        return p;
    };
    const QString which
        = mean ? QStringLiteral("mean over heads") : QStringLiteral("head %1").arg(h);
    FigurePanel pa = weightsPanel(a, wa, QStringLiteral("A \u00b7 weights, %1").arg(which));
    FigurePanel pb = weightsPanel(b, wb, QStringLiteral("B \u00b7 weights, %1").arg(which));
    if (a.signedWeights && b.signedWeights) {
        // Two signed maps share one scale, ±the larger |w| of the two, so that a colour means
        // the same weight in A and B (as [0, 1] does for plain weights).
        const double m = std::max(pa.norm.vmax, pb.norm.vmax);
        for (FigurePanel *p : {&pa, &pb}) {
            p->norm = ColorNorm::symmetric(m);
            p->rangeNote
                = QStringLiteral("centred on 0: \u00b1%1 (A's and B's)").arg(figure::formatTick(m));
        }
    }
    FigurePanel pd;
    pd.title = QStringLiteral("B \u2212 A (weights)");
    pd.quantity = QStringLiteral("B \u2212 A");
    pd.values = m_diff.get();
    pd.maskState = m_diffMask->size() > 0 ? m_diffMask.get() : nullptr;
    makeDiverging(pd);
    // Weights lie in [0, 1]: a largest |B − A| at round-off level (≤ identicalTolerance) means
    // A and B are the same weights. Their difference panel gets the full range a weight
    // difference can take, ±1 (all white, readable ticks), and says so, instead of a scale
    // stretched over round-off or a degenerate ±1e-300.
    const double largestDiff = std::max(std::abs(pd.dataMin), std::abs(pd.dataMax));
    m_identical = !(largestDiff > identicalTolerance);
    if (m_identical) {
        pd.norm = ColorNorm::symmetric(1.0);
        pd.title = QStringLiteral("B \u2212 A (identical)");
        pd.rangeNote = QStringLiteral("A and B are identical"); // data max says how close
    }

    const CompareMetrics ma = metrics(a, h), mb = metrics(b, h);
    FigureTable table;
    table.header = {mean ? QStringLiteral("mean over heads (of per-head row means)")
                         : QStringLiteral("head %1 (means over rows)").arg(h),
                    QStringLiteral("A"), QStringLiteral("B"), QStringLiteral("B \u2212 A")};
    auto row = [&](const QString &name, double va, double vb) {
        table.rows.append({name, number(va), number(vb), number(vb - va)});
    };
    row(QStringLiteral("mean max weight"), ma.meanMaxWeight, mb.meanMaxWeight);
    row(QStringLiteral("mean entropy (nats)"), ma.meanEntropy, mb.meanEntropy);
    row(QStringLiteral("mean effective terms 1/\u03a3w\u00b2"), ma.meanEffectiveTerms,
        mb.meanEffectiveTerms);
    row(QStringLiteral("mean Jacobian norm \u2016diag(p) \u2212 p p\u1d40\u2016_F"),
        ma.meanJacobianNorm, mb.meanJacobianNorm);

    const QStringList diffs = compareDifferences(a.params, b.params);
    QStringList notes;
    notes << (diffs.isEmpty() ? QStringLiteral("B equals A: every difference is 0.")
                              : QStringLiteral("B differs from A in: ")
                      + diffs.join(QStringLiteral("; ")) + QLatin1Char('.'));
    notes << sharedInputsNote(a.params, b.params);
    setContent(caption, {pa, pb, pd}, FigureAxes::of(a), table, notes);
}

QString CompareRenderer::describeCell(const FigureHit &hit) const
{
    if (!hit.valid() || !comparable())
        return {};
    const SessionResult &a = *m_a;
    const SessionResult &b = *m_b;
    const Index i = hit.row, j = hit.col;
    if (i >= a.queryCount() || j >= a.keyCount() || m_diff->rows() != a.queryCount())
        return {};
    const int h = head();
    const bool mean = h == a.headCount();
    const MatrixD &wa = mean ? a.weightsMean : a.weights[std::size_t(h)];
    const MatrixD &wb = mean ? b.weightsMean : b.weights[std::size_t(h)];
    auto state = [](const SessionResult &r, Index i, Index j) {
        return r.maskState.rows() == r.queryCount() && r.maskState.cols() == r.keyCount()
            ? r.maskState(i, j)
            : std::uint8_t(0);
    };
    const SessionParameters &p = a.params;
    QStringList lines;
    lines << (mean ? QStringLiteral("mean over %1 heads").arg(a.headCount())
                   : QStringLiteral("head %1 of %2").arg(h).arg(a.headCount()));
    QString query = QStringLiteral("query i = %1 (row)").arg(a.originalQuery(int(i)));
    QString key = QStringLiteral("key j = %1 (column)").arg(a.originalKey(int(j)));
    if (!p.tokens.empty()) {
        query += QStringLiteral(": \u201c%1\u201d").arg(a.queryLabel(int(i)));
        key += QStringLiteral(": \u201c%1\u201d").arg(a.keyLabel(int(j)));
    }
    lines << query << key;
    lines << QStringLiteral("A: weight %1 (%2)")
                 .arg(number(wa(i, j)), QString::fromStdString(maskStateText(state(a, i, j))));
    lines << QStringLiteral("B: weight %1 (%2)")
                 .arg(number(wb(i, j)), QString::fromStdString(maskStateText(state(b, i, j))));
    lines << QStringLiteral("B \u2212 A = %1").arg(number((*m_diff)(i, j)));
    if (!mean && std::size_t(h) < a.metrics.size() && std::size_t(h) < b.metrics.size())
        lines << QStringLiteral("row %1 entropy: A %2 nats, B %3 nats")
                     .arg(a.originalQuery(int(i)))
                     .arg(QString::number(a.metrics[std::size_t(h)].entropy(i), 'g', 4),
                          QString::number(b.metrics[std::size_t(h)].entropy(i), 'g', 4));
    return lines.join(QLatin1Char('\n'));
}

} // namespace attn
