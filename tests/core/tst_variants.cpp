// The attention variants of 2025 models (core/attention/variants.h) against
// tests/reference/make_variant_fixtures.py (NumPy from the papers' formulas; multi-head latent
// attention from a PyTorch module written from DeepSeek-V2's equations), in float64 (1e-12) and
// float32 (1e-5), with their invariants: rows plus sink mass sum to 1, a sink of −inf is plain
// softmax, a fully masked row gives everything to the sink, the gate lies in (0, 1),
// differential rows sum to 1 − λ, and the absorbed and decompressed latent attention agree.

#include "core/attention/variants.h"
#include "core/io/npy.h"
#include "testutil.h"

#include <QTest>

#include <cmath>
#include <limits>
#include <map>
#include <string>

using namespace attn;

namespace {

const std::map<std::string, NpyArray> &fixture()
{
    static const std::map<std::string, NpyArray> arrays = [] {
        std::map<std::string, NpyArray> m;
        for (auto &[name, a] : readNpz(ATTN_FIXTURE_DIR "/variants/variants.npz"))
            m.emplace(name, std::move(a));
        return m;
    }();
    return arrays;
}

template<typename T = double> Matrix<T> mat(const std::string &name)
{
    return fixture().at(name).toMatrix<double>(name).cast<T>();
}

double scalar(const std::string &name)
{
    return fixture().at(name).values.at(0);
}

VectorD vec(const std::string &name)
{
    const auto &v = fixture().at(name).values;
    return Eigen::Map<const VectorD>(v.data(), Index(v.size()));
}

/// Head `head` of a (heads × n × n) array.
MatrixD slice(const std::string &name, Index head)
{
    const NpyArray &a = fixture().at(name);
    const Index n = a.shape[1], m = a.shape[2];
    MatrixD out(n, m);
    for (Index i = 0; i < n; ++i)
        for (Index j = 0; j < m; ++j)
            out(i, j) = a.values[std::size_t((head * n + i) * m + j)];
    return out;
}

template<typename T> MlaWeights<T> mlaWeights()
{
    MlaWeights<T> w;
    w.heads = 2;
    w.downKeyValue = mat<T>("mla_w_dkv");
    w.upKey = mat<T>("mla_w_uk");
    w.upValue = mat<T>("mla_w_uv");
    w.ropeKey = mat<T>("mla_w_kr");
    w.query = mat<T>("mla_w_q");
    w.ropeQuery = mat<T>("mla_w_qr");
    return w;
}

} // namespace

class TestVariants : public QObject
{
    Q_OBJECT
private slots:
    void learnedSinkMatchesNumPy_data()
    {
        QTest::addColumn<QString>("prefix");
        QTest::addColumn<bool>("causal");
        QTest::newRow("no mask") << QStringLiteral("sink") << false;
        QTest::newRow("causal") << QStringLiteral("sinkc") << true;
    }
    void learnedSinkMatchesNumPy()
    {
        QFETCH(QString, prefix);
        QFETCH(bool, causal);
        const std::string p = prefix.toStdString();
        const MatrixD q = mat(p + "_q"), k = mat(p + "_k"), v = mat(p + "_v");
        const AttentionMask mask
            = causal ? AttentionMask::causal(q.rows(), k.rows()) : AttentionMask();
        const SinkAttentionResult<double> r
            = learnedSinkAttention<double>(q, k, v, scalar(p + "_logit"), mask);
        ATTN_COMPARE_CLOSE(r.attention.weights, mat(p + "_weights"), 1e-12, 0.0);
        ATTN_COMPARE_CLOSE(VectorD(r.sinkMass), vec(p + "_mass"), 1e-12, 0.0);
        ATTN_COMPARE_CLOSE(r.attention.output, mat(p + "_output"), 1e-12, 0.0);
        // Each row's weights and its sink mass are the whole distribution.
        const VectorD total = r.attention.weights.rowwise().sum() + r.sinkMass;
        QVERIFY((total.array() - 1.0).abs().maxCoeff() <= 1e-14);
        QVERIFY(r.sinkMass.minCoeff() > 0 && r.sinkMass.maxCoeff() < 1);

        const SinkAttentionResult<float> f = learnedSinkAttention<float>(
            q.cast<float>(), k.cast<float>(), v.cast<float>(), scalar(p + "_logit"), mask);
        ATTN_COMPARE_CLOSE(f.attention.weights.cast<double>(), mat(p + "_weights"), 1e-5, 0.0);
        ATTN_COMPARE_CLOSE(f.attention.output.cast<double>(), mat(p + "_output"), 1e-5, 0.0);
    }

    void sinkOfMinusInfinityIsSoftmax()
    {
        const MatrixD q = mat("sink_q"), k = mat("sink_k"), v = mat("sink_v");
        const auto r
            = learnedSinkAttention<double>(q, k, v, -std::numeric_limits<double>::infinity());
        const auto plain = scaledDotProductAttention<double>(q, k, v);
        ATTN_COMPARE_CLOSE(r.attention.weights, plain.weights, 1e-15, 0.0);
        QCOMPARE(r.sinkMass.cwiseAbs().maxCoeff(), 0.0);
    }

    void fullyMaskedRowGoesToTheSink()
    {
        const MatrixD q = mat("sink_q"), k = mat("sink_k"), v = mat("sink_v");
        std::vector<std::uint8_t> padding(std::size_t(k.rows()), 1); // every key is padding
        const auto r = learnedSinkAttention<double>(q, k, v, 0.5,
                                                    AttentionMask::keyPadding(q.rows(), padding));
        QCOMPARE(r.attention.weights.cwiseAbs().maxCoeff(), 0.0);
        QCOMPARE(r.sinkMass.minCoeff(), 1.0);
        QCOMPARE(r.attention.output.cwiseAbs().maxCoeff(), 0.0);
    }

    void sinkRefusals()
    {
        const MatrixD q = mat("sink_q"), k = mat("sink_k"), v = mat("sink_v");
        QVERIFY_THROWS_EXCEPTION(InvalidArgument,
                                 learnedSinkAttention<double>(q, k, v, std::nan("")));
        AttentionOptions finiteFill;
        finiteFill.maskFill = -1e9;
        QVERIFY_THROWS_EXCEPTION(InvalidArgument,
                                 learnedSinkAttention<double>(q, k, v, 0.0, {}, finiteFill));
    }

    // The mean row sum per head skips fully masked rows: with NumPy's learned-sink weights it is
    // 1 − the mean sink mass of the fixture.
    void meanRowSumsSkipFullyMaskedRows()
    {
        const MatrixD w = mat("sink_weights");
        const VectorD mass = vec("sink_mass");
        const std::vector<double> sums = meanRowSums({w, MatrixD::Zero(2, 3)}, {});
        QVERIFY(std::abs(sums.at(0) - (1.0 - mass.mean())) <= 1e-12);
        QCOMPARE(sums.at(1), 0.0);
        std::vector<std::uint8_t> first(std::size_t(w.rows()), 0);
        first[0] = 1;
        const std::vector<double> skipped = meanRowSums({w}, {first});
        QVERIFY(std::abs(skipped.at(0) - (1.0 - mass.tail(w.rows() - 1).mean())) <= 1e-12);
        QVERIFY(std::isnan(
            meanRowSums({w}, {std::vector<std::uint8_t>(std::size_t(w.rows()), 1)}).at(0)));
        QVERIFY_THROWS_EXCEPTION(InvalidArgument, meanRowSums({w}, {first, first}));
    }

    // Rows over the keys and the sink: a fully masked row whose mass went to the sink is a
    // distribution (max weight 1, entropy 0, no row-sum error); one with no sink (b = −inf,
    // mass 0) is reported as fully masked, not as a row-sum error of 1.
    void learnedSinkRowMetricsOverKeysAndSink()
    {
        MatrixD w(3, 2);
        w << 0.25, 0.25, 0.0, 0.0, 0.0, 0.0;
        VectorD mass(3);
        mass << 0.5, 1.0, 0.0;
        const RowMetrics m = learnedSinkRowMetrics(w, mass, {0, 1, 1});
        QVERIFY(std::abs(m.entropy(0) - 1.5 * std::log(2.0)) <= 1e-15); // (¼, ¼, ½)
        QCOMPARE(m.maxWeight(0), 0.5);
        QCOMPARE(m.maxWeight(1), 1.0);
        QCOMPARE(m.entropy(1), 0.0);
        QCOMPARE(m.rowSumError(1), 0.0);
        QCOMPARE(m.rowSumError(2), 0.0);
        QCOMPARE(m.maxWeight(2), 0.0);
        QCOMPARE(summarize(m).worstRowSumError, 0.0);
        QVERIFY_THROWS_EXCEPTION(InvalidArgument, learnedSinkRowMetrics(w, mass.head(2), {}));
    }

    void gateMatchesNumPy()
    {
        const MatrixD o = mat("gate_output"), g = mat("gate_logits");
        ATTN_COMPARE_CLOSE(gatedOutput<double>(o, g), mat("gate_result"), 1e-12, 0.0);
        ATTN_COMPARE_CLOSE(gatedOutput<float>(o.cast<float>(), g.cast<float>()).cast<double>(),
                           mat("gate_result"), 1e-5, 0.0);
        // σ(g) in (0, 1): the gated output is the output scaled toward 0, never flipped.
        const MatrixD ratio = gatedOutput<double>(o, g).cwiseQuotient(o);
        QVERIFY(ratio.minCoeff() > 0 && ratio.maxCoeff() < 1);
        QVERIFY_THROWS_EXCEPTION(InvalidArgument, gatedOutput<double>(o, g.leftCols(3)));
    }

    void differentialMatchesNumPy()
    {
        const MatrixD q1 = mat("diff_q1"), k1 = mat("diff_k1"), q2 = mat("diff_q2"),
                      k2 = mat("diff_k2"), v = mat("diff_v");
        const double lambda = scalar("diff_lambda");
        const AttentionMask causal = AttentionMask::causal(q1.rows(), k1.rows());
        const auto r = differentialAttention<double>(q1, k1, q2, k2, v, lambda, causal);
        ATTN_COMPARE_CLOSE(r.first.weights, mat("diff_a1"), 1e-12, 0.0);
        ATTN_COMPARE_CLOSE(r.second.weights, mat("diff_a2"), 1e-12, 0.0);
        ATTN_COMPARE_CLOSE(r.weights, mat("diff_weights"), 1e-12, 0.0);
        ATTN_COMPARE_CLOSE(r.output, mat("diff_output"), 1e-12, 0.0);
        // Rows sum to 1 − λ; some weights are negative.
        QVERIFY((r.weights.rowwise().sum().array() - (1 - lambda)).abs().maxCoeff() <= 1e-14);
        QVERIFY(r.weights.minCoeff() < 0);

        const auto f
            = differentialAttention<float>(q1.cast<float>(), k1.cast<float>(), q2.cast<float>(),
                                           k2.cast<float>(), v.cast<float>(), lambda, causal);
        ATTN_COMPARE_CLOSE(f.weights.cast<double>(), mat("diff_weights"), 1e-5, 0.0);
        ATTN_COMPARE_CLOSE(f.output.cast<double>(), mat("diff_output"), 1e-5, 0.0);

        const Index layer = Index(scalar("diff_layer"));
        const double init = differentialLambdaInit(layer);
        QVERIFY(std::abs(init - scalar("diff_lambda_init")) <= 1e-15);
        QVERIFY(std::abs(differentialLambda(vec("diff_lq1"), vec("diff_lk1"), vec("diff_lq2"),
                                            vec("diff_lk2"), init)
                         - scalar("diff_lambda_reparam"))
                <= 1e-15);
        QVERIFY_THROWS_EXCEPTION(InvalidArgument, differentialLambdaInit(0));
        QVERIFY_THROWS_EXCEPTION(InvalidArgument,
                                 differentialAttention<double>(q1, k1, q2.leftCols(3), k2, v, 0.5));
    }

    void latentAttentionMatchesPyTorch()
    {
        const MatrixD x = mat("mla_x");
        const MlaWeights<double> w = mlaWeights<double>();
        const AttentionMask causal = AttentionMask::causal(x.rows(), x.rows());
        const MlaResult<double> d = mlaDecompressed<double>(x, w, causal);
        const MlaResult<double> a = mlaAbsorbed<double>(x, w, causal);
        for (const MlaResult<double> *r : {&d, &a}) {
            QCOMPARE(int(r->weights.size()), 2);
            for (Index h = 0; h < 2; ++h)
                ATTN_COMPARE_CLOSE(r->weights[std::size_t(h)], slice("mla_weights", h), 1e-12, 0.0);
            ATTN_COMPARE_CLOSE(r->output, mat("mla_output"), 1e-12, 0.0);
            ATTN_COMPARE_CLOSE(r->latent, mat("mla_latent"), 1e-12, 0.0);
            ATTN_COMPARE_CLOSE(r->ropeKeys, mat("mla_rope_keys"), 1e-12, 0.0);
        }
        // The two computations agree with each other to float64 rounding.
        for (Index h = 0; h < 2; ++h)
            ATTN_COMPARE_CLOSE(a.weights[std::size_t(h)], d.weights[std::size_t(h)], 1e-12, 0.0);
        ATTN_COMPARE_CLOSE(a.output, d.output, 1e-12, 0.0);
        QCOMPARE(d.scale, 1.0 / std::sqrt(4.0 + 4.0));

        const MlaResult<float> f = mlaAbsorbed<float>(x.cast<float>(), mlaWeights<float>(), causal);
        ATTN_COMPARE_CLOSE(f.output.cast<double>(), mat("mla_output"), 1e-5, 0.0);

        // The cache per token: d_c + d_r = 10 numbers, against 2·h·d_h = 16 for multi-head.
        QCOMPARE(mlaCacheValues(w.latentDim(), w.ropeDim()), Index(10));
        QCOMPARE(keyValueCacheValues(w.heads, w.headDim()), Index(16));
    }

    void latentAttentionRefusals()
    {
        const MatrixD x = mat("mla_x");
        MlaWeights<double> w = mlaWeights<double>();
        w.upKey = MatrixD(w.upKey.leftCols(7)); // not divisible by 2 heads (a copy: no aliasing)
        try {
            mlaDecompressed<double>(x, w);
            QFAIL("an odd W_UK was accepted");
        } catch (const InvalidArgument &e) {
            QVERIFY2(std::string(e.what()).find("W_UK") != std::string::npos, e.what());
        }
        w = mlaWeights<double>();
        w.ropeKey = MatrixD(w.ropeKey.leftCols(3)); // odd d_r
        QVERIFY_THROWS_EXCEPTION(InvalidArgument, mlaAbsorbed<double>(x, w));
        w = mlaWeights<double>();
        MatrixD bad = x;
        bad(2, 3) = std::nan("");
        QVERIFY_THROWS_EXCEPTION(NonFiniteInput, mlaAbsorbed<double>(bad, w));
    }
};

QTEST_APPLESS_MAIN(TestVariants)
#include "tst_variants.moc"
