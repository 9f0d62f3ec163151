// HeatmapRenderer (heatmaprenderer.h): the result and options it draws, the tiles and their
// order, the colour scale and the tile images, the caption and colourbar texts. Its layout is
// in heatmaplayout.cpp, its painting in heatmappaint.cpp, hit-testing and tooltips in
// heatmaphits.cpp, and its files (PNG, SVG, PDF, one per head) in heatmapfiles.cpp.

#include "ui/render/heatmaprenderer.h"

#include "ui/render/figurefile.h"

#include "core/attention/mask.h"
#include "core/base/threads.h"

#include <QFontMetricsF>

#include <algorithm>
#include <cmath>
#include <limits>

namespace attn {

using figure::formatTick;

namespace {

/// Work per cell of a tile's range scan or pooling (compare, log, accumulate: ~20 flops), for
/// the core's thread policy threadsForFlops (core/base/threads.h).
constexpr double kFlopsPerCell = 20;

} // namespace

HeatmapRenderer::HeatmapRenderer() = default;

void HeatmapRenderer::setResult(std::shared_ptr<const SessionResult> result)
{
    m_result = std::move(result);
    m_anyMasked = -1;
    invalidate();
}

void HeatmapRenderer::setOptions(const HeatmapOptions &options)
{
    if (options == m_options)
        return;
    m_options = options;
    invalidate();
}

void HeatmapRenderer::invalidate()
{
    m_images.clear();
    m_normValid = false;
}

QVector<HeatmapRenderer::TileSpec> HeatmapRenderer::tileSpecs() const
{
    QVector<TileSpec> specs;
    if (!m_result || !m_result->ok() || m_result->headCount() == 0)
        return specs;
    const int h = m_result->headCount();
    const bool weights = m_options.quantity == HeatmapQuantity::Weights;
    if (m_options.view == HeatmapView::SingleHead) {
        int head = std::clamp(m_options.head, 0, h);
        if (head == h && !weights)
            head = h - 1; // scores have no mean tile
        specs.append({head, head == h});
        return specs;
    }
    for (int head : headOrder())
        specs.append({head, false});
    if (m_options.showMean && weights && h > 1) // with one head the mean is that head
        specs.append({h, true});
    return specs;
}

std::vector<int> HeatmapRenderer::headOrder() const
{
    if (!m_result || !m_result->ok())
        return {};
    const int h = m_result->headCount();
    if (m_options.headSort != HeadOrderKey::Index && int(m_result->metrics.size()) == h)
        return attn::headOrder(m_result->metrics, m_options.headSort, m_options.headSortDescending);
    std::vector<int> order(std::size_t(std::max(h, 0)));
    for (int head = 0; head < h; ++head)
        order[std::size_t(head)] = head;
    return order;
}

int HeatmapRenderer::pinnedRow() const
{
    const int row = m_options.pinnedQuery;
    return m_result && m_result->ok() && row >= 0 && row < m_result->queryCount() ? row : -1;
}

bool HeatmapRenderer::vectorCells() const
{
    const QRect win = visibleCells();
    return !win.isEmpty() && qint64(win.width()) * win.height() <= maxVectorCells
        && win.width() <= m_options.maxImageSide && win.height() <= m_options.maxImageSide;
}

bool HeatmapRenderer::masksShown() const
{
    // Raw scores come before masking; a result without mask states has nothing to show.
    return m_result && m_options.quantity != HeatmapQuantity::Scores
        && m_result->maskState.rows() == m_result->queryCount()
        && m_result->maskState.cols() == m_result->keyCount();
}

bool HeatmapRenderer::cellMasksToApply() const
{
    if (!masksShown())
        return false;
    if (m_anyMasked < 0) { // one pass over n_q × n_k bytes per result, shared by every tile
        const MatrixB &state = m_result->maskState;
        const std::uint8_t *p = state.data();
        const Index size = state.size();
        // OR-reduced in chunks (vectorised): every mask kind present (the legend's widest text
        // names them all), until all four bits are seen.
        std::uint8_t all = 0;
        for (Index begin = 0; begin < size && (all & 15) != 15; begin += 4096) {
            std::uint8_t any = 0;
            for (Index k = begin, end = std::min(size, begin + 4096); k < end; ++k)
                any |= p[k];
            all |= any;
        }
        m_anyMasked = all & 15;
    }
    return m_anyMasked > 0;
}

int HeatmapRenderer::tileCount() const
{
    return int(tileSpecs().size());
}

const MatrixD *HeatmapRenderer::tileMatrix(const TileSpec &spec) const
{
    if (!m_result)
        return nullptr;
    switch (m_options.quantity) {
    case HeatmapQuantity::Weights:
        return spec.mean ? &m_result->weightsMean : &m_result->weights[std::size_t(spec.head)];
    case HeatmapQuantity::Scores:
        return &m_result->scores[std::size_t(spec.head)];
    case HeatmapQuantity::ScaledScores:
        return &m_result->scaledScores[std::size_t(spec.head)];
    }
    return nullptr;
}

bool HeatmapRenderer::signedWeightsShown() const
{
    return m_result && m_result->ok() && m_result->signedWeights
        && m_options.quantity == HeatmapQuantity::Weights;
}

ColorNorm HeatmapRenderer::norm() const
{
    if (m_normValid)
        return m_norm;
    // Signed weights take their data range, symmetric about 0, like the scores.
    m_emptyRange.clear();
    const bool weights = m_options.quantity == HeatmapQuantity::Weights && !signedWeightsShown();
    const bool log = m_options.scale == ColorScale::Log && weights;
    // Signed weights on the log scale: a symmetric log about 0 (their sizes span decades too).
    const bool signedLog = m_options.scale == ColorScale::Log && signedWeightsShown();
    const bool useMask = cellMasksToApply();
    const double top
        = m_options.fixedTop > 0 && std::isfinite(m_options.fixedTop) ? m_options.fixedTop : 1.0;
    ColorNorm n = log ? ColorNorm::log(std::clamp(m_options.logFloor, 1e-300, top * 0.5), top)
                      : ColorNorm::linear(0.0, top);
    const bool toMax = weights && !m_options.autoRange && m_options.maxWeightRange;
    if (m_result && m_result->ok() && (m_options.autoRange || !weights || toMax)) {
        double lo = std::numeric_limits<double>::infinity();
        double hi = -lo;
        const MatrixB &state = m_result->maskState;
        for (const TileSpec &spec : tileSpecs()) {
            const MatrixD *m = tileMatrix(spec);
            // One pass over the tile's cells (row-major, like the mask states); both cores for
            // long sequences.
            const double *values = m->data();
            const std::uint8_t *states = useMask ? state.data() : nullptr;
            const Index count = m->size();
            double tileLo = lo, tileHi = hi;
            [[maybe_unused]] const bool parallel
                = threadsForFlops(double(count) * kFlopsPerCell) > 1;
#pragma omp parallel for reduction(min : tileLo) reduction(max : tileHi) if (parallel)
            for (Index k = 0; k < count; ++k) {
                const double v = values[k];
                if (!std::isfinite(v) || (states && states[k]) || ((log || toMax) && v <= 0.0))
                    continue;
                tileLo = std::min(tileLo, v);
                tileHi = std::max(tileHi, v);
            }
            lo = tileLo;
            hi = tileHi;
        }
        if (toMax) {
            n = ColorNorm::upToLargestWeight(m_options.scale, hi);
        } else if (!(lo <= hi)) {
            // No finite unmasked cell sets the range: a diverging scale (signed weights, scores)
            // stays centred on 0 over [−1, 1], and the legend says why.
            m_emptyRange = emptyRangeText();
            if (!weights && colormap().isDiverging())
                n = ColorNorm::symmetric(1.0);
        } else {
            if (!(hi > lo)) { // a constant matrix: widen so the colour is the middle of the map
                const double pad = std::max(std::abs(lo) * 1e-3, 1e-12);
                lo = log ? lo / (1.0 + 1e-3) : lo - pad;
                hi = log ? hi * (1.0 + 1e-3) : hi + pad;
            }
            if (!weights && colormap().isDiverging())
                n = signedLog ? ColorNorm::symmetricLog(std::max(std::abs(lo), std::abs(hi)))
                              : ColorNorm::symmetric(std::max(std::abs(lo), std::abs(hi)));
            else
                n = log ? ColorNorm::log(lo, hi) : ColorNorm::linear(lo, hi);
        }
    }
    m_norm = n;
    m_normValid = true;
    return n;
}

QString HeatmapRenderer::emptyRangeText() const
{
    const MatrixB &state = m_result->maskState;
    const bool everyCellMasked
        = cellMasksToApply() && state.size() > 0 && (state.array() != std::uint8_t(0)).all();
    return everyCellMasked ? QStringLiteral("every cell masked")
                           : QStringLiteral("no finite unmasked cell");
}

QRgb HeatmapRenderer::maskedColor(std::uint8_t state) const
{
    return maskColor(colormap().id(), state);
}

QRect HeatmapRenderer::visibleCells() const
{
    if (!m_result || !m_result->ok())
        return {};
    const int nQ = int(m_result->queryCount()), nK = int(m_result->keyCount());
    if (nQ <= 0 || nK <= 0)
        return {};
    const QRect &w = m_options.window;
    if (w.isEmpty())
        return QRect(0, 0, nK, nQ);
    const int cols = std::clamp(w.width(), 1, nK), rows = std::clamp(w.height(), 1, nQ);
    return QRect(std::clamp(w.x(), 0, nK - cols), std::clamp(w.y(), 0, nQ - rows), cols, rows);
}

QImage HeatmapRenderer::tileImage(int tile) const
{
    return tileImage(tile, QSize(m_options.maxImageSide, m_options.maxImageSide));
}

QImage HeatmapRenderer::tileImage(int tile, QSize maxPixels) const
{
    const QVector<TileSpec> specs = tileSpecs();
    if (tile < 0 || tile >= specs.size())
        return {};
    const int side = std::max(1, m_options.maxImageSide);
    maxPixels
        = QSize(std::clamp(maxPixels.width(), 1, side), std::clamp(maxPixels.height(), 1, side));
    if (m_images.size() != specs.size())
        m_images = QVector<CachedImage>(specs.size());
    CachedImage &cached = m_images[tile];
    if (!cached.image.isNull() && cached.maxPixels == maxPixels)
        return cached.image;

    TileImageRequest request;
    request.values = tileMatrix(specs[tile]);
    // (all states 0: nothing to check per cell)
    request.maskState = cellMasksToApply() ? &m_result->maskState : nullptr;
    request.colormap = colormap().id();
    request.norm = norm();
    request.pooling = m_options.pooling;
    request.window = visibleCells();
    const QSize blocks = tilePoolingBlocks(request.window.size(), maxPixels);
    request.rowBlock = blocks.height();
    request.colBlock = blocks.width();
    cached = {maxPixels, buildTileImage(request)};
    return cached.image;
}

QString HeatmapRenderer::captionText() const
{
    return captionText(false);
}

QString HeatmapRenderer::captionText(bool vectorOutput) const
{
    if (!m_result)
        return {};
    QStringList lines;
    if (!m_options.captionPrefix.isEmpty())
        lines << m_options.captionPrefix;
    lines << m_result->params.caption();
    if (m_result->ok()) {
        // The colormap, scale and range (the view note below says what was renormalised).
        const QStringList bar = colorbarLines().mid(0, 2);
        const QString colour = QStringLiteral("colour: ") + bar.join(QStringLiteral(", "));
        lines << colour;
        if (!m_result->viewNote.isEmpty())
            lines << m_result->viewNote;
        if (const int pin = pinnedRow(); pin >= 0)
            lines << QStringLiteral("pinned query ") + m_result->indexedQueryLabel(pin);
        if (m_options.view == HeatmapView::Grid && m_options.headSort != HeadOrderKey::Index
            && int(m_result->metrics.size()) == m_result->headCount())
            lines << QStringLiteral("heads by mean %1, %2")
                         .arg(m_options.headSort == HeadOrderKey::Entropy
                                  ? QStringLiteral("entropy")
                                  : QStringLiteral("max weight"),
                              m_options.headSortDescending ? QStringLiteral("descending")
                                                           : QStringLiteral("ascending"));
        if (vectorOutput && !vectorCells())
            lines << QStringLiteral("cells as an image (over 64 \u00d7 64 per head)");
    }
    if (!m_options.captionNote.isEmpty())
        lines << m_options.captionNote;
    return lines.join(QStringLiteral("; "));
}

QStringList HeatmapRenderer::colorbarLines() const
{
    const ColorNorm cn = norm();
    const bool weights = m_options.quantity == HeatmapQuantity::Weights && !signedWeightsShown();
    QStringList lines;
    lines << QStringLiteral("%1, %2").arg(colormap().name(), cn.scaleName());
    // A fixed range up to the largest weight (fixedTop, the Long tab's scales) says so; a range
    // that no cell set (every cell masked) says that instead of "auto".
    const QString mode = !m_emptyRange.isEmpty()                ? m_emptyRange
        : m_options.autoRange || !weights                       ? QStringLiteral("auto")
        : m_options.maxWeightRange || m_options.fixedTop != 1.0 ? QStringLiteral("to max weight")
                                                                : QStringLiteral("fixed");
    lines << QStringLiteral("%1%2 [%3, %4]")
                 .arg(mode, signedWeightsShown() ? QStringLiteral(", centred on 0") : QString(),
                      formatTick(cn.vmin), formatTick(cn.vmax));
    if (signedWeightsShown())
        lines << QStringLiteral("signed weights, 0 = white");
    if (weights && m_result && m_result->ok()) {
        if (m_result->renormalized)
            lines << QStringLiteral("renormalised");
        else if (m_result->viewNote.contains(QLatin1String("hidden")))
            lines << QStringLiteral("raw weights");
    }
    return lines;
}

QString windowLegendText(const SessionParameters &p)
{
    return (p.window == 1 ? QStringLiteral("window: 1 key")
                          : QStringLiteral("window: %1 keys").arg(p.window))
        + (p.sinks == 1      ? QStringLiteral(" + 1 sink")
               : p.sinks > 1 ? QStringLiteral(" + %1 sinks").arg(p.sinks)
                             : QString());
}

} // namespace attn
