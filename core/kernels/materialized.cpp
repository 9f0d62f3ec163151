// The materialized kernel: scores with one GEMM, a fused row softmax (scale, mask, max, exp,
// sum, normalise while the row is in cache), weights × V with one GEMM.

#include "kernels.h"

#include "detail.h"
#include "rowops.h"

#include <algorithm>
#include <atomic>
#include <limits>
#include <string>

namespace attn {

template<typename T>
Matrix<T> attentionMaterialized(const Eigen::Ref<const Matrix<T>> &query,
                                const Eigen::Ref<const Matrix<T>> &key,
                                const Eigen::Ref<const Matrix<T>> &value, T scale,
                                const AttentionMask &mask, Matrix<T> *weights)
{
    static constexpr const char *who = "attentionMaterialized";
    detail::checkAttentionShapes(query.rows(), query.cols(), key.rows(), key.cols(), value.rows(),
                                 value.cols(), mask, who);
    detail::checkFiniteInput<T>(query, "query", who);
    detail::checkFiniteInput<T>(key, "key", who);
    detail::checkFiniteInput<T>(value, "value", who);

    const Index nQ = query.rows();
    const Index nK = key.rows();
    const Index dV = value.cols();
    const T negInf = -std::numeric_limits<T>::infinity();

    Matrix<T> local;
    Matrix<T> &w = weights ? *weights : local; // scores → weights in place: n_q × n_k
    w.resize(nQ, nK);
    Matrix<T> output(nQ, dV); // n_q × d_v
    if (nK == 0 || nQ == 0) {
        output.setZero();
        return output;
    }

    w.noalias() = query * key.transpose(); // GEMM, threaded by Eigen

    const bool pureCausal = mask.isPureCausal();
    const bool masked = !mask.empty();
    std::atomic<Index> badRow {std::numeric_limits<Index>::max()};

#pragma omp parallel for schedule(static) if (nQ * nK >= (1 << 15) && nQ > 1)
    for (Index i = 0; i < nQ; ++i) {
        T *row = w.row(i).data();
        Index n = nK;
        if (pureCausal) {
            // Only keys < limit are allowed: softmax the prefix, zero the rest.
            n = mask.causalLimit(i, nK);
            std::fill(row + n, row + nK, T(0));
            detail::scaleRow(row, n, scale);
        } else {
            detail::scaleRow(row, n, scale);
            if (masked)
                detail::applyMaskTile(row, nK, i, 1, 0, nK, mask, negInf);
        }
        Index badCol = -1;
        if (detail::softmaxRow(row, n, badCol) == detail::RowStatus::NonFinite) {
            Index cur = badRow.load();
            while (i < cur && !badRow.compare_exchange_weak(cur, i)) { }
        }
    }
    if (badRow.load() != std::numeric_limits<Index>::max())
        throw NonFiniteInput(std::string(who) + ": scaled scores overflowed in row "
                             + std::to_string(badRow.load()));

    output.noalias() = w * value; // GEMM
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
