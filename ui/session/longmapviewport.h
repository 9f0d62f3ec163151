#pragma once
// LongMapViewport: the Long tab's view of a map of n_q × n_k cells, without a widget: which
// rectangle of cells the map's area on the screen shows, and how zooming, panning and fitting
// move it. The view is kept as its centre (cells, continuous) and its zoom (cells per screen
// pixel, the same down and across: cells stay square); the map's area is a rectangle of screen
// pixels (the canvas's coordinates). The zoom runs from maxPixelsPerCell pixels a cell (or the
// fit, for a map smaller than that) to the fit, which shows every cell. Used on one thread (the
// GUI's); it computes nothing but these few numbers.

#include "core/tiles/tilepyramid.h"

#include <QPointF>
#include <QRectF>

#include <optional>
#include <utility>

namespace attn {

class LongMapViewport
{
public:
    /// The deepest zoom: a cell this many screen pixels wide.
    static constexpr double maxPixelsPerCell = 32;

    /// The cells per pixel that show `queries` × `keys` cells whole in `area` (the larger of
    /// the two axes' ratios; an area narrower than a pixel counts as one pixel).
    static double fitCellsPerPixel(Index queries, Index keys, const QRectF &area);

    /// The map shown: its size (n_q × n_k cells) and tile pyramid, or nullopt when there is no
    /// map (then clamp() leaves the view as it is, level() is 0, cellAt() finds nothing and
    /// visibleWindow() is empty). Keeps the view as it is.
    void setPyramid(const std::optional<TilePyramid> &pyramid) { m_pyramid = pyramid; }
    const std::optional<TilePyramid> &pyramid() const { return m_pyramid; }
    /// The map's area in screen pixels. Keeps the view's centre and zoom.
    void setMapArea(const QRectF &area) { m_area = area; }
    QRectF mapArea() const { return m_area; }

    /// The zoom: cells per screen pixel.
    double cellsPerPixel() const { return m_cellsPerPixel; }
    /// True once the view was zoomed, panned or set (setViewRect); false after fit(): an
    /// unset view follows the fit when the area or the map changes (clamp()).
    bool isViewSet() const { return m_viewSet; }

    /// The cells in the map's area (continuous; may extend past the map when zoomed out).
    CellRect viewRect() const;
    /// Shows `cells`: its centre, at the zoom that fits it whole in the area; then clamp().
    void setViewRect(const CellRect &cells);
    /// Shows every cell: the map's centre at the fit (nothing but the unset flag without a map).
    void fit();
    /// Zooms by `factor` (> 1: in; otherwise ignored when not > 0) about the screen point `pos`:
    /// the cell under `pos` stays under it, unless the zoom's or the centre's limits move it.
    void zoomAt(QPointF pos, double factor);
    /// Moves the view by `delta` screen pixels (the content follows the pointer); then clamp().
    void panBy(QPointF delta);
    /// Keeps the zoom within its limits (at the fit while the view is unset) and the centre on
    /// the map: a view longer than the map along an axis keeps all of the map in sight, a
    /// shorter one keeps its centre within the map (at the map's edges it shows room beside the
    /// map, so that zooming about the pointer keeps the cell under it there too).
    void clamp();

    /// The pyramid level drawn at this zoom (TilePyramid::levelFor(cellsPerPixel())).
    int level() const;
    /// The screen point of cell position (row, col) (continuous; the cell's top-left corner
    /// for whole numbers).
    QPointF pointOf(double row, double col) const;
    /// The cell (row, col) under screen point `pos`, or (−1, −1) outside the map's area or off
    /// the map's cells.
    std::pair<Index, Index> cellAt(QPointF pos) const;
    /// The view clipped to the map, in whole cells (at least one a side); empty without a map.
    TileWindow visibleWindow() const;

private:
    std::optional<TilePyramid> m_pyramid;
    QRectF m_area;
    double m_centerRow = 0, m_centerCol = 0; ///< view centre, cells
    double m_cellsPerPixel = 1; ///< zoom: cells per screen pixel
    bool m_viewSet = false;
};

} // namespace attn
