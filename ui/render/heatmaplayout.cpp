// HeatmapRenderer's layout (heatmaprenderer.h): where the caption, the tiles, their axis labels,
// the colourbar and the legend go in given bounds, the axis ticks, and the row strip.

#include "ui/render/heatmaprenderer.h"

#include "ui/render/figurefile.h"

#include "core/attention/mask.h"

#include <QFont>
#include <QFontMetricsF>
#include <QTextLayout>
#include <QTextOption>

#include <algorithm>
#include <cmath>

namespace attn {

using figure::formatTick;
using figure::makeFont;
using figure::niceStep;

namespace {

/// `text` word-wrapped at `width` in `font`: at most `maxLines` lines joined by "\n", the last
/// of them, when more text follows, the rest elided to the width ("…").
QString wrapToLines(const QString &text, const QFont &font, qreal width, int maxLines)
{
    QTextLayout layout(text, font);
    QTextOption option;
    option.setWrapMode(QTextOption::WrapAtWordBoundaryOrAnywhere);
    layout.setTextOption(option);
    QStringList lines;
    layout.beginLayout();
    for (QTextLine line = layout.createLine(); line.isValid(); line = layout.createLine()) {
        line.setLineWidth(width);
        if (lines.size() == maxLines - 1) {
            lines << QFontMetricsF(font).elidedText(text.mid(line.textStart()).trimmed(),
                                                    Qt::ElideRight, width);
            break;
        }
        lines << text.mid(line.textStart(), line.textLength()).trimmed();
    }
    layout.endLayout();
    return lines.join(QLatin1Char('\n'));
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
        // The caption wraps onto at most three lines, the third elided when more would follow.
        lay.captionLines = wrapToLines(caption, makeFont(f), std::max<qreal>(r.width(), 1.0), 3);
        const qreal textH = lineH * std::max<qsizetype>(1, lay.captionLines.count(u'\n') + 1);
        const qreal captionH = textH + 0.2 * lineH;
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
    bool queryTokens = !p.tokens.empty();
    bool keyTokens = p.kind == AttentionKind::EncoderDecoder ? Index(p.tokens.size()) > p.n
                                                             : !p.tokens.empty();
    const auto rowText = [&](int i) {
        return lay.positionLabels ? QString::number(res.originalQuery(i)) : queryAxisLabel(i);
    };
    const auto colText = [&](int j) {
        return lay.positionLabels ? QString::number(res.originalKey(j)) : keyAxisLabel(j);
    };
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
    if (keyTokens) {
        for (int j = win.left(); j <= win.right(); j += measureStepK)
            xLabelW = std::max(xLabelW, std::min(elideW, fm.horizontalAdvance(keyAxisLabel(j))));
        xLabelW
            = std::max(xLabelW, std::min(elideW, fm.horizontalAdvance(keyAxisLabel(win.right()))));
    }
    // Every head in sight (fitAll) with more than a few tiles, where the token labels would
    // take more than 80 % of a tile (about √count tiles a row): each tile's axes are labelled
    // by position (the hover and row strip name the tokens) and the maps get that room.
    const int tiles = int(specs.size());
    if (m_options.fitAll && tiles > 4 && (queryTokens || keyTokens)) {
        const qreal across = std::ceil(std::sqrt(qreal(tiles)));
        const qreal down = std::ceil(qreal(tiles) / across);
        const qreal tile = std::min(grid.width() / across, grid.height() / down);
        if ((queryTokens ? yLabelW : 0.0) + (keyTokens ? xLabelW : 0.0) > 0.8 * tile) {
            lay.positionLabels = true;
            queryTokens = keyTokens = false;
            yLabelW = fm.horizontalAdvance(QString::number(std::max(lastQuery, 0)));
            xLabelW = fm.horizontalAdvance(QString::number(std::max(lastKey, 0)));
        }
    }
    lay.rotateKeyLabels = keyTokens;
    const qreal tick = 0.3 * f;
    const qreal marker = 0.55 * f; // fully-masked-row marker strip
    // Every head in sight with more than a few tiles: the axis titles' room goes to the maps.
    const int count = int(specs.size());
    lay.axisTitles = !(m_options.fitAll && count > 4);
    const qreal axisTitle = lay.axisTitles ? lineH : 0.0;
    const qreal left = axisTitle + 0.3 * f + yLabelW + tick + marker;
    const qreal top = lineH * 1.3;
    const qreal bottom
        = tick + (lay.rotateKeyLabels ? xLabelW : lineH) + 0.1 * f + axisTitle + 0.7 * f;
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
    // if there are any. A set number of heads per row is the only candidate.
    const int fewestCols = m_options.headsPerRow > 0 ? std::min(m_options.headsPerRow, count) : 1;
    const int mostCols = m_options.headsPerRow > 0 ? fewestCols : count;
    int cols = 1;
    QSizeF cellWH(0, 0);
    qreal bestScore = -1;
    bool bestAtMinimum = false;
    for (int c = fewestCols; c <= mostCols; ++c) {
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
        for (int c = mostCols; c >= fewestCols; --c) {
            const qreal aw = grid.width() / c - left - right;
            const QSizeF s = mapIn(aw, std::clamp(aw, minSide, boxMaxH));
            if (shortSide(s) >= minSide - 0.5 || c == fewestCols) {
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
        // A learned sink or differential attention: the head's mean row sum (below 1 by the
        // sink's mass; 1 − λ).
        if (!tile.mean && m_result && tile.head >= 0
            && std::size_t(tile.head) < m_result->meanRowSum.size()
            && std::isfinite(m_result->meanRowSum[std::size_t(tile.head)])) {
            const QString sum
                = QString::number(m_result->meanRowSum[std::size_t(tile.head)], 'f', 2);
            tile.title += QStringLiteral(" \u00b7 \u03a3w %1").arg(sum);
            tile.shortTitle = (tile.shortTitle.isEmpty() ? QStringLiteral("h%1").arg(tile.head)
                                                         : tile.shortTitle)
                + QStringLiteral(" \u03a3=%1").arg(sum);
        }
        tile.frame = QRectF(x0 + (t % cols) * tileW, y0 + (t / cols) * tileH, tileW, tileH);
        tile.map = QRectF(tile.frame.left() + left, tile.frame.top() + top, nK * cellW, nQ * cellH);
        lay.tiles.append(tile);
    }

    // Axis labels: the first and last position and regular steps between, none overlapping.
    const qreal rowNeed = lineH * 1.05;
    const qreal colNeed = lay.rotateKeyLabels ? lineH * 1.05 : xLabelW + 0.6 * f;
    for (int i : axisTicks(win.y(), nQ, cellH, rowNeed, &lay.tickStepRows))
        lay.rowLabels.append({i, fm.elidedText(rowText(i), Qt::ElideRight, elideW)});
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
            lay.rowLabels.insert(at, {pin, fm.elidedText(rowText(pin), Qt::ElideRight, elideW)});
    }
    for (int j : axisTicks(win.x(), nK, cellW, colNeed, &lay.tickStepCols))
        lay.colLabels.append({j, fm.elidedText(colText(j), Qt::ElideRight, elideW)});

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

} // namespace attn
