#include "core/models/nexttoken.h"

#include <algorithm>
#include <cmath>
#include <numeric>
#include <string>

namespace attn::models {

std::vector<NextToken> topNextTokens(const MatrixF &logits, Index position, Index k)
{
    if (position < 0 || position >= logits.rows()) {
        throw InvalidArgument("next-token position " + std::to_string(position)
                              + " is outside the logits' rows [0, " + std::to_string(logits.rows())
                              + ")");
    }
    const Index vocab = logits.cols();
    std::vector<NextToken> top;
    if (k <= 0 || vocab == 0) {
        return top;
    }
    const auto row = logits.row(position);
    if (!row.allFinite()) {
        throw NonFiniteInput("the logits of position " + std::to_string(position)
                             + " hold NaN or infinite values");
    }
    const double largest = double(row.maxCoeff());
    double total = 0;
    for (Index j = 0; j < vocab; ++j) {
        total += std::exp(double(row(j)) - largest);
    }
    std::vector<Index> order(static_cast<std::size_t>(vocab));
    std::iota(order.begin(), order.end(), Index(0));
    const auto count = std::size_t(std::min(k, vocab));
    std::partial_sort(
        order.begin(), order.begin() + std::ptrdiff_t(count), order.end(),
        [&](Index a, Index b) { return row(a) > row(b) || (row(a) == row(b) && a < b); });
    top.reserve(count);
    for (std::size_t i = 0; i < count; ++i) {
        const double logit = double(row(order[i]));
        top.push_back({order[i], std::exp(logit - largest) / total, logit});
    }
    return top;
}

std::vector<NextToken> topNextTokens(const MatrixF &logits, Index k)
{
    if (logits.rows() == 0)
        return {};
    return topNextTokens(logits, logits.rows() - 1, k);
}

} // namespace attn::models
