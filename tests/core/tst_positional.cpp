// Sinusoidal positional encoding (core/attention/positional.h, Vaswani et al. 2017, §3.5): known
// values, interleaved sin/cos, odd widths, offsets, and the shift-is-a-rotation property (E6).

#include "core/attention/positional.h"
#include "testutil.h"

#include <QTest>

#include <cmath>

using namespace attn;

class TestPositional : public QObject
{
    Q_OBJECT

private slots:
    void knownValues()
    {
        // d = 4: ω₀ = 1, ω₁ = 10000^(−2/4) = 1/100.
        // PE[pos] = [sin(pos), cos(pos), sin(pos/100), cos(pos/100)].
        const MatrixD pe = sinusoidalEncoding(3, 4);
        MatrixD expected(3, 4);
        expected << 0, 1, 0, 1, //
            std::sin(1.0), std::cos(1.0), std::sin(0.01), std::cos(0.01), //
            std::sin(2.0), std::cos(2.0), std::sin(0.02), std::cos(0.02);
        ATTN_COMPARE_CLOSE(pe, expected, 1e-15, 0.0);
    }

    void oddWidth_data()
    {
        QTest::addColumn<int>("d");
        QTest::newRow("d=1") << 1;
        QTest::newRow("d=5") << 5;
        QTest::newRow("d=17") << 17;
    }
    void oddWidth()
    {
        // The last column of an odd width is a sin of pair (d−1)/2.
        QFETCH(int, d);
        const MatrixD pe = sinusoidalEncoding(10, d);
        QCOMPARE(pe.cols(), Index(d));
        const double denom = std::pow(10000.0, double(d - 1) / d);
        for (Index p = 0; p < 10; ++p)
            QVERIFY(std::abs(pe(p, d - 1) - std::sin(double(p) / denom)) <= 1e-15);
    }

    void everyColumn_data()
    {
        QTest::addColumn<int>("n");
        QTest::addColumn<int>("d");
        QTest::addColumn<int>("first");
        QTest::newRow("n=30 d=16") << 30 << 16 << 0;
        QTest::newRow("n=7 d=9 from 100") << 7 << 9 << 100;
        QTest::newRow("n=50 d=512") << 50 << 512 << 0;
    }
    void everyColumn()
    {
        // PE[pos, 2i] = sin(pos / 10000^(2i/d)), PE[pos, 2i+1] = cos(same); sin² + cos² = 1.
        QFETCH(int, n);
        QFETCH(int, d);
        QFETCH(int, first);
        const MatrixD pe = sinusoidalEncoding(n, d, first);
        for (Index p = 0; p < n; ++p) {
            for (Index c = 0; c < d; ++c) {
                const Index i = c / 2;
                const double angle = double(first + p) / std::pow(10000.0, 2.0 * double(i) / d);
                const double expected = c % 2 == 0 ? std::sin(angle) : std::cos(angle);
                QVERIFY(std::abs(pe(p, c) - expected) <= 1e-15);
            }
            for (Index c = 0; c + 1 < d; c += 2)
                QVERIFY(std::abs(pe(p, c) * pe(p, c) + pe(p, c + 1) * pe(p, c + 1) - 1.0) <= 1e-15);
        }
    }

    void offsetMatchesLaterRows()
    {
        const MatrixD full = sinusoidalEncoding(40, 12);
        const MatrixD tail = sinusoidalEncoding(25, 12, 15);
        ATTN_COMPARE_CLOSE(tail, full.bottomRows(25), 0.0, 0.0);
    }

    void shiftIsRotation_data()
    {
        QTest::addColumn<int>("d");
        QTest::newRow("d=16") << 16;
        QTest::newRow("d=64") << 64;
        QTest::newRow("d=15 odd") << 15;
    }
    void shiftIsRotation()
    {
        // E6: for offset k = 5 and positions 0…29, the rotation by ω_i·k maps
        // (PE[pos, 2i], PE[pos, 2i+1]) onto PE[pos + k, 2i…2i+1].
        QFETCH(int, d);
        const Index k = 5;
        const MatrixD pe = sinusoidalEncoding(30 + k, d);
        double worst = 0;
        for (Index i = 0; 2 * i + 1 < d; ++i) {
            const double w = sinusoidFrequency(i, d);
            const double c = std::cos(w * k), s = std::sin(w * k);
            for (Index p = 0; p < 30; ++p) {
                const double sinP = pe(p, 2 * i), cosP = pe(p, 2 * i + 1);
                // sin(a + b) = sin a cos b + cos a sin b; cos(a + b) = cos a cos b − sin a sin b
                worst = std::max(worst, std::abs(sinP * c + cosP * s - pe(p + k, 2 * i)));
                worst = std::max(worst, std::abs(cosP * c - sinP * s - pe(p + k, 2 * i + 1)));
            }
        }
        QVERIFY2(worst <= 1e-14, qPrintable(QString::number(worst, 'g', 17)));
    }

    void frequencies()
    {
        QCOMPARE(sinusoidFrequency(0, 8), 1.0);
        QVERIFY(std::abs(sinusoidFrequency(1, 4) - 0.01) <= 1e-17);
        QVERIFY(std::abs(sinusoidFrequency(2, 8) - 0.01) <= 1e-17);
        QVERIFY(std::abs(sinusoidFrequency(2, 5) - std::pow(10000.0, -0.8)) <= 1e-17);
        QVERIFY_THROWS_EXCEPTION(InvalidArgument, sinusoidFrequency(3, 5));
        QVERIFY_THROWS_EXCEPTION(InvalidArgument, sinusoidFrequency(-1, 5));
        QVERIFY_THROWS_EXCEPTION(InvalidArgument, sinusoidFrequency(0, 0));
    }

    void rejectsBadSizes()
    {
        QVERIFY_THROWS_EXCEPTION(InvalidArgument, sinusoidalEncoding(-1, 4));
        QVERIFY_THROWS_EXCEPTION(InvalidArgument, sinusoidalEncoding(4, 0));
        QCOMPARE(sinusoidalEncoding(0, 4).rows(), Index(0));
        QVERIFY_THROWS_EXCEPTION(InvalidArgument, sinusoidalSimilarity(-1, 4));
        QVERIFY_THROWS_EXCEPTION(InvalidArgument, sinusoidalSimilarity(4, 0));
        QCOMPARE(sinusoidalSimilarity(0, 4).rows(), Index(0));
    }

    void similarityKnownValues()
    {
        // d = 2: PE[p] = [sin p, cos p], so PE·PEᵀ(p, q) = cos(p − q): cos 0 = 1, cos 1 =
        // 0.5403023058681398, cos 3 = −0.9899924966004454 (digits of the cosine itself).
        const MatrixD s2 = sinusoidalSimilarity(4, 2);
        QCOMPARE(s2.rows(), Index(4));
        QCOMPARE(s2.cols(), Index(4));
        QVERIFY(std::abs(s2(2, 2) - 1.0) <= 1e-15);
        QVERIFY(std::abs(s2(1, 0) - 0.5403023058681398) <= 1e-15);
        QVERIFY(std::abs(s2(0, 3) - -0.9899924966004454) <= 1e-15);
        // d = 4: ω = 1, 1/100: cos(p − q) + cos((p − q)/100); the diagonal is d/2 = 2.
        const MatrixD s4 = sinusoidalSimilarity(5, 4);
        for (Index p = 0; p < 5; ++p)
            for (Index q = 0; q < 5; ++q) {
                const double k = double(p - q);
                QVERIFY(std::abs(s4(p, q) - (std::cos(k) + std::cos(k / 100.0))) <= 1e-14);
            }
        QVERIFY(std::abs(s4(3, 3) - 2.0) <= 1e-15);
    }

    void similarityIsTheProductOfTheRows_data()
    {
        QTest::addColumn<int>("n");
        QTest::addColumn<int>("d");
        QTest::newRow("n=12 d=16") << 12 << 16;
        QTest::newRow("n=9 d=7 (odd)") << 9 << 7;
        QTest::newRow("n=40 d=64") << 40 << 64;
        QTest::newRow("n=3 d=1") << 3 << 1;
    }
    void similarityIsTheProductOfTheRows()
    {
        // Σ_c PE[p, c]·PE[q, c] with each PE entry written out by the paper's formula (sin for
        // even c, cos for odd c, argument pos / 10000^(2⌊c/2⌋/d)); for even d it depends on
        // p − q only.
        QFETCH(int, n);
        QFETCH(int, d);
        const MatrixD s = sinusoidalSimilarity(n, d);
        const auto pe = [d](int pos, int c) {
            const double angle = pos / std::pow(10000.0, double(2 * (c / 2)) / d);
            return c % 2 == 0 ? std::sin(angle) : std::cos(angle);
        };
        for (int p = 0; p < n; ++p)
            for (int q = 0; q < n; ++q) {
                double dot = 0;
                for (int c = 0; c < d; ++c)
                    dot += pe(p, c) * pe(q, c);
                QVERIFY2(std::abs(s(p, q) - dot) <= 1e-12,
                         qPrintable(QStringLiteral("(%1, %2): %3 vs %4")
                                        .arg(p)
                                        .arg(q)
                                        .arg(s(p, q), 0, 'g', 17)
                                        .arg(dot, 0, 'g', 17)));
                if (d % 2 == 0 && p > 0 && q > 0)
                    QVERIFY(std::abs(s(p, q) - s(p - 1, q - 1)) <= 1e-12);
            }
    }
};

QTEST_APPLESS_MAIN(TestPositional)
#include "tst_positional.moc"
