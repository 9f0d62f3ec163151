#pragma once
// The Long tab's private parts shared by longmapview.cpp (the widget: controls, viewport, hover,
// exports) and longmapcanvas.cpp (the canvas: painting the map, axes, colour bar and row strip;
// mouse and wheel). Not part of the views tier's interface.

#include "ui/views/longmapview.h"

#include "ui/render/figurefile.h"

#include <QKeyEvent>
#include <QMouseEvent>
#include <QPainter>
#include <QPointF>
#include <QString>
#include <QWheelEvent>
#include <QWidget>

namespace attn {

namespace longmap {

inline constexpr int defaultLength = 16384;
inline constexpr qreal axisLeft = 62, axisTop = 22, legendWidth = 96;
// The colour bar: a gap right of the map, the bar, a gap, then its labels.
inline constexpr qreal barGap = 14, barWidth = 14, barLabelGap = 4;
inline constexpr qreal stripHeight = 64, stripGap = 10; // the row strip under the map
inline constexpr qreal axisBottom = stripHeight + stripGap + 4;

inline QString mib(double bytes)
{
    return QStringLiteral("%1 MiB").arg(bytes / (1024.0 * 1024.0), 0, 'f', 1);
}

inline QString number(double v)
{
    return figure::minusSign(QString::number(v, 'g', 6));
}

} // namespace longmap

class LongMapView::Canvas : public QWidget
{
public:
    explicit Canvas(LongMapView *view)
        : m_view(view)
    {
        setObjectName(QStringLiteral("longMapCanvas"));
        setMinimumSize(360, 220);
        setSizePolicy(QSizePolicy::Expanding, QSizePolicy::Expanding);
        setMouseTracking(true);
        setFocusPolicy(Qt::StrongFocus);
    }

protected:
    void paintEvent(QPaintEvent *) override;
    void resizeEvent(QResizeEvent *) override
    {
        m_view->clampView();
        m_view->requestTiles();
    }
    void wheelEvent(QWheelEvent *event) override
    {
        const double notches = event->angleDelta().y() / 120.0;
        if (notches != 0)
            m_view->zoomAt(event->position(), std::pow(1.25, notches));
        event->accept();
    }
    void mousePressEvent(QMouseEvent *event) override
    {
        if (event->button() == Qt::LeftButton) {
            m_dragFrom = event->position();
            m_dragging = true;
            setCursor(Qt::ClosedHandCursor);
        }
    }
    void mouseMoveEvent(QMouseEvent *event) override
    {
        if (m_dragging) {
            m_view->panBy(event->position() - m_dragFrom);
            m_dragFrom = event->position();
        }
        m_view->hover(event->position());
    }
    void mouseReleaseEvent(QMouseEvent *) override
    {
        m_dragging = false;
        unsetCursor();
    }
    void mouseDoubleClickEvent(QMouseEvent *event) override
    {
        m_view->zoomAt(event->position(), 2.0);
    }
    void leaveEvent(QEvent *) override { m_view->hover(QPointF(-1, -1)); }
    void keyPressEvent(QKeyEvent *event) override
    {
        const QPointF middle = m_view->mapArea().center();
        const qreal step = std::min(width(), height()) / 8.0;
        switch (event->key()) {
        case Qt::Key_Plus:
        case Qt::Key_Equal:
            m_view->zoomAt(middle, 1.5);
            break;
        case Qt::Key_Minus:
            m_view->zoomAt(middle, 1 / 1.5);
            break;
        case Qt::Key_Left:
            m_view->panBy({step, 0});
            break;
        case Qt::Key_Right:
            m_view->panBy({-step, 0});
            break;
        case Qt::Key_Up:
            m_view->panBy({0, step});
            break;
        case Qt::Key_Down:
            m_view->panBy({0, -step});
            break;
        case Qt::Key_Home:
        case Qt::Key_0:
            m_view->fit();
            break;
        default:
            QWidget::keyPressEvent(event);
        }
    }

private:
    /// The hovered query's weights over the visible keys in `strip` (canvas coordinates), its
    /// label right-aligned before `left`; a hint before a hover.
    void paintRowStrip(QPainter &painter, const QRectF &strip, qreal left, Index head) const;

    LongMapView *m_view;
    QPointF m_dragFrom;
    bool m_dragging = false;
};

} // namespace attn
