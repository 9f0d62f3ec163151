#include "core/base/threads.h"

#include <algorithm>

#ifdef _OPENMP
#include <omp.h>
#endif

namespace attn {

Index kernelThreads()
{
#ifdef _OPENMP
    return Index(omp_get_max_threads());
#else
    return 1;
#endif
}

Index threadsForFlops(double flops)
{
    return flops >= kSingleThreadFlops ? kernelThreads() : 1; // NaN compares false: 1 thread
}

ScopedKernelThreads::ScopedKernelThreads(Index threads)
{
#ifdef _OPENMP
    m_previous = omp_get_max_threads();
    omp_set_num_threads(int(std::max<Index>(threads, 1)));
#else
    (void)threads;
#endif
}

ScopedKernelThreads::~ScopedKernelThreads()
{
#ifdef _OPENMP
    omp_set_num_threads(m_previous);
#endif
}

} // namespace attn
