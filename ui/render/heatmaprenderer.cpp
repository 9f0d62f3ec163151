#include "ui/render/heatmaprenderer.h"

#include "ui/render/figurefile.h"
#include "ui/session/tensorsource.h"

#include "core/attention/mask.h"
#include "core/base/threads.h"

#include <QDir>
#include <QFileInfo>
#include <QFont>
#include <QFontMetricsF>
#include <QPageSize>
#include <QPainter>
#include <QPainterPath>
#include <QPdfWriter>
#include <QSaveFile>
#include <QSvgGenerator>

#include <algorithm>
#include <array>
#include <cmath>
#include <limits>

namespace attn {

namespace {

/// Work per cell of a tile's range scan or pooling (compare, log, accumulate: ~20 flops), for
/// the core's thread policy threadsForFlops (core/base/threads.h).
constexpr double kFlopsPerCell = 20;

using figure::formatTick;
using figure::hatchColor;
using figure::linearTicks;
using figure::logTicks;
using figure::makeFont;
using figure::niceStep;

QString formatValue(double v)
{
    if (std::isnan(v))
        return QStringLiteral("NaN");
    if (std::isinf(v))
        return v < 0 ? QStringLiteral("\u2212\u221e") : QStringLiteral("+\u221e");
    QString s = QString::number(v, 'g', 6);
    if (s.startsWith(QLatin1Char('-')))
        s.replace(0, 1, QChar(0x2212));
    return s;
}

/// The first of `choices` (longest first) whose width fits `width`; else the last one.
QString fittedText(const QFontMetricsF &fm, qreal width, std::initializer_list<QString> choices)
{
    for (const QString &c : choices)
        if (!c.isEmpty() && fm.horizontalAdvance(c) <= width) // empty: no such variant
            return c;
    return *(choices.end() - 1);
}

/// The window's legend entry: "window: 6 keys + 2 sinks" (the count, since libraries disagree
/// on w vs w + 1).
QString windowLegendText(const SessionParameters &p)
{
    return (p.window == 1 ? QStringLiteral("window: 1 key")
                          : QStringLiteral("window: %1 keys").arg(p.window))
        + (p.sinks == 1      ? QStringLiteral(" + 1 sink")
               : p.sinks > 1 ? QStringLiteral(" + %1 sinks").arg(p.sinks)
                             : QString());
}

} // namespace

QVector<int> axisTicks(int first, int count, qreal cell, qreal need, int *step)
{
    QVector<int> ticks;
    const int k = cell > 0 ? niceStep(need / cell) : std::max(count, 1);
    if (step)
        *step = k;
    if (count <= 0)
        return ticks;
    const int last = first + count - 1;
    // Two labels a and b > a do not overlap when their centres are `need` pixels apart.
    const auto apart = [&](int a, int b) { return (b - a) * cell >= need * (1.0 - 1e-9); };
    ticks.append(first);
    for (int i = (first / k + 1) * k; i < last; i += k) {
        if (apart(first, i) && apart(i, last))
            ticks.append(i);
    }
    if (last > first && apart(ticks.last(), last))
        ticks.append(last);
    return ticks;
}

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

ColorNorm HeatmapRenderer::norm() const
{
    if (m_normValid)
        return m_norm;
    const bool weights = m_options.quantity == HeatmapQuantity::Weights;
    const bool log = m_options.scale == ColorScale::Log && weights;
    const bool useMask = cellMasksToApply();
    const double top
        = m_options.fixedTop > 0 && std::isfinite(m_options.fixedTop) ? m_options.fixedTop : 1.0;
    ColorNorm n = log ? ColorNorm::log(std::clamp(m_options.logFloor, 1e-300, top * 0.5), top)
                      : ColorNorm::linear(0.0, top);
    if (m_result && m_result->ok() && (m_options.autoRange || !weights)) {
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
                if (!std::isfinite(v) || (states && states[k]) || (log && v <= 0.0))
                    continue;
                tileLo = std::min(tileLo, v);
                tileHi = std::max(tileHi, v);
            }
            lo = tileLo;
            hi = tileHi;
        }
        if (lo <= hi) {
            if (!(hi > lo)) { // a constant matrix: widen so the colour is the middle of the map
                const double pad = std::max(std::abs(lo) * 1e-3, 1e-12);
                lo = log ? lo / (1.0 + 1e-3) : lo - pad;
                hi = log ? hi * (1.0 + 1e-3) : hi + pad;
            }
            if (!weights && colormap().isDiverging())
                n = ColorNorm::symmetric(std::max(std::abs(lo), std::abs(hi)));
            else
                n = log ? ColorNorm::log(lo, hi) : ColorNorm::linear(lo, hi);
        }
    }
    m_norm = n;
    m_normValid = true;
    return n;
}

QRgb HeatmapRenderer::maskedColor(std::uint8_t state) const
{
    return maskColor(m_options.colormap, state);
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
    request.colormap = m_options.colormap;
    request.norm = norm();
    request.pooling = m_options.pooling;
    request.window = visibleCells();
    const QSize blocks = tilePoolingBlocks(request.window.size(), maxPixels);
    request.rowBlock = blocks.height();
    request.colBlock = blocks.width();
    cached = {maxPixels, buildTileImage(request)};
    return cached.image;
}

HeatmapLayout HeatmapRenderer::layout(const QRectF &bounds) const
{
    return layoutImpl(bounds, captionText());
}

HeatmapLayout HeatmapRenderer::layoutImpl(const QRectF &bounds, const QString &caption) const
{
    HeatmapLayout lay;
    const qreal f = m_options.fontPixelSize > 0
        ? m_options.fontPixelSize
        : std::clamp(std::min(bounds.width() / 70.0, bounds.height() / 45.0), 10.0, 16.0);
    lay.fontPixelSize = f;
    const QFontMetricsF fm(makeFont(f));
    const qreal lineH = fm.height();
    const qreal pad = 0.6 * f;
    QRectF r = bounds.adjusted(pad, pad, -pad, -pad);
    if (m_options.showCaption) {
        // The caption wraps onto at most three lines.
        const qreal textH = fm.boundingRect(QRectF(0, 0, std::max<qreal>(r.width(), 1.0), 1e6),
                                            Qt::AlignLeft | Qt::TextWordWrap, caption)
                                .height();
        const qreal captionH = std::clamp(textH, lineH, 3 * lineH) + 0.2 * lineH;
        lay.caption = QRectF(r.left(), r.top(), r.width(), captionH);
        r.setTop(r.top() + captionH + 0.4 * f);
    }
    const QVector<TileSpec> specs = tileSpecs();
    const QRect win = visibleCells();
    if (specs.isEmpty() || win.isEmpty() || r.width() <= 0 || r.height() <= 0)
        return lay;
    lay.cells = win;

    const SessionResult &res = *m_result;
    const SessionParameters &p = res.params;
    // The tiles show the window: nQ × nK cells from query win.y(), key win.x().
    const int nQ = win.height();
    const int nK = win.width();

    // Legend column on the right: colourbar, its labels, the colormap name and the mask legend.
    QStringList legendTexts = {QStringLiteral("padding-masked"), QStringLiteral("fully masked row"),
                               QStringLiteral("RdBu_r, linear"), QStringLiteral("\u22120.0001")};
    if (res.params.window > 0)
        legendTexts << windowLegendText(res.params);
    if (cellMasksToApply()) // the longest mask entry names every kind present
        legendTexts << QString::fromStdString(maskStateText(std::uint8_t(m_anyMasked)));
    qreal legendW = 0;
    for (const QString &t : legendTexts)
        legendW = std::max(legendW, fm.horizontalAdvance(t));
    legendW = std::min(legendW + 1.8 * f, r.width() * 0.3);
    lay.legend = QRectF(r.right() - legendW, r.top(), legendW, r.height());
    const QRectF grid(r.left(), r.top(), r.width() - legendW - f, r.height());

    // Label sizes shared by every tile.
    const qreal elideW = 7.0 * f;
    const int lastQuery = res.originalQuery(win.bottom()), lastKey = res.originalKey(win.right());
    qreal yLabelW = fm.horizontalAdvance(QString::number(std::max(lastQuery, 0)));
    const bool queryTokens = !p.tokens.empty();
    const bool keyTokens = p.kind == AttentionKind::EncoderDecoder ? Index(p.tokens.size()) > p.n
                                                                   : !p.tokens.empty();
    // Measure at most a few hundred labels (enough to find the widest; layout() runs on every
    // mouse move).
    const int measureStepQ = std::max(1, nQ / 256), measureStepK = std::max(1, nK / 256);
    if (queryTokens) {
        for (int i = win.top(); i <= win.bottom(); i += measureStepQ)
            yLabelW = std::max(yLabelW, std::min(elideW, fm.horizontalAdvance(queryAxisLabel(i))));
        yLabelW = std::max(yLabelW,
                           std::min(elideW, fm.horizontalAdvance(queryAxisLabel(win.bottom()))));
    }
    qreal xLabelW = fm.horizontalAdvance(QString::number(std::max(lastKey, 0)));
    lay.rotateKeyLabels = keyTokens;
    if (keyTokens) {
        for (int j = win.left(); j <= win.right(); j += measureStepK)
            xLabelW = std::max(xLabelW, std::min(elideW, fm.horizontalAdvance(keyAxisLabel(j))));
        xLabelW
            = std::max(xLabelW, std::min(elideW, fm.horizontalAdvance(keyAxisLabel(win.right()))));
    }
    const qreal tick = 0.3 * f;
    const qreal marker = 0.55 * f; // fully-masked-row marker strip
    const qreal left = lineH + 0.3 * f + yLabelW + tick + marker;
    const qreal top = lineH * 1.3;
    const qreal bottom = tick + (lay.rotateKeyLabels ? xLabelW : lineH) + 0.1 * f + lineH + 0.7 * f;
    const qreal right = 1.0 * f;

    // The map inside a box of aw × ah pixels: square cells (the short side widened to
    // minMapSide, or the room there is, so a very non-square map is no sliver), or the whole
    // box when stretched. Cells of 4 pixels or more are whole pixels, every cell the same size.
    const qreal minSide = std::max<qreal>(m_options.minMapSide, 0);
    // Whole pixels: down, unless that takes a widened side below its target `atLeast`.
    const auto whole = [](qreal c, int cells, qreal atLeast, qreal room) {
        if (c < 4.0)
            return c;
        const qreal down = std::floor(c), up = std::ceil(c);
        return down * cells >= atLeast - 1e-9 || up * cells > room + 1e-9 ? down : up;
    };
    const auto mapIn = [&](qreal aw, qreal ah) -> QSizeF {
        if (!(aw > 0) || !(ah > 0))
            return {0, 0};
        if (m_options.stretch)
            return {whole(aw / nK, nK, 0, aw), whole(ah / nQ, nQ, 0, ah)};
        const qreal c = std::min(aw / nK, ah / nQ);
        qreal cw = c, ch = c, wantW = 0, wantH = 0;
        if (nK < nQ) { // tall: widen
            wantW = std::min({minSide, nQ * c, aw});
            cw = std::max(nK * c, wantW) / nK;
        } else if (nQ < nK) { // wide: heighten
            wantH = std::min({minSide, nK * c, ah});
            ch = std::max(nQ * c, wantH) / nQ;
        }
        return {whole(cw, nK, wantW, aw), whole(ch, nQ, wantH, ah)};
    };
    const auto shortSide
        = [&](QSizeF cellWH) { return std::min(cellWH.width() * nK, cellWH.height() * nQ); };

    // Choose the column count that gives the biggest maps (square cells: the biggest cells;
    // stretched: the longest short side); in a scrolling view, of those at the minimum size
    // if there are any.
    const int count = int(specs.size());
    int cols = 1;
    QSizeF cellWH(0, 0);
    qreal bestScore = -1;
    bool bestAtMinimum = false;
    for (int c = 1; c <= count; ++c) {
        const int rows = (count + c - 1) / c;
        const qreal fw = grid.width() / c, fh = grid.height() / rows;
        const QSizeF s = mapIn(fw - left - right, fh - top - bottom);
        const qreal score = m_options.stretch ? shortSide(s) : s.width() * nK * s.height() * nQ;
        const bool atMinimum = m_options.scrollable && shortSide(s) >= minSide - 0.5;
        if ((atMinimum && !bestAtMinimum)
            || (atMinimum == bestAtMinimum && score > bestScore * 1.0001 + 1e-12)) {
            bestScore = score;
            bestAtMinimum = atMinimum;
            cols = c;
            cellWH = s;
        }
    }
    // A scrolling view: tiles below the minimum keep it, in as many columns as the width
    // allows, each map's box square (no taller than the visible height) and the rows running
    // below the bounds.
    const bool scroll = m_options.scrollable && shortSide(cellWH) < minSide - 0.5;
    if (scroll) {
        const qreal boxMaxH = std::max(minSide, grid.height() - top - bottom);
        for (int c = count; c >= 1; --c) {
            const qreal aw = grid.width() / c - left - right;
            const QSizeF s = mapIn(aw, std::clamp(aw, minSide, boxMaxH));
            if (shortSide(s) >= minSide - 0.5 || c == 1) {
                cols = c;
                cellWH = s;
                break;
            }
        }
    }
    lay.cellWidth = std::max(cellWH.width(), 0.0);
    lay.cellHeight = std::max(cellWH.height(), 0.0);
    lay.cellSize = std::min(lay.cellWidth, lay.cellHeight);
    const qreal cellW = lay.cellWidth, cellH = lay.cellHeight;
    const int rows = (count + cols - 1) / cols;
    const qreal tileW = left + nK * cellW + right;
    const qreal tileH = top + nQ * cellH + bottom;
    // Centre the tiles and the legend column together; the legend follows the last column.
    const qreal x0 = grid.left() + std::max(0.0, (r.width() - cols * tileW - f - legendW) / 2);
    lay.legend.moveLeft(x0 + cols * tileW + f);
    const qreal y0
        = grid.top() + (scroll ? 0.0 : std::max(0.0, (grid.height() - rows * tileH) / 2));
    lay.contentHeight = scroll ? std::max(bounds.height(), y0 + rows * tileH + pad - bounds.top())
                               : bounds.height();
    for (int t = 0; t < count; ++t) {
        HeatmapLayout::Tile tile;
        tile.head = specs[t].head;
        tile.mean = specs[t].mean;
        tile.title = tile.mean ? QStringLiteral("mean over heads")
                               : QStringLiteral("head %1").arg(tile.head);
        // ALiBi: the head's slope m_h next to its number.
        if (!tile.mean && m_result && tile.head >= 0
            && std::size_t(tile.head) < m_result->alibiSlopes.size()) {
            const QString m
                = QString::number(m_result->alibiSlopes[std::size_t(tile.head)], 'g', 3);
            tile.title += QStringLiteral(" (m = %1)").arg(m);
            tile.shortTitle = QStringLiteral("h%1 m=%2").arg(tile.head).arg(m);
        }
        // Attention sinks: the head's mean weight mass on them (rows past the window; none when
        // no row is).
        if (!tile.mean && m_result && tile.head >= 0
            && std::size_t(tile.head) < m_result->sinkMass.size()
            && std::isfinite(m_result->sinkMass[std::size_t(tile.head)])) {
            const QString mass
                = QString::number(m_result->sinkMass[std::size_t(tile.head)], 'f', 2);
            tile.title += QStringLiteral(" \u00b7 sinks %1").arg(mass);
            tile.shortTitle = (tile.shortTitle.isEmpty() ? QStringLiteral("h%1").arg(tile.head)
                                                         : tile.shortTitle)
                + QStringLiteral(" s=%1").arg(mass);
        }
        tile.frame = QRectF(x0 + (t % cols) * tileW, y0 + (t / cols) * tileH, tileW, tileH);
        tile.map = QRectF(tile.frame.left() + left, tile.frame.top() + top, nK * cellW, nQ * cellH);
        lay.tiles.append(tile);
    }

    // Axis labels: the first and last position and regular steps between, none overlapping.
    const qreal rowNeed = lineH * 1.05;
    const qreal colNeed = lay.rotateKeyLabels ? lineH * 1.05 : xLabelW + 0.6 * f;
    for (int i : axisTicks(win.y(), nQ, cellH, rowNeed, &lay.tickStepRows))
        lay.rowLabels.append({i, fm.elidedText(queryAxisLabel(i), Qt::ElideRight, elideW)});
    // The pinned query is always labelled: labels too close to it give way.
    if (const int pin = pinnedRow(); pin >= win.top() && pin <= win.bottom()) {
        lay.rowLabels.erase(std::remove_if(lay.rowLabels.begin(), lay.rowLabels.end(),
                                           [&](const HeatmapLayout::AxisLabel &l) {
                                               return l.index != pin
                                                   && std::abs(l.index - pin) * cellH
                                                   < rowNeed * (1.0 - 1e-9);
                                           }),
                            lay.rowLabels.end());
        const auto at = std::lower_bound(
            lay.rowLabels.begin(), lay.rowLabels.end(), pin,
            [](const HeatmapLayout::AxisLabel &l, int row) { return l.index < row; });
        if (at == lay.rowLabels.end() || at->index != pin)
            lay.rowLabels.insert(at,
                                 {pin, fm.elidedText(queryAxisLabel(pin), Qt::ElideRight, elideW)});
    }
    for (int j : axisTicks(win.x(), nK, cellW, colNeed, &lay.tickStepCols))
        lay.colLabels.append({j, fm.elidedText(keyAxisLabel(j), Qt::ElideRight, elideW)});

    // Colourbar: from the first map's top, at least 8 lines tall, leaving room for the legend.
    const QRectF firstMap = lay.tiles.first().map;
    const qreal barTop = firstMap.top();
    const qreal legendLines = 7.5 * lineH;
    qreal barH = std::max(firstMap.height(), std::min(rows * tileH * 0.5, 18.0 * f));
    barH = std::min(barH, r.bottom() - barTop - legendLines);
    barH = std::max(barH, 4.0 * f);
    lay.colorbar = QRectF(lay.legend.left() + 0.2 * f, barTop, 1.1 * f, barH);
    return lay;
}

void HeatmapRenderer::paint(QPainter *painter, const QRectF &bounds) const
{
    paintImpl(painter, bounds, false);
}

void HeatmapRenderer::paintLegend(QPainter *painter, const QRectF &bounds) const
{
    paintImpl(painter, bounds, false, true);
}

void HeatmapRenderer::paintImpl(QPainter *painter, const QRectF &bounds, bool vectorOutput,
                                bool legendOnly) const
{
    painter->save();
    painter->fillRect(bounds, m_options.background);
    const QString caption = captionText(vectorOutput);
    const HeatmapLayout lay = layoutImpl(bounds, caption);
    const qreal f = lay.fontPixelSize;
    const QFont font = makeFont(f);
    const QFont bold = makeFont(f, true);
    const QFontMetricsF fm(font);
    const QColor fg = m_options.foreground;
    QColor muted = fg;
    muted.setAlphaF(0.75);

    painter->setFont(font);
    painter->setPen(fg);
    if (!m_result || !m_result->ok() || lay.tiles.isEmpty() || lay.cellSize <= 0) {
        const QString text = !m_result ? QStringLiteral("No result yet")
            : !m_result->ok()          ? QStringLiteral("Cannot compute: ") + m_result->error
            : lay.tiles.isEmpty()      ? QStringLiteral("Nothing to show")
                                       : QStringLiteral("Too small to draw the heatmaps");
        if (!legendOnly)
            painter->drawText(bounds, Qt::AlignCenter | Qt::TextWordWrap, text);
        painter->restore();
        return;
    }

    const SessionResult &res = *m_result;
    const QRect win = lay.cells; // the visible cells: nQ × nK from query r0, key c0
    const int r0 = win.y(), c0 = win.x();
    const int nQ = win.height();
    const bool useMask = masksShown();

    if (m_options.showCaption && !legendOnly) {
        painter->setPen(fg);
        painter->drawText(lay.caption, Qt::AlignLeft | Qt::AlignTop | Qt::TextWordWrap, caption);
    }

    // Device pixels per logical pixel, to build hatched images at the resolution they show at.
    qreal devScale = painter->device()->devicePixelRatioF() * std::abs(painter->transform().m11());
    if (vectorOutput)
        devScale = std::max<qreal>(devScale, 2.0);
    devScale = std::max<qreal>(devScale, 1.0);

    // Which mask states exist (for hatching and the legend): present[s] for each combination s
    // of the four MaskStateBits.
    std::array<bool, 16> present {};
    if (useMask) {
        for (Index i = 0; i < res.maskState.rows(); ++i)
            for (Index j = 0; j < res.maskState.cols(); ++j)
                present[res.maskState(i, j) & 15] = true;
    }
    const bool anyMasked = std::find(present.begin() + 1, present.end(), true) != present.end();
    const std::vector<std::uint8_t> noFlags;
    const std::vector<std::uint8_t> &fullyMasked
        = res.fullyMasked.empty() ? noFlags : res.fullyMasked.front();
    const bool anyFullyMasked
        = useMask && std::any_of(fullyMasked.begin(), fullyMasked.end(), [](auto v) { return v; });

    // A scrolling view paints a band of its tiles: the others are skipped.
    const QRectF clip = painter->hasClipping() ? painter->clipBoundingRect() : QRectF();
    // One wording for every tile's title (full, short, "h3"): the longest that fits in all.
    const auto titleVariants = [](const HeatmapLayout::Tile &tile) {
        return std::array<QString, 3> {tile.title, tile.shortTitle,
                                       tile.mean ? QStringLiteral("mean")
                                                 : QStringLiteral("h%1").arg(tile.head)};
    };
    int titleLevel = 0;
    {
        const QFontMetricsF bfm(bold);
        for (const HeatmapLayout::Tile &tile : lay.tiles) {
            const std::array<QString, 3> v = titleVariants(tile);
            int level = 0;
            while (level < 2
                   && (v[level].isEmpty() || bfm.horizontalAdvance(v[level]) > tile.frame.width()))
                ++level;
            titleLevel = std::max(titleLevel, level);
        }
    }
    for (int t = 0; !legendOnly && t < lay.tiles.size(); ++t) {
        const HeatmapLayout::Tile &tile = lay.tiles[t];
        const QRectF &map = tile.map;
        if (!clip.isNull() && !clip.intersects(tile.frame))
            continue;

        // Title.
        painter->setFont(bold);
        painter->setPen(fg);
        painter->drawText(
            QRectF(map.left(), tile.frame.top(), map.width(),
                   lay.cellSize > 0 ? map.top() - tile.frame.top() - 0.15 * f : fm.height()),
            Qt::AlignHCenter | Qt::AlignBottom | Qt::TextDontClip, [&] {
                const std::array<QString, 3> v = titleVariants(tile);
                int level = titleLevel;
                while (level < 2 && v[level].isEmpty()) // a tile without a short wording
                    ++level;
                return v[level];
            }());
        painter->setFont(font);

        // SVG and PDF of small maps: a rectangle per cell.
        if (vectorOutput && vectorCells()) {
            paintVectorCells(painter, t, map, lay, anyMasked);
        } else {
            // Heatmap image: one pixel per cell (pooled to the device pixels when cells are
            // smaller), scaled with no smoothing. When cells are big, the image is enlarged to the
            // device size first and masked cells hatched on it.
            const QSizeF devSize = map.size() * devScale;
            QImage image = tileImage(
                t, QSize(int(std::ceil(devSize.width())), int(std::ceil(devSize.height()))));
            image = enlargedTileImage(std::move(image), devSize, lay.cellSize * devScale,
                                      vectorOutput, anyMasked ? &res.maskState : nullptr, win,
                                      m_options.colormap, f * devScale);
            painter->setRenderHint(QPainter::SmoothPixmapTransform, false);
            painter->drawImage(map, image);
        }
        painter->setPen(QPen(muted, 0));
        painter->setBrush(Qt::NoBrush);
        painter->drawRect(map);

        // The pinned query: bars just outside its row, across the map and at both ends.
        if (const int pin = pinnedRow(); pin >= r0 && pin < r0 + nQ) {
            const qreal w = pinnedOutlineWidth;
            const qreal y0 = map.top() + (pin - r0) * lay.cellHeight, y1 = y0 + lay.cellHeight;
            const QColor c = pinnedRowColor();
            painter->fillRect(QRectF(map.left() - w, y0 - w, map.width() + 2 * w, w), c);
            painter->fillRect(QRectF(map.left() - w, y1, map.width() + 2 * w, w), c);
            painter->fillRect(QRectF(map.left() - w, y0, w, y1 - y0), c);
            painter->fillRect(QRectF(map.right(), y0, w, y1 - y0), c);
        }

        // Fully masked rows: a red strip at the row's left edge (runs of rows merged).
        if (anyFullyMasked) {
            const std::vector<std::uint8_t> &flags
                = tile.mean || std::size_t(tile.head) >= res.fullyMasked.size()
                ? fullyMasked
                : res.fullyMasked[std::size_t(tile.head)];
            const qreal cell = lay.cellHeight;
            const int rowEnd = std::min(r0 + nQ, int(flags.size()));
            for (int i = r0; i < rowEnd;) {
                if (!flags[std::size_t(i)]) {
                    ++i;
                    continue;
                }
                int end = i;
                while (end < rowEnd && flags[std::size_t(end)])
                    ++end;
                painter->fillRect(QRectF(map.left() - 0.5 * f, map.top() + (i - r0) * cell, 0.4 * f,
                                         std::max((end - i) * cell, 1.0)),
                                  fullyMaskedMarkerColor());
                i = end;
            }
        }

        // Ticks and labels: query i on the left (rows), key j at the bottom (columns).
        painter->setPen(QPen(fg, 0));
        const qreal tick = 0.3 * f;
        const qreal labelRight = map.left() - 0.55 * f - tick;
        for (const HeatmapLayout::AxisLabel &label : lay.rowLabels) {
            const qreal y = map.top() + (label.index - r0 + 0.5) * lay.cellHeight;
            painter->setPen(QPen(label.index == pinnedRow() ? pinnedRowColor() : fg, 0));
            painter->drawLine(QPointF(map.left() - 0.55 * f - tick, y),
                              QPointF(map.left() - 0.55 * f, y));
            painter->drawText(
                QRectF(labelRight - 8.0 * f - 0.15 * f, y - fm.height() / 2, 8.0 * f, fm.height()),
                Qt::AlignRight | Qt::AlignVCenter, label.text);
        }
        painter->setPen(QPen(fg, 0));
        qreal labelsBottom = map.bottom() + tick;
        for (const HeatmapLayout::AxisLabel &label : lay.colLabels) {
            const qreal x = map.left() + (label.index - c0 + 0.5) * lay.cellWidth;
            painter->drawLine(QPointF(x, map.bottom()), QPointF(x, map.bottom() + tick));
            if (lay.rotateKeyLabels) {
                painter->save();
                painter->translate(x, map.bottom() + tick + 0.1 * f);
                painter->rotate(-90);
                const qreal w = fm.horizontalAdvance(label.text);
                painter->drawText(QRectF(-w, -fm.height() / 2, w, fm.height()),
                                  Qt::AlignRight | Qt::AlignVCenter, label.text);
                painter->restore();
                labelsBottom = std::max(labelsBottom, map.bottom() + tick + 0.1 * f + w);
            } else {
                painter->drawText(QRectF(x - 4.0 * f, map.bottom() + tick, 8.0 * f, fm.height()),
                                  Qt::AlignHCenter | Qt::AlignTop, label.text);
                labelsBottom = std::max(labelsBottom, map.bottom() + tick + fm.height());
            }
        }
        // Axis titles.
        painter->setPen(muted);
        painter->drawText(
            QRectF(map.left() - 2 * f, labelsBottom + 0.1 * f, map.width() + 4 * f, fm.height()),
            Qt::AlignHCenter | Qt::AlignTop | Qt::TextDontClip,
            fittedText(
                fm, map.width() + 4 * f,
                {QStringLiteral("key j (column)"), QStringLiteral("key j"), QStringLiteral("j")}));
        painter->save();
        painter->translate(tile.frame.left() + fm.height() / 2, map.center().y());
        painter->rotate(-90);
        painter->drawText(
            QRectF(-map.height() / 2 - 2 * f, -fm.height() / 2, map.height() + 4 * f, fm.height()),
            Qt::AlignCenter | Qt::TextDontClip,
            fittedText(
                fm, map.height() + 4 * f,
                {QStringLiteral("query i (row)"), QStringLiteral("query i"), QStringLiteral("i")}));
        painter->restore();
        painter->setPen(fg);
    }

    // Colourbar with ticks, the quantity, colormap name, scale and range, and the mask legend.
    const Colormap cmap = colormap();
    const ColorNorm cn = norm();
    const QRectF bar = lay.colorbar;
    const QString quantity = m_options.quantity == HeatmapQuantity::Weights
        ? QStringLiteral("weight")
        : m_options.quantity == HeatmapQuantity::Scores ? QStringLiteral("raw score")
                                                        : QStringLiteral("scaled score");
    painter->setFont(bold);
    painter->drawText(
        QRectF(bar.left(), bar.top() - fm.height() * 1.8, lay.legend.width(), fm.height() * 1.2),
        Qt::AlignLeft | Qt::AlignBottom, quantity);
    painter->setFont(font);
    QImage strip = cmap.strip(Colormap::size, Qt::Vertical);
    if (vectorOutput || bar.height() * devScale > strip.height())
        strip = strip.scaled(std::max(1, qRound(bar.width() * devScale)),
                             std::max(1, qRound(bar.height() * devScale)), Qt::IgnoreAspectRatio,
                             Qt::FastTransformation);
    painter->drawImage(bar, strip);
    painter->setPen(QPen(muted, 0));
    painter->drawRect(bar);
    painter->setPen(QPen(fg, 0));
    const QVector<double> ticks = cn.scale == ColorScale::Log ? logTicks(cn.vmin, cn.vmax)
                                                              : linearTicks(cn.vmin, cn.vmax, 4);
    for (double v : ticks) {
        const double t = cn(v);
        if (!(t >= -1e-9 && t <= 1 + 1e-9))
            continue;
        const qreal y = bar.bottom() - t * bar.height();
        painter->drawLine(QPointF(bar.right(), y), QPointF(bar.right() + 0.3 * f, y));
        painter->drawText(QRectF(bar.right() + 0.45 * f, y - fm.height() / 2,
                                 lay.legend.right() - bar.right(), fm.height()),
                          Qt::AlignLeft | Qt::AlignVCenter, formatTick(v));
    }
    qreal y = bar.bottom() + 0.6 * f;
    auto legendLine = [&](const QString &text) {
        painter->drawText(QRectF(lay.legend.left(), y, lay.legend.width(), fm.height()),
                          Qt::AlignLeft | Qt::AlignVCenter,
                          fm.elidedText(text, Qt::ElideRight, lay.legend.width()));
        y += fm.height() * 1.15;
    };
    for (const QString &line : colorbarLines())
        legendLine(line);
    y += 0.3 * f;
    auto swatch = [&](QRgb base, int hatch, const QString &text) {
        const QRectF box(lay.legend.left(), y + 0.1 * fm.height(), 1.1 * f, 0.8 * fm.height());
        figure::drawLegendSwatch(painter, box, base, hatch, f, devScale, muted);
        painter->setPen(fg);
        // A label wider than the legend column wraps onto more lines, never elided.
        const qreal textW = std::max(lay.legend.right() - box.right() - 0.4 * f, 1.0);
        if (fm.horizontalAdvance(text) > textW) {
            const QRectF wrapped
                = fm.boundingRect(QRectF(0, 0, textW, 1e6), Qt::TextWordWrap, text);
            painter->drawText(QRectF(box.right() + 0.4 * f, y, textW, wrapped.height()),
                              Qt::AlignLeft | Qt::AlignTop | Qt::TextWordWrap, text);
            y += std::max(wrapped.height(), fm.height()) + fm.height() * 0.15;
        } else {
            painter->drawText(QRectF(box.right() + 0.4 * f, y, textW, fm.height()),
                              Qt::AlignLeft | Qt::AlignVCenter, text);
            y += fm.height() * 1.15;
        }
    };
    // One entry per mask state present, hatched as its cells and named as their tooltips
    // (maskStateText); the window alone says its width.
    for (std::uint8_t state = 1; state < 16; ++state) {
        if (present[state])
            swatch(maskedColor(state), state,
                   state == MaskWindow ? windowLegendText(res.params)
                                       : QString::fromStdString(maskStateText(state)));
    }
    if (anyFullyMasked) {
        const QRectF box(lay.legend.left() + 0.35 * f, y + 0.1 * fm.height(), 0.4 * f,
                         0.8 * fm.height());
        painter->fillRect(box, fullyMaskedMarkerColor());
        painter->drawText(QRectF(lay.legend.left() + 1.5 * f, y, lay.legend.width(), fm.height()),
                          Qt::AlignLeft | Qt::AlignVCenter, QStringLiteral("fully masked row"));
        y += fm.height() * 1.15;
    }
    if (res.nonFinite.found)
        swatch(Colormap::badColor(), 0, QStringLiteral("NaN/Inf"));
    painter->restore();
}

void HeatmapRenderer::paintVectorCells(QPainter *painter, int tile, const QRectF &map,
                                       const HeatmapLayout &lay, bool anyMasked) const
{
    const QRect win = lay.cells;
    // The colours of the one-pixel-per-cell image, so vector and pixel output agree.
    const QImage image = tileImage(tile, win.size());
    if (image.size() != win.size())
        return;
    const qreal cw = lay.cellWidth, ch = lay.cellHeight;
    // Each cell overlaps its right and lower neighbour a little, so viewers that antialias
    // rectangle edges show no seams between cells.
    const qreal overlapX = std::min(0.5, 0.05 * cw), overlapY = std::min(0.5, 0.05 * ch);
    const MatrixB *state = anyMasked && cellMasksToApply() ? &m_result->maskState : nullptr;
    painter->save();
    painter->setRenderHint(QPainter::Antialiasing, false);
    for (int y = 0; y < win.height(); ++y) {
        for (int x = 0; x < win.width(); ++x) {
            const QRectF cell(map.left() + x * cw, map.top() + y * ch,
                              cw + (x + 1 < win.width() ? overlapX : 0.0),
                              ch + (y + 1 < win.height() ? overlapY : 0.0));
            painter->fillRect(cell, QColor(image.pixel(x, y)));
        }
    }
    if (!state) {
        painter->restore();
        return;
    }
    // Hatching as line segments clipped to each masked cell by hand (QSvgGenerator ignores
    // clipping): causal "/", padding "\", custom "|", outside the window "—".
    const qreal spacing = std::max(std::min(cw, ch) / 3.0, 1.0);
    painter->setRenderHint(QPainter::Antialiasing, true);
    for (int y = 0; y < win.height(); ++y) {
        for (int x = 0; x < win.width(); ++x) {
            const std::uint8_t bits = (*state)(win.y() + y, win.x() + x);
            if (!bits)
                continue;
            const QRectF c(map.left() + x * cw, map.top() + y * ch, cw, ch);
            QPen pen(hatchColor(maskedColor(bits)), std::max(0.4, 0.08 * std::min(cw, ch)));
            pen.setCapStyle(Qt::FlatCap);
            painter->setPen(pen);
            if (bits & MaskCausal) // x + y = k
                for (qreal k = c.left() + c.top() + spacing / 2; k < c.right() + c.bottom();
                     k += spacing) {
                    const qreal xa = std::max(c.left(), k - c.bottom());
                    const qreal xb = std::min(c.right(), k - c.top());
                    if (xb > xa)
                        painter->drawLine(QPointF(xa, k - xa), QPointF(xb, k - xb));
                }
            if (bits & MaskPadding) // y − x = k
                for (qreal k = c.top() - c.right() + spacing / 2; k < c.bottom() - c.left();
                     k += spacing) {
                    const qreal xa = std::max(c.left(), c.top() - k);
                    const qreal xb = std::min(c.right(), c.bottom() - k);
                    if (xb > xa)
                        painter->drawLine(QPointF(xa, xa + k), QPointF(xb, xb + k));
                }
            if (bits & MaskCustom)
                for (qreal px = c.left() + spacing / 2; px < c.right(); px += spacing)
                    painter->drawLine(QPointF(px, c.top()), QPointF(px, c.bottom()));
            if (bits & MaskWindow)
                for (qreal py = c.top() + spacing / 2; py < c.bottom(); py += spacing)
                    painter->drawLine(QPointF(c.left(), py), QPointF(c.right(), py));
        }
    }
    painter->restore();
}

int HeatmapRenderer::queryLabelAt(const QRectF &bounds, const QPointF &pos) const
{
    const HeatmapLayout lay = layout(bounds);
    if (!m_result || lay.cellHeight <= 0)
        return -1;
    for (const HeatmapLayout::Tile &tile : lay.tiles) {
        const QRectF band(tile.frame.left(), tile.map.top(), tile.map.left() - tile.frame.left(),
                          tile.map.height());
        if (band.contains(pos))
            return lay.cells.y()
                + std::clamp(int(std::floor((pos.y() - tile.map.top()) / lay.cellHeight)), 0,
                             lay.cells.height() - 1);
    }
    return -1;
}

namespace {

/// A number for the clipboard: 17 significant digits (the double read back exactly).
QString copyNumber(double v)
{
    return QString::number(v, 'g', 17);
}

} // namespace

QString HeatmapRenderer::cellCopyText(const HeatmapHit &hit) const
{
    if (!hit.valid() || !m_result || !m_result->ok())
        return {};
    const SessionResult &res = *m_result;
    if (hit.row >= res.queryCount() || hit.col >= res.keyCount())
        return {};
    const bool tokens = !res.params.tokens.empty();
    const std::size_t h = std::size_t(hit.head);
    const bool scores = !hit.mean && h < res.scores.size() && h < res.scaledScores.size();
    const double weight
        = hit.mean ? res.weightsMean(hit.row, hit.col) : res.weights[h](hit.row, hit.col);
    const std::uint8_t state
        = res.maskState.rows() == res.queryCount() && res.maskState.cols() == res.keyCount()
        ? res.maskState(hit.row, hit.col)
        : std::uint8_t(0);
    const QStringList header {
        QStringLiteral("head"),         QStringLiteral("query i"),   QStringLiteral("key j"),
        QStringLiteral("query token"),  QStringLiteral("key token"), QStringLiteral("raw score"),
        QStringLiteral("scaled score"), QStringLiteral("weight"),    QStringLiteral("mask")};
    const QStringList values {hit.mean ? QStringLiteral("mean") : QString::number(hit.head),
                              QString::number(res.originalQuery(hit.row)),
                              QString::number(res.originalKey(hit.col)),
                              tokens ? res.queryLabel(hit.row) : QString(),
                              tokens ? res.keyLabel(hit.col) : QString(),
                              scores ? copyNumber(res.scores[h](hit.row, hit.col)) : QString(),
                              scores ? copyNumber(res.scaledScores[h](hit.row, hit.col))
                                     : QString(),
                              copyNumber(weight),
                              QString::fromStdString(maskStateText(state))};
    return header.join(QLatin1Char('\t')) + QLatin1Char('\n') + values.join(QLatin1Char('\t'))
        + QLatin1Char('\n');
}

QString HeatmapRenderer::rowCopyText(const HeatmapHit &hit) const
{
    if (!hit.valid() || !m_result || !m_result->ok())
        return {};
    const QVector<TileSpec> specs = tileSpecs();
    if (hit.tile < 0 || hit.tile >= specs.size())
        return {};
    const MatrixD &m = *tileMatrix(specs[hit.tile]);
    if (hit.row >= m.rows())
        return {};
    QStringList header {QStringLiteral("key j")}, values {queryAxisLabel(hit.row)};
    for (int j = 0; j < int(m.cols()); ++j) {
        header << keyAxisLabel(j);
        values << copyNumber(m(hit.row, j));
    }
    return header.join(QLatin1Char('\t')) + QLatin1Char('\n') + values.join(QLatin1Char('\t'))
        + QLatin1Char('\n');
}

HeatmapHit HeatmapRenderer::cellAt(const QRectF &bounds, const QPointF &pos) const
{
    HeatmapHit hit;
    const HeatmapLayout lay = layout(bounds);
    if (!m_result || lay.cellSize <= 0)
        return hit;
    // Exact cells, also when the tile image is pooled: the window's cell under the point.
    const QRect win = lay.cells;
    for (int t = 0; t < lay.tiles.size(); ++t) {
        const HeatmapLayout::Tile &tile = lay.tiles[t];
        if (!tile.map.contains(pos))
            continue;
        hit.tile = t;
        hit.head = tile.head;
        hit.mean = tile.mean;
        hit.row = win.y()
            + std::clamp(int(std::floor((pos.y() - tile.map.top()) / lay.cellHeight)), 0,
                         win.height() - 1);
        hit.col = win.x()
            + std::clamp(int(std::floor((pos.x() - tile.map.left()) / lay.cellWidth)), 0,
                         win.width() - 1);
        return hit;
    }
    return hit;
}

QRectF HeatmapRenderer::cellRect(const QRectF &bounds, const HeatmapHit &hit) const
{
    if (!hit.valid())
        return {};
    const HeatmapLayout lay = layout(bounds);
    if (hit.tile >= lay.tiles.size())
        return {};
    if (!lay.cells.contains(hit.col, hit.row))
        return {};
    const QRectF &map = lay.tiles[hit.tile].map;
    return QRectF(map.left() + (hit.col - lay.cells.x()) * lay.cellWidth,
                  map.top() + (hit.row - lay.cells.y()) * lay.cellHeight, lay.cellWidth,
                  lay.cellHeight);
}

QString HeatmapRenderer::queryAxisLabel(int r) const
{
    if (!m_result)
        return {};
    // A pooled view's last pixel row ends on the last query shown: label that, as the full
    // matrices' axis does.
    if (m_result->pooledQueryEnd > 0 && r > 0 && r == m_result->queryCount() - 1)
        return m_result->params.indexedQueryLabel(m_result->pooledQueryEnd - 1);
    return m_result->indexedQueryLabel(r);
}

QString HeatmapRenderer::keyAxisLabel(int c) const
{
    if (!m_result)
        return {};
    if (m_result->pooledKeyEnd > 0 && c > 0 && c == m_result->keyCount() - 1)
        return m_result->params.indexedKeyLabel(m_result->pooledKeyEnd - 1);
    return m_result->indexedKeyLabel(c);
}

QString HeatmapRenderer::describeCell(const HeatmapHit &hit) const
{
    if (!hit.valid() || !m_result || !m_result->ok())
        return {};
    const SessionResult &res = *m_result;
    const SessionParameters &p = res.params;
    const Index i = hit.row, j = hit.col;
    if (i >= res.queryCount() || j >= res.keyCount())
        return {};
    // Stored weights have a layer and no scores: the layer is named, the scores are not
    // available (the session holds NaN placeholders for them).
    const bool stored = p.tensors && p.tensors->isWeights();
    QStringList lines;
    const QString head = hit.mean ? QStringLiteral("mean over %1 heads").arg(res.headCount())
                                  : QStringLiteral("head %1").arg(hit.head);
    lines << (stored ? QStringLiteral("layer %1 of %2, %3")
                           .arg(p.tensors->layer())
                           .arg(p.tensors->layerCount())
                           .arg(head)
                     : head);
    // Positions of the computation (a trimmed or key-hiding view shows a subset).
    QString where = QStringLiteral("query i = %1 (row), key j = %2 (column)")
                        .arg(res.originalQuery(int(i)))
                        .arg(res.originalKey(int(j)));
    if (!p.tokens.empty())
        where += QStringLiteral(": \u201c%1\u201d \u2192 \u201c%2\u201d")
                     .arg(res.queryLabel(int(i)), res.keyLabel(int(j)));
    lines << where;
    const QString weightName = res.renormalized          ? QStringLiteral("weight (renormalised)")
        : res.viewNote.contains(QLatin1String("hidden")) ? QStringLiteral("weight (raw)")
                                                         : QStringLiteral("weight");
    const std::uint8_t state
        = res.maskState.rows() == res.queryCount() && res.maskState.cols() == res.keyCount()
        ? res.maskState(i, j)
        : std::uint8_t(0);
    if (hit.mean) {
        lines << QStringLiteral("%1 %2").arg(weightName, formatValue(res.weightsMean(i, j)));
    } else {
        const std::size_t h = std::size_t(hit.head);
        lines << QStringLiteral("%1 %2").arg(weightName, formatValue(res.weights[h](i, j)));
        if (stored) {
            lines << QStringLiteral("raw score n/a (stored weights)");
            lines << QStringLiteral("scaled score n/a (stored weights)");
        } else if (h < res.scores.size() && h < res.scaledScores.size()) { // pooled: none
            lines << QStringLiteral("raw score %1").arg(formatValue(res.scores[h](i, j)));
            lines << QStringLiteral("scaled score %1").arg(formatValue(res.scaledScores[h](i, j)));
        }
    }
    lines << QStringLiteral("mask: %1").arg(QString::fromStdString(maskStateText(state)));
    const std::size_t h = hit.mean ? 0 : std::size_t(hit.head);
    const bool rowFullyMasked = h < res.fullyMasked.size()
        && std::size_t(i) < res.fullyMasked[h].size() && res.fullyMasked[h][std::size_t(i)];
    if (rowFullyMasked)
        lines << QStringLiteral("fully masked row: all weights 0");
    else if (!hit.mean && h < res.metrics.size())
        lines << QStringLiteral("row entropy %1 nats, effective terms %2")
                     .arg(QString::number(res.metrics[h].entropy(i), 'g', 4),
                          QString::number(res.metrics[h].effectiveTerms(i), 'g', 4));
    return lines.join(QLatin1Char('\n'));
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
    return lines.join(QStringLiteral("; "));
}

QStringList HeatmapRenderer::colorbarLines() const
{
    const ColorNorm cn = norm();
    const bool weights = m_options.quantity == HeatmapQuantity::Weights;
    QStringList lines;
    lines << QStringLiteral("%1, %2").arg(colormap().name(), cn.scaleName());
    // A fixed range up to the largest weight (fixedTop, the Long tab's scales) says so.
    lines << QStringLiteral("%1 [%2, %3]")
                 .arg(m_options.autoRange || !weights ? QStringLiteral("auto")
                          : m_options.fixedTop != 1.0 ? QStringLiteral("to max weight")
                                                      : QStringLiteral("fixed"),
                      formatTick(cn.vmin), formatTick(cn.vmax));
    if (weights && m_result && m_result->ok()) {
        if (m_result->renormalized)
            lines << QStringLiteral("renormalised");
        else if (m_result->viewNote.contains(QLatin1String("hidden")))
            lines << QStringLiteral("raw weights");
    }
    return lines;
}

HeatmapRenderer::RowStrip HeatmapRenderer::rowStrip(const QRectF &bounds,
                                                    const HeatmapHit &hit) const
{
    RowStrip strip;
    if (!hit.valid() || !m_result || !m_result->ok())
        return strip;
    const QVector<TileSpec> specs = tileSpecs();
    if (hit.tile < 0 || hit.tile >= specs.size())
        return strip;
    const SessionResult &res = *m_result;
    const MatrixD &m = *tileMatrix(specs[hit.tile]);
    const int nK = int(m.cols());
    if (hit.row < 0 || hit.row >= m.rows() || hit.col < 0 || hit.col >= nK)
        return strip;
    const qreal f = m_options.fontPixelSize > 0 ? m_options.fontPixelSize : 12.0;
    const QFontMetricsF fm(makeFont(f));
    const qreal lineH = fm.height();
    const QString row = res.queryLabel(hit.row);
    const QString who
        = hit.mean ? QStringLiteral("mean over heads") : QStringLiteral("head %1").arg(hit.head);
    const qreal titleW = std::min(bounds.width() * 0.28, 16.0 * f);
    strip.titleBox = QRectF(bounds.left(), bounds.top(), titleW, bounds.height());

    // Boxes wide enough for "0.000" and a short token, as many as fit, centred on the hovered key.
    const qreal boxW
        = std::max(fm.horizontalAdvance(QStringLiteral("\u22120.000")) + 0.6 * f, 3.2 * f);
    const qreal gap = 0.15 * f;
    const qreal area = bounds.width() - titleW - 0.5 * f;
    const int fit = std::max(1, int((area + gap) / (boxW + gap)));
    const int shown = std::min(fit, nK);
    const int first = std::clamp(hit.col - shown / 2, 0, nK - shown);
    const qreal boxH = std::max(lineH * 1.25, bounds.height() - lineH - 0.3 * f);
    const qreal x0 = strip.titleBox.right() + 0.5 * f;
    const qreal labelTop = bounds.top();
    const qreal boxTop = bounds.top() + lineH + 0.1 * f;
    const bool useMask = masksShown();
    const Colormap cmap = colormap();
    const ColorNorm cn = norm();
    const bool weights = m_options.quantity == HeatmapQuantity::Weights;
    for (int k = 0; k < shown; ++k) {
        const int j = first + k;
        StripCell c;
        c.key = j;
        c.box = QRectF(x0 + k * (boxW + gap), boxTop, boxW, std::min(boxH, 2.0 * lineH));
        c.labelBox = QRectF(c.box.left(), labelTop, boxW, lineH);
        c.label = res.keyLabel(j);
        const std::uint8_t state = useMask ? res.maskState(hit.row, j) : std::uint8_t(0);
        const double v = m(hit.row, j);
        if (state) {
            c.color = maskedColor(state);
            c.value = QStringLiteral("masked");
        } else {
            c.color = cmap.map(cn(v));
            // Weights: 3 decimals, below 0.01 short scientific form ("6.1e-04", 2 digits).
            c.value = !weights || !std::isfinite(v) ? formatTick(v)
                : (v == 0.0 || std::abs(v) >= 0.01) ? QString::number(v, 'f', 3)
                                                    : QString::number(v, 'e', 1);
        }
        c.hovered = j == hit.col;
        strip.cells.append(c);
    }
    strip.title = QStringLiteral("%1 \u00b7 query %2%3 \u00b7 keys %4\u2013%5 of %6")
                      .arg(who)
                      .arg(res.originalQuery(hit.row))
                      .arg(res.params.tokens.empty() ? QString()
                                                     : QStringLiteral(" \u201c%1\u201d").arg(row))
                      .arg(res.originalKey(first))
                      .arg(res.originalKey(first + shown - 1))
                      .arg(res.params.keyCount());
    return strip;
}

void HeatmapRenderer::paintRowStrip(QPainter *painter, const QRectF &bounds,
                                    const HeatmapHit &hit) const
{
    painter->save();
    const qreal f = m_options.fontPixelSize > 0 ? m_options.fontPixelSize : 12.0;
    const QFont font = makeFont(f);
    const QFontMetricsF fm(font);
    painter->setFont(font);
    QColor muted = m_options.foreground;
    muted.setAlphaF(0.7);
    const RowStrip strip = rowStrip(bounds, hit);
    if (strip.cells.isEmpty()) {
        painter->setPen(muted);
        painter->drawText(bounds, Qt::AlignLeft | Qt::AlignVCenter,
                          QStringLiteral("Hover a cell to see its row here: every key's token and "
                                         "value, coloured like the heatmap."));
        painter->restore();
        return;
    }
    painter->setPen(m_options.foreground);
    painter->drawText(strip.titleBox, Qt::AlignLeft | Qt::AlignVCenter | Qt::TextWordWrap,
                      strip.title);
    for (const StripCell &c : strip.cells) {
        painter->fillRect(c.box, QColor(c.color));
        // Text in black or white, whichever reads better on the box.
        const QColor bg(c.color);
        const double luminance = 0.2126 * bg.redF() + 0.7152 * bg.greenF() + 0.0722 * bg.blueF();
        painter->setPen(luminance > 0.45 ? Qt::black : Qt::white);
        painter->drawText(c.box, Qt::AlignCenter,
                          fm.elidedText(c.value, Qt::ElideRight, c.box.width() - 0.2 * f));
        painter->setPen(c.hovered ? m_options.foreground : muted);
        painter->drawText(c.labelBox, Qt::AlignHCenter | Qt::AlignBottom,
                          fm.elidedText(c.label, Qt::ElideRight, c.labelBox.width()));
        if (c.hovered) {
            painter->setPen(QPen(m_options.foreground, 2));
            painter->setBrush(Qt::NoBrush);
            painter->drawRect(c.box.adjusted(-1, -1, 1, 1));
        }
    }
    painter->restore();
}

QImage HeatmapRenderer::render(QSize size, qreal dpr) const
{
    return renderFigure(size, dpr, m_options.background, painter());
}

FigurePainter HeatmapRenderer::painter() const
{
    return [this](QPainter *p, const QRectF &bounds, bool vector) { paintImpl(p, bounds, vector); };
}

bool HeatmapRenderer::savePng(const QString &path, QSize size, qreal dpr, QString *error) const
{
    return writeFigurePng(path, size, dpr, m_options.background, painter(), error);
}

bool HeatmapRenderer::savePngAtDpi(const QString &path, QSize pixels, double dpi,
                                   QString *error) const
{
    if (!(dpi >= 24.0 && dpi <= 2400.0) || pixels.width() < 1 || pixels.height() < 1
        || pixels.width() > 32768 || pixels.height() > 32768) {
        if (error)
            *error = QStringLiteral("cannot write '%1': %2\u00d7%3 pixels at %4 dpi is out of "
                                    "range (1\u201332768 pixels, 24\u20132400 dpi)")
                         .arg(path)
                         .arg(pixels.width())
                         .arg(pixels.height())
                         .arg(dpi);
        return false;
    }
    const qreal dpr = dpi / 96.0;
    const QSizeF logical = QSizeF(pixels) / dpr;
    QImage image(pixels, QImage::Format_ARGB32_Premultiplied);
    image.setDevicePixelRatio(dpr);
    image.fill(m_options.background);
    {
        QPainter painter(&image);
        painter.setRenderHint(QPainter::TextAntialiasing);
        paintImpl(&painter, QRectF(QPointF(0, 0), logical), false);
    }
    const int dotsPerMeter = qRound(dpi / 0.0254);
    image.setDotsPerMeterX(dotsPerMeter);
    image.setDotsPerMeterY(dotsPerMeter);
    return writeImagePng(path, image, error);
}

QString HeatmapRenderer::documentDescription() const
{
    return m_result ? m_result->params.caption() : QString();
}

bool HeatmapRenderer::saveSvg(const QString &path, QSize size, QString *error) const
{
    return writeFigureSvg(path, size, QStringLiteral("Attention Lab heatmap"),
                          documentDescription(), painter(), error);
}

bool HeatmapRenderer::savePdf(const QString &path, QSize size, QString *error) const
{
    return writeFigurePdf(path, size, QStringLiteral("Attention Lab heatmap"), painter(), error);
}

bool HeatmapRenderer::save(const QString &path, QSize size, qreal dpr, QString *error) const
{
    return writeFigure(path, size, dpr, m_options.background,
                       QStringLiteral("Attention Lab heatmap"), documentDescription(), painter(),
                       error);
}

bool exportEachHead(const HeatmapRenderer &renderer, const QString &directory,
                    const QString &prefix, const QString &format, QSize size, double dpi,
                    QStringList *written, QString *error)
{
    const auto result = renderer.result();
    if (!result || !result->ok() || result->headCount() == 0) {
        if (error)
            *error = QStringLiteral("there is no computed heatmap to export");
        return false;
    }
    const QString fmt = format.toLower();
    if (fmt != QLatin1String("png") && fmt != QLatin1String("svg") && fmt != QLatin1String("pdf")) {
        if (error)
            *error = QStringLiteral("unknown format '%1' (expected png, svg or pdf)").arg(format);
        return false;
    }
    if (!QDir().mkpath(directory)) {
        if (error)
            *error = QStringLiteral("cannot create the folder '%1'").arg(directory);
        return false;
    }
    const int h = result->headCount();
    const bool mean = h > 1 && renderer.options().quantity == HeatmapQuantity::Weights;
    HeatmapRenderer one;
    one.setResult(result);
    for (int head = 0; head < h + (mean ? 1 : 0); ++head) {
        HeatmapOptions options = renderer.options();
        options.view = HeatmapView::SingleHead;
        options.head = head;
        one.setOptions(options);
        const QString name = head == h ? QStringLiteral("%1-mean.%2").arg(prefix, fmt)
                                       : QStringLiteral("%1-%2.%3").arg(prefix).arg(head).arg(fmt);
        const QString path = QDir(directory).filePath(name);
        bool ok = false;
        if (fmt == QLatin1String("png"))
            ok = one.savePngAtDpi(path, size, dpi, error);
        else if (fmt == QLatin1String("svg"))
            ok = one.saveSvg(path, size, error);
        else
            ok = one.savePdf(path, size, error);
        if (!ok)
            return false;
        if (written)
            written->append(path);
    }
    return true;
}

} // namespace attn
