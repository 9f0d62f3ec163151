#include "core/models/nexttoken.h"

#include <algorithm>
#include <cmath>
#include <numeric>

namespace attn::models {

std::vector<NextToken> topNextTokens(const MatrixF &logits, Index k)
{
    if (logits.rows() == 0 || logits.cols() == 0 || k <= 0)
        return {};
    const Eigen::VectorXd last = logits.row(logits.rows() - 1).transpose().cast<double>();
    const double top = last.maxCoeff();
    const double total = (last.array() - top).exp().sum();
    std::vector<Index> order(std::size_t(last.size()));
    std::iota(order.begin(), order.end(), Index(0));
    const std::size_t count = std::min<std::size_t>(std::size_t(k), order.size());
    std::partial_sort(
        order.begin(), order.begin() + std::ptrdiff_t(count), order.end(),
        [&](Index a, Index b) { return last(a) > last(b) || (last(a) == last(b) && a < b); });
    std::vector<NextToken> out;
    out.reserve(count);
    for (std::size_t i = 0; i < count; ++i) {
        const Index id = order[i];
        out.push_back({id, std::exp(last(id) - top) / total, last(id)});
    }
    return out;
}

} // namespace attn::models
