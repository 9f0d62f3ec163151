#include "ui/session/sessioncompute.h"

#include "ui/session/tensorsource.h"

#include "core/base/types.h"

#include <algorithm>
#include <atomic>
#include <chrono>
#include <exception>
#include <new>

#include <unistd.h>

namespace attn {

EngineParameters engineParameters(const SessionParameters &params)
{
    return params; // the engine's part: everything but the opened tensors
}

bool SessionComputeCache::covers(const SessionParameters &params) const
{
    return !params.tensors && m_engine.covers(engineParameters(params));
}

std::shared_ptr<const SessionResult> SessionComputeCache::share(SessionResult &&result)
{
    std::shared_ptr<EngineBufferPool> pool = m_engine.pool();
    pool->expect(result.weightsMean.rows(), result.weightsMean.cols(),
                 3 * result.weights.size() + 1 + result.unrotatedScores.size()
                     + result.positionBias.size());
    return std::shared_ptr<const SessionResult>(
        new SessionResult(std::move(result)), [pool](const SessionResult *shared) {
            auto *r = const_cast<SessionResult *>(shared); // ours: the last owner is done
            pool->recycle(std::move(*r));
            delete r;
        });
}

namespace {
std::atomic<std::size_t> g_memoryBudgetOverride {0};
} // namespace

std::size_t sessionResultBytes(const SessionParameters &params)
{
    const std::size_t cells = std::size_t(std::max<Index>(params.queryCount(), 0))
        * std::size_t(std::max<Index>(params.keyCount(), 0));
    return ((3 * std::size_t(std::max<Index>(params.heads, 0)) + 1) * sizeof(double) + 1) * cells;
}

std::size_t sessionMemoryBudget()
{
    if (const std::size_t override = g_memoryBudgetOverride.load())
        return override;
    const long pages = sysconf(_SC_PHYS_PAGES);
    const long pageSize = sysconf(_SC_PAGE_SIZE);
    const std::size_t floor = std::size_t(256) << 20;
    if (pages <= 0 || pageSize <= 0)
        return std::size_t(4) << 30; // unknown: assume a 16 GiB machine
    return std::max(floor, std::size_t(pages) * std::size_t(pageSize) / 4);
}

void setSessionMemoryBudget(std::size_t bytes)
{
    g_memoryBudgetOverride.store(bytes);
}

SessionResult computeSession(const SessionParameters &params, const CancelToken &cancel)
{
    return computeSession(params, cancel, nullptr);
}

SessionResult computeSession(const SessionParameters &params, const CancelToken &cancel,
                             SessionComputeCache *cache)
{
    if (params.tensors) // File → Open tensors…: the user's tensors instead of seeded inputs
        return computeTensorSession(params, cancel);
    SessionResult r;
    r.params = params;
    const auto start = std::chrono::steady_clock::now();
    r.error = params.validate();
    if (!r.ok())
        return r;
    if (const std::size_t need = sessionResultBytes(params), budget = sessionMemoryBudget();
        need > budget) {
        const double gib = double(std::size_t(1) << 30);
        r.error = QStringLiteral("n_q = %1, n_k = %2, h = %3 needs %4 GiB for the weights and "
                                 "scores of every head, over this machine's budget of %5 GiB "
                                 "(a quarter of its memory): lower n or h")
                      .arg(params.queryCount())
                      .arg(params.keyCount())
                      .arg(params.heads)
                      .arg(double(need) / gib, 0, 'f', 1)
                      .arg(double(budget) / gib, 0, 'f', 1);
        return r;
    }
    auto fail = [&](const QString &message) {
        r = SessionResult {};
        r.params = params;
        r.error = message;
    };
    try {
        const EngineParameters p = engineParameters(params);
        if (cache)
            cache->engine().compute(p, r, cancel);
        else
            static_cast<EngineResult &>(r) = computeEngine(p, cancel);
    } catch (const Cancelled &) {
        fail(QStringLiteral("cancelled"));
    } catch (const NonFiniteInput &e) {
        fail(QString::fromStdString(e.what()));
        r.inputError = true;
    } catch (const InvalidArgument &e) {
        fail(QString::fromStdString(e.what()));
        r.inputError = true;
    } catch (const std::bad_alloc &) {
        fail(QStringLiteral("out of memory for n_q=%1, n_k=%2, h=%3")
                 .arg(params.queryCount())
                 .arg(params.keyCount())
                 .arg(params.heads));
    } catch (const std::exception &e) {
        fail(QString::fromStdString(e.what()));
    } catch (...) {
        fail(QStringLiteral("unknown error in the attention computation"));
    }
    r.computeSeconds
        = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    return r;
}

} // namespace attn
