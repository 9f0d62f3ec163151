#pragma once
// TileScheduler: the worker thread behind the Long tab's tiles. It owns the tile engine
// (core/tiles/tileengine.h) of a long sequence's attention map and computes, on that one thread,
// the first full view (every row's softmax max and sum of every head, in bands of query rows,
// with progress and Cancel), the tiles a view asks for (core/tiles/tilepyramid.h), hover cells
// and row strips, and engine jobs (exports, windows for the Steps and A/B views). It keeps the
// tiles' pooled values (TileValues) in a cache of its own, so that a tile shown again in other
// colours is only coloured again. Colouring is not this tier's: the painter set by setPainter
// (ui/render/longmaptiles.h sets one) turns a tile's values into what the GUI thread takes, and
// runs on the worker, so the GUI thread never colours a tile.
//
// Threads: every public function is called on the thread this object lives on (the GUI thread);
// the worker only reads the wishes they post (under a mutex held around a few assignments) and
// posts its results back through postTo (ui/session/handover.h), where they are dropped when a
// later start(), clear() or cancel() made them stale (a generation counter). The first full view
// runs on every core but one, tiles and cells on the worker alone, so the GUI thread always has
// a core. The destructor stops the worker (a running pass is cancelled) and waits for it.

#include "ui/session/sessionparameters.h"
#include "ui/session/sessionresult.h"

#include "core/tiles/tileengine.h"
#include "core/tiles/tilepyramid.h"

#include <QHash>
#include <QObject>
#include <QString>

#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <vector>

namespace attn {

/// A tile of one head (or kHeadMean) at one level.
struct LongTileKey
{
    Index head = 0;
    int level = 0;
    TileIndex tile;
    bool operator==(const LongTileKey &) const = default;
};

inline size_t qHash(const LongTileKey &k, size_t seed = 0)
{
    return qHashMulti(seed, k.head, k.level, k.tile.tx, k.tile.ty);
}

/// A tile's pooled values, one per pixel (tileGrid's height × width; float32 whatever the
/// dtype: colours need 8 bits), and the pixels' mask states.
struct TileValues
{
    Matrix<float> values;
    MatrixB maskState;
};

/// One query's weights over a range of keys, pooled a few keys a point (the row strip under the
/// long map): values[x] pools keys [colBegin + x·colsPerPixel, …) (clipped to colEnd) by
/// `pooling`; maskState[x] the OR of the states where every key of the point is masked, else 0.
struct LongRowStrip
{
    Index head = 0;
    Index query = -1;
    Index colBegin = 0, colEnd = 0, colsPerPixel = 1;
    TilePooling pooling = TilePooling::Max;
    std::vector<double> values;
    std::vector<std::uint8_t> maskState;
};

class TileScheduler : public QObject
{
    Q_OBJECT
public:
    /// The engine behind the worker (either dtype); internal.
    class EngineBox;

    /// Turns a tile's values into what the GUI thread takes (an image, for the render tier):
    /// called on the worker, it returns the call that hands the result over on the GUI thread
    /// (made only while the map it was computed for is still the current one). It may throw:
    /// failed() then names the problem.
    using TilePainter
        = std::function<std::function<void()>(const LongTileKey &key, const TileValues &values)>;

    /// `tilePixels`: the tiles' side in pixels (at least 1); `cacheTiles`: tiles whose values
    /// the worker keeps (the least recently used go first).
    explicit TileScheduler(QObject *parent, int tilePixels, int cacheTiles);
    /// Stops the worker (a running pass is cancelled) and waits for it.
    ~TileScheduler() override;

    int tilePixels() const { return m_tilePixels; }

    /// What start() refuses for `params` (empty when the tile engine can draw them): invalid up
    /// to SessionParameters::maxLongSequence, or stored weights without queries and keys.
    static QString refusal(const SessionParameters &params);

    /// Starts over with `params` (valid up to SessionParameters::maxLongSequence, seeded, not
    /// refused — else failed() names the problem at once) and `pooling`: progressChanged(0)
    /// now; the worker builds the engine, then computes the tiles of `fitLevel` (clamped to the
    /// pyramid) for every head and the mean into the values cache, band by band of query rows
    /// (progressChanged with the fraction of rows done), which records every row's statistics.
    /// fullViewReady() follows, or failed(), or cancelled(). Drops every cached value and
    /// every wish.
    void start(const SessionParameters &params, TilePooling pooling, int fitLevel);
    /// Drops the map: the engine's results still to come, a full view running, the wishes.
    void clear();
    /// Cancels the first full view (or the engine's construction): cancelled() follows; nothing
    /// of it is kept. Does nothing unless computing.
    void cancel();
    /// True from start() until fullViewReady(), failed() or cancelled().
    bool isComputingFullView() const { return m_computing; }
    /// True after fullViewReady() (until the next start(), clear() or cancel()).
    bool isReady() const { return m_ready; }

    /// The parameters of the last start() (n and n_k as computed).
    const SessionParameters &parameters() const { return m_params; }
    TilePooling pooling() const { return m_pooling; }
    /// The pyramid of the last start() (nullopt before the first, after clear() and for refused
    /// parameters).
    const std::optional<TilePyramid> &pyramid() const { return m_pyramid; }
    /// The attention's scale factor (after fullViewReady()).
    double scale() const { return m_scale; }
    /// The largest weight of `head` (TileEngine::maxWeight; after fullViewReady(), else 0).
    double maxWeight(Index head) const;

    /// The painter of the tiles computed from now on (tiles in flight with an earlier painter
    /// are the caller's to drop). Drops the tiles asked for. With `pooling`, also pools later
    /// tiles, row strips and exports that way, keeping the engine and its row statistics: the
    /// worker drops its values of the old pooling and the cell asked for; `pooling` is ignored
    /// before fullViewReady().
    void setPainter(TilePainter painter, std::optional<TilePooling> pooling = std::nullopt);

    /// Asks for `tiles` of `head` at `level`, in this order (the view's, nearest its centre
    /// first), replacing every earlier wish; each is painted on the worker (from the values
    /// cache when there). Ignored before fullViewReady().
    void request(Index head, int level, const std::vector<TileIndex> &tiles);

    /// Asks for cell (i, j) of `head`: cellReady() follows (replaces an earlier unanswered ask).
    /// With rowColEnd > rowColBegin, also query i's weights over keys [rowColBegin, rowColEnd)
    /// pooled by colsPerPixel keys a point: rowReady() follows. Ignored before fullViewReady().
    void requestCell(Index head, Index i, Index j, Index rowColBegin = 0, Index rowColEnd = 0,
                     Index colsPerPixel = 1);

    /// The renderer runOnEngine's work gets: render(heads, window, maxWidth, maxHeight) as a
    /// SessionResult of pooledTilesResult, pooled as the tiles are.
    using WindowRenderer
        = std::function<SessionResult(const std::vector<Index> &heads, const TileWindow &window,
                                      Index maxWidth, Index maxHeight)>;
    /// Runs `work` on the worker after the tiles in flight; its result (an error, empty when
    /// done) or failure comes back through `deliver` on the GUI thread. Before fullViewReady()
    /// `deliver` is called at once with the reason.
    void runOnEngine(std::function<QString(const WindowRenderer &render)> work,
                     std::function<void(const QString &error)> deliver);
    /// The numbers of `window` at one cell per pixel, as the Steps view takes them: every head's
    /// weights, raw and scaled scores (window.rows() × window.cols()), the mask states, and
    /// per-row metrics over every key of each row; queryIndex / keyIndex give the positions.
    /// Computed on the worker after the tiles in flight; `deliver` gets it (params = the map's)
    /// or nullptr and the error on the GUI thread. The result holds (3h + 1) · rows · cols
    /// doubles.
    void materializeWindow(
        const TileWindow &window,
        std::function<void(std::shared_ptr<const SessionResult>, const QString &error)> deliver);
    /// materializeWindow() of the same window for `variant` (same n, n_k and heads; else, or
    /// when refused, `deliver` gets the error at once): from an engine of its own on the
    /// worker, built on first use and kept while `variant` stays the same (start() and clear()
    /// drop it); only the window's rows are computed, each over every key.
    void materializeVariantWindow(
        const SessionParameters &variant, const TileWindow &window,
        std::function<void(std::shared_ptr<const SessionResult>, const QString &error)> deliver);

    /// Work counters (tests, bench_gui): tiles the worker computed from the engine, tiles it
    /// only painted again from its values, cells computed.
    struct Stats
    {
        quint64 tilesComputed = 0;
        quint64 tilesRecoloured = 0;
        quint64 cells = 0;
    };
    Stats stats() const;

signals:
    void progressChanged(double fraction);
    void fullViewReady();
    void failed(const QString &message);
    void cancelled();
    void cellReady(attn::Index head, attn::Index i, attn::Index j, const attn::TileCell &cell);
    void rowReady(const attn::LongRowStrip &strip);

private:
    struct Shared;
    class Worker;
    struct VariantEngine;
    void queueEngineJob(std::function<std::function<void()>(EngineBox &, TilePooling)> job);

    int m_tilePixels;
    std::shared_ptr<Shared> m_shared;
    std::shared_ptr<VariantEngine> m_variant; // B of the A/B view; used on the worker only
    SessionParameters m_params;
    TilePooling m_pooling = TilePooling::Max;
    std::optional<TilePyramid> m_pyramid;
    double m_scale = 1;
    std::vector<double> m_maxWeights; // per head, then the mean's
    bool m_computing = false;
    bool m_ready = false;
    quint64 m_generation = 0;
    std::unique_ptr<Worker> m_worker; // last: stopped first
};

} // namespace attn

Q_DECLARE_METATYPE(attn::TileCell)
Q_DECLARE_METATYPE(attn::LongRowStrip)
