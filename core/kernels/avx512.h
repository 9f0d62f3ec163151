#pragma once
// Internal AVX-512 float32 micro-kernels for the two products of attention (not part of the API).
// Compiled only when the compiler targets AVX-512F (ATTN_NATIVE on such a machine); otherwise the
// kernels use Eigen's GEMM. Register blocking in the style of BLIS/OpenBLAS micro-kernels:
//  - scoresBlock:  S (R × ≤32) = Q (R × d_k) · Kᵀ, from Kᵀ packed in contiguous panels of 32
//                  keys (d_k × 32), 2·R zmm accumulators, one broadcast of q per row and two
//                  loads of Kᵀ per k;
//  - accumulateBlock: O (R × 16·C) = O · rowScale + P (R × keys) · V (keys × 16·C), R·C zmm
//                  accumulators, one broadcast of p per row and C loads of V per key.
// Both are plain FMAs in the order of a dot product over k (keys), so results agree with Eigen's
// GEMM to rounding.

#if defined(__AVX512F__)
#define ATTN_HAVE_AVX512_KERNELS 1

#include "../types.h"

#include <immintrin.h>

#include <algorithm>
#include <vector>

namespace attn::detail::avx512 {

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

/// Kᵀ packed in panels of 32 keys: panel p (keys 32p … 32p+31) is a contiguous d_k × 32 block
/// (row stride 32), zero-padded past n_k. Memory: ⌈n_k/32⌉·32·d_k floats.
struct PackedKeys
{
    std::vector<float> data;
    Index dk = 0;
    Index panelSize() const { return dk * 32; }
    const float *panel(Index p) const { return data.data() + p * panelSize(); }
};

/// Packs key (n_k × d_k, rows `ldk` apart) into PackedKeys.
inline PackedKeys packKeys(const float *key, Index ldk, Index nK, Index dk)
{
    PackedKeys pk;
    pk.dk = dk;
    const Index panels = (nK + 31) / 32;
    pk.data.assign(std::size_t(panels * dk * 32), 0.0f);
    for (Index j = 0; j < nK; ++j) {
        float *dst = pk.data.data() + (j / 32) * dk * 32 + (j % 32);
        const float *src = key + j * ldk;
        for (Index k = 0; k < dk; ++k)
            dst[k * 32] = src[k];
    }
    return pk;
}

/// S (rows × cols) = Q (rows × dk) · K[j0 … j0+cols)ᵀ with j0 a multiple of 32.
inline void scores(const float *q, Index ldq, Index rows, const PackedKeys &keys, Index j0,
                   Index cols, float *s, Index lds)
{
    constexpr int R = 8;
    const Index dk = keys.dk;
    // Column blocks outside, row blocks inside: one packed panel (dk × 32, contiguous) stays in
    // L1 while every row block uses it.
    for (Index c0 = 0; c0 < cols; c0 += 32) {
        const Index c = std::min<Index>(32, cols - c0);
        const float *kt = keys.panel((j0 + c0) / 32);
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

/// O (rows × dV) = O · diag(rowScale) + P (rows × keys) · V (keys × dV); dV a multiple of 16.
/// With `overwrite` O's old contents are ignored.
inline void accumulate(const float *p, Index ldp, Index rows, Index keys, const float *v, Index ldv,
                       Index dV, float *o, Index ldo, const float *rowScale, bool overwrite)
{
    for (Index c0 = 0; c0 < dV; c0 += 64) {
        const Index width = std::min<Index>(64, dV - c0);
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

} // namespace attn::detail::avx512

#endif // __AVX512F__
