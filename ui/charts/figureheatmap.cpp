// HeatmapView (figurekit.h): one matrix of an experiment's result as coloured cells with a
// colour bar, tick labels and axis titles; NaN / ±Inf cells red and labelled.

#include "ui/charts/experimentfigure.h"
#include "ui/charts/figurekit.h"

#include "ui/render/figurefile.h"
#include "ui/render/tileimage.h"

#include <QPaintEvent>
#include <QPainter>

#include <algorithm>
#include <cmath>
#include <limits>

namespace attn::expfig {

HeatmapView::HeatmapView(const NamedMatrix &m, const Style &style, QWidget *parent)
    : QWidget(parent)
    , m_values(m.values)
    , m_title(panelTitle(m))
    , m_style(style)
{
    if (!(m_style.hi > m_style.lo))
        m_style.hi = m_style.lo + 1;
    // The cells, one pixel each, from the one tile-image builder (drawn scaled, unsmoothed).
    TileImageRequest request;
    request.values = &m_values;
    request.colormap = m_style.divergent ? ColormapId::RdBu : ColormapId::Viridis;
    request.norm = ColorNorm::linear(m_style.lo, m_style.hi);
    request.nonFiniteColor = kNanColor.rgb();
    m_cells = buildTileImage(request);
    setMinimumSize(160, 140);
    setSizePolicy(QSizePolicy::Expanding, QSizePolicy::Expanding);
}

std::pair<double, double> HeatmapView::range(const std::vector<const MatrixD *> &ms)
{
    double lo = std::numeric_limits<double>::infinity(), hi = -lo;
    for (const MatrixD *m : ms)
        for (Index i = 0; i < m->size(); ++i) {
            const double v = m->data()[i];
            if (std::isfinite(v)) {
                lo = std::min(lo, v);
                hi = std::max(hi, v);
            }
        }
    if (!(hi >= lo))
        return {0.0, 1.0};
    return {lo, hi};
}

void HeatmapView::paintEvent(QPaintEvent *)
{
    QPainter p(this);
    p.setRenderHint(QPainter::Antialiasing, false);
    p.setPen(Qt::black);
    QFont titleFont = font();
    titleFont.setBold(true);
    const QFontMetrics fm(font());
    const QFontMetrics tfm(titleFont);
    QRect r = rect().adjusted(4, 4, -4, -4);

    const QRect full = r;
    r.setTop(r.top() + tfm.height() + 4); // the title goes just above the cells

    const Index rows = m_values.rows(), cols = m_values.cols();
    if (rows == 0 || cols == 0) {
        p.drawText(r, Qt::AlignCenter, QStringLiteral("(empty)"));
        return;
    }

    // Colour bar on the right: strip + labels.
    const QString hiText = formatValue(m_style.hi), loText = formatValue(m_style.lo);
    const int labelW = std::max(fm.horizontalAdvance(hiText), fm.horizontalAdvance(loText));
    const int barW = 12;
    const int barBlock = barW + 4 + labelW + 6;
    // Axis titles and tick labels on the left and bottom.
    const int tickW = fm.horizontalAdvance(QString::number(rows - 1)) + 4;
    const int leftBlock = fm.height() + 2 + tickW;
    const int bottomBlock = fm.height() * 2 + 4;

    const QRect area(r.left() + leftBlock, r.top(), r.width() - leftBlock - barBlock,
                     r.height() - bottomBlock);
    if (area.width() < 10 || area.height() < 10)
        return;
    const double cell
        = std::min(double(area.width()) / double(cols), double(area.height()) / double(rows));
    const double gridW = cell * double(cols), gridH = cell * double(rows);
    const double x0 = area.left() + (area.width() - gridW) / 2;
    const double y0 = area.top() + std::max(0.0, (area.height() - gridH) / 2 - tfm.height());
    p.setFont(titleFont);
    QString title = m_title;
    if (!m_values.allFinite() && !title.contains(QLatin1String("NaN")))
        title += QStringLiteral(" (red: NaN)");
    p.drawText(QRectF(full.left(), y0 - tfm.height() - 4, full.width(), tfm.height()),
               Qt::AlignHCenter | Qt::AlignVCenter,
               tfm.elidedText(title, Qt::ElideRight, full.width()));
    p.setFont(font());

    const bool annotate = cell >= std::max(26, fm.horizontalAdvance(QStringLiteral("0.00")) + 4)
        && rows * cols <= 400;
    p.setRenderHint(QPainter::SmoothPixmapTransform, false);
    p.drawImage(QRectF(x0, y0, gridW, gridH), m_cells);
    const bool nanLabels = cell >= fm.horizontalAdvance(QStringLiteral("NaN"));
    for (Index i = 0; (annotate || nanLabels) && i < rows; ++i)
        for (Index j = 0; j < cols; ++j) {
            const double v = m_values(i, j);
            const bool bad = !std::isfinite(v);
            if (!annotate && !bad)
                continue;
            const QRectF c(x0 + double(j) * cell, y0 + double(i) * cell, cell, cell);
            const QColor color = QColor(m_cells.pixel(int(j), int(i)));
            p.setPen(bad || color.lightnessF() < 0.55 ? Qt::white : Qt::black);
            p.drawText(c, Qt::AlignCenter, bad ? formatValue(v) : cellLabel(v));
        }
    p.setPen(QPen(QColor(60, 60, 60), 0));
    p.drawRect(QRectF(x0, y0, gridW, gridH));

    // Tick labels at a round step (1, 2, 5, 10, 20, …) wide enough that they do not overlap,
    // each centred on its cell in a box of the label's own size (a cell can be narrower
    // than its label).
    p.setPen(Qt::black);
    const Index rowStep = figure::niceStep(1.1 * fm.height() / cell);
    for (Index i = 0; i < rows; i += rowStep)
        p.drawText(QRectF(x0 - tickW - 2, y0 + (double(i) + 0.5) * cell - fm.height() / 2.0, tickW,
                          fm.height()),
                   Qt::AlignRight | Qt::AlignVCenter, QString::number(i));
    const double colLabelW = fm.horizontalAdvance(QString::number(cols - 1)) + 4;
    const Index colStep = figure::niceStep(colLabelW / cell);
    for (Index j = 0; j < cols; j += colStep)
        p.drawText(QRectF(x0 + (double(j) + 0.5) * cell - colLabelW / 2.0, y0 + gridH + 1,
                          colLabelW, fm.height()),
                   Qt::AlignHCenter | Qt::AlignTop, QString::number(j));
    p.drawText(QRectF(x0, y0 + gridH + fm.height() + 2, gridW, fm.height()),
               Qt::AlignHCenter | Qt::AlignTop, m_style.columnTitle);
    p.save();
    p.translate(x0 - tickW - 4 - fm.height(), y0 + gridH / 2);
    p.rotate(-90);
    p.drawText(QRectF(-gridH / 2, 0, gridH, fm.height()), Qt::AlignCenter, m_style.rowTitle);
    p.restore();

    // Colour bar.
    const double bx = x0 + gridW + 8;
    const int steps = 64;
    for (int s = 0; s < steps; ++s) {
        const double t = 1.0 - (s + 0.5) / steps;
        const QColor color = m_style.divergent ? diverging(t) : viridis(t);
        p.fillRect(QRectF(bx, y0 + gridH * s / steps, barW, gridH / steps + 0.5), color);
    }
    p.setPen(QPen(QColor(60, 60, 60), 0));
    p.drawRect(QRectF(bx, y0, barW, gridH));
    p.setPen(Qt::black);
    p.drawText(QRectF(bx + barW + 3, y0, labelW + 4, fm.height()), Qt::AlignLeft, hiText);
    p.drawText(QRectF(bx + barW + 3, y0 + gridH - fm.height(), labelW + 4, fm.height()),
               Qt::AlignLeft, loText);
}

ExperimentHeatmap HeatmapView::content() const
{
    return {m_title,           m_values,         m_style.lo,          m_style.hi,
            m_style.divergent, m_style.rowTitle, m_style.columnTitle, m_cells};
}

QString HeatmapView::cellLabel(double v) const
{
    if (std::max(std::abs(m_style.lo), std::abs(m_style.hi)) <= 1)
        return QString::number(v, 'f', 2);
    return QString::number(v, 'g', 3);
}

} // namespace attn::expfig
