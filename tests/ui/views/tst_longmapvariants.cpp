// The Long tab with what the tile engine adds beyond plain attention: differential attention's
// signed weights A₁ − λA₂ (RdBu_r centred on 0 over ±the largest |w|, largest-magnitude
// pooling, the hover's A₁, A₂ and gate, the status line), RoPE in both conventions, ALiBi and
// g < h key heads — each against computeSession's materialized weights (1e-12).

#include "longmaptest.h"

#include "ui/render/figurefile.h"
#include "ui/render/longmaptiles.h"
#include "ui/session/sessioncompute.h"
#include "ui/views/longmapview.h"

#include "core/attention/positional.h"
#include "core/tiles/tilepyramid.h"

#include <QComboBox>
#include <QFontMetricsF>
#include <QTest>

#include <cmath>

using namespace attn;
using namespace attn::test::longmap;

class TestLongMapVariants : public QObject
{
    Q_OBJECT

private slots:
    void initTestCase() { setSessionMemoryBudget(0); }

    /// Differential attention on the Long tab: the tiles are A₁ − λA₂ on RdBu_r centred on 0
    /// over ±the largest |w| (largest-magnitude pooling, sign kept), the hover names A₁ and A₂
    /// and the gate, the status line says the map is signed; a learned sink's row mass too.
    void variantsOnTheLongTab()
    {
        SessionParameters p = smallParameters();
        p.differential = true;
        p.lambda = 0.8;
        p.outputGate = true;
        p.gateBias = 0.5;
        auto view = makeView(p, 600);
        QVERIFY(view);
        QVERIFY(waitFor([&] { return view->viewComplete(); }));
        const SessionResult ref = computeSession(view->mapParameters());
        QVERIFY2(ref.ok(), qPrintable(ref.error));
        QVERIFY(ref.signedWeights);
        QVERIFY(ref.weights[0].minCoeff() < 0);
        QCOMPARE(view->tiles()->colormap(), ColormapId::RdBu);
        const double top = ref.weights[0].cwiseAbs().maxCoeff();
        const ColorNorm norm = view->tiles()->norm();
        QVERIFY2(
            std::abs(norm.vmax - top) <= 1e-12 && norm.vmin == -norm.vmax,
            qPrintable(QStringLiteral("[%1, %2] vs ±%3").arg(norm.vmin).arg(norm.vmax).arg(top)));
        // The default log scale is a symmetric log for signed weights, and the menu says so.
        auto *scale = view->findChild<QComboBox *>(QStringLiteral("longScaleCombo"));
        QVERIFY(scale);
        QCOMPARE(norm.scale, ColorScale::SymLog);
        QCOMPARE(scale->currentText(), QStringLiteral("symmetric log"));
        QVERIFY2(view->statusText().contains(QStringLiteral("colour symlog")),
                 qPrintable(view->statusText()));
        QVERIFY2(view->statusText().contains(QStringLiteral("signed A\u2081 \u2212 \u03bbA\u2082")),
                 qPrintable(view->statusText()));
        QVERIFY(TilePyramid::cellsPerPixel(view->level()) > 1); // pooled pixels, sign kept
        checkTileColours(*view, ref);
        checkExport(*view, ref, 1e-12, "differential");
        // "± max |w|" is the linear scale over the same range.
        scale->setCurrentIndex(0);
        emit scale->activated(0);
        QCOMPARE(scale->currentText(), QStringLiteral("\u00b1 max |w|"));
        QCOMPARE(view->tiles()->norm().scale, ColorScale::Linear);
        QVERIFY(std::abs(view->tiles()->norm().vmax - top) <= 1e-12);
        QCOMPARE(view->tiles()->norm().vmin, -view->tiles()->norm().vmax);
        QVERIFY(waitFor([&] { return view->viewComplete(); }));
        checkTileColours(*view, ref);

        const QRectF area = view->mapArea();
        const QPoint pos
            = (area.topLeft() + QPointF(area.width() * 0.6, area.height() * 0.8)).toPoint();
        const auto [i, j] = view->cellAt(pos);
        QTest::mouseMove(view->canvas(), pos);
        QVERIFY(waitFor([&] { return view->hoverText().contains(QStringLiteral("A\u2081")); }));
        const QString text = view->hoverText();
        const auto num = [](double v) { return figure::minusSign(QString::number(v, 'g', 6)); };
        QVERIFY2(text.contains(QStringLiteral("weight %1").arg(num(ref.weights[0](i, j)))),
                 qPrintable(text));
        const auto num4 = [](double v) { return figure::minusSign(QString::number(v, 'g', 4)); };
        QVERIFY2(text.contains(
                     QStringLiteral("A\u2081 %1, A\u2082 %2")
                         .arg(num4(ref.firstWeights[0](i, j)), num4(ref.secondWeights[0](i, j)))),
                 qPrintable(text));
        QVERIFY2(text.contains(QStringLiteral("gate %1").arg(num4(ref.gate[0](i)))),
                 qPrintable(text));
    }

    /// The colour bar's labels are written whole right of the bar: small ranges (±0.000888, a
    /// differential map over thousands of keys), a log scale's smallest decade and a symmetric
    /// log's ticks, in the canvas's font.
    void colourBarLabelsFit()
    {
        auto view = makeView(smallParameters(), 600);
        QVERIFY(view);
        const QFontMetricsF fm(view->canvas()->font());
        const ColorNorm norms[] = {ColorNorm::symmetric(0.000888), ColorNorm::linear(0, 0.000888),
                                   ColorNorm::upToLargestWeight(ColorScale::Log, 0.000888),
                                   ColorNorm::symmetricLog(0.000888)};
        for (const ColorNorm &norm : norms) {
            const auto labels = LongMapView::colourBarLabels(norm);
            QVERIFY(labels.size() >= 3);
            for (const auto &[t, text] : labels)
                QVERIFY2(fm.horizontalAdvance(text) <= LongMapView::colourBarLabelRoom(),
                         qPrintable(QStringLiteral("\"%1\" is %2 px, the room %3 px")
                                        .arg(text)
                                        .arg(fm.horizontalAdvance(text))
                                        .arg(LongMapView::colourBarLabelRoom())));
        }
        // The labels read the range: its ends for a linear scale.
        QCOMPARE(LongMapView::colourBarLabels(ColorNorm::symmetric(0.000888)).front().second,
                 QStringLiteral("\u22120.00089"));
    }

    /// RoPE (both conventions), ALiBi and g < h key heads on the Long tab: the tiles and the
    /// exported window are the full engine's weights (its keys mean-pooled per group, then
    /// rotated; ALiBi's per-head bias on the scaled scores).
    void ropeAndGroupedKeysOnTheLongTab_data()
    {
        QTest::addColumn<int>("convention");
        QTest::addColumn<int>("kvHeads");
        QTest::addColumn<bool>("alibi");
        QTest::newRow("half, g = 1") << int(RopeConvention::Half) << 1 << false;
        QTest::newRow("interleaved, g = 2") << int(RopeConvention::Interleaved) << 2 << false;
        QTest::newRow("ALiBi, g = 2") << -1 << 2 << true;
    }
    void ropeAndGroupedKeysOnTheLongTab()
    {
        QFETCH(int, convention);
        QFETCH(int, kvHeads);
        QFETCH(bool, alibi);
        SessionParameters p = smallParameters();
        p.heads = 4;
        p.dModel = 32;
        p.rope = !alibi;
        p.alibi = alibi;
        if (!alibi)
            p.ropeConvention = RopeConvention(convention);
        p.ropeBase = 300;
        p.kvHeads = kvHeads;
        auto view = makeView(p, 500);
        QVERIFY(view);
        QVERIFY(waitFor([&] { return view->viewComplete(); }));
        const SessionResult ref = computeSession(view->mapParameters());
        QVERIFY2(ref.ok(), qPrintable(ref.error));
        checkExport(*view, ref, 1e-12, "rope");
        checkTileColours(*view, ref);
    }
};

QTEST_MAIN(TestLongMapVariants)
#include "tst_longmapvariants.moc"
