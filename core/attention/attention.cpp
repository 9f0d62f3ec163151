#include "core/attention/attention.h"

#include "core/attention/softmax.h"
#include "core/base/blas.h"
#include "core/kernels/detail.h"
#include "core/kernels/rowops.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <string>

namespace attn {

double effectiveScale(Index dK, const AttentionOptions &options)
{
    if (options.scaleOverride) {
        if (!std::isfinite(*options.scaleOverride))
            throw InvalidArgument("scale override must be finite, got "
                                  + std::to_string(*options.scaleOverride));
        return *options.scaleOverride;
    }
    if (!(options.scaleExponent >= 0.0 && options.scaleExponent <= 1.0))
        throw InvalidArgument("scale exponent alpha must be in [0, 1], got "
                              + std::to_string(options.scaleExponent));
    if (!(options.temperature > 0.0) || !std::isfinite(options.temperature))
        throw InvalidArgument("temperature must be > 0 and finite, got "
                              + std::to_string(options.temperature));
    if (dK < 1)
        throw InvalidArgument("d_k must be >= 1, got " + std::to_string(dK));
    return scoreScale(dK, options.scaleExponent, options.temperature);
}

double scoreScale(Index dK, double scaleExponent, double temperature)
{
    return std::pow(double(std::max<Index>(1, dK)), -scaleExponent) / temperature;
}

template<typename T>
AttentionResult<T>
scaledDotProductAttention(const ConstMatrixRef<T> &query, const ConstMatrixRef<T> &key,
                          const ConstMatrixRef<T> &value, const AttentionMask &mask,
                          const AttentionOptions &options)
{
    static constexpr const char *who = "scaledDotProductAttention";
    // query: n_q × d_k, key: n_k × d_k, value: n_k × d_v (row-major)
    detail::checkAttentionShapes(query.rows(), query.cols(), key.rows(), key.cols(), value.rows(),
                                 value.cols(), mask, who);
    if (std::isnan(options.maskFill) || options.maskFill == std::numeric_limits<double>::infinity())
        throw InvalidArgument(std::string(who) + ": mask fill must be finite or -inf, got "
                              + detail::valueName(options.maskFill));
    if (options.checkFinite) {
        detail::checkFiniteInputs<T>(query, key, value, who);
    }
    const Index nQ = query.rows();
    const Index nK = key.rows();

    AttentionResult<T> r;
    r.scale = effectiveScale(query.cols(), options);
    const T scale = T(r.scale);
    const T fill = T(options.maskFill);

    // scores: n_q × n_k = Q Kᵀ (one GEMM; the scale is applied separately so the product is
    // not turned into a lazy coefficient-wise expression).
    r.scores.resize(nQ, nK);
    gemmTransposed<T>(query, key, r.scores);
    // scaledScores: n_q × n_k = scores · scale + additive, masked cells = fill
    r.scaledScores = r.scores * scale;
    detail::applyMaskTile<T>(r.scaledScores.data(), nK, 0, nQ, 0, nK, mask, fill);

    r.weights = r.scaledScores;
    try {
        softmaxRowsInPlace(r.weights, &r.fullyMasked);
    } catch (const NonFiniteInput &e) {
        throw NonFiniteInput(std::string(who) + ": scaled scores overflowed: " + e.what());
    }
    // output: n_q × d_v = W V
    r.output.resize(nQ, value.cols());
    if (nK == 0)
        r.output.setZero(); // no keys: every row is fully masked
    else
        gemm<T>(r.weights, value, r.output);
    return r;
}

template AttentionResult<float> scaledDotProductAttention<float>(const Eigen::Ref<const MatrixF> &,
                                                                 const Eigen::Ref<const MatrixF> &,
                                                                 const Eigen::Ref<const MatrixF> &,
                                                                 const AttentionMask &,
                                                                 const AttentionOptions &);
template AttentionResult<double> scaledDotProductAttention<double>(
    const Eigen::Ref<const MatrixD> &, const Eigen::Ref<const MatrixD> &,
    const Eigen::Ref<const MatrixD> &, const AttentionMask &, const AttentionOptions &);

} // namespace attn
