#pragma once
// MainWindow: builds the centre (attention views | experiments), the docks and the
// controllers, and wires them to the session — nothing else. Its parts are their own classes:
// WindowLayout (geometry, docks), WindowMenus (actions, menus), ExportRouter (File → Export),
// StatusBarText, WindowShortcuts, ChartDocks (the right column). Data flow: ControlPanel →
// AttentionSession (worker) → resultChanged → heatmaps, charts, status bar.

#include "ui/session/sessioncompute.h"

#include <QJsonObject>
#include <QList>
#include <QMainWindow>

#include <memory>

class QSettings;
class QTabWidget;

namespace attn {

class AttentionSession;
class AttentionViews;
class ChartDocks;
class ControlPanel;
class ExperimentsPanel;
class ExportRouter;
class HeatmapActions;
class HeatmapViewPanel;
class HeatmapWidget;
class ModelController;
class SessionController;
class StatusBarText;
class TensorController;
class TrainingPanel;
class Tour;
class PlayPanel;
class PresentationMode;
class WindowLayout;
class WindowMenus;
class WindowShortcuts;

class MainWindow : public QMainWindow
{
    Q_OBJECT
public:
    explicit MainWindow(QWidget *parent = nullptr);
    ~MainWindow() override;

    // The window's parts (for the app, the benchmark and the tests).
    AttentionSession *session() const { return m_session; }
    ControlPanel *controlPanel() const { return m_controls; }
    HeatmapWidget *heatmapWidget() const { return m_heatmap; }
    HeatmapActions *heatmapActions() const { return m_heatmapActions; } ///< export, zoom
    QTabWidget *modeTabs() const
    {
        return m_modes;
    } ///< 0 = attention, 1 = experiments, 2 = training
    AttentionViews *attentionViews() const { return m_views; } ///< Heads, Steps, Compare A/B
    ExperimentsPanel *experimentsPanel() const { return m_experiments; } ///< E1–E20
    TrainingPanel *trainingPanel() const { return m_training; } ///< runs A/B trained live
    PlayPanel *playPanel() const { return m_play; } ///< animates d_k, α or τ
    SessionController *sessionController() const { return m_sessionController; } ///< files, undo
    TensorController *tensorController() const { return m_tensors; } ///< File → Open Tensors…
    ModelController *modelController() const { return m_models; } ///< File → Open Model…
    ExportRouter *exportRouter() const { return m_export; } ///< File → Export (Ctrl+E)
    WindowLayout *windowLayout() const { return m_layout; } ///< geometry and docks
    WindowShortcuts *shortcuts() const { return m_shortcuts; } ///< Help → Keyboard Shortcuts
    Tour *tour() const { return m_tour; } ///< Help → Guided Tour (never started by itself)
    /// View → Presentation Mode (Ctrl+Shift+P, Esc leaves): the current view fills the window.
    PresentationMode *presentationMode() const { return m_presentation; }

    /// Opens a saved session (.attnlab.json); on failure a message box names the file and the
    /// problem and the current state is kept. Returns true when opened.
    bool openSession(const QString &path);
    /// What the window shows, for session files (keys in ui/document/sessionfile.h): "tabs"
    /// (AttentionViews::tabPath of the modes), the views' own state (AttentionViews::state) and
    /// "training" (TrainingSettings::toJson).
    QJsonObject viewState() const;
    /// Applies the keys present in `state`; unknown keys and values are ignored.
    void setViewState(const QJsonObject &state);
    /// Window geometry, dock layout, last parameters and view, recent files, the Play dock's
    /// frame size (QSettings).
    /// restoreSettings also makes the recent-files list persist as soon as it changes.
    void restoreSettings(QSettings &settings);
    void saveSettings(QSettings &settings) const;

    /// The first screen of a first start: the 10 tokens of a sentence, one head, d_k = 256,
    /// unscaled (α = 0), so most rows put nearly all their weight on one key (Vaswani et al.
    /// 2017, §3.2.1) — one click ("Scale by 1/√d_k") away from its cure.
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
    /// the window back to its first-start size, out of full screen and presentation mode, in
    /// the attention mode.
    void resetLayout();

protected:
    void showEvent(QShowEvent *event) override;
    void resizeEvent(QResizeEvent *event) override;
    /// Asks to save unsaved changes (Cancel keeps the window open), then saves the settings
    /// when restoreSettings was called.
    void closeEvent(QCloseEvent *event) override;

private:
    void createDocks();
    void createControllers();
    void connectSession();
    void onResult(std::shared_ptr<const SessionResult> result);
    void onParametersChanged(const SessionParameters &params);
    void onComputeFailed(const QString &message);
    /// How the status bar's message of a refused computation starts ("Not computed: ").
    static QString notComputedPrefix() { return tr("Not computed: "); }

    AttentionSession *m_session = nullptr;
    ControlPanel *m_controls = nullptr;
    QTabWidget *m_modes = nullptr;
    HeatmapWidget *m_heatmap = nullptr;
    HeatmapViewPanel *m_viewPanel = nullptr;
    HeatmapActions *m_heatmapActions = nullptr;
    ChartDocks *m_charts = nullptr; ///< the right column's live charts
    ExperimentsPanel *m_experiments = nullptr;
    TrainingPanel *m_training = nullptr;
    PlayPanel *m_play = nullptr;
    AttentionViews *m_views = nullptr;
    SessionController *m_sessionController = nullptr;
    TensorController *m_tensors = nullptr;
    ModelController *m_models = nullptr;
    WindowLayout *m_layout = nullptr;
    WindowMenus *m_menus = nullptr;
    ExportRouter *m_export = nullptr;
    StatusBarText *m_status = nullptr;
    WindowShortcuts *m_shortcuts = nullptr;
    Tour *m_tour = nullptr;
    PresentationMode *m_presentation = nullptr;
    bool m_settingsRestored = false;
};

} // namespace attn
