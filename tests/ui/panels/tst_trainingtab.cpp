// The Training tab: its runner (ui/session/trainingrunner.h) against core's Trainer driven
// directly, pause/resume, the snapshot scrubber, the bounded history, exports and the session
// round trip of the training settings.

#include "testutil.h"
#include "ui/charts/trainingchart.h"
#include "ui/document/sessionfile.h"
#include "ui/document/trainingundo.h"
#include "ui/panels/trainingpanel.h"
#include "ui/session/trainingrunner.h"
#include "ui/views/heatmapwidget.h"
#include "ui/window/mainwindow.h"
#include "ui/window/sessioncontroller.h"

#include "core/attention/multihead.h"
#include "core/attention/positional.h"
#include "core/experiments/experiments.h"
#include "core/io/npy.h"
#include "core/random/random.h"
#include "core/training/tasks.h"
#include "core/training/trainer.h"

#include <QChart>
#include <QChartView>
#include <QDoubleSpinBox>
#include <QFile>
#include <QGraphicsScene>
#include <QGraphicsTextItem>
#include <QImage>
#include <QJsonArray>
#include <QSlider>
#include <QTabWidget>
#include <QTemporaryDir>
#include <QTest>
#include <QUndoStack>

#include <algorithm>
#include <cmath>
#include <tuple>
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
    Parameters<double> finalA, finalB; ///< the parameters after the last step
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
    d.finalA = a.parameters().template cast<double>();
    d.finalB = b.parameters().template cast<double>();
    return d;
}

std::vector<double> losses(const std::vector<StepPoint> &points)
{
    std::vector<double> out;
    for (const StepPoint &p : points)
        out.push_back(p.loss);
    return out;
}

/// The first step (1-based) whose loss is below `threshold`, 0 when none.
std::int64_t firstBelow(const std::vector<double> &loss, double threshold)
{
    for (std::size_t i = 0; i < loss.size(); ++i)
        if (loss[i] < threshold)
            return std::int64_t(i) + 1;
    return 0;
}

/// Population standard deviation of every component of `x`.
double populationStd(const MatrixD &x)
{
    const double mean = x.mean();
    return std::sqrt((x.array() - mean).square().mean());
}

/// A member of an .npz as a list of doubles (C order).
std::vector<double> member(const std::vector<std::pair<std::string, NpyArray>> &npz,
                           const std::string &name)
{
    for (const auto &[key, array] : npz)
        if (key == name)
            return array.values;
    qWarning("no member %s", name.c_str());
    return {};
}

std::vector<double> flat(const MatrixD &m)
{
    std::vector<double> out;
    for (Index r = 0; r < m.rows(); ++r)
        for (Index c = 0; c < m.cols(); ++c)
            out.push_back(m(r, c));
    return out;
}

std::vector<double> flat(const VectorD &v)
{
    return std::vector<double>(v.data(), v.data() + v.size());
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
    void stopsAtLossThreshold_data();
    void stopsAtLossThreshold();
    void thresholdChangesNoRestart();
    void npzExportEqualsRunnerState();
    void initialisationReachesRuns_data();
    void initialisationReachesRuns();
    void unitQkEqualsExperimentE13();
    void settingsJsonRoundTrip();
    void sessionFileRoundTrip();
    void olderSessionKeepsDefaults();
    void editsAreUndoable();
    void closingWhileTraining();
    void lossChartReadableAtSmallLosses();
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
    QTRY_VERIFY_WITH_TIMEOUT(runner.stepCount() > 0, attn::test::kWorkTimeoutMs);
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

void TestTrainingTab::stopsAtLossThreshold_data()
{
    QTest::addColumn<bool>("either");
    QTest::newRow("both") << false;
    QTest::newRow("either") << true;
}

void TestTrainingTab::stopsAtLossThreshold()
{
    QFETCH(bool, either);
    QVERIFY(!TrainingSettings().stopAtLoss); // off by default
    TrainingSettings s = smallSettings(true);
    s.steps = 200;
    // The losses of 200 steps from core's Trainer; a threshold both runs pass within 80 steps.
    const Direct d = trainDirectly<float>(s, 200);
    const std::vector<double> a80(d.lossA.begin(), d.lossA.begin() + 80),
        b80(d.lossB.begin(), d.lossB.begin() + 80);
    const double threshold = std::max(*std::min_element(a80.begin(), a80.end()),
                                      *std::min_element(b80.begin(), b80.end()))
        * (1 + 1e-9);
    const std::int64_t stepA = firstBelow(d.lossA, threshold),
                       stepB = firstBelow(d.lossB, threshold);
    QVERIFY(stepA > 1 && stepA <= 80 && stepB > 1 && stepB <= 80);
    QVERIFY(stepA != stepB); // so both and either stop at different steps
    const std::int64_t expected = either ? std::min(stepA, stepB) : std::max(stepA, stepB);

    s.stopAtLoss = true;
    s.lossThreshold = threshold;
    s.thresholdEither = either;
    TrainingRunner runner;
    QVERIFY(runner.setSettings(s));
    playToEnd(runner);
    QCOMPARE(runner.stepCount(), expected);
    QCOMPARE(losses(runner.history().a()),
             std::vector<double>(d.lossA.begin(), d.lossA.begin() + expected));
    QCOMPARE(runner.thresholdStep(false), either && stepA > expected ? 0 : stepA);
    QCOMPARE(runner.thresholdStep(true), either && stepB > expected ? 0 : stepB);
    const QString reason = runner.stopReason();
    QVERIFY2(reason.contains(QStringLiteral("A at step %1").arg(stepA))
                 || (either && stepA > expected && reason.contains(QLatin1String("A not yet"))),
             qPrintable(reason));
    QVERIFY2(reason.contains(QStringLiteral("B at step %1").arg(stepB))
                 || (either && stepB > expected && reason.contains(QLatin1String("B not yet"))),
             qPrintable(reason));
    // Reached: Play is refused until the threshold is off or lower.
    runner.play();
    QVERIFY(!runner.playing());
    QCOMPARE(runner.stepCount(), expected);
    QVERIFY(runner.stopReason().contains(QLatin1String("switch the threshold off")));
    // Off: the runs go on (same runs, not restarted) to the step limit.
    s.stopAtLoss = false;
    QVERIFY(runner.setSettings(s));
    QCOMPARE(runner.stepCount(), expected);
    playToEnd(runner);
    QCOMPARE(runner.stepCount(), 200);
    QCOMPARE(losses(runner.history().b()), d.lossB);
}

void TestTrainingTab::thresholdChangesNoRestart()
{
    TrainingSettings s = smallSettings(false);
    s.steps = 40;
    TrainingRunner runner;
    QVERIFY(runner.setSettings(s));
    for (int i = 0; i < 5; ++i) {
        runner.step();
        runner.waitForIdle();
    }
    s.stopAtLoss = true;
    s.lossThreshold = 1e-9; // not reached in 40 steps
    s.thresholdEither = true;
    QVERIFY(runner.setSettings(s));
    QCOMPARE(runner.stepCount(), 5);
    playToEnd(runner);
    QCOMPARE(runner.stepCount(), 40);
    QCOMPARE(runner.thresholdStatus(), QStringLiteral("loss < 1e-09: A not yet, B not yet"));
    s.lossThreshold = 0;
    QString error;
    QVERIFY(!runner.setSettings(s, &error));
    QVERIFY2(error.contains(QLatin1String("loss threshold")), qPrintable(error));
}

void TestTrainingTab::npzExportEqualsRunnerState()
{
    for (const bool float32 : {true, false}) {
        TrainingSettings s = smallSettings(float32);
        s.steps = 15;
        TrainingPanel panel;
        QVERIFY(panel.setSettings(s));
        playToEnd(*panel.runner());
        const TrainingRunner &runner = *panel.runner();
        QTemporaryDir dir;
        const QString path = dir.filePath(QStringLiteral("run.npz"));
        QString error;
        QVERIFY2(panel.exportDataNpz(path, &error), qPrintable(error));
        const auto npz = readNpz(QFile::encodeName(path).toStdString());
        std::vector<std::string> names;
        for (const auto &[key, array] : npz)
            names.push_back(key);
        for (const char *name :
             {"loss_a", "loss_b", "max_weight_a", "jacobian_norm_b", "grad_norm_qk_a",
              "probe_weights_a", "probe_weights_b", "a_in_proj_weight", "a_in_proj_bias",
              "a_out_proj_weight", "a_out_proj_bias", "b_in_proj_weight", "b_out_proj_bias"})
            QVERIFY2(std::find(names.begin(), names.end(), name) != names.end(), name);
        // The curves: the runner's history, and core's Trainer driven directly.
        const Direct d
            = float32 ? trainDirectly<float>(s, 15, 15) : trainDirectly<double>(s, 15, 15);
        QCOMPARE(member(npz, "loss_a"), losses(runner.history().a()));
        QCOMPARE(member(npz, "loss_a"), d.lossA);
        QCOMPARE(member(npz, "loss_b"), d.lossB);
        std::vector<double> maxB, jacobianA, gradA, steps;
        for (const StepPoint &p : runner.history().b())
            maxB.push_back(p.meanMaxWeight);
        for (const StepPoint &p : runner.history().a()) {
            jacobianA.push_back(p.meanJacobianNorm);
            gradA.push_back(p.gradNormQk);
            steps.push_back(double(steps.size() + 1));
        }
        QCOMPARE(member(npz, "max_weight_b"), maxB);
        QCOMPARE(member(npz, "jacobian_norm_a"), jacobianA);
        QCOMPARE(member(npz, "grad_norm_qk_a"), gradA);
        QCOMPARE(member(npz, "step"), steps);
        // The probe's weights per head (h × L × L): the runner's latest, and the direct run's.
        const auto probe = std::find_if(npz.begin(), npz.end(),
                                        [](const auto &m) { return m.first == "probe_weights_a"; });
        QCOMPARE(probe->second.shape,
                 (std::vector<std::int64_t> {s.heads, s.n + 1, s.n + 1})); // recall: n + 1 tokens
        QCOMPARE(probe->second.type, float32 ? NpyType::Float32 : NpyType::Float64);
        std::vector<double> latestA, directA, latestB;
        for (int h = 0; h < s.heads; ++h) {
            for (double v : flat(runner.latest().weightsA[std::size_t(h)]))
                latestA.push_back(v);
            for (double v : flat(d.probeA[std::size_t(h)]))
                directA.push_back(v);
            for (double v : flat(runner.latest().weightsB[std::size_t(h)]))
                latestB.push_back(v);
        }
        QCOMPARE(member(npz, "probe_weights_a"), latestA);
        QCOMPARE(member(npz, "probe_weights_a"), directA);
        QCOMPARE(member(npz, "probe_weights_b"), latestB);
        // The final parameters under PyTorch's names.
        for (const auto &[prefix, params] :
             {std::pair {std::string("a_"), &d.finalA}, std::pair {std::string("b_"), &d.finalB}}) {
            QCOMPARE(member(npz, prefix + "in_proj_weight"), flat(params->inProjWeight));
            QCOMPARE(member(npz, prefix + "in_proj_bias"), flat(params->inProjBias));
            QCOMPARE(member(npz, prefix + "out_proj_weight"), flat(params->outProjWeight));
            QCOMPARE(member(npz, prefix + "out_proj_bias"), flat(params->outProjBias));
        }
        QCOMPARE(member(npz, "a_in_proj_weight"),
                 flat(runner.run().parameters(false).inProjWeight));
        QVERIFY(member(npz, "a_in_proj_weight") != member(npz, "b_in_proj_weight"));
        QCOMPARE(member(npz, "num_heads"), std::vector<double> {double(s.heads)});
    }
}

void TestTrainingTab::initialisationReachesRuns_data()
{
    QTest::addColumn<int>("task");
    QTest::newRow("recall") << int(TaskKind::Recall);
    QTest::newRow("copy (positions added)") << int(TaskKind::Copy);
}

void TestTrainingTab::initialisationReachesRuns()
{
    QFETCH(int, task);
    TrainingSettings s = smallSettings(false);
    s.task = TaskKind(task);
    s.n = 6;
    s.offset = 2;
    const TaskConfig tc = taskConfigOf(s);
    const LayerConfig layer = tc.layerConfig(s.heads);
    // The first training batch's inputs as the layer sees them (positions added for copy).
    const Batch<double> first = TaskGenerator(tc).next();
    MatrixD x = first.inputs;
    if (layer.positionWidth > 0)
        for (Index b = 0; b < first.batch; ++b)
            x.block(b * first.length, s.dModel - layer.positionWidth, first.length,
                    layer.positionWidth)
                += sinusoidalEncoding(first.length, layer.positionWidth);
    const Index E = s.dModel;
    const auto projection = [&](const Parameters<double> &p, Index part) {
        MatrixD proj = x * p.inProjWeight.middleRows(part * E, E).transpose();
        proj.rowwise() += p.inProjBias.segment(part * E, E).transpose();
        return proj;
    };
    Generator rng(s.seed);
    MultiheadAttention<double> xavierLayer(s.dModel, s.heads);
    xavierLayer.initXavier(rng);
    const Parameters<double> xavier = Parameters<double>::fromLayer(xavierLayer);

    TrainingRunner runner;
    QVERIFY(runner.setSettings(s));
    QCOMPARE(runner.run().parameters(false).inProjWeight, xavier.inProjWeight);
    QCOMPARE(runner.run().parameters(true).outProjWeight, xavier.outProjWeight);
    const double sdQ = populationStd(projection(xavier, 0)),
                 sdK = populationStd(projection(xavier, 1));
    QVERIFY(qAbs(sdQ - 1) > 0.05 && qAbs(sdK - 1) > 0.05); // xavier's q, k are not unit-variance

    s.init = Initialization::UnitVarianceQk;
    QVERIFY(runner.setSettings(s)); // restarts from the new initial weights
    QCOMPARE(runner.stepCount(), 0);
    for (const bool b : {false, true}) {
        const Parameters<double> p = runner.run().parameters(b);
        // q and k have unit-variance components on the first batch ...
        QVERIFY(qAbs(populationStd(projection(p, 0)) - 1) < 1e-12);
        QVERIFY(qAbs(populationStd(projection(p, 1)) - 1) < 1e-12);
        // ... W_Q and W_K are xavier's divided by their projections' standard deviation, and
        // W_V and the output projection are xavier's.
        QVERIFY((p.inProjWeight.topRows(E) - xavier.inProjWeight.topRows(E) / sdQ).norm() < 1e-13);
        QVERIFY(
            (p.inProjWeight.middleRows(E, E) - xavier.inProjWeight.middleRows(E, E) / sdK).norm()
            < 1e-13);
        QCOMPARE(MatrixD(p.inProjWeight.bottomRows(E)), MatrixD(xavier.inProjWeight.bottomRows(E)));
        QCOMPARE(p.outProjWeight, xavier.outProjWeight);
    }
    // The first step's loss is that of these weights on the first batch.
    runner.step();
    runner.waitForIdle();
    const Parameters<double> start = runner.run().initialParameters();
    const ForwardCache<double> c
        = forward(tc.layerConfig(s.heads, s.a.scaleExponent), start, first);
    QCOMPARE(runner.history().a().front().loss, lossValue(Loss::MeanSquaredError, c.output, first));
}

void TestTrainingTab::unitQkEqualsExperimentE13()
{
    // E13's unit_qk runs at d_k = 32 (rows 3 and 4 of its curves: 1/√d_k and none): the tab
    // with "unit-variance q and k" set up alike trains on the same weights and batches.
    ExperimentParams params {{"d_k", "32"}, {"steps", "30"}};
    const ExperimentResult e13 = runExperiment("E13", params);
    const MatrixD *relative = nullptr;
    for (const auto &m : e13.matrices)
        if (m.name == "relative_loss")
            relative = &m.values;
    QVERIFY(relative && relative->rows() == 6 && relative->cols() == 30);
    TrainingSettings s;
    s.n = 6;
    s.dModel = 32;
    s.heads = 1;
    s.batch = 8;
    s.classes = 4;
    s.noise = 0.1;
    s.seed = 0;
    s.steps = 30;
    s.init = Initialization::UnitVarianceQk;
    s.a = {0.5, 0.005};
    s.b = {0.0, 0.005};
    TrainingRunner runner;
    QVERIFY(runner.setSettings(s));
    playToEnd(runner);
    const double constantLoss = (1.0 - 1.0 / 4.0) / 32.0;
    for (int step = 0; step < 30; ++step) {
        QVERIFY(
            qAbs(runner.history().a()[std::size_t(step)].loss - (*relative)(3, step) * constantLoss)
            <= 1e-14);
        QVERIFY(
            qAbs(runner.history().b()[std::size_t(step)].loss - (*relative)(4, step) * constantLoss)
            <= 1e-14);
        // ... and differs from xavier's run (row 0).
        if (step == 29)
            QVERIFY(qAbs((*relative)(3, step) - (*relative)(0, step)) > 1e-6);
    }
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
    s.init = Initialization::UnitVarianceQk;
    s.stopAtLoss = true;
    s.lossThreshold = 0.0125;
    s.thresholdEither = true;
    s.a = {1.0, 0.125};
    s.b = {0.25, 0.5};
    QString error;
    QCOMPARE(TrainingSettings::fromJson(s.toJson(), TrainingSettings(), &error), s);
    QVERIFY(error.isEmpty());
    QCOMPARE(s.toJson().value(QStringLiteral("init")).toString(), QStringLiteral("unit_qk"));
    QCOMPARE(s.toJson()
                 .value(QStringLiteral("loss_threshold"))
                 .toObject()
                 .value(QStringLiteral("runs"))
                 .toString(),
             QStringLiteral("either"));
    // The threshold and the initialisation are validated like the other keys.
    for (const auto &[key, value, message] :
         {std::tuple {"init", QJsonValue(QStringLiteral("orthogonal")), "unknown initialisation"},
          std::tuple {"loss_threshold", QJsonValue(0.5), "must be an object"},
          std::tuple {"loss_threshold", QJsonValue(QJsonObject {{"value", -1.0}}), "> 0"},
          std::tuple {"loss_threshold", QJsonValue(QJsonObject {{"on", 1}}), "true or false"},
          std::tuple {"loss_threshold", QJsonValue(QJsonObject {{"runs", "all"}}),
                      "both or either"}}) {
        QJsonObject bad = s.toJson();
        bad.insert(QLatin1String(key), value);
        QCOMPARE(TrainingSettings::fromJson(bad, s, &error), s);
        QVERIFY2(error.contains(QLatin1String(message)), qPrintable(error));
    }
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
    s.init = Initialization::UnitVarianceQk;
    s.stopAtLoss = true;
    s.lossThreshold = 0.004;
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

// A settings change in the tab is a step of Edit → Undo and marks the session modified;
// consecutive changes of the same setting are one step; undo puts the settings back in the tab
// and in the runner, and the last undo leaves the session unmodified again.
void TestTrainingTab::editsAreUndoable()
{
    MainWindow window;
    TrainingPanel *panel = window.trainingPanel();
    QUndoStack *stack = window.sessionController()->undoStack();
    const TrainingSettings start = panel->settings();
    QVERIFY(!window.sessionController()->isModified());
    auto *alphaA = panel->findChild<QDoubleSpinBox *>(QStringLiteral("trainingAlphaA"));
    auto *alphaB = panel->findChild<QDoubleSpinBox *>(QStringLiteral("trainingAlphaB"));
    QVERIFY(alphaA && alphaB);
    alphaA->setValue(0.6);
    alphaA->setValue(0.7); // the same setting again: merged
    QCOMPARE(stack->count(), 1);
    QCOMPARE(stack->undoText(), QStringLiteral("training: A α = 0.7"));
    QVERIFY(window.sessionController()->isModified());
    alphaB->setValue(0.25);
    QCOMPARE(stack->count(), 2);
    QCOMPARE(stack->undoText(), QStringLiteral("training: B α = 0.25"));
    QCOMPARE(panel->runner()->settings().b.scaleExponent, 0.25);
    stack->undo();
    QCOMPARE(alphaB->value(), start.b.scaleExponent);
    QCOMPARE(panel->runner()->settings().b.scaleExponent, start.b.scaleExponent);
    QCOMPARE(alphaA->value(), 0.7);
    stack->undo();
    QCOMPARE(panel->settings(), start);
    QCOMPARE(panel->runner()->settings(), start);
    QVERIFY(!window.sessionController()->isModified());
    stack->redo();
    QCOMPARE(panel->runner()->settings().a.scaleExponent, 0.7);
    // The settings that differ, named as the tab names them, and a change of many.
    QCOMPARE(SetTrainingSettingsCommand::changedSettings(start, panel->settings()),
             QStringList {QStringLiteral("A α")});
    TrainingSettings many = start;
    many.n += 1;
    many.heads = 2;
    many.steps += 1;
    many.b.learningRate = 0.01;
    QCOMPARE(SetTrainingSettingsCommand::describeChange(start, many),
             QStringLiteral("training: 4 settings"));
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
        QTRY_VERIFY_WITH_TIMEOUT(window->trainingPanel()->runner()->stepCount() > 0,
                                 attn::test::kWorkTimeoutMs);
        QVERIFY(window->trainingPanel()->runner()->busy()
                || window->trainingPanel()->runner()->playing());
        window->close();
        delete window; // the worker stops after its step; nothing is delivered to the dead panel
    }
}

// The loss chart at 1280 × 800: a plot tall enough to read, and log-axis labels written out
// (never elided to "...") when the losses fall through many decades below 1e-5.
void TestTrainingTab::lossChartReadableAtSmallLosses()
{
    MainWindow window;
    window.resize(1280, 800);
    window.show();
    QVERIFY(QTest::qWaitForWindowExposed(&window));
    window.modeTabs()->setCurrentWidget(window.trainingPanel());
    TrainingChart *chart = window.trainingPanel()->chart();
    QTRY_VERIFY(chart->isVisible());

    // Losses from 1 down to 1e-9 over 200 steps.
    TrainingHistory history;
    ChunkResult chunk;
    for (int i = 0; i < 200; ++i) {
        StepPoint p;
        p.loss = std::pow(10.0, -9.0 * i / 199.0);
        p.meanMaxWeight = 0.5;
        chunk.a.push_back(p);
        p.loss *= 2;
        chunk.b.push_back(p);
    }
    history.append(chunk);
    chart->setHistory(&history);
    QTest::qWait(100); // the chart lays out

    QVERIFY2(chart->view()->height() >= 250,
             qPrintable(QStringLiteral("chart view %1 px tall").arg(chart->view()->height())));
    const qreal plot = chart->view()->chart()->plotArea().height();
    QVERIFY2(plot >= 150, qPrintable(QStringLiteral("plot %1 px tall").arg(plot)));
    QStringList labels;
    for (QGraphicsItem *item : chart->view()->scene()->items())
        if (auto *text = dynamic_cast<QGraphicsTextItem *>(item))
            if (const QString t = text->toPlainText(); text->isVisible() && !t.isEmpty()
                && (t.front().isDigit() || t.contains(QLatin1String("..."))
                    || t.contains(QChar(0x2026))))
                labels << t; // the axes' tick labels, whole or elided
    const QString all = labels.join(QStringLiteral(" | "));
    QVERIFY2(labels.filter(QStringLiteral("e-")).size() >= 3, qPrintable(all));
    for (const QString &label : labels)
        QVERIFY2(!label.contains(QLatin1String("...")) && !label.contains(QChar(0x2026)),
                 qPrintable(all));
    // The lowest decade is labelled in scientific notation.
    QVERIFY2(labels.contains(QStringLiteral("1e-09")) || labels.contains(QStringLiteral("1e-10")),
             qPrintable(all));
    chart->setHistory(nullptr);
}

QTEST_MAIN(TestTrainingTab)
#include "tst_trainingtab.moc"
