// The Training tab's induction page: its runner (ui/session/inductionrunner.h) gives E17's rows
// (the same seeds, batches and numbers, bit for bit), pausing and playing again changes
// nothing, a new configuration restarts at step 0, the page shows the two heads' maps, and
// File → Export writes that page when it is shown.

#include "testutil.h"
#include "ui/panels/inductionpanel.h"
#include "ui/panels/trainingpanel.h"
#include "ui/session/inductionrunner.h"

#include "core/experiments/experiments.h"

#include <QApplication>
#include <QImage>
#include <QPushButton>
#include <QTabWidget>
#include <QTemporaryDir>
#include <QTest>

#include <cmath>
#include <vector>

using namespace attn;
using namespace attn::training;

namespace {

/// A small, fast configuration and the E17 parameters that describe it.
InductionRunConfig smallConfig()
{
    InductionRunConfig c;
    c.vocab = 16;
    c.dModel = 16;
    c.heads = 2;
    c.repeat = 6;
    c.minRepeat = 4;
    c.batch = 4;
    c.heldOut = 4;
    c.learningRate = 0.01;
    return c;
}

ExperimentParams smallParams(std::int64_t steps)
{
    return {{"steps", std::to_string(steps)},
            {"eval_every", std::to_string(InductionRunner::evalEvery)},
            {"vocab", "16"},
            {"d_model", "16"},
            {"heads", "2"},
            {"repeat", "6"},
            {"min_repeat", "4"},
            {"batch", "4"},
            {"held_out", "4"},
            {"lr", "0.01"}};
}

void runTo(InductionRunner &runner, std::int64_t steps)
{
    runner.setStepLimit(steps);
    runner.play();
    runner.waitForIdle();
}

/// The runner's points equal E17's rows, cell for cell.
void compareWithExperiment(const InductionRunner &runner, std::int64_t steps)
{
    const ExperimentResult e17 = runExperiment("E17", smallParams(steps));
    const std::vector<InductionRunner::Point> &points = runner.points();
    QCOMPARE(points.size(), e17.table.rowCount());
    for (std::size_t i = 0; i < points.size(); ++i) {
        const InductionRunner::Point &p = points[i];
        QCOMPARE(double(p.step), e17.table.number(i, "step"));
        QCOMPARE(p.loss, e17.table.number(i, "loss"));
        QCOMPARE(p.trainLoss, e17.table.number(i, "train_loss"));
        QCOMPARE(p.accuracy, e17.table.number(i, "accuracy"));
        QCOMPARE(p.inductionScore, e17.table.number(i, "induction_score"));
        QCOMPARE(p.previousTokenScore, e17.table.number(i, "previous_token_score"));
    }
}

} // namespace

class TestInductionTab : public QObject
{
    Q_OBJECT

private slots:
    void runnerEqualsExperiment();
    void pauseAndPlayChangeNothing();
    void newConfigRestarts();
    void panelShowsTheHeads();
    void exportsThePageShown();
};

void TestInductionTab::runnerEqualsExperiment()
{
    InductionRunner runner;
    QVERIFY(runner.setConfig(smallConfig()));
    runTo(runner, 60); // points at 0, 25, 50 and the last step, 60
    QCOMPARE(runner.stepCount(), std::int64_t(60));
    QVERIFY(!runner.playing());
    compareWithExperiment(runner, 60);
    QCOMPARE(runner.latest().firstSequenceWeights.size(), std::size_t(4));
}

void TestInductionTab::pauseAndPlayChangeNothing()
{
    // Stopped at step 30 and played on to 60: the same points as one run (the point at 30 is
    // one E17 does not have, since its rows are every 25 steps; the others are E17's).
    InductionRunner runner;
    QVERIFY(runner.setConfig(smallConfig()));
    runTo(runner, 30);
    QCOMPARE(runner.stepCount(), std::int64_t(30));
    runTo(runner, 60);
    QCOMPARE(runner.stepCount(), std::int64_t(60));
    std::vector<InductionRunner::Point> points = runner.points();
    QCOMPARE(points.size(), std::size_t(5));
    QCOMPARE(points[2].step, std::int64_t(30));
    InductionRunner straight;
    QVERIFY(straight.setConfig(smallConfig()));
    runTo(straight, 60);
    const std::vector<InductionRunner::Point> &reference = straight.points();
    for (const std::size_t i : {0, 1, 3}) {
        QCOMPARE(points[i].step, reference[i == 3 ? 2 : i].step);
        QCOMPARE(points[i].loss, reference[i == 3 ? 2 : i].loss);
        QCOMPARE(points[i].inductionScore, reference[i == 3 ? 2 : i].inductionScore);
    }
    QCOMPARE(points.back().loss, reference.back().loss);
    QCOMPARE(points.back().previousTokenScore, reference.back().previousTokenScore);
}

void TestInductionTab::newConfigRestarts()
{
    InductionRunner runner;
    QVERIFY(runner.setConfig(smallConfig()));
    runTo(runner, 10);
    InductionRunConfig c = smallConfig();
    c.seed = 5;
    QVERIFY(runner.setConfig(c));
    QCOMPARE(runner.stepCount(), std::int64_t(0));
    QVERIFY(runner.points().empty());
    c.heads = 3; // does not divide d_model = 16
    QString error;
    QVERIFY(!runner.setConfig(c, &error));
    QVERIFY2(error.contains(QStringLiteral("h = 3")), qPrintable(error));
    QCOMPARE(runner.config().seed, std::uint64_t(5));
}

void TestInductionTab::panelShowsTheHeads()
{
    InductionPanel panel;
    panel.resize(1200, 800);
    panel.show();
    QVERIFY(QTest::qWaitForWindowExposed(&panel));
    QCOMPARE(panel.config().vocab, Index(64)); // E17's defaults
    QCOMPARE(panel.runner()->stepLimit(), std::int64_t(1200));
    QVERIFY(panel.runner()->setConfig(smallConfig()));
    panel.runner()->setStepLimit(30);
    QTest::mouseClick(panel.playButton(), Qt::LeftButton);
    panel.runner()->waitForIdle();
    QTRY_COMPARE(panel.inductionMap()->matrix().rows(), Eigen::Index(12));
    QCOMPARE(panel.previousTokenMap()->matrix().rows(), Eigen::Index(12));
    // The maps are the best heads' weights on the first held-out sequence: causal rows of 1.
    const MatrixD &w = panel.inductionMap()->matrix();
    QVERIFY((w.rowwise().sum().array() - 1.0).abs().maxCoeff() < 1e-5);
    QCOMPARE(panel.playButton()->text(), QStringLiteral("Play"));
}

void TestInductionTab::exportsThePageShown()
{
    // File → Export on the Training tab writes the page shown: on the Induction head page, the
    // page itself (or its chart); on the A/B page, the A and B heatmaps as before.
    TrainingPanel panel;
    panel.resize(1300, 800);
    panel.show();
    QVERIFY(QTest::qWaitForWindowExposed(&panel));
    QTemporaryDir dir;
    QVERIFY(!panel.inductionShown());
    panel.pages()->setCurrentWidget(panel.inductionPanel());
    QVERIFY(panel.inductionShown());
    QCOMPARE(panel.heatmapsExportSize(), panel.inductionPanel()->size().expandedTo({1000, 450}));
    QString error;
    const QString page = dir.filePath(QStringLiteral("page.png"));
    QVERIFY2(panel.exportHeatmaps(page, QSize(1200, 700), 1.0, &error), qPrintable(error));
    QCOMPARE(QImage(page).size(), QSize(1200, 700));
    const QString chart = dir.filePath(QStringLiteral("chart.png"));
    QVERIFY2(panel.exportChart(chart, QSize(800, 400), 1.0, &error), qPrintable(error));
    QCOMPARE(QImage(chart).size(), QSize(800, 400));
}

QTEST_MAIN(TestInductionTab)
#include "tst_inductiontab.moc"
