// E8 — what n² costs (docs/experiments.md; Vaswani et al. 2017, Table 1: O(n²·d) per layer).

#include "core/experiments/experiments_p.h"

#include "core/kernels/kernels.h"
#include "core/random/random.h"

#include <algorithm>
#include <cmath>
#include <limits>

namespace attn {

namespace {

constexpr double kMiB = 1024.0 * 1024.0;

std::string mibText(double bytes)
{
    return std::to_string(static_cast<long long>(std::ceil(bytes / kMiB)));
}

template<typename T>
experiments::TimingSummary timeKernel(KernelKind kind, Index n, Index d, int repeats,
                                      std::uint64_t seed, const RunContext &context,
                                      double doneBefore, double weight, double total)
{
    Generator rng(seed);
    const Matrix<T> q = rng.standardNormal(n, d).cast<T>(); // n × d
    const Matrix<T> k = rng.standardNormal(n, d).cast<T>(); // n × d
    const Matrix<T> v = rng.standardNormal(n, d).cast<T>(); // n × d
    const T scale = T(1.0 / std::sqrt(double(d)));
    volatile double sink = 0;
    // One untimed warm-up run (first-touch page faults, GEMM packing buffers, thread start).
    sink = sink + double(attentionKernel<T>(kind, q, k, v, scale)(0, 0));
    std::vector<double> times;
    for (int r = 0; r < repeats; ++r) {
        context.checkCancel();
        context.report((doneBefore + weight * double(r + 1) / double(repeats + 1)) / total);
        const double start = experiments::secondsNow();
        const Matrix<T> out = attentionKernel<T>(kind, q, k, v, scale);
        const double seconds = experiments::secondsNow() - start;
        sink = sink + double(out(0, 0));
        times.push_back(seconds);
    }
    return experiments::timingSummary(times);
}

} // namespace

Table timingSweep(const std::vector<Index> &ns, Index d, bool float32, std::string_view kernel,
                  int repeats, std::uint64_t seed, double *fittedExponent,
                  const RunContext &context)
{
    return timingSweep(ns, d, float32, kernel, repeats, seed, kDefaultTimingMemoryBudget,
                       fittedExponent, context);
}

Table timingSweep(const std::vector<Index> &ns, Index d, bool float32, std::string_view kernel,
                  int repeats, std::uint64_t seed, std::size_t memoryBudgetBytes,
                  double *fittedExponent, const RunContext &context)
{
    const KernelKind kind = kernelFromName(kernel); // throws, listing the valid names
    if (ns.empty())
        throw InvalidArgument("timing sweep: the list of n is empty");
    if (d < 1)
        throw InvalidArgument("timing sweep: d must be >= 1, got " + std::to_string(d));
    if (repeats < 1)
        throw InvalidArgument("timing sweep: repeats must be >= 1, got " + std::to_string(repeats));
    const std::size_t element = float32 ? sizeof(float) : sizeof(double);
    const char *typeName = float32 ? "float32" : "float64";
    double total = 0;
    for (const Index n : ns) {
        if (n < 1)
            throw InvalidArgument("timing sweep: every n must be >= 1, got " + std::to_string(n));
        const double extra = double(kernelExtraBytes(kind, n, n, d, element));
        const double needed = extra + 4.0 * double(n) * double(d) * double(element);
        if (needed > double(memoryBudgetBytes)) {
            throw InvalidArgument(
                "timing sweep: n = " + std::to_string(n) + " needs " + mibText(needed)
                + " MiB with the " + std::string(kernelName(kind)) + " kernel ("
                + (kind == KernelKind::Materialized ? "the " + std::to_string(n) + "\u00d7"
                           + std::to_string(n) + " " + typeName + " score matrix alone is "
                           + mibText(double(n) * double(n) * double(element)) + " MiB"
                                                    : std::string("buffers and Q, K, V, output"))
                + "), over the memory budget of " + mibText(double(memoryBudgetBytes))
                + " MiB; use the streaming kernel or raise the budget");
        }
        total += double(n) * double(n) * double(repeats + 1);
    }

    Table table({"n", "entries", "mib", "seconds_mean", "seconds_median", "seconds_min",
                 "kernel_extra_mib", "kernel"});
    std::vector<double> xs, ys;
    double done = 0;
    for (const Index n : ns) {
        const double weight = double(n) * double(n) * double(repeats + 1);
        const experiments::TimingSummary t = float32
            ? timeKernel<float>(kind, n, d, repeats, seed, context, done, weight, total)
            : timeKernel<double>(kind, n, d, repeats, seed, context, done, weight, total);
        done += weight;
        const std::int64_t entries = std::int64_t(n) * std::int64_t(n);
        table.addRow({std::int64_t(n), entries, double(entries) * double(element) / kMiB, t.mean,
                      t.median, t.minimum, double(kernelExtraBytes(kind, n, n, d, element)) / kMiB,
                      std::string(kernelName(kind))});
        xs.push_back(double(n));
        ys.push_back(t.minimum); // the least disturbed run: other load only ever adds time
    }
    double exponent = std::numeric_limits<double>::quiet_NaN();
    bool distinct = false;
    for (const double x : xs)
        distinct = distinct || x != xs.front();
    if (distinct)
        exponent = fitPowerLawExponent(xs, ys);
    if (fittedExponent)
        *fittedExponent = exponent;
    table.notes.push_back(
        "fitted exponent of seconds_min vs n: "
        + (distinct ? Table::formatNumber(exponent)
                   + " (O(n^2 d): about 2 once n is large enough to dominate overheads)"
                    : std::string("n/a (needs \u2265 2 different n)")));
    const Index largest = *std::max_element(ns.begin(), ns.end());
    const Index threadsLargest = kernelThreadsFor(largest, largest, d, d);
    table.notes.push_back(
        std::string(typeName) + ", d = " + std::to_string(d) + ", " + std::to_string(repeats)
        + " timed runs after one warm-up; wall-clock seconds (mean, median and minimum of the "
          "runs); "
        + (kind == KernelKind::Loop ? std::string("1 thread")
                                    : "1 thread below " + experiments::flopsText()
                   + " flops (4 n^2 d), else " + std::to_string(kernelThreads())
                   + " thread(s) (at the largest n: " + std::to_string(threadsLargest) + ")"));
    context.report(1.0);
    return table;
}

namespace experiments {

namespace {

ExperimentResult run(const ParamValues &pv, const RunContext &context)
{
    ExperimentResult result;
    double exponent = 0;
    result.table
        = timingSweep(pv.indexList("n"), pv.integer("d"), pv.text("dtype") == "float32",
                      pv.text("kernel"), int(pv.integer("repeats")), pv.seed(),
                      std::size_t(pv.integer("memory_budget_mib")) << 20, &exponent, context);
    result.scalars["fitted_exponent"] = exponent;
    return result;
}

} // namespace

Entry quadraticCostEntry()
{
    ExperimentInfo info;
    info.id = "E8";
    info.title = "What n\u00b2 costs";
    info.paperSection = "Vaswani et al. 2017, Table 1";
    info.note
        = "Self-attention compares every query with every key: an n \u00d7 n score matrix. "
          "Each doubling of n quadruples its cells, its memory and (once n is large) the "
          "time; the fitted exponent of time against n is about 2 (fitted to the fastest of the "
          "timed runs, which load from other programs disturbs least; n/a with one n). Times are "
          "measured "
          "here, never hard-coded. The streaming kernel (online softmax, as "
          "FlashAttention) never stores the n \u00d7 n matrix and goes further.";
    info.params = {
        seedParam(0),
        intListParam(
            "n", "512,1024,2048,4096", 1, 1 << 16,
            "sequence lengths, in order (up to 65536: the loop kernel there takes minutes)"),
        intParam("d", 64, 1, 4096, "head width d (Q, K, V are n \u00d7 d)"),
        choiceParam("dtype", "float32", {"float32", "float64"}, "element type"),
        choiceParam("kernel", "materialized", {"materialized", "streaming", "loop"},
                    "attention kernel timed"),
        intParam("repeats", 5, 1, 1000, "timed runs per n (after one warm-up)"),
        intParam("memory_budget_mib", 2048, 1, 1 << 20,
                 "refuse an n whose run would allocate more (MiB)"),
    };
    info.columns = {"n",           "entries",          "mib",   "seconds_mean", "seconds_median",
                    "seconds_min", "kernel_extra_mib", "kernel"};
    return {info, &run};
}

} // namespace experiments

} // namespace attn
