#include "ui/session/tilescheduler.h"

#include "ui/session/handover.h"
#include "ui/session/ownerthread.h"
#include "ui/session/pooledsession.h"
#include "ui/session/tensorsource.h"

#include "core/base/threads.h"

#include <algorithm>
#include <atomic>
#include <deque>
#include <exception>
#include <mutex>
#include <new>
#include <thread>

namespace attn {

/// The engine of either dtype behind one interface (the worker's only view of it).
class TileScheduler::EngineBox
{
public:
    virtual ~EngineBox() = default;
    virtual std::vector<TileValues> render(const std::vector<Index> &heads,
                                           const TileWindow &window, const TileGrid &grid,
                                           TilePooling pooling, const CancelToken &cancel)
        = 0;
    virtual SessionResult renderResult(const std::vector<Index> &heads, const TileWindow &window,
                                       Index maxWidth, Index maxHeight, TilePooling pooling)
        = 0;
    virtual SessionResult materialize(const TileWindow &window) = 0;
    /// One query's pooled weights over window's keys in the engine's precision (as double).
    virtual void row(Index head, const TileWindow &window, Index colsPerPixel, TilePooling pooling,
                     LongRowStrip &strip)
        = 0;
    virtual TileCell cell(Index head, Index i, Index j) = 0;
    virtual double maxWeight(Index head) const = 0;
    virtual double scale() const = 0;
};

namespace {

template<typename T> class EngineBoxT final : public TileScheduler::EngineBox
{
public:
    explicit EngineBoxT(TileEngine<T> engine)
        : m_engine(std::move(engine))
    { }
    std::vector<TileValues> render(const std::vector<Index> &heads, const TileWindow &window,
                                   const TileGrid &grid, TilePooling pooling,
                                   const CancelToken &cancel) override
    {
        std::vector<PooledTile<T>> tiles
            = m_engine.render(heads, window, grid, pooling, nullptr, cancel);
        std::vector<TileValues> out(tiles.size());
        for (std::size_t k = 0; k < tiles.size(); ++k) {
            if constexpr (std::is_same_v<T, float>)
                out[k].values = std::move(tiles[k].values);
            else
                out[k].values = tiles[k].values.template cast<float>();
            out[k].maskState = std::move(tiles[k].maskState);
        }
        return out;
    }
    SessionResult renderResult(const std::vector<Index> &heads, const TileWindow &window,
                               Index maxWidth, Index maxHeight, TilePooling pooling) override
    {
        std::vector<PooledTile<T>> tiles
            = m_engine.render(heads, window, maxWidth, maxHeight, pooling);
        SessionResult r;
        pooledTilesResult(tiles, m_engine, r);
        r.scale = m_engine.scale();
        return r;
    }
    SessionResult materialize(const TileWindow &window) override
    {
        const Index h = m_engine.heads();
        std::vector<Index> which;
        for (Index k = 0; k < h; ++k)
            which.push_back(k);
        if (h > 1)
            which.push_back(kHeadMean);
        // One pixel per cell; the metrics over every key of each row.
        std::vector<RowMetrics> metrics;
        std::vector<PooledTile<T>> tiles = m_engine.render(
            which, window, tileGridWithCells(window, 1, 1), TilePooling::Max, &metrics);
        SessionResult r;
        pooledTilesResult(tiles, m_engine, r);
        metrics.resize(std::size_t(h));
        r.fullyMasked.clear();
        r.worstRowSumError = 0;
        for (Index k = 0; k < h; ++k) {
            const auto scores = m_engine.windowScores(k, window);
            r.scores.push_back(scores.raw.template cast<double>());
            r.scaledScores.push_back(scores.scaled.template cast<double>());
            r.fullyMasked.push_back(metrics[std::size_t(k)].fullyMasked);
            if (metrics[std::size_t(k)].rowSumError.size() > 0)
                r.worstRowSumError
                    = std::max(r.worstRowSumError, metrics[std::size_t(k)].rowSumError.maxCoeff());
        }
        r.metrics = std::move(metrics);
        r.scale = m_engine.scale();
        r.viewNote = QStringLiteral("queries %1–%2 × keys %3–%4 of the long map (n = %5): "
                                    "weights over every key, row metrics over whole rows")
                         .arg(window.rowBegin)
                         .arg(window.rowEnd - 1)
                         .arg(window.colBegin)
                         .arg(window.colEnd - 1)
                         .arg(m_engine.keys());
        return r;
    }
    void row(Index head, const TileWindow &window, Index colsPerPixel, TilePooling pooling,
             LongRowStrip &strip) override
    {
        const PooledTile<T> t = std::move(m_engine.render(
            {head}, window, tileGridWithCells(window, 1, colsPerPixel), pooling)[0]);
        strip.colsPerPixel = t.grid.colsPerPixel;
        strip.values.resize(std::size_t(t.values.cols()));
        strip.maskState.resize(std::size_t(t.values.cols()));
        for (Index x = 0; x < t.values.cols(); ++x) {
            strip.values[std::size_t(x)] = double(t.values(0, x));
            strip.maskState[std::size_t(x)] = t.maskState(0, x);
        }
    }
    TileCell cell(Index head, Index i, Index j) override { return m_engine.cell(head, i, j); }
    double maxWeight(Index head) const override { return m_engine.maxWeight(head); }
    double scale() const override { return m_engine.scale(); }

private:
    TileEngine<T> m_engine;
};

/// The engine of `params` (seeded inputs, projected as computeSession does) in its dtype.
std::unique_ptr<TileScheduler::EngineBox> makeEngineBox(const SessionParameters &params,
                                                        const std::function<bool()> &cancelled)
{
    if (params.dtype == DType::Float32)
        return std::make_unique<EngineBoxT<float>>(sessionTileEngine<float>(params, cancelled));
    return std::make_unique<EngineBoxT<double>>(sessionTileEngine<double>(params, cancelled));
}

/// Runs `compute` (a window's SessionResult, on the worker) and returns what hands its result,
/// or nullptr and the error (out of memory, the engine's exception), to `deliver` on the GUI
/// thread.
std::function<void()> windowDelivery(
    const std::function<void(std::shared_ptr<const SessionResult>, const QString &)> &deliver,
    const std::function<SessionResult()> &compute)
{
    try {
        std::shared_ptr<const SessionResult> shown = std::make_shared<SessionResult>(compute());
        return [deliver, shown] { deliver(shown, QString()); };
    } catch (const std::bad_alloc &) {
        return [deliver] { deliver(nullptr, TileScheduler::tr("out of memory")); };
    } catch (const std::exception &e) {
        const QString error = QString::fromStdString(e.what());
        return [deliver, error] { deliver(nullptr, error); };
    }
}

} // namespace

/// B of the A/B view (materializeVariantWindow): its parameters and engine, touched on the
/// worker only.
struct TileScheduler::VariantEngine
{
    SessionParameters params;
    std::unique_ptr<EngineBox> box;
};

struct TileScheduler::Shared
{
    OwnerThread thread; ///< the worker; its mutex() guards what follows

    struct StartJob
    {
        quint64 generation = 0;
        SessionParameters params;
        TilePooling pooling = TilePooling::Max;
        int fitLevel = 0;
        int tilePixels = 256;
    };
    std::optional<StartJob> startJob;
    std::atomic<bool> cancelStart {false};
    quint64 generation = 0; // the newest start()

    // The view's wish: tiles of one head and level, in order.
    Index wantHead = 0;
    int wantLevel = 0;
    std::deque<TileIndex> wanted;

    struct CellJob
    {
        Index head = 0, i = 0, j = 0;
        Index colBegin = 0, colEnd = 0, colsPerPixel = 1; // the row strip, when colEnd > colBegin
    };
    std::optional<CellJob> cell;

    // Work on the engine; each returns what to run on the GUI thread afterwards.
    std::deque<std::function<std::function<void()>(EngineBox &, TilePooling)>> engineJobs;

    TilePainter painter; // setPainter()'s
    TilePooling pooling
        = TilePooling::Max; // start()'s or setPainter()'s, for the engine of `generation`

    Stats stats;
};

class TileScheduler::Worker
{
public:
    Worker(TileScheduler *owner, std::shared_ptr<Shared> shared, int cacheTiles)
        : m_owner(owner)
        , m_shared(std::move(shared))
        , m_cacheTiles(cacheTiles)
        , m_fullViewThreads(kernelThreads() - 1)
    {
        m_shared->thread.start([this] { loop(); }); // once the members exist
    }
    ~Worker()
    {
        m_shared->thread.stop([this] { m_shared->cancelStart = true; });
    }

private:
    void loop();
    void runStart(const Shared::StartJob &job);
    void runTile(quint64 generation, Index head, int level, TileIndex tile,
                 const TilePainter &painter);
    void store(const LongTileKey &key, TileValues values);
    /// Posts `f` to the owner's thread (dropped when the owner is gone).
    template<typename F> void post(F f) { postTo(m_owner, std::move(f)); }

    TileScheduler *m_owner;
    std::shared_ptr<Shared> m_shared;
    int m_cacheTiles;
    Index m_fullViewThreads;
    // Worker thread only:
    std::unique_ptr<TileScheduler::EngineBox> m_engine;
    quint64 m_engineGeneration = 0;
    std::optional<TilePyramid> m_pyramid;
    TilePooling m_pooling = TilePooling::Max;
    QHash<LongTileKey, TileValues> m_values;
    QHash<LongTileKey, quint64> m_used;
    quint64 m_clock = 0;
};

void TileScheduler::Worker::loop()
{
    // Tiles and cells on this thread alone: a tile is a few milliseconds of work, and an OpenMP
    // team would take the core the GUI thread paints on (on two cores, a team of two made the
    // zoom and pan steps three times slower and GUI events wait up to 30 ms).
    const ScopedKernelThreads oneThread(1);
    for (;;) {
        std::unique_lock lock(m_shared->thread.mutex());
        const bool work = m_shared->thread.waitFor(lock, [this] {
            const Shared &s = *m_shared;
            return s.startJob
                || (m_engine && (s.cell || !s.engineJobs.empty() || !s.wanted.empty()));
        });
        if (!work)
            return;
        Shared &s = *m_shared;
        if (s.startJob) {
            const Shared::StartJob job = *s.startJob;
            s.startJob.reset();
            s.cancelStart = false;
            m_engine.reset();
            m_values.clear();
            m_used.clear();
            lock.unlock();
            runStart(job);
            continue;
        }
        const quint64 generation = m_engineGeneration;
        if (m_engine && s.generation == m_engineGeneration && s.pooling != m_pooling) {
            // Another pooling of the same engine: the cached values are of the old one.
            m_pooling = s.pooling;
            m_values.clear();
            m_used.clear();
        }
        if (s.cell) {
            const Shared::CellJob c = *s.cell;
            s.cell.reset();
            ++s.stats.cells;
            lock.unlock();
            const TilePooling pooling = m_pooling;
            try {
                const TileCell cell = m_engine->cell(c.head, c.i, c.j);
                post([owner = m_owner, generation, c, cell] {
                    if (owner->m_generation == generation)
                        emit owner->cellReady(c.head, c.i, c.j, cell);
                });
                if (c.colEnd > c.colBegin) {
                    const TileWindow w {c.i, c.i + 1, c.colBegin, c.colEnd};
                    LongRowStrip strip;
                    strip.head = c.head;
                    strip.query = c.i;
                    strip.colBegin = c.colBegin;
                    strip.colEnd = c.colEnd;
                    strip.pooling = pooling;
                    m_engine->row(c.head, w, c.colsPerPixel, pooling, strip);
                    post([owner = m_owner, generation, strip] {
                        if (owner->m_generation == generation)
                            emit owner->rowReady(strip);
                    });
                }
            } catch (const std::exception &) {
                // Out of range after a restart with smaller n: nothing to show.
            }
            continue;
        }
        if (!s.engineJobs.empty()) {
            auto job = std::move(s.engineJobs.front());
            s.engineJobs.pop_front();
            const TilePooling pooling = m_pooling;
            lock.unlock();
            std::function<void()> then = job(*m_engine, pooling);
            post([owner = m_owner, generation, then = std::move(then)] {
                if (owner->m_generation == generation)
                    then();
            });
            continue;
        }
        const TileIndex tile = s.wanted.front();
        s.wanted.pop_front();
        const Index head = s.wantHead;
        const int level = s.wantLevel;
        const TilePainter painter = s.painter;
        lock.unlock();
        runTile(generation, head, level, tile, painter);
    }
}

void TileScheduler::Worker::store(const LongTileKey &key, TileValues values)
{
    m_values.insert(key, std::move(values));
    m_used.insert(key, ++m_clock);
    while (m_values.size() > m_cacheTiles) {
        auto oldest = std::min_element(m_used.begin(), m_used.end());
        m_values.remove(oldest.key());
        m_used.erase(oldest);
    }
}

void TileScheduler::Worker::runTile(quint64 generation, Index head, int level, TileIndex tile,
                                    const TilePainter &painter)
{
    const LongTileKey key {head, level, tile};
    std::function<void()> painted;
    try {
        auto found = m_values.constFind(key);
        if (found != m_values.constEnd()) {
            m_used[key] = ++m_clock;
            if (painter)
                painted = painter(key, *found);
            std::lock_guard lock(m_shared->thread.mutex());
            ++m_shared->stats.tilesRecoloured;
        } else {
            const TileWindow window = m_pyramid->tileWindow(level, tile);
            std::vector<TileValues> v = m_engine->render(
                {head}, window, m_pyramid->tileGrid(level, tile), m_pooling, CancelToken());
            if (painter)
                painted = painter(key, v.front());
            store(key, std::move(v.front()));
            std::lock_guard lock(m_shared->thread.mutex());
            ++m_shared->stats.tilesComputed;
        }
    } catch (const std::exception &e) {
        const QString message = QString::fromStdString(e.what());
        post([owner = m_owner, generation, message] {
            if (owner->m_generation == generation)
                emit owner->failed(message);
        });
        return;
    }
    if (!painted)
        return;
    post([owner = m_owner, generation, painted = std::move(painted)] {
        if (owner->m_generation == generation)
            painted();
    });
}

void TileScheduler::Worker::runStart(const Shared::StartJob &job)
{
    const quint64 g = job.generation;
    const auto fail = [&](const QString &message) {
        m_engine.reset();
        post([owner = m_owner, g, message] {
            if (owner->m_generation != g)
                return;
            owner->m_computing = false;
            emit owner->failed(message);
        });
    };
    const std::atomic<bool> *stop = &m_shared->cancelStart;
    // The first full view on every core but one, left to the GUI thread.
    const ScopedKernelThreads fullViewThreads(std::max<Index>(1, m_fullViewThreads));
    try {
        std::unique_ptr<EngineBox> engine
            = makeEngineBox(job.params, [stop] { return stop->load(); });
        const TilePyramid pyramid(job.params.queryCount(), job.params.keyCount(), job.tilePixels);
        const int level = std::clamp(job.fitLevel, 0, pyramid.topLevel());
        const Index heads = job.params.heads;
        std::vector<Index> which;
        for (Index h = 0; h < heads; ++h)
            which.push_back(h);
        if (heads > 1)
            which.push_back(kHeadMean);
        const Index perPixel = TilePyramid::cellsPerPixel(level);
        const Index nQ = pyramid.queries(), nK = pyramid.keys();
        // About 64 progress steps, each a whole number of pixel rows.
        const Index chunkPixels = std::max<Index>(1, (nQ / 64 + perPixel - 1) / perPixel);
        const Index chunkRows = chunkPixels * perPixel;
        const Index across = pyramid.tilesAcross(level), down = pyramid.tilesDown(level);
        const int tp = job.tilePixels;
        for (Index ty = 0; ty < down; ++ty) {
            // The band of tile row ty, every key: its tiles of every head, filled chunk by chunk.
            std::vector<std::vector<TileValues>> band(which.size());
            for (std::size_t k = 0; k < which.size(); ++k)
                for (Index tx = 0; tx < across; ++tx) {
                    const TileGrid tg = pyramid.tileGrid(level, {tx, ty});
                    TileValues v;
                    v.values.resize(tg.height, tg.width);
                    v.maskState.resize(tg.height, tg.width);
                    band[k].push_back(std::move(v));
                }
            const TileWindow bandWindow = pyramid.tileWindow(level, {0, ty});
            for (Index r0 = bandWindow.rowBegin; r0 < bandWindow.rowEnd; r0 += chunkRows) {
                const TileWindow w {r0, std::min(bandWindow.rowEnd, r0 + chunkRows), 0, nK};
                const std::vector<TileValues> part = engine->render(
                    which, w, tileGridWithCells(w, perPixel, perPixel), job.pooling, stop);
                const Index y0 = (r0 - bandWindow.rowBegin) / perPixel;
                for (std::size_t k = 0; k < which.size(); ++k)
                    for (Index tx = 0; tx < across; ++tx) {
                        TileValues &t = band[k][std::size_t(tx)];
                        const Index x0 = tx * tp, cols = t.values.cols();
                        const Index rows = part[k].values.rows();
                        t.values.block(y0, 0, rows, cols) = part[k].values.block(0, x0, rows, cols);
                        t.maskState.block(y0, 0, rows, cols)
                            = part[k].maskState.block(0, x0, rows, cols);
                    }
                const double done = double(w.rowEnd) / double(nQ);
                post([owner = m_owner, g, done] {
                    if (owner->m_generation == g && owner->m_computing)
                        emit owner->progressChanged(done);
                });
            }
            for (std::size_t k = 0; k < which.size(); ++k)
                for (Index tx = 0; tx < across; ++tx)
                    store({which[k], level, {tx, ty}}, std::move(band[k][std::size_t(tx)]));
        }
        std::vector<double> maxWeights;
        for (Index h : which)
            maxWeights.push_back(engine->maxWeight(h));
        const double scale = engine->scale();
        std::lock_guard lock(m_shared->thread.mutex());
        if (m_shared->generation != g)
            return; // superseded: the next start() is queued
        m_engine = std::move(engine);
        m_engineGeneration = g;
        m_pyramid = pyramid;
        m_pooling = job.pooling;
        post([owner = m_owner, g, scale, maxWeights] {
            if (owner->m_generation != g)
                return;
            owner->m_computing = false;
            owner->m_ready = true;
            owner->m_scale = scale;
            owner->m_maxWeights = maxWeights;
            emit owner->fullViewReady();
        });
    } catch (const Cancelled &) {
        m_engine.reset();
        post([owner = m_owner, g] {
            if (owner->m_generation != g)
                return;
            owner->m_computing = false;
            emit owner->cancelled();
        });
    } catch (const std::bad_alloc &) {
        fail(QStringLiteral("out of memory for n_q = %1, n_k = %2, h = %3")
                 .arg(job.params.queryCount())
                 .arg(job.params.keyCount())
                 .arg(job.params.heads));
    } catch (const std::exception &e) {
        fail(QString::fromStdString(e.what()));
    }
}

QString TileScheduler::refusal(const SessionParameters &params)
{
    QString error = params.validate(SessionParameters::maxLongSequence);
    // A model run is drawn from its kept queries and keys (sessionTileEngine).
    if (error.isEmpty() && params.tensors && params.tensors->isWeights()
        && !params.tensors->isModelRun())
        error = tr("%1 holds stored weights, without the queries and keys the "
                   "tile engine computes the map from")
                    .arg(params.tensors->fileName());
    if (const QString unsupported = pooledSessionUnsupported(params);
        error.isEmpty() && !unsupported.isEmpty())
        error = tr("the tile engine cannot draw %1 at any length (it applies masks, the scale, "
                   "sinusoidal positions and MLA only): %2")
                    .arg(unsupported,
                         fullMatricesNote(params.queryCount(), params.keyCount(),
                                          tr("the Heads and Steps tabs compute it")));
    return error;
}

TileScheduler::TileScheduler(QObject *parent, int tilePixels, int cacheTiles)
    : QObject(parent)
    , m_tilePixels(std::max(1, tilePixels))
    , m_shared(std::make_shared<Shared>())
    , m_variant(std::make_shared<VariantEngine>())
{
    qRegisterMetaType<attn::TileCell>();
    qRegisterMetaType<attn::LongRowStrip>();
    m_worker = std::make_unique<Worker>(this, m_shared, cacheTiles);
}

TileScheduler::~TileScheduler() = default;

void TileScheduler::start(const SessionParameters &params, TilePooling pooling, int fitLevel)
{
    ++m_generation;
    m_params = params;
    m_pooling = pooling;
    m_ready = false;
    m_maxWeights.clear();
    m_variant = std::make_shared<VariantEngine>(); // the old one goes with its last job
    const QString error = refusal(params);
    if (error.isEmpty())
        m_pyramid.emplace(params.queryCount(), params.keyCount(), m_tilePixels);
    else
        m_pyramid.reset();
    {
        std::lock_guard lock(m_shared->thread.mutex());
        m_shared->generation = m_generation;
        m_shared->cancelStart = true; // stops a full view still running
        m_shared->pooling = pooling;
        m_shared->wanted.clear();
        m_shared->cell.reset();
        if (error.isEmpty())
            m_shared->startJob
                = Shared::StartJob {m_generation, params, pooling, fitLevel, m_tilePixels};
        else
            m_shared->startJob.reset();
    }
    m_shared->thread.wake();
    if (!error.isEmpty()) {
        m_computing = false;
        emit failed(error);
        return;
    }
    m_computing = true;
    emit progressChanged(0);
}

void TileScheduler::clear()
{
    ++m_generation;
    {
        std::lock_guard lock(m_shared->thread.mutex());
        m_shared->generation = m_generation;
        m_shared->cancelStart = true;
        m_shared->startJob.reset();
        m_shared->wanted.clear();
        m_shared->cell.reset();
    }
    m_pyramid.reset();
    m_maxWeights.clear();
    m_variant = std::make_shared<VariantEngine>();
    m_computing = false;
    m_ready = false;
}

void TileScheduler::cancel()
{
    if (!m_computing)
        return;
    ++m_generation; // whatever the worker still posts for the cancelled start is dropped
    {
        std::lock_guard lock(m_shared->thread.mutex());
        m_shared->generation = m_generation;
        m_shared->cancelStart = true;
        m_shared->startJob.reset();
    }
    m_computing = false;
    m_ready = false;
    emit cancelled();
}

double TileScheduler::maxWeight(Index head) const
{
    if (m_maxWeights.empty())
        return 0;
    const std::size_t k = head == kHeadMean ? m_maxWeights.size() - 1 : std::size_t(head);
    return k < m_maxWeights.size() ? m_maxWeights[k] : 0;
}

void TileScheduler::setPainter(TilePainter painter, std::optional<TilePooling> pooling)
{
    const bool repool = pooling && m_ready;
    if (repool)
        m_pooling = *pooling;
    std::lock_guard lock(m_shared->thread.mutex());
    m_shared->painter = std::move(painter);
    if (repool) { // the worker drops its cached values of the old pooling
        m_shared->pooling = *pooling;
        m_shared->cell.reset();
    }
    m_shared->wanted.clear();
}

void TileScheduler::request(Index head, int level, const std::vector<TileIndex> &tiles)
{
    if (!m_ready)
        return;
    {
        std::lock_guard lock(m_shared->thread.mutex());
        m_shared->wantHead = head;
        m_shared->wantLevel = level;
        m_shared->wanted.assign(tiles.begin(), tiles.end());
    }
    m_shared->thread.wake();
}

void TileScheduler::requestCell(Index head, Index i, Index j, Index rowColBegin, Index rowColEnd,
                                Index colsPerPixel)
{
    if (!m_ready)
        return;
    {
        std::lock_guard lock(m_shared->thread.mutex());
        m_shared->cell = Shared::CellJob {head, i, j, rowColBegin, rowColEnd, colsPerPixel};
    }
    m_shared->thread.wake();
}

void TileScheduler::runOnEngine(std::function<QString(const WindowRenderer &)> work,
                                std::function<void(const QString &)> deliver)
{
    if (!m_ready) {
        deliver(tr("the long-sequence map is not computed yet"));
        return;
    }
    queueEngineJob([work = std::move(work), deliver = std::move(deliver)](
                       EngineBox &box, TilePooling pooling) -> std::function<void()> {
        QString error;
        try {
            error = work([&box, pooling](const std::vector<Index> &heads, const TileWindow &window,
                                         Index maxWidth, Index maxHeight) {
                return box.renderResult(heads, window, maxWidth, maxHeight, pooling);
            });
        } catch (const std::bad_alloc &) {
            error = tr("out of memory");
        } catch (const std::exception &e) {
            error = QString::fromStdString(e.what());
        }
        return [deliver, error] { deliver(error); };
    });
}

void TileScheduler::materializeWindow(
    const TileWindow &window,
    std::function<void(std::shared_ptr<const SessionResult>, const QString &)> deliver)
{
    if (!m_ready) {
        deliver(nullptr, tr("the long-sequence map is not computed yet"));
        return;
    }
    queueEngineJob([window, params = m_params, deliver = std::move(deliver)](
                       EngineBox &box, TilePooling) -> std::function<void()> {
        return windowDelivery(deliver, [&] {
            SessionResult r = box.materialize(window);
            r.params = params;
            return r;
        });
    });
}

void TileScheduler::materializeVariantWindow(
    const SessionParameters &variant, const TileWindow &window,
    std::function<void(std::shared_ptr<const SessionResult>, const QString &)> deliver)
{
    if (!m_ready) {
        deliver(nullptr, tr("the long-sequence map is not computed yet"));
        return;
    }
    QString error = refusal(variant);
    if (error.isEmpty()
        && (variant.queryCount() != m_params.queryCount()
            || variant.keyCount() != m_params.keyCount() || variant.heads != m_params.heads))
        error = tr("B must keep the map's n, n_k and heads");
    if (!error.isEmpty()) {
        deliver(nullptr, error);
        return;
    }
    queueEngineJob(
        [window, variant, cache = m_variant, threads = kernelThreads() - 1,
         deliver = std::move(deliver)](EngineBox &, TilePooling) -> std::function<void()> {
            return windowDelivery(deliver, [&] {
                if (!cache->box || !(cache->params == variant)) {
                    cache->box.reset(); // one B at a time
                    // B's projections on every core but one, as the first full view.
                    const ScopedKernelThreads projectionThreads(std::max<Index>(1, threads));
                    cache->box = makeEngineBox(variant, {});
                    cache->params = variant;
                }
                SessionResult r = cache->box->materialize(window);
                r.params = variant;
                return r;
            });
        });
}

void TileScheduler::queueEngineJob(
    std::function<std::function<void()>(EngineBox &, TilePooling)> job)
{
    {
        std::lock_guard lock(m_shared->thread.mutex());
        m_shared->engineJobs.push_back(std::move(job));
    }
    m_shared->thread.wake();
}

TileScheduler::Stats TileScheduler::stats() const
{
    std::lock_guard lock(m_shared->thread.mutex());
    return m_shared->stats;
}

} // namespace attn
