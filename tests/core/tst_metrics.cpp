// Metrics of attention rows (core/analysis/metrics.h): the cancellation-free softmax Jacobian norm
// against the explicit matrix and closed forms (ordinary and near-one-hot rows), entropy,
// effective terms, row metrics with fully masked rows, standard deviation and NaN reports.

#include "core/analysis/metrics.h"
#include "core/attention/softmax.h"
#include "core/random/random.h"
#include "testutil.h"

#include <QList>
#include <QTest>

#include <cmath>
#include <limits>
#include <vector>

using namespace attn;

namespace {

std::vector<double> softmaxOf(const std::vector<double> &logits)
{
    MatrixD m(1, Index(logits.size()));
    for (std::size_t j = 0; j < logits.size(); ++j)
        m(0, Index(j)) = logits[j];
    const MatrixD w = softmaxRows(m);
    return std::vector<double>(w.data(), w.data() + w.size());
}

bool relClose(double a, double b, double rtol)
{
    return std::abs(a - b) <= rtol * std::abs(b);
}

} // namespace

class TestMetrics : public QObject
{
    Q_OBJECT

private slots:
    void jacobianMatchesExplicit_data()
    {
        QTest::addColumn<QList<double>>("logits");
        QTest::newRow("two keys") << QList<double> {0.3, -0.2};
        QTest::newRow("ordinary 16") << QList<double> {0.1, -1.2, 0.5,  2.0, -0.3, 0.0,  1.1,  -2.2,
                                                       0.7, 0.9,  -0.4, 1.5, 0.2,  -1.0, 0.05, 0.6};
        QTest::newRow("uniform 5") << QList<double>(5, 1.0);
        QTest::newRow("one key") << QList<double> {3.0};
        // Near-one-hot rows: the textbook Σp² − 2Σp³ + (Σp²)² cancels here.
        QList<double> l60(16, 0.0);
        l60[0] = 60.0;
        QTest::newRow("[60, 0 x15]") << l60;
        QList<double> l40(16, 0.0);
        l40[3] = 40.0;
        QTest::newRow("[0,0,0,40, 0 x12]") << l40;
        QList<double> l30(1000, 0.0);
        l30[999] = 30.0;
        QTest::newRow("1000 keys, one at 30") << l30;
        QTest::newRow("two hot of three") << QList<double> {50.0, 50.0, 0.0};
    }
    void jacobianMatchesExplicit()
    {
        QFETCH(QList<double>, logits);
        const std::vector<double> p = softmaxOf({logits.begin(), logits.end()});
        const Index n = Index(p.size());
        const double ours = jacobianNorm(p.data(), n);
        const double explicitNorm = jacobianNormExplicit(p.data(), n);
        QVERIFY2(std::isfinite(ours), "NaN/Inf Jacobian norm");
        QVERIFY(ours >= 0.0);
        QVERIFY2(relClose(ours, explicitNorm, 1e-12) || (ours == 0 && explicitNorm == 0),
                 qPrintable(QStringLiteral("ours %1, explicit %2")
                                .arg(ours, 0, 'g', 17)
                                .arg(explicitNorm, 0, 'g', 17)));
    }

    void jacobianNearOneHotClosedForm()
    {
        // p = softmax([60, 0 × 15]) in float64: with e = e^(−60), Z = 1 + 15e,
        // p₀ = 1/Z (rounds to exactly 1.0), p_j = e/Z. Then 1 − p₀ = 15e/Z, 1 − p_j = (1+14e)/Z
        // and ‖J‖² = p₀²(1−p₀)² + 15·p_j²(1−p_j)² + 2·15·p₀²p_j² + 15·14·p_j⁴
        //          = [225e² + 15e²(1+14e)² + 30e² + 210e⁴] / Z⁴  (no cancellation).
        const double e = std::exp(-60.0);
        const double z = 1.0 + 15.0 * e;
        const double expected = std::sqrt(225 * e * e + 15 * e * e * (1 + 14 * e) * (1 + 14 * e)
                                          + 30 * e * e + 210 * e * e * e * e)
            / (z * z);
        std::vector<double> logits(16, 0.0);
        logits[0] = 60.0;
        const std::vector<double> p = softmaxOf(logits);
        QCOMPARE(p[0], 1.0); // the trap: p₀ − p₀² is exactly 0 here
        const double ours = jacobianNorm(p.data(), 16);
        QVERIFY2(relClose(ours, expected, 1e-12),
                 qPrintable(QString::number(ours, 'g', 17) + QStringLiteral(" vs ")
                            + QString::number(expected, 'g', 17)));
        // The textbook closed form fails on this row: it gives 0 or NaN, not ≈ 1.5e-25.
        const double textbook = jacobianNormTextbook(p.data(), 16);
        QVERIFY(std::isnan(textbook) || !relClose(textbook, expected, 0.5));
    }

    void jacobianUniform_data()
    {
        QTest::addColumn<int>("n");
        QTest::newRow("n=1") << 1;
        QTest::newRow("n=2") << 2;
        QTest::newRow("n=16") << 16;
        QTest::newRow("n=1000") << 1000;
    }
    void jacobianUniform()
    {
        // Uniform p = 1/n: ‖J‖² = Σ_i p²[(1−p)² + (n−1)p²] = (n−1)/n², so ‖J‖ = √(n−1)/n.
        QFETCH(int, n);
        const std::vector<double> p(std::size_t(n), 1.0 / n);
        const double expected = std::sqrt(double(n - 1)) / n;
        QVERIFY(relClose(jacobianNorm(p.data(), n), expected, 1e-12) || n == 1);
        QVERIFY(relClose(jacobianNormExplicit(p.data(), n), expected, 1e-12) || n == 1);
        if (n == 1) {
            QCOMPARE(jacobianNorm(p.data(), n), 0.0);
            QCOMPARE(jacobianNormExplicit(p.data(), n), 0.0);
        }
    }

    void jacobianRandomRows()
    {
        // Many rows of scaled and unscaled E2-like logits (d_k up to 1024, 16 keys).
        Generator rng {1};
        for (double spread : {1.0, 4.0, 16.0, 32.0}) {
            const MatrixD w = softmaxRows<double>(rng.standardNormal(200, 16) * spread);
            for (Index i = 0; i < w.rows(); ++i) {
                const double a = jacobianNorm(w.row(i).data(), 16);
                const double b = jacobianNormExplicit(w.row(i).data(), 16);
                QVERIFY(std::isfinite(a) && a >= 0);
                QVERIFY2(relClose(a, b, 1e-12) || (a == 0 && b == 0),
                         qPrintable(QStringLiteral("spread %1 row %2: %3 vs %4")
                                        .arg(spread)
                                        .arg(i)
                                        .arg(a, 0, 'g', 17)
                                        .arg(b, 0, 'g', 17)));
            }
        }
    }

    void entropyAndEffectiveTerms()
    {
        const std::vector<double> uniform(8, 0.125);
        QVERIFY(std::abs(entropyNats(uniform.data(), 8) - std::log(8.0)) <= 1e-15);
        QVERIFY(std::abs(effectiveTerms(uniform.data(), 8) - 8.0) <= 1e-12);
        QCOMPARE(maxWeight(uniform.data(), 8), 0.125);
        const std::vector<double> oneHot {0, 1, 0};
        QCOMPARE(entropyNats(oneHot.data(), 3), 0.0);
        QCOMPARE(effectiveTerms(oneHot.data(), 3), 1.0);
        QCOMPARE(maxWeight(oneHot.data(), 3), 1.0);
        // [1/2, 1/4, 1/4]: H = ½ln2 + 2·¼ln4 = 1.5 ln 2; Σp² = 3/8 → 8/3 terms.
        const std::vector<double> p {0.5, 0.25, 0.25};
        QVERIFY(std::abs(entropyNats(p.data(), 3) - 1.5 * std::log(2.0)) <= 1e-15);
        QVERIFY(std::abs(effectiveTerms(p.data(), 3) - 8.0 / 3.0) <= 1e-15);
        const std::vector<double> zeros(4, 0.0);
        QCOMPARE(effectiveTerms(zeros.data(), 4), 0.0);
        QCOMPARE(entropyNats(zeros.data(), 4), 0.0);
        QCOMPARE(jacobianNorm(zeros.data(), 4), 0.0);
    }

    void rowMetricsWithMaskedRows_data()
    {
        QTest::addColumn<bool>("float32");
        QTest::newRow("float32") << true;
        QTest::newRow("float64") << false;
    }
    void rowMetricsWithMaskedRows()
    {
        QFETCH(bool, float32);
        MatrixD w(3, 4);
        w << 0.25, 0.25, 0.25, 0.25, //
            0, 0, 0, 0, // fully masked
            0.5, 0.25, 0.25, 0;
        const std::vector<std::uint8_t> flags {0, 1, 0};
        const RowMetrics m
            = float32 ? rowMetrics<float>(w.cast<float>(), flags) : rowMetrics<double>(w, flags);
        const double tol = float32 ? 1e-6 : 1e-15;
        QVERIFY(std::abs(m.maxWeight(0) - 0.25) <= tol);
        QVERIFY(std::abs(m.entropy(0) - std::log(4.0)) <= tol);
        QVERIFY(std::abs(m.effectiveTerms(0) - 4.0) <= tol);
        QVERIFY(std::abs(m.jacobianNorm(0) - std::sqrt(3.0) / 4.0) <= tol);
        QCOMPARE(m.effectiveTerms(1), 0.0);
        QCOMPARE(m.entropy(1), 0.0);
        QCOMPARE(m.maxWeight(1), 0.0);
        QCOMPARE(m.rowSumError(1), 0.0);
        QCOMPARE(m.fullyMasked, flags);
        QVERIFY(std::abs(m.effectiveTerms(2) - 8.0 / 3.0) <= tol);
        const MetricsSummary s = summarize(m);
        QCOMPARE(s.fullyMaskedRows, Index(1));
        QVERIFY(std::abs(s.meanMaxWeight - 0.375) <= tol);
        QVERIFY(std::abs(s.meanEffectiveTerms - (4.0 + 8.0 / 3.0) / 2) <= tol);
        QVERIFY(s.worstRowSumError <= tol);
        QVERIFY_THROWS_EXCEPTION(InvalidArgument, rowMetrics<double>(w, {0, 1}));
    }

    // headOrder: heads with known mean entropies (ln 4, 0, ln 2, ln 2) and max weights (0.25,
    // 1, 0.5, 0.5); head 0's fully masked row counts in neither mean.
    void headOrderByKnownMeans()
    {
        MatrixD uniform(2, 4), oneHot(1, 4), half(1, 4);
        uniform << 0.25, 0.25, 0.25, 0.25, 0, 0, 0, 0;
        oneHot << 0, 1, 0, 0;
        half << 0.5, 0, 0.5, 0;
        const std::vector<RowMetrics> heads {rowMetrics<double>(uniform, {0, 1}),
                                             rowMetrics<double>(oneHot), rowMetrics<double>(half),
                                             rowMetrics<double>(half)};
        using V = std::vector<int>;
        QCOMPARE(headOrder(heads, HeadOrderKey::Index, false), V({0, 1, 2, 3}));
        // Entropy: 0 (head 1) < ln 2 (heads 2, 3, lower first) < ln 4 (head 0).
        QCOMPARE(headOrder(heads, HeadOrderKey::Entropy, false), V({1, 2, 3, 0}));
        QCOMPARE(headOrder(heads, HeadOrderKey::Entropy, true), V({0, 2, 3, 1}));
        // Max weight: 0.25 (head 0) < 0.5 (heads 2, 3) < 1 (head 1).
        QCOMPARE(headOrder(heads, HeadOrderKey::MaxWeight, false), V({0, 2, 3, 1}));
        QCOMPARE(headOrder(heads, HeadOrderKey::MaxWeight, true), V({1, 2, 3, 0}));
        QCOMPARE(headOrder({}, HeadOrderKey::Entropy, true), V());
        // A NaN mean goes last either way.
        RowMetrics bad = heads[1];
        bad.maxWeight(0) = std::numeric_limits<double>::quiet_NaN();
        const std::vector<RowMetrics> withNaN {bad, heads[1], heads[0]};
        QCOMPARE(headOrder(withNaN, HeadOrderKey::MaxWeight, false), V({2, 1, 0}));
        QCOMPARE(headOrder(withNaN, HeadOrderKey::MaxWeight, true), V({1, 2, 0}));
    }

    // rowMetricValues (three passes, no allocation) is bit for bit the separate functions and
    // Eigen's VectorD::sum, on aligned and unaligned rows of every length class.
    void rowMetricValuesBitForBit_data()
    {
        QTest::addColumn<int>("n");
        QTest::addColumn<double>("spread"); // logits ~ N(0, spread²); 0: exact zeros mixed in
        QTest::addColumn<int>("offset"); // row starts this many doubles into aligned storage
        for (int n : {0, 1, 2, 3, 7, 16, 33, 1024, 1027})
            for (double spread : {0.0, 1.0, 40.0})
                for (int offset : {0, 1})
                    QTest::addRow("n=%d spread=%g offset=%d", n, spread, offset)
                        << n << spread << offset;
    }
    void rowMetricValuesBitForBit()
    {
        QFETCH(int, n);
        QFETCH(double, spread);
        QFETCH(int, offset);
        Generator rng {std::uint64_t(7 + n)};
        MatrixD logits = rng.standardNormal(1, n) * (spread > 0 ? spread : 1.0);
        if (spread == 0)
            for (Index j = 0; j < n; j += 3)
                logits(0, j) = -std::numeric_limits<double>::infinity(); // weight exactly 0
        const MatrixD w = softmaxRows(logits);
        VectorD storage = VectorD::Zero(n + 1);
        double *p = storage.data() + offset;
        std::copy(w.data(), w.data() + n, p);
        RowMetricsScratch scratch;
        for (int pass = 0; pass < 2; ++pass) { // the second pass reuses the scratch
            const RowMetricValues v = rowMetricValues(p, n, scratch);
            QCOMPARE(v.maxWeight, maxWeight(p, n));
            QCOMPARE(v.entropy, entropyNats(p, n));
            QCOMPARE(v.effectiveTerms, effectiveTerms(p, n));
            QCOMPARE(v.jacobianNorm, jacobianNorm(p, n));
            const VectorD copy = Eigen::Map<const VectorD>(p, n);
            QCOMPARE(v.rowSum, copy.sum());
        }
        // Several rows at once (four in vector lanes, the rest one by one): the same bits.
        const MatrixD more = softmaxRows<double>(rng.standardNormal(5, n) * 8.0);
        std::vector<const double *> rows {p};
        for (Index r = 0; r < more.rows(); ++r)
            rows.push_back(more.row(r).data());
        for (int count : {0, 1, 4, 6}) {
            std::vector<RowMetricValues> out(static_cast<std::size_t>(count));
            rowMetricValues(rows.data(), count, n, out.data(), scratch);
            for (int r = 0; r < count; ++r) {
                const RowMetricValues one = rowMetricValues(rows[std::size_t(r)], n, scratch);
                const RowMetricValues &v = out[std::size_t(r)];
                QCOMPARE(v.maxWeight, one.maxWeight);
                QCOMPARE(v.entropy, one.entropy);
                QCOMPARE(v.effectiveTerms, one.effectiveTerms);
                QCOMPARE(v.jacobianNorm, one.jacobianNorm);
                QCOMPARE(v.rowSum, one.rowSum);
            }
        }
    }

    void rowSumError()
    {
        MatrixD w(2, 2);
        w << 0.5, 0.6, 0.25, 0.25;
        const RowMetrics m = rowMetrics<double>(w);
        QVERIFY(std::abs(m.rowSumError(0) - 0.1) <= 1e-15);
        QVERIFY(std::abs(m.rowSumError(1) - 0.5) <= 1e-15);
        QVERIFY(std::abs(summarize(m).worstRowSumError - 0.5) <= 1e-15);
    }

    // A row holding NaN or Inf is no distribution: every metric of it is NaN (not a NaN skipped
    // by the entropy and max but not by Σp²), its sum error NaN (Inf for an infinite row), in
    // rowMetrics and in both forms of rowMetricValues; the finite rows are unchanged and the
    // summary's worst sum error is over them.
    void nonFiniteRowsAreNotAvailable()
    {
        const double nan = std::numeric_limits<double>::quiet_NaN();
        const double inf = std::numeric_limits<double>::infinity();
        MatrixD w = MatrixD::Constant(5, 4, 0.25);
        w(1, 2) = nan;
        w(3, 0) = inf;
        w(4, 1) = nan;
        w(4, 3) = -inf;
        w(2, 0) = 0.5; // finite, sums to 1.25
        const RowMetrics m = rowMetrics<double>(w);
        for (Index i : {Index(1), Index(3), Index(4)}) {
            QVERIFY2(std::isnan(m.maxWeight(i)), qPrintable(QString::number(i)));
            QVERIFY2(std::isnan(m.entropy(i)), qPrintable(QString::number(i)));
            QVERIFY2(std::isnan(m.effectiveTerms(i)), qPrintable(QString::number(i)));
            QVERIFY2(std::isnan(m.jacobianNorm(i)), qPrintable(QString::number(i)));
        }
        QVERIFY(std::isnan(m.rowSumError(1)));
        QCOMPARE(m.rowSumError(3), inf);
        QVERIFY(std::isnan(m.rowSumError(4)));
        QCOMPARE(m.effectiveTerms(0), 4.0);
        QCOMPARE(m.rowSumError(2), 0.25);
        QCOMPARE(summarize(m).worstRowSumError, 0.25);
        QVERIFY(std::isnan(summarize(m).meanEntropy));
        // Four rows at a time (two per vector) give the same.
        RowMetricsScratch scratch;
        std::vector<const double *> rows;
        for (Index i = 0; i < 4; ++i)
            rows.push_back(w.row(i).data()); // row-major: each row is contiguous
        std::vector<RowMetricValues> out(4);
        rowMetricValues(rows.data(), 4, 4, out.data(), scratch);
        QVERIFY(std::isnan(out[1].entropy) && std::isnan(out[1].effectiveTerms)
                && std::isnan(out[1].maxWeight) && std::isnan(out[1].jacobianNorm));
        QVERIFY(std::isnan(out[3].entropy) && std::isnan(out[3].maxWeight));
        QCOMPARE(out[0].effectiveTerms, 4.0);
        QCOMPARE(out[2].rowSum, 1.25);
    }

    // A weight panel's statistics, against values worked out by hand (dyadic weights, so
    // every sum is exact).
    void weightStatisticsByHand()
    {
        // Causal 3 × 3: the masked cells (j > i) hold 0 and are left out of min, max and mean.
        MatrixD w(3, 3);
        w << 1.0, 0.0, 0.0, //
            0.25, 0.75, 0.0, //
            0.5, 0.125, 0.375;
        MatrixB causal(3, 3);
        causal << 0, 1, 1, 0, 0, 1, 0, 0, 0;
        WeightStatistics s = weightStatistics(w, causal);
        QCOMPARE(s.cells, Index(6));
        QCOMPARE(s.min, 0.125);
        QCOMPARE(s.max, 1.0);
        QCOMPARE(s.mean, 3.0 / 6.0); // (1 + 0.25 + 0.75 + 0.5 + 0.125 + 0.375) / 6
        QCOMPARE(s.worstRowSumError, 0.0);
        // Without the mask the zeros count: min 0, mean 3/9.
        s = weightStatistics(w);
        QCOMPARE(s.cells, Index(9));
        QCOMPARE(s.min, 0.0);
        QCOMPARE(s.mean, 3.0 / 9.0);

        // Raw weights after hiding a key: rows sum to 0.75 and 0.5, errors 0.25 and 0.5.
        MatrixD raw(2, 2);
        raw << 0.5, 0.25, 0.25, 0.25;
        s = weightStatistics(raw);
        QCOMPARE(s.min, 0.25);
        QCOMPARE(s.max, 0.5);
        QCOMPARE(s.mean, 1.25 / 4.0);
        QCOMPARE(s.worstRowSumError, 0.5);

        // A fully masked row (weights 0, sum 0) is not a row-sum error of 1.
        MatrixD fully(2, 2);
        fully << 0.0, 0.0, 0.5, 0.5;
        MatrixB firstRow(2, 2);
        firstRow << 1, 1, 0, 0;
        s = weightStatistics(fully, firstRow, {1, 0});
        QCOMPARE(s.cells, Index(2));
        QCOMPARE(s.min, 0.5);
        QCOMPARE(s.max, 0.5);
        QCOMPARE(s.mean, 0.5);
        QCOMPARE(s.worstRowSumError, 0.0);
        // Every cell masked: nothing to count.
        s = weightStatistics(MatrixD::Zero(1, 2), MatrixB::Ones(1, 2), {1});
        QCOMPARE(s.cells, Index(0));
        QVERIFY(std::isnan(s.min) && std::isnan(s.max) && std::isnan(s.mean));
        QCOMPARE(s.worstRowSumError, 0.0);

        // A NaN is left out of min/max/mean and makes its row's error NaN.
        MatrixD bad(1, 3);
        bad << 0.25, std::numeric_limits<double>::quiet_NaN(), 0.5;
        s = weightStatistics(bad);
        QCOMPARE(s.cells, Index(2));
        QCOMPARE(s.min, 0.25);
        QCOMPARE(s.max, 0.5);
        QCOMPARE(s.mean, 0.375);
        QVERIFY(std::isnan(s.worstRowSumError));

        // Shapes that disagree are refused, naming both.
        try {
            weightStatistics(w, MatrixB::Zero(2, 3));
            QFAIL("no exception");
        } catch (const InvalidArgument &e) {
            QVERIFY2(QString::fromUtf8(e.what()).contains(QLatin1String("2 x 3"))
                         && QString::fromUtf8(e.what()).contains(QLatin1String("3 x 3")),
                     e.what());
        }
        QVERIFY_THROWS_EXCEPTION(InvalidArgument, weightStatistics(w, MatrixB(), {0, 1}));
    }

    void standardDeviationTwoPass()
    {
        MatrixD a(2, 2);
        a << 1, 2, 3, 4;
        // mean 2.5, deviations ±0.5, ±1.5: variance (0.25·2 + 2.25·2)/4 = 1.25 (ddof = 0).
        QVERIFY(std::abs(standardDeviation(a) - std::sqrt(1.25)) <= 1e-15);
        // A large offset does not destroy it (the one-pass E[x²] − E[x]² would).
        const MatrixD b = (a.array() + 1e9).matrix();
        QVERIFY(std::abs(standardDeviation(b) - std::sqrt(1.25)) <= 1e-12);
        QVERIFY(std::abs(standardDeviation<float>(a.cast<float>()) - std::sqrt(1.25)) <= 1e-7);
        // Random normals: close to 1.
        Generator rng {2};
        QVERIFY(std::abs(standardDeviation<double>(rng.standardNormal(300, 300)) - 1.0) < 0.01);
        QCOMPARE(standardDeviation<double>(MatrixD::Constant(3, 3, 7.0)), 0.0);
        QVERIFY_THROWS_EXCEPTION(InvalidArgument, standardDeviation(MatrixD(0, 3)));
    }

    void findNonFiniteReport()
    {
        MatrixF m = MatrixF::Ones(3, 4);
        QVERIFY(!findNonFinite(m).found);
        m(1, 2) = std::numeric_limits<float>::quiet_NaN();
        m(2, 0) = std::numeric_limits<float>::infinity();
        m(2, 3) = -std::numeric_limits<float>::infinity();
        const NonFiniteReport r = findNonFinite(m);
        QVERIFY(r.found);
        QCOMPARE(r.row, Index(1));
        QCOMPARE(r.col, Index(2));
        QVERIFY(std::isnan(r.value));
        QCOMPARE(r.nanCount, Index(1));
        QCOMPARE(r.infCount, Index(2));
        MatrixD d = MatrixD::Zero(2, 2);
        d(0, 1) = -std::numeric_limits<double>::infinity();
        const NonFiniteReport rd = findNonFinite(d);
        QCOMPARE(rd.row, Index(0));
        QCOMPARE(rd.col, Index(1));
        QCOMPARE(rd.value, -std::numeric_limits<double>::infinity());
    }
};

QTEST_APPLESS_MAIN(TestMetrics)
#include "tst_metrics.moc"
