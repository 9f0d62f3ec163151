#pragma once
// AttentionSession: the object between the controls and the core (after Tiled's MapDocument).
// Holds the parameters, computes in a worker thread (newest request wins: a request made while
// another is running supersedes it, and stale results are never delivered), and emits
// resultChanged on the GUI thread.

#include "ui/session/sessioncompute.h"
#include "ui/session/sessionparameters.h"

#include <QMetaType>
#include <QObject>

#include <memory>

namespace attn {

class AttentionSession : public QObject
{
    Q_OBJECT
public:
    /// Does not compute yet: call recompute() (or setParameters) for the first result.
    explicit AttentionSession(QObject *parent = nullptr);
    ~AttentionSession() override; ///< stops the worker cleanly

    const SessionParameters &parameters() const { return m_params; }
    /// Latest delivered result (nullptr before the first one).
    std::shared_ptr<const SessionResult> result() const { return m_result; }

    /// Sets parameters and schedules a computation (no-op when equal to the current ones, unless
    /// there is no result yet and none is being computed).
    /// Invalid parameters emit computeFailed with the message and keep the old parameters and
    /// the old result (parameters() is always valid).
    void setParameters(const SessionParameters &params);
    /// Recomputes with the current parameters.
    void recompute();
    /// True while a computation is queued or running.
    bool isBusy() const;

    /// Work counters since construction (for bench/bench_gui.cpp and tests). A request made
    /// while another is pending replaces it, so requests − started were dropped without running;
    /// started − completed were stopped part-way (or finished stale) because a newer request
    /// came; completed − delivered were superseded on their way to the GUI thread.
    struct WorkStats
    {
        quint64 requests = 0; ///< computations asked for (setParameters/recompute)
        quint64 started = 0; ///< computations the worker began
        quint64 completed = 0; ///< computations run to the end while still the newest
        quint64 delivered = 0; ///< results emitted with resultChanged or computeFailed
    };
    WorkStats workStats() const;

    /// Registers the signal argument types (done by the constructor; call it before using
    /// them in queued connections elsewhere).
    static void registerMetaTypes();

signals:
    void parametersChanged(const attn::SessionParameters &params);
    /// Delivered on the GUI thread; result->requestId grows with every request, and a result
    /// is never delivered after the result of a newer request.
    void resultChanged(std::shared_ptr<const attn::SessionResult> result);
    void computeFailed(const QString &message);
    void busyChanged(bool busy);

private:
    class Worker;
    void schedule();
    void deliver(std::shared_ptr<const SessionResult> result);
    void setBusy(bool busy);

    SessionParameters m_params;
    std::shared_ptr<const SessionResult> m_result;
    std::unique_ptr<Worker> m_worker;
    quint64 m_lastRequest = 0; ///< id of the newest request
    quint64 m_delivered = 0;
    bool m_busy = false;
};

} // namespace attn

Q_DECLARE_METATYPE(attn::SessionParameters)
Q_DECLARE_METATYPE(std::shared_ptr<const attn::SessionResult>)
