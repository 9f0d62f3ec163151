// The live metric charts keep their axis labels legible (regression of the new-user trial: the
// d_k chart's labels were elided to "10…", "20…" in a narrow dock). The scaling charts' log₂ d_k
// axis labels every power of two when they fit and thins them (powers of 4, then 8) when they
// do not; the labels always fit side by side in the plot.

#include <charts/chartstyle.h>
#include <charts/scalingchart.h>

#include <QLogValueAxis>
#include <QTest>

using namespace attn;

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
};

QTEST_MAIN(TestCharts)
#include "tst_charts.moc"
