#include "heatmapwidget.h"

#include <QEvent>
#include <QHelpEvent>
#include <QMouseEvent>
#include <QPainter>
#include <QToolTip>

namespace attn {

HeatmapWidget::HeatmapWidget(QWidget *parent)
    : QWidget(parent)
{
    setMouseTracking(true);
    setAttribute(Qt::WA_OpaquePaintEvent);
    setSizePolicy(QSizePolicy::Expanding, QSizePolicy::Expanding);
    m_renderer.setOptions(effectiveOptions(m_requested));
}

HeatmapOptions HeatmapWidget::effectiveOptions(HeatmapOptions options) const
{
    const HeatmapOptions defaults;
    if (options.fontPixelSize <= 0) {
        const QFontInfo info(font());
        options.fontPixelSize = info.pixelSize() > 0 ? info.pixelSize() : 12;
    }
    if (options.background == defaults.background)
        options.background = palette().color(QPalette::Base);
    if (options.foreground == defaults.foreground)
        options.foreground = palette().color(QPalette::Text);
    return options;
}

void HeatmapWidget::setResult(std::shared_ptr<const SessionResult> result)
{
    // Keep the view valid for the new head count (a single head beyond h shows the mean).
    m_renderer.setResult(std::move(result));
    invalidate();
}

void HeatmapWidget::setOptions(const HeatmapOptions &options)
{
    m_requested = options;
    m_renderer.setOptions(effectiveOptions(options));
    invalidate();
}

void HeatmapWidget::showSingleHead(int head)
{
    HeatmapOptions o = m_requested;
    o.view = HeatmapView::SingleHead;
    o.head = head;
    setOptions(o);
}

void HeatmapWidget::showGrid()
{
    HeatmapOptions o = m_requested;
    o.view = HeatmapView::Grid;
    setOptions(o);
}

HeatmapHit HeatmapWidget::cellAt(const QPointF &pos) const
{
    return m_renderer.cellAt(QRectF(rect()), pos);
}

QString HeatmapWidget::toolTipAt(const QPointF &pos) const
{
    return m_renderer.describeCell(cellAt(pos));
}

QSize HeatmapWidget::sizeHint() const
{
    return {900, 640};
}

QSize HeatmapWidget::minimumSizeHint() const
{
    return {240, 180};
}

void HeatmapWidget::invalidate()
{
    m_cache = QPixmap();
    m_hover = HeatmapHit();
    update();
}

void HeatmapWidget::paintEvent(QPaintEvent *)
{
    const qreal dpr = devicePixelRatioF();
    if (m_cache.isNull() || m_cache.size() != size() * dpr) {
        m_cache = QPixmap(size() * dpr);
        m_cache.setDevicePixelRatio(dpr);
        m_cache.fill(m_renderer.options().background);
        QPainter cachePainter(&m_cache);
        cachePainter.setRenderHint(QPainter::TextAntialiasing);
        m_renderer.paint(&cachePainter, QRectF(rect()));
    }
    QPainter painter(this);
    painter.drawPixmap(0, 0, m_cache);
    if (m_hover.valid()) {
        const QRectF cell = m_renderer.cellRect(QRectF(rect()), m_hover);
        if (!cell.isEmpty()) {
            const qreal grow = cell.width() < 6 ? 2.0 : 0.0;
            painter.setRenderHint(QPainter::Antialiasing);
            painter.setPen(QPen(Qt::white, 3));
            painter.drawRect(cell.adjusted(-grow, -grow, grow, grow));
            painter.setPen(QPen(Qt::black, 1.2));
            painter.drawRect(cell.adjusted(-grow, -grow, grow, grow));
        }
    }
    if (const auto &shown = m_renderer.result())
        emit painted(shown->requestId);
}

void HeatmapWidget::resizeEvent(QResizeEvent *event)
{
    m_cache = QPixmap();
    QWidget::resizeEvent(event);
}

void HeatmapWidget::setHover(const HeatmapHit &hit)
{
    if (hit == m_hover)
        return;
    m_hover = hit;
    update();
    emit cellHovered(hit);
}

void HeatmapWidget::mouseMoveEvent(QMouseEvent *event)
{
    const HeatmapHit hit = cellAt(event->position());
    const bool changed = !(hit == m_hover);
    setHover(hit);
    if (!hit.valid())
        QToolTip::hideText();
    else if (changed)
        QToolTip::showText(event->globalPosition().toPoint(), m_renderer.describeCell(hit), this);
    QWidget::mouseMoveEvent(event);
}

void HeatmapWidget::mousePressEvent(QMouseEvent *event)
{
    if (event->button() == Qt::LeftButton) {
        m_pressed = true;
        m_pressPos = event->position();
    }
    QWidget::mousePressEvent(event);
}

void HeatmapWidget::mouseReleaseEvent(QMouseEvent *event)
{
    if (event->button() == Qt::LeftButton && m_pressed) {
        m_pressed = false;
        if ((event->position() - m_pressPos).manhattanLength() < 6) {
            const HeatmapHit hit = cellAt(event->position());
            if (hit.valid())
                emit tileActivated(hit.head);
        }
    }
    QWidget::mouseReleaseEvent(event);
}

void HeatmapWidget::leaveEvent(QEvent *event)
{
    setHover(HeatmapHit());
    QWidget::leaveEvent(event);
}

bool HeatmapWidget::event(QEvent *event)
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

void HeatmapWidget::changeEvent(QEvent *event)
{
    if (event->type() == QEvent::PaletteChange || event->type() == QEvent::FontChange) {
        m_renderer.setOptions(effectiveOptions(m_requested));
        invalidate();
    }
    QWidget::changeEvent(event);
}

} // namespace attn
