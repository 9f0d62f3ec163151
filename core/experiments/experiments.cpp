#include "core/experiments/experiments.h"

#include "core/experiments/experiments_p.h"
#include "core/experiments/livecharts.h"

#include "core/kernels/kernels.h"

#include <algorithm>
#include <cctype>
#include <charconv>
#include <chrono>
#include <cmath>
#include <limits>
#include <optional>

namespace attn {

namespace experiments {

namespace {

std::string lower(std::string_view s)
{
    std::string out(s);
    for (char &c : out)
        c = char(std::tolower(static_cast<unsigned char>(c)));
    return out;
}

std::string trimmed(std::string_view s)
{
    std::size_t b = 0, e = s.size();
    while (b < e && std::isspace(static_cast<unsigned char>(s[b])))
        ++b;
    while (e > b && std::isspace(static_cast<unsigned char>(s[e - 1])))
        --e;
    return std::string(s.substr(b, e - b));
}

std::string numberText(double v)
{
    // Integral bounds print without ".0" in messages ("[1, 4096]").
    if (std::abs(v) < 9.007199254740992e15 && v == std::floor(v))
        return std::to_string(static_cast<long long>(v));
    if (v >= 1.8446744073709552e19)
        return "18446744073709551615";
    return Table::formatNumber(v);
}

/// Parses a whole string as an integer (unsigned when `isUnsigned`); nullopt when it is not one.
std::optional<long double> parseInteger(const std::string &text, bool isUnsigned)
{
    const char *first = text.data();
    const char *last = text.data() + text.size();
    if (isUnsigned) {
        unsigned long long v = 0;
        const auto [ptr, ec] = std::from_chars(first, last, v);
        if (ec != std::errc() || ptr != last || text.empty())
            return std::nullopt;
        return static_cast<long double>(v);
    }
    long long v = 0;
    const auto [ptr, ec] = std::from_chars(first, last, v);
    if (ec != std::errc() || ptr != last || text.empty())
        return std::nullopt;
    return static_cast<long double>(v);
}

} // namespace

ParamValues::ParamValues(const ExperimentInfo &info, const ExperimentParams &given)
    : m_info(&info)
{
    std::string names;
    for (const ParamSpec &p : info.params)
        names += (names.empty() ? "" : ", ") + p.name;
    for (const auto &[rawName, value] : given) {
        std::string name = rawName;
        std::replace(name.begin(), name.end(), '-', '_');
        const auto it = std::find_if(info.params.begin(), info.params.end(),
                                     [&](const ParamSpec &p) { return p.name == name; });
        if (it == info.params.end())
            throw InvalidArgument(info.id + " has no parameter '" + rawName
                                  + "'; its parameters are: " + names);
        m_values[name] = value;
    }
    for (const ParamSpec &p : info.params) {
        const bool isGiven = m_values.count(p.name) != 0;
        const std::string text = trimmed(isGiven ? m_values[p.name] : p.defaultValue);
        std::string range = "[";
        range += numberText(p.minimum);
        range += ", ";
        range += numberText(p.maximum);
        range += "]";
        const auto fail = [&](const std::string &expected) {
            throw InvalidArgument(info.id + ": parameter '" + p.name + "' must be " + expected
                                  + ", got '" + text + "'");
        };
        switch (p.kind) {
        case ParamSpec::Kind::Int: {
            const auto v = parseInteger(text, p.minimum >= 0);
            if (!v || *v < static_cast<long double>(p.minimum)
                || *v > static_cast<long double>(p.maximum))
                fail("an integer in " + range);
            m_values[p.name] = text;
            break;
        }
        case ParamSpec::Kind::Double: {
            double v = 0;
            const auto [ptr, ec] = std::from_chars(text.data(), text.data() + text.size(), v);
            if (text.empty() || ec != std::errc() || ptr != text.data() + text.size()
                || !std::isfinite(v) || v < p.minimum || v > p.maximum)
                fail("a number in " + range);
            m_values[p.name] = Table::formatNumber(v);
            break;
        }
        case ParamSpec::Kind::IntList: {
            std::string normalisedList;
            std::size_t start = 0;
            bool ok = !text.empty();
            while (ok) {
                const std::size_t comma = text.find(',', start);
                const std::string part = trimmed(text.substr(
                    start, comma == std::string::npos ? std::string::npos : comma - start));
                const auto v = parseInteger(part, false);
                if (!v || *v < static_cast<long double>(p.minimum)
                    || *v > static_cast<long double>(p.maximum)) {
                    ok = false;
                    break;
                }
                normalisedList += (normalisedList.empty() ? "" : ",") + part;
                if (comma == std::string::npos)
                    break;
                start = comma + 1;
            }
            if (!ok)
                fail("a comma-separated list of integers in " + range);
            m_values[p.name] = normalisedList;
            break;
        }
        case ParamSpec::Kind::Choice: {
            if (std::find(p.choices.begin(), p.choices.end(), text) == p.choices.end()) {
                std::string choices;
                for (const std::string &c : p.choices)
                    choices += (choices.empty() ? "" : ", ") + c;
                fail("one of " + choices);
            }
            m_values[p.name] = text;
            break;
        }
        case ParamSpec::Kind::Text:
            m_values[p.name] = text;
            break;
        }
    }
}

const ParamSpec &ParamValues::spec(const std::string &name) const
{
    for (const ParamSpec &p : m_info->params) {
        if (p.name == name)
            return p;
    }
    throw InvalidArgument(m_info->id + ": internal error, no parameter '" + name + "'");
}

std::int64_t ParamValues::integer(const std::string &name) const
{
    spec(name);
    return std::stoll(m_values.at(name));
}

std::uint64_t ParamValues::seed() const
{
    spec("seed");
    return std::stoull(m_values.at("seed"));
}

double ParamValues::real(const std::string &name) const
{
    spec(name);
    double v = 0;
    const std::string &t = m_values.at(name);
    std::from_chars(t.data(), t.data() + t.size(), v);
    return v;
}

std::vector<std::int64_t> ParamValues::intList(const std::string &name) const
{
    spec(name);
    std::vector<std::int64_t> out;
    const std::string &t = m_values.at(name);
    std::size_t start = 0;
    while (true) {
        const std::size_t comma = t.find(',', start);
        out.push_back(std::stoll(t.substr(start, comma - start)));
        if (comma == std::string::npos)
            break;
        start = comma + 1;
    }
    return out;
}

std::vector<Index> ParamValues::indexList(const std::string &name) const
{
    const std::vector<std::int64_t> v = intList(name);
    return std::vector<Index>(v.begin(), v.end());
}

const std::string &ParamValues::text(const std::string &name) const
{
    spec(name);
    return m_values.at(name);
}

// ---- ParamSpec builders ----

ParamSpec seedParam(std::uint64_t defaultSeed, std::string help)
{
    ParamSpec p;
    p.name = "seed";
    p.kind = ParamSpec::Kind::Int;
    p.defaultValue = std::to_string(defaultSeed);
    p.help = help.empty() ? "seed of the NumPy-compatible generator (numpy.random.default_rng)"
                          : std::move(help);
    p.minimum = 0;
    p.maximum = 18446744073709551615.0; // 2^64 − 1 (rounds to 2^64 as a double)
    return p;
}

ParamSpec intParam(std::string name, std::int64_t defaultValue, std::int64_t minimum,
                   std::int64_t maximum, std::string help)
{
    ParamSpec p;
    p.name = std::move(name);
    p.kind = ParamSpec::Kind::Int;
    p.defaultValue = std::to_string(defaultValue);
    p.help = std::move(help);
    p.minimum = double(minimum);
    p.maximum = double(maximum);
    return p;
}

ParamSpec doubleParam(std::string name, double defaultValue, double minimum, double maximum,
                      std::string help)
{
    ParamSpec p;
    p.name = std::move(name);
    p.kind = ParamSpec::Kind::Double;
    p.defaultValue = Table::formatNumber(defaultValue);
    p.help = std::move(help);
    p.minimum = minimum;
    p.maximum = maximum;
    return p;
}

ParamSpec intListParam(std::string name, std::string defaultValue, std::int64_t minimum,
                       std::int64_t maximum, std::string help)
{
    ParamSpec p;
    p.name = std::move(name);
    p.kind = ParamSpec::Kind::IntList;
    p.defaultValue = std::move(defaultValue);
    p.help = std::move(help);
    p.minimum = double(minimum);
    p.maximum = double(maximum);
    return p;
}

ParamSpec choiceParam(std::string name, std::string defaultValue, std::vector<std::string> choices,
                      std::string help)
{
    ParamSpec p;
    p.name = std::move(name);
    p.kind = ParamSpec::Kind::Choice;
    p.defaultValue = std::move(defaultValue);
    p.help = std::move(help);
    p.choices = std::move(choices);
    return p;
}

// ---- NumPy's summation order ----

double numpyPairwiseSum(const double *a, Index n)
{
    if (n < 8) {
        double res = 0.;
        for (Index i = 0; i < n; ++i)
            res += a[i];
        return res;
    }
    if (n <= 128) {
        double r[8];
        for (int j = 0; j < 8; ++j)
            r[j] = a[j];
        Index i = 8;
        for (; i < n - (n % 8); i += 8) {
            for (int j = 0; j < 8; ++j)
                r[j] += a[i + j];
        }
        double res = ((r[0] + r[1]) + (r[2] + r[3])) + ((r[4] + r[5]) + (r[6] + r[7]));
        for (; i < n; ++i)
            res += a[i];
        return res;
    }
    Index n2 = n / 2;
    n2 -= n2 % 8;
    return numpyPairwiseSum(a, n2) + numpyPairwiseSum(a + n2, n - n2);
}

double numpySum(const double *a, Index n)
{
    constexpr Index kBuffer = 8192; // NPY_BUFSIZE
    double res = 0.;
    for (Index start = 0; start < n; start += kBuffer)
        res += numpyPairwiseSum(a + start, std::min(kBuffer, n - start));
    return res;
}

double numpyMean(const double *a, Index n)
{
    return numpySum(a, n) / double(n);
}

double numpyStd(const double *a, Index n)
{
    const double mean = numpyMean(a, n);
    std::vector<double> sq(static_cast<std::size_t>(n));
    for (Index i = 0; i < n; ++i) {
        const double x = a[i] - mean;
        sq[std::size_t(i)] = x * x;
    }
    return std::sqrt(numpySum(sq.data(), n) / double(n));
}

double numpyDot(const double *a, const double *b, Index n, std::vector<double> &scratch)
{
    scratch.resize(static_cast<std::size_t>(n));
    for (Index i = 0; i < n; ++i)
        scratch[std::size_t(i)] = a[i] * b[i];
    return numpySum(scratch.data(), n);
}

void numpySoftmaxRow(const double *x, double *out, Index n)
{
    if (n <= 0)
        return;
    double m = x[0];
    for (Index i = 1; i < n; ++i)
        m = std::max(m, x[i]);
    for (Index i = 0; i < n; ++i)
        out[i] = std::exp(x[i] - m);
    const double s = numpySum(out, n);
    for (Index i = 0; i < n; ++i)
        out[i] = out[i] / s;
}

void checkMatrixMemory(const std::string &id, double matrices, Index heads, Index nQ, Index nK)
{
    const double bytes
        = matrices * double(heads) * double(nQ) * double(nK) * double(sizeof(double));
    if (bytes <= kExperimentMatrixBudgetBytes)
        return;
    const auto mib = [](double b) { return std::to_string(static_cast<long long>(b / 1048576.0)); };
    throw InvalidArgument(id + " would hold about " + mib(bytes) + " MiB of attention matrices ("
                          + std::to_string(static_cast<long long>(matrices))
                          + " x h = " + std::to_string(heads) + " x " + std::to_string(nQ) + " x "
                          + std::to_string(nK) + " float64), over the "
                          + mib(kExperimentMatrixBudgetBytes)
                          + " MiB an experiment may use: use a smaller n or fewer heads");
}

double maxAbsDiff(const MatrixD &a, const MatrixD &b)
{
    if (a.rows() != b.rows() || a.cols() != b.cols())
        throw InvalidArgument("maxAbsDiff: shapes " + shapeString(a.rows(), a.cols()) + " and "
                              + shapeString(b.rows(), b.cols()) + " differ");
    double worst = 0;
    for (Index i = 0; i < a.size(); ++i) {
        const double x = a.data()[i], y = b.data()[i];
        if (std::isnan(x) != std::isnan(y))
            return std::numeric_limits<double>::quiet_NaN();
        if (!std::isnan(x) && x != y)
            worst = std::max(worst, std::abs(x - y));
    }
    return worst;
}

double secondsNow()
{
    using Clock = std::chrono::steady_clock;
    return std::chrono::duration<double>(Clock::now().time_since_epoch()).count();
}

std::string flopsText()
{
    const int exponent = int(std::floor(std::log10(kSingleThreadFlops)));
    const double mantissa = kSingleThreadFlops / std::pow(10.0, exponent);
    return (mantissa == std::floor(mantissa) ? std::to_string(int(mantissa))
                                             : Table::formatNumber(mantissa))
        + "e" + std::to_string(exponent);
}

TimingSummary timingSummary(std::vector<double> seconds)
{
    TimingSummary t;
    if (seconds.empty())
        return t;
    std::sort(seconds.begin(), seconds.end());
    const std::size_t m = seconds.size();
    double sum = 0;
    for (const double s : seconds)
        sum += s;
    t.mean = sum / double(m);
    t.median = m % 2 ? seconds[m / 2] : 0.5 * (seconds[m / 2 - 1] + seconds[m / 2]);
    t.minimum = seconds.front();
    return t;
}

namespace {

const std::vector<Entry> &entries()
{
    static const std::vector<Entry> list = {
        oneHeadEntry(),        scalingSweepEntry(),    softmaxCollapseEntry(),
        headsSplitEntry(),     permutationEntry(),     shiftRotationEntry(),
        causalMaskEntry(),     quadraticCostEntry(),   loopVersusMatrixEntry(),
        maskConventionEntry(), fillValueEntry(),       softmaxPitfallsEntry(),
        scaleLearningEntry(),  ropeOffsetsEntry(),     headReachEntry(),
        sharedKeysEntry(),     inductionHeadEntry(),   learnedSinksEntry(),
        differentialEntry(),   latentAttentionEntry(),
    };
    return list;
}

const Entry &entry(std::string_view id)
{
    const std::string wanted = lower(id);
    for (const Entry &e : entries()) {
        if (lower(e.info.id) == wanted)
            return e;
    }
    std::string ids;
    for (const Entry &e : entries())
        ids += (ids.empty() ? "" : ", ") + e.info.id;
    throw InvalidArgument("unknown experiment '" + std::string(id) + "'; valid ids: " + ids);
}

} // namespace

} // namespace experiments

const std::vector<ExperimentInfo> &experimentList()
{
    static const std::vector<ExperimentInfo> infos = [] {
        std::vector<ExperimentInfo> v;
        for (const experiments::Entry &e : experiments::entries())
            v.push_back(e.info);
        return v;
    }();
    return infos;
}

const ExperimentInfo &experimentInfo(std::string_view id)
{
    const std::string wanted = experiments::lower(id);
    for (const ExperimentInfo &info : experimentList()) {
        if (experiments::lower(info.id) == wanted)
            return info;
    }
    return experiments::entry(id).info; // throws, listing the valid ids
}

ExperimentResult runExperiment(std::string_view id, const ExperimentParams &params,
                               const RunContext &context)
{
    const experiments::Entry &e = experiments::entry(id);
    const experiments::ParamValues values(e.info, params);
    context.checkCancel();
    context.report(0.0);
    ExperimentResult result = e.run(values, context);
    result.id = e.info.id;
    result.params = values.normalised();
    context.report(1.0);
    return result;
}

double fitPowerLawExponent(const std::vector<double> &x, const std::vector<double> &y)
{
    if (x.size() != y.size())
        throw InvalidArgument("fitPowerLawExponent: x has " + std::to_string(x.size())
                              + " values but y has " + std::to_string(y.size()));
    if (x.size() < 2)
        throw InvalidArgument("fitPowerLawExponent: needs at least 2 points, got "
                              + std::to_string(x.size()));
    std::vector<double> lx, ly;
    for (std::size_t i = 0; i < x.size(); ++i) {
        if (!(x[i] > 0) || !(y[i] > 0) || !std::isfinite(x[i]) || !std::isfinite(y[i]))
            throw InvalidArgument("fitPowerLawExponent: point " + std::to_string(i) + " ("
                                  + Table::formatNumber(x[i]) + ", " + Table::formatNumber(y[i])
                                  + ") is not positive and finite");
        lx.push_back(std::log(x[i]));
        ly.push_back(std::log(y[i]));
    }
    const double n = double(lx.size());
    double mx = 0, my = 0;
    for (std::size_t i = 0; i < lx.size(); ++i) {
        mx += lx[i];
        my += ly[i];
    }
    mx /= n;
    my /= n;
    double sxy = 0, sxx = 0;
    for (std::size_t i = 0; i < lx.size(); ++i) {
        sxy += (lx[i] - mx) * (ly[i] - my);
        sxx += (lx[i] - mx) * (lx[i] - mx);
    }
    if (sxx == 0)
        throw InvalidArgument("fitPowerLawExponent: every x is the same ("
                              + Table::formatNumber(x[0]) + "), no slope to fit");
    return sxy / sxx;
}

LargeNFit fitLargeNExponent(const std::vector<double> &n, const std::vector<double> &seconds)
{
    LargeNFit fit;
    fit.exponent = fit.rSquared = std::numeric_limits<double>::quiet_NaN();
    std::vector<double> x, y;
    const std::size_t count = std::min(n.size(), seconds.size());
    double nMax = 0;
    for (std::size_t i = 0; i < count; ++i)
        if (std::isfinite(n[i]))
            nMax = std::max(nMax, n[i]);
    for (std::size_t i = 0; i < count; ++i)
        if (n[i] >= nMax / 8 && n[i] > 0 && std::isfinite(n[i]) && seconds[i] > 0
            && std::isfinite(seconds[i])) {
            x.push_back(n[i]);
            y.push_back(seconds[i]);
        }
    fit.points = int(x.size());
    fit.fromN = x.empty() ? 0.0 : *std::min_element(x.begin(), x.end());
    if (x.size() >= 2 && *std::max_element(x.begin(), x.end()) > fit.fromN)
        fit.exponent = fitPowerLawExponent(x, y);
    if (std::isfinite(fit.exponent)) {
        // R² on log–log axes: the line through the points' mean with the fitted slope.
        double lx = 0, ly = 0;
        for (std::size_t i = 0; i < x.size(); ++i) {
            lx += std::log(x[i]);
            ly += std::log(y[i]);
        }
        lx /= double(x.size());
        ly /= double(x.size());
        double residual = 0, total = 0;
        for (std::size_t i = 0; i < x.size(); ++i) {
            const double predicted = ly + fit.exponent * (std::log(x[i]) - lx);
            residual += (std::log(y[i]) - predicted) * (std::log(y[i]) - predicted);
            total += (std::log(y[i]) - ly) * (std::log(y[i]) - ly);
        }
        fit.rSquared = total > 0 ? 1.0 - residual / total : 1.0;
    }
    fit.noisy = fit.points >= 2
        && (fit.points < 3 || !(fit.rSquared >= 0.98) || !(std::abs(fit.exponent - 2.0) <= 0.4));
    return fit;
}

} // namespace attn
