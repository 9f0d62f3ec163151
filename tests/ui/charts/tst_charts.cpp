// The live metric charts keep their axis labels legible (regression of the new-user trial: the
// d_k chart's labels were elided to "10…", "20…" in a narrow dock). The scaling charts' log₂ d_k
// axis labels every power of two when they fit and thins them (powers of 4, then 8) when they
// do not; the labels always fit side by side in the plot. The per-row metrics chart is not
// redrawn while behind another tab (a tab page or a tabified dock) and shows the newest result
// when brought to the front.

#include "core/io/npy.h"
#include "ui/charts/chartstyle.h"
#include "ui/charts/rowmetricschart.h"
#include "ui/charts/scalingchart.h"
#include "ui/session/sessioncompute.h"
#include "ui/session/tensorsource.h"

#include <QChart>
#include <QChartView>
#include <QDockWidget>
#include <QFontMetricsF>
#include <QLabel>
#include <QLogValueAxis>
#include <QMainWindow>
#include <QScrollArea>
#include <QSignalSpy>
#include <QTabWidget>
#include <QTemporaryDir>
#include <QTest>
#include <QVBoxLayout>
#include <QXYSeries>

#include <cmath>
#include <functional>
#include <memory>

using namespace attn;

namespace {

// The series the chart displays, by legend name (read from the chart, not through the
// chart's own accessors, which bring a hidden chart up to date).
QXYSeries *displayedSeries(const RowMetricsChart &chart, const QString &name)
{
    const auto *view = chart.findChild<QChartView *>();
    if (!view)
        return nullptr;
    for (QAbstractSeries *s : view->chart()->series())
        if (s->name() == name)
            return qobject_cast<QXYSeries *>(s);
    return nullptr;
}

// Max weight, entropy (nats) and 1/Σw² of each row of `weights`, computed here.
void expectRows(const QList<QPointF> &maxW, const QList<QPointF> &entropy,
                const QList<QPointF> &effective, const MatrixD &weights)
{
    QCOMPARE(maxW.size(), qsizetype(weights.rows()));
    QCOMPARE(entropy.size(), qsizetype(weights.rows()));
    QCOMPARE(effective.size(), qsizetype(weights.rows()));
    for (qsizetype i = 0; i < maxW.size(); ++i) {
        const auto row = weights.row(Index(i));
        double h = 0, sumSq = 0;
        for (Index j = 0; j < row.size(); ++j) {
            if (row(j) > 0)
                h -= row(j) * std::log(row(j));
            sumSq += row(j) * row(j);
        }
        QCOMPARE(maxW[i].x(), double(i));
        QCOMPARE(maxW[i].y(), row.maxCoeff());
        QVERIFY(std::abs(entropy[i].y() - h) <= 1e-12);
        QVERIFY(std::abs(effective[i].y() - 1.0 / sumSq) <= 1e-12 * (1.0 / sumSq));
    }
}

} // namespace

class TestCharts : public QObject
{
    Q_OBJECT

private slots:
    void logAxisLabels_data()
    {
        QTest::addColumn<double>("base");
        QTest::addColumn<QStringList>("labels");
        QTest::newRow("base 2") << 2.0 << QStringList {"2",   "4",   "8",   "16",   "32",  "64",
                                                       "128", "256", "512", "1024", "2048"};
        QTest::newRow("base 4") << 4.0 << QStringList {"4", "16", "64", "256", "1024"};
        QTest::newRow("base 8") << 8.0 << QStringList {"8", "64", "512"};
    }

    void logAxisLabels()
    {
        QFETCH(double, base);
        QFETCH(QStringList, labels);
        QCOMPARE(chartstyle::logAxisLabels(1.5, 2800, base), labels); // the d_k axis range
    }

    void scalingChartLabelsFit_data()
    {
        QTest::addColumn<int>("width");
        QTest::addColumn<double>("base");
        QTest::newRow("wide: every power of 2") << 900 << 2.0;
        QTest::newRow("narrow dock: thinned") << 300 << 0.0; // 4 or 8, whichever fits
    }

    void scalingChartLabelsFit()
    {
        QFETCH(int, width);
        QFETCH(double, base);
        MaxWeightChart chart;
        chart.resize(width, 260);
        chart.setCurrentDk(16);
        chart.show();
        QVERIFY(QTest::qWaitForWindowExposed(&chart));
        QTRY_VERIFY(chart.chart()->plotArea().width() > 0);
        QTest::qWait(50); // the coalesced redraw
        const qreal plotW = chart.chart()->plotArea().width();
        if (base > 0)
            QCOMPARE(chart.xAxisBase(), base);
        else
            QVERIFY(chart.xAxisBase() == 4.0 || chart.xAxisBase() == 8.0);
        QVERIFY2(chart.xAxisLabelsWidth() <= plotW,
                 qPrintable(QStringLiteral("labels need %1 px, the plot is %2 px wide")
                                .arg(chart.xAxisLabelsWidth())
                                .arg(plotW)));
        QVERIFY(chart.xAxisLabels().size() >= 3);
        // The smaller base would not have fitted (labels are thinned only when needed).
        if (chart.xAxisBase() > 2.0)
            QVERIFY(chart.xAxisLabelsWidth(chart.xAxisBase() / 2) > plotW);
    }

    // The live d_k charts explain what E2's table does not show: ‖J‖ depends on the number of
    // keys (the sweep's key count is stated; with many keys the scaled softmax is nearly
    // uniform, so ‖J‖ unscaled can lie above ‖J‖ scaled); and a user's α, τ other than the two
    // drawn curves is drawn as a third, labelled curve once a sweep with that setting arrived.
    void scalingChartsExplainKeysAndScale()
    {
        auto sweep = std::make_shared<ScalingSweepData>();
        sweep->seed = 0;
        sweep->keys = 1024;
        sweep->trials = 16;
        sweep->dk = {2, 4};
        sweep->scoreStd = {1.4, 2};
        sweep->maxWeightUnscaled = {0.01, 0.02};
        sweep->maxWeightScaled = {0.005, 0.006};
        sweep->jacobianUnscaled = {0.1, 0.2};
        sweep->jacobianScaled = {0.03, 0.031};
        sweep->maxWeightCustom = {0.007, 0.008};
        sweep->jacobianCustom = {0.05, 0.06};
        JacobianNormChart jacobian;
        MaxWeightChart maxWeight;
        for (ScalingChart *chart :
             {static_cast<ScalingChart *>(&jacobian), static_cast<ScalingChart *>(&maxWeight)}) {
            chart->setSweep(sweep);
            chart->setCurrentScale(0.5, 1.0);
            QVERIFY2(chart->chart()->title().contains(
                         QStringLiteral("your setting α = ½, τ = 1: the scaled curve")),
                     qPrintable(chart->chart()->title()));
            QTRY_VERIFY(chart->customPoints().isEmpty());
            // A setting the sweep was not made with: named as on its way, not drawn.
            chart->setCurrentScale(0.3, 2.0);
            QVERIFY2(chart->chart()->title().contains(
                         QStringLiteral("your α = 0.3, τ = 2: its curve is being swept")),
                     qPrintable(chart->chart()->title()));
            QTest::qWait(40);
            QVERIFY(chart->customPoints().isEmpty());
            // The sweep with that setting: the third curve, labelled.
            auto own = std::make_shared<ScalingSweepData>(*sweep);
            own->alpha = 0.3;
            own->temperature = 2.0;
            chart->setSweep(own);
            const std::vector<double> &expected
                = chart == &jacobian ? own->jacobianCustom : own->maxWeightCustom;
            QTRY_COMPARE(chart->customPoints(),
                         (QList<QPointF> {QPointF(2, expected[0]), QPointF(4, expected[1])}));
            QCOMPARE(chart->customName(), QStringLiteral("α = 0.3, τ = 2"));
            QVERIFY2(chart->chart()->title().contains(
                         QStringLiteral("your α = 0.3, τ = 2: the dashed green curve")),
                     qPrintable(chart->chart()->title()));
            chart->setCurrentScale(0.0, 1.0); // the unscaled curve
            QVERIFY(chart->chart()->title().contains(
                QStringLiteral("your setting α = 0, τ = 1: the unscaled curve")));
            QTRY_VERIFY(chart->customPoints().isEmpty());
            chart->setSweep(sweep);
        }
        // ‖J‖ of a uniform row over 1024 keys: √(1/1024 − 1/1024²) = 0.031.
        QVERIFY2(jacobian.chart()->title().contains(
                     QStringLiteral("1024 keys: scaled is near uniform (‖J‖ ≈ 0.031), unscaled "
                                    "above it")),
                 qPrintable(jacobian.chart()->title()));
        QVERIFY(jacobian.chart()->title().contains(
            QStringLiteral("‖J‖ depends on the number of keys: 1024 here (the session's n_k")));
        QVERIFY2(maxWeight.chart()->title().contains(
                     QStringLiteral("1024 keys: uniform max weight 1/1024 = 0.00098")),
                 qPrintable(maxWeight.chart()->title()));
        // E2's own 16 keys: the key count is still stated, the many-keys note is not there.
        auto e2 = std::make_shared<ScalingSweepData>(*sweep);
        e2->keys = 16;
        jacobian.setSweep(e2);
        jacobian.setCurrentScale(0.5, 1.0);
        QTRY_VERIFY(!jacobian.chart()->title().contains(QStringLiteral("near uniform")));
        QVERIFY(jacobian.chart()->title().contains(QStringLiteral("number of keys: 16 here")));
    }

    // The per-row metrics chart behind another tab: a page of a tab widget (hidden), or in a
    // dock tabified behind another dock as in MainWindow (moved off-screen, not hidden). Results
    // and heads set meanwhile are not plotted (no series replaced, even after the coalescing
    // interval), and bringing the chart to the front plots the newest result and head at once,
    // before any timer; in front, it follows on its timer; reading the points of a chart behind
    // brings it up to date.
    // n = 2048 in a short chart: each value axis keeps a title that fits the plot's height
    // whole (a shorter one, or none), never one Qt elides to "…" (read as "⋮" when vertical);
    // in a tall chart the full titles.
    // The uniform row's reference values count the keys a row may attend to: with 3 of 9 keys
    // padded, w = 1/6, ln 6 = 1.79 nats and 6 terms (not 1/9, ln 9 and 9).
    void rowMetricsUniformRowSkipsPaddedKeys()
    {
        SessionParameters p;
        p.n = 9;
        p.dModel = 16;
        p.heads = 2;
        p.mask = MaskChoice::KeyPadding;
        p.paddingCount = 3;
        const auto padded = std::make_shared<const SessionResult>(computeSession(p));
        QVERIFY2(padded->ok(), qPrintable(padded->error));
        RowMetricsChart chart;
        chart.setResult(padded);
        const auto *info = chart.findChild<QLabel *>(QStringLiteral("rowMetricsInfo"));
        QVERIFY(info);
        QVERIFY2(
            info->text().startsWith(QStringLiteral(
                "9 rows \u00d7 9 keys · uniform row over the 6 unmasked keys: w\u00a0=\u00a01/6, "
                "1.79 nats, 6 terms")),
            qPrintable(info->text()));
        // A causal mask leaves every key to the last row: all 9 count.
        p.mask = MaskChoice::Causal;
        const auto causal = std::make_shared<const SessionResult>(computeSession(p));
        QVERIFY2(causal->ok(), qPrintable(causal->error));
        chart.setResult(causal);
        QVERIFY2(info->text().startsWith(QStringLiteral(
                     "9 rows \u00d7 9 keys · uniform row: w\u00a0=\u00a01/9, 2.20 nats, 9 terms")),
                 qPrintable(info->text()));
    }

    // Stored signed weights (differential attention's A₁ − λA₂ written by attnlab compute):
    // a signed row is no distribution, so its entropy and effective terms are not available —
    // left out of the chart and said so — while its largest weight is drawn.
    void signedStoredWeightsHaveNoEntropy()
    {
        QTemporaryDir dir;
        MatrixD rows(3, 3);
        rows << 0.7, 0.1, -0.1, 0.2, 0.6, -0.2, 0.5, -0.05, 0.25;
        const QString file = dir.filePath(QStringLiteral("signed.npy"));
        writeNpy(file.toStdString(), NpyArray::fromMatrix(rows));
        QString error;
        const auto source
            = makeTensorSource(readTensorFile(file), QString(), MaskConvention::Masked, &error);
        QVERIFY2(source, qPrintable(error));
        const SessionParameters p = source->parametersFor(SessionParameters {}, source);
        const auto result = std::make_shared<const SessionResult>(computeTensorSession(p));
        QVERIFY2(result->ok(), qPrintable(result->error));
        QVERIFY(result->signedWeights);
        const RowMetrics &m = result->metrics[0];
        for (Index i = 0; i < 3; ++i) {
            QVERIFY(std::isnan(m.entropy(i)) && std::isnan(m.effectiveTerms(i)));
            QCOMPARE(m.maxWeight(i), rows.row(i).maxCoeff());
        }
        RowMetricsChart chart;
        chart.setResult(result);
        chart.show();
        QVERIFY(QTest::qWaitForWindowExposed(&chart));
        QTRY_COMPARE(displayedSeries(chart, QStringLiteral("max weight"))->count(), 3);
        QCOMPARE(displayedSeries(chart, QStringLiteral("entropy (nats)"))->count(), 0);
        const auto *info = chart.findChild<QLabel *>(QStringLiteral("rowMetricsInfo"));
        QVERIFY2(info->text().contains(QStringLiteral("signed weights: no entropy")),
                 qPrintable(info->text()));
    }

    void rowMetricsTitlesFitThePlot()
    {
        SessionParameters p;
        p.n = 2048;
        p.dModel = 16;
        p.heads = 1;
        const auto result = std::make_shared<const SessionResult>(computeSession(p));
        QVERIFY2(result->ok(), qPrintable(result->error));
        RowMetricsChart chart;
        auto *view = chart.findChild<QChartView *>();
        QVERIFY(view);
        view->setMinimumSize(0, 0); // as short as a crowded dock makes it
        chart.resize(420, 200);
        chart.show();
        QVERIFY(QTest::qWaitForWindowExposed(&chart));
        chart.setResult(result);
        QTRY_COMPARE(chart.maxWeightPoints().size(), 2048);
        QTest::qWait(100);
        const auto titles = [view] {
            QStringList t;
            for (QAbstractAxis *axis : view->chart()->axes(Qt::Vertical))
                t << axis->titleText();
            return t;
        };
        const qreal height = view->chart()->plotArea().height();
        QVERIFY2(height > 20 && height < 95, qPrintable(QString::number(height)));
        const QStringList shortTitles = titles();
        QCOMPARE(shortTitles.size(), 3);
        const QStringList allowed {"max weight", "max w",           "entropy (nats)", "entropy",
                                   "nats",       "effective terms", "terms",          ""};
        for (QAbstractAxis *axis : view->chart()->axes(Qt::Vertical)) {
            const QString title = axis->titleText();
            QVERIFY2(allowed.contains(title), qPrintable(title));
            QVERIFY2(QFontMetricsF(axis->titleFont()).horizontalAdvance(title) <= height,
                     qPrintable(QStringLiteral("\"%1\" in %2 px").arg(title).arg(height)));
        }
        QVERIFY(shortTitles != (QStringList {"max weight", "entropy (nats)", "effective terms"}));

        chart.resize(420, 520);
        QTRY_COMPARE(titles(), (QStringList {"max weight", "entropy (nats)", "effective terms"}));
    }

    void rowMetricsChartHiddenShowsNewest_data()
    {
        QTest::addColumn<bool>("docked");
        QTest::newRow("tab widget page") << false;
        QTest::newRow("tabified dock, as in MainWindow") << true;
    }
    void rowMetricsChartHiddenShowsNewest()
    {
        QFETCH(bool, docked);
        auto *chart = new RowMetricsChart;
        std::unique_ptr<QWidget> window;
        std::function<void(bool)> toFront; // true: the chart's tab, false: the other one
        if (docked) {
            auto *main = new QMainWindow;
            window.reset(main);
            main->setCentralWidget(new QWidget);
            auto *front = new QDockWidget(QStringLiteral("front"), main);
            front->setObjectName(QStringLiteral("frontDock"));
            front->setWidget(new QWidget);
            auto *behind = new QDockWidget(QStringLiteral("chart"), main);
            behind->setObjectName(QStringLiteral("chartDock"));
            auto *scroll = new QScrollArea; // as MainWindow's scrollable()
            scroll->setWidgetResizable(true);
            scroll->setWidget(chart);
            behind->setWidget(scroll);
            main->addDockWidget(Qt::RightDockWidgetArea, behind);
            main->addDockWidget(Qt::RightDockWidgetArea, front);
            main->tabifyDockWidget(behind, front);
            toFront = [front, behind](bool chartTab) { (chartTab ? behind : front)->raise(); };
        } else {
            window = std::make_unique<QWidget>();
            auto *tabs = new QTabWidget(window.get());
            (new QVBoxLayout(window.get()))->addWidget(tabs);
            tabs->addTab(new QWidget, QStringLiteral("front"));
            tabs->addTab(chart, QStringLiteral("chart"));
            toFront = [tabs](bool chartTab) { tabs->setCurrentIndex(chartTab ? 1 : 0); };
        }
        toFront(false);
        window->resize(900, 500);
        window->show();
        QVERIFY(QTest::qWaitForWindowExposed(window.get()));
        QTRY_VERIFY(chart->visibleRegion().isEmpty()); // nothing of it on screen
        QXYSeries *maxW = displayedSeries(*chart, QStringLiteral("max weight"));
        QXYSeries *entropy = displayedSeries(*chart, QStringLiteral("entropy (nats)"));
        QXYSeries *effective = displayedSeries(*chart, QStringLiteral("1/Σw² terms"));
        QVERIFY(maxW && entropy && effective);
        QSignalSpy replaced(maxW, &QXYSeries::pointsReplaced);

        SessionParameters p;
        p.n = 6;
        p.dModel = 16;
        p.heads = 2;
        const auto a = std::make_shared<const SessionResult>(computeSession(p));
        p.n = 9;
        p.dModel = 12;
        p.heads = 3;
        p.seed = 7;
        const auto b = std::make_shared<const SessionResult>(computeSession(p));
        QVERIFY2(a->ok() && b->ok(), qPrintable(a->error + b->error));

        chart->setResult(a);
        chart->setResult(b);
        chart->setHead(2);
        QCOMPARE(chart->head(), 2);
        QTest::qWait(60); // longer than the 16 ms coalescing interval
        QCOMPARE(replaced.count(), 0);
        QVERIFY(maxW->points().isEmpty()); // still the empty chart of before any result
        // The line above the chart already names B (it is cheap).
        const auto *info = chart->findChild<QLabel *>(QStringLiteral("rowMetricsInfo"));
        QVERIFY(info);
        QVERIFY2(info->text().startsWith(QStringLiteral("9 rows \u00d7 9 keys")),
                 qPrintable(info->text()));

        toFront(true);
        // No event processed since: bringing it to the front plotted B's head 2.
        QCOMPARE(replaced.count(), 1);
        expectRows(maxW->points(), entropy->points(), effective->points(), b->weights[2]);
        QTRY_VERIFY(!chart->visibleRegion().isEmpty());

        // In front: a new result is plotted on the coalescing timer.
        chart->setResult(a);
        QTRY_COMPARE(maxW->points().size(), qsizetype(6));
        QCOMPARE(chart->head(), 1); // clamped to A's two heads
        expectRows(maxW->points(), entropy->points(), effective->points(), a->weights[1]);

        // Behind again: a head change waits, reading the points brings it up to date.
        toFront(false);
        QTRY_VERIFY(chart->visibleRegion().isEmpty());
        const int before = int(replaced.count());
        chart->setHead(0);
        QTest::qWait(60);
        QCOMPARE(int(replaced.count()), before);
        expectRows(chart->maxWeightPoints(), chart->entropyPoints(), chart->effectiveTermsPoints(),
                   a->weights[0]);
        QCOMPARE(int(replaced.count()), before + 1);
    }
};

QTEST_MAIN(TestCharts)
#include "tst_charts.moc"
