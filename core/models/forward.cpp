#include "core/models/forward.h"

#include "core/attention/attention.h"
#include "core/attention/positional.h"
#include "core/base/blas.h"
#include "core/kernels/kernels.h"

#include <algorithm>
#include <cmath>
#include <utility>

namespace attn::models {

namespace {

// Weight rows widened at a time for [out, in] matrices (the LM head of a 128k vocabulary would
// be 2 GB as float32): 4 Mi elements, 16 MiB.
constexpr Index kBlockElements = Index(1) << 22;

using ConstMapF = Eigen::Map<const MatrixF>;

// Rows first … first + count − 1 of a weight: a view of the mapped file when its F32 elements can
// be read in place, else widened (or copied) into `storage`.
ConstMapF weightRows(const WeightRef &w, Index first, Index count, MatrixF &storage)
{
    if (const float *p = w.floatsInPlace()) // checked finite on its first use
        return ConstMapF(p + first * w.cols(), count, w.cols());
    storage = w.rowBlock(first, count);
    return ConstMapF(storage.data(), count, w.cols());
}

// Rows of an [out, in] weight widened at a time: all of them when it is read in place.
Index rowBlockSize(const WeightRef &w)
{
    if (w.floatsInPlace())
        return std::max<Index>(1, w.rows());
    return std::max<Index>(1, kBlockElements / std::max<Index>(1, w.cols()));
}

// y (n × out) = x (n × in) · Wᵀ + b, W [out, in], in row blocks; or x · W + b for a Conv1D
// W [in, out] (GPT-2).
MatrixF linear(const MatrixF &x, const LinearWeights &l)
{
    MatrixF y(x.rows(), l.out);
    MatrixF storage;
    if (l.inputMajor) {
        gemm<float>(x, weightRows(l.weight, 0, l.in, storage), y); // W: in × out
    } else {
        const Index block = rowBlockSize(l.weight);
        for (Index first = 0; first < l.out; first += block) {
            const Index count = std::min(block, l.out - first);
            gemmTransposed<float>(x, weightRows(l.weight, first, count, storage),
                                  y.middleCols(first, count));
        }
    }
    if (l.bias.present())
        y.rowwise() += l.bias.toVector().transpose();
    return y;
}

// LayerNorm over each row (Ba et al. 2016): (x − mean) / sqrt(var + eps) · w + b, biased
// variance, statistics in double.
void layerNorm(MatrixF &x, const NormWeights &n, double eps)
{
    const VectorF w = n.weight.toVector();
    const VectorF b = n.bias.present() ? n.bias.toVector() : VectorF::Zero(x.cols());
    for (Index r = 0; r < x.rows(); ++r) {
        double mean = 0;
        for (Index c = 0; c < x.cols(); ++c)
            mean += x(r, c);
        mean /= double(x.cols());
        double var = 0;
        for (Index c = 0; c < x.cols(); ++c)
            var += (x(r, c) - mean) * (x(r, c) - mean);
        var /= double(x.cols());
        const double inv = 1.0 / std::sqrt(var + eps);
        for (Index c = 0; c < x.cols(); ++c)
            x(r, c) = float((x(r, c) - mean) * inv * w(c) + b(c));
    }
}

// RMSNorm over each row of x (any width equal to w's): x · rsqrt(mean(x²) + eps) · w.
template<typename Rows> void rmsNormRows(Rows &&x, const VectorF &w, double eps)
{
    for (Index r = 0; r < x.rows(); ++r) {
        double ms = 0;
        for (Index c = 0; c < x.cols(); ++c)
            ms += double(x(r, c)) * double(x(r, c));
        const double inv = 1.0 / std::sqrt(ms / double(x.cols()) + eps);
        for (Index c = 0; c < x.cols(); ++c)
            x(r, c) = float(double(x(r, c)) * inv * w(c));
    }
}

void norm(MatrixF &x, const NormWeights &n, const ModelConfig &c)
{
    if (c.norm == NormKind::LayerNorm)
        layerNorm(x, n, c.normEps);
    else
        rmsNormRows(x, n.weight.toVector(), c.normEps);
}

float activate(float v, Activation a)
{
    const double x = v;
    switch (a) {
    case Activation::GeluTanh:
        return float(0.5 * x * (1.0 + std::tanh(0.7978845608028654 * (x + 0.044715 * x * x * x))));
    case Activation::GeluErf:
        return float(0.5 * x * (1.0 + std::erf(x * 0.7071067811865476)));
    case Activation::Relu:
        return v > 0 ? v : 0.0f;
    case Activation::Silu:
        return float(x / (1.0 + std::exp(-x)));
    }
    return v;
}

MatrixF mlpRows(const MatrixF &x, const LayerWeights &l, const ModelConfig &c)
{
    MatrixF hidden = linear(x, l.up); // rows × intermediate
    if (c.activation == Activation::Silu) {
        const MatrixF gate = linear(x, l.gate);
        for (Index i = 0; i < hidden.size(); ++i)
            hidden.data()[i] *= activate(gate.data()[i], Activation::Silu);
    } else if (c.activation == Activation::GeluTanh) {
        // As PyTorch's gelu(approximate='tanh') on float32: Eigen's vectorised float tanh.
        auto a = hidden.array();
        a = 0.5f * a * (1.0f + (0.7978845608028654f * (a + 0.044715f * a.cube())).tanh());
    } else {
        for (Index i = 0; i < hidden.size(); ++i)
            hidden.data()[i] = activate(hidden.data()[i], c.activation);
    }
    return linear(hidden, l.down);
}

// The MLP (n × hidden → n × hidden) works on each token alone: in blocks of kMlpRows rows it
// holds two kMlpRows × intermediate activations instead of two n × intermediate ones (at
// n = 8 192 and intermediate 2 048, 16 MiB instead of 128 MiB).
MatrixF mlp(const MatrixF &x, const LayerWeights &l, const ModelConfig &c)
{
    constexpr Index kMlpRows = 1024;
    if (x.rows() <= kMlpRows)
        return mlpRows(x, l, c);
    MatrixF out(x.rows(), x.cols());
    for (Index first = 0; first < x.rows(); first += kMlpRows) {
        const Index count = std::min(kMlpRows, x.rows() - first);
        out.middleRows(first, count) = mlpRows(x.middleRows(first, count), l, c);
    }
    return out;
}

// Self-attention of one layer on its normalised input x (n × hidden); fills `out`'s queries,
// keys and kept weights, returns the projected output (n × hidden).
MatrixF attention(const MatrixF &x, const LayerWeights &l, const ModelConfig &c, Index layer,
                  const std::vector<double> &frequencies, const ForwardOptions &options,
                  LayerAttention &out)
{
    const Index n = x.rows(), d = c.headDim, h = c.heads, g = c.kvHeads;
    MatrixF q, k, v; // n × h·d, n × g·d, n × g·d
    if (l.qkv.weight.present()) {
        const MatrixF qkv = linear(x, l.qkv); // n × 3·hidden
        q = qkv.leftCols(h * d);
        k = qkv.middleCols(h * d, g * d);
        v = qkv.rightCols(g * d);
    } else {
        q = linear(x, l.q);
        k = linear(x, l.k);
        v = linear(x, l.v);
    }
    if (c.qkNorm) {
        const VectorF qw = l.qNorm.weight.toVector(), kw = l.kNorm.weight.toVector();
        for (Index i = 0; i < h; ++i)
            rmsNormRows(q.middleCols(i * d, d), qw, c.normEps);
        for (Index i = 0; i < g; ++i)
            rmsNormRows(k.middleCols(i * d, d), kw, c.normEps);
    }
    if (c.rope) {
        for (Index i = 0; i < h; ++i)
            applyRopeFrequencies<float>(q.middleCols(i * d, d), frequencies, RopeConvention::Half);
        for (Index i = 0; i < g; ++i)
            applyRopeFrequencies<float>(k.middleCols(i * d, d), frequencies, RopeConvention::Half);
    }
    out.slidingWindow = c.usesSlidingWindow(layer);
    const AttentionMask mask = layerMask(c, layer, n);
    MatrixF heads(n, h * d); // the heads' outputs side by side
    out.weights.assign(std::size_t(h), MatrixF());
    const auto scale = float(1.0 / std::sqrt(double(d)));
    for (Index i = 0; i < h; ++i) {
        const Index kv = i * g / h;
        const auto qi = q.middleCols(i * d, d);
        const auto ki = k.middleCols(kv * d, d), vi = v.middleCols(kv * d, d);
        // A head whose weights are kept goes through the materialized kernel (one n × n
        // matrix); the others stream (online softmax, no n × n matrix at all).
        if (options.ablate && options.ablate(layer, i)) {
            auto out = heads.middleCols(i * d, d);
            if (options.ablation == Ablation::Mean) {
                out = attentionStreaming<float>(qi, ki, vi, scale, mask);
                const Eigen::RowVectorXf mean
                    = (out.cast<double>().colwise().sum() / double(n)).cast<float>();
                out.rowwise() = mean;
            } else {
                out.setZero();
            }
        } else if (options.keepWeights && options.keepWeights(layer, i)) {
            MatrixF weights;
            heads.middleCols(i * d, d)
                = attentionMaterialized<float>(qi, ki, vi, scale, mask, &weights);
            out.weights[std::size_t(i)] = std::move(weights);
        } else {
            heads.middleCols(i * d, d) = attentionStreaming<float>(qi, ki, vi, scale, mask);
        }
    }
    if (options.keepQueriesKeys) {
        for (Index i = 0; i < h; ++i)
            out.queries.push_back(q.middleCols(i * d, d));
        for (Index i = 0; i < g; ++i)
            out.keys.push_back(k.middleCols(i * d, d));
    }
    if (options.keepValues)
        for (Index i = 0; i < g; ++i)
            out.values.push_back(v.middleCols(i * d, d));
    return linear(heads, l.o);
}

MatrixF embed(const Model &model, const std::vector<std::int64_t> &ids)
{
    const ModelConfig &c = model.config();
    const ModelWeights &w = model.weights();
    const Index n = Index(ids.size());
    MatrixF x(n, c.hiddenSize);
    for (Index i = 0; i < n; ++i)
        x.row(i) = w.tokenEmbedding.rowBlock(Index(ids[std::size_t(i)]), 1);
    if (c.learnedPositions)
        x += w.positionEmbedding.rowBlock(0, n);
    if (w.tokenTypeEmbedding.present())
        x.rowwise() += w.tokenTypeEmbedding.rowBlock(0, 1).row(0);
    if (w.embeddingNorm.weight.present())
        layerNorm(x, w.embeddingNorm, c.normEps);
    return x;
}

// Logits (n × vocab) from the final hidden states, in blocks of vocabulary rows.
MatrixF unembed(const Model &model, const MatrixF &hidden)
{
    const ModelConfig &c = model.config();
    const ModelWeights &w = model.weights();
    if (!w.hasLmHead)
        return {};
    MatrixF x = hidden;
    if (w.mlmTransform.weight.present()) { // BERT: dense, activation, LayerNorm
        x = linear(hidden, w.mlmTransform);
        for (Index i = 0; i < x.size(); ++i)
            x.data()[i] = activate(x.data()[i], c.activation);
        layerNorm(x, w.mlmNorm, c.normEps);
    }
    MatrixF logits(x.rows(), c.vocabSize);
    MatrixF storage;
    const Index block = rowBlockSize(w.lmHead);
    for (Index first = 0; first < c.vocabSize; first += block) {
        const Index count = std::min(block, c.vocabSize - first);
        gemmTransposed<float>(x, weightRows(w.lmHead, first, count, storage),
                              logits.middleCols(first, count));
    }
    if (w.lmBias.present())
        logits.rowwise() += w.lmBias.toVector().transpose();
    return logits;
}

void checkIds(const ModelConfig &c, const std::vector<std::int64_t> &ids)
{
    if (ids.empty())
        throw ModelError("forward: no token ids (n must be >= 1)");
    if (c.learnedPositions && Index(ids.size()) > c.maxPositions)
        throw ModelError("forward: " + std::to_string(ids.size())
                         + " tokens, but the model has learned positions for "
                         + std::to_string(c.maxPositions));
    for (std::size_t i = 0; i < ids.size(); ++i)
        if (ids[i] < 0 || ids[i] >= c.vocabSize)
            throw ModelError("forward: token id " + std::to_string(ids[i]) + " at position "
                             + std::to_string(i) + " is outside the vocabulary [0, "
                             + std::to_string(c.vocabSize) + ")");
}

} // namespace

Ablation ablationFromName(std::string_view name)
{
    if (name == "zero")
        return Ablation::Zero;
    if (name == "mean")
        return Ablation::Mean;
    throw InvalidArgument("ablation \"" + std::string(name) + "\": use zero or mean");
}

const char *ablationName(Ablation ablation)
{
    return ablation == Ablation::Mean ? "mean" : "zero";
}

AttentionMask layerMask(const ModelConfig &c, Index layer, Index n)
{
    if (n < 0)
        throw InvalidArgument("layerMask: n must be >= 0, got " + std::to_string(n));
    if (!c.causal)
        return {};
    if (c.usesSlidingWindow(layer))
        return AttentionMask::slidingWindow(n, n, c.slidingWindowSize);
    return AttentionMask::causal(n, n);
}

MatrixF headWeights(const ForwardResult &result, const ModelConfig &c, Index layer, Index head)
{
    if (layer < 0 || layer >= Index(result.layers.size()) || head < 0 || head >= c.heads)
        throw InvalidArgument("headWeights: layer " + std::to_string(layer) + ", head "
                              + std::to_string(head) + " outside "
                              + std::to_string(result.layers.size()) + " layers × "
                              + std::to_string(c.heads) + " heads");
    const LayerAttention &l = result.layers[std::size_t(layer)];
    if (Index(l.queries.size()) != c.heads || Index(l.keys.size()) != c.kvHeads)
        throw InvalidArgument("headWeights: the forward result kept no queries and keys");
    const MatrixF &q = l.queries[std::size_t(head)];
    const MatrixF &k = l.keys[std::size_t(result.kvHeadOf(head, c.heads))];
    // The keys stand in for the values: only the weights are wanted.
    MatrixF weights;
    attentionMaterialized<float>(q, k, k, float(result.scale), layerMask(c, layer, q.rows()),
                                 &weights);
    return weights;
}

ForwardResult forward(const Model &model, const std::vector<std::int64_t> &ids,
                      const ForwardOptions &options)
{
    const ModelConfig &c = model.config();
    checkIds(c, ids);
    ForwardResult result;
    result.ids = ids;
    result.kvHeads = c.kvHeads;
    result.scale = 1.0 / std::sqrt(double(c.headDim));
    const std::vector<double> frequencies = ropeFrequencies(c);
    options.cancel.throwIfCancelled();
    MatrixF x = embed(model, ids); // n × hidden
    result.layers.resize(std::size_t(c.layers));
    for (Index i = 0; i < c.layers; ++i) {
        options.cancel.throwIfCancelled();
        const LayerWeights &l = model.weights().layers[std::size_t(i)];
        LayerAttention &record = result.layers[std::size_t(i)];
        if (c.postNorm) {
            x += attention(x, l, c, i, frequencies, options, record);
            norm(x, l.attentionNorm, c);
            x += mlp(x, l, c);
            norm(x, l.mlpNorm, c);
        } else {
            MatrixF h = x;
            norm(h, l.attentionNorm, c);
            x += attention(h, l, c, i, frequencies, options, record);
            h = x;
            norm(h, l.mlpNorm, c);
            x += mlp(h, l, c);
        }
        if (options.keepResidual)
            result.residual.push_back(x);
        if (options.progress)
            options.progress(i + 1, c.layers);
    }
    if (model.weights().finalNorm.weight.present())
        norm(x, model.weights().finalNorm, c);
    result.hidden = std::move(x);
    options.cancel.throwIfCancelled();
    if (options.logits)
        result.logits = options.lastLogitsOnly ? unembed(model, result.hidden.bottomRows(1))
                                               : unembed(model, result.hidden);
    return result;
}

} // namespace attn::models
