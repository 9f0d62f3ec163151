#include "ui/views/figurecanvas.h"

#include "ui/session/jobrunner.h"

#include <QEvent>
#include <QHelpEvent>
#include <QMouseEvent>
#include <QPainter>
#include <QResizeEvent>
#include <QToolTip>

#include <algorithm>

namespace attn {

FigureCanvas::FigureCanvas(PanelFigure *figure, QWidget *parent)
    : QWidget(parent)
    , m_figure(figure)
    , m_jobs(new JobRunner(this, 1))
{
    setMouseTracking(true);
    setAttribute(Qt::WA_OpaquePaintEvent);
    setSizePolicy(QSizePolicy::Expanding, QSizePolicy::Expanding);
    m_figure->setStyle(screenStyle());
}

FigureStyle FigureCanvas::screenStyle() const
{
    FigureStyle style = m_figure->style();
    const QFontInfo info(font());
    style.fontPixelSize = info.pixelSize() > 0 ? info.pixelSize() : 12;
    style.background = palette().color(QPalette::Base);
    style.foreground = palette().color(QPalette::Text);
    return style;
}

void FigureCanvas::refresh()
{
    m_figure->setStyle(screenStyle());
    m_cacheCurrent = false;
    ++m_generation;
    m_hover = FigureHit();
    update();
    emit refreshed();
}

QSize FigureCanvas::sizeHint() const
{
    return {1100, 520};
}

QSize FigureCanvas::minimumSizeHint() const
{
    return {360, 200};
}

FigureHit FigureCanvas::cellAt(const QPointF &pos) const
{
    return m_figure->cellAt(QRectF(rect()), pos);
}

QString FigureCanvas::toolTipAt(const QPointF &pos) const
{
    return m_figure->describeCell(cellAt(pos));
}

QVector<QRectF> FigureCanvas::highlightRects() const
{
    if (!m_hover.valid())
        return {};
    return m_figure->cellRects(QRectF(rect()), m_hover.row, m_hover.col);
}

void FigureCanvas::setHover(const FigureHit &hit)
{
    if (hit == m_hover)
        return;
    m_hover = hit;
    update();
    emit cellHovered(hit);
}

bool FigureCanvas::pictureCurrent() const
{
    return m_cacheCurrent && m_cache.size() == size() * devicePixelRatioF();
}

void FigureCanvas::requestPicture(QSize deviceSize, qreal dpr)
{
    if (m_jobs->isBusy() && m_requestedGeneration == m_generation && m_requestedSize == deviceSize)
        return; // already being painted
    m_requestedGeneration = m_generation;
    m_requestedSize = deviceSize;
    // The copy holds the data its panels point into (PanelFigure::holdData): the figure may
    // move on to new content while the worker paints this one.
    auto copy = std::make_shared<const PanelFigure>(*m_figure);
    const QSize logical = size();
    const quint64 generation = m_generation;
    m_jobs->run([copy, logical, dpr](const JobContext &) { return copy->render(logical, dpr); },
                [this, generation, deviceSize](const QImage &image) {
                    m_cache = QPixmap::fromImage(image);
                    m_cacheCurrent = generation == m_generation;
                    if (m_cache.size() != deviceSize)
                        m_cacheCurrent = false;
                    update();
                });
}

void FigureCanvas::paintEvent(QPaintEvent *)
{
    const qreal dpr = devicePixelRatioF();
    const QSize deviceSize = size() * dpr;
    if (!pictureCurrent()) {
        if (m_figure->cellCount() < asyncPictureCells) {
            m_jobs->cancel(); // a large picture still being painted is superseded
            m_cache = QPixmap(deviceSize);
            m_cache.setDevicePixelRatio(dpr);
            m_cache.fill(m_figure->style().background);
            QPainter cachePainter(&m_cache);
            cachePainter.setRenderHint(QPainter::TextAntialiasing);
            m_figure->paint(&cachePainter, QRectF(rect()));
            m_cacheCurrent = true;
        } else {
            requestPicture(deviceSize, dpr);
        }
    }
    QPainter painter(this);
    if (m_cache.isNull()) {
        painter.fillRect(rect(), m_figure->style().background);
        painter.setPen(m_figure->style().foreground);
        painter.drawText(rect(), Qt::AlignCenter, tr("Drawing the panels\u2026"));
    } else if (m_cache.size() == deviceSize) {
        painter.drawPixmap(0, 0, m_cache);
    } else { // an older picture of another size, scaled until the new one arrives
        painter.setRenderHint(QPainter::SmoothPixmapTransform);
        painter.drawPixmap(rect(), m_cache);
    }
    // The hovered cell, outlined in every panel (the hovered panel's outline is thicker).
    const QVector<QRectF> rects = highlightRects();
    painter.setRenderHint(QPainter::Antialiasing);
    for (int k = 0; k < rects.size(); ++k) {
        const QRectF &cell = rects[k];
        const qreal grow = cell.width() < 6 ? 2.0 : 0.0;
        const QRectF box = cell.adjusted(-grow, -grow, grow, grow);
        painter.setBrush(Qt::NoBrush);
        painter.setPen(QPen(Qt::white, k == m_hover.panel ? 3.5 : 2.5));
        painter.drawRect(box);
        painter.setPen(QPen(Qt::black, k == m_hover.panel ? 1.6 : 1.0));
        painter.drawRect(box);
    }
}

void FigureCanvas::resizeEvent(QResizeEvent *event)
{
    QWidget::resizeEvent(event); // the picture's size no longer matches: painted again
}

void FigureCanvas::mouseMoveEvent(QMouseEvent *event)
{
    const FigureHit hit = cellAt(event->position());
    const bool changed = !(hit == m_hover);
    setHover(hit);
    if (!hit.valid())
        QToolTip::hideText();
    else if (changed)
        QToolTip::showText(event->globalPosition().toPoint(), m_figure->describeCell(hit), this);
    QWidget::mouseMoveEvent(event);
}

void FigureCanvas::leaveEvent(QEvent *event)
{
    setHover(FigureHit());
    QWidget::leaveEvent(event);
}

bool FigureCanvas::event(QEvent *event)
{
    if (event->type() == QEvent::ToolTip) {
        auto *help = static_cast<QHelpEvent *>(event);
        const QString text = toolTipAt(help->pos());
        if (text.isEmpty())
            QToolTip::hideText();
        else
            QToolTip::showText(help->globalPos(), text, this);
        return true;
    }
    return QWidget::event(event);
}

void FigureCanvas::changeEvent(QEvent *event)
{
    if (event->type() == QEvent::PaletteChange || event->type() == QEvent::FontChange)
        refresh();
    QWidget::changeEvent(event);
}

FigureScrollArea::FigureScrollArea(FigureCanvas *canvas, QWidget *parent)
    : QScrollArea(parent)
    , m_canvas(canvas)
{
    setFrameShape(QFrame::NoFrame);
    setWidgetResizable(true);
    setHorizontalScrollBarPolicy(Qt::ScrollBarAlwaysOff);
    setWidget(m_canvas);
    connect(m_canvas, &FigureCanvas::refreshed, this, &FigureScrollArea::fitCanvas);
}

int FigureScrollArea::canvasHeightFor(int width, int height) const
{
    PanelFigure *figure = m_canvas->figure();
    if (m_fitToViewport || width <= 0 || height <= 0 || figure->panelCount() == 0)
        return height;
    figure->setStyle(m_canvas->screenStyle());
    const auto cellAt = [&](int h) { return figure->layout(QRectF(0, 0, width, h)).cellSize; };
    constexpr int tallest = 8192;
    // The tallest panel (map, title, labels and legend) of a canvas `h` high.
    const auto panelHeight = [&](int h) {
        qreal tallestPanel = 0;
        for (const QRectF &frame : figure->layout(QRectF(0, 0, width, h)).frames)
            tallestPanel = std::max(tallestPanel, frame.height());
        return tallestPanel;
    };
    // The panels side by side in the first row of a canvas `h` high.
    const auto columnsAt = [&](int h) {
        const QVector<QRectF> frames = figure->layout(QRectF(0, 0, width, h)).frames;
        return std::count_if(frames.begin(), frames.end(), [&](const QRectF &frame) {
            return qFuzzyCompare(frame.top(), frames.first().top());
        });
    };
    // The smallest canvas height from `from` on whose cells reach `cell`.
    const auto heightFor = [&](int from, qreal cell) {
        int lo = from, hi = tallest;
        while (hi - lo > 4) {
            const int mid = lo + (hi - lo) / 2;
            (cellAt(mid) >= cell ? hi : lo) = mid;
        }
        return hi;
    };
    // What the width allows at most, and the cell size at which the panels fit the viewport:
    // kReadableCell, or nearly the width's limit when that is smaller (but kMinimumCell when
    // the width allows that).
    const qreal widest = 0.95 * cellAt(tallest);
    const qreal target = widest >= kReadableCell ? kReadableCell
        : widest >= kMinimumCell                 ? std::max(kMinimumCell, 0.8 * widest)
                                                 : widest;
    // The tallest canvas from `from` on whose panels `ok` accepts (they grow with the height).
    const auto grow = [&](int from, int to, const auto &ok) {
        int lo = from, hi = to; // lo is accepted, hi is not
        while (hi - lo > 4) {
            const int mid = lo + (hi - lo) / 2;
            (ok(mid) ? lo : hi) = mid;
        }
        return lo;
    };
    // Each panel whole in the viewport, as large as that allows, however many side by side.
    const auto whole = [&](int h) { return panelHeight(h) <= height; };
    if (target <= 0 || cellAt(height) >= target) {
        if (!m_preferLargeMaps || target <= 0)
            return height;
        const int large = grow(height, tallest, whole);
        return cellAt(large) > cellAt(height) ? large : height;
    }
    // Scrolling anyway: the maps as large as the width allows (the panels fill the pane's
    // width instead of leaving it empty beside small maps), yet each panel no taller than the
    // viewport, so every one can be seen whole, and as many side by side as at `target`
    // (growing them must not break a row of panels up); never smaller than `target`.
    const int readable = heightFor(height, target);
    const auto columns = columnsAt(readable);
    const auto fits = [&](int h) { return panelHeight(h) <= height && columnsAt(h) == columns; };
    const int wide = heightFor(readable, widest);
    if (fits(wide))
        return wide;
    if (!fits(readable))
        return readable;
    const int sameRow = grow(readable, wide, fits);
    if (!m_preferLargeMaps)
        return sameRow;
    // Presenting: fewer panels side by side when that makes the maps larger.
    const int fewer = grow(readable, wide, whole);
    return cellAt(fewer) > cellAt(sameRow) ? fewer : sameRow;
}

void FigureScrollArea::setFitToViewport(bool fit)
{
    if (fit == m_fitToViewport)
        return;
    m_fitToViewport = fit;
    setVerticalScrollBarPolicy(fit ? Qt::ScrollBarAlwaysOff : Qt::ScrollBarAsNeeded);
    fitCanvas();
}

void FigureScrollArea::setPreferLargeMaps(bool prefer)
{
    if (prefer == m_preferLargeMaps)
        return;
    m_preferLargeMaps = prefer;
    fitCanvas();
}

int FigureScrollArea::heightForCell(int width, qreal cell) const
{
    PanelFigure *figure = m_canvas->figure();
    constexpr int tallest = 8192;
    if (width <= 0 || figure->panelCount() == 0)
        return 0;
    figure->setStyle(m_canvas->screenStyle());
    int lo = 0, hi = tallest;
    while (hi - lo > 4) {
        const int mid = lo + (hi - lo) / 2;
        (figure->layout(QRectF(0, 0, width, mid)).cellSize >= cell ? hi : lo) = mid;
    }
    return hi;
}

void FigureScrollArea::fitCanvas()
{
    const QSize v = viewport()->size();
    const int h = canvasHeightFor(v.width(), v.height());
    m_canvas->setMinimumHeight(h > v.height() ? h : 0);
}

void FigureScrollArea::resizeEvent(QResizeEvent *event)
{
    QScrollArea::resizeEvent(event);
    fitCanvas();
}

} // namespace attn
