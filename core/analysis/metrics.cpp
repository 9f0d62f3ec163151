#include "core/analysis/metrics.h"

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <limits>
#include <string>
#include <type_traits>

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

namespace {

/// Σ p[0, n) in the order Eigen's VectorD::sum() adds a VectorD's entries: its reduction starts
/// at the first packet-aligned entry, which is entry 0 for a VectorD's own (aligned) storage,
/// so an aligned pointer is summed in place and an unaligned one is copied first.
double vectorSum(const double *p, Index n, VectorD &aligned)
{
    constexpr std::uintptr_t packetAlign = alignof(Eigen::internal::packet_traits<double>::type);
    if (reinterpret_cast<std::uintptr_t>(p) % packetAlign == 0)
        return Eigen::Map<const VectorD>(p, n).sum();
    aligned = Eigen::Map<const VectorD>(p, n);
    return aligned.sum();
}

/// A row holding NaN or ±Inf (its sum is then not finite) is no distribution: its metrics are
/// not available (NaN) rather than what the comparisons and sums happen to make of the
/// non-finite entries (max and entropy skip a NaN, Σp² turns NaN and effective terms 0). The
/// row sum stays as summed, so the sum error is NaN for a NaN row and Inf for an infinite one.
void markNonFiniteRow(RowMetricValues &v)
{
    if (std::isfinite(v.rowSum))
        return;
    const double nan = std::numeric_limits<double>::quiet_NaN();
    v.maxWeight = v.entropy = v.effectiveTerms = v.jacobianNorm = nan;
}

} // namespace

RowMetricValues rowMetricValues(const double *p, Index n, RowMetricsScratch &scratch)
{
    RowMetricValues v;
    if (n <= 0)
        return v;
    // Backward pass: suffix sums of p and p² (index i holds Σ_{j>i}), as jacobianNorm.
    std::vector<double> &suffix1 = scratch.suffix1, &suffix2 = scratch.suffix2;
    suffix1.resize(std::size_t(n) + 1);
    suffix2.resize(std::size_t(n) + 1);
    suffix1[std::size_t(n)] = 0.0;
    suffix2[std::size_t(n)] = 0.0;
    for (Index j = n - 1; j >= 0; --j) {
        suffix1[std::size_t(j)] = suffix1[std::size_t(j) + 1] + p[j];
        suffix2[std::size_t(j)] = suffix2[std::size_t(j) + 1] + p[j] * p[j];
    }
    // Forward pass: maxWeight's running max, entropyNats' sum, jacobianNorm's total; the
    // running Σp² (prefix2) is effectiveTerms' sum (same terms, same order).
    double m = 0, h = 0;
    double prefix1 = 0, prefix2 = 0, total = 0;
    for (Index i = 0; i < n; ++i) {
        m = std::max(m, p[i]);
        if (p[i] > 0)
            h -= p[i] * std::log(p[i]);
        const double others1 = prefix1 + suffix1[std::size_t(i) + 1]; // = 1 − p_i exactly
        const double others2 = prefix2 + suffix2[std::size_t(i) + 1];
        total += p[i] * p[i] * (others1 * others1 + others2);
        prefix1 += p[i];
        prefix2 += p[i] * p[i];
    }
    v.maxWeight = m;
    v.entropy = h;
    v.effectiveTerms = prefix2 > 0 ? 1.0 / prefix2 : 0.0;
    v.jacobianNorm = std::sqrt(total);
    v.rowSum = vectorSum(p, n, scratch.aligned);
    markNonFiniteRow(v);
    return v;
}

namespace {

// Two doubles in the lanes of one vector (GCC/Clang vector extension; one SSE2 register): +, *
// and the lane-wise comparison are the scalar IEEE operations per lane, so each lane computes
// exactly what the scalar code computes for its row.
typedef double Lanes2 __attribute__((vector_size(2 * sizeof(double))));

/// Two rows' entries j, one per lane (built in registers: no store/reload).
inline Lanes2 lanes(const double *a, const double *b, Index j)
{
    Lanes2 v = {a[j], 0.0};
    v[1] = b[j];
    return v;
}

/// rowMetricValues of four rows of n ≥ 1 entries: rows 0, 1 in the lanes of one vector and
/// rows 2, 3 in another, so four independent chains of additions are in flight.
void rowMetricValues4(const double *const *rows, Index n, RowMetricValues *out,
                      RowMetricsScratch &scratch)
{
    const double *p0 = rows[0], *p1 = rows[1], *p2 = rows[2], *p3 = rows[3];
    // Backward pass: suffix sums of p and p² per lane (as jacobianNorm), interleaved:
    // entry 4·j + 0/1 holds Σ_{k≥j} p_k / Σ_{k≥j} p_k² of rows 0, 1, entry 4·j + 2/3 of rows 2, 3.
    std::vector<double> &buffer = scratch.lanes;
    buffer.resize(std::size_t(n + 1) * 8 + 2); // + 2: room to align to 16 bytes
    auto *suffix = reinterpret_cast<Lanes2 *>((reinterpret_cast<std::uintptr_t>(buffer.data()) + 15)
                                              & ~std::uintptr_t(15));
    const Lanes2 zero = {0.0, 0.0};
    for (Index k = 0; k < 4; ++k)
        suffix[4 * n + k] = zero;
    for (Index j = n - 1; j >= 0; --j) {
        const Lanes2 a = lanes(p0, p1, j), b = lanes(p2, p3, j);
        const Lanes2 *next = suffix + 4 * (j + 1);
        Lanes2 *here = suffix + 4 * j;
        here[0] = next[0] + a;
        here[1] = next[1] + a * a;
        here[2] = next[2] + b;
        here[3] = next[3] + b * b;
    }
    // Forward pass: running max, the Jacobian's total and the prefix sums (prefix2 ends as
    // effectiveTerms' Σp², same terms in the same order).
    Lanes2 mA = zero, prefix1A = zero, prefix2A = zero, totalA = zero;
    Lanes2 mB = zero, prefix1B = zero, prefix2B = zero, totalB = zero;
    for (Index i = 0; i < n; ++i) {
        const Lanes2 a = lanes(p0, p1, i), b = lanes(p2, p3, i);
        const Lanes2 *next = suffix + 4 * (i + 1);
        mA = mA < a ? a : mA; // std::max(m, p_i)
        mB = mB < b ? b : mB;
        const Lanes2 others1A = prefix1A + next[0]; // = 1 − p_i exactly
        const Lanes2 others2A = prefix2A + next[1];
        const Lanes2 others1B = prefix1B + next[2];
        const Lanes2 others2B = prefix2B + next[3];
        totalA += a * a * (others1A * others1A + others2A);
        totalB += b * b * (others1B * others1B + others2B);
        prefix1A += a;
        prefix2A += a * a;
        prefix1B += b;
        prefix2B += b * b;
    }
    const double m[4] = {mA[0], mA[1], mB[0], mB[1]};
    const double sumSquares[4] = {prefix2A[0], prefix2A[1], prefix2B[0], prefix2B[1]};
    const double total[4] = {totalA[0], totalA[1], totalB[0], totalB[1]};
    for (int r = 0; r < 4; ++r) {
        RowMetricValues &v = out[r];
        const double *p = rows[r];
        double h = 0;
        for (Index i = 0; i < n; ++i)
            if (p[i] > 0)
                h -= p[i] * std::log(p[i]);
        v.maxWeight = m[r];
        v.entropy = h;
        v.effectiveTerms = sumSquares[r] > 0 ? 1.0 / sumSquares[r] : 0.0;
        v.jacobianNorm = std::sqrt(total[r]);
        v.rowSum = vectorSum(p, n, scratch.aligned);
        markNonFiniteRow(v);
    }
}

} // namespace

void rowMetricValues(const double *const *rows, int count, Index n, RowMetricValues *out,
                     RowMetricsScratch &scratch)
{
    int r = 0;
    if (n > 0)
        for (; r + 4 <= count; r += 4)
            rowMetricValues4(rows + r, n, out + r, scratch);
    for (; r < count; ++r)
        out[r] = rowMetricValues(rows[r], n, scratch);
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
    RowMetricsScratch scratch;
    VectorD p(std::is_same_v<T, double> ? 0 : cols); // float rows, as double
    for (Index i = 0; i < rows; ++i) {
        if (!fullyMasked.empty() && fullyMasked[std::size_t(i)]) {
            m.fullyMasked[std::size_t(i)] = 1;
            continue;
        }
        const double *row = nullptr;
        if constexpr (std::is_same_v<T, double>) {
            row = weights.row(i).data();
        } else {
            p = weights.row(i).transpose().template cast<double>();
            row = p.data();
        }
        const RowMetricValues v = rowMetricValues(row, cols, scratch);
        m.maxWeight(i) = v.maxWeight;
        m.entropy(i) = v.entropy;
        m.effectiveTerms(i) = v.effectiveTerms;
        m.jacobianNorm(i) = v.jacobianNorm;
        m.rowSumError(i) = std::abs(v.rowSum - 1.0);
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
        if (std::isfinite(m.rowSumError(i)))
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

std::vector<int> headOrder(const std::vector<RowMetrics> &heads, HeadOrderKey key, bool descending)
{
    std::vector<int> order(heads.size());
    for (std::size_t h = 0; h < heads.size(); ++h)
        order[h] = int(h);
    if (key == HeadOrderKey::Index) {
        if (descending)
            std::reverse(order.begin(), order.end());
        return order;
    }
    std::vector<double> mean(heads.size());
    for (std::size_t h = 0; h < heads.size(); ++h) {
        const MetricsSummary s = summarize(heads[h]);
        mean[h] = key == HeadOrderKey::Entropy ? s.meanEntropy : s.meanMaxWeight;
    }
    std::stable_sort(order.begin(), order.end(), [&](int a, int b) {
        const double x = mean[std::size_t(a)], y = mean[std::size_t(b)];
        if (std::isnan(x) || std::isnan(y))
            return !std::isnan(x) && std::isnan(y);
        return descending ? x > y : x < y;
    });
    return order;
}

WeightStatistics weightStatistics(const MatrixD &weights, const MatrixB &maskState,
                                  const std::vector<std::uint8_t> &fullyMasked,
                                  double expectedRowSum)
{
    const Index nQ = weights.rows(), nK = weights.cols();
    const auto shape
        = [](Index r, Index c) { return std::to_string(r) + " x " + std::to_string(c); };
    if (maskState.size() != 0 && (maskState.rows() != nQ || maskState.cols() != nK))
        throw InvalidArgument("weightStatistics: mask states "
                              + shape(maskState.rows(), maskState.cols())
                              + " do not match the weights " + shape(nQ, nK));
    if (!fullyMasked.empty() && Index(fullyMasked.size()) != nQ)
        throw InvalidArgument("weightStatistics: " + std::to_string(fullyMasked.size())
                              + " fully-masked flags for " + std::to_string(nQ) + " rows");
    const double nan = std::numeric_limits<double>::quiet_NaN();
    WeightStatistics s;
    double lo = std::numeric_limits<double>::infinity(), hi = -lo, sum = 0.0;
    bool nanRow = false;
    for (Index i = 0; i < nQ; ++i) {
        double rowSum = 0.0;
        for (Index j = 0; j < nK; ++j) {
            const double w = weights(i, j);
            rowSum += w;
            if (std::isnan(w) || (maskState.size() != 0 && maskState(i, j) != 0))
                continue;
            lo = std::min(lo, w);
            hi = std::max(hi, w);
            sum += w;
            ++s.cells;
        }
        if (!fullyMasked.empty() && fullyMasked[std::size_t(i)])
            continue;
        if (std::isnan(rowSum))
            nanRow = true;
        else
            s.worstRowSumError = std::max(s.worstRowSumError, std::abs(rowSum - expectedRowSum));
    }
    s.min = s.cells > 0 ? lo : nan;
    s.max = s.cells > 0 ? hi : nan;
    s.mean = s.cells > 0 ? sum / double(s.cells) : nan;
    if (nanRow)
        s.worstRowSumError = nan;
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
