#include "ui/window/mainwindow.h"

#include "ui/document/trainingundo.h"

#include "ui/charts/rowmetricschart.h"
#include "ui/panels/controlpanel.h"
#include "ui/panels/experimentspanel.h"
#include "ui/panels/heatmapviewpanel.h"
#include "ui/panels/playpanel.h"
#include "ui/panels/trainingpanel.h"
#include "ui/session/attentionsession.h"
#include "ui/views/atlasview.h"
#include "ui/views/attentionviews.h"
#include "ui/views/compareview.h"
#include "ui/views/heatmapactions.h"
#include "ui/views/heatmapwidget.h"
#include "ui/views/longmapview.h"
#include "ui/views/stepsview.h"
#include "ui/views/tokensview.h"
#include "ui/window/chartdocks.h"
#include "ui/window/exportrouter.h"
#include "ui/window/filedrop.h"
#include "ui/window/modelcontroller.h"
#include "ui/window/presentationmode.h"
#include "ui/window/sessioncontroller.h"
#include "ui/window/shortcuts.h"
#include "ui/window/statusbartext.h"
#include "ui/window/tensorcontroller.h"
#include "ui/window/tour.h"
#include "ui/window/windowlayout.h"
#include "ui/window/windowmenus.h"

#include <QAction>
#include <QApplication>
#include <QCloseEvent>
#include <QDockWidget>
#include <QJsonArray>
#include <QScrollArea>
#include <QSettings>
#include <QStatusBar>
#include <QTabWidget>

namespace attn {

namespace {
/// QSettings key of the Play dock's frame size (Export Frames…).
const QString playFrameSizeKey = QStringLiteral("play/frameSize");
} // namespace

MainWindow::MainWindow(QWidget *parent)
    : QMainWindow(parent)
{
    setObjectName(QStringLiteral("MainWindow"));
    setWindowTitle(tr("Attention Lab"));
    setDockOptions(QMainWindow::AnimatedDocks | QMainWindow::AllowTabbedDocks
                   | QMainWindow::AllowNestedDocks);
    m_layout = new WindowLayout(this);
    m_session = new AttentionSession(this);

    // Two modes in the centre: the attention view (heatmaps, with the control and chart docks
    // around it) and the experiments E1–E20, which get the whole window.
    m_heatmap = new HeatmapWidget;
    m_heatmap->setObjectName(QStringLiteral("heatmapWidget"));
    m_experiments = new ExperimentsPanel;
    m_experiments->setObjectName(QStringLiteral("experimentsPanel"));
    m_modes = new QTabWidget(this);
    m_modes->setObjectName(QStringLiteral("modeTabs"));
    m_modes->setDocumentMode(true);
    // The attention mode's centre: tabs "Heads" (m_heatmap), "Steps" and "Compare A/B".
    m_views = new AttentionViews(m_heatmap, m_session);
    m_modes->addTab(m_views, tr("Attention"));
    m_modes->addTab(m_experiments, tr("Experiments E1–E20"));
    m_training = new TrainingPanel;
    m_training->setObjectName(QStringLiteral("trainingPanel"));
    m_modes->addTab(m_training, tr("Training"));
    m_modes->setTabToolTip(0,
                           tr("Heatmaps of the current parameters, with the controls and live "
                              "charts (Ctrl+1)"));
    m_modes->setTabToolTip(1,
                           tr("The twenty experiments of Attention Lab, each with its "
                              "parameters, table, figure and note (Ctrl+2)"));
    m_modes->setTabToolTip(2,
                           tr("Train an attention layer twice, A beside B (e.g. scaled and "
                              "unscaled), or a two-layer model in which an induction head "
                              "forms (E17), live (Ctrl+3)"));
    // The pages' own minimum sizes (the A/B strip, an experiment's figure) must not make the
    // window wider than the screen: the centre's minimum is fixed, the docks scroll.
    m_modes->setMinimumSize(360, 300);
    setCentralWidget(m_modes);

    createDocks();
    connect(m_modes, &QTabWidget::currentChanged, this, [this](int index) {
        // The experiments and the training get the whole window; the attention view's docks
        // come back as they were when switching back.
        if (index != 0)
            m_layout->hideDocks();
        else
            m_layout->restoreDocks();
    });
    // Before the menus: View → Presentation Mode.
    m_presentation = new PresentationMode(this, m_layout, m_modes);
    // Presenting, the A/B maps take the size the whole window gives them, scrolled to.
    connect(m_presentation, &PresentationMode::activeChanged, this,
            [this](bool active) { m_views->compareView()->setPresenting(active); });
    createControllers();
    m_tour = new Tour(this); // before the menus: Help → Guided Tour
    m_menus = new WindowMenus(this, m_charts->timing());
    m_shortcuts = new WindowShortcuts(this); // a focused editor must not swallow Ctrl+E, F5 …
    m_status = new StatusBarText(statusBar(), m_tensors->statusLabel());
    statusBar()->showMessage(tr("Computing…"));
    connectSession();

    m_layout->fitToScreen(); // restoreSettings may replace it with the saved geometry
    m_layout->captureDefaultLayout(); // View → Reset Layout goes back to this

    // First result for the default parameters.
    m_controls->setParameters(m_session->parameters());
    onParametersChanged(m_session->parameters());
    m_sessionController->viewStateSettled(); // the untitled session's view
    m_session->recompute();
}

MainWindow::~MainWindow()
{
    // Focus changes while the children are destroyed must not reach the export action, nor
    // key events the shortcut filter.
    disconnect(qApp, nullptr, m_export, nullptr);
    delete m_shortcuts;
}

QSize MainWindow::sizeHint() const
{
    return m_layout->sizeHint();
}

void MainWindow::showEvent(QShowEvent *event)
{
    QMainWindow::showEvent(event);
    m_layout->windowShown();
}

void MainWindow::resizeEvent(QResizeEvent *event)
{
    QMainWindow::resizeEvent(event);
    m_layout->windowResized(event);
}

void MainWindow::createDocks()
{
    setCorner(Qt::TopLeftCorner, Qt::LeftDockWidgetArea);
    setCorner(Qt::BottomLeftCorner, Qt::LeftDockWidgetArea);
    setCorner(Qt::TopRightCorner, Qt::RightDockWidgetArea);
    setCorner(Qt::BottomRightCorner, Qt::RightDockWidgetArea);

    m_controls = new ControlPanel;
    m_controls->setObjectName(QStringLiteral("controlPanel"));
    auto *scroll = new QScrollArea;
    scroll->setWidget(m_controls);
    scroll->setWidgetResizable(true);
    scroll->setFrameShape(QFrame::NoFrame);
    // Narrower than the controls (small screens): a horizontal scroll bar, not a wider window.
    scroll->setMinimumWidth(200);
    QDockWidget *controlsDock = m_layout->addDock(
        scroll, tr("Controls"), QStringLiteral("controlsDock"), Qt::LeftDockWidgetArea);
    // How the heads heatmaps are drawn: colormap, scale, range, pooling, zoom, trim padding,
    // hidden keys (ui/panels/heatmapviewpanel.h).
    m_viewPanel = new HeatmapViewPanel(m_heatmap);
    m_viewPanel->setObjectName(QStringLiteral("heatmapViewPanel"));
    QDockWidget *viewDock
        = m_layout->addDock(WindowLayout::scrollable(m_viewPanel), tr("Heatmap view"),
                            QStringLiteral("heatmapViewDock"), Qt::LeftDockWidgetArea);
    // A tab behind the Controls: the controls get the whole height of the left column, so the
    // Scale and Mask sections are on the first screen (1280 × 800 included) without scrolling.
    tabifyDockWidget(controlsDock, viewDock);
    // Play: animates d_k, α or τ through the same path as the controls (ui/panels/playpanel.h).
    m_play = new PlayPanel;
    m_play->setObjectName(QStringLiteral("playPanel"));
    QDockWidget *playDock = m_layout->addDock(WindowLayout::scrollable(m_play), tr("Play"),
                                              QStringLiteral("playDock"), Qt::LeftDockWidgetArea);
    tabifyDockWidget(viewDock, playDock);
    controlsDock->raise();
    m_layout->setLeftContents({m_controls, m_viewPanel, m_play});
    // File → Open Tensors…: layer/head selectors and token labels, shown while tensors are loaded.
    m_tensors = new TensorController(m_session, m_heatmap, this);
    m_tensors->setDock(m_layout->addDock(m_tensors->panel(), tr("Tensors"),
                                         QStringLiteral("tensorsDock"), Qt::LeftDockWidgetArea));
    // File → Open Model…: the text, its tokens, Run/Cancel and the next-token readout, a tab
    // behind the Controls, raised when a model is opened.
    m_models = new ModelController(m_tensors, this);
    QDockWidget *modelDock
        = m_layout->addDock(WindowLayout::scrollable(m_models->panel()), tr("Model"),
                            QStringLiteral("modelDock"), Qt::LeftDockWidgetArea);
    tabifyDockWidget(playDock, modelDock);
    controlsDock->raise();
    m_models->setDock(modelDock);

    // Right column: the live charts stacked (ui/window/chartdocks.h).
    m_charts = new ChartDocks(m_layout, this);
}

void MainWindow::createControllers()
{
    // Sessions and undo: File → Open/Save, Edit → Undo/Redo (ui/window/sessioncontroller.h).
    m_sessionController = new SessionController(m_session, this);
    m_sessionController->trackSliderDrags(m_controls);
    m_sessionController->setTensorController(m_tensors); // sessions save the tensors' file
    m_tensors->setParameterEditor(
        [this](const SessionParameters &p) { m_sessionController->editParameters(p); });
    m_sessionController->setViewStateHandlers([this] { return viewState(); },
                                              [this](const QJsonObject &s) { setViewState(s); });
    m_sessionController->setModelHandlers(
        [this] { return m_models->sessionState(); },
        [this](const QJsonObject &s) { return m_models->restoreSessionState(s); });
    // File → Export Heatmaps at Size/DPI / Each Head / Data, View → Zoom (heatmapactions.h).
    m_heatmapActions = new HeatmapActions(m_heatmap, this);
    m_heatmapActions->setObjectName(QStringLiteral("heatmapActions"));
    // File → Export: the current view (heads, steps, A/B, the focused chart, the experiment's
    // figure); its text names what it exports.
    m_export = new ExportRouter(m_session, m_heatmapActions, m_views, m_modes, m_experiments, this);
    // Export Data on the A/B tab writes B beside A.
    m_heatmapActions->setComparisonSource([this]() -> std::shared_ptr<const SessionResult> {
        if (m_export->currentTarget() != ExportRouter::Target::Compare)
            return nullptr;
        return m_views->compareView()->resultB();
    });
    // Export Data on the Long tab writes its visible window (the tab's Export… as data).
    m_heatmapActions->setDataExportRoute([this](const QString &path) {
        if (m_export->currentTarget() != ExportRouter::Target::Long)
            return false;
        m_views->longMapView()->exportWindow(path);
        return true;
    });
    m_charts->addTo(m_export);
    auto showMessage = [this](const QString &text) { statusBar()->showMessage(text, 10000); };
    connect(m_tensors, &TensorController::statusMessage, this, showMessage);
    connect(m_models, &ModelController::statusMessage, this, showMessage);
    // A model opened: its dock gets most of the left column's height (the text, the token strip
    // and the next-token readout); the Tensors dock below keeps the rest.
    const auto growModelDock = [this] {
        if (auto *dock = findChild<QDockWidget *>(QStringLiteral("modelDock")))
            resizeDocks({dock}, {height() * 3 / 5}, Qt::Vertical);
    };
    connect(m_models, &ModelController::modelOpened, this, growModelDock);
    // The first run of a model opened: its layers × heads at once.
    connect(m_models, &ModelController::runFinished, this, [this, growModelDock](bool first) {
        m_views->atlasView()->setModelRun(m_models->lastRun());
        if (!first)
            return;
        m_modes->setCurrentIndex(0);
        m_views->setCurrentIndex(AttentionViews::ModelTab);
        growModelDock();
    });
    connect(m_sessionController, &SessionController::statusMessage, this, showMessage);
    connect(m_controls, &ControlPanel::noteShown, this, showMessage);
    connect(m_heatmapActions, &HeatmapActions::message, this, showMessage);
    connect(m_training, &TrainingPanel::message, this, showMessage);
    m_export->setTrainingPanel(m_training);
    // A Training-tab edit is a step of Edit → Undo and marks the session modified.
    connect(m_training, &TrainingPanel::settingsEdited, this,
            [this](const TrainingSettings &before, const TrainingSettings &after) {
                m_sessionController->undoStack()->push(new SetTrainingSettingsCommand(
                    [this](const TrainingSettings &s) { return m_training->setSettings(s); },
                    before, after));
            });
    // Play drives the session as a control does: each frame is an edit, and the whole
    // animation one undo step (an edit group, ended when it stops).
    m_play->setDriver(
        {[this] { return m_session->parameters(); },
         [this](const SessionParameters &p) { m_sessionController->editParameters(p); },
         [this] { return m_session->isBusy(); }});
    m_play->setFrameOptions([this] { return m_heatmap->options(); });
    connect(m_play, &PlayPanel::playingChanged, this, [this](bool playing) {
        if (playing)
            m_sessionController->beginEditGroup(QStringLiteral("play"));
        else
            m_sessionController->endEditGroup();
    });
    connect(m_play, &PlayPanel::message, this, showMessage);
    for (QAction *history : {m_sessionController->undoAction(), m_sessionController->redoAction()})
        connect(history, &QAction::triggered, m_play, &PlayPanel::pause);
    // Session and tensor files dropped anywhere on the window open as File → Open does.
    new FileDrop(
        this, [this](const QString &path) { return m_sessionController->open(path); },
        [this](const QString &path) { return m_tensors->open(path); });
}

void MainWindow::connectSession()
{
    // An edit of the controls while playing takes control back: Play pauses first, so the
    // edit is an undo step of its own.
    connect(m_controls, &ControlPanel::parametersEdited, m_play, &PlayPanel::pause);
    connect(m_controls, &ControlPanel::parametersEdited, m_sessionController,
            &SessionController::editParameters);
    connect(m_session, &AttentionSession::parametersChanged, this,
            &MainWindow::onParametersChanged);
    connect(m_session, &AttentionSession::resultChanged, this, &MainWindow::onResult);
    // The view state session files keep (viewState): a change is compared with the saved one
    // (the title's asterisk, the question on quitting). What a result changes in the views
    // (connected before this) is settled, not taken for an edit.
    SessionController *document = m_sessionController;
    const auto viewChanged = [document] { document->viewStateChanged(); };
    connect(m_heatmap, &HeatmapWidget::viewStateChanged, document, viewChanged);
    connect(m_views->compareView(), &CompareView::stateChanged, document, viewChanged);
    connect(m_views->tokensView(), &TokensView::stateChanged, document, viewChanged);
    connect(m_views->stepsView(), &StepsView::headChanged, document, viewChanged);
    connect(m_views->stepsView(), &StepsView::stateChanged, document, viewChanged);
    connect(m_views->longMapView(), &LongMapView::stateChanged, document, viewChanged);
    connect(m_play, &PlayPanel::settingsChanged, document, viewChanged);
    connect(m_session, &AttentionSession::resultChanged, document,
            &SessionController::viewStateSettled);
    // The per-row metrics follow what the heatmaps show (trimmed padding: real tokens only).
    connect(m_heatmap, &HeatmapWidget::shownResultChanged, m_charts->rowMetrics(),
            &RowMetricsChart::setResult);
    connect(m_session, &AttentionSession::computeFailed, this, &MainWindow::onComputeFailed);
    connect(m_session, &AttentionSession::busyChanged, this, [this](bool busy) {
        m_status->setBusy(busy);
        // A refusal shown before is no longer the last word: the newer parameters are computing.
        if (busy && statusBar()->currentMessage().startsWith(notComputedPrefix()))
            statusBar()->showMessage(tr("Computing the new parameters…"));
        m_heatmap->setComputing(busy); // a banner when it takes a while
    });

    // Clicking a tile enlarges it (and selects its rows in the metrics chart); clicking the
    // enlarged tile goes back to the grid.
    connect(m_heatmap, &HeatmapWidget::tileActivated, this, [this](int head) {
        const auto r = m_session->result();
        if (r && head >= 0 && head < int(r->metrics.size()))
            m_charts->rowMetrics()->setHead(head);
        if (m_heatmap->isSingleHead())
            m_heatmap->showGrid();
        else
            m_heatmap->showSingleHead(head);
    });
    // A thumbnail of the Model tab: that layer's heads in the Heads view, that head enlarged.
    connect(m_views, &AttentionViews::thumbnailRequested, this, [this](int layer, int head) {
        m_tensors->setLayer(layer);
        const SessionParameters &p = m_session->parameters();
        if (p.tensors && p.tensors->longOnly()) { // no view holds a layer: the Long tab's tiles
            m_views->longMapView()->setHead(head);
            m_views->setCurrentIndex(AttentionViews::LongTab);
            return;
        }
        m_heatmap->showSingleHead(head);
        m_charts->rowMetrics()->setHead(head);
        m_views->stepsView()->setHead(head);
        m_views->tokensView()->setTextHead(head);
        m_views->setCurrentIndex(AttentionViews::HeadsTab);
    });
}

void MainWindow::onParametersChanged(const SessionParameters &params)
{
    m_controls->setParameters(params);
    m_charts->setParameters(params);
    m_play->setHeads(int(params.heads)); // d_k's range in the Play dock
}

void MainWindow::onResult(std::shared_ptr<const SessionResult> result)
{
    if (!result)
        return;
    if (!result->ok()) {
        onComputeFailed(result->error);
        return;
    }
    statusBar()->clearMessage();
    m_heatmap->setNotice(QString()); // a refusal shown before is over: this result is current
    m_heatmap->setResult(result); // and, through shownResultChanged, the row metrics chart
    m_status->showResult(*result);
}

void MainWindow::onComputeFailed(const QString &message)
{
    // Parameters that fail validation leave the session as it was: show its parameters again.
    // Parameters refused by the computation (over the memory budget) stay the session's, while
    // the heatmaps and Steps keep the previous result: a banner over the heatmaps says so until
    // a later change computes (onResult), and the status bar keeps the whole message.
    const SessionParameters &wanted = m_session->parameters();
    m_controls->setParameters(wanted);
    const QString full = notComputedPrefix() + message;
    statusBar()->showMessage(full);
    const auto shown = m_session->result();
    if (!shown || !shown->ok() || shown->params == wanted) {
        m_heatmap->setNotice(QString());
        return;
    }
    m_heatmap->setNotice(StatusBarText::notComputedNotice(wanted, shown->params, full), full);
}

void MainWindow::resetLayout()
{
    m_presentation->leave();
    m_menus->leaveFullScreen();
    m_modes->setCurrentIndex(0); // the docks belong to the attention mode
    m_layout->reset();
    statusBar()->showMessage(tr("Layout reset to the first-start layout"), 5000);
}

SessionParameters MainWindow::firstLessonParameters()
{
    SessionParameters p;
    p.tokens = {"the", "cat", "sat", "on", "the", "mat", "because", "it", "was", "tired"};
    p.n = Index(p.tokens.size());
    p.dModel = 256;
    p.heads = 1; // one large tile whose every row and column is labelled: d_k = 256
    p.scaleExponent = 0.0; // unscaled: the softmax saturates
    return p;
}

void MainWindow::showFirstLesson()
{
    m_session->setParameters(firstLessonParameters());
    // After the first result, which clears the status bar.
    connect(
        m_session, &AttentionSession::resultChanged, this,
        [this] {
            statusBar()->showMessage(
                tr("d_k = 256, unscaled: rows put nearly all weight on one key. Tick “Scale by "
                   "1/√d_k”."),
                60000);
        },
        Qt::SingleShotConnection);
}

bool MainWindow::openSession(const QString &path)
{
    return m_sessionController->open(path);
}

QJsonObject MainWindow::viewState() const
{
    QJsonObject state = m_views->state();
    state.insert(QStringLiteral("tabs"), AttentionViews::tabPath(m_modes));
    state.insert(QStringLiteral("training"), m_training->settings().toJson());
    state.insert(QStringLiteral("play"), m_play->settings().toJson());
    return state;
}

void MainWindow::setViewState(const QJsonObject &state)
{
    // The zoom is the session's ("window"), every cell when it names none: a zoom into the
    // previous document's cells does not carry over.
    m_heatmap->resetZoom();
    m_views->setState(state);
    const HeatmapOptions options = m_heatmap->options();
    if (state.value(QLatin1String("heatmap")).isObject() && options.view == HeatmapView::SingleHead
        && options.head < m_session->parameters().heads)
        m_charts->rowMetrics()->setHead(options.head);
    m_viewPanel->syncFromWidget();
    AttentionViews::setTabPath(m_modes, state.value(QLatin1String("tabs")).toArray());
    // Older files have no "training": the tab keeps its settings. Invalid ones are ignored.
    const QJsonValue training = state.value(QLatin1String("training"));
    if (training.isObject())
        m_training->setSettings(
            TrainingSettings::fromJson(training.toObject(), m_training->settings()));
    // Older files have no "play": the dock keeps its settings; a bad value keeps them too.
    const QJsonValue play = state.value(QLatin1String("play"));
    if (play.isObject())
        m_play->setSettings(PlaySettings::fromJson(play.toObject(), m_play->settings()));
}

void MainWindow::stepHead(int step)
{
    const int h = m_session->parameters().heads;
    const int last = h > 1 ? h : h - 1; // h = the mean tile (only when h > 1)
    int position = m_heatmap->isSingleHead() ? std::min(m_heatmap->options().head, last) : -1;
    position += step;
    if (position > last)
        position = -1;
    else if (position < -1)
        position = last;
    if (position < 0) {
        m_heatmap->showGrid();
        return;
    }
    m_heatmap->showSingleHead(position);
    if (position < h)
        m_charts->rowMetrics()->setHead(position);
}

void MainWindow::restoreSettings(QSettings &settings)
{
    m_settingsRestored = true;
    m_sessionController->setPersistRecentFiles(true);
    m_models->setPersistRecentModels(true);
    m_models->restoreSettings(settings);
    m_layout->restoreSettings(settings);
    m_sessionController->restoreSettings(settings);
    // The Play dock's frame size, when it is one the dock takes (64 … 8192 a side).
    const QSize frame = settings.value(playFrameSizeKey).toSize();
    if (frame.width() >= 64 && frame.width() <= 8192 && frame.height() >= 64
        && frame.height() <= 8192)
        m_play->setFrameSize(frame);
}

void MainWindow::saveSettings(QSettings &settings) const
{
    settings.setValue(playFrameSizeKey, m_play->frameSize());
    m_layout->saveSettings(settings);
    m_sessionController->saveSettings(settings);
    m_models->saveSettings(settings);
}

void MainWindow::closeEvent(QCloseEvent *event)
{
    if (!m_sessionController->maybeSave()) {
        event->ignore();
        return;
    }
    if (m_settingsRestored) {
        QSettings settings;
        saveSettings(settings);
    }
    QMainWindow::closeEvent(event);
}

} // namespace attn
