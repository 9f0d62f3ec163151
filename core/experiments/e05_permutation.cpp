// E5 — attention ignores order until positions are added (docs/experiments.md;
// Vaswani et al. 2017, §3.5).

#include "core/experiments/experiments_p.h"

#include "core/attention/multihead.h"
#include "core/attention/positional.h"

namespace attn::experiments {

namespace {

ExperimentResult run(const ParamValues &pv, const RunContext &context)
{
    const Index n = pv.integer("n");
    const Index d = pv.integer("d_model");
    const Index h = pv.integer("heads");
    if (d % h != 0)
        throw InvalidArgument("E5: heads = " + std::to_string(h)
                              + " does not divide d_model = " + std::to_string(d));
    const SeededLayer seeded = seededLayer(generatorOf(pv), pv.seed(), d, h, n, 0, true);
    const MultiheadAttention<double> &layer = seeded.layer;
    const MatrixD &x = seeded.x; // n × d
    const std::vector<std::int64_t> &perm = seeded.permutation; // row i of Px is row perm[i] of x
    MatrixD px(n, d);
    for (Index i = 0; i < n; ++i)
        px.row(i) = x.row(Index(perm[std::size_t(i)]));
    const MatrixD pe = sinusoidalEncoding(n, d); // positions 0 … n−1, added after permuting

    const auto output = [&](const MatrixD &in) { return layer.forward(in, in, in).output; };
    context.checkCancel();
    const MatrixD y = output(x), yp = output(px);
    context.report(0.5);
    const MatrixD xpe = x + pe, pxpe = px + pe;
    const MatrixD y2 = output(xpe), yp2 = output(pxpe);

    Table table({"position", "source_position", "diff_no_positions", "diff_with_positions"});
    double worstNo = 0, worstWith = 0;
    bool identity = true;
    for (Index i = 0; i < n; ++i) {
        const Index src = Index(perm[std::size_t(i)]);
        identity = identity && src == i;
        // f(Px)[i] against (P f(x))[i] = f(x)[perm[i]], largest |difference| over features.
        const double no = (yp.row(i) - y.row(src)).cwiseAbs().maxCoeff();
        const double with = (yp2.row(i) - y2.row(src)).cwiseAbs().maxCoeff();
        worstNo = std::max(worstNo, no);
        worstWith = std::max(worstWith, with);
        table.addRow({std::int64_t(i), std::int64_t(src), no, with});
    }
    table.notes.push_back("without positions f(Px) = P f(x) to rounding (max "
                          + Table::formatNumber(worstNo)
                          + "): attention is permutation "
                            "equivariant and cannot see order");
    table.notes.push_back("with sinusoidal encodings added at positions 0..n-1 the equality breaks "
                          "(max "
                          + Table::formatNumber(worstWith) + ")");
    if (identity && n > 1)
        table.notes.push_back("the drawn permutation is the identity: choose another seed");

    ExperimentResult result;
    result.table = std::move(table);
    result.scalars["max_diff_no_positions"] = worstNo;
    result.scalars["max_diff_with_positions"] = worstWith;
    MatrixD permutation = MatrixD::Zero(n, n);
    for (Index i = 0; i < n; ++i)
        permutation(i, Index(perm[std::size_t(i)])) = 1.0;
    result.matrices.push_back(
        {"permutation", "E5 permutation P (row i takes token perm[i])", permutation});
    result.matrices.push_back({"difference_no_positions", "E5 f(Px) \u2212 Pf(x), no positions",
                               yp - MatrixD(permutation * y)});
    result.matrices.push_back({"difference_with_positions",
                               "E5 f(Px + PE) \u2212 Pf(x + PE), with positions",
                               yp2 - MatrixD(permutation * y2)});
    return result;
}

} // namespace

Entry permutationEntry()
{
    ExperimentInfo info;
    info.id = "E5";
    info.title = "Attention ignores order until positions are added";
    info.paperSection = "Vaswani et al. 2017, \u00a73.5";
    info.note = "Self-attention treats its input as a set: permuting the tokens only permutes "
                "the output (equal to rounding, \u2264 1e-12). Adding sinusoidal position "
                "encodings at fixed positions 0\u2026n\u22121 (after permuting) breaks the "
                "equality, which is how the model learns order. The layer is initialised from "
                "the seed, then the tokens and the permutation are drawn. With generator torch: "
                "torch.manual_seed(seed), nn.MultiheadAttention(d, h, batch_first=True), "
                "torch.randn(1, n, d), and the permutation "
                "torch.randperm(n, generator=torch.Generator().manual_seed(3)).";
    info.params = {
        seedParamBothGenerators(0),
        generatorParam(),
        intParam("n", 7, 1, 1024, "sequence length"),
        intParam("d_model", 16, 1, 1024, "model width d_model"),
        intParam("heads", 4, 1, 1024, "heads h (must divide d_model)"),
    };
    info.columns = {"position", "source_position", "diff_no_positions", "diff_with_positions"};
    return {info, &run};
}

} // namespace attn::experiments
