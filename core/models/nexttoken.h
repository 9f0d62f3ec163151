#pragma once
// The next-token readout of a forward pass: the most probable tokens after the last position,
// from the softmax of the last row of the logits (core/models/forward.h ForwardResult::logits).

#include "core/base/types.h"

#include <cstdint>
#include <vector>

namespace attn::models {

/// One candidate for the token after the last position.
struct NextToken
{
    Index id = 0; ///< token id in [0, vocab)
    double probability = 0; ///< softmax of the last logits row at `id`, in [0, 1]
    double logit = 0; ///< the unnormalised score logits(n − 1, id)
};

/// The `k` most probable next tokens after the last row of `logits` (n × vocab), highest first
/// (ties by the lower id): probabilities p_j = exp(z_j − max z) / Σ exp(z − max z) in double.
/// Fewer than k when the vocabulary is smaller; empty for 0 × 0 logits (no language-model
/// head) or k ≤ 0.
std::vector<NextToken> topNextTokens(const MatrixF &logits, Index k);

} // namespace attn::models
