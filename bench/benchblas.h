#pragma once
// The benchmark programs' start: run again under OpenBLAS's better kernels where OpenBLAS fell
// back to SSE3 (core/base/blas.h betterBlasCore), unless --keep-blas-core asks to measure
// OpenBLAS's own choice. OpenBLAS reads OPENBLAS_CORETYPE when it is loaded, hence the exec.

#include "core/base/blas.h"

#include <cstdlib>
#include <cstring>
#include <string>

#include <unistd.h>

namespace attn::bench {

/// Re-executes this program with OPENBLAS_CORETYPE set to betterBlasCore() (returns only when
/// there is nothing better, --keep-blas-core is given, or the exec fails).
inline void rerunWithBetterBlasCore(int argc, char **argv)
{
    for (int i = 1; i < argc; ++i)
        if (!std::strcmp(argv[i], "--keep-blas-core"))
            return;
    if (const std::string core = betterBlasCore();
        !core.empty() && setenv("OPENBLAS_CORETYPE", core.c_str(), 1) == 0)
        execv("/proc/self/exe", argv);
}

} // namespace attn::bench
