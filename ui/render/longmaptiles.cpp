#include "ui/render/longmaptiles.h"

#include "ui/render/tileimage.h"
#include "ui/session/pooledsession.h"

#include <algorithm>

namespace attn {

namespace {

QImage colourTile(const TileValues &v, ColormapId colormap, const ColorNorm &norm)
{
    const MatrixD values = v.values.cast<double>();
    TileImageRequest request;
    request.values = &values;
    request.maskState = &v.maskState;
    request.colormap = colormap;
    request.norm = norm;
    return buildTileImage(request);
}

} // namespace

LongMapTiles::LongMapTiles(QObject *parent, int tilePixels, int cacheTiles)
    : QObject(parent)
    , m_cacheTiles(std::max(16, cacheTiles))
    , m_scheduler(std::make_unique<TileScheduler>(nullptr, tilePixels, m_cacheTiles))
{
    qRegisterMetaType<attn::LongTileKey>();
    m_scheduler->setPainter(painter());
    connect(m_scheduler.get(), &TileScheduler::progressChanged, this,
            &LongMapTiles::progressChanged);
    connect(m_scheduler.get(), &TileScheduler::fullViewReady, this, &LongMapTiles::fullViewReady);
    connect(m_scheduler.get(), &TileScheduler::failed, this, &LongMapTiles::failed);
    connect(m_scheduler.get(), &TileScheduler::cancelled, this, &LongMapTiles::cancelled);
    connect(m_scheduler.get(), &TileScheduler::cellReady, this, &LongMapTiles::cellReady);
    connect(m_scheduler.get(), &TileScheduler::rowReady, this, &LongMapTiles::rowReady);
}

LongMapTiles::~LongMapTiles() = default;

TileScheduler::TilePainter LongMapTiles::painter()
{
    return [tiles = this, colormap = m_colormap, norm = m_norm, version = m_colorVersion](
               const LongTileKey &key, const TileValues &values) -> std::function<void()> {
        // On the worker: only the colours captured here are read; `tiles` is used back on the
        // GUI thread, where the scheduler (owned by it) delivers the call.
        QImage image = colourTile(values, colormap, norm);
        return [tiles, version, key, image = std::move(image)] {
            if (tiles->m_colorVersion == version)
                tiles->takeTile(key, image);
        };
    };
}

LongMapBytes LongMapTiles::bytesFor(const SessionParameters &params) const
{
    const PooledSessionBytes b = pooledSessionBytes(params, 1);
    LongMapBytes out;
    out.inputs = b.inputs;
    out.engine = b.engine;
    // Both caches full: float32 values and a mask byte on the worker, a 4-byte image here.
    const double pixels = double(tilePixels()) * double(tilePixels());
    out.cache = double(m_cacheTiles) * pixels * (4.0 + 1.0 + 4.0);
    return out;
}

void LongMapTiles::start(const SessionParameters &params, TilePooling pooling, int fitLevel)
{
    m_images.clear();
    m_used.clear();
    m_wanted.clear();
    m_scheduler->start(params, pooling, fitLevel);
}

void LongMapTiles::clear()
{
    m_scheduler->clear();
    m_images.clear();
    m_used.clear();
    m_wanted.clear();
    m_shown.clear();
}

void LongMapTiles::cancel()
{
    m_scheduler->cancel();
}

void LongMapTiles::setColors(ColormapId colormap, ColorNorm norm)
{
    if (colormap == m_colormap && norm == m_norm)
        return;
    m_colormap = colormap;
    m_norm = norm;
    restyle(std::nullopt);
}

void LongMapTiles::restyle(std::optional<TilePooling> pooling)
{
    ++m_colorVersion;
    m_images.clear();
    m_used.clear();
    m_wanted.clear();
    m_scheduler->setPainter(painter(), pooling);
}

void LongMapTiles::setPooling(TilePooling pooling)
{
    if (!isReady() || pooling == this->pooling())
        return;
    restyle(pooling);
}

void LongMapTiles::request(Index head, int level, const std::vector<TileIndex> &tiles)
{
    if (!isReady())
        return;
    m_wanted.clear();
    m_shown.clear();
    std::vector<TileIndex> missing;
    for (const TileIndex &t : tiles) {
        const LongTileKey key {head, level, t};
        m_shown.insert(key);
        if (!m_images.contains(key)) {
            missing.push_back(t);
            m_wanted.push_back(key);
        }
    }
    m_scheduler->request(head, level, missing);
}

int LongMapTiles::pendingTiles() const
{
    return int(m_wanted.size());
}

const QImage *LongMapTiles::image(const LongTileKey &key) const
{
    auto found = m_images.constFind(key);
    if (found == m_images.constEnd())
        return nullptr;
    auto *self = const_cast<LongMapTiles *>(this);
    self->m_used[key] = ++self->m_clock;
    return &*found;
}

void LongMapTiles::requestCell(Index head, Index i, Index j, Index rowColBegin, Index rowColEnd,
                               Index colsPerPixel)
{
    m_scheduler->requestCell(head, i, j, rowColBegin, rowColEnd, colsPerPixel);
}

void LongMapTiles::runOnEngine(std::function<QString(const WindowRenderer &)> work,
                               std::function<void(const QString &)> deliver)
{
    m_scheduler->runOnEngine(std::move(work), std::move(deliver));
}

void LongMapTiles::materializeWindow(
    const TileWindow &window,
    std::function<void(std::shared_ptr<const SessionResult>, const QString &)> deliver)
{
    m_scheduler->materializeWindow(window, std::move(deliver));
}

void LongMapTiles::materializeVariantWindow(
    const SessionParameters &variant, const TileWindow &window,
    std::function<void(std::shared_ptr<const SessionResult>, const QString &)> deliver)
{
    m_scheduler->materializeVariantWindow(variant, window, std::move(deliver));
}

void LongMapTiles::takeTile(const LongTileKey &key, const QImage &image)
{
    if (image.isNull())
        return;
    m_images.insert(key, image);
    m_used.insert(key, ++m_clock);
    m_wanted.erase(std::remove(m_wanted.begin(), m_wanted.end(), key), m_wanted.end());
    evictImages();
    emit tileReady(key);
}

void LongMapTiles::evictImages()
{
    // The least recently drawn first, never a tile of the view being shown (a view may need
    // more tiles than the cache holds).
    while (m_images.size() > m_cacheTiles) {
        auto oldest = m_used.end();
        for (auto it = m_used.begin(); it != m_used.end(); ++it)
            if (!m_shown.contains(it.key()) && (oldest == m_used.end() || *it < *oldest))
                oldest = it;
        if (oldest == m_used.end())
            return;
        m_images.remove(oldest.key());
        m_used.erase(oldest);
    }
}

} // namespace attn
