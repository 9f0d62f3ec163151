#include "core/analysis/headcontributions.h"

#include "core/analysis/headscores.h"
#include "core/models/safetensors.h"
#include "core/random/random.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <string>

namespace attn {

namespace {

std::string sizeText(const MatrixD &m)
{
    return std::to_string(m.rows()) + "×" + std::to_string(m.cols());
}

// ln Σ_t exp(x_t), shifted by the maximum.
double logSumExp(const VectorD &x)
{
    const double top = x.maxCoeff();
    return top + std::log((x.array() - top).exp().sum());
}

std::int64_t argmax(const MatrixF &logits)
{
    Index best = 0;
    logits.row(logits.rows() - 1).maxCoeff(&best);
    return std::int64_t(best);
}

} // namespace

MatrixD headOutputProjection(const models::Model &model, Index layer, Index head)
{
    const models::ModelConfig &c = model.config();
    if (layer < 0 || layer >= c.layers || head < 0 || head >= c.heads)
        throw InvalidArgument("headOutputProjection: layer " + std::to_string(layer) + ", head "
                              + std::to_string(head) + " outside " + std::to_string(c.layers)
                              + " layers × " + std::to_string(c.heads) + " heads");
    const models::LinearWeights &o = model.weights().layers[std::size_t(layer)].o;
    const Index d = c.headDim;
    if (o.inputMajor) // Conv1D [in = h·d_k, out = d_model]: the head's rows
        return o.weight.rowBlock(head * d, d).cast<double>();
    // nn.Linear [out = d_model, in = h·d_k]: the head's columns, transposed
    return o.weight.toMatrix().middleCols(head * d, d).transpose().cast<double>();
}

MatrixD valueWeightedNorms(const MatrixD &weights, const MatrixD &values,
                           const MatrixD &outputProjection)
{
    if (weights.cols() != values.rows() || values.cols() != outputProjection.rows())
        throw InvalidArgument("valueWeightedNorms: weights " + sizeText(weights) + ", values "
                              + sizeText(values) + " and W_O^h " + sizeText(outputProjection)
                              + " do not fit (need n_q×n_k, n_k×d_k, d_k×d_model)");
    const VectorD keyNorms = (values * outputProjection).rowwise().norm(); // ‖v_j W_O^h‖₂
    return weights.array().rowwise() * keyNorms.transpose().array();
}

ValueNormSummary summarizeValueNorms(const MatrixD &norms)
{
    double sink = 0, mass = 0;
    Index rows = 0;
    for (Index i = 0; i < norms.rows(); ++i) {
        const double total = norms.row(i).sum();
        if (total == 0)
            continue;
        ++rows;
        sink += norms(i, 0) / total;
        mass += total;
    }
    if (rows == 0)
        return {std::numeric_limits<double>::quiet_NaN(), std::numeric_limits<double>::quiet_NaN()};
    return {sink / double(rows), mass / double(rows)};
}

MatrixD attentionRollout(const std::vector<MatrixD> &layerMeans)
{
    if (layerMeans.empty())
        throw InvalidArgument("attentionRollout: no layers (need at least one n×n matrix)");
    const Index n = layerMeans.front().rows();
    MatrixD rollout = MatrixD::Identity(n, n);
    for (std::size_t l = 0; l < layerMeans.size(); ++l) {
        const MatrixD &a = layerMeans[l];
        if (a.rows() != n || a.cols() != n)
            throw InvalidArgument("attentionRollout: layer " + std::to_string(l) + " is "
                                  + sizeText(a) + ", the first is " + std::to_string(n) + "×"
                                  + std::to_string(n) + " (all must be n×n)");
        MatrixD mixed = 0.5 * a + 0.5 * MatrixD::Identity(n, n);
        const VectorD sums = mixed.rowwise().sum();
        for (Index i = 0; i < n; ++i)
            mixed.row(i) /= sums(i);
        rollout = mixed * rollout; // Â_l · (Â_{l−1} ⋯ Â_1)
    }
    return rollout;
}

double klDivergenceOfLogits(const VectorD &logitsP, const VectorD &logitsQ)
{
    if (logitsP.size() == 0 || logitsP.size() != logitsQ.size())
        throw InvalidArgument("klDivergenceOfLogits: " + std::to_string(logitsP.size()) + " and "
                              + std::to_string(logitsQ.size()) + " logits (need equal sizes >= 1)");
    const VectorD logP = logitsP.array() - logSumExp(logitsP);
    const VectorD logQ = logitsQ.array() - logSumExp(logitsQ);
    return (logP.array().exp() * (logP - logQ).array()).sum();
}

HeadAblation ablateHeads(const models::Model &model, const std::vector<std::int64_t> &ids,
                         models::Ablation how, const CancelToken &cancel)
{
    const models::ModelConfig &c = model.config();
    if (!model.weights().hasLmHead)
        throw models::ModelError("head ablation compares next-token distributions, and the "
                                 "checkpoint has no language-model head");
    models::ForwardOptions options;
    options.keepQueriesKeys = false;
    options.lastLogitsOnly = true;
    options.cancel = cancel;
    options.ablation = how;
    const MatrixF original = models::forward(model, ids, options).logits;
    const VectorD p = original.row(original.rows() - 1).transpose().cast<double>();
    HeadAblation result;
    result.top1 = argmax(original);
    result.kl.resize(c.layers, c.heads);
    result.top1Ablated.resize(c.layers, c.heads);
    for (Index l = 0; l < c.layers; ++l) {
        for (Index h = 0; h < c.heads; ++h) {
            options.ablate = [l, h](Index layer, Index head) { return layer == l && head == h; };
            const MatrixF ablated = models::forward(model, ids, options).logits;
            const VectorD q = ablated.row(ablated.rows() - 1).transpose().cast<double>();
            result.kl(l, h) = klDivergenceOfLogits(p, q);
            result.top1Ablated(l, h) = argmax(ablated);
        }
    }
    return result;
}

std::vector<std::vector<std::int64_t>> prefixMatchingSequences(Index vocab, Index tokens,
                                                               Index draws, std::uint64_t seed,
                                                               std::optional<std::int64_t> bos)
{
    if (vocab < 1 || tokens < 1 || draws < 1)
        throw InvalidArgument("prefixMatchingSequences: vocabulary " + std::to_string(vocab) + ", "
                              + std::to_string(tokens) + " tokens, " + std::to_string(draws)
                              + " draws (each must be >= 1)");
    Generator rng(seed);
    std::vector<std::vector<std::int64_t>> sequences;
    for (Index d = 0; d < draws; ++d) {
        std::vector<std::int64_t> random;
        for (Index i = 0; i < tokens; ++i)
            random.push_back(rng.integers(0, vocab));
        std::vector<std::int64_t> ids;
        if (bos)
            ids.push_back(*bos);
        ids.insert(ids.end(), random.begin(), random.end());
        ids.insert(ids.end(), random.begin(), random.end());
        sequences.push_back(std::move(ids));
    }
    return sequences;
}

MatrixD modelPrefixMatching(const models::Model &model, Index tokens, Index draws,
                            std::uint64_t seed, std::optional<std::int64_t> bos,
                            const CancelToken &cancel)
{
    const models::ModelConfig &c = model.config();
    models::ForwardOptions options;
    options.keepWeights = [](Index, Index) { return true; };
    options.keepQueriesKeys = false;
    options.logits = false;
    options.cancel = cancel;
    MatrixD sum = MatrixD::Zero(c.layers, c.heads);
    const auto sequences = prefixMatchingSequences(c.vocabSize, tokens, draws, seed, bos);
    for (const std::vector<std::int64_t> &ids : sequences) {
        const models::ForwardResult r = models::forward(model, ids, options);
        const Index n = Index(ids.size());
        std::vector<float> values; // (layers, heads, n, n) in C order
        values.reserve(std::size_t(c.layers * c.heads * n * n));
        for (const models::LayerAttention &layer : r.layers)
            for (const MatrixF &w : layer.weights)
                values.insert(values.end(), w.data(), w.data() + w.size());
        sum += prefixMatchingScores<float>(values, {c.layers, c.heads, n}, tokens, bos.has_value());
    }
    return sum / double(draws);
}

std::vector<double> layerRankCollapse(const models::ForwardResult &result)
{
    if (result.residual.size() != result.layers.size())
        throw InvalidArgument("layerRankCollapse: the forward result kept "
                              + std::to_string(result.residual.size()) + " layer outputs for "
                              + std::to_string(result.layers.size())
                              + " layers (run it with ForwardOptions::keepResidual)");
    std::vector<double> out;
    for (const MatrixF &x : result.residual)
        out.push_back(rankCollapseResidual<float>(x));
    return out;
}

} // namespace attn
