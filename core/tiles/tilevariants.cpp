// The 2025 variants of the tile engine (tileengine.h, TileVariants): their checks, ALiBi's bias
// on a row of scaled scores, a learned sink's share of a row from the row's statistics, and the
// combination of A₁ and A₂ with λ and the gate (with each row's peak |w|) — the parts of the row
// pass that the variants add; tileengine.cpp calls them.

#include "core/tiles/tileengine.h"

#include "core/kernels/detail.h"
#include "core/kernels/rowops.h"

#include <cmath>
#include <limits>
#include <string>

namespace attn {

template<typename T>
void TileEngine<T>::takeVariants(TileVariants<T> v, const AttentionOptions &options,
                                 const char *who)
{
    const Index nQ = queries(), nK = keys(), width = m_query.cols();
    const std::string name(who);
    if (!v.sinkLogits.empty()) {
        if (Index(v.sinkLogits.size()) != m_heads)
            throw InvalidArgument(name + ": " + std::to_string(v.sinkLogits.size())
                                  + " learned sink logits for h = " + std::to_string(m_heads)
                                  + " heads");
        for (std::size_t u = 0; u < v.sinkLogits.size(); ++u)
            if (std::isnan(v.sinkLogits[u])
                || v.sinkLogits[u] == std::numeric_limits<double>::infinity())
                throw InvalidArgument(name + ": the learned sink logit of head " + std::to_string(u)
                                      + " is " + detail::valueName(v.sinkLogits[u])
                                      + " (finite or -inf needed)");
        if (options.maskFill != -std::numeric_limits<double>::infinity())
            throw InvalidArgument(name + ": a learned sink needs the mask fill -inf, got "
                                  + detail::valueName(options.maskFill)
                                  + " (masked keys would take weight beside the sink)");
        for (double b : v.sinkLogits)
            m_sinkLogits.push_back(T(b));
    }
    if (v.differential() || !v.lambda.empty()) {
        if (v.query2.rows() != nQ || v.query2.cols() != width || v.key2.rows() != nK
            || v.key2.cols() != width)
            throw InvalidArgument(name + ": differential attention's query2 "
                                  + shapeString(v.query2.rows(), v.query2.cols()) + " and key2 "
                                  + shapeString(v.key2.rows(), v.key2.cols())
                                  + " must be shaped as query " + shapeString(nQ, width)
                                  + " and key " + shapeString(nK, width));
        if (Index(v.lambda.size()) != m_heads)
            throw InvalidArgument(name
                                  + ": differential attention needs h = " + std::to_string(m_heads)
                                  + " values of lambda, got " + std::to_string(v.lambda.size()));
        for (std::size_t u = 0; u < v.lambda.size(); ++u)
            if (!std::isfinite(v.lambda[u]))
                throw InvalidArgument(name + ": lambda of head " + std::to_string(u) + " is "
                                      + detail::valueName(v.lambda[u]));
        if (!m_sinkLogits.empty())
            throw InvalidArgument(name
                                  + ": a learned sink and differential attention do not "
                                    "combine (no published model uses both)");
        if (options.checkFinite) {
            detail::checkFiniteInput<T>(v.query2, "query2", who);
            detail::checkFiniteInput<T>(v.key2, "key2", who);
        }
        // The second softmax's heads follow the first's: columns h·d_k … 2·h·d_k − 1.
        m_query.conservativeResize(nQ, 2 * width);
        m_query.rightCols(width) = v.query2;
        m_key.conservativeResize(nK, 2 * width);
        m_key.rightCols(width) = v.key2;
        for (double l : v.lambda)
            m_lambda.push_back(T(l));
        m_differential = true;
    }
    if (v.gate.size() > 0) {
        if (v.gate.rows() != nQ || v.gate.cols() != m_heads)
            throw InvalidArgument(name + ": the output gate "
                                  + shapeString(v.gate.rows(), v.gate.cols())
                                  + " must be n_q × h = " + shapeString(nQ, m_heads));
        for (Index i = 0; i < nQ; ++i)
            for (Index u = 0; u < m_heads; ++u)
                if (!(v.gate(i, u) >= 0.0 && v.gate(i, u) <= 1.0))
                    throw InvalidArgument(name + ": the output gate of query " + std::to_string(i)
                                          + ", head " + std::to_string(u) + " is "
                                          + detail::valueName(v.gate(i, u)) + ", outside [0, 1]");
        m_gate = std::move(v.gate);
    }
    if (!v.alibiSlopes.empty()) {
        if (Index(v.alibiSlopes.size()) != m_heads)
            throw InvalidArgument(name + ": " + std::to_string(v.alibiSlopes.size())
                                  + " ALiBi slopes for h = " + std::to_string(m_heads) + " heads");
        for (double m : v.alibiSlopes)
            if (!std::isfinite(m))
                throw InvalidArgument(name + ": an ALiBi slope is " + detail::valueName(m));
        m_alibiSlopes = std::move(v.alibiSlopes);
        m_alibiCausal = v.alibiCausal;
    }
    m_variants = !m_sinkLogits.empty() || m_differential || m_gate.size() > 0;
}

template<typename T>
void TileEngine<T>::addAlibi(Index stream, Index i, Index j0, Index cols, T *row) const
{
    const double m = m_alibiSlopes[std::size_t(stream % m_heads)];
    for (Index c = 0; c < cols; ++c) {
        const double offset = double(i) - double(j0 + c);
        row[c] = T(row[c] + T(-m * (m_alibiCausal ? offset : std::abs(offset))));
    }
}

template<typename T> T TileEngine<T>::sinkMass(Index stream, Index i) const
{
    if (m_sinkLogits.empty() || stream >= m_heads)
        return T(0);
    const T b = m_sinkLogits[std::size_t(stream)];
    const RowStats &st = m_stats[std::size_t(stream)];
    if (b == -std::numeric_limits<T>::infinity())
        return T(0);
    if (st.shift[std::size_t(i)] == -std::numeric_limits<T>::infinity())
        return T(1); // fully masked: every bit of mass on the sink
    return std::exp(b - st.shift[std::size_t(i)]) * st.inverseSum[std::size_t(i)];
}

template<typename T>
void TileEngine<T>::combine(Index head, Index i0, Index rows, Index cols, bool full, T *s,
                            const T *s2, Index ld)
{
    const T lambda = m_differential ? m_lambda[std::size_t(head)] : T(0);
    RowStats &st = m_stats[std::size_t(head)];
    for (Index r = 0; r < rows; ++r) {
        const Index i = i0 + r;
        Eigen::Map<Eigen::Array<T, Eigen::Dynamic, 1>> w(s + r * ld, cols);
        if (m_differential)
            w -= lambda * Eigen::Map<const Eigen::Array<T, Eigen::Dynamic, 1>>(s2 + r * ld, cols);
        if (m_gate.size() > 0)
            w *= T(m_gate(i, head));
        if (full) {
            st.peak[std::size_t(i)] = cols > 0 ? w.abs().maxCoeff() : T(0);
            st.peakKnown[std::size_t(i)] = 1;
        }
    }
}

#define ATTN_TILE_VARIANTS(T)                                                                      \
    template void TileEngine<T>::takeVariants(TileVariants<T>, const AttentionOptions &,           \
                                              const char *);                                       \
    template void TileEngine<T>::addAlibi(Index, Index, Index, Index, T *) const;                  \
    template T TileEngine<T>::sinkMass(Index, Index) const;                                        \
    template void TileEngine<T>::combine(Index, Index, Index, Index, bool, T *, const T *, Index);
ATTN_TILE_VARIANTS(float)
ATTN_TILE_VARIANTS(double)
#undef ATTN_TILE_VARIANTS

} // namespace attn
