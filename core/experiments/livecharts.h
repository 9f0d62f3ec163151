#pragma once
// What the window's live charts take from the experiments beyond their entry points
// (core/experiments/experiments.h): the E2 scaling sweep with the user's own scale as a third
// curve, and the fit of the timing sweep's exponent where the n² work dominates.

#include "core/attention/attention.h"
#include "core/experiments/experiments.h"

#include <optional>
#include <vector>

namespace attn {

/// scalingSweep (E2) plus, when `custom` is set, the columns max_weight_custom and
/// jacobian_norm_custom: the same scores times effectiveScale(d_k, *custom) = d_k^(−α)/τ (the
/// window's own scale setting; the other columns are those of scalingSweep, digit for digit).
/// Also throws InvalidArgument for α outside [0, 1] or τ not finite > 0.
Table scalingSweep(std::uint64_t seed, Index trials, Index keys, const std::vector<Index> &dks,
                   RandomSource source, std::optional<AttentionOptions> custom,
                   const RunContext &context = {});

/// A power law fitted where the n² work dominates (fitLargeNExponent).
struct LargeNFit
{
    double exponent = 0; ///< NaN with fewer than two different n
    double fromN = 0; ///< the smallest n fitted (0 without points)
    double rSquared = 0; ///< R² of the log–log fit (NaN with fewer than two different n)
    int points = 0; ///< points fitted
    /// Not one power law near n²: fewer than 3 points, R² < 0.98, or |exponent − 2| > 0.4.
    bool noisy = false;
};

/// The large-n fit of wall times `seconds` (s) against sizes `n` (equal lengths; extra entries
/// of the longer one ignored): the least-squares slope of log seconds vs log n
/// (fitPowerLawExponent) over the points with n ≥ n_max / 8 and a positive, finite time — where
/// an attention kernel's 4·n²·d flops dominate its fixed costs (allocation, threads), so small-n
/// overheads do not flatten the exponent (a fit over every n of a materialized kernel on a
/// loaded machine gives ≈ 1.2 instead of 2). R² = 1 − Σ(residual²)/Σ(log y − mean)² on the
/// log–log axes. Never throws.
LargeNFit fitLargeNExponent(const std::vector<double> &n, const std::vector<double> &seconds);

} // namespace attn
