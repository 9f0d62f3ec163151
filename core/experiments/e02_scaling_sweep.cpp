// E2 — why divide by √d_k (docs/experiments.md; Vaswani et al. 2017, §3.2.1 and footnote 4).

#include "core/experiments/experiments_p.h"
#include "core/experiments/livecharts.h"

#include "core/analysis/metrics.h"
#include "core/random/random.h"

#include <cmath>
#include <optional>

namespace attn {

namespace {

const std::vector<std::string> kColumns = {"d_k",
                                           "score_std",
                                           "sqrt_dk",
                                           "max_weight_unscaled",
                                           "jacobian_norm_unscaled",
                                           "max_weight_scaled",
                                           "jacobian_norm_scaled"};

// q for all trials is kept (drawn before any k), and so are the trials × keys scores: each is
// capped at 1 GiB.
constexpr double kMaxQueryBytes = double(std::size_t(1) << 30);

} // namespace

Table scalingSweep(std::uint64_t seed, Index trials, Index keys, const std::vector<Index> &dks,
                   const RunContext &context)
{
    return scalingSweep(seed, trials, keys, dks, RandomSource::NumPy, context);
}

Table scalingSweep(std::uint64_t seed, Index trials, Index keys, const std::vector<Index> &dks,
                   RandomSource source, const RunContext &context)
{
    return scalingSweep(seed, trials, keys, dks, source, std::nullopt, context);
}

Table scalingSweep(std::uint64_t seed, Index trials, Index keys, const std::vector<Index> &dks,
                   RandomSource source, std::optional<AttentionOptions> custom,
                   const RunContext &context)
{
    using namespace experiments;
    if (custom) {
        if (!(custom->scaleExponent >= 0.0 && custom->scaleExponent <= 1.0))
            throw InvalidArgument("scaling sweep: scale exponent alpha must be in [0, 1], got "
                                  + std::to_string(custom->scaleExponent));
        if (!(custom->temperature > 0.0) || !std::isfinite(custom->temperature))
            throw InvalidArgument("scaling sweep: temperature tau must be finite and > 0, got "
                                  + std::to_string(custom->temperature));
    }
    if (trials < 1)
        throw InvalidArgument("scaling sweep: trials must be >= 1, got " + std::to_string(trials));
    if (keys < 1)
        throw InvalidArgument("scaling sweep: keys must be >= 1, got " + std::to_string(keys));
    if (dks.empty())
        throw InvalidArgument("scaling sweep: d_k list is empty");
    if (double(trials) * double(keys) * 8.0 > kMaxQueryBytes)
        throw InvalidArgument("scaling sweep: trials \u00d7 keys = " + std::to_string(trials)
                              + " \u00d7 " + std::to_string(keys)
                              + " scores would need more than 1 GiB; lower trials or keys");
    double work = 0;
    for (const Index dK : dks) {
        if (dK < 1)
            throw InvalidArgument("scaling sweep: every d_k must be >= 1, got "
                                  + std::to_string(dK));
        if (double(trials) * double(dK) * 8.0 > kMaxQueryBytes)
            throw InvalidArgument("scaling sweep: trials \u00d7 d_k = " + std::to_string(trials)
                                  + " \u00d7 " + std::to_string(dK)
                                  + " queries would need more than 1 GiB; lower trials or d_k");
        work += double(trials) * double(keys) * double(dK);
    }

    Generator rng(seed);
    TorchGenerator torchRng(seed);
    const bool torch = source == RandomSource::Torch;
    std::vector<std::string> columns = kColumns;
    if (custom) {
        columns.emplace_back("max_weight_custom");
        columns.emplace_back("jacobian_norm_custom");
    }
    Table table(columns);
    const auto keyCount = static_cast<std::size_t>(keys);
    const auto trialCount = static_cast<std::size_t>(trials);
    std::vector<double> scratch, scores(trialCount * keyCount), x(keyCount), p(keyCount);
    std::vector<double> maxW(trialCount), jacobian(trialCount);
    double done = 0;
    for (const Index dK : dks) {
        // q: trials × 1 × d_k, all drawn before k (docs/experiments.md draw order); torch:
        // torch.randn(trials, 1, d_k, dtype=torch.float64).
        MatrixD q = torch ? torchRng.randnMatrix(trials, dK) : rng.standardNormal(trials, dK);
        // k: trials × keys × d_k, drawn trial by trial (C order: the same stream) and used at
        // once; scores: trials × keys, row-major. torch: torch.randn(trials, keys, d_k) read in
        // pieces of one trial.
        MatrixD k(keys, dK);
        TorchNormalStream torchKeys(torchRng, torch ? std::size_t(trials * keys * dK) : 0);
        for (Index t = 0; t < trials; ++t) {
            if (t % 64 == 0) {
                context.checkCancel();
                context.report((done + double(t) * double(keys) * double(dK)) / work);
            }
            if (torch)
                torchKeys.read(k.data(), std::size_t(keys * dK));
            else
                rng.fillStandardNormal(k.data(), std::size_t(keys * dK));
            for (Index j = 0; j < keys; ++j)
                scores[std::size_t(t * keys + j)]
                    = numpyDot(q.row(t).data(), k.row(j).data(), dK, scratch);
        }
        done += double(trials) * double(keys) * double(dK);

        std::vector<Table::Cell> row
            = {std::int64_t(dK), numpyStd(scores.data(), trials * keys), std::sqrt(double(dK))};
        const double root = std::sqrt(double(dK));
        // 0: unscaled, 1: divided by √d_k, 2: the custom d_k^(−α)/τ
        const double customScale = custom ? effectiveScale(dK, *custom) : 1.0;
        for (const int kind : {0, 1, 2}) {
            if (kind == 2 && !custom)
                break;
            for (Index t = 0; t < trials; ++t) {
                for (Index j = 0; j < keys; ++j) {
                    const double s = scores[std::size_t(t * keys + j)];
                    x[std::size_t(j)] = kind == 0 ? s : kind == 1 ? s / root : s * customScale;
                }
                numpySoftmaxRow(x.data(), p.data(), keys);
                maxW[std::size_t(t)] = maxWeight(p.data(), keys);
                jacobian[std::size_t(t)] = jacobianNorm(p.data(), keys);
            }
            row.emplace_back(numpyMean(maxW.data(), trials));
            row.emplace_back(numpyMean(jacobian.data(), trials));
        }
        table.addRow(std::move(row));
    }
    context.report(1.0);
    table.notes.push_back("score_std tracks sqrt_dk: raw dot products of unit-variance vectors "
                          "have variance d_k");
    table.notes.push_back("unscaled, the softmax saturates as d_k grows (max weight -> 1, "
                          "Jacobian norm -> 0: vanishing gradients); scaled by 1/sqrt(d_k) both "
                          "stay flat");
    return table;
}

namespace experiments {

namespace {

ExperimentResult run(const ParamValues &pv, const RunContext &context)
{
    ExperimentResult result;
    result.table = scalingSweep(pv.seed(), pv.integer("trials"), pv.integer("keys"),
                                pv.indexList("d_k"), generatorOf(pv), context);
    return result;
}

} // namespace

Entry scalingSweepEntry()
{
    ExperimentInfo info;
    info.id = "E2";
    info.title = "Why divide by \u221ad_k (scaling sweep)";
    info.paperSection = "Vaswani et al. 2017, \u00a73.2.1";
    info.note = "Dot products of random unit-variance vectors have standard deviation \u221ad_k. "
                "Unscaled, large d_k pushes the softmax into saturation: the largest weight "
                "climbs toward 1 and the norm of the softmax Jacobian diag(p) \u2212 pp\u1d40 "
                "falls toward 0, so gradients vanish. Dividing by \u221ad_k keeps both flat "
                "(max \u2248 0.24, \u2016J\u2016 \u2248 0.30 with 16 keys). One generator: for "
                "each d_k, q (trials \u00d7 1 \u00d7 d_k) then k (trials \u00d7 keys \u00d7 d_k), "
                "from NumPy's standard_normal or (generator torch) torch.randn in float64.";
    info.params = {
        seedParamBothGenerators(1),
        generatorParam(),
        intParam("trials", 4000, 1, 1000000, "number of queries (one per trial)"),
        intParam("keys", 16, 1, 4096, "keys per query"),
        intListParam("d_k", "4,16,64,256,1024", 1, 65536, "query/key widths, in order"),
    };
    info.columns = kColumns;
    return {info, &run};
}

} // namespace experiments

} // namespace attn
