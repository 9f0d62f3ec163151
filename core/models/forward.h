#pragma once
// The float32 forward pass of a bound checkpoint (core/models/model.h), one function per step
// (embed, norm, attention, MLP, unembed), the families differing by their config rather than by
// copied code (after karpathy/llama2.c run.c forward() and jaymody/picoGPT gpt2.py):
//
//   x = E[ids] (+ P[pos] for GPT-2/BERT) (+ T[0] and LayerNorm for BERT)
//   pre-LN (GPT-2, Llama, Qwen):  x += attn(norm₁(x));  x += mlp(norm₂(x))
//   post-LN (BERT):               x = LN(x + attn(x));  x = LN(x + mlp(x))
//   hidden = final norm(x) (BERT: x);  logits = hidden · Eᵀ (or lm_headᵀ; BERT: the MLM head)
//
// Attention (Vaswani et al. 2017, §3.2): q = x W_qᵀ + b_q (n × h·d_k), k, v (n × g·d_k); Qwen3
// RMS-normalises each head's q and k over d_k; RoPE rotates q and k in Hugging Face's
// rotate_half layout (planes (i, i + d_k/2); core/attention/positional.h) with the config's
// frequencies (ropeFrequencies: default, linear, llama3); query head i reads key/value head
// ⌊i·g/h⌋ (GQA, Ainslie et al. 2023); weights = softmax(q kᵀ/√d_k + mask) with a causal mask
// (none for BERT; Qwen2's sliding window on layers ≥ max_window_layers); out = Σ weights·v,
// concatenated, times W_oᵀ. MLP: GPT-2/BERT act(x W₁ + b₁) W₂ + b₂ with GELU (tanh or erf);
// Llama/Qwen down(silu(gate(x)) ⊙ up(x)) (Shazeer 2020). Norms: LayerNorm (Ba et al. 2016),
// RMSNorm x·rsqrt(mean(x²) + eps)·w (Zhang & Sennrich 2019). As in Hugging Face transformers'
// modeling_gpt2.py, modeling_llama.py, modeling_qwen2.py, modeling_qwen3.py, modeling_bert.py.
//
// Every layer's post-RoPE queries and keys are kept per head, so the window's engine and the
// tile engine can draw any layer × head from them; attention weights are kept only for the
// layer/head pairs asked for (h·n² floats per layer otherwise).

#include "core/attention/mask.h"
#include "core/base/cancel.h"
#include "core/base/types.h"
#include "core/models/model.h"

#include <cstdint>
#include <functional>
#include <string_view>
#include <vector>

namespace attn::models {

/// How ForwardOptions::ablate replaces a head's output.
enum class Ablation { Zero, Mean };

/// "zero" / "mean" → Ablation; throws InvalidArgument naming both otherwise.
Ablation ablationFromName(std::string_view name);
const char *ablationName(Ablation ablation);

struct ForwardOptions
{
    /// Which layer/head pairs keep their attention weights (n × n); none when empty.
    std::function<bool(Index layer, Index head)> keepWeights;
    /// Keep every layer's post-RoPE queries and keys (default); false frees them per layer.
    bool keepQueriesKeys = true;
    /// Called after each layer with (layers done, layers in total), on the calling thread.
    std::function<void(Index done, Index total)> progress;
    /// Polled before every layer and before the logits; cancelling throws Cancelled.
    CancelToken cancel;
    /// Compute the logits (n × vocab); false leaves ForwardResult::logits 0 × 0.
    bool logits = true;
    /// Compute only the last position's logits (1 × vocab): the next-token readout without
    /// n × vocab floats (1.6 GB for GPT-2's vocabulary at n = 8 192).
    bool lastLogitsOnly = false;
    /// Keep each layer's output, the residual stream after it (n × hidden), in
    /// ForwardResult::residual (what the rank-collapse residual of Dong et al. 2021 measures).
    bool keepResidual = false;
    /// Keep every layer's values per key/value head (n × d_k, after the bias) in
    /// LayerAttention::values (what value-weighted norms need).
    bool keepValues = false;
    /// Head ablation: the heads for which this returns true have their output o (Σ_j A_ij v_j,
    /// n × d_k) replaced before the output projection W_O as `ablation` says (their weights are
    /// then not computed, so not kept); none when empty.
    std::function<bool(Index layer, Index head)> ablate;
    /// What an ablated head's output becomes: 0 (zero ablation, Michel et al. 2019), or every row
    /// the mean of the head's n output rows on this input, ō = (1/n) Σ_i o_i (mean ablation over
    /// the sequence's positions: the head keeps its average contribution and loses what differs
    /// between positions, as TransformerLens users mean-ablate over a reference batch).
    Ablation ablation = Ablation::Zero;
};

/// One layer's attention, per head.
struct LayerAttention
{
    /// h matrices n × d_k: each query head's rows after projection, Qwen3's q_norm and RoPE
    /// (what is multiplied with the keys; the scale 1/√d_k is not applied).
    std::vector<MatrixF> queries;
    /// g matrices n × d_k: each key/value head's keys after projection, k_norm and RoPE.
    std::vector<MatrixF> keys;
    /// h matrices n × n (softmax rows, query i × key j) for the heads kept, 0 × 0 for the others.
    std::vector<MatrixF> weights;
    /// g matrices n × d_k: each key/value head's values (x W_vᵀ + b_v) with keepValues, else
    /// none.
    std::vector<MatrixF> values;
    bool slidingWindow = false; ///< this layer used the sliding window
};

struct ForwardResult
{
    std::vector<std::int64_t> ids; ///< the n token ids
    std::vector<LayerAttention> layers; ///< one per layer
    /// With keepResidual: one n × hidden matrix per layer, the residual stream after it (before
    /// the final norm; BERT: after the layer's second LayerNorm). Empty otherwise.
    std::vector<MatrixF> residual;
    MatrixF hidden; ///< n × hidden: after the final norm (BERT: the last layer's output)
    MatrixF logits; ///< n × vocab (1 × vocab with lastLogitsOnly), unnormalised next-token
                    ///< scores (BERT: masked-LM scores)
    Index kvHeads = 0; ///< g; query head i reads keys[kvHeadOf(i)]
    double scale = 1.0; ///< 1/√d_k, applied to q kᵀ before the mask and softmax

    /// Key/value head that query head `head` reads: ⌊head·g/h⌋.
    Index kvHeadOf(Index head, Index heads) const { return head * kvHeads / heads; }
};

/// The attention mask of layer `layer` for n tokens: causal (TopLeft), Qwen2's sliding window
/// (query i sees keys i − w < j ≤ i) on the layers that use it, none for BERT. Throws
/// InvalidArgument for n < 0.
AttentionMask layerMask(const ModelConfig &config, Index layer, Index n);

/// The attention weights (n × n, softmax rows) of one layer and head, computed again from the
/// queries and keys kept in `result` (ForwardOptions::keepQueriesKeys): softmax(q kᵀ·scale +
/// layerMask), equal to what forward() keeps with keepWeights. Lets a viewer draw any
/// layer × head without keeping every n × n matrix. Throws InvalidArgument for a layer or head
/// out of range or a result without queries and keys.
MatrixF headWeights(const ForwardResult &result, const ModelConfig &config, Index layer,
                    Index head);

/// Runs the model on `ids` (n ≥ 1 token ids, each in [0, vocab); GPT-2 and BERT also need
/// n ≤ their learned positions; BERT's token types are all 0). Returns the per-layer queries,
/// keys and requested weights, the final hidden states and the logits (see ForwardResult).
/// Throws ModelError naming the offending id/length, ModelError from weight reads, NonFiniteInput
/// when a layer produces NaN/Inf, Cancelled when options.cancel says so.
ForwardResult forward(const Model &model, const std::vector<std::int64_t> &ids,
                      const ForwardOptions &options = {});

} // namespace attn::models
