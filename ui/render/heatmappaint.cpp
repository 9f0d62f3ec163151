// HeatmapRenderer's painting (heatmaprenderer.h): the caption, the tiles (images, or cells as
// rectangles in SVG and PDF, hatched where masked), their axes, the colourbar, the legend with
// its mask swatches, and the row strip.

#include "ui/render/heatmaprenderer.h"

#include "ui/render/figurefile.h"

#include "core/attention/mask.h"

#include <QFont>
#include <QFontMetricsF>
#include <QPainter>
#include <QPainterPath>

#include <algorithm>
#include <array>
#include <cmath>

namespace attn {

using figure::formatTick;
using figure::hatchColor;
using figure::linearTicks;
using figure::logTicks;
using figure::makeFont;
using figure::textStyle;

namespace {

/// The first of `choices` (longest first) whose width fits `width`; else the last one.
QString fittedText(const QFontMetricsF &fm, qreal width, std::initializer_list<QString> choices)
{
    for (const QString &c : choices)
        if (!c.isEmpty() && fm.horizontalAdvance(c) <= width) // empty: no such variant
            return c;
    return *(choices.end() - 1);
}

} // namespace

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
    const figure::TextStyle style = textStyle(f, m_options.foreground);
    const QFont &font = style.font, &bold = style.bold;
    const QFontMetricsF &fm = style.fm;
    const QColor &fg = style.fg, &muted = style.muted;

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
        // Already wrapped to the width (HeatmapLayout::captionLines): no line is cut off.
        painter->drawText(lay.caption, Qt::AlignLeft | Qt::AlignTop | Qt::TextDontClip,
                          lay.captionLines);
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
    // Whether the maps hatch their masked cells: every cell drawn as a rectangle in SVG and PDF
    // does, an image only when its cells are large enough. The legend's swatches are drawn as
    // the cells are: hatched, or flat in the mask colour.
    const bool cellsHatched = (vectorOutput && vectorCells())
        || (!lay.tiles.isEmpty()
            && tileMasksHatched(lay.tiles.first().map.size() * devScale, lay.cellSize * devScale));
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
    // A title is centred over its map and stays inside its tile (never over the next tile or
    // the colour bar): as wide as the map and twice the narrower margin beside it.
    const auto titleWidth = [](const HeatmapLayout::Tile &tile) {
        return tile.map.width()
            + 2
            * std::max(0.0,
                       std::min(tile.map.left() - tile.frame.left(),
                                tile.frame.right() - tile.map.right()));
    };
    const QFontMetricsF bfm(bold);
    int titleLevel = 0;
    for (const HeatmapLayout::Tile &tile : lay.tiles) {
        const std::array<QString, 3> v = titleVariants(tile);
        int level = 0;
        while (level < 2
               && (v[level].isEmpty() || bfm.horizontalAdvance(v[level]) > titleWidth(tile)))
            ++level;
        titleLevel = std::max(titleLevel, level);
    }
    for (int t = 0; !legendOnly && t < lay.tiles.size(); ++t) {
        const HeatmapLayout::Tile &tile = lay.tiles[t];
        const QRectF &map = tile.map;
        if (!clip.isNull() && !clip.intersects(tile.frame))
            continue;

        // Title: the wording chosen, elided when even "h3" is wider than the room.
        painter->setFont(bold);
        painter->setPen(fg);
        {
            const qreal w = titleWidth(tile);
            const std::array<QString, 3> v = titleVariants(tile);
            int level = titleLevel;
            while (level < 2 && v[level].isEmpty()) // a tile without a short wording
                ++level;
            painter->drawText(
                QRectF(map.center().x() - w / 2, tile.frame.top(), w,
                       lay.cellSize > 0 ? map.top() - tile.frame.top() - 0.15 * f : fm.height()),
                Qt::AlignHCenter | Qt::AlignBottom | Qt::TextDontClip,
                bfm.elidedText(v[level], Qt::ElideRight, w));
        }
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
                                      colormap().id(), f * devScale);
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
        if (!lay.axisTitles) {
            painter->setPen(fg);
            continue;
        }
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
    const QString quantity = signedWeightsShown()        ? QStringLiteral("signed weight")
        : m_options.quantity == HeatmapQuantity::Weights ? QStringLiteral("weight")
        : m_options.quantity == HeatmapQuantity::Scores  ? QStringLiteral("raw score")
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
    const QVector<double> ticks = figure::colorBarTicks(cn, 4);
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
    // The colour scale's lines wrap at spaces rather than lose their range to an ellipsis
    // ("to max weight [1.16e-07, 0.0116]" in a narrow column).
    auto legendLine = [&](const QString &text) {
        const qreal w = std::max(lay.legend.width(), 1.0);
        if (fm.horizontalAdvance(text) > w) {
            const QRectF wrapped = fm.boundingRect(QRectF(0, 0, w, 1e6), Qt::TextWordWrap, text);
            painter->drawText(QRectF(lay.legend.left(), y, w, wrapped.height()),
                              Qt::AlignLeft | Qt::AlignTop | Qt::TextWordWrap, text);
            y += std::max(wrapped.height(), fm.height()) + fm.height() * 0.15;
        } else {
            painter->drawText(QRectF(lay.legend.left(), y, w, fm.height()),
                              Qt::AlignLeft | Qt::AlignVCenter, text);
            y += fm.height() * 1.15;
        }
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
            swatch(maskedColor(state), cellsHatched ? state : 0,
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

QString HeatmapRenderer::rowStripHint(qreal width) const
{
    const qreal f = m_options.fontPixelSize > 0 ? m_options.fontPixelSize : 12.0;
    const QFontMetricsF fm(makeFont(f));
    for (const QString &hint :
         {QStringLiteral("Hover a cell to see its row here: every key's token and value, "
                         "coloured like the heatmap."),
          QStringLiteral("Hover a cell to see its row here.")})
        if (fm.horizontalAdvance(hint) <= width)
            return hint;
    return fm.elidedText(QStringLiteral("Hover a cell to see its row here."), Qt::ElideRight,
                         width);
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
        painter->drawText(bounds, Qt::AlignLeft | Qt::AlignVCenter, rowStripHint(bounds.width()));
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

} // namespace attn
