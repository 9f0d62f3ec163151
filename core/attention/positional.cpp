#include "core/attention/positional.h"

#include <algorithm>
#include <cmath>
#include <string>
#include <vector>

namespace attn {

double sinusoidFrequency(Index pairIndex, Index d)
{
    if (d < 1)
        throw InvalidArgument("positional encoding width d must be >= 1, got " + std::to_string(d));
    if (pairIndex < 0 || 2 * pairIndex >= d + 1)
        throw InvalidArgument("sinusoid pair index must be in [0, " + std::to_string((d + 1) / 2)
                              + ") for d = " + std::to_string(d) + ", got "
                              + std::to_string(pairIndex));
    return 1.0 / std::pow(10000.0, double(2 * pairIndex) / double(d));
}

MatrixD sinusoidalEncoding(Index n, Index d, Index firstPosition)
{
    if (n < 0)
        throw InvalidArgument("positional encoding length n must be >= 0, got "
                              + std::to_string(n));
    if (d < 1)
        throw InvalidArgument("positional encoding width d must be >= 1, got " + std::to_string(d));
    MatrixD pe(n, d); // n × d: row = position, column = feature
    for (Index c = 0; c < d; ++c) {
        const Index pair = c / 2;
        // pos / 10000^(2i/d), written as the paper does (division, not multiplication by ω).
        const double denominator = std::pow(10000.0, double(2 * pair) / double(d));
        for (Index p = 0; p < n; ++p) {
            const double angle = double(firstPosition + p) / denominator;
            pe(p, c) = (c % 2 == 0) ? std::sin(angle) : std::cos(angle);
        }
    }
    return pe;
}

MatrixD sinusoidalSimilarity(Index n, Index d)
{
    if (n < 0)
        throw InvalidArgument("positional encoding length n must be >= 0, got "
                              + std::to_string(n));
    if (d < 1)
        throw InvalidArgument("positional encoding width d must be >= 1, got " + std::to_string(d));
    const Index pairs = d / 2; // complete sin/cos pairs
    // byOffset[k] = Σ_i cos(k·ω_i) over the complete pairs, k = 0 … n−1 (cos is even).
    std::vector<double> byOffset(std::size_t(std::max<Index>(n, 0)), 0.0);
    for (Index i = 0; i < pairs; ++i) {
        const double denominator = std::pow(10000.0, double(2 * i) / double(d));
        for (Index k = 0; k < n; ++k)
            byOffset[std::size_t(k)] += std::cos(double(k) / denominator);
    }
    MatrixD similarity(n, n);
    for (Index p = 0; p < n; ++p)
        for (Index q = 0; q < n; ++q)
            similarity(p, q) = byOffset[std::size_t(p > q ? p - q : q - p)];
    if (d % 2 == 1) { // the last column, sin of pair (d − 1)/2, has no cos partner
        const double denominator = std::pow(10000.0, double(d - 1) / double(d));
        std::vector<double> s(std::size_t(std::max<Index>(n, 0)));
        for (Index p = 0; p < n; ++p)
            s[std::size_t(p)] = std::sin(double(p) / denominator);
        for (Index p = 0; p < n; ++p)
            for (Index q = 0; q < n; ++q)
                similarity(p, q) += s[std::size_t(p)] * s[std::size_t(q)];
    }
    return similarity;
}

} // namespace attn

namespace attn {

std::string positionalSchemeName(PositionalScheme scheme)
{
    switch (scheme) {
    case PositionalScheme::None:
        return "none";
    case PositionalScheme::Sinusoidal:
        return "sinusoidal";
    case PositionalScheme::Rope:
        return "rope";
    case PositionalScheme::Alibi:
        return "alibi";
    }
    return "none";
}

PositionalScheme parsePositionalScheme(std::string_view name)
{
    for (PositionalScheme s : {PositionalScheme::None, PositionalScheme::Sinusoidal,
                               PositionalScheme::Rope, PositionalScheme::Alibi})
        if (name == positionalSchemeName(s))
            return s;
    throw InvalidArgument("unknown positional scheme '" + std::string(name)
                          + "'; use none, sinusoidal, rope or alibi");
}

std::string ropeConventionName(RopeConvention convention)
{
    return convention == RopeConvention::Interleaved ? "interleaved" : "half";
}

RopeConvention parseRopeConvention(std::string_view name)
{
    if (name == "interleaved")
        return RopeConvention::Interleaved;
    if (name == "half")
        return RopeConvention::Half;
    throw InvalidArgument("unknown RoPE convention '" + std::string(name)
                          + "'; use interleaved (RoFormer, GPT-J) or half (GPT-NeoX, Llama)");
}

namespace {

void checkRopeWidth(Index dK)
{
    if (dK < 2 || dK % 2 != 0)
        throw InvalidArgument("RoPE rotates pairs of dimensions: d_k must be even and >= 2, got "
                              + std::to_string(dK));
}

void checkRopeBase(double base)
{
    if (!std::isfinite(base) || !(base > 0.0))
        throw InvalidArgument("RoPE base must be finite and > 0, got " + std::to_string(base));
}

} // namespace

double ropeFrequency(Index planeIndex, Index dK, double base)
{
    checkRopeWidth(dK);
    checkRopeBase(base);
    if (planeIndex < 0 || 2 * planeIndex >= dK)
        throw InvalidArgument("RoPE plane index must be in [0, " + std::to_string(dK / 2)
                              + ") for d_k = " + std::to_string(dK) + ", got "
                              + std::to_string(planeIndex));
    return std::pow(base, -double(2 * planeIndex) / double(dK));
}

template<typename T>
void applyRopeFrequencies(MatrixRef<T> x, const std::vector<double> &frequencies,
                          RopeConvention convention, Index firstPosition)
{
    const Index dK = x.cols();
    checkRopeWidth(dK);
    const Index planes = dK / 2;
    if (Index(frequencies.size()) != planes)
        throw InvalidArgument("RoPE needs d_k / 2 = " + std::to_string(planes)
                              + " frequencies, got " + std::to_string(frequencies.size()));
    for (double f : frequencies)
        if (!std::isfinite(f))
            throw InvalidArgument("RoPE frequencies must be finite, got " + std::to_string(f));
    for (Index r = 0; r < x.rows(); ++r) {
        const double pos = double(firstPosition + r);
        for (Index i = 0; i < planes; ++i) {
            // Plane (a, b): interleaved (2i, 2i+1), half (i, i + d_k/2).
            const Index a = convention == RopeConvention::Interleaved ? 2 * i : i;
            const Index b = convention == RopeConvention::Interleaved ? 2 * i + 1 : i + planes;
            const double angle = pos * frequencies[std::size_t(i)];
            const double c = std::cos(angle), s = std::sin(angle);
            const double xa = double(x(r, a)), xb = double(x(r, b));
            // [x_a', x_b'] = [x_a cos − x_b sin, x_b cos + x_a sin]
            x(r, a) = T(xa * c - xb * s);
            x(r, b) = T(xb * c + xa * s);
        }
    }
}

template<typename T>
void applyRope(MatrixRef<T> x, RopeConvention convention, double base, Index firstPosition)
{
    const Index dK = x.cols();
    checkRopeWidth(dK);
    checkRopeBase(base);
    const Index planes = dK / 2;
    std::vector<double> theta(static_cast<std::size_t>(planes));
    for (Index i = 0; i < planes; ++i)
        theta[std::size_t(i)] = std::pow(base, -double(2 * i) / double(dK));
    applyRopeFrequencies<T>(x, theta, convention, firstPosition);
}

template<typename T>
void applyRopeHeads(MatrixRef<T> x, Index heads, RopeConvention convention, double base,
                    Index firstPosition)
{
    if (heads < 1 || x.cols() % heads != 0)
        throw InvalidArgument("RoPE over heads: " + std::to_string(x.cols())
                              + " columns are not h = " + std::to_string(heads)
                              + " heads of equal width");
    const Index dK = x.cols() / heads;
    checkRopeWidth(dK);
    for (Index i = 0; i < heads; ++i)
        applyRope<T>(x.middleCols(i * dK, dK), convention, base, firstPosition);
}

std::vector<double> alibiSlopes(Index heads)
{
    if (heads < 1)
        throw InvalidArgument("ALiBi needs h >= 1 heads, got " + std::to_string(heads));
    const auto powerOfTwo = [](Index n) {
        std::vector<double> s(static_cast<std::size_t>(n));
        for (Index h = 0; h < n; ++h)
            s[std::size_t(h)] = std::pow(2.0, -8.0 * double(h + 1) / double(n));
        return s;
    };
    Index lower = 1;
    while (lower * 2 <= heads)
        lower *= 2;
    std::vector<double> slopes = powerOfTwo(lower);
    if (lower == heads)
        return slopes;
    // Every other slope of the next power of two: its slopes 0, 2, 4, … (2^(−4(2k+1)/H')).
    const std::vector<double> next = powerOfTwo(2 * lower);
    for (Index k = 0; Index(slopes.size()) < heads; ++k)
        slopes.push_back(next[std::size_t(2 * k)]);
    return slopes;
}

MatrixD alibiBias(Index nQ, Index nK, double slope, bool causal, Index queryFirstPosition,
                  Index keyFirstPosition)
{
    if (nQ < 0 || nK < 0)
        throw InvalidArgument("ALiBi bias needs n_q, n_k >= 0, got " + shapeString(nQ, nK));
    if (!std::isfinite(slope))
        throw InvalidArgument("ALiBi slope must be finite, got " + std::to_string(slope));
    MatrixD bias(nQ, nK); // n_q × n_k
    for (Index i = 0; i < nQ; ++i)
        for (Index j = 0; j < nK; ++j) {
            const double offset = double(queryFirstPosition + i) - double(keyFirstPosition + j);
            const double distance = causal ? offset : std::abs(offset);
            bias(i, j) = -slope * distance;
        }
    return bias;
}

template void applyRopeFrequencies<float>(MatrixRef<float>, const std::vector<double> &,
                                          RopeConvention, Index);
template void applyRopeFrequencies<double>(MatrixRef<double>, const std::vector<double> &,
                                           RopeConvention, Index);
template void applyRope<float>(MatrixRef<float>, RopeConvention, double, Index);
template void applyRope<double>(MatrixRef<double>, RopeConvention, double, Index);
template void applyRopeHeads<float>(MatrixRef<float>, Index, RopeConvention, double, Index);
template void applyRopeHeads<double>(MatrixRef<double>, Index, RopeConvention, double, Index);

} // namespace attn
