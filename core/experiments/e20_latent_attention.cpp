// E20 — multi-head latent attention (DeepSeek-AI 2024, "DeepSeek-V2", arXiv:2405.04434,
// §2.1.2–2.1.3): absorbed equals decompressed, what the cache holds, what the shared RoPE key
// does to the heads' maps.

#include "core/experiments/experiments_p.h"

#include "core/attention/variants.h"
#include "core/random/random.h"

#include <algorithm>
#include <cmath>
#include <limits>

namespace attn::experiments {

namespace {

/// DeepSeek-V3's sizes (DeepSeek-AI 2024, "DeepSeek-V3 Technical Report", §4.2): d_c = 512,
/// d_r = 64, h = 128 heads of d_h = 128; the GQA comparison takes g = 8 key/value heads.
constexpr Index kV3Latent = 512, kV3Rope = 64, kV3Heads = 128, kV3HeadDim = 128, kV3Groups = 8;

/// Mean pairwise Pearson correlation of the heads' causal maps after removing the uniform
/// causal weights: each head's vector is w_ij − 1/(i + 1) over the cells j ≤ i. NaN for one
/// head (no pair).
double headCorrelation(const std::vector<MatrixD> &maps)
{
    const Index n = maps.front().rows();
    std::vector<VectorD> centred;
    for (const MatrixD &w : maps) {
        VectorD c(n * (n + 1) / 2);
        Index t = 0;
        for (Index i = 0; i < n; ++i)
            for (Index j = 0; j <= i; ++j)
                c(t++) = w(i, j) - 1.0 / double(i + 1);
        c.array() -= c.mean();
        centred.push_back(std::move(c));
    }
    double sum = 0;
    Index pairs = 0;
    for (std::size_t a = 0; a < centred.size(); ++a)
        for (std::size_t b = a + 1; b < centred.size(); ++b) {
            sum += centred[a].dot(centred[b]) / (centred[a].norm() * centred[b].norm());
            ++pairs;
        }
    return pairs ? sum / double(pairs) : std::numeric_limits<double>::quiet_NaN(); // one head
}

/// Mean weight at each offset o = i − j (0 … n − 1), over the heads and the rows i ≥ o.
VectorD weightByOffset(const std::vector<MatrixD> &maps)
{
    const Index n = maps.front().rows();
    VectorD out = VectorD::Zero(n);
    for (Index o = 0; o < n; ++o) {
        for (const MatrixD &w : maps)
            for (Index i = o; i < n; ++i)
                out(o) += w(i, i - o);
        out(o) /= double(maps.size()) * double(n - o);
    }
    return out;
}

ExperimentResult run(const ParamValues &pv, const RunContext &context)
{
    const Index n = pv.integer("n");
    const Index dModel = pv.integer("d_model");
    const Index h = pv.integer("heads");
    const Index dC = pv.integer("latent_dim");
    const Index dH = pv.integer("head_dim");
    const std::vector<Index> ropeDims = pv.indexList("rope_dims");
    const double share = pv.real("rope_query_share");
    const Index groups = pv.integer("gqa_groups");
    for (const Index dR : ropeDims)
        if (dR % 2 != 0)
            throw InvalidArgument("E20: RoPE needs an even d_r, got " + std::to_string(dR));
    if (groups > h || h % groups != 0)
        throw InvalidArgument("E20: gqa_groups g = " + std::to_string(groups)
                              + " must divide heads = " + std::to_string(h));
    // Decompressed, absorbed and no-RoPE weights with the scores of one.
    checkMatrixMemory("E20", 4, h, n, n);
    const Index dMax = *std::max_element(ropeDims.begin(), ropeDims.end());
    Generator rng(pv.seed());
    // x (n × d_model), then W_DKV, W_UK, W_UV, W_Q, W_KR (d_model × max d_r), the shared and the
    // per-head parts of W_QR (d_model × max d_r, d_model × h·max d_r): standard normal divided
    // by √(rows).
    const MatrixD x = rng.standardNormal(n, dModel);
    const auto draw = [&](Index rows, Index cols) {
        return MatrixD(rng.standardNormal(rows, cols) / std::sqrt(double(rows)));
    };
    MlaWeights<double> w;
    w.heads = h;
    w.downKeyValue = draw(dModel, dC);
    w.upKey = draw(dC, h * dH);
    w.upValue = draw(dC, h * dH);
    w.query = draw(dModel, h * dH);
    const MatrixD ropeKeyAll = draw(dModel, dMax);
    const MatrixD ropeQueryShared = draw(dModel, dMax);
    const MatrixD ropeQueryOwn = draw(dModel, h * dMax);
    const AttentionMask mask = AttentionMask::causal(n, n);

    Table table({"rope_dim", "mla_cache_values", "mha_cache_values", "gqa_cache_values",
                 "max_abs_diff_weights", "max_abs_diff_output", "head_correlation_rope",
                 "head_correlation_no_rope", "mean_abs_weight_change"});
    ExperimentResult result;
    MatrixD byOffset(Index(ropeDims.size()) + 1, n);
    double worstWeights = 0, worstOutput = 0;
    for (std::size_t s = 0; s < ropeDims.size(); ++s) {
        context.checkCancel();
        const Index dR = ropeDims[s];
        // Head i's W_QR = ρ·shared + √(1 − ρ²)·own_i (first d_r columns of each).
        w.ropeKey = ropeKeyAll.leftCols(dR);
        w.ropeQuery.resize(dModel, h * dR);
        for (Index i = 0; i < h; ++i)
            w.ropeQuery.middleCols(i * dR, dR) = share * ropeQueryShared.leftCols(dR)
                + std::sqrt(1.0 - share * share) * ropeQueryOwn.middleCols(i * dMax, dR);
        const MlaResult<double> decompressed = mlaDecompressed<double>(x, w, mask);
        const MlaResult<double> absorbed = mlaAbsorbed<double>(x, w, mask);
        // Without the RoPE part: W_QR = 0, so q^R·k^R = 0 (the scale 1/√(d_h + d_r) stays).
        MlaWeights<double> plain = w;
        plain.ropeQuery.setZero();
        const MlaResult<double> noRope = mlaDecompressed<double>(x, plain, mask);

        double dWeights = 0, change = 0;
        for (Index i = 0; i < h; ++i) {
            const auto u = std::size_t(i);
            dWeights = std::max(dWeights, maxAbsDiff(decompressed.weights[u], absorbed.weights[u]));
            change += (decompressed.weights[u] - noRope.weights[u]).cwiseAbs().sum();
        }
        const double dOutput = maxAbsDiff(decompressed.output, absorbed.output);
        worstWeights = std::max(worstWeights, dWeights);
        worstOutput = std::max(worstOutput, dOutput);
        table.addRow({std::int64_t(dR), std::int64_t(mlaCacheValues(dC, dR)),
                      std::int64_t(keyValueCacheValues(h, dH)),
                      std::int64_t(keyValueCacheValues(groups, dH)), dWeights, dOutput,
                      headCorrelation(decompressed.weights), headCorrelation(noRope.weights),
                      change / double(h * n * (n + 1) / 2)});
        byOffset.row(Index(s) + 1) = weightByOffset(decompressed.weights).transpose();
        // The heads' maps and the no-RoPE profile at the largest d_r (its first occurrence).
        if (dR == dMax && result.matrices.empty()) {
            byOffset.row(0) = weightByOffset(noRope.weights).transpose();
            const Index shownHeads = std::min<Index>(h, 4);
            for (Index i = 0; i < shownHeads; ++i)
                result.matrices.push_back({"head" + std::to_string(i) + "_rope",
                                           "E20 head " + std::to_string(i) + ", d_r = "
                                               + std::to_string(dR) + " with RoPE part",
                                           decompressed.weights[std::size_t(i)]});
            for (Index i = 0; i < shownHeads; ++i)
                result.matrices.push_back({"head" + std::to_string(i) + "_no_rope",
                                           "E20 head " + std::to_string(i) + " without it",
                                           noRope.weights[std::size_t(i)]});
        }
        context.report(0.9 * double(s + 1) / double(ropeDims.size()));
    }
    result.matrices.push_back({"weight_by_offset",
                               "E20 mean weight by offset i \u2212 j (row 0 without RoPE part, "
                               "then one row per d_r)",
                               byOffset});

    const Index v3Mla = mlaCacheValues(kV3Latent, kV3Rope);
    const Index v3Mha = keyValueCacheValues(kV3Heads, kV3HeadDim);
    const Index v3Gqa = keyValueCacheValues(kV3Groups, kV3HeadDim);
    table.notes.push_back("absorbed (scores against the cached latent) = decompressed (k^C, v "
                          "formed per head): worst |difference| "
                          + Table::formatNumber(worstWeights) + " in the weights, "
                          + Table::formatNumber(worstOutput) + " in the outputs (float64)");
    table.notes.push_back("cache per token and layer: MLA d_c + d_r, MHA 2 h d_h, GQA 2 g d_h (g = "
                          + std::to_string(groups)
                          + "); DeepSeek-V3 sizes (d_c 512, d_r 64, h 128, "
                            "d_h 128): MLA "
                          + std::to_string(v3Mla) + ", MHA " + std::to_string(v3Mha)
                          + ", GQA g = 8 " + std::to_string(v3Gqa));
    table.notes.push_back("head_correlation: mean pairwise correlation of the heads' causal maps "
                          "minus the uniform causal weights; without the RoPE part W_QR = 0 "
                          "(same scale); rope_query_share = "
                          + Table::formatNumber(share)
                          + " (head i's W_QR = share W_shared + sqrt(1 - share^2) W_i)");
    result.table = std::move(table);
    result.scalars["max_abs_diff_weights"] = worstWeights;
    result.scalars["max_abs_diff_output"] = worstOutput;
    result.scalars["deepseek_v3_mla_cache_values"] = double(v3Mla);
    result.scalars["deepseek_v3_mha_cache_values"] = double(v3Mha);
    result.scalars["deepseek_v3_gqa8_cache_values"] = double(v3Gqa);
    context.report(1.0);
    return result;
}

} // namespace

Entry latentAttentionEntry()
{
    ExperimentInfo info;
    info.id = "E20";
    info.title = "Multi-head latent attention";
    info.paperSection = "DeepSeek-AI 2024 (DeepSeek-V2), \u00a72.1.2\u20132.1.3";
    info.note = "MLA caches one latent c = x W_DKV (d_c numbers) and one RoPE key shared by the "
                "heads (d_r) per token, instead of a key and a value per head. Absorbing W_UK "
                "into the queries scores against the latent directly: the same weights to "
                "rounding. The decoupled RoPE part adds q\u1d3f\u00b7k\u1d3f to every head's "
                "scores with the same key; the table shows how much the maps move and whether "
                "heads become more alike.";
    info.params = {
        seedParam(20),
        intParam("n", 24, 2, 1024, "tokens (queries = keys, causal)"),
        intParam("d_model", 64, 1, 4096, "model width d_model"),
        intParam("heads", 8, 1, 256, "heads h"),
        intParam("latent_dim", 32, 1, 4096, "latent width d_c"),
        intParam("head_dim", 16, 1, 1024, "head width d_h (d_v = d_h)"),
        intListParam("rope_dims", "4,8,16,32", 2, 1024, "RoPE widths d_r (even)"),
        doubleParam("rope_query_share", 0.0, 0.0, 1.0,
                    "\u03c1: head i's W_QR = \u03c1 W_shared + \u221a(1 \u2212 \u03c1\u00b2) W_i"),
        intParam("gqa_groups", 2, 1, 256, "key/value heads g of the GQA comparison"),
    };
    info.columns = {"rope_dim",
                    "mla_cache_values",
                    "mha_cache_values",
                    "gqa_cache_values",
                    "max_abs_diff_weights",
                    "max_abs_diff_output",
                    "head_correlation_rope",
                    "head_correlation_no_rope",
                    "mean_abs_weight_change"};
    return {info, &run};
}

} // namespace attn::experiments
