// AVX2 + FMA float32 row passes of the training layer (see avx2.h). Compiled with -mavx2 -mfma
// in every x86-64 build and called only when avx2::enabled(). No Eigen and no standard-library
// templates here (see avx2.h): helpers have internal linkage.

#include "core/training/avx2.h"

#include <immintrin.h>

#if !defined(__AVX2__) || !defined(__FMA__)
#error "avx2.cpp must be compiled with -mavx2 -mfma (core/CMakeLists.txt)"
#endif

namespace attn::training::detail::avx2 {

namespace {

/// Lane mask of the first n lanes (0 < n < 8) for maskload / maskstore.
inline __m256i tailMask(Index n)
{
    const __m256i lane = _mm256_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7);
    return _mm256_cmpgt_epi32(_mm256_set1_epi32(int(n)), lane);
}

/// x[j] in the lanes j that `mask` (tailMask) selects, `fill` in the others.
inline __m256 loadTail(const float *x, __m256i mask, float fill)
{
    return _mm256_blendv_ps(_mm256_set1_ps(fill), _mm256_maskload_ps(x, mask),
                            _mm256_castsi256_ps(mask));
}

inline float horizontalMax(__m256 v)
{
    __m128 m = _mm_max_ps(_mm256_castps256_ps128(v), _mm256_extractf128_ps(v, 1));
    m = _mm_max_ps(m, _mm_movehl_ps(m, m));
    m = _mm_max_ss(m, _mm_shuffle_ps(m, m, 1));
    return _mm_cvtss_f32(m);
}

inline float horizontalSum(__m256 v)
{
    __m128 s = _mm_add_ps(_mm256_castps256_ps128(v), _mm256_extractf128_ps(v, 1));
    s = _mm_add_ps(s, _mm_movehl_ps(s, s));
    s = _mm_add_ss(s, _mm_shuffle_ps(s, s, 1));
    return _mm_cvtss_f32(s);
}

/// exp(t) on 8 lanes for t ≤ 0 (see avx2.h): Cephes expf, range reduction n = round(t·log2 e),
/// r = t − n·ln 2 in two parts, degree-5 polynomial, 2^n (n ≥ −126) built in the exponent bits.
/// t < ln(FLT_MIN) gives 0; NaN stays NaN.
inline __m256 expNonPositive(__m256 t)
{
    const __m256 lowest = _mm256_set1_ps(-87.3365448f); // ln(FLT_MIN)
    // The comparison is true for NaN, so a NaN is kept and propagates.
    const __m256 keep = _mm256_cmp_ps(t, lowest, _CMP_NLT_UQ);
    // max/min return their second operand when either is NaN: t stays NaN.
    t = _mm256_min_ps(_mm256_set1_ps(0.0f), _mm256_max_ps(lowest, t));
    const __m256 n = _mm256_round_ps(_mm256_mul_ps(t, _mm256_set1_ps(1.44269504088896341f)),
                                     _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC);
    __m256 r = _mm256_fnmadd_ps(n, _mm256_set1_ps(0.693359375f), t);
    r = _mm256_fnmadd_ps(n, _mm256_set1_ps(-2.12194440e-4f), r);
    const __m256 z = _mm256_mul_ps(r, r);
    __m256 y = _mm256_set1_ps(1.9875691500e-4f);
    y = _mm256_fmadd_ps(y, r, _mm256_set1_ps(1.3981999507e-3f));
    y = _mm256_fmadd_ps(y, r, _mm256_set1_ps(8.3334519073e-3f));
    y = _mm256_fmadd_ps(y, r, _mm256_set1_ps(4.1665795894e-2f));
    y = _mm256_fmadd_ps(y, r, _mm256_set1_ps(1.6666665459e-1f));
    y = _mm256_fmadd_ps(y, r, _mm256_set1_ps(5.0000001201e-1f));
    y = _mm256_fmadd_ps(y, z, r);
    y = _mm256_add_ps(y, _mm256_set1_ps(1.0f));
    // 2^n for n in [−126, 0]: biased exponent n + 127 in bits 23 … 30.
    const __m256i bits
        = _mm256_slli_epi32(_mm256_add_epi32(_mm256_cvtps_epi32(n), _mm256_set1_epi32(127)), 23);
    return _mm256_and_ps(_mm256_mul_ps(y, _mm256_castsi256_ps(bits)), keep);
}

} // namespace

void softmaxRows(float *p, Index rows, Index cols, std::uint8_t *fullyMasked)
{
    const Index whole = cols - cols % 8, tail = cols - whole;
    const __m256i mask = tailMask(tail > 0 ? tail : 1);
    const float negInf = -__builtin_inff();
    for (Index i = 0; i < rows; ++i) {
        float *x = p + i * cols;
        __m256 m8 = _mm256_set1_ps(negInf);
        for (Index j = 0; j < whole; j += 8)
            m8 = _mm256_max_ps(m8, _mm256_loadu_ps(x + j));
        if (tail)
            m8 = _mm256_max_ps(m8, loadTail(x + whole, mask, negInf));
        const float m = horizontalMax(m8);
        if (m == negInf) { // every key masked: zero weights, flagged
            for (Index j = 0; j < cols; ++j)
                x[j] = 0.0f;
            fullyMasked[i] = 1;
            continue;
        }
        const __m256 shift = _mm256_set1_ps(m);
        __m256 s8 = _mm256_setzero_ps();
        for (Index j = 0; j < whole; j += 8) {
            const __m256 e = expNonPositive(_mm256_sub_ps(_mm256_loadu_ps(x + j), shift));
            _mm256_storeu_ps(x + j, e);
            s8 = _mm256_add_ps(s8, e);
        }
        if (tail) {
            // Lanes past the row hold −inf: exp gives 0 there and adds nothing.
            const __m256 e
                = expNonPositive(_mm256_sub_ps(loadTail(x + whole, mask, negInf), shift));
            _mm256_maskstore_ps(x + whole, mask, e);
            s8 = _mm256_add_ps(s8, e);
        }
        const __m256 sum = _mm256_set1_ps(horizontalSum(s8));
        for (Index j = 0; j < whole; j += 8)
            _mm256_storeu_ps(x + j, _mm256_div_ps(_mm256_loadu_ps(x + j), sum));
        if (tail)
            _mm256_maskstore_ps(x + whole, mask,
                                _mm256_div_ps(loadTail(x + whole, mask, 0.0f), sum));
    }
}

void softmaxBackward(const float *p, const float *dP, float *dS, Index rows, Index cols,
                     float scale)
{
    const Index whole = cols - cols % 8, tail = cols - whole;
    const __m256i mask = tailMask(tail > 0 ? tail : 1);
    const __m256 s = _mm256_set1_ps(scale);
    for (Index i = 0; i < rows; ++i) {
        const float *pi = p + i * cols, *gi = dP + i * cols;
        float *out = dS + i * cols;
        __m256 dot8 = _mm256_setzero_ps();
        for (Index j = 0; j < whole; j += 8)
            dot8 = _mm256_add_ps(dot8,
                                 _mm256_mul_ps(_mm256_loadu_ps(gi + j), _mm256_loadu_ps(pi + j)));
        if (tail)
            dot8 = _mm256_add_ps(
                dot8,
                _mm256_mul_ps(loadTail(gi + whole, mask, 0.0f), loadTail(pi + whole, mask, 0.0f)));
        const __m256 dot = _mm256_set1_ps(horizontalSum(dot8));
        for (Index j = 0; j < whole; j += 8) {
            const __m256 d = _mm256_sub_ps(_mm256_loadu_ps(gi + j), dot);
            _mm256_storeu_ps(out + j, _mm256_mul_ps(_mm256_mul_ps(_mm256_loadu_ps(pi + j), d), s));
        }
        if (tail) {
            const __m256 d = _mm256_sub_ps(loadTail(gi + whole, mask, 0.0f), dot);
            _mm256_maskstore_ps(
                out + whole, mask,
                _mm256_mul_ps(_mm256_mul_ps(loadTail(pi + whole, mask, 0.0f), d), s));
        }
    }
}

} // namespace attn::training::detail::avx2
