// Google Benchmark: the four attention kernels for n ∈ {256 … 16384}, d ∈ {64, 128}, float32
// and float64, the window's fused multi-head engine (core/engine/sessionengine.h: a full
// computation, and an α step over cached scores as a slider drag makes), plus this machine's
// SGEMM/DGEMM rate through Eigen (the reference for "percent of peak") and its float32 FMA peak
// (FmaPeak: no memory traffic, the ceiling for any kernel). Counters: GFLOP, printed as a rate
// (GFLOP/s; 4·n²·d flop per attention: two GEMMs of 2·n²·d each) and the extra memory each kernel
// allocates (kernelExtraBytes), in MiB. The float32 kernels run the AVX-512 code on CPUs with
// AVX-512F (context "float32_kernels"); the *_eigen variants run Eigen's code in the same binary as
// the baseline.
//
//   build/release/bench/attn_bench_kernels --benchmark_filter='Streaming.*/4096/64'
//
// The materialized kernel is skipped beyond kMaterializedBudgetBytes for its n × n matrices.
//
// Sgemm/Dgemm run Eigen's GEMM as compiled; *_openblas the same products through core/base/blas.h
// (OpenBLAS when the build found it, context "blas"); Materialized_f64_eigen the float64
// materialized kernel with core/base/blas.h switched to Eigen, the baseline of Materialized_f64.
//
// The tile engine (core/tiles/tileengine.h) renders the full view of h heads of d each to a
// px × px grid (max pooling; TileFullViewMean_f32 adds the head mean, TileFullViewMetrics_f32 the
// per-row metrics of every head; TileFullViewSink_f32, …Differential_f32, …Gate_f32 the 2025
// variants, against TileFullView_f32 in the same run); StreamingHeads_f32 runs the streaming
// kernel once per head on the same n and d, the baseline it is compared with in the same run:
//
//   build/release/bench/attn_bench_kernels --benchmark_filter='TileFullView_f32|StreamingHeads'
//   build/release/bench/attn_bench_kernels
//   --benchmark_filter='TileFullView(Sink|Differential|Gate)?_f32'
// The materialized and fused kernels are skipped beyond kMaterializedBudgetBytes for their n × n
// matrices.

#include "fma_peak.h"

#include "core/base/blas.h"
#include "core/engine/sessionengine.h"
#include "core/kernels/kernels.h"
#include "core/random/random.h"
#include "core/tiles/tileengine.h"

#include <benchmark/benchmark.h>

#ifdef _OPENMP
#include <omp.h>
#endif

#include <string>
#include <vector>

#include <cmath>
#include <cstdint>

namespace {

using attn::Index;
using attn::KernelKind;
using attn::Matrix;

/// Budget for the materialized kernel's score + weight matrices (bytes): 1 GiB.
constexpr std::size_t kMaterializedBudgetBytes = std::size_t(1) << 30;

template<typename T> Matrix<T> randomMatrix(attn::Generator &rng, Index rows, Index cols)
{
    return rng.standardNormal(rows, cols).template cast<T>();
}

template<typename T> void attentionBenchmark(benchmark::State &state, KernelKind kind)
{
    const Index n = state.range(0);
    const Index d = state.range(1);
    const std::size_t extra = attn::kernelExtraBytes(kind, n, n, d, sizeof(T));
    if ((kind == KernelKind::Materialized || kind == KernelKind::Fused)
        && extra > kMaterializedBudgetBytes) {
        state.SkipWithError("the kernel's n x n matrices exceed the 1 GiB budget");
        return;
    }
    attn::Generator rng(0);
    const Matrix<T> q = randomMatrix<T>(rng, n, d);
    const Matrix<T> k = randomMatrix<T>(rng, n, d);
    const Matrix<T> v = randomMatrix<T>(rng, n, d);
    const T scale = T(1) / std::sqrt(T(d));
    for (auto _ : state) {
        Matrix<T> out = attn::attentionKernel<T>(kind, q, k, v, scale);
        benchmark::DoNotOptimize(out.data());
        benchmark::ClobberMemory();
    }
    const double flop = 4.0 * double(n) * double(n) * double(d);
    state.counters["GFLOP"]
        = benchmark::Counter(flop * 1e-9, benchmark::Counter::kIsIterationInvariantRate);
    state.counters["extra_MiB"] = double(extra) / (1024.0 * 1024.0);
}

template<typename T> void gemmBenchmark(benchmark::State &state)
{
    // C (n × n) = A (n × k) · Bᵀ: the shape of Q Kᵀ, with k = n for the machine's GEMM peak.
    const Index n = state.range(0);
    const Index k = state.range(1);
    attn::Generator rng(1);
    const Matrix<T> a = randomMatrix<T>(rng, n, k);
    const Matrix<T> b = randomMatrix<T>(rng, n, k);
    Matrix<T> c(n, n);
    for (auto _ : state) {
        c.noalias() = a * b.transpose();
        benchmark::DoNotOptimize(c.data());
        benchmark::ClobberMemory();
    }
    const double flop = 2.0 * double(n) * double(n) * double(k);
    state.counters["GFLOP"]
        = benchmark::Counter(flop * 1e-9, benchmark::Counter::kIsIterationInvariantRate);
}

/// The 2025 variants of the tile engine's full view (TileVariants): none, a learned sink per
/// head, differential attention (a second Q, K and λ), the head-wise gate.
enum class TileVariant { None, Sink, Differential, Gate };

/// The tile engine's full view: h heads of d each (Q, K: n × h·d) pooled to px × px pixels.
void tileFullView(benchmark::State &state, bool mean, bool metrics,
                  TileVariant variant = TileVariant::None)
{
    const Index n = state.range(0);
    const Index d = state.range(1);
    const Index heads = state.range(2);
    const Index px = state.range(3);
    attn::Generator rng(0);
    const Matrix<float> q = randomMatrix<float>(rng, n, heads * d);
    const Matrix<float> k = randomMatrix<float>(rng, n, heads * d);
    std::vector<Index> which;
    for (Index h = 0; h < heads; ++h)
        which.push_back(h);
    if (mean)
        which.push_back(attn::kHeadMean);
    attn::TileVariants<float> variants;
    if (variant == TileVariant::Sink)
        variants.sinkLogits.assign(std::size_t(heads), 1.0);
    if (variant == TileVariant::Differential) {
        variants.query2 = randomMatrix<float>(rng, n, heads * d);
        variants.key2 = randomMatrix<float>(rng, n, heads * d);
        variants.lambda.assign(std::size_t(heads), 0.5);
    }
    if (variant == TileVariant::Gate)
        variants.gate = attn::MatrixD::Constant(n, heads, 0.75);
    for (auto _ : state) {
        attn::TileEngine<float> engine(q, k, heads, {}, {}, variants);
        std::vector<attn::RowMetrics> m;
        auto tiles = engine.render(which, engine.fullWindow(), px, px, attn::TilePooling::Max,
                                   metrics ? &m : nullptr);
        benchmark::DoNotOptimize(tiles.front().values.data());
        benchmark::ClobberMemory();
    }
    // Q Kᵀ of every head: 2·n²·d flop per head.
    const double flop = 2.0 * double(n) * double(n) * double(d) * double(heads);
    state.counters["GFLOP"]
        = benchmark::Counter(flop * 1e-9, benchmark::Counter::kIsIterationInvariantRate);
    state.counters["held_MiB"]
        = double(attn::TileEngine<float>::heldBytes(n, n, heads, d, sizeof(float),
                                                    variant == TileVariant::Differential,
                                                    variant == TileVariant::Gate))
        / (1024.0 * 1024.0);
}

/// One tile of a zoomed view (the Long tab's unit of work once the first full view recorded every
/// row's statistics): a window of `cells` × `cells` weights pooled at `perPixel` cells per pixel,
/// at a new place in every iteration, of head 0 (heads = 1) or of the mean over `heads` heads
/// (Q, K: n × heads·d, causal mask).
void tileZoomed(benchmark::State &state)
{
    const Index n = state.range(0);
    const Index d = state.range(1);
    const Index heads = state.range(2);
    const Index cells = state.range(3);
    const Index perPixel = state.range(4);
    attn::Generator rng(0);
    const Matrix<float> q = randomMatrix<float>(rng, n, heads * d);
    const Matrix<float> k = randomMatrix<float>(rng, n, heads * d);
    attn::TileEngine<float> engine(q, k, heads, attn::AttentionMask::causal(n, n));
    const Index head = heads == 1 ? 0 : attn::kHeadMean;
    engine.render({head}, engine.fullWindow(), 1024, 1024, attn::TilePooling::Max); // statistics
    Index at = 0;
    for (auto _ : state) {
        at = (at + 7919 * cells) % (n - cells);
        const attn::TileWindow w {at, at + cells, (at * 3) % (n - cells),
                                  (at * 3) % (n - cells) + cells};
        auto tiles = engine.render({head}, w, attn::tileGridWithCells(w, perPixel, perPixel),
                                   attn::TilePooling::Max);
        benchmark::DoNotOptimize(tiles.front().values.data());
        benchmark::ClobberMemory();
    }
    state.counters["Mcells"] = benchmark::Counter(double(cells * cells * heads) * 1e-6,
                                                  benchmark::Counter::kIsIterationInvariantRate);
}

/// The streaming kernel once per head (Q, K, V: n × d each), h times per iteration.
void streamingHeads(benchmark::State &state)
{
    const Index n = state.range(0);
    const Index d = state.range(1);
    const Index heads = state.range(2);
    attn::Generator rng(0);
    const Matrix<float> q = randomMatrix<float>(rng, n, d);
    const Matrix<float> k = randomMatrix<float>(rng, n, d);
    const Matrix<float> v = randomMatrix<float>(rng, n, d);
    const float scale = 1.0f / std::sqrt(float(d));
    for (auto _ : state) {
        for (Index h = 0; h < heads; ++h) {
            Matrix<float> out = attn::attentionStreaming<float>(q, k, v, scale);
            benchmark::DoNotOptimize(out.data());
        }
        benchmark::ClobberMemory();
    }
    const double flop = 4.0 * double(n) * double(n) * double(d) * double(heads);
    state.counters["GFLOP"]
        = benchmark::Counter(flop * 1e-9, benchmark::Counter::kIsIterationInvariantRate);
}

/// gemmBenchmark's product through core/base/blas.h (OpenBLAS in a build with it).
template<typename T> void blasGemmBenchmark(benchmark::State &state)
{
    const Index n = state.range(0);
    const Index k = state.range(1);
    attn::Generator rng(1);
    const Matrix<T> a = randomMatrix<T>(rng, n, k);
    const Matrix<T> b = randomMatrix<T>(rng, n, k);
    Matrix<T> c(n, n);
    for (auto _ : state) {
        attn::gemmTransposed<T>(a, b, c);
        benchmark::DoNotOptimize(c.data());
        benchmark::ClobberMemory();
    }
    const double flop = 2.0 * double(n) * double(n) * double(k);
    state.counters["GFLOP"]
        = benchmark::Counter(flop * 1e-9, benchmark::Counter::kIsIterationInvariantRate);
}

/// Attention with Eigen's float32 code (setAvx512KernelsEnabled(false)) for the same inputs.
void eigenBaseline(benchmark::State &state, KernelKind kind)
{
    const bool had = attn::kernelInstructionSet() == "avx512";
    attn::setAvx512KernelsEnabled(false);
    attentionBenchmark<float>(state, kind);
    attn::setAvx512KernelsEnabled(had);
}

/// The window's computation: n × n self-attention, d_model, h heads, float64, seeded inputs.
/// `alphaStep`: the engine keeps the raw scores and each iteration changes α (what a slider drag
/// computes: the fused row pass of every head); otherwise every iteration is a full computation
/// (inputs, projections, scores, row pass). GFLOP counts the score GEMMs, 2·n²·d_model.
void fusedHeadsBenchmark(benchmark::State &state, bool alphaStep)
{
    attn::EngineParameters p;
    p.n = state.range(0);
    p.dModel = state.range(1);
    p.heads = state.range(2);
    attn::SessionEngine engine;
    attn::EngineResult r;
    engine.compute(p, r);
    int step = 0;
    for (auto _ : state) {
        if (alphaStep) {
            p.scaleExponent = 0.25 + 0.25 * double(++step % 3);
        } else {
            engine.clear();
        }
        engine.pool()->recycle(std::move(r));
        engine.compute(p, r);
        benchmark::DoNotOptimize(r.weights.data());
        benchmark::ClobberMemory();
    }
    const double flop = 2.0 * double(p.n) * double(p.n) * double(p.dModel);
    state.counters["GFLOP"]
        = benchmark::Counter(flop * 1e-9, benchmark::Counter::kIsIterationInvariantRate);
}

void fmaPeak(benchmark::State &state)
{
    const int lanes = attn::bench::fmaPeakLanes();
    if (lanes == 0) {
        state.SkipWithError("no AVX2/FMA on this CPU");
        return;
    }
    constexpr long iterations = 20'000'000; // 10 chains: 2e8 FMAs per thread
    int threads = 1;
    for (auto _ : state) {
        float sink = 0.0f;
#pragma omp parallel reduction(+ : sink)
        {
#ifdef _OPENMP
#pragma omp single
            threads = omp_get_num_threads();
#endif
            sink += attn::bench::fmaPeakRun(iterations);
        }
        benchmark::DoNotOptimize(sink);
    }
    const double flop = double(threads) * 10.0 * double(iterations) * 2.0 * lanes;
    state.counters["GFLOP"]
        = benchmark::Counter(flop * 1e-9, benchmark::Counter::kIsIterationInvariantRate);
    state.counters["threads"] = threads;
    state.counters["lanes"] = lanes;
}

void attentionSizes(benchmark::internal::Benchmark *b)
{
    for (Index d : {64, 128})
        for (Index n : {256, 512, 1024, 2048, 4096, 8192, 16384})
            b->Args({n, d});
    b->ArgNames({"n", "d"})->Unit(benchmark::kMillisecond)->UseRealTime();
}

void baselineSizes(benchmark::internal::Benchmark *b)
{
    for (Index n : {1024, 4096})
        b->Args({n, 64});
    b->ArgNames({"n", "d"})->Unit(benchmark::kMillisecond)->UseRealTime();
}

void loopSizes(benchmark::internal::Benchmark *b)
{
    // The per-row loop is the didactic reference: keep it to sizes that finish quickly.
    for (Index d : {64, 128})
        for (Index n : {256, 512, 1024, 2048})
            b->Args({n, d});
    b->ArgNames({"n", "d"})->Unit(benchmark::kMillisecond)->UseRealTime();
}

void tileSizes(benchmark::internal::Benchmark *b)
{
    // n = 256 is the smoke-test size; 16 384 × 8 heads of 64 is the long-sequence target.
    for (Index n : {256, 4096, 16384})
        b->Args({n, 64, 8, 1024});
    b->ArgNames({"n", "d", "h", "px"})->Unit(benchmark::kMillisecond)->UseRealTime();
}

void streamingHeadsSizes(benchmark::internal::Benchmark *b)
{
    for (Index n : {256, 4096, 16384})
        b->Args({n, 64, 8});
    b->ArgNames({"n", "d", "h"})->Unit(benchmark::kMillisecond)->UseRealTime();
}

void fusedSizes(benchmark::internal::Benchmark *b)
{
    for (Index d : {64, 128})
        for (Index n : {256, 512, 1024, 2048, 4096})
            b->Args({n, d});
    b->ArgNames({"n", "d"})->Unit(benchmark::kMillisecond)->UseRealTime();
}

void fusedHeadsSizes(benchmark::internal::Benchmark *b)
{
    // bench_gui's shapes (d_model = 512, h = 8) and a small one for the CTest smoke filter.
    b->Args({256, 64, 4});
    for (Index n : {64, 256, 1024})
        b->Args({n, 512, 8});
    b->ArgNames({"n", "d", "h"})->Unit(benchmark::kMillisecond)->UseRealTime();
}

void gemmSizes(benchmark::internal::Benchmark *b)
{
    b->Args({2048, 2048})->Args({4096, 64})->ArgNames({"n", "k"});
    b->Unit(benchmark::kMillisecond)->UseRealTime();
}

} // namespace

namespace {
void Materialized_f32(benchmark::State &s)
{
    attentionBenchmark<float>(s, KernelKind::Materialized);
}
void Streaming_f32(benchmark::State &s)
{
    attentionBenchmark<float>(s, KernelKind::Streaming);
}
void Materialized_f32_eigen(benchmark::State &s)
{
    eigenBaseline(s, KernelKind::Materialized);
}
void Streaming_f32_eigen(benchmark::State &s)
{
    eigenBaseline(s, KernelKind::Streaming);
}
void Loop_f32(benchmark::State &s)
{
    attentionBenchmark<float>(s, KernelKind::Loop);
}
void Materialized_f64(benchmark::State &s)
{
    attentionBenchmark<double>(s, KernelKind::Materialized);
}
void Streaming_f64(benchmark::State &s)
{
    attentionBenchmark<double>(s, KernelKind::Streaming);
}
void Loop_f64(benchmark::State &s)
{
    attentionBenchmark<double>(s, KernelKind::Loop);
}
void TileFullView_f32(benchmark::State &s)
{
    tileFullView(s, false, false);
}
void TileFullViewMean_f32(benchmark::State &s)
{
    tileFullView(s, true, false);
}
void TileFullViewMetrics_f32(benchmark::State &s)
{
    tileFullView(s, false, true);
}
void TileFullViewSink_f32(benchmark::State &s)
{
    tileFullView(s, false, false, TileVariant::Sink);
}
void TileFullViewDifferential_f32(benchmark::State &s)
{
    tileFullView(s, false, false, TileVariant::Differential);
}
void TileFullViewGate_f32(benchmark::State &s)
{
    tileFullView(s, false, false, TileVariant::Gate);
}
void TileZoomed_f32(benchmark::State &s)
{
    tileZoomed(s);
}
void StreamingHeads_f32(benchmark::State &s)
{
    streamingHeads(s);
}
void Materialized_f64_eigen(benchmark::State &s)
{
    const bool had = attn::blasName() == "openblas";
    attn::setBlasEnabled(false);
    attentionBenchmark<double>(s, KernelKind::Materialized);
    attn::setBlasEnabled(had);
}
void Sgemm_openblas(benchmark::State &s)
{
    blasGemmBenchmark<float>(s);
}
void Dgemm_openblas(benchmark::State &s)
{
    blasGemmBenchmark<double>(s);
}
void Fused_f32(benchmark::State &s)
{
    attentionBenchmark<float>(s, KernelKind::Fused);
}
void Fused_f64(benchmark::State &s)
{
    attentionBenchmark<double>(s, KernelKind::Fused);
}
void FusedHeads_f64(benchmark::State &s)
{
    fusedHeadsBenchmark(s, false);
}
void FusedHeadsAlphaStep_f64(benchmark::State &s)
{
    fusedHeadsBenchmark(s, true);
}
void Sgemm(benchmark::State &s)
{
    gemmBenchmark<float>(s);
}
void Dgemm(benchmark::State &s)
{
    gemmBenchmark<double>(s);
}
} // namespace

BENCHMARK(Materialized_f32)->Apply(attentionSizes);
BENCHMARK(Streaming_f32)->Apply(attentionSizes);
BENCHMARK(Materialized_f32_eigen)->Apply(baselineSizes);
BENCHMARK(Streaming_f32_eigen)->Apply(baselineSizes);
BENCHMARK(Loop_f32)->Apply(loopSizes);
BENCHMARK(Materialized_f64)->Apply(attentionSizes);
BENCHMARK(Streaming_f64)->Apply(attentionSizes);
BENCHMARK(Loop_f64)->Apply(loopSizes);
BENCHMARK(TileFullView_f32)->Apply(tileSizes);
BENCHMARK(TileFullViewSink_f32)->Apply(tileSizes);
BENCHMARK(TileFullViewDifferential_f32)->Apply(tileSizes);
BENCHMARK(TileFullViewGate_f32)->Apply(tileSizes);
BENCHMARK(TileZoomed_f32)
    ->ArgNames({"n", "d", "heads", "cells", "per_pixel"})
    ->Args({16384, 64, 1, 256, 1})
    ->Args({16384, 64, 1, 512, 2})
    ->Args({16384, 64, 1, 1024, 4})
    ->Args({16384, 64, 8, 256, 1})
    ->Args({16384, 64, 8, 512, 2})
    ->Unit(benchmark::kMillisecond);
BENCHMARK(StreamingHeads_f32)->Apply(streamingHeadsSizes);
BENCHMARK(TileFullViewMean_f32)->Apply(tileSizes);
BENCHMARK(TileFullViewMetrics_f32)->Apply(tileSizes);
BENCHMARK(Materialized_f64_eigen)->Apply(baselineSizes);
BENCHMARK(Fused_f32)->Apply(fusedSizes);
BENCHMARK(Fused_f64)->Apply(fusedSizes);
BENCHMARK(FusedHeads_f64)->Apply(fusedHeadsSizes);
BENCHMARK(FusedHeadsAlphaStep_f64)->Apply(fusedHeadsSizes);
BENCHMARK(Sgemm)->Apply(gemmSizes);
BENCHMARK(Sgemm_openblas)->Apply(gemmSizes);
BENCHMARK(Dgemm)->Apply(gemmSizes);
BENCHMARK(Dgemm_openblas)->Apply(gemmSizes);
BENCHMARK(fmaPeak)->Name("FmaPeak_f32")->Unit(benchmark::kMillisecond)->UseRealTime();

int main(int argc, char **argv)
{
    benchmark::Initialize(&argc, argv);
    if (benchmark::ReportUnrecognizedArguments(argc, argv))
        return 1;
    benchmark::AddCustomContext("float32_kernels", std::string(attn::kernelInstructionSet()));
    benchmark::AddCustomContext("blas", std::string(attn::blasName()));
    benchmark::RunSpecifiedBenchmarks();
    benchmark::Shutdown();
    return 0;
}
