// The figures of E8 (what n² costs) and E9 (loop versus matrix).

#include "ui/charts/figurerecipes.h"

#include <QChartView>

#include <map>

#include <algorithm>
#include <cmath>
#include <vector>

namespace attn::expfig {

void buildE8(const ExperimentResult &r, FigureFrame &f)
{
    const Table &t = r.table;
    const int nCol = requireColumn(t, {"n"});
    // The exponent is fitted to the fastest of the repeats (E8's note): plot the same column.
    int secCol = findColumn(t, {"seconds_min"});
    const bool fastest = secCol >= 0;
    if (!fastest)
        secCol = requireColumn(t, {"seconds_mean"});
    const int mibCol = requireColumn(t, {"mib"});
    const int kernelCol = findColumn(t, {"kernel"});
    // One curve per kernel (rows in table order).
    std::map<QString, std::vector<std::size_t>> byKernel;
    std::vector<QString> order;
    for (std::size_t i = 0; i < t.rowCount(); ++i) {
        const QString k = kernelCol >= 0 ? cellText(t, i, kernelCol) : QStringLiteral("time");
        if (!byKernel.count(k))
            order.push_back(k);
        byKernel[k].push_back(i);
    }
    const auto n = values(t, nCol), sec = values(t, secCol), mib = values(t, mibCol);
    std::vector<Curve> timeCurves, mibCurves;
    QStringList exponents;
    for (const QString &k : order) {
        Curve c {k, {}, {}, seriesColor(int(timeCurves.size()))};
        Curve m {k, {}, {}, seriesColor(int(mibCurves.size()))};
        for (std::size_t i : byKernel[k]) {
            c.x.push_back(n[i]);
            c.y.push_back(sec[i]);
            m.x.push_back(n[i]);
            m.y.push_back(mib[i]);
        }
        if (c.x.size() >= 2) {
            try {
                const double e = fitPowerLawExponent(c.x, c.y);
                if (order.size() > 1)
                    c.name += QStringLiteral(" (n\u2009^\u2009%1)").arg(e, 0, 'f', 2);
                exponents << QString::number(e, 'f', 2);
            } catch (const std::exception &) { }
        }
        timeCurves.push_back(std::move(c));
        mibCurves.push_back(std::move(m));
    }
    QString title
        = fastest ? QStringLiteral("Fastest time vs n") : QStringLiteral("Mean time vs n");
    const auto fitted = r.scalars.find("fitted_exponent");
    if (fitted != r.scalars.end() && std::isfinite(fitted->second))
        title += QStringLiteral(": time \u221d n<sup>%1</sup>").arg(fitted->second, 0, 'f', 2);
    else if (exponents.size() == 1)
        title += QStringLiteral(": time \u221d n<sup>%1</sup>").arg(exponents.front());
    const QString xTitle = QStringLiteral("n (log\u2082)");
    f.add(lineChart(title, xTitle, Scale::Log2, QStringLiteral("seconds (log)"), Scale::Log10,
                    timeCurves),
          0, 0);
    // The score matrix size is the same for every kernel: one curve, plus what the kernel
    // itself allocates beyond Q, K, V and the output (kernel_extra_mib) when the table has it.
    std::vector<Curve> memory;
    if (!mibCurves.empty()) {
        mibCurves.front().name = QStringLiteral("n \u00d7 n score matrix");
        memory.push_back(mibCurves.front());
    }
    const int extraCol = findColumn(t, {"kernel_extra_mib"});
    if (extraCol >= 0 && order.size() == 1 && isNumericColumn(t, extraCol)) {
        const auto extra = values(t, extraCol);
        if (extra != mib)
            memory.push_back({QStringLiteral("%1 kernel's own buffers").arg(order.front()), n,
                              extra, kUnscaledColor, Qt::DashLine});
    }
    f.add(lineChart(QStringLiteral("Memory vs n (n\u00b2: \u00d74 per doubling)"), xTitle,
                    Scale::Log2, QStringLiteral("MiB (log)"), Scale::Log2, memory),
          0, 1);
    addScalarsFooter(f, r);
}

void buildE9(const ExperimentResult &r, FigureFrame &f)
{
    const Table &t = r.table;
    // One row per method (text column + seconds column), or one row with a column per method.
    int textCol = findColumn(t, {"method"});
    for (std::size_t c = 0; textCol < 0 && c < t.columnCount(); ++c)
        if (!isNumericColumn(t, int(c)) && t.rowCount() > 0)
            textCol = int(c);
    // time_ratio is a ratio of the fastest runs (E9's note): the bars show the same column.
    int secCol = findColumn(t, {"seconds_min", "seconds_mean", "seconds", "time"});
    if (secCol < 0)
        secCol = findColumnContaining(t, {"second"});
    const QString timeWord = secCol >= 0 && t.columns()[std::size_t(secCol)] == "seconds_min"
        ? QStringLiteral("Fastest time")
        : QStringLiteral("Mean time");
    QString title = QStringLiteral("%1: one query row at a time vs matrix products").arg(timeWord);
    const auto ratio = r.scalars.find("time_ratio");
    if (ratio != r.scalars.end() && std::isfinite(ratio->second) && ratio->second > 0) {
        const double x = ratio->second >= 1 ? ratio->second : 1 / ratio->second;
        title = (ratio->second >= 1
                     ? QStringLiteral("%1: the loop takes %2\u00d7 as long as matrix "
                                      "products")
                     : QStringLiteral("%1: matrix products take %2\u00d7 as long as the "
                                      "loop here"))
                    .arg(timeWord)
                    .arg(x, 0, 'f', x < 10 ? 2 : 1);
    }
    if (textCol >= 0 && secCol >= 0 && isNumericColumn(t, secCol) && t.rowCount() >= 2) {
        f.add(
            barChart(title, columnTexts(t, textCol), QString(), QStringLiteral("seconds"),
                     {{pretty(t.columns()[std::size_t(secCol)]), values(t, secCol), kScaledColor}},
                     true),
            0, 0);
    } else {
        QStringList categories;
        std::vector<double> secs;
        for (std::size_t c = 0; c < t.columnCount(); ++c) {
            const QString name = q(t.columns()[c]);
            if (isNumericColumn(t, int(c))
                && (name.contains(QLatin1String("second")) || name.contains(QLatin1String("time")))
                && t.rowCount() >= 1) {
                categories << pretty(t.columns()[c]);
                secs.push_back(values(t, int(c)).front());
            }
        }
        if (categories.size() < 2)
            throw FigureUnavailable("the table has no loop / matrix time columns");
        f.add(barChart(title, categories, QString(), QStringLiteral("seconds"),
                       {{QStringLiteral("time"), secs, kScaledColor}}, true),
              0, 0);
    }
    addScalarsFooter(f, r);
}

} // namespace attn::expfig
