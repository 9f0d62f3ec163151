#pragma once
// The vectors of one session's attention layer, step by step, as Transformer Explainer draws
// them: token embeddings and positions, their sum, each head's query, key and value, the head's
// output (its weights times its values), the heads side by side and the output projection.
// Vaswani et al. 2017 §3.2.2 (multi-head attention: MultiHead(Q, K, V) = Concat(head_1, …,
// head_h) W^O, head_i = Attention(Q W_i^Q, K W_i^K, V W_i^V)) and §3.5 (positions); the layer,
// its inputs and the draw order are the session's (sessioninputs.h), the weights the engine's.

#include "core/base/types.h"
#include "core/engine/engineparameters.h"

#include <vector>

namespace attn {

/// Every matrix is row-major, float64 (a float32 session's values widened exactly).
struct AttentionPipeline
{
    /// n_q × d_model: the query-side rows before positions (drawn, or a typed token's
    /// embedding).
    MatrixD embeddings;
    /// n_q × d_model: the sinusoidal positions added to them (§3.5); zeros without positional.
    MatrixD positions;
    /// n_q × d_model: embeddings + positions, the layer's query-side input X.
    MatrixD input;
    /// n_k × d_model: the key and value side's input (the encoder's for encoder–decoder
    /// attention, else `input`).
    MatrixD source;
    /// h × (n_q × d_k): q_i = X W_Q,iᵀ + b_Q,i, rotated when RoPE is on.
    std::vector<MatrixD> queries;
    /// h × (n_k × d_k): the key head query head i reads (grouped-query heads: the mean of its
    /// group, as the engine pools them), rotated when RoPE is on.
    std::vector<MatrixD> keys;
    /// h × (n_k × d_k): v_i = S W_V,iᵀ + b_V,i (pooled like the keys for grouped-query heads).
    std::vector<MatrixD> values;
    /// h × (n_q × d_k): head_i = weights_i · v_i.
    std::vector<MatrixD> headOutputs;
    /// n_q × d_model: [head_0 … head_{h−1}] side by side.
    MatrixD concatenated;
    /// n_q × d_model: concatenated W_Oᵀ + b_O, the layer's output.
    MatrixD output;
};

/// The pipeline of the session `p` whose engine weights (h × (n_q × n_k), EngineResult::weights)
/// are `weights`, computed in p.dtype. Throws InvalidArgument when `p` is invalid (p.check())
/// or `weights` do not have h matrices of n_q × n_k. Cost: 2·(n_q + 2·n_k)·d_model² +
/// 2·n_q·n_k·d_model + 2·n_q·d_model² flops.
AttentionPipeline attentionPipeline(const EngineParameters &p, const std::vector<MatrixD> &weights);

} // namespace attn
