#include "core/positional.h"

#include <cmath>
#include <string>

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

} // namespace attn
