#pragma once
// Position schemes of attention.
//
// Sinusoidal encoding, Vaswani et al. 2017, §3.5 (added to the inputs before the projections):
//   PE[pos, 2i] = sin(pos / 10000^(2i/d)), PE[pos, 2i+1] = cos(pos / 10000^(2i/d)).
// Interleaved sin/cos columns, positions firstPosition … firstPosition+n−1, odd d allowed
// (the last column is a sin).
//
// RoPE, rotary position embedding (Su et al. 2021, RoFormer, arXiv:2104.09864, §3.4): each
// head's query and key rows are rotated in d_k/2 planes, plane i by the angle pos·θ_i with
// θ_i = base^(−2i/d_k) (base 10 000 in the paper). Two conventions pair the dimensions
// differently (same rotation up to a fixed permutation of the d_k columns):
//   interleaved: planes (x[2i], x[2i+1]) (RoFormer, GPT-J);
//   half: x·cos + rotate_half(x)·sin with rotate_half(x) = [−x₂, x₁] over the halves x₁, x₂,
//         planes (x[i], x[i + d_k/2]) (GPT-NeoX, Llama as in Hugging Face transformers).
// Mixing them up when loading weights trained with the other one is a classic bug.
//
// ALiBi, attention with linear biases (Press et al. 2021, arXiv:2108.12409, §3): no position
// in the inputs; head h adds −m_h·(i − j) to its scaled scores (−m_h·|i − j| without a causal
// mask), with the head-specific slopes of alibiSlopes().

#include "core/base/types.h"

#include <string>
#include <string_view>
#include <vector>

namespace attn {

/// n × d matrix (row pos, column feature). Throws InvalidArgument for n < 0 or d < 1.
MatrixD sinusoidalEncoding(Index n, Index d, Index firstPosition = 0);

/// ω_i = 10000^(−2i/d), the angular frequency of column pair i (i = 0 … ⌈d/2⌉−1).
double sinusoidFrequency(Index pairIndex, Index d);

/// The dot-product similarity PE·PEᵀ of sinusoidalEncoding(n, d) (n × n, row p and column q
/// positions 0 … n−1). Each sin/cos pair contributes sin(pω_i)sin(qω_i) + cos(pω_i)cos(qω_i) =
/// cos((p − q)ω_i), so for even d entry (p, q) depends on the offset p − q alone (a Toeplitz
/// matrix: diagonal d/2, largest near it); for odd d the last column (a sin without its cos)
/// adds sin(pω)sin(qω). Computed from the 2n − 1 offsets in O(n·d + n²).
/// Throws InvalidArgument for n < 0 or d < 1.
MatrixD sinusoidalSimilarity(Index n, Index d);

/// How positions enter attention.
enum class PositionalScheme {
    None, ///< no positions: attention is permutation-equivariant
    Sinusoidal, ///< sinusoidalEncoding added to the inputs (Vaswani et al. 2017, §3.5)
    Rope, ///< queries and keys rotated per head (Su et al. 2021)
    Alibi, ///< per-head linear bias on the scores (Press et al. 2021)
};

/// Which dimensions RoPE rotates together (see the file comment).
enum class RopeConvention {
    Interleaved, ///< (x[2i], x[2i+1]): RoFormer, GPT-J
    Half, ///< (x[i], x[i + d_k/2]), rotate_half: GPT-NeoX, Llama (Hugging Face)
};

/// "none", "sinusoidal", "rope", "alibi".
std::string positionalSchemeName(PositionalScheme scheme);
/// Inverse of positionalSchemeName. Throws InvalidArgument listing the accepted names.
PositionalScheme parsePositionalScheme(std::string_view name);
/// "interleaved", "half".
std::string ropeConventionName(RopeConvention convention);
/// Inverse of ropeConventionName. Throws InvalidArgument listing the accepted names.
RopeConvention parseRopeConvention(std::string_view name);

/// RoPE's default base θ = 10 000 (Su et al. 2021, §3.4.2).
inline constexpr double kRopeDefaultBase = 10000.0;

/// θ_i = base^(−2i/d_k), the angle per position of rotation plane i (i = 0 … d_k/2 − 1).
/// Throws InvalidArgument for an odd or non-positive d_k, i outside [0, d_k/2) or a base that
/// is not finite and > 0 (base 1 gives no rotation).
double ropeFrequency(Index planeIndex, Index dK, double base = kRopeDefaultBase);

/// Rotates the n rows of x (n × d_k, one head's queries or keys) in place: row r is position
/// firstPosition + r. Throws InvalidArgument for an odd d_k (RoPE rotates pairs) or a base that
/// is not finite and > 0.
template<typename T>
void applyRope(MatrixRef<T> x, RopeConvention convention, double base = kRopeDefaultBase,
               Index firstPosition = 0);

/// Rotates the n rows of x (n × d_k) in place like applyRope, with the angle per position of
/// plane i given as frequencies[i] (radians per position, d_k / 2 of them) instead of
/// base^(−2i/d_k): the form that scaled RoPE variants need (Hugging Face transformers
/// modeling_rope_utils.py: "linear" divides every frequency by its factor, "llama3" rescales
/// the low frequencies). Row r is position firstPosition + r. Throws InvalidArgument for an odd
/// d_k, a frequency count other than d_k / 2 or a frequency that is not finite.
template<typename T>
void applyRopeFrequencies(MatrixRef<T> x, const std::vector<double> &frequencies,
                          RopeConvention convention, Index firstPosition = 0);

/// The same rotation applied to every head of x (n × heads·d_k): head i is columns
/// i·d_k … (i+1)·d_k − 1. Throws InvalidArgument when heads < 1 or does not divide the columns.
template<typename T>
void applyRopeHeads(MatrixRef<T> x, Index heads, RopeConvention convention,
                    double base = kRopeDefaultBase, Index firstPosition = 0);

/// ALiBi slopes m_0 … m_{H−1} for H heads, by the rule of the paper's reference code
/// (github.com/ofirpress/attention_with_linear_biases, get_slopes): for H a power of two
/// m_h = 2^(−8(h+1)/H); otherwise the H' slopes of the closest lower power of two H', then
/// every other slope of the rule for 2H' (its slopes 0, 2, 4, …), H − H' of them.
/// Throws InvalidArgument for H < 1.
std::vector<double> alibiSlopes(Index heads);

/// ALiBi's additive bias for one head (n_q × n_k): −slope·(p_i − p_j) when `causal` (the
/// paper's causal language model; cells p_j > p_i are meant to be masked), else
/// −slope·|p_i − p_j| (the symmetric form used without a causal mask). Query i sits at position
/// p_i = queryFirstPosition + i, key j at p_j = keyFirstPosition + j.
/// Throws InvalidArgument for negative sizes or a slope that is not finite.
MatrixD alibiBias(Index nQ, Index nK, double slope, bool causal, Index queryFirstPosition = 0,
                  Index keyFirstPosition = 0);

} // namespace attn
