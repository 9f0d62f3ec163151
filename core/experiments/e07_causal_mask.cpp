// E7 — the causal mask really blocks the future (docs/experiments.md; Vaswani et al. 2017, §3.2.3).

#include "core/experiments/experiments_p.h"

#include "core/attention/mask.h"
#include "core/attention/multihead.h"

#include <limits>

namespace attn::experiments {

namespace {

ExperimentResult run(const ParamValues &pv, const RunContext &context)
{
    const Index n = pv.integer("n");
    const Index d = pv.integer("d_model");
    const Index h = pv.integer("heads");
    const Index from = pv.integer("changed_from");
    if (d % h != 0)
        throw InvalidArgument("E7: heads = " + std::to_string(h)
                              + " does not divide d_model = " + std::to_string(d));
    if (from >= n)
        throw InvalidArgument("E7: changed_from = " + std::to_string(from)
                              + " must be below n = " + std::to_string(n)
                              + " (positions changed_from \u2026 n\u22121 are replaced)");
    // x: n × d, then n − from new tokens for positions from … n−1, drawn next.
    const SeededLayer seeded = seededLayer(generatorOf(pv), pv.seed(), d, h, n, n - from, false);
    const MultiheadAttention<double> &layer = seeded.layer;
    const MatrixD &x = seeded.x;
    MatrixD changed = x;
    changed.bottomRows(n - from) = seeded.more;
    context.checkCancel();

    const AttentionMask causal = AttentionMask::causal(n, n);
    const auto out = [&](const MatrixD &in, const AttentionMask &mask) {
        return layer.forward(in, in, in, mask).output;
    };
    const MatrixD noMask = (out(changed, {}) - out(x, {})).cwiseAbs();
    const MultiheadResult<double> before = layer.forward(x, x, x, causal);
    const MatrixD withMask = (out(changed, causal) - before.output).cwiseAbs();

    Table table({"position", "change_no_mask", "change_causal"});
    double worstBefore = 0;
    double leastNoMask = std::numeric_limits<double>::infinity();
    for (Index i = 0; i < n; ++i) {
        const double a = noMask.row(i).maxCoeff(), b = withMask.row(i).maxCoeff();
        if (i < from)
            worstBefore = std::max(worstBefore, b);
        leastNoMask = std::min(leastNoMask, a);
        table.addRow({std::int64_t(i), a, b});
    }
    table.notes.push_back("positions " + std::to_string(from) + ".." + std::to_string(n - 1)
                          + " were replaced; largest |output change| per position");
    table.notes.push_back("causal: positions 0.." + std::to_string(from - 1) + " change by exactly "
                          + Table::formatNumber(worstBefore)
                          + "; without a mask every position moves (least change "
                          + Table::formatNumber(leastNoMask) + ")");

    ExperimentResult result;
    result.table = std::move(table);
    result.scalars["max_change_causal_before"] = worstBefore;
    result.scalars["min_change_no_mask"] = leastNoMask;
    result.matrices.push_back(
        {"weights_causal", "E7 causal weights (mean over heads)", before.weightsMean});
    result.matrices.push_back({"change_no_mask", "E7 |output change| without a mask", noMask});
    result.matrices.push_back(
        {"change_causal", "E7 |output change| with the causal mask", withMask});
    return result;
}

} // namespace

Entry causalMaskEntry()
{
    ExperimentInfo info;
    info.id = "E7";
    info.title = "The causal mask really blocks the future";
    info.paperSection = "Vaswani et al. 2017, \u00a73.2.3";
    info.note = "Replace the last tokens of the input with new random vectors and measure how "
                "much each position's output moves. Without a mask every position sees every "
                "token, so all of them change. With the causal mask (scores above the diagonal "
                "set to \u2212\u221e before the softmax) the earlier positions cannot see the "
                "change: their outputs are bit-for-bit the same, a change of exactly 0.0. With "
                "generator torch: torch.manual_seed(seed), nn.MultiheadAttention(d, h, "
                "batch_first=True), torch.randn(1, n, d), then torch.randn(1, n − "
                "changed_from, d) for the replaced positions.";
    info.params = {
        seedParamBothGenerators(0),
        generatorParam(),
        intParam("n", 8, 2, 1024, "sequence length"),
        intParam("d_model", 16, 1, 1024, "model width d_model"),
        intParam("heads", 4, 1, 1024, "heads h (must divide d_model)"),
        intParam("changed_from", 5, 1, 1023,
                 "first replaced position (positions changed_from \u2026 n\u22121 get new tokens)"),
    };
    info.columns = {"position", "change_no_mask", "change_causal"};
    return {info, &run};
}

} // namespace attn::experiments
