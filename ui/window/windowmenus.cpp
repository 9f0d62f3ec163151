#include "ui/window/windowmenus.h"

#include "ui/charts/timingchart.h"
#include "ui/panels/controlpanel.h"
#include "ui/session/attentionsession.h"
#include "ui/views/attentionviews.h"
#include "ui/views/heatmapactions.h"
#include "ui/views/heatmapwidget.h"
#include "ui/window/exportrouter.h"
#include "ui/window/mainwindow.h"
#include "ui/window/modelcontroller.h"
#include "ui/window/presentationmode.h"
#include "ui/window/recentfiles.h"
#include "ui/window/sessioncontroller.h"
#include "ui/window/shortcuts.h"
#include "ui/window/tensorcontroller.h"
#include "ui/window/tour.h"
#include "ui/window/windowlayout.h"

#include <QAction>
#include <QActionGroup>
#include <QApplication>
#include <QDockWidget>
#include <QMenuBar>
#include <QMessageBox>
#include <QTabWidget>
#include <QWhatsThis>

#include <Eigen/Core>

#ifndef ATTNLAB_VERSION
#define ATTNLAB_VERSION "unknown"
#endif

namespace attn {

WindowMenus::WindowMenus(MainWindow *window, TimingChart *timing)
    : QObject(window)
    , m_window(window)
    , m_timing(timing)
{
    setObjectName(QStringLiteral("windowMenus"));
    ControlPanel *controls = window->controlPanel();
    HeatmapWidget *heatmap = window->heatmapWidget();
    QTabWidget *modes = window->modeTabs();

    m_quit = makeAction(tr("&Quit"), QKeySequence::Quit, tr("Quit Attention Lab"));
    if (m_quit->shortcut().isEmpty())
        m_quit->setShortcut(QKeySequence(tr("Ctrl+Q")));
    m_quit->setIcon(QIcon::fromTheme(QStringLiteral("application-exit")));
    connect(m_quit, &QAction::triggered, window, &QWidget::close);

    QAction *scale = makeAction(tr("Toggle 1/√d_k &Scale"), QKeySequence(tr("Ctrl+K")),
                                tr("Switch between the paper's 1/√d_k scale and unscaled scores"));
    connect(scale, &QAction::triggered, controls, &ControlPanel::toggleScaled);
    QAction *mask = makeAction(tr("Next &Mask"), QKeySequence(tr("Ctrl+M")),
                               tr("Cycle the mask: none → causal → key padding"));
    connect(mask, &QAction::triggered, controls, &ControlPanel::cycleMask);
    QAction *doubleDk = makeAction(tr("&Double d_k"), QKeySequence(tr("Ctrl+]")),
                                   tr("d_k × 2 (d_model = d_k · h)"));
    connect(doubleDk, &QAction::triggered, controls, [controls] { controls->multiplyDk(2.0); });
    QAction *halveDk = makeAction(tr("&Halve d_k"), QKeySequence(tr("Ctrl+[")),
                                  tr("d_k ÷ 2 (d_model = d_k · h)"));
    connect(halveDk, &QAction::triggered, controls, [controls] { controls->multiplyDk(0.5); });
    QAction *seed = makeAction(tr("&New Seed"), QKeySequence(tr("Ctrl+R")),
                               tr("Draw new random inputs and weights (seed + 1)"));
    connect(seed, &QAction::triggered, controls, &ControlPanel::nextSeed);
    QAction *recompute = makeAction(tr("&Recompute"), QKeySequence(Qt::Key_F5),
                                    tr("Compute the heatmaps again with the current parameters"));
    connect(recompute, &QAction::triggered, window->session(), &AttentionSession::recompute);
    QAction *run = makeAction(tr("Run &Timing"), QKeySequence(tr("Ctrl+T")),
                              tr("Measure time and memory vs n of the three kernels (E8)"));
    connect(run, &QAction::triggered, timing, &TimingChart::run);
    QAction *cancel = makeAction(tr("&Cancel Timing"), QKeySequence(tr("Ctrl+Shift+T")),
                                 tr("Stop a running timing measurement"));
    cancel->setEnabled(false);
    connect(cancel, &QAction::triggered, timing, &TimingChart::cancel);
    connect(timing, &TimingChart::runningChanged, this, [run, cancel](bool running) {
        run->setEnabled(!running);
        cancel->setEnabled(running);
    });
    m_editActions
        = {scale, mask, doubleDk, halveDk, seed, nullptr, recompute, nullptr, run, cancel};

    QAction *grid = makeAction(tr("Show &All Heads"), QKeySequence(tr("Ctrl+G")),
                               tr("Back to the grid of all heads after enlarging one"));
    connect(grid, &QAction::triggered, heatmap, &HeatmapWidget::showGrid);
    QAction *next = makeAction(tr("&Next Head"), QKeySequence(tr("Ctrl+PgDown")),
                               tr("Enlarge the next head (after the last: the mean, then the "
                                  "grid)"));
    next->setObjectName(QStringLiteral("nextHeadAction"));
    connect(next, &QAction::triggered, window, [window] { window->stepHead(1); });
    QAction *previous = makeAction(tr("&Previous Head"), QKeySequence(tr("Ctrl+PgUp")),
                                   tr("Enlarge the previous head"));
    previous->setObjectName(QStringLiteral("previousHeadAction"));
    connect(previous, &QAction::triggered, window, [window] { window->stepHead(-1); });
    m_viewActions = {grid};
    m_viewActions << window->heatmapActions()->viewActions() << next << previous;

    m_attentionMode = makeAction(tr("&Attention View"), QKeySequence(tr("Ctrl+1")),
                                 tr("Heatmaps, controls and live charts"));
    m_experimentsMode = makeAction(tr("E&xperiments E1–E20"), QKeySequence(tr("Ctrl+2")),
                                   tr("The twenty experiments, using the whole window"));
    m_trainingMode = makeAction(tr("&Training"), QKeySequence(tr("Ctrl+3")),
                                tr("Train two attention layers side by side (A/B) and watch them "
                                   "learn"));
    auto *modeGroup = new QActionGroup(this);
    for (QAction *a : {m_attentionMode, m_experimentsMode, m_trainingMode}) {
        a->setCheckable(true);
        modeGroup->addAction(a);
    }
    m_attentionMode->setChecked(true);
    connect(m_attentionMode, &QAction::triggered, modes, [modes] { modes->setCurrentIndex(0); });
    connect(m_experimentsMode, &QAction::triggered, modes, [modes] { modes->setCurrentIndex(1); });
    connect(m_trainingMode, &QAction::triggered, modes, [modes] { modes->setCurrentIndex(2); });
    connect(modes, &QTabWidget::currentChanged, this, [this](int index) {
        (index == 1       ? m_experimentsMode
             : index == 2 ? m_trainingMode
                          : m_attentionMode)
            ->setChecked(true);
    });

    m_resetLayout = makeAction(tr("&Reset Layout"), QKeySequence(),
                               tr("Put every panel back where a first start puts it and give "
                                  "the window its first-start size"));
    m_resetLayout->setObjectName(QStringLiteral("resetLayoutAction"));
    connect(m_resetLayout, &QAction::triggered, window, &MainWindow::resetLayout);
    m_fullScreen = makeAction(tr("&Full Screen"), QKeySequence::FullScreen, QString());
    if (m_fullScreen->shortcut().isEmpty())
        m_fullScreen->setShortcut(QKeySequence(Qt::Key_F11));
    m_fullScreen->setCheckable(true);
    connect(m_fullScreen, &QAction::toggled, window, [window](bool on) {
        if (on)
            window->showFullScreen();
        else
            window->showNormal();
    });

    QAction *shortcuts = makeAction(tr("&Keyboard Shortcuts"), QKeySequence(Qt::Key_F1), QString());
    connect(shortcuts, &QAction::triggered, window,
            [window] { window->shortcuts()->showDialog(); });
    QAction *whatsThis = QWhatsThis::createAction(this);
    whatsThis->setShortcut(QKeySequence(Qt::SHIFT | Qt::Key_F1));
    QAction *about = makeAction(tr("&About Attention Lab"), QKeySequence(), QString());
    connect(about, &QAction::triggered, this, &WindowMenus::showAbout);
    QAction *aboutQt = makeAction(tr("About &Qt"), QKeySequence(), QString());
    connect(aboutQt, &QAction::triggered, qApp, &QApplication::aboutQt);
    m_helpActions = {window->tour()->action(), shortcuts, whatsThis, nullptr, about, aboutQt};

    createMenus();
}

QAction *WindowMenus::makeAction(const QString &text, const QKeySequence &shortcut,
                                 const QString &tip)
{
    auto *action = new QAction(text, this);
    if (!shortcut.isEmpty())
        action->setShortcut(shortcut);
    if (!tip.isEmpty())
        action->setStatusTip(tip);
    return action;
}

void WindowMenus::createMenus()
{
    QMenuBar *bar = m_window->menuBar();
    SessionController *sessions = m_window->sessionController();
    TensorController *tensors = m_window->tensorController();
    auto addAll = [](QMenu *menu, const QList<QAction *> &actions) {
        for (QAction *a : actions) {
            if (a)
                menu->addAction(a);
            else
                menu->addSeparator();
        }
    };

    QMenu *file = bar->addMenu(tr("&File"));
    file->addAction(sessions->openAction());
    file->addMenu(sessions->recentFiles()->menu());
    file->addSeparator();
    ModelController *models = m_window->modelController();
    addAll(file, {tensors->openAction(), models->openAction()});
    file->addMenu(models->cacheMenu());
    file->addMenu(models->recentModels()->menu());
    addAll(file,
           {tensors->backAction(), nullptr, sessions->saveAction(), sessions->saveAsAction(),
            nullptr, m_window->exportRouter()->exportAction()});
    file->addActions(m_window->heatmapActions()->fileActions());
    addAll(file, {tensors->exportAction(), nullptr, m_quit});

    QMenu *edit = bar->addMenu(tr("&Edit"));
    addAll(edit, {sessions->undoAction(), sessions->redoAction(), nullptr});
    addAll(edit, m_editActions);

    QMenu *view = bar->addMenu(tr("&View"));
    addAll(view, {m_attentionMode, m_experimentsMode, m_trainingMode, nullptr});
    // The attention mode's tabs (Ctrl+Alt+1 … 4); from the experiments they also switch back.
    QTabWidget *modes = m_window->modeTabs();
    for (QAction *a : m_window->attentionViews()->tabActions()) {
        view->addAction(a);
        connect(a, &QAction::triggered, modes, [modes] { modes->setCurrentIndex(0); });
    }
    view->addSeparator();
    addAll(view, m_viewActions);
    view->addSeparator();
    int index = 1;
    for (QDockWidget *dock : m_window->windowLayout()->docks()) {
        QAction *toggle = dock->toggleViewAction();
        if (index <= 9)
            toggle->setShortcut(QKeySequence(tr("Alt+%1").arg(index)));
        toggle->setStatusTip(tr("Show or hide the %1 panel").arg(dock->windowTitle()));
        view->addAction(toggle);
        ++index;
    }
    addAll(view, {nullptr, m_resetLayout, m_fullScreen, m_window->presentationMode()->action()});

    addAll(bar->addMenu(tr("&Help")), m_helpActions);
}

void WindowMenus::leaveFullScreen()
{
    if (m_window->isFullScreen())
        m_fullScreen->setChecked(false); // showNormal()
}

void WindowMenus::showAbout()
{
    const QString version = QApplication::applicationVersion().isEmpty()
        ? QStringLiteral(ATTNLAB_VERSION)
        : QApplication::applicationVersion();
    QMessageBox::about(
        m_window, tr("About Attention Lab"),
        tr("<h3>Attention Lab %1</h3>"
           "<p>See and measure scaled dot-product and multi-head attention (Vaswani et al. "
           "2017, “Attention Is All You Need”): per-head heatmaps, the 1/√d_k scale, masks, "
           "positional encoding, and the experiments E1–E20.</p>"
           "<p>Computed with Eigen %2.%3.%4, shown with Qt %5.</p>")
            .arg(version)
            .arg(EIGEN_WORLD_VERSION)
            .arg(EIGEN_MAJOR_VERSION)
            .arg(EIGEN_MINOR_VERSION)
            .arg(QString::fromLatin1(qVersion())));
}

} // namespace attn
