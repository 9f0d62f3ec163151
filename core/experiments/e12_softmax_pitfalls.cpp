// E12 — softmax pitfalls (docs/experiments.md; Vaswani et al. 2017, §3.2.1).

#include "core/experiments/experiments_p.h"

#include "core/attention/softmax.h"
#include "core/random/random.h"

#include <cmath>
#include <limits>

namespace attn::experiments {

namespace {

ExperimentResult run(const ParamValues &pv, const RunContext &context)
{
    const Index dK = pv.integer("d_k");
    const double factor = pv.real("vector_scale");
    const Index nQ = pv.integer("queries");
    const Index nK = pv.integer("keys");
    Generator rng(pv.seed());
    const MatrixD q = rng.standardNormal(nQ, dK); // n_q × d_k
    const MatrixD k = rng.standardNormal(nK, dK); // n_k × d_k
    context.checkCancel();

    // (a) float32 vectors scaled by `factor`: scores = (f q)(f k)ᵀ/√d_k, std ≈ f².
    const MatrixF qa = (q * factor).cast<float>(), ka = (k * factor).cast<float>();
    const MatrixF scoresA = (qa * ka.transpose()) * float(1.0 / std::sqrt(double(dK)));
    MatrixF naive(nQ, nK); // exp(s) / Σ exp(s), no max subtracted
    for (Index i = 0; i < nQ; ++i) {
        float sum = 0;
        for (Index j = 0; j < nK; ++j) {
            naive(i, j) = std::exp(scoresA(i, j));
            sum += naive(i, j);
        }
        for (Index j = 0; j < nK; ++j)
            naive(i, j) /= sum; // inf/inf or 0/0 = NaN once exp overflows or underflows
    }
    const MatrixF stable = softmaxRows<float>(scoresA);

    // (b) float64, unscaled vectors: softmax over the wrong axis (over queries, per key).
    const MatrixD scoresB = (q * k.transpose()) / std::sqrt(double(dK)); // n_q × n_k
    const MatrixD wrong = softmaxRows<double>(MatrixD(scoresB.transpose())).transpose();
    const MatrixD right = softmaxRows<double>(scoresB);

    Table table({"part", "row", "score_max", "row_sum_pitfall", "nan_count_pitfall",
                 "row_sum_correct", "max_weight_correct"});
    Index nanRows = 0;
    for (Index i = 0; i < nQ; ++i) {
        const Index nans = naive.row(i).array().isNaN().count();
        nanRows += nans > 0 ? 1 : 0;
        table.addRow({std::string("naive_float32"), std::int64_t(i),
                      double(scoresA.row(i).maxCoeff()), double(naive.row(i).cast<double>().sum()),
                      std::int64_t(nans), double(stable.row(i).cast<double>().sum()),
                      double(stable.row(i).maxCoeff())});
    }
    for (Index i = 0; i < nQ; ++i) {
        table.addRow({std::string("wrong_axis"), std::int64_t(i), scoresB.row(i).maxCoeff(),
                      wrong.row(i).sum(), std::int64_t(wrong.row(i).array().isNaN().count()),
                      right.row(i).sum(), right.row(i).maxCoeff()});
    }
    const double logMax = std::log(double(std::numeric_limits<float>::max()));
    table.notes.push_back("naive_float32: exp(s)/sum(exp(s)) in float32 overflows to inf above s = "
                          + Table::formatNumber(logMax)
                          + " (inf/inf = nan) and underflows to 0 far below 0 (0/0 = nan): "
                          + std::to_string(nanRows) + " of " + std::to_string(nQ)
                          + " rows are nan; the max-subtracted softmax stays finite");
    table.notes.push_back("wrong_axis: softmax over the queries (axis 0) instead of the keys runs "
                          "without error, but each key column sums to 1 and the row sums do not "
                          "(they add up to n_k = "
                          + std::to_string(nK) + ")");

    ExperimentResult result;
    result.table = std::move(table);
    result.scalars["naive_nan_rows"] = double(nanRows);
    result.matrices.push_back(
        {"naive_float32", "E12 naive exp/sum, float32 (NaN shown)", naive.cast<double>()});
    result.matrices.push_back(
        {"stable_float32", "E12 max-subtracted softmax, float32", stable.cast<double>()});
    result.matrices.push_back({"wrong_axis", "E12 softmax over the wrong axis", wrong});
    result.matrices.push_back({"right_axis", "E12 softmax over the keys", right});
    return result;
}

} // namespace

Entry softmaxPitfallsEntry()
{
    ExperimentInfo info;
    info.id = "E12";
    info.title = "Softmax pitfalls";
    info.paperSection = "Vaswani et al. 2017, \u00a73.2.1";
    info.note = "(a) In float32, exp overflows above 88.7: with 1024-dimensional vectors scaled "
                "by 10 the scores reach the hundreds and a naive exp/sum gives inf/inf or 0/0 = "
                "NaN, while subtracting the row maximum first keeps every weight finite. "
                "(b) Normalising over the wrong axis raises no error, but the rows no longer sum "
                "to 1: look at the row sums. Q then K are drawn from the seed.";
    info.params = {
        seedParam(0),
        intParam("d_k", 1024, 1, 8192, "vector width d_k"),
        doubleParam("vector_scale", 10.0, 0.0, 1e6, "factor applied to q and k in part (a)"),
        intParam("queries", 4, 1, 1024, "query rows n_q"),
        intParam("keys", 8, 1, 1024, "keys n_k"),
    };
    info.columns = {"part",
                    "row",
                    "score_max",
                    "row_sum_pitfall",
                    "nan_count_pitfall",
                    "row_sum_correct",
                    "max_weight_correct"};
    return {info, &run};
}

} // namespace attn::experiments
