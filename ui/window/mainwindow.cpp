#include "ui/window/mainwindow.h"

#include "ui/charts/experimentfigure.h"
#include "ui/charts/rowmetricschart.h"
#include "ui/charts/scalingchart.h"
#include "ui/charts/scalingsweeprunner.h"
#include "ui/charts/timingchart.h"
#include "ui/document/sessionfile.h"
#include "ui/panels/controlpanel.h"
#include "ui/panels/experimentpage.h"
#include "ui/panels/experimentspanel.h"
#include "ui/panels/heatmapviewpanel.h"
#include "ui/render/heatmaprenderer.h"
#include "ui/session/attentionsession.h"
#include "ui/views/attentionviews.h"
#include "ui/views/compareview.h"
#include "ui/views/figureexport.h"
#include "ui/views/heatmapactions.h"
#include "ui/views/heatmapwidget.h"
#include "ui/views/stepsview.h"
#include "ui/window/recentfiles.h"
#include "ui/window/sessioncontroller.h"
#include "ui/window/tensorcontroller.h"

#include <QAction>
#include <QActionGroup>
#include <QApplication>
#include <QCloseEvent>
#include <QDialog>
#include <QDialogButtonBox>
#include <QDir>
#include <QDockWidget>
#include <QFileDialog>
#include <QFileInfo>
#include <QGuiApplication>
#include <QHeaderView>
#include <QJsonArray>
#include <QKeyEvent>
#include <QKeySequence>
#include <QLabel>
#include <QMenuBar>
#include <QMessageBox>
#include <QResizeEvent>
#include <QScopeGuard>
#include <QScreen>
#include <QScrollArea>
#include <QSettings>
#include <QStandardPaths>
#include <QStatusBar>
#include <QStyle>
#include <QTabWidget>
#include <QTimer>
#include <QTreeWidget>
#include <QVBoxLayout>
#include <QWhatsThis>

#include <cmath>

#ifndef ATTNLAB_VERSION
#define ATTNLAB_VERSION "unknown"
#endif

namespace attn {

namespace {

QString scaleText(const SessionParameters &p, double scale)
{
    QString formula;
    if (p.scaleExponent == 0.5)
        formula = QStringLiteral("1/√d_k");
    else if (p.scaleExponent == 0.0)
        formula = QObject::tr("unscaled");
    else
        formula = QStringLiteral("d_k^−%1").arg(p.scaleExponent, 0, 'g', 3);
    if (p.temperature != 1.0)
        formula += QStringLiteral(" / τ=%1").arg(p.temperature, 0, 'g', 3);
    return QObject::tr("scale %1 = %2").arg(formula).arg(scale, 0, 'g', 4);
}

QString secondsText(double seconds)
{
    if (seconds < 1e-3)
        return QObject::tr("%1 µs").arg(seconds * 1e6, 0, 'f', 0);
    if (seconds < 1.0)
        return QObject::tr("%1 ms").arg(seconds * 1e3, 0, 'f', 1);
    return QObject::tr("%1 s").arg(seconds, 0, 'f', 2);
}

/// `content` in a frameless scroll area that resizes it: the dock can be made narrower or
/// shorter than the content's minimum (scroll bars appear) instead of widening the window.
QScrollArea *scrollable(QWidget *content)
{
    auto *scroll = new QScrollArea;
    scroll->setObjectName(content->objectName() + QStringLiteral("Scroll"));
    scroll->setWidget(content);
    scroll->setWidgetResizable(true);
    scroll->setFrameShape(QFrame::NoFrame);
    return scroll;
}

} // namespace

MainWindow::MainWindow(QWidget *parent)
    : QMainWindow(parent)
{
    setObjectName(QStringLiteral("MainWindow"));
    setWindowTitle(tr("Attention Lab"));
    setDockOptions(QMainWindow::AnimatedDocks | QMainWindow::AllowTabbedDocks
                   | QMainWindow::AllowNestedDocks);

    m_session = new AttentionSession(this);
    m_sweepRunner = new ScalingSweepRunner(this);

    // Two modes in the centre: the attention view (heatmaps, with the control and chart docks
    // around it) and the experiments E1–E16, which get the whole window.
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
    m_modes->addTab(m_experiments, tr("Experiments E1–E16"));
    m_modes->setTabToolTip(0,
                           tr("Heatmaps of the current parameters, with the controls and live "
                              "charts (Ctrl+1)"));
    m_modes->setTabToolTip(1,
                           tr("The twelve experiments of Attention Lab, each with its "
                              "parameters, table, figure and note (Ctrl+2)"));
    // The pages' own minimum sizes (the A/B strip, an experiment's figure) must not make the
    // window wider than the screen: the centre's minimum is fixed, the docks scroll.
    m_modes->setMinimumSize(360, 300);
    setCentralWidget(m_modes);

    createDocks();
    createActions();
    createMenus();
    createStatusBar();
    connectSession();

    fitToScreen(); // restoreSettings may replace it with the saved geometry
    // View → Reset Layout goes back to this (the sizes are applyDefaultDockSizes').
    m_defaultLayout = saveState();
    // A focused line edit or spin box must not swallow Ctrl+E, F5, Ctrl+K … (eventFilter).
    qApp->installEventFilter(this);

    // First result for the default parameters.
    m_controls->setParameters(m_session->parameters());
    onParametersChanged(m_session->parameters());
    m_session->recompute();
}

MainWindow::~MainWindow()
{
    // Focus changes while the children are destroyed must not reach updateExportAction.
    disconnect(qApp, nullptr, this, nullptr);
    qApp->removeEventFilter(this);
}

QSize MainWindow::sizeHint() const
{
    QSize size(1500, 950);
    const QScreen *s = isVisible() && screen() ? screen() : QGuiApplication::primaryScreen();
    if (s) {
        const QRect available = s->availableGeometry();
        size = size.boundedTo(QSize(available.width() * 9 / 10, available.height() * 9 / 10));
    }
    return size;
}

void MainWindow::fitToScreen()
{
    const QScreen *s = isVisible() && screen() ? screen() : QGuiApplication::primaryScreen();
    resize(sizeHint());
    if (s) {
        QRect r(QPoint(0, 0), size());
        r.moveCenter(s->availableGeometry().center());
        move(r.topLeft());
    }
}

void MainWindow::clampToScreen()
{
    if (isMaximized() || isFullScreen())
        return;
    const QRect frame = frameGeometry();
    QScreen *s = QGuiApplication::screenAt(frame.center());
    if (!s)
        s = QGuiApplication::primaryScreen();
    if (!s)
        return;
    const QRect available = s->availableGeometry();
    // The frame (title bar, borders) counts: the client size shrinks by the same amount.
    const QSize decoration = frame.size() - size();
    const QSize client = size().boundedTo(available.size() - decoration);
    if (client != size())
        resize(client);
    QRect r(frame.topLeft(), client + decoration);
    if (r.right() > available.right())
        r.moveRight(available.right());
    if (r.bottom() > available.bottom())
        r.moveBottom(available.bottom());
    if (r.left() < available.left())
        r.moveLeft(available.left());
    if (r.top() < available.top())
        r.moveTop(available.top());
    if (r.topLeft() != frame.topLeft())
        move(r.topLeft());
}

void MainWindow::showEvent(QShowEvent *event)
{
    QMainWindow::showEvent(event);
    if (m_clampOnShow) {
        m_clampOnShow = false;
        clampToScreen();
    }
    if (m_initialSizes) {
        // Dock sizes only stick once the window has its real size.
        applyDefaultDockSizes();
        m_initialSizes = false;
    }
}

QDockWidget *MainWindow::addDock(QWidget *widget, const QString &title, const QString &objectName,
                                 Qt::DockWidgetArea area)
{
    auto *dock = new QDockWidget(title, this);
    dock->setObjectName(objectName);
    dock->setWidget(widget);
    dock->setFeatures(QDockWidget::DockWidgetClosable | QDockWidget::DockWidgetMovable
                      | QDockWidget::DockWidgetFloatable);
    addDockWidget(area, dock);
    m_docks.append(dock);
    return dock;
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
    addDock(scroll, tr("Controls"), QStringLiteral("controlsDock"), Qt::LeftDockWidgetArea);
    // How the heads heatmaps are drawn: colormap, scale, range, pooling, zoom, trim padding,
    // hidden keys (ui/panels/heatmapviewpanel.h).
    m_viewPanel = new HeatmapViewPanel(m_heatmap);
    m_viewPanel->setObjectName(QStringLiteral("heatmapViewPanel"));
    addDock(scrollable(m_viewPanel), tr("Heatmap view"), QStringLiteral("heatmapViewDock"),
            Qt::LeftDockWidgetArea);
    // File → Open Tensors…: layer/head selectors and token labels, shown while tensors are loaded.
    m_tensors = new TensorController(m_session, m_heatmap, this);
    m_tensors->setDock(addDock(m_tensors->panel(), tr("Tensors"), QStringLiteral("tensorsDock"),
                               Qt::LeftDockWidgetArea));

    // Right column: the live charts stacked (E2 sweep, then per-row metrics), with the
    // on-demand timing panel as a tab behind the per-row metrics. The heatmaps keep the whole
    // height of the centre.
    m_maxWeightChart = new MaxWeightChart;
    m_jacobianChart = new JacobianNormChart;
    m_rowMetricsChart = new RowMetricsChart;
    m_timingChart = new TimingChart;
    m_charts = {m_maxWeightChart, m_jacobianChart, m_rowMetricsChart, m_timingChart};
    // Each chart scrolls inside its dock when the dock is smaller than the chart's minimum.
    QDockWidget *maxDock = addDock(scrollable(m_maxWeightChart), tr("Max weight vs d_k"),
                                   QStringLiteral("maxWeightDock"), Qt::RightDockWidgetArea);
    QDockWidget *jacDock = addDock(scrollable(m_jacobianChart), tr("Jacobian norm vs d_k"),
                                   QStringLiteral("jacobianDock"), Qt::RightDockWidgetArea);
    QDockWidget *rowDock = addDock(scrollable(m_rowMetricsChart), tr("Per-row metrics"),
                                   QStringLiteral("rowMetricsDock"), Qt::RightDockWidgetArea);
    QDockWidget *timingDock = addDock(scrollable(m_timingChart), tr("Timing: what n² costs"),
                                      QStringLiteral("timingDock"), Qt::RightDockWidgetArea);
    tabifyDockWidget(rowDock, timingDock);
    rowDock->raise();
    // A short screen (e.g. 1600 × 900, 1280 × 800): the two sweep charts share a place as tabs, so
    // each chart keeps a readable height.
    const bool shortScreen = sizeHint().height() < 900;
    if (shortScreen) {
        tabifyDockWidget(maxDock, jacDock);
        maxDock->raise();
    }
    m_maxDock = maxDock;
    m_jacobianDock = jacDock;
    m_rowDock = rowDock;
    m_shortScreen = shortScreen;
}

int MainWindow::defaultControlsWidth(int windowWidth) const
{
    // 330 | centre | 520 pixels on a large screen; on a smaller one the side columns shrink
    // with the window (left: room for the controls when it can), the centre keeps at least
    // about 41 % of the width.
    const int scrollBar = style()->pixelMetric(QStyle::PM_ScrollBarExtent) + 4;
    const int wantLeft
        = std::max(m_controls->minimumSizeHint().width(), m_viewPanel->minimumSizeHint().width())
        + scrollBar;
    return std::min(std::max(330, wantLeft), windowWidth * 28 / 100);
}

void MainWindow::applyDefaultDockSizes()
{
    const int w = width();
    resizeDocks({m_docks.constFirst()}, {defaultControlsWidth(w)}, Qt::Horizontal);
    resizeDocks({m_maxDock}, {std::min(520, w * 31 / 100)}, Qt::Horizontal);
    const int h = height();
    if (m_shortScreen)
        resizeDocks({m_maxDock, m_rowDock}, {h * 45 / 100, h * 55 / 100}, Qt::Vertical);
    else
        resizeDocks({m_maxDock, m_jacobianDock, m_rowDock}, {h * 29 / 95, h * 29 / 95, h * 33 / 95},
                    Qt::Vertical);
}

void MainWindow::resizeEvent(QResizeEvent *event)
{
    QMainWindow::resizeEvent(event);
    const QSize old = event->oldSize();
    const int w = event->size().width();
    // A window made very small squeezes the docks to their minimum; QMainWindow gives all the
    // room of a later enlargement to the centre. On a large enlargement (a quarter wider or
    // more) the side docks get at least their default width back; a width the user chose that
    // is wider stays.
    if (m_initialSizes || !old.isValid() || w < old.width() * 5 / 4)
        return;
    QDockWidget *left = m_docks.constFirst();
    if (left->isVisible() && !left->isFloating() && left->width() < defaultControlsWidth(w))
        resizeDocks({left}, {defaultControlsWidth(w)}, Qt::Horizontal);
    const int right = std::min(520, w * 31 / 100);
    if (m_maxDock->isVisible() && !m_maxDock->isFloating() && m_maxDock->width() < right)
        resizeDocks({m_maxDock}, {right}, Qt::Horizontal);
}

void MainWindow::resetLayout()
{
    if (isFullScreen())
        m_fullScreenAction->setChecked(false); // showNormal()
    if (isMaximized() || isMinimized())
        showNormal();
    m_modes->setCurrentIndex(0); // the docks belong to the attention mode
    m_attentionLayout.clear();
    for (QDockWidget *dock : std::as_const(m_docks))
        dock->setFloating(false);
    restoreState(m_defaultLayout);
    fitToScreen();
    applyDefaultDockSizes();
    // A window manager may apply the new size later: size the docks again once it has.
    QTimer::singleShot(100, this, [this] { applyDefaultDockSizes(); });
    statusBar()->showMessage(tr("Layout reset to the first-start layout"), 5000);
}

bool MainWindow::isWindowShortcut(const QKeySequence &key) const
{
    if (key.count() != 1)
        return false;
    const QKeyCombination combination = key[0];
    const Qt::Key k = combination.key();
    const bool functionKey = k >= Qt::Key_F1 && k <= Qt::Key_F35;
    if (!functionKey
        && !(combination.keyboardModifiers()
             & (Qt::ControlModifier | Qt::AltModifier | Qt::MetaModifier)))
        return false; // typing: the editor's
    for (const QKeySequence::StandardKey editing :
         {QKeySequence::Undo, QKeySequence::Redo, QKeySequence::Cut, QKeySequence::Copy,
          QKeySequence::Paste, QKeySequence::SelectAll, QKeySequence::Delete}) {
        if (QKeySequence::keyBindings(editing).contains(key))
            return false;
    }
    for (const QAction *a : shortcutActions()) {
        if (a->isEnabled() && a->shortcuts().contains(key))
            return true;
    }
    return false;
}

bool MainWindow::eventFilter(QObject *watched, QEvent *event)
{
    if (event->type() != QEvent::ShortcutOverride || !watched->isWidgetType())
        return QMainWindow::eventFilter(watched, event);
    // Only editors of this window (docks may float: follow the parents, not window()).
    const QObject *o = watched;
    while (o && o != this)
        o = o->parent();
    if (!o)
        return false;
    const auto *key = static_cast<QKeyEvent *>(event);
    if (!isWindowShortcut(QKeySequence(key->keyCombination())))
        return false;
    event->ignore(); // not overridden: the shortcut map triggers the action
    return true;
}

void MainWindow::createActions()
{
    // Sessions and undo: File → Open/Save, Edit → Undo/Redo (ui/window/sessioncontroller.h).
    m_sessionController = new SessionController(m_session, this);
    m_sessionController->trackSliderDrags(m_controls);
    m_sessionController->setTensorController(m_tensors); // sessions save the tensors' file
    m_tensors->setParameterEditor(
        [this](const SessionParameters &p) { m_sessionController->editParameters(p); });
    connect(m_tensors, &TensorController::statusMessage, this,
            [this](const QString &text) { statusBar()->showMessage(text, 10000); });
    m_sessionController->setViewStateHandlers([this] { return viewState(); },
                                              [this](const QJsonObject &s) { setViewState(s); });
    connect(m_sessionController, &SessionController::statusMessage, this,
            [this](const QString &text) { statusBar()->showMessage(text, 10000); });

    // File → Export Heatmaps at Size/DPI / Each Head / Data, View → Zoom (heatmapactions.h).
    m_heatmapActions = new HeatmapActions(m_heatmap, this);
    connect(m_heatmapActions, &HeatmapActions::message, this,
            [this](const QString &text) { statusBar()->showMessage(text, 10000); });

    // File → Export: the current view (heads, steps, A/B, the focused chart, the experiment's
    // figure); its text names what it exports (updateExportAction).
    m_exportAction = new QAction(tr("&Export Heatmap Grid…"), this);
    m_exportAction->setObjectName(QStringLiteral("exportAction"));
    m_exportAction->setShortcut(QKeySequence(tr("Ctrl+E")));
    m_exportAction->setIcon(QIcon::fromTheme(QStringLiteral("document-export")));
    connect(m_exportAction, &QAction::triggered, this, &MainWindow::exportCurrentViewInteractive);

    m_quitAction = new QAction(tr("&Quit"), this);
    m_quitAction->setShortcut(QKeySequence::Quit);
    if (m_quitAction->shortcut().isEmpty())
        m_quitAction->setShortcut(QKeySequence(tr("Ctrl+Q")));
    m_quitAction->setStatusTip(tr("Quit Attention Lab"));
    m_quitAction->setIcon(QIcon::fromTheme(QStringLiteral("application-exit")));
    connect(m_quitAction, &QAction::triggered, this, &QWidget::close);

    m_recomputeAction = new QAction(tr("&Recompute"), this);
    m_recomputeAction->setShortcut(QKeySequence(Qt::Key_F5));
    m_recomputeAction->setStatusTip(tr("Compute the heatmaps again with the current parameters"));
    connect(m_recomputeAction, &QAction::triggered, m_session, &AttentionSession::recompute);

    m_nextSeedAction = new QAction(tr("&New Seed"), this);
    m_nextSeedAction->setShortcut(QKeySequence(tr("Ctrl+R")));
    m_nextSeedAction->setStatusTip(tr("Draw new random inputs and weights (seed + 1)"));
    connect(m_nextSeedAction, &QAction::triggered, m_controls, &ControlPanel::nextSeed);

    m_toggleScaleAction = new QAction(tr("Toggle 1/√d_k &Scale"), this);
    m_toggleScaleAction->setShortcut(QKeySequence(tr("Ctrl+K")));
    m_toggleScaleAction->setStatusTip(tr("Switch between the paper's 1/√d_k scale and unscaled "
                                         "scores"));
    connect(m_toggleScaleAction, &QAction::triggered, m_controls, &ControlPanel::toggleScaled);

    m_cycleMaskAction = new QAction(tr("Next &Mask"), this);
    m_cycleMaskAction->setShortcut(QKeySequence(tr("Ctrl+M")));
    m_cycleMaskAction->setStatusTip(tr("Cycle the mask: none → causal → key padding"));
    connect(m_cycleMaskAction, &QAction::triggered, m_controls, &ControlPanel::cycleMask);

    m_doubleDkAction = new QAction(tr("&Double d_k"), this);
    m_doubleDkAction->setShortcut(QKeySequence(tr("Ctrl+]")));
    m_doubleDkAction->setStatusTip(tr("d_k × 2 (d_model = d_k · h)"));
    connect(m_doubleDkAction, &QAction::triggered, this, [this] { m_controls->multiplyDk(2.0); });

    m_halveDkAction = new QAction(tr("&Halve d_k"), this);
    m_halveDkAction->setShortcut(QKeySequence(tr("Ctrl+[")));
    m_halveDkAction->setStatusTip(tr("d_k ÷ 2 (d_model = d_k · h)"));
    connect(m_halveDkAction, &QAction::triggered, this, [this] { m_controls->multiplyDk(0.5); });

    m_runTimingAction = new QAction(tr("Run &Timing"), this);
    m_runTimingAction->setShortcut(QKeySequence(tr("Ctrl+T")));
    m_runTimingAction->setStatusTip(tr("Measure time and memory vs n of the three kernels (E8)"));
    connect(m_runTimingAction, &QAction::triggered, m_timingChart, &TimingChart::run);

    m_cancelTimingAction = new QAction(tr("&Cancel Timing"), this);
    m_cancelTimingAction->setShortcut(QKeySequence(tr("Ctrl+Shift+T")));
    m_cancelTimingAction->setStatusTip(tr("Stop a running timing measurement"));
    m_cancelTimingAction->setEnabled(false);
    connect(m_cancelTimingAction, &QAction::triggered, m_timingChart, &TimingChart::cancel);
    connect(m_timingChart, &TimingChart::runningChanged, this, [this](bool running) {
        m_runTimingAction->setEnabled(!running);
        m_cancelTimingAction->setEnabled(running);
    });

    m_showGridAction = new QAction(tr("Show &All Heads"), this);
    m_showGridAction->setShortcut(QKeySequence(tr("Ctrl+G")));
    m_showGridAction->setStatusTip(tr("Back to the grid of all heads after enlarging one"));
    connect(m_showGridAction, &QAction::triggered, m_heatmap, &HeatmapWidget::showGrid);

    m_nextHeadAction = new QAction(tr("&Next Head"), this);
    m_nextHeadAction->setObjectName(QStringLiteral("nextHeadAction"));
    m_nextHeadAction->setShortcut(QKeySequence(tr("Ctrl+PgDown")));
    m_nextHeadAction->setStatusTip(tr("Enlarge the next head (after the last: the mean, then "
                                      "the grid)"));
    connect(m_nextHeadAction, &QAction::triggered, this, [this] { stepHead(1); });
    m_previousHeadAction = new QAction(tr("&Previous Head"), this);
    m_previousHeadAction->setObjectName(QStringLiteral("previousHeadAction"));
    m_previousHeadAction->setShortcut(QKeySequence(tr("Ctrl+PgUp")));
    m_previousHeadAction->setStatusTip(tr("Enlarge the previous head"));
    connect(m_previousHeadAction, &QAction::triggered, this, [this] { stepHead(-1); });

    m_attentionModeAction = new QAction(tr("&Attention View"), this);
    m_attentionModeAction->setShortcut(QKeySequence(tr("Ctrl+1")));
    m_attentionModeAction->setStatusTip(tr("Heatmaps, controls and live charts"));
    m_experimentsModeAction = new QAction(tr("E&xperiments E1–E16"), this);
    m_experimentsModeAction->setShortcut(QKeySequence(tr("Ctrl+2")));
    m_experimentsModeAction->setStatusTip(tr("The twelve experiments, using the whole window"));
    auto *modes = new QActionGroup(this);
    for (QAction *a : {m_attentionModeAction, m_experimentsModeAction}) {
        a->setCheckable(true);
        modes->addAction(a);
    }
    m_attentionModeAction->setChecked(true);
    connect(m_attentionModeAction, &QAction::triggered, this,
            [this] { m_modes->setCurrentIndex(0); });
    connect(m_experimentsModeAction, &QAction::triggered, this,
            [this] { m_modes->setCurrentIndex(1); });
    connect(m_modes, &QTabWidget::currentChanged, this, &MainWindow::onModeChanged);
    // File → Export names the view it exports.
    connect(m_modes, &QTabWidget::currentChanged, this, &MainWindow::updateExportAction);
    connect(m_views, &QTabWidget::currentChanged, this, [this] {
        // A chart keeping the focus would stay the export target after a tab switch.
        if (focusedChart())
            m_views->currentWidget()->setFocus(Qt::OtherFocusReason);
        updateExportAction();
    });
    connect(m_heatmap, &HeatmapWidget::optionsChanged, this, &MainWindow::updateExportAction);
    connect(m_experiments, &ExperimentsPanel::currentExperimentChanged, this,
            &MainWindow::updateExportAction);
    connect(qApp, &QApplication::focusChanged, this, &MainWindow::updateExportAction);
    updateExportAction();

    m_resetLayoutAction = new QAction(tr("&Reset Layout"), this);
    m_resetLayoutAction->setObjectName(QStringLiteral("resetLayoutAction"));
    m_resetLayoutAction->setStatusTip(tr("Put every panel back where a first start puts it and "
                                         "give the window its first-start size"));
    connect(m_resetLayoutAction, &QAction::triggered, this, &MainWindow::resetLayout);

    m_fullScreenAction = new QAction(tr("&Full Screen"), this);
    m_fullScreenAction->setShortcut(QKeySequence::FullScreen);
    if (m_fullScreenAction->shortcut().isEmpty())
        m_fullScreenAction->setShortcut(QKeySequence(Qt::Key_F11));
    m_fullScreenAction->setCheckable(true);
    connect(m_fullScreenAction, &QAction::toggled, this, [this](bool on) {
        if (on)
            showFullScreen();
        else
            showNormal();
    });

    m_shortcutsAction = new QAction(tr("&Keyboard Shortcuts"), this);
    m_shortcutsAction->setShortcut(QKeySequence(Qt::Key_F1));
    connect(m_shortcutsAction, &QAction::triggered, this, &MainWindow::showKeyboardShortcuts);

    m_whatsThisAction = QWhatsThis::createAction(this);
    m_whatsThisAction->setShortcut(QKeySequence(Qt::SHIFT | Qt::Key_F1));

    m_aboutAction = new QAction(tr("&About Attention Lab"), this);
    connect(m_aboutAction, &QAction::triggered, this, &MainWindow::showAbout);
    m_aboutQtAction = new QAction(tr("About &Qt"), this);
    connect(m_aboutQtAction, &QAction::triggered, qApp, &QApplication::aboutQt);
}

void MainWindow::createMenus()
{
    QMenu *file = menuBar()->addMenu(tr("&File"));
    file->addAction(m_sessionController->openAction());
    file->addMenu(m_sessionController->recentFiles()->menu());
    file->addSeparator();
    file->addAction(m_tensors->openAction());
    file->addAction(m_tensors->backAction());
    file->addSeparator();
    file->addAction(m_sessionController->saveAction());
    file->addAction(m_sessionController->saveAsAction());
    file->addSeparator();
    file->addAction(m_exportAction);
    file->addActions(m_heatmapActions->fileActions());
    file->addAction(m_tensors->exportAction());
    file->addSeparator();
    file->addAction(m_quitAction);

    QMenu *params = menuBar()->addMenu(tr("&Edit"));
    params->addAction(m_sessionController->undoAction());
    params->addAction(m_sessionController->redoAction());
    params->addSeparator();
    params->addAction(m_toggleScaleAction);
    params->addAction(m_cycleMaskAction);
    params->addAction(m_doubleDkAction);
    params->addAction(m_halveDkAction);
    params->addAction(m_nextSeedAction);
    params->addSeparator();
    params->addAction(m_recomputeAction);
    params->addSeparator();
    params->addAction(m_runTimingAction);
    params->addAction(m_cancelTimingAction);

    QMenu *view = menuBar()->addMenu(tr("&View"));
    view->addAction(m_attentionModeAction);
    view->addAction(m_experimentsModeAction);
    view->addSeparator();
    // The attention mode's tabs (Ctrl+Alt+1 … 3); from the experiments they also switch back.
    for (QAction *a : m_views->tabActions()) {
        view->addAction(a);
        connect(a, &QAction::triggered, this, [this] { m_modes->setCurrentIndex(0); });
    }
    view->addSeparator();
    view->addAction(m_showGridAction);
    view->addActions(m_heatmapActions->viewActions());
    view->addAction(m_nextHeadAction);
    view->addAction(m_previousHeadAction);
    view->addSeparator();
    int index = 1;
    for (QDockWidget *dock : std::as_const(m_docks)) {
        QAction *toggle = dock->toggleViewAction();
        if (index <= 9)
            toggle->setShortcut(QKeySequence(tr("Alt+%1").arg(index)));
        toggle->setStatusTip(tr("Show or hide the %1 panel").arg(dock->windowTitle()));
        view->addAction(toggle);
        ++index;
    }
    view->addSeparator();
    view->addAction(m_resetLayoutAction);
    view->addAction(m_fullScreenAction);

    QMenu *help = menuBar()->addMenu(tr("&Help"));
    help->addAction(m_shortcutsAction);
    help->addAction(m_whatsThisAction);
    help->addSeparator();
    help->addAction(m_aboutAction);
    help->addAction(m_aboutQtAction);
}

void MainWindow::createStatusBar()
{
    auto makeLabel = [this](const QString &name, const QString &tip) {
        auto *label = new QLabel(this);
        label->setObjectName(name);
        label->setToolTip(tip);
        label->setContentsMargins(6, 0, 6, 0);
        statusBar()->addPermanentWidget(label);
        return label;
    };
    statusBar()->addPermanentWidget(m_tensors->statusLabel()); // "loaded: file.npz"
    m_nonFiniteStatus = makeLabel(QStringLiteral("nonFiniteStatus"),
                                  tr("NaN or Inf values were found in the weights: they are "
                                     "shown, never hidden"));
    m_nonFiniteStatus->setStyleSheet(QStringLiteral(
        "QLabel { background: #d62728; color: white; font-weight: bold; border-radius: 3px; }"));
    m_nonFiniteStatus->hide();
    m_busyStatus = makeLabel(QStringLiteral("busyStatus"),
                             tr("Shown while the worker thread computes a newer result"));
    m_dkStatus = makeLabel(QStringLiteral("dkStatus"), tr("Head dimension d_k = d_model / h"));
    m_scaleStatus = makeLabel(QStringLiteral("scaleStatus"),
                              tr("The factor the scores Q Kᵀ are multiplied by"));
    m_rowSumStatus = makeLabel(QStringLiteral("rowSumStatus"),
                               tr("Largest |Σ_j w_ij − 1| over every head and row (rounding "
                                  "error; fully masked rows excluded)"));
    m_timeStatus = makeLabel(QStringLiteral("timeStatus"),
                             tr("Wall time of the last computation (worker thread)"));
    statusBar()->showMessage(tr("Computing…"));
}

void MainWindow::connectSession()
{
    connect(m_controls, &ControlPanel::parametersEdited, m_sessionController,
            &SessionController::editParameters);
    connect(m_session, &AttentionSession::parametersChanged, this,
            &MainWindow::onParametersChanged);
    connect(m_session, &AttentionSession::resultChanged, this, &MainWindow::onResult);
    // The per-row metrics follow what the heatmaps show (trimmed padding: real tokens only).
    connect(m_heatmap, &HeatmapWidget::shownResultChanged, m_rowMetricsChart,
            &RowMetricsChart::setResult);
    connect(m_session, &AttentionSession::computeFailed, this, &MainWindow::onComputeFailed);
    connect(m_session, &AttentionSession::busyChanged, this, [this](bool busy) {
        m_busyStatus->setText(busy ? tr("computing…") : QString());
        m_heatmap->setComputing(busy); // a banner when it takes a while
    });

    // Clicking a tile enlarges it (and selects its rows in the metrics chart); clicking the
    // enlarged tile goes back to the grid.
    connect(m_heatmap, &HeatmapWidget::tileActivated, this, [this](int head) {
        const auto r = m_session->result();
        if (r && head >= 0 && head < int(r->metrics.size()))
            m_rowMetricsChart->setHead(head);
        if (m_heatmap->isSingleHead())
            m_heatmap->showGrid();
        else
            m_heatmap->showSingleHead(head);
    });

    connect(m_sweepRunner, &ScalingSweepRunner::finished, this,
            [this](std::shared_ptr<const ScalingSweepData> data) {
                m_maxWeightChart->setSweep(data);
                m_jacobianChart->setSweep(data);
            });
    connect(m_sweepRunner, &ScalingSweepRunner::failed, this, [this](const QString &message) {
        m_maxWeightChart->setErrorText(message);
        m_jacobianChart->setErrorText(message);
    });
    connect(m_sweepRunner, &ScalingSweepRunner::busyChanged, this, [this](bool busy) {
        m_maxWeightChart->setBusy(busy);
        m_jacobianChart->setBusy(busy);
    });
}

void MainWindow::onModeChanged(int index)
{
    const bool experiments = index == 1;
    (experiments ? m_experimentsModeAction : m_attentionModeAction)->setChecked(true);
    if (experiments) {
        // The experiments get the whole window; the attention view's docks come back as they
        // were when switching back.
        m_attentionLayout = saveState();
        for (QDockWidget *dock : std::as_const(m_docks))
            dock->hide();
    } else if (!m_attentionLayout.isEmpty()) {
        restoreState(m_attentionLayout);
        m_attentionLayout.clear();
    }
}

void MainWindow::onParametersChanged(const SessionParameters &params)
{
    m_controls->setParameters(params);
    m_maxWeightChart->setCurrentDk(params.dK());
    m_jacobianChart->setCurrentDk(params.dK());
    // The sweep depends on the key count and the seed only (d_k is its x axis).
    m_sweepRunner->request(params.seed, params.keyCount());
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

    const SessionParameters &p = result->params;
    m_dkStatus->setText(tr("d_k = %1").arg(p.dK()));
    m_scaleStatus->setText(scaleText(p, result->scale));
    m_rowSumStatus->setText(tr("worst |Σw − 1| = %1").arg(result->worstRowSumError, 0, 'g', 2));
    m_timeStatus->setText(tr("computed in %1").arg(secondsText(result->computeSeconds)));
    if (p.tensors && p.tensors->isWeights()) { // loaded weights: no d_k, nothing recomputed
        m_dkStatus->setText(tr("stored weights"));
        m_scaleStatus->setText(tr("not recomputed"));
    }

    const NonFiniteReport &nf = result->nonFinite;
    if (nf.found) {
        m_nonFiniteStatus->setText(tr("⚠ NaN/Inf in weights: %1 NaN, %2 Inf, first at (i = %3, "
                                      "j = %4)")
                                       .arg(nf.nanCount)
                                       .arg(nf.infCount)
                                       .arg(nf.row)
                                       .arg(nf.col));
        m_nonFiniteStatus->show();
    } else {
        m_nonFiniteStatus->hide();
    }
}

void MainWindow::onComputeFailed(const QString &message)
{
    // Parameters that fail validation leave the session as it was: show its parameters again.
    // Parameters refused by the computation (over the memory budget) stay the session's, while
    // the heatmaps and Steps keep the previous result: a banner over the heatmaps says so until
    // a later change computes (onResult), and the status bar keeps the whole message.
    const SessionParameters &wanted = m_session->parameters();
    m_controls->setParameters(wanted);
    const QString full = tr("Not computed: %1").arg(message);
    statusBar()->showMessage(full);
    const auto shown = m_session->result();
    if (!shown || !shown->ok() || shown->params == wanted) {
        m_heatmap->setNotice(QString());
        return;
    }
    // The sizes that differ, e.g. "h = 4, d_k = 288" against "h = 16, d_k = 72".
    auto brief = [&](const SessionParameters &p, const SessionParameters &other) {
        QStringList parts;
        const bool all = p.queryCount() == other.queryCount() && p.keyCount() == other.keyCount()
            && p.dModel == other.dModel && p.heads == other.heads;
        if (all || p.queryCount() != other.queryCount() || p.keyCount() != other.keyCount()) {
            if (p.kind == AttentionKind::EncoderDecoder)
                parts << tr("n_q = %1, n_k = %2").arg(p.queryCount()).arg(p.keyCount());
            else
                parts << tr("n = %1").arg(p.n);
        }
        if (p.dModel != other.dModel)
            parts << tr("d_model = %1").arg(p.dModel);
        if (all || p.heads != other.heads)
            parts << tr("h = %1").arg(p.heads);
        if (all || p.dK() != other.dK())
            parts << tr("d_k = %1").arg(p.dK());
        return parts.join(QStringLiteral(", "));
    };
    // First line (wrapped): what the heatmaps show; second (elided, whole in the tooltip): why.
    m_heatmap->setNotice(tr("Not computed for %1: the heatmaps and Steps show the previous "
                            "parameters, %2.\n%3")
                             .arg(brief(wanted, shown->params), brief(shown->params, wanted), full),
                         full);
}

QSize MainWindow::defaultExportSize() const
{
    const QSize s = m_heatmap->size();
    return QSize(std::max(800, s.width()), std::max(500, s.height()));
}

bool MainWindow::exportHeatmapGrid(const QString &path, QSize size, qreal dpr, QString *error) const
{
    const auto result = m_session->result();
    if (!result || !result->ok()) {
        if (error)
            *error = tr("There is no computed heatmap to export yet.");
        return false;
    }
    // The grid as the heatmaps show it (colormap, scale, range, trimmed or hidden keys), whole.
    HeatmapRenderer renderer;
    HeatmapOptions options = m_heatmapActions->exportOptions();
    options.view = HeatmapView::Grid;
    options.showMean = true;
    options.window = QRect();
    renderer.setOptions(options);
    const auto shown = m_heatmap->result();
    renderer.setResult(shown && shown->requestId == result->requestId ? shown : result);
    QString message;
    const bool ok = renderer.save(path, size, dpr, &message);
    if (!ok && error)
        *error = message;
    return ok;
}

void MainWindow::exportHeatmapGridInteractive()
{
    if (!m_session->result()) {
        QMessageBox::information(this, tr("Export Heatmap Grid"),
                                 tr("There is no computed heatmap to export yet."));
        return;
    }
    QString dir = QStandardPaths::writableLocation(QStandardPaths::PicturesLocation);
    if (dir.isEmpty() || !QDir(dir).exists())
        dir = QDir::currentPath();
    const QString suggested = QDir(dir).filePath(QStringLiteral("attention-heads.png"));
    QString selectedFilter;
    QString path = QFileDialog::getSaveFileName(
        this, tr("Export Heatmap Grid"), suggested,
        tr("PNG image (*.png);;SVG drawing (*.svg);;PDF document (*.pdf)"), &selectedFilter);
    if (path.isEmpty())
        return;
    if (QFileInfo(path).suffix().isEmpty()) {
        if (selectedFilter.contains(QLatin1String("svg")))
            path += QStringLiteral(".svg");
        else if (selectedFilter.contains(QLatin1String("pdf")))
            path += QStringLiteral(".pdf");
        else
            path += QStringLiteral(".png");
    }
    QString error;
    if (!exportHeatmapGrid(path, defaultExportSize(), 2.0, &error)) {
        QMessageBox::warning(this, tr("Export Heatmap Grid"), error);
        return;
    }
    statusBar()->showMessage(tr("Exported %1").arg(QDir::toNativeSeparators(path)), 6000);
}

QWidget *MainWindow::focusedChart() const
{
    if (m_exportTargetFrozen)
        return m_frozenExportChart;
    const QWidget *focus = QApplication::focusWidget();
    if (!focus || focus->window() != this)
        return nullptr;
    for (QDockWidget *dock : m_docks) {
        if (!dock->isVisible() || !dock->isAncestorOf(focus))
            continue;
        for (QWidget *chart : m_charts) {
            if (dock->isAncestorOf(chart))
                return chart;
        }
    }
    return nullptr;
}

MainWindow::ExportTarget MainWindow::currentExportTarget() const
{
    if (m_exportTargetFrozen)
        return m_frozenExportTarget;
    if (focusedChart())
        return ExportTarget::Chart;
    if (m_modes->currentWidget() == m_experiments)
        return ExportTarget::Experiment;
    switch (m_views->currentIndex()) {
    case AttentionViews::StepsTab:
        return ExportTarget::Steps;
    case AttentionViews::CompareTab:
        return ExportTarget::Compare;
    default:
        return ExportTarget::Heads;
    }
}

QString MainWindow::currentExportName() const
{
    switch (currentExportTarget()) {
    case ExportTarget::Heads: {
        if (!m_heatmap->isSingleHead())
            return tr("Heatmap Grid");
        const int head = m_heatmap->options().head;
        return head >= m_session->parameters().heads ? tr("Mean over Heads")
                                                     : tr("Head %1").arg(head);
    }
    case ExportTarget::Steps:
        return tr("Attention Steps");
    case ExportTarget::Compare:
        return tr("A/B Comparison");
    case ExportTarget::Chart: {
        const QWidget *chart = focusedChart();
        for (QDockWidget *dock : m_docks) {
            if (dock->isAncestorOf(chart))
                return tr("Chart “%1”").arg(dock->windowTitle());
        }
        return tr("Chart");
    }
    case ExportTarget::Experiment:
        return m_experiments->currentExperiment().isEmpty()
            ? tr("Experiment Figure")
            : tr("%1 Figure").arg(m_experiments->currentExperiment());
    }
    return {};
}

QString MainWindow::currentExportFileName() const
{
    switch (currentExportTarget()) {
    case ExportTarget::Heads:
        if (!m_heatmap->isSingleHead())
            return QStringLiteral("attention-heads.png");
        if (m_heatmap->options().head >= m_session->parameters().heads)
            return QStringLiteral("attention-mean.png");
        return QStringLiteral("attention-head%1.png").arg(m_heatmap->options().head);
    case ExportTarget::Steps:
        return QStringLiteral("attention-steps-head%1.png")
            .arg(std::max(m_views->stepsView()->head(), 0));
    case ExportTarget::Compare:
        return QStringLiteral("attention-compare.png");
    case ExportTarget::Chart: {
        // "Max weight vs d_k" → chart-max-weight-vs-d-k.png
        QString slug;
        for (QDockWidget *dock : m_docks) {
            if (!dock->isAncestorOf(focusedChart()))
                continue;
            for (const QChar c : dock->windowTitle().toLower()) {
                if ((c >= QLatin1Char('a') && c <= QLatin1Char('z'))
                    || (c >= QLatin1Char('0') && c <= QLatin1Char('9')))
                    slug += c;
                else if (!slug.endsWith(QLatin1Char('-')))
                    slug += QLatin1Char('-');
            }
        }
        while (slug.endsWith(QLatin1Char('-')))
            slug.chop(1);
        return QStringLiteral("chart-%1.png").arg(slug.isEmpty() ? QStringLiteral("view") : slug);
    }
    case ExportTarget::Experiment:
        return QStringLiteral("%1.png").arg(m_experiments->currentExperiment().toLower());
    }
    return QStringLiteral("attention.png");
}

QSize MainWindow::currentExportSize() const
{
    switch (currentExportTarget()) {
    case ExportTarget::Heads:
        return defaultExportSize();
    case ExportTarget::Steps:
        return m_views->stepsView()->defaultExportSize();
    case ExportTarget::Compare:
        return m_views->compareView()->defaultExportSize();
    case ExportTarget::Chart:
        return focusedChart()->size();
    case ExportTarget::Experiment: {
        const ExperimentPage *page = m_experiments->currentPage();
        return page && page->result() ? defaultExperimentFigureSize(*page->result()) : QSize();
    }
    }
    return {};
}

bool MainWindow::exportCurrentView(const QString &path, QString *error, QSize size, qreal dpr) const
{
    if (size.isEmpty())
        size = currentExportSize();
    const bool png = QFileInfo(path).suffix().toLower() == QLatin1String("png");
    switch (currentExportTarget()) {
    case ExportTarget::Heads:
        // The heatmaps as shown (grid or one head, zoom window, colormap …), white page; a PNG
        // of `size` × `dpr` pixels at 96 × `dpr` dpi looks like the screen, only sharper.
        return png
            ? m_heatmapActions->exportView(path, (QSizeF(size) * dpr).toSize(), 96.0 * dpr, error)
            : m_heatmapActions->exportView(path, size, 96.0, error);
    case ExportTarget::Steps:
        return m_views->stepsView()->exportFigure(path, size, dpr, error);
    case ExportTarget::Compare:
        return m_views->compareView()->exportFigure(path, size, dpr, error);
    case ExportTarget::Chart:
        return exportWidget(focusedChart(), path, size, dpr, error);
    case ExportTarget::Experiment: {
        const ExperimentPage *page = m_experiments->currentPage();
        if (!page) {
            if (error)
                *error = tr("No experiment is selected.");
            return false;
        }
        return page->exportFigure(path, size, error);
    }
    }
    return false;
}

void MainWindow::updateExportAction()
{
    if (!m_exportAction)
        return;
    const QString name = currentExportName();
    m_exportAction->setText(tr("&Export %1…").arg(name));
    m_exportAction->setStatusTip(
        currentExportTarget() == ExportTarget::Experiment
            ? tr("Save the figure of the current experiment as PNG or SVG")
            : tr("Save the current view (%1) as PNG, SVG or PDF; click a chart first to export "
                 "that chart")
                  .arg(name));
}

void MainWindow::exportCurrentViewInteractive()
{
    const QString title = tr("Export %1").arg(currentExportName());
    if (currentExportTarget() == ExportTarget::Heads && !m_session->result()) {
        QMessageBox::information(this, title, tr("There is no computed heatmap to export yet."));
        return;
    }
    // The file dialog takes the focus (from a focused chart): keep the target until it is written.
    m_frozenExportTarget = currentExportTarget();
    m_frozenExportChart = focusedChart();
    m_exportTargetFrozen = true;
    const auto unfreeze = qScopeGuard([this] {
        m_exportTargetFrozen = false;
        m_frozenExportChart = nullptr;
        updateExportAction();
    });
    exportFigureInteractive(
        this, title, currentExportFileName(),
        [this](const QString &path, QString *error) { return exportCurrentView(path, error); });
}

bool MainWindow::openSession(const QString &path)
{
    return m_sessionController->open(path);
}

QJsonObject MainWindow::viewState() const
{
    // The current tab of each nested tab widget of the centre, by object name.
    QJsonArray tabs;
    for (auto *t = m_modes; t;) {
        QWidget *page = t->currentWidget();
        if (!page)
            break;
        tabs.append(page->objectName().isEmpty() ? QStringLiteral("#%1").arg(t->currentIndex())
                                                 : page->objectName());
        t = qobject_cast<QTabWidget *>(page);
    }
    QJsonObject state;
    state.insert(QStringLiteral("tabs"), tabs);
    state.insert(QStringLiteral("heatmap"), heatmapViewToJson(m_heatmap->options()));
    state.insert(QStringLiteral("transform"), viewTransformToJson(m_heatmap->viewTransform()));
    state.insert(QStringLiteral("row_strip"), m_heatmap->isRowStripVisible());
    const QJsonObject compare = m_views->compareView()->state();
    if (!compare.isEmpty()) // B's settings once there are any (A/B view)
        state.insert(QStringLiteral("compare"), compare);
    return state;
}

void MainWindow::setViewState(const QJsonObject &state)
{
    const QJsonValue heatmap = state.value(QLatin1String("heatmap"));
    if (heatmap.isObject()) {
        HeatmapOptions options = m_heatmap->options();
        const HeatmapOptions defaults; // colours and font follow the palette again
        options.background = defaults.background;
        options.foreground = defaults.foreground;
        options.fontPixelSize = defaults.fontPixelSize;
        options = heatmapViewFromJson(heatmap.toObject(), options);
        m_heatmap->setOptions(options);
        if (options.view == HeatmapView::SingleHead && options.head < m_session->parameters().heads)
            m_rowMetricsChart->setHead(options.head);
    }
    const QJsonValue transform = state.value(QLatin1String("transform"));
    if (transform.isObject())
        m_heatmap->setViewTransform(
            viewTransformFromJson(transform.toObject(), m_heatmap->viewTransform()));
    const QJsonValue rowStrip = state.value(QLatin1String("row_strip"));
    if (rowStrip.isBool())
        m_heatmap->setRowStripVisible(rowStrip.toBool());
    m_views->compareView()->setState(state.value(QLatin1String("compare")).toObject());
    m_viewPanel->syncFromWidget();
    QTabWidget *t = m_modes;
    for (const QJsonValue &tab : state.value(QLatin1String("tabs")).toArray()) {
        if (!t)
            break;
        const QString name = tab.toString();
        int index = -1;
        for (int i = 0; i < t->count() && index < 0; ++i) {
            if (t->widget(i)->objectName() == name || QStringLiteral("#%1").arg(i) == name)
                index = i;
        }
        if (index < 0)
            break;
        t->setCurrentIndex(index);
        t = qobject_cast<QTabWidget *>(t->widget(index));
    }
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
        m_rowMetricsChart->setHead(position);
}

void MainWindow::restoreSettings(QSettings &settings)
{
    m_settingsRestored = true;
    m_sessionController->setPersistRecentFiles(true);
    settings.beginGroup(QStringLiteral("window"));
    const QByteArray geometry = settings.value(QStringLiteral("geometry")).toByteArray();
    const QByteArray state = settings.value(QStringLiteral("state")).toByteArray();
    settings.endGroup();
    if (!geometry.isEmpty() && restoreGeometry(geometry)) {
        clampToScreen(); // saved on a larger screen: fit this one
        m_clampOnShow = true; // again once the frame (title bar, borders) is known
    }
    if (!state.isEmpty() && restoreState(state))
        m_initialSizes = false; // the saved dock sizes win over the defaults
    m_sessionController->restoreSettings(settings);
}

void MainWindow::saveSettings(QSettings &settings) const
{
    settings.beginGroup(QStringLiteral("window"));
    settings.setValue(QStringLiteral("geometry"), saveGeometry());
    // In the experiments mode the docks are hidden: keep the attention view's layout.
    settings.setValue(QStringLiteral("state"),
                      m_attentionLayout.isEmpty() ? saveState() : m_attentionLayout);
    settings.endGroup();
    m_sessionController->saveSettings(settings);
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

QList<QAction *> MainWindow::shortcutActions() const
{
    QList<QAction *> actions;
    for (QAction *menuAction : menuBar()->actions()) {
        QMenu *menu = menuAction->menu();
        if (!menu)
            continue;
        for (QAction *a : menu->actions()) {
            if (!a->isSeparator() && !a->shortcut().isEmpty())
                actions.append(a);
        }
    }
    return actions;
}

void MainWindow::showKeyboardShortcuts()
{
    QDialog dialog(this);
    dialog.setWindowTitle(tr("Keyboard Shortcuts"));
    auto *layout = new QVBoxLayout(&dialog);
    auto *tree = new QTreeWidget(&dialog);
    tree->setColumnCount(2);
    tree->setHeaderLabels({tr("Action"), tr("Shortcut")});
    tree->setAlternatingRowColors(true);
    const QList<QAction *> withShortcut = shortcutActions();
    for (QAction *menuAction : menuBar()->actions()) {
        QMenu *menu = menuAction->menu();
        if (!menu)
            continue;
        QString menuName = menuAction->text();
        menuName.remove(QLatin1Char('&'));
        auto *group = new QTreeWidgetItem(tree, {menuName});
        QFont bold = group->font(0);
        bold.setBold(true);
        group->setFont(0, bold);
        group->setFirstColumnSpanned(true);
        for (QAction *a : menu->actions()) {
            if (!withShortcut.contains(a))
                continue;
            QString name = a->text();
            name.remove(QLatin1Char('&'));
            auto *item = new QTreeWidgetItem(
                group, {name, a->shortcut().toString(QKeySequence::NativeText)});
            item->setToolTip(0, a->statusTip());
        }
    }
    auto *mouse = new QTreeWidgetItem(tree, {tr("Heatmaps")});
    QFont bold = mouse->font(0);
    bold.setBold(true);
    mouse->setFont(0, bold);
    mouse->setFirstColumnSpanned(true);
    new QTreeWidgetItem(mouse, {tr("Enlarge a head / back to the grid"), tr("Click a tile")});
    new QTreeWidgetItem(mouse, {tr("Head, query, key, weight and score"), tr("Hover a cell")});
    new QTreeWidgetItem(mouse, {tr("Zoom in / out around the pointer"), tr("Mouse wheel")});
    new QTreeWidgetItem(mouse, {tr("Zoom in / out"), tr("+ / − over the heatmaps")});
    new QTreeWidgetItem(mouse, {tr("Pan a zoomed heatmap"), tr("Drag, or the arrow keys")});
    new QTreeWidgetItem(mouse, {tr("Show every cell again"), tr("0 or Home")});
    tree->expandAll();
    auto *note = new QLabel(tr("In the controls, Alt + the underlined letter moves the focus to "
                               "a control; arrow keys and Page Up/Down move sliders."),
                            &dialog);
    note->setWordWrap(true);
    tree->header()->setSectionResizeMode(0, QHeaderView::ResizeToContents);
    tree->header()->setStretchLastSection(true);
    layout->addWidget(tree);
    layout->addWidget(note);
    auto *buttons = new QDialogButtonBox(QDialogButtonBox::Close, &dialog);
    connect(buttons, &QDialogButtonBox::rejected, &dialog, &QDialog::reject);
    layout->addWidget(buttons);
    dialog.resize(520, 600);
    dialog.exec();
}

void MainWindow::showAbout()
{
    const QString version = QApplication::applicationVersion().isEmpty()
        ? QStringLiteral(ATTNLAB_VERSION)
        : QApplication::applicationVersion();
    QMessageBox::about(
        this, tr("About Attention Lab"),
        tr("<h3>Attention Lab %1</h3>"
           "<p>See and measure scaled dot-product and multi-head attention (Vaswani et al. "
           "2017, “Attention Is All You Need”): per-head heatmaps, the 1/√d_k scale, masks, "
           "positional encoding, and the experiments E1–E16.</p>"
           "<p>Computed with Eigen %2.%3.%4, shown with Qt %5.</p>")
            .arg(version)
            .arg(EIGEN_WORLD_VERSION)
            .arg(EIGEN_MAJOR_VERSION)
            .arg(EIGEN_MINOR_VERSION)
            .arg(QString::fromLatin1(qVersion())));
}

} // namespace attn
