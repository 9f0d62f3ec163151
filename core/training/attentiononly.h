#pragma once
// An attention-only transformer trained on next-token prediction: the model in which induction
// heads were first described (Elhage et al. 2021, "A Mathematical Framework for Transformer
// Circuits", §2 "attention-only transformers"; Olsson et al. 2022, "In-context Learning and
// Induction Heads", §2 and §3 "two-layer attention-only models").
//
// Tokens are ids in [0, V). A batch holds B sequences of n tokens, stored stacked: row b·n + t
// of every (B·n) × … matrix is token t of sequence b. With E = d_model:
//   x_0     = W_E[token] + W_pos[t]                                  (B·n) × E
//   x_{l+1} = x_l + Attn_l(x_l),  l = 0 … L−1                        (B·n) × E
//   logits  = x_L · W_U                                              (B·n) × V
// Attn_l is one multi-head self-attention layer of core/training/layer.h in
// torch.nn.MultiheadAttention's layout (in_proj_weight 3E × E, in_proj_bias 3E, out_proj_weight
// E × E, out_proj_bias E; h heads of d_k = E/h), with the causal mask (token t attends to
// 0 … t) and the scale 1/√d_k: torch.nn.MultiheadAttention(E, h, batch_first=True) called with
// attn_mask = the strict upper triangle. No LayerNorm and no MLP: the residual stream is the
// sum of the embeddings and every head's output, as in Elhage et al.'s attention-only models.
//
// Loss: the cross-entropy (nats) of the next token, averaged over the queries t =
// firstScoredQuery … n−2 of every sequence (query t predicts token t + 1).
//
// Backward (hand-written; checked against PyTorch autograd in tests/core/tst_attentiononly.cpp
// with fixtures of tests/reference/make_induction_fixtures.py):
//   dlogits = (softmax(logits) − onehot(next token)) / scored queries on scored rows, else 0
//   dW_U = x_Lᵀ dlogits,  dx_L = dlogits W_Uᵀ
//   layer l (core/training/layer.h backwardInto with dY = dx_{l+1}):
//       dx_l = dx_{l+1} + dQKV_l · in_proj_weight_l       (the residual path plus the layer's)
//   dW_pos[t] = Σ_b dx_0[b·n + t],  dW_E[v] = Σ over rows holding token v of dx_0

#include "core/training/layer.h"

#include <cstdint>
#include <span>
#include <string>
#include <vector>

namespace attn::training {

/// Shape of the model.
struct AttentionOnlyConfig
{
    Index vocab = 64; ///< V, token ids 0 … V−1
    Index dModel = 64; ///< E = d_model
    Index heads = 2; ///< h per layer, must divide d_model
    Index layers = 2; ///< L attention layers
    Index maxLength = 32; ///< rows of W_pos: the longest sequence the model takes

    Index headDim() const { return dModel / heads; } ///< d_k = E / h
    /// The attention layers' options: E, h, causal, scale 1/√d_k, no positions.
    LayerConfig layerConfig() const;
    /// Throws InvalidArgument naming the field and its value: vocab < 2, d_model < 1, h < 1 or
    /// not dividing d_model, layers < 1, maxLength < 2, or a model of more than 2^28 parameters.
    void validate() const;
};

/// The parameters (also used for their gradients).
template<typename T> struct AttentionOnlyParameters
{
    Matrix<T> embedding; ///< W_E, V × E, row v = token v's embedding
    Matrix<T> positions; ///< W_pos, maxLength × E, row t = position t's embedding
    std::vector<Parameters<T>> layers; ///< L attention layers (layer.h layout)
    Matrix<T> unembedding; ///< W_U, E × V

    /// All zeros, shaped for `config` (validated first).
    static AttentionOnlyParameters zeros(const AttentionOnlyConfig &config);
    /// Throws InvalidArgument naming the tensor and both shapes unless shaped for `config`.
    void checkShapes(const AttentionOnlyConfig &config) const;
    /// Number of parameters: V·E + maxLength·E + L·(4E² + 4E) + E·V.
    Index count() const;
    /// Every array in the order of tensorNames(): W_E, W_pos, then per layer in_proj_weight,
    /// in_proj_bias, out_proj_weight, out_proj_bias, then W_U (row-major data).
    std::vector<std::span<T>> tensors();
    std::vector<std::span<const T>> tensors() const;
    /// "embedding", "positions", "layer0.in_proj_weight", …, "unembedding" for `layers` layers.
    static std::vector<std::string> tensorNames(Index layers);
    template<typename U> AttentionOnlyParameters<U> cast() const
    {
        AttentionOnlyParameters<U> p;
        p.embedding = embedding.template cast<U>();
        p.positions = positions.template cast<U>();
        for (const Parameters<T> &l : layers)
            p.layers.push_back(l.template cast<U>());
        p.unembedding = unembedding.template cast<U>();
        return p;
    }
};

/// The initial parameters: numpy.random.default_rng(seed).normal(0, std, shape) for W_E, W_pos,
/// then per layer in_proj_weight and out_proj_weight, then W_U, in that order; biases zero.
/// Throws InvalidArgument for a bad config or std < 0 or not finite.
AttentionOnlyParameters<double> initialAttentionOnly(const AttentionOnlyConfig &config,
                                                     std::uint64_t seed, double std);

/// B sequences of n token ids.
struct TokenBatch
{
    Index batch = 0; ///< B
    Index length = 0; ///< n
    std::vector<std::int64_t> tokens; ///< B·n ids, token t of sequence b at b·n + t
    /// The loss averages the queries t = firstScoredQuery … n−2 of every sequence.
    Index firstScoredQuery = 0;

    /// Throws InvalidArgument naming the numbers unless B ≥ 1, 2 ≤ n ≤ config.maxLength,
    /// tokens.size() = B·n, every id in [0, V) and 0 ≤ firstScoredQuery ≤ n − 2.
    void validate(const AttentionOnlyConfig &config) const;
    /// Scored queries: B · (n − 1 − firstScoredQuery).
    Index scoredQueries() const { return batch * (length - 1 - firstScoredQuery); }
};

/// What the backward pass needs from the forward pass.
template<typename T> struct AttentionOnlyCache
{
    /// Layer l's cache (layer.h): its input x_l is layers[l].x, its weights
    /// layers[l].weights[b·h + head] (n × n), its output Attn_l(x_l) layers[l].output.
    std::vector<ForwardCache<T>> layers;
    Matrix<T> last; ///< x_L, (B·n) × E
    Matrix<T> logits; ///< (B·n) × V
};

/// Forward pass into `cache` (storage reused when the shapes repeat). Throws InvalidArgument
/// for a bad config, parameters of other shapes or a bad batch (TokenBatch::validate).
template<typename T>
void attentionOnlyForward(const AttentionOnlyConfig &config,
                          const AttentionOnlyParameters<T> &params, const TokenBatch &batch,
                          AttentionOnlyCache<T> &cache);

/// The mean next-token cross-entropy (nats) of the cached logits over the batch's scored queries.
template<typename T>
double attentionOnlyLoss(const AttentionOnlyCache<T> &cache, const TokenBatch &batch);

/// Intermediate arrays of the backward pass, kept between calls.
template<typename T> struct AttentionOnlyScratch
{
    Matrix<T> dLogits; ///< (B·n) × V
    Matrix<T> dResidual; ///< (B·n) × E
    Matrix<T> dInput; ///< (B·n) × E, one layer's path into its input
    BackwardScratch<T> layer;
};

/// Gradients of attentionOnlyLoss with respect to every parameter, written into `grads`
/// (resized, storage reused), from the cache of attentionOnlyForward on the same batch.
template<typename T>
void attentionOnlyBackward(const AttentionOnlyConfig &config,
                           const AttentionOnlyParameters<T> &params, const TokenBatch &batch,
                           const AttentionOnlyCache<T> &cache, AttentionOnlyParameters<T> &grads,
                           AttentionOnlyScratch<T> &scratch);

} // namespace attn::training
