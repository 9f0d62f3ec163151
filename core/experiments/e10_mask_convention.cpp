// E10 — the mask-convention trap (docs/experiments.md; Vaswani et al. 2017, §3.2.3).

#include "core/experiments/experiments_p.h"

#include "core/attention/attention.h"
#include "core/attention/mask.h"
#include "core/random/random.h"

namespace attn::experiments {

namespace {

ExperimentResult run(const ParamValues &pv, const RunContext &context)
{
    const Index n = pv.integer("n");
    const Index dK = pv.integer("d_k");
    Generator rng(pv.seed());
    const MatrixD q = rng.standardNormal(n, dK); // n × d_k
    const MatrixD k = rng.standardNormal(n, dK); // n × d_k
    const MatrixD v = rng.standardNormal(n, dK); // n × d_v (= d_k)
    context.checkCancel();

    // The causal mask as a boolean matrix with True on and below the diagonal: "may attend" in
    // F.scaled_dot_product_attention, but "masked out" in nn.MultiheadAttention.
    MatrixB tril = MatrixB::Zero(n, n);
    for (Index i = 0; i < n; ++i)
        for (Index j = 0; j <= i; ++j)
            tril(i, j) = 1;
    const AttentionResult<double> reference
        = scaledDotProductAttention<double>(q, k, v, AttentionMask::causal(n, n));
    const AttentionResult<double> right
        = scaledDotProductAttention<double>(q, k, v, AttentionMask::fromAllowed(tril));
    const AttentionResult<double> reversed
        = scaledDotProductAttention<double>(q, k, v, AttentionMask::fromMasked(tril));

    Table table({"query", "diff_right", "diff_reversed", "future_weight_right",
                 "future_weight_reversed", "fully_masked_reversed"});
    double worstRight = 0, worstReversed = 0;
    for (Index i = 0; i < n; ++i) {
        const double dr = (right.weights.row(i) - reference.weights.row(i)).cwiseAbs().maxCoeff();
        const double dv
            = (reversed.weights.row(i) - reference.weights.row(i)).cwiseAbs().maxCoeff();
        const double futureRight = right.weights.row(i).tail(n - 1 - i).sum();
        const double futureReversed = reversed.weights.row(i).tail(n - 1 - i).sum();
        worstRight = std::max(worstRight, dr);
        worstReversed = std::max(worstReversed, dv);
        table.addRow({std::int64_t(i), dr, dv, futureRight, futureReversed,
                      std::int64_t(reversed.fullyMasked[std::size_t(i)])});
    }
    table.notes.push_back("the same boolean causal mask (True on and below the diagonal): read "
                          "as 'may attend' it matches the causal reference (max diff "
                          + Table::formatNumber(worstRight)
                          + "); read as 'masked out' every "
                            "query attends only to the future (max diff "
                          + Table::formatNumber(worstReversed) + "), with no error raised");
    table.notes.push_back("reversed, the last query has no key left: our softmax gives zeros "
                          "and flags the row (as scaled_dot_product_attention since PyTorch "
                          "2.5); nn.MultiheadAttention returns NaN there");

    ExperimentResult result;
    result.table = std::move(table);
    result.scalars["max_diff_right"] = worstRight;
    result.scalars["max_diff_reversed"] = worstReversed;
    result.matrices.push_back(
        {"right_convention", "E10 right convention (True = may attend)", right.weights});
    result.matrices.push_back(
        {"reversed_convention", "E10 reversed convention (True = masked out)", reversed.weights});
    result.matrices.push_back(
        {"difference", "E10 reversed \u2212 right", reversed.weights - right.weights});
    result.matrices.push_back({"mask", "E10 the boolean mask (1 = True)", tril.cast<double>()});
    return result;
}

} // namespace

Entry maskConventionEntry()
{
    ExperimentInfo info;
    info.id = "E10";
    info.title = "The mask-convention trap";
    info.paperSection = "Vaswani et al. 2017, \u00a73.2.3";
    info.note = "Boolean masks mean opposite things in common APIs: PyTorch's "
                "scaled_dot_product_attention reads True as \u201cmay attend\u201d, "
                "nn.MultiheadAttention's attn_mask reads True as \u201cmasked out\u201d. The same "
                "lower-triangular mask passed both ways: the right reading matches the causal "
                "reference to rounding, the reversed one silently attends only to the future "
                "(differences of order 1, no error). Compare the two heatmaps.";
    info.params = {
        seedParam(0),
        intParam("n", 6, 2, 1024, "sequence length"),
        intParam("d_k", 8, 1, 4096, "query/key/value width"),
    };
    info.columns = {"query",
                    "diff_right",
                    "diff_reversed",
                    "future_weight_right",
                    "future_weight_reversed",
                    "fully_masked_reversed"};
    return {info, &run};
}

} // namespace attn::experiments
