#include "core/base/blas.h"

#include "core/base/threads.h"

#include <atomic>
#include <cstdlib>
#include <optional>
#include <string>

#ifdef ATTN_HAVE_OPENBLAS
#include <cblas.h>
#endif

namespace attn {

namespace {

#ifdef ATTN_HAVE_OPENBLAS
std::atomic<bool> g_blasOn {true};
#else
std::atomic<bool> g_blasOn {false};
#endif

/// Which operand a product transposes.
enum class Transposed { None, B, A };

void checkShapes(Index aRows, Index aCols, Index bRows, Index bCols, Index cRows, Index cCols,
                 Transposed t, const char *who)
{
    const Index m = t == Transposed::A ? aCols : aRows;
    const Index k = t == Transposed::A ? aRows : aCols;
    const Index bk = t == Transposed::B ? bCols : bRows;
    const Index n = t == Transposed::B ? bRows : bCols;
    if (bk != k || cRows != m || cCols != n)
        throw InvalidArgument(std::string(who) + ": A " + shapeString(aRows, aCols)
                              + (t == Transposed::A ? " (Aᵀ)" : "") + ", B "
                              + shapeString(bRows, bCols) + (t == Transposed::B ? " (Bᵀ)" : "")
                              + " and C " + shapeString(cRows, cCols) + " do not fit");
}

#ifdef ATTN_HAVE_OPENBLAS
void blasGemm(Transposed t, Index m, Index n, Index k, const float *a, Index lda, const float *b,
              Index ldb, float *c, Index ldc, bool add)
{
    cblas_sgemm(CblasRowMajor, t == Transposed::A ? CblasTrans : CblasNoTrans,
                t == Transposed::B ? CblasTrans : CblasNoTrans, blasint(m), blasint(n), blasint(k),
                1.0f, a, blasint(lda), b, blasint(ldb), add ? 1.0f : 0.0f, c, blasint(ldc));
}
void blasGemm(Transposed t, Index m, Index n, Index k, const double *a, Index lda, const double *b,
              Index ldb, double *c, Index ldc, bool add)
{
    cblas_dgemm(CblasRowMajor, t == Transposed::A ? CblasTrans : CblasNoTrans,
                t == Transposed::B ? CblasTrans : CblasNoTrans, blasint(m), blasint(n), blasint(k),
                1.0, a, blasint(lda), b, blasint(ldb), add ? 1.0 : 0.0, c, blasint(ldc));
}
#endif

/// C = op(A) op(B), or C += op(A) op(B) with `add`.
template<typename T>
void product(const ConstMatrixRef<T> &a, const ConstMatrixRef<T> &b, MatrixRef<T> c,
             Transposed transposed, const char *who, bool add = false)
{
    checkShapes(a.rows(), a.cols(), b.rows(), b.cols(), c.rows(), c.cols(), transposed, who);
    const Index k = transposed == Transposed::A ? a.rows() : a.cols();
    if (c.size() == 0)
        return;
    if (k == 0) { // no terms: BLAS would leave C as it was
        if (!add)
            c.setZero();
        return;
    }
#ifdef ATTN_HAVE_OPENBLAS
    // Leading dimensions must be at least the row length (an Eigen::Ref of one row may report
    // a smaller outer stride).
    const auto ld = [](Index stride, Index cols) { return stride < cols ? cols : stride; };
    if (g_blasOn.load(std::memory_order_relaxed)) {
        // Small products on this thread alone (as the kernels, kSingleThreadFlops): no team to
        // wake, and the same bits whatever the caller's thread count (OpenBLAS splits C
        // between its threads, and the rows at a split take its edge kernels).
        std::optional<ScopedKernelThreads> oneThread;
        if (2.0 * double(c.rows()) * double(c.cols()) * double(k) < kSingleThreadFlops)
            oneThread.emplace(1);
        blasGemm(transposed, c.rows(), c.cols(), k, a.data(), ld(a.outerStride(), a.cols()),
                 b.data(), ld(b.outerStride(), b.cols()), c.data(), ld(c.outerStride(), c.cols()),
                 add);
        return;
    }
#endif
    if (add && transposed == Transposed::B)
        c.noalias() += a * b.transpose(); // GEMM
    else if (add && transposed == Transposed::A)
        c.noalias() += a.transpose() * b; // GEMM
    else if (add)
        c.noalias() += a * b; // GEMM
    else if (transposed == Transposed::B)
        c.noalias() = a * b.transpose(); // GEMM
    else if (transposed == Transposed::A)
        c.noalias() = a.transpose() * b; // GEMM
    else
        c.noalias() = a * b; // GEMM
}

} // namespace

template<typename T>
void gemmTransposed(const ConstMatrixRef<T> &a, const ConstMatrixRef<T> &b, MatrixRef<T> c)
{
    product<T>(a, b, c, Transposed::B, "gemmTransposed");
}

template<typename T>
void gemmTransposedAdd(const ConstMatrixRef<T> &a, const ConstMatrixRef<T> &b, MatrixRef<T> c)
{
    product<T>(a, b, c, Transposed::B, "gemmTransposedAdd", true);
}

template<typename T>
void gemm(const ConstMatrixRef<T> &a, const ConstMatrixRef<T> &b, MatrixRef<T> c)
{
    product<T>(a, b, c, Transposed::None, "gemm");
}

template<typename T>
void gemmTransposedA(const ConstMatrixRef<T> &a, const ConstMatrixRef<T> &b, MatrixRef<T> c)
{
    product<T>(a, b, c, Transposed::A, "gemmTransposedA");
}

std::string_view blasName()
{
    return g_blasOn.load() ? "openblas" : "eigen";
}

std::string blasCoreName()
{
#ifdef ATTN_HAVE_OPENBLAS
    const char *name = openblas_get_corename();
    return name ? std::string(name) : std::string();
#else
    return {};
#endif
}

std::string betterBlasCore()
{
#if defined(ATTN_HAVE_OPENBLAS) && defined(__x86_64__)
    if (std::getenv("OPENBLAS_CORETYPE") || blasCoreName() != "Prescott")
        return {};
    // GCC's checks include the OS's support (XCR0) for the AVX and AVX-512 state.
    if (__builtin_cpu_supports("avx512f") && __builtin_cpu_supports("avx512cd")
        && __builtin_cpu_supports("avx512bw") && __builtin_cpu_supports("avx512dq")
        && __builtin_cpu_supports("avx512vl"))
        return "SkylakeX";
    if (__builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma"))
        return "Haswell";
#endif
    return {};
}

bool setBlasEnabled(bool on)
{
#ifdef ATTN_HAVE_OPENBLAS
    g_blasOn.store(on);
#else
    (void)on;
#endif
    return g_blasOn.load();
}

template void gemmTransposed<float>(const Eigen::Ref<const MatrixF> &,
                                    const Eigen::Ref<const MatrixF> &, Eigen::Ref<MatrixF>);
template void gemmTransposed<double>(const Eigen::Ref<const MatrixD> &,
                                     const Eigen::Ref<const MatrixD> &, Eigen::Ref<MatrixD>);
template void gemmTransposedAdd<float>(const Eigen::Ref<const MatrixF> &,
                                       const Eigen::Ref<const MatrixF> &, Eigen::Ref<MatrixF>);
template void gemmTransposedAdd<double>(const Eigen::Ref<const MatrixD> &,
                                        const Eigen::Ref<const MatrixD> &, Eigen::Ref<MatrixD>);
template void gemm<float>(const Eigen::Ref<const MatrixF> &, const Eigen::Ref<const MatrixF> &,
                          Eigen::Ref<MatrixF>);
template void gemm<double>(const Eigen::Ref<const MatrixD> &, const Eigen::Ref<const MatrixD> &,
                           Eigen::Ref<MatrixD>);
template void gemmTransposedA<float>(const Eigen::Ref<const MatrixF> &,
                                     const Eigen::Ref<const MatrixF> &, Eigen::Ref<MatrixF>);
template void gemmTransposedA<double>(const Eigen::Ref<const MatrixD> &,
                                      const Eigen::Ref<const MatrixD> &, Eigen::Ref<MatrixD>);

} // namespace attn
