// The machine's float32 FMA peak: independent fused multiply-add chains on every OpenMP thread,
// no memory traffic — the ceiling for any float32 GEMM or attention kernel on this machine
// (flops per second = threads · 2 · lanes · FMAs per second). AVX-512F (16 lanes) when the CPU
// has it, else AVX2+FMA (8 lanes), else none (0). Compiled with -mavx512f -mavx2 -mfma and
// called only after __builtin_cpu_supports; intrinsics only, no shared templates (see
// core/kernels/avx512.h for why).

#include "fma_peak.h"

#include <immintrin.h>

namespace attn::bench {

namespace {

// 10 independent chains: enough to cover the FMA latency (4 cycles) at 2 FMAs per cycle.
__attribute__((target("avx512f"))) float chains512(long iterations)
{
    const __m512 b = _mm512_set1_ps(1.0000001f), c = _mm512_set1_ps(1e-9f);
    __m512 a0 = _mm512_set1_ps(0.f), a1 = _mm512_set1_ps(1.f), a2 = _mm512_set1_ps(2.f),
           a3 = _mm512_set1_ps(3.f), a4 = _mm512_set1_ps(4.f), a5 = _mm512_set1_ps(5.f),
           a6 = _mm512_set1_ps(6.f), a7 = _mm512_set1_ps(7.f), a8 = _mm512_set1_ps(8.f),
           a9 = _mm512_set1_ps(9.f);
    for (long i = 0; i < iterations; ++i) {
        a0 = _mm512_fmadd_ps(a0, b, c);
        a1 = _mm512_fmadd_ps(a1, b, c);
        a2 = _mm512_fmadd_ps(a2, b, c);
        a3 = _mm512_fmadd_ps(a3, b, c);
        a4 = _mm512_fmadd_ps(a4, b, c);
        a5 = _mm512_fmadd_ps(a5, b, c);
        a6 = _mm512_fmadd_ps(a6, b, c);
        a7 = _mm512_fmadd_ps(a7, b, c);
        a8 = _mm512_fmadd_ps(a8, b, c);
        a9 = _mm512_fmadd_ps(a9, b, c);
    }
    const __m512 s
        = _mm512_add_ps(_mm512_add_ps(_mm512_add_ps(a0, a1), _mm512_add_ps(a2, a3)),
                        _mm512_add_ps(_mm512_add_ps(a4, a5),
                                      _mm512_add_ps(_mm512_add_ps(a6, a7), _mm512_add_ps(a8, a9))));
    alignas(64) float out[16];
    _mm512_store_ps(out, s);
    float sum = 0.0f;
    for (float v : out)
        sum += v;
    return sum;
}

__attribute__((target("avx2,fma"))) float chains256(long iterations)
{
    const __m256 b = _mm256_set1_ps(1.0000001f), c = _mm256_set1_ps(1e-9f);
    __m256 a[10];
    for (int k = 0; k < 10; ++k)
        a[k] = _mm256_set1_ps(float(k));
    for (long i = 0; i < iterations; ++i)
        for (int k = 0; k < 10; ++k)
            a[k] = _mm256_fmadd_ps(a[k], b, c);
    __m256 s = a[0];
    for (int k = 1; k < 10; ++k)
        s = _mm256_add_ps(s, a[k]);
    alignas(32) float out[8];
    _mm256_store_ps(out, s);
    return out[0] + out[1] + out[2] + out[3] + out[4] + out[5] + out[6] + out[7];
}

} // namespace

int fmaPeakLanes()
{
    __builtin_cpu_init();
    if (__builtin_cpu_supports("avx512f"))
        return 16;
    if (__builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma"))
        return 8;
    return 0;
}

float fmaPeakRun(long iterations)
{
    switch (fmaPeakLanes()) {
    case 16:
        return chains512(iterations);
    case 8:
        return chains256(iterations);
    default:
        return 0.0f;
    }
}

} // namespace attn::bench
