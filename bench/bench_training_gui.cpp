// attn_bench_training_gui: training speed of the window's Training tab while it animates, and
// the time the window spends painting a frame meanwhile.
//
// Opens the real main window (offscreen unless QT_QPA_PLATFORM says otherwise), switches to the
// Training tab, sets the task and model from the options and presses Play for --seconds. It
// counts the steps of runs A and B taken (one step = one optimizer step of A and one of B on
// the same batch), the frames shown (paints of run A's heatmap) and times every paint of the
// window (the QEvent::UpdateRequest that repaints and flushes every dirty widget). Then the
// same settings with a bare TrainingRunner and no window: the worker's own pace.
//
//   attn_bench_training_gui --seconds 5 --task recall --n 8 --d-model 64 --heads 1 --batch 32
//
// --hold S keeps the window open S seconds after the run (for a screenshot under Xvfb), after
// half of it showing the snapshot of step --scrub; --export DIR writes the tab's exports;
// --loss-threshold T pauses when both runs' loss is below T; --init xavier|unit_qk.
// Prints a text table (or --format json). Nothing here asserts a time.

#include "ui/panels/trainingpanel.h"
#include "ui/session/trainingrunner.h"
#include "ui/views/heatmapwidget.h"
#include "ui/window/mainwindow.h"

#include "core/base/blas.h"

#include <QApplication>
#include <QCommandLineParser>
#include <QElapsedTimer>
#include <QEvent>
#include <QEventLoop>
#include <QJsonDocument>
#include <QJsonObject>
#include <QMap>
#include <QTabWidget>
#include <QTextStream>
#include <QTimer>

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

#include <unistd.h>

namespace {

using attn::TrainingSettings;

/// Times the paints of every top-level window.
class TimingApplication : public QApplication
{
public:
    using QApplication::QApplication;
    bool notify(QObject *receiver, QEvent *event) override
    {
        if (timing && event->type() == QEvent::Paint) {
            QElapsedTimer clock;
            clock.start();
            const bool done = QApplication::notify(receiver, event);
            byClass[QString::fromLatin1(receiver->metaObject()->className())]
                += double(clock.nsecsElapsed()) / 1e6;
            return done;
        }
        if (!timing || event->type() != QEvent::UpdateRequest)
            return QApplication::notify(receiver, event);
        QElapsedTimer clock;
        clock.start();
        const bool done = QApplication::notify(receiver, event);
        paintMs.push_back(double(clock.nsecsElapsed()) / 1e6);
        return done;
    }
    bool timing = false;
    std::vector<double> paintMs;
    QMap<QString, double> byClass; ///< paint milliseconds by widget class (nested paints count)
};

double percentile(std::vector<double> v, double p)
{
    if (v.empty())
        return 0;
    std::sort(v.begin(), v.end());
    const double rank = p / 100.0 * double(v.size() - 1);
    const std::size_t lo = std::size_t(std::floor(rank)), hi = std::size_t(std::ceil(rank));
    return v[lo] + (v[hi] - v[lo]) * (rank - double(lo));
}

void waitMs(int ms)
{
    QEventLoop loop;
    QTimer::singleShot(ms, &loop, &QEventLoop::quit);
    loop.exec();
}

} // namespace

int main(int argc, char **argv)
{
    // As the window does (app/main.cpp): OpenBLAS's better kernels where it fell back to SSE3,
    // unless --keep-blas-core measures its own choice.
    bool keepCore = false;
    for (int i = 1; i < argc; ++i)
        keepCore = keepCore || !std::strcmp(argv[i], "--keep-blas-core");
    if (const std::string core = attn::betterBlasCore();
        !keepCore && !core.empty() && setenv("OPENBLAS_CORETYPE", core.c_str(), 1) == 0)
        execv("/proc/self/exe", argv);
    if (qEnvironmentVariableIsEmpty("QT_QPA_PLATFORM"))
        qputenv("QT_QPA_PLATFORM", "offscreen");
    TimingApplication app(argc, argv);
    QCommandLineParser parser;
    parser.setApplicationDescription(QStringLiteral("Training tab: steps/s and paint times"));
    parser.addHelpOption();
    const auto option = [&](const char *name, const char *help, const char *value) {
        QCommandLineOption o(QString::fromLatin1(name), QString::fromLatin1(help),
                             QStringLiteral("value"), QString::fromLatin1(value));
        parser.addOption(o);
        return o;
    };
    const auto seconds = option("seconds", "seconds of training per phase", "5");
    const auto task = option("task", "recall, copy or average", "recall");
    const auto n = option("n", "pairs (recall) or tokens", "8");
    const auto dModel = option("d-model", "d_model", "64");
    const auto heads = option("heads", "h", "1");
    const auto batch = option("batch", "B", "32");
    const auto dtype = option("dtype", "float32 or float64", "float32");
    const auto width = option("width", "window width (0: the window's own size)", "0");
    const auto height = option("height", "window height (0: the window's own size)", "0");
    const auto hold = option("hold", "seconds to keep the window open afterwards", "0");
    const auto format = option("format", "table or json", "table");
    const auto exportDir
        = option("export", "write the tab's exports into this folder at the end", "");
    const auto scrub
        = option("scrub", "during --hold, show the snapshot of this step (-1: none)", "-1");
    const auto threshold = option(
        "loss-threshold", "pause when both runs' loss is below this (0: no threshold)", "0");
    const auto init = option("init", "initial weights: xavier or unit_qk", "xavier");
    parser.addOption(QCommandLineOption(
        QStringLiteral("keep-blas-core"),
        QStringLiteral("keep OpenBLAS's own kernel choice (the window replaces SSE3 by AVX-512 "
                       "or AVX2 where the CPU has them)")));
    parser.process(app);

    TrainingSettings s;
    s.task = attn::training::taskKindFromName(parser.value(task).toStdString());
    s.n = parser.value(n).toInt();
    s.dModel = parser.value(dModel).toInt();
    s.heads = parser.value(heads).toInt();
    s.batch = parser.value(batch).toInt();
    s.float32 = parser.value(dtype) != QLatin1String("float64");
    s.steps = TrainingSettings::maxSteps;
    s.init = attn::training::initializationFromName(parser.value(init).toStdString());
    if (parser.value(threshold).toDouble() > 0) {
        s.stopAtLoss = true;
        s.lossThreshold = parser.value(threshold).toDouble();
    }
    const QString problem = s.validate();
    if (!problem.isEmpty()) {
        QTextStream(stderr) << "attn_bench_training_gui: " << problem << "\n";
        return 2;
    }
    const int ms = int(parser.value(seconds).toDouble() * 1000);

    // Phase 1: the window animating.
    attn::MainWindow window;
    if (parser.value(width).toInt() > 0 && parser.value(height).toInt() > 0)
        window.resize(parser.value(width).toInt(), parser.value(height).toInt());
    window.show();
    window.modeTabs()->setCurrentWidget(window.trainingPanel());
    attn::TrainingPanel *panel = window.trainingPanel();
    panel->setSettings(s);
    waitMs(300); // first paint, the attention view's first result
    int frames = 0;
    QObject::connect(panel->heatmapA(), &attn::HeatmapWidget::painted, [&frames] { ++frames; });
    attn::TrainingRunner *runner = panel->runner();
    QElapsedTimer clock;
    app.timing = true;
    clock.start();
    runner->play();
    waitMs(ms);
    runner->pause();
    const double shownSeconds = double(clock.nsecsElapsed()) / 1e9;
    app.timing = false;
    runner->waitForIdle();
    const std::int64_t shownSteps = runner->stepCount();
    const std::vector<double> paints = app.paintMs;
    const int shownFrames = frames;
    waitMs(100);
    if (parser.value(hold).toDouble() > 0) {
        if (parser.value(scrub).toLongLong() >= 0) {
            waitMs(int(parser.value(hold).toDouble() * 500));
            panel->scrubTo(parser.value(scrub).toLongLong());
        }
        waitMs(int(parser.value(hold).toDouble() * 1000));
    }

    if (!parser.value(exportDir).isEmpty()) {
        const QString dir = parser.value(exportDir);
        QString error;
        const bool ok = panel->exportHeatmaps(dir + QStringLiteral("/training-heatmaps.png"),
                                              panel->heatmapsExportSize(), 1.0, &error)
            && panel->exportHeatmaps(dir + QStringLiteral("/training-heatmaps.svg"),
                                     panel->heatmapsExportSize(), 1.0, &error)
            && panel->exportChart(dir + QStringLiteral("/training-chart.png"), QSize(), 1.0, &error)
            && panel->exportCurvesCsv(dir + QStringLiteral("/training-curves.csv"), &error)
            && panel->exportDataNpz(dir + QStringLiteral("/training-run.npz"), &error);
        if (!ok)
            QTextStream(stderr) << "attn_bench_training_gui: export: " << error << "\n";
    }

    // Phase 2: the worker alone (a runner with nothing connected).
    attn::TrainingRunner bare;
    bare.setSettings(s);
    clock.start();
    bare.play();
    waitMs(ms);
    bare.pause();
    const double bareSeconds = double(clock.nsecsElapsed()) / 1e9;
    bare.waitForIdle();
    const std::int64_t bareSteps = bare.stepCount();

    const double shownRate = double(shownSteps) / shownSeconds;
    const double bareRate = double(bareSteps) / bareSeconds;
    const QString config
        = QStringLiteral("%1, n = %2, d_model = %3, h = %4, B = %5, %6, window %7 × %8")
              .arg(parser.value(task), parser.value(n), parser.value(dModel), parser.value(heads),
                   parser.value(batch),
                   s.float32 ? QStringLiteral("float32") : QStringLiteral("float64"),
                   QString::number(window.width()), QString::number(window.height()));
    if (parser.value(format) == QLatin1String("json")) {
        QJsonObject o;
        o.insert(QStringLiteral("config"), config);
        o.insert(QStringLiteral("blas_core"), QString::fromStdString(attn::blasCoreName()));
        o.insert(QStringLiteral("steps_per_second_view"), shownRate);
        o.insert(QStringLiteral("steps_per_second_no_view"), bareRate);
        o.insert(QStringLiteral("frames_per_second"), double(shownFrames) / shownSeconds);
        o.insert(QStringLiteral("paints"), int(paints.size()));
        o.insert(QStringLiteral("paint_ms_p50"), percentile(paints, 50));
        o.insert(QStringLiteral("paint_ms_p95"), percentile(paints, 95));
        o.insert(QStringLiteral("paint_ms_max"), percentile(paints, 100));
        QTextStream(stdout) << QJsonDocument(o).toJson(QJsonDocument::Compact) << "\n";
        return 0;
    }
    QTextStream out(stdout);
    out << "Training tab: " << config << "\n";
    out << "products: " << QString::fromStdString(std::string(attn::blasName())) << " "
        << QString::fromStdString(attn::blasCoreName()) << "\n";
    out << QStringLiteral("steps/s with the view updating: %1 (%2 steps in %3 s; each step = "
                          "one optimizer step of A and one of B)\n")
               .arg(shownRate, 0, 'f', 1)
               .arg(shownSteps)
               .arg(shownSeconds, 0, 'f', 2);
    out << QStringLiteral("steps/s without the view:      %1 (%2 steps in %3 s)\n")
               .arg(bareRate, 0, 'f', 1)
               .arg(bareSteps)
               .arg(bareSeconds, 0, 'f', 2);
    out << QStringLiteral("heatmap frames/s: %1; window paints: %2, p50 %3 ms, p95 %4 ms, max %5 "
                          "ms\n")
               .arg(double(shownFrames) / shownSeconds, 0, 'f', 1)
               .arg(paints.size())
               .arg(percentile(paints, 50), 0, 'f', 2)
               .arg(percentile(paints, 95), 0, 'f', 2)
               .arg(percentile(paints, 100), 0, 'f', 2);
    out << "paint ms by widget class (inclusive of children):";
    for (auto it = app.byClass.cbegin(); it != app.byClass.cend(); ++it)
        if (it.value() >= 1.0)
            out << " " << it.key() << " " << QString::number(it.value(), 'f', 0);
    out << "\n";
    return 0;
}
