#pragma once
// What the Experiments panel tests (tst_experimentspanel.cpp) and the experiment figure tests
// (tst_experimentfigures.cpp) share: the registered experiments with small parameters, table
// columns and matrices by name, and checks that a figure's heatmaps, lines and bars plot the
// result's numbers.

#include "core/experiments/experiments.h"
#include "testutil.h"
#include "ui/charts/experimentfigure.h"
#include "ui/panels/experimentlistmodel.h"
#include "ui/panels/experimentpage.h"
#include "ui/panels/experimentspanel.h"
#include "ui/panels/tablemodel.h"
#include "ui/render/colormap.h"

#include <QAbstractAxis>
#include <QAbstractBarSeries>
#include <QAbstractItemModelTester>
#include <QApplication>
#include <QBarCategoryAxis>
#include <QBarSet>
#include <QBrush>
#include <QChart>
#include <QChartView>
#include <QClipboard>
#include <QDir>
#include <QFile>
#include <QHeaderView>
#include <QImage>
#include <QItemSelectionModel>
#include <QLabel>
#include <QLayout>
#include <QLineSeries>
#include <QListView>
#include <QLogValueAxis>
#include <QPainter>
#include <QProgressBar>
#include <QPushButton>
#include <QScrollArea>
#include <QScrollBar>
#include <QSignalSpy>
#include <QSvgRenderer>
#include <QTableView>
#include <QTemporaryDir>
#include <QTest>
#include <QValueAxis>
#include <QXmlStreamReader>

#include <algorithm>
#include <cmath>
#include <limits>
#include <memory>
#include <optional>

using namespace attn;

namespace experimentstest {

/// Ids of every registered experiment, in list order (E1 … E20).
inline QStringList registeredIds()
{
    QStringList ids;
    for (const ExperimentInfo &info : experimentList())
        ids << QString::fromStdString(info.id);
    return ids;
}

inline QString q(const std::string &s)
{
    return QString::fromStdString(s);
}

/// Small parameter values so that every experiment runs in well under a second for the figure
/// tests (by id and name; experiments without an entry take their defaults).
/// The numeric cells of column `c` (int64 converted; text: NaN), one per row.
inline std::vector<double> columnValues(const Table &t, std::size_t c)
{
    std::vector<double> v;
    for (std::size_t r = 0; r < t.rowCount(); ++r) {
        const Table::Cell &cell = t.cell(r, c);
        if (const auto *d = std::get_if<double>(&cell))
            v.push_back(*d);
        else if (const auto *i = std::get_if<std::int64_t>(&cell))
            v.push_back(double(*i));
        else
            v.push_back(std::numeric_limits<double>::quiet_NaN());
    }
    return v;
}

/// The matrix of `result` named `name` (nullptr when none).
inline const MatrixD *namedMatrix(const ExperimentResult &result, const std::string &name)
{
    for (const NamedMatrix &m : result.matrices)
        if (m.name == name)
            return &m.values;
    return nullptr;
}

/// The colour matplotlib gives v on [lo, hi]: entry ⌊t·256⌋ of the 256-entry map, clipped to
/// [0, 255], t = (v − lo)/(hi − lo); non-finite values are the figures' red (214, 0, 0).
inline QRgb expectedCellColor(double v, double lo, double hi, bool divergent)
{
    if (!std::isfinite(v))
        return qRgb(214, 0, 0);
    const double t = (v - lo) / (hi - lo);
    const int index = std::clamp(int(std::floor(t * 256.0)), 0, 255);
    return Colormap(divergent ? ColormapId::RdBu : ColormapId::Viridis).entry(index);
}

/// The caption of a matrix's heatmap: its title (or name) without the leading experiment id,
/// first letter in upper case (the figure's header names the experiment).
inline QString expectedHeatmapTitle(const NamedMatrix &m)
{
    QString title = QString::fromStdString(m.title.empty() ? m.name : m.title);
    const qsizetype space = title.indexOf(QLatin1Char(' '));
    if (title.startsWith(QLatin1Char('E')) && space > 1) {
        bool number = false;
        title.mid(1, space - 1).toInt(&number);
        if (number)
            title = title.mid(space + 1);
    }
    if (!title.isEmpty())
        title[0] = title[0].toUpper();
    return title;
}

/// True when the matrices have the same shape and cells, NaN where the other has NaN.
inline bool sameCells(const MatrixD &a, const MatrixD &b)
{
    if (a.rows() != b.rows() || a.cols() != b.cols())
        return false;
    for (Index i = 0; i < a.rows(); ++i)
        for (Index j = 0; j < a.cols(); ++j)
            if (!(a(i, j) == b(i, j) || (std::isnan(a(i, j)) && std::isnan(b(i, j)))))
                return false;
    return true;
}

/// A numeric parameter of the result (the defaults are filled in).
inline double numberParam(const ExperimentResult &result, const std::string &name)
{
    return std::stod(result.params.at(name));
}

/// Heatmaps maps[first …] show the result's matrices `names`, in order, as weights on one colour
/// range: [0, the largest of their values], viridis, each titled by its matrix.
inline void checkWeightHeatmaps(const ExperimentResult &result,
                                const QVector<ExperimentHeatmap> &maps, int first,
                                const std::vector<std::string> &names)
{
    QVERIFY(maps.size() >= first + int(names.size()));
    double top = -std::numeric_limits<double>::infinity();
    for (const std::string &name : names) {
        const MatrixD *m = namedMatrix(result, name);
        QVERIFY2(m, name.c_str());
        QVERIFY2(m->allFinite() && m->minCoeff() >= 0, name.c_str()); // weights
        top = std::max(top, m->maxCoeff());
    }
    for (std::size_t k = 0; k < names.size(); ++k) {
        const ExperimentHeatmap &map = maps[first + int(k)];
        const auto matrix = std::find_if(result.matrices.begin(), result.matrices.end(),
                                         [&](const NamedMatrix &m) { return m.name == names[k]; });
        QVERIFY2(map.values == matrix->values, names[k].c_str());
        QCOMPARE(map.title, expectedHeatmapTitle(*matrix));
        QVERIFY2(!map.divergent, names[k].c_str());
        QCOMPARE(map.lo, 0.0);
        QCOMPARE(map.hi, top);
    }
}

/// Checks what the heatmaps of E1, E4, E10–E12 and E15–E20 plot against the experiment's
/// matrices and table: the values, the colour range, each cell's colour, the titles.
inline void checkHeatmapFigure(const QString &id, const ExperimentResult &result,
                               const QWidget *figure)
{
    const QVector<ExperimentHeatmap> maps = experimentHeatmaps(figure);
    QVERIFY2(!maps.isEmpty(), qPrintable(id));
    for (const ExperimentHeatmap &m : maps) {
        QVERIFY2(!m.title.trimmed().isEmpty(), qPrintable(id));
        QVERIFY2(!m.title.startsWith(id), qPrintable(m.title)); // the header names the experiment
        QCOMPARE(m.rowTitle, QStringLiteral("query i"));
        // E18's learned-sink matrix has the sink mass in column 0; both its maps say so.
        QCOMPARE(m.columnTitle,
                 id == QLatin1String("E18") ? QStringLiteral("column 0 = sink, then key j")
                                            : QStringLiteral("key j"));
        QVERIFY2(std::isfinite(m.lo) && std::isfinite(m.hi) && m.lo < m.hi, qPrintable(m.title));
        QCOMPARE(m.cells.size(), QSize(int(m.values.cols()), int(m.values.rows())));
        for (Index i = 0; i < m.values.rows(); ++i)
            for (Index j = 0; j < m.values.cols(); ++j)
                QCOMPARE(m.cells.pixel(int(j), int(i)) & 0xffffff,
                         expectedCellColor(m.values(i, j), m.lo, m.hi, m.divergent) & 0xffffff);
    }
    const Table &t = result.table;
    const auto column
        = [&t](const std::string &name) { return columnValues(t, t.columnIndex(name)); };
    if (id == QLatin1String("E1")) {
        // The weights W, one heatmap on [0, max W]; row i of the table holds row i of W.
        QCOMPARE(maps.size(), 1);
        const ExperimentHeatmap &w = maps.front();
        const MatrixD *weights = namedMatrix(result, "weights");
        QVERIFY(weights);
        QVERIFY(w.values == *weights);
        QCOMPARE(w.title, QStringLiteral("Weights W = softmax(QK\u1d40/\u221ad_k)"));
        QVERIFY(!w.divergent);
        QCOMPARE(w.lo, 0.0);
        QCOMPARE(w.hi, weights->maxCoeff());
        QCOMPARE(std::size_t(w.values.rows()), t.rowCount());
        for (Index j = 0; j < w.values.cols(); ++j) {
            const std::vector<double> key = column("key_" + std::to_string(j));
            for (Index i = 0; i < w.values.rows(); ++i)
                QCOMPARE(w.values(i, j), key[std::size_t(i)]);
        }
        const std::vector<double> rowSum = column("row_sum");
        for (Index i = 0; i < w.values.rows(); ++i) {
            double sum = 0;
            for (Index j = 0; j < w.values.cols(); ++j)
                sum += w.values(i, j);
            QVERIFY(std::abs(sum - rowSum[std::size_t(i)]) <= 1e-12);
            QVERIFY(std::abs(sum - 1.0) <= 1e-12); // softmax rows
        }
    } else if (id == QLatin1String("E4")) {
        // One heatmap per head of the shown layer (h = heads, not the mean), on one shared
        // scale [0, max over heads]; their mean row maximum is the table's row for that h.
        const Index h = 4; // the default heads
        QCOMPARE(maps.size(), int(h));
        double top = 0, meanMax = 0;
        for (Index k = 0; k < h; ++k) {
            const MatrixD *head = namedMatrix(result, "head_" + std::to_string(k));
            QVERIFY(head);
            QVERIFY(maps[int(k)].values == *head);
            QVERIFY2(maps[int(k)].title.startsWith(QStringLiteral("Head %1 (columns ").arg(k)),
                     qPrintable(maps[int(k)].title));
            top = std::max(top, head->maxCoeff());
            double rowMax = 0;
            for (Index i = 0; i < head->rows(); ++i)
                rowMax += head->row(i).maxCoeff() / double(head->rows());
            meanMax += rowMax / double(h);
        }
        for (const ExperimentHeatmap &m : maps) {
            QVERIFY(!m.divergent);
            QCOMPARE(m.lo, 0.0);
            QCOMPARE(m.hi, top);
        }
        const std::vector<double> hs = column("h"), mm = column("mean_max_weight");
        const auto row = std::find(hs.begin(), hs.end(), double(h));
        QVERIFY(row != hs.end());
        QVERIFY(std::abs(mm[std::size_t(row - hs.begin())] - meanMax) <= 1e-12);
    } else if (id == QLatin1String("E10")) {
        // Right and reversed convention on one scale [0, max], their difference on ±max|diff|
        // (RdBu_r); per query the table's future weights and the reversed row's distance from
        // the causal reference (which the right convention equals to rounding).
        QCOMPARE(maps.size(), 3);
        const MatrixD *right = namedMatrix(result, "right_convention");
        const MatrixD *reversed = namedMatrix(result, "reversed_convention");
        const MatrixD *difference = namedMatrix(result, "difference");
        QVERIFY(right && reversed && difference);
        QVERIFY(maps[0].values == *right);
        QVERIFY(maps[1].values == *reversed);
        QVERIFY(maps[2].values == *difference);
        QCOMPARE(maps[0].title, QStringLiteral("Right convention (True = may attend)"));
        QCOMPARE(maps[1].title, QStringLiteral("Reversed convention (True = masked out)"));
        QCOMPARE(maps[2].title, QStringLiteral("Reversed \u2212 right"));
        const double top = std::max(right->maxCoeff(), reversed->maxCoeff());
        for (int k = 0; k < 2; ++k) {
            QVERIFY(!maps[k].divergent);
            QCOMPARE(maps[k].lo, 0.0);
            QCOMPARE(maps[k].hi, top);
        }
        const double a = difference->cwiseAbs().maxCoeff();
        QVERIFY(maps[2].divergent);
        QCOMPARE(maps[2].lo, -a);
        QCOMPARE(maps[2].hi, a);
        const std::vector<double> fr = column("future_weight_right"),
                                  fv = column("future_weight_reversed"), dr = column("diff_right"),
                                  dv = column("diff_reversed"),
                                  full = column("fully_masked_reversed");
        const Index n = right->rows();
        QCOMPARE(std::size_t(n), t.rowCount());
        for (Index i = 0; i < n; ++i) {
            double futureRight = 0, futureReversed = 0, rowDiff = 0, reversedSum = 0;
            for (Index j = 0; j < n; ++j) {
                if (j > i) {
                    futureRight += (*right)(i, j);
                    futureReversed += (*reversed)(i, j);
                }
                rowDiff = std::max(rowDiff, std::abs((*difference)(i, j)));
                reversedSum += (*reversed)(i, j);
            }
            const std::size_t r = std::size_t(i);
            QVERIFY(std::abs(futureRight - fr[r]) <= 1e-12);
            QVERIFY(std::abs(futureReversed - fv[r]) <= 1e-12);
            QVERIFY(std::abs(rowDiff - dv[r]) <= dr[r] + 1e-12);
            QCOMPARE(full[r] != 0, reversedSum == 0.0);
        }
    } else if (id == QLatin1String("E11")) {
        // The textbook weights of each dtype and fill, in the table's row order, on [0, 1]. Per
        // row, the largest weight mass on the masked keys of a partly masked query row is the
        // table's masked_weight_textbook, and the fully masked row sums to its
        // full_row_sum_textbook (NaN with −inf).
        std::vector<const NamedMatrix *> textbook;
        for (const NamedMatrix &m : result.matrices)
            if (m.name.rfind("textbook_", 0) == 0)
                textbook.push_back(&m);
        const MatrixD *mask = namedMatrix(result, "mask");
        QVERIFY(mask);
        QCOMPARE(maps.size(), int(t.rowCount()));
        QCOMPARE(textbook.size(), t.rowCount());
        const std::vector<double> masked = column("masked_weight_textbook"),
                                  fullSum = column("full_row_sum_textbook");
        int fullRows = 0;
        for (std::size_t r = 0; r < t.rowCount(); ++r) {
            const ExperimentHeatmap &map = maps[int(r)];
            QVERIFY2(sameCells(map.values, textbook[r]->values), textbook[r]->name.c_str());
            QCOMPARE(map.title, expectedHeatmapTitle(*textbook[r]));
            QVERIFY(!map.divergent);
            QCOMPARE(map.lo, 0.0);
            QCOMPARE(map.hi, 1.0);
            double worst = 0;
            for (Index i = 0; i < mask->rows(); ++i) {
                const double maskedKeys = mask->row(i).sum();
                double onMasked = 0;
                for (Index j = 0; j < mask->cols(); ++j)
                    onMasked += (*mask)(i, j) != 0 ? map.values(i, j) : 0.0;
                if (maskedKeys == double(mask->cols())) {
                    const double sum = map.values.row(i).sum();
                    QVERIFY(std::isnan(sum) ? std::isnan(fullSum[r]) : sum == fullSum[r]);
                    fullRows += r == 0 ? 1 : 0;
                } else if (maskedKeys > 0) {
                    worst = std::max(worst, onMasked);
                }
            }
            QVERIFY2(std::abs(worst - masked[r]) <= 1e-12, textbook[r]->name.c_str());
        }
        QCOMPARE(fullRows, 1);
    } else if (id == QLatin1String("E12")) {
        // The naive and the max-subtracted float32 softmax on one weight scale [0, the largest
        // finite weight]; the naive one's overflowed cells are NaN (red).
        QCOMPARE(maps.size(), 2);
        const NamedMatrix *naive = nullptr, *stable = nullptr;
        for (const NamedMatrix &m : result.matrices) {
            naive = m.name == "naive_float32" ? &m : naive;
            stable = m.name == "stable_float32" ? &m : stable;
        }
        QVERIFY(naive && stable);
        QVERIFY(naive->values.hasNaN() && stable->values.allFinite());
        QVERIFY(sameCells(maps[0].values, naive->values));
        QVERIFY(maps[1].values == stable->values);
        QCOMPARE(maps[0].title, expectedHeatmapTitle(*naive));
        QCOMPARE(maps[1].title, expectedHeatmapTitle(*stable));
        double top = stable->values.maxCoeff();
        for (Index i = 0; i < naive->values.size(); ++i)
            if (std::isfinite(naive->values.data()[i]))
                top = std::max(top, naive->values.data()[i]);
        for (int k = 0; k < 2; ++k) {
            QVERIFY(!maps[k].divergent);
            QCOMPARE(maps[k].lo, 0.0);
            QCOMPARE(maps[k].hi, top);
        }
    } else if (id == QLatin1String("E15")) {
        // ALiBi's steepest and shallowest head, the window and the window with sinks (head 0),
        // on one scale. Row 0 of the table is head 0: its sink masses are the mean, over the
        // rows i ≥ w + s whose window has left the first s keys, of a row's weight on them.
        QCOMPARE(maps.size(), 4);
        checkWeightHeatmaps(result, maps, 0,
                            {"alibi_first_head", "alibi_last_head", "window", "window_sinks"});
        if (QTest::currentTestFailed())
            return;
        const Index w = Index(numberParam(result, "window")),
                    s = Index(numberParam(result, "sinks"));
        const MatrixD &window = *namedMatrix(result, "window");
        const MatrixD &sinks = *namedMatrix(result, "window_sinks");
        const Index n = window.rows();
        QVERIFY(w + s < n);
        const auto sinkMass = [&](const MatrixD &weights) {
            double sum = 0;
            for (Index i = w + s; i < n; ++i)
                for (Index j = 0; j < s; ++j)
                    sum += weights(i, j);
            return sum / double(n - w - s);
        };
        QCOMPARE(column("head")[0], 0.0);
        QVERIFY(std::abs(sinkMass(window) - column("sink_mass_window")[0]) <= 1e-12);
        QVERIFY(std::abs(sinkMass(sinks) - column("sink_mass_window_sinks")[0]) <= 1e-12);
        QVERIFY(column("sink_mass_window_sinks")[0] > 0.01); // not vacuous: the sinks keep mass
    } else if (id == QLatin1String("E16")) {
        // Head 0's weights for each g of the table, in its order, on one scale; they differ from
        // g = h's by no more than the table's max_abs_dw, and by at most h·n² times mean_abs_dw
        // in sum (head 0 is one of the h heads the table's columns take in).
        const std::vector<double> g = column("kv_heads"), meanDw = column("mean_abs_dw"),
                                  maxDw = column("max_abs_dw");
        QCOMPARE(maps.size(), int(g.size()));
        std::vector<std::string> names;
        for (const double v : g)
            names.push_back("head0_g" + std::to_string(std::int64_t(v)));
        checkWeightHeatmaps(result, maps, 0, names);
        if (QTest::currentTestFailed())
            return;
        const double h = numberParam(result, "heads");
        const auto full = std::find(g.begin(), g.end(), h);
        QVERIFY(full != g.end());
        const MatrixD &reference = *namedMatrix(result, names[std::size_t(full - g.begin())]);
        const double cells = double(reference.size());
        for (std::size_t r = 0; r < g.size(); ++r) {
            const MatrixD diff = (*namedMatrix(result, names[r]) - reference).cwiseAbs();
            QVERIFY2(diff.maxCoeff() <= maxDw[r] + 1e-15, names[r].c_str());
            QVERIFY2(diff.sum() <= meanDw[r] * h * cells * (1 + 1e-12) + 1e-15, names[r].c_str());
        }
    } else if (id == QLatin1String("E17")) {
        // The best previous-token head and the best induction head, on one scale.
        QCOMPARE(maps.size(), 2);
        checkWeightHeatmaps(result, maps, 0,
                            {"previous_token_head_weights", "induction_head_weights"});
    } else if (id == QLatin1String("E18")) {
        // The learned sink's weights (column 0 its mass) and the first-token sink's, on one
        // scale; the mean of column 0 is the table's row for the figure's b and spread.
        QCOMPARE(maps.size(), 2);
        checkWeightHeatmaps(result, maps, 0, {"learned_sink_weights", "first_token_weights"});
        if (QTest::currentTestFailed())
            return;
        const double b = numberParam(result, "figure_sink_logit"),
                     spread = numberParam(result, "figure_spread");
        const std::vector<double> bs = column("sink_logit"), spreads = column("spread"),
                                  sink = column("sink_mass_mean"),
                                  first = column("first_token_mass_mean");
        std::size_t row = 0;
        while (row < bs.size() && !(bs[row] == b && spreads[row] == spread))
            ++row;
        QVERIFY(row < bs.size());
        QVERIFY(std::abs(namedMatrix(result, "learned_sink_weights")->col(0).mean() - sink[row])
                <= 1e-12);
        QVERIFY(std::abs(namedMatrix(result, "first_token_weights")->col(0).mean() - first[row])
                <= 1e-12);
    } else if (id == QLatin1String("E19")) {
        // A₁ and A₂ on one weight scale, then A₁ − λA₂ (the figure's λ) on ±max|·| (RdBu_r).
        QCOMPARE(maps.size(), 3);
        checkWeightHeatmaps(result, maps, 0, {"a1", "a2"});
        if (QTest::currentTestFailed())
            return;
        const MatrixD &a1 = *namedMatrix(result, "a1"), &a2 = *namedMatrix(result, "a2");
        const MatrixD *diff = namedMatrix(result, "differential");
        QVERIFY(diff);
        QVERIFY(maps[2].values == *diff);
        QVERIFY(maps[2].divergent);
        const double a = diff->cwiseAbs().maxCoeff();
        QCOMPARE(maps[2].lo, -a);
        QCOMPARE(maps[2].hi, a);
        const double lambda = numberParam(result, "figure_lambda");
        QVERIFY((*diff - (a1 - lambda * a2)).cwiseAbs().maxCoeff() <= 1e-12);
    } else if (id == QLatin1String("E20")) {
        // Every head's weights, with the RoPE part then without, on one scale.
        std::vector<std::string> heads;
        for (const NamedMatrix &m : result.matrices)
            if (m.name.rfind("head", 0) == 0)
                heads.push_back(m.name);
        QVERIFY(heads.size() >= 2);
        QCOMPARE(maps.size(), int(heads.size()));
        checkWeightHeatmaps(result, maps, 0, heads);
    }
}

inline bool sameValue(double plotted, double table)
{
    return plotted == table || std::abs(plotted - table) <= 1e-12 * std::abs(table);
}

/// True when the points are rows of the table: columns x and y (y times one power of ten, the
/// axis unit) of rows in increasing order — a curve may take a subset of the rows (one kernel).
/// Columns of different lengths (a table's and a matrix's) are never paired.
inline bool pointsAreRows(const QList<QPointF> &points,
                          const std::vector<std::vector<double>> &cols, QString *match)
{
    if (points.isEmpty())
        return false;
    for (std::size_t cx = 0; cx < cols.size(); ++cx) {
        for (std::size_t cy = 0; cy < cols.size(); ++cy) {
            if (cols[cy].size() != cols[cx].size())
                continue; // not one table's
            for (int e = -20; e <= 20; ++e) {
                const double f = std::pow(10.0, e);
                std::size_t r = 0;
                qsizetype k = 0;
                for (; k < points.size(); ++k) {
                    while (r < cols[cx].size()
                           && !(points[k].x() == cols[cx][r]
                                && sameValue(points[k].y(), cols[cy][r] * f)))
                        ++r;
                    if (r == cols[cx].size())
                        break;
                    ++r;
                }
                if (k == points.size()) {
                    *match = QStringLiteral("%1 %2").arg(cx).arg(cy);
                    return true;
                }
            }
        }
    }
    return false;
}

/// True when a bar set's values are a column's cells (NaN/Inf drawn as 0; times one power of
/// ten, the axis unit) over rows in increasing order, or the first row of distinct columns
/// (one bar per column).
inline bool barsAreCells(const QList<qreal> &bars, const std::vector<std::vector<double>> &cols)
{
    auto drawn = [](double v) { return std::isfinite(v) ? v : 0.0; };
    for (int e = -20; e <= 20; ++e) {
        const double f = std::pow(10.0, e);
        for (const auto &col : cols) {
            std::size_t r = 0;
            qsizetype k = 0;
            for (; k < bars.size(); ++k) {
                while (r < col.size() && !sameValue(bars[k], drawn(col[r]) * f))
                    ++r;
                if (r == col.size())
                    break;
                ++r;
            }
            if (k == bars.size())
                return true;
        }
        qsizetype k = 0;
        for (const auto &col : cols) {
            if (k < bars.size() && !col.empty() && sameValue(bars[k], drawn(col.front()) * f))
                ++k;
        }
        if (k == bars.size())
            return true;
    }
    return false;
}

/// The range [min, max] of an axis with a numeric scale (false for category axes).
inline bool axisRange(const QAbstractAxis *axis, double *lo, double *hi)
{
    if (const auto *v = qobject_cast<const QValueAxis *>(axis)) {
        *lo = v->min();
        *hi = v->max();
        return true;
    }
    if (const auto *l = qobject_cast<const QLogValueAxis *>(axis)) {
        *lo = l->min();
        *hi = l->max();
        return true;
    }
    return false;
}

inline ExperimentParams smallParams(const ExperimentInfo &info)
{
    static const std::map<std::string, ExperimentParams> small = {
        {"E2", {{"trials", "40"}}},
        {"E3", {{"keys", "200"}}},
        {"E8", {{"n", "32,64,128"}, {"repeats", "1"}}},
        {"E9", {{"t", "32"}, {"n", "32"}, {"repeats", "1"}}},
        {"E13", {{"d_k", "8,16"}, {"steps", "12"}}},
        {"E17",
         {{"steps", "20"},
          {"eval_every", "10"},
          {"vocab", "16"},
          {"d_model", "16"},
          {"repeat", "6"},
          {"min_repeat", "4"},
          {"batch", "4"},
          {"held_out", "4"}}},
    };
    ExperimentParams params;
    const auto it = small.find(info.id);
    if (it != small.end())
        for (const auto &[name, value] : it->second)
            for (const ParamSpec &spec : info.params)
                if (spec.name == name)
                    params[name] = value;
    return params;
}

/// A trial count that makes E2 run for many seconds (about 2·10⁹ normal draws over the default
/// d_k list) while staying under its 1 GiB cap for the stored queries.
inline QString manyTrials(const ExperimentInfo &info)
{
    for (const ParamSpec &spec : info.params)
        if (spec.name == "trials" && spec.maximum >= 100000)
            return QStringLiteral("100000");
    return {};
}

inline Table sampleTable()
{
    Table t({"name", "n", "value", "ratio"});
    t.addRow({std::string("alpha"), std::int64_t(4), 0.1, 1.0 / 3.0});
    t.addRow({std::string("beta"), std::int64_t(-16), std::numeric_limits<double>::quiet_NaN(),
              2.5e-17});
    t.addRow({std::string("gamma, \"q\""), std::int64_t(1024),
              std::numeric_limits<double>::infinity(), -123456.789});
    return t;
}

} // namespace experimentstest
