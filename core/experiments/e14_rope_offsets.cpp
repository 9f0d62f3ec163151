// E14 — RoPE sees offsets only (Su et al. 2021, arXiv:2104.09864, §3.4.2 and §3.4.3).

#include "core/experiments/experiments_p.h"

#include "core/attention/positional.h"
#include "core/random/random.h"

#include <cmath>
#include <limits>

namespace attn::experiments {

namespace {

/// q rotated at position m, dotted with k rotated at position n (1 × d_k rows).
double ropeScore(const MatrixD &q, const MatrixD &k, Index m, Index n, RopeConvention c,
                 double base)
{
    MatrixD qr = q, kr = k;
    applyRope<double>(qr, c, base, m);
    applyRope<double>(kr, c, base, n);
    return qr.row(0).dot(kr.row(0));
}

ExperimentResult run(const ParamValues &pv, const RunContext &context)
{
    const Index dK = pv.integer("d_k");
    const Index trials = pv.integer("trials");
    const Index positions = pv.integer("positions");
    const std::vector<Index> shifts = pv.indexList("shifts");
    const std::vector<Index> bases = pv.indexList("bases");
    const Index maxDistance = pv.integer("max_distance");
    const RopeConvention convention = parseRopeConvention(pv.text("rope_convention"));
    if (dK % 2 != 0)
        throw InvalidArgument("E14: RoPE needs an even d_k, got " + std::to_string(dK));
    Generator rng(pv.seed());
    // trials pairs (q, k), each 1 × d_k, drawn q then k.
    std::vector<MatrixD> qs, ks;
    for (Index t = 0; t < trials; ++t) {
        qs.push_back(rng.standardNormal(1, dK));
        ks.push_back(rng.standardNormal(1, dK));
    }
    const double base = kRopeDefaultBase;

    Table table({"shift", "rope_worst_diff", "sinusoidal_worst_diff"});
    double ropeWorst = 0, sinusoidalGap = std::numeric_limits<double>::infinity();
    for (std::size_t s = 0; s < shifts.size(); ++s) {
        const Index t = shifts[s];
        // Sinusoidal encodings added to q and k: (q + PE[m])·(k + PE[n]).
        const MatrixD pe = sinusoidalEncoding(positions + t, dK);
        double rope = 0, sinusoidal = 0;
        for (Index trial = 0; trial < trials; ++trial) {
            context.checkCancel();
            const MatrixD &q = qs[std::size_t(trial)], &k = ks[std::size_t(trial)];
            for (Index m = 0; m < positions; ++m)
                for (Index n = 0; n < positions; ++n) {
                    rope = std::max(rope,
                                    std::abs(ropeScore(q, k, m, n, convention, base)
                                             - ropeScore(q, k, m + t, n + t, convention, base)));
                    const double a = (q.row(0) + pe.row(m)).dot(k.row(0) + pe.row(n));
                    const double b = (q.row(0) + pe.row(m + t)).dot(k.row(0) + pe.row(n + t));
                    sinusoidal = std::max(sinusoidal, std::abs(a - b));
                }
        }
        ropeWorst = std::max(ropeWorst, rope);
        sinusoidalGap = std::min(sinusoidalGap, sinusoidal);
        table.addRow({std::int64_t(t), rope, sinusoidal});
        context.report(0.8 * double(s + 1) / double(shifts.size()));
    }
    if (shifts.empty())
        sinusoidalGap = 0;

    // Long-term decay (§3.4.3): q = k = ones(d_k), score(0, Δ) / score(0, 0)
    // = (2/d_k) Σ_i cos(Δ θ_i) for each base; rows = bases, columns = Δ = 0 … max_distance.
    MatrixD decay(Index(bases.size()), maxDistance + 1);
    const MatrixD ones = MatrixD::Ones(1, dK);
    for (std::size_t b = 0; b < bases.size(); ++b) {
        const double s0 = ropeScore(ones, ones, 0, 0, convention, double(bases[b]));
        for (Index delta = 0; delta <= maxDistance; ++delta)
            decay(Index(b), delta)
                = ropeScore(ones, ones, delta, 0, convention, double(bases[b])) / s0;
    }
    context.report(1.0);

    table.notes.push_back("RoPE: score(m, n) = score(m + t, n + t) to rounding (worst "
                          + Table::formatNumber(ropeWorst) + " over " + std::to_string(trials)
                          + " random (q, k), m, n < " + std::to_string(positions)
                          + "): the score depends on n - m only");
    table.notes.push_back("sinusoidal encodings added to q and k do not have this property: the "
                          "smallest worst difference over the shifts is "
                          + Table::formatNumber(sinusoidalGap));
    for (std::size_t b = 0; b < bases.size(); ++b) {
        std::string line = "decay of q = k = 1 with base " + std::to_string(bases[b]) + ":";
        for (const Index delta : {Index(1), Index(16), Index(64), maxDistance})
            if (delta <= maxDistance)
                line += " d=" + std::to_string(delta) + " "
                    + Table::formatNumber(decay(Index(b), delta));
        table.notes.push_back(line);
    }

    ExperimentResult result;
    result.table = std::move(table);
    result.scalars["rope_worst_diff"] = ropeWorst;
    result.scalars["sinusoidal_smallest_gap"] = sinusoidalGap;
    result.matrices.push_back(
        {"score_decay", "E14 score(0, \u0394)/score(0, 0) of q = k = 1 (base \u00d7 distance)",
         decay});
    return result;
}

} // namespace

Entry ropeOffsetsEntry()
{
    ExperimentInfo info;
    info.id = "E14";
    info.title = "RoPE sees offsets only";
    info.paperSection = "Su et al. 2021 (RoFormer), \u00a73.4";
    info.note
        = "RoPE rotates each head's query at position m and key at position n by angles "
          "m\u00b7\u03b8_i and n\u00b7\u03b8_i (\u03b8_i = base^(\u22122i/d_k)), so their dot "
          "product depends on n \u2212 m only: shifting both by t changes nothing beyond "
          "rounding. Sinusoidal encodings added to the inputs lack this property. The "
          "score of a fixed pair (q = k = 1) decays with the distance, more slowly for a "
          "larger base.";
    info.params = {
        seedParam(14),
        intParam("d_k", 64, 2, 1024, "head width d_k (even)"),
        intParam("trials", 20, 1, 1000, "random (q, k) pairs"),
        intParam("positions", 12, 1, 256, "positions m, n = 0 \u2026 positions\u22121"),
        intListParam("shifts", "1,10,100,1000", 0, 1000000, "shifts t (positions)"),
        intListParam("bases", "100,10000,1000000", 2, 1000000000, "RoPE bases for the decay"),
        intParam("max_distance", 256, 1, 100000, "largest distance of the decay curve"),
        choiceParam("rope_convention", "half", {"half", "interleaved"},
                    "RoPE convention (the same rotation up to a permutation)"),
    };
    info.columns = {"shift", "rope_worst_diff", "sinusoidal_worst_diff"};
    return {info, &run};
}

} // namespace attn::experiments
