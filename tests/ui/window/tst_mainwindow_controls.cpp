// Tests of the main window's Controls panel driving its session: the window builds offscreen, a
// control change produces exactly one new result and an unchanged value none, rapid changes
// deliver only the newest, the h combo lists only divisors of d_model, the d_k slider sets
// d_model (also while dragged), the scale box follows α, values from outside are kept, the
// shortcut actions edit the parameters, the status bar reports NaN/Inf, a change refused over the
// memory budget keeps a banner above the heatmaps until a later one computes, every control has
// a tooltip, and a note a typed value brings leaves every field in place.

#include "mainwindowtest.h"

#include "core/experiments/experiments.h"
#include "ui/charts/rowmetricschart.h"
#include "ui/charts/timingchart.h"
#include "ui/panels/experimentspanel.h"
#include "ui/views/heatmapwidget.h"

#include <QAbstractButton>
#include <QAbstractSlider>
#include <QAbstractSpinBox>
#include <QApplication>
#include <QCheckBox>
#include <QComboBox>
#include <QDockWidget>
#include <QLabel>
#include <QLineEdit>
#include <QScreen>
#include <QScrollBar>
#include <QSignalSpy>
#include <QSlider>
#include <QSpinBox>
#include <QStatusBar>
#include <QStyle>
#include <QStyleOptionSlider>
#include <QTabBar>
#include <QTest>

#include <cmath>

using namespace attn;
using mainwindowtest::ResultPtr;

namespace {

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

} // namespace

class TestMainWindowControls : public mainwindowtest::MainWindowTest
{
    Q_OBJECT

private slots:
    void init() { openWindow(); }
    void cleanup() { closeWindow(); }

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
    void statusBarWarnsOnNonFinite();
    void refusedChangeKeepsBanner();
    void everyControlHasToolTip();
    void typedValuesKeepFieldsInPlace();
};

void TestMainWindowControls::buildsOffscreen()
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

void TestMainWindowControls::controlChangeGivesOneResult_data()
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

void TestMainWindowControls::controlChangeGivesOneResult()
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

void TestMainWindowControls::unchangedValueGivesNoResult()
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

void TestMainWindowControls::staleResultsDropped()
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

void TestMainWindowControls::headsComboListsOnlyDivisors_data()
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

void TestMainWindowControls::headsComboListsOnlyDivisors()
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

void TestMainWindowControls::dkSliderSetsDModel_data()
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

void TestMainWindowControls::dkSliderSetsDModel()
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

void TestMainWindowControls::sliderDragEditsWhileDragging()
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

void TestMainWindowControls::largeSessionValuesKept()
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

void TestMainWindowControls::sqrtCheckboxMatchesAlpha()
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

void TestMainWindowControls::shortcutActionsEditParameters()
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

void TestMainWindowControls::statusBarWarnsOnNonFinite()
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

void TestMainWindowControls::refusedChangeKeepsBanner()
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

void TestMainWindowControls::everyControlHasToolTip()
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

void TestMainWindowControls::typedValuesKeepFieldsInPlace()
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

QTEST_MAIN(TestMainWindowControls)
#include "tst_mainwindow_controls.moc"
