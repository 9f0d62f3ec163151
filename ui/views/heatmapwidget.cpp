#include "ui/views/heatmapwidget.h"

#include <QAbstractSpinBox>
#include <QApplication>
#include <QClipboard>
#include <QComboBox>
#include <QContextMenuEvent>
#include <QEvent>
#include <QFontMetricsF>
#include <QGuiApplication>
#include <QHelpEvent>
#include <QKeyEvent>
#include <QLineEdit>
#include <QMenu>
#include <QMouseEvent>
#include <QPainter>
#include <QPlainTextEdit>
#include <QScrollBar>
#include <QTextEdit>
#include <QTimer>
#include <QToolTip>
#include <QWheelEvent>

#include <algorithm>
#include <cmath>
#include <tuple>
#include <utility>

namespace attn {

namespace {

/// True when the keyboard focus is in a widget that takes typed text (a line edit, a spin box,
/// a text box): hovering the map must not take the focus from it.
bool typingElsewhere()
{
    const QWidget *focus = QApplication::focusWidget();
    return focus
        && (qobject_cast<const QLineEdit *>(focus) || qobject_cast<const QAbstractSpinBox *>(focus)
            || qobject_cast<const QPlainTextEdit *>(focus) || qobject_cast<const QTextEdit *>(focus)
            || qobject_cast<const QComboBox *>(focus));
}

/// The widget's picture: the background, then `renderer`'s heatmaps laid out in `bounds`
/// (picture coordinates; tiles outside the picture are skipped), `devSize` device pixels at
/// `dpr`. Reentrant: the GUI thread paints small results with it, a worker thread large ones.
QImage paintPicture(const HeatmapRenderer &renderer, QSize devSize, qreal dpr, const QRectF &bounds,
                    bool legendOnly = false)
{
    const QColor background = renderer.options().background;
    QImage image(devSize,
                 background.alpha() == 255 ? QImage::Format_RGB32
                                           : QImage::Format_ARGB32_Premultiplied);
    image.setDevicePixelRatio(dpr);
    image.fill(background);
    QPainter painter(&image);
    painter.setRenderHint(QPainter::TextAntialiasing);
    painter.setClipRect(QRectF(QPointF(0, 0), QSizeF(devSize) / dpr));
    if (legendOnly)
        renderer.paintLegend(&painter, bounds);
    else
        renderer.paint(&painter, bounds);
    return image;
}

/// The band and, when the request has one, the legend column painted apart.
std::pair<QImage, QImage> paintPictures(const HeatmapRenderer &renderer, QSize devSize, qreal dpr,
                                        const QRectF &bounds, qreal legendLeft)
{
    QImage legend;
    if (legendLeft > 0) {
        const QSizeF view = bounds.size();
        legend = paintPicture(renderer, (view * dpr).toSize().expandedTo(QSize(1, 1)), dpr,
                              QRectF(QPointF(0, 0), view), true);
    }
    return {paintPicture(renderer, devSize, dpr, bounds), legend};
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
    m_scrollBar = new QScrollBar(Qt::Vertical, this);
    m_scrollBar->setObjectName(QStringLiteral("heatmapScrollBar"));
    m_scrollBar->hide();
    connect(m_scrollBar, &QScrollBar::valueChanged, this, [this] {
        setHover(HeatmapHit());
        update();
    });
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
    // Tiles keep their minimum size and the widget scrolls, unless every head must fit.
    options.scrollable = !options.fitAll;
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
    emit viewStateChanged();
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
    // A pinned query past the new result's rows is dropped.
    const bool pinGone = shown && shown->ok() && m_requested.pinnedQuery >= shown->queryCount();
    if (pinGone)
        m_requested.pinnedQuery = -1;
    const bool rangeChosen = chooseRangeByLength(shown.get());
    const bool windowDropped = !sameShape && !m_requested.window.isNull();
    if (windowDropped || pinGone || rangeChosen) {
        if (!sameShape)
            m_requested.window = QRect();
        m_renderer.setResult(shown);
        m_renderer.setOptions(effectiveOptions(m_requested));
        emit visibleCellsChanged(m_renderer.visibleCells());
    } else {
        m_renderer.setResult(shown);
    }
    invalidate();
    if (rangeChosen)
        emit optionsChanged();
    if (rangeChosen || pinGone || windowDropped)
        emit viewStateChanged();
    emit shownResultChanged(shown);
}

bool HeatmapWidget::chooseRangeByLength(const SessionResult *shown)
{
    if (!m_rangeByLength || !shown || !shown->ok())
        return false;
    const bool longMap = shown->keyCount() >= longMapKeys;
    HeatmapOptions o = m_requested;
    o.autoRange = false;
    o.maxWeightRange = longMap;
    o.scale = longMap ? ColorScale::Log : ColorScale::Linear;
    if (o == m_requested)
        return false;
    m_requested = o;
    return true;
}

void HeatmapWidget::setOptions(const HeatmapOptions &options)
{
    const bool changed = !(options == m_requested);
    if (options.scale != m_requested.scale || options.autoRange != m_requested.autoRange
        || options.maxWeightRange != m_requested.maxWeightRange)
        m_rangeByLength = false;
    m_requested = options;
    m_renderer.setOptions(effectiveOptions(options));
    invalidate();
    if (changed) {
        emit optionsChanged();
        emit viewStateChanged();
    }
}

void HeatmapWidget::showSingleHead(int head)
{
    HeatmapOptions o = m_requested;
    o.view = HeatmapView::SingleHead;
    o.head = head;
    setOptions(o);
}

void HeatmapWidget::setStretch(bool stretch)
{
    if (stretch == m_requested.stretch)
        return;
    HeatmapOptions o = m_requested;
    o.stretch = stretch;
    setOptions(o);
}

void HeatmapWidget::setPinnedQuery(int row)
{
    const auto &r = m_renderer.result();
    if (row < 0 || !r || !r->ok() || row >= r->queryCount())
        row = -1;
    if (row == m_requested.pinnedQuery)
        return;
    HeatmapOptions o = m_requested;
    o.pinnedQuery = row;
    setOptions(o);
}

void HeatmapWidget::togglePinnedQuery(int row)
{
    setPinnedQuery(row == m_requested.pinnedQuery ? -1 : row);
}

void HeatmapWidget::setHeadSort(HeadOrderKey key, bool descending)
{
    if (key == m_requested.headSort && descending == m_requested.headSortDescending)
        return;
    HeatmapOptions o = m_requested;
    o.headSort = key;
    o.headSortDescending = descending;
    setOptions(o);
}

bool HeatmapWidget::copyCell(const HeatmapHit &hit) const
{
    const QString text = m_renderer.cellCopyText(hit);
    if (text.isEmpty())
        return false;
    QGuiApplication::clipboard()->setText(text);
    return true;
}

bool HeatmapWidget::copyRow(const HeatmapHit &hit) const
{
    const QString text = m_renderer.rowCopyText(hit);
    if (text.isEmpty())
        return false;
    QGuiApplication::clipboard()->setText(text);
    return true;
}

HeatmapHit HeatmapWidget::stripHit() const
{
    if (m_hover.valid())
        return m_hover;
    const int pin = m_renderer.pinnedRow();
    const HeatmapLayout lay = m_renderer.layout(contentBounds());
    if (pin < 0 || lay.tiles.isEmpty() || !lay.cells.contains(lay.cells.x(), pin))
        return {};
    const auto &r = m_renderer.result();
    const HeatmapLayout::Tile &tile = lay.tiles.first();
    if (!tile.mean && std::size_t(tile.head) >= r->weights.size())
        return {};
    const MatrixD &w = tile.mean ? r->weightsMean : r->weights[std::size_t(tile.head)];
    Index col = 0;
    w.row(pin).maxCoeff(&col);
    return {0, tile.head, tile.mean, pin, int(col)};
}

QString HeatmapWidget::cellToolTip(const HeatmapHit &hit) const
{
    const QString text = m_renderer.describeCell(hit);
    if (text.isEmpty())
        return text;
    return text
        + tr("\nShift+click: %1 this query in every head · Ctrl+C: copy the cell (right-click "
             "for the row)")
              .arg(hit.row == m_renderer.pinnedRow() ? tr("unpin") : tr("pin"));
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
        const HeatmapLayout lay = m_renderer.layout(contentBounds());
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
        const HeatmapHit now = probe.cellAt(contentBounds(), anchor);
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
    updateScrollBar();
    update();
    emit viewStateChanged();
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
    // Between the banner (if any) and the row strip (if any), left of the scroll bar.
    const qreal top = std::min(bannerRect().bottom(), qreal(height()));
    const QRectF strip = rowStripBounds();
    const qreal bottom = strip.isEmpty() ? qreal(height()) : strip.top();
    const qreal bar = m_scrolls ? m_scrollBar->sizeHint().width() : 0;
    return QRectF(0, top, std::max(qreal(0), width() - bar), std::max(qreal(0), bottom - top));
}

QRectF HeatmapWidget::contentBounds() const
{
    return heatmapBounds().translated(0, -scrollOffset());
}

qreal HeatmapWidget::scrollOffset() const
{
    return m_scrolls ? qreal(m_scrollBar->value()) : 0.0;
}

qreal HeatmapWidget::contentHeight() const
{
    return m_scrolls ? m_contentHeight : heatmapBounds().height();
}

void HeatmapWidget::updateScrollBar()
{
    // Without the bar first; when the grid is taller, again with the narrower width it leaves.
    const bool was = m_scrolls;
    m_scrolls = false;
    QRectF view = heatmapBounds();
    qreal content = m_renderer.layout(view).contentHeight;
    if (content > view.height() + 0.5) {
        m_scrolls = true;
        view = heatmapBounds();
        content = m_renderer.layout(view).contentHeight;
    }
    m_contentHeight = content;
    if (m_scrolls) {
        const int bar = m_scrollBar->sizeHint().width();
        m_scrollBar->setGeometry(width() - bar, int(view.top()), bar, int(view.height()));
        const QSignalBlocker block(m_scrollBar);
        m_scrollBar->setRange(0, std::max(0, int(std::ceil(content - view.height()))));
        m_scrollBar->setPageStep(std::max(1, int(view.height())));
        m_scrollBar->setSingleStep(std::max(1, int(std::lround(view.height() / 10))));
    }
    m_scrollBar->setVisible(m_scrolls);
    if (was != m_scrolls)
        m_pictureCurrent = false;
}

HeatmapHit HeatmapWidget::cellAt(const QPointF &pos) const
{
    if (!heatmapBounds().contains(pos))
        return {};
    return m_renderer.cellAt(contentBounds(), pos);
}

QString HeatmapWidget::toolTipAt(const QPointF &pos) const
{
    if (heatmapBounds().contains(pos)) {
        const QString title = m_renderer.titleToolTipAt(contentBounds(), pos);
        if (!title.isEmpty())
            return title;
        const int row = m_renderer.queryLabelAt(contentBounds(), pos);
        if (row >= 0)
            return row == m_renderer.pinnedRow()
                ? tr("Click to unpin query %1 (or Esc)").arg(m_renderer.queryAxisLabel(row))
                : tr("Click to pin query %1 in every head (Esc unpins)")
                      .arg(m_renderer.queryAxisLabel(row));
    }
    return cellToolTip(cellAt(pos));
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
    updateScrollBar();
    update();
}

qint64 HeatmapWidget::pictureCells() const
{
    const QRect cells = m_renderer.visibleCells();
    return qint64(m_renderer.tileCount()) * cells.width() * cells.height();
}

QSize HeatmapWidget::PictureRequest::devSize() const
{
    return QSize(std::max(1, int(std::ceil(viewSize.width() * dpr))),
                 std::max(1, int(std::ceil(bandHeight * dpr))));
}

HeatmapWidget::PictureRequest HeatmapWidget::pictureRequest() const
{
    const QRectF view = heatmapBounds();
    PictureRequest r {
        m_renderer.result(),         m_renderer.options(), devicePixelRatioF(), view.size(), 0,
        std::max(view.height(), 1.0)};
    if (m_scrolls) {
        // A band of three viewports around the visible part (the whole grid when shorter).
        const qreal band = std::min(m_contentHeight, 3 * view.height());
        r.bandHeight = std::max(band, 1.0);
        r.bandTop = std::clamp(std::floor(scrollOffset() - view.height()), 0.0,
                               std::max(0.0, m_contentHeight - band));
        const HeatmapLayout lay = m_renderer.layout(QRectF(QPointF(0, 0), view.size()));
        r.legendLeft = std::max(1.0, lay.legend.left() - 0.5 * lay.fontPixelSize);
        r.legendTop = lay.caption.isNull() ? 0.0 : lay.caption.bottom();
    }
    return r;
}

bool HeatmapWidget::pictureCovers(const PictureRequest &r) const
{
    const qreal scroll = scrollOffset();
    const QRectF view = heatmapBounds();
    return r.result == m_renderer.result() && r.options == m_renderer.options()
        && r.dpr == devicePixelRatioF() && r.viewSize == view.size() && r.bandTop <= scroll + 0.5
        && scroll + view.height() <= r.bandTop + r.bandHeight + 0.5;
}

bool HeatmapWidget::updatePicture()
{
    if (m_pictureCurrent && !m_picture.isNull() && pictureCovers(m_shownPicture))
        return true;
    m_pictureCurrent = false;
    const PictureRequest request = pictureRequest();
    if (pictureCells() < asyncPictureCells) {
        m_pictureJobs.cancel(); // a large picture still being painted is superseded
        std::tie(m_picture, m_legendPicture) = paintPictures(
            m_renderer, request.devSize(), request.dpr, request.bounds(), request.legendLeft);
        m_shownPicture = request;
        m_pictureCurrent = true;
        return true;
    }
    // Large results: the tile images and the rest of the picture are painted on a worker from
    // a copy of the renderer (its result is shared and immutable); the widget draws the last
    // picture meanwhile. Newest wins: a later change cancels this one.
    if (m_pictureJobs.isBusy() && request == m_pictureRequest)
        return false; // already being painted
    m_pictureRequest = request;
    m_pictureJobs.run(
        [renderer = m_renderer, request](const JobContext &) {
            return std::make_pair(paintPictures(renderer, request.devSize(), request.dpr,
                                                request.bounds(), request.legendLeft),
                                  renderer);
        },
        [this, request](std::pair<std::pair<QImage, QImage>, HeatmapRenderer> done) {
            std::tie(m_picture, m_legendPicture) = std::move(done.first);
            m_shownPicture = request;
            if (request.result == m_renderer.result() && request.options == m_renderer.options()) {
                // The renderer as the worker left it, with its tile images and colour range,
                // so hovering and the row strip need not rebuild them.
                m_renderer = std::move(done.second);
            }
            // Otherwise the state changed since the request (the next paint asks again); the
            // picture is shown, scaled, until then.
            m_pictureCurrent = pictureCovers(request);
            update();
        });
    return false;
}

void HeatmapWidget::paintEvent(QPaintEvent *)
{
    const QRectF view = heatmapBounds();
    const bool current = updatePicture();
    QPainter painter(this);
    painter.fillRect(rect(), m_renderer.options().background);
    if (!m_picture.isNull()) {
        const PictureRequest &shown = m_shownPicture;
        const qreal scroll = scrollOffset();
        painter.save();
        painter.setClipRect(view);
        if (shown.viewSize == view.size()) {
            // The band at its place in the grid (parts it does not cover stay background).
            painter.drawImage(QPointF(view.left(), view.top() - scroll + shown.bandTop), m_picture);
            // The legend column stays at the top of the view.
            if (shown.legendLeft > 0 && !m_legendPicture.isNull()) {
                const qreal dpr = m_legendPicture.devicePixelRatio();
                // Below the caption's place while it is in sight (the band's own caption runs
                // across the legend column's width).
                const qreal top = std::max(0.0, shown.legendTop - scroll);
                const QRectF target(view.left() + shown.legendLeft, view.top() + top,
                                    view.width() - shown.legendLeft, view.height() - top);
                painter.drawImage(target, m_legendPicture,
                                  QRectF(shown.legendLeft * dpr, top * dpr, target.width() * dpr,
                                         target.height() * dpr));
            }
        } else { // an older picture of another size, scaled until the new one arrives
            const qreal dpr = m_picture.devicePixelRatio();
            const qreal top = std::clamp(scroll - shown.bandTop, 0.0,
                                         std::max(0.0, shown.bandHeight - shown.viewSize.height()));
            const QRectF source(0, top * dpr, m_picture.width(),
                                std::min(shown.viewSize.height(), shown.bandHeight) * dpr);
            painter.drawImage(view, m_picture, source);
        }
        painter.restore();
    }
    const QRectF strip = rowStripBounds();
    if (!strip.isEmpty() && m_renderer.result() && m_renderer.result()->ok()) {
        painter.setRenderHint(QPainter::TextAntialiasing);
        m_renderer.paintRowStrip(&painter, strip, stripHit());
    }
    if (m_hover.valid()) {
        const QRectF cell = m_renderer.cellRect(contentBounds(), m_hover);
        if (!cell.isEmpty()) {
            const qreal grow = cell.width() < 6 ? 2.0 : 0.0;
            painter.save();
            painter.setClipRect(view);
            painter.setRenderHint(QPainter::Antialiasing);
            painter.setPen(QPen(Qt::white, 3));
            painter.drawRect(cell.adjusted(-grow, -grow, grow, grow));
            painter.setPen(QPen(Qt::black, 1.2));
            painter.drawRect(cell.adjusted(-grow, -grow, grow, grow));
            painter.restore();
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
    updateScrollBar();
    update();
}

void HeatmapWidget::resizeEvent(QResizeEvent *event)
{
    m_pictureCurrent = false;
    updateScrollBar();
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
            const HeatmapLayout lay = m_renderer.layout(contentBounds());
            if (lay.cellWidth > 0 && lay.cellHeight > 0) {
                const int dc = int(std::lround(-delta.x() / lay.cellWidth));
                const int dr = int(std::lround(-delta.y() / lay.cellHeight));
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
    // Ctrl+C copies the cell under the pointer: the map takes the keyboard focus when a cell is
    // hovered, unless the user is typing in a field (which keeps it).
    if (hit.valid() && !hasFocus() && !typingElsewhere())
        setFocus(Qt::MouseFocusReason);
    const bool onLabel = !hit.valid() && heatmapBounds().contains(event->position())
        && m_renderer.queryLabelAt(contentBounds(), event->position()) >= 0;
    if (onLabel)
        setCursor(Qt::PointingHandCursor);
    else if (!m_dragging)
        unsetCursor();
    if (onLabel)
        QToolTip::showText(event->globalPosition().toPoint(), toolTipAt(event->position()), this);
    else if (!hit.valid())
        QToolTip::hideText();
    else if (changed)
        QToolTip::showText(event->globalPosition().toPoint(), cellToolTip(hit), this);
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
            const int label = hit.valid() || !heatmapBounds().contains(event->position())
                ? -1
                : m_renderer.queryLabelAt(contentBounds(), event->position());
            if (hit.valid() && (event->modifiers() & Qt::ShiftModifier))
                togglePinnedQuery(hit.row);
            else if (hit.valid())
                emit tileActivated(hit.head);
            else if (label >= 0)
                togglePinnedQuery(label);
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
    if (m_scrolls && !(event->modifiers() & Qt::ControlModifier)) {
        // A grid taller than the widget: the wheel scrolls it, Ctrl+wheel zooms.
        m_scrollBar->setValue(m_scrollBar->value() - notches * m_scrollBar->singleStep() / 40);
        setHover(cellAt(event->position()));
        event->accept();
        return;
    }
    zoomBy(std::pow(zoomStep, notches / 120.0), event->position());
    // The same cell stays under the pointer: show its (possibly new) tooltip and strip.
    setHover(cellAt(event->position()));
    event->accept();
}

void HeatmapWidget::keyPressEvent(QKeyEvent *event)
{
    if (event->matches(QKeySequence::Copy)) {
        if (copyCell(m_hover)) {
            event->accept();
            return;
        }
        QWidget::keyPressEvent(event);
        return;
    }
    if (event->key() == Qt::Key_Escape && m_requested.pinnedQuery >= 0) {
        setPinnedQuery(-1);
        event->accept();
        return;
    }
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
    case Qt::Key_PageUp:
        m_scrollBar->triggerAction(QAbstractSlider::SliderPageStepSub);
        break;
    case Qt::Key_PageDown:
        m_scrollBar->triggerAction(QAbstractSlider::SliderPageStepAdd);
        break;
    default:
        QWidget::keyPressEvent(event);
        return;
    }
    event->accept();
}

void HeatmapWidget::contextMenuEvent(QContextMenuEvent *event)
{
    const HeatmapHit hit = cellAt(event->pos());
    if (!hit.valid()) {
        QWidget::contextMenuEvent(event);
        return;
    }
    QMenu menu(this);
    const QString query = m_renderer.queryAxisLabel(hit.row);
    menu.addAction(tr("Copy Cell"), this, [this, hit] { copyCell(hit); })
        ->setObjectName(QStringLiteral("copyCellAction"));
    menu.addAction(tr("Copy Row (query %1)").arg(query), this, [this, hit] { copyRow(hit); })
        ->setObjectName(QStringLiteral("copyRowAction"));
    menu.addSeparator();
    const bool pinned = hit.row == m_renderer.pinnedRow();
    menu.addAction(pinned ? tr("Unpin Query %1").arg(query)
                          : tr("Pin Query %1 in Every Head").arg(query),
                   this, [this, hit] { togglePinnedQuery(hit.row); })
        ->setObjectName(QStringLiteral("pinQueryAction"));
    menu.exec(event->globalPos());
    event->accept();
}

void HeatmapWidget::leaveEvent(QEvent *event)
{
    setHover(HeatmapHit());
    QWidget::leaveEvent(event);
}

bool HeatmapWidget::event(QEvent *event)
{
    if (event->type() == QEvent::ShortcutOverride) {
        // Ctrl+C over a cell and Esc with a pinned query are this widget's, not a window
        // shortcut's.
        const auto *key = static_cast<QKeyEvent *>(event);
        if ((key->matches(QKeySequence::Copy) && m_hover.valid())
            || (key->key() == Qt::Key_Escape && m_requested.pinnedQuery >= 0)) {
            event->accept();
            return true;
        }
    }
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
