#include "ui/window/modelcontroller.h"

#include "ui/panels/modelpanel.h"
#include "ui/session/jobrunner.h"
#include "ui/views/tokenstrip.h"
#include "ui/window/recentfiles.h"
#include "ui/window/tensorcontroller.h"

#include "core/models/modelfolder.h"

#include <QAction>
#include <QCoreApplication>
#include <QDir>
#include <QDockWidget>
#include <QFileDialog>
#include <QFileInfo>
#include <QGuiApplication>
#include <QMenu>
#include <QMessageBox>
#include <QProgressBar>
#include <QSettings>

namespace attn {
namespace {

QString displayName(const QString &folder)
{
    return QString::fromStdString(
        models::modelDisplayName(QFile::encodeName(folder).toStdString()));
}

} // namespace

ModelController::ModelController(TensorController *tensors, QWidget *window)
    : QObject(window)
    , m_tensors(tensors)
    , m_window(window)
    , m_panel(new ModelPanel)
    , m_jobs(new JobRunner(this, 1))
{
    m_lastFolder = QDir::homePath();
    m_openAction = new QAction(tr("Open &Model\u2026"), this);
    m_openAction->setObjectName(QStringLiteral("openModelAction"));
    m_openAction->setShortcut(QKeySequence(tr("Ctrl+Alt+O")));
    m_openAction->setStatusTip(tr("Run a Hugging Face checkpoint (a folder with config.json and "
                                  ".safetensors weights: GPT-2, Llama, Qwen2, Qwen3, BERT) on "
                                  "your text and show its attention"));
    connect(m_openAction, &QAction::triggered, this, &ModelController::openInteractive);

    m_cacheMenu = new QMenu(tr("Open Built-in or &Cached Model"));
    m_cacheMenu->setObjectName(QStringLiteral("huggingFaceCacheMenu"));
    m_cacheMenu->setToolTipsVisible(true);
    connect(m_cacheMenu, &QMenu::aboutToShow, this, &ModelController::rebuildCacheMenu);
    rebuildCacheMenu();

    // Tensors opened over a run: the next-token readout belonged to the run.
    if (m_tensors)
        connect(m_tensors, &TensorController::opened, this, [this] {
            if (!m_run)
                return;
            m_panel->clearRun();
            m_panel->setMessage(tr("The views show the opened tensors; Run shows this model's "
                                   "attention again."));
        });

    m_recent = new RecentFiles(QStringLiteral("recentModels"), tr("Recent Mo&dels"), this);
    m_recent->menu()->setObjectName(QStringLiteral("recentModelsMenu"));
    m_recent->setLabels([](const QString &folder) { return displayName(folder); },
                        tr("No recent models"));
    connect(m_recent, &RecentFiles::openRequested, this, &ModelController::open);
    connect(m_recent, &RecentFiles::changed, this, [this] {
        if (m_persistRecent) {
            QSettings settings;
            m_recent->save(settings);
        }
    });

    connect(m_panel, &ModelPanel::openRequested, this, &ModelController::openInteractive);
    connect(m_panel, &ModelPanel::runRequested, this, [this] { run(); });
    connect(m_panel, &ModelPanel::cancelRequested, this, &ModelController::cancel);
    connect(m_panel, &ModelPanel::inputChanged, this, &ModelController::updateStrip);
    connect(m_jobs, &JobRunner::progressChanged, this, [this](double fraction) {
        // runModel counts the forward's layers, then (on demand) the thumbnails' layers.
        const int layers = m_model ? int(m_model->model->config().layers) : 1;
        const int steps = int(std::lround(fraction * layers * (m_runPools ? 2 : 1)));
        if (steps <= layers)
            m_panel->setProgress(steps, layers);
        else
            m_panel->setProgress(steps - layers, layers, tr("thumbnails"));
    });
    connect(m_jobs, &JobRunner::failed, this, [this](const QString &message) {
        m_quietRun = false;
        m_panel->setRunning(false);
        m_panel->setMessage(tr("Not run: %1").arg(message), true);
        emit runFailed(message);
        emit statusMessage(tr("Model not run: %1").arg(message));
    });
}

ModelController::~ModelController()
{
    m_jobs->cancel();
    if (m_panel && !m_panel->parent())
        delete m_panel;
    delete m_cacheMenu;
}

void ModelController::setDock(QDockWidget *dock)
{
    m_dock = dock;
}

void ModelController::setHubFolder(const QString &folder)
{
    m_hubFolder = folder;
}

QString ModelController::hubFolder() const
{
    return m_hubFolder.isEmpty() ? QString::fromStdString(models::huggingFaceHubDir().string())
                                 : m_hubFolder;
}

QString ModelController::builtinFolder()
{
    return QString::fromStdString(
        models::builtinModelFolder(
            QFile::encodeName(QCoreApplication::applicationDirPath()).toStdString())
            .string());
}

std::vector<models::CachedModel> ModelController::cachedModels() const
{
    return models::scanHuggingFaceCache(QFile::encodeName(hubFolder()).toStdString());
}

void ModelController::rebuildCacheMenu()
{
    m_cacheMenu->clear();
    // The built-in model first: it is there without a download.
    const QString builtin = builtinFolder();
    QAction *first = m_cacheMenu->addAction(tr("Built-in: Brown GPT (byte-level, 4 \u00d7 4 "
                                               "heads)"));
    first->setObjectName(QStringLiteral("builtinModelAction"));
    if (builtin.isEmpty()) {
        first->setEnabled(false);
        first->setToolTip(tr("Not installed: share/attnlab/models/brown-gpt was not found"));
    } else {
        first->setData(builtin);
        first->setToolTip(tr("A 0.86 M-parameter GPT-2 trained on the Brown Corpus, one token a "
                             "byte (%1)")
                              .arg(QDir::toNativeSeparators(builtin)));
        connect(first, &QAction::triggered, this, [this, builtin] { open(builtin); });
    }
    m_cacheMenu->addSeparator();
    const QString hub = hubFolder();
    const std::vector<models::CachedModel> found = cachedModels();
    QAction *where = m_cacheMenu->addAction(QDir::toNativeSeparators(hub));
    where->setEnabled(false);
    if (found.empty()) {
        m_cacheMenu->addAction(tr("No models found (set HF_HOME to use another cache)"))
            ->setEnabled(false);
        return;
    }
    m_cacheMenu->addSeparator();
    for (const models::CachedModel &m : found) {
        const QString name = QString::fromStdString(m.name);
        const QString what = m.supported()
            ? QStringLiteral("%1, %2").arg(QString::fromStdString(m.family),
                                           byteSizeText(double(m.weightBytes)))
            : tr("cannot be opened");
        QString label = QStringLiteral("%1 \u2014 %2 (%3)")
                            .arg(name, what, QString::fromStdString(m.revision).left(7));
        label.replace(QLatin1Char('&'), QLatin1String("&&"));
        QAction *a = m_cacheMenu->addAction(label);
        const QString folder = QString::fromStdString(m.folder.string());
        a->setData(folder);
        a->setToolTip(m.supported() ? folder : QString::fromStdString(m.problem));
        connect(a, &QAction::triggered, this, [this, folder] { open(folder); });
    }
}

bool ModelController::openFolder(const QString &folder, QString *error)
{
    JobRunner opener(nullptr, 1);
    QGuiApplication::setOverrideCursor(Qt::WaitCursor);
    const auto result = opener.runAndWait([folder](const JobContext &) {
        QString message;
        auto model = openModelFolder(folder, &message);
        return std::make_pair(std::move(model), message);
    });
    QGuiApplication::restoreOverrideCursor();
    if (!result || !result->first) {
        if (error)
            *error = result ? result->second : tr("%1: opening was interrupted").arg(folder);
        return false;
    }
    m_jobs->cancel();
    m_quietRun = false;
    m_model = result->first;
    m_run.reset();
    m_firstRun = true;
    m_panel->setRunning(false);
    m_panel->setModel(m_model.get());
    m_panel->clearRun();
    m_panel->setMessage(m_model->tokenizer ? tr("Type a text and press Run (Ctrl+Enter).")
                                           : tr("Type token ids and press Run (Ctrl+Enter)."));
    updateStrip();
    m_recent->add(m_model->folder);
    m_lastFolder = QFileInfo(m_model->folder).absolutePath();
    if (m_dock) {
        m_dock->show();
        m_dock->raise();
    }
    emit modelOpened(m_model->name);
    emit statusMessage(tr("Opened %1: %2").arg(m_model->name, m_model->summary()));
    return true;
}

bool ModelController::open(const QString &folder)
{
    QString error;
    if (openFolder(folder, &error))
        return true;
    QMessageBox box(QMessageBox::Warning, tr("Open Model"),
                    tr("Could not open the model %1.").arg(QDir::toNativeSeparators(folder)),
                    QMessageBox::Ok, m_window);
    box.setObjectName(QStringLiteral("openModelError"));
    box.setInformativeText(error + QStringLiteral("\n\n") + tr("The current session is kept."));
    box.exec();
    return false;
}

void ModelController::openInteractive()
{
    const QString folder = QFileDialog::getExistingDirectory(
        m_window, tr("Open Model (a folder with config.json and .safetensors)"), m_lastFolder);
    if (!folder.isEmpty())
        open(folder);
}

void ModelController::setText(const QString &text, bool ids)
{
    m_panel->setIdsInput(ids);
    m_panel->setText(text);
    updateStrip();
}

QString ModelController::text() const
{
    return m_panel->text();
}

void ModelController::updateStrip()
{
    const bool ids = m_panel->idsInput() && m_model;
    if (!ids) {
        m_panel->tokenStrip()->setPieces(tokenPieces(m_model.get(), m_panel->text()));
        return;
    }
    QString ignored;
    const auto input = prepareModelInput(*m_model, m_panel->text(), true, &ignored);
    m_panel->tokenStrip()->setPieces(input ? input->pieces : QVector<TokenPiece>());
}

bool ModelController::run(QString *error)
{
    auto fail = [&](const QString &message) {
        m_panel->setMessage(message, true);
        if (error)
            *error = message;
        emit runFailed(message);
        emit statusMessage(tr("Model not run: %1").arg(message));
        return false;
    };
    if (!m_model)
        return fail(tr("No model is open: File \u2192 Open Model\u2026"));
    QString message;
    const auto input = prepareModelInput(*m_model, m_panel->text(), m_panel->idsInput(), &message);
    if (!input)
        return fail(message);
    m_panel->setRunning(true);
    m_panel->setProgress(0, int(m_model->model->config().layers));
    m_panel->setMessage(
        tr("Running %1 on %2 tokens\u2026").arg(m_model->name).arg(input->ids.size()));
    const std::shared_ptr<const OpenedModel> model = m_model;
    const std::uint64_t budget = m_stackBudget > 0 ? m_stackBudget : attentionStackBudget();
    m_runPools = modelStackBytes(m_model->model->config(), std::int64_t(input->ids.size()))
        > double(budget);
    m_jobs->run(
        [model, input = *input, budget](const JobContext &context) {
            const auto progress = [&context](int done, int total) {
                context.report(double(done) / double(std::max(total, 1)));
            };
            return std::make_shared<const ModelRun>(
                runModel(model, input, budget, kTopK, progress, context.cancel));
        },
        [this](std::shared_ptr<const ModelRun> run) { deliver(run); });
    return true;
}

bool ModelController::isRunning() const
{
    return m_jobs->isBusy();
}

void ModelController::waitForRun()
{
    m_jobs->waitUntilIdle();
}

void ModelController::cancel()
{
    if (!m_jobs->isBusy())
        return;
    m_jobs->cancel();
    m_quietRun = false;
    m_panel->setRunning(false);
    m_panel->setMessage(tr("Cancelled: the views keep what they showed."));
    emit statusMessage(tr("Forward pass cancelled"));
}

void ModelController::deliver(const std::shared_ptr<const ModelRun> &run)
{
    const bool quiet = std::exchange(m_quietRun, false);
    m_panel->setRunning(false);
    std::shared_ptr<const TensorSource> source = run->source;
    // Another run of the same model keeps the layer shown; a restored session its saved one.
    const auto shown = m_tensors->source();
    const int layer = quiet                                               ? m_restoreLayer
        : shown && shown->isModelRun() && shown->path() == source->path() ? shown->layer()
                                                                          : 0;
    if (layer > 0)
        source = source->withLayer(layer);
    QString error;
    if (!m_tensors->showSource(source, !quiet, &error)) {
        m_panel->setMessage(tr("Not shown: %1").arg(error), true);
        emit runFailed(error);
        emit statusMessage(tr("Model run not shown: %1").arg(error));
        return;
    }
    m_run = run;
    m_panel->setRun(*run);
    m_panel->setMessage(
        (run->longOnly ? tr("%1 tokens through %2 layers in %3 s; the Model tab shows every head "
                            "pooled: click one to see it whole in the Long tab.")
                       : tr("%1 tokens through %2 layers in %3 s; the Model tab shows every head."))
            .arg(run->input.ids.size())
            .arg(run->model->model->config().layers)
            .arg(run->seconds, 0, 'f', 2));
    emit statusMessage(tr("Ran %1 on %2 tokens").arg(run->model->name).arg(run->input.ids.size()));
    emit runFinished(std::exchange(m_firstRun, false) && !quiet);
}

QJsonObject ModelController::sessionState() const
{
    if (!m_model)
        return {};
    const auto shown = m_tensors->source();
    const bool isShown = shown && shown->isModelRun() && shown->path() == m_model->folder;
    QJsonObject o {{QStringLiteral("folder"), m_model->folder},
                   {QStringLiteral("text"), m_panel->text()},
                   {QStringLiteral("ids"), m_panel->idsInput()},
                   {QStringLiteral("shown"), isShown}};
    if (isShown)
        o.insert(QStringLiteral("layer"), shown->layer());
    return o;
}

QString ModelController::restoreSessionState(const QJsonObject &state)
{
    const QString folder = state.value(QLatin1String("folder")).toString();
    if (folder.isEmpty())
        return {};
    if (!QFileInfo(folder).isDir())
        return tr("The session's model folder %1 is gone (moved or deleted).")
            .arg(QDir::toNativeSeparators(folder));
    QString error;
    if (!openFolder(folder, &error))
        return tr("The session's model folder %1 was not opened: %2")
            .arg(QDir::toNativeSeparators(folder), error);
    setText(state.value(QLatin1String("text")).toString(),
            state.value(QLatin1String("ids")).toBool(false));
    if (state.value(QLatin1String("shown")).toBool(false)) {
        m_restoreLayer = std::max(0, state.value(QLatin1String("layer")).toInt(0));
        QString runError;
        if (!run(&runError))
            return tr("The session's model %1 was opened but not run: %2")
                .arg(m_model->name, runError);
        m_quietRun = true;
    }
    return {};
}

void ModelController::restoreSettings(const QSettings &settings)
{
    m_recent->load(settings);
}

void ModelController::saveSettings(QSettings &settings) const
{
    m_recent->save(settings);
}

} // namespace attn
