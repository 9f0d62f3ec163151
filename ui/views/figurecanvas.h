#pragma once
// FigureCanvas: shows a PanelFigure (steps view, A/B view). The picture is cached as a pixmap
// and rebuilt only when the figure, palette, font or size change; from asyncPictureCells cells
// on it is painted on a worker thread (JobRunner) from a copy of the figure, while the canvas
// shows the previous picture scaled (or, before the first, the background and a note). Hovering a
// cell outlines the same cell in every panel (the panels are linked: same query i, same key j) and
// shows the figure's tooltip for it.

#include "ui/render/panelfigure.h"

#include <QSize>

#include <QPixmap>
#include <QScrollArea>
#include <QWidget>

namespace attn {

class JobRunner;

class FigureCanvas : public QWidget
{
    Q_OBJECT
public:
    /// Cells (over all panels) from which the picture is painted off the GUI thread.
    static constexpr qint64 asyncPictureCells = qint64(1) << 20;

    /// `figure` is not owned and must outlive the canvas.
    explicit FigureCanvas(PanelFigure *figure, QWidget *parent = nullptr);

    PanelFigure *figure() const { return m_figure; }
    /// Call after the figure's content changed: repaints and clears the hover.
    void refresh();

    /// The hovered cell (invalid when none).
    FigureHit hoveredCell() const { return m_hover; }
    /// Hovers a cell as the mouse would (invalid: none).
    void setHover(const FigureHit &hit);
    FigureHit cellAt(const QPointF &pos) const;
    /// Tooltip text for the cell under `pos` (empty when none).
    QString toolTipAt(const QPointF &pos) const;
    /// The outlined rectangles of the hovered cell, one per panel (empty when none).
    QVector<QRectF> highlightRects() const;
    /// The style the figure is painted with on screen: the palette's Base and Text colours and
    /// the widget font's pixel size.
    FigureStyle screenStyle() const;

    /// True when the shown picture is the current figure at the current size (false while a
    /// worker paints it).
    bool pictureCurrent() const;

    QSize sizeHint() const override;
    QSize minimumSizeHint() const override;

signals:
    void cellHovered(const attn::FigureHit &hit);
    /// refresh() was called: the figure's content changed.
    void refreshed();

protected:
    void paintEvent(QPaintEvent *event) override;
    void resizeEvent(QResizeEvent *event) override;
    void mouseMoveEvent(QMouseEvent *event) override;
    void leaveEvent(QEvent *event) override;
    bool event(QEvent *event) override;
    void changeEvent(QEvent *event) override;

private:
    void requestPicture(QSize deviceSize, qreal dpr);

    PanelFigure *m_figure;
    JobRunner *m_jobs;
    QPixmap m_cache;
    bool m_cacheCurrent = false; ///< m_cache shows the figure's current content
    quint64 m_generation = 0; ///< counts refresh(): which content a picture shows
    quint64 m_requestedGeneration = 0;
    QSize m_requestedSize;
    FigureHit m_hover;
};

/// A FigureCanvas in a vertical scroll area. The canvas fills the viewport while the panels'
/// cells are at least kReadableCell pixels there (or nearly as big as the width allows, when
/// that is less, but never under kMinimumCell); in a smaller area (many panels in a small
/// window) the canvas is made as tall as reaching that needs and the area scrolls, instead of
/// the figure shrinking its maps to slivers or giving up with "Too small to draw the panels".
class FigureScrollArea : public QScrollArea
{
    Q_OBJECT
public:
    static constexpr qreal kMinimumCell = 6.0; ///< pixels: below this a view always scrolls
    /// Pixels: a cell this big gets its own axis label, so the canvas grows to reach it when
    /// the width allows.
    static constexpr qreal kReadableCell = 12.0;
    /// Takes ownership of `canvas`.
    explicit FigureScrollArea(FigureCanvas *canvas, QWidget *parent = nullptr);
    FigureCanvas *canvas() const { return m_canvas; }
    /// The canvas height for a viewport of width × height pixels (height when no scrolling is
    /// needed).
    int canvasHeightFor(int width, int height) const;
    /// Call after the figure's content changed: fits the canvas's height again.
    void fitCanvas();
    /// On: the canvas is always the viewport's height, the panels made to fit it, never
    /// scrolled to (the Steps view with its vectors under the panels).
    void setFitToViewport(bool fit);
    /// On: the largest maps the width allows with each panel whole in the viewport (fewer side
    /// by side, scrolled to) whenever they are larger than those seen at once (presentation).
    void setPreferLargeMaps(bool prefer);
    /// The least canvas height whose cells reach `cell` pixels at `width` (at most 8192).
    int heightForCell(int width, qreal cell) const;

protected:
    void resizeEvent(QResizeEvent *event) override;

private:
    FigureCanvas *m_canvas;
    bool m_fitToViewport = false;
    bool m_preferLargeMaps = false;
};

} // namespace attn
