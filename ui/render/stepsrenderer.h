#pragma once
// StepsRenderer: the attention pipeline of one head as three linked heatmaps (Vaswani et al.
// 2017, §3.2.1 and §3.2.3):
//   1. raw scores S = Q Kᵀ                   (diverging RdBu_r, centred on 0)
//   2. scaled and masked scores S·scale + M  (diverging RdBu_r, centred on 0; masked cells = −∞
//                                              drawn in the mask styles)
//   3. weights W = softmax(row)              (sequential, fixed [0, 1]; masked cells styled)
// With a position scheme applied inside attention the scheme is a step of its own, between 1
// and 2 (four panels):
//   RoPE (Su et al. 2021): 1 is Q Kᵀ of the unrotated projections, 2 the scores of the rotated
//     queries and keys (R_i q_i)·(R_j k_j) (EngineResult::unrotatedScores and scores);
//   ALiBi (Press et al. 2021): 2 is the bias B = −m_h·(i − j) (−m_h·|i − j| without a causal
//     mask, EngineResult::positionBias), 3 the scaled scores S·scale + B + M.
// Each score panel's scale is symmetric about 0 over [−m, m], m = max(|min|, |max|) of its
// finite, unmasked cells, so equal magnitudes get equal colour intensity; the true min and max
// are marked on its colourbar and written under it. Used by the steps view, its export and
// `attnlab heatmap --view steps`.

#include "ui/render/panelfigure.h"
#include "ui/session/sessioncompute.h"

#include <memory>

namespace attn {

class StepsRenderer : public PanelFigure
{
public:
    /// The steps. Without a position step (no RoPE, no ALiBi) the value is the panel index.
    enum Panel { RawScores = 0, ScaledScores = 1, Weights = 2, PositionStep = 3 };
    /// What the position step shows.
    enum class PositionKind { None, Rope, Alibi };

    StepsRenderer();

    void setResult(std::shared_ptr<const SessionResult> result);
    std::shared_ptr<const SessionResult> result() const { return m_result; }
    /// The panel index of `step` in the figure shown (−1 when it has no such panel: no
    /// result, or PositionStep without RoPE or ALiBi).
    int panelIndex(Panel step) const;
    /// The position step shown (None without one).
    PositionKind positionKind() const { return m_positionKind; }
    /// Head 0 … h−1 (clamped to the result's heads when shown).
    void setHead(int head);
    /// The head shown (−1 without a result).
    int head() const;
    /// Colormap of the weights panel (a sequential one; RdBu_r is refused and viridis used).
    void setWeightsColormap(ColormapId id);
    ColormapId weightsColormap() const { return m_weightsColormap; }
    /// The colormap setWeightsColormap(id) uses: `id`, or viridis for the diverging RdBu_r.
    static ColormapId effectiveWeightsColormap(ColormapId id)
    {
        return id == ColormapId::RdBu ? ColormapId::Viridis : id;
    }

    /// Raw and scaled scores on one colour range, ±max(|raw|, |scaled|) (off: each panel its own
    /// ±max|·|). Shared, the scaled panel fades as the scale shrinks the scores: the 1/√d_k
    /// lesson at a glance.
    void setSharedScoreRange(bool shared);
    bool sharedScoreRange() const { return m_sharedScoreRange; }

    /// Tooltip of cell (row, col) of the shown head, in pipeline order: head, query i (row) and
    /// key j (column) with their tokens, raw score, scaled score (and the scale), mask state
    /// (allowed / causal-masked / padding-masked), weight, and the row's entropy (nats) and
    /// effective terms 1/Σw². Empty when out of range.
    QString describeCell(const FigureHit &hit) const override;
    /// Shown instead of the panels when the result holds stored weights only (File → Open
    /// Tensors… with a weights file): there are no scores to show.
    static QString weightsOnlyMessage();

protected:
    QString documentTitle() const override;

private:
    void rebuild();

    std::shared_ptr<const SessionResult> m_result;
    int m_head = 0;
    ColormapId m_weightsColormap = ColormapId::Viridis;
    bool m_sharedScoreRange = false;
    PositionKind m_positionKind = PositionKind::None;
};

} // namespace attn
