#pragma once
// The main view's computation for the ui: SessionParameters (QString tokens, loaded tensors)
// → the core engine (core/engine/sessionengine.h) → SessionResult, with the memory budget and
// errors as text. Used by AttentionSession's worker and by `attnlab heatmap`, so the window and
// the command line show the same numbers. Never throws: errors land in SessionResult::error.

#include "ui/session/sessionparameters.h"
#include "ui/session/sessionresult.h"

#include "core/base/cancel.h"
#include "core/engine/engineparameters.h"
#include "core/engine/sessionengine.h"

#include <QString>

#include <cstddef>
#include <cstdint>
#include <memory>

namespace attn {

/// The engine's parameters for `params` (tokens as UTF-8). Loaded tensors are not part of them.
EngineParameters engineParameters(const SessionParameters &params);

/// Seeded inputs (core/engine/sessioninputs.h, sessionInputs: draw order, tokens, positional
/// encoding) through the engine, or with params.tensors set the loaded tensors
/// (computeTensorSession, ui/tensorsource.h). `cancel` is polled between steps; once it says
/// so the computation stops and the result's error is "cancelled" (AttentionSession uses this
/// to drop superseded requests early).
SessionResult computeSession(const SessionParameters &params, const CancelToken &cancel = {});

/// Bytes a SessionResult for `params` holds: the weights, raw scores and scaled scores of every
/// head and the mean over heads (n_q × n_k float64 each, whatever the dtype: the display works
/// in double) plus one mask-state byte per cell: ((3·h + 1)·8 + 1)·n_q·n_k. At n = 4096, h = 8
/// that is 3.2 GiB.
std::size_t sessionResultBytes(const SessionParameters &params);

/// The largest sessionResultBytes() computeSession() accepts: a quarter of the physical memory
/// (the shown result stays alive while its replacement is computed, and the Compare view holds
/// a second configuration), at least 256 MiB. Seeded computations over it are refused with an
/// error naming the sizes, before anything is allocated, instead of exhausting memory.
std::size_t sessionMemoryBudget();

/// Overrides sessionMemoryBudget() (0 restores the default); for tests.
void setSessionMemoryBudget(std::size_t bytes);

/// What one computation leaves for the next (AttentionSession's worker keeps one): the core
/// engine with its cached raw scores (SessionEngine: reused across α, τ, mask and encoder ↔
/// decoder changes, at most maxBytes()) and its buffer pool. Use from one thread at a time.
class SessionComputeCache
{
public:
    std::size_t maxBytes() const { return m_engine.maxBytes(); }
    void setMaxBytes(std::size_t bytes) { m_engine.setMaxBytes(bytes); }
    /// True when a computation with `params` would reuse the cached scores.
    bool covers(const SessionParameters &params) const;
    /// Bytes held (0 when empty).
    std::size_t bytes() const { return m_engine.bytes(); }
    void clear() { m_engine.clear(); }
    SessionEngine &engine() { return m_engine; }

    /// `result` as a shared pointer whose deleter hands its n_q × n_k matrices back to the
    /// engine's pool (EngineBufferPool) for the next computations; the buffers stay valid if
    /// results outlive the cache.
    std::shared_ptr<const SessionResult> share(SessionResult &&result);

private:
    SessionEngine m_engine;
};

/// As above, reusing and refilling `cache` (may be nullptr). The numbers are the same with or
/// without a cache, bit for bit (tests/tst_sessioncache.cpp).
SessionResult computeSession(const SessionParameters &params, const CancelToken &cancel,
                             SessionComputeCache *cache);

} // namespace attn
