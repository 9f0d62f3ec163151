#include "core/kernels/kernels.h"

#include "core/kernels/avx512.h"
#include "core/kernels/detail.h"

#include <algorithm>
#include <atomic>
#include <cmath>
#include <cstdlib>
#include <limits>
#include <mutex>
#include <new>
#include <string>
#include <string_view>
#include <type_traits>

#ifdef _OPENMP
#include <omp.h>
#endif

namespace attn {

std::string_view kernelName(KernelKind kind)
{
    switch (kind) {
    case KernelKind::Materialized:
        return "materialized";
    case KernelKind::Streaming:
        return "streaming";
    case KernelKind::Loop:
        return "loop";
    case KernelKind::Fused:
        return "fused";
    }
    return "unknown";
}

KernelKind kernelFromName(std::string_view name)
{
    for (KernelKind k :
         {KernelKind::Materialized, KernelKind::Streaming, KernelKind::Loop, KernelKind::Fused})
        if (kernelName(k) == name)
            return k;
    throw InvalidArgument("unknown kernel \"" + std::string(name)
                          + "\" (valid: materialized, streaming, loop, fused)");
}

static_assert(std::is_same_v<Index, detail::avx512::Index>, "avx512.h assumes Eigen::Index");

namespace {

/// 1: AVX-512 code on, 0: off, −1: not decided yet (first use reads the CPU and environment).
std::atomic<int> g_avx512 {-1};

bool cpuHasAvx512()
{
#if defined(ATTN_HAVE_AVX512_KERNELS)
    // GCC's check reads CPUID and XCR0 (the OS saves the zmm registers).
    __builtin_cpu_init();
    return __builtin_cpu_supports("avx512f");
#else
    return false;
#endif
}

} // namespace

bool detail::avx512::enabled()
{
    int state = g_avx512.load(std::memory_order_relaxed);
    if (state < 0) {
        // ATTN_NO_AVX512 set to anything but "" or "0" turns the AVX-512 code off.
        const char *off = std::getenv("ATTN_NO_AVX512");
        const bool userOff = off != nullptr && off[0] != '\0' && std::string_view(off) != "0";
        state = cpuHasAvx512() && !userOff ? 1 : 0;
        int expected = -1;
        g_avx512.compare_exchange_strong(expected, state);
        state = g_avx512.load();
    }
    return state == 1;
}

std::string_view kernelInstructionSet()
{
    return detail::avx512::enabled() ? "avx512" : "eigen";
}

bool setAvx512KernelsEnabled(bool on)
{
    g_avx512.store(on && cpuHasAvx512() ? 1 : 0);
    return g_avx512.load() == 1;
}

Index kernelThreadsFor(Index nQ, Index nK, Index dK, Index dV)
{
    return threadsForFlops(2.0 * double(nQ) * double(nK) * double(dK + dV));
}

std::size_t kernelExtraBytes(KernelKind kind, Index nQ, Index nK, Index dV,
                             std::size_t elementBytes, Index tile)
{
    const auto u = [](Index v) { return std::size_t(std::max<Index>(v, 0)); };
    // AVX-512 float32 builds keep Kᵀ packed in panels of 32 keys (d_k = d_v assumed here).
    std::size_t packedKeys = 0;
#ifdef ATTN_HAVE_AVX512_KERNELS
    if (elementBytes == sizeof(float) && dV % 16 == 0 && dV > 0 && detail::avx512::enabled())
        packedKeys = u((nK + 31) / 32 * 32) * u(dV) * sizeof(float);
#endif
    switch (kind) {
    case KernelKind::Materialized:
        // The n_q × n_k score matrix, turned into the weights in place.
        return u(nQ) * u(nK) * elementBytes + packedKeys;
    case KernelKind::Streaming: {
        // Per thread: a tile × tile score block, a tile × d_v accumulator and the running max,
        // sum and correction of the tile's query rows.
        std::size_t tq = u(std::min<Index>(tile, nQ)), tk = u(std::min<Index>(tile, nK));
        if (packedKeys != 0)
            tk = std::min<std::size_t>((u(tile) + 31) / 32 * 32, (u(nK) + 31) / 32 * 32);
        const std::size_t perThread = (tq * tk + tq * u(dV) + 3 * tq) * elementBytes;
        return perThread * u(kernelThreads()) + packedKeys;
    }
    case KernelKind::Loop:
        // One row of scores.
        return u(nK) * elementBytes;
    case KernelKind::Fused:
        // The n_q × n_k scores and weights in T, the float64 weights, scaled scores and mean
        // the row pass writes for display, and one mask-state byte per cell.
        return u(nQ) * u(nK) * (2 * elementBytes + 3 * sizeof(double) + 1);
    }
    return 0;
}

std::size_t kernelExtraBytes(KernelKind kind, Index nQ, Index nK, Index dV,
                             std::size_t elementBytes)
{
    return kernelExtraBytes(kind, nQ, nK, dV, elementBytes, kDefaultStreamingTile);
}

template<typename T>
Matrix<T> attentionKernel(KernelKind kind, const ConstMatrixRef<T> &query,
                          const ConstMatrixRef<T> &key, const ConstMatrixRef<T> &value, T scale,
                          const AttentionMask &mask)
{
    switch (kind) {
    case KernelKind::Materialized:
        return attentionMaterialized<T>(query, key, value, scale, mask);
    case KernelKind::Streaming:
        return attentionStreaming<T>(query, key, value, scale, mask);
    case KernelKind::Loop:
        return attentionLoop<T>(query, key, value, scale, mask);
    case KernelKind::Fused:
        return attentionFused<T>(query, key, value, scale, mask);
    }
    throw InvalidArgument("unknown kernel kind");
}

template Matrix<float> attentionKernel<float>(KernelKind, const Eigen::Ref<const MatrixF> &,
                                              const Eigen::Ref<const MatrixF> &,
                                              const Eigen::Ref<const MatrixF> &, float,
                                              const AttentionMask &);
template Matrix<double> attentionKernel<double>(KernelKind, const Eigen::Ref<const MatrixD> &,
                                                const Eigen::Ref<const MatrixD> &,
                                                const Eigen::Ref<const MatrixD> &, double,
                                                const AttentionMask &);

namespace detail {

namespace {
std::mutex s_workspaceMutex;
void *s_cached = nullptr; // at most one cached buffer
std::size_t s_cachedBytes = 0;
} // namespace

ScratchBuffer::ScratchBuffer(std::size_t bytes)
{
    {
        const std::lock_guard<std::mutex> lock(s_workspaceMutex);
        if (s_cached && s_cachedBytes >= bytes) {
            m_data = s_cached;
            m_bytes = s_cachedBytes;
            s_cached = nullptr;
            s_cachedBytes = 0;
            return;
        }
    }
    // Round up to 64 bytes (aligned_alloc needs a multiple of the alignment).
    m_bytes = std::max<std::size_t>((bytes + 63) / 64 * 64, 64);
    m_data = std::aligned_alloc(64, m_bytes);
    if (!m_data)
        throw std::bad_alloc();
}

ScratchBuffer::~ScratchBuffer()
{
    void *toFree = m_data;
    if (m_bytes <= kMaxCachedWorkspaceBytes) {
        const std::lock_guard<std::mutex> lock(s_workspaceMutex);
        if (!s_cached || s_cachedBytes < m_bytes) {
            // Keep the larger of the two.
            toFree = s_cached;
            s_cached = m_data;
            s_cachedBytes = m_bytes;
        }
    }
    std::free(toFree);
}

} // namespace detail

void releaseKernelWorkspace()
{
    void *toFree = nullptr;
    {
        const std::lock_guard<std::mutex> lock(detail::s_workspaceMutex);
        toFree = detail::s_cached;
        detail::s_cached = nullptr;
        detail::s_cachedBytes = 0;
    }
    std::free(toFree);
}

namespace detail {

void checkAttentionShapes(Index qRows, Index qCols, Index kRows, Index kCols, Index vRows,
                          Index vCols, const AttentionMask &mask, const char *who)
{
    const std::string prefix = std::string(who) + ": ";
    if (kCols != qCols)
        throw InvalidArgument(prefix + "key has d_k = " + std::to_string(kCols)
                              + " but query has d_k = " + std::to_string(qCols) + " (query "
                              + shapeString(qRows, qCols) + ", key " + shapeString(kRows, kCols)
                              + ")");
    if (vRows != kRows)
        throw InvalidArgument(prefix + "value has n_k = " + std::to_string(vRows)
                              + " rows but key has n_k = " + std::to_string(kRows) + " (key "
                              + shapeString(kRows, kCols) + ", value " + shapeString(vRows, vCols)
                              + ")");
    try {
        mask.checkShape(qRows, kRows);
    } catch (const InvalidArgument &e) {
        throw InvalidArgument(prefix + e.what() + " (query " + shapeString(qRows, qCols) + ", key "
                              + shapeString(kRows, kCols) + ")");
    }
}

template<typename T>
void checkFiniteInput(const ConstMatrixRef<T> &m, const char *name, const char *who)
{
    // Fast vectorised test first; the exact position only on failure.
    if (m.size() == 0 || m.allFinite())
        return;
    for (Index i = 0; i < m.rows(); ++i) {
        for (Index j = 0; j < m.cols(); ++j) {
            const T v = m(i, j);
            if (!std::isfinite(v))
                throw NonFiniteInput(std::string(who) + ": " + name + " has "
                                     + (std::isnan(v) ? "NaN" : (v > 0 ? "+inf" : "-inf"))
                                     + " at row " + std::to_string(i) + ", col "
                                     + std::to_string(j));
        }
    }
}

template<typename T>
void applyMaskTile(T *tile, Index ld, Index i0, Index rows, Index j0, Index cols,
                   const AttentionMask &mask, T fill)
{
    if (mask.empty())
        return;
    const Index nK = mask.cols();
    const MatrixD *add = mask.additiveTerm();
    const MatrixB *custom = mask.customMasked();
    const std::vector<std::uint8_t> &padding = mask.keyPaddingFlags();
    const double negInf = -std::numeric_limits<double>::infinity();
    for (Index r = 0; r < rows; ++r) {
        const Index i = i0 + r;
        T *row = tile + r * ld;
        if (add) {
            const double *a = add->row(i).data() + j0;
            for (Index c = 0; c < cols; ++c)
                row[c] = a[c] == negInf ? fill : T(row[c] + T(a[c]));
        }
        if (mask.hasCausal()) {
            const Index limit = mask.causalLimit(i, nK);
            for (Index c = std::max<Index>(limit - j0, 0); c < cols; ++c)
                row[c] = fill;
        }
        if (mask.window() != 0) {
            // Keys sinks … windowStart − 1 lie before the window: masked.
            const Index end = std::min<Index>(mask.windowStart(i, nK) - j0, cols);
            for (Index c = std::max<Index>(mask.sinks() - j0, 0); c < end; ++c)
                row[c] = fill;
        }
        if (!padding.empty()) {
            for (Index c = 0; c < cols; ++c)
                if (padding[std::size_t(j0 + c)])
                    row[c] = fill;
        }
        if (custom) {
            const std::uint8_t *m = custom->row(i).data() + j0;
            for (Index c = 0; c < cols; ++c)
                if (m[c])
                    row[c] = fill;
        }
    }
}

template void checkFiniteInput<float>(const Eigen::Ref<const MatrixF> &, const char *,
                                      const char *);
template void checkFiniteInput<double>(const Eigen::Ref<const MatrixD> &, const char *,
                                       const char *);
template void applyMaskTile<float>(float *, Index, Index, Index, Index, Index,
                                   const AttentionMask &, float);
template void applyMaskTile<double>(double *, Index, Index, Index, Index, Index,
                                    const AttentionMask &, double);

} // namespace detail

} // namespace attn
