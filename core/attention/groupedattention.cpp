#include "core/attention/groupedattention.h"

#include "core/kernels/detail.h"

#include <cmath>
#include <string>

namespace attn {

void checkKvHeads(Index heads, Index kvHeads)
{
    if (heads < 1)
        throw InvalidArgument("h must be >= 1 query heads, got " + std::to_string(heads));
    if (kvHeads < 1 || kvHeads > heads || heads % kvHeads != 0)
        throw InvalidArgument("g = " + std::to_string(kvHeads) + " key/value heads must divide h = "
                              + std::to_string(heads) + " query heads (1 <= g <= h)");
}

Index kvHeadOf(Index queryHead, Index heads, Index kvHeads)
{
    checkKvHeads(heads, kvHeads);
    if (queryHead < 0 || queryHead >= heads)
        throw InvalidArgument("query head " + std::to_string(queryHead)
                              + " is not in [0, h = " + std::to_string(heads) + ")");
    return queryHead * kvHeads / heads;
}

template<typename T> Matrix<T> meanPoolHeads(const Matrix<T> &x, Index heads, Index kvHeads)
{
    checkKvHeads(heads, kvHeads);
    if (x.cols() % heads != 0)
        throw InvalidArgument("meanPoolHeads: " + std::to_string(x.cols())
                              + " columns are not h = " + std::to_string(heads) + " heads");
    if (kvHeads == heads)
        return x;
    const Index dK = x.cols() / heads, group = heads / kvHeads;
    Matrix<T> pooled = Matrix<T>::Zero(x.rows(), kvHeads * dK);
    for (Index i = 0; i < heads; ++i)
        pooled.middleCols((i / group) * dK, dK) += x.middleCols(i * dK, dK);
    return pooled / T(group);
}

template MatrixF meanPoolHeads<float>(const MatrixF &, Index, Index);
template MatrixD meanPoolHeads<double>(const MatrixD &, Index, Index);

Index groupedQueryParameterCount(Index dModel, Index heads, Index kvHeads, bool bias)
{
    if (dModel < 1)
        throw InvalidArgument("d_model must be >= 1, got " + std::to_string(dModel));
    checkKvHeads(heads, kvHeads);
    if (dModel % heads != 0)
        throw InvalidArgument("d_model = " + std::to_string(dModel)
                              + " is not divisible by h = " + std::to_string(heads) + " heads");
    const double dK = double(dModel / heads);
    const double d = double(dModel);
    const double kv = double(kvHeads) * dK; // g·d_k
    const double count = 2 * d * d + 2 * kv * d + (bias ? 2 * d + 2 * kv : 0.0);
    if (count >= 9.2e18)
        throw InvalidArgument("parameter count of d_model = " + std::to_string(dModel)
                              + " does not fit in 63 bits");
    const Index dk = dModel / heads;
    return 2 * dModel * dModel + 2 * kvHeads * dk * dModel
        + (bias ? 2 * dModel + 2 * kvHeads * dk : 0);
}

Index kvCacheBytesPerToken(Index kvHeads, Index dK, Index bytesPerElement)
{
    if (kvHeads < 1 || dK < 1 || bytesPerElement < 1)
        throw InvalidArgument("KV cache size needs g, d_k and bytes per element >= 1, got g = "
                              + std::to_string(kvHeads) + ", d_k = " + std::to_string(dK)
                              + ", bytes = " + std::to_string(bytesPerElement));
    if (2.0 * double(kvHeads) * double(dK) * double(bytesPerElement) >= 9.2e18)
        throw InvalidArgument("KV cache size 2 · g · d_k · bytes does not fit in 63 bits");
    return 2 * kvHeads * dK * bytesPerElement;
}

template<typename T>
GroupedAttentionResult<T>
groupedQueryAttention(const ConstMatrixRef<T> &query, const ConstMatrixRef<T> &key,
                      const ConstMatrixRef<T> &value, Index heads, Index kvHeads,
                      const AttentionMask &mask, const AttentionOptions &options,
                      const PositionOptions &positions)
{
    static constexpr const char *who = "groupedQueryAttention";
    const auto fail
        = [](const std::string &what) { throw InvalidArgument(std::string(who) + ": " + what); };
    try {
        checkKvHeads(heads, kvHeads);
    } catch (const InvalidArgument &e) {
        fail(e.what());
    }
    const Index h = heads, g = kvHeads;
    if (query.cols() % h != 0 || query.cols() == 0)
        fail("query " + shapeString(query.rows(), query.cols()) + " is not h = " + std::to_string(h)
             + " heads of equal width d_k >= 1");
    const Index dK = query.cols() / h;
    if (key.cols() != g * dK)
        fail("key " + shapeString(key.rows(), key.cols())
             + " must have g·d_k = " + std::to_string(g) + "·" + std::to_string(dK) + " = "
             + std::to_string(g * dK) + " columns (query " + shapeString(query.rows(), query.cols())
             + ", h = " + std::to_string(h) + ")");
    if (value.cols() % g != 0)
        fail("value " + shapeString(value.rows(), value.cols()) + " is not g = " + std::to_string(g)
             + " heads of equal width d_v");
    if (key.rows() != value.rows())
        fail("key has n_k = " + std::to_string(key.rows()) + " rows but value has "
             + std::to_string(value.rows()));
    const Index dV = value.cols() / g;
    try {
        mask.checkShape(query.rows(), key.rows());
    } catch (const InvalidArgument &e) {
        fail(e.what());
    }
    if (options.checkFinite) {
        detail::checkFiniteInputs<T>(query, key, value, who);
    }
    const Index nQ = query.rows(), nK = key.rows();

    // RoPE: every query head and every key/value head's keys rotated once (n × heads·d_k).
    Matrix<T> q = query, k = key;
    if (positions.scheme == PositionalScheme::Rope) {
        applyRopeHeads<T>(q, h, positions.ropeConvention, positions.ropeBase,
                          positions.queryFirstPosition);
        applyRopeHeads<T>(k, g, positions.ropeConvention, positions.ropeBase,
                          positions.keyFirstPosition);
    }

    GroupedAttentionResult<T> r;
    r.output.resize(nQ, h * dV);
    r.weights.resize(std::size_t(h));
    r.scores.resize(std::size_t(h));
    r.scaledScores.resize(std::size_t(h));
    r.fullyMasked.resize(std::size_t(h));
    r.kvHeadOf.resize(std::size_t(h));
    if (positions.scheme == PositionalScheme::Alibi)
        r.alibiSlopes = alibiSlopes(h);

    AttentionOptions headOptions = options;
    headOptions.checkFinite = false; // checked above
    for (Index i = 0; i < h; ++i) {
        const Index kv = i * g / h; // repeat_interleave: query heads i·h/g … share head kv
        const auto u = std::size_t(i);
        r.kvHeadOf[u] = kv;
        AttentionMask headMask = mask;
        if (positions.scheme == PositionalScheme::Alibi)
            headMask = mask
                | AttentionMask::additive(alibiBias(nQ, nK, r.alibiSlopes[u], mask.hasCausal(),
                                                    positions.queryFirstPosition,
                                                    positions.keyFirstPosition));
        AttentionResult<T> a
            = scaledDotProductAttention<T>(q.middleCols(i * dK, dK), k.middleCols(kv * dK, dK),
                                           value.middleCols(kv * dV, dV), headMask, headOptions);
        r.output.middleCols(i * dV, dV) = a.output;
        r.scale = a.scale;
        r.weights[u] = std::move(a.weights);
        r.scores[u] = std::move(a.scores);
        r.scaledScores[u] = std::move(a.scaledScores);
        r.fullyMasked[u] = std::move(a.fullyMasked);
    }
    return r;
}

template<typename T> VectorD sinkWeightMass(const Matrix<T> &weights, Index sinks)
{
    if (sinks < 0)
        throw InvalidArgument("number of attention sinks must be >= 0, got "
                              + std::to_string(sinks));
    const Index s = std::min<Index>(sinks, weights.cols());
    VectorD mass(weights.rows());
    for (Index i = 0; i < weights.rows(); ++i) {
        double m = 0;
        for (Index j = 0; j < s; ++j)
            m += double(weights(i, j));
        mass(i) = m;
    }
    return mass;
}

template GroupedAttentionResult<float>
groupedQueryAttention<float>(const Eigen::Ref<const MatrixF> &, const Eigen::Ref<const MatrixF> &,
                             const Eigen::Ref<const MatrixF> &, Index, Index, const AttentionMask &,
                             const AttentionOptions &, const PositionOptions &);
template GroupedAttentionResult<double>
groupedQueryAttention<double>(const Eigen::Ref<const MatrixD> &, const Eigen::Ref<const MatrixD> &,
                              const Eigen::Ref<const MatrixD> &, Index, Index,
                              const AttentionMask &, const AttentionOptions &,
                              const PositionOptions &);
template VectorD sinkWeightMass<float>(const MatrixF &, Index);
template VectorD sinkWeightMass<double>(const MatrixD &, Index);

} // namespace attn
