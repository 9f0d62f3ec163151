#include "ui/session/longmapviewport.h"

#include <algorithm>
#include <cmath>

namespace attn {

double LongMapViewport::fitCellsPerPixel(Index queries, Index keys, const QRectF &area)
{
    return std::max(double(keys) / std::max(1.0, area.width()),
                    double(queries) / std::max(1.0, area.height()));
}

CellRect LongMapViewport::viewRect() const
{
    const double halfW = m_area.width() * m_cellsPerPixel / 2;
    const double halfH = m_area.height() * m_cellsPerPixel / 2;
    return {m_centerRow - halfH, m_centerRow + halfH, m_centerCol - halfW, m_centerCol + halfW};
}

void LongMapViewport::setViewRect(const CellRect &cells)
{
    m_centerRow = (cells.rowBegin + cells.rowEnd) / 2;
    m_centerCol = (cells.colBegin + cells.colEnd) / 2;
    m_cellsPerPixel = std::max(cells.cols() / std::max(1.0, m_area.width()),
                               cells.rows() / std::max(1.0, m_area.height()));
    m_viewSet = true;
    clamp();
}

void LongMapViewport::fit()
{
    m_viewSet = false;
    if (m_pyramid) {
        m_centerRow = m_pyramid->queries() / 2.0;
        m_centerCol = m_pyramid->keys() / 2.0;
    }
    clamp();
}

void LongMapViewport::zoomAt(QPointF pos, double factor)
{
    if (!(factor > 0))
        return;
    const CellRect v = viewRect();
    // The cell under the pointer stays under it.
    const double col = v.colBegin + (pos.x() - m_area.left()) * m_cellsPerPixel;
    const double row = v.rowBegin + (pos.y() - m_area.top()) * m_cellsPerPixel;
    m_viewSet = true;
    m_cellsPerPixel /= factor;
    clamp();
    m_centerCol
        = col - (pos.x() - m_area.left()) * m_cellsPerPixel + m_area.width() * m_cellsPerPixel / 2;
    m_centerRow
        = row - (pos.y() - m_area.top()) * m_cellsPerPixel + m_area.height() * m_cellsPerPixel / 2;
    clamp();
}

void LongMapViewport::panBy(QPointF delta)
{
    m_viewSet = true;
    m_centerCol -= delta.x() * m_cellsPerPixel;
    m_centerRow -= delta.y() * m_cellsPerPixel;
    clamp();
}

void LongMapViewport::clamp()
{
    if (!m_pyramid)
        return;
    const double fit = fitCellsPerPixel(m_pyramid->queries(), m_pyramid->keys(), m_area);
    // From maxPixelsPerCell pixels a cell (or the fit, for a map smaller than that) to the fit.
    const double deepest = std::min(1.0 / maxPixelsPerCell, fit);
    m_cellsPerPixel = std::clamp(m_cellsPerPixel, deepest, std::max(fit, deepest));
    if (!m_viewSet)
        m_cellsPerPixel = fit;
    const auto clampCentre = [](double centre, double half, double size) {
        if (2 * half >= size)
            return std::clamp(centre, size - half, half);
        return std::clamp(centre, 0.0, size);
    };
    m_centerRow = clampCentre(m_centerRow, m_area.height() * m_cellsPerPixel / 2,
                              double(m_pyramid->queries()));
    m_centerCol
        = clampCentre(m_centerCol, m_area.width() * m_cellsPerPixel / 2, double(m_pyramid->keys()));
}

int LongMapViewport::level() const
{
    return m_pyramid ? m_pyramid->levelFor(m_cellsPerPixel) : 0;
}

QPointF LongMapViewport::pointOf(double row, double col) const
{
    const CellRect v = viewRect();
    return QPointF(m_area.left() + (col - v.colBegin) / m_cellsPerPixel,
                   m_area.top() + (row - v.rowBegin) / m_cellsPerPixel);
}

std::pair<Index, Index> LongMapViewport::cellAt(QPointF pos) const
{
    if (!m_pyramid || !m_area.contains(pos))
        return {-1, -1};
    const CellRect v = viewRect();
    const double row = v.rowBegin + (pos.y() - m_area.top()) * m_cellsPerPixel;
    const double col = v.colBegin + (pos.x() - m_area.left()) * m_cellsPerPixel;
    if (row < 0 || col < 0 || row >= double(m_pyramid->queries())
        || col >= double(m_pyramid->keys()))
        return {-1, -1};
    return {Index(row), Index(col)};
}

TileWindow LongMapViewport::visibleWindow() const
{
    if (!m_pyramid)
        return {};
    const CellRect v = viewRect();
    const Index nQ = m_pyramid->queries(), nK = m_pyramid->keys();
    TileWindow w;
    w.rowBegin = std::clamp<Index>(Index(std::floor(v.rowBegin)), 0, nQ - 1);
    w.rowEnd = std::clamp<Index>(Index(std::ceil(v.rowEnd)), w.rowBegin + 1, nQ);
    w.colBegin = std::clamp<Index>(Index(std::floor(v.colBegin)), 0, nK - 1);
    w.colEnd = std::clamp<Index>(Index(std::ceil(v.colEnd)), w.colBegin + 1, nK);
    return w;
}

} // namespace attn
