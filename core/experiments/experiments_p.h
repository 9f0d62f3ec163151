#pragma once
// Internal to core/experiments: the registry entry of each experiment, typed parameter access
// and the NumPy-order arithmetic E1–E3 use to print the same digits as the NumPy scripts in
// tests/reference/.

#include "core/attention/multihead.h"
#include "core/experiments/experiments.h"
#include "core/random/torchrandom.h"

#include <cstdint>
#include <string>
#include <vector>

namespace attn::experiments {

/// Validated parameter values of one run (built from ExperimentInfo::params and the user's
/// text values; see ParamValues::ParamValues for the checks).
class ParamValues
{
public:
    /// Checks every given name against `info` (unknown → InvalidArgument listing the valid
    /// names), parses every value by its kind and range (→ InvalidArgument naming the
    /// parameter, the accepted values and the text given) and fills in defaults.
    ParamValues(const ExperimentInfo &info, const ExperimentParams &given);

    std::int64_t integer(const std::string &name) const;
    /// The "seed" parameter (any 64-bit unsigned integer).
    std::uint64_t seed() const;
    double real(const std::string &name) const;
    std::vector<std::int64_t> intList(const std::string &name) const;
    std::vector<Index> indexList(const std::string &name) const;
    const std::string &text(const std::string &name) const;

    /// Every parameter with its value in normalised text (defaults filled in).
    const ExperimentParams &normalised() const { return m_values; }
    const ExperimentInfo &info() const { return *m_info; }

private:
    const ParamSpec &spec(const std::string &name) const;
    const ExperimentInfo *m_info;
    ExperimentParams m_values;
};

using RunFunction = ExperimentResult (*)(const ParamValues &, const RunContext &);

struct Entry
{
    ExperimentInfo info;
    RunFunction run;
};

// One per file e01_one_head.cpp … e20_latent_attention.cpp.
Entry oneHeadEntry(); // E1
Entry scalingSweepEntry(); // E2
Entry softmaxCollapseEntry(); // E3
Entry headsSplitEntry(); // E4
Entry permutationEntry(); // E5
Entry shiftRotationEntry(); // E6
Entry causalMaskEntry(); // E7
Entry quadraticCostEntry(); // E8
Entry loopVersusMatrixEntry(); // E9
Entry maskConventionEntry(); // E10
Entry fillValueEntry(); // E11
Entry softmaxPitfallsEntry(); // E12
Entry scaleLearningEntry(); // E13 (e13_scale_learning.cpp)
Entry ropeOffsetsEntry(); // E14
Entry headReachEntry(); // E15
Entry sharedKeysEntry(); // E16
Entry inductionHeadEntry(); // E17 (e17_induction_head.cpp)
Entry learnedSinksEntry(); // E18
Entry differentialEntry(); // E19
Entry latentAttentionEntry(); // E20

// ---- ParamSpec builders ----
ParamSpec seedParam(std::uint64_t defaultSeed, std::string help = {});
ParamSpec intParam(std::string name, std::int64_t defaultValue, std::int64_t minimum,
                   std::int64_t maximum, std::string help);
ParamSpec doubleParam(std::string name, double defaultValue, double minimum, double maximum,
                      std::string help);
ParamSpec intListParam(std::string name, std::string defaultValue, std::int64_t minimum,
                       std::int64_t maximum, std::string help);
ParamSpec choiceParam(std::string name, std::string defaultValue, std::vector<std::string> choices,
                      std::string help);

/// "generator": numpy (default, numpy.random.default_rng(seed)) or torch (torch.manual_seed(seed),
/// PyTorch's CPU streams, core/random/torchrandom.h).
ParamSpec generatorParam();
/// The "seed" parameter's spec for experiments that take "generator" too.
ParamSpec seedParamBothGenerators(std::uint64_t defaultSeed);
/// The value of the "generator" parameter.
RandomSource generatorOf(const ParamValues &pv);

/// The seeded multi-head layer and tokens of E4, E5 and E7 (float64; d_model × heads checked
/// by the caller), drawn as the chosen library's listing does:
///   numpy: rng = default_rng(seed); initXavier (multihead.h); x = rng.standard_normal((n, d));
///          then `moreRows` rows more from rng; then rng.permutation(n) when asked.
///   torch: torch.manual_seed(seed); nn.MultiheadAttention(d, h, batch_first=True)'s init
///          (initTorchDefault); x = torch.randn(1, n, d); then torch.randn(1, moreRows, d);
///          the permutation is torch.randperm(n, generator=torch.Generator().manual_seed(3)),
///          a generator of its own, whatever the seed (the tutorial's listing).
struct SeededLayer
{
    MultiheadAttention<double> layer;
    MatrixD x; ///< n × d_model
    MatrixD more; ///< moreRows × d_model
    std::vector<std::int64_t> permutation; ///< empty unless asked for
};
/// The seed of torch's separate permutation generator (torch.Generator().manual_seed(3)).
inline constexpr std::uint64_t kTorchPermutationSeed = 3;
SeededLayer seededLayer(RandomSource source, std::uint64_t seed, Index dModel, Index heads, Index n,
                        Index moreRows, bool permutation);

// ---- NumPy's float64 arithmetic order (NumPy 1.24, numpy/core/src/umath/loops_utils.h.src) ----

/// NumPy's pairwise_sum: below 8 elements a plain loop, up to 128 eight interleaved
/// accumulators combined as ((r0+r1)+(r2+r3))+((r4+r5)+(r6+r7)) plus the remainder, above
/// that the halves (split at a multiple of 8) summed recursively.
double numpyPairwiseSum(const double *a, Index n);
/// np.sum / np.add.reduce over n contiguous doubles: 0 + pairwise sums of consecutive blocks
/// of 8192 elements (the ufunc iterator's buffer size), added left to right. Also the order of
/// a reduction along the last axis of a C-ordered array (rows up to 8192 long).
double numpySum(const double *a, Index n);
/// np.mean: numpySum / n.
double numpyMean(const double *a, Index n);
/// np.std (ddof = 0): √(numpySum((a − mean)²) / n) with mean = numpyMean(a).
double numpyStd(const double *a, Index n);
/// (a * b).sum() for two contiguous vectors: products, then numpySum.
double numpyDot(const double *a, const double *b, Index n, std::vector<double> &scratch);
/// The scripts' softmax of one row: z = x − max(x), e = std::exp(z) (the C library's exp, as
/// NumPy's on CPUs without AVX-512), out = e / numpySum(e). x and out may alias.
void numpySoftmaxRow(const double *x, double *out, Index n);

// ---- small helpers ----

/// Memory an experiment may hold in attention matrices at once: 2 GiB (as E8's default budget).
inline constexpr double kExperimentMatrixBudgetBytes = 2.0 * 1024 * 1024 * 1024;
/// Refuses, before anything is allocated, a run that would hold `matrices` float64 matrices of
/// h × n_q × n_k cells at once (bytes = matrices · h · n_q · n_k · 8) beyond
/// kExperimentMatrixBudgetBytes. Throws InvalidArgument naming the experiment `id`, the MiB
/// needed and the budget (exit status 2 on the command line, a message in the window).
void checkMatrixMemory(const std::string &id, double matrices, Index heads, Index nQ, Index nK);

/// Element-wise max |a − b| (NaN when either holds NaN at the same place as a number).
double maxAbsDiff(const MatrixD &a, const MatrixD &b);
/// Seconds elapsed on the steady clock since `start` (from secondsNow()).
double secondsNow();

/// Mean, median (middle value, or the mean of the two middle ones) and minimum of timed runs
/// (seconds); all 0 for no runs. E8 and E9 report all three.
struct TimingSummary
{
    double mean = 0, median = 0, minimum = 0;
};
TimingSummary timingSummary(std::vector<double> seconds);
/// kSingleThreadFlops (core/base/threads.h) as short text, "2e7".
std::string flopsText();

} // namespace attn::experiments
