#include "core/blas.h"

#include "core/threads.h"

#include <atomic>
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

void checkShapes(Index aRows, Index aCols, Index bRows, Index bCols, Index cRows, Index cCols,
                 bool transposed, const char *who)
{
    const Index k = aCols;
    const Index bk = transposed ? bCols : bRows;
    const Index n = transposed ? bRows : bCols;
    if (bk != k || cRows != aRows || cCols != n)
        throw InvalidArgument(std::string(who) + ": A " + shapeString(aRows, aCols) + ", B "
                              + shapeString(bRows, bCols) + (transposed ? " (Bᵀ)" : "") + " and C "
                              + shapeString(cRows, cCols) + " do not fit");
}

#ifdef ATTN_HAVE_OPENBLAS
void blasGemm(bool transB, Index m, Index n, Index k, const float *a, Index lda, const float *b,
              Index ldb, float *c, Index ldc)
{
    cblas_sgemm(CblasRowMajor, CblasNoTrans, transB ? CblasTrans : CblasNoTrans, blasint(m),
                blasint(n), blasint(k), 1.0f, a, blasint(lda), b, blasint(ldb), 0.0f, c,
                blasint(ldc));
}
void blasGemm(bool transB, Index m, Index n, Index k, const double *a, Index lda, const double *b,
              Index ldb, double *c, Index ldc)
{
    cblas_dgemm(CblasRowMajor, CblasNoTrans, transB ? CblasTrans : CblasNoTrans, blasint(m),
                blasint(n), blasint(k), 1.0, a, blasint(lda), b, blasint(ldb), 0.0, c,
                blasint(ldc));
}
#endif

template<typename T>
void product(const ConstMatrixRef<T> &a, const ConstMatrixRef<T> &b, MatrixRef<T> c,
             bool transposed, const char *who)
{
    checkShapes(a.rows(), a.cols(), b.rows(), b.cols(), c.rows(), c.cols(), transposed, who);
    if (c.size() == 0)
        return;
    if (a.cols() == 0) { // no terms: BLAS would leave C as it was
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
        if (2.0 * double(c.rows()) * double(c.cols()) * double(a.cols()) < kSingleThreadFlops)
            oneThread.emplace(1);
        blasGemm(transposed, c.rows(), c.cols(), a.cols(), a.data(), ld(a.outerStride(), a.cols()),
                 b.data(), ld(b.outerStride(), b.cols()), c.data(), ld(c.outerStride(), c.cols()));
        return;
    }
#endif
    if (transposed)
        c.noalias() = a * b.transpose(); // GEMM
    else
        c.noalias() = a * b; // GEMM
}

} // namespace

template<typename T>
void gemmTransposed(const ConstMatrixRef<T> &a, const ConstMatrixRef<T> &b, MatrixRef<T> c)
{
    product<T>(a, b, c, true, "gemmTransposed");
}

template<typename T>
void gemm(const ConstMatrixRef<T> &a, const ConstMatrixRef<T> &b, MatrixRef<T> c)
{
    product<T>(a, b, c, false, "gemm");
}

std::string_view blasName()
{
    return g_blasOn.load() ? "openblas" : "eigen";
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
template void gemm<float>(const Eigen::Ref<const MatrixF> &, const Eigen::Ref<const MatrixF> &,
                          Eigen::Ref<MatrixF>);
template void gemm<double>(const Eigen::Ref<const MatrixD> &, const Eigen::Ref<const MatrixD> &,
                           Eigen::Ref<MatrixD>);

} // namespace attn
