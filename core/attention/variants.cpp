#include "core/attention/variants.h"

#include "core/attention/positional.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <string>

namespace attn {
namespace {

std::string shape(Index rows, Index cols)
{
    return std::to_string(rows) + " x " + std::to_string(cols);
}

} // namespace

template<typename T>
Vector<T> sinkSoftmaxRows(const Matrix<T> &scaledScores, double sinkLogit, Matrix<T> &weights)
{
    const Index nQ = scaledScores.rows(), nK = scaledScores.cols();
    weights.resize(nQ, nK);
    Vector<T> mass(nQ);
    for (Index i = 0; i < nQ; ++i) {
        // Log-sum-exp over the keys and the sink: m = max(b, max_j s_ij).
        double m = sinkLogit;
        for (Index j = 0; j < nK; ++j)
            m = std::max(m, double(scaledScores(i, j)));
        if (m == -std::numeric_limits<double>::infinity()) { // b = −inf, every key masked
            weights.row(i).setZero();
            mass(i) = T(0);
            continue;
        }
        double sum = std::exp(sinkLogit - m);
        for (Index j = 0; j < nK; ++j)
            sum += std::exp(double(scaledScores(i, j)) - m);
        for (Index j = 0; j < nK; ++j)
            weights(i, j) = T(std::exp(double(scaledScores(i, j)) - m) / sum);
        mass(i) = T(std::exp(sinkLogit - m) / sum);
    }
    return mass;
}

namespace {

void checkSinkLogit(double sinkLogit, const AttentionOptions &options)
{
    if (std::isnan(sinkLogit) || sinkLogit == std::numeric_limits<double>::infinity())
        throw InvalidArgument("learned sink: the sink logit must be finite or -inf, got "
                              + std::to_string(sinkLogit));
    if (options.maskFill != -std::numeric_limits<double>::infinity())
        throw InvalidArgument("learned sink: masked scores must be -inf (a finite fill would give "
                              "masked keys weight beside the sink)");
}

} // namespace

template<typename T>
SinkAttentionResult<T>
learnedSinkAttention(const ConstMatrixRef<T> &query, const ConstMatrixRef<T> &key,
                     const ConstMatrixRef<T> &value, double sinkLogit, const AttentionMask &mask,
                     const AttentionOptions &options)
{
    checkSinkLogit(sinkLogit, options);
    SinkAttentionResult<T> r;
    r.attention = scaledDotProductAttention<T>(query, key, value, mask, options);
    AttentionResult<T> &a = r.attention;
    r.sinkMass = sinkSoftmaxRows<T>(a.scaledScores, sinkLogit, a.weights);
    a.output.noalias() = a.weights * value;
    return r;
}

template<typename T>
Matrix<T> gatedOutput(const ConstMatrixRef<T> &output, const ConstMatrixRef<T> &gateLogits)
{
    if (output.rows() != gateLogits.rows() || output.cols() != gateLogits.cols())
        throw InvalidArgument("gated attention: gate logits "
                              + shape(gateLogits.rows(), gateLogits.cols()) + " for an output of "
                              + shape(output.rows(), output.cols()) + " (they must match)");
    if (gateLogits.array().isNaN().any())
        throw NonFiniteInput("gated attention: a gate logit is NaN");
    return (output.array() / (T(1) + (-gateLogits.array()).exp())).matrix();
}

template<typename T>
DifferentialAttentionResult<T>
differentialAttention(const ConstMatrixRef<T> &query1, const ConstMatrixRef<T> &key1,
                      const ConstMatrixRef<T> &query2, const ConstMatrixRef<T> &key2,
                      const ConstMatrixRef<T> &value, double lambda, const AttentionMask &mask,
                      const AttentionOptions &options)
{
    if (query2.rows() != query1.rows() || query2.cols() != query1.cols())
        throw InvalidArgument("differential attention: query2 is "
                              + shape(query2.rows(), query2.cols()) + ", query "
                              + shape(query1.rows(), query1.cols()) + " (they must match)");
    if (key2.rows() != key1.rows() || key2.cols() != key1.cols())
        throw InvalidArgument("differential attention: key2 is " + shape(key2.rows(), key2.cols())
                              + ", key " + shape(key1.rows(), key1.cols()) + " (they must match)");
    if (!std::isfinite(lambda))
        throw InvalidArgument("differential attention: lambda must be finite, got "
                              + std::to_string(lambda));
    DifferentialAttentionResult<T> r;
    r.first = scaledDotProductAttention<T>(query1, key1, value, mask, options);
    r.second = secondSoftmax("query2, key2", [&] {
        return scaledDotProductAttention<T>(query2, key2, value, mask, options);
    });
    r.lambda = lambda;
    r.weights = r.first.weights - T(lambda) * r.second.weights;
    r.output.noalias() = r.weights * value;
    return r;
}

RowMetrics learnedSinkRowMetrics(const MatrixD &weights, const VectorD &sinkMass,
                                 const std::vector<std::uint8_t> &fullyMasked)
{
    const Index nQ = weights.rows(), nK = weights.cols();
    if (sinkMass.size() != nQ || (!fullyMasked.empty() && Index(fullyMasked.size()) != nQ))
        throw InvalidArgument("learnedSinkRowMetrics: " + std::to_string(sinkMass.size())
                              + " sink masses and " + std::to_string(fullyMasked.size())
                              + " flags for " + std::to_string(nQ) + " rows");
    MatrixD withSink(nQ, nK + 1);
    withSink << weights, sinkMass;
    std::vector<std::uint8_t> empty(std::size_t(nQ), 0);
    for (Index i = 0; i < nQ && !fullyMasked.empty(); ++i)
        empty[std::size_t(i)] = fullyMasked[std::size_t(i)] && !(sinkMass(i) > 0.0) ? 1 : 0;
    return rowMetrics<double>(withSink, empty);
}

std::vector<double> meanRowSums(const std::vector<MatrixD> &weights,
                                const std::vector<std::vector<std::uint8_t>> &fullyMasked)
{
    if (!fullyMasked.empty() && fullyMasked.size() != weights.size())
        throw InvalidArgument("meanRowSums: " + std::to_string(fullyMasked.size())
                              + " heads of flags for " + std::to_string(weights.size())
                              + " heads of weights");
    std::vector<double> means;
    for (std::size_t h = 0; h < weights.size(); ++h) {
        const MatrixD &w = weights[h];
        if (!fullyMasked.empty() && Index(fullyMasked[h].size()) != w.rows())
            throw InvalidArgument("meanRowSums: " + std::to_string(fullyMasked[h].size())
                                  + " flags for " + std::to_string(w.rows()) + " rows");
        double total = 0;
        Index rows = 0;
        for (Index i = 0; i < w.rows(); ++i) {
            if (!fullyMasked.empty() && fullyMasked[h][std::size_t(i)])
                continue;
            total += w.row(i).sum();
            ++rows;
        }
        means.push_back(rows > 0 ? total / double(rows) : std::numeric_limits<double>::quiet_NaN());
    }
    return means;
}

double meanRowSumOverHeads(const std::vector<double> &perHead)
{
    double sum = 0;
    int count = 0;
    for (const double v : perHead)
        if (!std::isnan(v)) {
            sum += v;
            ++count;
        }
    return count > 0 ? sum / count : std::numeric_limits<double>::quiet_NaN();
}

double differentialLambdaInit(Index layer)
{
    if (layer < 1)
        throw InvalidArgument("differential attention: layers count from 1, got "
                              + std::to_string(layer));
    return 0.8 - 0.6 * std::exp(-0.3 * double(layer - 1));
}

double differentialLambda(const VectorD &lambdaQ1, const VectorD &lambdaK1, const VectorD &lambdaQ2,
                          const VectorD &lambdaK2, double lambdaInit)
{
    const Index d = lambdaQ1.size();
    if (lambdaK1.size() != d || lambdaQ2.size() != d || lambdaK2.size() != d)
        throw InvalidArgument("differential attention: lambda_q1, lambda_k1, lambda_q2, "
                              "lambda_k2 have "
                              + std::to_string(d) + ", " + std::to_string(lambdaK1.size()) + ", "
                              + std::to_string(lambdaQ2.size()) + ", "
                              + std::to_string(lambdaK2.size()) + " entries (they must match)");
    return std::exp(lambdaQ1.dot(lambdaK1)) - std::exp(lambdaQ2.dot(lambdaK2)) + lambdaInit;
}

namespace {

/// One value per head: `values` itself (h entries) or its single entry repeated. Throws
/// InvalidArgument naming `what` otherwise.
std::vector<double> perHead(const std::vector<double> &values, Index heads, const char *what)
{
    if (values.size() == std::size_t(heads))
        return values;
    if (values.size() == 1)
        return std::vector<double>(std::size_t(heads), values.front());
    throw InvalidArgument(std::string(what) + " has " + std::to_string(values.size())
                          + " entries, expected 1 or h = " + std::to_string(heads));
}

} // namespace

template<typename T>
GroupedVariantResult<T>
groupedVariantAttention(const ConstMatrixRef<T> &query, const ConstMatrixRef<T> &key,
                        const ConstMatrixRef<T> &value, Index heads, Index kvHeads,
                        const GroupedVariants<T> &variants, const AttentionMask &mask,
                        const AttentionOptions &options, const PositionOptions &positions)
{
    if (variants.hasSinks() && variants.isDifferential())
        throw InvalidArgument("learned sinks and differential attention do not combine: give "
                              "sink logits or a second query and key with lambda, not both");
    checkKvHeads(heads, kvHeads);
    GroupedVariantResult<T> r;
    if (variants.hasSinks()) {
        r.sinkLogits = perHead(variants.sinkLogits, heads, "sink logits");
        for (const double b : r.sinkLogits)
            checkSinkLogit(b, options);
    }
    if (variants.isDifferential()) {
        if (variants.query2.rows() != query.rows() || variants.query2.cols() != query.cols())
            throw InvalidArgument("differential attention: query2 is "
                                  + shape(variants.query2.rows(), variants.query2.cols())
                                  + ", query " + shape(query.rows(), query.cols())
                                  + " (they must match)");
        if (variants.key2.rows() != key.rows() || variants.key2.cols() != key.cols())
            throw InvalidArgument("differential attention: key2 is "
                                  + shape(variants.key2.rows(), variants.key2.cols()) + ", key "
                                  + shape(key.rows(), key.cols()) + " (they must match)");
        r.lambda = perHead(variants.lambda, heads, "differential attention: lambda");
        for (const double l : r.lambda)
            if (!std::isfinite(l))
                throw InvalidArgument("differential attention: lambda must be finite, got "
                                      + std::to_string(l));
    }
    r.attention
        = groupedQueryAttention<T>(query, key, value, heads, kvHeads, mask, options, positions);
    GroupedAttentionResult<T> &a = r.attention;
    const Index dV = value.cols() / kvHeads;
    if (variants.hasGate()
        && (variants.gateLogits.rows() != a.output.rows()
            || variants.gateLogits.cols() != a.output.cols()))
        throw InvalidArgument("gated attention: gate logits are "
                              + shape(variants.gateLogits.rows(), variants.gateLogits.cols())
                              + ", expected n_q x h*d_v = "
                              + shape(a.output.rows(), a.output.cols()));
    const auto headOutput = [&](Index h) {
        const std::size_t i = std::size_t(h);
        a.output.middleCols(h * dV, dV).noalias()
            = a.weights[i] * value.middleCols(a.kvHeadOf[i] * dV, dV);
    };
    if (variants.hasSinks()) {
        for (Index h = 0; h < heads; ++h) {
            const std::size_t i = std::size_t(h);
            const Vector<T> mass
                = sinkSoftmaxRows<T>(a.scaledScores[i], r.sinkLogits[i], a.weights[i]);
            r.sinkMass.push_back(mass.template cast<double>());
            headOutput(h);
        }
    }
    if (variants.isDifferential()) {
        GroupedAttentionResult<T> second = secondSoftmax("query2, key2", [&] {
            return groupedQueryAttention<T>(variants.query2, variants.key2, value, heads, kvHeads,
                                            mask, options, positions);
        });
        r.firstWeights = a.weights;
        for (Index h = 0; h < heads; ++h) {
            const std::size_t i = std::size_t(h);
            a.weights[i] = r.firstWeights[i] - T(r.lambda[i]) * second.weights[i];
            headOutput(h);
        }
        r.secondWeights = std::move(second.weights);
        r.secondScores = std::move(second.scores);
    }
    if (variants.hasGate()) {
        a.output = gatedOutput<T>(a.output, variants.gateLogits);
        r.gate = (T(1) / (T(1) + (-variants.gateLogits.array()).exp())).matrix();
    }
    return r;
}

template<typename T> void MlaWeights<T>::check(Index dModel) const
{
    auto need = [](const char *name, const Matrix<T> &m, Index rows, Index cols) {
        if (m.rows() != rows || m.cols() != cols)
            throw InvalidArgument(std::string("multi-head latent attention: ") + name + " is "
                                  + shape(m.rows(), m.cols()) + ", expected " + shape(rows, cols));
    };
    if (heads < 1)
        throw InvalidArgument("multi-head latent attention: heads must be >= 1, got "
                              + std::to_string(heads));
    const Index dC = latentDim(), dR = ropeDim();
    if (dC < 1 || dR < 2 || dR % 2 != 0)
        throw InvalidArgument("multi-head latent attention: the latent needs d_c >= 1 and the RoPE "
                              "key an even d_r >= 2, got d_c = "
                              + std::to_string(dC) + ", d_r = " + std::to_string(dR));
    if (upKey.cols() % heads != 0 || upValue.cols() % heads != 0 || upKey.cols() == 0
        || upValue.cols() == 0)
        throw InvalidArgument("multi-head latent attention: W_UK ("
                              + shape(upKey.rows(), upKey.cols()) + ") and W_UV ("
                              + shape(upValue.rows(), upValue.cols())
                              + ") need columns divisible by " + std::to_string(heads) + " heads");
    need("W_DKV", downKeyValue, dModel, dC);
    need("W_UK", upKey, dC, heads * headDim());
    need("W_UV", upValue, dC, heads * valueDim());
    need("W_KR", ropeKey, dModel, dR);
    need("W_Q", query, dModel, heads * headDim());
    need("W_QR", ropeQuery, dModel, heads * dR);
    if (!(ropeBase > 0) || !std::isfinite(ropeBase))
        throw InvalidArgument("multi-head latent attention: the RoPE base must be > 0, got "
                              + std::to_string(ropeBase));
}

namespace {

/// The cache (c, RoPE(x W_KR)) and every head's query parts, shared by both computations.
template<typename T> struct MlaParts
{
    Matrix<T> latent, ropeKeys, queries, ropeQueries;
    AttentionOptions options;
};

template<typename T> MlaParts<T> mlaParts(const ConstMatrixRef<T> &x, const MlaWeights<T> &w)
{
    w.check(x.cols());
    if (!x.allFinite())
        throw NonFiniteInput("multi-head latent attention: x holds NaN or inf");
    MlaParts<T> p;
    p.latent.noalias() = x * w.downKeyValue;
    p.ropeKeys.noalias() = x * w.ropeKey;
    applyRope<T>(p.ropeKeys, RopeConvention::Interleaved, w.ropeBase);
    p.queries.noalias() = x * w.query;
    p.ropeQueries.noalias() = x * w.ropeQuery;
    applyRopeHeads<T>(p.ropeQueries, w.heads, RopeConvention::Interleaved, w.ropeBase);
    p.options.scaleOverride = 1.0 / std::sqrt(double(w.headDim() + w.ropeDim()));
    return p;
}

} // namespace

template<typename T>
MlaResult<T> mlaDecompressed(const ConstMatrixRef<T> &x, const MlaWeights<T> &w,
                             const AttentionMask &mask)
{
    const MlaParts<T> p = mlaParts<T>(x, w);
    const Index n = x.rows(), dH = w.headDim(), dR = w.ropeDim(), dV = w.valueDim();
    MlaResult<T> r;
    r.output.resize(n, w.heads * dV);
    for (Index i = 0; i < w.heads; ++i) {
        Matrix<T> q(n, dH + dR), k(n, dH + dR);
        q << p.queries.middleCols(i * dH, dH), p.ropeQueries.middleCols(i * dR, dR);
        k << p.latent * w.upKey.middleCols(i * dH, dH), p.ropeKeys;
        const Matrix<T> v = p.latent * w.upValue.middleCols(i * dV, dV);
        AttentionResult<T> a = scaledDotProductAttention<T>(q, k, v, mask, p.options);
        r.output.middleCols(i * dV, dV) = a.output;
        r.weights.push_back(std::move(a.weights));
    }
    r.latent = p.latent;
    r.ropeKeys = p.ropeKeys;
    r.scale = *p.options.scaleOverride;
    return r;
}

template<typename T>
MlaResult<T> mlaAbsorbed(const ConstMatrixRef<T> &x, const MlaWeights<T> &w,
                         const AttentionMask &mask)
{
    const MlaParts<T> p = mlaParts<T>(x, w);
    const Index n = x.rows(), dC = w.latentDim(), dH = w.headDim(), dR = w.ropeDim(),
                dV = w.valueDim();
    // Attention over the cache itself: keys [c, k^R], values c; query head i is
    // [q^C_i W_UK,iᵀ, q^R_i], and its output A_i c is multiplied by W_UV,i afterwards.
    Matrix<T> k(n, dC + dR);
    k << p.latent, p.ropeKeys;
    MlaResult<T> r;
    r.output.resize(n, w.heads * dV);
    for (Index i = 0; i < w.heads; ++i) {
        Matrix<T> q(n, dC + dR);
        q << p.queries.middleCols(i * dH, dH) * w.upKey.middleCols(i * dH, dH).transpose(),
            p.ropeQueries.middleCols(i * dR, dR);
        AttentionResult<T> a = scaledDotProductAttention<T>(q, k, p.latent, mask, p.options);
        r.output.middleCols(i * dV, dV) = a.output * w.upValue.middleCols(i * dV, dV);
        r.weights.push_back(std::move(a.weights));
    }
    r.latent = p.latent;
    r.ropeKeys = p.ropeKeys;
    r.scale = *p.options.scaleOverride;
    return r;
}

template<typename T>
std::pair<Matrix<T>, Matrix<T>> mlaQueryKeyHeads(const ConstMatrixRef<T> &x, const MlaWeights<T> &w)
{
    const MlaParts<T> p = mlaParts<T>(x, w);
    const Index n = x.rows(), dH = w.headDim(), dR = w.ropeDim(), width = dH + dR;
    Matrix<T> q(n, w.heads * width), k(n, w.heads * width);
    for (Index i = 0; i < w.heads; ++i) {
        q.middleCols(i * width, dH) = p.queries.middleCols(i * dH, dH);
        q.middleCols(i * width + dH, dR) = p.ropeQueries.middleCols(i * dR, dR);
        k.middleCols(i * width, dH).noalias() = p.latent * w.upKey.middleCols(i * dH, dH);
        k.middleCols(i * width + dH, dR) = p.ropeKeys;
    }
    return {std::move(q), std::move(k)};
}

template<typename T>
std::vector<Matrix<T>> mlaScores(const ConstMatrixRef<T> &x, const MlaWeights<T> &w, bool absorbed)
{
    const Index n = x.rows(), dC = w.latentDim(), dH = w.headDim(), dR = w.ropeDim();
    std::vector<Matrix<T>> scores(std::size_t(w.heads), Matrix<T>(n, n));
    if (!absorbed) {
        // Each head's [q^C, q^R] against its [k^C, k^R], as the tile engine takes them.
        const auto [q, k] = mlaQueryKeyHeads<T>(x, w);
        const Index width = dH + dR;
        for (Index i = 0; i < w.heads; ++i)
            scores[std::size_t(i)].noalias()
                = q.middleCols(i * width, width) * k.middleCols(i * width, width).transpose();
        return scores;
    }
    // Absorbed: every head scores [q^C_i W_UK,iᵀ, q^R_i] against the cache [c, k^R] itself.
    const MlaParts<T> p = mlaParts<T>(x, w);
    Matrix<T> cache(n, dC + dR);
    cache << p.latent, p.ropeKeys;
    Matrix<T> q(n, dC + dR);
    for (Index i = 0; i < w.heads; ++i) {
        q << p.queries.middleCols(i * dH, dH) * w.upKey.middleCols(i * dH, dH).transpose(),
            p.ropeQueries.middleCols(i * dR, dR);
        scores[std::size_t(i)].noalias() = q * cache.transpose();
    }
    return scores;
}

#define ATTN_INSTANTIATE_VARIANTS(T)                                                               \
    template Vector<T> sinkSoftmaxRows<T>(const Matrix<T> &, double, Matrix<T> &);                 \
    template SinkAttentionResult<T> learnedSinkAttention<T>(                                       \
        const ConstMatrixRef<T> &, const ConstMatrixRef<T> &, const ConstMatrixRef<T> &, double,   \
        const AttentionMask &, const AttentionOptions &);                                          \
    template Matrix<T> gatedOutput<T>(const ConstMatrixRef<T> &, const ConstMatrixRef<T> &);       \
    template DifferentialAttentionResult<T> differentialAttention<T>(                              \
        const ConstMatrixRef<T> &, const ConstMatrixRef<T> &, const ConstMatrixRef<T> &,           \
        const ConstMatrixRef<T> &, const ConstMatrixRef<T> &, double, const AttentionMask &,       \
        const AttentionOptions &);                                                                 \
    template GroupedVariantResult<T> groupedVariantAttention<T>(                                   \
        const ConstMatrixRef<T> &, const ConstMatrixRef<T> &, const ConstMatrixRef<T> &, Index,    \
        Index, const GroupedVariants<T> &, const AttentionMask &, const AttentionOptions &,        \
        const PositionOptions &);                                                                  \
    template struct MlaWeights<T>;                                                                 \
    template MlaResult<T> mlaDecompressed<T>(const ConstMatrixRef<T> &, const MlaWeights<T> &,     \
                                             const AttentionMask &);                               \
    template MlaResult<T> mlaAbsorbed<T>(const ConstMatrixRef<T> &, const MlaWeights<T> &,         \
                                         const AttentionMask &);                                   \
    template std::vector<Matrix<T>> mlaScores<T>(const ConstMatrixRef<T> &, const MlaWeights<T> &, \
                                                 bool);                                            \
    template std::pair<Matrix<T>, Matrix<T>> mlaQueryKeyHeads<T>(const ConstMatrixRef<T> &,        \
                                                                 const MlaWeights<T> &);
ATTN_INSTANTIATE_VARIANTS(float)
ATTN_INSTANTIATE_VARIANTS(double)
#undef ATTN_INSTANTIATE_VARIANTS

} // namespace attn
