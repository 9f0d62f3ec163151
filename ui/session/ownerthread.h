#pragma once
// OwnerThread: the one worker thread of an object that lives on the GUI thread (the attention
// session's worker, the Long tab's tile scheduler): the lock that guards what the two threads
// share, the wake-up after the owner changed it, and the end (stop: the thread sees it at its
// next wait, or through stopRequested() while it computes, and is joined). The thread's loop is
// the owner's: it waits with waitFor() for its own condition and returns when waitFor() says
// the thread is stopping. Standard primitives rather than QThread, QMutex and QWaitCondition so
// that ThreadSanitizer checks the hand-over and the join (Debian's Qt is not instrumented).
// Results go back to the owner through postTo (ui/session/handover.h).

#include <atomic>
#include <condition_variable>
#include <functional>
#include <mutex>
#include <thread>

namespace attn {

class OwnerThread
{
public:
    OwnerThread() = default;
    /// stop()
    ~OwnerThread() { stop(); }
    OwnerThread(const OwnerThread &) = delete;
    OwnerThread &operator=(const OwnerThread &) = delete;

    /// Starts `run` on the thread, on the owner's thread; once (later calls do nothing, as do
    /// calls after stop()). `run` loops on waitFor() and returns when it says to stop.
    void start(std::function<void()> run)
    {
        if (m_thread.joinable() || m_stop.load())
            return;
        m_thread = std::thread(std::move(run));
    }
    bool started() const { return m_thread.joinable(); }

    /// Ends the thread: under the lock, runs `underLock` (e.g. raises the computation's cancel
    /// flag) and marks the thread stopping; wakes it and joins it. On the owner's thread; again
    /// or without start(): only marks it stopping.
    void stop(const std::function<void()> &underLock = {})
    {
        {
            std::lock_guard lock(m_mutex);
            if (underLock)
                underLock();
            m_stop.store(true);
        }
        m_wake.notify_all();
        if (m_thread.joinable())
            m_thread.join();
    }

    /// The lock of what the owner and the thread share.
    std::mutex &mutex() { return m_mutex; }
    /// Wakes the thread, after the owner changed what it waits for (under mutex(), released).
    void wake() { m_wake.notify_all(); }

    /// On the thread, holding `lock` (on mutex()): waits until `ready()` or stop(); false when
    /// the thread is to stop (its loop returns then).
    template<typename Ready> bool waitFor(std::unique_lock<std::mutex> &lock, Ready ready)
    {
        m_wake.wait(lock, [&] { return m_stop.load() || ready(); });
        return !m_stop.load();
    }
    /// Whether stop() was called: a long computation on the thread polls it to end early.
    bool stopRequested() const { return m_stop.load(); }

private:
    std::mutex m_mutex;
    std::condition_variable m_wake;
    std::atomic<bool> m_stop {false};
    std::thread m_thread;
};

} // namespace attn
