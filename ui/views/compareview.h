#pragma once
// CompareView: the A/B mode. A is the current result of the main session; B is a variant of A's
// parameters set in the view's own control strip (α, τ, mask, d_k) and computed off the GUI
// thread by a second AttentionSession on the same seed. Shows A and B side by side, their
// difference B − A (diverging scale) and the metric deltas (CompareRenderer), says honestly
// whether the inputs are the same numbers (they are not when d_model differs), and exports as
// PNG, SVG or PDF. B is only computed while the view is visible.

#include "ui/render/comparerenderer.h"

#include <QJsonObject>
#include <QWidget>

#include <functional>
#include <memory>
#include <optional>

class QComboBox;
class QDoubleSpinBox;
class QLabel;
class QPushButton;
class QSpinBox;

namespace attn {

class AttentionSession;
class FigureCanvas;
class FigureScrollArea;

class CompareView : public QWidget
{
    Q_OBJECT
public:
    explicit CompareView(QWidget *parent = nullptr);
    ~CompareView() override;

    /// A's result (from the main session). Until B is edited (setVariant, the strip, B = A or
    /// a restored session state) B follows A: A with the scale toggled (1/√d_k ⇄ unscaled),
    /// as `attnlab heatmap --view compare` without --compare. An edited B stays as set.
    void setResultA(std::shared_ptr<const SessionResult> result);
    /// A window of a longer sequence as A (the Long tab's visible window, n up to
    /// SessionParameters::maxLongSequence): B is the same window for B's parameters, asked of
    /// `source` instead of computed here, whenever B changes. The next setResultA() ends it.
    void setWindowResultA(std::shared_ptr<const SessionResult> result, CompareWindowSource source);
    /// True while A is a window with its own source of B.
    bool comparesWindow() const { return bool(m_windowSource); }
    std::shared_ptr<const SessionResult> resultA() const { return m_a; }
    /// B's result as shown (nullptr until computed, or when B failed).
    std::shared_ptr<const SessionResult> resultB() const { return m_b; }

    /// What B changes relative to A; updates the strip and recomputes B. B counts as edited
    /// from then on (A's later changes no longer reset it).
    void setVariant(const CompareVariant &variant);
    /// True once B was set by hand or restored; false while B follows A (scale toggled).
    bool isVariantEdited() const { return m_variantEdited; }
    /// B as compared: the variant set, with A's d_k while A shows loaded tensors (they fix
    /// d_model); the d_k set for B is kept for when A is random inputs again.
    CompareVariant variant() const;
    /// B's parameters for the current A (nullopt without A).
    std::optional<SessionParameters> parametersB() const;

    /// The view state a session file keeps (SessionDocument::view's "compare", see
    /// sessionfile.h): B's α, τ, mask and d_k and the head compared. While B is not edited only
    /// the head (B follows A, also when the session is opened again); empty before the first A.
    QJsonObject state() const;
    /// Applies the keys present in `state` (compareViewFromJson: unknown or invalid values are
    /// ignored); any of alpha, temperature, mask or d_k counts B as edited, a head alone makes
    /// B follow A again. Loaded tensors keep d_k at A's. An empty object changes nothing.
    void setState(const QJsonObject &state);

    /// Head 0 … h−1, or h for the mean over heads.
    void setHead(int head);
    int head() const { return m_renderer.head(); }
    /// Colormap of the A and B weights panels (as StepsView::setWeightsColormap).
    void setWeightsColormap(ColormapId id);

    /// True when the shown comparison is A's current result against B computed from it.
    bool isUpToDate() const;
    /// Presentation mode: the maps as large as the pane allows, each panel whole when
    /// scrolled to, rather than side by side at once.
    void setPresenting(bool presenting);

    const CompareRenderer &renderer() const { return m_renderer; }
    FigureCanvas *canvas() const { return m_canvas; }
    AttentionSession *sessionB() const { return m_sessionB; }
    QLabel *statusLabel() const { return m_status; }

    /// Writes the A/B view (caption with both parameter sets, the three panels, the metric
    /// table and notes) to `path`: PNG, SVG or PDF by suffix, dark on white. Returns false with
    /// `error` naming the problem (nothing to compare yet, unknown suffix, write failure).
    bool exportFigure(const QString &path, QSize size, qreal dpr, QString *error) const;
    QSize defaultExportSize() const;

public slots:
    void exportInteractive();
    /// B = A (every difference 0): a starting point for changing one thing.
    void resetVariant();
    /// Recomputes B if needed and shows the comparison (done automatically when visible).
    void refresh();

signals:
    /// A new comparison (A and B from the same A parameters) is shown.
    void comparisonChanged();
    /// What state() holds may have changed: B's settings or the head compared.
    void stateChanged();

protected:
    void showEvent(QShowEvent *event) override;

private:
    void buildUi();
    void syncStrip();
    void syncHeads();
    void editVariant(const std::function<void(CompareVariant &)> &change);
    /// B failed (its session or the long map refused it): A alone, with the message.
    void showBFailed(const QString &message);
    void onResultB(std::shared_ptr<const SessionResult> result);
    void setA(std::shared_ptr<const SessionResult> result);
    /// B's default for A: A with the 1/√d_k scale toggled (as parseCompare of
    /// app/cli/heatmapparse.cpp).
    static CompareVariant defaultVariant(const SessionParameters &a);

    CompareRenderer m_renderer;
    AttentionSession *m_sessionB = nullptr;
    std::shared_ptr<const SessionResult> m_a, m_b;
    CompareVariant m_variant;
    bool m_variantEdited = false; ///< B set by hand or restored: no longer follows A
    bool m_dirty = false;
    int m_requestedHead = 0;
    CompareWindowSource m_windowSource;
    quint64 m_windowRequest = 0; // the newest ask of m_windowSource (older answers are dropped)

    FigureCanvas *m_canvas = nullptr;
    FigureScrollArea *m_scroll = nullptr;
    QDoubleSpinBox *m_alphaSpin = nullptr;
    QDoubleSpinBox *m_tauSpin = nullptr;
    QComboBox *m_maskCombo = nullptr;
    QSpinBox *m_dkSpin = nullptr;
    QPushButton *m_resetButton = nullptr;
    QComboBox *m_headCombo = nullptr;
    QPushButton *m_exportButton = nullptr;
    QLabel *m_status = nullptr;
};

} // namespace attn
