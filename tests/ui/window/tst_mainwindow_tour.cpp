// Tests of the main window's guided tour and presentation mode: each tour step
// points at its widget (scrolled into view) and its "Show me" edits the
// session, no callout covers its target or the heatmaps at 1280 × 800, the tour
// starts by itself once on a first start; presentation mode gives the Steps
// view the whole window with larger text and Esc brings the layout back, and it
// enlarges the Vectors strip with its labels a line apart; with the Vectors at
// 1152 × 720 the strip writes its texts whole and the three panels fit (all at
// once when presenting); presenting, the A/B maps are at least as large as in
// the window.

#include "mainwindowtest.h"

#include "ui/render/heatmaprenderer.h"
#include "ui/render/stepsrenderer.h"
#include "ui/views/attentionviews.h"
#include "ui/views/compareview.h"
#include "ui/views/figurecanvas.h"
#include "ui/views/heatmapwidget.h"
#include "ui/views/pipelinestrip.h"
#include "ui/views/stepsview.h"
#include "ui/window/presentationmode.h"
#include "ui/window/tour.h"
#include "ui/window/windowlayout.h"

#include <QAction>
#include <QCheckBox>
#include <QDockWidget>
#include <QFontMetricsF>
#include <QMenu>
#include <QMenuBar>
#include <QPushButton>
#include <QScrollArea>
#include <QScrollBar>
#include <QSettings>
#include <QStatusBar>
#include <QTabBar>
#include <QTemporaryDir>
#include <QTest>

using namespace attn;
using mainwindowtest::ResultPtr;

class TestMainWindowTour : public mainwindowtest::MainWindowTest
{
    Q_OBJECT

private slots:
    void init() { openWindow(); }
    void cleanup() { closeWindow(); }

    void tourStepsPointAtTheirWidgets();
    void tourCalloutsLeaveTheHeatmapsVisible();
    void tourStartsOnceOnFirstStart();
    void presentationModeFillsTheWindow();
    void presentationEnlargesTheVectors();
    void stepsWithVectorsFitTheFirstScreen();
    void presentationEnlargesTheCompareMaps();
};

void TestMainWindowTour::tourStepsPointAtTheirWidgets()
{
    QVERIFY(waitForFirstResult());
    Tour *tour = m_window->tour();
    // A window made here never starts the tour by itself.
    QVERIFY(!tour->isActive());
    QVERIFY(!tour->callout()->isVisible());
    // Help → Guided Tour opens it.
    QMenu *help = nullptr;
    for (QAction *a : m_window->menuBar()->actions()) {
        if (a->menu() && a->text().remove(QLatin1Char('&')) == QLatin1String("Help"))
            help = a->menu();
    }
    QVERIFY(help && help->actions().contains(tour->action()));
    tour->action()->trigger();
    QVERIFY(tour->isActive());
    QVERIFY(tour->callout()->isVisible());

    const QStringList targets = {QStringLiteral("heatmapWidget"), QStringLiteral("sqrtCheck"),
                                 QStringLiteral("dkSlider"),      QStringLiteral("maxWeightDock"),
                                 QStringLiteral("maskCombo"),     QStringLiteral("positionalCheck"),
                                 QStringLiteral("headSortCombo"), QStringLiteral("tokensView"),
                                 QStringLiteral("playPanel"),     QStringLiteral("modelView"),
                                 QStringLiteral("longMapView"),   QStringLiteral("variantCombo"),
                                 QStringLiteral("atlasView"),     QString()};
    QCOMPARE(int(tour->steps().size()), int(targets.size()));
    auto *next = tour->callout()->findChild<QPushButton *>(QStringLiteral("tourNext"));
    auto *back = tour->callout()->findChild<QPushButton *>(QStringLiteral("tourBack"));
    auto *showMe = tour->callout()->findChild<QPushButton *>(QStringLiteral("tourShowMe"));
    QVERIFY(next && back && showMe);
    AttentionSession *session = m_window->session();
    for (int step = 0; step < targets.size(); ++step) {
        QCOMPARE(tour->currentStep(), step);
        QWidget *target = tour->currentTarget();
        QCOMPARE(target ? target->objectName() : QString(), targets[step]);
        if (target) {
            // The target is shown (its tab is the current one, its dock raised).
            QTRY_VERIFY2(target->isVisible(), qPrintable(targets[step]));
            // The outline lies over the target; the callout stays inside the window.
            const QRect r(target->mapTo(m_window.get(), QPoint(0, 0)), target->size());
            QVERIFY(tour->highlight()->geometry().contains(r));
        }
        QVERIFY(m_window->rect().contains(tour->callout()->geometry()));
        QCOMPARE(showMe->isVisibleTo(tour->callout()),
                 bool(tour->steps()[std::size_t(step)].showMe));
        const SessionParameters before = session->parameters();
        if (step == 1) { // "Tick or untick it": the scale toggles (ticked: α = ½)
            QTest::mouseClick(showMe, Qt::LeftButton);
            QCOMPARE(session->parameters().scaleExponent, before.scaleExponent == 0.0 ? 0.5 : 0.0);
        } else if (step == 2) { // "Double d_k (scale off)", whatever step 1 left
            auto *scale = m_window->findChild<QCheckBox *>(QStringLiteral("sqrtCheck"));
            QVERIFY(scale);
            scale->setChecked(true); // as following step 1 from a first start leaves it
            QTRY_VERIFY(session->parameters().scaleExponent != 0.0);
            const Index dK = session->parameters().dK();
            QTest::mouseClick(showMe, Qt::LeftButton);
            QCOMPARE(session->parameters().dK(), 2 * dK);
            QCOMPARE(session->parameters().scaleExponent, 0.0);
        } else if (step == 4) { // "Mask the future"
            QTest::mouseClick(showMe, Qt::LeftButton);
            QCOMPARE(session->parameters().mask, MaskChoice::Causal);
        } else if (step == 5) { // "Add positions"
            QTest::mouseClick(showMe, Qt::LeftButton);
            QVERIFY(session->parameters().positional);
        }
        if (step == 3) { // Back, then forward again
            QTest::mouseClick(back, Qt::LeftButton);
            QCOMPARE(tour->currentStep(), 2);
            QTest::mouseClick(next, Qt::LeftButton);
        }
        QTest::mouseClick(next, Qt::LeftButton);
    }
    QVERIFY(!tour->isActive()); // "Done" on the last step
    QVERIFY(!tour->callout()->isVisible());
    QVERIFY(!tour->highlight()->isVisible());
    // Reopened, Skip ends it at once.
    tour->action()->trigger();
    QCOMPARE(tour->currentStep(), 0);
    QTest::mouseClick(tour->callout()->findChild<QPushButton *>(QStringLiteral("tourSkip")),
                      Qt::LeftButton);
    QVERIFY(!tour->isActive());

    // A step whose control is scrolled out of the Controls panel scrolls it into
    // view, so the outline lands on it (not on whatever took its place).
    m_window->resize(1000, 480);
    auto *controlsDock = m_window->findChild<QDockWidget *>(QStringLiteral("controlsDock"));
    auto *controlsScroll = qobject_cast<QScrollArea *>(controlsDock->widget());
    QVERIFY(controlsScroll);
    QTRY_VERIFY(controlsScroll->verticalScrollBar()->maximum() > 0);
    controlsScroll->verticalScrollBar()->setValue(controlsScroll->verticalScrollBar()->maximum());
    QWidget *sqrtCheck = m_window->findChild<QWidget *>(QStringLiteral("sqrtCheck"));
    const auto inView = [&] {
        const QRect r(sqrtCheck->mapTo(controlsScroll->viewport(), QPoint(0, 0)),
                      sqrtCheck->size());
        return controlsScroll->viewport()->rect().contains(r);
    };
    controlsScroll->verticalScrollBar()->setValue(0);
    if (inView()) // scrolled to the other end, so that it is out of view
        controlsScroll->verticalScrollBar()->setValue(
            controlsScroll->verticalScrollBar()->maximum());
    QVERIFY(!inView());
    tour->action()->trigger();
    tour->next(); // "Turn the scale off": the Scale box
    QCOMPARE(tour->currentTarget(), sqrtCheck);
    QVERIFY(inView());
    tour->finish();
}

void TestMainWindowTour::tourCalloutsLeaveTheHeatmapsVisible()
{
    // At 1280 × 800 no callout covers its target, and a callout about a control
    // outside the attention views leaves them visible (it lay over the heatmap
    // the step talks about); a tall panel (the Play dock's column) may take it
    // over its own bottom part.
    QVERIFY(waitForFirstResult());
    m_window->resize(1280, 800);
    QTRY_COMPARE(m_window->size(), QSize(1280, 800));
    Tour *tour = m_window->tour();
    QWidget *views = m_window->findChild<QWidget *>(QStringLiteral("attentionViews"));
    QVERIFY(views);
    tour->action()->trigger();
    for (int step = 0; step < int(tour->steps().size()); ++step, tour->next()) {
        QCOMPARE(tour->currentStep(), step);
        QWidget *target = tour->currentTarget();
        if (!target)
            continue;
        QTRY_VERIFY(target->isVisible());
        QTest::qWait(20); // the callout follows the target's placement
        const QRect r(target->mapTo(m_window.get(), QPoint(0, 0)), target->size());
        const QRect callout = tour->callout()->geometry();
        const QString name = target->objectName();
        const bool tallPanel = r.width() >= callout.width() && r.height() >= 2 * callout.height();
        QVERIFY2(!callout.intersects(r) || (tallPanel && r.contains(callout)), qPrintable(name));
        const QRect viewsRect(views->mapTo(m_window.get(), QPoint(0, 0)), views->size());
        if (!viewsRect.intersects(r))
            QVERIFY2(!callout.intersects(viewsRect), qPrintable(name));
    }
    tour->finish();
}

void TestMainWindowTour::tourStartsOnceOnFirstStart()
{
    QTemporaryDir dir;
    QSettings settings(dir.filePath(QStringLiteral("attnlab.ini")), QSettings::IniFormat);
    qunsetenv("ATTNLAB_NO_TOUR");
    QVERIFY(Tour::shouldStartAutomatically(settings, false));
    QVERIFY(!Tour::shouldStartAutomatically(settings,
                                            true)); // a file on the command line
    qputenv("ATTNLAB_NO_TOUR", "1");
    QVERIFY(!Tour::shouldStartAutomatically(settings, false));
    qunsetenv("ATTNLAB_NO_TOUR");
    settings.setValue(QLatin1String(Tour::shownKey), true);
    QVERIFY(!Tour::shouldStartAutomatically(settings, false)); // shown once already
}

// View → Presentation Mode (Ctrl+Shift+P) at 1280 × 800: the Steps view takes
// the whole window with larger text, the docks, the menu bar, the status bar
// and the mode tabs hidden; Esc brings back the layout the user had (a closed
// dock stays closed, the others where they were) and the text size. Switching
// modes while presenting keeps the docks hidden until the end.
void TestMainWindowTour::presentationModeFillsTheWindow()
{
    QVERIFY(waitForFirstResult());
    const QSize size(1280, 800);
    m_window->resize(size);
    QTRY_COMPARE(m_window->size(), size);
    auto *timingDock = m_window->findChild<QDockWidget *>(QStringLiteral("timingDock"));
    QVERIFY(timingDock);
    timingDock->toggleViewAction()->trigger(); // the user's own layout: one dock closed
    QTest::qWait(50);
    const QList<QDockWidget *> docks = m_window->findChildren<QDockWidget *>();
    const auto dockState = [&docks] {
        QList<QRect> state; // visible docks' geometry, null for a hidden one
        for (QDockWidget *d : docks)
            state.append(d->isVisible() ? d->geometry() : QRect());
        return state;
    };
    const QList<QRect> before = dockState();
    QVERIFY(!timingDock->isVisible());
    QVERIFY(before.count(QRect()) < before.size() - 2);

    AttentionViews *views = m_window->attentionViews();
    views->setCurrentIndex(AttentionViews::StepsTab);
    StepsView *steps = views->stepsView();
    QTRY_VERIFY(steps->isVisible() && steps->canvas()->width() > 0);
    const QSize stepsBefore = steps->size();
    QVERIFY(stepsBefore.width() < size.width() * 6 / 10); // the centre between the docks
    const int fontBefore = QFontInfo(steps->canvas()->font()).pixelSize();
    const qreal heatmapFontBefore = m_window->heatmapWidget()->renderer().options().fontPixelSize;

    PresentationMode *presentation = m_window->presentationMode();
    QAction *action = presentation->action();
    QCOMPARE(action->shortcut(), QKeySequence(QStringLiteral("Ctrl+Shift+P")));
    QMenu *viewMenu = nullptr;
    for (QAction *a : m_window->menuBar()->actions())
        if (a->menu() && a->text().remove(QLatin1Char('&')) == QLatin1String("View"))
            viewMenu = a->menu();
    QVERIFY(viewMenu && viewMenu->actions().contains(action));

    m_window->activateWindow();
    QVERIFY(QTest::qWaitForWindowActive(m_window.get()));
    QTest::keyClick(steps, Qt::Key_P, Qt::ControlModifier | Qt::ShiftModifier);
    QVERIFY(presentation->isActive());
    QVERIFY(action->isChecked());
    for (QDockWidget *d : docks)
        QVERIFY2(!d->isVisible(), qPrintable(d->objectName()));
    QVERIFY(!m_window->menuBar()->isVisible());
    QVERIFY(!m_window->statusBar()->isVisible());
    QVERIFY(!m_window->modeTabs()->tabBar()->isVisible());
    // The view fills the window (less the Attention tabs' bar) and its text is
    // larger.
    QTRY_VERIFY2(steps->width() >= size.width() - 8, qPrintable(QString::number(steps->width())));
    QVERIFY(steps->height() >= size.height() - 120);
    QVERIFY(QFontInfo(steps->canvas()->font()).pixelSize() >= fontBefore * 1.4);
    QVERIFY(steps->renderer().style().fontPixelSize >= fontBefore * 1.4);
    QVERIFY(m_window->heatmapWidget()->renderer().options().fontPixelSize
            >= heatmapFontBefore * 1.4);
    // The action is the window's too: its shortcut works while the menu bar is
    // hidden.
    QVERIFY(m_window->actions().contains(action));

    QTest::keyClick(steps, Qt::Key_Escape);
    QVERIFY(!presentation->isActive());
    QVERIFY(!action->isChecked());
    QTRY_COMPARE(dockState(), before);
    QVERIFY(!timingDock->isVisible());
    QVERIFY(m_window->menuBar()->isVisible());
    QVERIFY(m_window->statusBar()->isVisible());
    QVERIFY(m_window->modeTabs()->tabBar()->isVisible());
    QCOMPARE(QFontInfo(steps->canvas()->font()).pixelSize(), fontBefore);
    QVERIFY(!m_window->modeTabs()->testAttribute(Qt::WA_SetFont)); // inherits again
    QTRY_COMPARE(steps->size(), stepsBefore);

    // Into the experiments and back while presenting: the docks stay hidden until
    // it ends.
    action->trigger();
    QVERIFY(presentation->isActive());
    m_window->modeTabs()->setCurrentIndex(1);
    m_window->modeTabs()->setCurrentIndex(0);
    for (QDockWidget *d : docks)
        QVERIFY2(!d->isVisible(), qPrintable(d->objectName()));
    action->trigger();
    QVERIFY(!presentation->isActive());
    QTRY_COMPARE(dockState(), before);
    // Left in the experiments: their whole window keeps the docks hidden.
    action->trigger();
    m_window->modeTabs()->setCurrentIndex(1);
    action->trigger();
    for (QDockWidget *d : docks)
        QVERIFY2(!d->isVisible(), qPrintable(d->objectName()));
    m_window->modeTabs()->setCurrentIndex(0);
    QTRY_COMPARE(dockState(), before);
}

namespace {

// The Steps tab with its Vectors strip shown and drawn; null when the strip's panels do not come.
StepsView *showStepsWithVectors(MainWindow *window)
{
    AttentionViews *views = window->attentionViews();
    views->setCurrentIndex(AttentionViews::StepsTab);
    StepsView *steps = views->stepsView();
    if (!QTest::qWaitFor([&] { return steps->isVisible(); }, 5000))
        return nullptr;
    steps->setVectorsShown(true);
    return steps->pipelineStrip()->waitForPanels(attn::test::kWorkTimeoutMs) ? steps : nullptr;
}

} // namespace

// Presentation mode on the Steps tab with its Vectors shown: the strip fills
// its share of the whole window, its panels grow, and its query labels, in the
// larger font, are a line apart (every few rows when the rows are shorter than
// a line), never one over the next.
void TestMainWindowTour::presentationEnlargesTheVectors()
{
    QVERIFY(waitForFirstResult());
    const QSize size(1280, 800);
    m_window->resize(size);
    QTRY_COMPARE(m_window->size(), size);
    StepsView *steps = showStepsWithVectors(m_window.get());
    QVERIFY(steps);
    PipelineStrip *strip = steps->pipelineStrip();
    QTest::qWait(50);
    const int rows = strip->panels().front().image.height();
    QVERIFY(rows >= 8);
    const QRectF before = strip->panelRect(0);
    QVERIFY(!before.isEmpty());

    m_window->presentationMode()->action()->trigger();
    QVERIFY(m_window->presentationMode()->isActive());
    QTRY_VERIFY(strip->width() >= size.width() - 40);
    QTest::qWait(50);
    const qreal line = QFontMetricsF(strip->font()).height();
    const QRectF after = strip->panelRect(0);
    const qreal row = after.height() / rows;
    const int stride = strip->rowLabelStride();
    QVERIFY(stride >= 1);
    QVERIFY2(stride * row >= line - 0.5,
             qPrintable(QStringLiteral("a label every %1 rows of %2 px for a line of %3 px")
                            .arg(stride)
                            .arg(row)
                            .arg(line)));
    QVERIFY2(after.width() > before.width() * 1.3,
             qPrintable(QStringLiteral("%1 → %2 px").arg(before.width()).arg(after.width())));
    // Every panel's title and shape are written whole (q, k and v of one head are
    // narrow maps).
    const QFontMetricsF metrics(strip->font());
    for (int k = 0; k < int(strip->panels().size()); ++k) {
        QVERIFY2(QRectF(strip->rect()).contains(strip->panelRect(k)),
                 qPrintable(QString::number(k)));
        const PipelineStrip::Panel &p = strip->panels()[std::size_t(k)];
        // The title, or where it does not fit its short form ("q"), never elided.
        const QString title = strip->titleFor(p, strip->titleRect(k).width());
        QVERIFY(title == p.title || title == p.shortTitle);
        const qreal text
            = std::max(metrics.horizontalAdvance(title), metrics.horizontalAdvance(p.shape));
        QVERIFY2(strip->titleRect(k).width() >= text,
                 qPrintable(QStringLiteral("%1: %2 px for \"%3\" of %4 px")
                                .arg(k)
                                .arg(strip->titleRect(k).width())
                                .arg(title)
                                .arg(text)));
        QVERIFY(strip->titleRect(k).left() + text <= strip->width());
    }
    m_window->presentationMode()->action()->trigger();
    QVERIFY(!m_window->presentationMode()->isActive());
}

namespace {

// A lecture's layer: ten typed tokens, h = 16 heads of d_model = 512.
SessionParameters lectureParameters()
{
    SessionParameters p = MainWindow::firstLessonParameters();
    p.dModel = 512;
    p.heads = 16;
    return p;
}

// Every panel of the vectors strip: its title (or short title) and its shape
// written whole in its title rect, inside the strip, and every query label
// whole in its column.
void verifyStripTextsWhole(const PipelineStrip *strip, const QString &where)
{
    const QFontMetricsF metrics(strip->font());
    QVERIFY2(!strip->panels().empty(), qPrintable(where));
    for (int k = 0; k < int(strip->panels().size()); ++k) {
        const PipelineStrip::Panel &p = strip->panels()[std::size_t(k)];
        const QRectF slot = strip->titleRect(k);
        const QString title = strip->titleFor(p, slot.width());
        const qreal text
            = std::max(metrics.horizontalAdvance(title),
                       metrics.horizontalAdvance(p.shape.section(QLatin1Char(','), 0, 0)));
        QVERIFY2(slot.width() >= text && slot.left() + text <= strip->width(),
                 qPrintable(QStringLiteral("%1: panel %2 \"%3\" of %4 px in %5 px")
                                .arg(where)
                                .arg(k)
                                .arg(title)
                                .arg(text)
                                .arg(slot.width())));
        QVERIFY2(QRectF(strip->rect()).contains(strip->panelRect(k)),
                 qPrintable(where + QString::number(k)));
    }
    const qreal labels = strip->rowLabelWidth();
    for (const QString &label : strip->rowLabels())
        QVERIFY2(labels >= metrics.horizontalAdvance(label),
                 qPrintable(QStringLiteral("%1: \"%2\" in %3 px").arg(where, label).arg(labels)));
}

// The three step panels whole in the part of the scroll area's canvas that is
// seen (`atOnce`), or each whole in the viewport when scrolled to; cells of at
// least `cell` pixels.
void verifyStepsInView(StepsView *steps, const QString &where, bool atOnce, qreal cell)
{
    FigureCanvas *canvas = steps->canvas();
    auto *scroll = qobject_cast<QScrollArea *>(canvas->parentWidget()->parentWidget());
    QVERIFY(scroll);
    const QRect seen(canvas->mapFrom(scroll->viewport(), QPoint(0, 0)), scroll->viewport()->size());
    const PanelFigureLayout lay = canvas->figure()->layout(QRectF(canvas->rect()));
    QCOMPARE(lay.frames.size(), 3);
    for (int k = 0; k < lay.frames.size(); ++k) {
        const QRectF frame = lay.frames[k];
        const QRectF room
            = atOnce ? QRectF(seen) : QRectF(seen.left(), frame.top(), seen.width(), seen.height());
        QVERIFY2(room.contains(frame),
                 qPrintable(QStringLiteral("%1: panel %2 at %3,%4 %5 × %6, seen %7,%8 %9 × %10")
                                .arg(where)
                                .arg(k)
                                .arg(frame.x())
                                .arg(frame.y())
                                .arg(frame.width())
                                .arg(frame.height())
                                .arg(seen.x())
                                .arg(seen.y())
                                .arg(seen.width())
                                .arg(seen.height())));
    }
    QVERIFY2(lay.cellSize >= cell,
             qPrintable(where + QStringLiteral(": cells of %1 px").arg(lay.cellSize)));
}

} // namespace

// Steps with its Vectors in the window a 1280 × 800 screen opens (1152 × 720)
// with the first-start docks, and in presentation mode: the three step panels
// are whole in the pane without scrolling to them, and the vectors strip writes
// every title, shape and query label whole ("w · v", "10 × 32", "6:because",
// never "…").
void TestMainWindowTour::stepsWithVectorsFitTheFirstScreen()
{
    QVERIFY(waitForFirstResult());
    const SessionParameters lecture = lectureParameters();
    QVERIFY(showParameters(lecture));
    const QSize size(1152, 720);
    QVERIFY(resizeWithDefaultDocks(size));
    StepsView *steps = showStepsWithVectors(m_window.get());
    QVERIFY(steps);
    PipelineStrip *strip = steps->pipelineStrip();
    QTest::qWait(100); // the docks' and the canvas's sizes settle
    verifyStepsInView(steps, QStringLiteral("window"), false, FigureScrollArea::kReadableCell);
    verifyStripTextsWhole(strip, QStringLiteral("window"));
    QVERIFY(strip->panelRect(0).height() >= 60); // ten rows of at least 6 px

    m_window->presentationMode()->action()->trigger();
    QVERIFY(m_window->presentationMode()->isActive());
    QTRY_VERIFY(strip->width() >= size.width() - 40);
    QTest::qWait(100);
    verifyStepsInView(steps, QStringLiteral("presentation"), true, FigureScrollArea::kReadableCell);
    verifyStripTextsWhole(strip, QStringLiteral("presentation"));
    // The panels and the strip use the window's height: not a band of empty space
    // under them.
    QVERIFY2(strip->geometry().bottom() >= steps->height() - 12,
             qPrintable(QString::number(steps->height() - strip->geometry().bottom())));
    m_window->presentationMode()->action()->trigger();
}

// Compare A/B in presentation mode: the text grows and so do the maps, never
// smaller than in the window (they were 180 px instead of 230 with most of the
// screen empty).
void TestMainWindowTour::presentationEnlargesTheCompareMaps()
{
    QVERIFY(waitForFirstResult());
    const SessionParameters lecture = lectureParameters();
    QVERIFY(showParameters(lecture));
    for (const QSize size : {QSize(1152, 720), QSize(1280, 800)}) {
        QVERIFY(resizeWithDefaultDocks(size));
        AttentionViews *views = m_window->attentionViews();
        views->setCurrentIndex(AttentionViews::CompareTab);
        CompareView *compare = views->compareView();
        QTRY_VERIFY_WITH_TIMEOUT(compare->isUpToDate(), attn::test::kWorkTimeoutMs);
        QTest::qWait(100);
        FigureCanvas *canvas = compare->canvas();
        const auto smallestMap = [canvas] {
            const PanelFigureLayout lay = canvas->figure()->layout(QRectF(canvas->rect()));
            qreal side = 1e9;
            for (const QRectF &map : lay.maps)
                side = std::min({side, map.width(), map.height()});
            return lay.maps.size() == 3 ? side : 0.0;
        };
        const qreal before = smallestMap();
        QVERIFY(before > 0);
        const int fontBefore = QFontInfo(canvas->font()).pixelSize();
        m_window->presentationMode()->action()->trigger();
        QVERIFY(m_window->presentationMode()->isActive());
        QTRY_VERIFY(compare->width() >= size.width() - 40);
        QTest::qWait(100);
        QVERIFY(QFontInfo(canvas->font()).pixelSize() > fontBefore);
        const qreal after = smallestMap();
        QVERIFY2(after >= before,
                 qPrintable(QStringLiteral("%1 × %2: maps %3 px → %4 px in presentation")
                                .arg(size.width())
                                .arg(size.height())
                                .arg(before)
                                .arg(after)));
        m_window->presentationMode()->action()->trigger();
        QVERIFY(!m_window->presentationMode()->isActive());
    }
}

QTEST_MAIN(TestMainWindowTour)
#include "tst_mainwindow_tour.moc"
