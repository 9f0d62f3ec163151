#pragma once
// Numerically stable row-wise softmax (max subtracted), Vaswani et al. 2017, §3.2.1.

#include "core/base/types.h"

#include <cstdint>
#include <vector>

namespace attn {

/// Row-wise softmax in place over `scores` (rows × cols, row-major).
/// Entries equal to -inf are masked keys and get weight exactly 0. A row whose entries are all
/// -inf (a fully masked row) becomes all zeros and, if `fullyMasked` is given, its flag is set
/// to 1 (this is PyTorch scaled_dot_product_attention's behaviour since 2.5; PyTorch 1.13 and
/// nn.MultiheadAttention return NaN there instead).
/// `fullyMasked`, when given, is resized to rows.
/// Throws NonFiniteInput naming row and column when a score is NaN or +inf.
/// exp is Cephes' (as Eigen's pexp) on 16 float / 8 double lanes with AVX-512F (chosen at run
/// time, see kernelInstructionSet()), else Eigen's packet math as compiled; within 2 ulps of a
/// correctly rounded exp either way, and exactly 0 where that is 0.
template<typename T>
void softmaxRowsInPlace(Matrix<T> &scores, std::vector<std::uint8_t> *fullyMasked = nullptr);

/// What softmaxRowInPlace did with a row.
enum class SoftmaxRowStatus {
    Ok, ///< the row holds its softmax
    FullyMasked, ///< every entry was −inf (or n = 0): the row is all zeros
    NonFinite, ///< a NaN or +inf entry: the row is left untouched
};

/// Softmax of one contiguous row x[0, n) in place, with exactly the arithmetic
/// softmaxRowsInPlace applies to each row (the same compiled code, so the same bits), for
/// callers that work row by row while the row is in cache. Never throws: a NaN or +inf entry
/// is reported as NonFinite (softmaxRowsInPlace throws NonFiniteInput there).
template<typename T> SoftmaxRowStatus softmaxRowInPlace(T *x, Index n);

/// Copying form of softmaxRowsInPlace.
template<typename T>
Matrix<T> softmaxRows(const Matrix<T> &scores, std::vector<std::uint8_t> *fullyMasked = nullptr);

} // namespace attn
