// The worker threads of the Training tab (TrainingRunner), the induction lab (InductionRunner)
// and the Experiments panel (ExperimentRunner), driven from the GUI thread as a user drives
// them: play, pause, reset, new settings, cancel and closing while the worker runs. Each test
// compares what arrives on the GUI thread with the same computation done on the test's own
// thread (core's PairedRun and runExperiment), so a chunk lost, repeated or read while the worker
// still writes it shows as a wrong number. The tsan preset runs these under ThreadSanitizer.

#include "testutil.h"
#include "ui/session/experimentrunner.h"
#include "ui/session/inductionrunner.h"
#include "ui/session/trainingrunner.h"

#include "core/experiments/experiments.h"
#include "core/training/pairedrun.h"

#include <QElapsedTimer>
#include <QSignalSpy>
#include <QTest>

#include <memory>
#include <vector>

using namespace attn;
using namespace attn::training;

namespace {

TrainingSettings smallSettings(std::int64_t steps)
{
    TrainingSettings s;
    s.task = TaskKind::Recall;
    s.n = 4;
    s.dModel = 16;
    s.heads = 2;
    s.batch = 4;
    s.classes = 4;
    s.seed = 11;
    s.steps = steps;
    s.float32 = false;
    s.a = {0.5, 0.01};
    s.b = {0.0, 0.02};
    return s;
}

std::vector<double> losses(const std::vector<StepPoint> &points)
{
    std::vector<double> out;
    for (const StepPoint &p : points)
        out.push_back(p.loss);
    return out;
}

/// `steps` steps of the settings' runs on the calling thread, in one chunk.
ChunkResult trainHere(const TrainingSettings &s, std::int64_t steps)
{
    PairedRun run(s.toConfig());
    ChunkRequest request;
    request.maxSteps = steps;
    request.a = s.a;
    request.b = s.b;
    return run.advance(request);
}

} // namespace

class TestRunners : public QObject
{
    Q_OBJECT

private slots:
    void trainingWorkerEqualsCallingThread();
    void trainingResetAndNewSettingsWhilePlaying();
    void trainingClosedWhilePlaying();
    void inductionPauseResumeEqualsUninterrupted();
    void inductionClosedWhilePlaying();
    void experimentNewestRunWins();
    void experimentCancelledWhileRunning();
};

// Played in short bursts with pauses and single steps between them: the steps arrive on the GUI
// thread in order, each once, with the losses of the same steps taken on this thread.
void TestRunners::trainingWorkerEqualsCallingThread()
{
    const TrainingSettings s = smallSettings(40);
    TrainingRunner runner;
    QVERIFY(runner.setSettings(s));
    while (runner.stepCount() < s.steps) {
        runner.play();
        QTest::qWait(2);
        runner.pause();
        QVERIFY(!runner.playing());
        runner.waitForIdle();
        QVERIFY(!runner.busy());
        if (runner.stepCount() < s.steps) {
            runner.step();
            runner.waitForIdle();
        }
    }
    QCOMPARE(runner.stepCount(), s.steps);
    const ChunkResult here = trainHere(s, s.steps);
    QCOMPARE(losses(runner.history().a()), losses(here.a));
    QCOMPARE(losses(runner.history().b()), losses(here.b));
    QCOMPARE(runner.latest().step, s.steps);
    QCOMPARE(runner.latest().weightsA, here.latest.weightsA);
    QCOMPARE(runner.latest().weightsB, here.latest.weightsB);
}

// reset() and a new task while the worker runs: the superseded chunks are dropped (the history
// starts again at step 0 and holds only the new runs' steps).
void TestRunners::trainingResetAndNewSettingsWhilePlaying()
{
    TrainingSettings s = smallSettings(100000);
    TrainingRunner runner;
    QVERIFY(runner.setSettings(s));
    runner.play();
    QTRY_VERIFY_WITH_TIMEOUT(runner.stepCount() > 3, attn::test::kWorkTimeoutMs);
    runner.reset();
    QVERIFY(!runner.playing());
    QCOMPARE(runner.stepCount(), 0);
    runner.waitForIdle();
    QCOMPARE(runner.stepCount(), 0);

    runner.play();
    QTRY_VERIFY_WITH_TIMEOUT(runner.stepCount() > 3, attn::test::kWorkTimeoutMs);
    s.seed = 12; // a new task: the runs start again
    QVERIFY(runner.setSettings(s));
    QCOMPARE(runner.stepCount(), 0);
    runner.waitForIdle();
    QCOMPARE(runner.stepCount(), 0);
    for (int i = 0; i < 5; ++i) {
        runner.step();
        runner.waitForIdle();
    }
    const ChunkResult here = trainHere(s, 5);
    QCOMPARE(losses(runner.history().a()), losses(here.a));
    QCOMPARE(losses(runner.history().b()), losses(here.b));
}

// Closing the tab while it trains: the destructor waits only for the step in progress.
void TestRunners::trainingClosedWhilePlaying()
{
    auto runner = std::make_unique<TrainingRunner>();
    QVERIFY(runner->setSettings(smallSettings(100000)));
    runner->play();
    QTRY_VERIFY_WITH_TIMEOUT(runner->stepCount() > 0, attn::test::kWorkTimeoutMs);
    QVERIFY(runner->busy());
    QElapsedTimer clock;
    clock.start();
    runner.reset();
    // A step of this size takes well under a millisecond; a second is the margin of a busy,
    // instrumented run, far below a chunk of 100 000 steps.
    QVERIFY2(clock.elapsed() < 5000, qPrintable(QString::number(clock.elapsed())));
}

void TestRunners::inductionPauseResumeEqualsUninterrupted()
{
    InductionRunConfig config;
    config.vocab = 8;
    config.dModel = 8;
    config.heads = 1;
    config.layers = 2;
    config.repeat = 4;
    config.minRepeat = 2;
    config.batch = 2;
    config.heldOut = 2;
    config.seed = 5;
    InductionRunner straight;
    QVERIFY(straight.setConfig(config));
    straight.setStepLimit(30);
    straight.play();
    QTRY_VERIFY_WITH_TIMEOUT(!straight.playing() && !straight.busy(), attn::test::kWorkTimeoutMs);
    QCOMPARE(straight.stepCount(), 30);

    InductionRunner interrupted;
    QVERIFY(interrupted.setConfig(config));
    interrupted.setStepLimit(30);
    while (interrupted.stepCount() < 30) {
        interrupted.play();
        QTest::qWait(1);
        interrupted.pause();
        interrupted.waitForIdle();
    }
    QCOMPARE(interrupted.stepCount(), 30);
    // The held-out evaluation after the last step: the same weights, so the same numbers.
    QCOMPARE(interrupted.latest().loss, straight.latest().loss);
    QCOMPARE(interrupted.latest().accuracy, straight.latest().accuracy);
    QCOMPARE(interrupted.points().back().step, straight.points().back().step);
    QCOMPARE(interrupted.points().back().loss, straight.points().back().loss);
}

void TestRunners::inductionClosedWhilePlaying()
{
    auto runner = std::make_unique<InductionRunner>();
    InductionRunConfig config;
    config.vocab = 8;
    config.dModel = 8;
    config.heads = 1;
    config.repeat = 4;
    config.minRepeat = 2;
    config.batch = 2;
    config.heldOut = 2;
    QVERIFY(runner->setConfig(config));
    runner->setStepLimit(100000);
    runner->play();
    QTRY_VERIFY_WITH_TIMEOUT(runner->stepCount() > 0, attn::test::kWorkTimeoutMs);
    QElapsedTimer clock;
    clock.start();
    runner.reset();
    QVERIFY2(clock.elapsed() < 5000, qPrintable(QString::number(clock.elapsed())));
}

// Two runs started back to back: only the second's result arrives, equal to the experiment run
// on this thread.
void TestRunners::experimentNewestRunWins()
{
    ExperimentRunner runner;
    std::vector<std::shared_ptr<const ExperimentResult>> finished;
    connect(&runner, &ExperimentRunner::finished, this,
            [&finished](std::shared_ptr<const ExperimentResult> r) { finished.push_back(r); });
    const ExperimentParams first {{"n", "8"}, {"d_k", "16"}};
    const ExperimentParams second {{"n", "6"}, {"d_k", "4"}};
    runner.run("E1", first);
    runner.run("E1", second);
    QTRY_VERIFY_WITH_TIMEOUT(!runner.isRunning(), attn::test::kWorkTimeoutMs);
    QTest::qWait(50); // a stale delivery would arrive now
    QCOMPARE(finished.size(), std::size_t(1));
    const std::shared_ptr<const ExperimentResult> result = finished.front();
    QVERIFY(result);
    const ExperimentResult here = runExperiment("E1", second);
    QCOMPARE(result->matrices.size(), here.matrices.size());
    for (std::size_t m = 0; m < here.matrices.size(); ++m) {
        QCOMPARE(result->matrices[m].name, here.matrices[m].name);
        QVERIFY(result->matrices[m].values == here.matrices[m].values);
    }
}

void TestRunners::experimentCancelledWhileRunning()
{
    ExperimentRunner runner;
    int finished = 0;
    connect(&runner, &ExperimentRunner::finished, this, [&finished] { ++finished; });
    QSignalSpy cancelled(&runner, &ExperimentRunner::cancelled);
    // E8 times attention over a range of n: long enough to be cancelled in the middle.
    runner.run("E8", {});
    QVERIFY(runner.isRunning());
    runner.cancel();
    QTRY_VERIFY_WITH_TIMEOUT(!runner.isRunning(), attn::test::kWorkTimeoutMs);
    QTest::qWait(50);
    QCOMPARE(finished, 0);
    QCOMPARE(cancelled.count(), 1);
}

QTEST_GUILESS_MAIN(TestRunners)
#include "tst_runners.moc"
