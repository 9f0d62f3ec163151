// Tests of the main window: it builds offscreen, a control change produces exactly one new
// result, rapid changes deliver only the newest, the h combo lists only divisors of d_model,
// File → Export writes images that decode with the expected size, the charts show what the core
// computes, the status bar reports NaN/Inf, a change refused over the memory budget keeps a
// banner above the heatmaps until a later one computes, every control has a tooltip, and the
// first screen at 1280 × 800 shows the Scale and Mask controls and a striking first lesson.

#include "core/experiments/experiments.h"
#include "core/io/npy.h"
#include "svgtext.h"
#include "testutil.h"
#include "ui/charts/rowmetricschart.h"
#include "ui/charts/scalingchart.h"
#include "ui/charts/scalingsweeprunner.h"
#include "ui/charts/timingchart.h"
#include "ui/document/sessionfile.h"
#include "ui/panels/controlpanel.h"
#include "ui/panels/experimentpage.h"
#include "ui/panels/experimentspanel.h"
#include "ui/panels/heatmapviewpanel.h"
#include "ui/panels/playpanel.h"
#include "ui/render/comparerenderer.h"
#include "ui/render/heatmaprenderer.h"
#include "ui/render/stepsrenderer.h"
#include "ui/session/attentionsession.h"
#include "ui/session/sessioncompute.h"
#include "ui/views/attentionviews.h"
#include "ui/views/compareview.h"
#include "ui/views/figurecanvas.h"
#include "ui/views/figureexport.h"
#include "ui/views/heatmapactions.h"
#include "ui/views/heatmapwidget.h"
#include "ui/views/longmapview.h"
#include "ui/views/pipelinestrip.h"
#include "ui/views/stepsview.h"
#include "ui/views/tokensview.h"
#include "ui/window/exportrouter.h"
#include "ui/window/mainwindow.h"
#include "ui/window/presentationmode.h"
#include "ui/window/recentfiles.h"
#include "ui/window/sessioncontroller.h"
#include "ui/window/shortcuts.h"
#include "ui/window/tensorcontroller.h"
#include "ui/window/tour.h"
#include "ui/window/windowlayout.h"

#include <QAbstractButton>
#include <QAbstractSlider>
#include <QAbstractSpinBox>
#include <QAction>
#include <QApplication>
#include <QChartView>
#include <QCheckBox>
#include <QComboBox>
#include <QDir>
#include <QDockWidget>
#include <QDoubleSpinBox>
#include <QDragEnterEvent>
#include <QDropEvent>
#include <QFile>
#include <QFileDialog>
#include <QFileInfo>
#include <QFontMetricsF>
#include <QGraphicsScene>
#include <QGraphicsTextItem>
#include <QGroupBox>
#include <QImage>
#include <QImageReader>
#include <QLabel>
#include <QLineEdit>
#include <QMenu>
#include <QMenuBar>
#include <QMimeData>
#include <QPushButton>
#include <QScreen>
#include <QScrollArea>
#include <QScrollBar>
#include <QSet>
#include <QSettings>
#include <QSignalSpy>
#include <QSlider>
#include <QSpinBox>
#include <QStatusBar>
#include <QStyle>
#include <QStyleOptionSlider>
#include <QTabBar>
#include <QTabWidget>
#include <QTemporaryDir>
#include <QTest>
#include <QTimer>
#include <QUndoStack>
#include <QUrl>
#include <QXmlStreamReader>

#include <cmath>
#include <functional>
#include <memory>

using namespace attn;

namespace {

using ResultPtr = std::shared_ptr<const SessionResult>;

ResultPtr resultFromSpy(const QSignalSpy &spy, qsizetype index)
{
    return spy.at(index).at(0).value<ResultPtr>();
}

/// Brute-force divisors, independent of ControlPanel::divisors.
QList<int> bruteDivisors(int n)
{
    QList<int> ds;
    for (int d = 1; d <= n; ++d)
        if (n % d == 0)
            ds.append(d);
    return ds;
}

/// Well-formed XML whose root is <svg>; `error` gets the parser's message otherwise.
bool isSvgDocument(const QByteArray &bytes, QString *error)
{
    const test::SvgTexts parsed = test::readSvgTexts(bytes);
    *error = parsed.error.isEmpty() ? QStringLiteral("root <%1>, not <svg>").arg(parsed.root)
                                    : parsed.error;
    return parsed.error.isEmpty() && parsed.root == QLatin1String("svg");
}

/// A PDF file (the %PDF header) with at least one page object.
bool isPdfWithPage(const QByteArray &bytes)
{
    return bytes.startsWith("%PDF") && bytes.contains("/Page");
}

/// An exported vector figure: a well-formed SVG document for "svg", else a PDF with a page.
/// Returns what is wrong, empty when it is fine.
QString vectorFigureError(const QString &suffix, const QByteArray &bytes)
{
    if (suffix == QLatin1String("svg")) {
        QString xmlError;
        return isSvgDocument(bytes, &xmlError) ? QString() : xmlError;
    }
    return isPdfWithPage(bytes) ? QString() : QStringLiteral("not a PDF with a page");
}

/// What answerNextFileDialog() saw: the folder the dialog started in.
struct FileDialogAnswer
{
    QString directory;
    bool seen = false;
};

/// Answers the next modal file dialog: records the folder it starts in, then chooses `chosen`
/// (accepts) or, when `chosen` is empty, cancels.
std::shared_ptr<FileDialogAnswer> answerNextFileDialog(const QString &chosen)
{
    auto answer = std::make_shared<FileDialogAnswer>();
    auto poll = std::make_shared<std::function<void()>>();
    *poll = [answer, chosen, poll] {
        auto *dialog = qobject_cast<QFileDialog *>(QApplication::activeModalWidget());
        if (!dialog) {
            QTimer::singleShot(20, *poll);
            return;
        }
        answer->seen = true;
        answer->directory = dialog->directory().absolutePath();
        if (chosen.isEmpty()) {
            dialog->reject();
        } else {
            dialog->selectFile(chosen);
            static_cast<QDialog *>(dialog)->accept(); // QFileDialog::accept is protected
        }
        *poll = nullptr; // break the cycle
    };
    QTimer::singleShot(20, *poll);
    return answer;
}

} // namespace

class TestMainWindow : public QObject
{
    Q_OBJECT

private slots:
    void init();
    void cleanup();

    void buildsOffscreen();
    void controlChangeGivesOneResult_data();
    void controlChangeGivesOneResult();
    void unchangedValueGivesNoResult();
    void staleResultsDropped();
    void headsComboListsOnlyDivisors_data();
    void headsComboListsOnlyDivisors();
    void dkSliderSetsDModel_data();
    void dkSliderSetsDModel();
    void sliderDragEditsWhileDragging();
    void sqrtCheckboxMatchesAlpha();
    void largeSessionValuesKept();
    void shortcutActionsEditParameters();
    void exportWritesImage_data();
    void exportWritesImage();
    void exportActionWritesPng();
    void exportBadSuffixFails();
    void scalingChartsShowCoreSweep();
    void scalingRunnerNewestWins();
    void rowMetricsChartShowsSelectedHead();
    void tileClickEnlargesAndSelectsHead();
    void statusBarWarnsOnNonFinite();
    void refusedChangeKeepsBanner();
    void timingChartMeasures();
    void modeSwitchHidesAndRestoresDocks();
    void everyControlHasToolTip();
    void shortcutsAreUnique();
    void initialSizeFitsScreen();
    void switchingViewsKeepsWindowSize();
    void restoredGeometryClampedToScreen();
    void restoredDocksLeaveTheCentreItsShare();
    void exportCurrentView_data();
    void exportCurrentView();
    void exportCurrentViewBadSuffixFails();
    void exportTargetsLongTab();
    void exportMatchesRendererImage_data();
    void exportMatchesRendererImage();
    void exportActionWritesFocusedChart();
    void viewMenuListsTabActions();
    void tourStepsPointAtTheirWidgets();
    void tourCalloutsLeaveTheHeatmapsVisible();
    void tourStartsOnceOnFirstStart();
    void stepsWeightsFollowHeatmapColormap();
    void windowShortcutsWinOverEditors_data();
    void windowShortcutsWinOverEditors();
    void undoIsTheEditorsUntilFocusLeaves();
    void resetLayoutRestoresDocks();
    void presentationModeFillsTheWindow();
    void presentationEnlargesTheVectors();
    void stepsAndCompareFillThePane();
    void compareStripShowsAlphaWhole();
    void enlargingGivesDocksTheirWidthBack();
    void hideKeysSaysWhy_data();
    void hideKeysSaysWhy();
    void firstScreenShowsTheLesson();
    void droppedFilesOpen();
    void playIsOneUndoStep();
    void positionsTabExports();
    void longMapsChooseAVisibleRange();
    void openingAFileShowsEveryCell();
    void cancelledRunSaysWhatIsShown();
    void typedValuesKeepFieldsInPlace();
    void textsFitAt1280();
    void exportDialogsStartInTheLastExportFolder();
    void openRecentHoldsTensorFiles();

private:
    /// Sets n through the session and waits for its result; null on timeout.
    ResultPtr computeN(int n);
    /// Waits for the window's first result (the defaults).
    ResultPtr waitForFirstResult();
    template<typename T> T *control(const char *name) const
    {
        T *w = m_window->controlPanel()->findChild<T *>(QLatin1String(name));
        if (!w)
            qWarning("no control named %s", name);
        return w;
    }

    std::unique_ptr<MainWindow> m_window;
};

void TestMainWindow::init()
{
    m_window = std::make_unique<MainWindow>();
    m_window->show();
    QVERIFY(QTest::qWaitForWindowExposed(m_window.get()));
}

void TestMainWindow::cleanup()
{
    m_window.reset();
}

ResultPtr TestMainWindow::waitForFirstResult()
{
    AttentionSession *session = m_window->session();
    if (!session->result()) {
        QSignalSpy spy(session, &AttentionSession::resultChanged);
        if (!spy.wait(attn::test::kWorkTimeoutMs))
            return nullptr;
    }
    // Let the coalesced redraws run.
    QTest::qWait(50);
    return session->result();
}

void TestMainWindow::buildsOffscreen()
{
    const ResultPtr r = waitForFirstResult();
    QVERIFY(r);
    QVERIFY(r->ok());
    QCOMPARE(r->params, m_window->session()->parameters());
    QCOMPARE(m_window->controlPanel()->parameters(), m_window->session()->parameters());
    // The heatmaps live in the first mode tab (directly or inside its views).
    QCOMPARE(m_window->modeTabs()->currentIndex(), 0);
    QVERIFY(m_window->modeTabs()->widget(0)->isAncestorOf(m_window->heatmapWidget()));
    QCOMPARE(m_window->heatmapWidget()->result(), r);
    QVERIFY(m_window->experimentsPanel());
    QCOMPARE(m_window->experimentsPanel()->experimentIds().size(), int(experimentList().size()));
    QCOMPARE(int(r->weights.size()), r->params.heads);
    // Status bar shows the result's d_k.
    auto *dk = m_window->findChild<QLabel *>(QStringLiteral("dkStatus"));
    QVERIFY(dk);
    QCOMPARE(dk->text(), QStringLiteral("d_k = %1").arg(r->params.dK()));
    auto *warning = m_window->findChild<QLabel *>(QStringLiteral("nonFiniteStatus"));
    QVERIFY(warning);
    QVERIFY(!warning->isVisible());
    // 1500 × 950, or 90 % of a smaller screen's available geometry.
    const QRect available = m_window->screen()->availableGeometry();
    QCOMPARE(
        m_window->sizeHint(),
        QSize(1500, 950).boundedTo(QSize(available.width() * 9 / 10, available.height() * 9 / 10)));
}

void TestMainWindow::controlChangeGivesOneResult_data()
{
    QTest::addColumn<QString>("control");
    QTest::addColumn<int>("value");

    QTest::newRow("n spin box") << "nSpin" << 13;
    QTest::newRow("n slider") << "nSlider" << 500; // 2^5 = 32
    QTest::newRow("d_model spin box") << "dModelSpin" << 96;
    QTest::newRow("heads combo") << "headsCombo" << 0;
    QTest::newRow("d_k slider") << "dkSlider" << 120; // 2^3 = 8
    QTest::newRow("seed") << "seedSpin" << 42;
    QTest::newRow("mask combo: causal") << "maskCombo" << 1;
    QTest::newRow("mask combo: key padding") << "maskCombo" << 2;
    QTest::newRow("kind: decoder causal") << "kindCombo" << 1;
    QTest::newRow("kind: encoder-decoder") << "kindCombo" << 2;
    QTest::newRow("alpha slider") << "alphaSlider" << 20;
    QTest::newRow("1/sqrt(d_k) checkbox") << "sqrtCheck" << 0;
    QTest::newRow("positional encoding") << "positionalCheck" << 1;
    QTest::newRow("precision: float32") << "dtypeCombo" << 1;
}

void TestMainWindow::controlChangeGivesOneResult()
{
    QFETCH(QString, control);
    QFETCH(int, value);
    QVERIFY(waitForFirstResult());
    const SessionParameters before = m_window->session()->parameters();

    QSignalSpy results(m_window->session(), &AttentionSession::resultChanged);
    QSignalSpy edits(m_window->controlPanel(), &ControlPanel::parametersEdited);
    QWidget *w = m_window->controlPanel()->findChild<QWidget *>(control);
    QVERIFY2(w, qPrintable(control));
    if (auto *spin = qobject_cast<QSpinBox *>(w))
        spin->setValue(value);
    else if (auto *slider = qobject_cast<QSlider *>(w))
        slider->setValue(value);
    else if (auto *combo = qobject_cast<QComboBox *>(w))
        combo->setCurrentIndex(value);
    else if (auto *check = qobject_cast<QCheckBox *>(w))
        check->setChecked(value != 0);
    else
        QFAIL("unknown control type");

    QCOMPARE(edits.count(), 1); // one edit → one parametersEdited
    QVERIFY(results.wait(attn::test::kWorkTimeoutMs));
    QTest::qWait(200); // nothing else may follow
    QCOMPARE(results.count(), 1);
    const ResultPtr r = resultFromSpy(results, 0);
    QVERIFY(r->ok());
    QVERIFY(!(r->params == before));
    QCOMPARE(r->params, m_window->controlPanel()->parameters());
    QCOMPARE(r->params, m_window->session()->parameters());
    QCOMPARE(m_window->session()->result(), r);
    QCOMPARE(int(r->weights.front().rows()), r->params.queryCount());
    QCOMPARE(int(r->weights.front().cols()), r->params.keyCount());
}

void TestMainWindow::unchangedValueGivesNoResult()
{
    QVERIFY(waitForFirstResult());
    QSignalSpy results(m_window->session(), &AttentionSession::resultChanged);
    QSignalSpy edits(m_window->controlPanel(), &ControlPanel::parametersEdited);
    auto *nSpin = control<QSpinBox>("nSpin");
    QVERIFY(nSpin);
    nSpin->setValue(nSpin->value()); // no change
    // A d_k slider step that rounds to the same d_k changes nothing either.
    auto *dk = control<QSlider>("dkSlider");
    QVERIFY(dk);
    const int dK = m_window->session()->parameters().dK();
    dk->setValue(int(std::lround(40 * std::log2(double(dK)))) + 1);
    QTest::qWait(200);
    QCOMPARE(edits.count(), 0);
    QCOMPARE(results.count(), 0);
}

void TestMainWindow::staleResultsDropped()
{
    QVERIFY(waitForFirstResult());
    QSignalSpy results(m_window->session(), &AttentionSession::resultChanged);
    auto *nSpin = control<QSpinBox>("nSpin");
    auto *alpha = control<QSlider>("alphaSlider");
    QVERIFY(nSpin && alpha);

    // A burst of edits with no event processing in between: every computation but the last
    // is superseded before its result could be delivered.
    for (int i = 0; i < 40; ++i) {
        nSpin->setValue(64 + 7 * i);
        alpha->setValue(i % 2 ? 50 : 10 + i);
    }
    const SessionParameters final = m_window->controlPanel()->parameters();
    QCOMPARE(final.n, 64 + 7 * 39);
    QVERIFY(results.wait(attn::test::kWorkTimeoutMs));
    QTest::qWait(500);
    QCOMPARE(results.count(), 1);
    QCOMPARE(resultFromSpy(results, 0)->params, final);

    // Edits spaced by event processing: results may arrive in between, but in request order,
    // and the last one matches the final parameters.
    results.clear();
    for (int i = 0; i < 15; ++i) {
        nSpin->setValue(100 + 20 * i);
        QTest::qWait(i % 3 == 0 ? 5 : 0);
    }
    const SessionParameters final2 = m_window->controlPanel()->parameters();
    QTRY_VERIFY_WITH_TIMEOUT(m_window->session()->result()
                                 && m_window->session()->result()->params == final2,
                             attn::test::kWorkTimeoutMs);
    QTest::qWait(300);
    QVERIFY(results.count() >= 1);
    quint64 last = 0;
    for (qsizetype i = 0; i < results.count(); ++i) {
        const ResultPtr r = resultFromSpy(results, i);
        QVERIFY2(r->requestId > last, "results delivered out of request order");
        last = r->requestId;
    }
    QCOMPARE(resultFromSpy(results, results.count() - 1)->params, final2);
    QCOMPARE(m_window->heatmapWidget()->result()->params, final2);
}

void TestMainWindow::headsComboListsOnlyDivisors_data()
{
    QTest::addColumn<int>("dModel");
    QTest::newRow("64") << 64;
    QTest::newRow("prime 7") << 7;
    QTest::newRow("1") << 1;
    QTest::newRow("12") << 12;
    QTest::newRow("720 (30 divisors)") << 720;
    QTest::newRow("4096") << 4096;
    QTest::newRow("1000") << 1000;
}

void TestMainWindow::headsComboListsOnlyDivisors()
{
    QFETCH(int, dModel);
    QCOMPARE(ControlPanel::divisors(dModel), bruteDivisors(dModel));

    auto *dModelSpin = control<QSpinBox>("dModelSpin");
    auto *heads = control<QComboBox>("headsCombo");
    QVERIFY(dModelSpin && heads);
    dModelSpin->setValue(dModel);
    QList<int> listed;
    for (int i = 0; i < heads->count(); ++i) {
        const int h = heads->itemData(i).toInt();
        QCOMPARE(heads->itemText(i), QString::number(h));
        QVERIFY2(dModel % h == 0,
                 qPrintable(QStringLiteral("h = %1 does not divide %2").arg(h).arg(dModel)));
        listed.append(h);
    }
    QCOMPARE(listed, bruteDivisors(dModel));
    const SessionParameters p = m_window->controlPanel()->parameters();
    QCOMPARE(p.dModel, dModel);
    QCOMPARE(p.dModel % p.heads, 0);
    QCOMPARE(heads->currentData().toInt(), p.heads);
    QVERIFY(p.validate().isEmpty());
}

void TestMainWindow::dkSliderSetsDModel_data()
{
    QTest::addColumn<int>("headsIndexFromEnd"); // pick h among the divisors of 64
    QTest::addColumn<int>("position");
    QTest::addColumn<int>("expectedDk");
    // Slider position p means d_k = round(2^(p / 40)).
    QTest::newRow("h=64, d_k=1") << 0 << 0 << 1;
    QTest::newRow("h=1, d_k=2^5") << 6 << 200 << 32;
    QTest::newRow("h=1, d_k=2^8.5") << 6 << 340 << 362;
    QTest::newRow("h=4, d_k=2^6") << 4 << 240 << 64;
}

void TestMainWindow::dkSliderSetsDModel()
{
    QFETCH(int, headsIndexFromEnd);
    QFETCH(int, position);
    QFETCH(int, expectedDk);
    auto *dModelSpin = control<QSpinBox>("dModelSpin");
    auto *heads = control<QComboBox>("headsCombo");
    auto *dk = control<QSlider>("dkSlider");
    QVERIFY(dModelSpin && heads && dk);
    dModelSpin->setValue(64);
    heads->setCurrentIndex(heads->count() - 1 - headsIndexFromEnd);
    const int h = heads->currentData().toInt();
    QVERIFY(dk->hasTracking());
    dk->setValue(position);
    const SessionParameters p = m_window->controlPanel()->parameters();
    QCOMPARE(p.heads, h);
    QCOMPARE(p.dK(), expectedDk);
    QCOMPARE(p.dModel, expectedDk * h);
    QCOMPARE(dModelSpin->value(), expectedDk * h);
    QCOMPARE(control<QLabel>("dkLabel")->text(), QString::number(expectedDk));
}

void TestMainWindow::sliderDragEditsWhileDragging()
{
    // A real mouse drag of the d_k slider: parameters change (and results arrive) before the
    // button is released.
    QVERIFY(waitForFirstResult());
    auto *slider = control<QSlider>("dkSlider");
    QVERIFY(slider && slider->isVisible());
    QStyleOptionSlider option;
    option.initFrom(slider);
    option.orientation = slider->orientation();
    option.minimum = slider->minimum();
    option.maximum = slider->maximum();
    option.sliderPosition = slider->sliderPosition();
    option.sliderValue = slider->value();
    const QPoint start
        = slider->style()
              ->subControlRect(QStyle::CC_Slider, &option, QStyle::SC_SliderHandle, slider)
              .center();
    QSignalSpy edits(m_window->controlPanel(), &ControlPanel::parametersEdited);
    QSignalSpy results(m_window->session(), &AttentionSession::resultChanged);
    QTest::mousePress(slider, Qt::LeftButton, Qt::NoModifier, start);
    QPoint pos = start;
    for (int step = 0; step < 12 && pos.x() < slider->width() - 2; ++step) {
        pos.rx() += 8;
        QMouseEvent move(QEvent::MouseMove, QPointF(pos), slider->mapToGlobal(QPointF(pos)),
                         Qt::NoButton, Qt::LeftButton, Qt::NoModifier);
        QApplication::sendEvent(slider, &move);
        QTest::qWait(40);
    }
    const qsizetype editsWhileDragging = edits.count();
    // The button is still down: a result of the drag arrives before it is released (however
    // slow the build, so the wait is bounded only by the work timeout).
    QTRY_VERIFY_WITH_TIMEOUT(results.count() >= 1, attn::test::kWorkTimeoutMs);
    QVERIFY(slider->isSliderDown());
    QTest::mouseRelease(slider, Qt::LeftButton, Qt::NoModifier, pos);
    QVERIFY2(editsWhileDragging >= 3, qPrintable(QString::number(editsWhileDragging)));
    const SessionParameters p = m_window->controlPanel()->parameters();
    QCOMPARE(p.dModel, p.dK() * p.heads);
    QVERIFY(p.dK() > 16);
    QTRY_VERIFY_WITH_TIMEOUT(m_window->session()->result()->params == p,
                             attn::test::kWorkTimeoutMs);
}

void TestMainWindow::largeSessionValuesKept()
{
    // Parameters from outside (a session) may exceed the controls' 1 … 1024: they are shown and
    // kept through unrelated edits, never silently clamped.
    ControlPanel *panel = m_window->controlPanel();
    SessionParameters p = panel->parameters();
    p.n = 2048;
    panel->setParameters(p);
    QCOMPARE(control<QSpinBox>("nSpin")->value(), 2048);
    control<QSpinBox>("seedSpin")->setValue(9);
    QCOMPARE(panel->parameters().n, 2048);
    QCOMPARE(panel->parameters().seed, quint64(9));
}

void TestMainWindow::sqrtCheckboxMatchesAlpha()
{
    auto *alpha = control<QSlider>("alphaSlider");
    auto *check = control<QCheckBox>("sqrtCheck");
    QVERIFY(alpha && check);
    QVERIFY(alpha->hasTracking());
    QCOMPARE(m_window->controlPanel()->parameters().scaleExponent, 0.5);
    QVERIFY(check->isChecked());
    alpha->setValue(30);
    QCOMPARE(m_window->controlPanel()->parameters().scaleExponent, 0.3);
    QVERIFY(!check->isChecked());
    check->setChecked(true);
    QCOMPARE(m_window->controlPanel()->parameters().scaleExponent, 0.5);
    QCOMPARE(alpha->value(), 50);
    check->setChecked(false);
    QCOMPARE(m_window->controlPanel()->parameters().scaleExponent, 0.0);
    QCOMPARE(alpha->value(), 0);
    alpha->setValue(50);
    QVERIFY(check->isChecked());
}

void TestMainWindow::shortcutActionsEditParameters()
{
    ControlPanel *panel = m_window->controlPanel();
    const SessionParameters start = panel->parameters();
    panel->multiplyDk(2.0);
    QCOMPARE(panel->parameters().dK(), start.dK() * 2);
    QCOMPARE(panel->parameters().heads, start.heads);
    panel->multiplyDk(0.5);
    QCOMPARE(panel->parameters(), start);
    panel->toggleScaled();
    QCOMPARE(panel->parameters().scaleExponent, 0.0);
    panel->toggleScaled();
    QCOMPARE(panel->parameters().scaleExponent, 0.5);
    panel->cycleMask();
    QCOMPARE(panel->parameters().mask, MaskChoice::Causal);
    panel->cycleMask();
    QCOMPARE(panel->parameters().mask, MaskChoice::KeyPadding);
    panel->cycleMask();
    QCOMPARE(panel->parameters().mask, MaskChoice::None);
    panel->nextSeed();
    QCOMPARE(panel->parameters().seed, start.seed + 1);
}

void TestMainWindow::exportWritesImage_data()
{
    QTest::addColumn<QString>("file");
    QTest::addColumn<QSize>("size");
    QTest::addColumn<double>("dpr");
    QTest::newRow("png 800x500") << "grid.png" << QSize(800, 500) << 1.0;
    QTest::newRow("png 1200x900") << "grid.png" << QSize(1200, 900) << 1.0;
    QTest::newRow("png 640x400 at dpr 2") << "grid.PNG" << QSize(640, 400) << 2.0;
    QTest::newRow("svg") << "grid.svg" << QSize(900, 600) << 1.0;
    QTest::newRow("pdf") << "grid.pdf" << QSize(900, 600) << 1.0;
}

void TestMainWindow::exportWritesImage()
{
    QFETCH(QString, file);
    QFETCH(QSize, size);
    QFETCH(double, dpr);
    QVERIFY(waitForFirstResult());
    QTemporaryDir dir;
    QVERIFY(dir.isValid());
    const QString path = dir.filePath(file);
    QString error;
    QVERIFY2(m_window->exportRouter()->exportHeatmapGrid(path, size, dpr, &error),
             qPrintable(error));
    QFile f(path);
    QVERIFY(f.open(QIODevice::ReadOnly));
    const QByteArray bytes = f.readAll();
    const QString suffix = file.section(QLatin1Char('.'), -1).toLower();
    if (suffix == QLatin1String("png")) {
        QImageReader reader(path);
        QCOMPARE(reader.format(), QByteArray("png"));
        const QImage image = reader.read();
        QVERIFY2(!image.isNull(), qPrintable(reader.errorString()));
        QCOMPARE(image.size(), (QSizeF(size) * dpr).toSize());
        // Not a blank page: more than a handful of colours.
        QSet<QRgb> colours;
        for (int y = 0; y < image.height(); y += 7)
            for (int x = 0; x < image.width(); x += 7)
                colours.insert(image.pixel(x, y));
        QVERIFY(colours.size() > 20);
    } else {
        const QString error = vectorFigureError(suffix, bytes);
        QVERIFY2(error.isEmpty(), qPrintable(error));
    }
}

void TestMainWindow::exportActionWritesPng()
{
    QVERIFY(waitForFirstResult());
    QTemporaryDir dir;
    QVERIFY(dir.isValid());
    const QString path = dir.filePath(QStringLiteral("from-action.png"));
    QVERIFY(m_window->exportRouter()->exportAction());
    QCOMPARE(m_window->exportRouter()->exportAction()->shortcut(),
             QKeySequence(QStringLiteral("Ctrl+E")));
    // Answer the file dialog the action opens.
    bool answered = false;
    QTimer::singleShot(200, this, [&] {
        auto *dialog = qobject_cast<QFileDialog *>(QApplication::activeModalWidget());
        if (!dialog)
            return;
        dialog->setDirectory(dir.path());
        auto *name = dialog->findChild<QLineEdit *>(QStringLiteral("fileNameEdit"));
        if (!name)
            return;
        name->setText(QFileInfo(path).fileName());
        answered = true;
        QMetaObject::invokeMethod(dialog, "accept", Qt::DirectConnection);
    });
    m_window->exportRouter()->exportAction()->trigger();
    QVERIFY(answered);
    QCOMPARE(QDir(dir.path()).entryList(QDir::Files), QStringList {QFileInfo(path).fileName()});
    QImage image(path);
    QVERIFY(!image.isNull());
    // The action exports at the heatmap's on-screen size, two device pixels per pixel.
    QCOMPARE(image.size(), m_window->exportRouter()->defaultExportSize() * 2);
}

void TestMainWindow::exportBadSuffixFails()
{
    // An unknown suffix is refused with a message, and nothing is written.
    QVERIFY(waitForFirstResult());
    QTemporaryDir dir;
    QString error;
    QVERIFY(!m_window->exportRouter()->exportHeatmapGrid(dir.filePath(QStringLiteral("grid.bmpx")),
                                                         QSize(400, 300), 1.0, &error));
    QVERIFY(!error.isEmpty());
    QVERIFY(!QFile::exists(dir.filePath(QStringLiteral("grid.bmpx"))));
}

void TestMainWindow::scalingChartsShowCoreSweep()
{
    QVERIFY(waitForFirstResult());
    ScalingSweepRunner *runner = m_window->findChild<ScalingSweepRunner *>();
    if (!runner->data() || runner->isBusy()) {
        QSignalSpy done(runner, &ScalingSweepRunner::finished);
        QVERIFY(done.wait(attn::test::kWorkTimeoutMs));
    }
    QTest::qWait(100); // coalesced redraw
    const SessionParameters p = m_window->session()->parameters();
    const auto data = runner->data();
    QCOMPARE(data->keys, p.keyCount());
    QCOMPARE(quint64(data->seed), p.seed);
    QCOMPARE(data->trials, ScalingSweepRunner::trialsFor(p.keyCount()));

    // The same sweep straight from the core.
    std::vector<Index> dks;
    for (int dk : ScalingSweepRunner::sweepDks())
        dks.push_back(dk);
    QCOMPARE(dks.front(), Index(2));
    QCOMPARE(dks.back(), Index(2048));
    const Table table = scalingSweep(p.seed, data->trials, p.keyCount(), dks);
    const QList<QPointF> unscaled = m_window->findChild<MaxWeightChart *>()->unscaledPoints();
    const QList<QPointF> scaled = m_window->findChild<MaxWeightChart *>()->scaledPoints();
    const QList<QPointF> jUnscaled = m_window->findChild<JacobianNormChart *>()->unscaledPoints();
    const QList<QPointF> jScaled = m_window->findChild<JacobianNormChart *>()->scaledPoints();
    QCOMPARE(unscaled.size(), qsizetype(dks.size()));
    QCOMPARE(jScaled.size(), qsizetype(dks.size()));
    for (std::size_t i = 0; i < dks.size(); ++i) {
        const auto k = qsizetype(i);
        QCOMPARE(unscaled[k].x(), double(dks[i]));
        QCOMPARE(unscaled[k].y(), table.number(i, "max_weight_unscaled"));
        QCOMPARE(scaled[k].y(), table.number(i, "max_weight_scaled"));
        QCOMPARE(jUnscaled[k].y(), table.number(i, "jacobian_norm_unscaled"));
        QCOMPARE(jScaled[k].y(), table.number(i, "jacobian_norm_scaled"));
    }
    // E2's lesson is visible: unscaled saturates, scaled does not.
    QVERIFY(unscaled.back().y() > 0.9);
    QVERIFY(scaled.back().y() < 0.6);
    QCOMPARE(m_window->findChild<MaxWeightChart *>()->currentDk(), p.dK());
}

void TestMainWindow::scalingRunnerNewestWins()
{
    ScalingSweepRunner runner;
    QSignalSpy done(&runner, &ScalingSweepRunner::finished);
    QSignalSpy busy(&runner, &ScalingSweepRunner::busyChanged);
    for (int keys = 50; keys <= 60; ++keys)
        runner.request(quint64(keys), keys);
    QVERIFY(done.wait(attn::test::kWorkTimeoutMs));
    QTest::qWait(200);
    QCOMPARE(done.count(), 1);
    const auto data = done.at(0).at(0).value<std::shared_ptr<const ScalingSweepData>>();
    QCOMPARE(data->keys, 60);
    QCOMPARE(data->seed, quint64(60));
    QVERIFY(!runner.isBusy());
    QCOMPARE(busy.count(), 2); // busy once, idle once
    // Trial budget: 300 for few keys, never below 16.
    QCOMPARE(ScalingSweepRunner::trialsFor(4), 300);
    QCOMPARE(ScalingSweepRunner::trialsFor(1024), 16);

    // A sweep seen before (here by another runner, as in a second window) is the one kept:
    // delivered after the event loop turns, busy then idle, the same numbers; another τ is new.
    ScalingSweepRunner second;
    second.setStartDelay(0);
    QSignalSpy again(&second, &ScalingSweepRunner::finished);
    QSignalSpy secondBusy(&second, &ScalingSweepRunner::busyChanged);
    second.request(60, 60);
    QCOMPARE(again.count(), 0);
    QVERIFY(again.wait(attn::test::kWorkTimeoutMs));
    QCOMPARE(again.at(0).at(0).value<std::shared_ptr<const ScalingSweepData>>(), data);
    QCOMPARE(secondBusy.count(), 2);
    second.request(60, 60, 0.5, 2.0);
    QVERIFY(again.wait(attn::test::kWorkTimeoutMs));
    const auto other = again.at(1).at(0).value<std::shared_ptr<const ScalingSweepData>>();
    QVERIFY(other != data);
    QCOMPARE(other->temperature, 2.0);
    QCOMPARE(other->maxWeightUnscaled, data->maxWeightUnscaled); // τ changes the third curve
    QVERIFY(other->maxWeightCustom != data->maxWeightCustom);
}

void TestMainWindow::rowMetricsChartShowsSelectedHead()
{
    const ResultPtr r = waitForFirstResult();
    QVERIFY(r);
    RowMetricsChart *chart = m_window->findChild<RowMetricsChart *>();
    for (int head : {0, int(r->params.heads) - 1}) {
        chart->setHead(head);
        // The chart redraws on a coalescing timer: wait for the selected head's series (a fixed
        // qWait(60) was flaky on a loaded machine).
        const MatrixD &expectedWeights = r->weights[std::size_t(head)];
        QTRY_VERIFY_WITH_TIMEOUT(
            chart->maxWeightPoints().size() == qsizetype(expectedWeights.rows())
                && chart->maxWeightPoints().value(0).y() == expectedWeights.row(0).maxCoeff(),
            5000);
        QCOMPARE(chart->head(), head);
        const RowMetrics &m = r->metrics[std::size_t(head)];
        const QList<QPointF> maxW = chart->maxWeightPoints();
        const QList<QPointF> ent = chart->entropyPoints();
        const QList<QPointF> eff = chart->effectiveTermsPoints();
        QCOMPARE(maxW.size(), qsizetype(m.maxWeight.size()));
        for (qsizetype i = 0; i < maxW.size(); ++i) {
            QCOMPARE(maxW[i].x(), double(i));
            // Independent of the core metrics: recompute from the weights.
            const auto row = r->weights[std::size_t(head)].row(i);
            QCOMPARE(maxW[i].y(), row.maxCoeff());
            double entropy = 0, sumSq = 0;
            for (Index j = 0; j < row.size(); ++j) {
                if (row(j) > 0)
                    entropy -= row(j) * std::log(row(j));
                sumSq += row(j) * row(j);
            }
            QVERIFY(std::abs(ent[i].y() - entropy) <= 1e-12);
            QVERIFY(std::abs(eff[i].y() - 1.0 / sumSq) <= 1e-9 * (1.0 / sumSq));
        }
    }
    // Out-of-range heads are clamped.
    chart->setHead(999);
    QCOMPARE(chart->head(), r->params.heads - 1);
}

void TestMainWindow::tileClickEnlargesAndSelectsHead()
{
    const ResultPtr r = waitForFirstResult();
    QVERIFY(r && r->params.heads >= 2);
    HeatmapWidget *heatmap = m_window->heatmapWidget();
    QVERIFY(!heatmap->isSingleHead());
    emit heatmap->tileActivated(1);
    QVERIFY(heatmap->isSingleHead());
    QCOMPARE(heatmap->options().head, 1);
    QCOMPARE(m_window->findChild<RowMetricsChart *>()->head(), 1);
    emit heatmap->tileActivated(1);
    QVERIFY(!heatmap->isSingleHead());
}

void TestMainWindow::statusBarWarnsOnNonFinite()
{
    const ResultPtr r = waitForFirstResult();
    QVERIFY(r);
    auto *warning = m_window->findChild<QLabel *>(QStringLiteral("nonFiniteStatus"));
    QVERIFY(warning && !warning->isVisible());
    auto bad = std::make_shared<SessionResult>(*r);
    bad->nonFinite.found = true;
    bad->nonFinite.nanCount = 3;
    bad->nonFinite.row = 2;
    bad->nonFinite.col = 5;
    emit m_window->session()->resultChanged(bad);
    QVERIFY(warning->isVisible());
    QVERIFY(warning->text().contains(QLatin1String("NaN")));
    QVERIFY(warning->text().contains(QLatin1String("3 NaN")));
    QVERIFY(warning->text().contains(QLatin1String("i = 2")));
    emit m_window->session()->resultChanged(r);
    QVERIFY(!warning->isVisible());
    auto *sum = m_window->findChild<QLabel *>(QStringLiteral("rowSumStatus"));
    QVERIFY(sum && sum->text().contains(QStringLiteral("|Σw − 1|")));
}

void TestMainWindow::refusedChangeKeepsBanner()
{
    const ResultPtr r = waitForFirstResult();
    QVERIFY(r);
    HeatmapWidget *heatmap = m_window->heatmapWidget();
    QVERIFY(heatmap->noticeText().isEmpty());
    auto *nSpin = control<QSpinBox>("nSpin");
    QVERIFY(nSpin);
    const int n = r->params.n;
    QVERIFY(n >= 2 && n * 2 <= nSpin->maximum());

    // A budget the shown result fits and twice its n does not: the change is refused by the
    // computation, after the session took the new parameters.
    setSessionMemoryBudget(sessionResultBytes(r->params) + 1);
    struct Restore
    {
        ~Restore() { setSessionMemoryBudget(0); }
    } restore;
    QSignalSpy failed(m_window->session(), &AttentionSession::computeFailed);
    nSpin->setValue(n * 2);
    QVERIFY(failed.wait(attn::test::kWorkTimeoutMs));
    QCOMPARE(m_window->session()->result(), r); // still the previous result
    QCOMPARE(m_window->controlPanel()->parameters().n, n * 2);
    const QString message = failed.at(0).at(0).toString();
    QVERIFY(message.contains(QLatin1String("budget")));
    const QString banner = heatmap->noticeText();
    QVERIFY2(
        banner.startsWith(QStringLiteral("Not computed for n = %1: the heatmaps and Steps show the "
                                         "previous parameters, n = %2.\n")
                              .arg(n * 2)
                              .arg(n)),
        qPrintable(banner));
    QVERIFY2(banner.endsWith(message), qPrintable(banner));
    QCOMPARE(heatmap->noticeToolTip(), QStringLiteral("Not computed: ") + message);
    QCOMPARE(m_window->statusBar()->currentMessage(), heatmap->noticeToolTip());

    // A later change that computes clears both.
    setSessionMemoryBudget(0);
    QSignalSpy results(m_window->session(), &AttentionSession::resultChanged);
    auto *seed = control<QSpinBox>("seedSpin");
    QVERIFY(seed);
    seed->setValue(seed->value() + 1);
    // While it computes, the status bar says so instead of the refusal.
    QVERIFY(m_window->session()->isBusy());
    QCOMPARE(m_window->statusBar()->currentMessage(),
             QStringLiteral("Computing the new parameters\u2026"));
    QVERIFY(results.wait(attn::test::kWorkTimeoutMs));
    QCOMPARE(m_window->session()->result()->params.n, n * 2);
    QVERIFY2(heatmap->noticeText().isEmpty(), qPrintable(heatmap->noticeText()));
    QVERIFY(m_window->statusBar()->currentMessage().isEmpty());
}

void TestMainWindow::timingChartMeasures()
{
    TimingChart *timing = m_window->findChild<TimingChart *>();
    auto *maxN = timing->findChild<QComboBox *>(QStringLiteral("timingMaxNCombo"));
    auto *repeats = timing->findChild<QSpinBox *>(QStringLiteral("timingRepeatsSpin"));
    auto *d = timing->findChild<QSpinBox *>(QStringLiteral("timingDSpin"));
    QVERIFY(maxN && repeats && d);
    maxN->setCurrentIndex(0); // up to 512
    repeats->setValue(1);
    d->setValue(16);
    QCOMPARE(timing->sequenceLengths(), (std::vector<int> {128, 256, 512}));
    QSignalSpy finished(timing, &TimingChart::finished);
    QSignalSpy running(timing, &TimingChart::runningChanged);
    timing->run();
    QVERIFY(timing->isRunning());
    QVERIFY(finished.wait(60000));
    QVERIFY(!timing->isRunning());
    QCOMPARE(running.count(), 2);
    const auto data = timing->data();
    QVERIFY(data);
    QCOMPARE(data->n, (std::vector<double> {128, 256, 512}));
    for (std::size_t i = 0; i < data->n.size(); ++i) {
        // float32 score matrix: n² · 4 bytes.
        QCOMPARE(data->mib[i], data->n[i] * data->n[i] * 4.0 / (1024.0 * 1024.0));
        QVERIFY(data->seconds[i] > 0);
    }
    QVERIFY(std::isfinite(data->exponent));

    // Cancel right after starting: the run stops (cancelled or already done), never hangs.
    maxN->setCurrentIndex(3);
    timing->run();
    timing->cancel();
    QTRY_VERIFY_WITH_TIMEOUT(!timing->isRunning(), 60000);
}

void TestMainWindow::modeSwitchHidesAndRestoresDocks()
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

void TestMainWindow::everyControlHasToolTip()
{
    const QList<QWidget *> roots = {m_window->controlPanel(), m_window->findChild<TimingChart *>(),
                                    m_window->findChild<RowMetricsChart *>()};
    int checked = 0;
    for (QWidget *root : roots) {
        for (QWidget *w : root->findChildren<QWidget *>()) {
            const bool isControl = qobject_cast<QAbstractSpinBox *>(w)
                || qobject_cast<QComboBox *>(w) || qobject_cast<QAbstractSlider *>(w)
                || qobject_cast<QAbstractButton *>(w);
            if (!isControl || qobject_cast<QScrollBar *>(w))
                continue; // scroll bars belong to views, not to the user's controls
            if (qobject_cast<QAbstractSpinBox *>(w->parentWidget())
                || qobject_cast<QComboBox *>(w->parentWidget())
                || qobject_cast<QTabBar *>(w->parentWidget()))
                continue; // inner parts of a compound control (a tab bar's scroll arrows)
            QVERIFY2(!w->toolTip().isEmpty(),
                     qPrintable(QStringLiteral("%1 (%2) has no tooltip")
                                    .arg(w->objectName(), w->metaObject()->className())));
            ++checked;
        }
    }
    QVERIFY(checked >= 20);
}

void TestMainWindow::shortcutsAreUnique()
{
    const QList<QAction *> actions = m_window->shortcuts()->actions();
    QVERIFY(actions.size() >= 12);
    QSet<QString> seen;
    for (QAction *a : actions) {
        const QString key = a->shortcut().toString(QKeySequence::PortableText);
        QVERIFY2(!seen.contains(key), qPrintable(QStringLiteral("duplicate shortcut %1").arg(key)));
        seen.insert(key);
    }
    QVERIFY(seen.contains(QStringLiteral("Ctrl+E")));
    QVERIFY(seen.contains(QStringLiteral("F1")));
}

void TestMainWindow::initialSizeFitsScreen()
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

void TestMainWindow::switchingViewsKeepsWindowSize()
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

void TestMainWindow::restoredGeometryClampedToScreen()
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
void TestMainWindow::restoredDocksLeaveTheCentreItsShare()
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

// On the Long tab File → Export names the Long map and writes its visible window, in the
// background (LongMapView::exported reports), at the export's size.
void TestMainWindow::exportTargetsLongTab()
{
    QVERIFY(waitForFirstResult());
    AttentionViews *views = m_window->attentionViews();
    LongMapView *view = views->longMapView();
    view->setLength(256);
    QSignalSpy shown(view, &LongMapView::fullViewShown);
    views->setCurrentIndex(AttentionViews::LongTab);
    QVERIFY(shown.wait(60000));
    ExportRouter *router = m_window->exportRouter();
    QCOMPARE(router->currentTarget(), ExportRouter::Target::Long);
    QCOMPARE(router->currentName(), QStringLiteral("Long Map"));
    QCOMPARE(router->exportAction()->text(), QStringLiteral("&Export Long Map…"));
    QCOMPARE(router->currentFileName(), QStringLiteral("attention-long.png"));
    QTemporaryDir dir;
    const QString path = dir.filePath(QStringLiteral("long.png"));
    QSignalSpy exported(view, &LongMapView::exported);
    QString error;
    QVERIFY2(router->exportCurrentView(path, &error, QSize(600, 500), 1.0), qPrintable(error));
    QVERIFY(exported.wait(60000));
    QCOMPARE(exported.first().at(0).toString(), path);
    QVERIFY2(exported.first().at(1).toString().isEmpty(),
             qPrintable(exported.first().at(1).toString()));
    QCOMPARE(QImage(path).size(), QSize(600, 500));
    views->setCurrentIndex(AttentionViews::HeadsTab);
    QCOMPARE(router->currentTarget(), ExportRouter::Target::Heads);
}

void TestMainWindow::exportCurrentView_data()
{
    QTest::addColumn<QString>("view");
    QTest::addColumn<QString>("suffix");
    QTest::addColumn<int>("target");
    QTest::addColumn<QString>("name");
    QTest::addColumn<QString>("fileName");
    using T = ExportRouter::Target;
    for (const char *suffix : {"png", "svg", "pdf"}) {
        const QString sx = QLatin1String(suffix);
        QTest::addRow("heads grid %s", suffix) << "grid" << sx << int(T::Heads) << "Heatmap Grid"
                                               << "attention-heads.png";
        QTest::addRow("single head %s", suffix) << "head" << sx << int(T::Heads) << "Head 1"
                                                << "attention-head1.png";
        QTest::addRow("steps %s", suffix) << "steps" << sx << int(T::Steps) << "Attention Steps"
                                          << "attention-steps-head0.png";
        QTest::addRow("compare %s", suffix)
            << "compare" << sx << int(T::Compare) << "A/B Comparison"
            << "attention-compare.png";
        QTest::addRow("token head view %s", suffix)
            << "tokens" << sx << int(T::Tokens) << "Token Head View"
            << "attention-tokens.png";
        QTest::addRow("coloured tokens %s", suffix)
            << "text" << sx << int(T::Tokens) << "Coloured Tokens"
            << "attention-text.png";
        QTest::addRow("focused chart %s", suffix)
            << "chart" << sx << int(T::Chart) << "Max weight vs d_k"
            << "chart-max-weight-vs-d-k.png";
    }
    // Experiment figures come as PNG or SVG (exportExperimentFigure).
    QTest::addRow("experiment png") << "experiment"
                                    << "png" << int(T::Experiment) << "E1 Figure"
                                    << "e1.png";
    QTest::addRow("experiment svg") << "experiment"
                                    << "svg" << int(T::Experiment) << "E1 Figure"
                                    << "e1.png";
}

void TestMainWindow::exportCurrentView()
{
    QFETCH(QString, view);
    QFETCH(QString, suffix);
    QFETCH(int, target);
    QFETCH(QString, name);
    QFETCH(QString, fileName);
    QVERIFY(waitForFirstResult());
    AttentionViews *views = m_window->attentionViews();
    QTemporaryDir dir;
    QVERIFY(dir.isValid());
    const QString path = dir.filePath(QStringLiteral("current.") + suffix);
    const QString reference = dir.filePath(QStringLiteral("reference.") + suffix);

    // Switch to the view the way a user would, then write it as File → Export would.
    std::function<bool(QSize, QString *)> viewsOwnExport; // the view's own export path
    if (view == QLatin1String("grid") || view == QLatin1String("head")) {
        if (view == QLatin1String("head"))
            m_window->heatmapWidget()->showSingleHead(1);
        viewsOwnExport = [&](QSize size, QString *error) {
            return suffix == QLatin1String("png")
                ? m_window->heatmapActions()->exportView(reference, size * 2, 192.0, error)
                : m_window->heatmapActions()->exportView(reference, size, 96.0, error);
        };
    } else if (view == QLatin1String("steps")) {
        views->setCurrentIndex(AttentionViews::StepsTab);
        viewsOwnExport = [&](QSize size, QString *error) {
            return views->stepsView()->exportFigure(reference, size, 2.0, error);
        };
    } else if (view == QLatin1String("compare")) {
        views->setCurrentIndex(AttentionViews::CompareTab);
        QTRY_VERIFY_WITH_TIMEOUT(views->compareView()->isUpToDate(), attn::test::kWorkTimeoutMs);
        viewsOwnExport = [&](QSize size, QString *error) {
            return views->compareView()->exportFigure(reference, size, 2.0, error);
        };
    } else if (view == QLatin1String("tokens") || view == QLatin1String("text")) {
        views->setCurrentIndex(AttentionViews::TokensTab);
        views->tokensView()->setView(view == QLatin1String("text") ? TokenView::Text
                                                                   : TokenView::Heads);
        viewsOwnExport = [&](QSize size, QString *error) {
            return views->tokensView()->exportFigure(reference, size, 2.0, error);
        };
    } else if (view == QLatin1String("chart")) {
        m_window->activateWindow();
        QVERIFY(QTest::qWaitForWindowActive(m_window.get()));
        m_window->findChild<MaxWeightChart *>()->setFocus(Qt::MouseFocusReason); // as a click does
        QTRY_COMPARE(QApplication::focusWidget(),
                     static_cast<QWidget *>(m_window->findChild<MaxWeightChart *>()));
        viewsOwnExport = [&](QSize size, QString *error) {
            return exportWidget(m_window->findChild<MaxWeightChart *>(), reference, size, 2.0,
                                error);
        };
    } else {
        m_window->modeTabs()->setCurrentIndex(1);
        ExperimentsPanel *panel = m_window->experimentsPanel();
        QVERIFY(panel->setCurrentExperiment(QStringLiteral("E1")));
        QSignalSpy done(panel->currentPage(), &ExperimentPage::resultReady);
        panel->currentPage()->run();
        QVERIFY(done.wait(attn::test::kWorkTimeoutMs));
        viewsOwnExport = [&, panel](QSize size, QString *error) {
            return panel->currentPage()->exportFigure(reference, size, error);
        };
    }
    QCOMPARE(int(m_window->exportRouter()->currentTarget()), target);
    QVERIFY2(m_window->exportRouter()->currentName().contains(name),
             qPrintable(m_window->exportRouter()->currentName()));
    QCOMPARE(m_window->exportRouter()->currentFileName(), fileName);
    // File → Export names what it exports.
    QVERIFY2(m_window->exportRouter()->exportAction()->text().contains(name),
             qPrintable(m_window->exportRouter()->exportAction()->text()));

    const QSize size = m_window->exportRouter()->currentSize();
    QVERIFY(!size.isEmpty());
    QString error;
    QVERIFY2(m_window->exportRouter()->exportCurrentView(path, &error), qPrintable(error));
    QFile f(path);
    QVERIFY(f.open(QIODevice::ReadOnly));
    const QByteArray bytes = f.readAll();
    if (suffix == QLatin1String("png")) {
        const QImage image(path);
        QVERIFY(!image.isNull());
        // Two device pixels per pixel, except experiment figures (their size in pixels).
        QCOMPARE(image.size(), view == QLatin1String("experiment") ? size : size * 2);
        // The same picture as the view's own Export writes: one rendering path.
        QVERIFY2(viewsOwnExport(size, &error), qPrintable(error));
        const QImage own(reference);
        QCOMPARE(own.size(), image.size());
        QVERIFY(own.convertToFormat(QImage::Format_ARGB32)
                == image.convertToFormat(QImage::Format_ARGB32));
    } else {
        const QString error = vectorFigureError(suffix, bytes);
        QVERIFY2(error.isEmpty(), qPrintable(error));
    }
}

void TestMainWindow::exportMatchesRendererImage_data()
{
    QTest::addColumn<QString>("view");
    QTest::newRow("heads grid") << "grid";
    QTest::newRow("head 1") << "head";
    QTest::newRow("mean over heads") << "mean";
    QTest::newRow("steps head 1") << "steps";
    QTest::newRow("compare A/B") << "compare";
}

// File → Export's PNG against the renderer's own image of the same result at the same size,
// made here from the renderer classes (not through the window's or a view's export code):
// every pixel equal, so a wrong result, head, colormap, size or style is caught.
void TestMainWindow::exportMatchesRendererImage()
{
    QFETCH(QString, view);
    QVERIFY(waitForFirstResult());
    AttentionViews *views = m_window->attentionViews();
    HeatmapWidget *heatmap = m_window->heatmapWidget();
    // A colormap other than the default, so a renderer that ignores the options shows.
    HeatmapOptions shown = heatmap->options();
    shown.colormap = ColormapId::Magma;
    heatmap->setOptions(shown);
    const auto result = m_window->session()->result();
    QVERIFY(result && result->ok());
    const int heads = result->params.heads;
    QVERIFY(heads > 1);

    const QSize size(720, 480); // logical pixels; the PNG has 2 device pixels per pixel
    QImage expected;
    auto figureStyle = [](const QWidget *canvas) {
        FigureStyle style;
        const QFontInfo info(canvas->font());
        style.fontPixelSize = info.pixelSize() > 0 ? info.pixelSize() : 12;
        style.background = Qt::white;
        style.foreground = Qt::black;
        return style;
    };
    if (view == QLatin1String("grid") || view == QLatin1String("head")
        || view == QLatin1String("mean")) {
        if (view == QLatin1String("head"))
            heatmap->showSingleHead(1);
        else if (view == QLatin1String("mean"))
            heatmap->showSingleHead(heads);
        HeatmapOptions options = heatmap->options();
        QCOMPARE(options.colormap, ColormapId::Magma);
        QCOMPARE(options.view,
                 view == QLatin1String("grid") ? HeatmapView::Grid : HeatmapView::SingleHead);
        const HeatmapOptions defaults; // an export is drawn on white, with its caption
        options.background = defaults.background;
        options.foreground = defaults.foreground;
        options.showCaption = true;
        HeatmapRenderer renderer;
        renderer.setOptions(options);
        renderer.setResult(result);
        expected = renderer.render(size, 2.0);
    } else if (view == QLatin1String("steps")) {
        views->setCurrentIndex(AttentionViews::StepsTab);
        views->stepsView()->setHead(1);
        StepsRenderer renderer;
        renderer.setResult(result);
        renderer.setHead(1);
        renderer.setWeightsColormap(ColormapId::Magma);
        renderer.setSharedScoreRange(views->stepsView()->renderer().sharedScoreRange());
        renderer.setStyle(
            figureStyle(views->stepsView()->findChild<QWidget *>(QStringLiteral("stepsCanvas"))));
        expected = renderer.render(size, 2.0);
    } else {
        views->setCurrentIndex(AttentionViews::CompareTab);
        CompareView *compare = views->compareView();
        QTRY_VERIFY_WITH_TIMEOUT(compare->isUpToDate(), attn::test::kWorkTimeoutMs);
        const auto b = compare->renderer().resultB();
        QVERIFY(b && b->ok());
        QCOMPARE(compare->renderer().resultA(), result);
        // B is A with the other scale (the A/B view's default).
        QCOMPARE(b->params.scaleExponent, result->params.scaleExponent == 0.5 ? 0.0 : 0.5);
        CompareRenderer renderer;
        renderer.setResults(result, b);
        renderer.setHead(compare->renderer().head());
        renderer.setWeightsColormap(ColormapId::Magma);
        renderer.setStyle(
            figureStyle(compare->findChild<QWidget *>(QStringLiteral("compareCanvas"))));
        expected = renderer.render(size, 2.0);
    }
    QTemporaryDir dir;
    QVERIFY(dir.isValid());
    const QString path = dir.filePath(QStringLiteral("export.png"));
    QString error;
    QVERIFY2(m_window->exportRouter()->exportCurrentView(path, &error, size, 2.0),
             qPrintable(error));
    const QImage written = QImage(path).convertToFormat(QImage::Format_ARGB32);
    expected = expected.convertToFormat(QImage::Format_ARGB32);
    QCOMPARE(written.size(), size * 2);
    QCOMPARE(expected.size(), written.size());
    qsizetype differing = 0;
    QPoint first(-1, -1);
    for (int y = 0; y < written.height(); ++y) {
        const auto *a = reinterpret_cast<const QRgb *>(written.constScanLine(y));
        const auto *e = reinterpret_cast<const QRgb *>(expected.constScanLine(y));
        for (int x = 0; x < written.width(); ++x) {
            if (a[x] != e[x]) {
                if (differing++ == 0)
                    first = QPoint(x, y);
            }
        }
    }
    QVERIFY2(differing == 0,
             qPrintable(QStringLiteral("%1 pixels differ, first at (%2, %3)")
                            .arg(differing)
                            .arg(first.x())
                            .arg(first.y())));
}

void TestMainWindow::exportCurrentViewBadSuffixFails()
{
    QVERIFY(waitForFirstResult());
    QTemporaryDir dir;
    AttentionViews *views = m_window->attentionViews();
    for (int tab : {int(AttentionViews::HeadsTab), int(AttentionViews::StepsTab)}) {
        views->setCurrentIndex(tab);
        const QString path = dir.filePath(QStringLiteral("view.bmpx"));
        QString error;
        QVERIFY(!m_window->exportRouter()->exportCurrentView(path, &error));
        QVERIFY(!error.isEmpty());
        QVERIFY(!QFile::exists(path));
    }
}

void TestMainWindow::exportActionWritesFocusedChart()
{
    // Regression: the file dialog took the focus from the chart, so Ctrl+E on a clicked chart
    // wrote the heatmap grid instead.
    QVERIFY(waitForFirstResult());
    m_window->activateWindow();
    QVERIFY(QTest::qWaitForWindowActive(m_window.get()));
    QWidget *chart = m_window->findChild<JacobianNormChart *>();
    chart->setFocus(Qt::MouseFocusReason);
    QTRY_COMPARE(QApplication::focusWidget(), chart);
    QCOMPARE(m_window->exportRouter()->currentTarget(), ExportRouter::Target::Chart);
    QVERIFY(m_window->exportRouter()->exportAction()->text().contains(
        QLatin1String("Jacobian norm vs d_k")));
    QTemporaryDir dir;
    QVERIFY(dir.isValid());
    const QString path = dir.filePath(QStringLiteral("chart.png"));
    bool answered = false;
    QString title;
    QTimer::singleShot(200, this, [&] {
        auto *dialog = qobject_cast<QFileDialog *>(QApplication::activeModalWidget());
        if (!dialog)
            return;
        title = dialog->windowTitle();
        dialog->setDirectory(dir.path());
        auto *name = dialog->findChild<QLineEdit *>(QStringLiteral("fileNameEdit"));
        if (!name)
            return;
        name->setText(QFileInfo(path).fileName());
        answered = true;
        QMetaObject::invokeMethod(dialog, "accept", Qt::DirectConnection);
    });
    m_window->exportRouter()->exportAction()->trigger();
    QVERIFY(answered);
    QVERIFY2(title.contains(QLatin1String("Jacobian norm vs d_k")), qPrintable(title));
    const QImage image(path);
    QVERIFY(!image.isNull());
    QCOMPARE(image.size(), chart->size() * 2); // the chart as shown, two pixels per pixel
}

void TestMainWindow::viewMenuListsTabActions()
{
    AttentionViews *views = m_window->attentionViews();
    const QList<QAction *> tabActions = views->tabActions();
    QCOMPARE(tabActions.size(), 8);
    QMenu *viewMenu = nullptr;
    for (QAction *a : m_window->menuBar()->actions()) {
        if (a->menu() && a->text().remove(QLatin1Char('&')) == QLatin1String("View"))
            viewMenu = a->menu();
    }
    QVERIFY(viewMenu);
    const QList<QAction *> shortcuts
        = m_window->shortcuts()->actions(); // Help → Keyboard shortcuts
    for (int tab = 0; tab < tabActions.size(); ++tab) {
        QAction *a = tabActions[tab];
        QVERIFY2(viewMenu->actions().contains(a), qPrintable(a->text()));
        QVERIFY(shortcuts.contains(a));
        QCOMPARE(a->shortcut(), QKeySequence(QStringLiteral("Ctrl+Alt+%1").arg(tab + 1)));
    }
    // The mode actions (Attention / Experiments) are there too.
    int modes = 0;
    for (QAction *a : viewMenu->actions())
        modes += a->shortcut() == QKeySequence(QStringLiteral("Ctrl+1"))
            || a->shortcut() == QKeySequence(QStringLiteral("Ctrl+2"));
    QCOMPARE(modes, 2);
    // From the experiments, a tab action brings the attention mode back on that tab.
    m_window->modeTabs()->setCurrentIndex(1);
    tabActions[AttentionViews::CompareTab]->trigger();
    QCOMPARE(m_window->modeTabs()->currentIndex(), 0);
    QCOMPARE(views->currentIndex(), int(AttentionViews::CompareTab));
    tabActions[AttentionViews::StepsTab]->trigger();
    QCOMPARE(views->currentIndex(), int(AttentionViews::StepsTab));
}

void TestMainWindow::tourStepsPointAtTheirWidgets()
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

    const QStringList targets = {QStringLiteral("heatmapWidget"),
                                 QStringLiteral("sqrtCheck"),
                                 QStringLiteral("dkSlider"),
                                 QStringLiteral("maxWeightDock"),
                                 QStringLiteral("maskCombo"),
                                 QStringLiteral("positionalCheck"),
                                 QStringLiteral("headSortCombo"),
                                 QStringLiteral("tokensView"),
                                 QStringLiteral("playPanel"),
                                 QStringLiteral("modelView"),
                                 QStringLiteral("longMapView"),
                                 QStringLiteral("atlasView"),
                                 QString()};
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

    // A step whose control is scrolled out of the Controls panel scrolls it into view, so the
    // outline lands on it (not on whatever took its place).
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

void TestMainWindow::tourCalloutsLeaveTheHeatmapsVisible()
{
    // At 1280 × 800 no callout covers its target, and a callout about a control outside the
    // attention views leaves them visible (it lay over the heatmap the step talks about); a
    // tall panel (the Play dock's column) may take it over its own bottom part.
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

void TestMainWindow::tourStartsOnceOnFirstStart()
{
    QTemporaryDir dir;
    QSettings settings(dir.filePath(QStringLiteral("attnlab.ini")), QSettings::IniFormat);
    qunsetenv("ATTNLAB_NO_TOUR");
    QVERIFY(Tour::shouldStartAutomatically(settings, false));
    QVERIFY(!Tour::shouldStartAutomatically(settings, true)); // a file on the command line
    qputenv("ATTNLAB_NO_TOUR", "1");
    QVERIFY(!Tour::shouldStartAutomatically(settings, false));
    qunsetenv("ATTNLAB_NO_TOUR");
    settings.setValue(QLatin1String(Tour::shownKey), true);
    QVERIFY(!Tour::shouldStartAutomatically(settings, false)); // shown once already
}

// Play drives the session's α through the controls' path: the heatmaps' result ends at the last
// frame's value, the whole animation is one undo step (undo returns to α before Play), and an
// edit of a control while playing pauses it and is a step of its own.
void TestMainWindow::playIsOneUndoStep()
{
    QVERIFY(waitForFirstResult());
    AttentionSession *session = m_window->session();
    QUndoStack *undo = m_window->sessionController()->undoStack();
    const int before = undo->count();
    const double alphaBefore = session->parameters().scaleExponent;
    PlayPanel *play = m_window->playPanel();
    PlaySettings s;
    s.parameter = PlayParameter::ScaleExponent;
    s.from = 0;
    s.to = 0.8;
    s.frames = 5;
    s.framesPerSecond = 20;
    play->setSettings(s);
    play->play();
    QTRY_VERIFY_WITH_TIMEOUT(!play->isPlaying(), attn::test::kWorkTimeoutMs);
    QTRY_VERIFY_WITH_TIMEOUT(!session->isBusy(), attn::test::kWorkTimeoutMs);
    QCOMPARE(session->parameters().scaleExponent, 0.8);
    QTRY_COMPARE(session->result()->params.scaleExponent, 0.8);
    QCOMPARE(undo->count(), before + 1);
    undo->undo();
    QCOMPARE(session->parameters().scaleExponent, alphaBefore);

    // A control edit while playing: Play pauses, the edit is its own step.
    s.framesPerSecond = 1;
    s.loop = true;
    play->setSettings(s);
    play->play();
    QVERIFY(play->isPlaying());
    QTRY_COMPARE(session->parameters().scaleExponent, 0.0); // the first frame, once not busy
    const int during = undo->count();
    control<QSlider>("alphaSlider")->setValue(30);
    QVERIFY(!play->isPlaying());
    QCOMPARE(session->parameters().scaleExponent, 0.3);
    QCOMPARE(undo->count(), during + 1);
    QTest::qWait(1200); // a paused Play sends nothing more
    QCOMPARE(session->parameters().scaleExponent, 0.3);
}

// The Positions tab follows the session's n and d_model, and File → Export writes it.
void TestMainWindow::positionsTabExports()
{
    QVERIFY(waitForFirstResult());
    AttentionViews *views = m_window->attentionViews();
    views->setCurrentIndex(AttentionViews::PositionsTab);
    ExportRouter *router = m_window->exportRouter();
    QCOMPARE(router->currentTarget(), ExportRouter::Target::Positions);
    QCOMPARE(router->currentName(), QStringLiteral("Positional Encoding"));
    QCOMPARE(router->currentFileName(), QStringLiteral("positional-encoding.png"));
    const SessionParameters p = m_window->session()->parameters();
    QTemporaryDir dir;
    QVERIFY(dir.isValid());
    const QString svg = dir.filePath(QStringLiteral("positions.svg"));
    QString error;
    QVERIFY2(router->exportCurrentView(svg, &error, QSize(1000, 600)), qPrintable(error));
    QFile f(svg);
    QVERIFY(f.open(QIODevice::ReadOnly));
    const QString text = QString::fromUtf8(f.readAll());
    QVERIFY2(text.contains(
                 QStringLiteral("n = %1 positions \u00d7 d_model = %2").arg(p.n).arg(p.dModel)),
             qPrintable(text.left(2000)));
    const QString png = dir.filePath(QStringLiteral("positions.png"));
    QVERIFY2(router->exportCurrentView(png, &error, QSize(800, 500), 1.0), qPrintable(error));
    QCOMPARE(QImage(png).size(), QSize(800, 500));
}

void TestMainWindow::stepsWeightsFollowHeatmapColormap()
{
    // The weights panels of the steps and A/B views use the colormap picked for the heatmaps.
    QVERIFY(waitForFirstResult());
    auto *combo = m_window->findChild<HeatmapViewPanel *>()->findChild<QComboBox *>(
        QStringLiteral("colormapCombo"));
    QVERIFY(combo);
    for (ColormapId id : {ColormapId::Magma, ColormapId::Cividis, ColormapId::Viridis}) {
        const int index = combo->findData(int(id));
        QVERIFY(index >= 0);
        combo->setCurrentIndex(index);
        QCOMPARE(m_window->heatmapWidget()->options().colormap, id);
        QCOMPARE(m_window->attentionViews()->stepsView()->renderer().weightsColormap(), id);
    }
}

namespace {

QAction *actionWithShortcut(const MainWindow &window, const QKeySequence &key)
{
    for (QAction *a : window.shortcuts()->actions())
        if (a->shortcuts().contains(key))
            return a;
    return nullptr;
}

QWidget *editorNamed(const MainWindow &window, const QString &name)
{
    return window.findChild<QWidget *>(name);
}

} // namespace

// Ctrl+E, F5, Ctrl+K … while a line edit or spin box has the focus: the window's action fires
// (QLineEdit would take Ctrl+E as end of line, Ctrl+K as delete to end of line).
void TestMainWindow::windowShortcutsWinOverEditors_data()
{
    QTest::addColumn<QString>("editor");
    QTest::addColumn<QKeySequence>("key");
    const QList<QKeySequence> keys = {
        QKeySequence(Qt::CTRL | Qt::Key_E),
        QKeySequence(Qt::CTRL | Qt::SHIFT | Qt::Key_E),
        QKeySequence(Qt::Key_F5),
        QKeySequence(Qt::CTRL | Qt::Key_K),
        QKeySequence(Qt::CTRL | Qt::Key_PageDown),
        QKeySequence(Qt::CTRL | Qt::Key_PageUp),
        QKeySequence(Qt::CTRL | Qt::ALT | Qt::Key_2),
    };
    for (const char *editor : {"nSpin", "tokensEdit", "temperatureSpin", "hideKeysEdit"}) {
        for (const QKeySequence &key : keys)
            QTest::addRow("%s %s", editor, qPrintable(key.toString()))
                << QString::fromLatin1(editor) << key;
    }
}

void TestMainWindow::windowShortcutsWinOverEditors()
{
    QFETCH(QString, editor);
    QFETCH(QKeySequence, key);
    QVERIFY(waitForFirstResult());
    QAction *action = actionWithShortcut(*m_window, key);
    QVERIFY2(action, qPrintable(key.toString()));
    QVERIFY(m_window->shortcuts()->isWindowShortcut(key));
    // Only whether it fires: no file dialog, no recompute.
    QObject::disconnect(action, &QAction::triggered, nullptr, nullptr);
    QSignalSpy triggered(action, &QAction::triggered);

    m_window->activateWindow();
    QVERIFY(QTest::qWaitForWindowActive(m_window.get()));
    QWidget *w = editorNamed(*m_window, editor);
    QVERIFY2(w, qPrintable(editor));
    w->setFocus(Qt::OtherFocusReason);
    QTRY_VERIFY(w->hasFocus());
    const QString before = w->property("text").toString();
    QTest::keyClick(w, key[0].key(), key[0].keyboardModifiers());
    QCOMPARE(triggered.count(), 1);
    QCOMPARE(w->property("text").toString(), before); // not edited by the key
}

// Ctrl+Z in a focused spin box is the box's own (standard); once the focus leaves it, Ctrl+Z
// undoes the parameter change.
void TestMainWindow::undoIsTheEditorsUntilFocusLeaves()
{
    QVERIFY(waitForFirstResult());
    QVERIFY(!m_window->shortcuts()->isWindowShortcut(QKeySequence::Undo));
    QVERIFY(!m_window->shortcuts()->isWindowShortcut(QKeySequence(Qt::CTRL | Qt::Key_C)));
    QVERIFY(!m_window->shortcuts()->isWindowShortcut(QKeySequence(Qt::Key_E))); // typing
    QAction *undo = actionWithShortcut(*m_window, QKeySequence(Qt::CTRL | Qt::Key_Z));
    QVERIFY(undo);
    QSignalSpy undone(undo, &QAction::triggered);

    m_window->activateWindow();
    QVERIFY(QTest::qWaitForWindowActive(m_window.get()));
    auto *n = control<QSpinBox>("nSpin");
    const int start = m_window->session()->parameters().n;
    const int wanted = start == 12 ? 13 : 12;
    n->setFocus(Qt::OtherFocusReason);
    QTRY_VERIFY(n->hasFocus());
    n->selectAll();
    QTest::keyClicks(n, QString::number(wanted));
    QTest::keyClick(n, Qt::Key_Return);
    QCOMPARE(m_window->session()->parameters().n, wanted);
    QTest::keyClick(n, Qt::Key_Z, Qt::ControlModifier);
    QCOMPARE(undone.count(), 0); // the spin box's own undo

    m_window->heatmapWidget()->setFocus(Qt::OtherFocusReason);
    QTRY_VERIFY(!n->hasFocus());
    QTest::keyClick(m_window->heatmapWidget(), Qt::Key_Z, Qt::ControlModifier);
    QCOMPARE(undone.count(), 1);
    QCOMPARE(m_window->session()->parameters().n, start);
    QCOMPARE(n->value(), start);
}

// View → Reset Layout: after squeezing the window and the docks, the Controls dock is back at
// its first-start width and every dock of a first start is shown again.
void TestMainWindow::resetLayoutRestoresDocks()
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

// View → Presentation Mode (Ctrl+Shift+P) at 1280 × 800: the Steps view takes the whole window
// with larger text, the docks, the menu bar, the status bar and the mode tabs hidden; Esc
// brings back the layout the user had (a closed dock stays closed, the others where they were)
// and the text size. Switching modes while presenting keeps the docks hidden until the end.
void TestMainWindow::presentationModeFillsTheWindow()
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
    // The view fills the window (less the Attention tabs' bar) and its text is larger.
    QTRY_VERIFY2(steps->width() >= size.width() - 8, qPrintable(QString::number(steps->width())));
    QVERIFY(steps->height() >= size.height() - 120);
    QVERIFY(QFontInfo(steps->canvas()->font()).pixelSize() >= fontBefore * 1.4);
    QVERIFY(steps->renderer().style().fontPixelSize >= fontBefore * 1.4);
    QVERIFY(m_window->heatmapWidget()->renderer().options().fontPixelSize
            >= heatmapFontBefore * 1.4);
    // The action is the window's too: its shortcut works while the menu bar is hidden.
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

    // Into the experiments and back while presenting: the docks stay hidden until it ends.
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

// Presentation mode on the Steps tab with its Vectors shown: the strip fills its share of the
// whole window, its panels grow, and its query labels, in the larger font, are a line apart
// (every few rows when the rows are shorter than a line), never one over the next.
void TestMainWindow::presentationEnlargesTheVectors()
{
    QVERIFY(waitForFirstResult());
    const QSize size(1280, 800);
    m_window->resize(size);
    QTRY_COMPARE(m_window->size(), size);
    AttentionViews *views = m_window->attentionViews();
    views->setCurrentIndex(AttentionViews::StepsTab);
    StepsView *steps = views->stepsView();
    QTRY_VERIFY(steps->isVisible());
    steps->setVectorsShown(true);
    PipelineStrip *strip = steps->pipelineStrip();
    QVERIFY(strip->waitForPanels(attn::test::kWorkTimeoutMs));
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
    for (int k = 0; k < int(strip->panels().size()); ++k)
        QVERIFY2(QRectF(strip->rect()).contains(strip->panelRect(k)),
                 qPrintable(QString::number(k)));
    m_window->presentationMode()->action()->trigger();
    QVERIFY(!m_window->presentationMode()->isActive());
}

// Steps and Compare A/B of the first lesson (ten tokens) in a 1280 × 800 and a 1600 × 900
// window with the first-start docks: the maps fill the pane's width (they were 60 pixels
// stacked in one column beside an empty pane) — each at least a third of the pane wide, every
// query and key labelled, each panel whole inside the pane when scrolled to — and grow with it.
void TestMainWindow::stepsAndCompareFillThePane()
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
        m_window->resize(size);
        QTRY_COMPARE(m_window->size(), size);
        m_window->windowLayout()->applyDefaultDockSizes();
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
void TestMainWindow::compareStripShowsAlphaWhole()
{
    QVERIFY(waitForFirstResult());
    const QSize size(1280, 800);
    m_window->resize(size);
    QTRY_COMPARE(m_window->size(), size);
    m_window->windowLayout()->applyDefaultDockSizes();
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
void TestMainWindow::enlargingGivesDocksTheirWidthBack()
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

// "Hide keys" with input it cannot follow: the red border comes with the reasons, in the
// field's tooltip and the note under it; fixed input clears them.
void TestMainWindow::hideKeysSaysWhy_data()
{
    QTest::addColumn<QString>("text");
    QTest::addColumn<QStringList>("reasons"); // n_k = 8 (the defaults)
    QTest::newRow("three problems") << QStringLiteral("abc, 99, 5-2")
                                    << QStringList {QStringLiteral("'abc' is not a key index"),
                                                    QStringLiteral("99 is beyond n_k = 8"),
                                                    QStringLiteral("5-2 is an empty range")};
    QTest::newRow("key 8 of 0-7") << QStringLiteral("0, 8")
                                  << QStringList {QStringLiteral("8 is beyond n_k = 8")};
    QTest::newRow("range past the end")
        << QStringLiteral("6 - 9") << QStringList {QStringLiteral("6-9 goes beyond n_k = 8")};
    QTest::newRow("fine") << QStringLiteral("0, 3, 5-7") << QStringList {};
}

void TestMainWindow::hideKeysSaysWhy()
{
    QFETCH(QString, text);
    QFETCH(QStringList, reasons);
    const ResultPtr r = waitForFirstResult();
    QVERIFY(r);
    QCOMPARE(r->keyCount(), Index(8));
    QLineEdit *edit = m_window->findChild<HeatmapViewPanel *>()->hideKeysEdit();
    auto *note = m_window->findChild<HeatmapViewPanel *>()->findChild<QLabel *>(
        QStringLiteral("transformNote"));
    QVERIFY(note);
    const QString usualTip = edit->toolTip();
    edit->setText(text);
    for (const QString &reason : reasons) {
        QVERIFY2(edit->toolTip().contains(reason), qPrintable(edit->toolTip()));
        QVERIFY2(note->text().contains(reason), qPrintable(note->text()));
    }
    QCOMPARE(!edit->styleSheet().isEmpty(), !reasons.isEmpty());
    QCOMPARE(note->text().contains(QStringLiteral("Hide keys")), !reasons.isEmpty());
    edit->clear();
    QCOMPARE(edit->toolTip(), usualTip);
    QVERIFY(edit->styleSheet().isEmpty());
}

// The first screen at 1280 × 800 (a 1152 × 720 window, 90 % of the screen): the Scale and Mask
// sections are in the Controls dock without scrolling, the controls are not cut by a horizontal
// scroll bar, and a first start shows a striking result: one labelled head whose unscaled rows
// saturate (mean max weight above 0.8), not near-uniform tiles.
void TestMainWindow::firstScreenShowsTheLesson()
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

// A session file dropped on the window opens as File → Open Session does; a text drag or a file
// of another kind is not taken (the widgets keep their own drops).
void TestMainWindow::droppedFilesOpen()
{
    QVERIFY(waitForFirstResult());
    QTemporaryDir dir;
    const QString path = dir.filePath(QStringLiteral("dropped.attnlab.json"));
    QFile file(path);
    QVERIFY(file.open(QIODevice::WriteOnly));
    file.write(R"({"format":"attnlab-session","version":1,
 "parameters":{"version":1,"n":9,"n_k":9,"d_model":24,"heads":3,"seed":"5","kind":"encoder",
 "mask":"causal","padding":2,"scale_exponent":0.5,"temperature":1,"positional":false,
 "dtype":"float64"}})");
    file.close();
    const QPoint centre = m_window->rect().center();
    const auto dragAccepted = [&](QMimeData &mime) {
        QDragEnterEvent enter(centre, Qt::CopyAction, &mime, Qt::LeftButton, Qt::NoModifier);
        QApplication::sendEvent(m_window.get(), &enter);
        return enter.isAccepted();
    };
    QMimeData text;
    text.setText(QStringLiteral("the cat sat"));
    QVERIFY(!dragAccepted(text));
    QMimeData other;
    other.setUrls({QUrl::fromLocalFile(dir.filePath(QStringLiteral("notes.txt")))});
    QVERIFY(!dragAccepted(other));

    QMimeData mime;
    mime.setUrls({QUrl::fromLocalFile(dir.filePath(QStringLiteral("notes.txt"))),
                  QUrl::fromLocalFile(path)});
    QVERIFY(dragAccepted(mime));
    QDropEvent drop(QPointF(centre), Qt::CopyAction, &mime, Qt::LeftButton, Qt::NoModifier);
    QApplication::sendEvent(m_window.get(), &drop);
    QVERIFY(drop.isAccepted());
    QTRY_COMPARE_WITH_TIMEOUT(m_window->session()->parameters().n, 9, attn::test::kWorkTimeoutMs);
    const SessionParameters p = m_window->session()->parameters();
    QCOMPARE(p.dModel, 24);
    QCOMPARE(p.heads, 3);
    QCOMPARE(p.mask, MaskChoice::Causal);
    QCOMPARE(m_window->sessionController()->filePath(), path);
}

QTEST_MAIN(TestMainWindow)
ResultPtr TestMainWindow::computeN(int n)
{
    AttentionSession *session = m_window->session();
    SessionParameters p = session->parameters();
    p.n = n;
    QSignalSpy spy(session, &AttentionSession::resultChanged);
    session->setParameters(p);
    while (!session->result() || session->result()->params.n != n)
        if (!spy.wait(attn::test::kWorkTimeoutMs))
            return nullptr;
    QTest::qWait(50);
    return session->result();
}

void TestMainWindow::longMapsChooseAVisibleRange()
{
    // From 1 024 keys on, weights near 1/n sit in the lowest colour of [0, 1]: by default the
    // maps use the log scale over five decades below the largest shown weight, the range
    // fields and the colour bar saying so.
    QVERIFY(waitForFirstResult());
    HeatmapWidget *heatmap = m_window->heatmapWidget();
    auto *range = m_window->findChild<QComboBox *>(QStringLiteral("rangeCombo"));
    auto *scale = m_window->findChild<QComboBox *>(QStringLiteral("scaleCombo"));
    QVERIFY(range && scale);
    QCOMPARE(heatmap->renderer().norm(), ColorNorm::linear(0, 1));

    const ResultPtr r = computeN(2048);
    QVERIFY(r && r->ok());
    QCOMPARE(heatmap->result(), r);
    double largest = 0;
    for (const MatrixD &w : r->weights)
        largest = std::max(largest, w.maxCoeff());
    if (r->headCount() > 1)
        largest = std::max(largest, r->weightsMean.maxCoeff());
    const ColorNorm norm = heatmap->renderer().norm();
    QCOMPARE(norm, ColorNorm::upToLargestWeight(ColorScale::Log, largest));
    QCOMPARE(scale->currentData().toInt(), int(ColorScale::Log));
    QCOMPARE(range->currentText(), QStringLiteral("Up to max weight"));
    const QStringList bar = heatmap->renderer().colorbarLines();
    QVERIFY2(bar.value(0).endsWith(QLatin1String("log")), qPrintable(bar.join(u'|')));
    QVERIFY2(bar.value(1).startsWith(QLatin1String("to max weight [")), qPrintable(bar.join(u'|')));
    QVERIFY(heatmap->renderer().captionText().contains(bar.value(1)));
    // Sessions keep the range.
    const QJsonObject view = heatmapViewToJson(heatmap->options());
    QCOMPARE(view.value(QLatin1String("range")).toString(), QStringLiteral("max_weight"));
    QVERIFY(heatmapViewFromJson(view, HeatmapOptions()).maxWeightRange);

    // The map shows structure: most pixels are above the colormap's lowest colour.
    const QImage image = heatmap->renderer().tileImage(0, QSize(256, 256));
    const QRgb lowest = Colormap(heatmap->options().colormap).entry(0);
    qint64 dark = 0;
    for (int y = 0; y < image.height(); ++y)
        for (int x = 0; x < image.width(); ++x)
            dark += image.pixel(x, y) == lowest;
    QVERIFY2(dark * 4 < qint64(image.width()) * image.height(),
             qPrintable(QStringLiteral("%1 of %2 pixels in the lowest colour")
                            .arg(dark)
                            .arg(image.width() * image.height())));

    // Shorter maps go back to fixed [0, 1] ...
    QVERIFY(computeN(64));
    QCOMPARE(heatmap->renderer().norm(), ColorNorm::linear(0, 1));
    QCOMPARE(range->currentText(), QStringLiteral("Fixed [0, 1]"));
    QCOMPARE(scale->currentData().toInt(), int(ColorScale::Linear));
    // ... and a range picked by hand stays.
    range->setCurrentIndex(range->findText(QStringLiteral("Up to max weight")));
    QVERIFY(!heatmap->isRangeByLength());
    QVERIFY(heatmap->options().maxWeightRange);
    QCOMPARE(heatmap->options().scale, ColorScale::Linear);
    QVERIFY(computeN(2048));
    QCOMPARE(heatmap->options().scale, ColorScale::Linear);
    QVERIFY(
        heatmap->renderer().colorbarLines().value(1).startsWith(QLatin1String("to max weight")));
}

void TestMainWindow::openingAFileShowsEveryCell()
{
    // A zoom into one file's cells does not carry over to the next file of the same shape, nor
    // to a session that names no zoom.
    QVERIFY(waitForFirstResult());
    QTemporaryDir dir;
    QVERIFY(dir.isValid());
    const auto weightsFile = [&dir](const QString &name, int shift) {
        NpyArray a;
        a.shape = {2, 32, 32};
        a.type = NpyType::Float64;
        a.values.resize(std::size_t(a.size()));
        for (std::size_t row = 0; row < a.values.size() / 32; ++row) {
            double sum = 0;
            for (std::size_t j = 0; j < 32; ++j)
                sum += a.values[row * 32 + j] = 1.0 + double((row * 7 + j * 3 + shift) % 11);
            for (std::size_t j = 0; j < 32; ++j)
                a.values[row * 32 + j] /= sum;
        }
        const QString path = dir.filePath(name);
        writeNpy(path.toStdString(), a);
        return path;
    };
    const QString first = weightsFile(QStringLiteral("first.npy"), 0);
    const QString second = weightsFile(QStringLiteral("second.npy"), 5);
    HeatmapWidget *heatmap = m_window->heatmapWidget();
    AttentionSession *session = m_window->session();
    const auto settle = [session] {
        return QTest::qWaitFor([session] { return !session->isBusy(); },
                               attn::test::kWorkTimeoutMs);
    };
    QString error;
    QVERIFY2(m_window->tensorController()->openFile(first, &error), qPrintable(error));
    QVERIFY(settle());
    QTRY_COMPARE(heatmap->result()->keyCount(), 32);
    heatmap->zoomBy(4.0);
    QVERIFY(heatmap->isZoomed());

    QVERIFY2(m_window->tensorController()->openFile(second, &error), qPrintable(error));
    QVERIFY(settle());
    QTest::qWait(50);
    QCOMPARE(heatmap->result()->keyCount(), 32);
    QVERIFY(!heatmap->isZoomed());
    QCOMPARE(heatmap->visibleCells(), QRect(0, 0, 32, 32));

    // A session saved unzoomed opens unzoomed.
    const QString sessionPath = dir.filePath(QStringLiteral("unzoomed.attnlab.json"));
    QVERIFY2(m_window->sessionController()->saveFile(sessionPath, &error), qPrintable(error));
    heatmap->zoomBy(4.0);
    QVERIFY(heatmap->isZoomed());
    QVERIFY2(m_window->sessionController()->openFile(sessionPath, &error), qPrintable(error));
    QVERIFY(settle());
    QTest::qWait(50);
    QVERIFY(!heatmap->isZoomed());
}

void TestMainWindow::cancelledRunSaysWhatIsShown()
{
    // Cancel drops the new run's measurements; the message says the table and figure are still
    // the previous run's, and with which parameters.
    ExperimentPage *page = m_window->experimentsPanel()->page(QStringLiteral("E2"));
    QVERIFY(page);
    QVERIFY(page->setParameter(QStringLiteral("trials"), QStringLiteral("20")));
    QSignalSpy ready(page, &ExperimentPage::resultReady);
    page->run();
    QVERIFY(ready.wait(attn::test::kWorkTimeoutMs));
    const auto previous = page->result();
    QVERIFY(previous);

    QVERIFY(page->setParameter(QStringLiteral("trials"), QStringLiteral("100000")));
    QSignalSpy cancelled(page, &ExperimentPage::cancelled);
    QSignalSpy progress(page, &ExperimentPage::progressChanged);
    page->run();
    QTRY_VERIFY_WITH_TIMEOUT(!progress.isEmpty(), attn::test::kWorkTimeoutMs);
    page->findChild<QPushButton *>(QStringLiteral("cancelButton"))->click();
    QTRY_COMPARE_WITH_TIMEOUT(cancelled.count(), 1, attn::test::kWorkTimeoutMs);
    QCOMPARE(page->result(), previous);
    const QString message = page->message();
    QVERIFY2(message.startsWith(QLatin1String("Cancelled after ")), qPrintable(message));
    QVERIFY2(message.contains(QLatin1String("measurements are dropped")), qPrintable(message));
    QVERIFY2(message.contains(QLatin1String("still the previous run's")), qPrintable(message));
    QVERIFY2(message.contains(QLatin1String("trials = 20")), qPrintable(message));
}

void TestMainWindow::typedValuesKeepFieldsInPlace()
{
    // A note that a typed value brings (h moved to a divisor of d_model, τ refused, the sliding
    // window's rule) leaves every field where it was, so the next click lands where it was aimed.
    QVERIFY(waitForFirstResult());
    m_window->resize(1280, 800);
    QTest::qWait(50);
    AttentionSession *session = m_window->session();
    SessionParameters p = session->parameters();
    p.dModel = 64;
    p.heads = 4;
    p.window = 0;
    p.sinks = 0;
    session->setParameters(p);
    QTRY_COMPARE(m_window->controlPanel()->parameters().heads, 4);
    ControlPanel *panel = m_window->controlPanel();
    auto *controlsDock = m_window->findChild<QDockWidget *>(QStringLiteral("controlsDock"));
    QVERIFY(controlsDock);
    controlsDock->raise();
    QTest::qWait(50);
    const auto fields = [panel] {
        QMap<QString, QPoint> at;
        for (QWidget *w : panel->findChildren<QWidget *>()) {
            if (w->objectName().isEmpty() || !w->isVisible())
                continue;
            if (qobject_cast<QAbstractSpinBox *>(w) || qobject_cast<QComboBox *>(w)
                || qobject_cast<QAbstractSlider *>(w) || qobject_cast<QAbstractButton *>(w)
                || qobject_cast<QLineEdit *>(w))
                at.insert(w->objectName(), w->mapTo(panel, QPoint(0, 0)));
        }
        return at;
    };
    const auto type = [](QAbstractSpinBox *spin, const QString &text) {
        spin->setFocus();
        spin->selectAll();
        QTest::keyClicks(spin, text);
        QTest::keyClick(spin, Qt::Key_Return);
        QTest::qWait(50); // the layout settles
    };
    const auto compareFields = [](const QMap<QString, QPoint> &before,
                                  const QMap<QString, QPoint> &after, const char *what) {
        for (auto it = before.cbegin(); it != before.cend(); ++it)
            QVERIFY2(after.value(it.key()) == it.value(),
                     qPrintable(QStringLiteral("%1: %2 moved from %3,%4 to %5,%6")
                                    .arg(QLatin1String(what), it.key())
                                    .arg(it.value().x())
                                    .arg(it.value().y())
                                    .arg(after.value(it.key()).x())
                                    .arg(after.value(it.key()).y())));
    };

    QMap<QString, QPoint> before = fields();
    type(control<QSpinBox>("dModelSpin"), QStringLiteral("63"));
    QCOMPARE(panel->parameters().dModel, 63);
    QCOMPARE(panel->parameters().heads, 3);
    QVERIFY(!panel->findChild<QLabel *>(QStringLiteral("headsNote"))->text().isEmpty());
    compareFields(before, fields(), "d_model 63");

    before = fields();
    type(control<QAbstractSpinBox>("temperatureSpin"), QStringLiteral("0"));
    QVERIFY(!panel->findChild<QLabel *>(QStringLiteral("temperatureMessage"))->text().isEmpty());
    compareFields(before, fields(), "τ 0");

    before = fields();
    type(control<QSpinBox>("windowSpin"), QStringLiteral("3"));
    QCOMPARE(panel->parameters().window, 3);
    compareFields(before, fields(), "window 3");
}

void TestMainWindow::textsFitAt1280()
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

void TestMainWindow::exportDialogsStartInTheLastExportFolder()
{
    // Every export dialog starts in the folder of the last export, also after a restart.
    QVERIFY(waitForFirstResult());
    QSettings().remove(QStringLiteral("exportFolder"));
    QTemporaryDir dir;
    QVERIFY(dir.isValid());
    const QString folder = QDir(dir.path()).absoluteFilePath(QStringLiteral("exports"));
    QVERIFY(QDir().mkpath(folder));
    struct Forget
    {
        ~Forget() { QSettings().remove(QStringLiteral("exportFolder")); }
    } forget;

    const QString data = QDir(folder).filePath(QStringLiteral("attention.npz"));
    auto first = answerNextFileDialog(data);
    m_window->heatmapActions()->exportDataInteractive();
    QVERIFY(first->seen);
    QVERIFY(QFileInfo::exists(data));

    auto figure = answerNextFileDialog(QString());
    m_window->heatmapActions()->exportViewInteractive();
    QVERIFY(figure->seen);
    QCOMPARE(figure->directory, folder);

    // A new window (the next start) remembers it.
    m_window.reset();
    m_window = std::make_unique<MainWindow>();
    m_window->show();
    QVERIFY(waitForFirstResult());
    auto again = answerNextFileDialog(QString());
    m_window->heatmapActions()->exportDataInteractive();
    QVERIFY(again->seen);
    QCOMPARE(again->directory, folder);
}

void TestMainWindow::openRecentHoldsTensorFiles()
{
    // A tensor file opened joins File → Open Recent beside the sessions, and opens from there.
    QVERIFY(waitForFirstResult());
    RecentFiles *recent = m_window->sessionController()->recentFiles();
    recent->clear();
    QTemporaryDir dir;
    QVERIFY(dir.isValid());
    NpyArray a;
    a.shape = {1, 8, 8};
    a.type = NpyType::Float64;
    a.values.assign(64, 1.0 / 8);
    const QString tensors = QDir(dir.path()).absoluteFilePath(QStringLiteral("weights.npy"));
    writeNpy(tensors.toStdString(), a);
    QVERIFY(m_window->tensorController()->open(tensors));
    QCOMPARE(recent->files(), QStringList {tensors});
    const QList<QAction *> entries = recent->menu()->actions();
    QVERIFY(!entries.isEmpty());
    QVERIFY2(entries.constFirst()->text().contains(QLatin1String("weights.npy")),
             qPrintable(entries.constFirst()->text()));

    // Back to random inputs, then the recent entry loads the file again.
    m_window->tensorController()->backToRandomInputs();
    QTRY_VERIFY(!m_window->session()->parameters().tensors);
    entries.constFirst()->trigger();
    QTRY_VERIFY(m_window->session()->parameters().tensors);
    QCOMPARE(m_window->tensorController()->loadedPath(), tensors);
}

#include "tst_mainwindow.moc"
