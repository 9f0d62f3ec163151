// JobRunner (ui/session/jobrunner.h): results arrive on the runner's thread, the newest job
// wins (a superseded job sees its token cancelled and its result is dropped), failures and
// cancellations are reported, runAndWait returns the job's value.

#include "ui/session/jobrunner.h"

#include <QCoreApplication>
#include <QSignalSpy>
#include <QTest>
#include <QThread>

#include <atomic>
#include <chrono>
#include <stdexcept>
#include <thread>

using namespace attn;

class TestJobRunner : public QObject
{
    Q_OBJECT

private slots:
    void deliversOnTheRunnersThread()
    {
        JobRunner runner;
        QSignalSpy busy(&runner, &JobRunner::busyChanged);
        QThread *worker = nullptr;
        int result = 0;
        QThread *deliveredOn = nullptr;
        runner.run(
            [&worker](const JobContext &) {
                worker = QThread::currentThread();
                return 6 * 7;
            },
            [&](int r) {
                result = r;
                deliveredOn = QThread::currentThread();
            });
        QVERIFY(runner.isBusy());
        QTRY_COMPARE(result, 42);
        QVERIFY(worker != QThread::currentThread());
        QCOMPARE(deliveredOn, QThread::currentThread());
        QVERIFY(!runner.isBusy());
        QCOMPARE(busy.count(), 2); // true, then false
    }

    void newestWins()
    {
        // The first job waits for its token: the second run() cancels it, and only the second
        // job's result is delivered.
        JobRunner runner;
        std::atomic<bool> sawCancel {false};
        QList<int> delivered;
        runner.run(
            [&sawCancel](const JobContext &job) {
                for (int i = 0; i < 2000 && !job.cancel.isCancelled(); ++i)
                    std::this_thread::sleep_for(std::chrono::milliseconds(1));
                sawCancel = job.cancel.isCancelled();
                return 1;
            },
            [&delivered](int r) { delivered << r; });
        runner.run([](const JobContext &) { return 2; }, [&delivered](int r) { delivered << r; });
        QTRY_VERIFY(!runner.isBusy());
        runner.waitForDone();
        QCoreApplication::processEvents();
        QVERIFY(sawCancel);
        QCOMPARE(delivered, QList<int>({2}));
    }

    void progressAndFailure()
    {
        JobRunner runner;
        QSignalSpy progress(&runner, &JobRunner::progressChanged);
        QSignalSpy failed(&runner, &JobRunner::failed);
        bool delivered = false;
        runner.run(
            [](const JobContext &job) -> int {
                job.report(0.5);
                throw std::runtime_error("n = 0 is not a sequence length");
            },
            [&delivered](int) { delivered = true; });
        QTRY_COMPARE(failed.count(), 1);
        QCOMPARE(failed.at(0).at(0).toString(), QStringLiteral("n = 0 is not a sequence length"));
        QCOMPARE(progress.count(), 1);
        QCOMPARE(progress.at(0).at(0).toDouble(), 0.5);
        QVERIFY(!delivered);
        QVERIFY(!runner.isBusy());
    }

    void stopAndCancel()
    {
        // requestStop: the job sees its token; one that throws Cancelled reports cancelled(),
        // one that returns a partial result still delivers it. cancel() drops the result.
        JobRunner runner;
        QSignalSpy cancelled(&runner, &JobRunner::cancelled);
        const auto waitForToken = [](const JobContext &job) {
            while (!job.cancel.isCancelled())
                std::this_thread::sleep_for(std::chrono::milliseconds(1));
        };
        runner.run(
            [waitForToken](const JobContext &job) {
                waitForToken(job);
                job.cancel.throwIfCancelled();
                return 0;
            },
            [](int) { QFAIL("a cancelled job delivered"); });
        runner.requestStop();
        QTRY_COMPARE(cancelled.count(), 1);
        QVERIFY(!runner.isBusy());

        int partial = 0;
        runner.run(
            [waitForToken](const JobContext &job) {
                waitForToken(job);
                return 3; // the points measured before the stop
            },
            [&partial](int r) { partial = r; });
        runner.requestStop();
        QTRY_COMPARE(partial, 3);

        bool delivered = false;
        runner.run(
            [waitForToken](const JobContext &job) {
                waitForToken(job);
                return 4;
            },
            [&delivered](int) { delivered = true; });
        runner.cancel();
        QVERIFY(!runner.isBusy());
        runner.waitForDone();
        QCoreApplication::processEvents();
        QVERIFY(!delivered);
        QCOMPARE(cancelled.count(), 1);
    }

    void runAndWait()
    {
        JobRunner runner;
        const std::optional<QString> text
            = runner.runAndWait([](const JobContext &) { return QStringLiteral("done"); });
        QCOMPARE(text, std::optional<QString>(QStringLiteral("done")));
        const std::optional<int> none = runner.runAndWait(
            [](const JobContext &) -> int { throw std::runtime_error("refused"); });
        QVERIFY(!none);
    }

    void destructorWaits()
    {
        // The runner cancels and waits: the job's captured state outlives it, nothing is
        // delivered afterwards.
        std::atomic<bool> finished {false};
        bool delivered = false;
        {
            JobRunner runner;
            runner.run(
                [&finished](const JobContext &job) {
                    while (!job.cancel.isCancelled())
                        std::this_thread::sleep_for(std::chrono::milliseconds(1));
                    finished = true;
                    return 0;
                },
                [&delivered](int) { delivered = true; });
        }
        QVERIFY(finished);
        QCoreApplication::processEvents();
        QVERIFY(!delivered);
    }
};

QTEST_GUILESS_MAIN(TestJobRunner)
#include "tst_jobrunner.moc"
