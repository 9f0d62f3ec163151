// Tests of the main window's views and chart docks: the scaling charts show the core's sweep and
// their runner keeps the newest request, the row metrics chart shows the selected head, a tile
// click enlarges it, the timing chart measures and cancels, Steps and A/B follow the heatmaps'
// colormap, "Hide keys" says why it cannot follow its input, long maps choose a visible colour
// range, and a cancelled experiment run says what is still shown.

#include "mainwindowtest.h"

#include "core/experiments/experiments.h"
#include "ui/charts/rowmetricschart.h"
#include "ui/charts/scalingchart.h"
#include "ui/charts/scalingsweeprunner.h"
#include "ui/charts/timingchart.h"
#include "ui/document/sessionfile.h"
#include "ui/panels/experimentpage.h"
#include "ui/panels/experimentspanel.h"
#include "ui/panels/heatmapviewpanel.h"
#include "ui/render/heatmaprenderer.h"
#include "ui/render/stepsrenderer.h"
#include "ui/views/attentionviews.h"
#include "ui/views/heatmapwidget.h"
#include "ui/views/stepsview.h"

#include <QComboBox>
#include <QImage>
#include <QLabel>
#include <QLineEdit>
#include <QPushButton>
#include <QSignalSpy>
#include <QSpinBox>
#include <QTest>

#include <cmath>

using namespace attn;
using mainwindowtest::ResultPtr;

class TestMainWindowViews : public mainwindowtest::MainWindowTest
{
    Q_OBJECT

private slots:
    void init() { openWindow(); }
    void cleanup() { closeWindow(); }

    void scalingChartsShowCoreSweep();
    void scalingRunnerNewestWins();
    void rowMetricsChartShowsSelectedHead();
    void tileClickEnlargesAndSelectsHead();
    void timingChartMeasures();
    void stepsWeightsFollowHeatmapColormap();
    void hideKeysSaysWhy_data();
    void hideKeysSaysWhy();
    void longMapsChooseAVisibleRange();
    void cancelledRunSaysWhatIsShown();

private:
    /// Sets n through the session and waits for its result; null on timeout.
    ResultPtr computeN(int n);
};

void TestMainWindowViews::scalingChartsShowCoreSweep()
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

void TestMainWindowViews::scalingRunnerNewestWins()
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

void TestMainWindowViews::rowMetricsChartShowsSelectedHead()
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

void TestMainWindowViews::tileClickEnlargesAndSelectsHead()
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

void TestMainWindowViews::timingChartMeasures()
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

void TestMainWindowViews::stepsWeightsFollowHeatmapColormap()
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

// "Hide keys" with input it cannot follow: the red border comes with the reasons, in the
// field's tooltip and the note under it; fixed input clears them.
void TestMainWindowViews::hideKeysSaysWhy_data()
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

void TestMainWindowViews::hideKeysSaysWhy()
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

ResultPtr TestMainWindowViews::computeN(int n)
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

void TestMainWindowViews::longMapsChooseAVisibleRange()
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

void TestMainWindowViews::cancelledRunSaysWhatIsShown()
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

QTEST_MAIN(TestMainWindowViews)
#include "tst_mainwindow_views.moc"
