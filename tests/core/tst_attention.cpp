// scaledDotProductAttention (core/attention/attention.h): a hand-computed example, the scale, masks
// and fill values, causality, invariance under permuting keys and values, shape and NaN errors.

#include "core/attention/attention.h"
#include "core/random/random.h"
#include "testutil.h"

#include <QTest>

#include <cmath>
#include <limits>
#include <numeric>
#include <vector>

using namespace attn;

namespace {

constexpr double kInf = std::numeric_limits<double>::infinity();

template<typename T> double tolerance()
{
    return sizeof(T) == 4 ? 1e-5 : 1e-12;
}

template<typename T> Matrix<T> randn(Generator &rng, Index rows, Index cols)
{
    return rng.standardNormal(rows, cols).cast<T>();
}

/// Rows of m reordered: out.row(i) = m.row(perm[i]).
template<typename T> Matrix<T> permuteRows(const Matrix<T> &m, const std::vector<Index> &perm)
{
    Matrix<T> out(m.rows(), m.cols());
    for (Index i = 0; i < m.rows(); ++i)
        out.row(i) = m.row(perm[std::size_t(i)]);
    return out;
}

template<typename T>
void expectThrowsContaining(const std::function<void()> &f, const QString &needle)
{
    try {
        f();
    } catch (const T &e) {
        const QString msg = QString::fromUtf8(e.what());
        QVERIFY2(msg.contains(needle),
                 qPrintable(QStringLiteral("message \"") + msg + QStringLiteral("\" lacks \"")
                            + needle + QLatin1Char('"')));
        return;
    }
    QFAIL(qPrintable(QStringLiteral("expected an exception containing ") + needle));
}

} // namespace

class TestAttention : public QObject
{
    Q_OBJECT

private:
    template<typename T> void handComputed()
    {
        // One query q = [1, 0], two keys k0 = [1, 0], k1 = [0, 1], values v0 = [1, 2],
        // v1 = [3, 4], d_k = 2.
        //   raw scores   s = [q·k0, q·k1] = [1, 0]
        //   scaled       s/√2 = [0.70710678…, 0]
        //   weights      w0 = 1 / (1 + e^(−1/√2)) = 1 / (1 + 0.49306869139523984)
        //                   = 0.6697615493266569,  w1 = 1 − w0 = 0.3302384506733431
        //   output       w0·v0 + w1·v1 = [3 − 2·w0, 4 − 2·w0]
        //                   = [1.6604769013466862, 2.6604769013466862]
        Matrix<T> q(1, 2), k(2, 2), v(2, 2);
        q << 1, 0;
        k << 1, 0, 0, 1;
        v << 1, 2, 3, 4;
        const AttentionResult<T> r = scaledDotProductAttention<T>(q, k, v);
        QCOMPARE(r.scale, 1.0 / std::sqrt(2.0));
        Matrix<double> scores(1, 2), weights(1, 2), output(1, 2);
        scores << 1, 0;
        weights << 0.6697615493266569, 0.3302384506733431;
        output << 1.6604769013466862, 2.6604769013466862;
        ATTN_COMPARE_CLOSE(r.scores.template cast<double>(), scores, 0.0, 0.0);
        ATTN_COMPARE_CLOSE(r.weights.template cast<double>(), weights, tolerance<T>(), 0.0);
        ATTN_COMPARE_CLOSE(r.output.template cast<double>(), output, tolerance<T>(), 0.0);
        QCOMPARE(r.fullyMasked, (std::vector<std::uint8_t> {0}));
    }

    template<typename T> void causalBlocksFuture(Index n, Index d, Index k)
    {
        // Self-attention on X (n × d) with the causal mask: the upper triangle of the weights is
        // exactly 0, and replacing rows ≥ k of the input leaves outputs < k unchanged exactly.
        Generator rng {11};
        const Matrix<T> x = randn<T>(rng, n, d);
        Matrix<T> x2 = x;
        x2.bottomRows(n - k) = randn<T>(rng, n - k, d);
        const AttentionMask causal = AttentionMask::causal(n, n);
        const AttentionResult<T> a = scaledDotProductAttention<T>(x, x, x, causal);
        const AttentionResult<T> b = scaledDotProductAttention<T>(x2, x2, x2, causal);
        for (Index i = 0; i < n; ++i) {
            for (Index j = i + 1; j < n; ++j) {
                QCOMPARE(a.weights(i, j), T(0));
                QCOMPARE(a.scaledScores(i, j), T(-kInf));
            }
            QVERIFY(std::abs(double(a.weights.row(i).sum()) - 1.0) <= tolerance<T>());
        }
        const double unchanged = (a.output.topRows(k) - b.output.topRows(k)).cwiseAbs().maxCoeff();
        QCOMPARE(unchanged, 0.0);
        // …while the future positions do move.
        QVERIFY((a.output.bottomRows(n - k) - b.output.bottomRows(n - k)).cwiseAbs().maxCoeff()
                > 1e-3);
        // Without the mask the past moves too.
        const AttentionResult<T> c = scaledDotProductAttention<T>(x, x, x);
        const AttentionResult<T> e = scaledDotProductAttention<T>(x2, x2, x2);
        QVERIFY((c.output.topRows(k) - e.output.topRows(k)).cwiseAbs().maxCoeff() > 1e-6);
    }

    template<typename T> void permuteKeysValues(Index nQ, Index nK, Index d)
    {
        Generator rng {21};
        const Matrix<T> q = randn<T>(rng, nQ, d), k = randn<T>(rng, nK, d),
                        v = randn<T>(rng, nK, d + 1);
        const std::vector<std::int64_t> p64 = rng.permutation(nK);
        const std::vector<Index> perm(p64.begin(), p64.end());
        const AttentionResult<T> a = scaledDotProductAttention<T>(q, k, v);
        const AttentionResult<T> b
            = scaledDotProductAttention<T>(q, permuteRows(k, perm), permuteRows(v, perm));
        ATTN_COMPARE_CLOSE(b.output, a.output, tolerance<T>(), 0.0);
        // Weights follow the keys: b.weights(:, j) = a.weights(:, perm[j]).
        Matrix<T> permutedWeights(nQ, nK);
        for (Index j = 0; j < nK; ++j)
            permutedWeights.col(j) = a.weights.col(perm[std::size_t(j)]);
        ATTN_COMPARE_CLOSE(b.weights, permutedWeights, tolerance<T>(), 0.0);
        // Permuting the queries permutes the output rows.
        const std::vector<std::int64_t> pq64 = rng.permutation(nQ);
        const std::vector<Index> pq(pq64.begin(), pq64.end());
        const AttentionResult<T> c = scaledDotProductAttention<T>(permuteRows(q, pq), k, v);
        ATTN_COMPARE_CLOSE(c.output, permuteRows(a.output, pq), tolerance<T>(), 0.0);
    }

    template<typename T> void scaleAndAdditive()
    {
        // scaledScores = Q Kᵀ · d_k^(−α)/τ + additive; weights = softmax of that.
        Generator rng {31};
        const Index nQ = 4, nK = 6, dK = 9;
        const Matrix<T> q = randn<T>(rng, nQ, dK), k = randn<T>(rng, nK, dK),
                        v = randn<T>(rng, nK, 3);
        const MatrixD add = rng.standardNormal(nQ, nK);
        AttentionOptions o;
        o.scaleExponent = 0.25;
        o.temperature = 2.0;
        const AttentionResult<T> r
            = scaledDotProductAttention<T>(q, k, v, AttentionMask::additive(add), o);
        const double scale = std::pow(9.0, -0.25) / 2.0;
        QVERIFY(std::abs(r.scale - scale) <= 1e-15);
        const MatrixD raw = q.template cast<double>() * k.template cast<double>().transpose();
        const MatrixD expected = raw * scale + add;
        ATTN_COMPARE_CLOSE(r.scaledScores.template cast<double>(), expected, tolerance<T>(),
                           tolerance<T>());
        // Row softmax of the expected scores, by hand.
        MatrixD w(nQ, nK);
        for (Index i = 0; i < nQ; ++i) {
            const Eigen::ArrayXd e = (expected.row(i).array() - expected.row(i).maxCoeff()).exp();
            w.row(i) = (e / e.sum()).matrix().transpose();
        }
        ATTN_COMPARE_CLOSE(r.weights.template cast<double>(), w, tolerance<T>(), 0.0);
        const MatrixD out = w * v.template cast<double>();
        ATTN_COMPARE_CLOSE(r.output.template cast<double>(), out, tolerance<T>(), tolerance<T>());
    }

    template<typename T> void fillValues()
    {
        // Row 0: keys 2, 3 masked; row 1: every key masked (E11).
        MatrixB masked(2, 4);
        masked << 0, 0, 1, 1, 1, 1, 1, 1;
        const AttentionMask mask = AttentionMask::fromMasked(masked);
        Matrix<T> q(2, 2), k(4, 2), v(4, 1);
        q << 1, 0, 0, 1;
        k << 1, 0, 0, 1, 1, 1, -1, 0;
        v << 1, 2, 3, 4;

        // -inf (default): masked weights exactly 0, fully masked row all 0 + flag, output 0.
        const AttentionResult<T> a = scaledDotProductAttention<T>(q, k, v, mask);
        QCOMPARE(a.weights(0, 2), T(0));
        QCOMPARE(a.weights(0, 3), T(0));
        QCOMPARE(a.weights.row(1).cwiseAbs().sum(), T(0));
        QCOMPARE(a.output(1, 0), T(0));
        QCOMPARE(a.fullyMasked, (std::vector<std::uint8_t> {0, 1}));

        // -1e9: the arithmetic gives a uniform fully masked row (not flagged); in row 0 the
        // masked weights underflow to 0.
        AttentionOptions o;
        o.maskFill = -1e9;
        const AttentionResult<T> b = scaledDotProductAttention<T>(q, k, v, mask, o);
        QCOMPARE(b.fullyMasked, (std::vector<std::uint8_t> {0, 0}));
        for (Index j = 0; j < 4; ++j)
            QVERIFY(std::abs(double(b.weights(1, j)) - 0.25) <= tolerance<T>());
        QCOMPARE(b.weights(0, 2), T(0));
        QVERIFY(std::abs(double(b.output(1, 0)) - 2.5) <= tolerance<T>());
        ATTN_COMPARE_CLOSE(b.weights.row(0), a.weights.row(0), tolerance<T>(), 0.0);

        // 0 (the bug): masked keys keep a real weight. Row 0 scaled scores [1/√2, 0, 0, 0].
        o.maskFill = 0.0;
        const AttentionResult<T> c = scaledDotProductAttention<T>(q, k, v, mask, o);
        const double e = std::exp(1.0 / std::sqrt(2.0));
        QVERIFY(std::abs(double(c.weights(0, 2)) - 1.0 / (e + 3.0)) <= tolerance<T>());
        QVERIFY(std::abs(double(c.weights(0, 0)) - e / (e + 3.0)) <= tolerance<T>());
    }

private slots:
    void handComputed_data()
    {
        QTest::addColumn<bool>("float32");
        QTest::newRow("float32") << true;
        QTest::newRow("float64") << false;
    }
    void handComputed()
    {
        QFETCH(bool, float32);
        if (float32)
            handComputed<float>();
        else
            handComputed<double>();
    }

    void effectiveScale_data()
    {
        QTest::addColumn<int>("dK");
        QTest::addColumn<double>("alpha");
        QTest::addColumn<double>("temperature");
        QTest::addColumn<double>("expected");
        QTest::newRow("1/sqrt(64)") << 64 << 0.5 << 1.0 << 0.125;
        QTest::newRow("unscaled") << 64 << 0.0 << 1.0 << 1.0;
        QTest::newRow("1/d_k") << 64 << 1.0 << 1.0 << 1.0 / 64;
        QTest::newRow("alpha 0.25, tau 2") << 16 << 0.25 << 2.0 << 0.25;
        QTest::newRow("tau 0.5") << 4 << 0.5 << 0.5 << 1.0;
        QTest::newRow("d_k 1") << 1 << 0.5 << 1.0 << 1.0;
    }
    void effectiveScale()
    {
        QFETCH(int, dK);
        QFETCH(double, alpha);
        QFETCH(double, temperature);
        QFETCH(double, expected);
        AttentionOptions o;
        o.scaleExponent = alpha;
        o.temperature = temperature;
        QVERIFY(std::abs(attn::effectiveScale(dK, o) - expected) <= 1e-15);
        o.scaleOverride = 0.3;
        QCOMPARE(attn::effectiveScale(dK, o), 0.3);
    }

    void effectiveScaleRejects_data()
    {
        QTest::addColumn<int>("dK");
        QTest::addColumn<double>("alpha");
        QTest::addColumn<double>("temperature");
        QTest::addColumn<QString>("needle");
        QTest::newRow("alpha < 0") << 8 << -0.1 << 1.0 << QStringLiteral("alpha");
        QTest::newRow("alpha > 1") << 8 << 1.5 << 1.0 << QStringLiteral("alpha");
        QTest::newRow("alpha NaN") << 8 << std::nan("") << 1.0 << QStringLiteral("alpha");
        QTest::newRow("temperature 0") << 8 << 0.5 << 0.0 << QStringLiteral("temperature");
        QTest::newRow("temperature < 0") << 8 << 0.5 << -1.0 << QStringLiteral("temperature");
        QTest::newRow("d_k 0") << 0 << 0.5 << 1.0 << QStringLiteral("d_k");
    }
    void effectiveScaleRejects()
    {
        QFETCH(int, dK);
        QFETCH(double, alpha);
        QFETCH(double, temperature);
        QFETCH(QString, needle);
        AttentionOptions o;
        o.scaleExponent = alpha;
        o.temperature = temperature;
        expectThrowsContaining<InvalidArgument>([&] { attn::effectiveScale(dK, o); }, needle);
    }

    void scaleAndAdditiveMask_data()
    {
        QTest::addColumn<bool>("float32");
        QTest::newRow("float32") << true;
        QTest::newRow("float64") << false;
    }
    void scaleAndAdditiveMask()
    {
        QFETCH(bool, float32);
        if (float32)
            scaleAndAdditive<float>();
        else
            scaleAndAdditive<double>();
    }

    void causalBlocksFuture_data()
    {
        QTest::addColumn<bool>("float32");
        QTest::addColumn<int>("n");
        QTest::addColumn<int>("d");
        QTest::addColumn<int>("k");
        for (bool f32 : {true, false}) {
            const char *t = f32 ? "float32" : "float64";
            QTest::addRow("%s n=8 d=16 k=5 (E7)", t) << f32 << 8 << 16 << 5;
            QTest::addRow("%s n=33 d=7 k=1", t) << f32 << 33 << 7 << 1;
            QTest::addRow("%s n=100 d=64 k=99", t) << f32 << 100 << 64 << 99;
        }
    }
    void causalBlocksFuture()
    {
        QFETCH(bool, float32);
        QFETCH(int, n);
        QFETCH(int, d);
        QFETCH(int, k);
        if (float32)
            causalBlocksFuture<float>(n, d, k);
        else
            causalBlocksFuture<double>(n, d, k);
    }

    void permutingKeysAndValuesChangesNothing_data()
    {
        QTest::addColumn<bool>("float32");
        QTest::addColumn<int>("nQ");
        QTest::addColumn<int>("nK");
        QTest::addColumn<int>("d");
        for (bool f32 : {true, false}) {
            const char *t = f32 ? "float32" : "float64";
            QTest::addRow("%s self 7x7 d=16", t) << f32 << 7 << 7 << 16;
            QTest::addRow("%s cross 5x11 d=3", t) << f32 << 5 << 11 << 3;
            QTest::addRow("%s 64x200 d=33", t) << f32 << 64 << 200 << 33;
        }
    }
    void permutingKeysAndValuesChangesNothing()
    {
        QFETCH(bool, float32);
        QFETCH(int, nQ);
        QFETCH(int, nK);
        QFETCH(int, d);
        if (float32)
            permuteKeysValues<float>(nQ, nK, d);
        else
            permuteKeysValues<double>(nQ, nK, d);
    }

    void fillValues_data()
    {
        QTest::addColumn<bool>("float32");
        QTest::newRow("float32") << true;
        QTest::newRow("float64") << false;
    }
    void fillValues()
    {
        QFETCH(bool, float32);
        if (float32)
            fillValues<float>();
        else
            fillValues<double>();
    }

    void maskConventionTrap()
    {
        // E10: the lower-triangular boolean matrix means "may attend" to SDPA and "masked out"
        // to nn.MultiheadAttention. Passed with the right convention it equals the causal mask;
        // passed with the wrong one it silently attends elsewhere (no error).
        const Index n = 6;
        Generator rng {0};
        const MatrixD x = rng.standardNormal(n, 8);
        MatrixB tril = MatrixB::Zero(n, n);
        for (Index i = 0; i < n; ++i)
            for (Index j = 0; j <= i; ++j)
                tril(i, j) = 1;
        const auto causal = scaledDotProductAttention<double>(x, x, x, AttentionMask::causal(n, n));
        const auto right
            = scaledDotProductAttention<double>(x, x, x, AttentionMask::fromAllowed(tril));
        const auto wrong
            = scaledDotProductAttention<double>(x, x, x, AttentionMask::fromMasked(tril));
        ATTN_COMPARE_CLOSE(right.weights, causal.weights, 1e-15, 0.0);
        QVERIFY((wrong.weights - causal.weights).cwiseAbs().maxCoeff() > 0.1);
        QCOMPARE(wrong.weights(0, n - 1) > 0.0, true); // attends to the future
        QCOMPARE(wrong.fullyMasked.back(), std::uint8_t(1)); // the last row sees nothing
    }

    void shapeErrors_data()
    {
        QTest::addColumn<int>("nQ");
        QTest::addColumn<int>("dQ");
        QTest::addColumn<int>("nK");
        QTest::addColumn<int>("dK");
        QTest::addColumn<int>("nV");
        QTest::addColumn<int>("dV");
        QTest::addColumn<QString>("needle");
        QTest::newRow("d_k differs") << 5 << 4 << 5 << 8 << 5 << 4
                                     << QStringLiteral("key has d_k = 8 but query has d_k = 4 "
                                                       "(query 5\u00d74, key 5\u00d78)");
        QTest::newRow("n_k differs") << 5 << 4 << 5 << 4 << 6 << 3
                                     << QStringLiteral("value has n_k = 6 rows but key has n_k "
                                                       "= 5 (key 5\u00d74, value 6\u00d73)");
    }
    void shapeErrors()
    {
        QFETCH(int, nQ);
        QFETCH(int, dQ);
        QFETCH(int, nK);
        QFETCH(int, dK);
        QFETCH(int, nV);
        QFETCH(int, dV);
        QFETCH(QString, needle);
        const MatrixD q = MatrixD::Ones(nQ, dQ), k = MatrixD::Ones(nK, dK),
                      v = MatrixD::Ones(nV, dV);
        expectThrowsContaining<InvalidArgument>([&] { scaledDotProductAttention<double>(q, k, v); },
                                                needle);
    }

    void maskShapeError()
    {
        const MatrixD x = MatrixD::Ones(5, 4);
        expectThrowsContaining<InvalidArgument>(
            [&] { scaledDotProductAttention<double>(x, x, x, AttentionMask::causal(4, 4)); },
            QStringLiteral("mask is 4\u00d74 but the attention is 5\u00d75"));
    }

    void nonFiniteInputs_data()
    {
        QTest::addColumn<int>("which");
        QTest::addColumn<double>("value");
        QTest::addColumn<QString>("needle");
        QTest::newRow("NaN in query")
            << 0 << std::nan("") << QStringLiteral("query has NaN at row 2, col 3");
        QTest::newRow("+inf in key") << 1 << kInf << QStringLiteral("key has +inf at row 2, col 3");
        QTest::newRow("-inf in value")
            << 2 << -kInf << QStringLiteral("value has -inf at row 2, col 3");
    }
    void nonFiniteInputs()
    {
        QFETCH(int, which);
        QFETCH(double, value);
        QFETCH(QString, needle);
        MatrixF m[3] = {MatrixF::Ones(4, 5), MatrixF::Ones(4, 5), MatrixF::Ones(4, 5)};
        m[which](2, 3) = float(value);
        expectThrowsContaining<NonFiniteInput>(
            [&] { scaledDotProductAttention<float>(m[0], m[1], m[2]); }, needle);
    }

    void overflowingScoresAreReported()
    {
        // Finite float32 inputs whose scores overflow to +inf are reported, not turned into NaN.
        MatrixF q = MatrixF::Constant(2, 4, 1e20f);
        expectThrowsContaining<NonFiniteInput>([&] { scaledDotProductAttention<float>(q, q, q); },
                                               QStringLiteral("row 0, col 0"));
    }

    void rejectsPositiveInfiniteFill()
    {
        AttentionOptions o;
        o.maskFill = kInf;
        const MatrixD x = MatrixD::Ones(2, 2);
        QVERIFY_THROWS_EXCEPTION(InvalidArgument,
                                 scaledDotProductAttention<double>(x, x, x, {}, o));
    }

    void noKeys()
    {
        // n_k = 0: every query row is fully masked, output is zero.
        const MatrixD q = MatrixD::Ones(3, 2), k(0, 2), v(0, 5);
        const AttentionResult<double> r = scaledDotProductAttention<double>(q, k, v);
        QCOMPARE(r.output.rows(), Index(3));
        QCOMPARE(r.output.cols(), Index(5));
        QCOMPARE(r.output.cwiseAbs().sum(), 0.0);
        QCOMPARE(r.fullyMasked, (std::vector<std::uint8_t> {1, 1, 1}));
    }
};

QTEST_APPLESS_MAIN(TestAttention)
#include "tst_attention.moc"
