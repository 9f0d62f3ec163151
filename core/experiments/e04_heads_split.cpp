// E4 — heads split the dimension (docs/experiments.md; Vaswani et al. 2017, §3.2.2, Table 3 (A)).

#include "core/experiments/experiments_p.h"

#include "core/analysis/metrics.h"
#include "core/attention/multihead.h"

namespace attn::experiments {

namespace {

void checkDivides(Index dModel, Index h)
{
    if (dModel % h != 0)
        throw InvalidArgument("E4: heads = " + std::to_string(h) + " does not divide d_model = "
                              + std::to_string(dModel) + " (d_k = d_model / h must be an integer)");
}

/// Layer with `h` heads initialised from the seeded generator, then x (n × d_model) drawn from
/// the same generator (seededLayer) and run as self-attention.
MultiheadResult<double> runLayer(RandomSource source, std::uint64_t seed, Index dModel, Index h,
                                 Index n, Index *parameterCount)
{
    const SeededLayer s = seededLayer(source, seed, dModel, h, n, 0, false);
    *parameterCount = s.layer.parameterCount();
    return s.layer.forward(s.x, s.x, s.x);
}

ExperimentResult run(const ParamValues &pv, const RunContext &context)
{
    const Index dModel = pv.integer("d_model");
    const Index h = pv.integer("heads");
    const Index n = pv.integer("n");
    const std::vector<Index> hList = pv.indexList("heads_list");
    const RandomSource source = generatorOf(pv);
    checkDivides(dModel, h);
    for (const Index hi : hList)
        checkDivides(dModel, hi);

    Table table({"h", "d_k", "parameter_count", "expected_parameter_count", "mean_max_weight",
                 "mean_entropy_nats"});
    for (std::size_t c = 0; c < hList.size(); ++c) {
        context.checkCancel();
        context.report(double(c) / double(hList.size() + 1));
        Index count = 0;
        const MultiheadResult<double> r = runLayer(source, pv.seed(), dModel, hList[c], n, &count);
        double meanMax = 0, meanEntropy = 0;
        for (const MatrixD &w : r.weights) {
            const MetricsSummary s = summarize(rowMetrics(w));
            meanMax += s.meanMaxWeight / double(r.weights.size());
            meanEntropy += s.meanEntropy / double(r.weights.size());
        }
        table.addRow({std::int64_t(hList[c]), std::int64_t(dModel / hList[c]), std::int64_t(count),
                      std::int64_t(4 * dModel * dModel + 4 * dModel), meanMax, meanEntropy});
    }
    table.notes.push_back("the parameter count is 4 d_model^2 + 4 d_model whatever h is: heads "
                          "split the d_model columns of W_Q, W_K, W_V, they do not add weights");
    table.notes.push_back("every h uses the same weights (same seed, same draws); only the split "
                          "into heads of d_k = d_model / h columns differs");

    ExperimentResult result;
    Index count = 0;
    const MultiheadResult<double> shown = runLayer(source, pv.seed(), dModel, h, n, &count);
    for (Index i = 0; i < h; ++i) {
        result.matrices.push_back({"head_" + std::to_string(i),
                                   "E4 head " + std::to_string(i) + " (columns "
                                       + std::to_string(i * (dModel / h)) + "\u2026"
                                       + std::to_string((i + 1) * (dModel / h) - 1) + ")",
                                   shown.weights[std::size_t(i)]});
    }
    result.matrices.push_back(
        {"mean", "E4 mean over " + std::to_string(h) + " heads", shown.weightsMean});
    result.scalars["parameter_count"] = double(count);
    result.table = std::move(table);
    return result;
}

} // namespace

Entry headsSplitEntry()
{
    ExperimentInfo info;
    info.id = "E4";
    info.title = "Heads split the dimension";
    info.paperSection = "Vaswani et al. 2017, \u00a73.2.2 and Table 3 (A)";
    info.note = "A multi-head layer in torch.nn.MultiheadAttention's layout: in_proj_weight = "
                "[W_Q; W_K; W_V] (3d \u00d7 d), out_proj; head i uses columns i\u00b7d_k\u2026"
                "(i+1)\u00b7d_k\u22121. More heads means narrower heads, not more parameters: "
                "4d\u00b2 + 4d for any h (1088 at d = 16). Each head learns its own pattern: "
                "compare the h heatmaps (self-attention on n random tokens; the layer is "
                "initialised from the seed, then the tokens are drawn). With generator torch the "
                "layer and tokens are PyTorch's: torch.manual_seed(seed), "
                "nn.MultiheadAttention(d, h, batch_first=True), torch.randn(1, n, d).";
    info.params = {
        seedParamBothGenerators(0),
        generatorParam(),
        intParam("d_model", 16, 1, 1024, "model width d_model"),
        intParam("heads", 4, 1, 1024, "heads h whose weights are shown (must divide d_model)"),
        intParam("n", 6, 1, 256, "sequence length"),
        intListParam("heads_list", "1,4,16", 1, 1024,
                     "head counts compared in the table (each must divide d_model)"),
    };
    info.columns = {"h",
                    "d_k",
                    "parameter_count",
                    "expected_parameter_count",
                    "mean_max_weight",
                    "mean_entropy_nats"};
    return {info, &run};
}

} // namespace attn::experiments
