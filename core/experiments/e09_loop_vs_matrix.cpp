// E9 — loop versus matrix (docs/experiments.md; Vaswani et al. 2017, §3.2.1: "much faster and more
// space-efficient in practice, since it can be implemented using highly optimized matrix
// multiplication code").

#include "core/experiments/experiments_p.h"

#include "core/kernels/kernels.h"
#include "core/random/random.h"

#include <cmath>
#include <limits>

namespace attn::experiments {

namespace {

template<typename T> ExperimentResult runTyped(const ParamValues &pv, const RunContext &context)
{
    const Index t = pv.integer("n");
    const Index d = pv.integer("d");
    const int repeats = int(pv.integer("repeats"));
    Generator rng(pv.seed());
    const Matrix<T> q = rng.standardNormal(t, d).cast<T>(); // T × d
    const Matrix<T> k = rng.standardNormal(t, d).cast<T>(); // T × d
    const Matrix<T> v = rng.standardNormal(t, d).cast<T>(); // T × d
    const T scale = T(1.0 / std::sqrt(double(d)));

    struct Timing
    {
        const char *name;
        KernelKind kind;
        Matrix<T> output;
        std::vector<double> seconds;
        TimingSummary summary;
    };
    Timing timings[2] = {{"loop", KernelKind::Loop, {}, {}, {}},
                         {"matrix", KernelKind::Materialized, {}, {}, {}}};
    int step = 0;
    volatile double sink = 0; // keeps the timed results alive
    for (Timing &timing : timings) {
        timing.output = attentionKernel<T>(timing.kind, q, k, v, scale); // warm-up, kept
        for (int r = 0; r < repeats; ++r) {
            context.checkCancel();
            context.report(double(++step) / double(2 * repeats + 1));
            const double start = secondsNow();
            const Matrix<T> out = attentionKernel<T>(timing.kind, q, k, v, scale);
            timing.seconds.push_back(secondsNow() - start);
            sink = sink + double(out(0, 0));
        }
        timing.summary = timingSummary(timing.seconds);
    }
    const MatrixD loopOut = timings[0].output.template cast<double>();
    const MatrixD matrixOut = timings[1].output.template cast<double>();
    const double diff = maxAbsDiff(loopOut, matrixOut);

    Table table(
        {"method", "seconds_mean", "seconds_median", "seconds_min", "time_ratio", "max_abs_diff"});
    for (const Timing &timing : timings) {
        const bool isLoop = timing.kind == KernelKind::Loop;
        table.addRow({std::string(timing.name), timing.summary.mean, timing.summary.median,
                      timing.summary.minimum, timing.summary.minimum / timings[1].summary.minimum,
                      isLoop ? diff : 0.0});
    }
    table.notes.push_back("time_ratio = seconds_min / seconds_min of the matrix version (the "
                          "fastest runs, which other load disturbs least); max_abs_diff = "
                          "max |O_loop - O_matrix| (rounding level)");
    table.notes.push_back("the loop runs on 1 thread; the matrix version on "
                          + std::to_string(kernelThreadsFor(t, t, d, d)) + " (1 below "
                          + flopsText()
                          + " flops, 4 n^2 d, where starting threads costs more than it saves)");
    ExperimentResult result;
    result.table = std::move(table);
    result.scalars["time_ratio"] = timings[0].summary.minimum / timings[1].summary.minimum;
    result.scalars["max_abs_diff"] = diff;
    return result;
}

ExperimentResult run(const ParamValues &pv, const RunContext &context)
{
    return pv.text("dtype") == "float32" ? runTyped<float>(pv, context)
                                         : runTyped<double>(pv, context);
}

} // namespace

Entry loopVersusMatrixEntry()
{
    ExperimentInfo info;
    info.id = "E9";
    info.title = "Loop versus matrix";
    info.paperSection = "Vaswani et al. 2017, \u00a73.2.1";
    info.note = "The same attention computed one query row at a time (scores, softmax and "
                "weighted sum per row) and as two matrix products with a row softmax between. "
                "The results agree to rounding; the matrix form is faster because optimised "
                "matrix multiplication uses the caches and vector units (and, for large n, "
                "several threads: the table's note says how many).";
    info.params = {
        seedParam(0),
        intParam("n", 128, 1, 8192, "sequence length T (queries = keys)"),
        intParam("d", 64, 1, 1024, "head width d"),
        choiceParam("dtype", "float64", {"float64", "float32"}, "element type"),
        intParam("repeats", 5, 1, 1000, "timed runs per method (after one warm-up)"),
    };
    info.columns
        = {"method", "seconds_mean", "seconds_median", "seconds_min", "time_ratio", "max_abs_diff"};
    return {info, &run};
}

} // namespace attn::experiments
