#include "ui/session/attentionsession.h"

#include "ui/session/handover.h"
#include "ui/session/ownerthread.h"

#include <atomic>
#include <mutex>

namespace attn {

// The worker thread (an OwnerThread), after Qt's Mandelbrot example: it sleeps until a request
// is pending, takes the newest, computes it, and hands the result to the session by a queued
// call.
// A newer request raises the generation counter, which the running computation polls (between
// heads) to stop early; its result is then dropped.
class AttentionSession::Worker
{
public:
    explicit Worker(AttentionSession *session)
        : m_session(session)
    { }

    ~Worker() { m_thread.stop(); }

    void request(const SessionParameters &params, quint64 id)
    {
        {
            std::lock_guard lock(m_thread.mutex());
            m_pending = params;
            m_pendingId = id;
            m_hasPending = true;
            m_newest.store(id);
        }
        if (!m_thread.started()) // only the GUI thread starts the worker
            m_thread.start([this] { run(); });
        else
            m_thread.wake();
    }

    quint64 startedCount() const { return m_started.load(); }
    quint64 completedCount() const { return m_completed.load(); }

private:
    void run()
    {
        for (;;) {
            SessionParameters params;
            quint64 id = 0;
            {
                std::unique_lock lock(m_thread.mutex());
                if (!m_thread.waitFor(lock, [this] { return m_hasPending; }))
                    return;
                params = m_pending;
                id = m_pendingId;
                m_hasPending = false;
            }
            m_started.fetch_add(1);
            // Threads: the core engine's policy (threadsForFlops) per stage.
            auto stale = [this, id] { return m_thread.stopRequested() || m_newest.load() != id; };
            SessionResult result = computeSession(params, CancelToken(stale), &m_cache);
            result.requestId = id;
            if (stale()) {
                m_cache.share(std::move(result)).reset(); // its matrices go to the pool
                continue; // superseded: a newer request is pending (or we are shutting down)
            }
            m_completed.fetch_add(1);
            // Its matrices return to m_cache's pool when the last holder drops it.
            std::shared_ptr<const SessionResult> done = m_cache.share(std::move(result));
            // Queued to the session's (GUI) thread; dropped by Qt if the session is destroyed
            // first (it is not: the destructor joins this thread before the session dies).
            postTo(m_session, [session = m_session, done] { session->deliver(done); });
        }
    }

    AttentionSession *m_session;
    SessionComputeCache m_cache; ///< raw scores of the last computation (worker thread only)
    OwnerThread m_thread; ///< its mutex() guards the pending request
    SessionParameters m_pending;
    quint64 m_pendingId = 0;
    bool m_hasPending = false;
    std::atomic<quint64> m_newest {0};
    std::atomic<quint64> m_started {0};
    std::atomic<quint64> m_completed {0};
};

void AttentionSession::registerMetaTypes()
{
    qRegisterMetaType<attn::SessionParameters>("attn::SessionParameters");
    qRegisterMetaType<std::shared_ptr<const attn::SessionResult>>(
        "std::shared_ptr<const attn::SessionResult>");
}

AttentionSession::AttentionSession(QObject *parent)
    : QObject(parent)
    , m_worker(std::make_unique<Worker>(this))
{
    registerMetaTypes();
}

AttentionSession::~AttentionSession()
{
    m_worker.reset(); // aborts the running computation and joins the thread
}

void AttentionSession::setParameters(const SessionParameters &params)
{
    if (params == m_params) {
        if (!m_result && !m_busy)
            recompute(); // nothing shown yet: the first setParameters always computes
        return;
    }
    const QString error = params.validate();
    if (!error.isEmpty()) {
        emit computeFailed(error);
        return;
    }
    m_params = params;
    emit parametersChanged(m_params);
    schedule();
}

void AttentionSession::recompute()
{
    const QString error = m_params.validate();
    if (!error.isEmpty()) {
        emit computeFailed(error);
        return;
    }
    schedule();
}

bool AttentionSession::isBusy() const
{
    return m_busy;
}

AttentionSession::WorkStats AttentionSession::workStats() const
{
    WorkStats stats;
    stats.requests = m_lastRequest;
    stats.started = m_worker->startedCount();
    stats.completed = m_worker->completedCount();
    stats.delivered = m_delivered;
    return stats;
}

void AttentionSession::schedule()
{
    ++m_lastRequest;
    m_worker->request(m_params, m_lastRequest);
    setBusy(true);
}

void AttentionSession::deliver(std::shared_ptr<const SessionResult> result)
{
    if (!result || result->requestId != m_lastRequest)
        return; // stale: a newer request was made after this one started
    setBusy(false);
    ++m_delivered;
    if (!result->ok()) {
        emit computeFailed(result->error);
        return;
    }
    m_result = std::move(result);
    emit resultChanged(m_result);
}

void AttentionSession::setBusy(bool busy)
{
    if (busy == m_busy)
        return;
    m_busy = busy;
    emit busyChanged(busy);
}

} // namespace attn
