#pragma once
// LongMapTiles: the tiles of a long sequence's attention map as images, computed on a worker
// thread by the tile engine (core/tiles/tileengine.h) at the zoom the view shows
// (core/tiles/tilepyramid.h), coloured there, and handed to the GUI thread. The first full view
// computes every row's softmax max and sum (the online softmax) of every head in bands of query
// rows, with progress and Cancel, and leaves the level that fits the view cached; after it, a
// zoomed or panned view asks only for the tiles it lacks, the nearest its centre first, and
// each costs only its own cells. Hover cells are computed on demand from q_i, k_j and row i's
// statistics.
//
// The worker and its values cache are TileScheduler's (ui/session/tilescheduler.h): one worker
// thread owns the engine (TileEngine is not thread-safe) and renders tiles and cells on itself
// alone and the first full view on every core but one, so the GUI thread always has a core.
// This class adds the colours: the painter it gives the scheduler colours a tile's values on
// the worker (buildTileImage), and the images come back to the GUI thread, where they are kept
// in a cache of their own. Every function is called on the GUI thread, which only posts wishes
// and takes finished images: nothing here blocks it for longer than a mutex held around a few
// assignments.

#include "ui/render/colormap.h"
#include "ui/session/sessionparameters.h"
#include "ui/session/sessionresult.h"
#include "ui/session/tilescheduler.h"

#include "core/tiles/tileengine.h"
#include "core/tiles/tilepyramid.h"

#include <QHash>
#include <QImage>
#include <QObject>
#include <QSet>
#include <QString>

#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <vector>

namespace attn {

/// What a LongMapTiles computation holds (bytes): the projection's inputs while it runs, the
/// engine after it (TileEngine::heldBytes), the tile caches (values, mask states and images).
struct LongMapBytes
{
    double inputs = 0;
    double engine = 0;
    double cache = 0;
    double total() const { return std::max(inputs, engine + cache); }
};

class LongMapTiles : public QObject
{
    Q_OBJECT
public:
    /// Tile side in pixels. Small tiles: a view needs the tiles it overlaps, and a view of
    /// 1 024 × 1 024 cells at 4 cells a pixel overlaps 2 × 2 tiles of 256 pixels (4 Mcells, 4 ×
    /// the view) but about 5 × 5 of 64 pixels (1.6 Mcells); bench_gui measured zoom and pan
    /// steps 1.5 × faster with 64 than with 256 (p95 29.5 vs 45.5 ms for the mean of 8 heads).
    static constexpr int defaultTilePixels = 64;
    /// Tiles kept per cache (the GUI's images, the worker's values): 4 096 tiles of 64 × 64
    /// pixels are 64 MiB of images and 80 MiB of float32 values and mask states.
    static constexpr int defaultCacheTiles = 4096;

    explicit LongMapTiles(QObject *parent = nullptr, int tilePixels = defaultTilePixels,
                          int cacheTiles = defaultCacheTiles);
    /// Stops the worker (a running pass is cancelled) and waits for it.
    ~LongMapTiles() override;

    int tilePixels() const { return m_scheduler->tilePixels(); }

    /// What start(params, …) would hold, for the memory budget.
    LongMapBytes bytesFor(const SessionParameters &params) const;

    /// Starts over with `params` (valid up to SessionParameters::maxLongSequence, seeded,
    /// not refused by TileScheduler::refusal — else failed() names the problem) and `pooling`:
    /// builds the engine on the worker, then computes the tiles of `fitLevel` (clamped to the
    /// pyramid) for every head and the mean, band by band (progressChanged), which records
    /// every row's statistics. Drops every cached tile. fullViewReady() follows, or failed(),
    /// or cancelled().
    void start(const SessionParameters &params, TilePooling pooling, int fitLevel);
    /// Drops the map: cached tiles, the engine's results still to come, a full view running.
    void clear();
    /// Cancels the first full view (or the engine's construction): cancelled() follows; nothing
    /// of it is kept.
    void cancel();
    /// True from start() until fullViewReady(), failed() or cancelled().
    bool isComputingFullView() const { return m_scheduler->isComputingFullView(); }
    /// True after fullViewReady() (until the next start()).
    bool isReady() const { return m_scheduler->isReady(); }

    /// The parameters of the last start() (n and n_k as computed).
    const SessionParameters &parameters() const { return m_scheduler->parameters(); }
    TilePooling pooling() const { return m_scheduler->pooling(); }
    /// The pyramid of the last start() (nullopt before the first).
    const std::optional<TilePyramid> &pyramid() const { return m_scheduler->pyramid(); }
    /// The attention's scale factor (after fullViewReady()).
    double scale() const { return m_scheduler->scale(); }
    /// The largest weight of `head` (TileEngine::maxWeight; after fullViewReady()).
    double maxWeight(Index head) const { return m_scheduler->maxWeight(head); }

    /// Colours of later tiles: `colormap` over `norm` (a change recolours the cached values on
    /// the worker; the GUI's images are dropped and come back as tileReady).
    void setColors(ColormapId colormap, ColorNorm norm);
    /// How later tiles, row strips and exports pool their cells, keeping the engine and its row
    /// statistics (the first full view is not computed again): both caches are dropped and the
    /// tiles asked for come back as tileReady. Ignored before fullViewReady() (start() takes
    /// the pooling of a map still to be computed).
    void setPooling(TilePooling pooling);
    ColormapId colormap() const { return m_colormap; }
    ColorNorm norm() const { return m_norm; }

    /// Asks for the tiles of `head` at `level` (the view's, nearest its centre first), replacing
    /// every earlier wish; tiles already here are skipped. Ignored before fullViewReady().
    void request(Index head, int level, const std::vector<TileIndex> &tiles);
    /// The tiles asked for and not yet here.
    int pendingTiles() const;
    /// The image of a tile (one pixel per pooled pixel, Format_RGB32), or nullptr.
    const QImage *image(const LongTileKey &key) const;

    /// Asks for cell (i, j) of `head`: cellReady() follows (replaces an earlier unanswered ask).
    /// With rowColEnd > rowColBegin, also query i's weights over keys [rowColBegin, rowColEnd)
    /// pooled by colsPerPixel keys a point: rowReady() follows.
    void requestCell(Index head, Index i, Index j, Index rowColBegin = 0, Index rowColEnd = 0,
                     Index colsPerPixel = 1);

    /// Runs `work(engine view)` on the worker after the tiles in flight (exports): `work` gets
    /// the engine's renderer — render(heads, window, maxWidth, maxHeight) as a SessionResult of
    /// pooledTilesResult — and its result or failure comes back through `deliver` on the GUI
    /// thread. Ignored before fullViewReady().
    using WindowRenderer = TileScheduler::WindowRenderer;
    void runOnEngine(std::function<QString(const WindowRenderer &render)> work,
                     std::function<void(const QString &error)> deliver);

    /// The visible window's numbers at one cell per pixel, as the Steps view takes them: every
    /// head's weights, raw and scaled scores (window.rows() × window.cols()), the mask states,
    /// and per-row metrics over every key of each row (so they are the rows' own, not the
    /// window's); queryIndex / keyIndex give the positions. Computed on the worker after the
    /// tiles in flight; `deliver` gets it (or nullptr and the error) on the GUI thread. Keep
    /// windows small: the result holds (3h + 1) · rows · cols doubles.
    void materializeWindow(
        const TileWindow &window,
        std::function<void(std::shared_ptr<const SessionResult>, const QString &error)> deliver);

    /// materializeWindow() of the same window for `variant`: the A/B view's B, the map's
    /// parameters with α, τ, the mask or d_k changed (same n, heads and seed). B has an engine
    /// of its own on the worker, built from `variant` on first use and kept while `variant`
    /// stays the same (start() and clear() drop it); only the window's rows are computed, each
    /// over every key, so B costs its projections and window.rows() whole rows, not a full
    /// view. `deliver` gets the result (params = variant) or nullptr and the error (variant
    /// invalid up to SessionParameters::maxLongSequence or needing the full matrices, the map
    /// not computed, out of memory) on the GUI thread.
    void materializeVariantWindow(
        const SessionParameters &variant, const TileWindow &window,
        std::function<void(std::shared_ptr<const SessionResult>, const QString &error)> deliver);

    /// Work counters (tests, bench_gui): tiles the worker computed from the engine, tiles it
    /// only recoloured, cells computed.
    using Stats = TileScheduler::Stats;
    Stats stats() const { return m_scheduler->stats(); }

signals:
    void progressChanged(double fraction);
    void fullViewReady();
    void failed(const QString &message);
    void cancelled();
    void tileReady(const attn::LongTileKey &key);
    void cellReady(attn::Index head, attn::Index i, attn::Index j, const attn::TileCell &cell);
    void rowReady(const attn::LongRowStrip &strip);

private:
    /// The painter of the colours now (the worker colours tiles with it; their images are
    /// taken only while the colours are still these).
    TileScheduler::TilePainter painter();
    void takeTile(const LongTileKey &key, const QImage &image);
    /// Drops the GUI's images and the tiles asked for, and hands the scheduler the painter of
    /// a new colour version (and `pooling`, when given), so that tiles made before it are not
    /// shown.
    void restyle(std::optional<TilePooling> pooling);
    void evictImages();

    int m_cacheTiles;
    ColormapId m_colormap = ColormapId::Viridis;
    ColorNorm m_norm;
    quint64 m_colorVersion = 0;
    QHash<LongTileKey, QImage> m_images;
    QHash<LongTileKey, quint64> m_used; // last use, for eviction
    quint64 m_clock = 0;
    std::vector<LongTileKey> m_wanted;
    QSet<LongTileKey> m_shown; // the tiles of the view last requested: never evicted
    std::unique_ptr<TileScheduler> m_scheduler; // last: its worker stops first
};

} // namespace attn

Q_DECLARE_METATYPE(attn::LongTileKey)
