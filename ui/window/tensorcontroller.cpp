#include "ui/window/tensorcontroller.h"

#include "ui/export/weightsexport.h"
#include "ui/panels/tensorpanel.h"
#include "ui/session/attentionsession.h"
#include "ui/session/jobrunner.h"
#include "ui/session/tokenizer.h"
#include "ui/views/figureexport.h"
#include "ui/views/heatmapwidget.h"

#include <QAction>
#include <QComboBox>
#include <QDialog>
#include <QDialogButtonBox>
#include <QDir>
#include <QDockWidget>
#include <QFileDialog>
#include <QFileInfo>
#include <QGuiApplication>
#include <QInputDialog>
#include <QKeySequence>
#include <QLabel>
#include <QLineEdit>
#include <QListWidget>
#include <QMainWindow>
#include <QMessageBox>
#include <QVBoxLayout>

namespace attn {

TensorController::TensorController(AttentionSession *session, HeatmapWidget *heatmap,
                                   QWidget *window)
    : QObject(window)
    , m_session(session)
    , m_heatmap(heatmap)
    , m_window(window)
{
    m_edit = [this](const SessionParameters &p) { m_session->setParameters(p); };
    m_chooseArray = [this](const TensorFile &file) { return chooseArrayDialog(file); };
    m_chooseBatch = [this](const TensorFile &file, int batchCount) {
        bool ok = false;
        const QString what = holdsInputs(file)
            ? tr("problems (query, key and value shaped (B, n, E))")
            : tr("sequences (attentions shaped (layers, B, heads, n_q, n_k))");
        const int item = QInputDialog::getInt(m_window, tr("Open Tensors"),
                                              tr("%1 holds a batch of B = %2 %3.\n"
                                                 "Batch item to show (0 … %4):")
                                                  .arg(QFileInfo(file.path).fileName())
                                                  .arg(batchCount)
                                                  .arg(what)
                                                  .arg(batchCount - 1),
                                              0, 0, batchCount - 1, 1, &ok);
        return ok ? item : -1;
    };
    m_lastFolder = QDir::currentPath();

    m_panel = new TensorPanel;
    m_panel->setObjectName(QStringLiteral("tensorPanel"));
    m_statusLabel = new QLabel;
    m_statusLabel->setObjectName(QStringLiteral("tensorStatus"));
    m_statusLabel->setStyleSheet(QStringLiteral(
        "QLabel { background: #1f77b4; color: white; font-weight: bold; border-radius: 3px; "
        "padding: 0 4px; }"));
    m_statusLabel->hide();

    m_openAction = new QAction(tr("Open &Tensors…"), this);
    m_openAction->setObjectName(QStringLiteral("openTensorsAction"));
    m_openAction->setShortcut(QKeySequence(tr("Ctrl+Shift+O")));
    m_openAction->setStatusTip(tr("Show your own tensors (.npy/.npz): query/key/value with "
                                  "PyTorch-named parameters, or attention weights computed "
                                  "elsewhere"));
    m_openAction->setIcon(QIcon::fromTheme(QStringLiteral("document-open")));
    connect(m_openAction, &QAction::triggered, this, &TensorController::openInteractive);

    m_backAction = new QAction(tr("&Back to Random Inputs"), this);
    m_backAction->setObjectName(QStringLiteral("backToRandomAction"));
    m_backAction->setStatusTip(tr("Show the seeded random inputs again instead of the loaded "
                                  "tensors"));
    m_backAction->setEnabled(false);
    connect(m_backAction, &QAction::triggered, this, &TensorController::backToRandomInputs);

    m_exportAction = new QAction(tr("Export &Weights…"), this);
    m_exportAction->setObjectName(QStringLiteral("exportWeightsAction"));
    m_exportAction->setShortcut(QKeySequence(tr("Ctrl+Shift+W")));
    m_exportAction->setStatusTip(tr("Save the attention weights shown (all heads or the current "
                                    "one) as a NumPy .npy array or a CSV table"));
    connect(m_exportAction, &QAction::triggered, this, &TensorController::exportWeightsInteractive);

    connect(m_panel, &TensorPanel::layerRequested, this, &TensorController::setLayer);
    connect(m_panel, &TensorPanel::headRequested, this, &TensorController::showHead);
    connect(m_panel, &TensorPanel::maskConventionRequested, this,
            &TensorController::setMaskConvention);
    connect(m_panel, &TensorPanel::tokensTyped, this,
            [this](const QString &text) { setTokenLabels(splitLabels(text)); });
    connect(m_panel, &TensorPanel::tokenFileRequested, this,
            &TensorController::loadTokenFileInteractive);
    connect(m_panel, &TensorPanel::backRequested, this, &TensorController::backToRandomInputs);

    connect(m_session, &AttentionSession::parametersChanged, this,
            &TensorController::onParametersChanged);
    connect(m_session, &AttentionSession::resultChanged, this, &TensorController::onResult);
    onParametersChanged(m_session->parameters());
}

TensorController::~TensorController()
{
    // The panel and the label live in the window's dock and status bar, which own them; only
    // delete them here if nobody took them.
    if (m_panel && !m_panel->parent())
        delete m_panel;
    if (m_statusLabel && !m_statusLabel->parent())
        delete m_statusLabel;
}

void TensorController::setParameterEditor(std::function<void(const SessionParameters &)> edit)
{
    m_edit = std::move(edit);
}

void TensorController::setBatchChooser(std::function<int(const TensorFile &, int)> choose)
{
    m_chooseBatch = std::move(choose);
}

void TensorController::setArrayChooser(std::function<QString(const TensorFile &)> choose)
{
    m_chooseArray = std::move(choose);
}

void TensorController::setDock(QDockWidget *dock)
{
    m_dock = dock;
    if (m_dock)
        m_dock->setVisible(source() != nullptr);
}

std::shared_ptr<const TensorSource> TensorController::source() const
{
    return m_session->parameters().tensors;
}

QString TensorController::loadedPath() const
{
    return loadedTensorPath(m_session->parameters());
}

void TensorController::apply(const SessionParameters &params)
{
    const QString invalid = params.validate();
    if (!invalid.isEmpty()) {
        emit statusMessage(tr("Not applied: %1").arg(invalid));
        return;
    }
    if (params == m_session->parameters())
        return;
    m_edit(params);
}

bool TensorController::openFile(const QString &path, QString *error, const QString &weightsArray,
                                MaskConvention convention)
{
    auto fail = [&](const QString &message) {
        if (error)
            *error = message;
        return false;
    };
    TensorFile file;
    try {
        file = readTensorFile(path);
    } catch (const NpyError &e) {
        return fail(QString::fromUtf8(e.what()));
    } catch (const std::bad_alloc &) {
        return fail(tr("%1: out of memory").arg(path));
    }
    if (file.arrays.empty())
        return fail(tr("%1 holds no arrays").arg(path));
    m_lastFolder = QFileInfo(file.path).absolutePath();

    QString array = weightsArray;
    if (array.isEmpty() && !holdsInputs(file) && defaultWeightArray(file.arrays).empty()) {
        array = m_chooseArray ? m_chooseArray(file) : QString();
        if (array.isEmpty())
            return fail(tr("%1: no array of weights was chosen").arg(file.path));
    }
    // A leading batch axis (B, n, E): which item to show (the picker, or item 0).
    int batch = 0;
    if (!holdsInputs(file) && (array.isEmpty() || array == QLatin1String(attentionStackArray))
        && defaultWeightArray(file.arrays) == attentionStackArray) {
        const Index batchCount = attentionStackBatchSize(file.arrays);
        if (batchCount > 1 && m_chooseBatch) {
            batch = m_chooseBatch(file, int(batchCount));
            if (batch < 0)
                return fail(tr("%1: no batch item was chosen").arg(file.path));
        }
    } else if (holdsInputs(file)) {
        Index batchCount = 0;
        try {
            batchCount = tensorBatchSize(file.arrays);
        } catch (const InvalidArgument &e) {
            return fail(tr("%1: %2").arg(file.path, QString::fromUtf8(e.what())));
        }
        if (batchCount > 1 && m_chooseBatch) {
            batch = m_chooseBatch(file, int(batchCount));
            if (batch < 0)
                return fail(tr("%1: no batch item was chosen").arg(file.path));
        }
    }
    QString message;
    const std::shared_ptr<const TensorSource> loaded
        = makeTensorSource(file, array, convention, &message, batch);
    if (!loaded)
        return fail(message);

    const SessionParameters current = m_session->parameters();
    SessionParameters p = loaded->parametersFor(current, loaded);
    m_tokenMessage.clear();
    const QString sidecar = tokenSidecarPath(file.path);
    if (!sidecar.isEmpty()) {
        QString readError;
        if (const auto tokens = readTokenFile(sidecar, &readError)) {
            m_tokenMessage = checkTokenCount(p, int(tokens->size()));
            if (m_tokenMessage.isEmpty())
                p.setTokens(*tokens);
            else
                m_tokenMessage
                    = QStringLiteral("%1: %2").arg(QFileInfo(sidecar).fileName(), m_tokenMessage);
        } else {
            m_tokenMessage = readError;
        }
    }
    const QString invalid = p.validate();
    if (!invalid.isEmpty())
        return fail(tr("%1: %2").arg(file.path, invalid));
    // Compute once before switching: a file whose attention cannot be computed (scores that
    // overflow, too large for memory, …) is refused like an unreadable one, so the panel, the
    // badge and the heatmap keep showing the previous tensors together.
    const QString computeError = checkComputes(p);
    if (!computeError.isEmpty())
        return fail(tr("%1: %2").arg(file.path, computeError));

    if (!current.tensors)
        m_randomParameters = current;
    m_edit(p);
    // Another file: a zoom into the previous one's cells does not carry over.
    m_heatmap->resetZoom();
    m_panel->setTokenMessage(m_tokenMessage);
    emit statusMessage(m_tokenMessage.isEmpty()
                           ? tr("Loaded %1: %2").arg(loaded->fileName(), loaded->description())
                           : tr("Loaded %1; %2").arg(loaded->fileName(), m_tokenMessage));
    return true;
}

bool TensorController::showSource(const std::shared_ptr<const TensorSource> &source, bool undoable,
                                  QString *error)
{
    const SessionParameters current = m_session->parameters();
    const SessionParameters p = source->parametersFor(current, source);
    const QString invalid = p.validate();
    if (!invalid.isEmpty()) {
        if (error)
            *error = invalid;
        return false;
    }
    if (!current.tensors)
        m_randomParameters = current;
    m_tokenMessage.clear();
    m_panel->setTokenMessage(QString());
    if (undoable)
        m_edit(p);
    else
        m_session->setParameters(p);
    return true;
}

QString TensorController::checkComputes(const SessionParameters &params) const
{
    // On a worker thread, so the window keeps repainting; user input waits (as behind a modal
    // dialog) until the answer is in, so nothing changes the session meanwhile.
    JobRunner runner(nullptr, 1);
    QGuiApplication::setOverrideCursor(Qt::WaitCursor);
    const std::optional<QString> error = runner.runAndWait(
        [params](const JobContext &) { return computeTensorSession(params).error; });
    QGuiApplication::restoreOverrideCursor();
    return error.value_or(tr("the check was interrupted"));
}

bool TensorController::open(const QString &path)
{
    QString error;
    if (openFile(path, &error)) {
        emit opened(path);
        return true;
    }
    QMessageBox box(QMessageBox::Warning, tr("Open Tensors"),
                    tr("Could not open %1.").arg(QFileInfo(path).fileName()), QMessageBox::Ok,
                    m_window);
    box.setObjectName(QStringLiteral("openTensorsError"));
    box.setInformativeText(error + QStringLiteral("\n\n") + tr("The current view is kept."));
    box.exec();
    return false;
}

void TensorController::openInteractive()
{
    const QString path
        = QFileDialog::getOpenFileName(m_window, tr("Open Tensors"), m_lastFolder,
                                       tr("NumPy arrays (*.npz *.npy);;All files (*)"));
    if (!path.isEmpty())
        open(path);
}

void TensorController::setRandomParameters(const SessionParameters &params)
{
    m_randomParameters = params;
    m_randomParameters->tensors = nullptr;
}

void TensorController::backToRandomInputs()
{
    SessionParameters p = m_session->parameters();
    if (!p.tensors)
        return;
    if (m_randomParameters && !m_randomParameters->tensors) {
        p = *m_randomParameters;
    } else {
        p.tensors = nullptr;
        p.tokens.clear();
    }
    m_tokenMessage.clear();
    m_panel->setTokenMessage(QString());
    apply(p);
    emit statusMessage(tr("Back to seeded random inputs"));
}

void TensorController::setMaskConvention(MaskConvention convention)
{
    const auto s = source();
    if (!s || s->isWeights() || s->maskConvention() == convention)
        return;
    QString error;
    std::shared_ptr<const TensorSource> reloaded;
    try {
        reloaded = makeTensorSource(readTensorFile(s->path()), s->arrayName(), convention, &error,
                                    s->batch());
    } catch (const NpyError &e) {
        error = QString::fromUtf8(e.what());
    }
    if (!reloaded || reloaded->queryCount() != s->queryCount()
        || reloaded->keyCount() != s->keyCount() || reloaded->dModel() != s->dModel()
        || reloaded->headCount() != s->headCount()) {
        if (error.isEmpty())
            error = tr("%1 changed on disk; open it again").arg(s->path());
        m_panel->setParameters(m_session->parameters()); // the combo shows the old choice
        QMessageBox::warning(m_window, tr("Open Tensors"), error);
        return;
    }
    SessionParameters p = m_session->parameters();
    p.tensors = reloaded;
    apply(p);
}

QString TensorController::setTokenLabels(const QStringList &tokens)
{
    SessionParameters p = m_session->parameters();
    if (!p.tensors) {
        m_tokenMessage = tr("Token labels here apply to loaded tensors only");
        m_panel->setTokenMessage(m_tokenMessage);
        return m_tokenMessage;
    }
    m_tokenMessage = tokens.isEmpty() ? QString() : checkTokenCount(p, int(tokens.size()));
    p.setTokens(m_tokenMessage.isEmpty() ? tokens : QStringList());
    apply(p);
    m_panel->setTokenMessage(m_tokenMessage);
    if (!m_tokenMessage.isEmpty()) {
        m_panel->tokensEdit()->setText(tokens.join(QLatin1Char(' '))); // to correct it
        emit statusMessage(m_tokenMessage);
    }
    return m_tokenMessage;
}

QString TensorController::loadTokenFile(const QString &path)
{
    QString error;
    const auto tokens = readTokenFile(path, &error);
    if (!tokens) {
        m_tokenMessage = error;
        m_panel->setTokenMessage(error);
        emit statusMessage(error);
        return error;
    }
    const QString message = setTokenLabels(*tokens);
    if (!message.isEmpty()) {
        m_tokenMessage = QStringLiteral("%1: %2").arg(QFileInfo(path).fileName(), message);
        m_panel->setTokenMessage(m_tokenMessage);
    }
    return m_tokenMessage;
}

void TensorController::loadTokenFileInteractive()
{
    const auto s = source();
    const QString folder = s ? QFileInfo(s->path()).absolutePath() : m_lastFolder;
    const QString path
        = QFileDialog::getOpenFileName(m_window, tr("Token Labels"), folder,
                                       tr("Text files, one token per line (*.txt);;All "
                                          "files (*)"));
    if (!path.isEmpty())
        loadTokenFile(path);
}

void TensorController::setLayer(int layer)
{
    SessionParameters p = m_session->parameters();
    if (!p.tensors || p.tensors->layer() == layer)
        return;
    p.tensors = p.tensors->withLayer(layer);
    apply(p);
}

void TensorController::showHead(int head)
{
    if (head < 0)
        m_heatmap->showGrid();
    else
        m_heatmap->showSingleHead(head);
}

int TensorController::currentHead() const
{
    return m_heatmap->isSingleHead() ? m_heatmap->options().head : allHeads;
}

bool TensorController::exportWeights(const QString &path, int head, QString *error) const
{
    auto shown = m_heatmap->result();
    if (!shown)
        shown = m_session->result();
    if (!shown) {
        if (error)
            *error = tr("There are no computed weights to export yet.");
        return false;
    }
    return attn::exportWeights(*shown, path, head, error);
}

void TensorController::exportWeightsInteractive()
{
    auto shown = m_heatmap->result() ? m_heatmap->result() : m_session->result();
    if (!shown || !shown->ok()) {
        QMessageBox::information(m_window, tr("Export Weights"),
                                 tr("There are no computed weights to export yet."));
        return;
    }
    const int h = shown->headCount();
    QStringList items {tr("All heads (h × n_q × n_k = %1 × %2 × %3)")
                           .arg(h)
                           .arg(shown->queryCount())
                           .arg(shown->keyCount())};
    for (int k = 0; k < h; ++k)
        items << tr("Head %1").arg(k);
    if (h > 1)
        items << tr("Mean over heads");
    const int current = currentHead();
    bool ok = false;
    const QString item
        = QInputDialog::getItem(m_window, tr("Export Weights"), tr("Weights to export:"), items,
                                current == allHeads ? 0 : std::min(current, h) + 1, false, &ok);
    if (!ok)
        return;
    const int head = int(items.indexOf(item)) - 1; // −1 = allHeads
    const auto s = source();
    const QString stem = s ? QFileInfo(s->path()).completeBaseName() + QStringLiteral("-weights")
                           : QStringLiteral("attention-weights");
    QString selectedFilter;
    QString path = QFileDialog::getSaveFileName(
        m_window, tr("Export Weights"), exportStartPath(stem + QStringLiteral(".npy")),
        tr("NumPy array (*.npy);;CSV table (*.csv)"), &selectedFilter);
    if (path.isEmpty())
        return;
    if (QFileInfo(path).suffix().isEmpty())
        path += selectedFilter.contains(QLatin1String("csv")) ? QStringLiteral(".csv")
                                                              : QStringLiteral(".npy");
    QString error;
    if (!exportWeights(path, head == -1 ? allHeads : head, &error)) {
        QMessageBox::warning(m_window, tr("Export Weights"), error);
        return;
    }
    rememberExportFolder(path);
    emit statusMessage(tr("Exported %1").arg(QDir::toNativeSeparators(path)));
}

void TensorController::onParametersChanged(const SessionParameters &params)
{
    const bool loaded = params.tensors != nullptr;
    m_panel->setParameters(params);
    m_backAction->setEnabled(loaded);
    if (loaded) {
        m_statusLabel->setText(params.tensors->isModelRun()
                                   ? tr("model: %1").arg(params.tensors->fileName())
                                   : tr("loaded: %1").arg(params.tensors->fileName()));
        m_statusLabel->setToolTip(params.tensors->path());
    }
    m_statusLabel->setVisible(loaded);
    // A model's run has its own dock (File → Open Model…): this one is hidden when a run comes
    // in, and left as the user puts it while runs are shown.
    const bool modelRun = loaded && params.tensors->isModelRun();
    const bool runStarted = modelRun && !m_showsModelRun;
    m_showsModelRun = modelRun;
    if (m_dock && runStarted) {
        m_dock->hide();
    } else if (m_dock && !modelRun && m_dock->isVisible() != loaded) {
        m_dock->setVisible(loaded);
        if (loaded) {
            m_dock->raise();
            // Room for the wrapped texts: the left column is shared with other docks.
            if (auto *window = qobject_cast<QMainWindow *>(m_window))
                window->resizeDocks({m_dock}, {std::max(300, m_panel->sizeHint().height())},
                                    Qt::Vertical);
        }
    }
}

void TensorController::onResult()
{
    m_panel->setResult(m_session->result());
    m_panel->setCurrentHead(currentHead());
}

QString TensorController::chooseArrayDialog(const TensorFile &file)
{
    QDialog dialog(m_window);
    dialog.setObjectName(QStringLiteral("chooseArrayDialog"));
    dialog.setWindowTitle(tr("Choose the Weights"));
    auto *layout = new QVBoxLayout(&dialog);
    auto *text = new QLabel(tr("%1 holds several arrays and none is named weights, attn_weights "
                               "or attention. Which one holds the attention weights "
                               "(n_q × n_k, h × n_q × n_k or layers × h × n_q × n_k)?")
                                .arg(QFileInfo(file.path).fileName()),
                            &dialog);
    text->setWordWrap(true);
    layout->addWidget(text);
    auto *list = new QListWidget(&dialog);
    const QStringList descriptions = describeArrays(file);
    for (std::size_t k = 0; k < file.arrays.size(); ++k) {
        auto *item = new QListWidgetItem(descriptions.at(qsizetype(k)), list);
        item->setData(Qt::UserRole, QString::fromStdString(file.arrays[k].first));
        const int nd = file.arrays[k].second.ndim();
        if (nd < 2 || nd > 4)
            item->setFlags(item->flags() & ~Qt::ItemIsEnabled); // cannot be weights
    }
    for (int row = 0; row < list->count(); ++row) {
        if (list->item(row)->flags() & Qt::ItemIsEnabled) {
            list->setCurrentRow(row);
            break;
        }
    }
    layout->addWidget(list);
    auto *buttons
        = new QDialogButtonBox(QDialogButtonBox::Open | QDialogButtonBox::Cancel, &dialog);
    connect(buttons, &QDialogButtonBox::accepted, &dialog, &QDialog::accept);
    connect(buttons, &QDialogButtonBox::rejected, &dialog, &QDialog::reject);
    connect(list, &QListWidget::itemDoubleClicked, &dialog, &QDialog::accept);
    layout->addWidget(buttons);
    if (dialog.exec() != QDialog::Accepted || !list->currentItem())
        return {};
    return list->currentItem()->data(Qt::UserRole).toString();
}

} // namespace attn
