#include "ui/views/heatmapwidget.h"

#include <QEvent>
#include <QFontMetricsF>
#include <QHelpEvent>
#include <QKeyEvent>
#include <QMouseEvent>
#include <QPainter>
#include <QTimer>
#include <QToolTip>
#include <QWheelEvent>

#include <algorithm>
#include <cmath>

namespace attn {

namespace {

/// The widget's picture: the background, then `renderer`'s heatmaps in `bounds` (widget
/// coordinates), `devSize` device pixels at `dpr`. Reentrant: the GUI thread paints small
/// results with it, a worker thread large ones.
QImage paintPicture(const HeatmapRenderer &renderer, QSize devSize, qreal dpr, const QRectF &bounds)
{
    const QColor background = renderer.options().background;
    QImage image(devSize,
                 background.alpha() == 255 ? QImage::Format_RGB32
                                           : QImage::Format_ARGB32_Premultiplied);
    image.setDevicePixelRatio(dpr);
    image.fill(background);
    QPainter painter(&image);
    painter.setRenderHint(QPainter::TextAntialiasing);
    renderer.paint(&painter, bounds);
    return image;
}

} // namespace

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
        m_transformJobs.cancel(); // a heavier transform still running is superseded
        if (m_transforming) {
            m_transforming = false;
            emit transformingChanged(false);
        }
        showShown(applyViewTransform(source, m_transform));
        return;
    }
    // Long sequences: copy and renormalise on a worker thread; only the newest result is shown.
    m_transformJobs.run([source, transform = m_transform](
                            const JobContext &) { return applyViewTransform(source, transform); },
                        [this, generation](std::shared_ptr<const SessionResult> shown) {
                            if (generation != m_transformGeneration)
                                return; // superseded (the runner drops these too)
                            m_transforming = false;
                            emit transformingChanged(false);
                            showShown(std::move(shown));
                        });
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
    m_pictureCurrent = false;
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
    // Between the banner (if any) and the row strip (if any).
    const qreal top = std::min(bannerRect().bottom(), qreal(height()));
    const QRectF strip = rowStripBounds();
    const qreal bottom = strip.isEmpty() ? qreal(height()) : strip.top();
    return QRectF(0, top, width(), std::max(qreal(0), bottom - top));
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
    m_pictureCurrent = false;
    m_hover = HeatmapHit();
    update();
}

qint64 HeatmapWidget::pictureCells() const
{
    const QRect cells = m_renderer.visibleCells();
    return qint64(m_renderer.tileCount()) * cells.width() * cells.height();
}

bool HeatmapWidget::updatePicture()
{
    const qreal dpr = devicePixelRatioF();
    const QSize devSize = size() * dpr;
    const QRectF bounds = heatmapBounds();
    if (m_pictureCurrent && m_picture.size() == devSize)
        return true;
    m_pictureCurrent = false;
    if (pictureCells() < asyncPictureCells) {
        m_pictureJobs.cancel(); // a large picture still being painted is superseded
        m_picture = paintPicture(m_renderer, devSize, dpr, bounds);
        m_pictureCurrent = true;
        return true;
    }
    // Large results: the tile images and the rest of the picture are painted on a worker from
    // a copy of the renderer (its result is shared and immutable); the widget draws the last
    // picture meanwhile. Newest wins: a later change cancels this one.
    const PictureRequest request {m_renderer.result(), m_renderer.options(), devSize, bounds};
    if (m_pictureJobs.isBusy() && request == m_pictureRequest)
        return false; // already being painted
    m_pictureRequest = request;
    m_pictureJobs.run(
        [renderer = m_renderer, devSize, dpr, bounds](const JobContext &) {
            return std::make_pair(paintPicture(renderer, devSize, dpr, bounds), renderer);
        },
        [this, request](std::pair<QImage, HeatmapRenderer> done) {
            m_picture = std::move(done.first);
            const PictureRequest now {m_renderer.result(), m_renderer.options(),
                                      size() * devicePixelRatioF(), heatmapBounds()};
            if (now.result == request.result && now.options == request.options) {
                // The renderer as the worker left it, with its tile images and colour range,
                // so hovering and the row strip need not rebuild them.
                m_renderer = std::move(done.second);
            }
            // Otherwise the state changed since the request (the next paint asks again); the
            // picture is shown, scaled, until then.
            m_pictureCurrent = now == request;
            update();
        });
    return false;
}

void HeatmapWidget::paintEvent(QPaintEvent *)
{
    const QRectF bounds = heatmapBounds();
    const bool current = updatePicture();
    QPainter painter(this);
    if (m_picture.size() == size() * devicePixelRatioF()) {
        painter.drawImage(0, 0, m_picture);
    } else { // an older picture of another size, scaled until the new one arrives
        painter.fillRect(rect(), m_renderer.options().background);
        if (!m_picture.isNull())
            painter.drawImage(QRectF(rect()), m_picture);
    }
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
    // The banner across the top, in its own band above the heatmaps (heatmapBounds).
    const QStringList lines = bannerLines();
    if (!lines.isEmpty()) {
        const bool notice = !m_computingBanner;
        QFont font = painter.font();
        font.setBold(true);
        painter.setFont(font);
        const QFontMetricsF fm(font);
        const QRectF box = bannerRect();
        const qreal pad = fm.height() * 0.5;
        const qreal lineWidth = std::max(qreal(1), box.width() - 2 * pad);
        painter.fillRect(box, notice ? QColor(255, 226, 222) : QColor(255, 244, 214));
        painter.setPen(notice ? QColor(120, 20, 10) : QColor(90, 60, 0));
        qreal y = box.top() + pad;
        for (int i = 0; i < lines.size(); ++i) {
            const bool wrap = i == 0; // the first line wraps, the others are elided
            const qreal h = wrap
                ? fm.boundingRect(QRectF(0, 0, lineWidth, 1e6), Qt::TextWordWrap, lines[i]).height()
                : fm.height();
            const QRectF lineBox(box.left() + pad, y, lineWidth, h);
            if (wrap)
                painter.drawText(lineBox, Qt::AlignLeft | Qt::AlignVCenter | Qt::TextWordWrap,
                                 lines[i]);
            else
                painter.drawText(lineBox, Qt::AlignLeft | Qt::AlignVCenter,
                                 fm.elidedText(lines[i], Qt::ElideRight, lineWidth));
            y += h;
        }
    }
    if (const auto &shown = m_renderer.result(); shown && current)
        emit painted(shown->requestId);
}

void HeatmapWidget::setComputing(bool computing)
{
    if (!m_computingTimer) {
        m_computingTimer = new QTimer(this);
        m_computingTimer->setSingleShot(true);
        m_computingTimer->setInterval(500);
        connect(m_computingTimer, &QTimer::timeout, this, [this] {
            // Replaces a refusal shown before: the newer parameters are being computed.
            m_computingBanner = true;
            m_notice.clear();
            m_noticeToolTip.clear();
            bannerChanged();
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
        bannerChanged();
    }
}

void HeatmapWidget::setNotice(const QString &text, const QString &toolTip)
{
    if (text == m_notice && toolTip == m_noticeToolTip)
        return;
    m_notice = text;
    m_noticeToolTip = text.isEmpty() ? QString() : toolTip;
    if (!text.isEmpty())
        m_computingBanner = false; // the newer banner replaces the computing one
    bannerChanged();
}

QStringList HeatmapWidget::bannerLines() const
{
    if (m_computingBanner)
        return {tr("Computing… the heatmaps show the previous parameters until the new result "
                   "arrives")};
    if (m_notice.isEmpty())
        return {};
    return m_notice.split(QLatin1Char('\n'));
}

QRectF HeatmapWidget::bannerRect() const
{
    const QStringList lines = bannerLines();
    if (lines.isEmpty())
        return {};
    QFont font = this->font();
    font.setBold(true);
    const QFontMetricsF fm(font);
    const qreal pad = fm.height() * 0.5;
    const qreal lineWidth = std::max(qreal(1), width() - 2 * pad);
    qreal textHeight = 0;
    for (int i = 0; i < lines.size(); ++i)
        textHeight += i == 0
            ? fm.boundingRect(QRectF(0, 0, lineWidth, 1e6), Qt::TextWordWrap, lines[i]).height()
            : fm.height();
    return QRectF(0, 0, width(), std::ceil(textHeight + 2 * pad));
}

void HeatmapWidget::bannerChanged()
{
    // The heatmaps move below the banner (or back up): the cached picture is out of date.
    m_pictureCurrent = false;
    m_hover = HeatmapHit();
    update();
}

void HeatmapWidget::resizeEvent(QResizeEvent *event)
{
    m_pictureCurrent = false;
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
    if (!m_noticeToolTip.isEmpty() && bannerRect().contains(event->position())) {
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
        const QString text = !m_noticeToolTip.isEmpty() && bannerRect().contains(help->pos())
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
