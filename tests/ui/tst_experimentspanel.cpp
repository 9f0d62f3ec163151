// Tests of the Experiments panel (list and table models, pages, runs, cancel, export) and of the
// experiment figures shared with `attnlab experiment --figure`.
// Set ATTN_FIGURE_DIR to keep the exported figures (one PNG and SVG per experiment) for viewing.

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

namespace {

/// Ids of every registered experiment, in list order (E1 … E12, E14 … E16).
QStringList registeredIds()
{
    QStringList ids;
    for (const ExperimentInfo &info : experimentList())
        ids << QString::fromStdString(info.id);
    return ids;
}

QString q(const std::string &s)
{
    return QString::fromStdString(s);
}

/// Small parameter values so that every experiment runs in well under a second for the figure
/// tests (by id and name; experiments without an entry take their defaults).
/// The numeric cells of column `c` (int64 converted; text: NaN), one per row.
std::vector<double> columnValues(const Table &t, std::size_t c)
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
const MatrixD *namedMatrix(const ExperimentResult &result, const std::string &name)
{
    for (const NamedMatrix &m : result.matrices)
        if (m.name == name)
            return &m.values;
    return nullptr;
}

/// The colour matplotlib gives v on [lo, hi]: entry ⌊t·256⌋ of the 256-entry map, clipped to
/// [0, 255], t = (v − lo)/(hi − lo); non-finite values are the figures' red (214, 0, 0).
QRgb expectedCellColor(double v, double lo, double hi, bool divergent)
{
    if (!std::isfinite(v))
        return qRgb(214, 0, 0);
    const double t = (v - lo) / (hi - lo);
    const int index = std::clamp(int(std::floor(t * 256.0)), 0, 255);
    return Colormap(divergent ? ColormapId::RdBu : ColormapId::Viridis).entry(index);
}

/// Checks what the heatmaps of E1, E4 and E10 plot against the experiment's matrices and table:
/// the values, the colour range, each cell's colour, the titles.
void checkHeatmapFigure(const QString &id, const ExperimentResult &result, const QWidget *figure)
{
    const QVector<ExperimentHeatmap> maps = experimentHeatmaps(figure);
    QVERIFY2(!maps.isEmpty(), qPrintable(id));
    for (const ExperimentHeatmap &m : maps) {
        QVERIFY2(!m.title.trimmed().isEmpty(), qPrintable(id));
        QVERIFY2(!m.title.startsWith(id), qPrintable(m.title)); // the header names the experiment
        QCOMPARE(m.rowTitle, QStringLiteral("query i"));
        QCOMPARE(m.columnTitle, QStringLiteral("key j"));
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
    }
}

bool sameValue(double plotted, double table)
{
    return plotted == table || std::abs(plotted - table) <= 1e-12 * std::abs(table);
}

/// True when the points are rows of the table: columns x and y (y times one power of ten, the
/// axis unit) of rows in increasing order — a curve may take a subset of the rows (one kernel).
bool pointsAreRows(const QList<QPointF> &points, const std::vector<std::vector<double>> &cols,
                   QString *match)
{
    if (points.isEmpty())
        return false;
    for (std::size_t cx = 0; cx < cols.size(); ++cx) {
        for (std::size_t cy = 0; cy < cols.size(); ++cy) {
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
bool barsAreCells(const QList<qreal> &bars, const std::vector<std::vector<double>> &cols)
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
bool axisRange(const QAbstractAxis *axis, double *lo, double *hi)
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

ExperimentParams smallParams(const ExperimentInfo &info)
{
    static const std::map<std::string, ExperimentParams> small = {
        {"E2", {{"trials", "40"}}},
        {"E3", {{"keys", "200"}}},
        {"E8", {{"n", "32,64,128"}, {"repeats", "1"}}},
        {"E9", {{"t", "32"}, {"n", "32"}, {"repeats", "1"}}},
        {"E13", {{"d_k", "8,16"}, {"steps", "12"}}},
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
QString manyTrials(const ExperimentInfo &info)
{
    for (const ParamSpec &spec : info.params)
        if (spec.name == "trials" && spec.maximum >= 100000)
            return QStringLiteral("100000");
    return {};
}

Table sampleTable()
{
    Table t({"name", "n", "value", "ratio"});
    t.addRow({std::string("alpha"), std::int64_t(4), 0.1, 1.0 / 3.0});
    t.addRow({std::string("beta"), std::int64_t(-16), std::numeric_limits<double>::quiet_NaN(),
              2.5e-17});
    t.addRow({std::string("gamma, \"q\""), std::int64_t(1024),
              std::numeric_limits<double>::infinity(), -123456.789});
    return t;
}

} // namespace

class TestExperimentsPanel : public QObject
{
    Q_OBJECT

private slots:
    void listModel();
    void tableModel();
    void tableModelTsv();
    void panelListsAll();
    void editorsFromParamSpecs();
    void runFillsTable_data();
    void runFillsTable();
    void copyAndExportTable();
    void cancelLongRun();
    void newestRunWins();
    void invalidParameterShowsError();
    void figurePlotsTable_data();
    void figurePlotsTable();
    void exportFigure_data();
    void exportFigure();
    void exportFigureErrors();
    void figureUnavailableWithoutColumns();
    void figureInWindowLaidOutLikeExport_data();
    void figureInWindowLaidOutLikeExport();
    void listNamesWholeAndRunButtonInPlace();
    void unusedSeedNotShown();
};

void TestExperimentsPanel::listModel()
{
    ExperimentListModel model;
    QAbstractItemModelTester tester(&model, QAbstractItemModelTester::FailureReportingMode::QtTest);
    const QStringList ids = registeredIds();
    QCOMPARE(model.rowCount(), ids.size());
    for (int row = 0; row < ids.size(); ++row) {
        const QModelIndex index = model.index(row);
        const QString id = ids[row];
        QCOMPARE(model.data(index, ExperimentListModel::IdRole).toString(), id);
        QCOMPARE(model.rowOf(id.toLower()), row);
        QVERIFY(model.data(index).toString().startsWith(id + QLatin1Char(' ')));
        QVERIFY(!model.data(index, ExperimentListModel::TitleRole).toString().isEmpty());
        QCOMPARE(model.data(index, ExperimentListModel::PaperSectionRole).toString(),
                 q(experimentInfo(id.toStdString()).paperSection));
    }
    QCOMPARE(model.rowOf(QStringLiteral("E99")), -1);
    QVERIFY_THROWS_EXCEPTION(std::out_of_range, model.info(ids.size()));
}

void TestExperimentsPanel::tableModel()
{
    TableModel model;
    QAbstractItemModelTester tester(&model, QAbstractItemModelTester::FailureReportingMode::QtTest);
    QCOMPARE(model.rowCount(), 0);
    model.setTable(sampleTable());
    QCOMPARE(model.rowCount(), 3);
    QCOMPARE(model.columnCount(), 4);
    QCOMPARE(model.headerData(2, Qt::Horizontal).toString(), QStringLiteral("value"));
    QCOMPARE(model.data(model.index(0, 0)).toString(), QStringLiteral("alpha"));
    QCOMPARE(model.data(model.index(1, 1)).toString(), QStringLiteral("-16"));
    // Display: 6 significant digits; edit role / tooltip: the full round-trip text.
    QCOMPARE(model.data(model.index(0, 3)).toString(), QStringLiteral("0.333333"));
    QCOMPARE(model.data(model.index(0, 3), Qt::EditRole).toString(),
             QStringLiteral("0.3333333333333333"));
    QCOMPARE(model.data(model.index(0, 3), TableModel::RawValueRole).toDouble(), 1.0 / 3.0);
    // Non-finite values are spelled out and red; finite ones have no special colour.
    QCOMPARE(model.data(model.index(1, 2)).toString(), QStringLiteral("NaN"));
    QCOMPARE(model.data(model.index(2, 2)).toString(), QStringLiteral("inf"));
    QCOMPARE(model.data(model.index(1, 2), Qt::ForegroundRole).value<QBrush>().color(),
             QColor(200, 0, 0));
    QVERIFY(!model.data(model.index(0, 2), Qt::ForegroundRole).isValid());
    QVERIFY(model.flags(model.index(0, 0)) & Qt::ItemIsSelectable);
    QVERIFY(!(model.flags(model.index(0, 0)) & Qt::ItemIsEditable));
    QSignalSpy reset(&model, &QAbstractItemModel::modelReset);
    model.setTable(Table({"x"}));
    QCOMPARE(reset.count(), 1);
    QCOMPARE(model.rowCount(), 0);
    QCOMPARE(model.columnCount(), 1);
}

void TestExperimentsPanel::tableModelTsv()
{
    TableModel model;
    model.setTable(sampleTable());
    // Cells (0,1), (0,3), (2,1) span rows 0–2 and columns 1–3; the others stay empty.
    const QModelIndexList cells = {model.index(2, 1), model.index(0, 1), model.index(0, 3)};
    QCOMPARE(model.toTsv(cells), QStringLiteral("4\t\t0.3333333333333333\n\t\t\n1024\t\t\n"));
    QCOMPARE(model.toTsv({model.index(1, 2), model.index(1, 3)}, true),
             QStringLiteral("value\tratio\nNaN\t2.5e-17\n"));
    QCOMPARE(model.toTsv({}), QString());
}

void TestExperimentsPanel::panelListsAll()
{
    ExperimentsPanel panel;
    QCOMPARE(panel.experimentModel()->rowCount(), registeredIds().size());
    QCOMPARE(panel.experimentIds(), registeredIds());
    QVERIFY(registeredIds().contains(QStringLiteral("E12")));
    QVERIFY(registeredIds().contains(QStringLiteral("E16")));
    QCOMPARE(panel.currentExperiment(), QStringLiteral("E1"));
    QSignalSpy changed(&panel, &ExperimentsPanel::currentExperimentChanged);
    QVERIFY(panel.setCurrentExperiment(QStringLiteral("e6")));
    QCOMPARE(panel.currentExperiment(), QStringLiteral("E6"));
    QCOMPARE(changed.count(), 1);
    QCOMPARE(panel.experimentView()->currentIndex().row(), 5);
    QVERIFY(!panel.setCurrentExperiment(QStringLiteral("E99")));
    QCOMPARE(panel.currentExperiment(), QStringLiteral("E6"));
    // Choosing a row in the list shows its page.
    panel.experimentView()->setCurrentIndex(panel.experimentModel()->index(9));
    QCOMPARE(panel.currentExperiment(), QStringLiteral("E10"));
    QCOMPARE(panel.currentPage(), panel.page(QStringLiteral("E10")));
    // The note (what to look at, with the paper section) is on the page.
    const auto *note = panel.currentPage()->findChild<QLabel *>(QStringLiteral("note"));
    QVERIFY(note);
    QVERIFY(note->text().contains(q(experimentInfo("E10").paperSection).toHtmlEscaped()));
}

void TestExperimentsPanel::editorsFromParamSpecs()
{
    ExperimentsPanel panel;
    for (const ExperimentInfo &info : experimentList()) {
        ExperimentPage *page = panel.page(q(info.id));
        QVERIFY(page);
        const ExperimentParams params = page->parameters();
        QCOMPARE(params.size(), info.params.size());
        for (const ParamSpec &spec : info.params) {
            QWidget *editor = page->editor(q(spec.name));
            QVERIFY2(editor, spec.name.c_str());
            QCOMPARE(editor->objectName(), QStringLiteral("param_") + q(spec.name));
            QVERIFY2(editor->toolTip().contains(q(spec.help).toHtmlEscaped()), spec.name.c_str());
            // Editors start at the docs/experiments.md defaults (lists compared without spaces).
            QString expected = q(spec.defaultValue).remove(QLatin1Char(' '));
            QString actual = q(params.at(spec.name));
            if (spec.kind == ParamSpec::Kind::Double)
                QCOMPARE(actual.toDouble(), expected.toDouble());
            else
                QCOMPARE(actual, expected);
        }
        // Editing and resetting.
        for (const ParamSpec &spec : info.params) {
            // Spin boxes (ranges within int): out of range is refused, the maximum accepted.
            if (spec.kind != ParamSpec::Kind::Int || !(spec.maximum > spec.minimum)
                || spec.maximum > 2147483646.0 || spec.minimum < -2147483647.0)
                continue;
            QVERIFY(!page->setParameter(q(spec.name), QString::number(qint64(spec.maximum) + 1)));
            QVERIFY(!page->setParameter(q(spec.name), QString::number(qint64(spec.minimum) - 1)));
            const QString other = QString::number(qint64(spec.maximum));
            QVERIFY(page->setParameter(q(spec.name), other));
            QCOMPARE(q(page->parameters().at(spec.name)), other);
        }
        page->resetParameters();
        QCOMPARE(page->parameters(), params);
    }
    QVERIFY(!panel.page(QStringLiteral("E1"))
                 ->setParameter(QStringLiteral("no_such"), QStringLiteral("1")));
}

void TestExperimentsPanel::runFillsTable_data()
{
    QTest::addColumn<QString>("id");
    QTest::newRow("E1 one head") << QStringLiteral("E1");
    QTest::newRow("E6 shift is a rotation") << QStringLiteral("E6");
    QTest::newRow("E7 causal mask") << QStringLiteral("E7");
}

void TestExperimentsPanel::runFillsTable()
{
    QFETCH(QString, id);
    ExperimentsPanel panel;
    QVERIFY(panel.setCurrentExperiment(id));
    ExperimentPage *page = panel.currentPage();
    QSignalSpy ready(page, &ExperimentPage::resultReady);
    QSignalSpy panelReady(&panel, &ExperimentsPanel::resultReady);
    QSignalSpy failed(page, &ExperimentPage::failed);
    auto *run = page->findChild<QPushButton *>(QStringLiteral("runButton"));
    QVERIFY(run);
    run->click();
    QTRY_VERIFY_WITH_TIMEOUT(ready.count() == 1 || failed.count() > 0, 60000);
    QVERIFY2(failed.isEmpty(), qPrintable(failed.value(0).value(0).toString()));
    QCOMPARE(panelReady.count(), 1);
    QCOMPARE(panelReady.at(0).at(0).toString(), id);
    QVERIFY(!page->isRunning());
    QVERIFY(page->message().startsWith(QLatin1String("Done")));

    // The table shows exactly what runExperiment gives for the page's parameters.
    const ExperimentResult direct = runExperiment(id.toStdString(), page->parameters());
    const TableModel *model = page->tableModel();
    QCOMPARE(model->rowCount(), int(direct.table.rowCount()));
    QCOMPARE(model->columnCount(), int(direct.table.columnCount()));
    QVERIFY(model->rowCount() > 0);
    for (int c = 0; c < model->columnCount(); ++c)
        QCOMPARE(model->headerData(c, Qt::Horizontal).toString(),
                 q(direct.table.columns()[std::size_t(c)]));
    for (int r = 0; r < model->rowCount(); ++r)
        for (int c = 0; c < model->columnCount(); ++c) {
            const Table::Cell &cell = direct.table.cell(std::size_t(r), std::size_t(c));
            const QString expected
                = TableModel::isNonFinite(cell) && std::isnan(std::get<double>(cell))
                ? QStringLiteral("NaN")
                : q(Table::formatCell(cell));
            QCOMPARE(model->data(model->index(r, c), Qt::EditRole).toString(), expected);
        }
    // Headline properties, read from the delivered table.
    const Table &t = page->result()->table;
    if (id == QLatin1String("E7")) {
        for (std::size_t r = 0; r < t.rowCount(); ++r) {
            const double pos = t.number(r, "position");
            if (pos <= 4)
                QCOMPARE(t.number(r, "change_causal"), 0.0);
            QVERIFY(t.number(r, "change_no_mask") > 0);
        }
    }
    // The figure is shown beside the table.
    QVERIFY(page->findChild<QWidget *>(QStringLiteral("experimentFigure")));
    QVERIFY(page->findChild<QPushButton *>(QStringLiteral("exportFigureButton"))->isEnabled());

    // With ATTN_FIGURE_DIR set, keep a picture of the whole panel for looking at.
    const QString keep = qEnvironmentVariable("ATTN_FIGURE_DIR");
    if (!keep.isEmpty()) {
        QDir().mkpath(keep);
        panel.resize(1400, 900);
        QVERIFY(panel.grab().save(
            QDir(keep).filePath(QStringLiteral("panel_%1.png").arg(id.toLower()))));
    }
}

void TestExperimentsPanel::copyAndExportTable()
{
    ExperimentsPanel panel;
    ExperimentPage *page = panel.page(QStringLiteral("E1"));
    QString error;
    QTemporaryDir dir;
    QVERIFY(!page->exportTable(dir.filePath(QStringLiteral("none.csv")), &error));
    QVERIFY(error.contains(QLatin1String("run E1 first")));
    QSignalSpy ready(page, &ExperimentPage::resultReady);
    page->run();
    QTRY_COMPARE_WITH_TIMEOUT(ready.count(), 1, 60000);

    // Ctrl+C copies the selected cells as TSV with full precision.
    const Table &t = page->result()->table;
    QTableView *view = page->tableView();
    view->clearSelection();
    const int rows = std::min<int>(2, int(t.rowCount()));
    const int cols = std::min<int>(2, int(t.columnCount()));
    QString expected;
    for (int r = 0; r < rows; ++r) {
        for (int c = 0; c < cols; ++c) {
            view->selectionModel()->select(page->tableModel()->index(r, c),
                                           QItemSelectionModel::Select);
            expected += q(Table::formatCell(t.cell(std::size_t(r), std::size_t(c))));
            expected += c + 1 < cols ? QStringLiteral("\t") : QStringLiteral("\n");
        }
    }
    QApplication::clipboard()->clear();
    page->copySelection();
    QCOMPARE(QApplication::clipboard()->text(), expected);

    // Export table writes Table::toCsv.
    const QString path = dir.filePath(QStringLiteral("e1.csv"));
    QVERIFY2(page->exportTable(path, &error), qPrintable(error));
    QFile file(path);
    QVERIFY(file.open(QIODevice::ReadOnly));
    QCOMPARE(file.readAll().toStdString(), t.toCsv());
    QVERIFY(!page->exportTable(dir.filePath(QStringLiteral("no/such/dir/e1.csv")), &error));
    QVERIFY(error.contains(QLatin1String("no/such/dir")));
}

void TestExperimentsPanel::cancelLongRun()
{
    // Also the regression of the new-user trial: Run stayed enabled during a run and the Run /
    // Cancel buttons moved when the progress bar appeared. Run is disabled while running,
    // Cancel enabled only then, and neither button moves.
    ExperimentsPanel panel;
    panel.resize(1200, 800);
    QVERIFY(panel.setCurrentExperiment(QStringLiteral("E2")));
    panel.show();
    QVERIFY(QTest::qWaitForWindowExposed(&panel));
    ExperimentPage *page = panel.page(QStringLiteral("E2"));
    auto *runButton = page->findChild<QPushButton *>(QStringLiteral("runButton"));
    QVERIFY(runButton->isEnabled());
    QVERIFY(!page->findChild<QPushButton *>(QStringLiteral("cancelButton"))->isEnabled());
    const QRect runIdle = runButton->geometry();
    const QRect cancelIdle
        = page->findChild<QPushButton *>(QStringLiteral("cancelButton"))->geometry();
    const QString trials = manyTrials(page->info());
    QVERIFY2(!trials.isEmpty(), "E2 has no 'trials' parameter");
    QVERIFY(page->setParameter(QStringLiteral("trials"), trials));
    QSignalSpy ready(page, &ExperimentPage::resultReady);
    QSignalSpy cancelled(page, &ExperimentPage::cancelled);
    QSignalSpy failed(page, &ExperimentPage::failed);
    QSignalSpy running(page, &ExperimentPage::runningChanged);
    QSignalSpy progress(page, &ExperimentPage::progressChanged);
    page->run();
    QVERIFY(page->isRunning());
    QCOMPARE(running.count(), 1);
    auto *cancelButton = page->findChild<QPushButton *>(QStringLiteral("cancelButton"));
    QVERIFY(cancelButton->isEnabled());
    QVERIFY(!runButton->isEnabled());
    // Progress arrives by queued signal while the GUI thread stays free, and the bar shows.
    QTRY_VERIFY_WITH_TIMEOUT(!progress.isEmpty(), attn::test::kWorkTimeoutMs);
    const double fraction = progress.last().at(0).toDouble();
    QVERIFY(fraction >= 0 && fraction < 1);
    auto *bar = page->findChild<QProgressBar *>(QStringLiteral("progressBar"));
    QTRY_VERIFY(!bar->isHidden());
    QCoreApplication::processEvents(); // layout after the bar showed
    QCOMPARE(runButton->geometry(), runIdle);
    QCOMPARE(cancelButton->geometry(), cancelIdle);
    QVERIFY(!runButton->isEnabled());
    cancelButton->click();
    // The worker stops at its next cancellation check; a full run would take minutes.
    QTRY_VERIFY_WITH_TIMEOUT(cancelled.count() == 1 || failed.count() == 1,
                             attn::test::kWorkTimeoutMs);
    QVERIFY2(failed.isEmpty(), qPrintable(failed.value(0).value(0).toString()));
    QCOMPARE(cancelled.count(), 1);
    QCOMPARE(ready.count(), 0);
    QVERIFY(!page->isRunning());
    QVERIFY(!cancelButton->isEnabled());
    QVERIFY(runButton->isEnabled());
    QCOMPARE(runButton->geometry(), runIdle);
    QCOMPARE(cancelButton->geometry(), cancelIdle);
    QCOMPARE(running.count(), 2);
    QVERIFY(page->message().startsWith(QLatin1String("Cancelled")));
    QVERIFY(!page->result());
}

void TestExperimentsPanel::newestRunWins()
{
    ExperimentsPanel panel;
    ExperimentPage *page = panel.page(QStringLiteral("E2"));
    QVERIFY(page->setParameter(QStringLiteral("trials"), manyTrials(page->info())));
    QSignalSpy ready(page, &ExperimentPage::resultReady);
    QSignalSpy cancelled(page, &ExperimentPage::cancelled);
    QSignalSpy failed(page, &ExperimentPage::failed);
    QSignalSpy progress(page, &ExperimentPage::progressChanged);
    page->run();
    QTRY_VERIFY_WITH_TIMEOUT(!progress.isEmpty(),
                             attn::test::kWorkTimeoutMs); // the long run is under way
    QVERIFY(page->setParameter(QStringLiteral("trials"), QStringLiteral("30")));
    page->run(); // supersedes the long run
    QTRY_COMPARE_WITH_TIMEOUT(ready.count(), 1, 60000);
    QCOMPARE(page->result()->params.at("trials"), std::string("30"));
    QTest::qWait(200);
    QCOMPARE(ready.count(), 1); // the superseded run is never delivered
    QCOMPARE(cancelled.count(), 0);
    QCOMPARE(failed.count(), 0);
    QVERIFY(!page->isRunning());
}

void TestExperimentsPanel::invalidParameterShowsError()
{
    // The first list parameter of any experiment, given an element below its minimum: the
    // editor accepts the text, runExperiment rejects it, the message line names the problem.
    ExperimentsPanel panel;
    for (const ExperimentInfo &info : experimentList()) {
        for (const ParamSpec &spec : info.params) {
            if (spec.kind != ParamSpec::Kind::IntList || !(spec.maximum > spec.minimum))
                continue;
            ExperimentPage *page = panel.page(q(info.id));
            QVERIFY(page->setParameter(q(spec.name), QString::number(qint64(spec.minimum) - 1)));
            QSignalSpy failed(page, &ExperimentPage::failed);
            page->run();
            QTRY_COMPARE_WITH_TIMEOUT(failed.count(), 1, attn::test::kWorkTimeoutMs);
            QVERIFY(page->message().startsWith(QLatin1String("Error:")));
            QVERIFY2(page->message().contains(q(spec.name)), qPrintable(page->message()));
            QVERIFY(!page->isRunning());
            return;
        }
    }
    QSKIP("no experiment has a bounded list parameter");
}

void TestExperimentsPanel::figurePlotsTable_data()
{
    QTest::addColumn<QString>("id");
    for (int i = 1; i <= 12; ++i)
        QTest::addRow("E%d", i) << QStringLiteral("E%1").arg(i);
}

// What each figure plots, read back from its charts: every line point and bar is a cell of the
// experiment's table (x and y columns of one row), every point lies inside its axes' ranges,
// and every chart and value axis has a title. The heatmap figures (E1, E4, E10): each heatmap's
// values, colour range, cell colours and title against the experiment's matrices and table.
void TestExperimentsPanel::figurePlotsTable()
{
    QFETCH(QString, id);
    const ExperimentResult result
        = runExperiment(id.toStdString(), smallParams(experimentInfo(id.toStdString())));
    std::vector<std::vector<double>> cols;
    for (std::size_t c = 0; c < result.table.columnCount(); ++c)
        cols.push_back(columnValues(result.table, c));
    QWidget parent;
    QWidget *figure = createExperimentFigure(result, &parent);
    QVERIFY(figure);
    QCOMPARE(figure->objectName(), QStringLiteral("experimentFigure"));
    const QList<QChartView *> views = figure->findChildren<QChartView *>();
    const bool heatmapsOnly
        = id == QLatin1String("E1") || id == QLatin1String("E4") || id == QLatin1String("E10");
    QCOMPARE(views.isEmpty(), heatmapsOnly);
    int lines = 0, bars = 0;
    for (const QChartView *view : views) {
        const QChart *chart = view->chart();
        const QString title = chart->title();
        QVERIFY2(!title.trimmed().isEmpty(), qPrintable(id));
        QVERIFY2(!chart->series().isEmpty(), qPrintable(title));
        for (const QAbstractAxis *axis : chart->axes()) {
            double lo = 0, hi = 0;
            if (axisRange(axis, &lo, &hi)) {
                QVERIFY2(!axis->titleText().isEmpty(), qPrintable(title));
                QVERIFY2(std::isfinite(lo) && std::isfinite(hi) && lo < hi, qPrintable(title));
            }
        }
        for (QAbstractSeries *series : chart->series()) {
            if (auto *line = qobject_cast<QLineSeries *>(series)) {
                ++lines;
                const QList<QPointF> points = line->points();
                QString match;
                QVERIFY2(pointsAreRows(points, cols, &match),
                         qPrintable(QStringLiteral("%1 “%2”: series “%3” is not the table's")
                                        .arg(id, title, line->name())));
                // The match is not vacuous: the same curve drawn 1.37 times too high is not.
                QList<QPointF> wrong = points;
                for (QPointF &p : wrong)
                    p.ry() *= 1.37;
                if (std::any_of(points.cbegin(), points.cend(),
                                [](const QPointF &p) { return p.y() != 0; }))
                    QVERIFY2(!pointsAreRows(wrong, cols, &match), qPrintable(line->name()));
                for (const QAbstractAxis *axis : line->attachedAxes()) {
                    double lo = 0, hi = 0;
                    if (!axisRange(axis, &lo, &hi))
                        continue;
                    const bool horizontal = axis->orientation() == Qt::Horizontal;
                    for (const QPointF &p : points) {
                        const double v = horizontal ? p.x() : p.y();
                        QVERIFY2(v >= lo - 1e-12 * std::abs(lo) && v <= hi + 1e-12 * std::abs(hi),
                                 qPrintable(QStringLiteral("%1 “%2”: %3 outside [%4, %5]")
                                                .arg(id, title)
                                                .arg(v)
                                                .arg(lo)
                                                .arg(hi)));
                    }
                }
            } else if (auto *barSeries = qobject_cast<QAbstractBarSeries *>(series)) {
                int categories = -1;
                for (const QAbstractAxis *axis : barSeries->attachedAxes()) {
                    if (const auto *c = qobject_cast<const QBarCategoryAxis *>(axis))
                        categories = int(c->count());
                }
                for (const QBarSet *set : barSeries->barSets()) {
                    ++bars;
                    QList<qreal> values;
                    for (int i = 0; i < set->count(); ++i)
                        values.append(set->at(i));
                    if (categories >= 0)
                        QCOMPARE(int(values.size()), categories);
                    QVERIFY2(barsAreCells(values, cols),
                             qPrintable(QStringLiteral("%1 “%2”: bars “%3” are not the table's")
                                            .arg(id, title, set->label())));
                    double lo = 0, hi = 0;
                    for (const QAbstractAxis *axis : barSeries->attachedAxes()) {
                        if (!axisRange(axis, &lo, &hi))
                            continue;
                        for (const qreal v : values)
                            QVERIFY2(v >= lo - 1e-12 * std::abs(lo)
                                         && v <= hi + 1e-12 * std::abs(hi),
                                     qPrintable(QStringLiteral("%1 “%2”: bar %3 outside [%4, %5]")
                                                    .arg(id, title)
                                                    .arg(v)
                                                    .arg(lo)
                                                    .arg(hi)));
                    }
                }
            }
        }
    }
    QVERIFY2(heatmapsOnly || lines + bars > 0, qPrintable(id));
    if (heatmapsOnly)
        checkHeatmapFigure(id, result, figure);
}

void TestExperimentsPanel::exportFigure_data()
{
    QTest::addColumn<QString>("id");
    QTest::addColumn<QSize>("size");
    int i = 0;
    for (const QString &id : registeredIds()) {
        ++i;
        QTest::newRow(qPrintable(id)) << id << QSize(900 + 10 * i, 520 + i);
    }
}

void TestExperimentsPanel::exportFigure()
{
    QFETCH(QString, id);
    QFETCH(QSize, size);
    const ExperimentResult result
        = runExperiment(id.toStdString(), smallParams(experimentInfo(id.toStdString())));
    QString reason;
    QVERIFY2(experimentHasFigure(result, &reason), qPrintable(reason));

    QTemporaryDir tmp;
    const QString keep = qEnvironmentVariable("ATTN_FIGURE_DIR");
    if (!keep.isEmpty())
        QDir().mkpath(keep);
    const QString dir = keep.isEmpty() ? tmp.path() : keep;
    const QString png = QDir(dir).filePath(id.toLower() + QStringLiteral(".png"));
    const QString svg = QDir(dir).filePath(id.toLower() + QStringLiteral(".svg"));

    QString error;
    QVERIFY2(exportExperimentFigure(result, png, size, &error), qPrintable(error));
    QImage image;
    QVERIFY(image.load(png, "PNG"));
    QCOMPARE(image.size(), size);
    // The file is the figure the panel shows (createExperimentFigure, whose plotted values
    // figurePlotsTable checks), laid out at the same size: every pixel equal.
    const std::unique_ptr<QWidget> figure(createExperimentFigure(result));
    figure->setAttribute(Qt::WA_DontShowOnScreen);
    figure->setMinimumSize(0, 0);
    figure->resize(size);
    figure->layout()->activate();
    QCoreApplication::sendPostedEvents();
    QImage shown(size, QImage::Format_ARGB32_Premultiplied);
    shown.fill(Qt::white);
    {
        QPainter painter(&shown);
        figure->render(&painter);
    }
    const QImage written = image.convertToFormat(QImage::Format_ARGB32);
    shown = shown.convertToFormat(QImage::Format_ARGB32);
    qint64 differing = 0;
    for (int y = 0; y < written.height(); ++y)
        for (int x = 0; x < written.width(); ++x)
            differing += written.pixel(x, y) != shown.pixel(x, y);
    QVERIFY2(differing == 0, qPrintable(QStringLiteral("%1 pixels differ").arg(differing)));
    // … and the figure is not blank (a white page would equal a blank widget).
    qint64 ink = 0;
    for (int y = 0; y < written.height(); ++y)
        for (int x = 0; x < written.width(); ++x)
            ink += written.pixel(x, y) != qRgb(255, 255, 255);
    QVERIFY2(ink > qint64(size.width()) * size.height() / 50,
             qPrintable(QStringLiteral("only %1 non-white pixels").arg(ink)));

    QVERIFY2(exportExperimentFigure(result, svg, size, &error), qPrintable(error));
    QFile file(svg);
    QVERIFY(file.open(QIODevice::ReadOnly));
    QXmlStreamReader xml(&file);
    QString root;
    int elements = 0;
    while (!xml.atEnd()) {
        if (xml.readNext() == QXmlStreamReader::StartElement) {
            if (root.isEmpty())
                root = xml.name().toString();
            ++elements;
        }
    }
    QVERIFY2(!xml.hasError(), qPrintable(xml.errorString()));
    QCOMPARE(root, QStringLiteral("svg"));
    QVERIFY(elements > 20);
    // … and draws: Qt's SVG renderer paints it back with ink on a good share of the pixels.
    QSvgRenderer renderer(svg);
    QVERIFY(renderer.isValid());
    QImage back(size, QImage::Format_RGB32);
    back.fill(Qt::white);
    {
        QPainter painter(&back);
        renderer.render(&painter);
    }
    qint64 svgInk = 0;
    for (int y = 0; y < back.height(); ++y)
        for (int x = 0; x < back.width(); ++x)
            svgInk += back.pixel(x, y) != qRgb(255, 255, 255);
    QVERIFY2(svgInk > qint64(size.width()) * size.height() / 50,
             qPrintable(QStringLiteral("SVG: only %1 non-white pixels").arg(svgInk)));
    if (!keep.isEmpty())
        QVERIFY(back.save(QDir(dir).filePath(id.toLower() + QStringLiteral("_svg.png"))));

    // With ATTN_FIGURE_DIR set, also keep the figure of the default parameters at the default
    // size (for looking at; E8 then times n up to 4096 and takes a while).
    if (!keep.isEmpty()) {
        const ExperimentResult full = runExperiment(id.toStdString(), {});
        const QString path = QDir(dir).filePath(id.toLower() + QStringLiteral("_default.png"));
        QVERIFY2(exportExperimentFigure(full, path, QSize(), &error), qPrintable(error));
    }

    // The figure in the panel is the same widget tree.
    std::unique_ptr<QWidget> widget(createExperimentFigure(result));
    QCOMPARE(widget->objectName(), QStringLiteral("experimentFigure"));
}

void TestExperimentsPanel::exportFigureErrors()
{
    const ExperimentResult result = runExperiment("E6", {});
    QTemporaryDir dir;
    QString error;
    const QString pdf = dir.filePath(QStringLiteral("e6.pdf"));
    QVERIFY(!exportExperimentFigure(result, pdf, QSize(400, 300), &error));
    QVERIFY(error.contains(pdf));
    QVERIFY(error.contains(QLatin1String("use .png or .svg")));
    const QString missing = dir.filePath(QStringLiteral("missing/dir/e6.png"));
    QVERIFY(!exportExperimentFigure(result, missing, QSize(400, 300), &error));
    QVERIFY(error.contains(missing));
    // An empty size takes the experiment's default size.
    const QString png = dir.filePath(QStringLiteral("e6.png"));
    QVERIFY2(exportExperimentFigure(result, png, QSize(), &error), qPrintable(error));
    QCOMPARE(QImage(png).size(), defaultExperimentFigureSize(result));
}

void TestExperimentsPanel::figureUnavailableWithoutColumns()
{
    // A result whose table lacks the columns its figure needs shows a note, not a crash.
    ExperimentResult result;
    result.id = "E2";
    result.table = Table({"something_else"});
    result.table.addRow({1.0});
    QString reason;
    QVERIFY(!experimentHasFigure(result, &reason));
    QVERIFY(reason.contains(QLatin1String("d_k")));
    std::unique_ptr<QWidget> widget(createExperimentFigure(result));
    QCOMPARE(widget->objectName(), QStringLiteral("experimentFigureUnavailable"));
    QTemporaryDir dir;
    QString error;
    QVERIFY(!exportExperimentFigure(result, dir.filePath(QStringLiteral("e2.png")), QSize(300, 200),
                                    &error));
    QVERIFY(error.contains(QLatin1String("no figure for E2")));
}

QTEST_MAIN(TestExperimentsPanel)

void TestExperimentsPanel::figureInWindowLaidOutLikeExport_data()
{
    QTest::addColumn<QString>("id");
    for (const char *id : {"E2", "E4", "E10", "E11"})
        QTest::newRow(id) << QString::fromLatin1(id);
}

// The figure inside the window is laid out as the headless export lays it out: at least at its
// design size whatever the page's size, so bar labels, heatmap titles and captions never overlap
// or clip. The page scrolls: the figure takes the page's width, painted scaled down to it when
// the page is narrower than the design but never below FigureFit's 0.75 (readable text; the page
// scrolls sideways instead), and the whole table follows under it, never on top of it.
void TestExperimentsPanel::figureInWindowLaidOutLikeExport()
{
    QFETCH(QString, id);
    ExperimentsPanel panel;
    QVERIFY(panel.setCurrentExperiment(id));
    ExperimentPage *page = panel.currentPage();
    QSignalSpy ready(page, &ExperimentPage::resultReady);
    QSignalSpy failed(page, &ExperimentPage::failed);
    panel.resize(1000, 640);
    panel.show();
    QVERIFY(QTest::qWaitForWindowExposed(&panel));
    page->findChild<QPushButton *>(QStringLiteral("runButton"))->click();
    QTRY_VERIFY_WITH_TIMEOUT(ready.count() == 1 || failed.count() > 0, 60000);
    QVERIFY2(failed.isEmpty(), qPrintable(failed.value(0).value(0).toString()));
    const QSize design = defaultExperimentFigureSize(*page->result());
    auto *figure = page->findChild<QWidget *>(QStringLiteral("experimentFigure"));
    auto *fit = page->findChild<QWidget *>(QStringLiteral("experimentFigureFit"));
    auto *scroll = page->findChild<QScrollArea *>(QStringLiteral("experimentScroll"));
    QTableView *table = page->tableView();
    QVERIFY(figure && fit && scroll && table);
    const QString keep = qEnvironmentVariable("ATTN_FIGURE_DIR");
    for (const QSize &size :
         {QSize(1000, 640), QSize(1280, 800), QSize(1600, 900), QSize(2600, 1500)}) {
        panel.resize(size);
        QTest::qWait(30);
        QCoreApplication::processEvents();
        const double scale = fit->property("paintScale").toDouble();
        const QString where = QStringLiteral("%1 at %2×%3 (figure room %4×%5, design %6×%7, "
                                             "scale %8)")
                                  .arg(id)
                                  .arg(size.width())
                                  .arg(size.height())
                                  .arg(fit->width())
                                  .arg(fit->height())
                                  .arg(design.width())
                                  .arg(design.height())
                                  .arg(scale);
        // Laid out at least at the design size, shown live only when the room holds it.
        QVERIFY2(figure->width() >= design.width() && figure->height() >= design.height(),
                 qPrintable(where));
        const bool room = fit->width() >= design.width();
        QCOMPARE(figure->isVisible(), room);
        if (room) {
            QCOMPARE(figure->size(), fit->size());
            QCOMPARE(scale, 1.0);
        } else {
            // Scaled to the page's width, or to 0.75 with the page scrolling sideways.
            QVERIFY2(scale >= 0.75 - 1e-12 && scale < 1.0, qPrintable(where));
            const double expected = std::max(0.75, double(fit->width()) / design.width());
            QVERIFY2(std::abs(scale - expected) < 1e-12, qPrintable(where));
            QCOMPARE(fit->height(), int(std::ceil(design.height() * scale)));
        }
        // The page never scrolls sideways (its text wraps at its width); a figure wider than
        // the page scrolls sideways on its own, with its whole height in view.
        QCOMPARE(scroll->horizontalScrollBar()->maximum(), 0);
        auto *figureScroll
            = page->findChild<QScrollArea *>(QStringLiteral("experimentFigureScroll"));
        QVERIFY(figureScroll);
        QTRY_COMPARE(figureScroll->horizontalScrollBar()->maximum(),
                     std::max(0, fit->width() - figureScroll->viewport()->width()));
        QTRY_VERIFY2(figureScroll->viewport()->height() >= fit->height(), qPrintable(where));
        // The table and its rows sit under the figure, all of them shown (up to 16).
        // (The page settles its heights in queued layout passes: slow under the sanitizers.)
        const auto tableUnderFigure = [&] {
            const QRect figureBox(fit->mapTo(page, QPoint(0, 0)), fit->size());
            const QRect tableBox(table->mapTo(page, QPoint(0, 0)), table->size());
            return tableBox.top() >= figureBox.bottom();
        };
        QTRY_VERIFY2(tableUnderFigure(), qPrintable(where));
        const int rows = std::min(page->tableModel()->rowCount(), 16);
        QVERIFY2(table->viewport()->height()
                     >= rows * table->verticalHeader()->defaultSectionSize(),
                 qPrintable(where));
        if (!keep.isEmpty())
            panel.grab().save(QDir(keep).filePath(
                QStringLiteral("window_%1_%2.png").arg(id.toLower()).arg(size.width())));
    }
}

// The experiment list shows every name whole, and Run is at the same place on every page
// whatever the length of the experiment's note.
void TestExperimentsPanel::listNamesWholeAndRunButtonInPlace()
{
    ExperimentsPanel panel;
    panel.resize(1152, 720);
    panel.show();
    QVERIFY(QTest::qWaitForWindowExposed(&panel));
    auto *list = panel.findChild<QListView *>(QStringLiteral("experimentList"));
    QVERIFY(list);
    const QAbstractItemModel *model = list->model();
    // At most 250 px wide: a long name wraps, and its item is tall enough for every line.
    QVERIFY(list->width() <= 250);
    for (int row = 0; row < model->rowCount(); ++row) {
        const QModelIndex index = model->index(row, 0);
        const QString name = model->data(index).toString();
        const QRect item = list->visualRect(index);
        const QRect text = list->fontMetrics().boundingRect(QRect(0, 0, item.width(), 10000),
                                                            Qt::TextWordWrap, name);
        QVERIFY2(item.height() >= text.height() && item.width() >= text.width(),
                 qPrintable(QStringLiteral("%1: item %2×%3, text %4×%5")
                                .arg(name)
                                .arg(item.width())
                                .arg(item.height())
                                .arg(text.width())
                                .arg(text.height())));
    }
    std::optional<QPoint> where;
    for (int i = 1; i <= 12; ++i) {
        const QString id = QStringLiteral("E%1").arg(i);
        QVERIFY(panel.setCurrentExperiment(id));
        QTest::qWait(10);
        auto *run = panel.currentPage()->findChild<QPushButton *>(QStringLiteral("runButton"));
        QVERIFY(run && run->isVisible());
        const QPoint at = run->mapTo(&panel, QPoint(0, 0));
        if (!where)
            where = at;
        QVERIFY2(at == *where,
                 qPrintable(QStringLiteral("%1: Run at %2,%3, E1's at %4,%5")
                                .arg(id)
                                .arg(at.x())
                                .arg(at.y())
                                .arg(where->x())
                                .arg(where->y())));
    }
}

// E6 draws no random numbers: its page offers no seed and its figure lists none (the CLI still
// accepts --seed for uniformity). E9's note does not claim the cores its table note denies.
void TestExperimentsPanel::unusedSeedNotShown()
{
    ExperimentsPanel panel;
    panel.resize(1200, 800);
    panel.show();
    QVERIFY(QTest::qWaitForWindowExposed(&panel));
    QVERIFY(panel.setCurrentExperiment(QStringLiteral("E6")));
    ExperimentPage *page = panel.currentPage();
    QWidget *seed = page->editor(QStringLiteral("seed"));
    QVERIFY(seed);
    QVERIFY(!seed->isVisible());
    QVERIFY(page->editor(QStringLiteral("offset"))->isVisible());
    QCOMPARE(page->parameters().at("seed"), std::string("0"));
    QSignalSpy ready(page, &ExperimentPage::resultReady);
    page->findChild<QPushButton *>(QStringLiteral("runButton"))->click();
    QTRY_COMPARE_WITH_TIMEOUT(ready.count(), 1, 60000);
    bool footer = false;
    for (QLabel *label : page->findChildren<QLabel *>()) {
        if (!label->text().contains(QStringLiteral("parameters: ")))
            continue;
        footer = true;
        QVERIFY2(label->text().contains(QStringLiteral("offset=5")), qPrintable(label->text()));
        QVERIFY2(!label->text().contains(QStringLiteral("seed=")), qPrintable(label->text()));
    }
    QVERIFY(footer);

    const ExperimentInfo &e9 = experimentInfo("E9");
    QVERIFY2(e9.note.find("both cores") == std::string::npos, e9.note.c_str());
}

#include "tst_experimentspanel.moc"
