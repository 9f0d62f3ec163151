#pragma once
// SessionController: the window's document side — File → Open/Save/Save As/Open Recent for
// .attnlab.json session files, Edit → Undo/Redo of parameter changes (QUndoStack), the
// unsaved-changes mark in the title (windowModified, from the undo stack's clean state), the
// quit prompt, and the last session in QSettings. MainWindow owns one and puts its actions in
// the menus; the control panel's edits reach the AttentionSession through editParameters().

#include "ui/document/sessionfile.h"

#include <QJsonObject>
#include <QObject>
#include <QString>

#include <functional>

class QAction;
class QSettings;
class QTimer;
class QUndoStack;
class QWidget;

namespace attn {

class AttentionSession;
class RecentFiles;
class TensorController;

class SessionController : public QObject
{
    Q_OBJECT
public:
    /// `window` parents the dialogs and gets the title ("name.attnlab.json[*]") and the
    /// windowModified flag.
    SessionController(AttentionSession *session, QWidget *window);
    ~SessionController() override;

    /// How the window's view state (SessionDocument::view) is read and applied.
    void setViewStateHandlers(std::function<QJsonObject()> get,
                              std::function<void(const QJsonObject &)> set);
    /// How the open model is read for a session (SessionDocument::model) and put back when one is
    /// opened; `set` returns a warning (a folder that is gone) shown like openWarning().
    void setModelHandlers(std::function<QJsonObject()> get,
                          std::function<QString(const QJsonObject &)> set);
    /// Loaded tensors are saved as their file (SessionDocument::tensors) and loaded again, through
    /// `tensors`, when a session is opened. Without it a session's tensors are not loaded.
    /// Tensor files opened through it join Open Recent, which opens them through it again.
    void setTensorController(TensorController *tensors);
    /// Every slider drag under `controls` becomes one undo command (drags merge through
    /// SetParametersCommand's merge key; a new press starts a new command).
    void trackSliderDrags(QWidget *controls);
    /// Until endEditGroup(), every editParameters() merges into one undo command (as a slider
    /// drag does): a Play animation is undone in one step. A new group starts a new command.
    void beginEditGroup(const QString &name);
    void endEditGroup();

    QUndoStack *undoStack() const { return m_undoStack; }
    RecentFiles *recentFiles() const { return m_recent; }
    QAction *openAction() const { return m_openAction; }
    QAction *saveAction() const { return m_saveAction; }
    QAction *saveAsAction() const { return m_saveAsAction; }
    QAction *undoAction() const { return m_undoAction; }
    QAction *redoAction() const { return m_redoAction; }

    /// The open session file (empty while untitled).
    QString filePath() const { return m_filePath; }
    /// True when the parameters differ from the last save/open (the undo stack is not clean)
    /// or the view state saved in session files (SessionDocument::view) does: the heads grid's
    /// options, the view transform and row strip, Compare B, the Tokens, Long, Steps and Play
    /// settings (viewStateChanged tells when to compare). The pages shown are saved but not
    /// compared: going to another page is not an edit.
    bool isModified() const;
    /// The current state as a document: parameters, view state, tensors, kept unknown keys.
    SessionDocument document() const;

    /// Opens `path` without any dialog. On failure returns false with `error` naming the file
    /// and the problem, and changes nothing (parameters, view, undo history, file name).
    /// When the session's tensor file cannot be loaded the rest is opened, with seeded random
    /// inputs, and openWarning() says why.
    bool openFile(const QString &path, QString *error);
    /// What the last open could not restore (empty when everything was).
    QString openWarning() const { return m_openWarning; }
    /// Saves to `path` atomically without any dialog; on success it becomes the current file
    /// and the state is clean. On failure the old file is untouched and `error` names it.
    bool saveFile(const QString &path, QString *error);

    /// Last parameters and view ("session/last") and the recent files from `settings`. The
    /// restored state is untitled and unmodified. Invalid or newer entries are ignored.
    void restoreSettings(const QSettings &settings);
    /// True when `settings` hold a last session for restoreSettings (false on a first start).
    static bool hasLastSession(const QSettings &settings);
    void saveSettings(QSettings &settings) const;
    /// When on, the recent-files list is written to QSettings() as soon as it changes.
    void setPersistRecentFiles(bool on) { m_persistRecent = on; }

public slots:
    /// The view state may have changed: it is compared with the one last saved or opened once
    /// the events in progress are handled, which marks the session modified, or clean again.
    void viewStateChanged();
    /// The view state as it is now becomes the saved one, unless it has been edited since the
    /// last save or open: the window calls it when a result has been shown, so that what the
    /// views derive from a result (B of Compare following A, a range chosen by the length) is
    /// not taken for an edit.
    void viewStateSettled();
    /// Applies an edit of the controls as an undoable command.
    void editParameters(const attn::SessionParameters &params);
    /// openFile with a message box naming the file and the problem on failure (asks to save
    /// unsaved changes first). Returns true when the file was opened.
    bool open(const QString &path);
    /// With unsaved changes asks Save / Discard / Cancel once, then asks for a file and opens it
    /// (no second question after the file dialog).
    void openInteractive();
    /// Saves to the current file (asks for one while untitled). Returns true when saved.
    bool save();
    /// Asks for a file name, then saves. Returns true when saved.
    bool saveAs();
    /// With unsaved changes asks Save / Discard / Cancel (Cancel is the default button and the
    /// Escape button); true when it is fine to go on.
    bool maybeSave();

signals:
    void filePathChanged(const QString &path);
    void modifiedChanged(bool modified);
    /// A short note for the status bar (opened, saved, tensors not loaded …).
    void statusMessage(const QString &text);

private:
    /// open() once the unsaved changes are dealt with: opens or says why not.
    bool openAsked(const QString &path);
    void apply(const SessionDocument &document);
    void setFilePath(const QString &path);
    void updateTitle();
    /// m_getView() without what the undo stack tracks (the Training tab's settings) and the
    /// pages shown.
    QJsonObject comparedView() const;
    /// Compares the view state with the saved one (viewStateChanged, deferred).
    void checkViewState();
    /// The view state now is the saved one (a save or an open).
    void resetViewState();
    /// Shows isModified() in the title and emits modifiedChanged when it changed.
    void showModified();
    QString dialogFolder() const;

    AttentionSession *m_session;
    QWidget *m_window;
    QUndoStack *m_undoStack;
    RecentFiles *m_recent;
    TensorController *m_tensors = nullptr;
    QString m_openWarning;
    std::function<QJsonObject()> m_getView;
    std::function<void(const QJsonObject &)> m_setView;
    std::function<QJsonObject()> m_getModel;
    std::function<QString(const QJsonObject &)> m_setModel;
    SessionDocument m_kept; ///< last opened/saved document: unknown keys, view keys, tensors
    QString m_filePath;
    QString m_dragKey; ///< merge key of the slider drag in progress (empty: none)
    int m_dragSerial = 0;
    bool m_persistRecent = false;
    QJsonObject m_savedView; ///< comparedView() at the last save, open or settled result
    bool m_viewModified = false;
    bool m_shownModified = false; ///< isModified() as last shown and signalled
    QTimer *m_viewCheck = nullptr;

    QAction *m_openAction = nullptr;
    QAction *m_saveAction = nullptr;
    QAction *m_saveAsAction = nullptr;
    QAction *m_undoAction = nullptr;
    QAction *m_redoAction = nullptr;
};

} // namespace attn
