#pragma once
// The n² timing's measurement, apart from its chart: what a run measures (TimingSeries per
// kernel, TimingData), the plan the chart makes of its settings (TimingRequest) and the work
// itself (measureTiming: core timingSweep one n at a time), which a JobRunner runs on a worker
// thread. No widgets here: TimingChart only plans, starts and shows.

#include "ui/session/jobrunner.h"

#include "core/base/types.h"

#include <QString>

#include <cstddef>
#include <memory>
#include <vector>

namespace attn {

/// One kernel's measurements.
struct TimingSeries
{
    QString kernel; ///< "materialized", "streaming" or "loop" (kernelName)
    std::vector<double> n; ///< sequence lengths measured
    std::vector<double> seconds; ///< mean wall time per run (seconds)
    std::vector<double> extraMib; ///< memory the kernel allocates beyond Q, K, V, output (MiB)
    /// Least-squares slope of log time vs log n over the largest n (n ≥ fitFromN = n_max / 8),
    /// where the n² work dominates fixed costs (NaN with < 2 such points).
    double exponent = 0;
    double fitFromN = 0;
    double exponentAll = 0; ///< the same over every n (core timingSweep's fit)
    double rSquared = 0; ///< R² of the large-n fit on log–log axes (NaN without a fit)
    /// The large-n fit does not describe the points: fewer than 3 of them, R² < 0.98, or an
    /// exponent more than 0.4 from the 2 every kernel's 4·n²·d flops give — what a loaded
    /// machine does to short runs. The headline flags it.
    bool noisyFit = false;
    std::vector<double> refusedN; ///< n not run: over the memory budget (or the loop's limit)
    std::vector<double> refusedMib; ///< what those runs would need (MiB, inputs included)
    QString note; ///< why n were skipped (empty when none were)
};

/// One timing run, as plotted.
struct TimingData
{
    // The first kernel measured (materialized unless it was unchecked), for simple readers:
    std::vector<double> n; ///< sequence lengths
    std::vector<double> seconds; ///< mean time per run (seconds)
    std::vector<double> mib; ///< size of one n × n score matrix in the chosen type (MiB)
    double exponent = 0; ///< its TimingSeries::exponent
    int d = 64;
    bool float32 = true;
    int repeats = 3;
    std::size_t budgetBytes = 0; ///< memory budget of the run
    std::vector<TimingSeries> kernels; ///< every kernel measured, in the order of the checkboxes
    /// The series of `kernel`, or nullptr.
    const TimingSeries *series(const QString &kernel) const;
};

/// One kernel's part of a run.
struct TimingPlan
{
    TimingSeries series; ///< kernel, refused n and note filled in
    std::vector<Index> ns; ///< n to run
    double weight = 0; ///< share of the total work (progress)
};

/// A whole run: the plans (in checkbox order) and the settings they share.
struct TimingRequest
{
    std::vector<TimingPlan> plans;
    int d = 64; ///< query/key/value width
    bool float32 = true;
    int repeats = 3; ///< runs per n (the fastest is kept)
    std::size_t budget = 0; ///< memory budget (bytes), passed on to timingSweep
    double totalWeight = 0; ///< sum of the plans' weights
};

struct TimingOutcome
{
    /// The measurement; after a cancel the points measured before it (nullptr when none).
    std::shared_ptr<const TimingData> data;
    QString error; ///< what timingSweep threw (empty: none)
    bool cancelled = false;
};

/// Measures `request` one n at a time with core timingSweep, reporting progress (the plans'
/// weights) through `job`; a cancel (job.cancel) keeps the points measured before it. Never
/// throws: what timingSweep throws (InvalidArgument for a bad kernel or size) goes to `error`.
TimingOutcome measureTiming(const TimingRequest &request, const JobContext &job);

} // namespace attn
