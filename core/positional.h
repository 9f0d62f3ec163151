#pragma once
// Sinusoidal positional encoding, Vaswani et al. 2017, §3.5:
//   PE[pos, 2i] = sin(pos / 10000^(2i/d)), PE[pos, 2i+1] = cos(pos / 10000^(2i/d)).
// Interleaved sin/cos columns, positions firstPosition … firstPosition+n−1, odd d allowed
// (the last column is a sin).

#include "core/types.h"

namespace attn {

/// n × d matrix (row pos, column feature). Throws InvalidArgument for n < 0 or d < 1.
MatrixD sinusoidalEncoding(Index n, Index d, Index firstPosition = 0);

/// ω_i = 10000^(−2i/d), the angular frequency of column pair i (i = 0 … ⌈d/2⌉−1).
double sinusoidFrequency(Index pairIndex, Index d);

} // namespace attn
