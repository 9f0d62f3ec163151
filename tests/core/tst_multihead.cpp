// MultiheadAttention (core/attention/multihead.h): parameter count and layout, h = 1 with identity
// projections equals plain attention, permutation equivariance without positions (E5), the
// causal mask blocks the future (E7), per-head weights, Xavier initialisation, shape errors.
// (Comparisons with PyTorch fixtures live in tst_multihead_torch.)

#include "core/attention/multihead.h"
#include "core/attention/positional.h"
#include "core/random/random.h"
#include "testutil.h"

#include <QTest>

#include <cmath>
#include <vector>

using namespace attn;

namespace {

template<typename T> double tolerance()
{
    return sizeof(T) == 4 ? 1e-5 : 1e-12;
}

template<typename T> Matrix<T> permuteRows(const Matrix<T> &m, const std::vector<Index> &perm)
{
    Matrix<T> out(m.rows(), m.cols());
    for (Index i = 0; i < m.rows(); ++i)
        out.row(i) = m.row(perm[std::size_t(i)]);
    return out;
}

std::vector<Index> permutation(Generator &rng, Index n)
{
    const std::vector<std::int64_t> p = rng.permutation(n);
    return std::vector<Index>(p.begin(), p.end());
}

/// A layer with random weights and non-zero biases.
template<typename T> MultiheadAttention<T> randomLayer(Index d, Index h, std::uint64_t seed)
{
    MultiheadAttention<T> mha(d, h);
    Generator rng {seed};
    mha.initXavier(rng);
    mha.inProjBias() = (rng.standardNormal(3 * d, 1) * 0.1).cast<T>();
    mha.outProjBias() = (rng.standardNormal(d, 1) * 0.1).cast<T>();
    return mha;
}

} // namespace

class TestMultihead : public QObject
{
    Q_OBJECT

private:
    template<typename T> void identityEqualsPlain(Index nQ, Index nK, Index d)
    {
        MultiheadAttention<T> mha(d, 1);
        mha.setIdentity();
        Generator rng {5};
        const Matrix<T> q = rng.standardNormal(nQ, d).cast<T>();
        const Matrix<T> k = rng.standardNormal(nK, d).cast<T>();
        const Matrix<T> v = rng.standardNormal(nK, d).cast<T>();
        const AttentionMask mask = nQ == nK ? AttentionMask::causal(nQ, nK) : AttentionMask();
        const MultiheadResult<T> r = mha.forward(q, k, v, mask);
        const AttentionResult<T> plain = scaledDotProductAttention<T>(q, k, v, mask);
        ATTN_COMPARE_CLOSE(r.output, plain.output, tolerance<T>(), 0.0);
        ATTN_COMPARE_CLOSE(r.weights.at(0), plain.weights, tolerance<T>(), 0.0);
        ATTN_COMPARE_CLOSE(r.weightsMean, plain.weights, tolerance<T>(), 0.0);
        ATTN_COMPARE_CLOSE(r.scores.at(0), plain.scores, tolerance<T>(), 0.0);
        QCOMPARE(r.scale, plain.scale);
    }

    template<typename T> void permutationEquivariant(Index n, Index d, Index h)
    {
        // Self-attention without positions: output(P x) = P output(x) (E5).
        const MultiheadAttention<T> mha = randomLayer<T>(d, h, 42);
        Generator rng {7};
        const Matrix<T> x = rng.standardNormal(n, d).cast<T>();
        const std::vector<Index> perm = permutation(rng, n);
        const Matrix<T> px = permuteRows(x, perm);
        const MultiheadResult<T> a = mha.forward(x, x, x);
        const MultiheadResult<T> b = mha.forward(px, px, px);
        ATTN_COMPARE_CLOSE(b.output, permuteRows(a.output, perm), tolerance<T>(), 0.0);

        // Permuting keys and values together (queries fixed) changes nothing.
        const MultiheadResult<T> c = mha.forward(x, px, px);
        ATTN_COMPARE_CLOSE(c.output, a.output, tolerance<T>(), 0.0);

        // With sinusoidal positions added at fixed positions the equality breaks.
        const Matrix<T> pe = sinusoidalEncoding(n, d).cast<T>();
        const Matrix<T> xp = x + pe, pxp = px + pe;
        const MultiheadResult<T> e = mha.forward(xp, xp, xp);
        const MultiheadResult<T> f = mha.forward(pxp, pxp, pxp);
        QVERIFY((f.output - permuteRows(e.output, perm)).cwiseAbs().maxCoeff() > 1e-3);
    }

    template<typename T> void causalBlocksFuture(Index n, Index d, Index h, Index k)
    {
        // E7: replace positions ≥ k; with the causal mask outputs < k move by exactly 0.0.
        const MultiheadAttention<T> mha = randomLayer<T>(d, h, 3);
        Generator rng {8};
        const Matrix<T> x = rng.standardNormal(n, d).cast<T>();
        Matrix<T> x2 = x;
        x2.bottomRows(n - k) = rng.standardNormal(n - k, d).cast<T>();
        const AttentionMask causal = AttentionMask::causal(n, n);
        const MultiheadResult<T> a = mha.forward(x, x, x, causal);
        const MultiheadResult<T> b = mha.forward(x2, x2, x2, causal);
        QCOMPARE((a.output.topRows(k) - b.output.topRows(k)).cwiseAbs().maxCoeff(), T(0));
        QVERIFY((a.output.bottomRows(n - k) - b.output.bottomRows(n - k)).cwiseAbs().maxCoeff()
                > T(1e-4));
        for (const Matrix<T> &w : a.weights)
            for (Index i = 0; i < n; ++i)
                for (Index j = i + 1; j < n; ++j)
                    QCOMPARE(w(i, j), T(0));
        // Without the mask, every position moves.
        const MultiheadResult<T> c = mha.forward(x, x, x);
        const MultiheadResult<T> e = mha.forward(x2, x2, x2);
        for (Index i = 0; i < n; ++i)
            QVERIFY((c.output.row(i) - e.output.row(i)).cwiseAbs().maxCoeff() > T(0));
    }

    template<typename T> void headsUseTheirColumns(Index nQ, Index nK, Index d, Index h)
    {
        // Head i equals plain attention on columns i·d_k … (i+1)·d_k − 1 of the projections.
        const MultiheadAttention<T> mha = randomLayer<T>(d, h, 9);
        Generator rng {10};
        const Matrix<T> query = rng.standardNormal(nQ, d).cast<T>();
        const Matrix<T> key = rng.standardNormal(nK, d).cast<T>();
        const Matrix<T> value = rng.standardNormal(nK, d).cast<T>();
        const AttentionMask mask = AttentionMask::keyPaddingLast(nQ, nK, 1);
        const MultiheadResult<T> r = mha.forward(query, key, value, mask);
        QCOMPARE(Index(r.weights.size()), h);
        const Index dk = d / h;
        const Matrix<T> &w = mha.inProjWeight();
        const Vector<T> &b = mha.inProjBias();
        // q = query · W_Qᵀ + b_Q etc., computed here in double.
        const MatrixD q
            = (query.template cast<double>() * w.topRows(d).template cast<double>().transpose())
                  .rowwise()
            + b.segment(0, d).template cast<double>().transpose();
        const MatrixD k
            = (key.template cast<double>() * w.middleRows(d, d).template cast<double>().transpose())
                  .rowwise()
            + b.segment(d, d).template cast<double>().transpose();
        const MatrixD v
            = (value.template cast<double>() * w.bottomRows(d).template cast<double>().transpose())
                  .rowwise()
            + b.segment(2 * d, d).template cast<double>().transpose();
        MatrixD concat(nQ, d), mean = MatrixD::Zero(nQ, nK);
        for (Index i = 0; i < h; ++i) {
            const AttentionResult<double> head = scaledDotProductAttention<double>(
                q.middleCols(i * dk, dk), k.middleCols(i * dk, dk), v.middleCols(i * dk, dk), mask);
            ATTN_COMPARE_CLOSE(r.weights[std::size_t(i)].template cast<double>(), head.weights,
                               tolerance<T>(), 0.0);
            QCOMPARE(r.fullyMasked[std::size_t(i)], head.fullyMasked);
            concat.middleCols(i * dk, dk) = head.output;
            mean += head.weights;
            QCOMPARE(r.weights[std::size_t(i)](0, nK - 1), T(0)); // the padding key
        }
        mean /= double(h);
        ATTN_COMPARE_CLOSE(r.weightsMean.template cast<double>(), mean, tolerance<T>(), 0.0);
        const MatrixD out
            = (concat * mha.outProjWeight().template cast<double>().transpose()).rowwise()
            + mha.outProjBias().template cast<double>().transpose();
        ATTN_COMPARE_CLOSE(r.output.template cast<double>(), out, tolerance<T>(), tolerance<T>());
        QCOMPARE(r.scale, 1.0 / std::sqrt(double(dk)));
    }

private slots:
    void parameterCount_data()
    {
        QTest::addColumn<int>("d");
        QTest::addColumn<int>("h");
        QTest::addColumn<bool>("bias");
        QTest::addColumn<int>("expected");
        // 4d² + 4d whatever h is: 1088 at d = 16 (E4).
        QTest::newRow("d=16 h=1") << 16 << 1 << true << 1088;
        QTest::newRow("d=16 h=4") << 16 << 4 << true << 1088;
        QTest::newRow("d=16 h=16") << 16 << 16 << true << 1088;
        QTest::newRow("d=16 h=4 no bias") << 16 << 4 << false << 1024;
        QTest::newRow("d=512 h=8") << 512 << 8 << true << 4 * 512 * 512 + 4 * 512;
    }
    void parameterCount()
    {
        QFETCH(int, d);
        QFETCH(int, h);
        QFETCH(bool, bias);
        QFETCH(int, expected);
        const MultiheadAttention<double> mha(d, h, bias);
        QCOMPARE(mha.parameterCount(), Index(expected));
        // The count is the number of stored entries (biases only when enabled).
        const Index stored = mha.inProjWeight().size() + mha.outProjWeight().size()
            + (bias ? mha.inProjBias().size() + mha.outProjBias().size() : 0);
        QCOMPARE(stored, Index(expected));
        QCOMPARE(mha.inProjWeight().rows(), Index(3 * d));
        QCOMPARE(mha.headDim(), Index(d / h));
    }

    void rejectsIndivisibleHeads_data()
    {
        QTest::addColumn<int>("d");
        QTest::addColumn<int>("h");
        QTest::newRow("16 / 5") << 16 << 5;
        QTest::newRow("10 / 4") << 10 << 4;
        QTest::newRow("7 / 2") << 7 << 2;
        QTest::newRow("h = 0") << 16 << 0;
        QTest::newRow("d = 0") << 0 << 1;
    }
    void rejectsIndivisibleHeads()
    {
        QFETCH(int, d);
        QFETCH(int, h);
        try {
            MultiheadAttention<float> mha(d, h);
            QFAIL("no exception");
        } catch (const InvalidArgument &e) {
            const QString msg = QString::fromUtf8(e.what());
            QVERIFY2(msg.contains(QStringLiteral("d_model = %1").arg(d))
                         && msg.contains(QStringLiteral("h = %1").arg(h)),
                     qPrintable(msg));
        }
    }

    void identityEqualsPlainAttention_data()
    {
        QTest::addColumn<bool>("float32");
        QTest::addColumn<int>("nQ");
        QTest::addColumn<int>("nK");
        QTest::addColumn<int>("d");
        for (bool f32 : {true, false}) {
            const char *t = f32 ? "float32" : "float64";
            QTest::addRow("%s self n=6 d=16 causal", t) << f32 << 6 << 6 << 16;
            QTest::addRow("%s cross 4x9 d=5", t) << f32 << 4 << 9 << 5;
        }
    }
    void identityEqualsPlainAttention()
    {
        QFETCH(bool, float32);
        QFETCH(int, nQ);
        QFETCH(int, nK);
        QFETCH(int, d);
        if (float32)
            identityEqualsPlain<float>(nQ, nK, d);
        else
            identityEqualsPlain<double>(nQ, nK, d);
    }

    void permutationEquivariance_data()
    {
        QTest::addColumn<bool>("float32");
        QTest::addColumn<int>("n");
        QTest::addColumn<int>("d");
        QTest::addColumn<int>("h");
        for (bool f32 : {true, false}) {
            const char *t = f32 ? "float32" : "float64";
            QTest::addRow("%s n=7 d=16 h=4 (E5)", t) << f32 << 7 << 16 << 4;
            QTest::addRow("%s n=20 d=12 h=1", t) << f32 << 20 << 12 << 1;
            QTest::addRow("%s n=9 d=16 h=16", t) << f32 << 9 << 16 << 16;
        }
    }
    void permutationEquivariance()
    {
        QFETCH(bool, float32);
        QFETCH(int, n);
        QFETCH(int, d);
        QFETCH(int, h);
        if (float32)
            permutationEquivariant<float>(n, d, h);
        else
            permutationEquivariant<double>(n, d, h);
    }

    void causalBlocksFuture_data()
    {
        QTest::addColumn<bool>("float32");
        QTest::addColumn<int>("n");
        QTest::addColumn<int>("d");
        QTest::addColumn<int>("h");
        QTest::addColumn<int>("k");
        for (bool f32 : {true, false}) {
            const char *t = f32 ? "float32" : "float64";
            QTest::addRow("%s n=8 d=16 h=4 k=5 (E7)", t) << f32 << 8 << 16 << 4 << 5;
            QTest::addRow("%s n=30 d=24 h=3 k=11", t) << f32 << 30 << 24 << 3 << 11;
        }
    }
    void causalBlocksFuture()
    {
        QFETCH(bool, float32);
        QFETCH(int, n);
        QFETCH(int, d);
        QFETCH(int, h);
        QFETCH(int, k);
        if (float32)
            causalBlocksFuture<float>(n, d, h, k);
        else
            causalBlocksFuture<double>(n, d, h, k);
    }

    void headsUseTheirColumns_data()
    {
        QTest::addColumn<bool>("float32");
        QTest::addColumn<int>("h");
        for (bool f32 : {true, false})
            for (int h : {1, 2, 4, 8})
                QTest::addRow("%s h=%d", f32 ? "float32" : "float64", h) << f32 << h;
    }
    void headsUseTheirColumns()
    {
        QFETCH(bool, float32);
        QFETCH(int, h);
        if (float32)
            headsUseTheirColumns<float>(5, 7, 16, h);
        else
            headsUseTheirColumns<double>(5, 7, 16, h);
    }

    void xavierInitialisation()
    {
        // Uniforms u drawn in C order, in_proj_weight first, mapped to bound·(2u − 1).
        const Index d = 16;
        MultiheadAttention<double> mha(d, 4);
        Generator rng {123};
        mha.initXavier(rng);
        Generator ref {123};
        const double inBound = std::sqrt(6.0 / (d + 3 * d));
        const double outBound = 1.0 / std::sqrt(double(d));
        for (Index i = 0; i < 3 * d; ++i)
            for (Index j = 0; j < d; ++j)
                QCOMPARE(mha.inProjWeight()(i, j), inBound * (2.0 * ref.random() - 1.0));
        for (Index i = 0; i < d; ++i)
            for (Index j = 0; j < d; ++j)
                QCOMPARE(mha.outProjWeight()(i, j), outBound * (2.0 * ref.random() - 1.0));
        QCOMPARE(mha.inProjBias().cwiseAbs().sum(), 0.0);
        QCOMPARE(mha.outProjBias().cwiseAbs().sum(), 0.0);
        QVERIFY(mha.inProjWeight().cwiseAbs().maxCoeff() <= inBound);
        QVERIFY(mha.outProjWeight().cwiseAbs().maxCoeff() <= outBound);
        // The generator moved on by exactly 4d² draws.
        QCOMPARE(rng.random(), ref.random());
    }

    void fullyMaskedRowsAreZeroAndFlagged()
    {
        const MultiheadAttention<double> mha = randomLayer<double>(8, 2, 4);
        Generator rng {1};
        const MatrixD x = rng.standardNormal(3, 8);
        MatrixB masked = MatrixB::Zero(3, 3);
        masked.row(1).setOnes();
        const MultiheadResult<double> r = mha.forward(x, x, x, AttentionMask::fromMasked(masked));
        for (std::size_t i = 0; i < 2; ++i) {
            QCOMPARE(r.fullyMasked[i], (std::vector<std::uint8_t> {0, 1, 0}));
            QCOMPARE(r.weights[i].row(1).cwiseAbs().sum(), 0.0);
        }
        QVERIFY(r.output.allFinite());
        // The fully masked row's output is the output projection's bias (zero head outputs).
        ATTN_COMPARE_CLOSE(r.output.row(1), mha.outProjBias().transpose(), 1e-15, 0.0);
    }

    void shapeErrors()
    {
        const MultiheadAttention<double> mha(8, 2);
        const MatrixD ok = MatrixD::Ones(3, 8), narrow = MatrixD::Ones(3, 6),
                      other = MatrixD::Ones(4, 8);
        try {
            mha.forward(narrow, ok, ok);
            QFAIL("no exception");
        } catch (const InvalidArgument &e) {
            const QString msg = QString::fromUtf8(e.what());
            QVERIFY2(msg.contains(QStringLiteral("query has 6 columns but d_model = 8")),
                     qPrintable(msg));
        }
        QVERIFY_THROWS_EXCEPTION(InvalidArgument, mha.forward(ok, ok, other));
        QVERIFY_THROWS_EXCEPTION(InvalidArgument,
                                 mha.forward(ok, ok, ok, AttentionMask::causal(4, 4)));
        MatrixD bad = ok;
        bad(2, 1) = std::nan("");
        QVERIFY_THROWS_EXCEPTION(NonFiniteInput, mha.forward(ok, bad, ok));

        MultiheadAttention<double> layer(8, 2);
        try {
            layer.setParameters(MatrixD::Zero(8, 8), VectorD::Zero(24), MatrixD::Zero(8, 8),
                                VectorD::Zero(8));
            QFAIL("no exception");
        } catch (const InvalidArgument &e) {
            const QString msg = QString::fromUtf8(e.what());
            QVERIFY2(msg.contains(QStringLiteral("in_proj_weight must be 24\u00d78, got 8\u00d78")),
                     qPrintable(msg));
        }
        QVERIFY_THROWS_EXCEPTION(InvalidArgument,
                                 layer.setParameters(MatrixD::Zero(24, 8), VectorD::Zero(23),
                                                     MatrixD::Zero(8, 8), VectorD::Zero(8)));
        layer.setParameters(MatrixD::Ones(24, 8), VectorD::Ones(24), MatrixD::Ones(8, 8),
                            VectorD::Ones(8));
        QCOMPARE(layer.inProjBias()(23), 1.0);
    }
};

QTEST_APPLESS_MAIN(TestMultihead)
#include "tst_multihead.moc"
