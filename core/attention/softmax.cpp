#include "core/attention/softmax.h"

#include "core/base/threads.h"
#include "core/kernels/rowops.h"

#include <atomic>
#include <cmath>
#include <limits>
#include <string>

namespace attn {

namespace {
// Floating-point operations per entry of a row softmax (max, subtract, exp, sum, divide; exp
// counted as 16), the work threadsForFlops (core/base/threads.h) is asked about.
constexpr double kSoftmaxFlopsPerEntry = 20;

/// One row's softmax: the AVX-512 row passes (kernels/avx512.h: 16 float / 8 double lanes) on
/// CPUs with AVX-512F, else Eigen's packet math as compiled (SSE2 in the portable build).
template<typename T> detail::RowStatus rowSoftmax(T *x, Index n, Index &badCol)
{
    return detail::RowPasses().softmaxScaled(x, n, T(1), badCol);
}
} // namespace

template<typename T>
void softmaxRowsInPlace(Matrix<T> &scores, std::vector<std::uint8_t> *fullyMasked)
{
    // scores: rows × cols, row-major, so each row is contiguous.
    const Index rows = scores.rows();
    const Index cols = scores.cols();
    if (fullyMasked)
        fullyMasked->assign(std::size_t(rows), 0);
    std::atomic<Index> firstBadRow {std::numeric_limits<Index>::max()};

    const bool parallel
        = rows > 1 && threadsForFlops(double(rows) * double(cols) * kSoftmaxFlopsPerEntry) > 1;
#pragma omp parallel for schedule(static) if (parallel)
    for (Index i = 0; i < rows; ++i) {
        Index badCol = -1;
        const detail::RowStatus status = rowSoftmax(scores.row(i).data(), cols, badCol);
        if (status == detail::RowStatus::FullyMasked && fullyMasked) {
            (*fullyMasked)[std::size_t(i)] = 1;
        } else if (status == detail::RowStatus::NonFinite) {
            // Keep the smallest bad row so the message does not depend on thread timing.
            Index cur = firstBadRow.load();
            while (i < cur && !firstBadRow.compare_exchange_weak(cur, i)) { }
        }
    }
    const Index badRow = firstBadRow.load();
    if (badRow != std::numeric_limits<Index>::max()) {
        // softmaxRow leaves a non-finite row untouched: find its first bad entry.
        Index col = -1;
        for (Index j = 0; j < cols; ++j) {
            const T v = scores(badRow, j);
            if (std::isnan(v) || v == std::numeric_limits<T>::infinity()) {
                col = j;
                break;
            }
        }
        const T value = col >= 0 ? scores(badRow, col) : T(0);
        throw NonFiniteInput("softmax input has " + detail::valueName(value) + " at row "
                             + std::to_string(badRow) + ", col " + std::to_string(col)
                             + " (only finite scores and -inf for masked keys are allowed)");
    }
}

template<typename T> SoftmaxRowStatus softmaxRowInPlace(T *x, Index n)
{
    Index badCol = -1;
    switch (rowSoftmax(x, n, badCol)) {
    case detail::RowStatus::Ok:
        return SoftmaxRowStatus::Ok;
    case detail::RowStatus::FullyMasked:
        return SoftmaxRowStatus::FullyMasked;
    case detail::RowStatus::NonFinite:
        break;
    }
    return SoftmaxRowStatus::NonFinite;
}

template<typename T>
Matrix<T> softmaxRows(const Matrix<T> &scores, std::vector<std::uint8_t> *fullyMasked)
{
    Matrix<T> out = scores;
    softmaxRowsInPlace(out, fullyMasked);
    return out;
}

template void softmaxRowsInPlace<float>(Matrix<float> &, std::vector<std::uint8_t> *);
template void softmaxRowsInPlace<double>(Matrix<double> &, std::vector<std::uint8_t> *);
template SoftmaxRowStatus softmaxRowInPlace<float>(float *, Index);
template SoftmaxRowStatus softmaxRowInPlace<double>(double *, Index);
template Matrix<float> softmaxRows<float>(const Matrix<float> &, std::vector<std::uint8_t> *);
template Matrix<double> softmaxRows<double>(const Matrix<double> &, std::vector<std::uint8_t> *);

} // namespace attn
