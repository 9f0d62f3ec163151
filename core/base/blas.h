#pragma once
// General matrix products of row-major matrices through OpenBLAS (cblas_sgemm / cblas_dgemm,
// Debian's OpenMP build, so that it shares the OpenMP threads of the kernels and inside a
// parallel region runs on the calling thread) when attncore is built with it, else through
// Eigen's GEMM. Eigen's GEMM in the portable (SSE2) build reaches about a quarter of OpenBLAS's
// rate on AVX-512 machines (OpenBLAS picks its kernels at run time); bench_kernels shows both.
// A different summation order changes results in the last bits only. Products under
// kSingleThreadFlops (core/base/threads.h) run on the calling thread, so that they give the
// same bits whatever the caller's OpenMP thread count; larger ones use omp_get_max_threads().

#include "core/base/types.h"

#include <string>
#include <string_view>

namespace attn {

/// C (m × n) = A (m × k) · Bᵀ, B: n × k (the shape of Q Kᵀ and of X Wᵀ). C must already be
/// m × n. Throws InvalidArgument naming the shapes when they disagree.
template<typename T>
void gemmTransposed(const ConstMatrixRef<T> &a, const ConstMatrixRef<T> &b, MatrixRef<T> c);

/// C (m × n) += A (m × k) · Bᵀ, B: n × k: a projection added to what C holds, e.g. its bias in
/// every row (BLAS's β = 1). C must already be m × n. Throws InvalidArgument naming the shapes
/// when they disagree.
template<typename T>
void gemmTransposedAdd(const ConstMatrixRef<T> &a, const ConstMatrixRef<T> &b, MatrixRef<T> c);

/// C (m × n) = A (m × k) · B, B: k × n (the shape of W V). C must already be m × n. Throws
/// InvalidArgument naming the shapes when they disagree.
template<typename T>
void gemm(const ConstMatrixRef<T> &a, const ConstMatrixRef<T> &b, MatrixRef<T> c);

/// C (m × n) = Aᵀ · B, A: k × m, B: k × n (the shape of a weight gradient dYᵀ X). C must already
/// be m × n. Throws InvalidArgument naming the shapes when they disagree.
template<typename T>
void gemmTransposedA(const ConstMatrixRef<T> &a, const ConstMatrixRef<T> &b, MatrixRef<T> c);

/// "openblas" when the products above go through OpenBLAS, else "eigen".
std::string_view blasName();

/// The OpenBLAS kernel family in use (openblas_get_corename(): "SkylakeX", "Haswell",
/// "Prescott", …); empty in a build without OpenBLAS.
std::string blasCoreName();

/// The OPENBLAS_CORETYPE this CPU supports when OpenBLAS chose a weaker kernel family: OpenBLAS
/// (0.3.21) falls back to "Prescott" (SSE3) on CPU models it does not know, as on virtual
/// machines reporting a generic "Intel Xeon Processor", and its SSE3 GEMM is 4–5× slower than
/// its AVX-512 one there. "SkylakeX" when the CPU and the OS support AVX-512 F, CD, BW, DQ and
/// VL, else "Haswell" with AVX2 and FMA; empty when OPENBLAS_CORETYPE is set, OpenBLAS chose
/// anything but Prescott, or the CPU has neither. OpenBLAS reads OPENBLAS_CORETYPE once, when
/// it is loaded: a caller that wants the better kernels sets it and executes itself again.
std::string betterBlasCore();

/// Turns the OpenBLAS products on or off for later calls (benchmarks compare both in one
/// process); returns whether they are on afterwards (false in a build without OpenBLAS). Not
/// while a product runs.
bool setBlasEnabled(bool on);

} // namespace attn
