#pragma once
// Head scores ("the head atlas"): what kind of head each (layer, head) of an attention stack is.
//
// Input: an attention stack of `layers` × `heads` square matrices A (n × n, query i × key j),
// stored layer by layer, head by head, each row-major (the C order of a NumPy array shaped
// (layers, heads, n, n)), in float64 or float32; and, for the token-dependent scores, the n
// tokens as integer ids (equal ids are duplicates; strings map to ids with tokenIds()).
//
// Pattern scores (TransformerLens transformer_lens/head_detector.py, error measure "mul"):
//   score = Σ_ij A'_ij P_ij / Σ_ij A'_ij
// over every row at once (one ratio per head, not a mean of per-row ratios), with P a 0/1
// detection pattern and A' the weights with the excluded entries set to 0 — in the numerator
// and in the denominator alike, as head_detector.py zeroes them in the pattern it divides by:
//   excludeFirstKey  ("exclude_bos"):           A'_i0 = 0 for every query i
//   excludeCurrent   ("exclude_current_token"): A'_ii = 0 for every query i
// Patterns (all lower triangular, j ≤ i):
//   previous token:  P_ij = 1 when j = i − 1
//   duplicate token: P_ij = 1 when j < i and token_j = token_i
//   induction:       P_ij = 1 when 1 ≤ j ≤ i and token_{j−1} = token_i (so j − 1 < i): the
//                    duplicate pattern moved one key to the right (the token after an earlier
//                    copy of the current one)
// A row whose weights are all 0 (a fully masked query) adds 0 to both sums, so it does not
// count; a head whose Σ A' is 0 (every row masked, or only excluded entries hold weight) has
// the score NaN (0/0: nothing to measure), as head_detector.py's division gives.
//
// Row statistics, each a mean over the queries i whose row is not all zero (Σ_j A_ij ≠ 0; a
// fully masked row has no distribution to measure; NaN when there is none). The exclusions
// above do not apply to them.
//   sink:            A_i0, the weight on the first key. Its mean is Gu et al. 2025's
//                    α_0 = Σ_i A_i0 / T ("When Attention Sink Emerges in Language Models",
//                    §3); a head is flagged as a sink when α_0 > ε (their ε = 0.3)
//   entropy:         −Σ_j A_ij ln A_ij in nats, 0·ln 0 = 0 (entropyNats, analysis/metrics.h;
//                    Zhai et al. 2023, "Stabilizing Transformer Training by Preventing
//                    Attention Entropy Collapse")
//   effective terms: 1 / Σ_j A_ij² (effectiveTerms, analysis/metrics.h)
//   distance:        Σ_j A_ij |i − j|, the mean distance in positions a query looks back
//                    (or ahead)
// NaN and ±Inf weights are not refused: they propagate into the scores of their head.

#include "core/base/types.h"

#include <cstdint>
#include <span>
#include <string>
#include <utility>
#include <vector>

namespace attn {

/// Shape of an attention stack: layers × heads matrices of n × n.
struct HeadStackShape
{
    Index layers = 1;
    Index heads = 1;
    Index n = 0; ///< queries = keys
    /// layers · heads · n · n
    std::uint64_t count() const
    {
        return std::uint64_t(layers) * std::uint64_t(heads) * std::uint64_t(n) * std::uint64_t(n);
    }
};

/// Which entries of A the pattern scores leave out (both in numerator and denominator).
struct HeadScoreOptions
{
    bool excludeFirstKey = false; ///< A_i0 := 0 (TransformerLens exclude_bos)
    bool excludeCurrent = false; ///< A_ii := 0 (TransformerLens exclude_current_token)
    double sinkEpsilon = 0.3; ///< sink flag: mean A_i0 > sinkEpsilon (Gu et al. 2025)
};

/// Scores of every (layer, head): each matrix is layers × heads, row-major.
struct HeadScores
{
    Index layers = 0, heads = 0, n = 0;
    bool haveTokens = false; ///< false: duplicateToken and induction are NaN
    MatrixD previousToken; ///< Σ A'⊙P_prev / Σ A'
    MatrixD duplicateToken; ///< Σ A'⊙P_dup / Σ A' (NaN without tokens)
    MatrixD induction; ///< Σ A'⊙P_ind / Σ A' (NaN without tokens)
    MatrixD sink; ///< mean_i A_i0
    MatrixB sinkFlag; ///< sink > sinkEpsilon (0 when sink is NaN)
    MatrixD entropy; ///< mean_i −Σ_j A_ij ln A_ij, nats
    MatrixD effectiveTerms; ///< mean_i 1 / Σ_j A_ij²
    MatrixD distance; ///< mean_i Σ_j A_ij |i − j|
    /// Rows left out of the row means because they are all zero (fully masked), per head.
    Eigen::Matrix<Index, Eigen::Dynamic, Eigen::Dynamic, Eigen::RowMajor> zeroRows;
};

/// The per-head scores of `s` with their names, in the order `attnlab heads` and the window's
/// Atlas tab list them: previous_token, duplicate_token, induction, sink, entropy,
/// effective_terms, distance (pointers into `s`).
std::vector<std::pair<const char *, const MatrixD *>> headScoreColumns(const HeadScores &s);
/// The same columns, writable (to assemble scores computed a head at a time).
std::vector<std::pair<const char *, MatrixD *>> headScoreColumns(HeadScores &s);

/// Token ids for strings: equal strings get equal ids (the order of first appearance: 0, 1, …).
std::vector<std::int64_t> tokenIds(const std::vector<std::string> &tokens);

/// Scores of every head of `values` (shape.count() entries in the C order of (layers, heads, n,
/// n)). `tokens`: n ids, or empty (then duplicateToken and induction are NaN and haveTokens is
/// false). Throws InvalidArgument naming the numbers when layers, heads or n is < 1, when
/// values.size() ≠ layers·heads·n·n, when tokens is neither empty nor n long, or when
/// sinkEpsilon is not finite.
template<typename T>
HeadScores headScores(std::span<const T> values, const HeadStackShape &shape,
                      const std::vector<std::int64_t> &tokens,
                      const HeadScoreOptions &options = {});

/// Olsson et al. 2022 ("In-context Learning and Induction Heads", §2, "prefix matching"): for a
/// stack computed on random tokens r_0 … r_{N−1} repeated twice, n = b + 2N with b = 1 when one
/// BOS token comes first (`leadingBos`) and 0 otherwise, the mean over the second copy's queries
/// i = b + N … b + 2N − 1 of A[i, i − N + 1]: the weight on the token that followed the query's
/// token in the first copy. 1 for a perfect induction head. Returns layers × heads. Throws
/// InvalidArgument naming the numbers when repeatLength < 1, when n ≠ b + 2·repeatLength, or
/// for the shape errors of headScores.
template<typename T>
MatrixD prefixMatchingScores(std::span<const T> values, const HeadStackShape &shape,
                             Index repeatLength, bool leadingBos);

/// Dong et al. 2021 ("Attention is Not All You Need: Pure Attention Loses Rank Doubly
/// Exponentially with Depth", §2.1): the relative residual ‖X − 1 x̄ᵀ‖_F / ‖X‖_F of n hidden
/// states X (n × d, one token a row), x̄ the mean row (the x minimising ‖X − 1xᵀ‖_F). 0 when all
/// rows are equal (rank collapse), NaN when X = 0. Throws InvalidArgument for an empty X.
template<typename T> double rankCollapseResidual(const Matrix<T> &hidden);

} // namespace attn
