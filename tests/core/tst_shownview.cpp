// The cells a view shows of a result (core/analysis/shownview.h): rows and keys picked, rows
// renormalised over the shown keys (w'_ij = w_ij / Σ_{k shown} w_ik) or left raw, a row whose
// shown keys carry no weight all 0 and fully masked, the metrics of the shown rows (entropy
// −Σ p ln p, max weight, row-sum error, written out here), or the computation's own when
// asked; indices outside the result refused.

#include "testutil.h"

#include "core/analysis/shownview.h"

#include <QObject>
#include <QTest>

#include <cmath>

using namespace attn;

class TestShownView : public QObject
{
    Q_OBJECT

private slots:
    void renormalisedRowsAndTheirMetrics()
    {
        EngineParameters p;
        p.n = 5;
        p.dModel = 8;
        p.heads = 2;
        p.kind = AttentionKind::DecoderCausal;
        p.seed = 4;
        const EngineResult in = computeEngine(p);
        ShownCells cells;
        cells.queries = {0, 2, 4};
        cells.keys = {1, 2};
        cells.renormalize = true;
        const EngineResult out = selectShownCells(in, cells);
        QCOMPARE(int(out.weights.size()), 2);
        for (std::size_t h = 0; h < 2; ++h) {
            const MatrixD &w = out.weights[h];
            QCOMPARE(w.rows(), Index(3));
            QCOMPARE(w.cols(), Index(2));
            for (Index r = 0; r < 3; ++r) {
                const Index i = cells.queries[std::size_t(r)];
                const double a = in.weights[h](i, 1), b = in.weights[h](i, 2);
                if (a + b == 0) { // query 0 sees key 0 only (causal): nothing shown is left
                    QCOMPARE(w(r, 0), 0.0);
                    QCOMPARE(w(r, 1), 0.0);
                    QCOMPARE(out.fullyMasked[h][std::size_t(r)], std::uint8_t(1));
                    continue;
                }
                QVERIFY(std::abs(w(r, 0) - a / (a + b)) <= 1e-15);
                QVERIFY(std::abs(w(r, 1) - b / (a + b)) <= 1e-15);
                QCOMPARE(out.fullyMasked[h][std::size_t(r)], std::uint8_t(0));
                double entropy = 0;
                for (Index c = 0; c < 2; ++c)
                    if (w(r, c) > 0)
                        entropy -= w(r, c) * std::log(w(r, c));
                QVERIFY(std::abs(out.metrics[h].entropy(r) - entropy) <= 1e-12);
                QCOMPARE(out.metrics[h].maxWeight(r), w.row(r).maxCoeff());
                QCOMPARE(out.scores[h](r, 1), in.scores[h](i, 2));
            }
        }
        QVERIFY(out.weightsMean.isApprox((out.weights[0] + out.weights[1]) / 2.0));
        QCOMPARE(out.maskState(2, 1), in.maskState(4, 2));
        QVERIFY(out.worstRowSumError <= 1e-15);

        // Raw: the picked values themselves, rows summing to less than 1.
        cells.renormalize = false;
        const EngineResult raw = selectShownCells(in, cells);
        QCOMPARE(raw.weights[1](2, 0), in.weights[1](4, 1));
        QVERIFY(raw.worstRowSumError > 0.01);
    }

    // Signed weights (differential attention's A₁ − λA₂) are never renormalised, whatever the
    // view asks: the picked values themselves, still signed, with A₁, A₂ and λ picked alike.
    void signedWeightsStayRaw()
    {
        EngineParameters p;
        p.n = 6;
        p.dModel = 8;
        p.heads = 2;
        p.kind = AttentionKind::DecoderCausal;
        p.differential = true;
        p.lambda = 0.9;
        const EngineResult in = computeEngine(p);
        QVERIFY(in.signedWeights);
        ShownCells cells;
        cells.queries = {1, 3, 5};
        cells.keys = {0, 1};
        cells.renormalize = true;
        const EngineResult out = selectShownCells(in, cells);
        QVERIFY(out.signedWeights);
        QCOMPARE(out.lambda, in.lambda);
        for (std::size_t h = 0; h < 2; ++h)
            for (Index r = 0; r < 3; ++r)
                for (Index c = 0; c < 2; ++c) {
                    const Index i = cells.queries[std::size_t(r)];
                    QCOMPARE(out.weights[h](r, c), in.weights[h](i, c));
                    QCOMPARE(out.firstWeights[h](r, c), in.firstWeights[h](i, c));
                    QCOMPARE(out.secondWeights[h](r, c), in.secondWeights[h](i, c));
                    QCOMPARE(out.fullyMasked[h][std::size_t(r)], std::uint8_t(0));
                }
    }

    // A gated row σ(g_i)·a_i renormalised over the shown keys keeps its gate: σ(g_i)·a_ij /
    // Σ_{k shown} a_ik, so it sums to σ(g_i), not 1; the gate is picked with the rows and the
    // metrics are of the renormalised rows before the gate (entropy written out here).
    void gatedRowsKeepTheirGate()
    {
        EngineParameters p;
        p.n = 6;
        p.dModel = 8;
        p.heads = 2;
        p.kind = AttentionKind::DecoderCausal;
        p.outputGate = true;
        p.gateBias = -3;
        p.seed = 3;
        const EngineResult in = computeEngine(p);
        QCOMPARE(int(in.gate.size()), 2);
        ShownCells cells;
        cells.queries = {1, 3, 5};
        cells.keys = {1, 2, 3, 4, 5}; // key 0 hidden
        cells.renormalize = true;
        const EngineResult out = selectShownCells(in, cells);
        QCOMPARE(int(out.gate.size()), 2);
        for (std::size_t h = 0; h < 2; ++h) {
            for (Index r = 0; r < 3; ++r) {
                const Index i = cells.queries[std::size_t(r)];
                const double g = in.gate[h](i);
                QCOMPARE(out.gate[h](r), g);
                QVERIFY2(g > 0.0 && g < 0.9, qPrintable(QString::number(g))); // well below 1
                double shown = 0; // Σ over the shown keys of the softmax row a = w / g
                for (int j : cells.keys)
                    shown += in.weights[h](i, j) / g;
                double entropy = 0;
                for (Index c = 0; c < 5; ++c) {
                    const double a = in.weights[h](i, cells.keys[std::size_t(c)]) / g / shown;
                    QVERIFY2(std::abs(out.weights[h](r, c) - g * a) <= 1e-15,
                             qPrintable(QStringLiteral("head %1 row %2 key %3: %4 vs %5")
                                            .arg(h)
                                            .arg(r)
                                            .arg(c)
                                            .arg(out.weights[h](r, c))
                                            .arg(g * a)));
                    if (a > 0)
                        entropy -= a * std::log(a);
                }
                QVERIFY(std::abs(out.weights[h].row(r).sum() - g) <= 1e-15);
                QVERIFY(std::abs(out.metrics[h].entropy(r) - entropy) <= 1e-12);
                QVERIFY(out.metrics[h].rowSumError(r) <= 1e-15);
            }
        }
    }

    // The output gate's σ(g) of each shown row goes with the row (the heatmap's tooltip reads it).
    void gateOfTheShownRows()
    {
        EngineParameters p;
        p.n = 6;
        p.dModel = 8;
        p.heads = 2;
        p.outputGate = true;
        p.gateBias = 0.5;
        const EngineResult in = computeEngine(p);
        QCOMPARE(in.gate.size(), std::size_t(2));
        ShownCells cells;
        cells.queries = {4, 1};
        cells.keys = {0, 2, 3};
        const EngineResult out = selectShownCells(in, cells);
        QCOMPARE(out.gate.size(), std::size_t(2));
        for (std::size_t h = 0; h < 2; ++h) {
            QCOMPARE(out.gate[h].size(), Index(2));
            QCOMPARE(out.gate[h](0), in.gate[h](4));
            QCOMPARE(out.gate[h](1), in.gate[h](1));
        }
    }

    void keptMetricsAndRefusals()
    {
        EngineParameters p;
        p.n = 6;
        p.mask = MaskChoice::KeyPadding;
        p.paddingCount = 2;
        const EngineResult in = computeEngine(p);
        ShownCells cells;
        cells.queries = {0, 1, 2, 3};
        cells.keys = {0, 1, 2, 3};
        cells.keepRowMetrics = true;
        const EngineResult out = selectShownCells(in, cells);
        for (std::size_t h = 0; h < in.weights.size(); ++h) {
            QCOMPARE(out.metrics[h].entropy, VectorD(in.metrics[h].entropy.head(4)));
            QCOMPARE(out.weights[h], MatrixD(in.weights[h].topLeftCorner(4, 4)));
        }
        cells.keys = {0, 6};
        QVERIFY_THROWS_EXCEPTION(InvalidArgument, selectShownCells(in, cells));
        cells.keys = {};
        QVERIFY_THROWS_EXCEPTION(InvalidArgument, selectShownCells(in, cells));
    }
};

QTEST_GUILESS_MAIN(TestShownView)
#include "tst_shownview.moc"
