#include "core/tiles/tilepyramid.h"

#include <algorithm>
#include <cmath>
#include <string>

namespace attn {

TilePyramid::TilePyramid(Index nQ, Index nK, Index tilePixels)
    : m_nQ(nQ)
    , m_nK(nK)
    , m_tilePixels(tilePixels)
{
    if (nQ < 1 || nK < 1)
        throw InvalidArgument("TilePyramid: the weights " + shapeString(nQ, nK) + " have no cells");
    if (tilePixels < 1 || tilePixels > (Index(1) << 20))
        throw InvalidArgument("TilePyramid: a tile must be 1 … 2^20 pixels a side, got "
                              + std::to_string(tilePixels));
    const Index side = std::max(nQ, nK);
    while (m_top < maxLevel && tileCells(m_top) < side)
        ++m_top;
}

void TilePyramid::checkLevel(int level, const char *who) const
{
    if (level < 0 || level > m_top)
        throw InvalidArgument(std::string(who) + ": level " + std::to_string(level)
                              + " outside [0, " + std::to_string(m_top) + "]");
}

Index TilePyramid::tilesAcross(int level) const
{
    checkLevel(level, "TilePyramid::tilesAcross");
    return (m_nK + tileCells(level) - 1) / tileCells(level);
}

Index TilePyramid::tilesDown(int level) const
{
    checkLevel(level, "TilePyramid::tilesDown");
    return (m_nQ + tileCells(level) - 1) / tileCells(level);
}

TileWindow TilePyramid::tileWindow(int level, TileIndex tile) const
{
    checkLevel(level, "TilePyramid::tileWindow");
    if (tile.tx < 0 || tile.ty < 0 || tile.tx >= tilesAcross(level) || tile.ty >= tilesDown(level))
        throw InvalidArgument("TilePyramid::tileWindow: tile (" + std::to_string(tile.tx) + ", "
                              + std::to_string(tile.ty) + ") outside the "
                              + shapeString(tilesDown(level), tilesAcross(level))
                              + " tiles of level " + std::to_string(level));
    const Index c = tileCells(level);
    return {tile.ty * c, std::min(m_nQ, (tile.ty + 1) * c), tile.tx * c,
            std::min(m_nK, (tile.tx + 1) * c)};
}

TileGrid TilePyramid::tileGrid(int level, TileIndex tile) const
{
    return tileGridWithCells(tileWindow(level, tile), cellsPerPixel(level), cellsPerPixel(level));
}

int TilePyramid::levelFor(double cellsPerScreenPixel) const
{
    if (!(cellsPerScreenPixel > 1))
        return 0;
    const double l = std::ceil(std::log2(cellsPerScreenPixel) - 1e-12);
    return int(std::clamp(l, 0.0, double(m_top)));
}

std::vector<TileIndex> TilePyramid::tilesCovering(int level, const CellRect &view) const
{
    checkLevel(level, "TilePyramid::tilesCovering");
    const double r0 = std::max(0.0, view.rowBegin), r1 = std::min(double(m_nQ), view.rowEnd);
    const double c0 = std::max(0.0, view.colBegin), c1 = std::min(double(m_nK), view.colEnd);
    std::vector<TileIndex> out;
    if (!(r1 > r0) || !(c1 > c0))
        return out;
    const double c = double(tileCells(level));
    const Index ty0 = Index(std::floor(r0 / c)), ty1 = Index(std::ceil(r1 / c));
    const Index tx0 = Index(std::floor(c0 / c)), tx1 = Index(std::ceil(c1 / c));
    for (Index ty = ty0; ty < std::min(ty1, tilesDown(level)); ++ty)
        for (Index tx = tx0; tx < std::min(tx1, tilesAcross(level)); ++tx)
            out.push_back({tx, ty});
    const double cy = (r0 + r1) / 2, cx = (c0 + c1) / 2;
    const auto distance = [&](const TileIndex &t) {
        const double dy = (double(t.ty) + 0.5) * c - cy, dx = (double(t.tx) + 0.5) * c - cx;
        return dx * dx + dy * dy;
    };
    std::stable_sort(out.begin(), out.end(), [&](const TileIndex &a, const TileIndex &b) {
        return distance(a) < distance(b);
    });
    return out;
}

} // namespace attn
