#pragma once
// Attention as the models of 2025 compute it, on already-projected heads (query n_q × d_k, key
// n_k × d_k, value n_k × d_v, row-major), each beside scaled dot-product attention
// (core/attention/attention.h) whose scores, scale and masks it keeps:
//
// Learned sinks (OpenAI's gpt-oss, "attention sinks" as a per-head logit b; llama.cpp
// ggml_soft_max_add_sinks): the softmax denominator gains exp(b), so a row can give part of its
// mass to no key at all:
//   w_ij = exp(s_ij) / (exp(b) + Σ_k exp(s_ik)),   sink mass_i = exp(b) / (exp(b) + Σ_k exp(s_ik))
// with s the scaled and masked scores; w_i· + sink mass_i = 1. A fully masked row gives all of
// its mass to the sink (w = 0, sink mass 1).
//
// Gated attention (Qiu et al. 2025, "Gated Attention for Large Language Models: Non-linearity,
// Sparsity, and Attention-Sink-Free", §2, gate position G1, elementwise): each head's output
// O = softmax(·) V is multiplied by σ(g), g = x W_θ the gate logits (n_q × d_v), before the
// heads are concatenated and projected.
//
// Differential attention (Ye et al. 2025, "Differential Transformer", ICLR, §2.1, Eq. 1):
//   A₁ = softmax(Q₁K₁ᵀ·s + M), A₂ = softmax(Q₂K₂ᵀ·s + M), A = A₁ − λ·A₂, O = A V
// with s = d^(−1/2), d the width of Q₁ (and Q₂); each row of A sums to 1 − λ, and its weights
// can be negative. λ = exp(λ_q1·λ_k1) − exp(λ_q2·λ_k2) + λ_init with λ_init = 0.8 − 0.6·exp(−0.3
// (l − 1)) for layer l ≥ 1 (§2.1, Eq. 2–3). The paper's per-head GroupNorm and (1 − λ_init)
// factor that follow (Eq. 4) are not part of A or O here.
//
// Multi-head latent attention (DeepSeek-AI 2024, "DeepSeek-V2", §2.1.2–2.1.3, Eq. 9–19), on the
// layer input x (n × d_model), h heads:
//   c = x W_DKV (n × d_c, the cached latent),   k^R = RoPE(x W_KR) (n × d_r, shared by the heads,
//   cached), per head i: k^C_i = c W_UK,i (n × d_h), v_i = c W_UV,i (n × d_v),
//   q^C_i = x W_Q,i (n × d_h), q^R_i = RoPE(x W_QR,i) (n × d_r),
//   scores_i = [q^C_i, q^R_i] [k^C_i, k^R]ᵀ / √(d_h + d_r) + M,   O_i = softmax(scores_i) v_i.
// "Decompressed" forms k^C_i and v_i; "absorbed" (§2.1.2: W_UK "can be absorbed into W_Q") forms
// q^C_i W_UK,iᵀ (n × d_c) and scores it against c, and multiplies the weights by c before W_UV,i:
// the same numbers, reading only the cache (d_c + d_r values per token and layer, against
// 2·h·d_h for multi-head and 2·g·d_h for grouped-query attention). RoPE is the interleaved
// (RoFormer) rotation at positions 0 … n − 1. The queries are x W_Q here; DeepSeek-V2's
// low-rank query (c_Q = x W_DQ, q = c_Q W_UQ) is the same with W_Q = W_DQ W_UQ.

#include "core/analysis/metrics.h"
#include "core/attention/attention.h"
#include "core/attention/groupedattention.h"
#include "core/attention/mask.h"
#include "core/base/types.h"

#include <cstdint>
#include <string>
#include <utility>
#include <vector>

namespace attn {

/// Learned-sink attention: scaled dot-product attention's fields (weights with the sink in the
/// denominator) and each row's sink mass.
template<typename T> struct SinkAttentionResult
{
    AttentionResult<T> attention;
    Vector<T> sinkMass; ///< n_q: exp(b) / (exp(b) + Σ_k exp(s_ik)); 1 on a fully masked row
};

/// Learned-sink attention with sink logit `sinkLogit` (b above; −inf gives plain softmax).
/// Shapes as scaledDotProductAttention. Throws what it throws, and InvalidArgument for a sink
/// logit that is NaN or +inf, or a mask fill other than −inf (a finite fill would give masked
/// keys weight beside the sink).
template<typename T>
SinkAttentionResult<T>
learnedSinkAttention(const ConstMatrixRef<T> &query, const ConstMatrixRef<T> &key,
                     const ConstMatrixRef<T> &value, double sinkLogit,
                     const AttentionMask &mask = {}, const AttentionOptions &options = {});

/// Rows of softmax with the sink logit b in the denominator: weights(i, j) = exp(s_ij) / (exp(b)
/// + Σ_k exp(s_ik)) for scaled and masked scores s (n_q × n_k, −inf where masked; weights is
/// resized to n_q × n_k); returns each row's sink mass exp(b) / (…), n_q. A fully masked row
/// gives its whole mass to the sink (with b = −inf: weights 0, mass 0). Never throws.
template<typename T>
Vector<T> sinkSoftmaxRows(const Matrix<T> &scaledScores, double sinkLogit, Matrix<T> &weights);

/// The per-row metrics (rowMetrics) of learned-sink rows: each row's distribution over the n_k
/// keys and the sink (weights n_q × n_k, sinkMass n_q, the sink last). A fully masked row (flag
/// in `fullyMasked`, n_q or empty) whose mass went to the sink is a distribution (all on the
/// sink); one with no sink (b = −inf, mass 0) is reported as fully masked (zeros), not as a
/// row-sum error. Throws InvalidArgument when the sizes disagree.
RowMetrics learnedSinkRowMetrics(const MatrixD &weights, const VectorD &sinkMass,
                                 const std::vector<std::uint8_t> &fullyMasked = {});

/// Per head, the mean over the rows not flagged fully masked of Σ_j w_ij: 1 − mean sink mass
/// with learned sinks, 1 − λ for differential attention, 1 for plain softmax. `weights`: h
/// matrices n_q × n_k; `fullyMasked`: h × n_q flags (or empty). NaN for a head whose rows are all
/// fully masked. Throws InvalidArgument when the flags do not match the weights.
std::vector<double> meanRowSums(const std::vector<MatrixD> &weights,
                                const std::vector<std::vector<std::uint8_t>> &fullyMasked);
/// The mean of meanRowSums' per-head values over the heads that have one (a NaN head, whose rows
/// are all fully masked, is left out); NaN when no head has one.
double meanRowSumOverHeads(const std::vector<double> &perHead);

/// Runs `compute`, differential attention's second softmax, and reports an overflow there
/// (NonFiniteInput) as A₂'s: "differential attention's second softmax A₂ (`from`): …", so the
/// message never blames the first softmax's query and key.
template<typename F> auto secondSoftmax(const std::string &from, F compute)
{
    try {
        return compute();
    } catch (const NonFiniteInput &e) {
        throw NonFiniteInput("differential attention's second softmax A\u2082 (" + from
                             + "): " + e.what());
    }
}

/// σ(gateLogits) ⊙ output (both n × d_v), σ(g) = 1 / (1 + e^(−g)). Throws InvalidArgument
/// naming the shapes when they differ, NonFiniteInput for a NaN gate logit.
template<typename T>
Matrix<T> gatedOutput(const ConstMatrixRef<T> &output, const ConstMatrixRef<T> &gateLogits);

/// Differential attention: A₁, A₂ (each scaled dot-product attention of its query and key with
/// the value), A = A₁ − λA₂ and O = A V.
template<typename T> struct DifferentialAttentionResult
{
    AttentionResult<T> first; ///< softmax(Q₁K₁ᵀ·s + M), its output A₁V
    AttentionResult<T> second; ///< softmax(Q₂K₂ᵀ·s + M), its output A₂V
    Matrix<T> weights; ///< n_q × n_k: A₁ − λA₂ (signed; rows sum to 1 − λ)
    Matrix<T> output; ///< n_q × d_v: (A₁ − λA₂) V
    double lambda = 0;
};

/// Shapes: query1, query2 n_q × d, key1, key2 n_k × d, value n_k × d_v; the scale is d^(−α)/τ
/// from `options` (1/√d by default). Throws InvalidArgument naming the shapes when query2/key2
/// differ from query1/key1, for a λ that is not finite, and what scaledDotProductAttention
/// throws.
template<typename T>
DifferentialAttentionResult<T>
differentialAttention(const ConstMatrixRef<T> &query1, const ConstMatrixRef<T> &key1,
                      const ConstMatrixRef<T> &query2, const ConstMatrixRef<T> &key2,
                      const ConstMatrixRef<T> &value, double lambda, const AttentionMask &mask = {},
                      const AttentionOptions &options = {});

/// λ_init = 0.8 − 0.6·exp(−0.3·(layer − 1)) for layer ≥ 1 (Ye et al. 2025, Eq. 3). Throws
/// InvalidArgument for layer < 1.
double differentialLambdaInit(Index layer);
/// λ = exp(λ_q1·λ_k1) − exp(λ_q2·λ_k2) + λ_init (Eq. 2) for vectors of equal length. Throws
/// InvalidArgument when the lengths differ.
double differentialLambda(const VectorD &lambdaQ1, const VectorD &lambdaK1, const VectorD &lambdaQ2,
                          const VectorD &lambdaK2, double lambdaInit);

/// The 2025 variants applied to grouped-query attention's heads (see groupedattention.h for the
/// layout: query n_q × h·d_k, key n_k × g·d_k, value n_k × g·d_v). Each part is optional; empty
/// means absent. RoPE, ALiBi, the masks (causal, sliding window, padding) and the grouping act
/// as in groupedQueryAttention, on both softmaxes of differential attention.
template<typename T> struct GroupedVariants
{
    /// Learned sinks: h sink logits b_h (or one, shared by every head); −inf is no sink.
    std::vector<double> sinkLogits;
    /// Differential attention: the second query n_q × h·d_k and key n_k × g·d_k (shaped as
    /// query and key) and λ (one for every head, or h).
    Matrix<T> query2, key2;
    std::vector<double> lambda;
    /// Gated attention: gate logits n_q × h·d_v; head i's output columns times σ(g).
    Matrix<T> gateLogits;

    bool hasSinks() const { return !sinkLogits.empty(); }
    bool isDifferential() const { return query2.size() > 0 || key2.size() > 0 || !lambda.empty(); }
    bool hasGate() const { return gateLogits.size() > 0; }
    bool any() const { return hasSinks() || isDifferential() || hasGate(); }
};

/// What groupedVariantAttention computes.
template<typename T> struct GroupedVariantResult
{
    /// The attention with the variants applied: weights h × (n_q × n_k) (with sinks each row
    /// sums to 1 − sink mass; differential: A₁ − λ_h A₂, signed, rows sum to 1 − λ_h), output
    /// n_q × h·d_v (gated when gate logits are given); scores, scaledScores and fullyMasked are
    /// the first softmax's.
    GroupedAttentionResult<T> attention;
    /// Differential only: A₁ and A₂, each h matrices n_q × n_k (plain softmaxes), and the second
    /// softmax's raw scores.
    std::vector<Matrix<T>> firstWeights, secondWeights, secondScores;
    std::vector<double> lambda; ///< h values (differential only)
    std::vector<VectorD> sinkMass; ///< h × n_q (learned sinks only): exp(b_h) / (exp(b_h) + Σ_k …)
    std::vector<double> sinkLogits; ///< h values (learned sinks only)
    Matrix<T> gate; ///< n_q × h·d_v σ(g) (gated only)
};

/// Grouped-query attention (groupedQueryAttention's arguments) with learned sinks, differential
/// attention and an output gate per head, in the order the models apply them: scores and masks,
/// softmax (with the sink in the denominator) or A₁ − λA₂, times the value head, then the gate.
/// Learned sinks and differential attention do not combine (no published model uses both; the
/// sink would add a third term to A₁ − λA₂): InvalidArgument. Throws InvalidArgument naming the
/// part and the sizes when sinkLogits has neither 1 nor h entries, λ neither 1 nor h, query2 or
/// key2 differ in shape from query or key, the gate logits are not n_q × h·d_v, a sink logit is
/// NaN or +inf, λ not finite, or the mask fill is finite with sinks; and what
/// groupedQueryAttention throws.
template<typename T>
GroupedVariantResult<T> groupedVariantAttention(
    const ConstMatrixRef<T> &query, const ConstMatrixRef<T> &key, const ConstMatrixRef<T> &value,
    Index heads, Index kvHeads, const GroupedVariants<T> &variants, const AttentionMask &mask = {},
    const AttentionOptions &options = {}, const PositionOptions &positions = {});

/// The projections of multi-head latent attention (see the file's comment), as x·W applies
/// them (each [in, out]).
template<typename T> struct MlaWeights
{
    Index heads = 1;
    Matrix<T> downKeyValue; ///< W_DKV: d_model × d_c
    Matrix<T> upKey; ///< W_UK: d_c × h·d_h
    Matrix<T> upValue; ///< W_UV: d_c × h·d_v
    Matrix<T> ropeKey; ///< W_KR: d_model × d_r (d_r even)
    Matrix<T> query; ///< W_Q: d_model × h·d_h
    Matrix<T> ropeQuery; ///< W_QR: d_model × h·d_r
    double ropeBase = 10000.0;

    Index latentDim() const { return downKeyValue.cols(); } ///< d_c
    Index ropeDim() const { return ropeKey.cols(); } ///< d_r
    Index headDim() const { return heads > 0 ? upKey.cols() / heads : 0; } ///< d_h
    Index valueDim() const { return heads > 0 ? upValue.cols() / heads : 0; } ///< d_v
    /// Throws InvalidArgument naming the matrix and the sizes that disagree, for heads < 1 or
    /// an odd d_r.
    void check(Index dModel) const;
};

/// What multi-head latent attention computes.
template<typename T> struct MlaResult
{
    std::vector<Matrix<T>> weights; ///< h matrices n × n
    Matrix<T> output; ///< n × h·d_v: the heads' outputs side by side (before W_O)
    Matrix<T> latent; ///< n × d_c: c, what is cached
    Matrix<T> ropeKeys; ///< n × d_r: k^R after RoPE, what is cached beside c
    double scale = 0; ///< 1/√(d_h + d_r)
};

/// Multi-head latent attention of x (n × d_model), decompressed (k^C, v formed per head) or
/// absorbed (scored against the latent). `mask` n × n (e.g. causal). Throws what
/// MlaWeights::check throws, InvalidArgument when the mask does not fit, NonFiniteInput for a
/// NaN or ±inf in x.
template<typename T>
MlaResult<T> mlaDecompressed(const ConstMatrixRef<T> &x, const MlaWeights<T> &weights,
                             const AttentionMask &mask = {});
template<typename T>
MlaResult<T> mlaAbsorbed(const ConstMatrixRef<T> &x, const MlaWeights<T> &weights,
                         const AttentionMask &mask = {});

/// Every head's raw scores of multi-head latent attention of x (n × d_model), before the scale
/// and the mask: h matrices n × n, decompressed [q^C_i, q^R_i] [c W_UK,i, k^R]ᵀ or absorbed
/// [q^C_i W_UK,iᵀ, q^R_i] [c, k^R]ᵀ (the same numbers up to rounding; DeepSeek-V2 §2.1.2).
/// The engine's MLA mode scales, masks and normalises them as any other scores. Throws what
/// mlaDecompressed throws.
template<typename T>
std::vector<Matrix<T>> mlaScores(const ConstMatrixRef<T> &x, const MlaWeights<T> &weights,
                                 bool absorbed);

/// The decompressed queries and keys of every head side by side, as the tile engine
/// (core/tiles/tileengine.h) takes them: query n × h·(d_h + d_r), head i's columns
/// [q^C_i, q^R_i]; key n × h·(d_h + d_r), head i's columns [c W_UK,i, k^R]. Their products are
/// mlaScores(x, weights, false). Throws what mlaDecompressed throws.
template<typename T>
std::pair<Matrix<T>, Matrix<T>> mlaQueryKeyHeads(const ConstMatrixRef<T> &x,
                                                 const MlaWeights<T> &weights);

/// Cached numbers per token and layer: MLA d_c + d_r; multi-head (g = h) and grouped-query
/// attention 2·g·d_h (a key and a value per key/value head).
inline Index mlaCacheValues(Index latentDim, Index ropeDim)
{
    return latentDim + ropeDim;
}
inline Index keyValueCacheValues(Index keyValueHeads, Index headDim)
{
    return 2 * keyValueHeads * headDim;
}

} // namespace attn
