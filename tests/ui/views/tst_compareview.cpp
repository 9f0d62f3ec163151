// A/B view (CompareVariant, CompareRenderer, CompareView): B's parameters are A's with the
// variant's α, τ, mask and d_k; the difference heatmap equals B − A of two independent
// computeSession calls; the metric deltas equal means computed here from the weights (max,
// −Σ w ln w, 1/Σw², ‖diag(p) − p pᵀ‖_F from the explicit matrix); B is computed by the view's
// own session off the GUI thread; the note about shared inputs is honest; PNG/SVG/PDF exports.

#include "ui/document/sessionfile.h"
#include "ui/render/comparerenderer.h"
#include "ui/session/attentionsession.h"
#include "ui/session/tensorsource.h"
#include "ui/svgtext.h"
#include "ui/views/compareview.h"
#include "ui/views/figurecanvas.h"

#include "testutil.h"

#include <QComboBox>
#include <QDoubleSpinBox>
#include <QFile>
#include <QFontMetricsF>
#include <QImageReader>
#include <QJsonObject>
#include <QJsonValue>
#include <QLabel>
#include <QPushButton>
#include <QSignalSpy>
#include <QSpinBox>
#include <QTemporaryDir>
#include <QTest>
#include <QXmlStreamReader>

#include <cmath>

Q_DECLARE_METATYPE(attn::CompareVariant)

using namespace attn;

namespace {

using ResultPtr = std::shared_ptr<const SessionResult>;

ResultPtr compute(const SessionParameters &p)
{
    return std::make_shared<SessionResult>(computeSession(p));
}

// Two heads of stored weights, 2 × 4 each, written as attn_weights.npy into `dir` and opened
// as a tensor source (nullptr with `error` set when that fails).
std::shared_ptr<const TensorSource> storedWeightsSource(const QTemporaryDir &dir, QString *error)
{
    MatrixD rows(4, 4);
    rows << 0.1, 0.2, 0.3, 0.4, 0.25, 0.25, 0.25, 0.25, 1, 0, 0, 0, 0.5, 0.5, 0, 0;
    NpyArray weights = NpyArray::fromMatrix(rows);
    weights.shape = {2, 2, 4};
    const QString file = dir.filePath(QStringLiteral("attn_weights.npy"));
    writeNpy(file.toStdString(), weights);
    return makeTensorSource(readTensorFile(file), QString(), MaskConvention::Masked, error);
}

// Means over the rows of `w` that are not all zero (fully masked rows have weights 0).
CompareMetrics independentMetrics(const MatrixD &w)
{
    CompareMetrics m;
    int rows = 0;
    for (Index i = 0; i < w.rows(); ++i) {
        double sum = 0, sumSq = 0, maxW = 0, entropy = 0;
        for (Index j = 0; j < w.cols(); ++j) {
            const double p = w(i, j);
            sum += p;
            sumSq += p * p;
            maxW = std::max(maxW, p);
            if (p > 0)
                entropy -= p * std::log(p);
        }
        if (sum == 0.0)
            continue;
        // ‖J‖_F² with J = diag(p) − p pᵀ, every entry formed (diagonal p_i·Σ_{j≠i} p_j).
        double jac = 0;
        for (Index a = 0; a < w.cols(); ++a)
            for (Index b = 0; b < w.cols(); ++b) {
                double e;
                if (a == b) {
                    double rest = 0;
                    for (Index k = 0; k < w.cols(); ++k)
                        if (k != a)
                            rest += w(i, k);
                    e = w(i, a) * rest;
                } else {
                    e = -w(i, a) * w(i, b);
                }
                jac += e * e;
            }
        m.meanMaxWeight += maxW;
        m.meanEntropy += entropy;
        m.meanEffectiveTerms += 1.0 / sumSq;
        m.meanJacobianNorm += std::sqrt(jac);
        ++rows;
    }
    if (rows > 0) {
        m.meanMaxWeight /= rows;
        m.meanEntropy /= rows;
        m.meanEffectiveTerms /= rows;
        m.meanJacobianNorm /= rows;
    }
    return m;
}

double parseShown(QString s)
{
    s.replace(QChar(0x2212), QLatin1Char('-'));
    bool ok = false;
    const double v = s.toDouble(&ok);
    return ok ? v : std::nan("");
}

void compareMetric(double actual, double expected, const char *what)
{
    QVERIFY2(std::abs(actual - expected) <= 1e-12 * std::max(1.0, std::abs(expected)),
             qPrintable(QStringLiteral("%1: %2 vs %3")
                            .arg(QLatin1String(what))
                            .arg(actual, 0, 'g', 17)
                            .arg(expected, 0, 'g', 17)));
}

} // namespace

class TestCompareView : public QObject
{
    Q_OBJECT

private slots:
    void differenceEqualsBMinusA_data()
    {
        QTest::addColumn<SessionParameters>("a");
        QTest::addColumn<SessionParameters>("b"); // written out by hand, not via the variant
        QTest::addColumn<CompareVariant>("variant");
        QTest::addColumn<int>("head");

        SessionParameters a;
        a.n = 7;
        a.dModel = 32;
        a.heads = 4;
        a.seed = 9;

        SessionParameters unscaled = a;
        unscaled.scaleExponent = 0.0;
        CompareVariant v = CompareVariant::from(a);
        v.scaleExponent = 0.0;
        QTest::newRow("scaled vs unscaled") << a << unscaled << v << 1;

        SessionParameters causal = a;
        causal.mask = MaskChoice::Causal;
        v = CompareVariant::from(a);
        v.mask = CompareVariant::Mask::Causal;
        QTest::newRow("none vs causal") << a << causal << v << 2;

        SessionParameters dk512 = a; // d_k 8 → 512 through d_model = d_k · h
        dk512.dModel = 512 * 4;
        v = CompareVariant::from(a);
        v.dK = 512;
        QTest::newRow("d_k 8 vs 512") << a << dk512 << v << 0;

        SessionParameters tau = a;
        tau.temperature = 3.0;
        tau.scaleExponent = 0.25;
        v = CompareVariant::from(a);
        v.temperature = 3.0;
        v.scaleExponent = 0.25;
        QTest::newRow("alpha 0.25, tau 3") << a << tau << v << 3;

        QTest::newRow("mean over heads, unscaled") << a << unscaled << [&] {
            CompareVariant m = CompareVariant::from(a);
            m.scaleExponent = 0.0;
            return m;
        }() << 4;

        SessionParameters decoder = a;
        decoder.kind = AttentionKind::DecoderCausal;
        SessionParameters decoderNone = decoder;
        decoderNone.kind = AttentionKind::EncoderSelf;
        v = CompareVariant::from(decoder);
        v.mask = CompareVariant::Mask::None;
        QTest::newRow("decoder vs no mask") << decoder << decoderNone << v << 0;

        SessionParameters padA = a;
        padA.mask = MaskChoice::KeyPadding;
        padA.paddingCount = 2;
        SessionParameters padBoth = padA;
        padBoth.kind = AttentionKind::DecoderCausal;
        v = CompareVariant::from(padA);
        v.mask = CompareVariant::Mask::CausalPadding;
        QTest::newRow("padding vs causal + padding") << padA << padBoth << v << 1;

        SessionParameters cross;
        cross.kind = AttentionKind::EncoderDecoder;
        cross.n = 4;
        cross.nK = 6;
        cross.dModel = 16;
        cross.heads = 2;
        SessionParameters crossCausal = cross;
        crossCausal.mask = MaskChoice::Causal;
        v = CompareVariant::from(cross);
        v.mask = CompareVariant::Mask::Causal;
        QTest::newRow("cross: none vs causal") << cross << crossCausal << v << 1;
    }
    void differenceEqualsBMinusA()
    {
        QFETCH(SessionParameters, a);
        QFETCH(SessionParameters, b);
        QFETCH(CompareVariant, variant);
        QFETCH(int, head);

        QCOMPARE(variant.apply(a), b);
        const ResultPtr ra = compute(a);
        const ResultPtr rb = compute(b);
        QVERIFY2(ra->ok() && rb->ok(), qPrintable(ra->error + rb->error));
        const bool mean = head == a.heads;
        const MatrixD &wa = mean ? ra->weightsMean : ra->weights[std::size_t(head)];
        const MatrixD &wb = mean ? rb->weightsMean : rb->weights[std::size_t(head)];
        MatrixD expected(wa.rows(), wa.cols());
        for (Index i = 0; i < wa.rows(); ++i)
            for (Index j = 0; j < wa.cols(); ++j)
                expected(i, j) = wb(i, j) - wa(i, j);

        CompareRenderer renderer;
        renderer.setResults(ra, rb);
        renderer.setHead(head);
        QVERIFY(renderer.comparable());
        QCOMPARE(renderer.showsMean(), mean);
        QCOMPARE(renderer.panelCount(), 3);
        ATTN_COMPARE_CLOSE(renderer.difference(), expected, 0.0, 0.0);
        QCOMPARE(renderer.panel(CompareRenderer::PanelDifference).values, &renderer.difference());
        QCOMPARE(renderer.panel(CompareRenderer::PanelA).values, &wa);
        QCOMPARE(renderer.panel(CompareRenderer::PanelB).values, &wb);
        // Diverging and centred on 0 with the true min and max.
        const FigurePanel &d = renderer.panel(CompareRenderer::PanelDifference);
        QCOMPARE(d.colormap, ColormapId::RdBu);
        QCOMPARE(d.norm(0.0), 0.5);
        QVERIFY(d.dataMin <= d.dataMax);
        // A copy (as the export makes) shows the same difference from its own matrix.
        const CompareRenderer copy = renderer;
        QVERIFY(copy.panel(CompareRenderer::PanelDifference).values != &renderer.difference());
        ATTN_COMPARE_CLOSE(*copy.panel(CompareRenderer::PanelDifference).values, expected, 0.0,
                           0.0);
    }

    void metricDeltas_data()
    {
        QTest::addColumn<SessionParameters>("a");
        QTest::addColumn<CompareVariant>("variant");
        QTest::addColumn<int>("head");
        SessionParameters a;
        a.n = 9;
        a.dModel = 32;
        a.heads = 2;
        a.seed = 4;
        CompareVariant v = CompareVariant::from(a);
        v.scaleExponent = 0.0;
        v.dK = 64;
        QTest::newRow("unscaled, d_k 64") << a << v << 0;
        v = CompareVariant::from(a);
        v.mask = CompareVariant::Mask::Padding;
        QTest::newRow("padding") << a << v << 1;
        SessionParameters allPadding = a; // B: every key padding → every row fully masked
        allPadding.paddingCount = a.n;
        v = CompareVariant::from(allPadding);
        v.mask = CompareVariant::Mask::Padding;
        QTest::newRow("B fully masked") << allPadding << v << 1;
        v = CompareVariant::from(a);
        v.temperature = 0.5;
        QTest::newRow("mean over heads, tau 0.5") << a << v << 2;
    }
    void metricDeltas()
    {
        QFETCH(SessionParameters, a);
        QFETCH(CompareVariant, variant);
        QFETCH(int, head);
        const ResultPtr ra = compute(a);
        const ResultPtr rb = compute(variant.apply(a));
        QVERIFY2(ra->ok() && rb->ok(), qPrintable(ra->error + rb->error));
        CompareRenderer renderer;
        renderer.setResults(ra, rb);
        renderer.setHead(head);

        auto expectedFor = [&](const SessionResult &r) {
            if (head < a.heads)
                return independentMetrics(r.weights[std::size_t(head)]);
            CompareMetrics sum;
            for (int k = 0; k < a.heads; ++k) { // the average of the per-head means
                const CompareMetrics m = independentMetrics(r.weights[std::size_t(k)]);
                sum.meanMaxWeight += m.meanMaxWeight / a.heads;
                sum.meanEntropy += m.meanEntropy / a.heads;
                sum.meanEffectiveTerms += m.meanEffectiveTerms / a.heads;
                sum.meanJacobianNorm += m.meanJacobianNorm / a.heads;
            }
            return sum;
        };
        const CompareMetrics ea = expectedFor(*ra), eb = expectedFor(*rb);
        const CompareMetrics ma = renderer.metricsA(), mb = renderer.metricsB();
        compareMetric(ma.meanMaxWeight, ea.meanMaxWeight, "A max weight");
        compareMetric(ma.meanEntropy, ea.meanEntropy, "A entropy");
        compareMetric(ma.meanEffectiveTerms, ea.meanEffectiveTerms, "A effective terms");
        compareMetric(ma.meanJacobianNorm, ea.meanJacobianNorm, "A Jacobian norm");
        compareMetric(mb.meanMaxWeight, eb.meanMaxWeight, "B max weight");
        compareMetric(mb.meanEntropy, eb.meanEntropy, "B entropy");
        compareMetric(mb.meanEffectiveTerms, eb.meanEffectiveTerms, "B effective terms");
        compareMetric(mb.meanJacobianNorm, eb.meanJacobianNorm, "B Jacobian norm");

        // The painted table: rows in order, columns A, B, B − A (6 significant digits).
        const FigureTable &table = renderer.footerTable();
        QCOMPARE(table.header.size(), 4);
        QCOMPARE(table.header[3], QStringLiteral("B \u2212 A"));
        QCOMPARE(table.rows.size(), 4);
        const double expectA[]
            = {ea.meanMaxWeight, ea.meanEntropy, ea.meanEffectiveTerms, ea.meanJacobianNorm};
        const double expectB[]
            = {eb.meanMaxWeight, eb.meanEntropy, eb.meanEffectiveTerms, eb.meanJacobianNorm};
        for (int k = 0; k < 4; ++k) {
            const double delta = expectB[k] - expectA[k];
            const double tol = 1e-5 * std::max(1e-3, std::abs(delta));
            QVERIFY2(std::abs(parseShown(table.rows[k][1]) - expectA[k])
                         <= 1e-5 * std::max(1e-3, std::abs(expectA[k])),
                     qPrintable(table.rows[k].join(QLatin1Char('|'))));
            QVERIFY2(std::abs(parseShown(table.rows[k][2]) - expectB[k])
                         <= 1e-5 * std::max(1e-3, std::abs(expectB[k])),
                     qPrintable(table.rows[k].join(QLatin1Char('|'))));
            QVERIFY2(std::abs(parseShown(table.rows[k][3]) - delta) <= tol,
                     qPrintable(table.rows[k].join(QLatin1Char('|'))));
        }
    }

    void sharedInputsNote_data()
    {
        QTest::addColumn<CompareVariant>("variant");
        QTest::addColumn<QString>("starts");
        QTest::addColumn<QStringList>("mentions");
        SessionParameters a;
        CompareVariant v = CompareVariant::from(a);
        v.scaleExponent = 0;
        QTest::newRow("same d_model")
            << v << QStringLiteral("Same inputs")
            << QStringList {QStringLiteral("seed 0"), QStringLiteral("d_model = 64")};
        v = CompareVariant::from(a);
        v.dK = 128;
        QTest::newRow("other d_model")
            << v << QStringLiteral("Not the same numbers")
            << QStringList {QStringLiteral("seed 0"), QStringLiteral("64 vs 512"),
                            QStringLiteral("different draws")};
    }
    void sharedInputsNote()
    {
        QFETCH(CompareVariant, variant);
        QFETCH(QString, starts);
        QFETCH(QStringList, mentions);
        const SessionParameters a;
        const QString note = attn::sharedInputsNote(a, variant.apply(a));
        QVERIFY2(note.startsWith(starts), qPrintable(note));
        for (const QString &m : mentions)
            QVERIFY2(note.contains(m), qPrintable(note + QStringLiteral(" lacks ") + m));
        // The note is also under the panels.
        CompareRenderer renderer;
        renderer.setResults(compute(a), compute(variant.apply(a)));
        QVERIFY(renderer.footerNotes().contains(note));
    }

    // Cells masked in both A and B show as masked in the difference; a cell masked in B only
    // shows −w_A (a real difference).
    void maskedDifferenceCells()
    {
        SessionParameters a;
        a.n = 5;
        a.dModel = 16;
        a.heads = 2;
        CompareVariant v = CompareVariant::from(a);
        v.mask = CompareVariant::Mask::Causal;
        const ResultPtr ra = compute(a), rb = compute(v.apply(a));
        CompareRenderer renderer;
        renderer.setResults(ra, rb);
        const FigurePanel &d = renderer.panel(CompareRenderer::PanelDifference);
        QVERIFY(d.maskState);
        QCOMPARE(int((*d.maskState)(0, 4)), 0); // masked in B only
        QCOMPARE(renderer.difference()(0, 4), -ra->weights[0](0, 4));

        SessionParameters causalA = a;
        causalA.kind = AttentionKind::DecoderCausal;
        CompareVariant unscaled = CompareVariant::from(causalA);
        unscaled.scaleExponent = 0;
        renderer.setResults(compute(causalA), compute(unscaled.apply(causalA)));
        const FigurePanel &d2 = renderer.panel(CompareRenderer::PanelDifference);
        QVERIFY(d2.maskState);
        QCOMPARE(int((*d2.maskState)(0, 4)), int(MaskCausal)); // masked in both
        QCOMPARE(int((*d2.maskState)(4, 0)), 0);
        QCOMPARE(renderer.difference()(0, 4), 0.0);
    }

    // Differential attention in A and B (B unscaled): both signed maps on one scale, ±the
    // larger |w| of the two, so that a colour means the same weight in both panels.
    void signedPanelsShareTheirRange()
    {
        SessionParameters a;
        a.n = 6;
        a.dModel = 16;
        a.heads = 2;
        a.differential = true;
        a.lambda = 0.8;
        CompareVariant unscaled = CompareVariant::from(a);
        unscaled.scaleExponent = 0;
        const ResultPtr ra = compute(a), rb = compute(unscaled.apply(a));
        QVERIFY(ra->signedWeights && rb->signedWeights);
        CompareRenderer renderer;
        renderer.setResults(ra, rb);
        const FigurePanel &pa = renderer.panel(CompareRenderer::PanelA);
        const FigurePanel &pb = renderer.panel(CompareRenderer::PanelB);
        const double ma = pa.values->cwiseAbs().maxCoeff(), mb = pb.values->cwiseAbs().maxCoeff();
        QVERIFY(ma != mb);
        QCOMPARE(pa.norm, ColorNorm::symmetric(std::max(ma, mb)));
        QCOMPARE(pb.norm, pa.norm);
        QVERIFY2(pa.rangeNote.contains(QStringLiteral("A's and B's")), qPrintable(pa.rangeNote));
    }

    // Regression (new-user trial): A = B gave a difference colourbar of ±1e-300 with ticks
    // like "1e-300". Identical weights now get the range ±1 (all a weight difference can
    // span) and the legend says so; different weights keep their symmetric data range.
    void identicalDifferenceRange_data()
    {
        QTest::addColumn<double>("alphaB"); // A has α = 0.5
        QTest::addColumn<bool>("identical");
        QTest::newRow("B equals A") << 0.5 << true;
        QTest::newRow("B unscaled") << 0.0 << false;
    }

    void identicalDifferenceRange()
    {
        QFETCH(double, alphaB);
        QFETCH(bool, identical);
        SessionParameters a;
        a.n = 7;
        a.dModel = 32;
        a.heads = 4;
        a.seed = 5;
        a.scaleExponent = 0.5;
        CompareVariant variant = CompareVariant::from(a);
        variant.scaleExponent = alphaB;
        const ResultPtr ra = compute(a);
        const ResultPtr rb = compute(variant.apply(a)); // an independent computation of B
        CompareRenderer renderer;
        renderer.setResults(ra, rb);
        QVERIFY(renderer.comparable());
        QCOMPARE(renderer.identical(), identical);
        const FigurePanel &d = renderer.panel(CompareRenderer::PanelDifference);
        const double largest = (rb->weights[0] - ra->weights[0]).cwiseAbs().maxCoeff();
        QVERIFY(std::isfinite(d.norm.vmin) && std::isfinite(d.norm.vmax));
        QCOMPARE(d.norm.vmin, -d.norm.vmax); // symmetric about 0
        if (identical) {
            QCOMPARE(largest, 0.0);
            QCOMPARE(d.norm.vmax, 1.0);
            QCOMPARE(d.rangeNote, QStringLiteral("A and B are identical"));
            QVERIFY(d.title.contains(QStringLiteral("identical")));
        } else {
            QVERIFY(largest > 1e-3);
            QCOMPARE(d.norm.vmax, largest);
            QVERIFY(!d.rangeNote.contains(QStringLiteral("identical")));
        }
        // What is painted: no tick or legend text in scientific notation with a tiny exponent
        // (the ±1e-300 scale), and the identical label on the figure. The SVG keeps the text.
        QTemporaryDir dir;
        QVERIFY(dir.isValid());
        const QString path = dir.filePath(QStringLiteral("ab.svg"));
        QString error;
        QVERIFY2(renderer.save(path, QSize(1200, 640), 1.0, &error), qPrintable(error));
        QFile file(path);
        QVERIFY(file.open(QIODevice::ReadOnly));
        const QString svg = QString::fromUtf8(file.readAll());
        QVERIFY2(!svg.contains(QStringLiteral("e-3")), "a tick like 1e-300 was painted");
        QCOMPARE(svg.contains(QStringLiteral("A and B are identical")), identical);
    }

    // Regression (new-user trial): in a narrow view the legend lines were elided
    // ("centred on 0: ±0…"). They wrap at the legend column now, and the wrapped lines end
    // inside the panel.
    void narrowLegendsWrap()
    {
        SessionParameters a;
        a.n = 8;
        CompareVariant v = CompareVariant::from(a);
        v.scaleExponent = 0.0;
        CompareRenderer renderer;
        renderer.setResults(compute(a), compute(v.apply(a)));
        FigureStyle style;
        style.fontPixelSize = 12; // as on screen
        renderer.setStyle(style);
        const QRectF bounds(0, 0, 420, 640);
        const PanelFigureLayout lay = renderer.layout(bounds);
        QCOMPARE(lay.maps.size(), 3);
        QFont font(QStringLiteral("DejaVu Sans"));
        font.setPixelSize(qRound(lay.fontPixelSize));
        const QFontMetricsF fm(font);
        const FigurePanel &d = renderer.panel(CompareRenderer::PanelDifference);
        const QString range = d.rangeNote; // "centred on 0: ±0.226"
        QVERIFY(fm.horizontalAdvance(range) > lay.legendWidth); // would have been elided
        qreal height = 0;
        for (const QString &line : {QStringLiteral("RdBu_r, linear"), range})
            height += fm.boundingRect(QRectF(0, 0, lay.legendWidth, 1e6), Qt::TextWordWrap, line)
                          .height();
        const int k = CompareRenderer::PanelDifference;
        QVERIFY(lay.colorbars[k].bottom() + height <= lay.frames[k].bottom());
        QVERIFY(bounds.contains(lay.frames[k]));
        QVERIFY(lay.frames[k].bottom() <= lay.footer.top());
    }

    // Tensors opened over random inputs fix B's d_k at A's while they are shown; the d_k set
    // for B comes back with the random inputs (it was overwritten by the file's).
    void editedDkSurvivesOpenedTensors()
    {
        SessionParameters p;
        p.n = 6;
        p.dModel = 16;
        p.heads = 2;
        CompareView view;
        view.show();
        QVERIFY(QTest::qWaitForWindowExposed(&view));
        view.setResultA(std::make_shared<SessionResult>(computeSession(p)));
        CompareVariant edited = view.variant();
        edited.dK = 5;
        view.setVariant(edited);
        QCOMPARE(view.variant().dK, 5);

        QTemporaryDir dir;
        QVERIFY(dir.isValid());
        QString error;
        const auto source = storedWeightsSource(dir, &error);
        QVERIFY2(source, qPrintable(error));
        const SessionParameters a = source->parametersFor(p, source);
        view.setResultA(std::make_shared<SessionResult>(computeTensorSession(a)));
        QCOMPARE(view.variant().dK, a.dK());
        QCOMPARE(view.findChild<QSpinBox *>(QStringLiteral("compareDkSpin"))->value(), int(a.dK()));

        view.setResultA(std::make_shared<SessionResult>(computeSession(p)));
        QCOMPARE(view.variant().dK, 5);
        QCOMPARE(view.findChild<QSpinBox *>(QStringLiteral("compareDkSpin"))->value(), 5);
        QCOMPARE(view.parametersB()->dK(), 5);
    }

    // Stored weights (no Q, K) leave nothing to vary for B: the view says so instead of
    // trying B with a d_k the file does not have; loaded tensors fix B's d_k at A's.
    void storedWeightsOnly()
    {
        QTemporaryDir dir;
        QVERIFY(dir.isValid());
        QString error;
        const auto source = storedWeightsSource(dir, &error);
        QVERIFY2(source, qPrintable(error));
        const SessionParameters a = source->parametersFor(SessionParameters {}, source);
        const auto ra = std::make_shared<SessionResult>(computeTensorSession(a));
        QVERIFY2(ra->ok(), qPrintable(ra->error));

        CompareView view;
        view.show();
        QVERIFY(QTest::qWaitForWindowExposed(&view));
        view.setResultA(ra);
        QCOMPARE(view.variant().dK, a.dK());
        QVERIFY(!view.renderer().comparable());
        QVERIFY2(view.renderer().message().contains(QStringLiteral("weights only")),
                 qPrintable(view.renderer().message()));
        QVERIFY(view.statusLabel()->text().contains(QStringLiteral("weights only")));
        QVERIFY(!view.findChild<QSpinBox *>(QStringLiteral("compareDkSpin"))->isEnabled());
        QVERIFY(!view.findChild<QDoubleSpinBox *>(QStringLiteral("compareAlphaSpin"))->isEnabled());
    }

    // Typing "512" into B's d_k computes B once, not for 5 and 51 first.
    void spinBoxesWaitForTheFinishedNumber()
    {
        CompareView view;
        for (const char *name : {"compareAlphaSpin", "compareTauSpin", "compareDkSpin"}) {
            auto *spin = view.findChild<QAbstractSpinBox *>(QLatin1String(name));
            QVERIFY2(spin, name);
            QVERIFY2(!spin->keyboardTracking(), name);
        }
    }

    void messagesWithoutComparison()
    {
        CompareRenderer renderer;
        QCOMPARE(renderer.panelCount(), 0);
        QVERIFY(!renderer.comparable());
        SessionParameters a;
        a.n = 4;
        renderer.setResults(compute(a), nullptr);
        QVERIFY(renderer.message().contains(QStringLiteral("Computing B")));
        SessionParameters other = a;
        other.n = 5;
        renderer.setResults(compute(a), compute(other));
        QVERIFY(!renderer.comparable());
        QVERIFY(renderer.message().contains(QStringLiteral("differ in shape")));
        QCOMPARE(renderer.difference().size(), Index(0));
    }

    // The view: B from the strip, computed by the view's own session (worker thread), shown
    // against A; every strip edit recomputes B; B = A gives a zero difference.
    void viewComputesB()
    {
        SessionParameters a;
        a.n = 6;
        a.dModel = 32;
        a.heads = 4;
        a.seed = 21;
        const ResultPtr ra = compute(a);
        CompareView view;
        view.resize(1500, 700);
        view.show();
        QVERIFY(QTest::qWaitForWindowExposed(&view));
        QSignalSpy shown(&view, &CompareView::comparisonChanged);
        view.setResultA(ra);
        // The first A sets B = A with the scale toggled.
        QCOMPARE(view.variant().scaleExponent, 0.0);
        QCOMPARE(view.variant().dK, 8);
        QTRY_VERIFY(view.isUpToDate());
        QVERIFY(shown.count() >= 1);
        SessionParameters expectedB = a;
        expectedB.scaleExponent = 0.0;
        QCOMPARE(view.renderer().resultB()->params, expectedB);
        QCOMPARE(view.sessionB()->parameters(), expectedB);
        const ResultPtr rb = compute(expectedB);
        ATTN_COMPARE_CLOSE(view.renderer().difference(), rb->weights[0] - ra->weights[0], 0.0, 0.0);

        // Strip: d_k 8 → 64 and a causal mask for B.
        view.findChild<QSpinBox *>(QStringLiteral("compareDkSpin"))->setValue(64);
        view.findChild<QComboBox *>(QStringLiteral("compareMaskCombo"))->setCurrentIndex(1);
        view.setHead(2);
        QTRY_VERIFY(view.isUpToDate());
        SessionParameters b2 = expectedB;
        b2.dModel = 64 * 4;
        b2.mask = MaskChoice::Causal;
        QCOMPARE(view.renderer().resultB()->params, b2);
        const ResultPtr rb2 = compute(b2);
        ATTN_COMPARE_CLOSE(view.renderer().difference(), rb2->weights[2] - ra->weights[2], 0.0,
                           0.0);
        QVERIFY(view.statusLabel()->text().contains(QStringLiteral("d_k 8 \u2192 64")));
        QVERIFY(view.renderer()
                    .footerNotes()
                    .join(QLatin1Char(' '))
                    .contains(QStringLiteral("Not the same numbers")));

        // B = A: zero difference.
        view.resetVariant();
        QTRY_VERIFY(view.isUpToDate());
        QCOMPARE(view.renderer().resultB()->params, a);
        QCOMPARE(view.renderer().difference().cwiseAbs().maxCoeff(), 0.0);

        // A changes: B follows A's new seed with the same variant.
        SessionParameters a2 = a;
        a2.seed = 22;
        view.setResultA(compute(a2));
        QTRY_VERIFY(view.isUpToDate());
        QCOMPARE(view.renderer().resultB()->params.seed, quint64(22));
    }

    void bFollowsAUntilEdited_data()
    {
        QTest::addColumn<QString>("edit");
        QTest::newRow("alpha spin") << "alpha";
        QTest::newRow("d_k spin") << "d_k";
        QTest::newRow("mask combo") << "mask";
        QTest::newRow("B = A button") << "reset";
        QTest::newRow("restored session state") << "state";
    }

    void bFollowsAUntilEdited()
    {
        // The new-user finding: scale off and d_k 16 → 32 before the A/B tab is first shown
        // gave B = the startup A (d_k 16, unscaled). Until B is edited, B is the current A with
        // the scale toggled (as `attnlab heatmap --view compare`); an edited B stays as set.
        QFETCH(QString, edit);
        SessionParameters a; // α 0.5 (1/√d_k)
        a.n = 6;
        a.dModel = 64;
        a.heads = 4; // d_k 16
        a.seed = 3;
        CompareView view;
        view.resize(1500, 700);
        view.setResultA(compute(a)); // the startup A, tab not shown
        QVERIFY(!view.isVariantEdited());
        QCOMPARE(view.variant().scaleExponent, 0.0);
        QCOMPARE(view.variant().dK, 16);

        SessionParameters a2 = a; // Ctrl+K (scale off), Ctrl+] (d_k 16 → 32)
        a2.scaleExponent = 0.0;
        a2.dModel = 128;
        view.setResultA(compute(a2));
        SessionParameters expectedB = a2;
        expectedB.scaleExponent = 0.5;
        QCOMPARE(view.parametersB().value(), expectedB);
        QCOMPARE(view.variant().scaleExponent, 0.5);
        QCOMPARE(view.variant().dK, 32);
        auto *alphaSpin = view.findChild<QDoubleSpinBox *>(QStringLiteral("compareAlphaSpin"));
        auto *dkSpin = view.findChild<QSpinBox *>(QStringLiteral("compareDkSpin"));
        QCOMPARE(alphaSpin->value(), 0.5);
        QCOMPARE(dkSpin->value(), 32);
        // Not edited: a session keeps the head only, so B follows A there too.
        QCOMPARE(view.state(), (QJsonObject {{QStringLiteral("head"), 0}}));

        view.show(); // the tab is shown: B computed from the same inputs as A
        QVERIFY(QTest::qWaitForWindowExposed(&view));
        QTRY_VERIFY(view.isUpToDate());
        QCOMPARE(view.renderer().resultB()->params, expectedB);
        QVERIFY(!view.renderer()
                     .footerNotes()
                     .join(QLatin1Char(' '))
                     .contains(QStringLiteral("Not the same numbers")));
        QCOMPARE(view.statusLabel()->text(),
                 QStringLiteral("B: scale 1 (unscaled) \u2192 1/\u221ad_k"));

        // The user edits B.
        if (edit == QLatin1String("alpha"))
            alphaSpin->setValue(0.25);
        else if (edit == QLatin1String("d_k"))
            dkSpin->setValue(8);
        else if (edit == QLatin1String("mask"))
            view.findChild<QComboBox *>(QStringLiteral("compareMaskCombo"))->setCurrentIndex(1);
        else if (edit == QLatin1String("reset"))
            view.findChild<QPushButton *>(QStringLiteral("compareResetButton"))->click();
        else
            view.setState(QJsonObject {{QStringLiteral("alpha"), 0.25}});
        QVERIFY(view.isVariantEdited());
        const CompareVariant edited = view.variant();
        QVERIFY(edited != CompareVariant::from(a2) || edit == QLatin1String("reset"));
        QVERIFY(view.state().contains(QLatin1String("alpha")));

        // A changes again (scale on, d_k 64): B keeps the user's variant.
        SessionParameters a3 = a2;
        a3.scaleExponent = 0.5;
        a3.dModel = 256;
        view.setResultA(compute(a3));
        QCOMPARE(view.variant(), edited);
        QCOMPARE(view.parametersB().value(), edited.apply(a3));
        QTRY_VERIFY(view.isUpToDate());
        QCOMPARE(view.renderer().resultB()->params, edited.apply(a3));

        // A session saved while B followed A (head only): B follows the current A again.
        view.setState(QJsonObject {{QStringLiteral("head"), 1}});
        QVERIFY(!view.isVariantEdited());
        QCOMPARE(view.head(), 1);
        QCOMPARE(view.variant().scaleExponent, 0.0);
        QCOMPARE(view.variant().dK, 64);
        SessionParameters followB = a3;
        followB.scaleExponent = 0.0;
        QCOMPARE(view.parametersB().value(), followB);
    }

    void stateRoundTrip_data()
    {
        QTest::addColumn<CompareVariant>("variant");
        QTest::addColumn<int>("head");
        QTest::newRow("alpha 0.25, tau 2.5, causal, d_k 32, head 3")
            << CompareVariant {0.25, 2.5, CompareVariant::Mask::Causal, 32} << 3;
        QTest::newRow("unscaled, tau 0.01, causal + padding, d_k 1, mean")
            << CompareVariant {0.0, 0.01, CompareVariant::Mask::CausalPadding, 1} << 4;
        QTest::newRow("alpha 1, tau 100, padding, d_k 8, head 0")
            << CompareVariant {1.0, 100.0, CompareVariant::Mask::Padding, 8} << 0;
    }

    void stateRoundTrip()
    {
        // B's settings and the head set in one view, saved in a session document, loaded and
        // applied to a fresh view (before its first A, as when a session is opened): the same
        // variant, head, B parameters and difference.
        QFETCH(CompareVariant, variant);
        QFETCH(int, head);
        SessionParameters a;
        a.n = 6;
        a.dModel = 32;
        a.heads = 4;
        a.seed = 5;
        a.paddingCount = 2;
        const ResultPtr ra = compute(a);
        CompareView first;
        QVERIFY(first.state().isEmpty()); // nothing chosen yet
        first.setResultA(ra);
        first.setVariant(variant);
        first.setHead(head);

        QTemporaryDir dir;
        QVERIFY(dir.isValid());
        SessionDocument saved;
        saved.parameters = a;
        saved.view.insert(QStringLiteral("compare"), first.state());
        const QString path = dir.filePath(QStringLiteral("compare.attnlab.json"));
        QString error;
        QVERIFY2(SessionFile::save(path, saved, &error), qPrintable(error));
        const auto loaded = SessionFile::load(path, &error);
        QVERIFY2(loaded, qPrintable(error));
        const QJsonObject state = loaded->view.value(QLatin1String("compare")).toObject();
        QCOMPARE(state.value(QLatin1String("d_k")).toInt(), variant.dK);
        QCOMPARE(state.value(QLatin1String("head")).toInt(), head);

        CompareView second;
        second.setState(state);
        second.setResultA(ra); // the first A keeps the restored variant
        QCOMPARE(second.variant(), variant);
        QCOMPARE(second.findChild<QComboBox *>(QStringLiteral("compareHeadCombo"))->currentIndex(),
                 head);
        QCOMPARE(second.findChild<QDoubleSpinBox *>(QStringLiteral("compareAlphaSpin"))->value(),
                 variant.scaleExponent);
        QCOMPARE(second.state(), first.state());
        second.show();
        QVERIFY(QTest::qWaitForWindowExposed(&second));
        QTRY_VERIFY(second.isUpToDate());
        QCOMPARE(second.head(), head);
        const SessionParameters pb = variant.apply(a);
        QCOMPARE(second.renderer().resultB()->params, pb);
        const ResultPtr rb = compute(pb);
        const MatrixD &wa = head < a.heads ? ra->weights[std::size_t(head)] : ra->weightsMean;
        const MatrixD &wb = head < a.heads ? rb->weights[std::size_t(head)] : rb->weightsMean;
        ATTN_COMPARE_CLOSE(second.renderer().difference(), wb - wa, 1e-12, 1e-12);
    }

    void stateIgnoresInvalidValues_data()
    {
        QTest::addColumn<QString>("key");
        QTest::addColumn<QJsonValue>("value");
        QTest::newRow("alpha above 1") << "alpha" << QJsonValue(1.5);
        QTest::newRow("alpha negative") << "alpha" << QJsonValue(-0.1);
        QTest::newRow("alpha as text") << "alpha" << QJsonValue(QStringLiteral("0.5"));
        QTest::newRow("tau 0") << "temperature" << QJsonValue(0.0);
        QTest::newRow("tau 1e301") << "temperature" << QJsonValue(1e301);
        QTest::newRow("unknown mask") << "mask" << QJsonValue(QStringLiteral("sliding"));
        QTest::newRow("mask as number") << "mask" << QJsonValue(1);
        QTest::newRow("d_k 0") << "d_k" << QJsonValue(0);
        QTest::newRow("d_k fractional") << "d_k" << QJsonValue(7.5);
        QTest::newRow("d_k above 4096") << "d_k" << QJsonValue(5000);
        QTest::newRow("head negative") << "head" << QJsonValue(-1);
        QTest::newRow("head fractional") << "head" << QJsonValue(1.5);
        QTest::newRow("head null") << "head" << QJsonValue(QJsonValue::Null);
    }

    void stateIgnoresInvalidValues()
    {
        // One bad value among good ones: that key keeps the view's value, the others apply.
        QFETCH(QString, key);
        QFETCH(QJsonValue, value);
        SessionParameters a;
        a.n = 5;
        a.dModel = 16;
        a.heads = 2;
        CompareView view;
        view.setResultA(compute(a));
        const CompareVariant before = view.variant(); // α 0, τ 1, no mask, d_k 8
        auto *headCombo = view.findChild<QComboBox *>(QStringLiteral("compareHeadCombo"));
        const int headBefore = headCombo->currentIndex();
        QJsonObject state {{QStringLiteral("alpha"), 0.75},
                           {QStringLiteral("temperature"), 3.0},
                           {QStringLiteral("mask"), QStringLiteral("causal")},
                           {QStringLiteral("d_k"), 4},
                           {QStringLiteral("head"), 1}};
        state.insert(key, value);
        view.setState(state);
        const CompareVariant v = view.variant();
        QCOMPARE(v.scaleExponent, key == "alpha" ? before.scaleExponent : 0.75);
        QCOMPARE(v.temperature, key == "temperature" ? before.temperature : 3.0);
        QCOMPARE(v.mask, key == "mask" ? before.mask : CompareVariant::Mask::Causal);
        QCOMPARE(v.dK, key == "d_k" ? before.dK : 4);
        QCOMPARE(headCombo->currentIndex(), key == "head" ? headBefore : 1);
        // Unknown keys and an empty object change nothing.
        view.setState(QJsonObject {{QStringLiteral("zoom"), 2}});
        QCOMPARE(view.variant(), v);
        view.setState({});
        QCOMPARE(view.variant(), v);
    }

    void invalidB()
    {
        SessionParameters a;
        a.dModel = 64;
        a.heads = 64; // d_k 1; B with d_k 128 needs d_model 8192 > 4096
        CompareView view;
        view.show();
        QVERIFY(QTest::qWaitForWindowExposed(&view));
        view.setResultA(compute(a));
        CompareVariant v = view.variant();
        v.dK = 128;
        view.setVariant(v);
        QVERIFY(!view.isUpToDate());
        QVERIFY2(view.statusLabel()->text().contains(QStringLiteral("d_model")),
                 qPrintable(view.statusLabel()->text()));
        QVERIFY(view.renderer().message().contains(QStringLiteral("B cannot be computed")));
    }

    void exports()
    {
        QTemporaryDir dir;
        QVERIFY(dir.isValid());
        SessionParameters a;
        a.n = 6;
        a.dModel = 16;
        a.heads = 2;
        a.kind = AttentionKind::DecoderCausal;
        CompareView view;
        QString error;
        QVERIFY(!view.exportFigure(dir.filePath(QStringLiteral("none.png")), QSize(800, 500), 1,
                                   &error));
        QVERIFY(!error.isEmpty());
        view.show();
        QVERIFY(QTest::qWaitForWindowExposed(&view));
        view.setResultA(compute(a));
        QTRY_VERIFY(view.isUpToDate());

        const QString png = dir.filePath(QStringLiteral("ab.png"));
        QVERIFY2(view.exportFigure(png, QSize(1300, 650), 1.5, &error), qPrintable(error));
        QImageReader reader(png);
        QCOMPARE(reader.format(), QByteArray("png"));
        QCOMPARE(reader.read().size(), QSize(1950, 975));

        const QString svg = dir.filePath(QStringLiteral("ab.svg"));
        QVERIFY2(view.exportFigure(svg, QSize(1300, 650), 1, &error), qPrintable(error));
        const attn::test::SvgTexts parsed = attn::test::readSvgTextsFile(svg);
        QVERIFY2(parsed.error.isEmpty(), qPrintable(parsed.error));
        QCOMPARE(parsed.root, QStringLiteral("svg"));
        const QStringList &texts = parsed.texts;
        QVERIFY(texts.contains(QStringLiteral("mean max weight")));
        QVERIFY(texts.contains(QStringLiteral("B \u2212 A")));
        QCOMPARE(texts.count(QStringLiteral("query i (row)")), 3);
        QVERIFY(std::any_of(texts.begin(), texts.end(),
                            [](const QString &t) { return t.startsWith(QStringLiteral("B: ")); }));

        const QString pdf = dir.filePath(QStringLiteral("ab.pdf"));
        QVERIFY2(view.exportFigure(pdf, QSize(1300, 650), 1, &error), qPrintable(error));
        QFile pdfFile(pdf);
        QVERIFY(pdfFile.open(QIODevice::ReadOnly));
        const QByteArray data = pdfFile.readAll();
        QVERIFY(data.startsWith("%PDF"));
        QVERIFY(data.contains("/Type /Page"));
    }
};

QTEST_MAIN(TestCompareView)
#include "tst_compareview.moc"
