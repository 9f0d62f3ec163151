#include "ui/window/sessioncontroller.h"

#include "ui/document/parameterundo.h"
#include "ui/session/attentionsession.h"
#include "ui/session/tensorsource.h"
#include "ui/window/filedrop.h"
#include "ui/window/recentfiles.h"
#include "ui/window/tensorcontroller.h"

#include <QAbstractSlider>
#include <QAction>
#include <QDir>
#include <QFileDialog>
#include <QFileInfo>
#include <QIcon>
#include <QKeySequence>
#include <QMessageBox>
#include <QScrollBar>
#include <QSettings>
#include <QStandardPaths>
#include <QTimer>
#include <QUndoStack>
#include <QWidget>

namespace attn {

namespace {

const QString lastSessionKey = QStringLiteral("session/last");

/// `over` merged into `base`: keys of `over` win, nested objects are merged key by key, so keys
/// only `base` has (written by a newer version) survive.
QJsonObject merged(QJsonObject base, const QJsonObject &over)
{
    for (auto it = over.begin(); it != over.end(); ++it) {
        const QJsonValue old = base.value(it.key());
        if (old.isObject() && it.value().isObject())
            base.insert(it.key(), merged(old.toObject(), it.value().toObject()));
        else
            base.insert(it.key(), it.value());
    }
    return base;
}

/// SessionDocument::tensors for the tensors `p` shows (empty for seeded random inputs and for a
/// model's run, which the "model" key stores).
QJsonObject tensorsToJson(const SessionParameters &p)
{
    QJsonObject o;
    if (!p.tensors || p.tensors->isModelRun())
        return o;
    o.insert(QStringLiteral("file"), p.tensors->path());
    if (!p.tensors->arrayName().isEmpty())
        o.insert(QStringLiteral("array"), p.tensors->arrayName());
    o.insert(QStringLiteral("mask_convention"),
             p.tensors->maskConvention() == MaskConvention::Allowed ? QStringLiteral("allowed")
                                                                    : QStringLiteral("masked"));
    if (p.tensors->isWeights())
        o.insert(QStringLiteral("layer"), p.tensors->layer());
    if (p.tensors->batchCount() > 0)
        o.insert(QStringLiteral("batch"), p.tensors->batch());
    return o;
}

void setStandardShortcut(QAction *action, QKeySequence::StandardKey key, const QString &fallback)
{
    action->setShortcuts(key);
    if (action->shortcut().isEmpty())
        action->setShortcut(QKeySequence(fallback));
}

} // namespace

SessionController::SessionController(AttentionSession *session, QWidget *window)
    : QObject(window)
    , m_session(session)
    , m_window(window)
    , m_undoStack(new QUndoStack(this))
    , m_recent(new RecentFiles(this))
{
    m_undoStack->setUndoLimit(500);

    m_openAction = new QAction(tr("&Open Session…"), this);
    m_openAction->setObjectName(QStringLiteral("openSessionAction"));
    setStandardShortcut(m_openAction, QKeySequence::Open, QStringLiteral("Ctrl+O"));
    m_openAction->setIcon(QIcon::fromTheme(QStringLiteral("document-open")));
    m_openAction->setStatusTip(tr("Open a saved session (.attnlab.json): parameters, seed, "
                                  "tokens and view"));
    connect(m_openAction, &QAction::triggered, this, &SessionController::openInteractive);

    m_saveAction = new QAction(tr("&Save Session"), this);
    m_saveAction->setObjectName(QStringLiteral("saveSessionAction"));
    setStandardShortcut(m_saveAction, QKeySequence::Save, QStringLiteral("Ctrl+S"));
    m_saveAction->setIcon(QIcon::fromTheme(QStringLiteral("document-save")));
    m_saveAction->setStatusTip(tr("Save the parameters, seed, tokens and view to the session "
                                  "file"));
    connect(m_saveAction, &QAction::triggered, this, &SessionController::save);

    m_saveAsAction = new QAction(tr("Save Session &As…"), this);
    m_saveAsAction->setObjectName(QStringLiteral("saveSessionAsAction"));
    setStandardShortcut(m_saveAsAction, QKeySequence::SaveAs, QStringLiteral("Ctrl+Shift+S"));
    m_saveAsAction->setIcon(QIcon::fromTheme(QStringLiteral("document-save-as")));
    m_saveAsAction->setStatusTip(tr("Save the session to a new .attnlab.json file"));
    connect(m_saveAsAction, &QAction::triggered, this, &SessionController::saveAs);

    m_undoAction = m_undoStack->createUndoAction(this, tr("&Undo"));
    m_undoAction->setObjectName(QStringLiteral("undoAction"));
    setStandardShortcut(m_undoAction, QKeySequence::Undo, QStringLiteral("Ctrl+Z"));
    m_undoAction->setIcon(QIcon::fromTheme(QStringLiteral("edit-undo")));
    m_undoAction->setStatusTip(tr("Undo the last parameter change"));
    m_redoAction = m_undoStack->createRedoAction(this, tr("&Redo"));
    m_redoAction->setObjectName(QStringLiteral("redoAction"));
    {
        // Both common bindings on every platform: Ctrl+Shift+Z (listed first) and Ctrl+Y.
        QList<QKeySequence> redo {QKeySequence(Qt::CTRL | Qt::SHIFT | Qt::Key_Z),
                                  QKeySequence(Qt::CTRL | Qt::Key_Y)};
        for (const QKeySequence &k : QKeySequence::keyBindings(QKeySequence::Redo)) {
            if (!redo.contains(k))
                redo.append(k);
        }
        m_redoAction->setShortcuts(redo);
    }
    m_redoAction->setIcon(QIcon::fromTheme(QStringLiteral("edit-redo")));
    m_redoAction->setStatusTip(tr("Redo the parameter change just undone"));

    connect(m_undoStack, &QUndoStack::cleanChanged, this, &SessionController::showModified);
    // After the events in progress: a view's change is often several (a combo box and the
    // widget it sets), and what a result changes in the views is settled first.
    m_viewCheck = new QTimer(this);
    m_viewCheck->setSingleShot(true);
    m_viewCheck->setInterval(0);
    connect(m_viewCheck, &QTimer::timeout, this, &SessionController::checkViewState);
    // Open Recent lists sessions and tensor files (.npy, .npz), each opened as File → Open
    // or File → Open Tensors… opens it.
    connect(m_recent, &RecentFiles::openRequested, this, [this](const QString &path) {
        if (m_tensors && droppedFileKind(path) == DroppedFileKind::Tensors) {
            if (!m_tensors->open(path) && !QFileInfo::exists(path))
                m_recent->remove(path);
        } else {
            open(path);
        }
    });
    connect(m_recent, &RecentFiles::changed, this, [this] {
        if (m_persistRecent) {
            QSettings settings;
            m_recent->save(settings);
        }
    });
    updateTitle();
}

SessionController::~SessionController() = default;

void SessionController::setTensorController(TensorController *tensors)
{
    m_tensors = tensors;
    connect(tensors, &TensorController::opened, m_recent, &RecentFiles::add);
}

void SessionController::setViewStateHandlers(std::function<QJsonObject()> get,
                                             std::function<void(const QJsonObject &)> set)
{
    m_getView = std::move(get);
    m_setView = std::move(set);
}

void SessionController::setModelHandlers(std::function<QJsonObject()> get,
                                         std::function<QString(const QJsonObject &)> set)
{
    m_getModel = std::move(get);
    m_setModel = std::move(set);
}

void SessionController::trackSliderDrags(QWidget *controls)
{
    for (QAbstractSlider *slider : controls->findChildren<QAbstractSlider *>()) {
        if (qobject_cast<QScrollBar *>(slider))
            continue;
        connect(slider, &QAbstractSlider::sliderPressed, this, [this, slider] {
            m_dragKey = QStringLiteral("%1#%2").arg(slider->objectName()).arg(++m_dragSerial);
        });
        connect(slider, &QAbstractSlider::sliderReleased, this, [this] { m_dragKey.clear(); });
    }
}

void SessionController::beginEditGroup(const QString &name)
{
    m_dragKey = QStringLiteral("%1#%2").arg(name).arg(++m_dragSerial);
}

void SessionController::endEditGroup()
{
    m_dragKey.clear();
}

bool SessionController::isModified() const
{
    return !m_undoStack->isClean() || m_viewModified;
}

void SessionController::viewStateChanged()
{
    if (m_getView)
        m_viewCheck->start();
}

QJsonObject SessionController::comparedView() const
{
    QJsonObject view = m_getView ? m_getView() : QJsonObject();
    // The Training tab's settings are saved too, but each edit of them is an undo step. The
    // pages shown are saved so that a session opens where it was left; going to another page
    // is moving about, not an edit.
    view.remove(QStringLiteral("training"));
    view.remove(QStringLiteral("tabs"));
    return view;
}

void SessionController::viewStateSettled()
{
    if (!m_getView || m_viewModified)
        return;
    m_savedView = comparedView();
}

void SessionController::checkViewState()
{
    if (!m_getView)
        return;
    m_viewModified = comparedView() != m_savedView;
    showModified();
}

void SessionController::resetViewState()
{
    m_viewCheck->stop();
    m_savedView = comparedView();
    m_viewModified = false;
    showModified();
}

void SessionController::showModified()
{
    const bool modified = isModified();
    m_window->setWindowModified(modified);
    if (modified != m_shownModified) {
        m_shownModified = modified;
        emit modifiedChanged(modified);
    }
}

SessionDocument SessionController::document() const
{
    SessionDocument d = m_kept;
    d.parameters = m_session->parameters();
    d.parameters.tensors = nullptr; // stored as "tensors" (their file), not as parameters
    const QJsonObject tensors = tensorsToJson(m_session->parameters());
    d.tensors = tensors.isEmpty() ? QJsonObject() : merged(m_kept.tensors, tensors);
    if (m_getView)
        d.view = merged(d.view, m_getView());
    d.model = m_getModel ? m_getModel() : QJsonObject();
    // Under stored tensors or a model the parameters are the source's shape: the random inputs'
    // own are kept beside them.
    d.randomInputs.reset();
    if (m_tensors && m_session->parameters().tensors)
        d.randomInputs = m_tensors->randomParameters();
    return d;
}

void SessionController::editParameters(const SessionParameters &params)
{
    const SessionParameters before = m_session->parameters();
    if (params == before) {
        m_session->setParameters(params); // computes when nothing is shown yet
        return;
    }
    m_undoStack->push(new SetParametersCommand(m_session, before, params, m_dragKey));
}

void SessionController::apply(const SessionDocument &document)
{
    m_openWarning.clear();
    const QString tensorFile = document.tensors.value(QLatin1String("file")).toString();
    // With tensors or a model the saved parameters are their shape; until (unless) they load, the
    // window shows the random inputs' own, which Back to Random Inputs then restores.
    const bool storedSource = !tensorFile.isEmpty() || !document.model.isEmpty();
    if (storedSource && document.randomInputs && document.randomInputs->validate().isEmpty()) {
        m_session->setParameters(*document.randomInputs);
        if (m_tensors)
            m_tensors->setRandomParameters(*document.randomInputs);
    } else {
        m_session->setParameters(document.parameters);
    }
    if (!tensorFile.isEmpty()) {
        // Load the file as File → Open Tensors… does, then put back what was shown with it.
        QString error;
        const QString array = document.tensors.value(QLatin1String("array")).toString();
        const MaskConvention convention
            = document.tensors.value(QLatin1String("mask_convention")).toString()
                == QLatin1String("allowed")
            ? MaskConvention::Allowed
            : MaskConvention::Masked;
        if (!m_tensors) {
            m_openWarning = tr("The session's tensors (%1) were not loaded: this window cannot "
                               "load tensors.")
                                .arg(QDir::toNativeSeparators(tensorFile));
        } else if (!m_tensors->openFile(tensorFile, &error, array, convention)) {
            m_openWarning = tr("The session's tensors were not loaded, so the heatmaps show "
                               "seeded random inputs: %1")
                                .arg(error);
        } else {
            const int layer = document.tensors.value(QLatin1String("layer")).toInt(0);
            if (layer > 0)
                m_tensors->setLayer(layer);
            SessionParameters saved = document.parameters;
            saved.tensors = m_session->parameters().tensors;
            if (saved.validate().isEmpty())
                m_session->setParameters(saved); // α, τ, mask, tokens … as they were saved
        }
    }
    if (m_setView)
        m_setView(document.view);
    if (m_setModel) {
        const QString warning = m_setModel(document.model);
        if (!warning.isEmpty())
            m_openWarning
                = m_openWarning.isEmpty() ? warning : m_openWarning + QLatin1Char(' ') + warning;
    }
    if (!document.unknownKeys.isEmpty()) {
        const QString unknown
            = tr("The session file has keys this version does not know, so they change "
                 "nothing: %1.")
                  .arg(document.unknownKeys.join(QStringLiteral(", ")));
        m_openWarning
            = m_openWarning.isEmpty() ? unknown : m_openWarning + QLatin1Char(' ') + unknown;
    }
    m_kept = document;
    m_undoStack->clear(); // a new document: no history, clean
    resetViewState();
    if (!m_openWarning.isEmpty())
        emit statusMessage(m_openWarning);
}

bool SessionController::openFile(const QString &path, QString *error)
{
    const auto document = SessionFile::load(path, error);
    if (!document)
        return false;
    apply(*document);
    setFilePath(QFileInfo(path).absoluteFilePath());
    m_recent->add(path);
    return true;
}

bool SessionController::saveFile(const QString &path, QString *error)
{
    const SessionDocument d = document();
    if (!SessionFile::save(path, d, error))
        return false;
    m_kept = d;
    setFilePath(QFileInfo(path).absoluteFilePath());
    m_undoStack->setClean();
    resetViewState();
    m_recent->add(path);
    return true;
}

void SessionController::restoreSettings(const QSettings &settings)
{
    m_recent->load(settings);
    const QString last = settings.value(lastSessionKey).toString();
    if (last.isEmpty())
        return;
    if (const auto document = SessionFile::fromJson(last.toUtf8(), nullptr)) {
        apply(*document);
        setFilePath(QString());
    }
}

bool SessionController::hasLastSession(const QSettings &settings)
{
    return !settings.value(lastSessionKey).toString().isEmpty();
}

void SessionController::saveSettings(QSettings &settings) const
{
    settings.setValue(lastSessionKey, QString::fromUtf8(SessionFile::toJson(document())));
    m_recent->save(settings);
}

bool SessionController::open(const QString &path)
{
    return maybeSave() && openAsked(path);
}

bool SessionController::openAsked(const QString &path)
{
    QString error;
    if (!openFile(path, &error)) {
        QMessageBox box(
            QMessageBox::Warning, tr("Open Session"),
            tr("The session file “%1” could not be opened.").arg(QFileInfo(path).fileName()),
            QMessageBox::Ok, m_window);
        box.setObjectName(QStringLiteral("openSessionError"));
        box.setInformativeText(
            tr("%1\n\nThe current parameters and view are unchanged.").arg(error));
        box.exec();
        if (!QFileInfo::exists(path))
            m_recent->remove(path);
        emit statusMessage(tr("Not opened: %1").arg(error));
        return false;
    }
    if (!m_openWarning.isEmpty()) {
        QMessageBox::warning(
            m_window, tr("Open Session"),
            tr("%1\n\nThe other settings of the session were opened.").arg(m_openWarning));
        return true;
    }
    emit statusMessage(tr("Opened %1").arg(QDir::toNativeSeparators(m_filePath)));
    return true;
}

QString SessionController::dialogFolder() const
{
    if (!m_filePath.isEmpty())
        return QFileInfo(m_filePath).absolutePath();
    if (!m_recent->files().isEmpty())
        return QFileInfo(m_recent->files().constFirst()).absolutePath();
    const QString documents = QStandardPaths::writableLocation(QStandardPaths::DocumentsLocation);
    return !documents.isEmpty() && QDir(documents).exists() ? documents : QDir::currentPath();
}

void SessionController::openInteractive()
{
    if (!maybeSave())
        return;
    const QString path = QFileDialog::getOpenFileName(
        m_window, tr("Open Session"), dialogFolder(),
        tr("Attention Lab sessions (*.attnlab.json);;JSON files (*.json);;All files (*)"));
    if (!path.isEmpty())
        openAsked(path); // the unsaved changes were dealt with before the dialog
}

bool SessionController::save()
{
    if (m_filePath.isEmpty())
        return saveAs();
    QString error;
    if (!saveFile(m_filePath, &error)) {
        QMessageBox::warning(m_window, tr("Save Session"),
                             tr("%1\n\nThe previous file, if any, is unchanged.").arg(error));
        return false;
    }
    emit statusMessage(tr("Saved %1").arg(QDir::toNativeSeparators(m_filePath)));
    return true;
}

bool SessionController::saveAs()
{
    const QString suggested = m_filePath.isEmpty()
        ? QDir(dialogFolder())
              .filePath(QStringLiteral("session") + QLatin1String(SessionFile::suffix))
        : m_filePath;
    QString path = QFileDialog::getSaveFileName(
        m_window, tr("Save Session As"), suggested,
        tr("Attention Lab sessions (*.attnlab.json);;JSON files (*.json)"));
    if (path.isEmpty())
        return false;
    path = SessionFile::withSuffix(path);
    QString error;
    if (!saveFile(path, &error)) {
        QMessageBox::warning(m_window, tr("Save Session"),
                             tr("%1\n\nThe previous file, if any, is unchanged.").arg(error));
        return false;
    }
    emit statusMessage(tr("Saved %1").arg(QDir::toNativeSeparators(m_filePath)));
    return true;
}

bool SessionController::maybeSave()
{
    if (!isModified())
        return true;
    const QString name = m_filePath.isEmpty() ? tr("Untitled") : QFileInfo(m_filePath).fileName();
    QMessageBox box(QMessageBox::Warning, tr("Unsaved Changes"),
                    tr("Save the changes to the session “%1”?").arg(name),
                    QMessageBox::Save | QMessageBox::Discard | QMessageBox::Cancel, m_window);
    box.setObjectName(QStringLiteral("unsavedChangesPrompt"));
    box.setInformativeText(
        tr("The parameter and view changes since the last save are lost otherwise."));
    // Enter and Escape keep everything as it is: Save would overwrite the old session file.
    box.setDefaultButton(QMessageBox::Cancel);
    box.setEscapeButton(QMessageBox::Cancel);
    switch (box.exec()) {
    case QMessageBox::Save:
        return save();
    case QMessageBox::Discard:
        return true;
    default:
        return false;
    }
}

void SessionController::setFilePath(const QString &path)
{
    if (path != m_filePath) {
        m_filePath = path;
        emit filePathChanged(path);
    }
    updateTitle();
}

void SessionController::updateTitle()
{
    const QString name = m_filePath.isEmpty() ? tr("Untitled") : QFileInfo(m_filePath).fileName();
    m_window->setWindowTitle(QStringLiteral("%1[*]").arg(name));
    m_window->setWindowFilePath(m_filePath);
    m_window->setWindowModified(isModified());
}

} // namespace attn
