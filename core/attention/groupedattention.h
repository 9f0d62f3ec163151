#pragma once
// Grouped-query attention on already-projected heads, with the position schemes that act inside
// attention (RoPE, ALiBi; core/attention/positional.h).
//
// Grouped-query attention (Ainslie et al. 2023, GQA, arXiv:2305.13245, §2.2): h query heads
// share g key/value heads (g divides h); query head i uses key/value head ⌊i·g/h⌋, as
// torch.repeat_interleave(k, h / g, dim=heads) does before scaled dot-product attention
// (Hugging Face's repeat_kv). g = h is multi-head attention (Vaswani et al. 2017, §3.2.2),
// g = 1 multi-query attention (Shazeer 2019, arXiv:1911.02150).
// Inputs are row-major and already projected:
//   query n_q × h·d_k, key n_k × g·d_k, value n_k × g·d_v; head i is columns i·d_k … (i+1)·d_k−1.

#include "core/attention/attention.h"
#include "core/attention/mask.h"
#include "core/attention/positional.h"
#include "core/base/types.h"

#include <cstdint>
#include <vector>

namespace attn {

/// Positions applied inside grouped-query attention.
struct PositionOptions
{
    /// Rope rotates every head's queries and keys, Alibi adds each head's bias to its scaled
    /// scores. None and Sinusoidal change nothing here (a sinusoidal encoding is added to the
    /// inputs before the projections, see sinusoidalEncoding).
    PositionalScheme scheme = PositionalScheme::None;
    RopeConvention ropeConvention = RopeConvention::Half;
    double ropeBase = kRopeDefaultBase;
    Index queryFirstPosition = 0; ///< position of query row 0 (RoPE and ALiBi)
    Index keyFirstPosition = 0; ///< position of key row 0 (RoPE and ALiBi)
};

template<typename T> struct GroupedAttentionResult
{
    Matrix<T> output; ///< n_q × h·d_v, the heads' outputs side by side (before any W_O)
    std::vector<Matrix<T>> weights; ///< h matrices n_q × n_k
    std::vector<Matrix<T>> scores; ///< h matrices n_q × n_k, raw q_i k_iᵀ (after RoPE)
    std::vector<Matrix<T>> scaledScores; ///< h matrices n_q × n_k, scaled + bias + mask fill
    std::vector<std::vector<std::uint8_t>> fullyMasked; ///< h × n_q flags
    std::vector<double> alibiSlopes; ///< h slopes with ALiBi, else empty
    std::vector<Index> kvHeadOf; ///< h entries: the key/value head each query head reads
    double scale = 1.0; ///< scale applied in every head
};

/// Key/value head of query head i: ⌊i·g/h⌋. Throws InvalidArgument unless 1 ≤ g ≤ h, g divides
/// h and 0 ≤ i < h.
Index kvHeadOf(Index queryHead, Index heads, Index kvHeads);

/// Throws InvalidArgument naming both numbers unless h ≥ 1, 1 ≤ g ≤ h and g divides h.
void checkKvHeads(Index heads, Index kvHeads);

/// Projected heads pooled into g key/value heads (GQA §2.1, converting a multi-head checkpoint:
/// the heads' W_K, W_V rows mean-pooled; the projection is linear, so pooling the projected
/// heads is the same): x is n × h·d_k (head i = columns i·d_k … (i+1)·d_k − 1), the result
/// n × g·d_k with head c the mean of heads c·h/g … (c+1)·h/g − 1, summed in head order. g = h
/// returns x. Throws InvalidArgument for a bad g (checkKvHeads) or columns not a multiple of h.
template<typename T> Matrix<T> meanPoolHeads(const Matrix<T> &x, Index heads, Index kvHeads);

/// Parameters of a grouped-query attention layer of width d_model with h query heads and g
/// key/value heads, d_k = d_model / h: W_Q d_model × d_model, W_K and W_V g·d_k × d_model each,
/// W_O d_model × d_model, plus biases d_model + 2·g·d_k + d_model when `bias`.
/// g = h gives torch.nn.MultiheadAttention's 4·d_model² + 4·d_model.
/// Throws InvalidArgument for d_model < 1, h not dividing d_model or a bad g.
Index groupedQueryParameterCount(Index dModel, Index heads, Index kvHeads, bool bias = true);

/// Bytes a key/value cache holds per token and layer: 2 · g · d_k · bytesPerElement (keys and
/// values of every key/value head; d_v = d_k). Throws InvalidArgument for g, d_k or
/// bytesPerElement < 1 or when the product does not fit in 63 bits.
Index kvCacheBytesPerToken(Index kvHeads, Index dK, Index bytesPerElement);

/// Grouped-query scaled dot-product attention over h query heads and g key/value heads (see the
/// file comment for the layout). Per head: RoPE on q and k (scheme Rope), scores q kᵀ, scaled
/// by effectiveScale(d_k, options), plus −m_h·(p_i − p_j) with ALiBi (−m_h·|p_i − p_j| when the
/// mask has no causal component), then `mask`, softmax, times v. Fully masked rows give zero
/// weights and a flag. Throws InvalidArgument naming the shapes when the columns are not h and
/// g heads of equal width, when g does not divide h, for an odd d_k with RoPE, or a mask that
/// does not fit n_q × n_k; NonFiniteInput on NaN/Inf inputs.
template<typename T>
GroupedAttentionResult<T>
groupedQueryAttention(const ConstMatrixRef<T> &query, const ConstMatrixRef<T> &key,
                      const ConstMatrixRef<T> &value, Index heads, Index kvHeads,
                      const AttentionMask &mask = {}, const AttentionOptions &options = {},
                      const PositionOptions &positions = {});

/// Σ_{j < sinks} w_ij for every row of weights (n_q × n_k): the weight mass on the attention
/// sinks, as StreamingLLM measures it (Xiao et al. 2023, §3.1). Returns n_q values; sinks is
/// clamped to n_k. Throws InvalidArgument for sinks < 0.
template<typename T> VectorD sinkWeightMass(const Matrix<T> &weights, Index sinks);

} // namespace attn
