// Tests of the experiment figures shared by the Experiments panel and `attnlab experiment
// --figure`: each figure plots the result's table and matrices, exports to PNG and SVG, says
// why when it cannot be drawn, and is laid out in the window as in the export.
// Set ATTN_FIGURE_DIR to keep the exported figures (one PNG and SVG per experiment) for viewing.

#include "ui/experimentstest.h"

using namespace experimentstest;

class TestExperimentFigures : public QObject
{
    Q_OBJECT

private slots:
    void figurePlotsTable_data();
    void figurePlotsTable();
    void exportFigure_data();
    void exportFigure();
    void exportFigureErrors();
    void figureUnavailableWithoutColumns();
    void figureInWindowLaidOutLikeExport_data();
    void figureInWindowLaidOutLikeExport();
};

void TestExperimentFigures::figurePlotsTable_data()
{
    QTest::addColumn<QString>("id");
    for (int i = 1; i <= 12; ++i)
        QTest::addRow("E%d", i) << QStringLiteral("E%1").arg(i);
}

// What each figure plots, read back from its charts: every line point and bar is a cell of the
// experiment's table (x and y columns of one row), every point lies inside its axes' ranges,
// and every chart and value axis has a title. The heatmap figures (E1, E4, E10): each heatmap's
// values, colour range, cell colours and title against the experiment's matrices and table.
void TestExperimentFigures::figurePlotsTable()
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
