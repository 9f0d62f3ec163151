#pragma once
// MainWindow: menus, docks, actions, the status bar and the wiring between the session and the
// panels — nothing else (each panel and chart is its own class). Data flow:
// ControlPanel → AttentionSession (worker) → resultChanged → heatmaps, charts, status bar.

#include "sessioncompute.h"

#include <QByteArray>
#include <QJsonObject>
#include <QMainWindow>
#include <QSize>

#include <functional>
#include <memory>

class QAction;
class QCloseEvent;
class QSettings;
class QDockWidget;
class QLabel;
class QTabWidget;

namespace attn {

class AttentionSession;
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
    /// File → Export View / Each Head / Data and View → Zoom actions of the heatmaps.
    HeatmapActions *heatmapActions() const { return m_heatmapActions; }
    MaxWeightChart *maxWeightChart() const { return m_maxWeightChart; }
    JacobianNormChart *jacobianNormChart() const { return m_jacobianChart; }
    RowMetricsChart *rowMetricsChart() const { return m_rowMetricsChart; }
    TimingChart *timingChart() const { return m_timingChart; }
    /// The experiments panel (E1–E12), a tab of the right column.
    ExperimentsPanel *experimentsPanel() const { return m_experiments; }
    ScalingSweepRunner *scalingSweepRunner() const { return m_sweepRunner; }
    QAction *exportAction() const { return m_exportAction; }
    /// The centre's modes: 0 = attention view (heatmaps), 1 = experiments (whole window).
    QTabWidget *modeTabs() const { return m_modes; }

    /// Writes the heatmap grid of the current result (every head plus the mean, with colourbar
    /// and caption) to `path`; PNG, SVG or PDF by suffix. `size` in logical pixels (PDF:
    /// points), PNG rendered at `dpr` device pixels per logical pixel. Returns false with
    /// `error` naming the problem (no result yet, unknown suffix, write failure).
    bool exportHeatmapGrid(const QString &path, QSize size, qreal dpr, QString *error) const;
    /// Size of a File → Export: the heatmap's on-screen size (at least 800 × 500).
    QSize defaultExportSize() const;

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

    QSize sizeHint() const override { return {1500, 950}; }

public slots:
    /// File → Export heatmap grid: asks for a file name (PNG/SVG/PDF) and writes it.
    void exportHeatmapGridInteractive();
    void showKeyboardShortcuts();
    void showAbout();

protected:
    void showEvent(QShowEvent *event) override;
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
    QList<QDockWidget *> m_docks;
    std::function<void()> m_initialSizes; ///< the default dock sizes, applied once resized

    SessionController *m_sessionController = nullptr;
    TensorController *m_tensors = nullptr;
    bool m_settingsRestored = false;
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
