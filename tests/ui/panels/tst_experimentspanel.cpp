// Tests of the Experiments panel: list and table models, pages, runs, cancel, export. The
// experiment figures are tested in tst_experimentfigures.cpp.

#include "ui/experimentstest.h"

using namespace experimentstest;

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
    // A .json name gets the JSON `attnlab experiment --format json` prints, not CSV.
    const QString jsonPath = dir.filePath(QStringLiteral("e1.json"));
    QVERIFY2(page->exportTable(jsonPath, &error), qPrintable(error));
    QFile jsonFile(jsonPath);
    QVERIFY(jsonFile.open(QIODevice::ReadOnly));
    QJsonParseError parseError;
    const QJsonObject json = QJsonDocument::fromJson(jsonFile.readAll(), &parseError).object();
    QCOMPARE(parseError.error, QJsonParseError::NoError);
    QCOMPARE(json.value(QLatin1String("id")).toString(), QStringLiteral("E1"));
    QCOMPARE(json.value(QLatin1String("columns")).toArray().size(), qsizetype(t.columnCount()));
    QCOMPARE(json.value(QLatin1String("rows")).toArray().size(), qsizetype(t.rowCount()));
    QVERIFY(json.contains(QLatin1String("params")));
    // Another suffix is refused naming the two choices.
    QVERIFY(!page->exportTable(dir.filePath(QStringLiteral("e1.txt")), &error));
    QVERIFY2(error.contains(QLatin1String(".csv or .json")), qPrintable(error));
    QVERIFY(!QFile::exists(dir.filePath(QStringLiteral("e1.txt"))));
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

QTEST_MAIN(TestExperimentsPanel)
#include "tst_experimentspanel.moc"
