#pragma once
// What the GUI benchmarks (attn_bench_gui and its Long-tab part) share: the percentile of a
// sample and a wait that runs the event loop.

#include <QCoreApplication>
#include <QElapsedTimer>
#include <QEventLoop>
#include <QTimer>

#include <algorithm>
#include <cmath>
#include <cstddef>
#include <vector>

namespace guibench {

/// The q-quantile (0 < q ≤ 1) of `v` by the nearest-rank method; NaN when empty.
inline double percentile(std::vector<double> v, double q)
{
    if (v.empty())
        return std::nan("");
    std::sort(v.begin(), v.end());
    const auto rank = std::size_t(std::ceil(q * double(v.size())));
    return v[std::clamp<std::size_t>(rank, 1, v.size()) - 1];
}

/// Runs the event loop until `done()` is true or `timeoutMs` passes; false on timeout. Sleeps
/// while there are no events (a busy loop here would take a core from the worker).
template<typename Done> bool spinUntil(Done done, int timeoutMs)
{
    QElapsedTimer clock;
    clock.start();
    QTimer wake; // bounds each wait, so the timeout is noticed without events
    wake.start(20);
    while (!done()) {
        if (clock.elapsed() > timeoutMs)
            return false;
        QCoreApplication::processEvents(QEventLoop::WaitForMoreEvents);
    }
    return true;
}

} // namespace guibench
