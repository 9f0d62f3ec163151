// The figures of E10 (the mask-convention trap), E11 (what the fill value does) and E12
// (softmax pitfalls).

#include "ui/charts/figurerecipes.h"

#include <QChartView>

#include <algorithm>
#include <cmath>
#include <vector>

namespace attn::expfig {

void buildE10(const ExperimentResult &r, FigureFrame &f)
{
    std::vector<const NamedMatrix *> ms;
    for (const char *name : {"right_convention", "reversed_convention", "difference"})
        if (const NamedMatrix *m = findMatrix(r, {name}))
            ms.push_back(m);
    if (ms.size() < 2)
        ms = allMatrices(r);
    if (ms.empty())
        throw FigureUnavailable("the result has no weight matrices");
    addHeatmaps(f, ms, 0);
    addScalarsFooter(f, r);
}

void buildE11(const ExperimentResult &r, FigureFrame &f)
{
    const Table &t = r.table;
    const int fillCol = findColumn(t, {"fill"});
    const int dtypeCol = findColumn(t, {"dtype"});
    int weightCol = findColumn(t, {"masked_weight_textbook", "masked_weight"});
    if (weightCol < 0)
        weightCol = findColumnContaining(t, {"masked", "weight"});
    if (fillCol < 0 || dtypeCol < 0 || weightCol < 0 || !isNumericColumn(t, weightCol))
        throw FigureUnavailable("the table lacks dtype, fill or masked_weight_textbook");
    QStringList fills, dtypes;
    for (std::size_t i = 0; i < t.rowCount(); ++i) {
        const QString fl = cellText(t, i, fillCol), dt = cellText(t, i, dtypeCol);
        if (!fills.contains(fl))
            fills << fl;
        if (!dtypes.contains(dt))
            dtypes << dt;
    }
    std::vector<BarGroup> groups;
    const auto w = values(t, weightCol);
    for (const QString &dt : dtypes) {
        BarGroup g {dt,
                    std::vector<double>(std::size_t(fills.size()),
                                        std::numeric_limits<double>::quiet_NaN()),
                    seriesColor(int(groups.size()))};
        for (std::size_t i = 0; i < t.rowCount(); ++i)
            if (cellText(t, i, dtypeCol) == dt)
                g.values[std::size_t(fills.indexOf(cellText(t, i, fillCol)))] = w[i];
        groups.push_back(std::move(g));
    }
    const int columns = std::max(1, int(fills.size()));
    f.add(barChart(QStringLiteral("Largest weight left on masked keys (textbook softmax)"), fills,
                   QStringLiteral("fill value for masked scores"), QStringLiteral("weight"), groups,
                   true),
          0, 0, 1, columns);
    f.setRowStretch(0, 3);
    // The textbook weights per dtype and fill: the fully masked row is NaN (red) with −inf.
    int row = 1;
    for (const QString &dt : dtypes) {
        std::vector<const NamedMatrix *> ms;
        for (const NamedMatrix &m : r.matrices)
            if (q(m.name).startsWith(QStringLiteral("textbook_") + dt + QLatin1Char('_')))
                ms.push_back(&m);
        if (ms.empty())
            continue;
        for (std::size_t i = 0; i < ms.size(); ++i) {
            HeatmapView::Style style;
            style.lo = 0;
            style.hi = 1;
            f.add(new HeatmapView(*ms[i], style), row, int(i) % columns);
        }
        f.setRowStretch(row, 2);
        ++row;
    }
    QStringList zeroFills;
    for (int i = 0; i < fills.size(); ++i) {
        bool zero = true;
        for (const BarGroup &g : groups)
            zero = zero && g.values[std::size_t(i)] == 0.0;
        if (zero)
            zeroFills << fills[i];
    }
    if (!zeroFills.isEmpty())
        f.addFooterLine(QStringLiteral("the weight on masked keys is exactly 0.0 with fill %1 "
                                       "(every dtype)")
                            .arg(zeroFills.join(QStringLiteral(", ")).toHtmlEscaped()));
    const int fullRowCol = findColumn(t, {"full_row_textbook"});
    if (fullRowCol >= 0) {
        QStringList lines;
        for (std::size_t i = 0; i < t.rowCount(); ++i)
            lines << QStringLiteral("%1 fill %2 \u2192 %3")
                         .arg(cellText(t, i, dtypeCol), cellText(t, i, fillCol),
                              cellText(t, i, fullRowCol))
                         .toHtmlEscaped();
        f.addFooterLine(QStringLiteral("fully masked row (textbook): ")
                        + lines.join(QStringLiteral("; ")));
    }
    addScalarsFooter(f, r);
}

void buildE12(const ExperimentResult &r, FigureFrame &f)
{
    const Table &t = r.table;
    const NamedMatrix *naive = findMatrix(r, {"naive_float32"});
    const NamedMatrix *stable = findMatrix(r, {"stable_float32"});
    if (!naive || !stable)
        throw FigureUnavailable("the result lacks the naive_float32 / stable_float32 matrices");
    addHeatmaps(f, {naive, stable}, 0);
    // Wrong-axis row sums next to the right ones (rows of part "wrong_axis").
    const int partCol = findColumn(t, {"part"});
    const int rowCol = findColumn(t, {"row"});
    const int wrongCol = findColumn(t, {"row_sum_pitfall"});
    const int rightCol = findColumn(t, {"row_sum_correct"});
    if (partCol >= 0 && rowCol >= 0 && wrongCol >= 0 && rightCol >= 0) {
        QStringList rows;
        std::vector<double> wrong, right;
        const auto ws = values(t, wrongCol), rs = values(t, rightCol);
        for (std::size_t i = 0; i < t.rowCount(); ++i)
            if (cellText(t, i, partCol) == QLatin1String("wrong_axis")) {
                rows << cellText(t, i, rowCol);
                wrong.push_back(ws[i]);
                right.push_back(rs[i]);
            }
        if (!rows.isEmpty())
            f.add(barChart(QStringLiteral("Row sums: softmax over the wrong axis vs over the "
                                          "keys"),
                           rows, QStringLiteral("query row"), QStringLiteral("row sum"),
                           {{QStringLiteral("wrong axis (over queries)"), wrong, kUnscaledColor},
                            {QStringLiteral("right axis (over keys)"), right, kScaledColor}},
                           true),
                  1, 0, 1, 2);
    }
    addScalarsFooter(f, r);
}

} // namespace attn::expfig
