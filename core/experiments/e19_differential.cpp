// E19 — differential attention cancels common-mode noise (Ye et al. 2025, "Differential
// Transformer", ICLR, §2.1).

#include "core/experiments/experiments_p.h"

#include "core/analysis/metrics.h"
#include "core/attention/variants.h"
#include "core/random/random.h"

#include <algorithm>
#include <cmath>

namespace attn::experiments {

namespace {

/// The measures of one signed weight matrix a (n_q × n_k) against the planted keys r.
struct RowMeasures
{
    double relevant = 0; ///< mean_i a[i, r_i]
    double distractor = 0; ///< mean over i and j ≠ r_i of |a_ij|
    double snr = 0; ///< relevant / distractor
    double absEntropy = 0; ///< mean_i H(|a_i·| / Σ_j |a_ij|), nats
    double negativeMass = 0; ///< mean_i Σ_j min(a_ij, 0)
    double rowSum = 0; ///< mean_i Σ_j a_ij
};

RowMeasures measure(const MatrixD &a, const std::vector<std::int64_t> &relevant)
{
    RowMeasures m;
    const Index nQ = a.rows(), nK = a.cols();
    VectorD p(nK);
    for (Index i = 0; i < nQ; ++i) {
        const Index r = Index(relevant[std::size_t(i)]);
        m.relevant += a(i, r);
        double absSum = 0;
        for (Index j = 0; j < nK; ++j) {
            absSum += std::abs(a(i, j));
            if (j != r)
                m.distractor += std::abs(a(i, j));
            m.negativeMass += std::min(a(i, j), 0.0);
            m.rowSum += a(i, j);
        }
        p = a.row(i).cwiseAbs().transpose() / absSum;
        m.absEntropy += entropyNats(p.data(), nK);
    }
    m.relevant /= double(nQ);
    m.distractor /= double(nQ * (nK - 1));
    m.snr = m.relevant / m.distractor;
    m.absEntropy /= double(nQ);
    m.negativeMass /= double(nQ);
    m.rowSum /= double(nQ);
    return m;
}

ExperimentResult run(const ParamValues &pv, const RunContext &context)
{
    const Index nQ = pv.integer("queries");
    const Index nK = pv.integer("keys");
    const Index dN = pv.integer("d_noise");
    const double common = pv.real("common_noise");
    const double own = pv.real("private_noise");
    const double signal = pv.real("signal");
    const double lambdaMax = pv.real("lambda_max");
    const Index steps = pv.integer("lambda_steps");
    const double figureLambda = pv.real("figure_lambda");
    Generator rng(pv.seed());
    // The planted key of each query (integers(0, n_k), one at a time), then the common parts
    // Zq_c (n_q × d_n) and Zk_c (n_k × d_n), the first map's own Zq_1, Zk_1, the second's Zq_2,
    // Zk_2, and V (n_k × d_n), all standard normal.
    std::vector<std::int64_t> relevant;
    for (Index i = 0; i < nQ; ++i)
        relevant.push_back(rng.integers(0, nK));
    const MatrixD zqc = rng.standardNormal(nQ, dN), zkc = rng.standardNormal(nK, dN);
    const MatrixD zq1 = rng.standardNormal(nQ, dN), zk1 = rng.standardNormal(nK, dN);
    const MatrixD zq2 = rng.standardNormal(nQ, dN), zk2 = rng.standardNormal(nK, dN);
    const MatrixD v = rng.standardNormal(nK, dN);

    // Width d = 3·d_n + n_k: [common | first's own | second's own | one column per key]. Under
    // the scale 1/√d the scores are
    //   S₁ = σ_c Zq_c Zk_cᵀ/√d_n + σ_p Zq_1 Zk_1ᵀ/√d_n + signal·[j = r_i],
    //   S₂ = σ_c Zq_c Zk_cᵀ/√d_n + σ_p Zq_2 Zk_2ᵀ/√d_n.
    const Index d = 3 * dN + nK;
    const double noiseFactor = std::sqrt(double(d) / double(dN));
    MatrixD q1 = MatrixD::Zero(nQ, d), k1 = MatrixD::Zero(nK, d);
    MatrixD q2 = MatrixD::Zero(nQ, d), k2 = MatrixD::Zero(nK, d);
    q1.leftCols(dN) = common * noiseFactor * zqc;
    q2.leftCols(dN) = q1.leftCols(dN);
    k1.leftCols(dN) = zkc;
    k2.leftCols(dN) = zkc;
    q1.middleCols(dN, dN) = own * noiseFactor * zq1;
    k1.middleCols(dN, dN) = zk1;
    q2.middleCols(2 * dN, dN) = own * noiseFactor * zq2;
    k2.middleCols(2 * dN, dN) = zk2;
    for (Index i = 0; i < nQ; ++i)
        q1(i, 3 * dN + Index(relevant[std::size_t(i)])) = signal * std::sqrt(double(d));
    k1.rightCols(nK).setIdentity();

    Table table({"lambda", "relevant_weight_mean", "distractor_abs_mean", "snr", "abs_entropy_mean",
                 "negative_mass_mean", "row_sum_mean"});
    double bestSnr = -1, bestLambda = 0, worstRowSum = 0;
    for (Index s = 0; s < steps; ++s) {
        context.checkCancel();
        const double lambda = lambdaMax * double(s) / double(steps - 1);
        const DifferentialAttentionResult<double> r
            = differentialAttention<double>(q1, k1, q2, k2, v, lambda);
        const RowMeasures m = measure(r.weights, relevant);
        const VectorD sums = r.weights.rowwise().sum();
        worstRowSum = std::max(worstRowSum, (sums.array() - (1.0 - lambda)).abs().maxCoeff());
        if (m.snr > bestSnr) {
            bestSnr = m.snr;
            bestLambda = lambda;
        }
        table.addRow(
            {lambda, m.relevant, m.distractor, m.snr, m.absEntropy, m.negativeMass, m.rowSum});
        context.report(0.9 * double(s + 1) / double(steps));
    }

    const DifferentialAttentionResult<double> shown
        = differentialAttention<double>(q1, k1, q2, k2, v, figureLambda);
    // The figure's λ need not be one of the sweep's: its rows count too.
    worstRowSum
        = std::max(worstRowSum,
                   (shown.weights.rowwise().sum().array() - (1.0 - figureLambda)).abs().maxCoeff());
    const RowMeasures m1 = measure(shown.first.weights, relevant);
    const RowMeasures m2 = measure(shown.second.weights, relevant);
    // With no private noise the distractors of row i cancel exactly at
    // λ_i = (1 − A₁[i, r_i]) / (1 − A₂[i, r_i]): A₁'s distractors are A₂'s times that factor.
    double lambdaCommon = 0;
    for (Index i = 0; i < nQ; ++i) {
        const Index r = Index(relevant[std::size_t(i)]);
        lambdaCommon
            += (1.0 - shown.first.weights(i, r)) / (1.0 - shown.second.weights(i, r)) / double(nQ);
    }

    table.notes.push_back("A1 = softmax(S1), A2 = softmax(S2) share the common noise (std "
                          + Table::formatNumber(common) + "); only S1 has the planted key (+"
                          + Table::formatNumber(signal) + "); each has its own noise of std "
                          + Table::formatNumber(own));
    table.notes.push_back("snr = relevant_weight_mean / distractor_abs_mean; abs_entropy_mean = "
                          "mean row entropy of |A| / sum |A| (nats): A1 "
                          + Table::formatNumber(m1.absEntropy) + ", A2 "
                          + Table::formatNumber(m2.absEntropy) + "; snr of A1 "
                          + Table::formatNumber(m1.snr) + ", best " + Table::formatNumber(bestSnr)
                          + " at lambda " + Table::formatNumber(bestLambda));
    table.notes.push_back("rows of A1 - lambda A2 sum to 1 - lambda (worst error "
                          + Table::formatNumber(worstRowSum)
                          + "); the common-mode noise alone cancels at lambda = (1 - A1[i, r]) / "
                            "(1 - A2[i, r]), mean "
                          + Table::formatNumber(lambdaCommon));

    ExperimentResult result;
    result.table = std::move(table);
    result.scalars["entropy_a1_mean"] = m1.absEntropy;
    result.scalars["entropy_a2_mean"] = m2.absEntropy;
    result.scalars["snr_a1"] = m1.snr;
    result.scalars["snr_best"] = bestSnr;
    result.scalars["lambda_best"] = bestLambda;
    result.scalars["lambda_common_mode_mean"] = lambdaCommon;
    result.scalars["row_sum_max_error"] = worstRowSum;
    const std::string at = "\u03bb = " + Table::formatNumber(figureLambda);
    result.matrices.push_back(
        {"a1", "E19 A\u2081 = softmax(S\u2081): common noise + planted key", shown.first.weights});
    result.matrices.push_back(
        {"a2", "E19 A\u2082 = softmax(S\u2082): common noise only", shown.second.weights});
    result.matrices.push_back(
        {"differential", "E19 A\u2081 \u2212 \u03bbA\u2082, " + at + " (signed)", shown.weights});
    context.report(1.0);
    return result;
}

} // namespace

Entry differentialEntry()
{
    ExperimentInfo info;
    info.id = "E19";
    info.title = "Differential attention cancels common-mode noise";
    info.paperSection = "Ye et al. 2025 (Differential Transformer), \u00a72.1";
    info.note = "Two softmax maps see the same distractor scores; only the first also sees a "
                "planted relevant key. A = A\u2081 \u2212 \u03bbA\u2082 subtracts the shared "
                "part: as \u03bb grows the distractors' weights shrink towards the private "
                "noise, the relevant key stands out (signal-to-noise ratio), and rows sum to "
                "1 \u2212 \u03bb with negative weights where A\u2082 exceeds A\u2081.";
    info.params = {
        seedParam(19),
        intParam("queries", 16, 1, 1024, "queries n_q (one planted key each)"),
        intParam("keys", 64, 2, 4096, "keys n_k"),
        intParam("d_noise", 16, 1, 512, "width of each noise part d_n"),
        doubleParam("common_noise", 2.0, 0.0, 20.0, "std of the scores both maps share"),
        doubleParam("private_noise", 0.5, 0.0, 20.0, "std of each map's own scores"),
        doubleParam("signal", 3.0, 0.0, 50.0, "logit added to the planted key in S\u2081"),
        doubleParam("lambda_max", 1.0, 0.0, 2.0, "largest \u03bb of the sweep"),
        intParam("lambda_steps", 11, 2, 1001, "\u03bb values from 0 to lambda_max"),
        doubleParam("figure_lambda", 0.8, 0.0, 2.0, "\u03bb of the heatmaps"),
    };
    info.columns = {"lambda",           "relevant_weight_mean", "distractor_abs_mean", "snr",
                    "abs_entropy_mean", "negative_mass_mean",   "row_sum_mean"};
    return {info, &run};
}

} // namespace attn::experiments
