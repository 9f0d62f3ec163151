#pragma once
// The one tolerance helper of the test suite: |a − b| ≤ atol + rtol·|b| element-wise, printing
// the worst element on failure (after LabPlot's FuzzyCompare and llm.c's check_tensor); and
// expectError, a check of a thrown exception's message.

#include <QString>
#include <QStringList>
#include <QTest>

#include <Eigen/Core>

#include <cmath>
#include <functional>
#include <limits>

// ATTN_SANITIZER_BUILD is 1 under AddressSanitizer or ThreadSanitizer: GCC defines
// __SANITIZE_ADDRESS__ / __SANITIZE_THREAD__, clang only answers __has_feature.
#if defined(__SANITIZE_ADDRESS__) || defined(__SANITIZE_THREAD__)
#define ATTN_SANITIZER_BUILD 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer) || __has_feature(thread_sanitizer)
#define ATTN_SANITIZER_BUILD 1
#endif
#endif
#ifndef ATTN_SANITIZER_BUILD
#define ATTN_SANITIZER_BUILD 0
#endif

namespace attn::test {

/// How long a test waits, in milliseconds, for work on a background thread (a result, a run,
/// a cancel) before it fails. The waits return as soon as their condition holds, so the bound
/// costs nothing when the work is quick; it is generous because the sanitized build on a shared
/// two-core machine, running tests side by side, can be twenty times slower than the optimised
/// one.
inline constexpr int kWorkTimeoutMs = 120000;

struct CompareReport
{
    bool ok = true;
    bool shapeMismatch = false;
    double worstAbs = 0; ///< largest |a − b|
    double worstExcess = 0; ///< largest |a − b| − (atol + rtol·|b|)
    Eigen::Index row = -1, col = -1;
    double a = 0, b = 0;
    QString message() const
    {
        if (shapeMismatch)
            return QStringLiteral("shape mismatch");
        return QStringLiteral("worst |a-b| = %1 at (%2, %3): a = %4, b = %5")
            .arg(worstAbs, 0, 'g', 17)
            .arg(row)
            .arg(col)
            .arg(a, 0, 'g', 17)
            .arg(b, 0, 'g', 17);
    }
};

/// Compares element-wise; NaN equals NaN only at the same position (both NaN).
template<typename DA, typename DB>
CompareReport compareClose(const Eigen::MatrixBase<DA> &actual,
                           const Eigen::MatrixBase<DB> &expected, double atol, double rtol = 0.0)
{
    CompareReport r;
    if (actual.rows() != expected.rows() || actual.cols() != expected.cols()) {
        r.ok = false;
        r.shapeMismatch = true;
        return r;
    }
    r.worstExcess = -std::numeric_limits<double>::infinity();
    for (Eigen::Index i = 0; i < actual.rows(); ++i) {
        for (Eigen::Index j = 0; j < actual.cols(); ++j) {
            const double a = double(actual(i, j));
            const double b = double(expected(i, j));
            double diff;
            if (std::isnan(a) || std::isnan(b))
                diff = (std::isnan(a) && std::isnan(b)) ? 0.0
                                                        : std::numeric_limits<double>::infinity();
            else if (a == b)
                diff = 0.0; // also equal infinities
            else
                diff = std::abs(a - b);
            const double excess = diff - (atol + rtol * std::abs(b));
            if (diff > r.worstAbs || r.row < 0) {
                if (diff >= r.worstAbs) {
                    r.worstAbs = diff;
                }
            }
            if (excess > r.worstExcess) {
                r.worstExcess = excess;
                r.row = i;
                r.col = j;
                r.a = a;
                r.b = b;
            }
            if (excess > 0)
                r.ok = false;
        }
    }
    return r;
}

/// QVERIFY that `f` throws `Exception` whose message contains every one of `parts`.
template<typename Exception>
void expectError(const std::function<void()> &f, const QStringList &parts)
{
    try {
        f();
    } catch (const Exception &e) {
        const QString message = QString::fromUtf8(e.what());
        for (const QString &p : parts)
            QVERIFY2(message.contains(p), qPrintable(message + " lacks " + p));
        return;
    }
    QFAIL("no exception");
}

} // namespace attn::test

/// QVERIFY-style macro: fails with the worst element printed.
#define ATTN_COMPARE_CLOSE(actual, expected, atol, rtol)                                           \
    do {                                                                                           \
        const auto attnReport_ = attn::test::compareClose((actual), (expected), (atol), (rtol));   \
        if (!attnReport_.ok)                                                                       \
            QFAIL(qPrintable(QStringLiteral(#actual " vs " #expected ": ")                         \
                             + attnReport_.message()));                                            \
    } while (false)
