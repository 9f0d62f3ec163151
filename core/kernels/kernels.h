#pragma once
// Four implementations of O = softmax(Q Kᵀ · scale + M) V with identical results (within
// 1e-12 in float64, 1e-5 in float32):
//  - materialized: one GEMM for the scores, a fused row softmax, one GEMM for W V;
//  - streaming: online softmax over K/V tiles (Milakov & Gimelshein 2018; Dao et al. 2022,
//    FlashAttention), no n_q × n_k matrix, fully masked causal tiles skipped;
//  - loop: one query row at a time, the slow obvious reference (E9 and the tests' oracle);
//  - fused: the window's path (core/engine/sessionengine.h) for one head: one GEMM for the
//    scores, then per row scale, mask, softmax and the display metrics in one pass, then W V.
// Masked cells use -inf (fully masked rows give zero output), i.e. AttentionOptions defaults.
// Shapes: query n_q × d_k, key n_k × d_k, value n_k × d_v, output n_q × d_v, row-major.
// Every kernel throws InvalidArgument naming the shapes when they disagree (or the mask does not
// fit n_q × n_k), and NonFiniteInput naming the input, row and column on NaN/Inf in Q, K or V
// (or when finite inputs overflow the scores). The materialized and streaming kernels use both
// cores (OpenMP); call them from one thread at a time for full speed.

#include "core/attention/mask.h"
#include "core/base/threads.h"
#include "core/base/types.h"

#include <cstddef>
#include <string_view>

namespace attn {

enum class KernelKind { Materialized, Streaming, Loop, Fused };

/// "materialized" / "streaming" / "loop" / "fused".
std::string_view kernelName(KernelKind kind);
/// Inverse of kernelName; throws InvalidArgument listing the valid names.
KernelKind kernelFromName(std::string_view name);

/// Tile (query rows and keys) of attentionStreaming when none is given.
inline constexpr Index kDefaultStreamingTile = 128;

/// Threads a kernel call of this size uses: threadsForFlops (core/base/threads.h) of its work,
/// 2 · n_q · n_k · (d_k + d_v) flops (4·n²·d for square attention).
Index kernelThreadsFor(Index nQ, Index nK, Index dK, Index dV);

/// The float32 code of the materialized and streaming kernels: "avx512" (AVX-512F
/// micro-kernels and 16-lane exp, chosen at run time when the CPU has AVX-512F, for d_v a
/// multiple of 16) or "eigen" (the products of core/base/blas.h — OpenBLAS when the build has it,
/// else Eigen's GEMM — in the materialized kernel, Eigen's GEMM in the streaming kernel's tiles,
/// and Eigen's packet math as compiled: SSE2 in the portable default build). Float64 products take
/// the same routes; the row passes (max, exp, scale) of both types and softmaxRowsInPlace use the
/// AVX-512 code too when it is on. ATTN_NO_AVX512 set
/// in the environment to anything but "" or "0" before the first call selects "eigen".
std::string_view kernelInstructionSet();

/// Turns the AVX-512 float32 code on or off for later kernel calls (tests and benchmarks run
/// both in one process). Returns whether it is on afterwards: false when asked on a CPU or a
/// build without it. Thread-safe; do not call while a kernel runs.
bool setAvx512KernelsEnabled(bool on);

/// Extra memory (bytes) a kernel allocates beyond its inputs and output, for n_q × n_k
/// attention with head dim d_v and element size `elementBytes`:
///  - materialized: the n_q × n_k score matrix (softmaxed in place into the weights);
///  - streaming: per thread a tile × tile score block, a tile × d_v accumulator and 3 · tile
///    row statistics, times kernelThreads() — independent of n;
///  - loop: one row of n_k scores;
///  - fused: the n_q × n_k scores and weights in T plus the float64 weights, scaled scores and
///    mean of the row pass and a mask-state byte per cell, (2·elementBytes + 25)·n_q·n_k.
/// With the AVX-512 float32 code in use (kernelInstructionSet(), d_v % 16 == 0) float32 adds
/// Kᵀ packed in panels of 32 keys (n_k rounded up to 32, times d_v, assuming d_k = d_v) to
/// the materialized and streaming figures, and round the streaming key tile up to 32.
/// Eigen's GEMM packing buffers (at most a few hundred KiB per thread) are not counted.
std::size_t kernelExtraBytes(KernelKind kind, Index nQ, Index nK, Index dV,
                             std::size_t elementBytes);
/// The same with an explicit streaming tile.
std::size_t kernelExtraBytes(KernelKind kind, Index nQ, Index nK, Index dV,
                             std::size_t elementBytes, Index tile);

/// Materialized kernel; when `weights` is non-null it receives the n_q × n_k weights.
/// The whole n_q × n_k score/weight matrix exists (in *weights, or else in a scratch buffer the
/// kernel keeps for the next call, see releaseKernelWorkspace()). It is filled one block of query
/// rows at a time — GEMM Q_b Kᵀ, row softmax, GEMM W_b V — so each entry is produced and consumed
/// while in cache; the blocks are spread over the OpenMP threads. With a pure causal mask only
/// keys below each block's causal limit are computed.
template<typename T>
Matrix<T> attentionMaterialized(const ConstMatrixRef<T> &query, const ConstMatrixRef<T> &key,
                                const ConstMatrixRef<T> &value, T scale,
                                const AttentionMask &mask = {}, Matrix<T> *weights = nullptr);

/// Streaming (online softmax) kernel with square tiles of `tile` rows/keys; query tiles are
/// spread over the OpenMP threads.
template<typename T>
Matrix<T> attentionStreaming(const ConstMatrixRef<T> &query, const ConstMatrixRef<T> &key,
                             const ConstMatrixRef<T> &value, T scale,
                             const AttentionMask &mask = {}, Index tile = kDefaultStreamingTile);

/// Per-row loop kernel; when `weights` is non-null it receives the n_q × n_k weights.
template<typename T>
Matrix<T> attentionLoop(const ConstMatrixRef<T> &query, const ConstMatrixRef<T> &key,
                        const ConstMatrixRef<T> &value, T scale, const AttentionMask &mask = {},
                        Matrix<T> *weights = nullptr);

/// Fused kernel, the session engine's row pass for one head (core/engine/sessionengine.cpp):
/// S = Q Kᵀ, then per row S·scale + additive mask, masked cells −inf, softmaxRowInPlace and
/// the row metrics the window shows (computed, then dropped here), then O = W V. When `weights`
/// is non-null it receives the n_q × n_k weights. Uses threadsForFlops of its work.
template<typename T>
Matrix<T> attentionFused(const ConstMatrixRef<T> &query, const ConstMatrixRef<T> &key,
                         const ConstMatrixRef<T> &value, T scale, const AttentionMask &mask = {},
                         Matrix<T> *weights = nullptr);

/// Frees the scratch buffer the materialized kernel keeps between calls (it keeps at most one,
/// of at most kMaxCachedWorkspaceBytes; larger buffers are freed after each call).
void releaseKernelWorkspace();
inline constexpr std::size_t kMaxCachedWorkspaceBytes = std::size_t(256) << 20;

/// Dispatch by kind.
template<typename T>
Matrix<T> attentionKernel(KernelKind kind, const ConstMatrixRef<T> &query,
                          const ConstMatrixRef<T> &key, const ConstMatrixRef<T> &value, T scale,
                          const AttentionMask &mask = {});

} // namespace attn
