// What a head contributes (core/analysis/headcontributions.h) and the model-level head scores:
// planted inputs with known answers (rollout of identity attention, rank collapse of equal rows,
// norms of a hand-computed head), and the real tiny checkpoints of fixtures/models against the
// PyTorch/NumPy numbers of tests/reference/make_head_contribution_fixtures.py
// (fixtures/heads_models/*.npz): the float64 post-processing on the reference's own weights to
// 1e-12, what goes through the float32 forward to 1e-5.

#include "testutil.h"

#include "core/analysis/headcontributions.h"
#include "core/analysis/headscores.h"
#include "core/io/npy.h"
#include "core/models/forward.h"
#include "core/models/model.h"

#include <QObject>
#include <QTest>

#include <cmath>
#include <functional>
#include <limits>
#include <map>
#include <string>
#include <vector>

using namespace attn;
using namespace attn::models;

namespace {

std::map<std::string, NpyArray> reference(const QString &name)
{
    std::map<std::string, NpyArray> f;
    const std::string path
        = QStringLiteral(ATTN_FIXTURE_DIR "/heads_models/%1.npz").arg(name).toStdString();
    for (auto &[n, a] : readNpz(path))
        f.emplace(n, std::move(a));
    return f;
}

Model openCase(const QString &name)
{
    return Model::open(QStringLiteral(ATTN_FIXTURE_DIR "/models/%1").arg(name).toStdString());
}

/// a[i, j] of a 4-d array (A, B, rows, cols) as a rows × cols matrix.
MatrixD slice4(const NpyArray &a, Index i, Index j)
{
    const Index rows = a.shape[2], cols = a.shape[3];
    MatrixD m(rows, cols);
    const std::size_t offset = std::size_t(((i * a.shape[1]) + j) * rows * cols);
    for (Index r = 0; r < rows; ++r)
        for (Index c = 0; c < cols; ++c)
            m(r, c) = a.values[offset + std::size_t(r * cols + c)];
    return m;
}

std::vector<std::int64_t> idsOf(const NpyArray &a)
{
    return {a.values.begin(), a.values.end()};
}

double maxError(const MatrixD &a, const MatrixD &b)
{
    return (a - b).cwiseAbs().maxCoeff();
}

/// QVERIFY that `f` throws InvalidArgument whose message contains every one of `parts`.
constexpr auto expectError = &test::expectError<InvalidArgument>;

} // namespace

/// The reference checkpoints: GPT-2 (Conv1D, biases) and Llama with grouped-query attention.
void referenceCases()
{
    QTest::addColumn<QString>("name");
    QTest::newRow("gpt2") << QStringLiteral("gpt2");
    QTest::newRow("llama_gqa") << QStringLiteral("llama_gqa");
}

class TestHeadContributions : public QObject
{
    Q_OBJECT

private slots:
    void rolloutOfIdentityIsIdentity()
    {
        const MatrixD id = MatrixD::Identity(5, 5);
        QCOMPARE(maxError(attentionRollout({id, id, id}), id), 0.0);
    }

    void rolloutOfUniformLayer()
    {
        // One layer of uniform attention: 0.5/n off the diagonal, 0.5 + 0.5/n on it.
        const Index n = 4;
        const MatrixD uniform = MatrixD::Constant(n, n, 1.0 / double(n));
        const MatrixD r = attentionRollout({uniform});
        for (Index i = 0; i < n; ++i)
            for (Index j = 0; j < n; ++j)
                QVERIFY(std::abs(r(i, j) - (0.5 / double(n) + (i == j ? 0.5 : 0.0))) < 1e-15);
        // Rows of a product of row-stochastic matrices sum to 1.
        const VectorD sums = attentionRollout({uniform, r, uniform}).rowwise().sum();
        QVERIFY((sums.array() - 1.0).abs().maxCoeff() < 1e-14);
    }

    void rankCollapseOfEqualRowsIsZero()
    {
        MatrixD x(4, 3);
        x.rowwise() = RowVector<double>(RowVector<double>::LinSpaced(3, -1.0, 2.0));
        QCOMPARE(rankCollapseResidual(x), 0.0);
    }

    void valueWeightedNormsPlanted()
    {
        // v_0 W_O = (3, 4) (norm 5), v_1 W_O = (0, 1) (norm 1).
        MatrixD a(2, 2), v(2, 1), wo(1, 2);
        a << 1, 0, 0.25, 0.75;
        v << 1, 0.2;
        wo << 3, 4;
        MatrixD expected(2, 2);
        expected << 5, 0, 1.25, 0.75;
        QVERIFY(maxError(valueWeightedNorms(a, v, wo), expected) < 1e-15);
        const ValueNormSummary s = summarizeValueNorms(expected);
        QVERIFY(std::abs(s.sink - (1.0 + 1.25 / 2.0) / 2.0) < 1e-15);
        QVERIFY(std::abs(s.mass - (5.0 + 2.0) / 2.0) < 1e-15);
        QVERIFY(std::isnan(summarizeValueNorms(MatrixD::Zero(2, 2)).sink));
    }

    void klOfEqualLogitsIsZero()
    {
        VectorD p(3), q(3);
        p << 1, 2, 3;
        q << 11, 12, 13; // the same distribution
        QVERIFY(std::abs(klDivergenceOfLogits(p, q)) < 1e-15);
        q << 0, 0, 0; // uniform: KL = Σ p ln p + ln 3
        const VectorD prob
            = (p.array() - p.maxCoeff()).exp() / (p.array() - p.maxCoeff()).exp().sum();
        const double expected = (prob.array() * prob.array().log()).sum() + std::log(3.0);
        QVERIFY(std::abs(klDivergenceOfLogits(p, q) - expected) < 1e-15);
    }

    void errorsNameTheirNumbers()
    {
        expectError([] { attentionRollout({}); }, {QStringLiteral("no layers")});
        expectError(
            [] {
                attentionRollout({MatrixD::Identity(2, 2), MatrixD::Identity(3, 3)});
            },
            {QStringLiteral("3×3"), QStringLiteral("2×2")});
        expectError([] { valueWeightedNorms(MatrixD(2, 3), MatrixD(2, 4), MatrixD(4, 5)); },
                    {QStringLiteral("2×3"), QStringLiteral("2×4")});
        expectError([] { klDivergenceOfLogits(VectorD(2), VectorD(3)); },
                    {QStringLiteral("2 and 3")});
        expectError([] { prefixMatchingSequences(48, 0, 1, 0, std::nullopt); },
                    {QStringLiteral("0 tokens")});
    }

    void postProcessingMatchesReference_data() { referenceCases(); }

    /// The float64 post-processing on the reference's own weights, values and W_O^h.
    void postProcessingMatchesReference()
    {
        QFETCH(QString, name);
        const auto f = reference(name);
        const Model model = openCase(name);
        const ModelConfig &c = model.config();
        const NpyArray &attention = f.at("attention");
        double normError = 0, summaryError = 0, projectionError = 0;
        std::vector<MatrixD> means;
        for (Index l = 0; l < c.layers; ++l) {
            MatrixD mean = MatrixD::Zero(attention.shape[2], attention.shape[3]);
            for (Index h = 0; h < c.heads; ++h) {
                const MatrixD a = slice4(attention, l, h);
                mean += a / double(c.heads);
                const MatrixD wo = headOutputProjection(model, l, h);
                projectionError
                    = std::max(projectionError, maxError(wo, slice4(f.at("out_proj"), l, h)));
                const MatrixD v = slice4(f.at("values"), l, h * c.kvHeads / c.heads);
                const MatrixD norms = valueWeightedNorms(a, v, wo);
                normError = std::max(normError, maxError(norms, slice4(f.at("value_norms"), l, h)));
                const ValueNormSummary s = summarizeValueNorms(norms);
                const std::size_t at = std::size_t(l * c.heads + h);
                summaryError
                    = std::max({summaryError, std::abs(s.sink - f.at("value_norm_sink").values[at]),
                                std::abs(s.mass - f.at("value_norm_mass").values[at])});
            }
            means.push_back(mean);
        }
        const double rolloutError
            = maxError(attentionRollout(means), f.at("rollout").toMatrix<double>("rollout"));
        qInfo("%s: W_O^h %.2e, value norms %.2e, summaries %.2e, rollout %.2e", qPrintable(name),
              projectionError, normError, summaryError, rolloutError);
        QCOMPARE(projectionError, 0.0);
        QVERIFY(normError <= 1e-12);
        QVERIFY(summaryError <= 1e-12);
        QVERIFY(rolloutError <= 1e-12);
    }

    void forwardMatchesReference_data() { referenceCases(); }

    /// What goes through the float32 forward.
    void forwardMatchesReference()
    {
        QFETCH(QString, name);
        const auto f = reference(name);
        const Model model = openCase(name);
        const ModelConfig &c = model.config();
        const std::vector<std::int64_t> ids = idsOf(f.at("ids"));

        ForwardOptions options;
        options.keepResidual = true;
        options.keepValues = true;
        options.keepWeights = [](Index, Index) { return true; };
        const ForwardResult r = forward(model, ids, options);
        const std::vector<double> collapse = layerRankCollapse(r);
        double collapseError = 0, valueError = 0, normError = 0;
        for (Index l = 0; l < c.layers; ++l) {
            collapseError = std::max(
                collapseError,
                std::abs(collapse[std::size_t(l)] - f.at("rank_collapse").values[std::size_t(l)]));
            const LayerAttention &layer = r.layers[std::size_t(l)];
            for (Index g = 0; g < c.kvHeads; ++g)
                valueError = std::max(valueError,
                                      maxError(layer.values[std::size_t(g)].cast<double>(),
                                               slice4(f.at("values"), l, g)));
            for (Index h = 0; h < c.heads; ++h) {
                const MatrixD norms = valueWeightedNorms(
                    layer.weights[std::size_t(h)].cast<double>(),
                    layer.values[std::size_t(r.kvHeadOf(h, c.heads))].cast<double>(),
                    headOutputProjection(model, l, h));
                normError = std::max(normError, maxError(norms, slice4(f.at("value_norms"), l, h)));
            }
        }

        const NpyArray &prefixIds = f.at("prefix_ids");
        const Index draws = prefixIds.shape[0], tokens = prefixIds.shape[1] / 2;
        const auto sequences = prefixMatchingSequences(c.vocabSize, tokens, draws, 7, std::nullopt);
        QCOMPARE(Index(sequences.size()), draws);
        for (Index d = 0; d < draws; ++d)
            for (Index i = 0; i < 2 * tokens; ++i)
                QCOMPARE(sequences[std::size_t(d)][std::size_t(i)],
                         std::int64_t(prefixIds.values[std::size_t(d * 2 * tokens + i)]));
        const double prefixError
            = maxError(modelPrefixMatching(model, tokens, draws, 7, std::nullopt),
                       f.at("prefix_matching").toMatrix<double>("prefix_matching"));

        const HeadAblation ablation = ablateHeads(model, ids);
        QCOMPARE(ablation.top1, std::int64_t(f.at("top1").values[0]));
        const MatrixD kl = f.at("ablation_kl").toMatrix<double>("ablation_kl");
        const double klError = maxError(ablation.kl, kl);
        for (Index l = 0; l < c.layers; ++l)
            for (Index h = 0; h < c.heads; ++h)
                QCOMPARE(ablation.top1Ablated(l, h),
                         std::int64_t(f.at("ablation_top1").values[std::size_t(l * c.heads + h)]));
        const HeadAblation mean = ablateHeads(model, ids, models::Ablation::Mean);
        QCOMPARE(mean.top1, ablation.top1);
        const double meanKlError
            = maxError(mean.kl, f.at("mean_ablation_kl").toMatrix<double>("mean_ablation_kl"));
        for (Index l = 0; l < c.layers; ++l)
            for (Index h = 0; h < c.heads; ++h)
                QCOMPARE(
                    mean.top1Ablated(l, h),
                    std::int64_t(f.at("mean_ablation_top1").values[std::size_t(l * c.heads + h)]));
        // Mean ablation keeps the head's average output, so it must differ from zeroing it.
        QVERIFY((mean.kl - ablation.kl).cwiseAbs().maxCoeff() > 1e-3);
        qInfo("%s: rank collapse %.2e, values %.2e, value norms %.2e, prefix matching %.2e, "
              "ablation KL %.2e, mean ablation KL %.2e",
              qPrintable(name), collapseError, valueError, normError, prefixError, klError,
              meanKlError);
        QVERIFY(meanKlError <= 1e-5);
        QVERIFY(collapseError <= 1e-5);
        QVERIFY(valueError <= 1e-5);
        QVERIFY(normError <= 1e-5);
        QVERIFY(prefixError <= 1e-5);
        QVERIFY(klError <= 1e-5);
    }

    void ablatedHeadKeepsNoWeights()
    {
        // An ablated head's weights are not computed, so not kept; the others' still are.
        const Model model = openCase(QStringLiteral("gpt2"));
        ForwardOptions options;
        options.keepWeights = [](Index, Index) { return true; };
        options.ablate = [](Index layer, Index head) { return layer == 1 && head == 2; };
        const ForwardResult r = forward(model, {1, 2, 3}, options);
        QCOMPARE(r.layers[1].weights[2].size(), Index(0));
        QCOMPARE(r.layers[1].weights[1].rows(), Index(3));
        QCOMPARE(r.layers[0].weights[2].rows(), Index(3));
    }
};

QTEST_MAIN(TestHeadContributions)
#include "tst_headcontributions.moc"
