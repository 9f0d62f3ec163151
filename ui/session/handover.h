#pragma once
// Work handed from one thread to another through Qt: a queued call to an object of another
// thread (postTo) or a job for a QThreadPool (startOn). Debian's Qt is not built with
// ThreadSanitizer, so the locks inside its event queue and thread pool are invisible to it, and
// what the sending thread wrote before handing the callable over would be reported as racing
// with what the callable reads on the receiving thread. In a ThreadSanitizer build the callable
// states those edges itself (__tsan_release / __tsan_acquire, <sanitizer/tsan_interface.h>):
// constructing it happens before calling it, and calling it happens before destroying it,
// whichever threads Qt uses for each. The edges are stated on one address shared by every
// hand-over (as Qt's queue lock is shared), known without reading the callable, so nothing of it
// is read before its edge. In any other build these are the plain calls.

#include <QMetaObject>
#include <QObject>
#include <QRunnable>
#include <QThreadPool>

#include <utility>

#if defined(__SANITIZE_THREAD__)
#define ATTN_THREAD_SANITIZER 1
#elif defined(__has_feature)
#if __has_feature(thread_sanitizer)
#define ATTN_THREAD_SANITIZER 1
#endif
#endif

#ifdef ATTN_THREAD_SANITIZER
#include <sanitizer/tsan_interface.h>
#endif

namespace attn {

#ifdef ATTN_THREAD_SANITIZER
namespace handover {
/// The address every hand-over's edges are stated on.
inline char token;
inline void sent()
{
    __tsan_release(&token);
}
inline void received()
{
    __tsan_acquire(&token);
}
} // namespace handover

/// A callable with the happens-before edges of its hand-over (ThreadSanitizer builds only).
template<typename F> class HandedOver
{
public:
    explicit HandedOver(F f)
        : m_f(std::move(f))
    {
        handover::sent();
    }
    // Qt copies or moves the callable on the sending thread: each copy is sent again, so what
    // it wrote is seen too.
    HandedOver(const HandedOver &other)
        : m_f(other.m_f)
    {
        handover::sent();
    }
    HandedOver(HandedOver &&other) noexcept
        : m_f(std::move(other.m_f))
    {
        handover::sent();
    }
    HandedOver &operator=(const HandedOver &) = delete;
    HandedOver &operator=(HandedOver &&) = delete;
    ~HandedOver() { handover::received(); }
    void operator()()
    {
        handover::received();
        m_f();
        handover::sent();
    }

private:
    F m_f;
};

/// A QRunnable running a HandedOver callable: Qt's pool calls run() through its vtable, so
/// nothing of the job is read by instrumented code before run()'s edge.
template<typename F> class HandedOverRunnable : public QRunnable
{
public:
    explicit HandedOverRunnable(F f)
        : m_f(std::move(f))
    {
        handover::sent();
    }
    ~HandedOverRunnable() override { handover::received(); }
    void run() override
    {
        handover::received();
        m_f();
        handover::sent();
    }

private:
    F m_f;
};
#endif

/// Runs `f` (a callable taking no arguments) on `pool`.
template<typename F> void startOn(QThreadPool &pool, F f)
{
#ifdef ATTN_THREAD_SANITIZER
    pool.start(new HandedOverRunnable<F>(std::move(f))); // deleted by the pool after run()
#else
    pool.start(std::move(f));
#endif
}

/// Calls `f` on `receiver`'s thread by a queued call (Qt::QueuedConnection); dropped by Qt if
/// the receiver is destroyed first.
template<typename F> void postTo(QObject *receiver, F f)
{
#ifdef ATTN_THREAD_SANITIZER
    QMetaObject::invokeMethod(receiver, HandedOver<F>(std::move(f)), Qt::QueuedConnection);
#else
    QMetaObject::invokeMethod(receiver, std::move(f), Qt::QueuedConnection);
#endif
}

} // namespace attn
