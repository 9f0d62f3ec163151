#include "sessioncompute.h"

#include "tensorsource.h"

#include "core/multihead.h"
#include "core/positional.h"
#include "core/random.h"

#include <QHash>

#include "core/softmax.h"

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cmath>
#include <exception>
#include <limits>
#include <mutex>
#include <string>
#include <type_traits>

#include <unistd.h>

#ifdef _OPENMP
#include <omp.h>
#endif

namespace attn {

// The cached part of a computation: per-head raw scores (n_q × n_k, row-major) and what they
// depend on. `scores` holds them in the computation's type (float32 runs keep a float copy for
// the arithmetic and a double copy for display; float64 runs need only the latter).
struct SessionComputeCache::Data
{
    SessionParameters key; ///< only the fields compared by sameScores matter
    std::vector<MatrixF> scoresF; ///< h heads (float32 runs)
    std::vector<MatrixD> scoresD; ///< h heads, as shown
    std::size_t bytes = 0;
};

// n_q × n_k double matrices of dropped results, for the next computation (see share()).
struct SessionComputeCache::BufferPool
{
    static constexpr std::size_t maxBytes = std::size_t(512) << 20;
    std::mutex mutex;
    std::vector<MatrixD> spare;
    Index rows = 0, cols = 0; ///< shape of the newest shared result: only these are kept
    std::size_t maxCount = 0; ///< matrices in one result

    /// A rows × cols matrix with unspecified contents (a spare one when there is one).
    MatrixD take(Index r, Index c)
    {
        {
            std::lock_guard<std::mutex> lock(mutex);
            if (r == rows && c == cols && !spare.empty()) {
                MatrixD m = std::move(spare.back());
                spare.pop_back();
                return m;
            }
        }
        return MatrixD(r, c);
    }
    void give(MatrixD &&m)
    {
        std::lock_guard<std::mutex> lock(mutex);
        const std::size_t bytes = std::size_t(m.size()) * sizeof(double);
        if (m.rows() == rows && m.cols() == cols && spare.size() < maxCount
            && (spare.size() + 1) * bytes <= maxBytes)
            spare.push_back(std::move(m));
    }
};

namespace {

struct CancelledError
{
};

bool sameScores(const SessionParameters &a, const SessionParameters &b)
{
    return a.seed == b.seed && a.n == b.n && a.keyCount() == b.keyCount() && a.dModel == b.dModel
        && a.heads == b.heads && a.positional == b.positional
        && (a.kind == AttentionKind::EncoderDecoder) == (b.kind == AttentionKind::EncoderDecoder)
        && a.dtype == b.dtype && a.tokens == b.tokens && a.rope == b.rope
        && (!a.rope || (a.ropeConvention == b.ropeConvention && a.ropeBase == b.ropeBase))
        && a.keyValueHeads() == b.keyValueHeads();
}

/// Threads for the per-head (stage 1) and per-row-block (stage 2) loops of `tasks` tasks: this
/// thread alone below 2^20 cells in all (n = 256 with h = 8 takes about 3 ms of CPU: a second
/// thread saves little, and on a busy machine its spin waits at the barrier cost more than it
/// saves), else up to omp_get_max_threads() (the session's worker lowers that for small
/// problems).
int headThreads(Index cells, int tasks)
{
#ifdef _OPENMP
    if (cells < (Index(1) << 20))
        return 1;
    return std::max(1, std::min(tasks, omp_get_max_threads()));
#else
    Q_UNUSED(cells);
    Q_UNUSED(tasks);
    return 1;
#endif
}

/// Runs body(firstRow, rowCount) over [0, rows) in blocks of `block` rows on `threads` OpenMP
/// threads (dynamic schedule: causal rows differ in cost). A cancel, polled before each block,
/// and exceptions are carried out of the parallel region and rethrown here.
template<typename Body>
void forEachRowBlock(Index rows, Index block, int threads, const std::function<bool()> &cancelled,
                     Body body)
{
    std::exception_ptr error;
    std::atomic<bool> stop {false};
#pragma omp parallel for schedule(dynamic, 1) num_threads(threads) if (threads > 1)
    for (Index first = 0; first < rows; first += block) {
        if (stop.load())
            continue;
        try {
            if (cancelled && cancelled())
                throw CancelledError {};
            body(first, std::min(block, rows - first));
        } catch (...) {
#pragma omp critical(attn_session_error)
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

/// Runs body(head) for every head, on `threads` OpenMP threads. Exceptions (and a cancel,
/// polled before each head) are carried out of the parallel region and rethrown here.
template<typename Body>
void forEachHead(int heads, int threads, const std::function<bool()> &cancelled, Body body)
{
    forEachRowBlock(Index(heads), 1, threads, cancelled,
                    [&body](Index head, Index) { body(int(head)); });
}

template<typename T> std::vector<Matrix<T>> &typedScores(SessionComputeCache::Data &d);
template<> std::vector<MatrixF> &typedScores<float>(SessionComputeCache::Data &d)
{
    return d.scoresF;
}
template<> std::vector<MatrixD> &typedScores<double>(SessionComputeCache::Data &d)
{
    return d.scoresD;
}

/// Stage 1: inputs, projections and per-head raw scores, exactly as MultiheadAttention<T>::forward
/// and scaledDotProductAttention compute them (q = X W_Qᵀ + b_Q, S_i = q_i k_iᵀ).
template<typename T>
void computeScores(const SessionParameters &p, SessionComputeCache::Data &out,
                   const std::function<bool()> &cancelled)
{
    auto checkpoint = [&] {
        if (cancelled && cancelled())
            throw CancelledError {};
    };
    const Index nQ = p.queryCount();
    const Index nK = p.keyCount();
    const Index d = p.dModel;
    const int h = p.heads;
    const Index dK = p.dK();

    // Draw order: layer parameters, decoder/query-side input X, encoder input E (cross only).
    Generator rng(p.seed);
    MultiheadAttention<T> layer(d, h);
    layer.initXavier(rng);
    MatrixD x = rng.standardNormal(nQ, d); // X: n_q × d_model
    MatrixD e; // E: n_k × d_model (encoder–decoder attention only)
    if (p.kind == AttentionKind::EncoderDecoder)
        e = rng.standardNormal(nK, d);
    // Typed tokens replace the drawn rows: query i by tokens[i] (i < n), for encoder–decoder
    // attention encoder row j by tokens[n + j]; every token counts, the empty one too.
    const Index tokenCount = p.tokens.size();
    for (Index i = 0; i < std::min(nQ, tokenCount); ++i)
        x.row(i) = tokenEmbedding(p.tokens.at(i), p.seed, int(d)).transpose();
    for (Index j = 0; e.size() > 0 && j < nK && nQ + j < tokenCount; ++j)
        e.row(j) = tokenEmbedding(p.tokens.at(nQ + j), p.seed, int(d)).transpose();
    if (p.positional) {
        x += sinusoidalEncoding(nQ, d);
        if (e.size() > 0)
            e += sinusoidalEncoding(nK, d);
    }
    checkpoint();

    // Projections: q = X W_Qᵀ + b_Q (n_q × d_model), k = E W_Kᵀ + b_K (n_k × d_model), as in
    // MultiheadAttention::forward. The values and the output projection are not shown.
    const Matrix<T> query = x.cast<T>();
    const Matrix<T> keyInput = e.size() > 0 ? Matrix<T>(e.cast<T>()) : Matrix<T>();
    const Matrix<T> &key = e.size() > 0 ? keyInput : query;
    const Matrix<T> &w = layer.inProjWeight();
    const Vector<T> &b = layer.inProjBias();
    Matrix<T> q(nQ, d), k(nK, d);
    q.noalias() = query * w.topRows(d).transpose();
    k.noalias() = key * w.middleRows(d, d).transpose();
    q.rowwise() += b.segment(0, d).transpose();
    k.rowwise() += b.segment(d, d).transpose();
    // Grouped-query attention: g < h key heads, each the mean of its group's h/g heads (W_K and
    // b_K rows mean-pooled, GQA §2.1; the projection is linear, so pooling k is the same).
    const int g = p.keyValueHeads();
    if (g != h) {
        const int group = h / g;
        Matrix<T> pooled = Matrix<T>::Zero(nK, Index(g) * dK); // n_k × g·d_k
        for (int i = 0; i < h; ++i)
            pooled.middleCols(Index(i / group) * dK, dK) += k.middleCols(Index(i) * dK, dK);
        k = pooled / T(group);
    }
    // RoPE: every head's queries (positions 0…n_q−1) and keys (0…n_k−1) rotated.
    if (p.rope) {
        applyRopeHeads<T>(q, h, p.ropeConvention, p.ropeBase);
        applyRopeHeads<T>(k, g, p.ropeConvention, p.ropeBase);
    }
    checkpoint();

    std::vector<Matrix<T>> &scores = typedScores<T>(out);
    scores.assign(std::size_t(h), Matrix<T>());
    if constexpr (!std::is_same_v<T, double>)
        out.scoresD.assign(std::size_t(h), MatrixD());
    forEachHead(h, headThreads(nQ * nK * h, h), cancelled, [&](int head) {
        // scores: n_q × n_k = q_i k_iᵀ, head i = columns i·d_k … (i+1)·d_k − 1
        Matrix<T> &s = scores[std::size_t(head)];
        s.resize(nQ, nK);
        const Eigen::Ref<const Matrix<T>> qi = q.middleCols(head * dK, dK);
        // query head i reads key head ⌊i·g/h⌋ (torch.repeat_interleave's order)
        const Eigen::Ref<const Matrix<T>> ki = k.middleCols(Index(head * g / h) * dK, dK);
        s.noalias() = qi * ki.transpose();
        if constexpr (!std::is_same_v<T, double>)
            out.scoresD[std::size_t(head)] = s.template cast<double>();
    });
    out.key = p;
    out.bytes = std::size_t(nQ) * std::size_t(nK) * std::size_t(h)
        * (sizeof(double) + (std::is_same_v<T, double> ? 0 : sizeof(T)));
}

/// A rows × cols matrix with unspecified contents: a spare double one from the pool when there
/// is one (no fresh pages to fault in), else a new one.
template<typename T>
Matrix<T> takeBuffer(SessionComputeCache::BufferPool *pool, Index rows, Index cols)
{
    if constexpr (std::is_same_v<T, double>) {
        if (pool)
            return pool->take(rows, cols);
    }
    return Matrix<T>(rows, cols);
}

/// Stage 2: scale, mask, softmax, mean and metrics of every head from the raw scores, with
/// scaledDotProductAttention's arithmetic (S' = S · scale, masked cells −inf, row softmax).
/// `takeScores` moves the cached scores into the result instead of copying them.
///
/// One fused pass per row: for each head the row is scaled and masked (written to the scaled
/// scores and the weights at once), its softmax taken (softmaxRowInPlace, the code
/// softmaxRowsInPlace runs per row), its metrics computed (rowMetricValues, rowMetrics' numbers)
/// and checked for NaN/Inf, and added to the mean over heads, all while the row is in cache;
/// rows are split over threads. Every number is the one the per-head whole-matrix passes
/// (scores · scale, mask, copy, softmaxRowsInPlace, rowMetrics, findNonFinite, mean) gave, bit
/// for bit: the same operations on the same values in the same order.
template<typename T>
void computeTyped(const SessionParameters &p, SessionResult &r, SessionComputeCache::Data &cache,
                  SessionComputeCache::BufferPool *pool, bool takeScores,
                  const std::function<bool()> &cancelled)
{
    const Index nQ = p.queryCount();
    const Index nK = p.keyCount();
    const int h = p.heads;

    AttentionMask mask;
    if (p.window > 0)
        mask = AttentionMask::slidingWindow(nQ, nK, p.window, p.sinks);
    else if (p.causalMasked())
        mask = AttentionMask::causal(nQ, nK, CausalAlignment::TopLeft);
    if (p.mask == MaskChoice::KeyPadding)
        mask = mask | AttentionMask::keyPaddingLast(nQ, nK, p.paddingCount);
    AttentionOptions options;
    options.scaleExponent = p.scaleExponent;
    options.temperature = p.temperature;
    r.scale = effectiveScale(p.dK(), options);
    const T scale = T(r.scale);
    const T fill = -std::numeric_limits<T>::infinity();
    r.maskState = mask.stateMatrix(nQ, nK);
    const bool masked = !mask.empty();
    // ALiBi: head u adds −m_u·(i − j) (−m_u·|i − j| without a causal mask), as alibiBias.
    const std::vector<double> slopes = p.alibi ? alibiSlopes(h) : std::vector<double>();
    const bool causalBias = mask.hasCausal();
    r.alibiSlopes = slopes;

    // The result's matrices (n_q × n_k, double) and per-row vectors, filled row by row below.
    const auto hs = std::size_t(h);
    const auto rows = std::size_t(nQ);
    r.weights.resize(hs);
    r.scores.resize(hs);
    r.scaledScores.resize(hs);
    r.fullyMasked.resize(hs);
    r.metrics.resize(hs);
    std::vector<const T *> source(hs); // raw scores of head u, n_q × n_k, row-major
    for (std::size_t u = 0; u < hs; ++u) {
        r.scaledScores[u] = takeBuffer<double>(pool, nQ, nK);
        r.weights[u] = takeBuffer<double>(pool, nQ, nK);
        if (takeScores) {
            r.scores[u] = std::move(cache.scoresD[u]);
        } else {
            r.scores[u] = takeBuffer<double>(pool, nQ, nK); // rows copied below
        }
        if constexpr (std::is_same_v<T, double>)
            source[u] = takeScores ? r.scores[u].data() : cache.scoresD[u].data();
        else
            source[u] = cache.scoresF[u].data();
        r.fullyMasked[u].assign(rows, 0);
        RowMetrics &m = r.metrics[u];
        m.maxWeight.setZero(nQ);
        m.entropy.setZero(nQ);
        m.effectiveTerms.setZero(nQ);
        m.jacobianNorm.setZero(nQ);
        m.rowSumError.setZero(nQ);
        m.fullyMasked.assign(rows, 0);
    }
    r.weightsMean = takeBuffer<double>(pool, nQ, nK);
    // Per head and row: 1 when the row's softmax input held NaN/+inf, 2 when its weights may
    // hold NaN/Inf (rescanned below, in findNonFinite's order).
    std::vector<std::uint8_t> rowFlags(hs * rows, 0);
    constexpr std::uint8_t badInput = 1, nonFiniteWeights = 2;

    using Row = Eigen::Array<T, 1, Eigen::Dynamic>; // one row of n_k entries
    using RowMap = Eigen::Map<Row>;
    using ConstRowMap = Eigen::Map<const Row>;
    const Index block = 16; // rows per task
    const Index blocks = (nQ + block - 1) / block;
    const int threads = headThreads(nQ * nK * h, int(std::min<Index>(blocks, 1 << 20)));
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
    forEachRowBlock(nQ, block, threads, cancelled, [&](Index first, Index count) {
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
                if (!takeScores)
                    r.scores[u].row(i) = cache.scoresD[u].row(i);
                T *scaled = nullptr, *w = nullptr;
                if constexpr (std::is_same_v<T, double>) {
                    scaled = r.scaledScores[u].row(i).data(); // float64 works in the result
                    w = r.weights[u].row(i).data();
                } else {
                    scaled = scaledT.data();
                    w = weightT.data();
                }
                // scaled = scores · scale, masked cells = −inf; the weights start as a copy
                RowMap(scaled, nK) = ConstRowMap(source[u] + i * nK, nK) * scale;
                if (!slopes.empty()) {
                    const double m = slopes[u];
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
        Matrix<T> w = Eigen::Map<const Matrix<T>>(source[u], nQ, nK) * scale;
        if (!slopes.empty())
            w += alibiBias(nQ, nK, slopes[u], causalBias).cast<T>();
        if (masked) {
            for (Index c = 0, cells = w.size(); c < cells; ++c)
                if (r.maskState.data()[c])
                    w.data()[c] = fill;
        }
        try {
            softmaxRowsInPlace(w);
        } catch (const NonFiniteInput &e) {
            throw NonFiniteInput(std::string("scaledDotProductAttention: scaled scores "
                                             "overflowed: ")
                                 + e.what());
        }
        throw NonFiniteInput("scaledDotProductAttention: scaled scores overflowed");
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

template<typename T>
void computeStaged(const SessionParameters &p, SessionResult &r, SessionComputeCache *cache,
                   const std::function<bool()> &cancelled)
{
    SessionComputeCache::Data local;
    SessionComputeCache::Data *data = cache ? cache->data() : &local;
    if (!cache || !cache->covers(p)) {
        if (cache)
            cache->clear();
        computeScores<T>(p, *data, cancelled);
    }
    // Keep the scores for the next computation only when they are small enough.
    const bool keep = cache && data->bytes <= cache->maxBytes();
    computeTyped<T>(p, r, *data, cache ? cache->pool() : nullptr, !keep, cancelled);
    if (cache && !keep)
        cache->clear();
}

} // namespace

SessionComputeCache::SessionComputeCache()
    : m_data(std::make_unique<Data>())
    , m_pool(std::make_shared<BufferPool>())
{ }

std::shared_ptr<const SessionResult> SessionComputeCache::share(SessionResult &&result)
{
    {
        std::lock_guard<std::mutex> lock(m_pool->mutex);
        const Index rows = result.weightsMean.rows(), cols = result.weightsMean.cols();
        if (rows != m_pool->rows || cols != m_pool->cols) {
            m_pool->spare.clear();
            m_pool->rows = rows;
            m_pool->cols = cols;
        }
        m_pool->maxCount = 3 * result.weights.size() + 1;
    }
    std::shared_ptr<BufferPool> pool = m_pool;
    return std::shared_ptr<const SessionResult>(
        new SessionResult(std::move(result)), [pool](const SessionResult *shared) {
            auto *r = const_cast<SessionResult *>(shared); // ours: the last owner is done
            for (auto *list : {&r->weights, &r->scores, &r->scaledScores})
                for (MatrixD &m : *list)
                    pool->give(std::move(m));
            pool->give(std::move(r->weightsMean));
            delete r;
        });
}

SessionComputeCache::~SessionComputeCache() = default;

bool SessionComputeCache::covers(const SessionParameters &params) const
{
    return m_data->bytes > 0 && sameScores(m_data->key, params);
}

std::size_t SessionComputeCache::bytes() const
{
    return m_data->bytes;
}

void SessionComputeCache::clear()
{
    *m_data = Data {};
}

quint64 tokenHash(const QString &token)
{
    quint64 hash = 14695981039346656037ULL;
    for (char byte : token.toUtf8()) {
        hash ^= quint64(static_cast<unsigned char>(byte));
        hash *= 1099511628211ULL;
    }
    return hash;
}

VectorD tokenEmbedding(const QString &token, quint64 seed, int dModel)
{
    if (dModel < 0)
        throw InvalidArgument("tokenEmbedding: d_model must be >= 0, got "
                              + std::to_string(dModel));
    const quint64 hash = tokenHash(token);
    // default_rng(seed + 2**64 * hash): the integer's little-endian 32-bit words.
    Generator rng = Generator::fromWords({std::uint32_t(seed), std::uint32_t(seed >> 32),
                                          std::uint32_t(hash), std::uint32_t(hash >> 32)});
    VectorD v(dModel);
    rng.fillStandardNormal(v.data(), std::size_t(dModel));
    return v;
}

namespace {
std::atomic<std::size_t> g_memoryBudgetOverride {0};
} // namespace

std::size_t sessionResultBytes(const SessionParameters &params)
{
    const std::size_t cells = std::size_t(std::max(params.queryCount(), 0))
        * std::size_t(std::max(params.keyCount(), 0));
    return ((3 * std::size_t(std::max(params.heads, 0)) + 1) * sizeof(double) + 1) * cells;
}

std::size_t sessionMemoryBudget()
{
    if (const std::size_t override = g_memoryBudgetOverride.load())
        return override;
    const long pages = sysconf(_SC_PHYS_PAGES);
    const long pageSize = sysconf(_SC_PAGE_SIZE);
    const std::size_t floor = std::size_t(256) << 20;
    if (pages <= 0 || pageSize <= 0)
        return std::size_t(4) << 30; // unknown: assume a 16 GiB machine
    return std::max(floor, std::size_t(pages) * std::size_t(pageSize) / 4);
}

void setSessionMemoryBudget(std::size_t bytes)
{
    g_memoryBudgetOverride.store(bytes);
}

SessionResult computeSession(const SessionParameters &params)
{
    return computeSession(params, {});
}

SessionResult computeSession(const SessionParameters &params,
                             const std::function<bool()> &cancelled)
{
    return computeSession(params, cancelled, nullptr);
}

SessionResult computeSession(const SessionParameters &params,
                             const std::function<bool()> &cancelled, SessionComputeCache *cache)
{
    if (params.tensors) // File → Open tensors…: the user's tensors instead of seeded inputs
        return computeTensorSession(params, cancelled);
    SessionResult r;
    r.params = params;
    const auto start = std::chrono::steady_clock::now();
    r.error = params.validate();
    if (!r.ok())
        return r;
    if (const std::size_t need = sessionResultBytes(params), budget = sessionMemoryBudget();
        need > budget) {
        const double gib = double(std::size_t(1) << 30);
        r.error = QStringLiteral("n_q = %1, n_k = %2, h = %3 needs %4 GiB for the weights and "
                                 "scores of every head, over this machine's budget of %5 GiB "
                                 "(a quarter of its memory): lower n or h")
                      .arg(params.queryCount())
                      .arg(params.keyCount())
                      .arg(params.heads)
                      .arg(double(need) / gib, 0, 'f', 1)
                      .arg(double(budget) / gib, 0, 'f', 1);
        return r;
    }
    try {
        if (params.dtype == DType::Float32)
            computeStaged<float>(params, r, cache, cancelled);
        else
            computeStaged<double>(params, r, cache, cancelled);
    } catch (const CancelledError &) {
        if (cache)
            cache->clear(); // it may hold a partial stage 1
        r = SessionResult {};
        r.params = params;
        r.error = QStringLiteral("cancelled");
    } catch (const std::bad_alloc &) {
        r = SessionResult {};
        r.params = params;
        r.error = QStringLiteral("out of memory for n_q=%1, n_k=%2, h=%3")
                      .arg(params.queryCount())
                      .arg(params.keyCount())
                      .arg(params.heads);
    } catch (const std::exception &e) {
        r = SessionResult {};
        r.params = params;
        r.error = QString::fromStdString(e.what());
    } catch (...) {
        r = SessionResult {};
        r.params = params;
        r.error = QStringLiteral("unknown error in the attention computation");
    }
    r.computeSeconds
        = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    return r;
}

} // namespace attn
