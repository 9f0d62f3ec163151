#pragma once
// MainWindow: menus, docks, actions, the status bar and the wiring between the session and the
// panels — nothing else (each panel and chart is its own class). Data flow:
// ControlPanel → AttentionSession (worker) → resultChanged → heatmaps, charts, status bar.

#include "ui/session/sessioncompute.h"

#include <QByteArray>
#include <QJsonObject>
#include <QMainWindow>
#include <QPointer>
#include <QSize>

#include <functional>
#include <memory>

class QAction;
class QCloseEvent;
class QKeySequence;
class QResizeEvent;
class QSettings;
class QDockWidget;
class QLabel;
class QTabWidget;

namespace attn {

class AttentionSession;
class AttentionViews;
class ControlPanel;
class ExperimentsPanel;
class HeatmapActions;
class HeatmapViewPanel;
class HeatmapWidget;
class JacobianNormChart;
class MaxWeightChart;
class RowMetricsChart;
class ScalingSweepRunner;
class SessionController;
class TensorController;
class TimingChart;

class MainWindow : public QMainWindow
{
    Q_OBJECT
public:
    explicit MainWindow(QWidget *parent = nullptr);
    ~MainWindow() override;

    AttentionSession *session() const { return m_session; }
    ControlPanel *controlPanel() const { return m_controls; }
    HeatmapWidget *heatmapWidget() const { return m_heatmap; }
    /// The "Heatmap view" dock: colormap, scale, range, pooling, zoom, trim padding, hide keys.
    HeatmapViewPanel *heatmapViewPanel() const { return m_viewPanel; }
    /// File → Export Heatmaps at Size/DPI / Each Head / Data and View → Zoom actions of the
    /// heatmaps.
    HeatmapActions *heatmapActions() const { return m_heatmapActions; }
    MaxWeightChart *maxWeightChart() const { return m_maxWeightChart; }
    JacobianNormChart *jacobianNormChart() const { return m_jacobianChart; }
    RowMetricsChart *rowMetricsChart() const { return m_rowMetricsChart; }
    TimingChart *timingChart() const { return m_timingChart; }
    /// The experiments panel (E1–E16), a tab of the right column.
    ExperimentsPanel *experimentsPanel() const { return m_experiments; }
    ScalingSweepRunner *scalingSweepRunner() const { return m_sweepRunner; }
    QAction *exportAction() const { return m_exportAction; }
    /// The centre's modes: 0 = attention view (heatmaps), 1 = experiments (whole window).
    QTabWidget *modeTabs() const { return m_modes; }
    /// The attention mode's tabs: Heads, Steps, Compare A/B (their actions are in the View menu).
    AttentionViews *attentionViews() const { return m_views; }

    /// Writes the heatmap grid of the current result (every head plus the mean, with colourbar
    /// and caption) to `path`; PNG, SVG or PDF by suffix. `size` in logical pixels (PDF:
    /// points), PNG rendered at `dpr` device pixels per logical pixel. Returns false with
    /// `error` naming the problem (no result yet, unknown suffix, write failure).
    bool exportHeatmapGrid(const QString &path, QSize size, qreal dpr, QString *error) const;
    /// Size of a File → Export: the heatmap's on-screen size (at least 800 × 500).
    QSize defaultExportSize() const;

    /// What File → Export (Ctrl+E) writes: the view the user looks at.
    enum class ExportTarget {
        Heads, ///< the heads heatmaps as shown: grid of every head + mean, or one head
        Steps, ///< the steps view (StepsView::exportFigure)
        Compare, ///< the A/B view (CompareView::exportFigure)
        Chart, ///< the live chart that has the keyboard focus (a chart dock), as shown
        Experiment, ///< the current experiment's figure (ExperimentPage::exportFigure)
    };
    /// The current export target: a chart dock holding the focus wins, else the experiments
    /// mode, else the attention view's current tab (Heads / Steps / Compare A/B).
    ExportTarget currentExportTarget() const;
    /// Name of what Ctrl+E exports now, e.g. "Heatmap Grid", "Head 2", "Attention Steps",
    /// "A/B Comparison", "Chart: Max weight vs d_k", "E2 Figure".
    QString currentExportName() const;
    /// File name suggested for it, e.g. "attention-heads.png", "attention-steps-head0.png".
    QString currentExportFileName() const;
    /// Size (logical pixels; PDF: points) File → Export uses for the current view: the view's
    /// own default export size (heads: defaultExportSize(); chart: its on-screen size;
    /// experiment: defaultExperimentFigureSize, in pixels, with dpr 1).
    QSize currentExportSize() const;
    /// Writes the current view (currentExportTarget) to `path`, PNG/SVG/PDF by suffix
    /// (experiment figures: PNG/SVG), through the view's own export code. An empty `size` takes
    /// currentExportSize(); a PNG is `size` × `dpr` pixels (experiment figures: `size` pixels).
    /// Returns false with `error` naming the problem (nothing to export yet, unknown suffix,
    /// write failure). The non-interactive half of File → Export.
    bool exportCurrentView(const QString &path, QString *error, QSize size = QSize(),
                           qreal dpr = 2.0) const;

    /// Opens a saved session (.attnlab.json); on failure a message box names the file and the
    /// problem and the current state is kept. Returns true when opened.
    bool openSession(const QString &path);
    /// Sessions, undo/redo of parameter changes and recent files (File and Edit menus).
    SessionController *sessionController() const { return m_sessionController; }
    /// File → Open Tensors…, Back to Random Inputs, Export Weights… and the Tensors dock.
    TensorController *tensorController() const { return m_tensors; }
    /// What the window shows, for session files (keys in sessionfile.h): "tabs" (the current
    /// tab of each nested tab widget of the centre) and "heatmap" (view, head, colormap …).
    QJsonObject viewState() const;
    /// Applies the keys present in `state`; unknown keys and values are ignored.
    void setViewState(const QJsonObject &state);
    /// Window geometry, dock layout, last parameters and view, recent files (QSettings).
    /// restoreSettings also makes the recent-files list persist as soon as it changes.
    void restoreSettings(QSettings &settings);
    void saveSettings(QSettings &settings) const;
    /// Next/previous head: grid → head 0 → … → head h−1 → mean → grid (step = +1 or −1).
    void stepHead(int step);

    /// Every action with a shortcut, in menu order (for Help → Keyboard shortcuts and tests).
    QList<QAction *> shortcutActions() const;
    /// True when `key` is the shortcut of one of the window's actions that wins over a focused
    /// text field or spin box (Ctrl+E, Ctrl+Shift+E, F5, Ctrl+K, Ctrl+Page Up/Down,
    /// Ctrl+Alt+1/2/3 …): any action shortcut with Ctrl, Alt or Meta, or a function key, except
    /// the editor's own standard keys (undo, redo, cut, copy, paste, select all, delete).
    bool isWindowShortcut(const QKeySequence &key) const;
    /// View → Reset Layout: the docks, toolbars and window size of a first start.
    QAction *resetLayoutAction() const { return m_resetLayoutAction; }
    /// The Controls dock's width on a first start for a window `windowWidth` pixels wide.
    int defaultControlsWidth(int windowWidth) const;

    /// 1500 × 950, or less: at most 90 % of the screen's available geometry.
    QSize sizeHint() const override;
    /// The window's first-start geometry: sizeHint() centred in the available geometry of the
    /// screen (the primary one before the window is shown).
    void fitToScreen();

public slots:
    /// View → Reset Layout: every dock back where a first start puts it (shown, tabbed, sized),
    /// the window back to its first-start size, out of full screen, in the attention mode.
    void resetLayout();
    /// File → Export heatmap grid: asks for a file name (PNG/SVG/PDF) and writes it.
    void exportHeatmapGridInteractive();
    /// File → Export (Ctrl+E): asks for a file name and writes the current view.
    void exportCurrentViewInteractive();
    void showKeyboardShortcuts();
    void showAbout();

protected:
    void showEvent(QShowEvent *event) override;
    /// A large enlargement gives the side docks squeezed by a small window their default
    /// width back.
    void resizeEvent(QResizeEvent *event) override;
    /// Lets the window's own shortcuts (isWindowShortcut) win over a focused editor's
    /// ShortcutOverride (QLineEdit takes Ctrl+E as "end of line", Ctrl+K as "delete to end").
    bool eventFilter(QObject *watched, QEvent *event) override;
    /// Asks to save unsaved changes (Cancel keeps the window open), then saves the settings
    /// when restoreSettings was called.
    void closeEvent(QCloseEvent *event) override;

private:
    void createActions();
    void createMenus();
    void createDocks();
    void createStatusBar();
    void connectSession();
    void onResult(std::shared_ptr<const SessionResult> result);
    void onParametersChanged(const SessionParameters &params);
    void onComputeFailed(const QString &message);
    void onModeChanged(int index);
    /// Names the current export target in File → Export's text and status tip.
    void updateExportAction();
    /// The chart dock's chart holding the focus (nullptr when none).
    QWidget *focusedChart() const;
    /// Makes the restored geometry fit the screen it is on (size and position).
    void clampToScreen();
    QDockWidget *addDock(QWidget *widget, const QString &title, const QString &objectName,
                         Qt::DockWidgetArea area);

    AttentionSession *m_session = nullptr;
    ScalingSweepRunner *m_sweepRunner = nullptr;
    ControlPanel *m_controls = nullptr;
    QTabWidget *m_modes = nullptr;
    QByteArray m_attentionLayout; ///< dock state saved while the experiments fill the window
    HeatmapWidget *m_heatmap = nullptr;
    HeatmapViewPanel *m_viewPanel = nullptr;
    HeatmapActions *m_heatmapActions = nullptr;
    MaxWeightChart *m_maxWeightChart = nullptr;
    JacobianNormChart *m_jacobianChart = nullptr;
    RowMetricsChart *m_rowMetricsChart = nullptr;
    TimingChart *m_timingChart = nullptr;
    ExperimentsPanel *m_experiments = nullptr;
    AttentionViews *m_views = nullptr;
    QList<QDockWidget *> m_docks;
    QList<QWidget *> m_charts; ///< the chart docks' charts (exportable by File → Export)
    /// The default dock sizes for the current window size (resizeDocks).
    void applyDefaultDockSizes();
    bool m_initialSizes = true; ///< apply the default dock sizes when first shown
    QByteArray m_defaultLayout; ///< saveState() of a first start, before settings are restored
    QDockWidget *m_maxDock = nullptr;
    QDockWidget *m_jacobianDock = nullptr;
    QDockWidget *m_rowDock = nullptr;
    bool m_shortScreen = false; ///< the two sweep charts share a place as tabs
    QAction *m_resetLayoutAction = nullptr;

    SessionController *m_sessionController = nullptr;
    TensorController *m_tensors = nullptr;
    bool m_settingsRestored = false;
    bool m_clampOnShow = false; ///< restored geometry: fit the screen again when shown
    /// While File → Export's dialog is open the target stays what it was when triggered (the
    /// dialog takes the focus from a chart).
    bool m_exportTargetFrozen = false;
    ExportTarget m_frozenExportTarget = ExportTarget::Heads;
    QPointer<QWidget> m_frozenExportChart;
    QAction *m_nextHeadAction = nullptr;
    QAction *m_previousHeadAction = nullptr;
    QAction *m_exportAction = nullptr;
    QAction *m_quitAction = nullptr;
    QAction *m_recomputeAction = nullptr;
    QAction *m_nextSeedAction = nullptr;
    QAction *m_toggleScaleAction = nullptr;
    QAction *m_cycleMaskAction = nullptr;
    QAction *m_doubleDkAction = nullptr;
    QAction *m_halveDkAction = nullptr;
    QAction *m_runTimingAction = nullptr;
    QAction *m_cancelTimingAction = nullptr;
    QAction *m_showGridAction = nullptr;
    QAction *m_attentionModeAction = nullptr;
    QAction *m_experimentsModeAction = nullptr;
    QAction *m_fullScreenAction = nullptr;
    QAction *m_shortcutsAction = nullptr;
    QAction *m_whatsThisAction = nullptr;
    QAction *m_aboutAction = nullptr;
    QAction *m_aboutQtAction = nullptr;

    QLabel *m_dkStatus = nullptr;
    QLabel *m_scaleStatus = nullptr;
    QLabel *m_rowSumStatus = nullptr;
    QLabel *m_timeStatus = nullptr;
    QLabel *m_busyStatus = nullptr;
    QLabel *m_nonFiniteStatus = nullptr;
};

} // namespace attn
