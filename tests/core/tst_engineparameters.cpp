// The one parameter type of the window's engine (core/engine/engineparameters.h): its rule set
// (validate, check), the controls' rules (normalized), the score scale, and the divisor helpers
// the h controls list, each against a brute-force or closed-form reference written here.

#include "core/engine/engineparameters.h"
#include "core/engine/sessioninputs.h"

#include <QTest>

#include <cmath>
#include <string>
#include <vector>

using namespace attn;

namespace {

std::vector<Index> bruteDivisors(Index n)
{
    std::vector<Index> ds;
    for (Index d = 1; d <= n; ++d)
        if (n % d == 0)
            ds.push_back(d);
    return ds;
}

} // namespace

class TestEngineParameters : public QObject
{
    Q_OBJECT

private slots:
    void defaultsAreValid()
    {
        const EngineParameters p;
        QCOMPARE(QString::fromStdString(p.validate()), QString());
        p.check(); // does not throw
        QCOMPARE(p.dK(), Index(16));
        QCOMPARE(p.keyValueHeads(), Index(4));
    }

    // The parameter count and the cache per token against the matrices the engine actually
    // draws (sessionInputs): MLA's six projections and W_O, differential attention's second
    // W_Q, W_K with their biases, the gate's w_θ; the cache in elements of 8 bytes.
    void parameterCountIsWhatIsDrawn()
    {
        EngineParameters p;
        p.dModel = 24;
        p.heads = 4; // d_k = 6
        p.outputGate = true;
        p.latent = true;
        p.latentDim = 5;
        p.latentRopeDim = 4;
        const SessionInputs<double> mla = sessionInputs<double>(p);
        const MlaWeights<double> &w = *mla.latent;
        const Index d = p.dModel;
        QCOMPARE(p.parameterCount(),
                 w.downKeyValue.size() + w.upKey.size() + w.upValue.size() + w.ropeKey.size()
                     + w.query.size() + w.ropeQuery.size() + d * d // W_O
                     + mla.gateWeights.size());
        QCOMPARE(p.cacheBytesPerToken(8), (w.latentDim() + w.ropeDim()) * 8);

        p.latent = false;
        p.differential = true;
        const SessionInputs<double> diff = sessionInputs<double>(p);
        const MultiheadAttention<double> &first = diff.layer, &second = *diff.secondLayer;
        QCOMPARE(p.parameterCount(),
                 first.inProjWeight().size() + first.inProjBias().size()
                     + first.outProjWeight().size() + first.outProjBias().size() + 2 * d * d
                     + 2 * d // the second layer's W_Q, W_K and their biases
                     + diff.gateWeights.size());
        QCOMPARE(second.inProjWeight().rows(), 3 * d);
        QCOMPARE(p.cacheBytesPerToken(8), 3 * d * 8); // K, V and K₂ of h = g heads
        // With g = 2 key heads the second W_K is grouped as the first (2·d_k rows), as the
        // K₂ cache is; without the gate, with a learned sink's h logits.
        p.kvHeads = 2;
        p.outputGate = false;
        p.learnedSink = true;
        p.differential = false;
        const Index grouped = p.parameterCount() - p.heads; // the layer with g = 2, no sink
        p.learnedSink = false;
        p.differential = true;
        QCOMPARE(p.parameterCount(), grouped + (d * d + d) + (2 * 6 * d + 2 * 6));
        QCOMPARE(p.cacheBytesPerToken(8), 3 * 2 * 6 * 8);
        p.kvHeads = 0;

        p.differential = false;
        p.outputGate = false;
        p.kvHeads = 2; // K and V of 2 heads of d_k = 6
        QCOMPARE(p.cacheBytesPerToken(4), 2 * 2 * 6 * 4);
    }

    // One message per rule, naming the parameter, its value and its range.
    void validateNamesTheFirstBadParameter_data()
    {
        QTest::addColumn<QString>("field");
        QTest::addColumn<double>("value");
        QTest::addColumn<QString>("message");
        QTest::newRow("n 0") << "n" << 0.0 << "n must be in [1, 4096], got 0";
        QTest::newRow("n 5000") << "n" << 5000.0 << "n must be in [1, 4096], got 5000";
        QTest::newRow("d_model 0") << "dModel" << 0.0 << "d_model must be in [1, 4096], got 0";
        QTest::newRow("h 100") << "heads" << 100.0
                               << "h (heads) must be in [1, d_model=64], got 100";
        QTest::newRow("h 3") << "heads" << 3.0
                             << "h=3 does not divide d_model=64 (d_k = d_model / h must be an "
                                "integer)";
        QTest::newRow("alpha 2") << "alpha" << 2.0
                                 << "scale exponent \u03b1 must be in [0, 1], got 2";
        QTest::newRow("tau 0") << "tau" << 0.0
                               << "temperature \u03c4 must be a finite number > 0, got 0";
        QTest::newRow("tau nan") << "tau" << std::nan("")
                                 << "temperature \u03c4 must be a finite number > 0, got nan";
        QTest::newRow("rope base 0.5")
            << "ropeBase" << 0.5 << "RoPE base must be in [1, 1e12], got 0.5";
        QTest::newRow("rope base 1e13")
            << "ropeBase" << 1e13 << "RoPE base must be in [1, 1e12], got 10000000000000";
        QTest::newRow("g 3") << "kvHeads" << 3.0 << "g=3 key/value heads must divide h=4";
        QTest::newRow("window -1") << "window" << -1.0 << "window w must be in [0, 4096], got -1";
        QTest::newRow("sinks without window")
            << "sinks" << 2.0 << "attention sinks need a sliding window (w > 0)";
    }
    void validateNamesTheFirstBadParameter()
    {
        QFETCH(QString, field);
        QFETCH(double, value);
        QFETCH(QString, message);
        EngineParameters p;
        if (field == QLatin1String("n"))
            p.n = Index(value);
        else if (field == QLatin1String("dModel"))
            p.dModel = Index(value);
        else if (field == QLatin1String("heads"))
            p.heads = Index(value);
        else if (field == QLatin1String("alpha"))
            p.scaleExponent = value;
        else if (field == QLatin1String("tau"))
            p.temperature = value;
        else if (field == QLatin1String("ropeBase"))
            p.ropeBase = value;
        else if (field == QLatin1String("kvHeads"))
            p.kvHeads = Index(value);
        else if (field == QLatin1String("window"))
            p.window = Index(value);
        else if (field == QLatin1String("sinks"))
            p.sinks = Index(value);
        QCOMPARE(QString::fromStdString(p.validate()), message);
        try {
            p.check(EngineParameters::maxSequence);
            QFAIL("check() accepted invalid parameters");
        } catch (const InvalidArgument &e) {
            QCOMPARE(QString::fromUtf8(e.what()), QStringLiteral("session: ") + message);
        }
    }

    // The long views allow n up to maxLongSequence; the full matrices up to maxSequence.
    void maxNBoundsTheSequence()
    {
        EngineParameters p;
        p.n = 16384;
        p.window = 16384;
        QVERIFY(!p.validate().empty());
        QCOMPARE(QString::fromStdString(p.validate(EngineParameters::maxLongSequence)), QString());
    }

    void paddingIsCheckedOnlyWithAPaddingMask()
    {
        EngineParameters p;
        p.paddingCount = 99;
        QCOMPARE(QString::fromStdString(p.validate()), QString());
        p.mask = MaskChoice::KeyPadding;
        QCOMPARE(QString::fromStdString(p.validate()),
                 QStringLiteral("padding count must be in [0, n_k=8], got 99"));
    }

    // d_k^(−α) / τ, written out here.
    void scaleIsDkToTheMinusAlphaOverTau_data()
    {
        QTest::addColumn<int>("dModel");
        QTest::addColumn<int>("heads");
        QTest::addColumn<double>("alpha");
        QTest::addColumn<double>("tau");
        QTest::newRow("1/sqrt(16)") << 64 << 4 << 0.5 << 1.0;
        QTest::newRow("unscaled") << 64 << 4 << 0.0 << 1.0;
        QTest::newRow("alpha 0.25, tau 2") << 256 << 1 << 0.25 << 2.0;
        QTest::newRow("alpha 1, tau 0.01") << 48 << 3 << 1.0 << 0.01;
    }
    void scaleIsDkToTheMinusAlphaOverTau()
    {
        QFETCH(int, dModel);
        QFETCH(int, heads);
        QFETCH(double, alpha);
        QFETCH(double, tau);
        EngineParameters p;
        p.dModel = dModel;
        p.heads = heads;
        p.scaleExponent = alpha;
        p.temperature = tau;
        const double dK = double(dModel / heads);
        const double expected = 1.0 / (std::pow(dK, alpha) * tau);
        QVERIFY2(std::abs(p.scale() - expected) <= 1e-15 * expected,
                 qPrintable(QStringLiteral("%1 vs %2").arg(p.scale()).arg(expected)));
    }

    void divisorsAreAllDivisorsInOrder_data()
    {
        QTest::addColumn<int>("n");
        for (int n : {0, 1, 2, 12, 64, 97, 720, 4096})
            QTest::addRow("%d", n) << n;
    }
    void divisorsAreAllDivisorsInOrder()
    {
        QFETCH(int, n);
        QCOMPARE(divisors(n), bruteDivisors(n));
    }

    void nearestDivisorPrefersTheSmallerOnTies()
    {
        QCOMPARE(nearestDivisor(64, 3), Index(2)); // 2 and 4 are 1 away: the smaller
        QCOMPARE(nearestDivisor(64, 6), Index(4)); // 4 (2 away) and 8 (2 away)
        QCOMPARE(nearestDivisor(60, 7), Index(6));
        QCOMPARE(nearestDivisor(97, 50), Index(97)); // 1 is 49 away, 97 is 47 away
    }

    // The controls' rules: clamps, h to the nearest divisor, n following the tokens, the
    // wanted padding clamped to the keys.
    void normalizedAppliesTheControlsRules()
    {
        EngineParameters p;
        p.n = 10000;
        p.nK = 0;
        p.dModel = 9000;
        p.heads = 7;
        p.scaleExponent = 3.0;
        p.temperature = 1e301;
        p.mask = MaskChoice::KeyPadding;
        const EngineParameters q = p.normalized(5000); // more padding than keys
        QCOMPARE(q.n, EngineParameters::maxSequence);
        QCOMPARE(q.nK, Index(1));
        QCOMPARE(q.dModel, EngineParameters::maxDModel);
        QCOMPARE(q.heads, Index(8)); // 4096's divisors nearest 7: 8 (1 away)
        QCOMPARE(q.paddingCount, q.keyCount());
        QCOMPARE(q.scaleExponent, 1.0);
        QCOMPARE(q.temperature, EngineParameters::maxTemperature);
        QCOMPARE(QString::fromStdString(q.validate()), QString());

        EngineParameters t;
        t.tokens = {"the", "cat", "sat"};
        t.n = 8;
        QCOMPARE(t.normalized().n, Index(3));
        // Normalising twice changes nothing.
        QVERIFY(q.normalized() == q);
    }
};

QTEST_GUILESS_MAIN(TestEngineParameters)
#include "tst_engineparameters.moc"
