#include "core/training/induction.h"

#include "core/analysis/headscores.h"

#include <cmath>

namespace attn::training {

namespace {

std::string num(Index v)
{
    return std::to_string(v);
}

/// B sequences of N tokens drawn from `rng` (B × N in C order), each written twice.
TokenBatch drawRepeated(Generator &rng, Index vocab, Index batch, Index repeat)
{
    TokenBatch out;
    out.batch = batch;
    out.length = 2 * repeat;
    out.firstScoredQuery = repeat;
    out.tokens.resize(std::size_t(batch * 2 * repeat));
    for (Index b = 0; b < batch; ++b)
        for (Index t = 0; t < repeat; ++t) {
            const std::int64_t token = rng.integers(0, vocab);
            out.tokens[std::size_t(b * 2 * repeat + t)] = token;
            out.tokens[std::size_t(b * 2 * repeat + repeat + t)] = token;
        }
    return out;
}

} // namespace

void RepeatedTokensConfig::validate() const
{
    if (vocab < 2)
        throw InvalidArgument("vocab must be >= 2, got " + num(vocab));
    if (minRepeat < 2)
        throw InvalidArgument("min_repeat must be >= 2, got " + num(minRepeat));
    if (repeat < minRepeat)
        throw InvalidArgument("repeat must be >= min_repeat, got repeat = " + num(repeat)
                              + ", min_repeat = " + num(minRepeat));
    if (batch < 1)
        throw InvalidArgument("batch must be >= 1, got " + num(batch));
    if (double(batch) * 2.0 * double(repeat) > double(std::int64_t(1) << 26))
        throw InvalidArgument("a batch of " + num(batch) + " sequences of 2 x " + num(repeat)
                              + " tokens is more than 2^26 tokens");
}

RepeatedTokens::RepeatedTokens(const RepeatedTokensConfig &config)
    : m_config(config)
    , m_rng(config.seed)
{
    m_config.validate();
}

TokenBatch RepeatedTokens::next()
{
    const Index N = m_config.minRepeat == m_config.repeat
        ? m_config.repeat
        : Index(m_rng.integers(m_config.minRepeat, m_config.repeat + 1));
    return drawRepeated(m_rng, m_config.vocab, m_config.batch, N);
}

TokenBatch repeatedTokens(Index vocab, Index repeat, Index count, std::uint64_t seed)
{
    RepeatedTokensConfig c;
    c.vocab = vocab;
    c.repeat = repeat;
    c.minRepeat = repeat;
    c.batch = count;
    c.seed = seed;
    return RepeatedTokens(c).next();
}

template<typename T>
InductionEvaluation evaluateInduction(const AttentionOnlyConfig &config,
                                      const AttentionOnlyParameters<T> &params,
                                      const TokenBatch &heldOut)
{
    const Index n = heldOut.length, N = n / 2;
    if (n % 2 != 0 || heldOut.firstScoredQuery != N)
        throw InvalidArgument("held-out sequences must be N tokens repeated twice with the "
                              "repeated half scored, got n = "
                              + num(n) + ", first scored query " + num(heldOut.firstScoredQuery));
    AttentionOnlyCache<T> cache;
    attentionOnlyForward(config, params, heldOut, cache);
    const Index L = config.layers, h = config.heads, B = heldOut.batch;

    InductionEvaluation e;
    e.loss = attentionOnlyLoss(cache, heldOut);
    Index correct = 0;
    for (Index b = 0; b < B; ++b)
        for (Index t = N; t + 1 < n; ++t) {
            const Index r = b * n + t;
            Index predicted = 0;
            cache.logits.row(r).maxCoeff(&predicted);
            correct += predicted == heldOut.tokens[std::size_t(r + 1)] ? 1 : 0;
        }
    e.accuracy = double(correct) / double(heldOut.scoredQueries());

    // One sequence's stack of L × h weights (n × n each) at a time, as headscores takes them.
    const HeadStackShape shape {L, h, n};
    std::vector<double> stack(std::size_t(shape.count()));
    e.prefixMatching = MatrixD::Zero(L, h);
    e.previousToken = MatrixD::Zero(L, h);
    for (Index b = 0; b < B; ++b) {
        for (Index l = 0; l < L; ++l)
            for (Index head = 0; head < h; ++head) {
                const Matrix<T> &w
                    = cache.layers[std::size_t(l)].weights[std::size_t(b * h + head)];
                double *out = stack.data() + std::size_t((l * h + head) * n * n);
                for (Index i = 0; i < n * n; ++i)
                    out[i] = double(w.data()[i]);
            }
        const std::span<const double> values(stack);
        e.prefixMatching += prefixMatchingScores(values, shape, N, false);
        e.previousToken += headScores(values, shape, {}).previousToken;
        if (b == 0)
            for (Index k = 0; k < L * h; ++k)
                e.firstSequenceWeights.push_back(
                    Eigen::Map<const MatrixD>(stack.data() + std::size_t(k * n * n), n, n));
    }
    e.prefixMatching /= double(B);
    e.previousToken /= double(B);
    e.inductionScore = e.prefixMatching.row(L - 1).maxCoeff(&e.inductionHead);
    e.previousTokenScore = e.previousToken.row(0).maxCoeff(&e.previousTokenHead);
    return e;
}

template<typename T>
AttentionOnlyTrainer<T>::AttentionOnlyTrainer(const AttentionOnlyConfig &config,
                                              const AttentionOnlyParameters<T> &initial,
                                              const OptimizerConfig &optimizer)
    : m_config(config)
    , m_params(initial)
    , m_optimizer(optimizer)
{
    m_config.validate();
    m_params.checkShapes(m_config);
}

template<typename T> double AttentionOnlyTrainer<T>::step(const TokenBatch &batch)
{
    attentionOnlyForward(m_config, m_params, batch, m_cache);
    const double loss = attentionOnlyLoss(m_cache, batch);
    attentionOnlyBackward(m_config, m_params, batch, m_cache, m_grads, m_scratch);
    const std::vector<std::span<const T>> grads = std::as_const(m_grads).tensors();
    bool finite = std::isfinite(loss);
    for (const std::span<const T> g : grads)
        for (const T v : g)
            finite = finite && std::isfinite(v);
    if (finite)
        m_optimizer.step(m_params.tensors(), grads);
    return loss;
}

AttentionOnlyConfig InductionRunConfig::model() const
{
    AttentionOnlyConfig c;
    c.vocab = vocab;
    c.dModel = dModel;
    c.heads = heads;
    c.layers = layers;
    c.maxLength = 2 * repeat;
    return c;
}

RepeatedTokensConfig InductionRunConfig::data() const
{
    RepeatedTokensConfig c;
    c.vocab = vocab;
    c.repeat = repeat;
    c.minRepeat = minRepeat;
    c.batch = batch;
    c.seed = seed + 1;
    return c;
}

void InductionRunConfig::validate() const
{
    data().validate();
    model().validate();
    if (heldOut < 1 || double(heldOut) * 2.0 * double(repeat) > double(std::int64_t(1) << 26))
        throw InvalidArgument("held_out must be >= 1 and hold at most 2^26 tokens, got "
                              + num(heldOut) + " sequences of 2 x " + num(repeat));
    if (!(learningRate > 0) || !std::isfinite(learningRate))
        throw InvalidArgument("lr must be > 0 and finite, got " + std::to_string(learningRate));
    if (!(initStd >= 0) || !std::isfinite(initStd))
        throw InvalidArgument("init_std must be >= 0 and finite, got " + std::to_string(initStd));
}

namespace {

InductionRunConfig validated(const InductionRunConfig &c)
{
    c.validate();
    return c;
}

} // namespace

InductionRun::InductionRun(const InductionRunConfig &config)
    : m_config(validated(config))
    , m_data(config.data())
    , m_heldOut(repeatedTokens(config.vocab, config.repeat, config.heldOut, config.seed + 2))
{
    OptimizerConfig oc;
    oc.kind = OptimizerKind::Adam;
    oc.learningRate = config.learningRate;
    const AttentionOnlyParameters<double> initial
        = initialAttentionOnly(config.model(), config.seed, config.initStd);
    if (config.float32)
        m_float = std::make_unique<AttentionOnlyTrainer<float>>(config.model(),
                                                                initial.cast<float>(), oc);
    else
        m_double = std::make_unique<AttentionOnlyTrainer<double>>(config.model(), initial, oc);
}

InductionRun::~InductionRun() = default;

double InductionRun::step()
{
    const TokenBatch batch = m_data.next();
    return m_float ? m_float->step(batch) : m_double->step(batch);
}

std::int64_t InductionRun::steps() const
{
    return m_float ? m_float->steps() : m_double->steps();
}

InductionEvaluation InductionRun::evaluate() const
{
    return m_float ? evaluateInduction(m_float->config(), m_float->parameters(), m_heldOut)
                   : evaluateInduction(m_double->config(), m_double->parameters(), m_heldOut);
}

AttentionOnlyParameters<double> InductionRun::parameters() const
{
    return m_float ? m_float->parameters().cast<double>() : m_double->parameters();
}

template InductionEvaluation evaluateInduction(const AttentionOnlyConfig &,
                                               const AttentionOnlyParameters<float> &,
                                               const TokenBatch &);
template InductionEvaluation evaluateInduction(const AttentionOnlyConfig &,
                                               const AttentionOnlyParameters<double> &,
                                               const TokenBatch &);
template class AttentionOnlyTrainer<float>;
template class AttentionOnlyTrainer<double>;

} // namespace attn::training
