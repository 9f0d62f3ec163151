#include "core/analysis/headscores.h"

#include "core/analysis/metrics.h"

#include <cmath>
#include <cstdlib>
#include <limits>
#include <map>
#include <type_traits>

namespace attn {
namespace {

constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();

std::string num(std::uint64_t v)
{
    return std::to_string(v);
}

void checkShape(std::size_t valueCount, const HeadStackShape &shape, const char *function)
{
    const std::string f = std::string(function) + ": ";
    if (shape.layers < 1 || shape.heads < 1 || shape.n < 1)
        throw InvalidArgument(f
                              + "an attention stack needs at least one layer, head and "
                                "position; got layers = "
                              + std::to_string(shape.layers) + ", heads = "
                              + std::to_string(shape.heads) + ", n = " + std::to_string(shape.n));
    if (valueCount != shape.count())
        throw InvalidArgument(f + "the stack holds " + num(valueCount)
                              + " values but layers × heads × n × n = "
                              + std::to_string(shape.layers) + " × " + std::to_string(shape.heads)
                              + " × " + std::to_string(shape.n) + " × " + std::to_string(shape.n)
                              + " = " + num(shape.count()));
}

/// The sums of one head over its rows: pattern numerators and denominator, row statistics.
struct HeadSums
{
    double denominator = 0; ///< Σ A' (the excluded entries left out)
    double previous = 0, duplicate = 0, induction = 0; ///< Σ A'⊙P
    double sink = 0, entropy = 0, effective = 0, distance = 0; ///< sums over counted rows
    Index rows = 0; ///< rows not all zero
};

/// Adds row i (p: n weights as double) of a head to `s`.
void addRow(const double *p, Index i, Index n, const std::vector<std::int64_t> &tokens,
            const HeadScoreOptions &o, HeadSums &s)
{
    // A'_ij: the weight unless (i, j) is excluded.
    const auto kept = [&](Index j) {
        if ((o.excludeFirstKey && j == 0) || (o.excludeCurrent && j == i))
            return 0.0;
        return p[j];
    };
    bool allZero = true;
    double distance = 0;
    for (Index j = 0; j < n; ++j) {
        s.denominator += kept(j);
        allZero = allZero && p[j] == 0;
        distance += p[j] * double(std::abs(i - j));
    }
    if (i >= 1)
        s.previous += kept(i - 1);
    if (!tokens.empty()) {
        const std::int64_t t = tokens[std::size_t(i)];
        for (Index j = 0; j < i; ++j) {
            if (tokens[std::size_t(j)] != t)
                continue;
            s.duplicate += kept(j); // duplicate: key j < i holds the query's token
            s.induction += kept(j + 1); // induction: key j + 1 ≤ i follows that copy
        }
    }
    if (allZero)
        return; // fully masked: no distribution to measure
    ++s.rows;
    s.sink += p[0];
    s.entropy += entropyNats(p, n);
    s.effective += effectiveTerms(p, n);
    s.distance += distance;
}

} // namespace

namespace {

/// The score columns of `s` in their one order; const or writable as `s` is.
template<typename Scores> auto scoreColumnsOf(Scores &s)
{
    using M = std::conditional_t<std::is_const_v<Scores>, const MatrixD, MatrixD>;
    return std::vector<std::pair<const char *, M *>> {{"previous_token", &s.previousToken},
                                                      {"duplicate_token", &s.duplicateToken},
                                                      {"induction", &s.induction},
                                                      {"sink", &s.sink},
                                                      {"entropy", &s.entropy},
                                                      {"effective_terms", &s.effectiveTerms},
                                                      {"distance", &s.distance}};
}

} // namespace

std::vector<std::pair<const char *, MatrixD *>> headScoreColumns(HeadScores &s)
{
    return scoreColumnsOf(s);
}

std::vector<std::pair<const char *, const MatrixD *>> headScoreColumns(const HeadScores &s)
{
    return scoreColumnsOf(s);
}

std::vector<std::int64_t> tokenIds(const std::vector<std::string> &tokens)
{
    std::map<std::string, std::int64_t> ids;
    std::vector<std::int64_t> out;
    out.reserve(tokens.size());
    for (const std::string &t : tokens)
        out.push_back(ids.try_emplace(t, std::int64_t(ids.size())).first->second);
    return out;
}

template<typename T>
HeadScores headScores(std::span<const T> values, const HeadStackShape &shape,
                      const std::vector<std::int64_t> &tokens, const HeadScoreOptions &options)
{
    checkShape(values.size(), shape, "headScores");
    const Index L = shape.layers, H = shape.heads, n = shape.n;
    if (!tokens.empty() && Index(tokens.size()) != n)
        throw InvalidArgument("headScores: " + num(tokens.size()) + " tokens for n = "
                              + std::to_string(n) + " positions: give one token per position");
    if (!std::isfinite(options.sinkEpsilon))
        throw InvalidArgument("headScores: the sink threshold must be finite, got "
                              + std::to_string(options.sinkEpsilon));
    HeadScores r;
    r.layers = L, r.heads = H, r.n = n;
    r.haveTokens = !tokens.empty();
    for (MatrixD *m : {&r.previousToken, &r.duplicateToken, &r.induction, &r.sink, &r.entropy,
                       &r.effectiveTerms, &r.distance})
        m->setConstant(L, H, kNaN);
    r.sinkFlag = MatrixB::Zero(L, H);
    r.zeroRows.setZero(L, H);
    std::vector<double> row(static_cast<std::size_t>(n)); // one row as double: n
    for (Index l = 0; l < L; ++l) {
        for (Index h = 0; h < H; ++h) {
            // head (l, h): n × n, row-major, at (l·H + h)·n²
            const T *a = values.data() + std::size_t((l * H + h) * n * n);
            HeadSums s;
            for (Index i = 0; i < n; ++i) {
                for (Index j = 0; j < n; ++j)
                    row[std::size_t(j)] = double(a[i * n + j]);
                addRow(row.data(), i, n, tokens, options, s);
            }
            if (s.denominator != 0) {
                r.previousToken(l, h) = s.previous / s.denominator;
                if (r.haveTokens) {
                    r.duplicateToken(l, h) = s.duplicate / s.denominator;
                    r.induction(l, h) = s.induction / s.denominator;
                }
            }
            r.zeroRows(l, h) = n - s.rows;
            if (s.rows > 0) {
                const double rows = double(s.rows);
                r.sink(l, h) = s.sink / rows;
                r.entropy(l, h) = s.entropy / rows;
                r.effectiveTerms(l, h) = s.effective / rows;
                r.distance(l, h) = s.distance / rows;
                r.sinkFlag(l, h) = r.sink(l, h) > options.sinkEpsilon ? 1 : 0;
            }
        }
    }
    return r;
}

template<typename T>
MatrixD prefixMatchingScores(std::span<const T> values, const HeadStackShape &shape,
                             Index repeatLength, bool leadingBos)
{
    checkShape(values.size(), shape, "prefixMatchingScores");
    const Index N = repeatLength, b = leadingBos ? 1 : 0, n = shape.n;
    if (N < 1)
        throw InvalidArgument("prefixMatchingScores: the repeated sequence needs at least one "
                              "token, got N = "
                              + std::to_string(N));
    if (n != b + 2 * N)
        throw InvalidArgument("prefixMatchingScores: n = " + std::to_string(n)
                              + " positions, but N = " + std::to_string(N)
                              + " tokens repeated twice" + (leadingBos ? " after one BOS" : "")
                              + " make " + std::to_string(b + 2 * N));
    MatrixD out(shape.layers, shape.heads);
    for (Index l = 0; l < shape.layers; ++l) {
        for (Index h = 0; h < shape.heads; ++h) {
            const T *a = values.data() + std::size_t((l * shape.heads + h) * n * n);
            double sum = 0;
            // second copy: queries b + N … b + 2N − 1, each to the key after its first copy
            for (Index i = b + N; i < b + 2 * N; ++i)
                sum += double(a[i * n + (i - N + 1)]);
            out(l, h) = sum / double(N);
        }
    }
    return out;
}

template<typename T> double rankCollapseResidual(const Matrix<T> &hidden)
{
    if (hidden.size() == 0)
        throw InvalidArgument("rankCollapseResidual: the hidden states are empty ("
                              + shapeString(hidden.rows(), hidden.cols()) + ")");
    const MatrixD x = hidden.template cast<double>();
    const RowVector<double> mean = x.colwise().mean(); // x̄ᵀ: 1 × d
    const double norm = x.norm();
    if (norm == 0)
        return kNaN;
    return (x.rowwise() - mean).norm() / norm;
}

template HeadScores headScores<double>(std::span<const double>, const HeadStackShape &,
                                       const std::vector<std::int64_t> &, const HeadScoreOptions &);
template HeadScores headScores<float>(std::span<const float>, const HeadStackShape &,
                                      const std::vector<std::int64_t> &, const HeadScoreOptions &);
template MatrixD prefixMatchingScores<double>(std::span<const double>, const HeadStackShape &,
                                              Index, bool);
template MatrixD prefixMatchingScores<float>(std::span<const float>, const HeadStackShape &, Index,
                                             bool);
template double rankCollapseResidual<double>(const Matrix<double> &);
template double rankCollapseResidual<float>(const Matrix<float> &);

} // namespace attn
