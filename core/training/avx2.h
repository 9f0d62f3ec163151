#pragma once
// Internal AVX2 + FMA float32 row passes of the training layer (layer.cpp; not part of the API):
// the row softmax of the forward pass and the softmax backward dS = s · P ⊙ (dP − rowsum(dP ⊙ P)).
//
// The functions are defined in avx2.cpp, which is compiled with -mavx2 -mfma even in the
// portable default build, and are called only when enabled() says the CPU has AVX2 and FMA
// (run-time dispatch). ATTN_HAVE_AVX2_TRAINING is defined (by CMake, for attncore) when
// avx2.cpp is part of the build: x86-64 with a compiler that accepts both flags.
//
// avx2.cpp includes no Eigen and no standard-library templates: an inline function compiled
// there with AVX2 instructions and also used elsewhere would be one symbol to the linker, which
// could keep the AVX2 copy for every caller and crash a machine without it. Its only external
// symbols are the functions below (tests/CMakeLists.txt checks that with nm).
//
// exp is Cephes' expf (S. L. Moshier, Cephes Math Library; the algorithm of Eigen's pexp) on 8
// lanes for arguments ≤ 0, 2^n put into the exponent bits; arguments below ln(FLT_MIN) ≈ −87.34
// (−inf included) give exactly 0, where std::exp gives a subnormal below 1.2e-38 or 0. Sums run
// over 8 lanes, so they differ from Eigen's (4 lanes in SSE2) in the last bits only.

#include <cstddef>
#include <cstdint>

namespace attn::training::detail::avx2 {

using Index = std::ptrdiff_t; // = attn::Index (checked in layer.cpp)

/// True when layer.cpp uses the functions below for float32: the build has them, the CPU and the
/// OS support AVX2 and FMA, and ATTN_NO_AVX2 (environment, any value but "" or "0") is not set.
/// Thread-safe, cheap.
bool enabled();

/// Row-wise softmax in place of P (rows × cols, row-major, rows `cols` floats apart) whose
/// masked cells hold −inf: p_ij = exp(p_ij − m_i) / Σ_j exp(p_ij − m_i), m_i = max_j p_ij. A row
/// whose maximum is −inf (every cell masked) becomes all zeros and sets fullyMasked[i] = 1;
/// fullyMasked[i] is left alone for the other rows.
void softmaxRows(float *p, Index rows, Index cols, std::uint8_t *fullyMasked);

/// dS = (P ⊙ (dP − rowsum(dP ⊙ P) 1ᵀ)) · scale for P, dP, dS rows × cols, row-major, rows `cols`
/// floats apart (the softmax backward of Vaswani et al.'s attention, times the score scale).
void softmaxBackward(const float *p, const float *dP, float *dS, Index rows, Index cols,
                     float scale);

} // namespace attn::training::detail::avx2
