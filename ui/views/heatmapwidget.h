#pragma once
// HeatmapWidget: shows HeatmapRenderer's picture of a SessionResult. The picture is cached as an
// image (repainted only when the result, options or size change): on the GUI thread for small
// results, on a worker thread (JobRunner) from asyncPictureCells cells on, while the widget
// draws the previous picture (scaled to the new size) until the new one arrives — Qt's
// Mandelbrot example. Hovering a cell shows a
// tooltip (head, query i, key j, weight, raw and scaled score, mask state), outlines the cell
// and fills the row strip under the heatmaps with that row's keys, tokens and values; clicking
// a tile emits tileActivated(head) so the window can enlarge it.
//
// Pinning a query: clicking a query label (the band left of a map, at the row's height) or
// Shift+clicking a cell pins that query in every head (HeatmapOptions::pinnedQuery: each tile
// outlines the row, the caption names it, the row strip shows it while no cell is hovered); the
// same gesture on the pinned row, or Esc, unpins. Ctrl+C copies the hovered cell's values and
// the context menu copies the cell or its whole row (tab-separated, HeatmapRenderer::cellCopyText
// and rowCopyText) to the clipboard.
//
// Many heads: tiles keep a minimum map size (HeatmapOptions::minMapSide, 96 pixels) and, when
// the grid at that size is taller than the widget, a vertical scroll bar appears (the wheel
// scrolls, Ctrl+wheel zooms, Page Up/Down page). The picture then covers a band of about three
// viewport heights around the visible part, so scrolling inside it only moves the picture; the
// legend column (colourbar, mask legend) is painted apart and stays at the top of the view.
// HeatmapOptions::fitAll turns that off: every tile fits the widget, however small;
// HeatmapOptions::headsPerRow sets the tiles per row (0: the count that gives the biggest maps).
//
// Long sequences: the wheel zooms around the cell under the pointer, dragging pans, and the
// keyboard does both (+/− zoom, arrows pan, 0 or Home shows every cell again). The renderer
// pools the visible cells to the widget's pixels (HeatmapOptions::pooling); hovering still
// reports the exact cell. A ViewTransform (trim padding, hide keys) is applied to every result
// before it is shown.

#include "ui/render/heatmaprenderer.h"
#include "ui/session/jobrunner.h"
#include "ui/session/resultview.h"

#include <QImage>
#include <QWidget>

#include <memory>

class QScrollBar;
class QTimer;

namespace attn {

class HeatmapWidget : public QWidget
{
    Q_OBJECT
public:
    explicit HeatmapWidget(QWidget *parent = nullptr);

    /// The session's result; the widget shows applyViewTransform(result, viewTransform()).
    void setResult(std::shared_ptr<const SessionResult> result);
    /// The result as shown (after the view transform; the session's result when none).
    std::shared_ptr<const SessionResult> result() const { return m_renderer.result(); }
    /// The result as the session computed it.
    std::shared_ptr<const SessionResult> sessionResult() const { return m_sessionResult; }

    /// Trim padding / hide keys (with or without renormalisation); re-derives the shown result:
    /// at once for small results (under a millisecond), on a worker thread (newest wins) from
    /// asyncTransformCells cells h·n_q·n_k on, so the GUI thread never waits for a copy of a
    /// long sequence (the previous picture stays until the new one is ready; isTransforming()
    /// meanwhile).
    void setViewTransform(const ViewTransform &transform);
    ViewTransform viewTransform() const { return m_transform; }
    bool isTransforming() const { return m_transforming; }
    static constexpr qint64 asyncTransformCells = qint64(1) << 18;
    /// From this many shown cells (tiles × visible cells) on, the picture is painted on a
    /// worker thread; painted() then follows when the new picture is drawn.
    static constexpr qint64 asyncPictureCells = qint64(1) << 20;
    /// The picture being shown is of the current result, options and size (false while a
    /// worker paints the new one).
    bool isPictureCurrent() const { return m_pictureCurrent; }

    /// Options other than the text size (the widget uses its own font's size unless the
    /// options set one) and colours (the palette's, unless set explicitly). The window (zoom)
    /// is part of the options.
    ///
    /// Until options with another scale or range are set, the widget chooses the colour range
    /// by the shown result's length: linear on the fixed [0, 1] below longMapKeys keys, and from
    /// longMapKeys keys on log over the five decades below the largest shown weight
    /// (HeatmapOptions::maxWeightRange, the Long tab's default), where weights near 1/n would
    /// leave [0, 1] uniformly dark. optionsChanged() follows each switch.
    void setOptions(const HeatmapOptions &options);
    HeatmapOptions options() const { return m_renderer.options(); }
    static constexpr int longMapKeys = 1024;
    /// The colour range still follows the shown result's length (see setOptions()).
    bool isRangeByLength() const { return m_rangeByLength; }
    const HeatmapRenderer &renderer() const { return m_renderer; }

    /// HeatmapOptions::stretch: maps fill their tiles instead of keeping square cells.
    void setStretch(bool stretch);
    bool isStretched() const { return m_requested.stretch; }

    /// One large tile of `head` (h = the mean over heads).
    void showSingleHead(int head);
    /// All heads plus the mean.
    void showGrid();
    bool isSingleHead() const { return m_renderer.options().view == HeatmapView::SingleHead; }

    /// The visible cells (x = first key, y = first query); every cell when not zoomed.
    QRect visibleCells() const { return m_renderer.visibleCells(); }
    bool isZoomed() const;
    /// Shows the cells `window` (clamped; an empty rect shows every cell).
    void setVisibleCells(const QRect &window);
    /// Zooms by `factor` (> 1 magnifies) keeping the cell under `anchor` (widget coordinates)
    /// where it is; a null anchor keeps the window's centre. At least min(4, n) cells stay
    /// visible per side.
    void zoomBy(double factor, const QPointF &anchor = QPointF());
    void zoomIn() { zoomBy(zoomStep); }
    void zoomOut() { zoomBy(1.0 / zoomStep); }
    void resetZoom() { setVisibleCells(QRect()); }
    /// Moves the window by whole cells (clamped to the matrix).
    void panBy(int rows, int cols);
    static constexpr double zoomStep = 1.25; ///< per wheel notch / key press

    /// HeatmapOptions::pinnedQuery: a shown query row outlined in every tile, or −1 for none
    /// (out-of-range rows count as none).
    void setPinnedQuery(int row);
    int pinnedQuery() const { return m_requested.pinnedQuery; }
    /// Pins `row`, or unpins when it is the pinned row already.
    void togglePinnedQuery(int row);
    /// HeatmapOptions::headSort and headSortDescending.
    void setHeadSort(HeadOrderKey key, bool descending);

    /// Copies the cell's values (HeatmapRenderer::cellCopyText) / its row's values (rowCopyText)
    /// to the clipboard. False, leaving the clipboard alone, for an invalid hit.
    bool copyCell(const HeatmapHit &hit) const;
    bool copyRow(const HeatmapHit &hit) const;

    /// The row strip under the heatmaps (on by default).
    void setRowStripVisible(bool visible);
    bool isRowStripVisible() const { return m_rowStrip; }
    /// The visible heatmap area (the widget minus the banner, the row strip and the scroll bar)
    /// and where the strip goes.
    QRectF heatmapBounds() const;
    QRectF rowStripBounds() const;
    /// The bounds the renderer lays out in, in widget coordinates: heatmapBounds() moved up by
    /// the scroll offset (the layout's tiles below heatmapBounds() are scrolled out of view).
    QRectF contentBounds() const;
    /// The grid is taller than heatmapBounds() and the vertical scroll bar shows.
    bool isScrollable() const { return m_scrolls; }
    /// Height of the laid-out grid (HeatmapLayout::contentHeight); heatmapBounds().height()
    /// when it fits.
    qreal contentHeight() const;
    QScrollBar *verticalScrollBar() const { return m_scrollBar; }
    HeatmapHit hoveredCell() const { return m_hover; }

    /// The cell under a widget position (invalid when none).
    HeatmapHit cellAt(const QPointF &pos) const;
    /// The tooltip text for the cell under `pos` (empty when none).
    QString toolTipAt(const QPointF &pos) const;

    /// A computation for newer parameters is running (AttentionSession::busyChanged): after
    /// half a second a banner above the heatmaps says so, because until the result arrives they
    /// show the previous parameters. False removes it.
    void setComputing(bool computing);
    /// The banner is shown (computing for longer than the delay).
    bool isComputingBannerShown() const { return m_computingBanner; }
    /// The band the banner takes at the top, the widget's width (empty without a banner); the
    /// heatmaps are laid out below it, never under it.
    QRectF bannerRect() const;

    /// A notice banner above the heatmaps, shown at once and kept until replaced or cleared with
    /// an empty `text`: e.g. a refused parameter change while the heatmaps still show the
    /// previous parameters. One banner shows at a time, the newer one: a notice replaces the
    /// computing banner, and the computing banner (a newer computation) clears the notice. `text`
    /// may hold several lines ('\n'): the first is word-wrapped, the others elided to the width;
    /// `toolTip` (e.g. the full message) shows when hovering the banner.
    void setNotice(const QString &text, const QString &toolTip = QString());
    QString noticeText() const { return m_notice; }
    QString noticeToolTip() const { return m_noticeToolTip; }

    QSize sizeHint() const override;
    QSize minimumSizeHint() const override;

signals:
    /// A tile was clicked: head 0 … h−1, or h for the mean over heads.
    void tileActivated(int head);
    /// The hovered cell changed (invalid hit when the pointer left the heatmaps).
    void cellHovered(const attn::HeatmapHit &hit);
    /// Emitted at the end of every paint that showed the current picture of a result: its
    /// SessionResult::requestId.
    /// (The GUI latency benchmark, bench/bench_gui.cpp, times control change → this signal.)
    void painted(quint64 requestId);
    /// The shown result changed (new session result or view transform): for the metric charts.
    void shownResultChanged(std::shared_ptr<const attn::SessionResult> shown);
    /// A view transform started (true) or finished (false) on the worker thread.
    void transformingChanged(bool busy);
    /// Zoom or pan changed the visible cells.
    void visibleCellsChanged(const QRect &cells);
    /// setOptions() changed the options (e.g. an opened session): panels showing them resync.
    void optionsChanged();
    /// What session files keep of this view changed: the options (zoom and pinned query
    /// included), the view transform or the row strip's visibility.
    void viewStateChanged();

protected:
    void paintEvent(QPaintEvent *event) override;
    void resizeEvent(QResizeEvent *event) override;
    void mouseMoveEvent(QMouseEvent *event) override;
    void mousePressEvent(QMouseEvent *event) override;
    void mouseReleaseEvent(QMouseEvent *event) override;
    void wheelEvent(QWheelEvent *event) override;
    void keyPressEvent(QKeyEvent *event) override;
    void leaveEvent(QEvent *event) override;
    void contextMenuEvent(QContextMenuEvent *event) override;
    bool event(QEvent *event) override;
    void changeEvent(QEvent *event) override;

private:
    void invalidate();
    /// Shows or hides the scroll bar and sets its range for the current layout.
    void updateScrollBar();
    qreal scrollOffset() const;
    /// Makes m_picture current, painting it now (small results) or asking the worker (large
    /// ones). True when m_picture is current.
    bool updatePicture();
    /// Shown cells of the picture: tiles × visible cells.
    qint64 pictureCells() const;
    void setHover(const HeatmapHit &hit);
    /// The hit the row strip shows: the hovered cell, else the pinned row in the first tile
    /// (at its largest value), else none.
    HeatmapHit stripHit() const;
    /// The cell tooltip: describeCell and how to pin and copy.
    QString cellToolTip(const HeatmapHit &hit) const;
    /// The lines of the one banner shown (computing or notice; empty: none).
    QStringList bannerLines() const;
    void bannerChanged();
    void showResult();
    void showShown(std::shared_ptr<const SessionResult> shown);
    /// While isRangeByLength(): sets m_requested's scale and range for `shown`'s length; true
    /// when they changed.
    bool chooseRangeByLength(const SessionResult *shown);
    HeatmapOptions effectiveOptions(HeatmapOptions options) const;

    HeatmapRenderer m_renderer;
    HeatmapOptions m_requested; // as set by the caller (before palette/font defaults)
    bool m_rangeByLength = true; ///< setOptions() has not changed the scale or range yet
    std::shared_ptr<const SessionResult> m_sessionResult;
    ViewTransform m_transform;
    QImage m_picture; ///< the last picture painted (possibly of an older state or size)
    QImage m_legendPicture; ///< its legend column at the top of the view, when scrolling
    bool m_pictureCurrent = false;
    /// A picture: the layout for a viewport of `viewSize` (at the top of the content), painted
    /// from content height `bandTop` on for `bandHeight` logical pixels.
    struct PictureRequest
    {
        std::shared_ptr<const SessionResult> result;
        HeatmapOptions options;
        qreal dpr = 1;
        QSizeF viewSize;
        qreal bandTop = 0;
        qreal bandHeight = 0;
        /// Scrolling: the legend column's left edge (view coordinates), painted apart so it
        /// stays in sight; 0: no separate legend.
        qreal legendLeft = 0;
        /// Its top: below the caption, which runs across the whole width and scrolls with the
        /// grid's top (view coordinates).
        qreal legendTop = 0;
        bool operator==(const PictureRequest &) const = default;
        QRectF bounds() const { return {QPointF(0, -bandTop), viewSize}; }
        QSize devSize() const;
    };
    /// The picture wanted for the current state and scroll offset.
    PictureRequest pictureRequest() const;
    /// `r` shows the current state and covers the visible part of the grid.
    bool pictureCovers(const PictureRequest &r) const;
    PictureRequest m_pictureRequest; ///< what the worker paints
    PictureRequest m_shownPicture; ///< what m_picture shows
    JobRunner m_pictureJobs {nullptr, 1};
    JobRunner m_transformJobs;
    QTimer *m_computingTimer = nullptr; // the banner's delay
    bool m_computingBanner = false;
    QString m_notice; // the notice banner's lines (empty: none)
    QString m_noticeToolTip;
    HeatmapHit m_hover;
    QPointF m_pressPos;
    QRect m_pressWindow; // visible cells when the drag began
    bool m_pressed = false;
    bool m_dragging = false;
    bool m_rowStrip = true;
    QScrollBar *m_scrollBar = nullptr;
    bool m_scrolls = false;
    qreal m_contentHeight = 0;
    bool m_transforming = false;
    quint64 m_transformGeneration = 0; ///< newest showResult() call (async transforms)
};

} // namespace attn
