#pragma once
// Induction heads forming in an attention-only transformer (core/training/attentiononly.h): the
// data (random tokens repeated twice), a training loop with Adam, and the measurements of
// Olsson et al. 2022 ("In-context Learning and Induction Heads", §2: prefix matching, and the
// previous-token heads that induction heads compose with) on held-out sequences.
//
// Data. A training batch holds B sequences r_0 … r_{N−1} r_0 … r_{N−1} of 2N tokens drawn
// uniformly from [0, V). N is drawn once per batch, uniformly in [minRepeat, repeat]: with one
// fixed N a second-layer head can find the token to copy by its position alone (query i attends
// to key i − N + 1 whatever the tokens), a positional shortcut that is not an induction head and
// needs no previous-token head; with N varying, only the content (the token after an earlier
// copy of the current one) locates it. The held-out sequences have N = repeat.
//
// Loss. The queries of the repeated half, t = N … 2N − 2, each predicting token t + 1 (a
// repeat of token t − N + 1). The first half's tokens are uniform and independent: no model
// predicts them below ln V nats, so scoring them would only add a constant floor.

#include "core/random/random.h"
#include "core/training/attentiononly.h"
#include "core/training/optimizer.h"

#include <cstdint>
#include <memory>
#include <vector>

namespace attn::training {

struct RepeatedTokensConfig
{
    Index vocab = 64; ///< V
    Index repeat = 16; ///< N of the held-out sequences, and the longest training half
    Index minRepeat = 8; ///< the shortest training half (= repeat: one fixed N)
    Index batch = 32; ///< B sequences per training batch
    std::uint64_t seed = 0;

    /// Throws InvalidArgument naming the field and its value: vocab < 2, minRepeat < 2,
    /// repeat < minRepeat, batch < 1, or a batch of more than 2^26 tokens.
    void validate() const;
};

/// Seeded training batches: Generator(seed), per batch N = integers(minRepeat, repeat + 1)
/// (no draw when minRepeat = repeat), then B × N tokens integers(0, V) in C order; each
/// sequence is its N tokens twice, firstScoredQuery = N.
class RepeatedTokens
{
public:
    /// Throws InvalidArgument (RepeatedTokensConfig::validate).
    explicit RepeatedTokens(const RepeatedTokensConfig &config);
    TokenBatch next();
    const RepeatedTokensConfig &config() const { return m_config; }

private:
    RepeatedTokensConfig m_config;
    Generator m_rng;
};

/// `count` sequences of N = `repeat` tokens from [0, vocab) repeated twice, drawn as one
/// batch of RepeatedTokens with Generator(seed) and minRepeat = repeat.
TokenBatch repeatedTokens(Index vocab, Index repeat, Index count, std::uint64_t seed);

/// Measurements of a model on held-out repeated sequences (N = batch.length / 2).
struct InductionEvaluation
{
    double loss = 0; ///< mean cross-entropy over the repeated half's queries, nats
    double accuracy = 0; ///< share of those queries whose largest logit is the next token
    /// L × h, the mean over sequences of prefixMatchingScores (core/analysis/headscores.h): the
    /// mean over the second half's queries i = N … 2N − 1 of A[i, i − N + 1].
    MatrixD prefixMatching;
    /// L × h, the mean over sequences of the previous-token score of headScores
    /// (core/analysis/headscores.h, no exclusions): Σ_i A[i, i − 1] / n.
    MatrixD previousToken;
    Index inductionHead = 0; ///< the last layer's head with the largest prefixMatching
    double inductionScore = 0; ///< its score
    Index previousTokenHead = 0; ///< the first layer's head with the largest previousToken
    double previousTokenScore = 0; ///< its score
    /// The attention weights of the first held-out sequence, L·h matrices n × n (index
    /// layer·h + head).
    std::vector<MatrixD> firstSequenceWeights;
};

/// Runs the model on `heldOut` (sequences of 2N tokens, firstScoredQuery = N) and measures it.
/// Throws InvalidArgument for a batch whose sequences are not two equal halves (odd n, or
/// firstScoredQuery ≠ n/2), and for the errors of attentionOnlyForward.
template<typename T>
InductionEvaluation evaluateInduction(const AttentionOnlyConfig &config,
                                      const AttentionOnlyParameters<T> &params,
                                      const TokenBatch &heldOut);

/// One model trained with an optimizer of core/training/optimizer.h (PyTorch's formulas) on
/// attentionOnlyLoss.
template<typename T> class AttentionOnlyTrainer
{
public:
    /// Throws InvalidArgument for a bad config, parameters of other shapes or a bad optimizer.
    AttentionOnlyTrainer(const AttentionOnlyConfig &config,
                         const AttentionOnlyParameters<T> &initial,
                         const OptimizerConfig &optimizer);
    /// Forward, backward and one update on `batch`; returns the loss before the update (nats).
    /// When the loss or a gradient is not finite the parameters are left as they are.
    double step(const TokenBatch &batch);
    const AttentionOnlyParameters<T> &parameters() const { return m_params; }
    const AttentionOnlyConfig &config() const { return m_config; }
    std::int64_t steps() const { return m_optimizer.steps(); }
    ArrayListOptimizer<T> &optimizer() { return m_optimizer; }

private:
    AttentionOnlyConfig m_config;
    AttentionOnlyParameters<T> m_params;
    ArrayListOptimizer<T> m_optimizer;
    AttentionOnlyCache<T> m_cache;
    AttentionOnlyParameters<T> m_grads;
    AttentionOnlyScratch<T> m_scratch;
};

/// Everything one run of the induction experiment (E17) takes.
struct InductionRunConfig
{
    Index vocab = 64; ///< V
    Index dModel = 64; ///< d_model
    Index heads = 2; ///< h per layer
    Index layers = 2; ///< L
    Index repeat = 16; ///< N of the held-out sequences and the longest training half
    Index minRepeat = 8; ///< the shortest training half
    Index batch = 32; ///< B training sequences per step
    Index heldOut = 64; ///< held-out sequences the scores average over
    double learningRate = 3e-3; ///< Adam's lr (betas 0.9, 0.999, eps 1e-8)
    double initStd = 0.1; ///< std of the normal initial weights (biases zero)
    std::uint64_t seed
        = 0; ///< initial weights Generator(seed), batches seed + 1, held-out seed + 2
    bool float32 = true; ///< train in float32 (else float64)

    /// The model: maxLength = 2·repeat.
    AttentionOnlyConfig model() const;
    RepeatedTokensConfig data() const;
    /// Throws InvalidArgument naming the field: the model's and the data's checks, heldOut < 1,
    /// lr not in (0, ∞), initStd < 0 or not finite.
    void validate() const;
};

/// One run: initialAttentionOnly(model, seed, initStd), batches from RepeatedTokens (seed + 1),
/// held-out repeatedTokens(V, N, heldOut, seed + 2), Adam; in float32 or float64.
class InductionRun
{
public:
    /// Throws InvalidArgument (InductionRunConfig::validate).
    explicit InductionRun(const InductionRunConfig &config);
    ~InductionRun();
    InductionRun(const InductionRun &) = delete;
    InductionRun &operator=(const InductionRun &) = delete;

    /// One training step on the next batch; returns its loss before the update (nats).
    double step();
    /// Updates taken so far.
    std::int64_t steps() const;
    /// The model as it is now, on the held-out sequences.
    InductionEvaluation evaluate() const;
    /// The parameters as they are now, in float64.
    AttentionOnlyParameters<double> parameters() const;
    const InductionRunConfig &config() const { return m_config; }
    const TokenBatch &heldOut() const { return m_heldOut; }

private:
    InductionRunConfig m_config;
    RepeatedTokens m_data;
    TokenBatch m_heldOut;
    std::unique_ptr<AttentionOnlyTrainer<float>> m_float;
    std::unique_ptr<AttentionOnlyTrainer<double>> m_double;
};

} // namespace attn::training
