#pragma once
// LongMapView: the "Long" tab of the attention views — the attention map of a long sequence
// (n up to SessionParameters::maxLongSequence) drawn from tiles the tile engine computes at the
// zoom shown (ui/render/longmaptiles.h), with the session's other parameters (d_model, heads,
// α, τ, masks, positions, dtype, seed). The first full view shows a progress bar and Cancel;
// after it, the wheel zooms about the pointer, a drag pans, a double click zooms in; each step
// asks for the tiles it lacks only, and until they arrive the coarser level is drawn enlarged
// (coarse first). Hovering a cell computes its raw score, scaled score, weight and mask state
// on demand; the readout names the pixel's cell range and the pooling. Export writes the visible
// window at the export's resolution (PNG, SVG, PDF) or as data (CSV, JSON, .npy).

#include "ui/render/comparerenderer.h"
#include "ui/render/longmaptiles.h"
#include "ui/session/longmapviewport.h"
#include "ui/session/sessionparameters.h"

#include <QJsonObject>

#include <QWidget>
#include <memory>

class QComboBox;
class QLabel;
class QProgressBar;
class QPushButton;
class QSpinBox;
class QTimer;

namespace attn {

class LongMapView : public QWidget
{
    Q_OBJECT
public:
    /// `tilePixels`: the tiles' side (tests use small tiles on small maps).
    explicit LongMapView(QWidget *parent = nullptr,
                         int tilePixels = LongMapTiles::defaultTilePixels);
    ~LongMapView() override;

    /// The session's parameters: everything but n (this view's own, setLength) is taken from
    /// them. A change recomputes the map when the tab is shown (or when it is next shown).
    void setParameters(const SessionParameters &p);
    /// The sequence length shown (n_q = n_k), 2 … maxLongSequence; default 16 384.
    void setLength(int n);
    int length() const;
    /// The parameters the map is computed with: the session's with this view's n, or the
    /// session's as they are with opened tensors (the file's queries, keys and mask); float32
    /// for a model run (its queries and keys are the forward's float32 values).
    SessionParameters mapParameters() const;

    /// Shown head: 0 … h − 1, or kHeadMean.
    void setHead(Index head);
    Index head() const { return m_head; }
    /// Max or mean pooling of a pixel's cells. A computed map keeps its view and row
    /// statistics and pools its tiles anew (LongMapTiles::setPooling); a map still computing
    /// starts over.
    void setPooling(TilePooling pooling);
    TilePooling pooling() const;
    enum class Scale { MaxWeight, Unit, Log };
    void setScale(Scale scale);

    /// The cells on screen (continuous; may extend past the weights when zoomed out).
    CellRect viewRect() const;
    /// Shows `cells` (its centre, and the zoom that fits it) and asks for its tiles.
    void setViewRect(const CellRect &cells);
    /// Zooms by `factor` (> 1: in) about the point at `pos` of the map (canvas coordinates).
    void zoomAt(QPointF pos, double factor);
    /// Moves the view by `delta` canvas pixels (the content follows the pointer).
    void panBy(QPointF delta);
    /// Shows every cell.
    void fit();
    /// The tile level drawn (TilePyramid::levelFor of the zoom).
    int level() const;
    /// The map's area on the canvas (canvas coordinates).
    QRectF mapArea() const;
    /// The colour bar's labels for `norm`, bottom to top, as (t in [0, 1], text): t = 0, ½, 1
    /// read back through the norm, or a symmetric log's 0 and ±powers of ten.
    static QList<QPair<double, QString>> colourBarLabels(const ColorNorm &norm);
    /// The width, in pixels, a colour bar label has right of the bar.
    static qreal colourBarLabelRoom();
    /// The cell under canvas point `pos` (row, col), or (−1, −1) off the weights.
    std::pair<Index, Index> cellAt(QPointF pos) const;

    /// {"n", "head" (−1: the mean), "pooling" ("max" | "mean"), "scale" ("max_weight" |
    /// "unit" | "log")} for session files.
    QJsonObject state() const;
    /// Applies the keys present with valid values (n in 2 … maxLongSequence, a head of the
    /// session, the names above); others are ignored.
    void setState(const QJsonObject &state);

    LongMapTiles *tiles() const { return m_tiles; }
    QWidget *canvas() const;
    /// The readout line of the hovered cell and pixel, and the line under the map (pooling,
    /// level, colour scale, timing).
    QString hoverText() const;
    QString statusText() const;
    /// True once every tile of the view is drawn from its own level.
    bool viewComplete() const;
    /// The row strip under the map: the hovered query's weights over the visible keys, pooled
    /// like the map's pixels (query −1 before a hover). Once the pointer leaves the map the
    /// strip keeps the last hovered query and still follows the view (zoom, pan, Fit).
    const LongRowStrip &rowStrip() const { return m_rowStrip; }

    /// Writes the visible window as a figure (PNG, SVG or PDF by suffix) of `size` logical
    /// pixels at `dpr`, from tiles computed at that resolution, or as data (CSV, JSON, .npy by
    /// suffix) pooled to at most 1024 × 1024 pixels; exported(path, error) follows (error empty
    /// when written).
    void exportWindow(const QString &path, QSize size = defaultExportSize(), qreal dpr = 2);
    /// The figure size of exportWindow and File → Export (logical pixels).
    static QSize defaultExportSize() { return QSize(1200, 1100); }

    /// Longest side of a window the Steps view takes (cells).
    static constexpr int maxStepsSide = 256;
    /// The visible window, clipped to the weights (whole cells).
    TileWindow visibleWindow() const;
    /// Computes the visible window (at most maxStepsSide cells a side) at one cell per pixel
    /// with its scores and row metrics (LongMapTiles::materializeWindow): windowMaterialized
    /// follows, or exported-style failure text in the status line.
    void openWindowInSteps();
    /// The visible window (as openWindowInSteps) as A of the A/B view: windowForCompare follows
    /// with a source that computes the same window for B's parameters
    /// (LongMapTiles::materializeVariantWindow), refused over the memory budget.
    void openWindowInCompare();

public slots:
    /// Starts the first full view again.
    void recompute();
    void exportInteractive();

signals:
    /// The first full view is on screen.
    void fullViewShown();
    /// Every tile of the current view is drawn from its own level.
    void viewCompleted();
    void hoverChanged();
    /// The row strip shows a new row (or the same row over new keys).
    void rowStripChanged();
    /// What state() holds changed: n, the head, the pooling or the colour scale.
    void stateChanged();
    void exported(const QString &path, const QString &error);
    /// The visible window's numbers for the Steps view (openWindowInSteps).
    void windowMaterialized(std::shared_ptr<const attn::SessionResult> result, attn::Index head);
    /// The visible window's numbers as A of the A/B view, with the source of B's
    /// (openWindowInCompare).
    void windowForCompare(std::shared_ptr<const attn::SessionResult> result, attn::Index head,
                          attn::CompareWindowSource source);

protected:
    void showEvent(QShowEvent *event) override;

private:
    class Canvas;
    /// The constructor's parts: the controls, canvas and labels laid out; the controls' signals;
    /// the tiles' signals.
    void buildControls();
    void connectControls();
    void connectTiles();
    void scheduleRecompute();
    /// The visible window (at most maxStepsSide cells a side) materialized for `where` (the
    /// tab it opens in), `button` disabled meanwhile; `then` gets it, or the status line says
    /// why not.
    void materializeVisibleWindow(
        const QString &where, QPushButton *button,
        const std::function<void(std::shared_ptr<const SessionResult>, const TileWindow &)> &then);
    /// B of the A/B view for the window `w` of the map computed with `a`
    /// (openWindowInCompare's source).
    void computeVariantWindow(
        const SessionParameters &a, const SessionParameters &b, const TileWindow &w,
        std::function<void(std::shared_ptr<const SessionResult>, const QString &)> deliver);
    void requestTiles();
    void clampView();
    void updateColors();
    void updateHeads();
    void updateStatus();
    void hover(QPointF pos);
    void refreshHover();
    /// The viewport with the canvas's map area and the tiles' pyramid as they are now.
    LongMapViewport &viewport() const;
    QString keyOf(const SessionParameters &p) const; ///< with the pooling chosen
    static QString keyOf(const SessionParameters &p, TilePooling pooling);

    LongMapTiles *m_tiles;
    Canvas *m_canvas = nullptr;
    QSpinBox *m_nSpin = nullptr;
    /// The length set for the seeded inputs; while opened tensors are shown the field shows the
    /// file's length instead, and this one comes back with the seeded inputs.
    int m_length = 0;
    QComboBox *m_headCombo = nullptr;
    QComboBox *m_poolingCombo = nullptr;
    QComboBox *m_scaleCombo = nullptr;
    QPushButton *m_fitButton = nullptr;
    QPushButton *m_exportButton = nullptr;
    QPushButton *m_cancelButton = nullptr;
    QPushButton *m_computeButton = nullptr;
    QPushButton *m_stepsButton = nullptr;
    QPushButton *m_compareButton = nullptr;
    QProgressBar *m_progress = nullptr;
    QLabel *m_status = nullptr;
    QLabel *m_hover = nullptr;
    QTimer *m_restart = nullptr;

    SessionParameters m_params;
    QString m_shownKey; ///< keyOf the map computed (or being computed)
    bool m_cancelledByUser = false;
    Index m_head = 0;
    mutable LongMapViewport m_viewport; ///< through viewport() only
    double m_fullViewSeconds = 0;
    qint64 m_startedMs = 0;
    QString m_hoverPixel; ///< the hovered pixel's cells and pooling
    QString m_hoverCell; ///< the hovered cell's numbers (once computed)
    Index m_hoverRow = -1, m_hoverCol = -1;
    int m_hoverLevel = -1;
    QPointF m_hoverPos {-1, -1};
    LongRowStrip m_rowStrip;
    void requestHovered();
    QString m_message; ///< an error or "cancelled" shown over the map
};

} // namespace attn
