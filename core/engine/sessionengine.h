#pragma once
// The window's computation, Qt-free: seeded inputs (sessioninputs.h) → projections → per-head
// raw scores q_i k_iᵀ → one fused pass per query row over every head (scale, mask, row softmax,
// metrics, NaN/Inf check, mean over heads) → per-head weights, scores, scaled scores, mask
// states and metrics, converted to float64 for display. The values and the output projection
// (not shown) are not computed. The ui's AttentionSession and `attnlab heatmap` call it through
// ui/sessioncompute.h; the same row pass is the "fused" kernel of core/kernels/kernels.h, so
// the benchmarks (bench/bench_kernels.cpp) and the invariant tests (tests/tst_invariants.cpp)
// run the code the window shows.
//
// Numbers: every weight, score and scaled score equals MultiheadAttention<T>::forward's on the
// same inputs (projection GEMMs, per-head GEMMs, scores · scale, masked cells −inf,
// softmaxRowInPlace: the same operations on the same values in the same order), with or without
// the cached scores, bit for bit (tests/tst_session.cpp, tests/tst_sessioncache.cpp).

#include "core/analysis/metrics.h"
#include "core/attention/attention.h"
#include "core/attention/mask.h"
#include "core/attention/multihead.h"
#include "core/base/cancel.h"
#include "core/base/types.h"
#include "core/engine/engineparameters.h"

#include <cstddef>
#include <cstdint>
#include <memory>
#include <mutex>
#include <vector>

namespace attn {

/// What the engine computes. Every matrix is n_q × n_k, row-major, float64 (float32 runs are
/// converted for display).
struct EngineResult
{
    std::vector<MatrixD> weights; ///< h heads
    MatrixD weightsMean; ///< mean over heads (summed in the run's type, in head order)
    std::vector<MatrixD> scores; ///< h heads, raw q_i k_iᵀ
    std::vector<MatrixD> scaledScores; ///< h heads, scaled + masked (masked = −inf)
    MatrixB maskState; ///< MaskStateBits per cell
    std::vector<double> alibiSlopes; ///< h ALiBi slopes m_h when ALiBi is on, else empty
    /// With s > 0 attention sinks under a sliding window of width w: per head, the mean weight
    /// mass on the sinks over the queries whose window has moved past them, (1/(n_q − w − s))
    /// Σ_{i ≥ w+s} Σ_{j<s} w_ij (sinkWeightMass, StreamingLLM §3.1; E15's sink_mass), NaN when
    /// no query has i ≥ w + s; else empty.
    std::vector<double> sinkMass;
    /// With RoPE: h heads of q_i k_iᵀ from the projected queries and keys before the rotation
    /// (then `scores` are those of the rotated q_i, k_i). Empty without RoPE.
    std::vector<MatrixD> unrotatedScores;
    /// With ALiBi: h heads of the bias added to the scaled scores, −m_h·(i − j) with a causal
    /// mask, else −m_h·|i − j| (alibiBias, core/attention/positional.h; the same values the row
    /// pass adds). Empty without ALiBi.
    std::vector<MatrixD> positionBias;
    bool positionBiasCausal = false; ///< positionBias is −m_h·(i − j) (else −m_h·|i − j|)
    std::vector<std::vector<std::uint8_t>> fullyMasked; ///< h × n_q
    /// Learned sinks (core/attention/variants.h): h × n_q, each row's mass on the sink,
    /// exp(b_h) / (exp(b_h) + Σ_k exp(s_ik)), and the h sink logits; empty otherwise.
    std::vector<VectorD> learnedSinkMass;
    std::vector<double> sinkLogits;
    /// Differential attention: A₁ and A₂ (h matrices n_q × n_k each, plain softmaxes) and λ per
    /// head; `weights` then hold A₁ − λA₂. Empty otherwise.
    std::vector<MatrixD> firstWeights, secondWeights;
    std::vector<double> lambda;
    /// Head-wise output gate: h × n_q, σ(g_iu) of each head u and query row i; `weights` then
    /// hold σ(g_iu)·w_ij (the weights the gated output is built from). Empty otherwise.
    std::vector<VectorD> gate;
    /// With a learned sink, differential attention or the gate: per head, the mean row sum
    /// Σ_j w_ij over the rows not fully masked (meanRowSums: 1 − mean sink mass, 1 − λ, the mean
    /// gate, or their product); else empty.
    std::vector<double> meanRowSum;
    /// The weights can be negative (differential attention, or stored weights that are): views
    /// draw them on a diverging scale centred on 0.
    bool signedWeights = false;
    /// Per head: the metrics of each row's distribution — the weights; with learned sinks the
    /// weights and the sink (n_k + 1 entries); with differential attention those of A₁.
    std::vector<RowMetrics> metrics; ///< per head
    double scale = 1.0; ///< d_k^(−α)/τ applied in every head
    double worstRowSumError = 0; ///< max over heads and rows of |Σw − 1|
    NonFiniteReport nonFinite; ///< NaN/Inf found in the weights (reported, never hidden)
};

/// n_q × n_k float64 matrices of dropped results, for the next computations: fresh memory costs
/// a page fault per 4 KiB (a third of an α step at n = 1024 on a busy machine). Keeps only
/// matrices of the shape last announced with expect(), at most one result's worth and at most
/// maxBytes. Thread-safe.
class EngineBufferPool
{
public:
    static constexpr std::size_t maxBytes = std::size_t(512) << 20;
    /// recycle() frees at least this much without keeping it: the pages go back to the system.
    static constexpr std::size_t kReleaseBytes = std::size_t(16) << 20;

    /// A rows × cols matrix with unspecified contents (a spare one when there is one).
    MatrixD take(Index rows, Index cols);
    /// Keeps `m` for a later take() when it has the announced shape and there is room (true);
    /// otherwise leaves it with the caller (false).
    bool give(MatrixD &&m);
    /// Announces the shape and count of one result's matrices (drops spares of another shape).
    void expect(Index rows, Index cols, std::size_t count);
    /// Gives back every matrix of `r` (weights, scores, scaled scores, unrotated scores,
    /// position bias, mean); when those not kept (another shape) add up to kReleaseBytes or
    /// more, releaseFreeMemory() returns their pages to the system.
    void recycle(EngineResult &&r);
    /// Bytes of the spare matrices held now.
    std::size_t heldBytes() const;
    /// Drops every spare matrix and hands the freed pages back to the system (malloc_trim on
    /// glibc: freed n_q × n_k buffers otherwise stay in the allocator's arenas, so the process
    /// keeps the peak of a large problem after a small one replaced it).
    void release();

private:
    mutable std::mutex m_mutex;
    std::vector<MatrixD> m_spare;
    Index m_rows = 0, m_cols = 0;
    std::size_t m_maxCount = 0;
};

/// Returns the memory the allocator holds free to the system (glibc's malloc_trim(0); a no-op
/// elsewhere). Call after dropping large matrices.
void releaseFreeMemory();

/// Floating-point operations per cell and head of the fused row pass (scale, mask, copy,
/// softmax with its exp, metrics with a log, mean), for threadsForFlops (core/base/threads.h).
inline constexpr double kRowPassFlopsPerCell = 30;

/// The fused multi-head path on given inputs: q = query W_Qᵀ + b_Q (n_q × d_model),
/// k = key W_Kᵀ + b_K (n_k × d_model), per head S_i = q_i k_iᵀ, then the fused row pass with
/// scale effectiveScale(d_k, options) and `mask` (boolean components and an additive term, as
/// scaledDotProductAttention applies them; fill −inf). query n_q × d_model, key n_k × d_model.
/// Fills `out` (every field). Equals layer.forward(query, key, value, mask, options)'s weights,
/// scores and scaled scores (float32: converted to float64) and its mean of the weights within
/// rounding. Throws InvalidArgument naming the shapes, NonFiniteInput on NaN/Inf in the inputs
/// or overflowing scaled scores (naming row and column), Cancelled when `cancel` says so.
template<typename T>
void fusedMultihead(const MultiheadAttention<T> &layer, const ConstMatrixRef<T> &query,
                    const ConstMatrixRef<T> &key, const AttentionMask &mask,
                    const AttentionOptions &options, EngineResult &out,
                    const CancelToken &cancel = {});

/// The engine with its memory between computations (AttentionSession's worker keeps one): the
/// per-head raw scores depend only on the seed, n, n_k, d_model, h, self- or cross-attention,
/// the positional encoding, the tokens and the dtype, so a change of α, τ, the mask or between
/// encoder and decoder self-attention (a slider drag) redoes only the row pass. Scores are kept
/// only while they take at most maxBytes() (default 256 MiB: n = 1024 with h = 8 takes 64 MiB
/// in float64, 96 MiB in float32, which keeps a float copy for the arithmetic). Results' matrices
/// come from pool() when it has spares. Use from one thread at a time.
class SessionEngine
{
public:
    SessionEngine();
    ~SessionEngine();
    SessionEngine(const SessionEngine &) = delete;
    SessionEngine &operator=(const SessionEngine &) = delete;

    std::size_t maxBytes() const { return m_maxBytes; }
    void setMaxBytes(std::size_t bytes) { m_maxBytes = bytes; }
    /// True when a computation with `p` would reuse the cached scores.
    bool covers(const EngineParameters &p) const;
    /// Bytes of cached scores (0 when empty).
    std::size_t bytes() const;
    void clear();
    /// The pool results' matrices are taken from; it outlives the engine while shared.
    const std::shared_ptr<EngineBufferPool> &pool() const { return m_pool; }

    /// Computes `p` (inputs as sessionInputs(p) draws them) into `out` (every field
    /// overwritten). Throws InvalidArgument (p.check()), NonFiniteInput when scaled scores
    /// overflow, std::bad_alloc, and Cancelled when `cancel` says so (polled between the steps:
    /// inputs, projections, each head, each block of 16 rows); on Cancelled the cache is empty.
    void compute(const EngineParameters &p, EngineResult &out, const CancelToken &cancel = {});

    struct Scores; ///< private to sessionengine.cpp

private:
    std::unique_ptr<Scores> m_scores;
    std::shared_ptr<EngineBufferPool> m_pool;
    std::size_t m_maxBytes = std::size_t(256) << 20;
};

/// SessionEngine::compute without a cache or pool.
EngineResult computeEngine(const EngineParameters &p, const CancelToken &cancel = {});

} // namespace attn
