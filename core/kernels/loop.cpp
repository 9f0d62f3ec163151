// The per-row loop kernel: one query row at a time, the slow obvious reference (E9 and the
// oracle of the tests). Deliberately independent of the fast paths: dot products per key,
// the mask queried cell by cell, std::exp per entry.

#include "core/kernels/kernels.h"

#include "core/kernels/detail.h"

#include <cmath>
#include <limits>
#include <string>
#include <vector>

namespace attn {

template<typename T>
Matrix<T> attentionLoop(const ConstMatrixRef<T> &query, const ConstMatrixRef<T> &key,
                        const ConstMatrixRef<T> &value, T scale, const AttentionMask &mask,
                        Matrix<T> *weights)
{
    static constexpr const char *who = "attentionLoop";
    detail::checkAttentionInputs<T>(query, key, value, mask, who);

    const Index nQ = query.rows();
    const Index nK = key.rows();
    const Index dV = value.cols();
    const T negInf = -std::numeric_limits<T>::infinity();
    const MatrixD *additive = mask.additiveTerm();
    const bool masked = !mask.empty();

    Matrix<T> output = Matrix<T>::Zero(nQ, dV); // n_q × d_v
    if (weights)
        weights->setZero(nQ, nK);
    std::vector<T> s(std::size_t(nK), T(0)); // one row of scores: n_k

    for (Index i = 0; i < nQ; ++i) {
        // s_j = (q_i · k_j) · scale + additive_ij, or -inf when (i, j) is masked
        T rowMax = negInf;
        for (Index j = 0; j < nK; ++j) {
            T sj = query.row(i).dot(key.row(j)) * scale;
            if (additive)
                sj += T((*additive)(i, j));
            if (masked && mask.isMasked(i, j))
                sj = negInf;
            else if (!std::isfinite(sj))
                throw NonFiniteInput(std::string(who) + ": scaled score overflowed at row "
                                     + std::to_string(i) + ", col " + std::to_string(j));
            s[std::size_t(j)] = sj;
            if (sj > rowMax)
                rowMax = sj;
        }
        if (rowMax == negInf)
            continue; // fully masked row: zero weights, zero output
        T sum = 0;
        for (Index j = 0; j < nK; ++j) {
            T &sj = s[std::size_t(j)];
            sj = sj == negInf ? T(0) : std::exp(sj - rowMax);
            sum += sj;
        }
        // o_i = Σ_j w_ij v_j
        for (Index j = 0; j < nK; ++j) {
            const T w = s[std::size_t(j)] / sum;
            if (weights)
                (*weights)(i, j) = w;
            if (w != T(0))
                output.row(i) += w * value.row(j);
        }
    }
    return output;
}

template Matrix<float> attentionLoop<float>(const Eigen::Ref<const MatrixF> &,
                                            const Eigen::Ref<const MatrixF> &,
                                            const Eigen::Ref<const MatrixF> &, float,
                                            const AttentionMask &, MatrixF *);
template Matrix<double> attentionLoop<double>(const Eigen::Ref<const MatrixD> &,
                                              const Eigen::Ref<const MatrixD> &,
                                              const Eigen::Ref<const MatrixD> &, double,
                                              const AttentionMask &, MatrixD *);

} // namespace attn
