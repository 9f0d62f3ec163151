#pragma once
// Scaled dot-product attention, Vaswani et al. 2017, §3.2.1:
//   scores S = Q Kᵀ (n_q × n_k), scaled S' = S · scale + M, weights W = softmax(S') row-wise,
//   output O = W V (n_q × d_v). All matrices row-major.

#include "core/attention/mask.h"
#include "core/base/types.h"

#include <cstdint>
#include <limits>
#include <optional>
#include <vector>

namespace attn {

/// How the scores are scaled and masked.
struct AttentionOptions
{
    /// α in scale = d_k^(-α) / temperature. 0.5 is the paper's 1/√d_k, 0 is unscaled; any α in
    /// [0, 1] is allowed (the app's slider moves continuously between the two).
    double scaleExponent = 0.5;
    /// Softmax temperature τ > 0 (divides the scores).
    double temperature = 1.0;
    /// Explicit scale; when set it replaces d_k^(-α) / τ.
    std::optional<double> scaleOverride;
    /// Value written into masked scores before the softmax. -inf (default) is the paper's
    /// choice; -1e9 and 0 exist to show what other fill values do (experiment E11). With a
    /// finite fill a fully masked row is not flagged: the arithmetic decides its weights.
    double maskFill = -std::numeric_limits<double>::infinity();
    /// Check Q, K, V for NaN/Inf and throw NonFiniteInput naming the input and the element.
    bool checkFinite = true;
};

/// The score scale d_k^(−α) / τ (Vaswani et al. 2017, §3.2.1, with the exponent α and the
/// temperature τ): the one formula behind effectiveScale, the window's parameters and the
/// training layer. Unchecked: d_k is taken as at least 1; α and τ as given.
double scoreScale(Index dK, double scaleExponent, double temperature);

/// The scale actually applied for a given d_k. Throws InvalidArgument for α outside [0, 1],
/// temperature <= 0 or d_k < 1.
double effectiveScale(Index dK, const AttentionOptions &options);

/// Everything scaled dot-product attention computes, for display and checking.
template<typename T> struct AttentionResult
{
    Matrix<T> scores; ///< n_q × n_k, raw Q Kᵀ
    Matrix<T> scaledScores; ///< n_q × n_k, scores · scale + additive mask, masked cells = fill
    Matrix<T> weights; ///< n_q × n_k, softmax rows (all 0 on a fully masked row)
    Matrix<T> output; ///< n_q × d_v
    std::vector<std::uint8_t> fullyMasked; ///< n_q flags: 1 when every key of the row is masked
    double scale = 1.0; ///< the scale applied
};

/// Scaled dot-product attention with everything materialised.
/// Shapes: query n_q × d_k, key n_k × d_k, value n_k × d_v. Throws InvalidArgument naming the
/// shapes when they disagree (or the mask does not fit n_q × n_k), NonFiniteInput on NaN/Inf.
/// Matches torch.nn.functional.scaled_dot_product_attention (with our fully-masked-row zeros).
template<typename T>
AttentionResult<T>
scaledDotProductAttention(const ConstMatrixRef<T> &query, const ConstMatrixRef<T> &key,
                          const ConstMatrixRef<T> &value, const AttentionMask &mask = {},
                          const AttentionOptions &options = {});

} // namespace attn
