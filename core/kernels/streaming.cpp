// The streaming kernel: online softmax over K/V tiles (Milakov & Gimelshein 2018, "Online
// normalizer calculation for softmax"; Dao et al. 2022, FlashAttention). For every tile of query
// rows it keeps the running max m and running sum l of each row and an unnormalised output
// accumulator; for each key tile:
//   S = Q_t K_jᵀ · scale (+ mask), m' = max(m, rowmax S), P = exp(S − m'),
//   l = l·exp(m − m') + rowsum P, acc = acc·exp(m − m') + P V_j, m = m'.
// Finally O_t = acc / l. No n_q × n_k matrix exists; extra memory per thread is one tile × tile
// block plus a tile × d_v accumulator. With a pure causal mask the key tiles a query tile cannot
// see are skipped and only the diagonal tiles are masked. Query tiles are spread over the OpenMP
// threads. The two products and the row passes use Eigen's GEMM and packet math, or for float32
// with d_v a multiple of 16 the AVX-512 micro-kernels when the CPU has AVX-512F (avx512.h).

#include "core/kernels/kernels.h"

#include "core/kernels/avx512.h"
#include "core/kernels/detail.h"
#include "core/kernels/rowops.h"

#include <algorithm>
#include <atomic>
#include <cmath>
#include <limits>
#include <optional>
#include <string>
#include <type_traits>
#include <vector>

namespace attn {

namespace {

/// The two products and the row passes of one tile pair, by Eigen or by the AVX-512 code.
template<typename T> struct TileProducts
{
    const ConstMatrixRef<T> &query, &key, &value;
    bool avx512 = false;
    std::vector<float> packedKeys {}; // Kᵀ in panels of 32 keys (AVX-512 path only)

    detail::RowPasses passes {}; // the row passes (float and double)

    // s (rows × cols, row stride ld) = Q[i0 …] K[j0 …]ᵀ
    void scores(Index i0, Index rows, Index j0, Index cols, T *s, Index ld) const
    {
#ifdef ATTN_HAVE_AVX512_KERNELS
        if constexpr (std::is_same_v<T, float>) {
            if (avx512) {
                detail::avx512::scores(query.row(i0).data(), query.outerStride(), rows,
                                       packedKeys.data(), query.cols(), j0, cols, s, ld);
                return;
            }
        }
#endif
        Eigen::Map<Matrix<T>, 0, Eigen::OuterStride<>> sb(s, rows, cols, Eigen::OuterStride<>(ld));
        sb.noalias() = query.middleRows(i0, rows) * key.middleRows(j0, cols).transpose(); // GEMM
    }

    // acc (rows × d_v) = diag(correction) acc + P (rows × cols) V[j0 …]
    void accumulate(const T *p, Index ld, Index rows, Index j0, Index cols, Matrix<T> &acc,
                    const Vector<T> &correction) const
    {
#ifdef ATTN_HAVE_AVX512_KERNELS
        if constexpr (std::is_same_v<T, float>) {
            if (avx512) {
                detail::avx512::accumulate(p, ld, rows, cols, value.row(j0).data(),
                                           value.outerStride(), value.cols(), acc.data(),
                                           acc.outerStride(), correction.data(), false);
                return;
            }
        }
#endif
        acc.topRows(rows).array().colwise() *= correction.head(rows).array();
        const Eigen::Map<const Matrix<T>, 0, Eigen::OuterStride<>> pb(p, rows, cols,
                                                                      Eigen::OuterStride<>(ld));
        acc.topRows(rows).noalias() += pb * value.middleRows(j0, cols); // GEMM
    }
};

} // namespace

template<typename T>
Matrix<T> attentionStreaming(const ConstMatrixRef<T> &query, const ConstMatrixRef<T> &key,
                             const ConstMatrixRef<T> &value, T scale, const AttentionMask &mask,
                             Index tile)
{
    static constexpr const char *who = "attentionStreaming";
    detail::checkAttentionShapes(query.rows(), query.cols(), key.rows(), key.cols(), value.rows(),
                                 value.cols(), mask, who);
    if (tile < 1)
        throw InvalidArgument(std::string(who) + ": tile must be >= 1, got "
                              + std::to_string(tile));
    detail::checkFiniteInputs<T>(query, key, value, who);

    const Index nQ = query.rows();
    const Index nK = key.rows();
    const Index dV = value.cols();
    const T negInf = -std::numeric_limits<T>::infinity();
    const bool masked = !mask.empty();
    const bool pureCausal = mask.isPureCausal();
    // Fold the scale into the exponent (one pass less) unless an additive mask needs scaled
    // scores or the scale is not positive.
    const bool foldScale = (!masked || pureCausal) && scale > T(0);

    Matrix<T> output = Matrix<T>::Zero(nQ, dV); // n_q × d_v
    if (nQ == 0 || nK == 0)
        return output;

    TileProducts<T> products {query, key, value};
    Index tk = std::min(tile, nK); // keys per tile
#ifdef ATTN_HAVE_AVX512_KERNELS
    if constexpr (std::is_same_v<T, float>) {
        if (dV % 16 == 0 && dV > 0 && query.cols() > 0 && detail::avx512::enabled()) {
            products.avx512 = true;
            // Kᵀ packed in panels of 32 keys (n·d extra floats); key tiles start on a panel.
            products.packedKeys.resize(std::size_t(detail::avx512::packedKeysSize(nK, key.cols())));
            detail::avx512::packKeys(key.data(), key.outerStride(), nK, key.cols(),
                                     products.packedKeys.data());
            tk = std::min((tile + 31) / 32 * 32, (nK + 31) / 32 * 32);
        }
    }
#endif
    const Index tq = std::min(tile, nQ); // query rows per tile
    const Index queryTiles = (nQ + tq - 1) / tq;
    std::atomic<Index> badRow {std::numeric_limits<Index>::max()};
    const auto reportRow = [&badRow](Index i) {
        Index cur = badRow.load();
        while (i < cur && !badRow.compare_exchange_weak(cur, i)) { }
    };

    const bool parallel = queryTiles > 1 && kernelThreadsFor(nQ, nK, query.cols(), dV) > 1;
    // Small problems run on this thread alone, Eigen's GEMM included.
    std::optional<ScopedKernelThreads> oneThread;
    if (kernelThreadsFor(nQ, nK, query.cols(), dV) == 1)
        oneThread.emplace(1);
#pragma omp parallel if (parallel)
    {
        Matrix<T> s(tq, tk); // scores / probabilities of one tile: tq × tk
        Matrix<T> acc(tq, dV); // unnormalised output: tq × d_v
        Vector<T> m(tq), l(tq); // running max and sum per query row
        Vector<T> correction(tq); // exp(m_old − m_new) per row for this key tile

#pragma omp for schedule(dynamic, 1)
        for (Index qt = 0; qt < queryTiles; ++qt) {
            const Index i0 = qt * tq;
            const Index rows = std::min(tq, nQ - i0);
            m.setConstant(negInf);
            l.setZero();
            acc.setZero();
            // Keys the tile's last (most permissive) row may see; later key tiles are skipped.
            const Index keyEnd = pureCausal ? mask.causalLimit(i0 + rows - 1, nK) : nK;
            // Keys every row of the tile may see (tiles below need no masking).
            const Index keyAllAllowed = pureCausal ? mask.causalLimit(i0, nK) : nK;

            for (Index j0 = 0; j0 < keyEnd; j0 += tk) {
                const Index cols = std::min(tk, nK - j0);
                products.scores(i0, rows, j0, cols, s.data(), tk);
                if (!foldScale)
                    s.topLeftCorner(rows, cols) *= scale;
                // With foldScale the mask writes −inf into raw scores: −inf · scale stays −inf.
                if (masked && !(pureCausal && j0 + cols <= keyAllAllowed))
                    detail::applyMaskTile(s.data(), tk, i0, rows, j0, cols, mask, negInf);

                for (Index r = 0; r < rows; ++r) {
                    T *row = s.row(r).data();
                    correction(r) = T(1);
                    bool suspicious = false;
                    const T tileMax = products.passes.max(row, cols, suspicious);
                    bool bad = false;
                    if (suspicious)
                        for (Index c = 0; c < cols && !bad; ++c)
                            bad = std::isnan(row[c]) || row[c] == -negInf;
                    // Running max in the scaled domain (scale > 0 when folded).
                    const T newMax = std::max(m(r), foldScale ? tileMax * scale : tileMax);
                    if (bad || (!std::isfinite(newMax) && newMax != negInf)) {
                        reportRow(i0 + r); // NaN/+inf, or finite scores overflowed once scaled
                        std::fill(row, row + cols, T(0));
                        continue;
                    }
                    if (newMax == negInf) {
                        // Every key so far is masked for this row: contributes nothing.
                        std::fill(row, row + cols, T(0));
                        continue;
                    }
                    const T sum
                        = products.passes.expShiftSum(row, cols, newMax, foldScale ? scale : T(1));
                    if (m(r) != newMax) {
                        correction(r) = std::exp(m(r) - newMax); // 0 when m = -inf
                        l(r) *= correction(r);
                        m(r) = newMax;
                    }
                    l(r) += sum;
                }
                products.accumulate(s.data(), tk, rows, j0, cols, acc, correction);
            }

            for (Index r = 0; r < rows; ++r) {
                if (l(r) > T(0))
                    output.row(i0 + r) = acc.row(r) * (T(1) / l(r));
                // else: fully masked row, output stays 0
            }
        }
    }
    if (badRow.load() != std::numeric_limits<Index>::max())
        throw NonFiniteInput(std::string(who) + ": scaled scores overflowed in row "
                             + std::to_string(badRow.load()));
    return output;
}

template Matrix<float> attentionStreaming<float>(const Eigen::Ref<const MatrixF> &,
                                                 const Eigen::Ref<const MatrixF> &,
                                                 const Eigen::Ref<const MatrixF> &, float,
                                                 const AttentionMask &, Index);
template Matrix<double> attentionStreaming<double>(const Eigen::Ref<const MatrixD> &,
                                                   const Eigen::Ref<const MatrixD> &,
                                                   const Eigen::Ref<const MatrixD> &, double,
                                                   const AttentionMask &, Index);

} // namespace attn
