// The Training tab: its runner (ui/session/trainingrunner.h) against core's Trainer driven
// directly, pause/resume, the snapshot scrubber, the bounded history, exports and the session
// round trip of the training settings.

#include "ui/charts/trainingchart.h"
#include "ui/document/sessionfile.h"
#include "ui/panels/trainingpanel.h"
#include "ui/session/trainingrunner.h"
#include "ui/views/heatmapwidget.h"
#include "ui/window/mainwindow.h"

#include "core/experiments/experiments.h"
#include "core/multihead.h"
#include "core/random.h"
#include "core/training/tasks.h"
#include "core/training/trainer.h"

#include <QFile>
#include <QImage>
#include <QJsonArray>
#include <QSlider>
#include <QTemporaryDir>
#include <QTest>

#include <vector>

using namespace attn;
using namespace attn::training;

namespace {

TrainingSettings smallSettings(bool float32)
{
    TrainingSettings s;
    s.task = TaskKind::Recall;
    s.n = 4;
    s.dModel = 16;
    s.heads = 2;
    s.batch = 4;
    s.classes = 4;
    s.seed = 7;
    s.steps = 25;
    s.float32 = float32;
    s.a = {0.5, 0.01};
    s.b = {0.0, 0.02};
    return s;
}

template<typename T> Batch<T> castBatch(const Batch<double> &b)
{
    return {b.batch, b.length, b.inputs.cast<T>(), b.targets.cast<T>(), b.rowWeights.cast<T>(),
            b.mask};
}

/// What the tab's runs should be, computed with core alone: the layer initialised from
/// Generator(seed), the task's batches from seed + 1, A and B stepped on each batch.
struct Direct
{
    std::vector<double> lossA, lossB;
    std::vector<MatrixD> probeA; ///< probe weights of A after `probeStep` steps (seed + 2)
};

/// The training batches the tab's settings describe, written out from the settings' fields
/// (seed + 1, as the tab and `attnlab train --task` draw them).
TaskConfig taskConfigOf(const TrainingSettings &s)
{
    TaskConfig tc;
    tc.kind = s.task;
    tc.n = s.n;
    tc.dModel = s.dModel;
    tc.batch = s.batch;
    tc.noise = s.noise;
    tc.offset = s.offset;
    tc.classes = s.classes;
    tc.seed = s.seed + 1;
    return tc;
}

template<typename T> Direct trainDirectly(const TrainingSettings &s, int steps, int probeStep = -1)
{
    const TaskConfig tc = taskConfigOf(s);
    TaskGenerator batches(tc);
    TaskConfig probeConfig = tc;
    probeConfig.batch = 1;
    probeConfig.seed = s.seed + 2;
    const Batch<T> probe = castBatch<T>(TaskGenerator(probeConfig).next());
    Generator rng(s.seed);
    MultiheadAttention<double> init(s.dModel, s.heads);
    init.initXavier(rng);
    const Parameters<T> initial = Parameters<double>::fromLayer(init).cast<T>();
    OptimizerConfig oa;
    oa.kind = s.optimizer;
    oa.learningRate = s.a.learningRate;
    OptimizerConfig ob = oa;
    ob.learningRate = s.b.learningRate;
    Trainer<T> a(tc.layerConfig(s.heads, s.a.scaleExponent), initial, oa, Loss::MeanSquaredError);
    Trainer<T> b(tc.layerConfig(s.heads, s.b.scaleExponent), initial, ob, Loss::MeanSquaredError);
    Direct d;
    for (int i = 0; i <= steps; ++i) {
        if (i == probeStep) {
            const ForwardCache<T> c = forward(a.layerConfig(), a.parameters(), probe);
            for (const Matrix<T> &w : c.weights)
                d.probeA.push_back(w.template cast<double>());
        }
        if (i == steps)
            break;
        const Batch<T> batch = castBatch<T>(batches.next());
        d.lossA.push_back(a.step(batch).loss);
        d.lossB.push_back(b.step(batch).loss);
    }
    return d;
}

std::vector<double> losses(const std::vector<StepPoint> &points)
{
    std::vector<double> out;
    for (const StepPoint &p : points)
        out.push_back(p.loss);
    return out;
}

void playToEnd(TrainingRunner &runner)
{
    runner.play();
    QTRY_VERIFY_WITH_TIMEOUT(!runner.playing() && !runner.busy(), 60000);
}

} // namespace

class TestTrainingTab : public QObject
{
    Q_OBJECT

private slots:
    void runnerLossesEqualTrainer_data();
    void runnerLossesEqualTrainer();
    void sameCurvesAsExperimentE13();
    void pauseResumeEqualsUninterrupted();
    void pauseStopsTheWorker();
    void midRunLearningRateApplies();
    void scrubberShowsRecordedWeights();
    void historyStaysBounded();
    void invalidSettingsRefused();
    void exportsWriteFiles();
    void settingsJsonRoundTrip();
    void sessionFileRoundTrip();
    void olderSessionKeepsDefaults();
    void closingWhileTraining();
};

void TestTrainingTab::runnerLossesEqualTrainer_data()
{
    QTest::addColumn<bool>("float32");
    QTest::newRow("float64") << false;
    QTest::newRow("float32") << true;
}

void TestTrainingTab::runnerLossesEqualTrainer()
{
    QFETCH(bool, float32);
    const TrainingSettings s = smallSettings(float32);
    TrainingRunner runner;
    QVERIFY(runner.setSettings(s));
    playToEnd(runner);
    QCOMPARE(runner.stepCount(), 25);
    QCOMPARE(runner.stopReason(), QStringLiteral("step limit (25) reached"));
    const Direct d = float32 ? trainDirectly<float>(s, 25) : trainDirectly<double>(s, 25);
    // The same operations in the same order: equal to the last bit.
    QCOMPARE(losses(runner.history().a()), d.lossA);
    QCOMPARE(losses(runner.history().b()), d.lossB);
    // A and B really differ (another α and lr), and both learn.
    QVERIFY(d.lossA != d.lossB);
    QVERIFY(d.lossA.back() < d.lossA.front());
}

void TestTrainingTab::sameCurvesAsExperimentE13()
{
    // E13's xavier runs at d_k = 128 (one head, recall with 6 pairs, B = 8, V = 4, Adam at
    // lr 0.005·√(32/128), float32): the tab set up alike trains on the same weights and batches.
    ExperimentParams params {{"d_k", "128"}, {"steps", "40"}};
    const ExperimentResult e13 = runExperiment("E13", params);
    const MatrixD *relative = nullptr;
    for (const auto &m : e13.matrices)
        if (m.name == "relative_loss")
            relative = &m.values;
    QVERIFY(relative && relative->cols() == 40);
    TrainingSettings s;
    s.n = 6;
    s.dModel = 128;
    s.heads = 1;
    s.batch = 8;
    s.classes = 4;
    s.noise = 0.1;
    s.seed = 0;
    s.steps = 40;
    s.a = {0.5, 0.0025};
    s.b = {0.0, 0.0025};
    TrainingRunner runner;
    QVERIFY(runner.setSettings(s));
    playToEnd(runner);
    const double constantLoss = (1.0 - 1.0 / 4.0) / 128.0; // E13's best constant prediction
    for (int step = 0; step < 40; ++step) {
        // Rows in E13's table order: xavier 1/√d_k, none, 1/d_k, then unit q, k.
        QVERIFY(
            qAbs(runner.history().a()[std::size_t(step)].loss - (*relative)(0, step) * constantLoss)
            <= 1e-14);
        QVERIFY(
            qAbs(runner.history().b()[std::size_t(step)].loss - (*relative)(1, step) * constantLoss)
            <= 1e-14);
    }
}

void TestTrainingTab::pauseResumeEqualsUninterrupted()
{
    TrainingSettings s = smallSettings(false);
    s.steps = 60;
    TrainingRunner straight;
    QVERIFY(straight.setSettings(s));
    playToEnd(straight);

    TrainingRunner interrupted;
    QVERIFY(interrupted.setSettings(s));
    for (int i = 0; i < 3; ++i) {
        interrupted.step();
        interrupted.waitForIdle();
    }
    QCOMPARE(interrupted.stepCount(), 3);
    while (interrupted.stepCount() < s.steps) {
        interrupted.play();
        QTest::qWait(1);
        interrupted.pause();
        interrupted.waitForIdle();
        interrupted.step();
        interrupted.waitForIdle();
    }
    QCOMPARE(interrupted.stepCount(), 60);
    QCOMPARE(losses(interrupted.history().a()), losses(straight.history().a()));
    QCOMPARE(losses(interrupted.history().b()), losses(straight.history().b()));
    QCOMPARE(interrupted.latest().weightsA, straight.latest().weightsA);
}

void TestTrainingTab::pauseStopsTheWorker()
{
    TrainingSettings s;
    s.steps = TrainingSettings::maxSteps;
    TrainingRunner runner;
    QVERIFY(runner.setSettings(s));
    runner.play();
    QTRY_VERIFY_WITH_TIMEOUT(runner.stepCount() > 0, 30000);
    runner.pause();
    QVERIFY(!runner.playing());
    runner.waitForIdle();
    const std::int64_t steps = runner.stepCount();
    QTest::qWait(100);
    QCOMPARE(runner.stepCount(), steps);
    QVERIFY(!runner.busy());
    QVERIFY(runner.stopReason().isEmpty());
}

void TestTrainingTab::midRunLearningRateApplies()
{
    // Steps 1–10 at lr 0.01, then lr 0.05 for A: as editing PyTorch's param_groups.
    TrainingSettings s = smallSettings(false);
    s.steps = 20;
    TrainingRunner runner;
    QVERIFY(runner.setSettings(s));
    for (int i = 0; i < 10; ++i) {
        runner.step();
        runner.waitForIdle();
    }
    TrainingSettings faster = s;
    faster.a.learningRate = 0.05;
    QVERIFY(runner.setSettings(faster));
    QCOMPARE(runner.stepCount(), 10); // not restarted
    playToEnd(runner);

    const TaskConfig tc = taskConfigOf(s);
    TaskGenerator batches(tc);
    Generator rng(s.seed);
    MultiheadAttention<double> init(s.dModel, s.heads);
    init.initXavier(rng);
    OptimizerConfig oc;
    oc.kind = OptimizerKind::Adam;
    oc.learningRate = 0.01;
    Trainer<double> a(tc.layerConfig(s.heads, 0.5), Parameters<double>::fromLayer(init), oc,
                      Loss::MeanSquaredError);
    std::vector<double> expected;
    for (int i = 0; i < 20; ++i) {
        if (i == 10)
            a.optimizer().setLearningRate(0.05);
        expected.push_back(a.step(batches.next()).loss);
    }
    QCOMPARE(losses(runner.history().a()), expected);
}

void TestTrainingTab::scrubberShowsRecordedWeights()
{
    TrainingSettings s = smallSettings(false);
    s.steps = 30;
    TrainingPanel panel;
    QVERIFY(panel.setSettings(s));
    playToEnd(*panel.runner());
    // Snapshots every TrainingRunner::snapshotInterval = 10 steps, and the initial weights.
    std::vector<std::int64_t> steps;
    for (const ProbeSnapshot &snap : panel.runner()->history().snapshots())
        steps.push_back(snap.step);
    QCOMPARE(steps, (std::vector<std::int64_t> {0, 10, 20, 30}));

    const Direct d = trainDirectly<double>(s, 10, 10);
    panel.scrubTo(10);
    QCOMPARE(panel.shownStep(), 10);
    auto shown = panel.heatmapA()->result();
    QVERIFY(shown && shown->ok());
    QCOMPARE(int(shown->weights.size()), s.heads);
    for (int h = 0; h < s.heads; ++h)
        QCOMPARE(shown->weights[std::size_t(h)], d.probeA[std::size_t(h)]);
    // Between snapshots: the last one at or before the step.
    panel.scrubTo(17);
    QCOMPARE(panel.shownStep(), 10);
    QCOMPARE(panel.scrubber()->value(), 1);
    // Step 0: the initial weights.
    const Direct d0 = trainDirectly<double>(s, 0, 0);
    panel.scrubTo(0);
    shown = panel.heatmapA()->result();
    QCOMPARE(shown->weights[0], d0.probeA[0]);
    // Following again: the latest step.
    panel.scrubTo(-1);
    QCOMPARE(panel.shownStep(), 30);
    QCOMPARE(panel.scrubber()->value(), panel.scrubber()->maximum());
}

void TestTrainingTab::historyStaysBounded()
{
    TrainingHistory history(1, 4);
    history.setInitial(ProbeSnapshot {0, {MatrixD::Constant(2, 2, 0.5)}, {}, {}, {}});
    ChunkResult chunk;
    chunk.firstStep = 1;
    for (std::int64_t s = 1; s <= 20; ++s) {
        chunk.a.push_back({double(s)});
        chunk.b.push_back({double(-s)});
        chunk.snapshots.push_back(
            ProbeSnapshot {s, {MatrixD::Constant(2, 2, double(s))}, {}, {}, {}});
    }
    history.append(chunk);
    QCOMPARE(history.steps(), 20);
    QVERIFY(history.snapshots().size() < 4);
    // Capacity 4 with steps 0 … 20: kept every 8th step after thinning 1 → 2 → 4 → 8.
    std::vector<std::int64_t> kept;
    for (const ProbeSnapshot &snap : history.snapshots()) {
        kept.push_back(snap.step);
        QCOMPARE(snap.weightsA[0](0, 0), snap.step == 0 ? 0.5 : double(snap.step));
    }
    QCOMPARE(kept, (std::vector<std::int64_t> {0, 8, 16}));
    QCOMPARE(history.interval(), 8);
    QCOMPARE(history.snapshotIndexAt(15), 1);
    // A chunk that does not follow is refused.
    ChunkResult gap;
    gap.firstStep = 30;
    QVERIFY_THROWS_EXCEPTION(InvalidArgument, history.append(gap));
}

void TestTrainingTab::invalidSettingsRefused()
{
    TrainingRunner runner;
    TrainingSettings s = runner.settings();
    s.heads = 3; // does not divide 64
    QString error;
    QVERIFY(!runner.setSettings(s, &error));
    QVERIFY2(error.contains(QLatin1String("does not divide")), qPrintable(error));
    QCOMPARE(runner.settings().heads, TrainingSettings().heads);
    s = runner.settings();
    s.a.learningRate = 0;
    QVERIFY(!runner.setSettings(s, &error));
    QVERIFY2(error.contains(QLatin1String("learning rate")), qPrintable(error));
}

void TestTrainingTab::exportsWriteFiles()
{
    TrainingSettings s = smallSettings(false);
    s.steps = 12;
    TrainingPanel panel;
    panel.resize(1200, 800);
    QVERIFY(panel.setSettings(s));
    playToEnd(*panel.runner());
    QTemporaryDir dir;
    QString error;
    const QString csv = dir.filePath(QStringLiteral("curves.csv"));
    QVERIFY2(panel.exportCurvesCsv(csv, &error), qPrintable(error));
    QFile file(csv);
    QVERIFY(file.open(QIODevice::ReadOnly));
    const QList<QByteArray> lines = file.readAll().trimmed().split('\n');
    QCOMPARE(lines.size(), 13);
    QVERIFY(lines[0].startsWith("step,loss_a,mean_max_weight_a"));
    const Direct d = trainDirectly<double>(s, 12);
    QCOMPARE(lines[1].split(',')[1].toDouble(), d.lossA[0]);
    QCOMPARE(lines[12].split(',')[5].toDouble(), d.lossB[11]);

    const QString png = dir.filePath(QStringLiteral("maps.png"));
    QVERIFY2(panel.exportHeatmaps(png, QSize(1000, 450), 1.0, &error), qPrintable(error));
    QCOMPARE(QImage(png).size(), QSize(1000, 450));
    const QString svg = dir.filePath(QStringLiteral("maps.svg"));
    QVERIFY2(panel.exportHeatmaps(svg, QSize(1000, 450), 1.0, &error), qPrintable(error));
    QFile svgFile(svg);
    QVERIFY(svgFile.open(QIODevice::ReadOnly));
    QVERIFY(svgFile.readAll().contains("run A, step 12"));
    const QString chart = dir.filePath(QStringLiteral("chart.png"));
    QVERIFY2(panel.exportChart(chart, QSize(600, 300), 1.0, &error), qPrintable(error));
    QCOMPARE(QImage(chart).size(), QSize(600, 300));
    QVERIFY(
        !panel.exportHeatmaps(dir.filePath(QStringLiteral("x.bmp")), QSize(100, 100), 1.0, &error));
}

void TestTrainingTab::settingsJsonRoundTrip()
{
    TrainingSettings s;
    s.task = TaskKind::Copy;
    s.n = 12;
    s.dModel = 32;
    s.heads = 4;
    s.batch = 8;
    s.noise = 0.25;
    s.offset = 3;
    s.seed = 18446744073709551615ull;
    s.steps = 1234;
    s.optimizer = OptimizerKind::Sgd;
    s.float32 = false;
    s.a = {1.0, 0.125};
    s.b = {0.25, 0.5};
    QString error;
    QCOMPARE(TrainingSettings::fromJson(s.toJson(), TrainingSettings(), &error), s);
    QVERIFY(error.isEmpty());
    // Invalid values keep the base, with a message.
    QJsonObject bad = s.toJson();
    bad.insert(QStringLiteral("heads"), 5);
    QCOMPARE(TrainingSettings::fromJson(bad, TrainingSettings(), &error), TrainingSettings());
    QVERIFY2(error.contains(QLatin1String("does not divide")), qPrintable(error));
    bad = s.toJson();
    bad.insert(QStringLiteral("task"), QStringLiteral("sorting"));
    QCOMPARE(TrainingSettings::fromJson(bad, s, &error), s);
    QVERIFY2(error.contains(QLatin1String("unknown task")), qPrintable(error));
    // Missing keys keep the base's values.
    QJsonObject partial;
    partial.insert(QStringLiteral("steps"), 99);
    TrainingSettings expected = s;
    expected.steps = 99;
    QCOMPARE(TrainingSettings::fromJson(partial, s, &error), expected);
}

void TestTrainingTab::sessionFileRoundTrip()
{
    TrainingSettings s = smallSettings(true);
    s.a = {0.75, 0.003};
    MainWindow window;
    QVERIFY(window.trainingPanel()->setSettings(s));
    window.modeTabs()->setCurrentWidget(window.trainingPanel());
    SessionDocument doc;
    doc.view = window.viewState();
    QString error;
    const auto read = SessionFile::fromJson(SessionFile::toJson(doc), &error);
    QVERIFY2(read, qPrintable(error));
    MainWindow other;
    other.setViewState(read->view);
    QCOMPARE(other.trainingPanel()->settings(), s);
    QCOMPARE(other.trainingPanel()->runner()->settings(), s);
    QCOMPARE(other.modeTabs()->currentWidget(), other.trainingPanel());
}

void TestTrainingTab::olderSessionKeepsDefaults()
{
    // A file written before the Training tab: no "training" key.
    const QByteArray old = R"({"format":"attnlab-session","version":1,
        "parameters":{"version":1,"n":6,"d_model":32,"heads":2,"seed":"3"},
        "view":{"tabs":["#0"]}})";
    QString error;
    const auto doc = SessionFile::fromJson(old, &error);
    QVERIFY2(doc, qPrintable(error));
    MainWindow window;
    window.setViewState(doc->view);
    QCOMPARE(window.trainingPanel()->settings(), TrainingSettings());
}

void TestTrainingTab::closingWhileTraining()
{
    for (int i = 0; i < 3; ++i) {
        auto *window = new MainWindow;
        window->show();
        window->modeTabs()->setCurrentWidget(window->trainingPanel());
        TrainingSettings s;
        s.steps = TrainingSettings::maxSteps;
        QVERIFY(window->trainingPanel()->setSettings(s));
        window->trainingPanel()->runner()->play();
        QTRY_VERIFY_WITH_TIMEOUT(window->trainingPanel()->runner()->stepCount() > 0, 30000);
        QVERIFY(window->trainingPanel()->runner()->busy()
                || window->trainingPanel()->runner()->playing());
        window->close();
        delete window; // the worker stops after its step; nothing is delivered to the dead panel
    }
}

QTEST_MAIN(TestTrainingTab)
#include "tst_trainingtab.moc"
