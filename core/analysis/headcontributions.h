#pragma once
// What a head contributes, beyond where its weights point: value-weighted norms, attention
// rollout and head ablation. Everything here is float64 post-processing of a model's forward
// (core/models/forward.h) or of plain matrices; the functions that take a Model read its weights.
//
// Value-weighted norms (Kobayashi et al. 2020, "Attention is Not Only a Weight: Analyzing
// Transformers with Vector Norms", §3): head h's output at query i is Σ_j A_ij f(x_j) with
// f(x_j) = v_j W_O^h, v_j the head's value (x_j W_V + b_V, 1 × d_k) and W_O^h its d_k × d_model
// slice of the output projection (rows h·d_k … (h+1)·d_k − 1 of W_O as x·W_O applies it: GPT-2's
// Conv1D stores W_O so, [in, out]; nn.Linear stores its transpose, [out, in], so there it is the
// columns). The bias b_O is added once per layer, not per head, and is left out. The norm
//   N_ij = ‖A_ij · v_j W_O^h‖₂ = A_ij ‖v_j W_O^h‖₂   (A_ij ≥ 0)
// says how much key j moves query i's output, where A_ij alone says only where the head looks:
// a head with much weight on the first key but small ‖v_0 W_O^h‖ does little with it.
// Summaries per head, means over the queries i whose row Σ_j N_ij is not 0:
//   value-norm sink:  N_i0 / Σ_j N_ij, the share of the head's norm mass on the first key (to
//                     read beside the sink score mean_i A_i0 of headscores.h: a "no-op" sink head
//                     has a large sink score and a small value-norm sink)
//   value-norm mass:  Σ_j N_ij, the summed norm of what the head adds to a query's output (an
//                     upper bound of ‖Σ_j A_ij v_j W_O^h‖₂)
//
// Attention rollout (Abnar & Zuidema 2020, "Quantifying Attention Flow in Transformers", §3):
// per layer l, Â_l = 0.5·Ā_l + 0.5·I with Ā_l the mean of the layer's heads' weights (n × n),
// each row of Â_l divided by its sum; rollout = Â_L · … · Â_1 (n × n): row i is how much of
// the last layer's token i flows from each input token j through the residual connections.
//
// Head ablation (as in Michel et al. 2019, "Are Sixteen Heads Really Better than One?"): the
// head's output o_i = Σ_j A_ij v_j is set to 0 before W_O (ForwardOptions::ablate), or, mean
// ablation, every o_i to the head's mean output over the positions (1/n) Σ_k o_k
// (ForwardOptions::ablation); the next-token
// distribution at the last position p (original) is compared with q (ablated) by
//   KL(p ‖ q) = Σ_t p_t (ln p_t − ln q_t)   in nats, p, q = softmax of the float32 logits in
// float64; and by the most probable token before and after.

#include "core/base/types.h"
#include "core/models/forward.h"
#include "core/models/model.h"

#include <cstdint>
#include <optional>
#include <vector>

namespace attn {

/// W_O^h of (layer, head): d_k × d_model, the rows of the output projection (as x·W_O applies
/// it) that head `head`'s d_k outputs multiply, widened to float64. Throws InvalidArgument for
/// a layer or head out of range, ModelError from the weight reads.
MatrixD headOutputProjection(const models::Model &model, Index layer, Index head);

/// N (n × n), N_ij = A_ij ‖v_j W_O^h‖₂ for weights A (n_q × n_k), values (n_k × d_k) and
/// outputProjection W_O^h (d_k × d_model). Throws InvalidArgument naming the sizes when they do
/// not fit together.
MatrixD valueWeightedNorms(const MatrixD &weights, const MatrixD &values,
                           const MatrixD &outputProjection);

/// The two per-head summaries of value-weighted norms N (see the file's comment).
struct ValueNormSummary
{
    double sink = 0; ///< mean_i N_i0 / Σ_j N_ij (NaN when every row sums to 0)
    double mass = 0; ///< mean_i Σ_j N_ij (NaN when every row sums to 0)
};
ValueNormSummary summarizeValueNorms(const MatrixD &norms);

/// Rollout Â_L ⋯ Â_1 (n × n) of per-layer head-mean weights `layerMeans` (L ≥ 1 matrices
/// n × n, Ā_l): Â_l = 0.5·Ā_l + 0.5·I with rows renormalised. Throws InvalidArgument for no
/// layers or matrices that are not all n × n.
MatrixD attentionRollout(const std::vector<MatrixD> &layerMeans);

/// KL(p ‖ q) in nats of p = softmax(logitsP), q = softmax(logitsQ) (equal sizes ≥ 1), in
/// float64 with log-sum-exp. Throws InvalidArgument for sizes that differ or are 0.
double klDivergenceOfLogits(const VectorD &logitsP, const VectorD &logitsQ);

/// Head ablation of every (layer, head) on `ids` (see the file's comment).
struct HeadAblation
{
    std::int64_t top1 = -1; ///< the most probable next token of the whole model
    MatrixD kl; ///< layers × heads: KL(p ‖ q) in nats
    Eigen::Matrix<std::int64_t, Eigen::Dynamic, Eigen::Dynamic, Eigen::RowMajor>
        top1Ablated; ///< layers × heads: the most probable next token with the head ablated
};

/// Runs the model once as it is and once per (layer, head) with that head ablated as `how`
/// says (1 + L·h forwards, each only the last position's logits). Throws ModelError for a model
/// without a language-model head, and what forward() throws.
HeadAblation ablateHeads(const models::Model &model, const std::vector<std::int64_t> &ids,
                         models::Ablation how = models::Ablation::Zero,
                         const CancelToken &cancel = {});

/// The sequences prefix matching runs on: `draws` times, `tokens` ids drawn one at a time with
/// numpy.random.default_rng(seed).integers(0, vocab), repeated twice, after `bos` when given
/// (n = b + 2·tokens). Throws InvalidArgument for vocab, tokens or draws < 1.
std::vector<std::vector<std::int64_t>> prefixMatchingSequences(Index vocab, Index tokens,
                                                               Index draws, std::uint64_t seed,
                                                               std::optional<std::int64_t> bos);

/// Olsson et al.'s prefix-matching score (prefixMatchingScores, headscores.h) of every
/// (layer, head) of the model, averaged over the prefixMatchingSequences() draws: layers ×
/// heads. Throws what forward() throws (e.g. a sequence longer than GPT-2's positions).
MatrixD modelPrefixMatching(const models::Model &model, Index tokens, Index draws,
                            std::uint64_t seed, std::optional<std::int64_t> bos,
                            const CancelToken &cancel = {});

/// The rank-collapse residual (rankCollapseResidual, headscores.h) of each layer's output
/// (ForwardResult::residual, kept with ForwardOptions::keepResidual): L values. Throws
/// InvalidArgument when the result kept no residual stream.
std::vector<double> layerRankCollapse(const models::ForwardResult &result);

} // namespace attn
