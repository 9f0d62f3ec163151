// AVX-512F float32 micro-kernels, row max / exp / scale passes (see avx512.h). Compiled with
// -mavx512f in every x86-64 build and called only when avx512::enabled(). No Eigen and no
// standard-library templates here (see avx512.h): helpers have internal linkage.

#include "core/kernels/avx512.h"

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

/// A row count known at compile time (the register-blocked kernels' R).
template<int K> struct Rows
{
    static constexpr int value = K;
};

/// block(Rows<k>{}, r0) for the last `left` rows starting at r0, with k = left (0 < left ≤ K).
template<int K, typename Block> inline void remainderBlock(Index left, Index r0, Block &block)
{
    if constexpr (K > 0) {
        if (left == K)
            block(Rows<K> {}, r0);
        else
            remainderBlock<K - 1>(left, r0, block);
    }
}

/// Covers rows [0, rows) with block(Rows<R>{}, r0) on whole blocks of R rows, then one
/// block(Rows<k>{}, r0) with k < R for what is left, so every block is a fixed-size kernel.
template<int R, typename Block> inline void rowBlocks(Index rows, Block block)
{
    Index r0 = 0;
    for (; r0 + R <= rows; r0 += R)
        block(Rows<R> {}, r0);
    remainderBlock<R - 1>(rows - r0, r0, block);
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
    rowBlocks<R>(rows, [&](auto k, Index r0) {
        accumulateBlock<decltype(k)::value, C>(p + r0 * ldp, ldp, keys, v, ldv, o + r0 * ldo, ldo,
                                               rowScale ? rowScale + r0 : nullptr, overwrite);
    });
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

/// 16 float lanes: the operations the row passes need (rowMaxOf, expShiftSumOf, scaleRowOf).
struct Float16
{
    using T = float;
    using V = __m512;
    using M = __mmask16;
    static constexpr Index width = 16;
    static M mask(Index n) { return lanes(n); }
    static V set1(T x) { return _mm512_set1_ps(x); }
    static V zero() { return _mm512_setzero_ps(); }
    static V load(const T *p) { return _mm512_loadu_ps(p); }
    static V load(V src, M k, const T *p) { return _mm512_mask_loadu_ps(src, k, p); }
    static V loadZ(M k, const T *p) { return _mm512_maskz_loadu_ps(k, p); }
    static void store(T *p, V v) { _mm512_storeu_ps(p, v); }
    static void store(T *p, M k, V v) { _mm512_mask_storeu_ps(p, k, v); }
    static V keep(M k, V v) { return _mm512_maskz_mov_ps(k, v); }
    static V max(V a, V b) { return _mm512_max_ps(a, b); }
    static V add(V a, V b) { return _mm512_add_ps(a, b); }
    static V mul(V a, V b) { return _mm512_mul_ps(a, b); }
    static V fmadd(V a, V b, V c) { return _mm512_fmadd_ps(a, b, c); }
    static V exp(V t) { return exp16(t); }
    static T inf() { return __builtin_inff(); }
    static T maxOf(V v) { return _mm512_reduce_max_ps(v); }
    static T sumOf(V v) { return _mm512_reduce_add_ps(v); }
};

/// 8 double lanes, the same operations.
struct Double8
{
    using T = double;
    using V = __m512d;
    using M = __mmask8;
    static constexpr Index width = 8;
    static M mask(Index n)
    {
        if (n <= 0)
            return 0;
        return n >= 8 ? M(0xFF) : M((1u << unsigned(n)) - 1u);
    }
    static V set1(T x) { return _mm512_set1_pd(x); }
    static V zero() { return _mm512_setzero_pd(); }
    static V load(const T *p) { return _mm512_loadu_pd(p); }
    static V load(V src, M k, const T *p) { return _mm512_mask_loadu_pd(src, k, p); }
    static V loadZ(M k, const T *p) { return _mm512_maskz_loadu_pd(k, p); }
    static void store(T *p, V v) { _mm512_storeu_pd(p, v); }
    static void store(T *p, M k, V v) { _mm512_mask_storeu_pd(p, k, v); }
    static V keep(M k, V v) { return _mm512_maskz_mov_pd(k, v); }
    static V max(V a, V b) { return _mm512_max_pd(a, b); }
    static V add(V a, V b) { return _mm512_add_pd(a, b); }
    static V mul(V a, V b) { return _mm512_mul_pd(a, b); }
    static V fmadd(V a, V b, V c) { return _mm512_fmadd_pd(a, b, c); }
    static V exp(V t) { return exp8(t); }
    static T inf() { return __builtin_inf(); }
    static T maxOf(V v)
    {
        alignas(64) T out[8];
        _mm512_store_pd(out, v);
        T m = out[0];
        for (int k = 1; k < 8; ++k)
            m = out[k] > m ? out[k] : m;
        return m;
    }
    static T sumOf(V v)
    {
        alignas(64) T out[8];
        _mm512_store_pd(out, v);
        return ((out[0] + out[1]) + (out[2] + out[3])) + ((out[4] + out[5]) + (out[6] + out[7]));
    }
};

/// Largest entry of x[0, n) and whether the plain sum is NaN/+inf (rowMax in avx512.h).
template<typename L> typename L::T rowMaxOf(const typename L::T *x, Index n, bool &suspicious)
{
    using T = typename L::T;
    const auto negInf = L::set1(-L::inf());
    auto m0 = negInf, m1 = negInf;
    auto s0 = L::zero(), s1 = L::zero();
    Index j = 0;
    for (; j + 2 * L::width <= n; j += 2 * L::width) {
        const auto a = L::load(x + j);
        const auto b = L::load(x + j + L::width);
        m0 = L::max(m0, a);
        m1 = L::max(m1, b);
        s0 = L::add(s0, a);
        s1 = L::add(s1, b);
    }
    for (; j < n; j += L::width) {
        const auto k = L::mask(n - j);
        m0 = L::max(m0, L::load(negInf, k, x + j));
        s0 = L::add(s0, L::loadZ(k, x + j));
    }
    const T mx = L::maxOf(L::max(m0, m1));
    const T sum = L::sumOf(L::add(s0, s1));
    // max ignores a NaN lane here; the sum does not.
    suspicious = sum != sum || sum == L::inf() || mx != mx;
    return mx;
}

/// x[j] = exp(x[j]·scale − shift), returns the sum (expShiftSum in avx512.h).
template<typename L>
typename L::T expShiftSumOf(typename L::T *x, Index n, typename L::T shift, typename L::T scale)
{
    const auto pshift = L::set1(-shift);
    const auto pscale = L::set1(scale);
    auto s0 = L::zero(), s1 = L::zero();
    Index j = 0;
    for (; j + 2 * L::width <= n; j += 2 * L::width) {
        const auto ea = L::exp(L::fmadd(L::load(x + j), pscale, pshift));
        const auto eb = L::exp(L::fmadd(L::load(x + j + L::width), pscale, pshift));
        L::store(x + j, ea);
        L::store(x + j + L::width, eb);
        s0 = L::add(s0, ea);
        s1 = L::add(s1, eb);
    }
    for (; j < n; j += L::width) {
        const auto k = L::mask(n - j);
        const auto e = L::exp(L::fmadd(L::loadZ(k, x + j), pscale, pshift));
        L::store(x + j, k, e);
        s0 = L::add(s0, L::keep(k, e));
    }
    return L::sumOf(L::add(s0, s1));
}

/// x[j] *= s (scaleRow in avx512.h).
template<typename L> void scaleRowOf(typename L::T *x, Index n, typename L::T s)
{
    const auto ps = L::set1(s);
    for (Index j = 0; j < n; j += L::width) {
        const auto k = L::mask(n - j);
        L::store(x + j, k, L::mul(L::loadZ(k, x + j), ps));
    }
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
        rowBlocks<R>(rows, [&](auto k, Index r0) {
            scoresBlock<decltype(k)::value>(q + r0 * ldq, ldq, kt, 32, dk, s + r0 * lds + c0, lds,
                                            c);
        });
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

float rowMax(const float *x, Index n, bool &suspicious)
{
    return rowMaxOf<Float16>(x, n, suspicious);
}

double rowMax(const double *x, Index n, bool &suspicious)
{
    return rowMaxOf<Double8>(x, n, suspicious);
}

float expShiftSum(float *x, Index n, float shift, float scale)
{
    return expShiftSumOf<Float16>(x, n, shift, scale);
}

double expShiftSum(double *x, Index n, double shift, double scale)
{
    return expShiftSumOf<Double8>(x, n, shift, scale);
}

void scaleRow(float *x, Index n, float s)
{
    scaleRowOf<Float16>(x, n, s);
}

void scaleRow(double *x, Index n, double s)
{
    scaleRowOf<Double8>(x, n, s);
}

} // namespace attn::detail::avx512
