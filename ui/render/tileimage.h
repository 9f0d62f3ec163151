#pragma once
// The one builder of heatmap tile images, shared by every heatmap painter (HeatmapRenderer's
// heads view, PanelFigure's Steps and Compare panels, the experiment figures): a matrix of
// values (n_q × n_k, row-major) → a QImage of its cell window with one pixel per cell, or per
// block of cells pooled by max (weights) or mean (scores) when the window has more cells than
// the image may have pixels; masked cells in the mask colours of the colormap; an image enlarged
// to the device size hatched over its masked cells (causal "/", padding "\", outside the sliding
// window "—"). Pure functions of their arguments, safe on any thread (QImage is reentrant), so
// the widgets build images on a worker (ui/session/jobrunner.h) and only draw them.

#include "ui/render/colormap.h"

#include "core/base/types.h"

#include <QImage>
#include <QRect>
#include <QSize>
#include <QSizeF>

#include <cstdint>
#include <optional>

namespace attn {

/// How cells are combined when a tile has more cells than the image has pixels.
enum class HeatmapPooling {
    Max, ///< the block's largest unmasked value (weights: a peak never disappears)
    Mean ///< the mean of the block's unmasked values (scores)
};

/// What a tile image shows.
struct TileImageRequest
{
    /// n_q × n_k values, row-major. Not owned; must outlive buildTileImage().
    const MatrixD *values = nullptr;
    /// MaskStateBits (core/attention/mask.h) per cell, the shape of `values`, or nullptr (no cell
    /// masked). A cell with a state ≠ 0 is drawn in maskColor(colormap, state), never as a value.
    const MatrixB *maskState = nullptr;
    ColormapId colormap = ColormapId::Viridis;
    ColorNorm norm; ///< value → t in [0, 1] before the colormap
    HeatmapPooling pooling = HeatmapPooling::Max;
    /// The cells shown: x = first key column, y = first query row, width × height cells.
    /// Empty: every cell. Must lie inside the matrix.
    QRect window;
    /// Pooling block: rowBlock query rows × colBlock key columns per pixel (1 × 1: one pixel
    /// per cell). The last block of a row or column may be smaller.
    int rowBlock = 1;
    int colBlock = 1;
    /// When set, a NaN or ±Inf value takes this colour (the experiment figures' red) instead of
    /// Colormap::badColor() for NaN and the colormap's ends for ±Inf.
    std::optional<QRgb> nonFiniteColor;
};

/// The pooling blocks (width = columns, height = rows per pixel) for `cells` (width = keys,
/// height = queries) to fit in `maxPixels`: ⌈cells / maxPixels⌉ per side, at least 1.
QSize tilePoolingBlocks(QSize cells, QSize maxPixels);

/// The tile image of `request`: ⌈window.height / rowBlock⌉ rows × ⌈window.width / colBlock⌉
/// columns, Format_RGB32. Pixel (x, y) pools the block's unmasked cells by `pooling`, maps the
/// pooled value v to colormap.map(norm(v)); a block with only masked cells takes
/// maskColor(colormap, OR of their states); a NaN among its unmasked cells makes the pixel
/// Colormap::badColor() (or nonFiniteColor, which ±Inf takes too). A null image when `values` is
/// null or empty. Pooled tiles of many cells run on the core's threads (core/base/threads.h).
QImage buildTileImage(const TileImageRequest &request);

/// Colour of a masked cell with MaskStateBits `state` (≠ 0) under `colormap`: causal, padding
/// (or custom) and both differ; outside the sliding window alone takes the causal colour. Each
/// is at least 40 (Euclidean, 8-bit RGB) from every entry of the colormap.
QRgb maskColor(ColormapId colormap, std::uint8_t state);

/// Hatches the masked cells of `image`, an image of the cells `window` of `maskState` enlarged
/// to whole device pixels (image.width() / window.width() pixels per cell): causal "/", padding
/// "\", custom "|" (a cell masked for two reasons is crossed) and, when `windowLines`, outside
/// the sliding window "—", drawn
/// every `spacing` device pixels in figure::hatchColor of the mask colour, lines max(1,
/// spacing / 5) wide.
void hatchMaskedCells(QImage &image, const MatrixB &maskState, QRect window, ColormapId colormap,
                      qreal spacing, bool windowLines);

/// Masked cells are hatched from this size of a cell on (device pixels).
inline constexpr qreal hatchMinCellPixels = 6.0;

/// Whether enlargedTileImage hatches the masked cells of a map of `devSize` device pixels whose
/// cells are `devCell` device pixels: cells of hatchMinCellPixels or more, the map at most 8192
/// pixels a side. Smaller cells are drawn flat in their mask colour (as the Long tab draws its
/// pooled pixels), and a legend shows them so.
inline bool tileMasksHatched(QSizeF devSize, qreal devCell)
{
    return devCell >= hatchMinCellPixels && devSize.width() <= 8192 && devSize.height() <= 8192;
}

/// A tile image (one pixel per cell, or pooled) as a map of `devSize` device pixels draws it:
/// when its cells are big (`devCell` device pixels, at least hatchMinCellPixels, or any size
/// for vector output) and the image is smaller than the map, at most 8192 pixels a side, it is
/// enlarged to the map's device size without smoothing and, with `maskState` (the cells
/// `window` of it, an empty window: all) and cells of hatchMinCellPixels or more, its masked
/// cells hatched (hatchMaskedCells, the lines every devCell / 3 pixels, 5 to 0.6 of the font's
/// `fontDevicePixels`). Otherwise the image is returned as it is.
QImage enlargedTileImage(QImage image, QSizeF devSize, qreal devCell, bool vectorOutput,
                         const MatrixB *maskState, QRect window, ColormapId colormap,
                         qreal fontDevicePixels);

} // namespace attn
