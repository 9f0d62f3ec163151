#pragma once
// ExportRouter: File → Export (Ctrl+E) of the main window. It decides what the user looks at
// (a focused chart dock, else the experiments mode, else the training mode — its chart when
// clicked, else its heatmaps —, else the attention view's tab: Heads, Steps, Compare A/B,
// Tokens, Positions or Model), names it in the action's text, suggests a file name and size, and
// hands the writing to that view's own export code (HeatmapActions::exportView,
// StepsView/CompareView/TokensView/PositionsView/ModelView::exportFigure, exportWidget,
// ExperimentPage::exportFigure).

#include <QList>
#include <QObject>
#include <QPointer>
#include <QSize>

class QAction;
class QDockWidget;
class QTabWidget;
class QWidget;

namespace attn {

class AttentionSession;
class AttentionViews;
class ExperimentsPanel;
class HeatmapActions;
class TrainingPanel;

class ExportRouter : public QObject
{
    Q_OBJECT
public:
    /// What File → Export writes: the view the user looks at.
    enum class Target {
        Heads, ///< the heads heatmaps as shown: grid of every head + mean, or one head
        Steps, ///< the steps view (StepsView::exportFigure)
        Compare, ///< the A/B view (CompareView::exportFigure)
        Tokens, ///< the Tokens tab's head view or coloured text (TokensView::exportFigure)
        Model, ///< the Model tab: every layer and head of a loaded stack (ModelView::exportFigure)
        Positions, ///< the Positions tab: PE and PE·PEᵀ (PositionsView::exportFigure)
        Chart, ///< the live chart that has the keyboard focus (a chart dock), as shown
        Experiment, ///< the current experiment's figure (ExperimentPage::exportFigure)
        /// The Training tab: its loss chart when that has the focus, else the A and B heatmaps
        /// (TrainingPanel::exportChart / exportHeatmaps)
        Training,
        /// The Long tab's visible window at the export's resolution, written in the background
        /// (LongMapView::exportWindow; its exported signal reports)
        Long,
    };
    /// The views it exports (none owned); `dialogParent` (the window) parents its dialogs.
    ExportRouter(AttentionSession *session, HeatmapActions *heatmapActions, AttentionViews *views,
                 QTabWidget *modes, ExperimentsPanel *experiments, QWidget *dialogParent);

    /// The Training tab (the third mode; not owned).
    void setTrainingPanel(TrainingPanel *training);
    /// A live chart in `dock`: exported when it (or a child) has the keyboard focus.
    void addChart(QDockWidget *dock, QWidget *chart);
    /// File → Export (Ctrl+E); its text names the current target ("&Export Head 2…").
    QAction *exportAction() const { return m_exportAction; }

    /// A focused chart wins, else the experiments mode, else the attention view's tab.
    Target currentTarget() const;
    /// Name of what Ctrl+E exports now, e.g. "Heatmap Grid", "Head 2", "Attention Steps",
    /// "A/B Comparison", "Token Head View", "Coloured Tokens", "Chart “Max weight vs d_k”",
    /// "E2 Figure".
    QString currentName() const;
    /// File name suggested for it, e.g. "attention-heads.png", "attention-steps-head0.png".
    QString currentFileName() const;
    /// Size (logical pixels; PDF: points) for the current target: the view's own default
    /// export size (heads: defaultExportSize(); chart: its on-screen size; experiment:
    /// defaultExperimentFigureSize, in pixels, with dpr 1).
    QSize currentSize() const;
    /// Writes the current target to `path`, PNG/SVG/PDF by suffix (experiment figures:
    /// PNG/SVG). An empty `size` takes currentSize(); a PNG is `size` × `dpr` pixels
    /// (experiment figures: `size` pixels). Returns false with `error` naming the problem
    /// (nothing to export yet, unknown suffix, write failure).
    bool exportCurrentView(const QString &path, QString *error, QSize size = QSize(),
                           qreal dpr = 2.0) const;
    /// Writes the heatmap grid of the current result (every head plus the mean, with
    /// colourbar and caption, zoom window ignored) to `path`; PNG, SVG or PDF by suffix.
    /// `size` in logical pixels (PDF: points), PNG rendered at `dpr` device pixels per
    /// logical pixel. Returns false with `error` naming the problem (no result yet, unknown
    /// suffix, write failure).
    bool exportHeatmapGrid(const QString &path, QSize size, qreal dpr, QString *error) const;
    /// The heads heatmaps' export size: their on-screen size, at least 800 × 500.
    QSize defaultExportSize() const;

public slots:
    /// Asks for a file name (the target stays the one of the moment it was triggered) and
    /// writes the current target; a message box names a failure.
    void exportCurrentViewInteractive();
    /// Names the current target in the action's text and status tip.
    void updateExportAction();

private:
    /// The chart dock's chart holding the focus (nullptr when none).
    QWidget *focusedChart() const;
    /// The title of the dock holding `chart` (empty when none).
    QString chartTitle(const QWidget *chart) const;

    AttentionSession *m_session;
    HeatmapActions *m_heatmapActions;
    AttentionViews *m_views;
    QTabWidget *m_modes;
    ExperimentsPanel *m_experiments;
    QWidget *m_dialogParent;
    TrainingPanel *m_training = nullptr;
    QAction *m_exportAction;
    QList<QDockWidget *> m_chartDocks;
    QList<QWidget *> m_charts; ///< m_charts[i] lives in m_chartDocks[i]
    /// While the export dialog is open the target stays what it was when triggered (the
    /// dialog takes the focus from a chart).
    bool m_frozen = false;
    Target m_frozenTarget = Target::Heads;
    QPointer<QWidget> m_frozenChart;
    bool m_frozenTrainingChart = false;
    /// Training target: the chart (else the heatmaps).
    bool trainingChart() const;
};

} // namespace attn
