// Tests of the main window's docks and layout at window sizes: switching modes hides and restores
// the docks; the first window fits the screen and keeps its size through tabs, modes and docks;
// restored geometry and dock widths fit a smaller screen; View → Reset Layout and enlarging give
// the docks their widths back; at 1280 × 800 Steps and Compare fill their pane, the A/B strip
// shows α whole, the texts fit, and the first screen shows the Scale and Mask controls and a
// striking first lesson.

#include "mainwindowtest.h"

#include "core/experiments/experiments.h"
#include "ui/panels/experimentspanel.h"
#include "ui/render/heatmaprenderer.h"
#include "ui/views/attentionviews.h"
#include "ui/views/compareview.h"
#include "ui/views/figurecanvas.h"
#include "ui/views/heatmapwidget.h"
#include "ui/views/stepsview.h"
#include "ui/window/sessioncontroller.h"
#include "ui/window/windowlayout.h"

#include <QAction>
#include <QChartView>
#include <QCheckBox>
#include <QComboBox>
#include <QDockWidget>
#include <QDoubleSpinBox>
#include <QFontMetricsF>
#include <QGraphicsScene>
#include <QGraphicsTextItem>
#include <QGroupBox>
#include <QLineEdit>
#include <QMenu>
#include <QMenuBar>
#include <QScreen>
#include <QScrollArea>
#include <QScrollBar>
#include <QSettings>
#include <QSignalSpy>
#include <QSpinBox>
#include <QStatusBar>
#include <QStyleOptionComboBox>
#include <QTabBar>
#include <QTemporaryDir>
#include <QTest>
#include <QUndoStack>

#include <cmath>

using namespace attn;
using mainwindowtest::ResultPtr;

class TestMainWindowLayout : public mainwindowtest::MainWindowTest
{
    Q_OBJECT

private slots:
    void init() { openWindow(); }
    void cleanup() { closeWindow(); }

    void modeSwitchHidesAndRestoresDocks();
    void initialSizeFitsScreen();
    void switchingViewsKeepsWindowSize();
    void restoredGeometryClampedToScreen();
    void restoredDocksLeaveTheCentreItsShare();
    void resetLayoutRestoresDocks();
    void stepsAndCompareFillThePane();
    void compareStripShowsAlphaWhole();
    void enlargingGivesDocksTheirWidthBack();
    void firstScreenShowsTheLesson();
    void textsFitAt1280();
};

void TestMainWindowLayout::modeSwitchHidesAndRestoresDocks()
{
    const QList<QDockWidget *> docks = m_window->findChildren<QDockWidget *>();
    QVERIFY(docks.size() >= 5);
    auto shown = [&] {
        QList<bool> states;
        for (QDockWidget *d : docks)
            states.append(d->toggleViewAction()->isChecked());
        return states;
    };
    const QList<bool> before = shown();
    QVERIFY(before.contains(true));
    m_window->modeTabs()->setCurrentIndex(1); // experiments: the whole window
    QCOMPARE(m_window->modeTabs()->currentWidget(),
             static_cast<QWidget *>(m_window->experimentsPanel()));
    QVERIFY(!shown().contains(true));
    m_window->modeTabs()->setCurrentIndex(0);
    QCOMPARE(shown(), before);
}

void TestMainWindowLayout::initialSizeFitsScreen()
{
    // A first start (no saved geometry): at most 90 % of the available geometry, centred, and
    // the window's minimum (docks, centre) fits the screen, so nothing forces it wider.
    const QRect available = m_window->screen()->availableGeometry();
    const QRect frame = m_window->frameGeometry();
    QVERIFY2(available.contains(frame),
             qPrintable(QStringLiteral("frame %1×%2+%3+%4 outside %5×%6")
                            .arg(frame.width())
                            .arg(frame.height())
                            .arg(frame.x())
                            .arg(frame.y())
                            .arg(available.width())
                            .arg(available.height())));
    QVERIFY(m_window->width() <= available.width() * 9 / 10);
    QVERIFY(m_window->height() <= available.height() * 9 / 10);
    // Centred (the client area is; the frame's border may shift it by its own width).
    const QSize border = frame.size() - m_window->size();
    QVERIFY(std::abs(frame.center().x() - available.center().x()) <= border.width() + 1);
    QVERIFY(std::abs(frame.center().y() - available.center().y()) <= border.height() + 1);
    const QSize minimum = m_window->minimumSizeHint();
    QVERIFY2(minimum.width() <= m_window->width() && minimum.height() <= m_window->height(),
             qPrintable(QStringLiteral("minimum %1×%2 larger than the window %3×%4")
                            .arg(minimum.width())
                            .arg(minimum.height())
                            .arg(m_window->width())
                            .arg(m_window->height())));
}

void TestMainWindowLayout::switchingViewsKeepsWindowSize()
{
    // Regression: switching tabs, modes or showing a dock made the window grow beyond the
    // screen (the pages' and docks' minimum widths added up to about 1450 pixels).
    QVERIFY(waitForFirstResult());
    const QSize start = m_window->size();
    AttentionViews *views = m_window->attentionViews();
    QVERIFY(views);
    auto check = [&](const char *what) {
        QTest::qWait(50);
        QVERIFY2(m_window->size() == start, what);
        const QSize minimum = m_window->minimumSizeHint();
        QVERIFY2(minimum.width() <= start.width() && minimum.height() <= start.height(), what);
    };
    for (int tab : {int(AttentionViews::StepsTab), int(AttentionViews::CompareTab),
                    int(AttentionViews::HeadsTab)}) {
        views->setCurrentIndex(tab);
        check("attention view tab");
    }
    m_window->modeTabs()->setCurrentIndex(1);
    check("experiments mode");
    m_window->modeTabs()->setCurrentIndex(0);
    check("back to the attention mode");
    for (QDockWidget *dock : m_window->findChildren<QDockWidget *>())
        dock->show(); // the Tensors dock too
    check("every dock shown");
}

void TestMainWindowLayout::restoredGeometryClampedToScreen()
{
    // Geometry saved on a larger screen is made to fit the current one.
    QTemporaryDir dir;
    QVERIFY(dir.isValid());
    QSettings settings(dir.filePath(QStringLiteral("attnlab.ini")), QSettings::IniFormat);
    const QRect available = m_window->screen()->availableGeometry();
    m_window->setGeometry(QRect(available.topLeft() + QPoint(200, 100),
                                QSize(available.width() * 3 / 2, available.height() * 3 / 2)));
    QTest::qWait(50);
    m_window->saveSettings(settings);
    settings.sync();
    m_window.reset();

    m_window = std::make_unique<MainWindow>();
    m_window->restoreSettings(settings);
    m_window->show();
    QVERIFY(QTest::qWaitForWindowExposed(m_window.get()));
    const QRect frame = m_window->frameGeometry();
    QVERIFY2(available.contains(frame),
             qPrintable(QStringLiteral("restored frame %1×%2+%3+%4 outside %5×%6")
                            .arg(frame.width())
                            .arg(frame.height())
                            .arg(frame.x())
                            .arg(frame.y())
                            .arg(available.width())
                            .arg(available.height())));
}

// Docks widened in a large window, restored in a 1280 × 800 one: each side column is narrowed to
// its share of the width (left ≤ max(default, 30 %), right ≤ max(default, 33 %)) and the centre
// keeps at least 37 % of it, instead of the saved pixel widths squeezing it.
void TestMainWindowLayout::restoredDocksLeaveTheCentreItsShare()
{
    QTemporaryDir dir;
    QVERIFY(dir.isValid());
    QSettings settings(dir.filePath(QStringLiteral("attnlab.ini")), QSettings::IniFormat);
    auto *controls = m_window->findChild<QDockWidget *>(QStringLiteral("controlsDock"));
    auto *maxDock = m_window->findChild<QDockWidget *>(QStringLiteral("maxWeightDock"));
    QVERIFY(controls && maxDock);
    m_window->resize(1800, 1000);
    QTRY_COMPARE(m_window->size(), QSize(1800, 1000));
    m_window->resizeDocks({controls, maxDock}, {620, 640}, Qt::Horizontal);
    QTRY_VERIFY(controls->width() >= 600 && maxDock->width() >= 620);
    m_window->saveSettings(settings);
    settings.remove(QStringLiteral("window/geometry")); // the state alone, in a smaller window
    settings.sync();
    m_window.reset();

    m_window = std::make_unique<MainWindow>();
    m_window->restoreSettings(settings);
    const QSize size(1280, 800);
    m_window->resize(size);
    m_window->show();
    QVERIFY(QTest::qWaitForWindowExposed(m_window.get()));
    QTRY_COMPARE(m_window->size(), size);
    controls = m_window->findChild<QDockWidget *>(QStringLiteral("controlsDock"));
    maxDock = m_window->findChild<QDockWidget *>(QStringLiteral("maxWeightDock"));
    QVERIFY(controls->isVisible() && maxDock->isVisible());
    const int leftMax
        = std::max(m_window->windowLayout()->defaultControlsWidth(size.width()), 1280 * 30 / 100);
    const int rightMax = std::max(std::min(520, 1280 * 31 / 100), 1280 * 33 / 100);
    QTRY_VERIFY2(controls->width() <= leftMax && maxDock->width() <= rightMax,
                 qPrintable(QStringLiteral("controls %1 px (≤ %2), charts %3 px (≤ %4)")
                                .arg(controls->width())
                                .arg(leftMax)
                                .arg(maxDock->width())
                                .arg(rightMax)));
    // Narrowed to the share, not further: the columns keep most of the width they had.
    QVERIFY2(controls->width() >= leftMax - 12, qPrintable(QString::number(controls->width())));
    QVERIFY2(maxDock->width() >= rightMax - 12, qPrintable(QString::number(maxDock->width())));
    const int centre = m_window->centralWidget()->width();
    QVERIFY2(centre >= size.width() * 37 / 100 - 16, qPrintable(QString::number(centre)));
}

// View → Reset Layout: after squeezing the window and the docks, the Controls dock is back at
// its first-start width and every dock of a first start is shown again.
void TestMainWindowLayout::resetLayoutRestoresDocks()
{
    QAction *reset = m_window->findChild<QAction *>(QStringLiteral("resetLayoutAction"));
    QVERIFY(reset);
    QMenu *viewMenu = nullptr;
    for (QAction *a : m_window->menuBar()->actions()) {
        if (a->menu() && a->text().remove(QLatin1Char('&')) == QLatin1String("View"))
            viewMenu = a->menu();
    }
    QVERIFY(viewMenu);
    QVERIFY(viewMenu->actions().contains(reset));

    auto *controlsDock = m_window->findChild<QDockWidget *>(QStringLiteral("controlsDock"));
    QVERIFY(controlsDock);
    const QSize firstSize = m_window->size();
    const int firstWidth = controlsDock->width();
    // resizeDocks may be a pixel off (separators, the dock's frame).
    QVERIFY2(
        std::abs(firstWidth - m_window->windowLayout()->defaultControlsWidth(firstSize.width()))
            <= 2,
        qPrintable(QString::number(firstWidth)));
    QList<bool> firstShown;
    const QList<QDockWidget *> docks = m_window->findChildren<QDockWidget *>();
    for (QDockWidget *d : docks)
        firstShown << d->isVisible();

    // Small, then a dock made wider by hand, one closed, the window a bit larger again.
    m_window->resize(500, 400);
    QTest::qWait(20);
    m_window->resize(firstSize.width() * 11 / 10, firstSize.height());
    m_window->resizeDocks({controlsDock}, {firstWidth + 120}, Qt::Horizontal);
    docks.last()->hide();
    QTest::qWait(20);
    QVERIFY2(std::abs(controlsDock->width() - firstWidth) > 50,
             qPrintable(QString::number(controlsDock->width())));

    reset->trigger();
    QTRY_COMPARE(m_window->size(), firstSize);
    QTRY_VERIFY2(std::abs(controlsDock->width() - firstWidth) <= 1,
                 qPrintable(QString::number(controlsDock->width())));
    QList<bool> shown;
    for (QDockWidget *d : docks)
        shown << d->isVisible();
    QCOMPARE(shown, firstShown);
}

// Steps and Compare A/B of the first lesson (ten tokens) in a 1280 × 800 and a 1600 × 900
// window with the first-start docks: the maps fill the pane's width (they were 60 pixels
// stacked in one column beside an empty pane) — each at least a third of the pane wide, every
// query and key labelled, each panel whole inside the pane when scrolled to — and grow with it.
void TestMainWindowLayout::stepsAndCompareFillThePane()
{
    QVERIFY(waitForFirstResult());
    m_window->showFirstLesson();
    const SessionParameters lesson = MainWindow::firstLessonParameters();
    QTRY_VERIFY_WITH_TIMEOUT(m_window->session()->result()
                                 && m_window->session()->result()->params == lesson,
                             attn::test::kWorkTimeoutMs);
    AttentionViews *views = m_window->attentionViews();
    QList<qreal> sides; // per window size: the smallest map side of Steps and Compare
    for (const QSize size : {QSize(1280, 800), QSize(1600, 900)}) {
        QVERIFY(resizeWithDefaultDocks(size));
        qreal smallest = 1e9;
        for (const int tab : {int(AttentionViews::StepsTab), int(AttentionViews::CompareTab)}) {
            views->setCurrentIndex(tab);
            FigureCanvas *canvas = tab == AttentionViews::StepsTab ? views->stepsView()->canvas()
                                                                   : views->compareView()->canvas();
            if (tab == AttentionViews::CompareTab)
                QTRY_VERIFY_WITH_TIMEOUT(views->compareView()->isUpToDate(),
                                         attn::test::kWorkTimeoutMs);
            auto *scroll = qobject_cast<FigureScrollArea *>(canvas->parentWidget()->parentWidget());
            QVERIFY(scroll);
            QTest::qWait(100); // the docks' and the canvas's sizes settle
            const QSize pane = scroll->viewport()->size();
            const PanelFigureLayout lay = canvas->figure()->layout(QRectF(canvas->rect()));
            const QString where = QStringLiteral("%1 at %2 × %3, pane %4 × %5")
                                      .arg(views->tabText(tab))
                                      .arg(size.width())
                                      .arg(size.height())
                                      .arg(pane.width())
                                      .arg(pane.height());
            QVERIFY2(pane.width() < size.width() / 2, qPrintable(where)); // between the docks
            QCOMPARE(lay.maps.size(), 3);
            for (int k = 0; k < lay.maps.size(); ++k) {
                const QRectF map = lay.maps[k];
                QVERIFY2(map.width() >= pane.width() / 3.0,
                         qPrintable(where + QStringLiteral(": map %1 px").arg(map.width())));
                QVERIFY2(lay.frames[k].height() <= pane.height(), qPrintable(where));
                smallest = std::min({smallest, map.width(), map.height()});
            }
            QVERIFY2(lay.tickStepRows == 1 && lay.tickStepCols == 1, qPrintable(where));
        }
        sides.append(smallest);
    }
    QVERIFY2(sides[1] > 1.15 * sides[0],
             qPrintable(QStringLiteral("%1 → %2 px").arg(sides[0]).arg(sides[1])));
}

// The Compare A/B strip in the 1280 × 800 window with the first-start docks: B's α box is as
// wide as its minimum (room for a value such as 0.125), shows its whole number, and sits in the
// strip between its label and τ, every control of the row inside the view.
void TestMainWindowLayout::compareStripShowsAlphaWhole()
{
    QVERIFY(waitForFirstResult());
    const QSize size(1280, 800);
    QVERIFY(resizeWithDefaultDocks(size));
    AttentionViews *views = m_window->attentionViews();
    views->setCurrentIndex(AttentionViews::CompareTab);
    CompareView *compare = views->compareView();
    QTRY_VERIFY(compare->isVisible());
    auto *alpha = compare->findChild<QDoubleSpinBox *>(QStringLiteral("compareAlphaSpin"));
    auto *tau = compare->findChild<QDoubleSpinBox *>(QStringLiteral("compareTauSpin"));
    auto *dk = compare->findChild<QSpinBox *>(QStringLiteral("compareDkSpin"));
    auto *mask = compare->findChild<QComboBox *>(QStringLiteral("compareMaskCombo"));
    QVERIFY(alpha && tau && dk && mask);
    alpha->setValue(0.125);
    QTest::qWait(100);
    QVERIFY2(compare->width() < size.width() / 2, qPrintable(QString::number(compare->width())));
    const QLineEdit *field = alpha->findChild<QLineEdit *>();
    QVERIFY(field);
    QCOMPARE(field->text(), QStringLiteral("0.125"));
    const int textWidth = field->fontMetrics().horizontalAdvance(QStringLiteral("0.125"));
    QVERIFY2(
        field->width() >= textWidth,
        qPrintable(
            QStringLiteral("α field %1 px for %2 px of text").arg(field->width()).arg(textWidth)));
    QVERIFY(alpha->width() >= alpha->minimumWidth());
    const auto inView
        = [compare](const QWidget *w) { return QRect(w->mapTo(compare, QPoint(0, 0)), w->size()); };
    for (const QWidget *w : {static_cast<QWidget *>(alpha), static_cast<QWidget *>(tau),
                             static_cast<QWidget *>(mask), static_cast<QWidget *>(dk)})
        QVERIFY2(compare->rect().contains(inView(w)), qPrintable(w->objectName()));
    QVERIFY(inView(alpha).right() < inView(tau).left());
    QCOMPARE(inView(alpha).center().y(), inView(tau).center().y()); // one row
}

// The window made very small, then large again (more than a quarter wider): the side docks get
// their default width back instead of the centre taking all the new room.
void TestMainWindowLayout::enlargingGivesDocksTheirWidthBack()
{
    auto *controlsDock = m_window->findChild<QDockWidget *>(QStringLiteral("controlsDock"));
    QVERIFY(controlsDock);
    const QSize large(1400, 900);
    m_window->resize(large);
    QTRY_COMPARE(m_window->size(), large);
    const int wanted = m_window->windowLayout()->defaultControlsWidth(large.width());
    QVERIFY(wanted >= 300);
    m_window->resizeDocks({controlsDock}, {wanted}, Qt::Horizontal);
    QTRY_VERIFY(std::abs(controlsDock->width() - wanted) <= 2);
    m_window->resize(500, 400);
    QTest::qWait(20);
    QVERIFY2(controlsDock->width() < wanted - 50, "the small window did not squeeze the dock");
    m_window->resize(large);
    QTRY_VERIFY2(controlsDock->width() >= wanted - 2,
                 qPrintable(QString::number(controlsDock->width())));
    // A user's wider choice stays on a later enlargement.
    m_window->resizeDocks({controlsDock}, {wanted + 100}, Qt::Horizontal);
    QTRY_VERIFY(controlsDock->width() >= wanted + 98);
    m_window->resize(1000, 700);
    QTest::qWait(20);
    const int chosen = controlsDock->width();
    m_window->resize(large);
    QTest::qWait(20);
    QVERIFY2(controlsDock->width() >= chosen, qPrintable(QString::number(controlsDock->width())));
}

// The first screen at 1280 × 800 (a 1152 × 720 window, 90 % of the screen): the Scale and Mask
// sections are in the Controls dock without scrolling, the controls are not cut by a horizontal
// scroll bar, and a first start shows a striking result: one labelled head whose unscaled rows
// saturate (mean max weight above 0.8), not near-uniform tiles.
void TestMainWindowLayout::firstScreenShowsTheLesson()
{
    QVERIFY(waitForFirstResult());
    const QSize small(1152, 720);
    m_window->resize(small);
    QTRY_COMPARE(m_window->size(), small);
    auto *controlsDock = m_window->findChild<QDockWidget *>(QStringLiteral("controlsDock"));
    QVERIFY(controlsDock && controlsDock->isVisible());
    m_window->resizeDocks({controlsDock},
                          {m_window->windowLayout()->defaultControlsWidth(small.width())},
                          Qt::Horizontal);
    QTest::qWait(50);
    ControlPanel *panel = m_window->controlPanel();
    auto *scroll = qobject_cast<QScrollArea *>(controlsDock->widget());
    QVERIFY(scroll);
    QWidget *viewport = scroll->viewport();
    QCOMPARE(scroll->horizontalScrollBar()->maximum(), 0);
    QCOMPARE(scroll->verticalScrollBar()->value(), 0);
    const auto boxTitled = [panel](const QString &title) {
        QGroupBox *box = nullptr;
        for (QGroupBox *b : panel->findChildren<QGroupBox *>())
            if (b->title() == title)
                box = b;
        return box;
    };
    // The dock's layout settles after the resize (later on a loaded machine): wait for it.
    QTRY_VERIFY_WITH_TIMEOUT(viewport->rect().contains(QRect(
                                 boxTitled(QStringLiteral("Mask"))->mapTo(viewport, QPoint(0, 0)),
                                 boxTitled(QStringLiteral("Mask"))->size())),
                             5000);
    for (const QString &title : {QStringLiteral("Scale"), QStringLiteral("Mask")}) {
        QGroupBox *box = boxTitled(title);
        QVERIFY2(box, qPrintable(title));
        const QRect inViewport(box->mapTo(viewport, QPoint(0, 0)), box->size());
        QVERIFY2(viewport->rect().contains(inViewport),
                 qPrintable(QStringLiteral("%1 at %2,%3 %4×%5 outside the %6×%7 dock")
                                .arg(title)
                                .arg(inViewport.x())
                                .arg(inViewport.y())
                                .arg(inViewport.width())
                                .arg(inViewport.height())
                                .arg(viewport->width())
                                .arg(viewport->height())));
    }

    // The right column's charts fit their docks' width: none scrolls sideways (the Timing
    // dock's controls were wider than the column at this size).
    for (const char *name : {"maxWeightDock", "rowMetricsDock", "timingDock"}) {
        auto *dock = m_window->findChild<QDockWidget *>(QString::fromLatin1(name));
        QVERIFY2(dock, name);
        dock->raise();
        auto *chartScroll = qobject_cast<QScrollArea *>(dock->widget());
        QVERIFY2(chartScroll, name);
        QTRY_VERIFY2(chartScroll->isVisible(), name);
        QTRY_COMPARE(chartScroll->horizontalScrollBar()->maximum(), 0);
    }

    // The first start's lesson: not an undoable edit, the session stays unmodified.
    QSignalSpy results(m_window->session(), &AttentionSession::resultChanged);
    m_window->showFirstLesson();
    QVERIFY(results.wait(attn::test::kWorkTimeoutMs));
    const ResultPtr r = m_window->session()->result();
    QVERIFY(r && r->ok());
    const SessionParameters &p = r->params;
    QCOMPARE(p, MainWindow::firstLessonParameters());
    QCOMPARE(p.heads, 1);
    QCOMPARE(p.scaleExponent, 0.0);
    QVERIFY(p.tokens.size() >= 8);
    QCOMPARE(panel->parameters(), p);
    QVERIFY(!m_window->sessionController()->isModified());
    QCOMPARE(m_window->sessionController()->undoStack()->count(), 0);
    const MetricsSummary unscaled = summarize(r->metrics.at(0));
    QVERIFY2(unscaled.meanMaxWeight > 0.8, qPrintable(QString::number(unscaled.meanMaxWeight)));
    QVERIFY2(m_window->statusBar()->currentMessage().contains(QStringLiteral("Scale by 1/√d_k")),
             qPrintable(m_window->statusBar()->currentMessage()));

    // One click on the cure: the rows even out.
    auto *sqrt = control<QCheckBox>("sqrtCheck");
    QVERIFY(sqrt && !sqrt->isChecked());
    sqrt->click();
    QVERIFY(results.wait(attn::test::kWorkTimeoutMs));
    const MetricsSummary scaled = summarize(m_window->session()->result()->metrics.at(0));
    QVERIFY2(scaled.meanMaxWeight < 0.5, qPrintable(QString::number(scaled.meanMaxWeight)));
}

void TestMainWindowLayout::textsFitAt1280()
{
    // The window a 1 280 × 800 screen opens (1 152 × 720): every attention tab's label shows
    // without scrolling the tab bar, the row strip's hint fits its width, and the charts' axis
    // titles and labels are written out, never elided.
    QVERIFY(waitForFirstResult());
    const QSize small(1152, 720);
    m_window->resize(small);
    QTRY_COMPARE(m_window->size(), small);
    auto *controlsDock = m_window->findChild<QDockWidget *>(QStringLiteral("controlsDock"));
    QVERIFY(controlsDock);
    m_window->resizeDocks({controlsDock},
                          {m_window->windowLayout()->defaultControlsWidth(small.width())},
                          Qt::Horizontal);
    QTest::qWait(100);

    auto *views = m_window->findChild<AttentionViews *>(QStringLiteral("attentionViews"));
    QVERIFY(views);
    QTabBar *tabs = views->tabBar();
    for (int i = 0; i < tabs->count(); ++i)
        QVERIFY2(tabs->rect().contains(tabs->tabRect(i)),
                 qPrintable(QStringLiteral("tab %1 (%2) at %3…%4 outside the %5 px bar")
                                .arg(i)
                                .arg(tabs->tabText(i))
                                .arg(tabs->tabRect(i).left())
                                .arg(tabs->tabRect(i).right())
                                .arg(tabs->width())));

    HeatmapWidget *heatmap = m_window->heatmapWidget();
    const qreal stripWidth = heatmap->rowStripBounds().width();
    const QString hint = heatmap->renderer().rowStripHint(stripWidth);
    QVERIFY(!hint.isEmpty());
    QVERIFY2(!hint.contains(QChar(0x2026)), qPrintable(hint));
    QFont font = heatmap->font();
    font.setPixelSize(int(heatmap->options().fontPixelSize));
    QVERIFY2(QFontMetricsF(font).horizontalAdvance(hint) <= stripWidth, qPrintable(hint));

    // Every choice of the Controls' menus is written out in its field, never elided.
    for (QComboBox *combo : controlsDock->findChildren<QComboBox *>()) {
        if (!combo->isVisibleTo(controlsDock))
            continue;
        QStyleOptionComboBox option;
        option.initFrom(combo);
        const QRect field = combo->style()->subControlRect(QStyle::CC_ComboBox, &option,
                                                           QStyle::SC_ComboBoxEditField, combo);
        for (int i = 0; i < combo->count(); ++i)
            QVERIFY2(combo->fontMetrics().horizontalAdvance(combo->itemText(i))
                         <= field.width() - 2,
                     qPrintable(QStringLiteral("%1: \"%2\" is %3 px, its field %4 px")
                                    .arg(combo->objectName(), combo->itemText(i))
                                    .arg(combo->fontMetrics().horizontalAdvance(combo->itemText(i)))
                                    .arg(field.width() - 2)));
    }

    for (const char *name : {"maxWeightDock", "rowMetricsDock"}) {
        auto *dock = m_window->findChild<QDockWidget *>(QString::fromLatin1(name));
        QVERIFY2(dock, name);
        dock->raise();
        QTest::qWait(50);
        const QList<QChartView *> charts = dock->findChildren<QChartView *>();
        QVERIFY2(!charts.isEmpty(), name);
        for (QChartView *chart : charts) {
            if (!chart->isVisible())
                continue;
            // The axes' titles and labels (the chart's title, over lines, may say "computing…").
            for (QGraphicsItem *item : chart->scene()->items())
                if (auto *text = dynamic_cast<QGraphicsTextItem *>(item);
                    text && text->isVisible() && !text->toPlainText().contains(QLatin1Char('\n')))
                    QVERIFY2(!text->toPlainText().contains(QChar(0x2026))
                                 && !text->toPlainText().contains(QLatin1String("...")),
                             qPrintable(QStringLiteral("%1: \"%2\"")
                                            .arg(QLatin1String(name), text->toPlainText())));
        }
    }
}

QTEST_MAIN(TestMainWindowLayout)
#include "tst_mainwindow_layout.moc"
