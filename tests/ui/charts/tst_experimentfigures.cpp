// Tests of the experiment figures shared by the Experiments panel and `attnlab experiment
// --figure`: each figure plots the result's table and matrices, exports to PNG and SVG (a few
// PNGs equal to their committed goldens, markers where the axes put the table's numbers), says
// why when it cannot be drawn, and is laid out in the window as in the export.
// Set ATTN_FIGURE_DIR to keep the exported figures (one PNG and SVG per experiment) for viewing.

#include "imagecompare.h"
#include "ui/experimentstest.h"

#include <map>
#include <set>

using namespace experimentstest;

namespace {

/// The running mean over the last ten steps (fewer in the first nine) of each row of `m`: E13's
/// loss and gradient curves are smoothed so, and the test sums each window afresh.
MatrixD runningMean10(const MatrixD &m)
{
    MatrixD out(m.rows(), m.cols());
    for (Index i = 0; i < m.rows(); ++i)
        for (Index s = 0; s < m.cols(); ++s) {
            const Index from = std::max<Index>(0, s - 9);
            out(i, s) = m.row(i).segment(from, s - from + 1).sum() / double(s - from + 1);
        }
    return out;
}

/// What a figure plots besides the table's columns, as columns the plotted points are looked
/// up in: a matrix drawn one curve per row (E14's score decay, E20's mean weight by offset) as a
/// column of indices 0, 1, … and one column per row; E13's smoothed loss ratio and gradient norm
/// (runningMean10 of relative_loss and grad_norm_qk) as a column of steps 1 … S and one column
/// per run.
std::vector<std::vector<double>> plottedMatrixColumns(const QString &id,
                                                      const ExperimentResult &result)
{
    std::vector<const MatrixD *> curves;
    MatrixD lossMeans, gradMeans;
    double first = 0; // the x of column 0
    if (id == QLatin1String("E14")) {
        curves.push_back(namedMatrix(result, "score_decay"));
    } else if (id == QLatin1String("E20")) {
        curves.push_back(namedMatrix(result, "weight_by_offset"));
    } else if (id == QLatin1String("E13")) {
        const MatrixD *loss = namedMatrix(result, "relative_loss");
        const MatrixD *grad = namedMatrix(result, "grad_norm_qk");
        if (!loss || !grad)
            return {};
        lossMeans = runningMean10(*loss);
        gradMeans = runningMean10(*grad);
        curves = {&lossMeans, &gradMeans};
        first = 1;
    }
    std::vector<std::vector<double>> cols;
    for (const MatrixD *m : curves) {
        if (!m)
            continue;
        std::vector<double> x(std::size_t(m->cols()));
        for (std::size_t c = 0; c < x.size(); ++c)
            x[c] = first + double(c);
        cols.push_back(std::move(x));
        for (Index row = 0; row < m->rows(); ++row) {
            std::vector<double> y(std::size_t(m->cols()));
            for (std::size_t c = 0; c < y.size(); ++c)
                y[c] = (*m)(row, Index(c));
            cols.push_back(std::move(y));
        }
    }
    return cols;
}

/// E13's charts, one per init, d_k and quantity: each has a curve per scale, the smoothed
/// curve (runningMean10) of the table's run with that init, d_k and scale.
void checkE13Charts(const ExperimentResult &result, const QList<QChartView *> &views)
{
    const Table &t = result.table;
    const MatrixD loss = runningMean10(*namedMatrix(result, "relative_loss"));
    const MatrixD grad = runningMean10(*namedMatrix(result, "grad_norm_qk"));
    // The recipe keeps the curves above a floor for their log axes (1e-6, 1e-12), which these
    // parameters never reach: the curves are the means themselves.
    QVERIFY(loss.minCoeff() > 1e-6 && grad.minCoeff() > 1e-12);
    const std::vector<double> dks = columnValues(t, t.columnIndex("d_k"));
    std::set<double> distinct(dks.begin(), dks.end());
    QCOMPARE(views.size(), qsizetype(2 * 2 * distinct.size())); // init × d_k × loss, norm
    const std::map<QString, std::string> scales
        = {{QStringLiteral("1/\u221ad<sub>k</sub>"), "1/sqrt(d_k)"},
           {QStringLiteral("none"), "none"},
           {QStringLiteral("1/d<sub>k</sub>"), "1/d_k"}};
    std::set<QString> panels; // each init, d_k and quantity once
    for (const QChartView *view : views) {
        const QString title = view->chart()->title();
        const std::string init = title.startsWith(QLatin1String("xavier init")) ? "xavier"
            : title.startsWith(QLatin1String("unit-variance q, k"))             ? "unit_qk"
                                                                                : "";
        QVERIFY2(!init.empty(), qPrintable(title));
        const bool isLoss = title.endsWith(QLatin1String(": loss ratio"));
        QVERIFY2(isLoss || title.contains(QStringLiteral("\u2016\u2202L/\u2202(W<sub>Q</sub>")),
                 qPrintable(title));
        const qsizetype at = title.indexOf(QLatin1String("d<sub>k</sub> = "));
        QVERIFY2(at > 0, qPrintable(title));
        const double dk = title.mid(at + 16).section(QLatin1Char(':'), 0, 0).toDouble();
        QVERIFY2(distinct.count(dk), qPrintable(title));
        QVERIFY2(panels
                     .insert(QStringLiteral("%1 %2 %3")
                                 .arg(QString::fromStdString(init))
                                 .arg(dk)
                                 .arg(isLoss))
                     .second,
                 qPrintable(title));
        const QList<QAbstractSeries *> series = view->chart()->series();
        QCOMPARE(series.size(), qsizetype(3));
        for (QAbstractSeries *s : series) {
            const auto *line = qobject_cast<QLineSeries *>(s);
            QVERIFY(line);
            QVERIFY2(scales.count(line->name()), qPrintable(line->name()));
            std::size_t row = 0;
            while (row < t.rowCount()
                   && !(std::get<std::string>(t.cell(row, t.columnIndex("init"))) == init
                        && dks[row] == dk
                        && std::get<std::string>(t.cell(row, t.columnIndex("scale")))
                            == scales.at(line->name())))
                ++row;
            QVERIFY2(row < t.rowCount(), qPrintable(title + QStringLiteral(": ") + line->name()));
            const MatrixD &curve = isLoss ? loss : grad;
            const QList<QPointF> points = line->points();
            QCOMPARE(points.size(), qsizetype(curve.cols()));
            for (qsizetype k = 0; k < points.size(); ++k) {
                QCOMPARE(points[k].x(), double(k + 1));
                QVERIFY2(sameValue(points[k].y(), curve(Index(row), Index(k))),
                         qPrintable(QStringLiteral("%1, %2: step %3 plots %4, the run's mean is %5")
                                        .arg(title, line->name())
                                        .arg(k + 1)
                                        .arg(points[k].y())
                                        .arg(curve(Index(row), Index(k)))));
            }
        }
    }
}

} // namespace

class TestExperimentFigures : public QObject
{
    Q_OBJECT

private slots:
    void figurePlotsTable_data();
    void figurePlotsTable();
    void exportFigure_data();
    void exportFigure();
    void exportEqualsGolden_data();
    void exportEqualsGolden();
    void exportDrawsTableAtAxisPositions_data();
    void exportDrawsTableAtAxisPositions();
    void exportFigureErrors();
    void figureUnavailableWithoutColumns();
    void figureInWindowLaidOutLikeExport_data();
    void figureInWindowLaidOutLikeExport();
};

void TestExperimentFigures::figurePlotsTable_data()
{
    QTest::addColumn<QString>("id");
    for (int i = 1; i <= 20; ++i)
        QTest::addRow("E%d", i) << QStringLiteral("E%1").arg(i);
}

// What each figure plots, read back from its charts: every line point and bar is a cell of the
// experiment's table (x and y columns of one row) or of a matrix it draws as curves
// (plottedMatrixColumns: E14, E20, and E13's smoothed curves, recomputed from the result), every
// point lies inside its axes' ranges, and every chart and value axis has a title. E13's curves
// are in the chart of their run's init and d_k. The heatmaps (E1, E4, E10–E12, E15–E20): each
// one's values, colour range, cell colours and title against the experiment's matrices and
// table; the other figures have none.
void TestExperimentFigures::figurePlotsTable()
{
    QFETCH(QString, id);
    const ExperimentResult result
        = runExperiment(id.toStdString(), smallParams(experimentInfo(id.toStdString())));
    std::vector<std::vector<double>> cols;
    for (std::size_t c = 0; c < result.table.columnCount(); ++c)
        cols.push_back(columnValues(result.table, c));
    for (std::vector<double> &c : plottedMatrixColumns(id, result))
        cols.push_back(std::move(c));
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
    const int number = id.mid(1).toInt();
    const bool heatmaps = heatmapsOnly || number == 11 || number == 12 || number >= 15;
    if (heatmaps)
        checkHeatmapFigure(id, result, figure);
    else
        QVERIFY2(experimentHeatmaps(figure).isEmpty(), qPrintable(id));
    if (number == 13)
        checkE13Charts(result, views);
}

void TestExperimentFigures::exportFigure_data()
{
    QTest::addColumn<QString>("id");
    QTest::addColumn<QSize>("size");
    int i = 0;
    for (const QString &id : registeredIds()) {
        ++i;
        QTest::newRow(qPrintable(id)) << id << QSize(900 + 10 * i, 520 + i);
    }
}

void TestExperimentFigures::exportFigure()
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

void TestExperimentFigures::exportEqualsGolden_data()
{
    QTest::addColumn<QString>("id");
    QTest::addColumn<QSize>("size");
    // Deterministic experiments (seeded, no timings, nothing at rounding level in the bars), one
    // of each kind of panel: lines on log axes (E3), grouped bars (E7), heatmaps with the
    // signed map (E10), bars over heatmaps (E15). About half their default sizes.
    QTest::newRow("E3") << QStringLiteral("E3") << QSize(720, 320);
    QTest::newRow("E7") << QStringLiteral("E7") << QSize(600, 360);
    QTest::newRow("E10") << QStringLiteral("E10") << QSize(900, 320);
    QTest::newRow("E15") << QStringLiteral("E15") << QSize(780, 540);
}

// The exported PNG against the golden figure committed in tests/ui/golden (README.md there:
// ATTN_UPDATE_GOLDEN=1 rewrites them). Rendering is deterministic (offscreen
// platform, DejaVu fonts): on the machine that wrote them the figures equal their goldens pixel
// for pixel. The tolerance is for the experiments' numbers rounded differently on another CPU,
// which moves an antialiased edge by a fraction of a pixel: a pixel may differ by up to 24 of
// 255 in a channel, and at most 0.01 % of the pixels (21 to 42 here) by more. A figure drawn
// wrong changes more: one of E15's sixteen bars drawn 10 % too high changes 112 pixels, one of
// E7's a bar 5 % too high 195, a curve of E3 scaled by 1.37 2100.
void TestExperimentFigures::exportEqualsGolden()
{
    QFETCH(QString, id);
    QFETCH(QSize, size);
    const ExperimentResult result
        = runExperiment(id.toStdString(), smallParams(experimentInfo(id.toStdString())));
    QTemporaryDir tmp;
    const QString png = tmp.filePath(id.toLower() + QStringLiteral(".png"));
    QString error;
    QVERIFY2(exportExperimentFigure(result, png, size, &error), qPrintable(error));
    QImage actual;
    QVERIFY(actual.load(png, "PNG"));
    const QString golden
        = QStringLiteral(ATTN_GOLDEN_DIR "/") + id.toLower() + QStringLiteral(".png");
    if (qEnvironmentVariable("ATTN_UPDATE_GOLDEN") == QLatin1String("1")) {
        QFile::remove(golden);
        QVERIFY2(QFile::copy(png, golden), qPrintable(golden));
        qInfo("wrote %s", qPrintable(golden));
    }
    QImage expected;
    QVERIFY2(
        expected.load(golden, "PNG"),
        qPrintable(
            QStringLiteral("no golden figure %1 (ATTN_UPDATE_GOLDEN=1 writes it)").arg(golden)));
    QCOMPARE(expected.size(), size);
    const attn::test::ImageDifference d = attn::test::compareImages(actual, expected, 24);
    const qint64 allowed = d.total / 10000;
    if (d.differing > allowed) {
        const QString kept = attn::test::keepImages(
            QDir(QCoreApplication::applicationDirPath()).filePath(QStringLiteral("figure-goldens")),
            id.toLower(), actual, expected, d);
        QFAIL(qPrintable(QStringLiteral("%1: %2 of %3 pixels differ from %4 by more than 24 in a "
                                        "channel (at most %5 may; the largest difference is %6); "
                                        "%7")
                             .arg(id)
                             .arg(d.differing)
                             .arg(d.total)
                             .arg(golden)
                             .arg(allowed)
                             .arg(d.largest)
                             .arg(kept)));
    }
}

namespace {

/// A curve a figure must draw: in the chart whose title starts with `chart`, the series `series`
/// plots column `y` of the table against column `x`.
struct TableCurve
{
    QString chart, series;
    const char *x, *y;
};

} // namespace

void TestExperimentFigures::exportDrawsTableAtAxisPositions_data()
{
    QTest::addColumn<QString>("id");
    QTest::addColumn<QSize>("size");
    QTest::newRow("E3") << QStringLiteral("E3") << QSize(900, 420);
    QTest::newRow("E19") << QStringLiteral("E19") << QSize(1000, 700);
}

// The exported PNG has each table row's marker where the chart's axes put the row's numbers:
// for every row, the pixels around chart->mapToPosition(x, y) (taken through the chart view
// into the figure, laid out at the export's size) include the series' colour. The positions
// come from the table and the axes, not from the series' points, so a curve drawn off its
// numbers (scaled, on the wrong axis, from the wrong column) misses them, whatever the rest of
// the figure looks like; no stored image is involved.
void TestExperimentFigures::exportDrawsTableAtAxisPositions()
{
    QFETCH(QString, id);
    QFETCH(QSize, size);
    static const std::map<QString, std::vector<TableCurve>> curves = {
        {QStringLiteral("E3"),
         {{QStringLiteral("Effective terms"), QStringLiteral("unscaled"), "d_k",
           "effective_terms_unscaled"},
          {QStringLiteral("Effective terms"), QStringLiteral("scaled by 1/\u221ad_k"), "d_k",
           "effective_terms_scaled"},
          {QStringLiteral("Max softmax weight"), QStringLiteral("unscaled"), "d_k",
           "max_weight_unscaled"},
          {QStringLiteral("Max softmax weight"), QStringLiteral("scaled by 1/\u221ad_k"), "d_k",
           "max_weight_scaled"}}},
        {QStringLiteral("E19"),
         {{QStringLiteral("Relevant key against distractors"),
           QStringLiteral("weight on the planted key / mean |distractor|"), "lambda", "snr"},
          {QStringLiteral("Weights of A"), QStringLiteral("planted key"), "lambda",
           "relevant_weight_mean"},
          {QStringLiteral("Weights of A"), QStringLiteral("mean |distractor|"), "lambda",
           "distractor_abs_mean"},
          {QStringLiteral("Entropy of"), QStringLiteral("A\u2081 \u2212 \u03bbA\u2082"), "lambda",
           "abs_entropy_mean"}}},
    };
    const ExperimentResult result
        = runExperiment(id.toStdString(), smallParams(experimentInfo(id.toStdString())));
    QTemporaryDir tmp;
    const QString png = tmp.filePath(id.toLower() + QStringLiteral(".png"));
    QString error;
    QVERIFY2(exportExperimentFigure(result, png, size, &error), qPrintable(error));
    QImage image;
    QVERIFY(image.load(png, "PNG"));
    image = image.convertToFormat(QImage::Format_ARGB32);

    // The figure laid out as the export lays it out (exportFigure: the same pixels).
    const std::unique_ptr<QWidget> figure(createExperimentFigure(result));
    figure->setAttribute(Qt::WA_DontShowOnScreen);
    figure->setMinimumSize(0, 0);
    figure->resize(size);
    figure->layout()->activate();
    QCoreApplication::sendPostedEvents();
    {
        QImage scratch(size, QImage::Format_ARGB32_Premultiplied);
        QPainter painter(&scratch);
        figure->render(&painter); // settles the charts' geometry as the export's render did
    }
    const Table &t = result.table;
    int checked = 0;
    QStringList missing;
    for (const TableCurve &curve : curves.at(id)) {
        const QString what = QStringLiteral("%1 “%2”, “%3”").arg(id, curve.chart, curve.series);
        QLineSeries *line = nullptr;
        QChartView *view = nullptr;
        for (QChartView *v : figure->findChildren<QChartView *>())
            if (v->chart()->title().startsWith(curve.chart))
                for (QAbstractSeries *s : v->chart()->series())
                    if (s->name() == curve.series) {
                        line = qobject_cast<QLineSeries *>(s);
                        view = v;
                    }
        QVERIFY2(line && view, qPrintable(what));
        const QColor color = line->color();
        const std::vector<double> xs = columnValues(t, t.columnIndex(curve.x));
        const std::vector<double> ys = columnValues(t, t.columnIndex(curve.y));
        for (std::size_t r = 0; r < t.rowCount(); ++r) {
            const QPointF inChart = view->chart()->mapToPosition(QPointF(xs[r], ys[r]), line);
            QVERIFY2(view->chart()->plotArea().adjusted(-1, -1, 1, 1).contains(inChart),
                     qPrintable(QStringLiteral("%1: row %2 outside the plot").arg(what).arg(r)));
            const QPoint inView = view->mapFromScene(view->chart()->mapToScene(inChart));
            const QPoint at = view->viewport()->mapTo(figure.get(), inView);
            // A marker is 6 pixels wide: within 2 pixels of its centre some pixel has the
            // series' colour, even where the plot's edge cuts the marker.
            bool found = false;
            for (int dy = -2; dy <= 2 && !found; ++dy)
                for (int dx = -2; dx <= 2 && !found; ++dx) {
                    const QPoint p = at + QPoint(dx, dy);
                    if (!image.rect().contains(p))
                        continue;
                    const QColor c = image.pixelColor(p);
                    found = std::abs(c.red() - color.red()) + std::abs(c.green() - color.green())
                            + std::abs(c.blue() - color.blue())
                        <= 60;
                }
            if (!found)
                missing << QStringLiteral("%1: no marker at (%2, %3) for row %4 (%5, %6)")
                               .arg(what)
                               .arg(at.x())
                               .arg(at.y())
                               .arg(r)
                               .arg(xs[r])
                               .arg(ys[r]);
            ++checked;
        }
    }
    QVERIFY(checked >= 12);
    if (!missing.isEmpty()) {
        const QString dir
            = QDir(QCoreApplication::applicationDirPath()).filePath(QStringLiteral("figure-axes"));
        QDir().mkpath(dir);
        const QString kept = QDir(dir).filePath(id.toLower() + QStringLiteral(".png"));
        image.save(kept);
        QFAIL(qPrintable(QStringLiteral("%1 of %2 rows not drawn where the axes put them (the "
                                        "figure: %3): %4")
                             .arg(missing.size())
                             .arg(checked)
                             .arg(kept, missing.join(QStringLiteral("; ")))));
    }
}

void TestExperimentFigures::exportFigureErrors()
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

void TestExperimentFigures::figureUnavailableWithoutColumns()
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

void TestExperimentFigures::figureInWindowLaidOutLikeExport_data()
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
void TestExperimentFigures::figureInWindowLaidOutLikeExport()
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

QTEST_MAIN(TestExperimentFigures)
#include "tst_experimentfigures.moc"
