#pragma once
// Metrics of attention weights (rows of W, each a probability vector p over keys).

#include "core/base/types.h"

#include <cstdint>
#include <vector>

namespace attn {

/// Largest weight of a row.
double maxWeight(const double *p, Index n);
/// Entropy −Σ p log p in nats (0·log 0 = 0).
double entropyNats(const double *p, Index n);
/// Effective number of terms 1 / Σ p² (n for a uniform row, 1 for one-hot; 0 for an all-zero
/// fully masked row).
double effectiveTerms(const double *p, Index n);
/// Frobenius norm of the softmax Jacobian J = diag(p) − p pᵀ without cancellation:
/// ‖J‖² = Σ_i p_i²(1−p_i)² + Σ_i p_i² Σ_{j≠i} p_j², with 1−p_i computed as Σ_{j≠i} p_j and
/// Σ_{j≠i} p_j² from prefix/suffix sums, so every term is non-negative (the textbook
/// Σp² − 2Σp³ + (Σp²)² goes negative for near-one-hot rows; docs/experiments.md, E2).
double jacobianNorm(const double *p, Index n);
/// The same norm from the explicit n × n matrix (reference for tests, O(n²)): every entry of
/// J is formed and squared. The diagonal p_i − p_i² is formed as p_i·Σ_{j≠i} p_j with a direct
/// sum (equal for a probability vector), because p_i − p_i² itself rounds to 0 once p_i rounds
/// to 1 and would make the reference wrong on exactly the near-one-hot rows it must check.
double jacobianNormExplicit(const double *p, Index n);
/// The textbook closed form √(Σp² − 2Σp³ + (Σp²)²): cancels catastrophically on near-one-hot
/// rows (0, negative → NaN). Kept only to show that failure (E2) — do not use for results.
double jacobianNormTextbook(const double *p, Index n);

/// The metrics of one row of weights p, as rowMetrics stores them (the metrics of
/// docs/experiments.md).
struct RowMetricValues
{
    double maxWeight = 0; ///< max_j p_j
    double entropy = 0; ///< −Σ_j p_j ln p_j, nats
    double effectiveTerms = 0; ///< 1 / Σ_j p_j²
    double jacobianNorm = 0; ///< ‖diag(p) − p pᵀ‖_F of the softmax Jacobian
    double rowSum = 0; ///< Σ_j p_j, summed as Eigen's VectorD::sum (rowSumError = |rowSum − 1|)
};

/// Working memory of rowMetricValues: keep one per thread and reuse it (it grows to the longest
/// row once, so rows after the first allocate nothing).
struct RowMetricsScratch
{
    VectorD aligned; ///< a packet-aligned copy of rows that are not packet-aligned themselves
    std::vector<double> suffix1, suffix2; ///< suffix sums of p and p² (jacobianNorm)
    std::vector<double> lanes; ///< suffix sums of four rows at once, interleaved
};

/// maxWeight, entropyNats, effectiveTerms, jacobianNorm and the row sum of p[0, n) in three
/// passes instead of six (one backward pass for the Jacobian's suffix sums, one forward pass
/// for the rest, one vectorised sum), each bit for bit equal to the separate function: the
/// same operations on the same values in the same order. rowMetrics uses it; so does the
/// session's fused per-row loop (ui/session/sessioncompute.cpp). p: one row of n weights; n ≥ 0.
/// A row holding NaN or ±Inf is no distribution: its max weight, entropy, effective terms and
/// Jacobian norm are NaN (not available) and its rowSum is as summed (NaN, or ±Inf), where the
/// separate functions would skip a NaN in some sums and not in others.
/// Never throws (the scratch grows on the first longer row only).
RowMetricValues rowMetricValues(const double *p, Index n, RowMetricsScratch &scratch);

/// rowMetricValues of `count` rows of n entries each (rows[r] → out[r]), bit for bit the same,
/// but four rows at a time, two per 2-lane vector (one row per lane, each lane doing the scalar
/// operations of its row): the Jacobian's and effective terms' sums are chains of dependent
/// additions, so one row waits on each addition's latency while four independent rows fill
/// the pipeline. The entropy (a scalar log per entry) stays per row. tst_metrics checks the
/// bits against the one-row functions (a build that contracts a·b + c into FMAs differently
/// in vector and scalar code would fail there).
void rowMetricValues(const double *const *rows, int count, Index n, RowMetricValues *out,
                     RowMetricsScratch &scratch);

/// Per-row metrics of an n_q × n_k weight matrix.
struct RowMetrics
{
    VectorD maxWeight; ///< n_q
    VectorD entropy; ///< n_q, nats
    VectorD effectiveTerms; ///< n_q
    VectorD jacobianNorm; ///< n_q
    VectorD rowSumError; ///< n_q, |Σ_j w_ij − 1| (0 for fully masked rows; NaN for a NaN row)
    std::vector<std::uint8_t> fullyMasked; ///< n_q
};

/// Metrics of every row; rows flagged in `fullyMasked` (same length as rows, or empty) are
/// reported with effective terms 0, entropy 0, max weight 0, Jacobian norm 0. A row holding
/// NaN or ±Inf has every metric NaN and a sum error of NaN (a NaN row) or Inf (rowMetricValues).
template<typename T>
RowMetrics rowMetrics(const Matrix<T> &weights, const std::vector<std::uint8_t> &fullyMasked = {});

/// Means over rows that are not fully masked (NaN when one of them is NaN); worstRowSumError is
/// the largest finite one (rows holding NaN/Inf are counted by their callers).
struct MetricsSummary
{
    double meanMaxWeight = 0;
    double meanEntropy = 0;
    double meanEffectiveTerms = 0;
    double meanJacobianNorm = 0;
    double worstRowSumError = 0;
    Index fullyMaskedRows = 0;
};
MetricsSummary summarize(const RowMetrics &m);

/// What orders the heads of a multi-head view.
enum class HeadOrderKey {
    Index, ///< head 0, 1, …, h−1
    Entropy, ///< mean row entropy (summarize(): rows not fully masked), nats
    MaxWeight ///< mean row max weight
};

/// The heads 0 … h−1 (h = heads.size(), one RowMetrics each) ordered by `key`, ascending or
/// `descending`; equal means (and HeadOrderKey::Index) keep the lower head first, and a head
/// whose mean is NaN goes last. A permutation of 0 … h−1; empty for no heads.
std::vector<int> headOrder(const std::vector<RowMetrics> &heads, HeadOrderKey key, bool descending);

/// Statistics of one n_q × n_k weight matrix as a figure states them beside its colourbar.
struct WeightStatistics
{
    Index cells = 0; ///< cells counted: not masked and not NaN
    double min = 0; ///< min_ij w_ij over the counted cells (NaN when none)
    double max = 0; ///< max_ij w_ij over the counted cells (NaN when none)
    double mean = 0; ///< Σ w_ij / cells over the counted cells (NaN when none)
    /// max_i |Σ_j w_ij − expectedRowSum| (1 for softmax rows, 1 − λ for differential attention)
    /// over the rows not flagged fully masked (their weights are 0 by
    /// design); the sum runs over every key (masked weights are 0). NaN when a counted row holds
    /// a NaN; 0 when every row is fully masked.
    double worstRowSumError = 0;
};

/// WeightStatistics of `weights` (n_q × n_k, row-major). `maskState`: MaskStateBits per cell
/// (n_q × n_k; cells ≠ 0 are left out of min, max and mean), or an empty matrix for none.
/// `fullyMasked`: n_q flags, or empty for none. Throws InvalidArgument naming both shapes when
/// maskState or fullyMasked is not empty and does not match. `expectedRowSum`: what each row
/// should sum to (1; 1 − λ for A₁ − λA₂).
WeightStatistics weightStatistics(const MatrixD &weights, const MatrixB &maskState = MatrixB(),
                                  const std::vector<std::uint8_t> &fullyMasked = {},
                                  double expectedRowSum = 1.0);

/// Population standard deviation (NumPy's std, ddof=0) of all entries, two-pass, accumulated in
/// double. Throws InvalidArgument on an empty matrix (NumPy would return NaN).
template<typename T> double standardDeviation(const Matrix<T> &values);

/// Index and value of the first NaN/Inf, if any (for "NaN/Inf detected" messages).
struct NonFiniteReport
{
    bool found = false;
    Index row = -1, col = -1;
    double value = 0;
    Index nanCount = 0, infCount = 0;
};
template<typename T> NonFiniteReport findNonFinite(const Matrix<T> &values);

} // namespace attn
