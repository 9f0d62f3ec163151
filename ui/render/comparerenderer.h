#pragma once
// The A/B comparison: configuration A (the current parameters) and a variant B computed on the
// same seed, shown side by side as weights heatmaps with their difference B − A (diverging
// RdBu_r, centred on 0) and a table of metric deltas (mean max weight, mean entropy, mean
// effective terms, mean softmax-Jacobian norm; A, B and B − A). Used by the A/B view and its
// export.

#include "ui/render/panelfigure.h"
#include "ui/session/sessioncompute.h"

#include <QString>

#include <functional>
#include <memory>

namespace attn {

/// What configuration B changes relative to A. Everything else — n, n_k, h, seed, the kind of
/// inputs (self / cross), tokens, positional encoding, dtype, padding count — is A's.
struct CompareVariant
{
    enum class Mask {
        None, ///< no mask
        Causal, ///< causal (top-left)
        Padding, ///< the last `paddingCount` keys of A
        CausalPadding ///< both (self-attention only; cross-attention gets causal)
    };
    double scaleExponent = 0.0; ///< α of B: scale = d_k^(−α)/τ (0.5 = 1/√d_k, 0 = unscaled)
    double temperature = 1.0; ///< τ of B (> 0)
    /// The range the A/B view offers for τ: the main parameters' one.
    static constexpr double minTemperature = EngineParameters::minTemperature;
    static constexpr double maxTemperature = EngineParameters::maxTemperature;
    Mask mask = Mask::None;
    int dK = 16; ///< d_k of B: d_model of B = d_k · h (h is A's)

    /// B's parameters for A = `a`. Check the result's validate() (d_k · h may exceed 4096).
    SessionParameters apply(const SessionParameters &a) const;
    /// The variant that computes what `p` computes (apply(p) ≡ p, up to the attention kind's
    /// name: a decoder with mask "causal" stays a decoder).
    static CompareVariant from(const SessionParameters &p);
    static Mask maskOf(const SessionParameters &p);
    static QString maskName(Mask m);
    bool operator==(const CompareVariant &) const = default;
};

/// The parameters in which B differs from A, as "d_k 16 → 512", "scale 1/√d_k → 1 (unscaled)"
/// (scaleFormula), "τ 1 → 2", ... (empty when they compute the same thing).
QStringList compareDifferences(const SessionParameters &a, const SessionParameters &b);

/// Where B comes from when A is not a whole session but a window of a longer one (the Long
/// tab's visible window): source(b, deliver) computes the same window for parameters `b` and
/// calls deliver(result, error) on the GUI thread, with result nullptr and `error` naming the
/// problem when it cannot.
using CompareWindowSource = std::function<void(
    const SessionParameters &b,
    std::function<void(std::shared_ptr<const SessionResult> result, const QString &error)>
        deliver)>;

/// What A and B share, honestly: with equal d_model they share the seed, the layer's weights and
/// the input vectors X; with different d_model only the seed (and n, h, tokens, mask positions):
/// the draws have other shapes, so the weights and inputs are different numbers.
QString sharedInputsNote(const SessionParameters &a, const SessionParameters &b);

/// Means over the rows that are not fully masked (core/analysis/metrics.h, summarize()).
struct CompareMetrics
{
    double meanMaxWeight = 0;
    double meanEntropy = 0; ///< nats
    double meanEffectiveTerms = 0; ///< 1/Σw²
    double meanJacobianNorm = 0; ///< ‖diag(p) − p pᵀ‖_F
};

class CompareRenderer : public PanelFigure
{
public:
    enum Panel { PanelA = 0, PanelB = 1, PanelDifference = 2 };

    CompareRenderer();
    /// Copies rebuild the panels (they point into the copy's own difference matrix).
    CompareRenderer(const CompareRenderer &other);
    CompareRenderer &operator=(const CompareRenderer &other);

    /// A and B must have the same n_q, n_k and h (else a message is shown instead).
    void setResults(std::shared_ptr<const SessionResult> a, std::shared_ptr<const SessionResult> b);
    std::shared_ptr<const SessionResult> resultA() const { return m_a; }
    std::shared_ptr<const SessionResult> resultB() const { return m_b; }
    /// Head 0 … h−1, or h for the mean over heads.
    void setHead(int head);
    /// The head shown (h = mean over heads; −1 without comparable results).
    int head() const;
    bool showsMean() const;
    void setWeightsColormap(ColormapId id);
    ColormapId weightsColormap() const { return m_weightsColormap; }
    /// Shows `text` instead of the panels (e.g. "computing B…"), keeping the caption.
    void showMessage(const QString &text);

    /// True when both results are set, valid and of the same shape.
    bool comparable() const;
    /// B − A of the shown head's weights: n_q × n_k (0 × 0 when not comparable).
    const MatrixD &difference() const { return *m_diff; }
    /// Largest |B − A| of two weights (each in [0, 1]) still counted as "identical".
    static constexpr double identicalTolerance = 1e-15;
    /// True when the shown weights of A and B are identical (max |B − A| over the cells not
    /// masked in both ≤ identicalTolerance): the difference panel then shows the range ±1 and
    /// the legend says "A and B are identical". False when not comparable.
    bool identical() const { return m_identical; }
    /// The metrics of head `head` of `r` (h: the average of the h per-head means).
    static CompareMetrics metrics(const SessionResult &r, int head);
    CompareMetrics metricsA() const;
    CompareMetrics metricsB() const;

    /// Tooltip: head, query i (row), key j (column) with tokens, A's and B's weight and mask
    /// state, B − A, and both rows' entropy (nats).
    QString describeCell(const FigureHit &hit) const override;

protected:
    QString documentTitle() const override;

private:
    void rebuild();

    std::shared_ptr<const SessionResult> m_a, m_b;
    int m_head = 0;
    ColormapId m_weightsColormap = ColormapId::Viridis;
    // New for every content (copies of the figure may still hold and paint the old ones).
    std::shared_ptr<MatrixD> m_diff; // n_q × n_k
    std::shared_ptr<MatrixB> m_diffMask; // cells masked in both A and B
    bool m_identical = false;
};

} // namespace attn
