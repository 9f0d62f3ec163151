// MultiheadAttention against torch.nn.MultiheadAttention.
//
// Fixtures: tests/reference/fixtures/torch/<case>.npz, written by
// tests/reference/make_torch_fixtures.py with Debian's python3-torch 1.13
// (nn.MultiheadAttention(batch_first=True), need_weights=True, average_attn_weights=False).
// Each case holds the inputs, PyTorch-named parameters, masks (True = masked out), and
// PyTorch's expected_output (n_q × d_model) and expected_weights (h × n_q × n_k).

#include "testutil.h"

#include "core/attention/attention.h"
#include "core/attention/mask.h"
#include "core/attention/multihead.h"
#include "core/io/npy.h"

#include <QObject>
#include <QTest>

#include <cmath>
#include <map>
#include <string>

// ATTN_COMPARE_CLOSE that also records the largest difference (for the closing qInfo).
#define CHECK_CLOSE(args)                                                                          \
    do {                                                                                           \
        const QString closeError_ = closeError args;                                               \
        QVERIFY2(closeError_.isEmpty(), qPrintable(closeError_));                                  \
    } while (false)

using namespace attn;

namespace {

using Case = std::map<std::string, NpyArray>;

QString fixturePath(const QString &name)
{
    return QStringLiteral(ATTN_FIXTURE_DIR "/torch/%1.npz").arg(name);
}

Case loadCase(const QString &name)
{
    Case c;
    for (auto &[member, array] : readNpz(fixturePath(name).toStdString()))
        c.emplace(member, std::move(array));
    return c;
}

template<typename T> Vector<T> toVector(const NpyArray &a)
{
    Vector<T> v(Index(a.values.size()));
    for (Index i = 0; i < v.size(); ++i)
        v(i) = T(a.values[std::size_t(i)]);
    return v;
}

// Layer with the case's parameters; a case without in_proj_bias is a bias=False layer.
template<typename T> MultiheadAttention<T> layerFor(const Case &c)
{
    const Matrix<T> inW = c.at("in_proj_weight").toMatrix<T>("in_proj_weight");
    const Matrix<T> outW = c.at("out_proj_weight").toMatrix<T>("out_proj_weight");
    const Index dModel = outW.rows();
    const Index heads = Index(c.at("num_heads").values.at(0));
    const bool bias = c.count("in_proj_bias") > 0;
    MultiheadAttention<T> layer(dModel, heads, bias);
    const Vector<T> inB = bias ? toVector<T>(c.at("in_proj_bias")) : Vector<T>::Zero(3 * dModel);
    const Vector<T> outB = bias ? toVector<T>(c.at("out_proj_bias")) : Vector<T>::Zero(dModel);
    layer.setParameters(inW, inB, outW, outB);
    return layer;
}

// attn_mask (bool: True = masked out, as in nn.MultiheadAttention; float: additive) OR-ed with
// key_padding_mask (True = padding).
AttentionMask maskFor(const Case &c, Index nQ, Index nK)
{
    AttentionMask mask;
    if (auto it = c.find("attn_mask"); it != c.end()) {
        const NpyArray &a = it->second;
        if (a.type == NpyType::Bool)
            mask = AttentionMask::fromMasked(a.toMatrix<double>("attn_mask").cast<std::uint8_t>());
        else
            mask = AttentionMask::additive(a.toMatrix<double>("attn_mask"));
    }
    if (auto it = c.find("key_padding_mask"); it != c.end()) {
        std::vector<std::uint8_t> padding;
        for (double v : it->second.values)
            padding.push_back(v != 0 ? 1 : 0);
        const AttentionMask pad = AttentionMask::keyPadding(nQ, padding);
        mask = mask.empty() ? pad : (mask | pad);
    }
    if (!mask.empty())
        mask.checkShape(nQ, nK);
    return mask;
}

} // namespace

class TestMultiheadTorch : public QObject
{
    Q_OBJECT

private:
    double m_worstFloat64 = 0; // largest |ours − PyTorch| over every float64 comparison
    double m_worstFloat32 = 0;

    // Compares and remembers the largest difference seen; returns an empty string when close.
    template<typename DA, typename DB>
    static QString closeError(const Eigen::MatrixBase<DA> &actual,
                              const Eigen::MatrixBase<DB> &expected, double atol,
                              const QString &what, double *worst)
    {
        const auto report = attn::test::compareClose(actual, expected, atol);
        if (!report.shapeMismatch)
            *worst = std::max(*worst, report.worstAbs);
        return report.ok ? QString() : what + QStringLiteral(": ") + report.message();
    }

private Q_SLOTS:
    void forward_data();
    void forward();
    void forwardFloat32_data();
    void forwardFloat32();
    void fullyMaskedRow();
    void handPinnedD2();
    void maskConvention_data();
    void maskConvention();
    void plain_data();
    void plain();
    void cleanupTestCase();
};

void TestMultiheadTorch::forward_data()
{
    QTest::addColumn<QString>("name");
    for (const char *name : {"self_attn", "causal", "key_padding", "cross", "cross_causal_padding",
                             "no_bias", "h1", "h8", "additive_mask", "fill_1e9", "hand_d2"})
        QTest::newRow(name) << QString::fromLatin1(name);
}

// float64: output and every head's weights within 1e-12 of PyTorch.
void TestMultiheadTorch::forward()
{
    QFETCH(QString, name);
    const Case c = loadCase(name);
    const MatrixD q = c.at("query").toMatrix<double>("query");
    const MatrixD k = c.at("key").toMatrix<double>("key");
    const MatrixD v = c.at("value").toMatrix<double>("value");
    const MultiheadAttention<double> layer = layerFor<double>(c);
    const MultiheadResult<double> r = layer.forward(q, k, v, maskFor(c, q.rows(), k.rows()));

    const NpyArray &expectedWeights = c.at("expected_weights");
    QCOMPARE(expectedWeights.shape,
             (std::vector<std::int64_t> {layer.heads(), q.rows(), k.rows()}));
    QCOMPARE(Index(r.weights.size()), layer.heads());
    CHECK_CLOSE((r.output, c.at("expected_output").toMatrix<double>("expected_output"), 1e-12,
                 name + QStringLiteral(" output"), &m_worstFloat64));
    for (Index h = 0; h < layer.heads(); ++h) {
        CHECK_CLOSE((r.weights[std::size_t(h)],
                     expectedWeights.slice<double>(h, "expected_weights"), 1e-12,
                     name + QStringLiteral(" weights head %1").arg(h), &m_worstFloat64));
        // Where PyTorch's weight is exactly 0 (a −inf mask, or a −1e9 fill whose exp
        // underflows), ours is exactly 0 too, not a tiny number within the tolerance.
        const MatrixD expected = expectedWeights.slice<double>(h, "expected_weights");
        for (Index i = 0; i < expected.rows(); ++i)
            for (Index j = 0; j < expected.cols(); ++j)
                if (expected(i, j) == 0.0)
                    QVERIFY2(r.weights[std::size_t(h)](i, j) == 0.0,
                             qPrintable(QStringLiteral("%1 head %2 (%3, %4): %5, PyTorch 0")
                                            .arg(name)
                                            .arg(h)
                                            .arg(i)
                                            .arg(j)
                                            .arg(r.weights[std::size_t(h)](i, j))));
        for (std::uint8_t flag : r.fullyMasked[std::size_t(h)])
            QCOMPARE(flag, std::uint8_t(0));
    }
    // weights_mean is PyTorch's average_attn_weights=True: the mean over heads.
    MatrixD mean = MatrixD::Zero(q.rows(), k.rows());
    for (Index h = 0; h < layer.heads(); ++h)
        mean += expectedWeights.slice<double>(h, "expected_weights");
    mean /= double(layer.heads());
    CHECK_CLOSE(
        (r.weightsMean, mean, 1e-12, name + QStringLiteral(" weights_mean"), &m_worstFloat64));
}

void TestMultiheadTorch::forwardFloat32_data()
{
    QTest::addColumn<QString>("name");
    QTest::newRow("self_attn_float32") << QStringLiteral("self_attn_float32");
    QTest::newRow("causal_float32") << QStringLiteral("causal_float32");
}

// float32 (inputs, parameters and PyTorch's arithmetic all float32): within 1e-5.
void TestMultiheadTorch::forwardFloat32()
{
    QFETCH(QString, name);
    const Case c = loadCase(name);
    QCOMPARE(c.at("query").type, NpyType::Float32);
    QCOMPARE(c.at("expected_output").type, NpyType::Float32);
    const MatrixF q = c.at("query").toMatrix<float>("query");
    const MatrixF k = c.at("key").toMatrix<float>("key");
    const MatrixF v = c.at("value").toMatrix<float>("value");
    const MultiheadAttention<float> layer = layerFor<float>(c);
    const MultiheadResult<float> r = layer.forward(q, k, v, maskFor(c, q.rows(), k.rows()));
    CHECK_CLOSE((r.output, c.at("expected_output").toMatrix<float>("expected_output"), 1e-5,
                 name + QStringLiteral(" output"), &m_worstFloat32));
    for (Index h = 0; h < layer.heads(); ++h)
        CHECK_CLOSE((r.weights[std::size_t(h)],
                     c.at("expected_weights").slice<float>(h, "expected_weights"), 1e-5,
                     name + QStringLiteral(" weights head %1").arg(h), &m_worstFloat32));
}

// Query 2 has every key masked. PyTorch 1.13 returns NaN in that row (recorded in the fixture);
// we document zero weights, the fully-masked flag, and hence an output row equal to
// out_proj_bias (the concatenated heads are zero there). Every other row matches PyTorch.
void TestMultiheadTorch::fullyMaskedRow()
{
    const Case c = loadCase(QStringLiteral("fully_masked_row"));
    const MatrixD q = c.at("query").toMatrix<double>("query");
    const MatrixD k = c.at("key").toMatrix<double>("key");
    const MatrixD v = c.at("value").toMatrix<double>("value");
    const MultiheadAttention<double> layer = layerFor<double>(c);
    const MultiheadResult<double> r = layer.forward(q, k, v, maskFor(c, q.rows(), k.rows()));
    const Index masked = 2;

    const MatrixD expectedOut = c.at("expected_output").toMatrix<double>("expected_output");
    // What PyTorch gave: NaN across the fully masked row, finite everywhere else.
    QVERIFY(expectedOut.row(masked).array().isNaN().all());
    QCOMPARE(r.output.rows(), expectedOut.rows());
    for (Index i = 0; i < q.rows(); ++i) {
        if (i == masked) {
            QVERIFY(r.output.row(i).allFinite());
            QVERIFY(r.output.row(i) == layer.outProjBias().transpose());
        } else {
            CHECK_CLOSE((r.output.row(i), expectedOut.row(i), 1e-12,
                         QStringLiteral("output row %1").arg(i), &m_worstFloat64));
        }
    }
    for (Index h = 0; h < layer.heads(); ++h) {
        const MatrixD expected = c.at("expected_weights").slice<double>(h, "expected_weights");
        QVERIFY(expected.row(masked).array().isNaN().all());
        const MatrixD &w = r.weights[std::size_t(h)];
        QVERIFY((w.row(masked).array() == 0.0).all());
        const std::vector<std::uint8_t> &flags = r.fullyMasked[std::size_t(h)];
        QCOMPARE(flags.size(), std::size_t(q.rows()));
        for (Index i = 0; i < q.rows(); ++i) {
            QCOMPARE(flags[std::size_t(i)], std::uint8_t(i == masked ? 1 : 0));
            if (i != masked)
                CHECK_CLOSE((w.row(i), expected.row(i), 1e-12,
                             QStringLiteral("weights head %1 row %2").arg(h).arg(i),
                             &m_worstFloat64));
        }
    }
}

// A worked example: 1 head, d_model = 2, in_proj_weight rows [[1,2],[0,1],[1,0],[1,1],[2,1],[2,0]],
// no bias, out_proj identity, input [[1,1],[2,0]]. By hand: q = [[3,1],[2,0]],
// k = [[1,2],[2,2]], scores/√2 = [[5,8],[2,4]]/√2, so w = [[0.1070, 0.8930], [0.1956, 0.8044]].
void TestMultiheadTorch::handPinnedD2()
{
    MultiheadAttention<double> layer(2, 1, false);
    MatrixD inW(6, 2);
    inW << 1, 2, 0, 1, 1, 0, 1, 1, 2, 1, 2, 0;
    layer.setParameters(inW, VectorD::Zero(6), MatrixD::Identity(2, 2), VectorD::Zero(2));
    MatrixD x(2, 2);
    x << 1, 1, 2, 0;
    const MultiheadResult<double> r = layer.forward(x, x, x);
    QCOMPARE(r.weights.size(), std::size_t(1));

    MatrixD byHand(2, 2);
    byHand << 0.1070, 0.8930, 0.1956, 0.8044;
    ATTN_COMPARE_CLOSE(r.weights[0], byHand, 1e-4, 0.0);

    const Case c = loadCase(QStringLiteral("hand_d2"));
    QVERIFY(c.at("in_proj_weight").toMatrix<double>("in_proj_weight") == inW);
    CHECK_CLOSE((r.weights[0], c.at("expected_weights").slice<double>(0, "expected_weights"), 1e-12,
                 QStringLiteral("hand_d2 weights"), &m_worstFloat64));
    CHECK_CLOSE((r.output, c.at("expected_output").toMatrix<double>("expected_output"), 1e-12,
                 QStringLiteral("hand_d2 output"), &m_worstFloat64));
}

void TestMultiheadTorch::maskConvention_data()
{
    QTest::addColumn<bool>("meansAllowed");
    QTest::addColumn<double>("expected");
    // mask [True, False]: "allowed" keeps only key 0 (value 0), "masked" keeps only key 1 (10).
    QTest::newRow("fromAllowed (scaled_dot_product_attention)") << true << 0.0;
    QTest::newRow("fromMasked (MultiheadAttention)") << false << 10.0;
}

// E10: the same boolean mask read under the two conventions. Q = 0 makes every
// score 0, so only the mask decides which value comes through.
void TestMultiheadTorch::maskConvention()
{
    QFETCH(bool, meansAllowed);
    QFETCH(double, expected);
    const MatrixD q = MatrixD::Zero(1, 1);
    MatrixD k(2, 1), v(2, 1);
    k << 1, -3;
    v << 0, 10;
    MatrixB bits(1, 2);
    bits << 1, 0;
    const AttentionMask mask
        = meansAllowed ? AttentionMask::fromAllowed(bits) : AttentionMask::fromMasked(bits);

    const AttentionResult<double> plain = scaledDotProductAttention<double>(q, k, v, mask);
    QCOMPARE(plain.output(0, 0), expected);

    MultiheadAttention<double> layer(1, 1);
    layer.setIdentity();
    const MultiheadResult<double> r = layer.forward(q, k, v, mask);
    QCOMPARE(r.output(0, 0), expected);
}

void TestMultiheadTorch::plain_data()
{
    QTest::addColumn<QString>("name");
    QTest::addColumn<bool>("allowedConvention");
    QTest::newRow("plain") << QStringLiteral("plain") << false;
    QTest::newRow("plain_allowed") << QStringLiteral("plain_allowed") << true;
}

// Parameter-free cases: scaled dot-product attention against PyTorch (identity projections,
// h = 1), and h = 1 with identity projections equals plain attention. In plain_allowed the
// boolean mask means "may attend" (PyTorch was given its negation).
void TestMultiheadTorch::plain()
{
    QFETCH(QString, name);
    QFETCH(bool, allowedConvention);
    const Case c = loadCase(name);
    const MatrixD q = c.at("query").toMatrix<double>("query");
    const MatrixD k = c.at("key").toMatrix<double>("key");
    const MatrixD v = c.at("value").toMatrix<double>("value");
    AttentionMask mask;
    if (auto it = c.find("attn_mask"); it != c.end()) {
        const MatrixB bits = it->second.toMatrix<double>("attn_mask").cast<std::uint8_t>();
        mask = allowedConvention ? AttentionMask::fromAllowed(bits)
                                 : AttentionMask::fromMasked(bits);
    }
    const AttentionResult<double> r = scaledDotProductAttention<double>(q, k, v, mask);
    CHECK_CLOSE((r.output, c.at("expected_output").toMatrix<double>("expected_output"), 1e-12,
                 name + QStringLiteral(" output"), &m_worstFloat64));
    CHECK_CLOSE((r.weights, c.at("expected_weights").slice<double>(0, "expected_weights"), 1e-12,
                 name + QStringLiteral(" weights"), &m_worstFloat64));

    MultiheadAttention<double> layer(q.cols(), 1);
    layer.setIdentity();
    const MultiheadResult<double> m = layer.forward(q, k, v, mask);
    ATTN_COMPARE_CLOSE(m.output, r.output, 1e-12, 0.0);
    ATTN_COMPARE_CLOSE(m.weights[0], r.weights, 1e-12, 0.0);
}

void TestMultiheadTorch::cleanupTestCase()
{
    qInfo("largest |ours - PyTorch|: float64 %.3g, float32 %.3g", m_worstFloat64, m_worstFloat32);
}

QTEST_APPLESS_MAIN(TestMultiheadTorch)
#include "tst_multihead_torch.moc"
