// The experiments E18–E20 (learned sinks, differential attention, multi-head latent attention)
// against tests/reference/make_variant_experiment_fixtures.py: the same draws in NumPy and every
// table number from the papers' formulas, to 1e-12 in float64, with the invariants each one
// rests on (a learned-sink row and its sink mass sum to 1, differential rows to 1 − λ, absorbed
// and decompressed latent attention agree).

#include "core/experiments/experiments.h"
#include "core/io/npy.h"
#include "testutil.h"

#include <QTest>

#include <cmath>
#include <map>
#include <string>

using namespace attn;

namespace {

const std::map<std::string, NpyArray> &fixture()
{
    static const std::map<std::string, NpyArray> arrays = [] {
        std::map<std::string, NpyArray> m;
        for (auto &[name, a] : readNpz(ATTN_FIXTURE_DIR "/variants/variant_experiments.npz"))
            m.emplace(name, std::move(a));
        return m;
    }();
    return arrays;
}

const std::vector<double> &values(const std::string &name)
{
    return fixture().at(name).values;
}

MatrixD mat(const std::string &name)
{
    return fixture().at(name).toMatrix<double>(name);
}

const MatrixD &matrix(const ExperimentResult &r, const std::string &name)
{
    for (const NamedMatrix &m : r.matrices)
        if (m.name == name)
            return m.values;
    throw InvalidArgument("no matrix " + name);
}

/// Every row of `column` against the fixture's e<id>_<column>, to 1e-12 · max(1, |expected|).
void compareColumn(const ExperimentResult &r, const std::string &prefix, const std::string &column)
{
    const std::vector<double> &expected = values(prefix + "_" + column);
    QCOMPARE(r.table.rowCount(), expected.size());
    for (std::size_t i = 0; i < expected.size(); ++i) {
        const double got = r.table.number(i, column);
        QVERIFY2(std::abs(got - expected[i]) <= 1e-12 * std::max(1.0, std::abs(expected[i])),
                 qPrintable(QStringLiteral("%1 row %2: app %3, NumPy %4")
                                .arg(QString::fromStdString(column))
                                .arg(i)
                                .arg(got, 0, 'g', 17)
                                .arg(expected[i], 0, 'g', 17)));
    }
}

} // namespace

class TestVariantExperiments : public QObject
{
    Q_OBJECT
private slots:
    void e18LearnedSinkAgainstFirstToken()
    {
        const ExperimentResult r = runExperiment("E18", {});
        for (const char *c : {"sink_logit", "spread", "sink_mass_mean", "first_token_mass_mean",
                              "remaining_entropy_mean", "key0_output_norm_mean",
                              "output_norm_learned_mean", "output_norm_first_token_mean"})
            compareColumn(r, "e18", c);
        // Both heads keep the content keys' relative weights: renormalised they are plain
        // softmax over those keys, to rounding.
        for (std::size_t i = 0; i < r.table.rowCount(); ++i) {
            QVERIFY2(r.table.number(i, "relative_weights_max_diff") <= 1e-14,
                     qPrintable(QString::number(r.table.number(i, "relative_weights_max_diff"))));
            // Scores all 0 (σ = 0): both sinks take e^b / (e^b + 15).
            if (r.table.number(i, "spread") == 0) {
                const double b = r.table.number(i, "sink_logit");
                const double expected = std::exp(b) / (std::exp(b) + 15.0);
                QVERIFY(std::abs(r.table.number(i, "sink_mass_mean") - expected) <= 1e-14);
                QVERIFY(std::abs(r.table.number(i, "first_token_mass_mean") - expected) <= 1e-14);
            }
        }
        const MatrixD &learned = matrix(r, "learned_sink_weights");
        const MatrixD &first = matrix(r, "first_token_weights");
        ATTN_COMPARE_CLOSE(learned, mat("e18_learned"), 1e-12, 0.0);
        ATTN_COMPARE_CLOSE(first, mat("e18_first"), 1e-12, 0.0);
        // Weights plus sink mass (column 0) make each learned row whole; the first token is a
        // key, so its rows sum to 1 over the keys.
        QVERIFY((learned.rowwise().sum().array() - 1.0).abs().maxCoeff() <= 1e-14);
        QVERIFY((first.rowwise().sum().array() - 1.0).abs().maxCoeff() <= 1e-14);
    }

    void e19DifferentialCancelsCommonNoise()
    {
        const ExperimentResult r = runExperiment("E19", {});
        for (const char *c : {"lambda", "relevant_weight_mean", "distractor_abs_mean", "snr",
                              "abs_entropy_mean", "negative_mass_mean", "row_sum_mean"})
            compareColumn(r, "e19", c);
        // Rows of A₁ − λA₂ sum to 1 − λ.
        for (std::size_t i = 0; i < r.table.rowCount(); ++i)
            QVERIFY(
                std::abs(r.table.number(i, "row_sum_mean") - (1.0 - r.table.number(i, "lambda")))
                <= 1e-14);
        QVERIFY(r.scalars.at("row_sum_max_error") <= 1e-14);
        ATTN_COMPARE_CLOSE(matrix(r, "a1"), mat("e19_a1"), 1e-12, 0.0);
        ATTN_COMPARE_CLOSE(matrix(r, "a2"), mat("e19_a2"), 1e-12, 0.0);
        const MatrixD &diff = matrix(r, "differential");
        ATTN_COMPARE_CLOSE(diff, mat("e19_differential"), 1e-12, 0.0);
        QVERIFY(diff.minCoeff() < 0); // signed weights
        QVERIFY((diff.rowwise().sum().array() - 0.2).abs().maxCoeff() <= 1e-14); // λ = 0.8
        QVERIFY(std::abs(r.scalars.at("lambda_common_mode_mean") - values("e19_lambda_common")[0])
                <= 1e-12);
        // The subtraction raises the signal-to-noise ratio above A₁'s (λ = 0).
        QCOMPARE(r.scalars.at("snr_a1"), r.table.number(0, "snr"));
        QVERIFY(r.scalars.at("snr_best") > r.scalars.at("snr_a1"));
    }

    void e20AbsorbedEqualsDecompressed()
    {
        const ExperimentResult r = runExperiment("E20", {});
        for (const char *c :
             {"rope_dim", "mla_cache_values", "mha_cache_values", "gqa_cache_values",
              "head_correlation_rope", "head_correlation_no_rope", "mean_abs_weight_change"})
            compareColumn(r, "e20", c);
        for (std::size_t i = 0; i < r.table.rowCount(); ++i) {
            QVERIFY2(r.table.number(i, "max_abs_diff_weights") <= 1e-12,
                     qPrintable(QString::number(r.table.number(i, "max_abs_diff_weights"))));
            QVERIFY2(r.table.number(i, "max_abs_diff_output") <= 1e-12,
                     qPrintable(QString::number(r.table.number(i, "max_abs_diff_output"))));
        }
        // DeepSeek-V3: d_c + d_r = 512 + 64 against 2·128·128 (MHA) and 2·8·128 (GQA, g = 8).
        QCOMPARE(r.scalars.at("deepseek_v3_mla_cache_values"), 576.0);
        QCOMPARE(r.scalars.at("deepseek_v3_mha_cache_values"), 32768.0);
        QCOMPARE(r.scalars.at("deepseek_v3_gqa8_cache_values"), 2048.0);
        ATTN_COMPARE_CLOSE(matrix(r, "weight_by_offset"), mat("e20_weight_by_offset"), 1e-12, 0.0);
        const NpyArray &maps = fixture().at("e20_head_maps");
        const Index n = maps.shape[1];
        for (Index h = 0; h < 4; ++h) {
            MatrixD expected(n, n);
            for (Index i = 0; i < n; ++i)
                for (Index j = 0; j < n; ++j)
                    expected(i, j) = maps.values[std::size_t((h * n + i) * n + j)];
            ATTN_COMPARE_CLOSE(matrix(r, "head" + std::to_string(h) + "_rope"), expected, 1e-12,
                               0.0);
        }
    }

    void e20SharedRopeQueryMakesHeadsAlike()
    {
        // With every head's W_QR the same (ρ = 1) the RoPE scores q^R·k^R are one matrix for
        // all heads: the maps correlate more than without the RoPE part.
        const ExperimentResult r
            = runExperiment("E20", {{"rope_query_share", "1"}, {"rope_dims", "32"}});
        QVERIFY(r.table.number(0, "head_correlation_rope")
                > r.table.number(0, "head_correlation_no_rope") + 0.1);
    }

    void badParameters()
    {
        QVERIFY_THROWS_EXCEPTION(InvalidArgument, runExperiment("E20", {{"rope_dims", "4,5"}}));
        QVERIFY_THROWS_EXCEPTION(InvalidArgument, runExperiment("E20", {{"gqa_groups", "3"}}));
        QVERIFY_THROWS_EXCEPTION(InvalidArgument, runExperiment("E19", {{"lambda_steps", "1"}}));
        QVERIFY_THROWS_EXCEPTION(InvalidArgument, runExperiment("E18", {{"spreads", "-1"}}));
    }
};

QTEST_APPLESS_MAIN(TestVariantExperiments)
#include "tst_variant_experiments.moc"
