#pragma once
// Cooperative cancellation for long computations (experiment runs, sweeps, timings, the
// window's session computation): the computation polls a CancelToken between steps and throws
// Cancelled (core/base/types.h) once it says so. The one cancellation type of attncore.

#include "core/base/types.h"

#include <atomic>
#include <functional>
#include <utility>

namespace attn {

class CancelToken
{
public:
    /// Never cancelled.
    CancelToken() = default;
    /// Cancelled once *flag is true (nullptr: never). The flag must outlive every poll.
    /// Implicit, so that `context.cancel = &flag;` reads as it means.
    CancelToken(const std::atomic<bool> *flag)
        : m_flag(flag)
    { }
    /// Cancelled once poll() returns true. poll may be called from the computation's worker
    /// threads (OpenMP), concurrently: it must be thread-safe (e.g. read atomics only).
    explicit CancelToken(std::function<bool()> poll)
        : m_poll(std::move(poll))
    { }

    /// True once cancellation was requested.
    bool isCancelled() const
    {
        return (m_flag && m_flag->load(std::memory_order_relaxed)) || (m_poll && m_poll());
    }
    /// Throws Cancelled when isCancelled().
    void throwIfCancelled() const
    {
        if (isCancelled())
            throw Cancelled();
    }

private:
    const std::atomic<bool> *m_flag = nullptr;
    std::function<bool()> m_poll;
};

} // namespace attn
