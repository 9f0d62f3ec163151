#pragma once
// ModelController: File → Open Model…, File → Open Built-in or Cached Model (the built-in model
// first, then the models of the Hugging Face hub cache, core/models/modelfolder.h), File → Recent
// Models, and the "Model" dock (ModelPanel). Opening reads the folder's config.json, maps its
// safetensors weights and loads its tokenizer on a worker; a folder that cannot be used (not a
// model, an unsupported family or dtype, GGUF or pickle weights) is refused with core's message and
// nothing else changes. Run tokenizes the typed text (or reads token ids), runs the forward pass on
// a worker with progress and Cancel, and shows the attention through TensorController::showSource
// (Model, Heads, Steps and Tokens views, token labels = the pieces) and the next-token readout in
// the dock. Sessions store the folder and the text (sessionState / restoreSessionState).

#include "ui/panels/modelpanel.h"
#include "ui/session/modelrun.h"

#include "core/models/modelfolder.h"

#include <QJsonObject>
#include <QObject>
#include <QPointer>
#include <QString>

#include <memory>
#include <vector>

class QAction;
class QDockWidget;
class QMenu;
class QSettings;
class QWidget;

namespace attn {

class JobRunner;
class RecentFiles;
class TensorController;

class ModelController : public QObject
{
    Q_OBJECT
public:
    static constexpr int kTopK = 10; ///< rows of the next-token readout

    /// `tensors` shows the runs; `window` parents the dialogs. Creates the panel (not yet in a
    /// dock).
    ModelController(TensorController *tensors, QWidget *window);
    ~ModelController() override;

    /// The dock holding panel(): raised when a model is opened.
    void setDock(QDockWidget *dock);
    ModelPanel *panel() const { return m_panel; }
    QAction *openAction() const { return m_openAction; }
    /// File → Open Built-in or Cached Model: the built-in model, then the Hugging Face cache's
    /// models; rebuilt each time it is shown.
    QMenu *cacheMenu() const { return m_cacheMenu; }
    RecentFiles *recentModels() const { return m_recent; }

    /// Bytes the whole attention stack of a run may take (default attentionStackBudget());
    /// beyond it each layer is computed when shown (ModelRun::onDemand). For tests.
    void setStackBudget(std::uint64_t bytes) { m_stackBudget = bytes; }

    /// The hub cache listed (default models::huggingFaceHubDir()); for tests.
    void setHubFolder(const QString &folder);
    QString hubFolder() const;
    /// The built-in model's folder (models::builtinModelFolder next to this executable, else the
    /// source tree's); empty when it is not there.
    static QString builtinFolder();
    /// The cache's models as the menu lists them.
    std::vector<models::CachedModel> cachedModels() const;

    /// The open model (nullptr: none).
    std::shared_ptr<const OpenedModel> model() const { return m_model; }
    /// The last finished run (nullptr: none since the model was opened).
    std::shared_ptr<const ModelRun> lastRun() const { return m_run; }

    /// Opens `folder` without message boxes (on a worker, waiting without user input). Returns
    /// false with `error` (core's message naming the file and the problem); the open model, the
    /// session and the views are then unchanged.
    bool openFolder(const QString &folder, QString *error);
    /// The input text (or ids) without running.
    void setText(const QString &text, bool ids = false);
    QString text() const;
    /// Starts the forward pass on the current input; false with `error` (shown in the panel)
    /// when there is no model or the input is refused. The result arrives later (runFinished).
    bool run(QString *error = nullptr);
    bool isRunning() const;
    /// Waits for the running forward pass (tests).
    void waitForRun();

    /// {"folder", "text", "ids", "shown", "layer"} of the open model (empty without one).
    QJsonObject sessionState() const;
    /// Opens the model of a session's state and puts its text back; runs it when it was shown
    /// (straight into the session, not an undo step). Returns a warning naming the folder when
    /// it is gone or cannot be opened (empty when all went well or the state is empty).
    QString restoreSessionState(const QJsonObject &state);

    void restoreSettings(const QSettings &settings);
    void saveSettings(QSettings &settings) const;
    /// When on, the recent models are written to QSettings() as soon as they change.
    void setPersistRecentModels(bool on) { m_persistRecent = on; }

public slots:
    /// openFolder with a message box naming the folder and the problem on failure.
    bool open(const QString &folder);
    /// Asks for a folder, then open().
    void openInteractive();
    /// Cancels the running forward pass; the views keep what they show.
    void cancel();

signals:
    void modelOpened(const QString &name);
    /// A run is shown; `firstOfModel` for the first one after File → Open Model… (not for a
    /// session being opened), when the window turns to the Model tab.
    void runFinished(bool firstOfModel);
    /// A run failed or was refused: the message.
    void runFailed(const QString &message);
    void statusMessage(const QString &text);

private:
    void deliver(const std::shared_ptr<const ModelRun> &run);
    void updateStrip();
    void rebuildCacheMenu();

    TensorController *m_tensors;
    QWidget *m_window;
    QPointer<ModelPanel> m_panel; ///< owned by the dock once in one
    QPointer<QDockWidget> m_dock;
    JobRunner *m_jobs;
    QAction *m_openAction = nullptr;
    QMenu *m_cacheMenu = nullptr;
    RecentFiles *m_recent = nullptr;
    QString m_hubFolder;
    std::uint64_t m_stackBudget = 0; ///< 0: attentionStackBudget()
    std::shared_ptr<const OpenedModel> m_model;
    std::shared_ptr<const ModelRun> m_run;
    bool m_firstRun = false; ///< no run of the open model was shown yet
    bool m_quietRun = false; ///< the running pass restores a session: not an undo step
    int m_restoreLayer = 0; ///< the layer to show when that pass arrives
    bool m_runPools = false; ///< the running pass also pools thumbnails (ModelRun::onDemand)
    bool m_persistRecent = false;
    QString m_lastFolder;
};

} // namespace attn
