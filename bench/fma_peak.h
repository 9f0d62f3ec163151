#pragma once
// The machine's float32 FMA peak (bench_kernels' FmaPeak benchmark), see fma_peak.cpp.

namespace attn::bench {

/// Float lanes of the widest FMA this CPU has: 16 (AVX-512F), 8 (AVX2+FMA) or 0 (none).
int fmaPeakLanes();

/// Runs 10 independent FMA chains of `iterations` steps each on this thread (10 · iterations
/// FMAs of fmaPeakLanes() lanes, 2 flops per lane); returns a value to keep the work alive.
float fmaPeakRun(long iterations);

} // namespace attn::bench
