// The materialized kernel: the whole n_q × n_k weight matrix exists, computed one block of query
// rows at a time so that each block is produced and consumed while it is in cache:
//   S_b = Q_b Kᵀ (GEMM), row softmax of S_b · scale in place (max, exp, sum, normalise; the
//   scale is folded into the exponent), O_b = W_b V (GEMM).
// Blocks are spread over the OpenMP threads; each thread's GEMMs run single-threaded (Eigen does
// not nest its own threads inside a parallel region). The products and the row softmax use Eigen's
// GEMM and packet math, or for float32 with d_v % 16 == 0 the AVX-512 code when the CPU has
// AVX-512F (avx512.h).

#include "core/kernels/kernels.h"

#include "core/base/blas.h"
#include "core/kernels/avx512.h"
#include "core/kernels/detail.h"
#include "core/kernels/rowops.h"

#include <algorithm>
#include <atomic>
#include <limits>
#include <optional>
#include <string>
#include <type_traits>
#include <vector>

namespace attn {

namespace {

/// Query rows per block: about 512 KiB of scores, a multiple of `multiple`, in
/// [multiple, 256].
Index blockRows(Index nK, std::size_t elementBytes, Index multiple)
{
    const std::size_t target = std::size_t(512) << 10;
    const std::size_t rowBytes = std::max<std::size_t>(std::size_t(nK) * elementBytes, 1);
    const Index rows = Index(target / rowBytes) / multiple * multiple;
    return std::clamp<Index>(rows, multiple, 256 / multiple * multiple);
}

} // namespace

template<typename T>
Matrix<T> attentionMaterialized(const ConstMatrixRef<T> &query, const ConstMatrixRef<T> &key,
                                const ConstMatrixRef<T> &value, T scale, const AttentionMask &mask,
                                Matrix<T> *weights)
{
    static constexpr const char *who = "attentionMaterialized";
    detail::checkAttentionInputs<T>(query, key, value, mask, who);

    const Index nQ = query.rows();
    const Index nK = key.rows();
    const Index dV = value.cols();
    const T negInf = -std::numeric_limits<T>::infinity();

    Matrix<T> output(nQ, dV); // n_q × d_v
    if (weights)
        weights->resize(nQ, nK); // no reallocation when the caller reuses the same shape
    if (nK == 0 || nQ == 0) {
        output.setZero();
        return output;
    }

    // w: the n_q × n_k scores, turned into the weights in place (row-major).
    std::optional<detail::ScratchBuffer> scratch;
    T *wData = nullptr;
    if (weights) {
        wData = weights->data();
    } else {
        scratch.emplace(std::size_t(nQ) * std::size_t(nK) * sizeof(T));
        wData = static_cast<T *>(scratch->data());
    }
    Eigen::Map<Matrix<T>> w(wData, nQ, nK);

    const bool pureCausal = mask.isPureCausal();
    const bool masked = !mask.empty();
    // Fold the scale into the exponent unless the mask must see scaled scores (additive terms)
    // or the scale is not positive (then max(x · scale) ≠ max(x) · scale).
    const bool foldScale = (!masked || pureCausal) && scale > T(0);
    // The AVX-512 float32 products (avx512.h) need Kᵀ packed and d_v a multiple of 16; the row
    // passes (max, exp, scale) take float and double rows.
    [[maybe_unused]] bool avx512 = false;
    const detail::RowPasses passes;
    std::vector<float> packedKeys; // Kᵀ in panels: ~n_k × d_k floats (AVX-512 path only)
#ifdef ATTN_HAVE_AVX512_KERNELS
    if constexpr (std::is_same_v<T, float>) {
        if (dV % 16 == 0 && query.cols() > 0 && detail::avx512::enabled()) {
            avx512 = true;
            packedKeys.resize(std::size_t(detail::avx512::packedKeysSize(nK, key.cols())));
            detail::avx512::packKeys(key.data(), key.outerStride(), nK, key.cols(),
                                     packedKeys.data());
        }
    }
#endif
    // The AVX-512 code works on 8 rows (scores) and 6 rows (W V for d_v = 64) at a time: blocks
    // of a multiple of 24 rows leave no short remainder block.
    const Index rowsPerBlock = blockRows(nK, sizeof(T), avx512 ? 24 : 8);
    const Index blocks = (nQ + rowsPerBlock - 1) / rowsPerBlock;
    std::atomic<Index> badRow {std::numeric_limits<Index>::max()};

    const bool parallel = blocks > 1 && kernelThreadsFor(nQ, nK, query.cols(), dV) > 1;
    // Small problems run on this thread alone: no team for the blocks, and none for Eigen's GEMM
    // (which would otherwise start its own when there is only one block).
    std::optional<ScopedKernelThreads> oneThread;
    if (kernelThreadsFor(nQ, nK, query.cols(), dV) == 1)
        oneThread.emplace(1);
    // On the AVX-512 path a block is computed in a per-thread buffer that stays in L2 and is
    // then written to the weights with non-temporal stores: the weights' cache lines are not
    // read before they are written (half the memory traffic of the n² matrix).
    const bool blockBuffer = avx512;
#pragma omp parallel if (parallel)
    {
        std::vector<T> buffer(blockBuffer ? std::size_t(rowsPerBlock) * std::size_t(nK) : 0);
#pragma omp for schedule(dynamic, 1)
        for (Index b = 0; b < blocks; ++b) {
            const Index i0 = b * rowsPerBlock;
            const Index rows = std::min(rowsPerBlock, nQ - i0);
            // Keys any row of the block may see (a pure causal mask cuts the rest).
            const Index keyEnd = pureCausal ? mask.causalLimit(i0 + rows - 1, nK) : nK;
            // The block's rows × n_k scores/weights (rows n_k apart): in the buffer or in place.
            T *block = blockBuffer ? buffer.data() : w.row(i0).data();
            Eigen::Map<Matrix<T>, 0, Eigen::OuterStride<>> blockAll(block, rows, nK,
                                                                    Eigen::OuterStride<>(nK));
            auto wb = blockAll.leftCols(keyEnd);
            if (keyEnd > 0) {
#ifdef ATTN_HAVE_AVX512_KERNELS
                if constexpr (std::is_same_v<T, float>) {
                    if (avx512)
                        detail::avx512::scores(query.row(i0).data(), query.outerStride(), rows,
                                               packedKeys.data(), query.cols(), 0, keyEnd, block,
                                               nK);
                    else
                        gemmTransposed<T>(query.middleRows(i0, rows), key.topRows(keyEnd), wb);
                } else
#endif
                {
                    gemmTransposed<T>(query.middleRows(i0, rows), key.topRows(keyEnd), wb); // GEMM
                }
            }

            for (Index r = 0; r < rows; ++r) {
                const Index i = i0 + r;
                T *row = block + r * nK;
                Index n = nK;
                Index badCol = -1;
                detail::RowStatus status;
                if (pureCausal) {
                    // Only keys < limit are allowed: softmax the prefix, zero the rest.
                    n = mask.causalLimit(i, nK);
                    std::fill(row + n, row + nK, T(0));
                }
                if (!foldScale) {
                    detail::scaleRow(row, n, scale);
                    if (masked && !pureCausal) // a causal mask is already applied by n
                        detail::applyMaskTile(row, nK, i, 1, 0, nK, mask, negInf);
                }
                const T rowScale = foldScale ? scale : T(1);
                status = passes.softmaxScaled(row, n, rowScale, badCol);
                if (status == detail::RowStatus::NonFinite) {
                    Index cur = badRow.load();
                    while (i < cur && !badRow.compare_exchange_weak(cur, i)) { }
                    std::fill(row, row + nK, T(0));
                }
            }
            if (keyEnd == 0) {
                output.middleRows(i0, rows).setZero();
                if (blockBuffer)
                    w.middleRows(i0, rows).setZero();
                continue;
            }
#ifdef ATTN_HAVE_AVX512_KERNELS
            if constexpr (std::is_same_v<T, float>) {
                if (avx512) {
                    // In chunks of keys so the chunk of V (keys × d_v) stays in L2 for all rows.
                    constexpr Index chunk = 256;
                    for (Index c0 = 0; c0 < keyEnd; c0 += chunk)
                        detail::avx512::accumulate(block + c0, nK, rows,
                                                   std::min(chunk, keyEnd - c0),
                                                   value.row(c0).data(), value.outerStride(), dV,
                                                   output.row(i0).data(), dV, nullptr, c0 == 0);
                    detail::avx512::streamStore(block, rows * nK, w.row(i0).data());
                    continue;
                }
            }
#endif
            gemm<T>(wb, value.topRows(keyEnd), output.middleRows(i0, rows)); // GEMM
        }
    }
    if (badRow.load() != std::numeric_limits<Index>::max())
        throw NonFiniteInput(std::string(who) + ": scaled scores overflowed in row "
                             + std::to_string(badRow.load()));
    return output;
}

template Matrix<float> attentionMaterialized<float>(const Eigen::Ref<const MatrixF> &,
                                                    const Eigen::Ref<const MatrixF> &,
                                                    const Eigen::Ref<const MatrixF> &, float,
                                                    const AttentionMask &, MatrixF *);
template Matrix<double> attentionMaterialized<double>(const Eigen::Ref<const MatrixD> &,
                                                      const Eigen::Ref<const MatrixD> &,
                                                      const Eigen::Ref<const MatrixD> &, double,
                                                      const AttentionMask &, MatrixD *);

} // namespace attn
