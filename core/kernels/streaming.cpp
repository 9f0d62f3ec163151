// The streaming kernel: online softmax over K/V tiles (Milakov & Gimelshein 2018, "Online
// normalizer calculation for softmax"; Dao et al. 2022, FlashAttention). For every tile of query
// rows it keeps the running max m and running sum l of each row and an unnormalised output
// accumulator; for each key tile:
//   S = Q_t K_jᵀ · scale (+ mask), m' = max(m, rowmax S), P = exp(S − m'),
//   l = l·exp(m − m') + rowsum P, acc = acc·exp(m − m') + P V_j, m = m'.
// Finally O_t = acc / l. No n_q × n_k matrix exists; extra memory per thread is one tile × tile
// block plus a tile × d_v accumulator. With a pure causal mask the key tiles a query tile cannot
// see are skipped and only the diagonal tiles are masked.

#include "kernels.h"

#include "detail.h"
#include "rowops.h"

#include <algorithm>
#include <atomic>
#include <cmath>
#include <limits>
#include <string>

namespace attn {

template<typename T>
Matrix<T> attentionStreaming(const Eigen::Ref<const Matrix<T>> &query,
                             const Eigen::Ref<const Matrix<T>> &key,
                             const Eigen::Ref<const Matrix<T>> &value, T scale,
                             const AttentionMask &mask, Index tile)
{
    static constexpr const char *who = "attentionStreaming";
    detail::checkAttentionShapes(query.rows(), query.cols(), key.rows(), key.cols(), value.rows(),
                                 value.cols(), mask, who);
    if (tile < 1)
        throw InvalidArgument(std::string(who) + ": tile must be >= 1, got "
                              + std::to_string(tile));
    detail::checkFiniteInput<T>(query, "query", who);
    detail::checkFiniteInput<T>(key, "key", who);
    detail::checkFiniteInput<T>(value, "value", who);

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

    const Index tq = std::min(tile, nQ); // query rows per tile
    const Index tk = std::min(tile, nK); // keys per tile
    const Index queryTiles = (nQ + tq - 1) / tq;
    std::atomic<Index> badRow {std::numeric_limits<Index>::max()};

#pragma omp parallel if (queryTiles > 1)
    {
        Matrix<T> s(tq, tk); // scores / probabilities of one tile: tq × tk
        Matrix<T> acc(tq, dV); // unnormalised output: tq × d_v
        Vector<T> m(tq), l(tq); // running max and sum per query row

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
            const auto qTile = query.middleRows(i0, rows);

            for (Index j0 = 0; j0 < keyEnd; j0 += tk) {
                const Index cols = std::min(tk, nK - j0);
                auto sb = s.topLeftCorner(rows, cols);
                sb.noalias() = qTile * key.middleRows(j0, cols).transpose(); // GEMM
                if (!foldScale)
                    sb *= scale;
                // With foldScale the mask writes −inf into raw scores: −inf · scale stays −inf.
                if (masked && !(pureCausal && j0 + cols <= keyAllAllowed))
                    detail::applyMaskTile(s.data(), tk, i0, rows, j0, cols, mask, negInf);

                for (Index r = 0; r < rows; ++r) {
                    T *row = s.row(r).data();
                    bool suspicious = false;
                    const T tileMax = detail::rowMax(row, cols, suspicious);
                    if (suspicious) {
                        Index bad = -1;
                        for (Index c = 0; c < cols && bad < 0; ++c)
                            if (std::isnan(row[c]) || row[c] == -negInf)
                                bad = c;
                        if (bad >= 0) {
                            const Index i = i0 + r;
                            Index cur = badRow.load();
                            while (i < cur && !badRow.compare_exchange_weak(cur, i)) { }
                            std::fill(row, row + cols, T(0));
                            continue;
                        }
                    }
                    // Running max in the scaled domain (scale > 0 when folded).
                    const T newMax = std::max(m(r), foldScale ? tileMax * scale : tileMax);
                    if (!std::isfinite(newMax) && newMax != negInf) {
                        const Index i = i0 + r; // finite scores overflowed once scaled
                        Index cur = badRow.load();
                        while (i < cur && !badRow.compare_exchange_weak(cur, i)) { }
                        std::fill(row, row + cols, T(0));
                        continue;
                    }
                    if (newMax == negInf) {
                        // Every key so far is masked for this row: contributes nothing.
                        std::fill(row, row + cols, T(0));
                        continue;
                    }
                    const T sum = detail::expShiftSum(row, cols, newMax, foldScale ? scale : T(1));
                    if (m(r) != newMax) {
                        const T correction = std::exp(m(r) - newMax); // 0 when m = -inf
                        l(r) *= correction;
                        acc.row(r) *= correction;
                        m(r) = newMax;
                    }
                    l(r) += sum;
                }
                acc.topRows(rows).noalias() += sb * value.middleRows(j0, cols); // GEMM
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
