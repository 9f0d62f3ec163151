// E15 — what each head can see: ALiBi's per-head reach (Press et al. 2021, arXiv:2108.12409, §3),
// a sliding window (Beltagy et al. 2020, §3.1) with and without attention sinks (Xiao et al.
// 2023, StreamingLLM, §3), on the same inputs.

#include "core/experiments/experiments_p.h"

#include "core/attention/groupedattention.h"
#include "core/random/random.h"

#include <cmath>
#include <limits>

namespace attn::experiments {

namespace {

/// Smallest distance D with Σ_{j ≥ i − D} w_ij ≥ fraction (keys j ≤ i of a causal row).
Index reach(const MatrixD &w, Index i, double fraction)
{
    double mass = 0;
    for (Index d = 0; d <= i; ++d) {
        mass += w(i, i - d);
        if (mass >= fraction)
            return d;
    }
    return i;
}

ExperimentResult run(const ParamValues &pv, const RunContext &context)
{
    const Index n = pv.integer("n");
    const Index h = pv.integer("heads");
    const Index dK = pv.integer("d_k");
    const Index window = pv.integer("window");
    const Index sinks = pv.integer("sinks");
    const double fraction = pv.real("fraction");
    // Four results held at once (ALiBi, plain, window, window + sinks) and the scores of one.
    checkMatrixMemory("E15", 5, h, n, n);
    Generator rng(pv.seed());
    // Already-projected heads: q, k, v n × h·d_k, drawn in that order.
    const MatrixD q = rng.standardNormal(n, h * dK);
    const MatrixD k = rng.standardNormal(n, h * dK);
    const MatrixD v = rng.standardNormal(n, h * dK);

    PositionOptions alibi;
    alibi.scheme = PositionalScheme::Alibi;
    const AttentionMask causal = AttentionMask::causal(n, n);
    const GroupedAttentionResult<double> a
        = groupedQueryAttention<double>(q, k, v, h, h, causal, {}, alibi);
    context.report(0.25);
    const GroupedAttentionResult<double> plain
        = groupedQueryAttention<double>(q, k, v, h, h, causal);
    const GroupedAttentionResult<double> windowed = groupedQueryAttention<double>(
        q, k, v, h, h, AttentionMask::slidingWindow(n, n, window, 0));
    const GroupedAttentionResult<double> withSinks = groupedQueryAttention<double>(
        q, k, v, h, h, AttentionMask::slidingWindow(n, n, window, sinks));
    context.report(0.75);

    // Rows whose window lies past the sinks: i − w ≥ s (the sinks are out of the window).
    const Index firstFar = std::min(window + sinks, n);
    const Index farRows = n - firstFar;
    Table table({"head", "alibi_slope", "reach_alibi", "reach_no_positions", "sink_mass_causal",
                 "sink_mass_window", "sink_mass_window_sinks"});
    double worstReach = 0, bestReach = double(n);
    for (Index i = 0; i < h; ++i) {
        const auto u = std::size_t(i);
        // Mean reach over the last half of the rows (at least n/2 keys each).
        double ra = 0, rp = 0;
        const Index from = n / 2;
        for (Index row = from; row < n; ++row) {
            ra += double(reach(a.weights[u], row, fraction));
            rp += double(reach(plain.weights[u], row, fraction));
        }
        ra /= double(n - from);
        rp /= double(n - from);
        worstReach = std::max(worstReach, ra);
        bestReach = std::min(bestReach, ra);
        const auto meanFar = [&](const MatrixD &w) {
            if (farRows == 0)
                return std::numeric_limits<double>::quiet_NaN();
            const VectorD m = sinkWeightMass(w, sinks);
            return m.tail(farRows).mean();
        };
        table.addRow({std::int64_t(i), a.alibiSlopes[u], ra, rp, meanFar(plain.weights[u]),
                      meanFar(windowed.weights[u]), meanFar(withSinks.weights[u])});
    }
    table.notes.push_back("reach = the distance holding " + Table::formatNumber(100 * fraction)
                          + " % of a causal row's weight, mean over rows " + std::to_string(n / 2)
                          + ".." + std::to_string(n - 1)
                          + "; ALiBi's steep slopes (first heads) see a few keys, its shallow "
                            "ones nearly the whole context (from "
                          + Table::formatNumber(bestReach) + " to "
                          + Table::formatNumber(worstReach) + ")");
    if (farRows > 0)
        table.notes.push_back("sink_mass = weight on the first " + std::to_string(sinks)
                              + " keys, mean over the rows i >= w + s = " + std::to_string(firstFar)
                              + " whose window (w = " + std::to_string(window)
                              + ", query i sees i - w < j <= i) has moved past them: 0 with the "
                                "window alone, kept with sinks");
    else
        table.notes.push_back("no row has i >= w + s = " + std::to_string(window + sinks)
                              + " with n = " + std::to_string(n)
                              + ": the sink_mass columns are NaN; use n > w + s");

    ExperimentResult result;
    result.table = std::move(table);
    result.scalars["alibi_reach_min"] = bestReach;
    result.scalars["alibi_reach_max"] = worstReach;
    result.matrices.push_back(
        {"alibi_first_head", "E15 ALiBi, head 0 (steepest slope)", a.weights.front()});
    result.matrices.push_back({"alibi_last_head",
                               "E15 ALiBi, head " + std::to_string(h - 1) + " (shallowest slope)",
                               a.weights.back()});
    result.matrices.push_back({"window",
                               "E15 sliding window w = " + std::to_string(window) + ", head 0",
                               windowed.weights.front()});
    result.matrices.push_back({"window_sinks",
                               "E15 window w = " + std::to_string(window) + " + "
                                   + std::to_string(sinks) + " sinks, head 0",
                               withSinks.weights.front()});
    context.report(1.0);
    return result;
}

} // namespace

Entry headReachEntry()
{
    ExperimentInfo info;
    info.id = "E15";
    info.title = "What each head can see";
    info.paperSection = "Press et al. 2021 (ALiBi), \u00a73; Xiao et al. 2023 (StreamingLLM)";
    info.note = "ALiBi adds \u2212m_h\u00b7(i \u2212 j) to head h's scores with slopes m_h from "
                "1/2 down to 1/256 (eight heads): the steep heads look at a few recent keys, the "
                "shallow ones almost everywhere. A sliding window of w keys cuts everything "
                "older; attention sinks keep the first keys visible, and the weight they take "
                "is what StreamingLLM measures. Same random projected q, k, v throughout.";
    info.params = {
        seedParam(15),
        intParam("n", 64, 2, 2048, "tokens (queries = keys)"),
        intParam("heads", 8, 1, 64, "heads h"),
        intParam("d_k", 16, 1, 512, "head width d_k"),
        intParam("window", 8, 1, 2048, "sliding window width w (keys i - w < j <= i)"),
        intParam("sinks", 4, 0, 2048, "attention sinks (first keys)"),
        doubleParam("fraction", 0.9, 0.01, 1.0, "weight fraction that defines the reach"),
    };
    info.columns = {"head",
                    "alibi_slope",
                    "reach_alibi",
                    "reach_no_positions",
                    "sink_mass_causal",
                    "sink_mass_window",
                    "sink_mass_window_sinks"};
    return {info, &run};
}

} // namespace attn::experiments
