#pragma once
// Internal AVX-512F float32 code of the materialized and streaming kernels (not part of the API).
//
// The functions are defined in avx512.cpp, which is compiled with -mavx512f even in the portable
// default build, and are called only when enabled() says the CPU has AVX-512F (run-time
// dispatch): one binary runs on any x86-64 machine and is fast on the ones with AVX-512.
// ATTN_HAVE_AVX512_KERNELS is defined (by CMake, for attncore) when avx512.cpp is part of the
// build: x86-64 with a compiler that accepts -mavx512f.
//
// avx512.cpp includes no Eigen and no standard-library templates: an inline function compiled
// there with AVX-512 instructions and also used elsewhere would be one symbol to the linker,
// which could keep the AVX-512 copy for every caller and crash a machine without it. Its only
// external symbols are the functions below (tests/CMakeLists.txt checks that with nm).
//
// Register blocking in the style of BLIS/OpenBLAS micro-kernels:
//  - scores:     S (R × ≤32) = Q (R × d_k) · Kᵀ, from Kᵀ packed in contiguous panels of 32
//                keys (d_k × 32), 2·R zmm accumulators, one broadcast of q per row and two
//                loads of Kᵀ per k;
//  - accumulate: O (R × 16·C) = O · rowScale + P (R × keys) · V (keys × 16·C), R·C zmm
//                accumulators, one broadcast of p per row and C loads of V per key.
// Both are plain FMAs in the order of a dot product over k (keys), so results agree with Eigen's
// GEMM to rounding. exp is, in float, Cephes' expf (S. L. Moshier, Cephes Math Library; the
// algorithm of Eigen's pexp) on 16 lanes, with _mm512_scalef_ps for the power of two, so arguments
// below −87.3 give the subnormal or the exact 0 that std::exp gives rather than a clamped value; in
// double, Cephes' exp (Padé form), likewise.

#include <cstddef>

namespace attn::detail::avx512 {

using Index = std::ptrdiff_t; // = attn::Index (checked in kernels.cpp)

/// True when the kernels use the functions below: the build has them, the CPU and the OS
/// support AVX-512F, and neither ATTN_NO_AVX512 (environment, any value) nor
/// attn::setAvx512KernelsEnabled(false) turned them off. Thread-safe, cheap.
bool enabled();

/// Floats packKeys writes for n_k keys of d_k features: ⌈n_k/32⌉ · 32 · d_k.
Index packedKeysSize(Index nK, Index dk);

/// Packs key (n_k × d_k, rows `ldk` floats apart) as Kᵀ in panels of 32 keys: panel p (keys
/// 32p … 32p+31) is a contiguous d_k × 32 block (row stride 32) at out + p·32·d_k, zero-padded
/// past n_k. `out` holds packedKeysSize(n_k, d_k) floats.
void packKeys(const float *key, Index ldk, Index nK, Index dk, float *out);

/// S (rows × cols, rows `lds` apart) = Q (rows × d_k, rows `ldq` apart) · K[j0 … j0+cols)ᵀ,
/// with K packed by packKeys and j0 a multiple of 32.
void scores(const float *q, Index ldq, Index rows, const float *packedKeys, Index dk, Index j0,
            Index cols, float *s, Index lds);

/// O (rows × d_v) = diag(rowScale) · O + P (rows × keys) · V (keys × d_v); d_v a multiple of 16.
/// rowScale null: no scaling. With `overwrite` O's old contents are ignored (O = P V).
void accumulate(const float *p, Index ldp, Index rows, Index keys, const float *v, Index ldv,
                Index dV, float *o, Index ldo, const float *rowScale, bool overwrite);

/// As detail::rowMax (rowops.h): largest entry of x[0, n), −inf for n = 0; `suspicious` set
/// when the plain sum of the entries is NaN or +inf.
float rowMax(const float *x, Index n, bool &suspicious);

/// As detail::expShiftSum (rowops.h): x[j] = exp(x[j]·scale − shift), −inf entries → exactly
/// 0; returns the sum of the new entries. `shift` finite, `scale` > 0.
float expShiftSum(float *x, Index n, float shift, float scale);

/// x[j] *= s for j in [0, n).
void scaleRow(float *x, Index n, float s);

/// dst[j] = src[j] for j in [0, n) with non-temporal stores (no read of dst's cache lines, dst
/// not left in the caches), fenced: for results written once and read later.
void streamStore(const float *src, Index n, float *dst);

/// The same three row passes on 8 double lanes (Cephes exp, Padé form, as Eigen's pexp).
double rowMax(const double *x, Index n, bool &suspicious);
double expShiftSum(double *x, Index n, double shift, double scale);
void scaleRow(double *x, Index n, double s);

} // namespace attn::detail::avx512
