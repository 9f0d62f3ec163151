#pragma once
// MainWindow: builds the centre (attention views | experiments), the docks and the
// controllers, and wires them to the session — nothing else. Its parts are their own classes:
// WindowLayout (geometry, docks), WindowMenus (actions, menus), ExportRouter (File → Export),
// StatusBarText, WindowShortcuts. Data flow: ControlPanel → AttentionSession (worker) →
// resultChanged → heatmaps, charts, status bar.

#include "ui/session/sessioncompute.h"

#include <QJsonObject>
#include <QList>
#include <QMainWindow>

#include <memory>

class QDockWidget;
class QSettings;
class QTabWidget;

namespace attn {

class AttentionSession;
class AttentionViews;
class ControlPanel;
class ExperimentsPanel;
class ExportRouter;
class HeatmapActions;
class HeatmapViewPanel;
class HeatmapWidget;
class JacobianNormChart;
class MaxWeightChart;
class RowMetricsChart;
class ScalingSweepRunner;
class SessionController;
class StatusBarText;
class TensorController;
class TrainingPanel;
class TimingChart;
class WindowLayout;
class WindowMenus;
class WindowShortcuts;

class MainWindow : public QMainWindow
{
    Q_OBJECT
public:
    explicit MainWindow(QWidget *parent = nullptr);
    ~MainWindow() override;

    AttentionSession *session() const { return m_session; }
    ControlPanel *controlPanel() const { return m_controls; }
    HeatmapWidget *heatmapWidget() const { return m_heatmap; }
    /// File → Export Heatmaps at Size/DPI / Each Head / Data and View → Zoom of the heatmaps.
    HeatmapActions *heatmapActions() const { return m_heatmapActions; }
    /// The centre's modes: 0 = attention view (heatmaps), 1 = experiments, 2 = training (both
    /// the whole window).
    QTabWidget *modeTabs() const { return m_modes; }
    /// The attention mode's tabs: Heads, Steps, Compare A/B (their actions are in the View menu).
    AttentionViews *attentionViews() const { return m_views; }
    /// The experiments panel (E1–E16), the second mode.
    ExperimentsPanel *experimentsPanel() const { return m_experiments; }
    /// The Training tab (two runs A/B trained live), the third mode.
    TrainingPanel *trainingPanel() const { return m_training; }
    /// Sessions, undo/redo of parameter changes and recent files (File and Edit menus).
    SessionController *sessionController() const { return m_sessionController; }
    /// File → Open Tensors…, Back to Random Inputs, Export Weights… and the Tensors dock.
    TensorController *tensorController() const { return m_tensors; }
    /// File → Export (Ctrl+E) of the view the user looks at.
    ExportRouter *exportRouter() const { return m_export; }
    /// The window's geometry and docks.
    WindowLayout *windowLayout() const { return m_layout; }
    /// Every action shortcut, Help → Keyboard Shortcuts, shortcuts over focused editors.
    WindowShortcuts *shortcuts() const { return m_shortcuts; }

    /// Opens a saved session (.attnlab.json); on failure a message box names the file and the
    /// problem and the current state is kept. Returns true when opened.
    bool openSession(const QString &path);
    /// What the window shows, for session files (keys in ui/document/sessionfile.h): "tabs"
    /// (AttentionViews::tabPath of the modes), the views' own state (AttentionViews::state) and
    /// "training" (TrainingSettings::toJson).
    QJsonObject viewState() const;
    /// Applies the keys present in `state`; unknown keys and values are ignored.
    void setViewState(const QJsonObject &state);
    /// Window geometry, dock layout, last parameters and view, recent files (QSettings).
    /// restoreSettings also makes the recent-files list persist as soon as it changes.
    void restoreSettings(QSettings &settings);
    void saveSettings(QSettings &settings) const;

    /// The parameters of the first screen of a first start (no saved session): a typed
    /// sentence of 10 tokens labels the axes of one large head, d_k = d_model = 256 and the
    /// scores unscaled (α = 0), so the softmax saturates and most rows put nearly all their
    /// weight on one key (mean max weight ≈ 0.83) — the problem of Vaswani et al. 2017, §3.2.1,
    /// one click ("Scale by 1/√d_k") away from its cure. The two "the" rows are equal:
    /// positional encoding is off.
    static SessionParameters firstLessonParameters();
    /// Shows firstLessonParameters() (not an undoable edit, the session stays unmodified) and
    /// says in the status bar what to try.
    void showFirstLesson();
    /// Next/previous head: grid → head 0 → … → head h−1 → mean → grid (step = +1 or −1).
    void stepHead(int step);

    /// WindowLayout::sizeHint: 1500 × 950, at most 90 % of the screen's available geometry.
    QSize sizeHint() const override;

public slots:
    /// View → Reset Layout: every dock back where a first start puts it (shown, tabbed, sized),
    /// the window back to its first-start size, out of full screen, in the attention mode.
    void resetLayout();

protected:
    void showEvent(QShowEvent *event) override;
    void resizeEvent(QResizeEvent *event) override;
    /// Asks to save unsaved changes (Cancel keeps the window open), then saves the settings
    /// when restoreSettings was called.
    void closeEvent(QCloseEvent *event) override;

private:
    /// A live chart of the right column and its dock.
    struct ChartDock
    {
        QWidget *chart;
        QString title;
        QString objectName;
        QDockWidget *dock = nullptr;
    };
    void createDocks();
    void createControllers();
    void connectSession();
    void onResult(std::shared_ptr<const SessionResult> result);
    void onParametersChanged(const SessionParameters &params);
    void onComputeFailed(const QString &message);

    AttentionSession *m_session = nullptr;
    ScalingSweepRunner *m_sweepRunner = nullptr;
    ControlPanel *m_controls = nullptr;
    QTabWidget *m_modes = nullptr;
    HeatmapWidget *m_heatmap = nullptr;
    HeatmapViewPanel *m_viewPanel = nullptr;
    HeatmapActions *m_heatmapActions = nullptr;
    MaxWeightChart *m_maxWeightChart = nullptr;
    JacobianNormChart *m_jacobianChart = nullptr;
    RowMetricsChart *m_rowMetricsChart = nullptr;
    TimingChart *m_timingChart = nullptr;
    QList<ChartDock> m_charts; ///< the chart docks (exportable by File → Export)
    ExperimentsPanel *m_experiments = nullptr;
    TrainingPanel *m_training = nullptr;
    AttentionViews *m_views = nullptr;
    SessionController *m_sessionController = nullptr;
    TensorController *m_tensors = nullptr;
    WindowLayout *m_layout = nullptr;
    WindowMenus *m_menus = nullptr;
    ExportRouter *m_export = nullptr;
    StatusBarText *m_status = nullptr;
    WindowShortcuts *m_shortcuts = nullptr;
    bool m_settingsRestored = false;
};

} // namespace attn
