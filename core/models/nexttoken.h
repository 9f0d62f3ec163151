#pragma once
// The next-token distribution after a position: softmax of that position's logits.

#include "core/base/types.h"

#include <vector>

namespace attn::models {

struct NextToken
{
    Index id = 0; ///< vocabulary id
    double probability = 0; ///< softmax of the row, in [0, 1]
    double logit = 0; ///< the unnormalised score
};

/// The `k` most probable next tokens after row `position` of `logits` (n × vocab, one row per
/// position, as ForwardResult::logits): p = softmax(row) computed in float64 with the row's
/// maximum subtracted, sorted by decreasing probability (ties by increasing id). Returns
/// min(k, vocab) entries; none for k ≤ 0. Throws InvalidArgument for a position outside
/// [0, n) and NonFiniteInput for a row holding NaN or ±Inf.
std::vector<NextToken> topNextTokens(const MatrixF &logits, Index position, Index k);

/// The readout after the last position: topNextTokens of the last row; empty for logits without
/// rows (a model without a language-model head).
std::vector<NextToken> topNextTokens(const MatrixF &logits, Index k);

} // namespace attn::models
