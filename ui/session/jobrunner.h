#pragma once
// JobRunner: the one way the window runs work off the GUI thread besides the session worker
// (AttentionSession): experiment runs, the E2 sweep, the n² timing, view transforms and tile
// images. A job is a callable run on the runner's thread pool with a JobContext (a CancelToken
// from core/base/cancel.h and a progress reporter); its result is handed to a callback on the
// runner's thread (the GUI thread). Newest wins, after Qt's Mandelbrot example: starting a job
// cancels the one before (its token says so) and only the newest job's result, progress and
// failure are ever delivered; the superseded ones are dropped.

#include "core/base/cancel.h"

#include <QObject>
#include <QString>
#include <QThreadPool>

#include <atomic>
#include <exception>
#include <functional>
#include <memory>
#include <optional>
#include <type_traits>
#include <utility>

namespace attn {

/// What a job gets on its worker thread.
struct JobContext
{
    CancelToken cancel; ///< true once the job is superseded or cancelled: stop (throw Cancelled)
    /// Reports progress, a fraction in [0, 1]: JobRunner::progressChanged on the runner's
    /// thread (dropped once superseded). Thread-safe.
    std::function<void(double)> progress;
    void report(double fraction) const
    {
        if (progress)
            progress(fraction);
    }
};

class JobRunner : public QObject
{
    Q_OBJECT
public:
    /// `maxThreads` jobs may run at once (a superseded job that has not yet seen its token
    /// keeps a thread until it stops).
    explicit JobRunner(QObject *parent = nullptr, int maxThreads = 2);
    /// Cancels the running jobs and waits for them to return; nothing is delivered.
    ~JobRunner() override;

    /// Runs `work(const JobContext &)` on the pool and, when it returns and no job was started
    /// (nor cancel() called) since, calls `deliver(result)` on the runner's thread. `work` must
    /// not touch widgets. A Cancelled exception ends the job silently; any other exception is
    /// delivered as failed(what()). The previous job is cancelled.
    template<typename Work, typename Deliver> void run(Work work, Deliver deliver)
    {
        using Result = std::invoke_result_t<Work &, const JobContext &>;
        start([work = std::move(work),
               deliver = std::move(deliver)](const JobContext &context) mutable -> Delivery {
            auto result = std::make_shared<Result>(work(context));
            return [deliver, result]() mutable { deliver(std::move(*result)); };
        });
    }

    /// run(), then waits for the result (nullopt when the job failed or was cancelled) in a
    /// local event loop that excludes user input: the window keeps repainting, but nothing can
    /// change what the job depends on meanwhile (as behind a modal dialog).
    template<typename Work>
    auto runAndWait(Work work) -> std::optional<std::invoke_result_t<Work &, const JobContext &>>
    {
        using Result = std::invoke_result_t<Work &, const JobContext &>;
        std::optional<Result> out;
        bool done = false;
        run(std::move(work), [&out, &done](Result r) {
            out = std::move(r);
            done = true;
        });
        waitWhileBusy(&done);
        return out;
    }

    /// Cancels the running job and drops its result (busy turns false at once).
    void cancel();
    /// Turns the running job's token to cancelled but still delivers what it returns (a job
    /// that keeps its partial result, such as a timing run's points measured so far).
    void requestStop()
    {
        if (m_cancel)
            m_cancel->store(true);
    }
    /// True from run() until the newest job's result or failure is delivered.
    bool isBusy() const { return m_busy; }
    /// Blocks until every job started so far has returned (tests, shutdown).
    void waitForDone() { m_pool.waitForDone(); }
    /// Until isBusy() is false: waits for the jobs and processes events, so the newest job's
    /// result (or failure) is delivered and any job its delivery starts runs too (tests, and
    /// views' waitFor… helpers). On the runner's thread only.
    void waitUntilIdle();

signals:
    void busyChanged(bool busy);
    /// The newest job's progress (JobContext::report), on the runner's thread.
    void progressChanged(double fraction);
    /// The newest job threw (not Cancelled): its message.
    void failed(const QString &message);
    /// The newest job stopped by throwing Cancelled (after requestStop()).
    void cancelled();

private:
    using Delivery = std::function<void()>;
    void start(std::function<Delivery(const JobContext &)> job);
    void finish(quint64 generation, const Delivery &delivery, const QString &error);
    void setBusy(bool busy);
    void waitWhileBusy(const bool *done);

    QThreadPool m_pool;
    quint64 m_generation = 0; ///< the newest job (GUI thread only)
    std::shared_ptr<std::atomic<bool>> m_cancel; ///< the newest job's cancellation flag
    bool m_busy = false;
};

} // namespace attn
