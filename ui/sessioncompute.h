#pragma once
// The main view's computation, free of widgets: parameters → inputs (seeded) → multi-head
// attention → per-head weights, scores, mask states and metrics. Used by AttentionSession's
// worker and by `attnlab heatmap`, so the window and the command line show the same numbers.

#include "sessionparameters.h"

#include "core/attention.h"
#include "core/mask.h"
#include "core/metrics.h"
#include "core/types.h"

#include <QString>

#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>
#include <vector>

namespace attn {

struct SessionResult
{
    quint64 requestId = 0;
    SessionParameters params;
    // Every matrix is n_q × n_k, row-major, converted to double for display.
    std::vector<MatrixD> weights; ///< h heads
    MatrixD weightsMean; ///< mean over heads
    std::vector<MatrixD> scores; ///< h heads, raw q kᵀ
    std::vector<MatrixD> scaledScores; ///< h heads, scaled + masked (masked = −inf)
    MatrixB maskState; ///< MaskStateBits per cell
    std::vector<double> alibiSlopes; ///< h ALiBi slopes m_h when ALiBi is on, else empty
    std::vector<std::vector<std::uint8_t>> fullyMasked; ///< h × n_q
    std::vector<RowMetrics> metrics; ///< per head
    double scale = 1.0;
    double worstRowSumError = 0; ///< max over heads and rows of |Σw − 1|
    double computeSeconds = 0; ///< wall time of the computation (seconds)
    NonFiniteReport nonFinite; ///< NaN/Inf found in the weights (shown, never hidden)
    QString error; ///< non-empty when the computation failed

    // Set only on a result derived for display by applyViewTransform (ui/resultview.h): which
    // rows/columns of the computation are shown, and how. Empty maps mean "all, in order".
    std::vector<int> queryIndex; ///< shown row r is query queryIndex[r] of the computation
    std::vector<int> keyIndex; ///< shown column c is key keyIndex[c] of the computation
    bool renormalized = false; ///< weights renormalised over the shown keys (keys were hidden)
    QString viewNote; ///< what the view changed, e.g. "padding trimmed: metrics over 6 real tokens"

    bool ok() const { return error.isEmpty(); }
    /// Query / key of the computation behind shown row r / column c.
    int originalQuery(int r) const { return queryIndex.empty() ? r : queryIndex[std::size_t(r)]; }
    int originalKey(int c) const { return keyIndex.empty() ? c : keyIndex[std::size_t(c)]; }
    /// Axis labels of shown row r / column c (the token, else the original position).
    QString queryLabel(int r) const { return params.queryLabel(originalQuery(r)); }
    QString keyLabel(int c) const { return params.keyLabel(originalKey(c)); }
    int headCount() const { return int(weights.size()); }
    Index queryCount() const { return weightsMean.rows(); }
    Index keyCount() const { return weightsMean.cols(); }
};

/// Draw order (one generator seeded with params.seed): MultiheadAttention::initXavier, then the
/// query-side input X (n × d_model) then, for encoder–decoder attention, the encoder input
/// (n_k × d_model), all standard normal in C order. Typed tokens (params.tokens): row i of X
/// is then replaced by tokenEmbedding(tokens[i]) for every i < n with a token (cross-attention:
/// row j of the encoder input by tokenEmbedding(tokens[n + j])); rows without a token keep their
/// draw. Positional encoding (positions 0…) is added to each input when params.positional. Never
/// throws: errors land in SessionResult::error. Float32 inputs are drawn as float64 and rounded
/// (like NumPy's `rng.standard_normal(shape).astype(np.float32)`).
SessionResult computeSession(const SessionParameters &params);

/// Bytes a SessionResult for `params` holds: the weights, raw scores and scaled scores of every
/// head and the mean over heads (n_q × n_k float64 each, whatever the dtype: the display works
/// in double) plus one mask-state byte per cell: ((3·h + 1)·8 + 1)·n_q·n_k. At n = 4096, h = 8
/// that is 3.2 GiB.
std::size_t sessionResultBytes(const SessionParameters &params);

/// The largest sessionResultBytes() computeSession() accepts: a quarter of the physical memory
/// (the shown result stays alive while its replacement is computed, and the Compare view holds
/// a second configuration), at least 256 MiB. Seeded computations over it are refused with an
/// error naming the sizes, before anything is allocated, instead of exhausting memory.
std::size_t sessionMemoryBudget();

/// Overrides sessionMemoryBudget() (0 restores the default); for tests.
void setSessionMemoryBudget(std::size_t bytes);

/// FNV-1a 64-bit hash of the token's UTF-8 bytes (offset basis 14695981039346656037, prime
/// 1099511628211; Fowler, Noll, Vo). The same on every platform and Qt version (unlike
/// std::hash or qHash, which may be seeded or differ between builds).
quint64 tokenHash(const QString &token);

/// The input vector of a typed token, d_model standard normals: in NumPy
/// `np.random.default_rng(seed + 2**64 * tokenHash(token)).standard_normal(d_model)` (the seed
/// words are [seed low 32 bits, seed high, hash low, hash high]). It depends on the token's text
/// and the seed only, never on the token's position: equal tokens get equal vectors, and with
/// positional encoding off reordering the words permutes the rows of X and, with them, the
/// rows and columns of the attention weights (the E5 lesson). Throws InvalidArgument for
/// dModel < 0.
VectorD tokenEmbedding(const QString &token, quint64 seed, int dModel);

/// As above; `cancelled` is polled between steps (inputs, forward pass, each head's conversion
/// and metrics). When it returns true the computation stops and the result's error is
/// "cancelled" (AttentionSession uses this to drop superseded requests early).
SessionResult computeSession(const SessionParameters &params,
                             const std::function<bool()> &cancelled);

/// What one computation leaves for the next (AttentionSession's worker keeps one): the per-head
/// raw scores q_i k_iᵀ depend only on the seed, n, n_k, d_model, h, self- or cross-attention,
/// the positional encoding, the tokens and the dtype, so a change of α, τ, the mask or between
/// encoder and decoder self-attention (a slider drag) redoes only the scaling, masking, softmax
/// and metrics. Kept only while the scores take at most
/// maxBytes() (default 256 MiB: n = 1024 with h = 8 takes 64 MiB in float64, 96 MiB in
/// float32, which keeps a float copy for the arithmetic). Use from one thread at a time.
class SessionComputeCache
{
public:
    SessionComputeCache();
    ~SessionComputeCache();
    SessionComputeCache(const SessionComputeCache &) = delete;
    SessionComputeCache &operator=(const SessionComputeCache &) = delete;

    std::size_t maxBytes() const { return m_maxBytes; }
    void setMaxBytes(std::size_t bytes) { m_maxBytes = bytes; }
    /// True when a computation with `params` would reuse the cached scores.
    bool covers(const SessionParameters &params) const;
    /// Bytes held (0 when empty).
    std::size_t bytes() const;
    void clear();

    /// `result` as a shared pointer whose deleter hands its n_q × n_k matrices back for the
    /// next computations to reuse: fresh memory costs a page fault per 4 KiB (a third of an
    /// α step at n = 1024 on a busy machine). At most one result's matrices, and at most
    /// 512 MiB, are kept; the buffers stay valid if results outlive the cache.
    std::shared_ptr<const SessionResult> share(SessionResult &&result);

    struct Data; ///< private to sessioncompute.cpp
    struct BufferPool; ///< private to sessioncompute.cpp
    Data *data() const { return m_data.get(); }
    BufferPool *pool() const { return m_pool.get(); }

private:
    std::unique_ptr<Data> m_data;
    std::shared_ptr<BufferPool> m_pool;
    std::size_t m_maxBytes = std::size_t(256) << 20;
};

/// As above, reusing and refilling `cache` (may be nullptr). The numbers are the same with or
/// without a cache (bit for bit), and equal MultiheadAttention<T>::forward's weights, scores
/// and scaled scores; the output projection, not shown, is not computed.
SessionResult computeSession(const SessionParameters &params,
                             const std::function<bool()> &cancelled, SessionComputeCache *cache);

} // namespace attn
