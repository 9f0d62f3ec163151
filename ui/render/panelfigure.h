#pragma once
// PanelFigure: a row of linked heatmap panels over the same n_q × n_k cells, each with its own
// colour scale and legend, a caption on top and an optional table under the panels. It is the
// painter of the steps view (raw scores → scaled and masked scores → weights) and of the A/B
// view (A, B, B − A), for the window, File → Export and `attnlab heatmap --view steps` alike:
// PNG, SVG and PDF come from the same paint code (like HeatmapRenderer, whose mask colours and
// hatches it reuses: causal "/", padding "\", both crossed, never a colour of the colormap).

#include "ui/render/colormap.h"
#include "ui/render/figurefile.h"
#include "ui/session/sessioncompute.h"

#include "core/base/types.h"

#include <QColor>
#include <QImage>
#include <QPoint>
#include <QRectF>
#include <QSize>
#include <QString>
#include <QStringList>
#include <QVector>

#include <cstdint>
#include <limits>
#include <memory>
#include <vector>

class QPainter;

namespace attn {

/// One heatmap of a PanelFigure.
struct FigurePanel
{
    QString title; ///< above the heatmap ("1 · raw scores QKᵀ")
    QString quantity; ///< heading of the panel's colourbar ("raw score")
    /// n_q × n_k, row-major. Not owned: the figure's owner keeps it alive while it is set.
    const MatrixD *values = nullptr;
    /// MaskStateBits per cell (n_q × n_k) or nullptr. Masked cells are drawn in the mask colours
    /// of HeatmapRenderer::maskedColor for this panel's colormap, hatched when cells are large.
    const MatrixB *maskState = nullptr;
    /// n_q flags (1 = every key of the row is masked): a red marker left of the row. Or nullptr.
    const std::vector<std::uint8_t> *fullyMasked = nullptr;
    /// For weights of a window that shows only some keys of each row (a window of a longer
    /// sequence): the worst |Σ_j w_ij − 1| over the whole rows, shown instead of the window's
    /// own row sums (which are not 1). NaN when the rows are whole.
    double wholeRowSumError = std::numeric_limits<double>::quiet_NaN();
    /// What each row of the weights should sum to: 1, or 1 − λ for differential attention's
    /// A₁ − λA₂ (the statistics then name it).
    double expectedRowSum = 1.0;
    ColormapId colormap = ColormapId::Viridis;
    ColorNorm norm; ///< value → [0, 1] before the colormap
    QString rangeNote; ///< legend line under the colormap name ("fixed [0, 1]")
    /// Marks the data's true minimum and maximum (unmasked, finite cells) on the colourbar.
    bool markDataRange = false;
    double dataMin = 0, dataMax = 0;
    /// Pooling beyond FigureStyle::maxImageSide cells per side: max (weights) or mean (scores).
    bool poolMax = false;
    /// Legend lines under the range: the panel's statistics (setWeightStatistics).
    QStringList statistics;
};

/// Axis labels of a figure: one per row (query i) and per column (key j). Token labels are
/// elided to a few characters; token key labels are written vertically.
struct FigureAxes
{
    QStringList queries; ///< n_q labels
    QStringList keys; ///< n_k labels
    bool queryTokens = false; ///< the query labels are words (else positions)
    bool keyTokens = false; ///< the key labels are words (else positions)
    /// The labels a result's axes show: SessionResult::indexedQueryLabel / indexedKeyLabel
    /// ("3:the" when tokens are set, else the position in the computation, also for trimmed or
    /// hidden rows and columns), as the heads grid labels them.
    static FigureAxes of(const SessionResult &result);
};

/// A small table painted under the panels (the A/B view's metric deltas).
struct FigureTable
{
    QStringList header;
    QVector<QStringList> rows; ///< each as long as the header
    bool isEmpty() const { return rows.isEmpty(); }
};

struct FigureStyle
{
    qreal fontPixelSize = 0; ///< logical pixels; 0 derives it from the paint size
    QColor background = Qt::white;
    QColor foreground = Qt::black;
    int maxImageSide = 1024; ///< cells per side beyond which a panel image is pooled
    /// Panels side by side share the query labels of the row's first panel (narrow room: the
    /// others' maps follow with only a tick's width to their left).
    bool shareQueryLabels = false;
    bool operator==(const FigureStyle &) const = default;
};

/// A cell under a point: panel 0 … P−1, query i (row), key j (column).
struct FigureHit
{
    int panel = -1;
    int row = -1;
    int col = -1;
    bool valid() const { return panel >= 0 && row >= 0 && col >= 0; }
    bool operator==(const FigureHit &) const = default;
};

/// Where everything goes for given bounds (logical coordinates).
struct PanelFigureLayout
{
    QRectF caption; ///< caption lines
    QVector<QRectF> frames; ///< per panel: heatmap with labels and legend
    QVector<QRectF> maps; ///< per panel: the heatmap itself (n_k cells wide, n_q high)
    QVector<QRectF> colorbars; ///< per panel
    QVector<QRectF> legends; ///< per panel: colourbar, labels, mask swatches
    QRectF footer; ///< table and notes
    qreal fontPixelSize = 12;
    qreal cellSize = 0; ///< side of one cell (logical pixels), the same in every panel
    int tickStepRows = 1, tickStepCols = 1; ///< label every k-th query / key
    bool rotateKeyLabels = false; ///< key tokens written vertically
    /// Panel titles wider than their maps get a line of their own above the quantity line.
    bool titleOwnLine = false;
    qreal legendWidth = 0; ///< width of each panel's legend column (its lines wrap at it)
    int columns = 1; ///< panels side by side in a row
};

class PanelFigure
{
public:
    PanelFigure();
    virtual ~PanelFigure();
    PanelFigure(const PanelFigure &) = default;
    PanelFigure &operator=(const PanelFigure &) = default;

    void setStyle(const FigureStyle &style);
    const FigureStyle &style() const { return m_style; }

    int panelCount() const { return int(m_panels.size()); }
    const FigurePanel &panel(int index) const { return m_panels[index]; }
    const QStringList &captionLines() const { return m_caption; }
    const FigureTable &footerTable() const { return m_table; }
    const QStringList &footerNotes() const { return m_notes; }
    /// Shown instead of the panels when there are none ("No result yet").
    const QString &message() const { return m_message; }
    /// n_q and n_k of the panels (0 without panels).
    int queryCount() const;
    /// Cells of all panels together (Σ n_q·n_k): what a paint has to turn into pixels.
    qint64 cellCount() const;
    int keyCount() const;

    /// Panel image: one pixel per cell (pooled beyond maxImageSide), masked cells in their mask
    /// colour (unhatched). Cached until the content or style changes.
    QImage panelImage(int index) const;
    /// The same pooled by blocks of rowBlock × colBlock cells (the paint pools to about one
    /// device pixel per block when cells are smaller than a pixel). The last one is cached.
    QImage panelImage(int index, int rowBlock, int colBlock) const;
    /// Base colour of a masked cell with MaskStateBits `state` (≠ 0) under colormap `id`: the
    /// grid renderer's colours (HeatmapRenderer::maskedColor), so both views read alike.
    static QRgb maskedColor(ColormapId id, std::uint8_t state);
    /// Sets `panel` up as a diverging RdBu_r panel centred on 0 for its values and mask:
    /// norm symmetric over [−m, m] with m = max(|min|, |max|) of the finite, unmasked cells (so
    /// 0 is the white middle and equal magnitudes get equal intensity), the true min and max
    /// marked. All-zero or empty data get m = 1 (0 stays the middle; the range note says
    /// "all 0").
    static void makeDiverging(FigurePanel &panel);
    /// Sets a weight panel's statistics lines from core's weightStatistics of its values, mask
    /// states and fully masked rows: "min …", "max …", "mean …" (cells not masked) and
    /// "worst |row sum − 1| …" (rows not fully masked), 4 significant digits. No values: no lines.
    static void setWeightStatistics(FigurePanel &panel);
    /// FigurePanel::wholeRowSumError of `head` of `r` (r.headCount() for the mean over heads):
    /// the rows' own |Σ_j w_ij − 1| from r.metrics when r holds fewer keys than its parameters
    /// (a window of a longer sequence), else NaN.
    static double wholeRowSumError(const SessionResult &r, int head);
    /// A value as shown in tooltips and tables: 6 significant digits, "−" for minus, ±∞, NaN.
    static QString formatValue(double v);

    PanelFigureLayout layout(const QRectF &bounds) const;
    /// Paints everything into `bounds` (logical coordinates of `painter`).
    void paint(QPainter *painter, const QRectF &bounds) const;
    /// The cell under `pos` for a paint into `bounds`; invalid when none.
    FigureHit cellAt(const QRectF &bounds, const QPointF &pos) const;
    /// The rectangle of cell (row, col) in every panel (the linked highlight); empty when the
    /// cell is out of range.
    QVector<QRectF> cellRects(const QRectF &bounds, int row, int col) const;
    /// Multi-line tooltip text for a hit (empty by default).
    virtual QString describeCell(const FigureHit &hit) const;

    /// Renders to an image of size·dpr device pixels (devicePixelRatio dpr).
    QImage render(QSize size, qreal dpr = 1.0) const;
    /// paintImpl as a FigurePainter (ui/render/figurefile.h), for the shared PNG/SVG/PDF writers.
    FigurePainter painter() const;
    /// Exports, written atomically through QSaveFile; sizes in logical pixels (PDF: points).
    /// Return false with `error` naming the path on failure.
    bool savePng(const QString &path, QSize size, qreal dpr, QString *error) const;
    bool saveSvg(const QString &path, QSize size, QString *error) const;
    bool savePdf(const QString &path, QSize size, QString *error) const;
    /// Chooses PNG, SVG or PDF by the suffix of `path` (case-insensitive).
    bool save(const QString &path, QSize size, qreal dpr, QString *error) const;

protected:
    /// Replaces the content (clears the image cache); `axes` labels the rows and columns.
    void setContent(const QStringList &caption, const QVector<FigurePanel> &panels,
                    const FigureAxes &axes, const FigureTable &table = {},
                    const QStringList &notes = {});
    /// No panels; `message` is shown in the middle.
    void setMessage(const QStringList &caption, const QString &message);
    /// Title of exported SVG/PDF documents.
    virtual QString documentTitle() const;
    /// The data the panels point into (FigurePanel::values, maskState, fullyMasked), kept alive
    /// by the figure and by every copy of it: a copy can be painted on another thread while the
    /// original moves on to new content. The data must not change while the figure holds it.
    void holdData(std::vector<std::shared_ptr<const void>> owners) { m_owners = std::move(owners); }

private:
    PanelFigureLayout computeLayout(const QRectF &bounds) const;
    void paintImpl(QPainter *painter, const QRectF &bounds, bool vectorOutput) const;
    QStringList legendLines(const FigurePanel &panel) const;

    FigureStyle m_style;
    std::vector<std::shared_ptr<const void>> m_owners;
    QStringList m_caption;
    QVector<FigurePanel> m_panels;
    FigureAxes m_axes;
    FigureTable m_table;
    QStringList m_notes;
    QString m_message = QStringLiteral("No result yet");
    QVector<int> m_flags; ///< per panel: which mask kinds / NaN it holds (for its legend)
    mutable QVector<QImage> m_images;
    mutable QVector<QPoint> m_imageBlocks; ///< per panel: (column block, row block) of the image
    // The last layout and its bounds (hover hit-testing asks for the same layout often).
    mutable QRectF m_layoutBounds;
    mutable PanelFigureLayout m_layout;
    mutable bool m_layoutValid = false;
};

} // namespace attn
