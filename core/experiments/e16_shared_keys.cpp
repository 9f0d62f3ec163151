// E16 — heads that share keys: grouped-query and multi-query attention (Ainslie et al. 2023,
// GQA, arXiv:2305.13245, §2; Shazeer 2019, arXiv:1911.02150).

#include "core/experiments/experiments_p.h"

#include "core/attention/groupedattention.h"
#include "core/random/random.h"

#include <cmath>

namespace attn::experiments {

namespace {

/// W (h·d_k × d_model, head i = rows i·d_k …) mean-pooled to g heads: kv head c is the mean of
/// the heads c·h/g … (c+1)·h/g − 1 (meanPoolHeads on Wᵀ).
MatrixD meanPooledHeads(const MatrixD &w, Index h, Index g)
{
    return meanPoolHeads<double>(w.transpose(), h, g).transpose();
}

ExperimentResult run(const ParamValues &pv, const RunContext &context)
{
    const Index n = pv.integer("n");
    const Index d = pv.integer("d_model");
    const Index h = pv.integer("heads");
    const std::vector<Index> kvList = pv.indexList("kv_heads_list");
    const Index cacheTokens = pv.integer("cache_tokens");
    const Index bytes = pv.integer("bytes_per_element");
    if (d % h != 0)
        throw InvalidArgument("E16: heads = " + std::to_string(h)
                              + " does not divide d_model = " + std::to_string(d));
    for (const Index g : kvList)
        if (g > h || h % g != 0)
            throw InvalidArgument("E16: kv heads g = " + std::to_string(g)
                                  + " must divide heads = " + std::to_string(h));
    const Index dK = d / h;
    // The reference's weights, one g's and the scores being computed.
    checkMatrixMemory("E16", 3, h, n, n);
    Generator rng(pv.seed());
    // x: n × d_model; W_Q, W_K, W_V: d_model × d_model each (uniform ±1/√d_model), in that order.
    const MatrixD x = rng.standardNormal(n, d);
    const auto uniform = [&](Index rows, Index cols) {
        MatrixD m(rows, cols);
        const double bound = 1.0 / std::sqrt(double(d));
        for (Index i = 0; i < rows; ++i)
            for (Index j = 0; j < cols; ++j)
                m(i, j) = bound * (2.0 * rng.random() - 1.0);
        return m;
    };
    const MatrixD wq = uniform(d, d), wk = uniform(d, d), wv = uniform(d, d);
    const MatrixD q = x * wq.transpose(); // n × h·d_k, the same queries for every g
    const AttentionMask mask = AttentionMask::causal(n, n);
    const GroupedAttentionResult<double> reference
        = groupedQueryAttention<double>(q, x * wk.transpose(), x * wv.transpose(), h, h, mask);

    Table table(
        {"kv_heads", "parameters", "kv_cache_bytes", "kv_cache_mib", "mean_abs_dw", "max_abs_dw"});
    ExperimentResult result;
    for (std::size_t s = 0; s < kvList.size(); ++s) {
        context.checkCancel();
        const Index g = kvList[s];
        const MatrixD k = x * meanPooledHeads(wk, h, g).transpose(); // n × g·d_k
        const MatrixD v = x * meanPooledHeads(wv, h, g).transpose();
        const GroupedAttentionResult<double> r = groupedQueryAttention<double>(q, k, v, h, g, mask);
        double sum = 0, worst = 0;
        for (Index i = 0; i < h; ++i) {
            const MatrixD diff
                = (r.weights[std::size_t(i)] - reference.weights[std::size_t(i)]).cwiseAbs();
            sum += diff.sum();
            worst = std::max(worst, diff.maxCoeff());
        }
        const double mean = sum / double(h * n * n);
        const Index cache = cacheTokens * kvCacheBytesPerToken(g, dK, bytes);
        table.addRow({std::int64_t(g), std::int64_t(groupedQueryParameterCount(d, h, g, false)),
                      std::int64_t(cache), double(cache) / (1024.0 * 1024.0), mean, worst});
        result.matrices.push_back({"head0_g" + std::to_string(g),
                                   "E16 head 0 weights, g = " + std::to_string(g),
                                   r.weights.front()});
        context.report(double(s + 1) / double(kvList.size()));
    }
    table.notes.push_back(
        "h = " + std::to_string(h) + " query heads (d_k = " + std::to_string(dK)
        + ") from the same W_Q; g key/value heads mean-pooled from the h heads' W_K, W_V (GQA "
          "2.1); parameters without biases; KV cache = "
        + std::to_string(cacheTokens) + " tokens x 2 g d_k x " + std::to_string(bytes)
        + " bytes per layer; dW against g = h, causal mask");
    result.table = std::move(table);
    return result;
}

} // namespace

Entry sharedKeysEntry()
{
    ExperimentInfo info;
    info.id = "E16";
    info.title = "Heads that share keys";
    info.paperSection = "Ainslie et al. 2023 (GQA), \u00a72; Shazeer 2019 (MQA)";
    info.note = "Grouped-query attention lets h query heads share g key/value heads (query head i "
                "reads kv head \u230ai\u00b7g/h\u230b). The queries stay the same; W_K and W_V "
                "shrink to g heads (mean-pooled from the h heads, as GQA converts a checkpoint), "
                "which shrinks the parameter count a little and the KV cache by h/g, and moves "
                "the weights by the mean |\u0394W| shown.";
    info.params = {
        seedParam(16),
        intParam("n", 32, 1, 2048, "tokens (queries = keys)"),
        intParam("d_model", 64, 1, 4096, "model width d_model"),
        intParam("heads", 8, 1, 256, "query heads h"),
        intListParam("kv_heads_list", "8,2,1", 1, 256, "key/value head counts g (divide h)"),
        intParam("cache_tokens", 4096, 1, 1 << 24, "tokens held in the KV cache"),
        intParam("bytes_per_element", 2, 1, 8, "bytes per cached number (2 = float16)"),
    };
    info.columns
        = {"kv_heads", "parameters", "kv_cache_bytes", "kv_cache_mib", "mean_abs_dw", "max_abs_dw"};
    return {info, &run};
}

} // namespace attn::experiments
