// Times one training step of core/training (forward, MSE loss, analytic backward, optimizer
// update) on random inputs and targets: B sequences of n tokens, d_model, h heads. Prints one
// JSON object with the median and minimum seconds per step over --repeat timed blocks of
// --steps steps each (after one untimed warm-up block). bench/compare_torch.py runs it side by
// side with the same step in PyTorch. Threads follow OMP_NUM_THREADS. As the window does
// (app/main.cpp), it runs OpenBLAS's better kernels where OpenBLAS fell back to SSE3
// (core/base/blas.h betterBlasCore; --keep-blas-core measures OpenBLAS's own choice); "blas_core"
// in the output names the kernels used.
//
//   attn_bench_training --batch 32 --n 64 --d-model 128 --heads 4 --dtype float32
//                       --optimizer sgd --steps 20 --repeat 5 [--keep-blas-core]

#include "bench/benchblas.h"
#include "core/attention/multihead.h"
#include "core/base/blas.h"
#include "core/random/random.h"
#include "core/training/trainer.h"

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

#include <unistd.h>

using namespace attn;
using namespace attn::training;

namespace {

template<typename T>
std::vector<double> timeSteps(Index B, Index n, Index E, Index h, OptimizerKind kind, int steps,
                              int repeat)
{
    Generator rng(0);
    MultiheadAttention<double> init(E, h);
    init.initXavier(rng);
    Batch<T> batch;
    batch.batch = B;
    batch.length = n;
    batch.inputs = rng.standardNormal(B * n, E).cast<T>();
    batch.targets = rng.standardNormal(B * n, E).cast<T>();
    LayerConfig lc;
    lc.dModel = E;
    lc.heads = h;
    OptimizerConfig oc;
    oc.kind = kind;
    oc.learningRate = 1e-3;
    Trainer<T> trainer(lc, Parameters<double>::fromLayer(init).cast<T>(), oc,
                       Loss::MeanSquaredError);
    trainer.setDiagnosticsEnabled(false); // as PyTorch's step: forward, backward, update only
    std::vector<double> perStep;
    for (int r = 0; r <= repeat; ++r) {
        const auto start = std::chrono::steady_clock::now();
        for (int s = 0; s < steps; ++s)
            trainer.step(batch);
        const double seconds
            = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
        if (r > 0) // the first block warms up caches and the thread team
            perStep.push_back(seconds / steps);
    }
    return perStep;
}

long argValue(int argc, char **argv, const char *name, long fallback)
{
    for (int i = 1; i + 1 < argc; ++i)
        if (!std::strcmp(argv[i], name))
            return std::strtol(argv[i + 1], nullptr, 10);
    return fallback;
}

std::string argText(int argc, char **argv, const char *name, const char *fallback)
{
    for (int i = 1; i + 1 < argc; ++i)
        if (!std::strcmp(argv[i], name))
            return argv[i + 1];
    return fallback;
}

} // namespace

int main(int argc, char **argv)
{
    bench::rerunWithBetterBlasCore(argc, argv);
    const Index B = argValue(argc, argv, "--batch", 32), n = argValue(argc, argv, "--n", 64);
    const Index E = argValue(argc, argv, "--d-model", 128);
    const Index h = argValue(argc, argv, "--heads", 4);
    const int steps = int(argValue(argc, argv, "--steps", 20));
    const int repeat = int(argValue(argc, argv, "--repeat", 5));
    const std::string dtype = argText(argc, argv, "--dtype", "float32");
    const std::string optimizer = argText(argc, argv, "--optimizer", "sgd");
    if (B < 1 || n < 1 || E < 1 || h < 1 || E % h != 0 || steps < 1 || repeat < 1
        || (dtype != "float32" && dtype != "float64")) {
        std::fprintf(stderr,
                     "attn_bench_training: bad arguments (h must divide d_model; dtype "
                     "float32 or float64; sizes >= 1)\n");
        return 2;
    }
    const OptimizerKind kind = optimizerKindFromName(optimizer);
    std::vector<double> t = dtype == "float32" ? timeSteps<float>(B, n, E, h, kind, steps, repeat)
                                               : timeSteps<double>(B, n, E, h, kind, steps, repeat);
    std::sort(t.begin(), t.end());
    const double median
        = t.size() % 2 ? t[t.size() / 2] : 0.5 * (t[t.size() / 2 - 1] + t[t.size() / 2]);
    std::printf("{\"batch\": %ld, \"n\": %ld, \"d_model\": %ld, \"heads\": %ld, \"dtype\": "
                "\"%s\", \"optimizer\": \"%s\", \"blas_core\": \"%s\", "
                "\"seconds_per_step_median\": %.9g, \"seconds_per_step_min\": %.9g, "
                "\"steps_per_second\": %.6g}\n",
                long(B), long(n), long(E), long(h), dtype.c_str(), optimizer.c_str(),
                blasCoreName().c_str(), median, t.front(), 1.0 / median);
    return 0;
}
