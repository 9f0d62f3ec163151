// E1 — one head, checked (docs/experiments.md; Vaswani et al. 2017, §3.2.1).

#include "core/experiments/experiments_p.h"

#include "core/attention/attention.h"
#include "core/random/random.h"

#include <cmath>

namespace attn::experiments {

namespace {

ExperimentResult run(const ParamValues &pv, const RunContext &context)
{
    const Index n = pv.integer("n");
    const Index dK = pv.integer("d_k");
    const Index dV = pv.integer("d_v");
    Generator rng(pv.seed());
    const MatrixD q = rng.standardNormal(n, dK); // n × d_k
    const MatrixD k = rng.standardNormal(n, dK); // n × d_k
    const MatrixD v = rng.standardNormal(n, dV); // n × d_v
    context.checkCancel();

    // scores: n × n, each q_i·k_j summed in NumPy's order, then divided by √d_k (as the script
    // e1_one_head.py does), so every digit equals NumPy's.
    const double root = std::sqrt(double(dK));
    MatrixD scores(n, n), weights(n, n);
    std::vector<double> scratch;
    for (Index i = 0; i < n; ++i) {
        for (Index j = 0; j < n; ++j)
            scores(i, j) = numpyDot(q.row(i).data(), k.row(j).data(), dK, scratch) / root;
        numpySoftmaxRow(scores.row(i).data(), weights.row(i).data(), n);
    }

    // The same weights from the core (Eigen GEMM, vectorised exp): an independent check.
    const AttentionResult<double> core = scaledDotProductAttention<double>(q, k, v);
    const double diffCore = maxAbsDiff(weights, core.weights);

    std::vector<std::string> columns = {"query"};
    for (Index j = 0; j < n; ++j)
        columns.push_back("key_" + std::to_string(j));
    columns.push_back("row_sum");
    columns.push_back("row_sum_error");
    Table table(columns);
    double worst = 0;
    for (Index i = 0; i < n; ++i) {
        std::vector<Table::Cell> row = {std::int64_t(i)};
        for (Index j = 0; j < n; ++j)
            row.emplace_back(weights(i, j));
        const double sum = numpySum(weights.row(i).data(), n);
        const double error = std::abs(sum - 1.0);
        worst = std::max(worst, error);
        row.emplace_back(sum);
        row.emplace_back(error);
        table.addRow(std::move(row));
    }
    table.notes.push_back("rows sum to 1 within " + Table::formatNumber(worst)
                          + " (|sum - 1|, float64; must be <= 1e-12)");
    table.notes.push_back("max |W - W_core| = " + Table::formatNumber(diffCore)
                          + " against attn::scaledDotProductAttention (Eigen GEMM); the tests "
                            "also compare every digit with tests/reference/e1_one_head.py");

    ExperimentResult result;
    result.table = std::move(table);
    result.matrices.push_back({"weights", "E1 weights W = softmax(QK\u1d40/\u221ad_k)", weights});
    result.matrices.push_back({"scores", "E1 scaled scores QK\u1d40/\u221ad_k", scores});
    result.matrices.push_back({"output", "E1 output O = WV", weights * v});
    result.scalars["worst_row_sum_error"] = worst;
    result.scalars["max_abs_diff_vs_core"] = diffCore;
    return result;
}

} // namespace

Entry oneHeadEntry()
{
    ExperimentInfo info;
    info.id = "E1";
    info.title = "One head, checked";
    info.paperSection = "Vaswani et al. 2017, \u00a73.2.1";
    info.note
        = "Q, K (n \u00d7 d_k) and V (n \u00d7 d_v) are drawn from the seeded generator in that "
          "order and W = softmax(QK\u1d40/\u221ad_k) is taken row by row. Every row of W "
          "is a probability distribution over the keys: its sum must be 1 to rounding "
          "(1e-12 in float64). The weights equal, digit for digit, a plain NumPy script "
          "doing the same (tests/reference/e1_one_head.py).";
    info.params = {
        seedParam(0),
        intParam("n", 5, 1, 64, "sequence length (queries = keys)"),
        intParam("d_k", 8, 1, 4096, "query/key width"),
        intParam("d_v", 4, 1, 4096, "value width"),
    };
    info.columns = {"query", "key_0",   "key_1",        "key_2", "key_3",
                    "key_4", "row_sum", "row_sum_error"}; // one key_<j> column per key: n of them
    return {info, &run};
}

} // namespace attn::experiments
