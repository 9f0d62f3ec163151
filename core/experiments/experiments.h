#pragma once
// The experiments of docs/experiments.md (E1–E20): a registry of parameter specs and a runner
// that turns parameters into a result Table plus named matrices (heatmaps) for figures.
// Every experiment is deterministic for a given seed (NumPy-compatible Generator; E2, E4, E5 and
// E7 take "generator" = torch for PyTorch's streams, core/random/torchrandom.h) except the timings
// of E8/E9, which are measured, never hard-coded.

#include "core/base/cancel.h"
#include "core/base/types.h"
#include "core/io/table.h"
#include "core/random/torchrandom.h"

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <map>
#include <string>
#include <string_view>
#include <vector>

namespace attn {

/// One editable parameter of an experiment.
struct ParamSpec
{
    enum class Kind { Int, Double, IntList, Choice, Text };
    std::string name; ///< snake_case, also the CLI option (--name, '_' → '-')
    Kind kind = Kind::Int;
    std::string defaultValue; ///< as text; lists are comma-separated
    std::string help; ///< one line: meaning and unit
    std::vector<std::string> choices; ///< for Kind::Choice
    double minimum = 0, maximum = 0; ///< for Int / Double / IntList elements (inclusive)
    /// Accepted for a uniform interface but changes nothing (E6 draws no random numbers, so its
    /// seed): the window neither offers nor shows it.
    bool unused = false;
};

struct ExperimentInfo
{
    std::string id; ///< "E1" … "E20"
    std::string title; ///< short title
    std::string paperSection; ///< e.g. "Vaswani et al. 2017, §3.2.1"
    std::string note; ///< what to look at and why, in a few sentences
    std::vector<ParamSpec> params;
    std::vector<std::string> columns; ///< result table columns (snake_case)
};

/// Parameter values by name, as text (missing names take their defaults).
using ExperimentParams = std::map<std::string, std::string>;

/// A labelled matrix produced by an experiment (e.g. E1's weights, E10's two conventions).
struct NamedMatrix
{
    std::string name; ///< e.g. "weights", "right_convention"
    std::string title; ///< caption for figures
    MatrixD values; ///< rows × cols
};

struct ExperimentResult
{
    std::string id;
    ExperimentParams params; ///< every parameter actually used, defaults filled in
    Table table;
    std::vector<NamedMatrix> matrices;
    std::map<std::string, double> scalars; ///< headline numbers (e.g. "fitted_exponent")
};

/// Progress in [0, 1] and cooperative cancellation for long runs (E2 sweeps, E8 timings).
struct RunContext
{
    std::function<void(double)> progress; ///< may be empty
    CancelToken cancel; ///< polled between steps; once cancelled, the run throws Cancelled
    void report(double fraction) const
    {
        if (progress)
            progress(fraction);
    }
    void checkCancel() const { cancel.throwIfCancelled(); }
};

/// All experiments in order E1 … E20.
const std::vector<ExperimentInfo> &experimentList();
/// Info for an id (case-insensitive, "e2" == "E2"); throws InvalidArgument listing valid ids.
const ExperimentInfo &experimentInfo(std::string_view id);
/// Parses and validates params (unknown name, bad number, out of range → InvalidArgument that
/// names the parameter and the accepted values) and runs the experiment.
ExperimentResult runExperiment(std::string_view id, const ExperimentParams &params,
                               const RunContext &context = {});

// ---- Typed entry points shared with the main view and the CLI ----

/// E2 (docs/experiments.md): scaling sweep. Columns: d_k, score_std, sqrt_dk, max_weight_unscaled,
/// jacobian_norm_unscaled, max_weight_scaled, jacobian_norm_scaled. One generator seeded with
/// `seed`; for each d_k in order draw q (trials × 1 × d_k) then k (trials × keys × d_k).
/// Scores s = q·k, std over all trials × keys scores; per trial the softmax of s and of
/// s/√d_k, its largest weight and ‖diag(p) − ppᵀ‖_F (metrics.h jacobianNorm), averaged over
/// trials. Sums, means, std and exp follow NumPy's order (pairwise sums, C library exp), so the
/// digits equal tests/reference/e2_scaling_sweep.py. Throws InvalidArgument naming trials,
/// keys or d_k when < 1 or when q would not fit in 1 GiB; Cancelled when the context says so.
Table scalingSweep(std::uint64_t seed, Index trials, Index keys, const std::vector<Index> &dks,
                   const RunContext &context = {});
/// As above from the chosen streams: RandomSource::Torch draws q = torch.randn(trials, 1, d_k)
/// then k = torch.randn(trials, keys, d_k) per d_k (float64) after torch.manual_seed(seed).
Table scalingSweep(std::uint64_t seed, Index trials, Index keys, const std::vector<Index> &dks,
                   RandomSource source, const RunContext &context = {});

/// E8: time of materialized attention (or another kernel) for each n, d model width d,
/// float32 or float64. Columns: n, entries, mib, seconds_mean, seconds_median, seconds_min,
/// kernel_extra_mib, kernel. entries = n² score-matrix cells, mib = their size in MiB (2^20
/// bytes) in the chosen type, kernel_extra_mib = what the kernel really allocates
/// (kernelExtraBytes), seconds over `repeats` timed runs after one untimed warm-up (steady clock,
/// wall time; small n run on one thread, see kSingleThreadFlops). Q, K, V (n × d each, drawn in
/// that order from Generator(seed)); scale 1/√d; no mask.
/// The fitted exponent of seconds_min vs n (least squares on log–log, fitPowerLawExponent) is in
/// `fittedExponent` (NaN with fewer than two different n; the first note then says "n/a (needs
/// ≥ 2 different n)"). Throws InvalidArgument for an
/// unknown kernel, d < 1, n < 1, repeats < 1, or an n over kDefaultTimingMemoryBudget.
/// Measures: nothing here is hard-coded (Vaswani et al. 2017, Table 1: O(n²·d)).
Table timingSweep(const std::vector<Index> &ns, Index d, bool float32, std::string_view kernel,
                  int repeats, std::uint64_t seed, double *fittedExponent,
                  const RunContext &context = {});

/// Memory timingSweep allows a kernel run by default: 2 GiB.
inline constexpr std::size_t kDefaultTimingMemoryBudget = std::size_t(2) << 30;

/// timingSweep with an explicit memory budget in bytes: before anything runs, every n whose
/// run needs more (kernelExtraBytes + Q, K, V and the output) is refused with InvalidArgument
/// naming n, the MiB needed, the budget and the streaming kernel as the way out.
Table timingSweep(const std::vector<Index> &ns, Index d, bool float32, std::string_view kernel,
                  int repeats, std::uint64_t seed, std::size_t memoryBudgetBytes,
                  double *fittedExponent, const RunContext &context = {});

/// Least-squares slope of log(y) against log(x) (the exponent of a power law). Throws
/// InvalidArgument when the sizes differ, with fewer than 2 points, a non-positive or
/// non-finite value, or when every x is equal.
double fitPowerLawExponent(const std::vector<double> &x, const std::vector<double> &y);

} // namespace attn
