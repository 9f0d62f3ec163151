#pragma once
// Metrics of attention weights (rows of W, each a probability vector p over keys).

#include "types.h"

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
/// Σp² − 2Σp³ + (Σp²)² goes negative for near-one-hot rows; EXPERIMENTS.md, E2).
double jacobianNorm(const double *p, Index n);
/// The same norm from the explicit n × n matrix (reference for tests, O(n²)): every entry of
/// J is formed and squared. The diagonal p_i − p_i² is formed as p_i·Σ_{j≠i} p_j with a direct
/// sum (equal for a probability vector), because p_i − p_i² itself rounds to 0 once p_i rounds
/// to 1 and would make the reference wrong on exactly the near-one-hot rows it must check.
double jacobianNormExplicit(const double *p, Index n);
/// The textbook closed form √(Σp² − 2Σp³ + (Σp²)²): cancels catastrophically on near-one-hot
/// rows (0, negative → NaN). Kept only to show that failure (E2) — do not use for results.
double jacobianNormTextbook(const double *p, Index n);

/// Per-row metrics of an n_q × n_k weight matrix.
struct RowMetrics
{
    VectorD maxWeight; ///< n_q
    VectorD entropy; ///< n_q, nats
    VectorD effectiveTerms; ///< n_q
    VectorD jacobianNorm; ///< n_q
    VectorD rowSumError; ///< n_q, |Σ_j w_ij − 1| (0 for fully masked rows)
    std::vector<std::uint8_t> fullyMasked; ///< n_q
};

/// Metrics of every row; rows flagged in `fullyMasked` (same length as rows, or empty) are
/// reported with effective terms 0, entropy 0, max weight 0, Jacobian norm 0.
template<typename T>
RowMetrics rowMetrics(const Matrix<T> &weights, const std::vector<std::uint8_t> &fullyMasked = {});

/// Means over rows that are not fully masked.
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
