#include "ui/render/stepsrenderer.h"

#include "ui/render/figurefile.h"
#include "ui/session/tensorsource.h"

#include "core/attention/mask.h"
#include "core/attention/positional.h"

#include <algorithm>

namespace attn {

StepsRenderer::StepsRenderer()
{
    rebuild();
}

void StepsRenderer::setResult(std::shared_ptr<const SessionResult> result)
{
    m_result = std::move(result);
    rebuild();
}

void StepsRenderer::setHead(int head)
{
    if (head == m_head)
        return;
    m_head = head;
    rebuild();
}

int StepsRenderer::panelIndex(Panel step) const
{
    if (panelCount() == 0)
        return -1;
    // The weights are the last panel (after A₁ and A₂ under differential attention).
    if (step == Weights)
        return panelCount() - 1;
    if (m_positionKind == PositionKind::None)
        return step == PositionStep ? -1 : int(step);
    switch (step) {
    case RawScores:
        return 0;
    case PositionStep:
        return 1;
    case ScaledScores:
        return 2;
    case Weights:
        break;
    }
    return -1;
}

int StepsRenderer::head() const
{
    if (!m_result || !m_result->ok() || m_result->headCount() == 0)
        return -1;
    return std::clamp(m_head, 0, m_result->headCount() - 1);
}

void StepsRenderer::setSharedScoreRange(bool shared)
{
    if (shared == m_sharedScoreRange)
        return;
    m_sharedScoreRange = shared;
    rebuild();
}

void StepsRenderer::setWeightsColormap(ColormapId id)
{
    if (id == ColormapId::RdBu)
        id = ColormapId::Viridis; // weights are a sequential quantity in [0, 1]
    if (id == m_weightsColormap)
        return;
    m_weightsColormap = id;
    rebuild();
}

QString StepsRenderer::weightsOnlyMessage()
{
    return QStringLiteral("Steps need query and key tensors; the loaded file has weights only.\n"
                          "Open a file with query and key (and value) tensors to see the raw and "
                          "scaled scores; the Heads tab shows the stored weights.");
}

QString StepsRenderer::documentTitle() const
{
    return QStringLiteral("Attention Lab: attention steps");
}

void StepsRenderer::rebuild()
{
    m_positionKind = PositionKind::None;
    holdData({m_result}); // every panel points into the result
    QString pipeline = QStringLiteral(
        "raw scores Q K\u1d40 \u2192 scaled + masked Q K\u1d40\u00b7scale + M \u2192 weights "
        "softmax");
    if (!m_result) {
        setMessage({QStringLiteral("Attention steps: ") + pipeline},
                   QStringLiteral("No result yet"));
        return;
    }
    const SessionResult &r = *m_result;
    if (!r.ok()) {
        setMessage({QStringLiteral("Attention steps: ") + pipeline, r.params.caption()},
                   QStringLiteral("Cannot compute: ") + r.error);
        return;
    }
    if (r.params.tensors && r.params.tensors->isWeights() && !r.params.tensors->isModelRun()) {
        // Stored weights carry no scores (they would be NaN panels): say what is missing.
        setMessage({QStringLiteral("Attention steps: ") + pipeline, r.params.caption()},
                   weightsOnlyMessage());
        return;
    }
    const int h = head();
    if (h < 0 || std::size_t(h) >= r.scores.size() || std::size_t(h) >= r.scaledScores.size()) {
        setMessage({QStringLiteral("Attention steps: ") + pipeline, r.params.caption()},
                   QStringLiteral("This result has no scores to show"));
        return;
    }
    const std::size_t hh = std::size_t(h);
    const bool hasMask = r.maskState.rows() == r.queryCount() && r.maskState.cols() == r.keyCount();
    const MatrixB *mask = hasMask ? &r.maskState : nullptr;
    const std::vector<std::uint8_t> *fully
        = hh < r.fullyMasked.size() ? &r.fullyMasked[hh] : nullptr;
    // The titles name the mask only when one is on: the kinds of the masked cells ("causal +
    // window"), or an additive float mask from a file, which may mask no cell.
    std::uint8_t maskKinds = 0;
    if (mask)
        for (Index k = 0; k < mask->size(); ++k)
            maskKinds |= mask->data()[k];
    const TensorCase<double> *tc = r.params.tensors ? r.params.tensors->tensorCase() : nullptr;
    const bool additive = tc && tc->mask.additiveTerm();
    const bool masked = maskKinds != 0 || additive;
    QString maskName;
    if (maskKinds)
        maskName = QString::fromStdString(maskStateText(maskKinds, MaskTextStyle::Name));
    if (additive)
        maskName += (maskName.isEmpty() ? QString() : QStringLiteral(" + "))
            + QStringLiteral("additive");
    if (!masked)
        pipeline = QStringLiteral(
            "raw scores Q K\u1d40 \u2192 scaled Q K\u1d40\u00b7scale \u2192 weights softmax");
    else
        pipeline += QStringLiteral("; mask M: %1").arg(maskName);

    // The position scheme's step, when the result carries it for this head.
    const bool rope = hh < r.unrotatedScores.size()
        && r.unrotatedScores[hh].rows() == r.queryCount()
        && r.unrotatedScores[hh].cols() == r.keyCount();
    const bool alibi = !rope && hh < r.positionBias.size()
        && r.positionBias[hh].rows() == r.queryCount() && r.positionBias[hh].cols() == r.keyCount();
    m_positionKind = rope ? PositionKind::Rope : alibi ? PositionKind::Alibi : PositionKind::None;
    const QString convention = QString::fromStdString(ropeConventionName(r.params.ropeConvention));
    const QString slope = hh < r.alibiSlopes.size() ? QString::number(r.alibiSlopes[hh], 'g', 4)
                                                    : QStringLiteral("m");
    const bool causalBias = r.positionBiasCausal;

    FigurePanel raw;
    raw.title = rope ? QStringLiteral("1 \u00b7 Q K\u1d40 before RoPE")
                     : QStringLiteral("1 \u00b7 raw scores Q K\u1d40");
    raw.quantity = QStringLiteral("raw score");
    raw.values = rope ? &r.unrotatedScores[hh] : &r.scores[hh];
    makeDiverging(raw); // raw scores come before masking: every cell is a value

    FigurePanel position;
    if (rope) {
        position.title = QStringLiteral("2 \u00b7 RoPE (%1)").arg(convention);
        position.quantity = QStringLiteral("rotated score");
        position.values = &r.scores[hh];
        makeDiverging(position);
    } else if (alibi) {
        position.title = QStringLiteral("2 \u00b7 ALiBi bias, m = %1").arg(slope);
        position.quantity = QStringLiteral("bias");
        position.values = &r.positionBias[hh];
        makeDiverging(position);
    }
    const int step = m_positionKind == PositionKind::None ? 2 : 3;

    FigurePanel scaled;
    if (alibi)
        scaled.title = masked ? QStringLiteral("3 \u00b7 Q K\u1d40\u00b7scale + B + M")
                              : QStringLiteral("3 \u00b7 Q K\u1d40\u00b7scale + B");
    else
        scaled.title = masked
            ? QStringLiteral("%1 \u00b7 scaled + masked Q K\u1d40\u00b7scale + M").arg(step)
            : QStringLiteral("%1 \u00b7 scaled Q K\u1d40\u00b7scale").arg(step);
    scaled.quantity = QStringLiteral("scaled score");
    scaled.values = &r.scaledScores[hh];
    scaled.maskState = mask;
    scaled.fullyMasked = fully;
    makeDiverging(scaled);
    if (m_sharedScoreRange) {
        // One range for the score panels: the largest of their ±max|·| (ALiBi's bias keeps
        // its own).
        QVector<FigurePanel *> shared = {&raw, &scaled};
        if (rope)
            shared.insert(1, &position);
        double m = 0;
        for (const FigurePanel *p : shared)
            m = std::max(m, p->norm.vmax);
        const QString which = rope ? QStringLiteral("panels 1, 2 and 3")
                                   : QStringLiteral("panels 1 and %1").arg(step);
        for (FigurePanel *p : shared) {
            p->norm = ColorNorm::symmetric(m);
            p->rangeNote
                = QStringLiteral("shared by %1: \u00b1%2").arg(which, figure::formatTick(m));
        }
    }

    FigurePanel weights;
    weights.title = QStringLiteral("%1 \u00b7 weights W = softmax(row)").arg(step + 1);
    weights.quantity = QStringLiteral("weight");
    weights.values = &r.weights[hh];
    weights.maskState = mask;
    weights.fullyMasked = fully;
    weights.colormap = m_weightsColormap;
    weights.norm = ColorNorm::linear(0.0, 1.0);
    weights.rangeNote = QStringLiteral("fixed [0, 1]");
    weights.poolMax = true;
    weights.wholeRowSumError = wholeRowSumError(r, int(hh));
    setWeightStatistics(weights);
    // A learned sink: each row gives part of its weight to no key, so its sum is below 1 by
    // the row's sink mass; the statistics give the head's mean row sum instead of an "error".
    if (r.learnedSinkMass.size() > hh && r.meanRowSum.size() > hh) {
        weights.title = QStringLiteral("%1 \u00b7 weights W, learned sink b = %2 (row + sink = 1)")
                            .arg(step + 1)
                            .arg(formatValue(r.sinkLogits.size() > hh ? r.sinkLogits[hh] : 0.0));
        if (!weights.statistics.isEmpty())
            weights.statistics.last() = QStringLiteral("mean row sum %1 (1 \u2212 sink mass)")
                                            .arg(QString::number(r.meanRowSum[hh], 'g', 4));
    }
    // Differential attention: A₁ and A₂ (each a softmax, on the weights' scale) beside the
    // signed A₁ − λA₂ (diverging, centred on 0, over its range).
    std::vector<FigurePanel> pair;
    const bool differential = r.firstWeights.size() > hh && r.secondWeights.size() > hh;
    if (differential) {
        const double lambda = r.lambda.size() > hh ? r.lambda[hh] : 0.0;
        for (int k = 0; k < 2; ++k) {
            FigurePanel a = weights;
            a.title = QStringLiteral("%1 \u00b7 A%2 = softmax(row%3)")
                          .arg(step + 1 + k)
                          .arg(k == 0 ? QStringLiteral("\u2081") : QStringLiteral("\u2082"))
                          .arg(k == 0 ? QString() : QStringLiteral(", second q, k"));
            a.values = k == 0 ? &r.firstWeights[hh] : &r.secondWeights[hh];
            a.wholeRowSumError = std::numeric_limits<double>::quiet_NaN();
            setWeightStatistics(a);
            pair.push_back(std::move(a));
        }
        weights.title = QStringLiteral("%1 \u00b7 A\u2081 \u2212 \u03bbA\u2082, \u03bb = %2 "
                                       "(signed; rows sum to 1 \u2212 \u03bb)")
                            .arg(step + 3)
                            .arg(formatValue(lambda));
        weights.quantity = QStringLiteral("signed weight");
        makeDiverging(weights);
        weights.wholeRowSumError = std::numeric_limits<double>::quiet_NaN();
        weights.expectedRowSum = 1.0 - lambda;
        setWeightStatistics(weights);
    }
    // The head-wise output gate scales each row by σ(g_i): the row sums are the gates, and the
    // statistics give the head's mean row sum (the mean gate) instead of an "error".
    if (r.gate.size() > hh && r.meanRowSum.size() > hh) {
        // The gate's factor stands in front of what it scales, and the statistics say what the
        // rows sum to: the title is no wider than the ungated one (it fits a 1280-pixel window).
        const bool sink = r.learnedSinkMass.size() > hh;
        const QString sinkLogit
            = formatValue(sink && r.sinkLogits.size() > hh ? r.sinkLogits[hh] : 0.0);
        weights.title = differential
            ? QStringLiteral("%1 \u00b7 \u03c3(g\u1d62)\u00b7(A\u2081 \u2212 \u03bbA\u2082), "
                             "\u03bb = %2 (signed, gated)")
                  .arg(step + 3)
                  .arg(formatValue(r.lambda.size() > hh ? r.lambda[hh] : 0.0))
            : sink ? QStringLiteral("%1 \u00b7 \u03c3(g\u1d62)\u00b7W, learned sink b = %2 (gated)")
                         .arg(step + 1)
                         .arg(sinkLogit)
                   : QStringLiteral("%1 \u00b7 gated weights \u03c3(g\u1d62)\u00b7softmax(row)")
                         .arg(step + 1);
        setWeightStatistics(weights);
        if (!weights.statistics.isEmpty())
            weights.statistics.last() = QStringLiteral("mean row sum %1 (%2)")
                                            .arg(QString::number(r.meanRowSum[hh], 'g', 4),
                                                 differential ? QStringLiteral("gate × (1 − λ)")
                                                     : r.learnedSinkMass.size() > hh
                                                     ? QStringLiteral("gate × (1 − sink mass)")
                                                     : QStringLiteral("the mean gate"));
    }

    QString shownPipeline = pipeline;
    if (rope)
        shownPipeline = QStringLiteral("raw scores Q K\u1d40 \u2192 RoPE (%1, base %2) rotates "
                                       "q and k by position \u2192 scaled + masked \u2192 weights "
                                       "softmax")
                            .arg(convention, QString::number(r.params.ropeBase, 'g', 6));
    else if (alibi)
        shownPipeline = (causalBias ? QStringLiteral("raw scores Q K\u1d40 \u2192 ALiBi bias B = "
                                                     "\u2212m\u00b7(i \u2212 j)")
                                    : QStringLiteral("raw scores Q K\u1d40 \u2192 ALiBi bias B = "
                                                     "\u2212m\u00b7|i \u2212 j|"))
            + QStringLiteral(" \u2192 scaled + bias + masked \u2192 weights softmax");
    const QStringList caption
        = {QStringLiteral("Attention steps of head %1 of %2: ").arg(h).arg(r.headCount())
               + shownPipeline,
           r.params.caption() + QStringLiteral(", scale = %1").arg(formatValue(r.scale))};
    QVector<FigurePanel> panels {raw};
    if (m_positionKind != PositionKind::None)
        panels.push_back(position);
    panels.push_back(scaled);
    for (FigurePanel &a : pair)
        panels.push_back(std::move(a));
    panels.push_back(weights);
    setContent(caption, panels, FigureAxes::of(r));
}

QString StepsRenderer::describeCell(const FigureHit &hit) const
{
    if (!hit.valid() || !m_result || !m_result->ok())
        return {};
    const SessionResult &r = *m_result;
    const int h = head();
    const Index i = hit.row, j = hit.col;
    if (h < 0 || i >= r.queryCount() || j >= r.keyCount())
        return {};
    const std::size_t hh = std::size_t(h);
    const SessionParameters &p = r.params;
    const std::uint8_t state
        = r.maskState.rows() == r.queryCount() && r.maskState.cols() == r.keyCount()
        ? r.maskState(i, j)
        : std::uint8_t(0);

    QStringList lines;
    lines << QStringLiteral("head %1 of %2").arg(h).arg(r.headCount());
    QString query = QStringLiteral("query i = %1 (row)").arg(r.originalQuery(int(i)));
    QString key = QStringLiteral("key j = %1 (column)").arg(r.originalKey(int(j)));
    if (!p.tokens.empty()) {
        query += QStringLiteral(": \u201c%1\u201d").arg(r.queryLabel(int(i)));
        key += QStringLiteral(": \u201c%1\u201d").arg(r.keyLabel(int(j)));
    }
    lines << query << key;
    const double raw = r.scores[hh](i, j);
    const double scaled = r.scaledScores[hh](i, j);
    if (m_positionKind == PositionKind::Rope) {
        lines << QStringLiteral("raw score Q K\u1d40 before RoPE = %1")
                     .arg(formatValue(r.unrotatedScores[hh](i, j)));
        lines << QStringLiteral("rotated score (RoPE) = %1").arg(formatValue(raw));
    } else {
        lines << QStringLiteral("raw score Q K\u1d40 = %1").arg(formatValue(raw));
    }
    if (m_positionKind == PositionKind::Alibi)
        lines << QStringLiteral("ALiBi bias = %1").arg(formatValue(r.positionBias[hh](i, j)));
    if (state)
        lines << QStringLiteral("scaled score = %1 (masked; raw \u00d7 scale would be %2)")
                     .arg(formatValue(scaled), formatValue(raw * r.scale));
    else
        lines << QStringLiteral("scaled score = %1 (raw \u00d7 scale %2)")
                     .arg(formatValue(scaled), formatValue(r.scale));
    lines << QStringLiteral("mask: %1").arg(QString::fromStdString(maskStateText(state)));
    lines << QStringLiteral("weight = %1").arg(formatValue(r.weights[hh](i, j)));
    const bool fully = hh < r.fullyMasked.size() && std::size_t(i) < r.fullyMasked[hh].size()
        && r.fullyMasked[hh][std::size_t(i)];
    if (fully)
        lines
            << QStringLiteral("row %1: fully masked (all weights 0)").arg(r.originalQuery(int(i)));
    else if (hh < r.metrics.size() && i < r.metrics[hh].entropy.size())
        lines << QStringLiteral("row %1: entropy %2 nats, effective terms %3")
                     .arg(r.originalQuery(int(i)))
                     .arg(QString::number(r.metrics[hh].entropy(i), 'g', 4),
                          QString::number(r.metrics[hh].effectiveTerms(i), 'g', 4));
    return lines.join(QLatin1Char('\n'));
}

} // namespace attn
