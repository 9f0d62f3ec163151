#pragma once
// The addresses of a multi-resolution pyramid of pooled tiles over n_q × n_k attention weights,
// as HiGlass tiles genome contact matrices (Kerpedjiev et al. 2018, "HiGlass: web-based visual
// exploration and analysis of genome interaction maps", Genome Biology 19:125): at level L a
// pixel covers 2^L × 2^L cells and a tile is tilePixels × tilePixels pixels, so tile (L, tx, ty)
// covers queries [ty·t·2^L, (ty + 1)·t·2^L) × keys [tx·t·2^L, (tx + 1)·t·2^L), clipped to the
// weights (t = tilePixels). Level 0 has one cell per pixel; the top level is the first whose
// single tile covers every cell. A view pans and zooms over the tiles of one level, so moving it
// computes only the tiles that come into sight, and a tile once computed serves every later
// view of its level; TileEngine (tileengine.h) computes a tile's pixels with
// tileGridWithCells(tileWindow(L, tx, ty), 2^L, 2^L).

#include "core/base/types.h"
#include "core/tiles/tileengine.h"

#include <vector>

namespace attn {

/// A rectangle of cells in continuous coordinates: queries [rowBegin, rowEnd) × keys
/// [colBegin, colEnd), fractional at a view's edges.
struct CellRect
{
    double rowBegin = 0, rowEnd = 0;
    double colBegin = 0, colEnd = 0;
    double rows() const { return rowEnd - rowBegin; }
    double cols() const { return colEnd - colBegin; }
};

/// One tile of a level: column tx (keys) and row ty (queries) of the level's tiles.
struct TileIndex
{
    Index tx = 0, ty = 0;
    bool operator==(const TileIndex &) const = default;
};

class TilePyramid
{
public:
    /// Deepest level supported: 2^40 cells per pixel.
    static constexpr int maxLevel = 40;

    /// Throws InvalidArgument when nQ, nK or tilePixels < 1, or tilePixels > 2^20.
    TilePyramid(Index nQ, Index nK, Index tilePixels);

    Index queries() const { return m_nQ; }
    Index keys() const { return m_nK; }
    Index tilePixels() const { return m_tilePixels; }
    /// The first level whose one tile covers every cell: ⌈log₂(max(n_q, n_k) / tilePixels)⌉, at
    /// least 0.
    int topLevel() const { return m_top; }

    /// Cells per pixel side at `level`: 2^level.
    static Index cellsPerPixel(int level) { return Index(1) << level; }
    /// Cells per tile side at `level`: tilePixels · 2^level.
    Index tileCells(int level) const { return m_tilePixels << level; }
    /// Tiles across (keys) and down (queries) at `level`.
    Index tilesAcross(int level) const;
    Index tilesDown(int level) const;

    /// The cells of tile (level, tile), clipped to n_q × n_k. Throws InvalidArgument when the
    /// level is outside [0, topLevel()] or the tile outside the level.
    TileWindow tileWindow(int level, TileIndex tile) const;
    /// The pixel grid of that tile (tileGridWithCells with 2^level cells per pixel).
    TileGrid tileGrid(int level, TileIndex tile) const;

    /// The level for a view that shows `cellsPerScreenPixel` cells per screen pixel:
    /// ⌈log₂ x⌉ clamped to [0, topLevel()], so that each pixel of the level's tiles takes at least
    /// one screen pixel (a pooled spike is never dropped by drawing) and at most two. NaN or
    /// x ≤ 1 gives 0.
    int levelFor(double cellsPerScreenPixel) const;

    /// The tiles of `level` that meet `view` (clipped to the weights), the one nearest the view's
    /// centre first and the rest by distance from it (tiles on the screen fill in from the middle
    /// out). Empty when the view lies outside the weights or has no area. Throws InvalidArgument
    /// when the level is outside [0, topLevel()].
    std::vector<TileIndex> tilesCovering(int level, const CellRect &view) const;

private:
    void checkLevel(int level, const char *who) const;

    Index m_nQ = 1, m_nK = 1, m_tilePixels = 1;
    int m_top = 0;
};

} // namespace attn
