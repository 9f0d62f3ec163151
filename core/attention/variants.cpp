#include "core/attention/variants.h"

#include "core/attention/positional.h"

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
SinkAttentionResult<T>
learnedSinkAttention(const ConstMatrixRef<T> &query, const ConstMatrixRef<T> &key,
                     const ConstMatrixRef<T> &value, double sinkLogit, const AttentionMask &mask,
                     const AttentionOptions &options)
{
    if (std::isnan(sinkLogit) || sinkLogit == std::numeric_limits<double>::infinity())
        throw InvalidArgument("learned sink: the sink logit must be finite or -inf, got "
                              + std::to_string(sinkLogit));
    if (options.maskFill != -std::numeric_limits<double>::infinity())
        throw InvalidArgument("learned sink: masked scores must be -inf (a finite fill would give "
                              "masked keys weight beside the sink)");
    SinkAttentionResult<T> r;
    r.attention = scaledDotProductAttention<T>(query, key, value, mask, options);
    AttentionResult<T> &a = r.attention;
    const Index nQ = a.scaledScores.rows(), nK = a.scaledScores.cols();
    r.sinkMass.resize(nQ);
    for (Index i = 0; i < nQ; ++i) {
        // Log-sum-exp over the keys and the sink: m = max(b, max_j s_ij).
        double m = sinkLogit;
        for (Index j = 0; j < nK; ++j)
            m = std::max(m, double(a.scaledScores(i, j)));
        if (m == -std::numeric_limits<double>::infinity()) { // b = −inf, every key masked
            a.weights.row(i).setZero();
            r.sinkMass(i) = T(0);
            continue;
        }
        double sum = std::exp(sinkLogit - m);
        for (Index j = 0; j < nK; ++j)
            sum += std::exp(double(a.scaledScores(i, j)) - m);
        for (Index j = 0; j < nK; ++j)
            a.weights(i, j) = T(std::exp(double(a.scaledScores(i, j)) - m) / sum);
        r.sinkMass(i) = T(std::exp(sinkLogit - m) / sum);
    }
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
    r.second = scaledDotProductAttention<T>(query2, key2, value, mask, options);
    r.lambda = lambda;
    r.weights = r.first.weights - T(lambda) * r.second.weights;
    r.output.noalias() = r.weights * value;
    return r;
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

#define ATTN_INSTANTIATE_VARIANTS(T)                                                               \
    template SinkAttentionResult<T> learnedSinkAttention<T>(                                       \
        const ConstMatrixRef<T> &, const ConstMatrixRef<T> &, const ConstMatrixRef<T> &, double,   \
        const AttentionMask &, const AttentionOptions &);                                          \
    template Matrix<T> gatedOutput<T>(const ConstMatrixRef<T> &, const ConstMatrixRef<T> &);       \
    template DifferentialAttentionResult<T> differentialAttention<T>(                              \
        const ConstMatrixRef<T> &, const ConstMatrixRef<T> &, const ConstMatrixRef<T> &,           \
        const ConstMatrixRef<T> &, const ConstMatrixRef<T> &, double, const AttentionMask &,       \
        const AttentionOptions &);                                                                 \
    template struct MlaWeights<T>;                                                                 \
    template MlaResult<T> mlaDecompressed<T>(const ConstMatrixRef<T> &, const MlaWeights<T> &,     \
                                             const AttentionMask &);                               \
    template MlaResult<T> mlaAbsorbed<T>(const ConstMatrixRef<T> &, const MlaWeights<T> &,         \
                                         const AttentionMask &);
ATTN_INSTANTIATE_VARIANTS(float)
ATTN_INSTANTIATE_VARIANTS(double)
#undef ATTN_INSTANTIATE_VARIANTS

} // namespace attn
