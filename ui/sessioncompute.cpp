#include "sessioncompute.h"

#include "tensorsource.h"

#include <multihead.h>
#include <positional.h>
#include <random.h>

#include <QHash>

#include <softmax.h>

#include <algorithm>
#include <atomic>
#include <chrono>
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
        && a.dtype == b.dtype && a.tokens == b.tokens;
}

/// Threads for the per-head loops: this thread alone below 2^20 cells in all (n = 256 with
/// h = 8 takes about 3 ms of CPU: a second thread saves little, and on a busy machine its spin
/// waits at the barrier cost more than it saves), else up to omp_get_max_threads() (the
/// session's worker lowers that for small problems).
int headThreads(Index cells, int heads)
{
#ifdef _OPENMP
    if (cells < (Index(1) << 20))
        return 1;
    return std::max(1, std::min(heads, omp_get_max_threads()));
#else
    Q_UNUSED(cells);
    Q_UNUSED(heads);
    return 1;
#endif
}

/// Runs body(head) for every head, on `threads` OpenMP threads. Exceptions (and a cancel,
/// polled before each head) are carried out of the parallel region and rethrown here.
template<typename Body>
void forEachHead(int heads, int threads, const std::function<bool()> &cancelled, Body body)
{
    std::exception_ptr error;
    std::atomic<bool> stop {false};
#pragma omp parallel for schedule(dynamic, 1) num_threads(threads) if (threads > 1)
    for (int head = 0; head < heads; ++head) {
        if (stop.load())
            continue;
        try {
            if (cancelled && cancelled())
                throw CancelledError {};
            body(head);
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
        const Eigen::Ref<const Matrix<T>> ki = k.middleCols(head * dK, dK);
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
template<typename T>
void computeTyped(const SessionParameters &p, SessionResult &r, SessionComputeCache::Data &cache,
                  SessionComputeCache::BufferPool *pool, bool takeScores,
                  const std::function<bool()> &cancelled)
{
    const Index nQ = p.queryCount();
    const Index nK = p.keyCount();
    const int h = p.heads;

    AttentionMask mask;
    if (p.causalMasked())
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

    const auto hs = std::size_t(h);
    r.weights.resize(hs);
    r.scores.resize(hs);
    r.scaledScores.resize(hs);
    r.fullyMasked.resize(hs);
    r.metrics.resize(hs);
    std::vector<Matrix<T>> weights(std::is_same_v<T, double> ? 0 : hs); // float32 runs only
    std::vector<NonFiniteReport> nonFinite(hs);
    const std::vector<Matrix<T>> &scores = typedScores<T>(cache);
    const int threads = headThreads(nQ * nK * h, h);
    forEachHead(h, threads, cancelled, [&](int head) {
        const auto u = std::size_t(head);
        // scaled: n_q × n_k = scores · scale, masked cells = −inf
        Matrix<T> scaled = takeBuffer<T>(pool, nQ, nK);
        scaled.noalias() = scores[u] * scale;
        if (masked) {
            const std::uint8_t *state = r.maskState.data();
            T *cell = scaled.data();
            for (Index c = 0, cells = scaled.size(); c < cells; ++c)
                if (state[c])
                    cell[c] = fill;
        }
        Matrix<T> w = takeBuffer<T>(pool, nQ, nK);
        w = scaled;
        try {
            softmaxRowsInPlace(w, &r.fullyMasked[u]);
        } catch (const NonFiniteInput &e) {
            throw NonFiniteInput(std::string("scaledDotProductAttention: scaled scores "
                                             "overflowed: ")
                                 + e.what());
        }
        r.metrics[u] = rowMetrics(w, r.fullyMasked[u]);
        nonFinite[u] = findNonFinite(w);
        if (takeScores) {
            r.scores[u] = std::move(cache.scoresD[u]);
        } else {
            r.scores[u] = takeBuffer<double>(pool, nQ, nK);
            r.scores[u] = cache.scoresD[u];
        }
        if constexpr (std::is_same_v<T, double>) {
            r.scaledScores[u] = std::move(scaled);
            r.weights[u] = std::move(w);
        } else {
            r.scaledScores[u] = takeBuffer<double>(pool, nQ, nK);
            r.scaledScores[u] = scaled.template cast<double>();
            r.weights[u] = takeBuffer<double>(pool, nQ, nK);
            r.weights[u] = w.template cast<double>();
            weights[u] = std::move(w);
        }
    });

    // Mean over heads in T, summed in head order (as MultiheadAttention::forward), by row blocks.
    const std::vector<Matrix<T>> &typed = [&]() -> const std::vector<Matrix<T>> & {
        if constexpr (std::is_same_v<T, double>)
            return r.weights;
        else
            return weights;
    }();
    Matrix<T> mean = takeBuffer<T>(pool, nQ, nK);
    const Index block = 64;
#pragma omp parallel for schedule(static) num_threads(threads) if (threads > 1)
    for (Index row = 0; row < nQ; row += block) {
        const Index rows = std::min(block, nQ - row);
        auto m = mean.middleRows(row, rows);
        m.setZero();
        for (int head = 0; head < h; ++head)
            m += typed[std::size_t(head)].middleRows(row, rows);
        m /= T(h);
    }
    if constexpr (std::is_same_v<T, double>) {
        r.weightsMean = std::move(mean);
    } else {
        r.weightsMean = takeBuffer<double>(pool, nQ, nK);
        r.weightsMean = mean.template cast<double>();
    }

    for (std::size_t u = 0; u < hs; ++u) {
        r.worstRowSumError = std::max(r.worstRowSumError, summarize(r.metrics[u]).worstRowSumError);
        const NonFiniteReport &nf = nonFinite[u];
        if (nf.found) {
            if (!r.nonFinite.found) {
                r.nonFinite = nf;
            } else {
                r.nonFinite.nanCount += nf.nanCount;
                r.nonFinite.infCount += nf.infCount;
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
