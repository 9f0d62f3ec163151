#include "metrics.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <string>

namespace attn {

double maxWeight(const double *p, Index n)
{
    double m = 0;
    for (Index i = 0; i < n; ++i)
        m = std::max(m, p[i]);
    return m;
}

double entropyNats(const double *p, Index n)
{
    double h = 0;
    for (Index i = 0; i < n; ++i)
        if (p[i] > 0)
            h -= p[i] * std::log(p[i]);
    return h;
}

double effectiveTerms(const double *p, Index n)
{
    double s = 0;
    for (Index i = 0; i < n; ++i)
        s += p[i] * p[i];
    return s > 0 ? 1.0 / s : 0.0;
}

double jacobianNorm(const double *p, Index n)
{
    if (n <= 0)
        return 0;
    // Suffix sums of p and p² (index i holds Σ_{j>i}); prefix sums run along the main loop.
    std::vector<double> suffix1(std::size_t(n) + 1, 0.0), suffix2(std::size_t(n) + 1, 0.0);
    for (Index j = n - 1; j >= 0; --j) {
        suffix1[std::size_t(j)] = suffix1[std::size_t(j) + 1] + p[j];
        suffix2[std::size_t(j)] = suffix2[std::size_t(j) + 1] + p[j] * p[j];
    }
    // ‖J‖² = Σ_i p_i² [ (Σ_{j≠i} p_j)² + Σ_{j≠i} p_j² ]: every term non-negative.
    double prefix1 = 0, prefix2 = 0, total = 0;
    for (Index i = 0; i < n; ++i) {
        const double others1 = prefix1 + suffix1[std::size_t(i) + 1]; // = 1 − p_i exactly
        const double others2 = prefix2 + suffix2[std::size_t(i) + 1];
        total += p[i] * p[i] * (others1 * others1 + others2);
        prefix1 += p[i];
        prefix2 += p[i] * p[i];
    }
    return std::sqrt(total);
}

double jacobianNormExplicit(const double *p, Index n)
{
    if (n <= 0)
        return 0;
    // J = diag(p) − p pᵀ entry by entry; the diagonal p_i − p_i² is written p_i·Σ_{j≠i} p_j
    // (a direct O(n) sum), which is 1 − p_i for a probability vector but does not round to 0
    // when p_i rounds to 1 (near-one-hot rows).
    double total = 0;
    for (Index i = 0; i < n; ++i) {
        double others = 0;
        for (Index j = 0; j < n; ++j)
            if (j != i)
                others += p[j];
        double rowTotal = 0; // summed per row first: n² terms in one sum lose ~1e-12
        for (Index j = 0; j < n; ++j) {
            const double jij = (i == j) ? p[i] * others : -p[i] * p[j];
            rowTotal += jij * jij;
        }
        total += rowTotal;
    }
    return std::sqrt(total);
}

double jacobianNormTextbook(const double *p, Index n)
{
    double s2 = 0, s3 = 0;
    for (Index i = 0; i < n; ++i) {
        s2 += p[i] * p[i];
        s3 += p[i] * p[i] * p[i];
    }
    return std::sqrt(s2 - 2 * s3 + s2 * s2); // NaN when the sum cancels below 0
}

template<typename T>
RowMetrics rowMetrics(const Matrix<T> &weights, const std::vector<std::uint8_t> &fullyMasked)
{
    const Index rows = weights.rows();
    const Index cols = weights.cols();
    if (!fullyMasked.empty() && Index(fullyMasked.size()) != rows)
        throw InvalidArgument("rowMetrics: fullyMasked has " + std::to_string(fullyMasked.size())
                              + " flags but the weights have " + std::to_string(rows) + " rows");
    RowMetrics m;
    m.maxWeight.setZero(rows);
    m.entropy.setZero(rows);
    m.effectiveTerms.setZero(rows);
    m.jacobianNorm.setZero(rows);
    m.rowSumError.setZero(rows);
    m.fullyMasked.assign(std::size_t(rows), 0);
    VectorD p(cols);
    for (Index i = 0; i < rows; ++i) {
        if (!fullyMasked.empty() && fullyMasked[std::size_t(i)]) {
            m.fullyMasked[std::size_t(i)] = 1;
            continue;
        }
        p = weights.row(i).transpose().template cast<double>();
        m.maxWeight(i) = maxWeight(p.data(), cols);
        m.entropy(i) = entropyNats(p.data(), cols);
        m.effectiveTerms(i) = effectiveTerms(p.data(), cols);
        m.jacobianNorm(i) = jacobianNorm(p.data(), cols);
        m.rowSumError(i) = std::abs(p.sum() - 1.0);
    }
    return m;
}

MetricsSummary summarize(const RowMetrics &m)
{
    MetricsSummary s;
    Index counted = 0;
    for (Index i = 0; i < m.maxWeight.size(); ++i) {
        if (!m.fullyMasked.empty() && m.fullyMasked[std::size_t(i)]) {
            ++s.fullyMaskedRows;
            continue;
        }
        s.meanMaxWeight += m.maxWeight(i);
        s.meanEntropy += m.entropy(i);
        s.meanEffectiveTerms += m.effectiveTerms(i);
        s.meanJacobianNorm += m.jacobianNorm(i);
        s.worstRowSumError = std::max(s.worstRowSumError, m.rowSumError(i));
        ++counted;
    }
    if (counted > 0) {
        s.meanMaxWeight /= double(counted);
        s.meanEntropy /= double(counted);
        s.meanEffectiveTerms /= double(counted);
        s.meanJacobianNorm /= double(counted);
    }
    return s;
}

template<typename T> double standardDeviation(const Matrix<T> &values)
{
    const Index n = values.size();
    if (n == 0)
        throw InvalidArgument("standardDeviation of an empty matrix");
    // Two passes in double: mean, then the mean squared deviation (ddof = 0, as numpy.std).
    double sum = 0;
    for (Index i = 0; i < n; ++i)
        sum += double(values.data()[i]);
    const double mean = sum / double(n);
    double sq = 0;
    for (Index i = 0; i < n; ++i) {
        const double dlt = double(values.data()[i]) - mean;
        sq += dlt * dlt;
    }
    return std::sqrt(sq / double(n));
}

template<typename T> NonFiniteReport findNonFinite(const Matrix<T> &values)
{
    NonFiniteReport r;
    for (Index i = 0; i < values.rows(); ++i) {
        for (Index j = 0; j < values.cols(); ++j) {
            const T v = values(i, j);
            if (std::isfinite(v))
                continue;
            if (std::isnan(v))
                ++r.nanCount;
            else
                ++r.infCount;
            if (!r.found) {
                r.found = true;
                r.row = i;
                r.col = j;
                r.value = double(v);
            }
        }
    }
    return r;
}

template RowMetrics rowMetrics<float>(const MatrixF &, const std::vector<std::uint8_t> &);
template RowMetrics rowMetrics<double>(const MatrixD &, const std::vector<std::uint8_t> &);
template double standardDeviation<float>(const MatrixF &);
template double standardDeviation<double>(const MatrixD &);
template NonFiniteReport findNonFinite<float>(const MatrixF &);
template NonFiniteReport findNonFinite<double>(const MatrixD &);

} // namespace attn
