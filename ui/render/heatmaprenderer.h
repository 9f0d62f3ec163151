#pragma once
// HeatmapRenderer: the one painter of attention heatmaps, for the window, File → Export and
// `attnlab heatmap` alike (after Tiled's MiniMapRenderer): a grid of tiles (one per head plus
// the mean over heads) or a single tile, each with its title, query/key ticks and axis titles,
// a colourbar naming the colormap and scale, masked cells drawn distinctly (causal and padding
// differ from each other and from a weight near 0), fully masked rows marked in red, and a
// caption with the parameters, the colour scale and what the view changed. Each tile's heatmap
// is a QImage of the visible cell window (HeatmapOptions::window: zoom and pan) with one pixel
// per cell, pooled by max or mean to the device pixels it is drawn on, drawn scaled without
// smoothing, so n = 4096 paints about as fast as n = 8; hit-testing always works in exact
// cells. PNG, SVG and PDF come from the same paint code.

#include "ui/render/colormap.h"
#include "ui/render/figurefile.h"
#include "ui/render/tileimage.h"
#include "ui/session/sessioncompute.h"

#include "core/analysis/metrics.h"

#include <QColor>
#include <QImage>
#include <QRect>
#include <QRectF>
#include <QSize>
#include <QString>
#include <QStringList>
#include <QVector>

#include <memory>

class QPainter;

namespace attn {

/// What the renderer lays out (Steps and Compare have their own renderers).
enum class HeatmapView {
    Grid, ///< one tile per head, plus the mean over heads (HeatmapOptions::showMean)
    SingleHead ///< one large tile: HeatmapOptions::head (h = the mean)
};

/// Which matrix the tiles show (weights by default; scores suit a diverging colormap).
enum class HeatmapQuantity {
    Weights, ///< softmax weights W
    Scores, ///< raw scores q kᵀ (per head; no mean tile)
    ScaledScores ///< scaled and masked scores (masked cells drawn as masked)
};

struct HeatmapOptions
{
    HeatmapView view = HeatmapView::Grid;
    int head = 0; ///< SingleHead: head 0 … h−1, or h for the mean over heads
    bool showMean = true; ///< Grid: add the "mean over heads" tile (weights only, h > 1)
    HeatmapQuantity quantity = HeatmapQuantity::Weights;
    ColormapId colormap = ColormapId::Viridis;
    ColorScale scale = ColorScale::Linear;
    /// false: weights use the fixed range [0, fixedTop] (log: [logFloor, fixedTop]) so 1.0 is
    /// the top of the scale by default; true: the data's min … max over the shown tiles (masked
    /// cells excluded). Scores always use their data range (symmetric about 0 with a diverging
    /// colormap).
    bool autoRange = false;
    /// With autoRange false: weights up to the largest unmasked weight of the shown tiles, as the
    /// Long tab colours (ColorNorm::upToLargestWeight): linear [0, max] or log over the five
    /// decades below it. Over thousands of keys most weights are near 1/n, at the bottom of
    /// [0, 1]; the window chooses this range with the log scale for such maps (HeatmapWidget).
    bool maxWeightRange = false;
    double logFloor = 1e-4; ///< lower end of a fixed log range (below fixedTop)
    /// Upper end of the fixed range of weights: 1, or the largest weight of a long sequence's
    /// map (the Long tab's "0 … max weight", whose exports keep its colours).
    double fixedTop = 1.0;
    /// Draws the weights on the fixed range of `norm` (linear [0, vmax], log [vmin, vmax]):
    /// autoRange off, its scale, fixedTop and (log) logFloor.
    void useFixedNorm(const ColorNorm &norm)
    {
        autoRange = false;
        maxWeightRange = false;
        scale = norm.scale;
        fixedTop = norm.vmax;
        if (norm.scale == ColorScale::Log)
            logFloor = norm.vmin;
    }
    /// Upper bound of a tile image's side in pixels: more cells than this are pooled (painting
    /// pools further, to the device pixels of the tile on screen or in a PNG).
    int maxImageSide = 1024;
    HeatmapPooling pooling = HeatmapPooling::Max;
    /// The cells shown in every tile: x = first key column, y = first query row, width = key
    /// count, height = query count. Empty (the default) shows every cell; otherwise clamped to
    /// the matrix. HeatmapWidget's zoom and pan set it.
    QRect window;
    /// The smallest side of a tile's map, in logical pixels. A map whose cells, kept square,
    /// would give a sliver (e.g. n_q = 1024 queries × n_k = 10 keys) is widened so its short
    /// side is at least this (or the room there is); with `scrollable`, also the size below
    /// which the grid stops shrinking its tiles.
    qreal minMapSide = 96;
    /// false: everything fits `bounds` (exports, the command line). true (the window's heads
    /// view): when the tiles would be smaller than minMapSide, they keep that size in as many
    /// columns as the width allows and the layout runs below the bounds
    /// (HeatmapLayout::contentHeight), for a view that scrolls.
    bool scrollable = false;
    /// The window's heads view: every tile fits the widget, however small (no scrolling; the
    /// widget then lays out with `scrollable` false). Renderers without a widget ignore it.
    bool fitAll = false;
    /// Grid: tiles per row (heads and the mean tile alike), at most the tile count; 0 chooses
    /// the count that gives the biggest maps. Rows beyond the bounds scroll when `scrollable`.
    int headsPerRow = 0;
    static constexpr int maxHeadsPerRow = 64; ///< the largest headsPerRow a session may set
    /// false: square cells (a map's aspect is n_k : n_q, clamped by minMapSide). true: each map
    /// fills its tile's room, cells as wide and as tall as that gives.
    bool stretch = false;
    /// Grid: the order of the head tiles (the mean tile stays last) by headOrder
    /// (core/analysis/metrics.h) of the result's per-row metrics, ascending or descending; a result
    /// without per-head metrics (the tile engine's) keeps index order. Titles keep the head
    /// numbers.
    HeadOrderKey headSort = HeadOrderKey::Index;
    bool headSortDescending = false;
    /// A shown query row (0 … n_q − 1 of the result) outlined in every tile and named in the
    /// caption ("pinned query 3:the"); −1: none. A row outside the result draws nothing.
    int pinnedQuery = -1;
    bool showCaption = true; ///< the parameter caption line at the top
    /// Written first in the caption, before the parameters (a Play frame: "frame 3/21:
    /// α = 0.1"); empty for none.
    QString captionPrefix;
    /// Written last in the caption (attnlab heatmap: what the check of loaded weights found,
    /// "1 of 4 rows do not sum to 1 …"); empty for none.
    QString captionNote;
    qreal fontPixelSize = 0; ///< text size in logical pixels; 0 derives it from the paint size
    QColor background = Qt::white;
    QColor foreground = Qt::black;

    bool operator==(const HeatmapOptions &) const = default;
};

/// A cell under a point: tile index in the layout, head (h for the mean), query i, key j.
struct HeatmapHit
{
    int tile = -1;
    int head = -1; ///< 0 … h−1, or h for the mean over heads
    bool mean = false;
    int row = -1; ///< query i
    int col = -1; ///< key j
    bool valid() const { return tile >= 0 && row >= 0 && col >= 0; }
    bool operator==(const HeatmapHit &) const = default;
};

/// Where everything goes for given bounds (logical coordinates).
struct HeatmapLayout
{
    QRect cells; ///< the visible cell window (x = key, y = query), the same for every tile
    struct Tile
    {
        int head = 0; ///< 0 … h−1, or h for the mean
        bool mean = false;
        QString title; ///< "head i" or "mean over heads" (ALiBi: "head i (m = slope)")
        QString shortTitle; ///< a shorter title for narrow tiles ("h3 m=0.0625"), or empty
        QRectF frame; ///< the tile with its labels
        QRectF map; ///< the heatmap itself (n_k cells wide, n_q cells high)
    };
    QVector<Tile> tiles;
    QRectF caption;
    /// The caption as drawn in `caption`: wrapped at its width, the lines joined by "\n", at
    /// most three; when the text needs more, the third ends in "…" (never a line cut off).
    QString captionLines;
    QRectF colorbar; ///< the colour strip
    QRectF legend; ///< colourbar labels and mask legend column
    qreal fontPixelSize = 12;
    /// Width and height of one cell in logical pixels (may be below one pixel); equal unless
    /// the map is stretched or widened (HeatmapOptions::stretch, minMapSide).
    qreal cellWidth = 0, cellHeight = 0;
    qreal cellSize = 0; ///< min(cellWidth, cellHeight): the side of a square cell
    /// Height from bounds.top() to below the last row of tiles: bounds.height() when everything
    /// fits, more when HeatmapOptions::scrollable keeps tiles at their minimum size.
    qreal contentHeight = 0;
    /// Labels every k-th query / key (1, 2, 5, 10, 20, …: thinned to what fits the cell size);
    /// rowLabels / colLabels hold them.
    int tickStepRows = 1, tickStepCols = 1;
    bool rotateKeyLabels = false; ///< key tokens written vertically
    /// Axes labelled by position, not token (every head in sight with more than four tiles,
    /// whose token labels would take more than 80 % of a tile)
    bool positionLabels = false;
    /// Each tile names its axes ("query i (row)", "key j (column)"); false for the many small
    /// tiles of HeatmapOptions::fitAll (more than four), whose maps take that room (a cell's
    /// tooltip still names its query and key).
    bool axisTitles = true;
    /// One axis label: shown row or column `index` and its text.
    struct AxisLabel
    {
        int index = 0; ///< shown row (query) or column (key) of the result
        QString text; ///< the position, or "position:token" when tokens are typed ("3:the")
        bool operator==(const AxisLabel &) const = default;
    };
    /// The labels of every tile's query axis (left) and key axis (bottom), in order: the first
    /// and last visible position, and every tickStep-th position between them whose label does
    /// not overlap either end's (axisTicks); a pinned query (HeatmapOptions::pinnedQuery) is
    /// always among the row labels, its neighbours closer than a line left out.
    QVector<AxisLabel> rowLabels, colLabels;
};

/// Positions to label on an axis of `count` cells from `first`, each `cell` logical pixels
/// long, where a label needs `need` pixels along the axis: `first`, `first + count − 1`, and the
/// multiples of step = niceStep(need / cell) (1, 2, 5, 10, 20, …) between them, leaving out those
/// less than `need` pixels from the first or the last (they would overlap). Ascending, no two
/// closer than `need`; only the first when the last would overlap it; empty when count ≤ 0.
/// `step` receives the step.
QVector<int> axisTicks(int first, int count, qreal cell, qreal need, int *step = nullptr);

/// The legend entry of the sliding window: "window: 6 keys + 2 sinks" (the count, since
/// libraries disagree on w vs w + 1).
QString windowLegendText(const SessionParameters &p);

class HeatmapRenderer
{
public:
    HeatmapRenderer();

    void setResult(std::shared_ptr<const SessionResult> result);
    std::shared_ptr<const SessionResult> result() const { return m_result; }
    void setOptions(const HeatmapOptions &options);
    const HeatmapOptions &options() const { return m_options; }

    /// The options' colormap; signed weights (differential attention) on the diverging RdBu_r.
    Colormap colormap() const
    {
        return Colormap(signedWeightsShown() ? ColormapId::RdBu : m_options.colormap);
    }
    /// Weights that can be negative are shown (EngineResult::signedWeights).
    bool signedWeightsShown() const;
    /// The value → colour normalisation in effect for the current result and options.
    ColorNorm norm() const;
    /// Base colour of a masked cell with MaskStateBits `state` (≠ 0): maskColor() of the active
    /// colormap (ui/render/tileimage.h). Causal and padding differ; neither occurs in the map.
    QRgb maskedColor(std::uint8_t state) const;
    /// Colour of the red marker left of a fully masked row.
    static QColor fullyMaskedMarkerColor() { return QColor(214, 39, 40); }
    /// Colour of the pinned query's outline (HeatmapOptions::pinnedQuery): in no colormap.
    static QColor pinnedRowColor() { return QColor(255, 0, 200); }
    /// Thickness of that outline in logical pixels: bars this wide just outside the row's cells
    /// (above, below and at both ends), so the row's own colours stay visible.
    static constexpr qreal pinnedOutlineWidth = 2.0;
    /// SVG and PDF draw each cell as a filled rectangle (masked cells hatched with lines) when
    /// the visible window has at most this many cells per head (64 × 64); larger maps are
    /// embedded as an image, and the caption says so.
    static constexpr qint64 maxVectorCells = 64 * 64;

    /// The head tiles' order for the current result and options: head numbers 0 … h−1 in the
    /// order drawn (HeatmapOptions::headSort), without the mean. Empty without a result.
    std::vector<int> headOrder() const;
    /// The pinned query if it is a row of the current result, else −1.
    int pinnedRow() const;

    /// Number of tiles for the current view and result (0 without a result).
    int tileCount() const;
    /// The visible cell window for the current result: options().window clamped to the matrix,
    /// or every cell when it is empty (x = first key, y = first query). Empty without a result.
    QRect visibleCells() const;
    /// Tile image of the visible window: one pixel per cell, or, when the window has more cells
    /// than `maxPixels` (capped at maxImageSide) allows, one pixel per block of ⌈rows/height⌉ ×
    /// ⌈cols/width⌉ cells pooled by options().pooling: the max or the mean of the block's
    /// unmasked cells (a block with only masked cells takes their mask colour; NaN makes the
    /// pixel badColor()), built by buildTileImage (ui/render/tileimage.h). Cached until the
    /// result, options or maxPixels change.
    QImage tileImage(int tile, QSize maxPixels) const;
    /// tileImage(tile, maxImageSide × maxImageSide).
    QImage tileImage(int tile) const;

    HeatmapLayout layout(const QRectF &bounds) const;
    /// Paints everything into `bounds` (logical coordinates of `painter`).
    void paint(QPainter *painter, const QRectF &bounds) const;
    /// Paints only the legend column of paint(painter, bounds) — the colourbar, its labels and
    /// the mask legend, at HeatmapLayout::legend — on the background of `bounds`: a scrolling
    /// view draws it over the grid so the colour scale stays in sight.
    void paintLegend(QPainter *painter, const QRectF &bounds) const;
    /// The cell under `pos` for a paint into `bounds`; invalid when none.
    HeatmapHit cellAt(const QRectF &bounds, const QPointF &pos) const;
    /// Rectangle of a hit's cell (for hover highlights); empty when invalid.
    QRectF cellRect(const QRectF &bounds, const HeatmapHit &hit) const;
    /// The text of shown row `r`'s / column `c`'s axis label: the original position, with its
    /// token after a colon when tokens are typed ("3:the").
    QString queryAxisLabel(int r) const;
    QString keyAxisLabel(int c) const;
    /// Multi-line tooltip text for a cell: head, query i (row), key j (column), tokens, weight,
    /// raw score, scaled score, mask state, the row's entropy (nats) and effective terms.
    QString describeCell(const HeatmapHit &hit) const;
    /// The shown query row whose axis label band (left of a tile's map, the row's height) holds
    /// `pos` for a paint into `bounds`; −1 when none. Rows between thinned labels count too.
    int queryLabelAt(const QRectF &bounds, const QPointF &pos) const;
    /// The tooltip of the tile title under `pos` (the band above a tile's map) for a paint into
    /// `bounds`: the whole title, which a narrow tile shortens or elides, and what its numbers
    /// are (ALiBi's slope m, the window sinks' mass, the mean row sum Σw); empty elsewhere.
    QString titleToolTipAt(const QRectF &bounds, const QPointF &pos) const;
    /// A cell's values for the clipboard: a header line and a value line, tab-separated —
    /// head ("mean" for the mean tile), query i, key j, query token, key token, raw score,
    /// scaled score, weight (17 significant digits), mask state (maskStateText). Positions are
    /// the computation's; tokens and scores are empty where there are none (no typed tokens,
    /// the mean tile, a pooled view). Empty for an invalid hit.
    QString cellCopyText(const HeatmapHit &hit) const;
    /// The hit's whole row: a header line ("key j" and the keys' axis labels, "3:the") and a
    /// line of the row's weights (17 significant digits; the tile's quantity when it shows
    /// scores) starting with the query's axis label, tab-separated. Empty for an invalid hit.
    QString rowCopyText(const HeatmapHit &hit) const;

    /// The caption: SessionParameters::caption(), then the colour scale ("colour: viridis,
    /// linear, fixed [0, 1]") and what the view changed (SessionResult::viewNote).
    QString captionText() const;
    /// captionText(), plus, for an SVG or PDF whose cells are an embedded image (more than
    /// maxVectorCells per head), a note saying so.
    QString captionText(bool vectorOutput) const;
    /// An SVG/PDF paint draws the cells as rectangles (visible cells ≤ maxVectorCells).
    bool vectorCells() const;
    /// The colour scale as written under the colourbar: "viridis, linear" and "fixed [0, 1]",
    /// "auto [lo, hi]" or "to max weight [lo, hi]" ("every cell masked [lo, hi]" when no cell
    /// sets an auto range), then "raw weights" / "renormalised" when keys are hidden. Signed
    /// weights: "RdBu_r, linear", "auto, centred on 0 [−m, m]" (every cell masked: [−1, 1]) and
    /// "signed weights, 0 = white".
    QStringList colorbarLines() const;

    /// The row strip under the heatmap (HeatmapWidget shows it while a cell is hovered): the
    /// hovered row's keys as boxes coloured like the heatmap, each with its token and value,
    /// centred on the hovered key as far as `bounds` allows.
    struct StripCell
    {
        int key = 0; ///< shown key column
        QRectF box; ///< coloured box (the value is written inside)
        QRectF labelBox; ///< the key's token above the box
        QRgb color = 0;
        QString label; ///< key token (or position)
        QString value; ///< weights: 3 decimals ("6.1e-04" below 0.01); scores: 3 digits; "masked"
        bool hovered = false;
    };
    struct RowStrip
    {
        QString title; ///< "head 1 · query 3 “cat” · keys 0–15 of 64"
        QRectF titleBox;
        QVector<StripCell> cells;
    };
    RowStrip rowStrip(const QRectF &bounds, const HeatmapHit &hit) const;
    /// The hint the row strip shows while no cell is hovered: the whole sentence when it fits
    /// `width` logical pixels in the renderer's font, else a shorter one, elided at the end if
    /// even that is too wide.
    QString rowStripHint(qreal width) const;
    /// Paints rowStrip(bounds, hit); with an invalid hit the one-line rowStripHint().
    void paintRowStrip(QPainter *painter, const QRectF &bounds, const HeatmapHit &hit) const;

    /// Renders to an image of size·dpr device pixels (devicePixelRatio dpr).
    QImage render(QSize size, qreal dpr = 1.0) const;
    /// paintImpl as a FigurePainter (ui/render/figurefile.h), for the shared PNG/SVG/PDF writers.
    FigurePainter painter() const;
    /// The SVG description: the parameter caption of the result (empty without one).
    QString documentDescription() const;
    /// Exports (written atomically through QSaveFile). Sizes in logical pixels (PDF: points).
    /// Return false with `error` naming the path on failure.
    bool savePng(const QString &path, QSize size, qreal dpr, QString *error) const;
    bool saveSvg(const QString &path, QSize size, QString *error) const;
    bool savePdf(const QString &path, QSize size, QString *error) const;
    /// PNG of exactly `pixels` pixels for a print resolution of `dpi` dots per inch (written in
    /// the file's pHYs chunk): laid out at pixels · 96/dpi logical pixels and drawn at dpi/96
    /// device pixels each, so text keeps its physical size (a 96-dpi image and a 300-dpi image of
    /// the same inches look alike). dpi in [24, 2400].
    bool savePngAtDpi(const QString &path, QSize pixels, double dpi, QString *error) const;
    /// Chooses PNG, SVG or PDF by the suffix of `path` (case-insensitive).
    bool save(const QString &path, QSize size, qreal dpr, QString *error) const;

private:
    struct TileSpec
    {
        int head = 0;
        bool mean = false;
    };
    QVector<TileSpec> tileSpecs() const;
    const MatrixD *tileMatrix(const TileSpec &spec) const;
    bool masksShown() const;
    /// masksShown() and some cell of the result is masked: the per-cell mask checks of the
    /// image and range loops are skipped otherwise (an unmasked result's states are all 0).
    bool cellMasksToApply() const;
    /// Why no finite unmasked cell set the colour range: "every cell masked" or "no finite
    /// unmasked cell" (NaN or ±inf wherever a mask does not apply).
    QString emptyRangeText() const;
    HeatmapLayout layoutImpl(const QRectF &bounds, const QString &caption) const;
    /// Draws a tile's visible cells as filled rectangles in the colours of its one-pixel-per-cell
    /// image, hatching masked cells with clipped lines (vector output).
    void paintVectorCells(QPainter *painter, int tile, const QRectF &map, const HeatmapLayout &lay,
                          bool anyMasked) const;
    void paintImpl(QPainter *painter, const QRectF &bounds, bool vectorOutput,
                   bool legendOnly = false) const;
    void invalidate();

    std::shared_ptr<const SessionResult> m_result;
    HeatmapOptions m_options;
    struct CachedImage
    {
        QSize maxPixels;
        QImage image;
    };
    mutable QVector<CachedImage> m_images; // per tile, lazily built
    mutable bool m_normValid = false;
    mutable ColorNorm m_norm;
    /// Why no cell set the colour range ("every cell masked"), empty when one did; with m_norm.
    mutable QString m_emptyRange;
    /// The OR of m_result's mask states (MaskStateBits; 0: nothing masked; −1: not scanned yet).
    mutable int m_anyMasked = -1;
};

/// Batch export: one file per head of `renderer`'s result, each the single-head view with the
/// renderer's other options (colormap, scale, range, window, ...):
/// <directory>/<prefix>-<k>.<format> for k = 0 … h−1, plus <prefix>-mean.<format> for the mean over
/// heads when h > 1 and the quantity is weights (the same tiles as the grid view). `format` is png,
/// svg or pdf; `size` is a PNG's pixel size (drawn for `dpi`, see savePngAtDpi) or the SVG/PDF size
/// in logical pixels / points. The directory is created if missing. Returns false at the first
/// failure with `error` naming the file; `written` lists the files written.
bool exportEachHead(const HeatmapRenderer &renderer, const QString &directory,
                    const QString &prefix, const QString &format, QSize size, double dpi,
                    QStringList *written, QString *error);

} // namespace attn
