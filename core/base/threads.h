#pragma once
// The one thread-count policy of attncore: how many OpenMP threads a computation of a given
// size gets. The kernels (core/kernels/kernels.h), the session engine
// (core/engine/sessionengine.h) and the experiments ask threadsForFlops() with their work in
// floating-point operations; nothing else decides.

#include "core/base/types.h"

namespace attn {

/// Threads available: OpenMP's omp_get_max_threads() for the calling thread (OMP_NUM_THREADS,
/// or what ScopedKernelThreads set), 1 without OpenMP.
Index kernelThreads();

/// Work (floating-point operations) below which a computation runs on the calling thread
/// alone, Eigen's GEMM included: waking an OpenMP team and its spinning barrier costs more than
/// it saves on ~1 ms of work, and on a busy machine far more (a descheduled team member stalls
/// the barrier; measured on 2 loaded cores: the window's n = 256, h = 8, d_model = 64 took
/// 780 ms with 2 threads and 42 ms with 1), which made small timings invert (E8, E9,
/// attnlab bench). 2·10^7 flops: attention at n = 256, d = 64 (4·n²·d) stays on one thread,
/// n = 512 uses every thread.
inline constexpr double kSingleThreadFlops = 2e7;

/// Threads for `flops` floating-point operations: 1 below kSingleThreadFlops (and for NaN or
/// negative work), else kernelThreads().
Index threadsForFlops(double flops);

/// Sets the calling thread's OpenMP team size for the object's lifetime and restores the
/// previous value on destruction. omp_set_num_threads changes only the calling thread's setting
/// (other threads, the GUI thread among them, keep theirs), and Eigen's GEMM follows it (Eigen
/// reads omp_get_max_threads(); Eigen::setNbThreads would change every thread's and is not
/// used). A no-op without OpenMP.
class ScopedKernelThreads
{
public:
    explicit ScopedKernelThreads(Index threads);
    ~ScopedKernelThreads();
    ScopedKernelThreads(const ScopedKernelThreads &) = delete;
    ScopedKernelThreads &operator=(const ScopedKernelThreads &) = delete;

private:
    int m_previous = 1;
};

} // namespace attn
