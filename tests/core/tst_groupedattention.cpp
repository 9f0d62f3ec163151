// Grouped-query attention with RoPE, ALiBi, sliding windows and attention sinks
// (core/attention/groupedattention.h, core/attention/positional.h, core/attention/mask.h) against
// PyTorch fixtures from tests/reference/make_modern_fixtures.py, plus the invariants: RoPE's shift
// invariance, the two RoPE conventions as one rotation up to a permutation, ALiBi's slopes vs the
// reference rule for every H in 1…64, g = h equals plain multi-head, g = 1 equals one shared head.

#include "core/attention/groupedattention.h"
#include "core/attention/multihead.h"
#include "core/io/npy.h"
#include "core/kernels/kernels.h"
#include "core/random/random.h"
#include "testutil.h"

#include <QTest>

#include <cmath>
#include <map>

using namespace attn;

namespace {

MatrixD randn(Generator &rng, Index rows, Index cols)
{
    MatrixD m(rows, cols);
    for (Index i = 0; i < rows; ++i)
        for (Index j = 0; j < cols; ++j)
            m(i, j) = rng.standardNormal();
    return m;
}

/// The reference code's get_slopes (ofirpress/attention_with_linear_biases), written from its
/// description independently of core/attention/positional.cpp: start = 2^(−2^−(log₂n − 3)), slopes
/// start·start^i for a power of two n; otherwise the slopes of the closest lower power of two,
/// then the even-indexed slopes of twice that power, as many as are missing.
std::vector<double> referenceSlopes(int n)
{
    const double log2n = std::log2(double(n));
    if (log2n == std::floor(log2n)) {
        const double start = std::pow(2.0, -std::pow(2.0, -(log2n - 3)));
        std::vector<double> s;
        for (int i = 0; i < n; ++i)
            s.push_back(start * std::pow(start, double(i)));
        return s;
    }
    const int closest = 1 << int(std::floor(log2n));
    std::vector<double> s = referenceSlopes(closest);
    const std::vector<double> next = referenceSlopes(2 * closest);
    for (int i = 0; int(s.size()) < n; i += 2)
        s.push_back(next[std::size_t(i)]);
    return s;
}

/// One RoPE score: q rotated at position m, k at position n, dot product.
double ropeScore(const MatrixD &q, const MatrixD &k, Index m, Index n, RopeConvention c,
                 double base)
{
    MatrixD qr = q, kr = k;
    applyRope<double>(qr, c, base, m);
    applyRope<double>(kr, c, base, n);
    return qr.row(0).dot(kr.row(0));
}

} // namespace

class TestGroupedAttention : public QObject
{
    Q_OBJECT

private slots:
    // Heads pooled to key/value heads: the mean of each group, in order; g = h unchanged; a g
    // that does not divide h and columns that are not h heads refused.
    void meanPoolHeadsAveragesGroups()
    {
        MatrixD x(2, 8);
        x << 1, 2, 3, 4, 5, 6, 7, 8, //
            -1, -2, -3, -4, -5, -6, -7, -8;
        MatrixD expected(2, 4);
        expected << 2, 3, 6, 7, //
            -2, -3, -6, -7;
        QCOMPARE(meanPoolHeads<double>(x, 4, 2), expected);
        MatrixD one(2, 2);
        one << 4, 5, -4, -5;
        QCOMPARE(meanPoolHeads<double>(x, 4, 1), one);
        QCOMPARE(meanPoolHeads<double>(x, 4, 4), x);
        QVERIFY_THROWS_EXCEPTION(InvalidArgument, meanPoolHeads<double>(x, 4, 3));
        QVERIFY_THROWS_EXCEPTION(InvalidArgument, meanPoolHeads<double>(x, 3, 1));
    }

    void torchReference_data()
    {
        QTest::addColumn<QString>("fixture");
        for (const char *f :
             {"gqa_h8_g2_float64", "gqa_h6_g3_cross_float64", "mqa_h4_g1_causal_float64",
              "gqa_h4_g2_float32", "rope_interleaved_float64", "rope_half_float64",
              "rope_half_gqa_base500_float64", "rope_interleaved_float32",
              "alibi_h8_causal_float64", "alibi_h12_bidirectional_float64", "alibi_h6_float32",
              "window4_float64", "window4_sinks2_float64", "window3_sinks1_padding_alibi_float64",
              "window5_sinks3_rope_gqa_float32"})
            QTest::newRow(f) << QString::fromLatin1(f);
    }
    void torchReference()
    {
        // PyTorch float64 (repeat_interleave, then softmax(q kᵀ · scale + bias + mask) v):
        // every head's weights and the concatenated output, 1e-12 in float64, 1e-5 in float32.
        QFETCH(QString, fixture);
        std::map<std::string, NpyArray> c;
        for (auto &[member, array] :
             readNpz(QStringLiteral(ATTN_FIXTURE_DIR "/modern/%1.npz").arg(fixture).toStdString()))
            c.emplace(member, std::move(array));
        const Index h = c.at("num_heads").toScalarInt("num_heads");
        const Index g = c.at("num_kv_heads").toScalarInt("num_kv_heads");
        const Index nQ = Index(c.at("query").shape[0]);
        const Index nK = Index(c.at("key").shape[0]);
        const Index window = c.at("window").toScalarInt("window");
        const Index sinks = c.at("sinks").toScalarInt("sinks");
        AttentionMask mask;
        if (window > 0)
            mask = AttentionMask::slidingWindow(nQ, nK, window, sinks);
        else if (c.at("causal").toScalarInt("causal") != 0)
            mask = AttentionMask::causal(nQ, nK);
        if (const Index padding = c.at("padding").toScalarInt("padding"); padding > 0)
            mask = mask | AttentionMask::keyPaddingLast(nQ, nK, padding);
        PositionOptions pos;
        const std::int64_t scheme = c.at("positional").toScalarInt("positional");
        pos.scheme = scheme == 2 ? PositionalScheme::Rope
            : scheme == 3        ? PositionalScheme::Alibi
                                 : PositionalScheme::None;
        pos.ropeConvention = c.at("rope_convention").toScalarInt("rope_convention") == 0
            ? RopeConvention::Interleaved
            : RopeConvention::Half;
        pos.ropeBase = c.at("rope_base").values.at(0);
        AttentionOptions options; // the default 1/√d_k; the fixture's scale checks it
        const bool float32 = c.at("query").type == NpyType::Float32;
        const double tol = float32 ? 1e-5 : 1e-12;

        const auto check = [&](auto r) {
            QCOMPARE(r.weights.size(), std::size_t(h));
            QVERIFY(std::abs(r.scale - c.at("scale").values.at(0)) <= 1e-15);
            for (Index i = 0; i < h; ++i) {
                const MatrixD expected = c.at("expected_weights").slice<double>(i, "weights");
                ATTN_COMPARE_CLOSE(r.weights[std::size_t(i)].template cast<double>().eval(),
                                   expected, tol, 0.0);
            }
            ATTN_COMPARE_CLOSE(r.output.template cast<double>().eval(),
                               c.at("expected_output").toMatrix<double>("output"), tol, 0.0);
            if (pos.scheme == PositionalScheme::Alibi) {
                const VectorD slopes = c.at("alibi_slopes").toVector<double>("alibi_slopes");
                QCOMPARE(Index(r.alibiSlopes.size()), h);
                for (Index i = 0; i < h; ++i)
                    QVERIFY(std::abs(r.alibiSlopes[std::size_t(i)] - slopes(i))
                            <= 1e-15 * slopes(i));
            }
        };
        if (float32)
            check(groupedQueryAttention<float>(
                c.at("query").toMatrix<float>("query"), c.at("key").toMatrix<float>("key"),
                c.at("value").toMatrix<float>("value"), h, g, mask, options, pos));
        else
            check(groupedQueryAttention<double>(
                c.at("query").toMatrix<double>("query"), c.at("key").toMatrix<double>("key"),
                c.at("value").toMatrix<double>("value"), h, g, mask, options, pos));

        // The three kernels take the same masks (window and sinks in their tiles): per head
        // without positions, against the same fixture.
        if (pos.scheme == PositionalScheme::None && !float32) {
            const MatrixD q = c.at("query").toMatrix<double>("query");
            const MatrixD k = c.at("key").toMatrix<double>("key");
            const MatrixD v = c.at("value").toMatrix<double>("value");
            const Index dK = q.cols() / h, dV = v.cols() / g;
            const MatrixD expected = c.at("expected_output").toMatrix<double>("output");
            for (const KernelKind kind :
                 {KernelKind::Materialized, KernelKind::Streaming, KernelKind::Loop}) {
                for (Index i = 0; i < h; ++i) {
                    const Index kv = i * g / h;
                    const MatrixD out = attentionKernel<double>(
                        kind, q.middleCols(i * dK, dK), k.middleCols(kv * dK, dK),
                        v.middleCols(kv * dV, dV), c.at("scale").values.at(0), mask);
                    ATTN_COMPARE_CLOSE(out, expected.middleCols(i * dV, dV).eval(), 1e-12, 0.0);
                }
            }
        }
    }

    void alibiSlopesReferenceRule()
    {
        // Every H in 1…64 against the reference rule. The power-of-two formula 2^(−8(h+1)/H)
        // holds for powers of two only: applied to H = 12 it is off by 45× at head 8.
        for (int n = 1; n <= 64; ++n) {
            const std::vector<double> expected = referenceSlopes(n);
            const std::vector<double> got = alibiSlopes(n);
            QCOMPARE(got.size(), std::size_t(n));
            double worstRatio = 1;
            for (int i = 0; i < n; ++i) {
                const double e = expected[std::size_t(i)], a = got[std::size_t(i)];
                QVERIFY2(std::abs(a - e) <= 1e-14 * e,
                         qPrintable(QStringLiteral("H = %1, head %2: %3 vs %4")
                                        .arg(n)
                                        .arg(i)
                                        .arg(a, 0, 'g', 17)
                                        .arg(e, 0, 'g', 17)));
                const double naive = std::pow(2.0, -8.0 * (i + 1) / n);
                worstRatio = std::max(worstRatio, std::max(a / naive, naive / a));
            }
            const bool powerOfTwo = (n & (n - 1)) == 0;
            QVERIFY2(powerOfTwo ? worstRatio < 1 + 1e-14 : worstRatio > 1.1,
                     qPrintable(QStringLiteral("H = %1: %2").arg(n).arg(worstRatio)));
            if (n == 12)
                QVERIFY(std::abs(worstRatio - std::pow(2.0, 5.5)) < 1e-9);
        }
        const std::vector<double> s8 = alibiSlopes(8);
        QCOMPARE(s8.front(), 0.5);
        QCOMPARE(s8.back(), 1.0 / 256);
        QVERIFY_THROWS_EXCEPTION(InvalidArgument, alibiSlopes(0));
    }

    void alibiBias()
    {
        const MatrixD causal = attn::alibiBias(3, 3, 0.5, true);
        const MatrixD sym = attn::alibiBias(3, 3, 0.5, false);
        QCOMPARE(causal(2, 0), -1.0);
        QCOMPARE(causal(0, 2), 1.0); // above the diagonal: masked by the causal mask
        QCOMPARE(sym(0, 2), -1.0);
        QCOMPARE(sym(1, 1), 0.0);
    }

    void ropeShiftInvariance_data()
    {
        QTest::addColumn<bool>("interleaved");
        QTest::addColumn<double>("base");
        QTest::newRow("interleaved 10000") << true << 10000.0;
        QTest::newRow("half 10000") << false << 10000.0;
        QTest::newRow("half 500") << false << 500.0;
        QTest::newRow("interleaved 1e6") << true << 1e6;
    }
    void ropeShiftInvariance()
    {
        // score(m, n) = score(m + t, n + t): the rotated dot product depends on n − m only.
        QFETCH(bool, interleaved);
        QFETCH(double, base);
        const RopeConvention c = interleaved ? RopeConvention::Interleaved : RopeConvention::Half;
        Generator rng(14);
        double worst = 0;
        for (int trial = 0; trial < 20; ++trial) {
            const MatrixD q = randn(rng, 1, 16), k = randn(rng, 1, 16);
            for (const Index m : {0, 3, 17})
                for (const Index n : {0, 5, 40})
                    for (const Index t : {1, 7, 100, 1000}) {
                        const double a = ropeScore(q, k, m, n, c, base);
                        const double b = ropeScore(q, k, m + t, n + t, c, base);
                        worst = std::max(worst, std::abs(a - b));
                    }
        }
        QVERIFY2(worst <= 1e-11, qPrintable(QString::number(worst, 'g', 17)));
        // Not trivially constant: moving only the key changes the score.
        const MatrixD q = randn(rng, 1, 16), k = randn(rng, 1, 16);
        QVERIFY(std::abs(ropeScore(q, k, 0, 0, c, base) - ropeScore(q, k, 0, 3, c, base)) > 1e-3);
    }

    void ropeConventionsArePermutations()
    {
        // half(x)[:, perm] == interleaved(x[:, perm]) with perm = [0, d/2, 1, d/2 + 1, …].
        Generator rng(5);
        const Index d = 12;
        const MatrixD x = randn(rng, 9, d);
        MatrixD half = x;
        applyRope<double>(half, RopeConvention::Half, 10000.0, 3);
        MatrixD xp(9, d), halfP(9, d);
        for (Index i = 0; i < d / 2; ++i) {
            xp.col(2 * i) = x.col(i);
            xp.col(2 * i + 1) = x.col(i + d / 2);
            halfP.col(2 * i) = half.col(i);
            halfP.col(2 * i + 1) = half.col(i + d / 2);
        }
        applyRope<double>(xp, RopeConvention::Interleaved, 10000.0, 3);
        ATTN_COMPARE_CLOSE(xp, halfP, 1e-15, 0.0);
        // Row r is position r: row 0 (position 0) is unchanged, the others rotate; rows keep
        // their norms.
        MatrixD zero = x;
        applyRope<double>(zero, RopeConvention::Interleaved);
        ATTN_COMPARE_CLOSE(zero.row(0).eval(), x.row(0).eval(), 0.0, 0.0);
        QVERIFY((zero.row(1) - x.row(1)).cwiseAbs().maxCoeff() > 1e-3);
        ATTN_COMPARE_CLOSE(half.rowwise().norm().eval(), x.rowwise().norm().eval(), 1e-14, 0.0);
        QCOMPARE(ropeFrequency(1, 4, 10000.0), 0.01);
        MatrixD odd = randn(rng, 2, 5);
        QVERIFY_THROWS_EXCEPTION(InvalidArgument,
                                 applyRope<double>(odd, RopeConvention::Half, 10000.0));
        QVERIFY_THROWS_EXCEPTION(InvalidArgument,
                                 applyRope<double>(zero, RopeConvention::Half, -1.0));
    }

    void allKvHeadsEqualsMultihead()
    {
        // g = h: the projections of torch.nn.MultiheadAttention fed as projected heads give its
        // weights, and its output after out_proj.
        Generator rng(21);
        const Index d = 24, h = 4, n = 9;
        MultiheadAttention<double> mha(d, h);
        mha.initXavier(rng);
        for (Index i = 0; i < mha.inProjBias().size(); ++i)
            mha.inProjBias()(i) = 0.1 * rng.standardNormal();
        const MatrixD x = randn(rng, n, d);
        const AttentionMask mask = AttentionMask::causal(n, n);
        const MultiheadResult<double> ref = mha.forward(x, x, x, mask);
        const MatrixD &w = mha.inProjWeight();
        const VectorD &b = mha.inProjBias();
        const MatrixD q = (x * w.topRows(d).transpose()).rowwise() + b.segment(0, d).transpose();
        const MatrixD k
            = (x * w.middleRows(d, d).transpose()).rowwise() + b.segment(d, d).transpose();
        const MatrixD v
            = (x * w.bottomRows(d).transpose()).rowwise() + b.segment(2 * d, d).transpose();
        const GroupedAttentionResult<double> r = groupedQueryAttention<double>(q, k, v, h, h, mask);
        for (Index i = 0; i < h; ++i) {
            QCOMPARE(r.kvHeadOf[std::size_t(i)], i);
            ATTN_COMPARE_CLOSE(r.weights[std::size_t(i)], ref.weights[std::size_t(i)], 1e-14, 0.0);
        }
        const MatrixD out = (r.output * mha.outProjWeight().transpose()).rowwise()
            + mha.outProjBias().transpose();
        ATTN_COMPARE_CLOSE(out, ref.output, 1e-13, 0.0);
    }

    void oneKvHeadIsShared()
    {
        // g = 1 (multi-query): every query head attends the one key/value head, as plain
        // scaled dot-product attention of its own queries.
        Generator rng(22);
        const Index h = 6, dK = 5, n = 8;
        const MatrixD q = randn(rng, n, h * dK), k = randn(rng, n, dK), v = randn(rng, n, 3);
        const AttentionMask mask = AttentionMask::slidingWindow(n, n, 3, 1);
        const GroupedAttentionResult<double> r = groupedQueryAttention<double>(q, k, v, h, 1, mask);
        QCOMPARE(r.output.cols(), h * 3);
        for (Index i = 0; i < h; ++i) {
            QCOMPARE(r.kvHeadOf[std::size_t(i)], Index(0));
            const AttentionResult<double> a
                = scaledDotProductAttention<double>(q.middleCols(i * dK, dK), k, v, mask);
            ATTN_COMPARE_CLOSE(r.weights[std::size_t(i)], a.weights, 0.0, 0.0);
            ATTN_COMPARE_CLOSE(r.output.middleCols(i * 3, 3).eval(), a.output, 0.0, 0.0);
        }
    }

    void kvHeadMapping()
    {
        // ⌊i·g/h⌋, torch.repeat_interleave's order: h = 8, g = 2 → 0 0 0 0 1 1 1 1.
        for (Index i = 0; i < 8; ++i)
            QCOMPARE(kvHeadOf(i, 8, 2), i / 4);
        QCOMPARE(kvHeadOf(5, 6, 3), Index(2));
        QVERIFY_THROWS_EXCEPTION(InvalidArgument, kvHeadOf(0, 8, 3));
        QVERIFY_THROWS_EXCEPTION(InvalidArgument, kvHeadOf(0, 4, 8));
        QVERIFY_THROWS_EXCEPTION(InvalidArgument, kvHeadOf(8, 8, 2));
    }

    void parameterCountAndCache()
    {
        // g = h: nn.MultiheadAttention's count; fewer kv heads shrink W_K, W_V and their biases.
        for (const Index h : {1, 2, 4, 8})
            QCOMPARE(groupedQueryParameterCount(64, h, h),
                     MultiheadAttention<double>(64, h).parameterCount());
        // d_model = 512, h = 8 (d_k = 64), g = 2: 2·512² + 2·128·512 + 2·512 + 2·128.
        QCOMPARE(groupedQueryParameterCount(512, 8, 2), Index(524288 + 131072 + 1024 + 256));
        QCOMPARE(groupedQueryParameterCount(512, 8, 1, false), Index(524288 + 65536));
        // 2 · g · d_k · bytes: Llama-2-70B-like g = 8, d_k = 128, float16 → 4096 bytes.
        QCOMPARE(kvCacheBytesPerToken(8, 128, 2), Index(4096));
        QCOMPARE(kvCacheBytesPerToken(1, 64, 4), Index(512));
        QVERIFY_THROWS_EXCEPTION(InvalidArgument, kvCacheBytesPerToken(0, 64, 4));
        QVERIFY_THROWS_EXCEPTION(InvalidArgument,
                                 kvCacheBytesPerToken(Index(1) << 40, Index(1) << 30, 8));
        QVERIFY_THROWS_EXCEPTION(InvalidArgument, groupedQueryParameterCount(64, 8, 3));
    }

    void badShapes()
    {
        const MatrixD q = MatrixD::Ones(4, 16), k = MatrixD::Ones(4, 8), v = MatrixD::Ones(4, 8);
        // h = 4 → d_k = 4, g = 2 → key needs 8 columns: fine; g = 3 does not divide 4.
        QVERIFY_THROWS_EXCEPTION(InvalidArgument, groupedQueryAttention<double>(q, k, v, 4, 3));
        // h = 2 → d_k = 8, g = 2 needs 16 key columns.
        QVERIFY_THROWS_EXCEPTION(InvalidArgument, groupedQueryAttention<double>(q, k, v, 2, 2));
        PositionOptions rope;
        rope.scheme = PositionalScheme::Rope;
        const MatrixD qOdd = MatrixD::Ones(4, 6), kOdd = MatrixD::Ones(4, 3);
        QVERIFY_THROWS_EXCEPTION(InvalidArgument,
                                 groupedQueryAttention<double>(qOdd, kOdd, v, 2, 1, {}, {}, rope));
        MatrixD nan = q;
        nan(1, 1) = std::nan("");
        QVERIFY_THROWS_EXCEPTION(NonFiniteInput, groupedQueryAttention<double>(nan, k, v, 4, 2));
        const GroupedAttentionResult<double> ok = groupedQueryAttention<double>(q, k, v, 4, 2);
        QCOMPARE(ok.output.cols(), Index(16));
    }

    void sinkMass()
    {
        // Rows of weights, mass on the first s keys.
        MatrixD w(2, 4);
        w << 0.5, 0.25, 0.125, 0.125, 0, 0, 0.5, 0.5;
        const VectorD m = sinkWeightMass(w, 2);
        QCOMPARE(m(0), 0.75);
        QCOMPARE(m(1), 0.0);
        QCOMPARE(sinkWeightMass(w, 10)(0), 1.0);
        QVERIFY_THROWS_EXCEPTION(InvalidArgument, sinkWeightMass(w, -1));
    }
};

QTEST_APPLESS_MAIN(TestGroupedAttention)
#include "tst_groupedattention.moc"
