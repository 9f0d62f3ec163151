// E11 — what the fill value does (docs/experiments.md; Vaswani et al. 2017, §3.2.3: "masking out
// (setting to −∞) all values in the input of the softmax which correspond to illegal
// connections").

#include "core/experiments/experiments_p.h"

#include "core/attention/attention.h"
#include "core/attention/mask.h"
#include "core/random/random.h"

#include <cmath>
#include <limits>

namespace attn::experiments {

namespace {

struct Fill
{
    const char *label; // table text
    const char *key; // matrix name part
    double value;
};

const Fill kFills[] = {
    {"-inf", "neg_inf", -std::numeric_limits<double>::infinity()},
    {"-1e9", "neg_1e9", -1e9},
    {"0", "zero", 0.0},
};

/// The softmax as a textbook or framework writes it, knowing nothing about masks: masked
/// scores replaced by `fill` (masked_fill), then exp(x − max) / Σ exp(x − max) row by row in T.
template<typename T>
Matrix<T> textbookWeights(const Matrix<T> &scores, const MatrixB &masked, T fill)
{
    Matrix<T> w = scores; // n × n
    for (Index i = 0; i < w.rows(); ++i) {
        for (Index j = 0; j < w.cols(); ++j)
            if (masked(i, j))
                w(i, j) = fill;
        T m = w(i, 0);
        for (Index j = 1; j < w.cols(); ++j)
            m = std::max(m, w(i, j));
        T sum = 0;
        for (Index j = 0; j < w.cols(); ++j) {
            w(i, j) = std::exp(w(i, j) - m); // −inf − (−inf) = NaN on a fully masked row
            sum += w(i, j);
        }
        for (Index j = 0; j < w.cols(); ++j)
            w(i, j) /= sum;
    }
    return w;
}

/// Largest total weight that a partly masked row puts on its masked keys (NaN if any is NaN).
double maskedWeight(const MatrixD &w, const MatrixB &masked)
{
    double worst = 0;
    for (Index i = 0; i < w.rows(); ++i) {
        Index allowed = 0;
        double onMasked = 0;
        for (Index j = 0; j < w.cols(); ++j) {
            if (masked(i, j))
                onMasked += w(i, j);
            else
                ++allowed;
        }
        if (allowed == 0 || allowed == w.cols())
            continue;
        if (std::isnan(onMasked))
            return std::numeric_limits<double>::quiet_NaN();
        worst = std::max(worst, onMasked);
    }
    return worst;
}

std::string describeRow(const MatrixD &w, Index row, bool flagged)
{
    const auto r = w.row(row);
    if (r.hasNaN())
        return "nan (0/0: every exp(-inf - (-inf)) is nan)";
    if ((r.array() == 0).all())
        return flagged ? "zeros, flagged fully masked" : "zeros";
    if (r.maxCoeff() == r.minCoeff())
        return "uniform 1/" + std::to_string(w.cols()) + " over masked keys";
    return "weights on masked keys";
}

template<typename T>
void addRows(const MatrixD &q64, const MatrixD &k64, const MatrixD &v64, const MatrixB &masked,
             const AttentionMask &mask, Index fullRow, const char *dtype, Table &table,
             ExperimentResult &result)
{
    const Matrix<T> q = q64.cast<T>(), k = k64.cast<T>(), v = v64.cast<T>();
    const T scale = T(1.0 / std::sqrt(double(q.cols())));
    const Matrix<T> scores = (q * k.transpose()) * scale; // n × n, scaled
    for (const Fill &fill : kFills) {
        const MatrixD textbook
            = textbookWeights<T>(scores, masked, T(fill.value)).template cast<double>();
        AttentionOptions options;
        options.maskFill = fill.value;
        const AttentionResult<T> core = scaledDotProductAttention<T>(q, k, v, mask, options);
        const MatrixD coreWeights = core.weights.template cast<double>();
        const bool flagged = core.fullyMasked[std::size_t(fullRow)] != 0;
        table.addRow({std::string(dtype), std::string(fill.label), maskedWeight(textbook, masked),
                      textbook.row(fullRow).sum(), describeRow(textbook, fullRow, false),
                      maskedWeight(coreWeights, masked), coreWeights.row(fullRow).sum(),
                      describeRow(coreWeights, fullRow, flagged)});
        result.matrices.push_back(
            {std::string("textbook_") + dtype + "_" + fill.key,
             std::string("E11 textbook softmax, ") + dtype + ", fill " + fill.label, textbook});
        result.matrices.push_back({std::string("core_") + dtype + "_" + fill.key,
                                   std::string("E11 attn core, ") + dtype + ", fill " + fill.label,
                                   coreWeights});
    }
}

ExperimentResult run(const ParamValues &pv, const RunContext &context)
{
    const Index n = pv.integer("n");
    const Index dK = pv.integer("d_k");
    const Index padded = pv.integer("padded_keys");
    if (padded > n)
        throw InvalidArgument("E11: padded_keys = " + std::to_string(padded)
                              + " is more than n = " + std::to_string(n));
    Generator rng(pv.seed());
    const MatrixD q = rng.standardNormal(n, dK); // n × d_k
    const MatrixD k = rng.standardNormal(n, dK); // n × d_k
    const MatrixD v = rng.standardNormal(n, dK); // n × d_v (= d_k)
    context.checkCancel();

    // Causal mask plus the first `padded` keys as padding (a left-padded sequence): query rows
    // 0 … padded−1 then have no key left.
    std::vector<std::uint8_t> padding(std::size_t(n), 0);
    for (Index j = 0; j < padded; ++j)
        padding[std::size_t(j)] = 1;
    const AttentionMask mask = AttentionMask::causal(n, n) | AttentionMask::keyPadding(n, padding);
    const MatrixB masked = mask.stateMatrix(n, n).unaryExpr(
        [](std::uint8_t s) { return std::uint8_t(s != MaskAllowed ? 1 : 0); });

    Table table({"dtype", "fill", "masked_weight_textbook", "full_row_sum_textbook",
                 "full_row_textbook", "masked_weight_core", "full_row_sum_core", "full_row_core"});
    ExperimentResult result;
    addRows<float>(q, k, v, masked, mask, 0, "float32", table, result);
    context.report(0.5);
    addRows<double>(q, k, v, masked, mask, 0, "float64", table, result);

    table.notes.push_back("mask: causal plus the first " + std::to_string(padded)
                          + " key(s) as padding, so query row 0 has every key masked");
    table.notes.push_back("textbook = masked_fill(fill) then exp(x - max) / sum, the arithmetic "
                          "as PyTorch's or NumPy's softmax does it; core = attn::"
                          "scaledDotProductAttention with maskFill = fill");
    table.notes.push_back("masked_weight = largest weight a partly masked row leaves on its "
                          "masked keys; full_row_* = what the fully masked row 0 becomes");
    // What the arithmetic gave, read off the table rather than claimed.
    std::string exact, leaked;
    for (std::size_t r = 0; r < table.rowCount(); ++r) {
        for (const char *method : {"textbook", "core"}) {
            const double w = table.number(r, std::string("masked_weight_") + method);
            const std::string label = std::get<std::string>(table.cell(r, 0)) + " "
                + std::get<std::string>(table.cell(r, 1)) + " " + method;
            std::string &list = w == 0 ? exact : leaked;
            list += (list.empty() ? "" : "; ") + label
                + (w == 0 ? std::string() : " (" + Table::formatNumber(w) + ")");
        }
    }
    table.notes.push_back("exactly 0 left on masked keys: " + (exact.empty() ? "none" : exact));
    table.notes.push_back("weight left on masked keys: " + (leaked.empty() ? "none" : leaked));
    table.notes.push_back("a fully masked row: nan from the textbook softmax with -inf, uniform "
                          "over the masked keys with a finite fill; our core's policy for -inf "
                          "is zeros and a flag (as PyTorch SDPA >= 2.5)");
    result.table = std::move(table);
    result.matrices.push_back({"mask", "E11 masked cells (1 = masked)", masked.cast<double>()});
    return result;
}

} // namespace

Entry fillValueEntry()
{
    ExperimentInfo info;
    info.id = "E11";
    info.title = "What the fill value does";
    info.paperSection = "Vaswani et al. 2017, \u00a73.2.3";
    info.note = "Masked scores are overwritten before the softmax with \u2212\u221e (the paper), "
                "\u22121e9 (a common shortcut) or 0 (a bug), in float32 and float64. The table "
                "reports what the arithmetic gives: the weight left on masked keys, and what a "
                "row whose keys are all masked becomes \u2014 NaN from \u2212\u221e in a "
                "textbook softmax, uniform weights over masked keys from \u22121e9 or 0, and "
                "zeros with a flag from our softmax's fully-masked-row policy.";
    info.params = {
        seedParam(0),
        intParam("n", 6, 2, 1024, "sequence length"),
        intParam("d_k", 8, 1, 4096, "query/key/value width"),
        intParam("padded_keys", 1, 1, 1024,
                 "leading keys marked as padding (their causal rows are fully masked)"),
    };
    info.columns = {"dtype",
                    "fill",
                    "masked_weight_textbook",
                    "full_row_sum_textbook",
                    "full_row_textbook",
                    "masked_weight_core",
                    "full_row_sum_core",
                    "full_row_core"};
    return {info, &run};
}

} // namespace attn::experiments
