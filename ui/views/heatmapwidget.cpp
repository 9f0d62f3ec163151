#include "ui/views/heatmapwidget.h"

#include <QEvent>
#include <QFontMetricsF>
#include <QFutureWatcher>
#include <QHelpEvent>
#include <QKeyEvent>
#include <QMouseEvent>
#include <QPainter>
#include <QTimer>
#include <QToolTip>
#include <QWheelEvent>
#include <QtConcurrent/QtConcurrentRun>

#include <algorithm>
#include <cmath>

namespace attn {

HeatmapWidget::HeatmapWidget(QWidget *parent)
    : QWidget(parent)
{
    setMouseTracking(true);
    setAttribute(Qt::WA_OpaquePaintEvent);
    setSizePolicy(QSizePolicy::Expanding, QSizePolicy::Expanding);
    setFocusPolicy(Qt::StrongFocus);
    setToolTip(QString()); // tooltips come from the cells (event())
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
    m_sessionResult = std::move(result);
    showResult();
}

void HeatmapWidget::setViewTransform(const ViewTransform &transform)
{
    if (transform == m_transform)
        return;
    m_transform = transform;
    showResult();
}

void HeatmapWidget::showResult()
{
    const quint64 generation = ++m_transformGeneration;
    const auto &source = m_sessionResult;
    const bool heavy = source && source->ok() && !m_transform.isIdentity()
        && qint64(source->headCount()) * source->queryCount() * source->keyCount()
            >= asyncTransformCells;
    if (!heavy) {
        if (m_transforming) {
            m_transforming = false;
            emit transformingChanged(false);
        }
        showShown(applyViewTransform(source, m_transform));
        return;
    }
    // Long sequences: copy and renormalise on a worker thread; only the newest result is shown.
    using Shown = std::shared_ptr<const SessionResult>;
    auto *watcher = new QFutureWatcher<Shown>(this);
    connect(watcher, &QFutureWatcher<Shown>::finished, this, [this, watcher, generation] {
        watcher->deleteLater();
        if (generation != m_transformGeneration)
            return; // superseded
        m_transforming = false;
        emit transformingChanged(false);
        showShown(watcher->result());
    });
    watcher->setFuture(QtConcurrent::run(
        [source, transform = m_transform] { return applyViewTransform(source, transform); }));
    if (!m_transforming) {
        m_transforming = true;
        emit transformingChanged(true);
    }
}

void HeatmapWidget::showShown(std::shared_ptr<const SessionResult> shown)
{
    // A zoom window only survives results of the same shape.
    const auto &old = m_renderer.result();
    const bool sameShape = old && shown && old->queryCount() == shown->queryCount()
        && old->keyCount() == shown->keyCount();
    if (!sameShape && !m_requested.window.isNull()) {
        m_requested.window = QRect();
        m_renderer.setResult(shown);
        m_renderer.setOptions(effectiveOptions(m_requested));
        emit visibleCellsChanged(m_renderer.visibleCells());
    } else {
        m_renderer.setResult(shown);
    }
    invalidate();
    emit shownResultChanged(shown);
}

void HeatmapWidget::setOptions(const HeatmapOptions &options)
{
    const bool changed = !(options == m_requested);
    m_requested = options;
    m_renderer.setOptions(effectiveOptions(options));
    invalidate();
    if (changed)
        emit optionsChanged();
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

bool HeatmapWidget::isZoomed() const
{
    const auto &r = m_renderer.result();
    const QRect cells = m_renderer.visibleCells();
    return r && !cells.isEmpty()
        && (cells.width() < r->keyCount() || cells.height() < r->queryCount());
}

void HeatmapWidget::setVisibleCells(const QRect &window)
{
    const QRect before = m_renderer.visibleCells();
    HeatmapOptions o = m_requested;
    o.window = window;
    // Store the clamped window (or none when it covers everything) so zoom steps compose.
    m_renderer.setOptions(effectiveOptions(o));
    const QRect after = m_renderer.visibleCells();
    const auto &r = m_renderer.result();
    const bool all = !r || (after.width() >= r->keyCount() && after.height() >= r->queryCount());
    o.window = all ? QRect() : after;
    setOptions(o);
    if (after != before)
        emit visibleCellsChanged(after);
}

void HeatmapWidget::zoomBy(double factor, const QPointF &anchor)
{
    const auto &r = m_renderer.result();
    const QRect w = m_renderer.visibleCells();
    if (!r || w.isEmpty() || !(factor > 0))
        return;
    const int nQ = int(r->queryCount()), nK = int(r->keyCount());
    const int minQ = std::min(4, nQ), minK = std::min(4, nK);
    const int cols = std::clamp(int(std::lround(w.width() / factor)), minK, nK);
    const int rows = std::clamp(int(std::lround(w.height() / factor)), minQ, nQ);
    // The anchor's position inside the window, as fractions (the centre without an anchor).
    double fx = 0.5, fy = 0.5;
    if (!anchor.isNull()) {
        const HeatmapLayout lay = m_renderer.layout(heatmapBounds());
        for (const HeatmapLayout::Tile &tile : lay.tiles) {
            if (tile.map.contains(anchor)) {
                fx = (anchor.x() - tile.map.left()) / tile.map.width();
                fy = (anchor.y() - tile.map.top()) / tile.map.height();
                break;
            }
        }
    }
    const double ax = w.x() + fx * w.width(), ay = w.y() + fy * w.height();
    const int x = int(std::lround(ax - fx * cols)), y = int(std::lround(ay - fy * rows));
    QRect next(x, y, cols, rows);
    // The new layout may move the tiles a little (label widths, whole-pixel cells): shift the
    // window so the cell that was under the anchor still is.
    const HeatmapHit target = anchor.isNull() ? HeatmapHit() : cellAt(anchor);
    if (target.valid()) {
        HeatmapRenderer probe = m_renderer;
        HeatmapOptions o = probe.options();
        o.window = next;
        probe.setOptions(o);
        const HeatmapHit now = probe.cellAt(heatmapBounds(), anchor);
        if (now.valid())
            next.translate(target.col - now.col, target.row - now.row);
    }
    setVisibleCells(next);
}

void HeatmapWidget::panBy(int rows, int cols)
{
    if (!isZoomed())
        return;
    setVisibleCells(m_renderer.visibleCells().translated(cols, rows));
}

void HeatmapWidget::setRowStripVisible(bool visible)
{
    if (visible == m_rowStrip)
        return;
    m_rowStrip = visible;
    m_cache = QPixmap();
    update();
}

QRectF HeatmapWidget::rowStripBounds() const
{
    if (!m_rowStrip)
        return {};
    const qreal f = m_renderer.options().fontPixelSize;
    const qreal h = std::ceil(3.6 * f);
    if (height() < 4 * h)
        return {};
    const qreal pad = std::ceil(0.6 * f);
    return QRectF(pad, height() - h, width() - 2 * pad, h - 0.4 * f);
}

QRectF HeatmapWidget::heatmapBounds() const
{
    const QRectF strip = rowStripBounds();
    if (strip.isEmpty())
        return QRectF(rect());
    return QRectF(0, 0, width(), strip.top());
}

HeatmapHit HeatmapWidget::cellAt(const QPointF &pos) const
{
    return m_renderer.cellAt(heatmapBounds(), pos);
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
    const QRectF bounds = heatmapBounds();
    if (m_cache.isNull() || m_cache.size() != size() * dpr) {
        m_cache = QPixmap(size() * dpr);
        m_cache.setDevicePixelRatio(dpr);
        m_cache.fill(m_renderer.options().background);
        QPainter cachePainter(&m_cache);
        cachePainter.setRenderHint(QPainter::TextAntialiasing);
        m_renderer.paint(&cachePainter, bounds);
    }
    QPainter painter(this);
    painter.drawPixmap(0, 0, m_cache);
    const QRectF strip = rowStripBounds();
    if (!strip.isEmpty() && m_renderer.result() && m_renderer.result()->ok()) {
        painter.setRenderHint(QPainter::TextAntialiasing);
        m_renderer.paintRowStrip(&painter, strip, m_hover);
    }
    if (m_hover.valid()) {
        const QRectF cell = m_renderer.cellRect(bounds, m_hover);
        if (!cell.isEmpty()) {
            const qreal grow = cell.width() < 6 ? 2.0 : 0.0;
            painter.setRenderHint(QPainter::Antialiasing);
            painter.setPen(QPen(Qt::white, 3));
            painter.drawRect(cell.adjusted(-grow, -grow, grow, grow));
            painter.setPen(QPen(Qt::black, 1.2));
            painter.drawRect(cell.adjusted(-grow, -grow, grow, grow));
        }
    }
    // Banners across the top: "computing…" first, then the notice. Lines are elided to the
    // width, except a wrapped first line (word-wrapped over as many lines as it needs).
    qreal top = 0;
    auto banner
        = [&](const QStringList &lines, bool wrapFirst, const QColor &fill, const QColor &ink) {
              QFont font = painter.font();
              font.setBold(true);
              painter.setFont(font);
              const QFontMetricsF fm(font);
              const qreal pad = fm.height() * 0.5;
              qreal textWidth = 0;
              for (const QString &line : lines)
                  textWidth = std::max(textWidth, fm.horizontalAdvance(line));
              const qreal boxWidth = std::min(qreal(width()), textWidth + 2 * pad);
              const qreal lineWidth = std::max(qreal(1), boxWidth - 2 * pad);
              QList<qreal> heights;
              qreal textHeight = 0;
              for (int i = 0; i < lines.size(); ++i) {
                  heights.append(i == 0 && wrapFirst ? fm.boundingRect(QRectF(0, 0, lineWidth, 1e6),
                                                                       Qt::TextWordWrap, lines[i])
                                                           .height()
                                                     : fm.height());
                  textHeight += heights.back();
              }
              const QRectF box(QPointF(0, top), QSizeF(boxWidth, textHeight + 2 * pad));
              painter.fillRect(box, fill);
              painter.setPen(ink);
              qreal y = box.top() + pad;
              for (int i = 0; i < lines.size(); ++i) {
                  const QRectF lineBox(box.left() + pad, y, lineWidth, heights[i]);
                  if (i == 0 && wrapFirst)
                      painter.drawText(lineBox, Qt::AlignLeft | Qt::AlignVCenter | Qt::TextWordWrap,
                                       lines[i]);
                  else
                      painter.drawText(lineBox, Qt::AlignLeft | Qt::AlignVCenter,
                                       fm.elidedText(lines[i], Qt::ElideRight, lineWidth));
                  y += heights[i];
              }
              top = box.bottom();
              return box;
          };
    if (m_computingBanner)
        banner({tr("Computing… the heatmaps show the previous parameters until the new result "
                   "arrives")},
               false, QColor(255, 244, 214, 235), QColor(90, 60, 0));
    m_noticeRect = m_notice.isEmpty() ? QRectF()
                                      : banner(m_notice.split(QLatin1Char('\n')), true,
                                               QColor(255, 226, 222, 240), QColor(120, 20, 10));
    if (const auto &shown = m_renderer.result())
        emit painted(shown->requestId);
}

void HeatmapWidget::setComputing(bool computing)
{
    if (!m_computingTimer) {
        m_computingTimer = new QTimer(this);
        m_computingTimer->setSingleShot(true);
        m_computingTimer->setInterval(500);
        connect(m_computingTimer, &QTimer::timeout, this, [this] {
            m_computingBanner = true;
            update();
        });
    }
    if (computing) {
        if (!m_computingTimer->isActive() && !m_computingBanner)
            m_computingTimer->start();
        return;
    }
    m_computingTimer->stop();
    if (m_computingBanner) {
        m_computingBanner = false;
        update();
    }
}

void HeatmapWidget::setNotice(const QString &text, const QString &toolTip)
{
    if (text == m_notice && toolTip == m_noticeToolTip)
        return;
    m_notice = text;
    m_noticeToolTip = text.isEmpty() ? QString() : toolTip;
    if (text.isEmpty())
        m_noticeRect = QRectF();
    update();
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
    if (m_pressed && (event->buttons() & Qt::LeftButton)) {
        const QPointF delta = event->position() - m_pressPos;
        if (!m_dragging && delta.manhattanLength() >= 6 && isZoomed()) {
            m_dragging = true;
            setCursor(Qt::ClosedHandCursor);
            QToolTip::hideText();
        }
        if (m_dragging) {
            const qreal cell = m_renderer.layout(heatmapBounds()).cellSize;
            if (cell > 0) {
                const int dc = int(std::lround(-delta.x() / cell));
                const int dr = int(std::lround(-delta.y() / cell));
                setVisibleCells(m_pressWindow.translated(dc, dr));
            }
            QWidget::mouseMoveEvent(event);
            return;
        }
    }
    if (m_noticeRect.contains(event->position()) && !m_noticeToolTip.isEmpty()) {
        // Over the notice banner: its message, not the cell underneath.
        setHover(HeatmapHit());
        QToolTip::showText(event->globalPosition().toPoint(), m_noticeToolTip, this);
        QWidget::mouseMoveEvent(event);
        return;
    }
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
        m_dragging = false;
        m_pressPos = event->position();
        m_pressWindow = m_renderer.visibleCells();
    }
    QWidget::mousePressEvent(event);
}

void HeatmapWidget::mouseReleaseEvent(QMouseEvent *event)
{
    if (event->button() == Qt::LeftButton && m_pressed) {
        m_pressed = false;
        if (m_dragging) {
            m_dragging = false;
            unsetCursor();
        } else if ((event->position() - m_pressPos).manhattanLength() < 6) {
            const HeatmapHit hit = cellAt(event->position());
            if (hit.valid())
                emit tileActivated(hit.head);
        }
    }
    QWidget::mouseReleaseEvent(event);
}

void HeatmapWidget::wheelEvent(QWheelEvent *event)
{
    const int notches = event->angleDelta().y();
    if (notches == 0 || !m_renderer.result()) {
        QWidget::wheelEvent(event);
        return;
    }
    zoomBy(std::pow(zoomStep, notches / 120.0), event->position());
    // The same cell stays under the pointer: show its (possibly new) tooltip and strip.
    setHover(cellAt(event->position()));
    event->accept();
}

void HeatmapWidget::keyPressEvent(QKeyEvent *event)
{
    const QRect w = m_renderer.visibleCells();
    const int stepRows = std::max(1, w.height() / 8), stepCols = std::max(1, w.width() / 8);
    switch (event->key()) {
    case Qt::Key_Plus:
    case Qt::Key_Equal:
        zoomIn();
        break;
    case Qt::Key_Minus:
    case Qt::Key_Underscore:
        zoomOut();
        break;
    case Qt::Key_0:
    case Qt::Key_Home:
        resetZoom();
        break;
    case Qt::Key_Left:
        panBy(0, -stepCols);
        break;
    case Qt::Key_Right:
        panBy(0, stepCols);
        break;
    case Qt::Key_Up:
        panBy(-stepRows, 0);
        break;
    case Qt::Key_Down:
        panBy(stepRows, 0);
        break;
    default:
        QWidget::keyPressEvent(event);
        return;
    }
    event->accept();
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
        const QString text = m_noticeRect.contains(help->pos()) && !m_noticeToolTip.isEmpty()
            ? m_noticeToolTip
            : toolTipAt(help->pos());
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
