#include "core/engine/sessionengine.h"

#include "core/attention/groupedattention.h"

#include "core/attention/positional.h"
#include "core/attention/querykeyheads.h"
#include "core/attention/variants.h"
#include "core/base/blas.h"

#include "core/attention/softmax.h"
#include "core/base/threads.h"
#include "core/engine/sessioninputs.h"
#include "core/kernels/detail.h"
#include "core/kernels/kernels.h"

#include <algorithm>
#include <atomic>
#include <cmath>
#include <exception>
#include <limits>
#include <optional>
#include <string>
#include <type_traits>

#ifdef _OPENMP
#include <omp.h>
#endif
#ifdef __GLIBC__
#include <malloc.h>
#endif

namespace attn {

// ---- EngineBufferPool ----

MatrixD EngineBufferPool::take(Index rows, Index cols)
{
    {
        std::lock_guard<std::mutex> lock(m_mutex);
        if (rows == m_rows && cols == m_cols && !m_spare.empty()) {
            MatrixD m = std::move(m_spare.back());
            m_spare.pop_back();
            return m;
        }
    }
    return MatrixD(rows, cols);
}

bool EngineBufferPool::give(MatrixD &&m)
{
    std::lock_guard<std::mutex> lock(m_mutex);
    const std::size_t bytes = std::size_t(m.size()) * sizeof(double);
    if (m.rows() == m_rows && m.cols() == m_cols && m_spare.size() < m_maxCount
        && (m_spare.size() + 1) * bytes <= maxBytes) {
        m_spare.push_back(std::move(m));
        return true;
    }
    return false;
}

void EngineBufferPool::expect(Index rows, Index cols, std::size_t count)
{
    bool dropped = false;
    {
        std::lock_guard<std::mutex> lock(m_mutex);
        if (rows != m_rows || cols != m_cols) {
            dropped = !m_spare.empty();
            m_spare.clear();
            m_rows = rows;
            m_cols = cols;
        }
        m_maxCount = count;
        // Fewer matrices per result than before: drop the surplus.
        while (m_spare.size() > m_maxCount) {
            m_spare.pop_back();
            dropped = true;
        }
    }
    if (dropped)
        releaseFreeMemory();
}

void EngineBufferPool::recycle(EngineResult &&r)
{
    std::size_t dropped = 0; // bytes freed rather than kept
    auto keep = [&](MatrixD &&m) {
        const std::size_t bytes = std::size_t(m.size()) * sizeof(double);
        if (!give(std::move(m)))
            dropped += bytes;
        m = MatrixD(); // freed here when not kept
    };
    for (auto *list : {&r.weights, &r.scores, &r.scaledScores, &r.unrotatedScores, &r.positionBias})
        for (MatrixD &m : *list)
            keep(std::move(m));
    keep(std::move(r.weightsMean));
    // A large result of another shape (a large problem replaced by a small one): hand its
    // pages back rather than keep the process at its peak.
    if (dropped >= kReleaseBytes)
        releaseFreeMemory();
}

std::size_t EngineBufferPool::heldBytes() const
{
    std::lock_guard<std::mutex> lock(m_mutex);
    std::size_t bytes = 0;
    for (const MatrixD &m : m_spare)
        bytes += std::size_t(m.size()) * sizeof(double);
    return bytes;
}

void EngineBufferPool::release()
{
    {
        std::lock_guard<std::mutex> lock(m_mutex);
        m_spare.clear();
        m_spare.shrink_to_fit();
    }
    releaseFreeMemory();
}

void releaseFreeMemory()
{
#ifdef __GLIBC__
    malloc_trim(0);
#endif
}

// The cached part of a computation: per-head raw scores (n_q × n_k, row-major) and what they
// depend on. Float32 runs keep a float copy for the arithmetic and a double copy for display;
// float64 runs need only the latter.
struct SessionEngine::Scores
{
    EngineParameters key; ///< only the fields compared by sameScores matter
    std::vector<MatrixF> scoresF; ///< h heads (float32 runs)
    std::vector<MatrixD> scoresD; ///< h heads, as shown
    std::vector<MatrixD> unrotatedD; ///< h heads before RoPE's rotation (RoPE only)
    MatrixD gateLogits; ///< n_q × h: x_i·w_θ without the bias (head-wise output gate only)
    std::size_t bytes = 0;
};

namespace {

using Scores = SessionEngine::Scores;

bool sameScores(const EngineParameters &a, const EngineParameters &b)
{
    return a.seed == b.seed && a.generator == b.generator && a.n == b.n
        && a.keyCount() == b.keyCount() && a.dModel == b.dModel && a.heads == b.heads
        && a.positional == b.positional
        && (a.kind == AttentionKind::EncoderDecoder) == (b.kind == AttentionKind::EncoderDecoder)
        && a.dtype == b.dtype && a.tokens == b.tokens && a.rope == b.rope
        && (!a.rope || (a.ropeConvention == b.ropeConvention && a.ropeBase == b.ropeBase))
        && a.keyValueHeads() == b.keyValueHeads() && a.outputGate == b.outputGate
        && a.latent == b.latent
        && (!a.latent
            || (a.latentDim == b.latentDim && a.latentRopeDim == b.latentRopeDim
                && a.latentAbsorbed == b.latentAbsorbed && a.ropeBase == b.ropeBase));
}

/// What stage 1 does beyond multi-head attention: g < h key heads, RoPE.
struct ScoreOptions
{
    Index kvHeads = 0; ///< 0: g = h
    bool rope = false;
    RopeConvention ropeConvention = RopeConvention::Half;
    double ropeBase = kRopeDefaultBase;
};

/// Runs body(firstRow, rowCount) over [0, rows) in blocks of `block` rows on `threads` OpenMP
/// threads (dynamic schedule: causal rows differ in cost). A cancel, polled before each block,
/// and exceptions are carried out of the parallel region and rethrown here.
template<typename Body>
void forEachRowBlock(Index rows, Index block, Index threads, const CancelToken &cancel, Body body)
{
    std::exception_ptr error;
    std::atomic<bool> stop {false};
#pragma omp parallel for schedule(dynamic, 1) num_threads(int(threads)) if (threads > 1)
    for (Index first = 0; first < rows; first += block) {
        if (stop.load())
            continue;
        try {
            cancel.throwIfCancelled();
            body(first, std::min(block, rows - first));
        } catch (...) {
#pragma omp critical(attn_engine_error)
            {
                if (!error)
                    error = std::current_exception();
            }
            stop.store(true);
        }
    }
    if (error)
        std::rethrow_exception(error);
}

template<typename T> std::vector<Matrix<T>> &typedScores(Scores &d);
template<> std::vector<MatrixF> &typedScores<float>(Scores &d)
{
    return d.scoresF;
}
template<> std::vector<MatrixD> &typedScores<double>(Scores &d)
{
    return d.scoresD;
}

/// Stage 1: projections and per-head raw scores, exactly as MultiheadAttention<T>::forward and
/// scaledDotProductAttention compute them (q = query W_Qᵀ + b_Q, S_i = q_i k_iᵀ).
template<typename T>
void computeScores(const MultiheadAttention<T> &layer, const ConstMatrixRef<T> &query,
                   const ConstMatrixRef<T> &key, Scores &out, const CancelToken &cancel,
                   const ScoreOptions &extra = {})
{
    const Index nQ = query.rows(), nK = key.rows();
    const Index d = layer.dModel();
    const Index h = layer.heads();
    const Index dK = layer.headDim();
    if (query.cols() != d || key.cols() != d)
        throw InvalidArgument("fusedMultihead: query " + shapeString(query.rows(), query.cols())
                              + " and key " + shapeString(key.rows(), key.cols())
                              + " must have d_model = " + std::to_string(d) + " columns");
    detail::checkFiniteInput<T>(query, "query", "fusedMultihead");
    detail::checkFiniteInput<T>(key, "key", "fusedMultihead");
    // Projections (2·(n_q + n_k)·d_model² flops) and scores (2·n_q·n_k·d_model).
    const Index threads = threadsForFlops(2.0 * double(nQ + nK) * double(d) * double(d)
                                          + 2.0 * double(nQ) * double(nK) * double(d));
    const ScopedKernelThreads team(threads);

    // q: n_q × d_model as in MultiheadAttention::forward, k: n_k × g·d_k (g < h key heads, each
    // the mean of its group's h/g heads).
    QueryKeyHeads<T> qk = groupedQueryKey<T>(layer, query, key, extra.kvHeads);
    Matrix<T> &q = qk.query, &k = qk.key;
    const Index g = extra.kvHeads > 0 ? extra.kvHeads : h;
    // RoPE: every head's queries (positions 0…n_q−1) and keys (0…n_k−1) rotated; the scores of
    // the unrotated q_i, k_i are kept for display (the steps view's rotation step).
    out.unrotatedD.clear();
    if (extra.rope) {
        out.unrotatedD.assign(std::size_t(h), MatrixD());
        for (Index head = 0; head < h; ++head) {
            Matrix<T> s(nQ, nK);
            gemmTransposed<T>(q.middleCols(head * dK, dK), k.middleCols((head * g / h) * dK, dK),
                              s);
            if constexpr (std::is_same_v<T, double>)
                out.unrotatedD[std::size_t(head)] = std::move(s);
            else
                out.unrotatedD[std::size_t(head)] = s.template cast<double>();
        }
        applyRopeHeads<T>(q, h, extra.ropeConvention, extra.ropeBase);
        applyRopeHeads<T>(k, g, extra.ropeConvention, extra.ropeBase);
    }
    cancel.throwIfCancelled();

    std::vector<Matrix<T>> &scores = typedScores<T>(out);
    scores.assign(std::size_t(h), Matrix<T>());
    if constexpr (!std::is_same_v<T, double>)
        out.scoresD.assign(std::size_t(h), MatrixD());
    forEachRowBlock(h, 1, std::clamp<Index>(threads, 1, h), cancel, [&](Index head, Index) {
        // scores: n_q × n_k = q_i k_iᵀ, head i = columns i·d_k … (i+1)·d_k − 1
        Matrix<T> &s = scores[std::size_t(head)];
        s.resize(nQ, nK);
        const ConstMatrixRef<T> qi = q.middleCols(head * dK, dK);
        // query head i reads key head ⌊i·g/h⌋ (torch.repeat_interleave's order)
        const ConstMatrixRef<T> ki = k.middleCols((head * g / h) * dK, dK);
        gemmTransposed<T>(qi, ki, s);
        if constexpr (!std::is_same_v<T, double>)
            out.scoresD[std::size_t(head)] = s.template cast<double>();
    });
    out.bytes = std::size_t(nQ) * std::size_t(nK) * std::size_t(h)
        * (sizeof(double) + (std::is_same_v<T, double> ? 0 : sizeof(T))
           + (extra.rope ? sizeof(double) : 0));
}

/// A rows × cols double matrix with unspecified contents: a spare one from the pool when there
/// is one (no fresh pages to fault in), else a new one.
MatrixD takeBuffer(EngineBufferPool *pool, Index rows, Index cols)
{
    return pool ? pool->take(rows, cols) : MatrixD(rows, cols);
}

/// Stage 2 input: h heads of raw scores in T (n_q × n_k, row-major each).
template<typename T> struct RowPassInput
{
    std::vector<const T *> scores;
    /// When set, row i of r.scores[u] is copied from (*copyScores)[u] during the pass (while
    /// in cache); otherwise r.scores is already filled.
    const std::vector<MatrixD> *copyScores = nullptr;
    Index nQ = 0, nK = 0;
    T scale = T(1);
    const AttentionMask *mask = nullptr;
    /// ALiBi: head u adds −m_u·(i − j) (−m_u·|i − j| without a causal mask) to its scaled
    /// scores, as alibiBias; empty for none.
    std::vector<double> alibiSlopes;
};

/// Stage 2: scale, mask, softmax, mean and metrics of every head from the raw scores, with
/// scaledDotProductAttention's arithmetic (S' = S · scale + additive mask, masked cells −inf,
/// row softmax). r.scores must hold h n_q × n_k matrices (or be filled via copyScores).
///
/// One fused pass per row: for each head the row is scaled and masked (written to the scaled
/// scores and the weights at once), its softmax taken (softmaxRowInPlace, the code
/// softmaxRowsInPlace runs per row), its metrics computed (rowMetricValues, rowMetrics' numbers)
/// and checked for NaN/Inf, and added to the mean over heads, all while the row is in cache;
/// rows are split over threads. Every number is the one the per-head whole-matrix passes
/// (scores · scale, mask, copy, softmaxRowsInPlace, rowMetrics, findNonFinite, mean) give: the
/// same operations on the same values in the same order.
template<typename T>
void rowPass(const RowPassInput<T> &in, EngineResult &r, EngineBufferPool *pool,
             const CancelToken &cancel)
{
    const Index nQ = in.nQ, nK = in.nK;
    const auto hs = in.scores.size();
    const int h = int(hs);
    const auto rows = std::size_t(nQ);
    const T scale = in.scale;
    const T fill = -std::numeric_limits<T>::infinity();
    const AttentionMask &mask = *in.mask;
    r.maskState = mask.stateMatrix(nQ, nK);
    const bool masked = !mask.empty();
    const MatrixD *additive = mask.additiveTerm();

    r.weights.resize(hs);
    r.scaledScores.resize(hs);
    r.fullyMasked.resize(hs);
    r.metrics.resize(hs);
    r.worstRowSumError = 0;
    r.nonFinite = NonFiniteReport {};
    if (in.copyScores) {
        r.scores.resize(hs);
        for (std::size_t u = 0; u < hs; ++u)
            r.scores[u] = takeBuffer(pool, nQ, nK); // rows copied below
    }
    for (std::size_t u = 0; u < hs; ++u) {
        r.scaledScores[u] = takeBuffer(pool, nQ, nK);
        r.weights[u] = takeBuffer(pool, nQ, nK);
        r.fullyMasked[u].assign(rows, 0);
        RowMetrics &m = r.metrics[u];
        m.maxWeight.setZero(nQ);
        m.entropy.setZero(nQ);
        m.effectiveTerms.setZero(nQ);
        m.jacobianNorm.setZero(nQ);
        m.rowSumError.setZero(nQ);
        m.fullyMasked.assign(rows, 0);
    }
    r.weightsMean = takeBuffer(pool, nQ, nK);
    // Per head and row: 1 when the row's softmax input held NaN/+inf, 2 when its weights may
    // hold NaN/Inf (rescanned below, in findNonFinite's order).
    std::vector<std::uint8_t> rowFlags(hs * rows, 0);
    constexpr std::uint8_t badInput = 1, nonFiniteWeights = 2;

    using Row = Eigen::Array<T, 1, Eigen::Dynamic>; // one row of n_k entries
    using RowMap = Eigen::Map<Row>;
    using ConstRowMap = Eigen::Map<const Row>;
    const Index block = 16; // rows per task
    const Index blocks = (nQ + block - 1) / block;
    const Index threads = std::clamp<Index>(
        threadsForFlops(double(nQ) * double(nK) * double(h) * kRowPassFlopsPerCell), 1,
        std::max<Index>(blocks, 1));
    // Working memory of each thread, allocated once (per block it would fault in fresh pages).
    struct Scratch
    {
        RowMetricsScratch metrics;
        std::vector<const double *> metricRows; // weights of the heads that need metrics
        std::vector<std::size_t> metricHeads;
        std::vector<RowMetricValues> values;
        Row scaledT, weightT; // float32 runs work in T and store double copies (float64 runs
                              // work in the result)
        Row meanT;
    };
    std::vector<Scratch> scratches(static_cast<std::size_t>(threads));
    forEachRowBlock(nQ, block, threads, cancel, [&](Index first, Index count) {
#ifdef _OPENMP
        Scratch &own = scratches[std::size_t(omp_get_thread_num())];
#else
        Scratch &own = scratches.front();
#endif
        if (own.meanT.size() != nK) { // this thread's first block
            own.metricRows.resize(hs);
            own.metricHeads.resize(hs);
            own.values.resize(hs);
            if constexpr (!std::is_same_v<T, double>) {
                own.scaledT.resize(nK);
                own.weightT.resize(nK);
            }
            own.meanT.resize(nK);
        }
        std::vector<const double *> &metricRows = own.metricRows;
        std::vector<std::size_t> &metricHeads = own.metricHeads;
        std::vector<RowMetricValues> &values = own.values;
        Row &scaledT = own.scaledT, &weightT = own.weightT, &meanT = own.meanT;
        RowMetricsScratch &scratch = own.metrics;
        for (Index i = first; i < first + count; ++i) {
            const std::uint8_t *state = r.maskState.data() + i * nK;
            meanT.setZero();
            int metricCount = 0;
            for (std::size_t u = 0; u < hs; ++u) {
                if (in.copyScores)
                    r.scores[u].row(i) = (*in.copyScores)[u].row(i);
                T *scaled = nullptr, *w = nullptr;
                if constexpr (std::is_same_v<T, double>) {
                    scaled = r.scaledScores[u].row(i).data(); // float64 works in the result
                    w = r.weights[u].row(i).data();
                } else {
                    scaled = scaledT.data();
                    w = weightT.data();
                }
                // scaled = scores · scale (+ additive mask), masked cells = −inf; the weights
                // start as a copy
                RowMap(scaled, nK) = ConstRowMap(in.scores[u] + i * nK, nK) * scale;
                if (additive)
                    RowMap(scaled, nK) += additive->row(i).array().template cast<T>();
                if (!in.alibiSlopes.empty()) {
                    const double m = in.alibiSlopes[u];
                    const bool causalBias = in.mask->hasCausal();
                    for (Index c = 0; c < nK; ++c) {
                        const double offset = double(i) - double(c);
                        scaled[c] = T(scaled[c] + T(-m * (causalBias ? offset : std::abs(offset))));
                    }
                }
                if (masked) {
                    for (Index c = 0; c < nK; ++c)
                        if (state[c])
                            scaled[c] = fill;
                }
                std::copy(scaled, scaled + nK, w);
                const SoftmaxRowStatus status = softmaxRowInPlace(w, nK);
                std::uint8_t &flag = rowFlags[u * rows + std::size_t(i)];
                if (status == SoftmaxRowStatus::NonFinite) {
                    flag = badInput; // reported after the loop; the result is discarded
                    continue;
                }
                const double *weight = r.weights[u].row(i).data();
                if constexpr (!std::is_same_v<T, double>) {
                    r.scaledScores[u].row(i) = RowMap(scaled, nK).template cast<double>();
                    r.weights[u].row(i) = RowMap(w, nK).template cast<double>();
                }
                meanT += RowMap(w, nK); // mean over heads in T, summed in head order
                if (status == SoftmaxRowStatus::FullyMasked) {
                    r.fullyMasked[u][std::size_t(i)] = 1;
                    r.metrics[u].fullyMasked[std::size_t(i)] = 1;
                    if (!std::all_of(weight, weight + nK,
                                     [](double x) { return std::isfinite(x); }))
                        flag = nonFiniteWeights;
                    continue;
                }
                metricRows[std::size_t(metricCount)] = weight;
                metricHeads[std::size_t(metricCount)] = u;
                ++metricCount;
            }
            // Row i's metrics in every head, several heads at a time.
            rowMetricValues(metricRows.data(), metricCount, nK, values.data(), scratch);
            for (int k = 0; k < metricCount; ++k) {
                const std::size_t u = metricHeads[std::size_t(k)];
                const RowMetricValues &v = values[std::size_t(k)];
                RowMetrics &m = r.metrics[u];
                m.maxWeight(i) = v.maxWeight;
                m.entropy(i) = v.entropy;
                m.effectiveTerms(i) = v.effectiveTerms;
                m.jacobianNorm(i) = v.jacobianNorm;
                m.rowSumError(i) = std::abs(v.rowSum - 1.0);
                // A finite sum means finite entries (NaN and ±inf propagate into a sum).
                if (!std::isfinite(v.rowSum))
                    rowFlags[u * rows + std::size_t(i)] = nonFiniteWeights;
            }
            meanT /= T(h);
            r.weightsMean.row(i) = meanT.template cast<double>();
        }
    });

    // Softmax input with NaN/+inf (finite scores overflowed once scaled): redo the first such
    // head the whole-matrix way for softmaxRowsInPlace's message naming row and column.
    for (std::size_t u = 0; u < hs; ++u) {
        const auto flags = rowFlags.begin() + std::ptrdiff_t(u * rows);
        if (std::find(flags, flags + std::ptrdiff_t(rows), badInput)
            == flags + std::ptrdiff_t(rows))
            continue;
        Matrix<T> w = Eigen::Map<const Matrix<T>>(in.scores[u], nQ, nK) * scale;
        if (additive)
            w += additive->template cast<T>();
        if (!in.alibiSlopes.empty())
            w += alibiBias(nQ, nK, in.alibiSlopes[u], in.mask->hasCausal()).template cast<T>();
        if (masked) {
            for (Index c = 0, cells = w.size(); c < cells; ++c)
                if (r.maskState.data()[c])
                    w.data()[c] = fill;
        }
        try {
            softmaxRowsInPlace(w);
        } catch (const NonFiniteInput &e) {
            throw NonFiniteInput(std::string("the scaled scores overflowed: ") + e.what());
        }
        throw NonFiniteInput("the scaled scores overflowed");
    }

    for (std::size_t u = 0; u < hs; ++u) {
        r.worstRowSumError = std::max(r.worstRowSumError, summarize(r.metrics[u]).worstRowSumError);
        // NaN/Inf in the weights: findNonFinite over the flagged rows (the others are finite).
        for (std::size_t i = 0; i < rows; ++i) {
            if (rowFlags[u * rows + i] != nonFiniteWeights)
                continue;
            for (Index j = 0; j < nK; ++j) {
                const double x = r.weights[u](Index(i), j);
                if (std::isfinite(x))
                    continue;
                if (std::isnan(x))
                    ++r.nonFinite.nanCount;
                else
                    ++r.nonFinite.infCount;
                if (!r.nonFinite.found) {
                    r.nonFinite.found = true;
                    r.nonFinite.row = Index(i);
                    r.nonFinite.col = j;
                    r.nonFinite.value = x;
                }
            }
        }
    }
}

/// Stage 2 over cached scores: `takeScores` moves the cached double scores into the result
/// instead of copying them (the cache is dropped afterwards).
template<typename T>
void rowPassFromScores(Scores &cache, Index nQ, Index nK, const AttentionMask &mask, double scale,
                       EngineResult &r, EngineBufferPool *pool, bool takeScores,
                       const CancelToken &cancel, const std::vector<double> &alibiSlopes = {})
{
    const std::size_t hs = cache.scoresD.size();
    RowPassInput<T> in;
    in.alibiSlopes = alibiSlopes;
    r.alibiSlopes = alibiSlopes;
    in.nQ = nQ;
    in.nK = nK;
    in.scale = T(scale);
    in.mask = &mask;
    in.scores.resize(hs);
    r.scale = scale;
    if (takeScores) {
        r.scores.resize(hs);
        for (std::size_t u = 0; u < hs; ++u)
            r.scores[u] = std::move(cache.scoresD[u]);
    } else {
        in.copyScores = &cache.scoresD;
    }
    for (std::size_t u = 0; u < hs; ++u) {
        if constexpr (std::is_same_v<T, double>)
            in.scores[u] = takeScores ? r.scores[u].data() : cache.scoresD[u].data();
        else
            in.scores[u] = cache.scoresF[u].data();
    }
    rowPass<T>(in, r, pool, cancel);
    // The position scheme's own step, for display.
    r.unrotatedScores.clear();
    if (takeScores)
        r.unrotatedScores = std::move(cache.unrotatedD);
    else
        r.unrotatedScores = cache.unrotatedD;
    r.positionBias.clear();
    r.positionBiasCausal = mask.hasCausal();
    for (const double m : alibiSlopes)
        r.positionBias.push_back(alibiBias(nQ, nK, m, mask.hasCausal()));
}

/// A learned sink b in every head (core/attention/variants.h) applied to the row pass's result:
/// the weights recomputed in float64 from the scaled scores with exp(b) in the denominator, the
/// sink mass kept, the metrics of each row over the keys and the sink, the mean over heads.
void applyLearnedSink(double sinkLogit, EngineResult &r)
{
    const std::size_t hs = r.weights.size();
    r.learnedSinkMass.clear();
    r.sinkLogits.assign(hs, sinkLogit);
    r.weightsMean.setZero();
    r.worstRowSumError = 0;
    for (std::size_t u = 0; u < hs; ++u) {
        r.learnedSinkMass.push_back(
            sinkSoftmaxRows<double>(r.scaledScores[u], sinkLogit, r.weights[u]));
        r.metrics[u]
            = learnedSinkRowMetrics(r.weights[u], r.learnedSinkMass.back(), r.fullyMasked[u]);
        r.worstRowSumError = std::max(r.worstRowSumError, summarize(r.metrics[u]).worstRowSumError);
        r.weightsMean += r.weights[u];
    }
    r.weightsMean /= double(hs);
}

/// Differential attention (Ye et al. 2025, Eq. 1): the row pass's weights are A₁, `second`'s A₂;
/// the weights become A₁ − λA₂ (signed), A₁ and A₂ are kept, the metrics stay A₁'s.
void applyDifferential(const std::vector<double> &lambda, EngineResult &r, EngineResult &&second)
{
    const std::size_t hs = r.weights.size();
    r.firstWeights = r.weights;
    r.secondWeights = std::move(second.weights);
    r.lambda = lambda;
    r.signedWeights = true;
    r.weightsMean.setZero();
    for (std::size_t u = 0; u < hs; ++u) {
        r.weights[u] = r.firstWeights[u] - lambda[u] * r.secondWeights[u];
        r.weightsMean += r.weights[u];
    }
    r.weightsMean /= double(hs);
}

/// The head-wise output gate (Qiu et al. 2025): head u's output row i is σ(g_iu + b) Σ_j w_ij v_j,
/// so its weights become σ(g_iu + b)·w_ij; `gateLogits` n_q × h without the bias b. The gate
/// values are kept, the metrics stay those of the rows before the gate.
void applyGate(const MatrixD &gateLogits, double bias, EngineResult &r)
{
    const std::size_t hs = r.weights.size();
    r.gate.clear();
    r.weightsMean.setZero();
    for (std::size_t u = 0; u < hs; ++u) {
        const VectorD logits = gateLogits.col(Index(u)).array() + bias;
        VectorD gate = (1.0 / (1.0 + (-logits.array()).exp())).matrix();
        r.weights[u] = gate.asDiagonal() * r.weights[u];
        r.weightsMean += r.weights[u];
        r.gate.push_back(std::move(gate));
    }
    r.weightsMean /= double(hs);
}

/// Stage 1 of multi-head latent attention: every head's raw scores from the latent and the
/// decoupled RoPE key (mlaScores, decompressed or absorbed), stored as computeScores stores
/// its own.
template<typename T>
void latentScores(const ConstMatrixRef<T> &x, const MlaWeights<T> &weights, bool absorbed,
                  Scores &out)
{
    std::vector<Matrix<T>> scores = mlaScores<T>(x, weights, absorbed);
    const std::size_t hs = scores.size();
    out.unrotatedD.clear();
    if constexpr (std::is_same_v<T, double>) {
        out.scoresD = std::move(scores);
    } else {
        out.scoresD.assign(hs, MatrixD());
        for (std::size_t u = 0; u < hs; ++u)
            out.scoresD[u] = scores[u].template cast<double>();
        out.scoresF = std::move(scores);
    }
    out.bytes = std::size_t(x.rows()) * std::size_t(x.rows()) * hs
        * (sizeof(double) + (std::is_same_v<T, double> ? 0 : sizeof(T)));
}

/// Stage 1 on the seeded inputs `in` through `layer` (the session's, or differential
/// attention's second): the queries from X, the keys from E (or X), with p's grouping and RoPE.
template<typename T>
void seededScores(const EngineParameters &p, const SessionInputs<T> &in,
                  const MultiheadAttention<T> &layer, Scores &out, const CancelToken &cancel)
{
    const Matrix<T> query = in.query.template cast<T>();
    if (p.latent && in.latent) {
        latentScores<T>(query, *in.latent, p.latentAbsorbed, out);
        return;
    }
    const Matrix<T> encoder
        = in.encoder.size() > 0 ? Matrix<T>(in.encoder.template cast<T>()) : Matrix<T>();
    ScoreOptions extra;
    extra.kvHeads = p.kvHeads;
    extra.rope = p.rope;
    extra.ropeConvention = p.ropeConvention;
    extra.ropeBase = p.ropeBase;
    computeScores<T>(layer, query, encoder.size() > 0 ? encoder : query, out, cancel, extra);
}

template<typename T>
void computeSeeded(const EngineParameters &p, Scores &data, bool fresh, bool keep, EngineResult &r,
                   EngineBufferPool *pool, const CancelToken &cancel)
{
    // The seeded inputs, drawn once: for new scores, and for differential attention's second
    // layer (drawn after them).
    std::optional<SessionInputs<T>> in;
    if (fresh || p.differential) {
        in = sessionInputs<T>(p);
        cancel.throwIfCancelled();
    }
    if (fresh) {
        seededScores<T>(p, *in, in->layer, data, cancel);
        data.gateLogits = p.outputGate ? MatrixD(in->query * in->gateWeights) : MatrixD();
        data.bytes += std::size_t(data.gateLogits.size()) * sizeof(double);
        data.key = p;
    }
    AttentionOptions options;
    options.scaleExponent = p.scaleExponent;
    options.temperature = p.temperature;
    const AttentionMask mask = p.attentionMask();
    const double scale = effectiveScale(p.scoreDim(), options);
    const std::vector<double> slopes = p.alibi ? alibiSlopes(p.heads) : std::vector<double>();
    rowPassFromScores<T>(data, p.queryCount(), p.keyCount(), mask, scale, r, pool, !keep, cancel,
                         slopes);
    r.learnedSinkMass.clear();
    r.sinkLogits.clear();
    r.firstWeights.clear();
    r.secondWeights.clear();
    r.lambda.clear();
    r.signedWeights = false;
    if (p.learnedSink)
        applyLearnedSink(p.sinkLogit, r);
    if (p.differential) {
        // A₂ from the second layer's queries and keys of the same inputs (sessioninputs.h),
        // with the same positions, grouping, scale and mask; not cached.
        Scores second;
        seededScores<T>(p, *in, *in->secondLayer, second, cancel);
        EngineResult r2;
        secondSoftmax("the second layer's queries and keys", [&] {
            rowPassFromScores<T>(second, p.queryCount(), p.keyCount(), mask, scale, r2, nullptr,
                                 true, cancel, slopes);
        });
        applyDifferential(p.lambdaPerHead(), r, std::move(r2));
    }
    r.gate.clear();
    if (p.outputGate)
        applyGate(data.gateLogits, p.gateBias, r);
    r.meanRowSum.clear();
    if (p.learnedSink || p.differential || p.outputGate)
        r.meanRowSum = meanRowSums(r.weights, r.fullyMasked);
    // With attention sinks under a sliding window: each head's mean weight mass on them over the
    // rows whose window has moved past them (i >= w + s), as E15 measures it.
    r.sinkMass.clear();
    if (p.window > 0 && p.sinks > 0) {
        const Index firstFar = std::min<Index>(Index(p.window) + p.sinks, p.queryCount());
        const Index farRows = p.queryCount() - firstFar;
        for (const MatrixD &w : r.weights)
            r.sinkMass.push_back(farRows > 0
                                     ? sinkWeightMass<double>(w, p.sinks).tail(farRows).mean()
                                     : std::numeric_limits<double>::quiet_NaN());
    }
}

} // namespace

// ---- fusedMultihead ----

template<typename T>
void fusedMultihead(const MultiheadAttention<T> &layer, const ConstMatrixRef<T> &query,
                    const ConstMatrixRef<T> &key, const AttentionMask &mask,
                    const AttentionOptions &options, EngineResult &out, const CancelToken &cancel)
{
    mask.checkShape(query.rows(), key.rows());
    const double scale = effectiveScale(layer.headDim(), options);
    Scores data;
    computeScores<T>(layer, query, key, data, cancel);
    rowPassFromScores<T>(data, query.rows(), key.rows(), mask, scale, out, nullptr, true, cancel);
}

template void fusedMultihead<float>(const MultiheadAttention<float> &,
                                    const Eigen::Ref<const MatrixF> &,
                                    const Eigen::Ref<const MatrixF> &, const AttentionMask &,
                                    const AttentionOptions &, EngineResult &, const CancelToken &);
template void fusedMultihead<double>(const MultiheadAttention<double> &,
                                     const Eigen::Ref<const MatrixD> &,
                                     const Eigen::Ref<const MatrixD> &, const AttentionMask &,
                                     const AttentionOptions &, EngineResult &, const CancelToken &);

// ---- the fused kernel (core/kernels/kernels.h) ----

template<typename T>
Matrix<T> attentionFused(const ConstMatrixRef<T> &query, const ConstMatrixRef<T> &key,
                         const ConstMatrixRef<T> &value, T scale, const AttentionMask &mask,
                         Matrix<T> *weights)
{
    const Index nQ = query.rows(), nK = key.rows();
    detail::checkAttentionInputs<T>(query, key, value, mask, "attentionFused");
    const ScopedKernelThreads team(kernelThreadsFor(nQ, nK, query.cols(), value.cols()));
    Matrix<T> s(nQ, nK); // scores: n_q × n_k
    s.noalias() = query * key.transpose();
    RowPassInput<T> in;
    in.scores = {s.data()};
    in.nQ = nQ;
    in.nK = nK;
    in.scale = scale;
    in.mask = &mask;
    EngineResult r; // r.scores stays empty: the raw scores are in s
    rowPass<T>(in, r, nullptr, {});
    Matrix<T> w;
    if constexpr (std::is_same_v<T, double>)
        w = std::move(r.weights[0]);
    else
        w = r.weights[0].template cast<T>(); // exact: the weights were computed in T
    Matrix<T> out(nQ, value.cols()); // n_q × d_v
    out.noalias() = w * value;
    if (weights)
        *weights = std::move(w);
    return out;
}

template MatrixF attentionFused<float>(const Eigen::Ref<const MatrixF> &,
                                       const Eigen::Ref<const MatrixF> &,
                                       const Eigen::Ref<const MatrixF> &, float,
                                       const AttentionMask &, MatrixF *);
template MatrixD attentionFused<double>(const Eigen::Ref<const MatrixD> &,
                                        const Eigen::Ref<const MatrixD> &,
                                        const Eigen::Ref<const MatrixD> &, double,
                                        const AttentionMask &, MatrixD *);

// ---- SessionEngine ----

SessionEngine::SessionEngine()
    : m_scores(std::make_unique<Scores>())
    , m_pool(std::make_shared<EngineBufferPool>())
{ }

SessionEngine::~SessionEngine() = default;

bool SessionEngine::covers(const EngineParameters &p) const
{
    return m_scores->bytes > 0 && sameScores(m_scores->key, p);
}

std::size_t SessionEngine::bytes() const
{
    return m_scores->bytes;
}

void SessionEngine::clear()
{
    *m_scores = Scores {};
}

void SessionEngine::compute(const EngineParameters &p, EngineResult &out, const CancelToken &cancel)
{
    p.check();
    const bool fresh = !covers(p);
    if (fresh)
        clear();
    try {
        // Keep the scores for the next computation only when they are small enough (known
        // after stage 1; stage 2 then moves rather than copies them).
        const std::size_t expected = std::size_t(p.queryCount()) * std::size_t(p.keyCount())
            * std::size_t(p.heads)
            * (sizeof(double) + (p.dtype == DType::Float32 ? sizeof(float) : 0));
        const bool keep = expected <= m_maxBytes;
        if (p.dtype == DType::Float32)
            computeSeeded<float>(p, *m_scores, fresh, keep, out, m_pool.get(), cancel);
        else
            computeSeeded<double>(p, *m_scores, fresh, keep, out, m_pool.get(), cancel);
        if (!keep)
            clear();
    } catch (...) {
        clear(); // it may hold a partial stage 1, or scores moved into the lost result
        throw;
    }
}

EngineResult computeEngine(const EngineParameters &p, const CancelToken &cancel)
{
    p.check();
    Scores data;
    EngineResult r;
    if (p.dtype == DType::Float32)
        computeSeeded<float>(p, data, true, false, r, nullptr, cancel);
    else
        computeSeeded<double>(p, data, true, false, r, nullptr, cancel);
    return r;
}

} // namespace attn
