#include "ui/charts/timingrun.h"

#include "core/experiments/experiments.h"
#include "core/experiments/livecharts.h"

#include <algorithm>
#include <cmath>
#include <exception>
#include <limits>

namespace attn {

const TimingSeries *TimingData::series(const QString &kernel) const
{
    for (const TimingSeries &s : kernels)
        if (s.kernel == kernel)
            return &s;
    return nullptr;
}

TimingOutcome measureTiming(const TimingRequest &request, const JobContext &job)
{
    TimingOutcome out;
    const auto &[plans, d, float32, repeats, budget, totalWeight] = request;
    try {
        auto data = std::make_shared<TimingData>();
        data->d = d;
        data->float32 = float32;
        data->repeats = repeats;
        data->budgetBytes = budget;
        double done = 0;
        // One n at a time, so that a cancel keeps the points measured before it.
        for (const TimingPlan &plan : plans) {
            TimingSeries series = plan.series;
            series.exponent = std::numeric_limits<double>::quiet_NaN();
            series.exponentAll = std::numeric_limits<double>::quiet_NaN();
            double planCells = 0; // the plan's weight is spread over its n like n²
            for (const Index n : plan.ns)
                planCells += double(n) * double(n);
            std::vector<double> mib;
            try {
                for (const Index n : plan.ns) {
                    RunContext context;
                    context.cancel = job.cancel;
                    const double before = done;
                    const double weight = plan.weight * double(n) * double(n) / planCells;
                    // A copy: clang 14 cannot capture a structured binding.
                    const double total = totalWeight;
                    context.progress = [&job, before, weight, total](double fraction) {
                        job.report(total > 0 ? (before + fraction * weight) / total : 1.0);
                    };
                    const Table table = timingSweep({n}, d, float32, series.kernel.toStdString(),
                                                    repeats, 0, budget, nullptr, context);
                    done += weight;
                    series.n.push_back(table.number(0, "n"));
                    // The fastest run: what other programs on the machine disturb least
                    // (as E8).
                    series.seconds.push_back(table.number(0, "seconds_min"));
                    series.extraMib.push_back(table.number(0, "kernel_extra_mib"));
                    mib.push_back(table.number(0, "mib"));
                }
            } catch (const Cancelled &) {
                out.cancelled = true;
            }
            if (series.n.size() >= 2 && series.n.front() != series.n.back()) {
                try {
                    series.exponentAll = fitPowerLawExponent(series.n, series.seconds);
                } catch (const InvalidArgument &) { // a 0 s run: no exponent
                }
            }
            const LargeNFit fit = fitLargeNExponent(series.n, series.seconds);
            series.exponent = fit.exponent;
            series.fitFromN = fit.fromN;
            series.rSquared = fit.rSquared;
            series.noisyFit = fit.noisy;
            if (data->n.empty() && !series.n.empty()) {
                data->exponent = series.exponent;
                data->seconds = series.seconds;
                data->n = series.n;
                data->mib = mib;
            }
            data->kernels.push_back(std::move(series));
            if (out.cancelled)
                break;
        }
        // After a cancel: the points measured before it (none: nothing to show).
        const bool anyPoint = std::any_of(data->kernels.begin(), data->kernels.end(),
                                          [](const TimingSeries &k) { return !k.n.empty(); });
        if (!out.cancelled || anyPoint)
            out.data = std::move(data);
    } catch (const Cancelled &) {
        out.cancelled = true;
    } catch (const std::exception &e) {
        out.error = QString::fromUtf8(e.what());
    }
    return out;
}

} // namespace attn
