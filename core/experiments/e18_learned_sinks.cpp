// E18 — a learned sink against the first-token sink (OpenAI 2025, gpt-oss model card, attention
// sinks; Xiao et al. 2024, "Efficient Streaming Language Models with Attention Sinks", §3).

#include "core/experiments/experiments_p.h"

#include "core/analysis/metrics.h"
#include "core/attention/variants.h"
#include "core/random/random.h"

#include <algorithm>
#include <cmath>

namespace attn::experiments {

namespace {

/// The two heads of one setting (sink logit b, score spread σ) on the same draws.
struct SinkPair
{
    SinkAttentionResult<double> learned; ///< keys 1 … n_k, sink logit b
    AttentionResult<double> firstToken; ///< keys 0 … n_k, key 0's scores offset by b
};

/// q (n_q × d_k) scaled by σ, k and v ((1 + n_k) × d_k, row 0 the sink token). The learned-sink
/// head sees keys 1 … n_k; the first-token head sees all, key 0's scaled scores raised by b:
/// q and k gain one column, √d_k·b for the queries and [j = 0] for the keys, under the scale
/// 1/√d_k of the original width.
SinkPair sinkPair(const MatrixD &q, const MatrixD &k, const MatrixD &v, double b, double spread)
{
    const Index nQ = q.rows(), nK = k.rows() - 1, dK = q.cols();
    const MatrixD qs = spread * q;
    SinkPair p {learnedSinkAttention<double>(qs, k.bottomRows(nK), v.bottomRows(nK), b), {}};
    MatrixD qx(nQ, dK + 1), kx = MatrixD::Zero(nK + 1, dK + 1);
    qx.leftCols(dK) = qs;
    qx.col(dK).setConstant(std::sqrt(double(dK)) * b);
    kx.leftCols(dK) = k;
    kx(0, dK) = 1.0;
    AttentionOptions options;
    options.scaleOverride = 1.0 / std::sqrt(double(dK));
    p.firstToken = scaledDotProductAttention<double>(qx, kx, v, {}, options);
    return p;
}

ExperimentResult run(const ParamValues &pv, const RunContext &context)
{
    const Index nQ = pv.integer("queries");
    const Index nK = pv.integer("keys");
    const Index dK = pv.integer("d_k");
    const std::vector<std::int64_t> logits = pv.intList("sink_logits");
    const std::vector<std::int64_t> spreads = pv.intList("spreads");
    Generator rng(pv.seed());
    // q (n_q × d_k), then k and v ((1 + n_k) × d_k each; row 0 is the sink token).
    const MatrixD q = rng.standardNormal(nQ, dK);
    const MatrixD k = rng.standardNormal(nK + 1, dK);
    const MatrixD v = rng.standardNormal(nK + 1, dK);

    Table table({"sink_logit", "spread", "sink_mass_mean", "first_token_mass_mean",
                 "remaining_entropy_mean", "relative_weights_max_diff", "key0_output_norm_mean",
                 "output_norm_learned_mean", "output_norm_first_token_mean"});
    const double value0Norm = v.row(0).norm();
    double worstRelative = 0;
    std::size_t done = 0;
    for (const std::int64_t spread : spreads)
        for (const std::int64_t b : logits) {
            context.checkCancel();
            const SinkPair p = sinkPair(q, k, v, double(b), double(spread));
            const MatrixD &wl = p.learned.attention.weights;
            const MatrixD &wf = p.firstToken.weights;
            // The content keys' weights renormalised, against plain softmax over them.
            const MatrixD plain = scaledDotProductAttention<double>(
                                      double(spread) * q, k.bottomRows(nK), v.bottomRows(nK))
                                      .weights;
            double sinkMass = 0, firstMass = 0, entropy = 0, relative = 0, key0 = 0;
            double normLearned = 0, normFirst = 0;
            for (Index i = 0; i < nQ; ++i) {
                const double m = p.learned.sinkMass(i), w0 = wf(i, 0);
                sinkMass += m;
                firstMass += w0;
                // Renormalised by their own sums (1 − mass would cancel digits as mass → 1).
                const VectorD rest = wl.row(i).transpose() / wl.row(i).sum();
                const VectorD restFirst = wf.row(i).tail(nK).transpose() / wf.row(i).tail(nK).sum();
                entropy += entropyNats(rest.data(), nK);
                for (Index j = 0; j < nK; ++j)
                    relative = std::max({relative, std::abs(rest(j) - plain(i, j)),
                                         std::abs(restFirst(j) - plain(i, j))});
                key0 += w0 * value0Norm;
                normLearned += p.learned.attention.output.row(i).norm();
                normFirst += p.firstToken.output.row(i).norm();
            }
            const double rows = double(nQ);
            worstRelative = std::max(worstRelative, relative);
            table.addRow({std::int64_t(b), std::int64_t(spread), sinkMass / rows, firstMass / rows,
                          entropy / rows, relative, key0 / rows, normLearned / rows,
                          normFirst / rows});
            context.report(0.9 * double(++done) / double(logits.size() * spreads.size()));
        }

    const std::int64_t figureLogit = pv.integer("figure_sink_logit");
    const std::int64_t figureSpread = pv.integer("figure_spread");
    const SinkPair shown = sinkPair(q, k, v, double(figureLogit), double(figureSpread));
    MatrixD learned(nQ, nK + 1);
    learned.col(0) = shown.learned.sinkMass;
    learned.rightCols(nK) = shown.learned.attention.weights;
    const std::string setting
        = "b = " + std::to_string(figureLogit) + ", spread " + std::to_string(figureSpread);

    table.notes.push_back(
        "learned sink: w_ij = e^s_ij / (e^b + sum_k e^s_ik) over the " + std::to_string(nK)
        + " content keys, the sink mass e^b / (...) goes to no key and adds nothing to the output");
    table.notes.push_back("first-token sink: plain softmax over the sink token (key 0, its scores "
                          "raised by b) and the same keys; key 0's weight w_i0 mixes its value "
                          "(|v_0| = "
                          + Table::formatNumber(value0Norm)
                          + ") into the output: key0_output_norm_mean = mean |w_i0 v_0|");
    table.notes.push_back("both keep the other keys' relative weights: renormalised, they are "
                          "plain softmax over the content keys to "
                          + Table::formatNumber(worstRelative)
                          + "; remaining_entropy_mean (nats) is theirs");

    ExperimentResult result;
    result.table = std::move(table);
    result.scalars["relative_weights_max_diff"] = worstRelative;
    result.scalars["value0_norm"] = value0Norm;
    result.matrices.push_back({"learned_sink_weights",
                               "E18 learned sink (" + setting
                                   + "): column 0 the sink mass, then keys 1\u2026"
                                   + std::to_string(nK),
                               learned});
    result.matrices.push_back({"first_token_weights",
                               "E18 first-token sink (" + setting
                                   + "): column 0 the sink token, then keys 1\u2026"
                                   + std::to_string(nK),
                               shown.firstToken.weights});
    context.report(1.0);
    return result;
}

} // namespace

Entry learnedSinksEntry()
{
    ExperimentInfo info;
    info.id = "E18";
    info.title = "Learned sink against first-token sink";
    info.paperSection = "OpenAI 2025 (gpt-oss model card), attention sinks; Xiao et al. 2024 "
                        "(StreamingLLM), \u00a73";
    info.note
        = "A learned sink adds e^b to each row's softmax denominator: the row gives the mass "
          "e^b / (e^b + \u03a3 e^s) to no key, the other keys keep their relative weights and "
          "the output shrinks. Plain softmax can only park that mass on a real key: a first "
          "token whose scores are raised by b takes about the same share, but its value is "
          "mixed into every row's output. Swept over b and the spread (std) of the scores.";
    info.params = {
        seedParam(18),
        intParam("queries", 8, 1, 1024, "queries n_q"),
        intParam("keys", 15, 1, 4096, "content keys n_k (the first-token head has one more)"),
        intParam("d_k", 16, 1, 1024, "head width d_k (d_v = d_k)"),
        intListParam("sink_logits", "-4,-2,0,2,4,6,8", -40, 40, "sink logits b"),
        intListParam("spreads", "0,1,2,4", 0, 40,
                     "score spreads \u03c3 (the queries are multiplied by \u03c3)"),
        intParam("figure_sink_logit", 2, -40, 40, "b of the heatmaps"),
        intParam("figure_spread", 2, 0, 40, "spread \u03c3 of the heatmaps"),
    };
    info.columns = {"sink_logit",
                    "spread",
                    "sink_mass_mean",
                    "first_token_mass_mean",
                    "remaining_entropy_mean",
                    "relative_weights_max_diff",
                    "key0_output_norm_mean",
                    "output_norm_learned_mean",
                    "output_norm_first_token_mean"};
    return {info, &run};
}

} // namespace attn::experiments
