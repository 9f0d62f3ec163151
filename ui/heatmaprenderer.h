#pragma once
// HeatmapRenderer: the one painter of attention heatmaps, for the window, File → Export and
// `attnlab heatmap` alike (after Tiled's MiniMapRenderer): a grid of tiles (one per head plus
// the mean over heads) or a single tile, each with its title, query/key ticks and axis titles,
// a colourbar naming the colormap and scale, masked cells drawn distinctly (causal and padding
// differ from each other and from a weight near 0), fully masked rows marked in red, and a
// caption with the parameters. Each tile's heatmap is a QImage with one pixel per cell (pooled
// by max or mean beyond HeatmapOptions::maxImageSide cells) drawn scaled without smoothing, so
// n = 1024 paints as fast as n = 8. PNG, SVG and PDF come from the same paint code.

#include "colormap.h"
#include "sessioncompute.h"

#include <QColor>
#include <QImage>
#include <QRectF>
#include <QSize>
#include <QString>
#include <QVector>

#include <memory>

class QPainter;

namespace attn {

/// What the renderer lays out. (Issue 6 adds Steps and Compare.)
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

/// How cells are combined when a tile has more cells than maxImageSide per side.
enum class HeatmapPooling { Max, Mean };

struct HeatmapOptions
{
    HeatmapView view = HeatmapView::Grid;
    int head = 0; ///< SingleHead: head 0 … h−1, or h for the mean over heads
    bool showMean = true; ///< Grid: add the "mean over heads" tile (weights only, h > 1)
    HeatmapQuantity quantity = HeatmapQuantity::Weights;
    ColormapId colormap = ColormapId::Viridis;
    ColorScale scale = ColorScale::Linear;
    /// false: weights use the fixed range [0, 1] (log: [logFloor, 1]) so 1.0 is the top of the
    /// scale; true: the data's min … max over the shown tiles (masked cells excluded).
    /// Scores always use their data range (symmetric about 0 with a diverging colormap).
    bool autoRange = false;
    double logFloor = 1e-4; ///< lower end of a fixed log range
    int maxImageSide = 1024; ///< cells per side beyond which a tile image is pooled
    HeatmapPooling pooling = HeatmapPooling::Max;
    bool showCaption = true; ///< the parameter caption line at the top
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
    struct Tile
    {
        int head = 0; ///< 0 … h−1, or h for the mean
        bool mean = false;
        QString title; ///< "head i" or "mean over heads"
        QRectF frame; ///< the tile with its labels
        QRectF map; ///< the heatmap itself (n_k cells wide, n_q cells high)
    };
    QVector<Tile> tiles;
    QRectF caption;
    QRectF colorbar; ///< the colour strip
    QRectF legend; ///< colourbar labels and mask legend column
    qreal fontPixelSize = 12;
    qreal cellSize = 0; ///< side of one cell in logical pixels
    int tickStepRows = 1, tickStepCols = 1; ///< label every k-th query / key
    bool rotateKeyLabels = false; ///< key tokens written vertically
};

class HeatmapRenderer
{
public:
    HeatmapRenderer();

    void setResult(std::shared_ptr<const SessionResult> result);
    std::shared_ptr<const SessionResult> result() const { return m_result; }
    void setOptions(const HeatmapOptions &options);
    const HeatmapOptions &options() const { return m_options; }

    Colormap colormap() const { return Colormap(m_options.colormap); }
    /// The value → colour normalisation in effect for the current result and options.
    ColorNorm norm() const;
    /// Base colour of a masked cell with MaskStateBits `state` (≠ 0). Causal and padding differ;
    /// neither occurs in the active colormap.
    QRgb maskedColor(std::uint8_t state) const;
    /// Colour of the red marker left of a fully masked row.
    static QColor fullyMaskedMarkerColor() { return QColor(214, 39, 40); }

    /// Number of tiles for the current view and result (0 without a result).
    int tileCount() const;
    /// Tile image: one pixel per cell (pooled beyond maxImageSide), masked cells in their mask
    /// colour. Cached until the result or options change.
    QImage tileImage(int tile) const;

    HeatmapLayout layout(const QRectF &bounds) const;
    /// Paints everything into `bounds` (logical coordinates of `painter`).
    void paint(QPainter *painter, const QRectF &bounds) const;
    /// The cell under `pos` for a paint into `bounds`; invalid when none.
    HeatmapHit cellAt(const QRectF &bounds, const QPointF &pos) const;
    /// Rectangle of a hit's cell (for hover highlights); empty when invalid.
    QRectF cellRect(const QRectF &bounds, const HeatmapHit &hit) const;
    /// Multi-line tooltip text for a cell: head, query i (row), key j (column), tokens, weight,
    /// raw score, scaled score, mask state, the row's entropy (nats) and effective terms.
    QString describeCell(const HeatmapHit &hit) const;

    /// Renders to an image of size·dpr device pixels (devicePixelRatio dpr).
    QImage render(QSize size, qreal dpr = 1.0) const;
    /// Exports (written atomically through QSaveFile). Sizes in logical pixels (PDF: points).
    /// Return false with `error` naming the path on failure.
    bool savePng(const QString &path, QSize size, qreal dpr, QString *error) const;
    bool saveSvg(const QString &path, QSize size, QString *error) const;
    bool savePdf(const QString &path, QSize size, QString *error) const;
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
    void paintImpl(QPainter *painter, const QRectF &bounds, bool vectorOutput) const;
    void invalidate();

    std::shared_ptr<const SessionResult> m_result;
    HeatmapOptions m_options;
    mutable QVector<QImage> m_images; // per tile, lazily built
    mutable bool m_normValid = false;
    mutable ColorNorm m_norm;
};

} // namespace attn
