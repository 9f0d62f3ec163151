// AVX-512F float32 micro-kernels, row max / exp / scale passes (see avx512.h). Compiled with
// -mavx512f in every x86-64 build and called only when avx512::enabled(). No Eigen and no
// standard-library templates here (see avx512.h): helpers have internal linkage.

#include "avx512.h"

#include <immintrin.h>

#include <cstdint>

#if !defined(__AVX512F__)
#error "avx512.cpp must be compiled with -mavx512f (core/CMakeLists.txt)"
#endif

namespace attn::detail::avx512 {

namespace {

inline Index minIndex(Index a, Index b)
{
    return a < b ? a : b;
}

/// Mask of the first `n` lanes (none for n <= 0, all 16 for n >= 16).
inline __mmask16 lanes(Index n)
{
    if (n <= 0)
        return 0;
    return n >= 16 ? __mmask16(0xFFFF) : __mmask16((1u << unsigned(n)) - 1u);
}

/// S[r][c] = Σ_k q[r·ldq + k] · kt[k·ldkt + c] for r < R, c < cols (cols ≤ 32).
template<int R>
inline void scoresBlock(const float *q, Index ldq, const float *kt, Index ldkt, Index dk, float *s,
                        Index lds, Index cols)
{
    const __mmask16 m0 = lanes(cols), m1 = lanes(cols - 16);
    __m512 acc0[R], acc1[R];
    for (int r = 0; r < R; ++r) {
        acc0[r] = _mm512_setzero_ps();
        acc1[r] = _mm512_setzero_ps();
    }
    if (cols >= 32) {
        for (Index k = 0; k < dk; ++k) {
            const __m512 b0 = _mm512_loadu_ps(kt + k * ldkt);
            const __m512 b1 = _mm512_loadu_ps(kt + k * ldkt + 16);
            for (int r = 0; r < R; ++r) {
                const __m512 a = _mm512_set1_ps(q[r * ldq + k]);
                acc0[r] = _mm512_fmadd_ps(a, b0, acc0[r]);
                acc1[r] = _mm512_fmadd_ps(a, b1, acc1[r]);
            }
        }
    } else {
        for (Index k = 0; k < dk; ++k) {
            const __m512 b0 = _mm512_maskz_loadu_ps(m0, kt + k * ldkt);
            const __m512 b1 = _mm512_maskz_loadu_ps(m1, kt + k * ldkt + 16);
            for (int r = 0; r < R; ++r) {
                const __m512 a = _mm512_set1_ps(q[r * ldq + k]);
                acc0[r] = _mm512_fmadd_ps(a, b0, acc0[r]);
                acc1[r] = _mm512_fmadd_ps(a, b1, acc1[r]);
            }
        }
    }
    for (int r = 0; r < R; ++r) {
        _mm512_mask_storeu_ps(s + r * lds, m0, acc0[r]);
        _mm512_mask_storeu_ps(s + r * lds + 16, m1, acc1[r]);
    }
}

/// O[r][c] = O[r][c] · rowScale[r] (rowScale null: ·1, or O ignored when `overwrite`) +
/// Σ_kk P[r][kk] · V[kk][c], for r < R and c < 16·C.
template<int R, int C>
inline void accumulateBlock(const float *p, Index ldp, Index keys, const float *v, Index ldv,
                            float *o, Index ldo, const float *rowScale, bool overwrite)
{
    __m512 acc[R][C];
    for (int r = 0; r < R; ++r) {
        for (int c = 0; c < C; ++c) {
            if (overwrite) {
                acc[r][c] = _mm512_setzero_ps();
            } else {
                acc[r][c] = _mm512_loadu_ps(o + r * ldo + 16 * c);
                if (rowScale)
                    acc[r][c] = _mm512_mul_ps(acc[r][c], _mm512_set1_ps(rowScale[r]));
            }
        }
    }
    for (Index kk = 0; kk < keys; ++kk) {
        __m512 b[C];
        for (int c = 0; c < C; ++c)
            b[c] = _mm512_loadu_ps(v + kk * ldv + 16 * c);
        for (int r = 0; r < R; ++r) {
            const __m512 a = _mm512_set1_ps(p[r * ldp + kk]);
            for (int c = 0; c < C; ++c)
                acc[r][c] = _mm512_fmadd_ps(a, b[c], acc[r][c]);
        }
    }
    for (int r = 0; r < R; ++r)
        for (int c = 0; c < C; ++c)
            _mm512_storeu_ps(o + r * ldo + 16 * c, acc[r][c]);
}

template<int C>
inline void accumulateRows(const float *p, Index ldp, Index rows, Index keys, const float *v,
                           Index ldv, float *o, Index ldo, const float *rowScale, bool overwrite)
{
    // 6 rows × C zmm: 24 accumulators for C = 4 (d_v = 64), within the 32 zmm registers.
    constexpr int R = C >= 4 ? 6 : 8;
    Index r0 = 0;
    const auto scaleAt = [rowScale](Index r) { return rowScale ? rowScale + r : nullptr; };
    for (; r0 + R <= rows; r0 += R)
        accumulateBlock<R, C>(p + r0 * ldp, ldp, keys, v, ldv, o + r0 * ldo, ldo, scaleAt(r0),
                              overwrite);
    const float *pr = p + r0 * ldp;
    float *orow = o + r0 * ldo;
    const float *sr = scaleAt(r0);
    switch (rows - r0) {
    case 7:
        accumulateBlock<7, C>(pr, ldp, keys, v, ldv, orow, ldo, sr, overwrite);
        break;
    case 6:
        accumulateBlock<6, C>(pr, ldp, keys, v, ldv, orow, ldo, sr, overwrite);
        break;
    case 5:
        accumulateBlock<5, C>(pr, ldp, keys, v, ldv, orow, ldo, sr, overwrite);
        break;
    case 4:
        accumulateBlock<4, C>(pr, ldp, keys, v, ldv, orow, ldo, sr, overwrite);
        break;
    case 3:
        accumulateBlock<3, C>(pr, ldp, keys, v, ldv, orow, ldo, sr, overwrite);
        break;
    case 2:
        accumulateBlock<2, C>(pr, ldp, keys, v, ldv, orow, ldo, sr, overwrite);
        break;
    case 1:
        accumulateBlock<1, C>(pr, ldp, keys, v, ldv, orow, ldo, sr, overwrite);
        break;
    default:
        break;
    }
}

/// exp(t) on 16 lanes: Cephes expf (range reduction by n = round(t·log2 e), t − n·ln 2 in two
/// parts, degree-5 polynomial), 2^n applied by scalef (correctly rounded subnormals, 0 below).
/// t is clamped to [−150, 88.72]: exp(−150) is 0 in float, so −inf and a −1e9 fill give 0.
inline __m512 exp16(__m512 t)
{
    t = _mm512_min_ps(_mm512_max_ps(t, _mm512_set1_ps(-150.0f)), _mm512_set1_ps(88.72283f));
    const __m512 n = _mm512_roundscale_ps(_mm512_mul_ps(t, _mm512_set1_ps(1.44269504088896341f)),
                                          _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC);
    __m512 r = _mm512_fnmadd_ps(n, _mm512_set1_ps(0.693359375f), t);
    r = _mm512_fnmadd_ps(n, _mm512_set1_ps(-2.12194440e-4f), r);
    const __m512 z = _mm512_mul_ps(r, r);
    __m512 y = _mm512_set1_ps(1.9875691500e-4f);
    y = _mm512_fmadd_ps(y, r, _mm512_set1_ps(1.3981999507e-3f));
    y = _mm512_fmadd_ps(y, r, _mm512_set1_ps(8.3334519073e-3f));
    y = _mm512_fmadd_ps(y, r, _mm512_set1_ps(4.1665795894e-2f));
    y = _mm512_fmadd_ps(y, r, _mm512_set1_ps(1.6666665459e-1f));
    y = _mm512_fmadd_ps(y, r, _mm512_set1_ps(5.0000001201e-1f));
    y = _mm512_fmadd_ps(y, z, r);
    y = _mm512_add_ps(y, _mm512_set1_ps(1.0f));
    return _mm512_scalef_ps(y, n);
}

/// exp(t) on 8 double lanes: Cephes exp (range reduction by n = round(t·log2 e), t − n·ln 2 in
/// two parts, Padé form 1 + 2·p(r)/(q(r) − p(r))), 2^n applied by scalef. t is clamped to
/// [−1100, 709.78]: exp(−1100) is 0 in double, so −inf and a −1e9 fill give 0.
inline __m512d exp8(__m512d t)
{
    t = _mm512_min_pd(_mm512_max_pd(t, _mm512_set1_pd(-1100.0)),
                      _mm512_set1_pd(709.782712893383996843));
    const __m512d n
        = _mm512_roundscale_pd(_mm512_mul_pd(t, _mm512_set1_pd(1.4426950408889634073599)),
                               _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC);
    __m512d r = _mm512_fnmadd_pd(n, _mm512_set1_pd(6.93145751953125e-1), t);
    r = _mm512_fnmadd_pd(n, _mm512_set1_pd(1.42860682030941723212e-6), r);
    const __m512d rr = _mm512_mul_pd(r, r);
    __m512d px = _mm512_set1_pd(1.26177193074810590878e-4);
    px = _mm512_fmadd_pd(px, rr, _mm512_set1_pd(3.02994407707441961300e-2));
    px = _mm512_fmadd_pd(px, rr, _mm512_set1_pd(9.99999999999999999910e-1));
    px = _mm512_mul_pd(px, r);
    __m512d qx = _mm512_set1_pd(3.00198505138664455042e-6);
    qx = _mm512_fmadd_pd(qx, rr, _mm512_set1_pd(2.52448340349684104192e-3));
    qx = _mm512_fmadd_pd(qx, rr, _mm512_set1_pd(2.27265548208155028766e-1));
    qx = _mm512_fmadd_pd(qx, rr, _mm512_set1_pd(2.00000000000000000009e0));
    const __m512d e = _mm512_div_pd(px, _mm512_sub_pd(qx, px));
    return _mm512_scalef_pd(_mm512_fmadd_pd(e, _mm512_set1_pd(2.0), _mm512_set1_pd(1.0)), n);
}

/// Mask of the first `n` of 8 double lanes.
inline __mmask8 lanes8(Index n)
{
    if (n <= 0)
        return 0;
    return n >= 8 ? __mmask8(0xFF) : __mmask8((1u << unsigned(n)) - 1u);
}

inline double sum8(__m512d v)
{
    alignas(64) double out[8];
    _mm512_store_pd(out, v);
    return ((out[0] + out[1]) + (out[2] + out[3])) + ((out[4] + out[5]) + (out[6] + out[7]));
}

inline double max8(__m512d v)
{
    alignas(64) double out[8];
    _mm512_store_pd(out, v);
    double m = out[0];
    for (int k = 1; k < 8; ++k)
        m = out[k] > m ? out[k] : m;
    return m;
}

} // namespace

Index packedKeysSize(Index nK, Index dk)
{
    return (nK + 31) / 32 * 32 * dk;
}

void packKeys(const float *key, Index ldk, Index nK, Index dk, float *out)
{
    const Index size = packedKeysSize(nK, dk);
    for (Index i = 0; i < size; ++i)
        out[i] = 0.0f;
    for (Index j = 0; j < nK; ++j) {
        float *dst = out + (j / 32) * dk * 32 + (j % 32);
        const float *src = key + j * ldk;
        for (Index k = 0; k < dk; ++k)
            dst[k * 32] = src[k];
    }
}

void scores(const float *q, Index ldq, Index rows, const float *packedKeys, Index dk, Index j0,
            Index cols, float *s, Index lds)
{
    constexpr int R = 8;
    // Column blocks outside, row blocks inside: one packed panel (dk × 32, contiguous) stays in
    // L1 while every row block uses it.
    for (Index c0 = 0; c0 < cols; c0 += 32) {
        const Index c = minIndex(32, cols - c0);
        const float *kt = packedKeys + (j0 + c0) / 32 * dk * 32;
        Index r0 = 0;
        for (; r0 + R <= rows; r0 += R)
            scoresBlock<R>(q + r0 * ldq, ldq, kt, 32, dk, s + r0 * lds + c0, lds, c);
        const float *qr = q + r0 * ldq;
        float *sr = s + r0 * lds + c0;
        switch (rows - r0) {
        case 7:
            scoresBlock<7>(qr, ldq, kt, 32, dk, sr, lds, c);
            break;
        case 6:
            scoresBlock<6>(qr, ldq, kt, 32, dk, sr, lds, c);
            break;
        case 5:
            scoresBlock<5>(qr, ldq, kt, 32, dk, sr, lds, c);
            break;
        case 4:
            scoresBlock<4>(qr, ldq, kt, 32, dk, sr, lds, c);
            break;
        case 3:
            scoresBlock<3>(qr, ldq, kt, 32, dk, sr, lds, c);
            break;
        case 2:
            scoresBlock<2>(qr, ldq, kt, 32, dk, sr, lds, c);
            break;
        case 1:
            scoresBlock<1>(qr, ldq, kt, 32, dk, sr, lds, c);
            break;
        default:
            break;
        }
    }
}

void accumulate(const float *p, Index ldp, Index rows, Index keys, const float *v, Index ldv,
                Index dV, float *o, Index ldo, const float *rowScale, bool overwrite)
{
    for (Index c0 = 0; c0 < dV; c0 += 64) {
        const Index width = minIndex(64, dV - c0);
        switch (width / 16) {
        case 4:
            accumulateRows<4>(p, ldp, rows, keys, v + c0, ldv, o + c0, ldo, rowScale, overwrite);
            break;
        case 3:
            accumulateRows<3>(p, ldp, rows, keys, v + c0, ldv, o + c0, ldo, rowScale, overwrite);
            break;
        case 2:
            accumulateRows<2>(p, ldp, rows, keys, v + c0, ldv, o + c0, ldo, rowScale, overwrite);
            break;
        default:
            accumulateRows<1>(p, ldp, rows, keys, v + c0, ldv, o + c0, ldo, rowScale, overwrite);
            break;
        }
    }
}

float rowMax(const float *x, Index n, bool &suspicious)
{
    const __m512 negInf = _mm512_set1_ps(-__builtin_inff());
    __m512 m0 = negInf, m1 = negInf;
    __m512 s0 = _mm512_setzero_ps(), s1 = _mm512_setzero_ps();
    Index j = 0;
    for (; j + 32 <= n; j += 32) {
        const __m512 a = _mm512_loadu_ps(x + j);
        const __m512 b = _mm512_loadu_ps(x + j + 16);
        m0 = _mm512_max_ps(m0, a);
        m1 = _mm512_max_ps(m1, b);
        s0 = _mm512_add_ps(s0, a);
        s1 = _mm512_add_ps(s1, b);
    }
    for (; j < n; j += 16) {
        const __mmask16 k = lanes(n - j);
        m0 = _mm512_max_ps(m0, _mm512_mask_loadu_ps(negInf, k, x + j));
        s0 = _mm512_add_ps(s0, _mm512_maskz_loadu_ps(k, x + j));
    }
    const float mx = _mm512_reduce_max_ps(_mm512_max_ps(m0, m1));
    const float sum = _mm512_reduce_add_ps(_mm512_add_ps(s0, s1));
    // max ignores a NaN lane here; the sum does not.
    suspicious = sum != sum || sum == __builtin_inff() || mx != mx;
    return mx;
}

float expShiftSum(float *x, Index n, float shift, float scale)
{
    const __m512 pshift = _mm512_set1_ps(-shift);
    const __m512 pscale = _mm512_set1_ps(scale);
    __m512 s0 = _mm512_setzero_ps(), s1 = _mm512_setzero_ps();
    Index j = 0;
    for (; j + 32 <= n; j += 32) {
        const __m512 ea = exp16(_mm512_fmadd_ps(_mm512_loadu_ps(x + j), pscale, pshift));
        const __m512 eb = exp16(_mm512_fmadd_ps(_mm512_loadu_ps(x + j + 16), pscale, pshift));
        _mm512_storeu_ps(x + j, ea);
        _mm512_storeu_ps(x + j + 16, eb);
        s0 = _mm512_add_ps(s0, ea);
        s1 = _mm512_add_ps(s1, eb);
    }
    for (; j < n; j += 16) {
        const __mmask16 k = lanes(n - j);
        const __m512 e = exp16(_mm512_fmadd_ps(_mm512_maskz_loadu_ps(k, x + j), pscale, pshift));
        _mm512_mask_storeu_ps(x + j, k, e);
        s0 = _mm512_add_ps(s0, _mm512_maskz_mov_ps(k, e));
    }
    return _mm512_reduce_add_ps(_mm512_add_ps(s0, s1));
}

void streamStore(const float *src, Index n, float *dst)
{
    Index j = 0;
    // Plain stores up to the first 64-byte boundary of dst, then whole lines past the caches.
    while (j < n && (reinterpret_cast<std::uintptr_t>(dst + j) & 63u) != 0) {
        dst[j] = src[j];
        ++j;
    }
    for (; j + 16 <= n; j += 16)
        _mm512_stream_ps(dst + j, _mm512_loadu_ps(src + j));
    if (j < n) {
        const __mmask16 k = lanes(n - j);
        _mm512_mask_storeu_ps(dst + j, k, _mm512_maskz_loadu_ps(k, src + j));
    }
    _mm_sfence(); // the streamed lines are visible before anyone reads them
}

double rowMax(const double *x, Index n, bool &suspicious)
{
    const __m512d negInf = _mm512_set1_pd(-__builtin_inf());
    __m512d m0 = negInf, m1 = negInf;
    __m512d s0 = _mm512_setzero_pd(), s1 = _mm512_setzero_pd();
    Index j = 0;
    for (; j + 16 <= n; j += 16) {
        const __m512d a = _mm512_loadu_pd(x + j);
        const __m512d b = _mm512_loadu_pd(x + j + 8);
        m0 = _mm512_max_pd(m0, a);
        m1 = _mm512_max_pd(m1, b);
        s0 = _mm512_add_pd(s0, a);
        s1 = _mm512_add_pd(s1, b);
    }
    for (; j < n; j += 8) {
        const __mmask8 k = lanes8(n - j);
        m0 = _mm512_max_pd(m0, _mm512_mask_loadu_pd(negInf, k, x + j));
        s0 = _mm512_add_pd(s0, _mm512_maskz_loadu_pd(k, x + j));
    }
    const double mx = max8(_mm512_max_pd(m0, m1));
    const double sum = sum8(_mm512_add_pd(s0, s1));
    suspicious = sum != sum || sum == __builtin_inf() || mx != mx;
    return mx;
}

double expShiftSum(double *x, Index n, double shift, double scale)
{
    const __m512d pshift = _mm512_set1_pd(-shift);
    const __m512d pscale = _mm512_set1_pd(scale);
    __m512d s0 = _mm512_setzero_pd(), s1 = _mm512_setzero_pd();
    Index j = 0;
    for (; j + 16 <= n; j += 16) {
        const __m512d ea = exp8(_mm512_fmadd_pd(_mm512_loadu_pd(x + j), pscale, pshift));
        const __m512d eb = exp8(_mm512_fmadd_pd(_mm512_loadu_pd(x + j + 8), pscale, pshift));
        _mm512_storeu_pd(x + j, ea);
        _mm512_storeu_pd(x + j + 8, eb);
        s0 = _mm512_add_pd(s0, ea);
        s1 = _mm512_add_pd(s1, eb);
    }
    for (; j < n; j += 8) {
        const __mmask8 k = lanes8(n - j);
        const __m512d e = exp8(_mm512_fmadd_pd(_mm512_maskz_loadu_pd(k, x + j), pscale, pshift));
        _mm512_mask_storeu_pd(x + j, k, e);
        s0 = _mm512_add_pd(s0, _mm512_maskz_mov_pd(k, e));
    }
    return sum8(_mm512_add_pd(s0, s1));
}

void scaleRow(double *x, Index n, double s)
{
    const __m512d ps = _mm512_set1_pd(s);
    for (Index j = 0; j < n; j += 8) {
        const __mmask8 k = lanes8(n - j);
        _mm512_mask_storeu_pd(x + j, k, _mm512_mul_pd(_mm512_maskz_loadu_pd(k, x + j), ps));
    }
}

void scaleRow(float *x, Index n, float s)
{
    const __m512 ps = _mm512_set1_ps(s);
    for (Index j = 0; j < n; j += 16) {
        const __mmask16 k = lanes(n - j);
        _mm512_mask_storeu_ps(x + j, k, _mm512_mul_ps(_mm512_maskz_loadu_ps(k, x + j), ps));
    }
}

} // namespace attn::detail::avx512
