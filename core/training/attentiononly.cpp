#include "core/training/attentiononly.h"

#include "core/base/blas.h"
#include "core/random/random.h"

#include <algorithm>
#include <cmath>
#include <limits>

namespace attn::training {

namespace {

std::string num(Index v)
{
    return std::to_string(v);
}

void checkShape(const char *what, Index rows, Index cols, Index wantRows, Index wantCols)
{
    if (rows != wantRows || cols != wantCols)
        throw InvalidArgument(std::string(what) + " is " + shapeString(rows, cols) + ", expected "
                              + shapeString(wantRows, wantCols));
}

/// The batch of one attention layer: inputs x_l, zero targets (the layer's own loss is unused).
template<typename T> void layerBatch(const Matrix<T> &x, Index B, Index n, Batch<T> &out)
{
    out.batch = B;
    out.length = n;
    out.inputs = x;
    if (out.targets.rows() != x.rows() || out.targets.cols() != x.cols())
        out.targets.setZero(x.rows(), x.cols());
}

} // namespace

LayerConfig AttentionOnlyConfig::layerConfig() const
{
    LayerConfig c;
    c.dModel = dModel;
    c.heads = heads;
    c.scaleExponent = 0.5;
    c.temperature = 1.0;
    c.causal = true;
    c.positionWidth = 0;
    return c;
}

void AttentionOnlyConfig::validate() const
{
    if (vocab < 2)
        throw InvalidArgument("vocab must be >= 2, got " + num(vocab));
    if (dModel < 1)
        throw InvalidArgument("d_model must be >= 1, got " + num(dModel));
    if (heads < 1 || dModel % heads != 0)
        throw InvalidArgument("heads h must be >= 1 and divide d_model, got h = " + num(heads)
                              + ", d_model = " + num(dModel));
    if (layers < 1)
        throw InvalidArgument("layers must be >= 1, got " + num(layers));
    if (maxLength < 2)
        throw InvalidArgument("max_length must be >= 2, got " + num(maxLength));
    // In double, so that no product overflows before the check.
    const double E = double(dModel);
    const double count
        = double(vocab) * E * 2 + double(maxLength) * E + double(layers) * (4 * E * E + 4 * E);
    if (count > double(std::int64_t(1) << 28))
        throw InvalidArgument("a model of vocab " + num(vocab) + ", d_model " + num(dModel) + ", "
                              + num(layers) + " layers and max_length " + num(maxLength) + " has "
                              + std::to_string(std::int64_t(count))
                              + " parameters, more than 2^28");
}

template<typename T>
AttentionOnlyParameters<T> AttentionOnlyParameters<T>::zeros(const AttentionOnlyConfig &config)
{
    config.validate();
    AttentionOnlyParameters p;
    p.embedding = Matrix<T>::Zero(config.vocab, config.dModel);
    p.positions = Matrix<T>::Zero(config.maxLength, config.dModel);
    p.layers.assign(std::size_t(config.layers), Parameters<T>::zeros(config.dModel));
    p.unembedding = Matrix<T>::Zero(config.dModel, config.vocab);
    return p;
}

template<typename T>
void AttentionOnlyParameters<T>::checkShapes(const AttentionOnlyConfig &config) const
{
    const Index E = config.dModel;
    checkShape("embedding W_E", embedding.rows(), embedding.cols(), config.vocab, E);
    checkShape("positions W_pos", positions.rows(), positions.cols(), config.maxLength, E);
    if (Index(layers.size()) != config.layers)
        throw InvalidArgument("the parameters hold " + num(Index(layers.size()))
                              + " layers, expected " + num(config.layers));
    for (const Parameters<T> &l : layers)
        l.checkShapes(E);
    checkShape("unembedding W_U", unembedding.rows(), unembedding.cols(), E, config.vocab);
}

template<typename T> Index AttentionOnlyParameters<T>::count() const
{
    Index c = embedding.size() + positions.size() + unembedding.size();
    for (const Parameters<T> &l : layers)
        c += l.count();
    return c;
}

template<typename T> std::vector<std::span<T>> AttentionOnlyParameters<T>::tensors()
{
    const auto span = [](auto &m) { return std::span<T>(m.data(), std::size_t(m.size())); };
    std::vector<std::span<T>> out {span(embedding), span(positions)};
    for (Parameters<T> &l : layers) {
        out.push_back(span(l.inProjWeight));
        out.push_back(span(l.inProjBias));
        out.push_back(span(l.outProjWeight));
        out.push_back(span(l.outProjBias));
    }
    out.push_back(span(unembedding));
    return out;
}

template<typename T> std::vector<std::span<const T>> AttentionOnlyParameters<T>::tensors() const
{
    // The same list as the writable one, read only (the order is defined once).
    const auto writable = const_cast<AttentionOnlyParameters<T> &>(*this).tensors();
    return std::vector<std::span<const T>>(writable.begin(), writable.end());
}

template<typename T>
std::vector<std::string> AttentionOnlyParameters<T>::tensorNames(Index layerCount)
{
    std::vector<std::string> out {"embedding", "positions"};
    for (Index l = 0; l < layerCount; ++l)
        for (const char *name :
             {"in_proj_weight", "in_proj_bias", "out_proj_weight", "out_proj_bias"})
            out.push_back("layer" + std::to_string(l) + "." + name);
    out.push_back("unembedding");
    return out;
}

AttentionOnlyParameters<double> initialAttentionOnly(const AttentionOnlyConfig &config,
                                                     std::uint64_t seed, double std)
{
    config.validate();
    if (!(std >= 0) || !std::isfinite(std))
        throw InvalidArgument("initial standard deviation init_std must be >= 0 and finite, got "
                              + std::to_string(std));
    Generator rng(seed);
    AttentionOnlyParameters<double> p = AttentionOnlyParameters<double>::zeros(config);
    const Index E = config.dModel;
    p.embedding = rng.normal(0.0, std, config.vocab, E);
    p.positions = rng.normal(0.0, std, config.maxLength, E);
    for (Parameters<double> &l : p.layers) {
        l.inProjWeight = rng.normal(0.0, std, 3 * E, E);
        l.outProjWeight = rng.normal(0.0, std, E, E);
    }
    p.unembedding = rng.normal(0.0, std, E, config.vocab);
    return p;
}

void TokenBatch::validate(const AttentionOnlyConfig &config) const
{
    if (batch < 1 || length < 2 || length > config.maxLength)
        throw InvalidArgument("a token batch needs B >= 1 and 2 <= n <= max_length = "
                              + num(config.maxLength) + ", got B = " + num(batch)
                              + ", n = " + num(length));
    if (Index(tokens.size()) != batch * length)
        throw InvalidArgument("a token batch of B = " + num(batch) + ", n = " + num(length)
                              + " holds " + num(Index(tokens.size())) + " tokens, expected "
                              + num(batch * length));
    for (std::size_t i = 0; i < tokens.size(); ++i)
        if (tokens[i] < 0 || tokens[i] >= config.vocab)
            throw InvalidArgument("token " + std::to_string(i) + " is " + std::to_string(tokens[i])
                                  + ", outside the vocabulary [0, " + num(config.vocab) + ")");
    if (firstScoredQuery < 0 || firstScoredQuery > length - 2)
        throw InvalidArgument("first scored query must be in [0, n − 2] = [0, " + num(length - 2)
                              + "], got " + num(firstScoredQuery));
}

template<typename T>
void attentionOnlyForward(const AttentionOnlyConfig &config,
                          const AttentionOnlyParameters<T> &params, const TokenBatch &batch,
                          AttentionOnlyCache<T> &cache)
{
    config.validate();
    params.checkShapes(config);
    batch.validate(config);
    const Index B = batch.batch, n = batch.length, E = config.dModel, rows = B * n;
    const LayerConfig lc = config.layerConfig();

    Matrix<T> x(rows, E); // x_0
    for (Index b = 0; b < B; ++b)
        for (Index t = 0; t < n; ++t) {
            const Index r = b * n + t;
            x.row(r) = params.embedding.row(Index(batch.tokens[std::size_t(r)]))
                + params.positions.row(t);
        }
    cache.layers.resize(std::size_t(config.layers));
    Batch<T> layerInput;
    for (Index l = 0; l < config.layers; ++l) {
        layerBatch(x, B, n, layerInput);
        ForwardCache<T> &c = cache.layers[std::size_t(l)];
        forwardInto(lc, params.layers[std::size_t(l)], layerInput, c);
        x += c.output; // the residual stream
    }
    cache.last = std::move(x);
    cache.logits.resize(rows, config.vocab);
    gemm<T>(cache.last, params.unembedding, cache.logits);
}

namespace {

/// log Σ exp over one row, stable (max subtracted first).
template<typename Row> double logSumExp(const Row &row)
{
    const double m = double(row.maxCoeff());
    double s = 0;
    for (Index j = 0; j < row.size(); ++j)
        s += std::exp(double(row(j)) - m);
    return m + std::log(s);
}

} // namespace

template<typename T>
double attentionOnlyLoss(const AttentionOnlyCache<T> &cache, const TokenBatch &batch)
{
    const Index B = batch.batch, n = batch.length;
    double sum = 0;
    for (Index b = 0; b < B; ++b)
        for (Index t = batch.firstScoredQuery; t + 1 < n; ++t) {
            const Index r = b * n + t;
            const auto row = cache.logits.row(r);
            sum += logSumExp(row) - double(row(Index(batch.tokens[std::size_t(r + 1)])));
        }
    return sum / double(batch.scoredQueries());
}

template<typename T>
void attentionOnlyBackward(const AttentionOnlyConfig &config,
                           const AttentionOnlyParameters<T> &params, const TokenBatch &batch,
                           const AttentionOnlyCache<T> &cache, AttentionOnlyParameters<T> &grads,
                           AttentionOnlyScratch<T> &s)
{
    config.validate();
    params.checkShapes(config);
    batch.validate(config);
    const Index B = batch.batch, n = batch.length, E = config.dModel, V = config.vocab;
    const Index rows = B * n;
    if (cache.logits.rows() != rows || cache.logits.cols() != V
        || Index(cache.layers.size()) != config.layers)
        throw InvalidArgument("the forward cache holds logits "
                              + shapeString(cache.logits.rows(), cache.logits.cols())
                              + ", expected (B·n) × V = " + shapeString(rows, V));
    const LayerConfig lc = config.layerConfig();

    // dlogits: softmax minus the one-hot next token, over the scored queries, divided by their
    // number (the mean).
    s.dLogits.setZero(rows, V);
    const double inverseCount = 1.0 / double(batch.scoredQueries());
    for (Index b = 0; b < B; ++b)
        for (Index t = batch.firstScoredQuery; t + 1 < n; ++t) {
            const Index r = b * n + t;
            const auto logits = cache.logits.row(r);
            const double lse = logSumExp(logits);
            for (Index j = 0; j < V; ++j)
                s.dLogits(r, j) = T(std::exp(double(logits(j)) - lse) * inverseCount);
            s.dLogits(r, Index(batch.tokens[std::size_t(r + 1)])) -= T(inverseCount);
        }

    grads.unembedding.resize(E, V);
    gemmTransposedA<T>(cache.last, s.dLogits, grads.unembedding); // E × V
    s.dResidual.resize(rows, E);
    gemmTransposed<T>(s.dLogits, params.unembedding, s.dResidual); // (B·n) × E

    grads.layers.resize(std::size_t(config.layers));
    s.dInput.resize(rows, E);
    for (Index l = config.layers - 1; l >= 0; --l) {
        const std::size_t li = std::size_t(l);
        backwardInto(lc, params.layers[li], cache.layers[li], s.dResidual, grads.layers[li],
                     s.layer);
        gemm<T>(s.layer.dQkv, params.layers[li].inProjWeight, s.dInput); // (B·n) × E
        s.dResidual += s.dInput;
    }

    grads.positions.setZero(config.maxLength, E);
    grads.embedding.setZero(V, E);
    for (Index b = 0; b < B; ++b)
        for (Index t = 0; t < n; ++t) {
            const Index r = b * n + t;
            grads.positions.row(t) += s.dResidual.row(r);
            grads.embedding.row(Index(batch.tokens[std::size_t(r)])) += s.dResidual.row(r);
        }
}

template struct AttentionOnlyParameters<float>;
template struct AttentionOnlyParameters<double>;
template void attentionOnlyForward(const AttentionOnlyConfig &,
                                   const AttentionOnlyParameters<float> &, const TokenBatch &,
                                   AttentionOnlyCache<float> &);
template void attentionOnlyForward(const AttentionOnlyConfig &,
                                   const AttentionOnlyParameters<double> &, const TokenBatch &,
                                   AttentionOnlyCache<double> &);
template double attentionOnlyLoss(const AttentionOnlyCache<float> &, const TokenBatch &);
template double attentionOnlyLoss(const AttentionOnlyCache<double> &, const TokenBatch &);
template void attentionOnlyBackward(const AttentionOnlyConfig &,
                                    const AttentionOnlyParameters<float> &, const TokenBatch &,
                                    const AttentionOnlyCache<float> &,
                                    AttentionOnlyParameters<float> &,
                                    AttentionOnlyScratch<float> &);
template void attentionOnlyBackward(const AttentionOnlyConfig &,
                                    const AttentionOnlyParameters<double> &, const TokenBatch &,
                                    const AttentionOnlyCache<double> &,
                                    AttentionOnlyParameters<double> &,
                                    AttentionOnlyScratch<double> &);

} // namespace attn::training
