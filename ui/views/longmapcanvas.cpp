#include "ui/views/longmapview_p.h"

#include "ui/render/figurefile.h"
#include "ui/render/heatmaprenderer.h"

#include <QPainter>

#include <algorithm>
#include <cmath>

namespace attn {

using namespace longmap;

void LongMapView::Canvas::paintRowStrip(QPainter &painter, const QRectF &strip, qreal left,
                                        Index head) const
{
    const LongMapViewport &viewport = m_view->viewport();
    const LongRowStrip &row = m_view->m_rowStrip;
    if (row.query >= 0 && row.head == head && !row.values.empty()) {
        // Signed weights (differential attention): bars up and down from a zero line in the
        // middle, over ±the largest |w|.
        const bool negative = *std::min_element(row.values.begin(), row.values.end()) < 0;
        double top = 1e-300;
        for (double v : row.values)
            top = std::max(top, negative ? std::abs(v) : v);
        const qreal zero = negative ? strip.center().y() : strip.bottom();
        const qreal span = negative ? strip.height() / 2 - 1 : strip.height() - 2;
        painter.save();
        painter.setClipRect(strip);
        const QColor line = palette().color(QPalette::Highlight);
        const QColor below = QColor(0x21, 0x66, 0xac); // RdBu_r's blue: negative weights
        for (std::size_t x = 0; x < row.values.size(); ++x) {
            const double c0 = double(row.colBegin + Index(x) * row.colsPerPixel);
            const double c1 = std::min(double(row.colEnd), c0 + double(row.colsPerPixel));
            const qreal x0 = viewport.pointOf(0, c0).x(),
                        x1 = std::max(viewport.pointOf(0, c1).x(), x0 + 1);
            if (row.maskState[x]) {
                painter.fillRect(QRectF(x0, strip.top(), x1 - x0, strip.height()),
                                 palette().color(QPalette::Midlight));
                continue;
            }
            const qreal h = row.values[x] / top * span;
            painter.fillRect(QRectF(x0, zero - h, x1 - x0, h).normalized(), h < 0 ? below : line);
        }
        if (negative) {
            painter.setPen(palette().color(QPalette::Mid));
            painter.drawLine(QPointF(strip.left(), zero), QPointF(strip.right(), zero));
        }
        painter.restore();
        painter.drawText(
            QRectF(0, strip.top(), left - 6, strip.height()),
            Qt::AlignRight | Qt::AlignVCenter | Qt::TextWordWrap,
            std::all_of(row.maskState.begin(), row.maskState.end(),
                        [](std::uint8_t m) { return m != 0; })
                ? tr("row %1\nmasked here").arg(row.query)
                : negative
                ? tr("row %1\n±%2").arg(row.query).arg(top, 0, 'g', 2)
                : tr("row %1\n0 … %2")
                      .arg(row.query)
                      .arg(*std::max_element(row.values.begin(), row.values.end()), 0, 'g', 2));
    } else {
        painter.drawText(strip.adjusted(6, 0, -6, 0), Qt::AlignCenter | Qt::TextWordWrap,
                         tr("hover the map: that query's weights over the visible keys"));
    }
}

void LongMapView::Canvas::paintEvent(QPaintEvent *)
{
    QPainter painter(this);
    const QColor base = palette().color(QPalette::Base);
    const QColor text = palette().color(QPalette::Text);
    painter.fillRect(rect(), base);
    const QRectF area = m_view->mapArea();
    LongMapTiles *tiles = m_view->m_tiles;
    const std::optional<TilePyramid> &pyramid = tiles->pyramid();
    painter.setFont(figure::makeFont(11));
    if (!tiles->isReady() || !pyramid) {
        painter.fillRect(area, palette().color(QPalette::Window));
        painter.setPen(text);
        const QString note = !m_view->m_message.isEmpty() ? m_view->m_message
            : tiles->isComputingFullView()
            ? tr("computing the first full view: every row's softmax max and sum, every head")
            : tr("the map is computed when the tab is shown");
        painter.drawText(area.adjusted(12, 12, -12, -12), Qt::AlignCenter | Qt::TextWordWrap, note);
        return;
    }
    const LongMapViewport &viewport = m_view->viewport();
    const CellRect view = viewport.viewRect();
    const auto toScreen = [&](double row, double col) { return viewport.pointOf(row, col); };
    const QRectF weights(toScreen(0, 0),
                         toScreen(double(pyramid->queries()), double(pyramid->keys())));
    painter.save();
    painter.setClipRect(area);
    painter.fillRect(area, palette().color(QPalette::Window));
    const int level = viewport.level();
    const Index head = m_view->m_head;
    bool complete = true;
    for (const TileIndex &t : pyramid->tilesCovering(level, view)) {
        const TileWindow w = pyramid->tileWindow(level, t);
        // Edges on whole pixels, so that neighbouring tiles share them (no seam).
        const QPointF a = toScreen(double(w.rowBegin), double(w.colBegin));
        const QPointF b = toScreen(double(w.rowEnd), double(w.colEnd));
        const QRectF target(QPointF(std::round(a.x()), std::round(a.y())),
                            QPointF(std::round(b.x()), std::round(b.y())));
        if (const QImage *image = tiles->image({head, level, t})) {
            painter.drawImage(target, *image, QRectF(image->rect()));
            continue;
        }
        complete = false;
        // Coarse first: the nearest coarser level's tile enlarged over this one.
        bool drawn = false;
        for (int up = level + 1; up <= pyramid->topLevel() && !drawn; ++up) {
            const int shift = up - level;
            const TileIndex parent {t.tx >> shift, t.ty >> shift};
            const QImage *image = tiles->image({head, up, parent});
            if (!image)
                continue;
            const TileWindow pw = pyramid->tileWindow(up, parent);
            const double per = double(TilePyramid::cellsPerPixel(up));
            const QRectF source((double(w.colBegin - pw.colBegin)) / per,
                                (double(w.rowBegin - pw.rowBegin)) / per, double(w.cols()) / per,
                                double(w.rows()) / per);
            painter.drawImage(target, *image, source);
            drawn = true;
        }
        if (!drawn)
            painter.fillRect(target, palette().color(QPalette::Mid));
    }
    painter.restore();
    painter.setPen(text);
    // The frame just outside the map's pixels, so that it never covers the first row or
    // column (a spike at query 0 or key 0 stays in sight).
    if (const QRectF edge = weights.intersected(area); !edge.isEmpty()) {
        const qreal l = std::round(edge.left()), t = std::round(edge.top());
        const qreal r = std::round(edge.right()), b = std::round(edge.bottom());
        painter.drawRect(QRectF(l - 1, t - 1, r - l + 1, b - t + 1));
    }

    // Axes: query positions on the left, key positions on top, at round steps.
    // Positions at about six round steps (figure::niceStep: 1, 2, 5, 10, …; whole cells).
    const auto ticks = [](double lo, double hi) {
        const double step = figure::niceStep(std::max(1.0, hi - lo) / 6);
        std::vector<double> out;
        for (double v = std::ceil(lo / step) * step; v <= hi; v += step)
            out.push_back(v);
        return out;
    };
    const QFontMetricsF fm(painter.font());
    // The axes run along the map where it is drawn (a fitted map that is wider than tall leaves
    // room above and below it), and label cells: positions 0 … n − 1.
    const QRectF shown = weights.intersected(area);
    const qreal axisTop = shown.isEmpty() ? area.top() : shown.top();
    const qreal axisLeft = shown.isEmpty() ? area.left() : shown.left();
    for (double r : ticks(std::max(0.0, view.rowBegin),
                          std::min(double(pyramid->queries() - 1), view.rowEnd))) {
        const qreal y = toScreen(r, 0).y();
        painter.drawLine(QPointF(axisLeft - 4, y), QPointF(axisLeft, y));
        painter.drawText(QRectF(0, y - fm.height() / 2, axisLeft - 6, fm.height()),
                         Qt::AlignRight | Qt::AlignVCenter, QString::number(qint64(r)));
    }
    for (double c :
         ticks(std::max(0.0, view.colBegin), std::min(double(pyramid->keys() - 1), view.colEnd))) {
        const qreal x = toScreen(0, c).x();
        painter.drawLine(QPointF(x, axisTop - 4), QPointF(x, axisTop));
        const QString label = QString::number(qint64(c));
        const qreal lw = fm.horizontalAdvance(label);
        painter.drawText(
            QPointF(std::clamp(x - lw / 2, area.left(), area.right() - lw), axisTop - 7), label);
    }
    painter.save();
    painter.translate(10, area.center().y());
    painter.rotate(-90);
    painter.drawText(QRectF(-80, -10, 160, 14), Qt::AlignCenter, tr("query i"));
    painter.restore();
    painter.drawText(QPointF(axisLeft - fm.horizontalAdvance(tr("key j")) - 8, axisTop - 7),
                     tr("key j"));

    // The row strip: the hovered query's weights over the visible keys, pooled like the map.
    const QRectF strip(axisLeft, area.bottom() + stripGap,
                       shown.isEmpty() ? area.width() : shown.width(), stripHeight);
    painter.drawRect(strip);
    paintRowStrip(painter, strip, axisLeft, head);

    // Colour bar.
    const Colormap map(tiles->colormap());
    const QRectF bar(area.right() + barGap, axisTop, barWidth,
                     shown.isEmpty() ? area.height() : shown.height());
    painter.drawImage(bar, map.strip(256, Qt::Vertical));
    painter.drawRect(bar);
    for (const auto &[t, text] : LongMapView::colourBarLabels(tiles->norm())) {
        const qreal y = bar.bottom() - t * bar.height();
        painter.drawText(QPointF(bar.right() + barLabelGap, y + fm.ascent() / 2), text);
    }
    if (!complete)
        painter.drawText(area.adjusted(6, 6, -6, -6), Qt::AlignRight | Qt::AlignBottom,
                         tr("refining…"));
}

QList<QPair<double, QString>> LongMapView::colourBarLabels(const ColorNorm &norm)
{
    QList<QPair<double, QString>> labels;
    if (norm.scale == ColorScale::SymLog) {
        // A symmetric log: 0 and ±powers of ten, two decades apart, down to the linear range.
        for (double v : figure::colorBarTicks(norm, 3))
            labels.append({norm(v), figure::formatTick(v)});
        return labels;
    }
    for (double t : {0.0, 0.5, 1.0})
        labels.append({t, figure::minusSign(QString::number(norm.inverse(t), 'g', 2))});
    return labels;
}

qreal LongMapView::colourBarLabelRoom()
{
    return legendWidth - barGap - barWidth - barLabelGap;
}

} // namespace attn
