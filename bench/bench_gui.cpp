// attn_bench_gui: latency of the real main window, from a control change to the heatmaps
// repainted with the new data (the window must keep up with a drag).
//
// Drives attn::MainWindow offscreen (QT_QPA_PLATFORM=offscreen unless set otherwise) exactly as
// a user's edit flows: the α slider of the control panel is moved (QSlider::setValue, as a drag
// step does), ControlPanel emits parametersEdited, AttentionSession computes in its worker,
// MainWindow::onResult hands the result to the heatmap widget and the charts, and the clock
// stops when HeatmapWidget::painted reports a paint of the result whose parameters equal the
// edited ones. Changes are made one after another, each once the previous one is on screen.
//
// Then a rapid slider drag: `--drag` steps of the α slider spread over `--drag-ms` (default 300
// in 1 s) with a precise timer, counting how many computations the session started, completed
// and delivered (AttentionSession::workStats): intermediate requests must be dropped, never
// queued, so the final parameters reach the screen about one computation after the last step.
//
// With --long N it measures the Long tab instead (bench/longmapbench.h): the first full view of
// n = N and zoom and pan steps to views of at most 1024 × 1024 cells, each from the wheel or
// mouse event to the first paint after the view's last tile arrived, and the longest event the
// GUI thread handled meanwhile.
//
// Prints a text table (or --format json). Times are wall clock (steady clock), milliseconds.
// Nothing here asserts a time; the CTest smoke test runs a tiny count only.

#include "guiwait.h"
#include "longmapbench.h"

#include "ui/charts/scalingsweeprunner.h"
#include "ui/panels/controlpanel.h"
#include "ui/session/attentionsession.h"
#include "ui/views/heatmapwidget.h"
#include "ui/window/mainwindow.h"

#include <QApplication>
#include <QCommandLineParser>
#include <QElapsedTimer>
#include <QEvent>
#include <QEventLoop>
#include <QJsonArray>
#include <QJsonDocument>
#include <QJsonObject>
#include <QSlider>
#include <QTextStream>
#include <QTimer>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <optional>
#include <vector>

namespace {

using guibench::percentile;
using guibench::spinUntil;

using attn::AttentionSession;
using attn::HeatmapWidget;
using attn::MainWindow;
using attn::SessionParameters;

struct Case
{
    int n = 64;
    int dModel = 512;
    int heads = 8;
};

struct LatencyStats
{
    Case c;
    std::vector<double> totalMs; ///< control change → painted
    std::vector<double> computeMs; ///< worker's computeSession wall time
    /// result handed to the GUI thread → painted (every resultChanged slot: heatmap, charts,
    /// views; the heatmap image and paint)
    std::vector<double> guiMs;
    int timeouts = 0;
};

struct DragStats
{
    Case c;
    int steps = 0; ///< slider steps made
    double dragMs = 0; ///< first → last step
    quint64 requests = 0, started = 0, completed = 0, delivered = 0;
    int paints = 0; ///< heatmap paints of a new result during the drag and until the end
    double settleMs = -1; ///< last step → final parameters painted (−1: never)
};

double nowMs(const QElapsedTimer &clock)
{
    return double(clock.nsecsElapsed()) * 1e-6;
}

void idle(int ms)
{
    QEventLoop loop;
    QTimer::singleShot(ms, &loop, &QEventLoop::quit);
    loop.exec();
}

/// Stamps the moment a queued call (the worker's result hand-off) reaches the session on the
/// GUI thread, before any resultChanged slot runs.
class ArrivalStamp : public QObject
{
public:
    ArrivalStamp(const QElapsedTimer &clock)
        : m_clock(clock)
    { }
    double last = -1;

protected:
    bool eventFilter(QObject *, QEvent *event) override
    {
        if (event->type() == QEvent::MetaCall)
            last = nowMs(m_clock);
        return false;
    }

private:
    const QElapsedTimer &m_clock;
};

class GuiBench
{
public:
    GuiBench(MainWindow *window, QSlider *alpha)
        : m_window(window)
        , m_session(window->session())
        , m_heatmap(window->heatmapWidget())
        , m_alpha(alpha)
    {
        m_clock.start();
        m_session->installEventFilter(&m_arrival);
        QObject::connect(m_heatmap, &HeatmapWidget::painted, m_heatmap, [this](quint64 id) {
            if (id == m_lastPaintedId)
                return;
            m_lastPaintedId = id;
            ++m_newPaints;
            const auto shown = m_heatmap->result();
            if (m_target && shown && shown->params == *m_target && m_paintedAt < 0) {
                m_paintedAt = nowMs(m_clock);
                m_paintedCompute = shown->computeSeconds * 1e3;
            }
        });
        QObject::connect(m_session, &AttentionSession::resultChanged, m_heatmap,
                         [this](std::shared_ptr<const attn::SessionResult> r) {
                             if (m_target && r && r->params == *m_target && m_resultAt < 0)
                                 m_resultAt = m_arrival.last;
                         });
    }

    /// Sets the case's shape (through the session, like opening a session file would) and waits
    /// until it is painted.
    bool setUp(const Case &c)
    {
        SessionParameters p = m_session->parameters();
        p.n = c.n;
        p.dModel = c.dModel;
        p.heads = c.heads;
        p.scaleExponent = 0.5;
        arm(p);
        m_session->setParameters(p);
        return spinUntil([this] { return m_paintedAt >= 0; }, 120000);
    }

    /// One α slider step to `position`; returns false if the paint did not come in time.
    bool change(int position, LatencyStats &stats, int timeoutMs)
    {
        const double t0 = nowMs(m_clock);
        m_target.reset();
        m_paintedAt = m_resultAt = -1;
        m_alpha->setValue(position); // ControlPanel → parametersEdited → session (synchronous)
        m_target = m_session->parameters();
        if (!spinUntil([this] { return m_paintedAt >= 0; }, timeoutMs)) {
            ++stats.timeouts;
            return false;
        }
        stats.totalMs.push_back(m_paintedAt - t0);
        stats.computeMs.push_back(m_paintedCompute);
        stats.guiMs.push_back(m_resultAt >= 0 ? m_paintedAt - m_resultAt : std::nan(""));
        return true;
    }

    LatencyStats latency(const Case &c, int changes, int warmup, int gapMs)
    {
        LatencyStats stats;
        stats.c = c;
        LatencyStats discard;
        for (int i = 0; i < warmup + changes; ++i) {
            change(nextPosition(), i < warmup ? discard : stats, 60000);
            idle(gapMs);
        }
        return stats;
    }

    DragStats drag(const Case &c, int steps, int durationMs)
    {
        DragStats d;
        d.c = c;
        d.steps = steps;
        const AttentionSession::WorkStats before = m_session->workStats();
        m_target.reset();
        m_paintedAt = m_resultAt = -1;
        m_newPaints = 0;
        int done = 0;
        double first = -1, last = -1;
        QTimer timer;
        timer.setTimerType(Qt::PreciseTimer);
        timer.setInterval(std::max(1, durationMs / std::max(1, steps)));
        QObject::connect(&timer, &QTimer::timeout, &timer, [&] {
            if (done >= steps)
                return;
            const double t = nowMs(m_clock);
            // A drag sweeps back and forth over the slider, one position per event.
            m_alpha->setValue(dragPosition(done));
            ++done;
            if (first < 0)
                first = t;
            last = t;
            if (done == steps) {
                timer.stop();
                m_target = m_session->parameters();
            }
        });
        timer.start();
        const bool ok = spinUntil([&] { return done == steps && m_paintedAt >= 0; }, 120000);
        d.dragMs = last - first;
        d.settleMs = ok ? m_paintedAt - last : -1;
        const AttentionSession::WorkStats after = m_session->workStats();
        d.requests = after.requests - before.requests;
        d.started = after.started - before.started;
        d.completed = after.completed - before.completed;
        d.delivered = after.delivered - before.delivered;
        d.paints = m_newPaints;
        return d;
    }

private:
    void arm(const SessionParameters &p)
    {
        m_target = p;
        m_paintedAt = m_resultAt = -1;
    }

    int nextPosition()
    {
        // Alternate around α = 0.5 so every step is a real change (the slider is 0 … 100).
        const int current = m_alpha->value();
        m_step = (m_step + 1) % 21;
        int position = 40 + m_step;
        if (position == current)
            position = position == 60 ? 40 : position + 1;
        return position;
    }

    int dragPosition(int step) const
    {
        const int span = m_alpha->maximum() - m_alpha->minimum();
        const int phase = step % (2 * span);
        const int offset = phase < span ? phase + 1 : 2 * span - phase - 1;
        return m_alpha->minimum() + std::clamp(offset, 0, span);
    }

    MainWindow *m_window;
    AttentionSession *m_session;
    HeatmapWidget *m_heatmap;
    QSlider *m_alpha;
    QElapsedTimer m_clock;
    ArrivalStamp m_arrival {m_clock};
    std::optional<SessionParameters> m_target;
    double m_paintedAt = -1;
    double m_resultAt = -1;
    double m_paintedCompute = 0;
    quint64 m_lastPaintedId = 0;
    int m_newPaints = 0;
    int m_step = 0;
};

std::optional<std::vector<Case>> parseCases(const QString &text, int dModel, int heads)
{
    std::vector<Case> cases;
    for (const QString &item : text.split(QLatin1Char(','), Qt::SkipEmptyParts)) {
        bool ok = false;
        const int n = item.trimmed().toInt(&ok);
        if (!ok || n < 1 || n > SessionParameters::maxSequence)
            return std::nullopt;
        cases.push_back({n, dModel, heads});
    }
    if (cases.empty())
        return std::nullopt;
    return cases;
}

} // namespace

int main(int argc, char **argv)
{
    if (qEnvironmentVariableIsEmpty("QT_QPA_PLATFORM"))
        qputenv("QT_QPA_PLATFORM", "offscreen");
    TimedApplication app(argc, argv);
    QApplication::setApplicationName(QStringLiteral("attn_bench_gui"));

    QCommandLineParser parser;
    parser.setApplicationDescription(QStringLiteral(
        "GUI latency of Attention Lab's main window: control change → heatmaps repainted."));
    parser.addHelpOption();
    const QCommandLineOption casesOpt(QStringLiteral("n"), QStringLiteral("Sequence lengths."),
                                      QStringLiteral("list"), QStringLiteral("64,256,1024"));
    const QCommandLineOption dModelOpt(QStringLiteral("d-model"), QStringLiteral("d_model."),
                                       QStringLiteral("int"), QStringLiteral("512"));
    const QCommandLineOption headsOpt(QStringLiteral("heads"), QStringLiteral("Heads h."),
                                      QStringLiteral("int"), QStringLiteral("8"));
    const QCommandLineOption changesOpt(QStringLiteral("changes"),
                                        QStringLiteral("Timed changes per case (default 60)."),
                                        QStringLiteral("count"), QStringLiteral("60"));
    const QCommandLineOption warmupOpt(QStringLiteral("warmup"),
                                       QStringLiteral("Untimed changes first (default 5)."),
                                       QStringLiteral("count"), QStringLiteral("5"));
    const QCommandLineOption gapOpt(QStringLiteral("gap-ms"),
                                    QStringLiteral("Idle time between changes (default 20)."),
                                    QStringLiteral("ms"), QStringLiteral("20"));
    const QCommandLineOption dragOpt(QStringLiteral("drag"),
                                     QStringLiteral("Slider steps of the rapid drag (default "
                                                    "300; 0 skips it)."),
                                     QStringLiteral("count"), QStringLiteral("300"));
    const QCommandLineOption dragMsOpt(QStringLiteral("drag-ms"),
                                       QStringLiteral("Duration of the drag (default 1000)."),
                                       QStringLiteral("ms"), QStringLiteral("1000"));
    const QCommandLineOption dtypeOpt(QStringLiteral("dtype"),
                                      QStringLiteral("float32 or float64 (default: the app's)."),
                                      QStringLiteral("type"));
    const QCommandLineOption formatOpt(QStringLiteral("format"), QStringLiteral("text or json."),
                                       QStringLiteral("format"), QStringLiteral("text"));
    const QCommandLineOption longOpt(
        QStringLiteral("long"),
        QStringLiteral("Measure the Long tab at this sequence length instead (e.g. 16384)."),
        QStringLiteral("n"));
    const QCommandLineOption longStepsOpt(QStringLiteral("long-steps"),
                                          QStringLiteral("Zoom and pan steps (default 40)."),
                                          QStringLiteral("count"), QStringLiteral("40"));
    const QCommandLineOption longMeanOpt(QStringLiteral("long-mean"),
                                         QStringLiteral("Show the mean over heads, not head 0."));
    parser.addOptions({casesOpt, dModelOpt, headsOpt, changesOpt, warmupOpt, gapOpt, dragOpt,
                       dragMsOpt, dtypeOpt, formatOpt, longOpt, longStepsOpt, longMeanOpt});
    parser.process(app);

    QTextStream err(stderr);
    auto fail = [&err](const QString &message) {
        err << "attn_bench_gui: " << message << Qt::endl;
        return 2;
    };
    bool ok1 = false, ok2 = false, ok3 = false, ok4 = false, ok5 = false, ok6 = false, ok7 = false;
    const int dModel = parser.value(dModelOpt).toInt(&ok1);
    const int heads = parser.value(headsOpt).toInt(&ok2);
    const int changes = parser.value(changesOpt).toInt(&ok3);
    const int warmup = parser.value(warmupOpt).toInt(&ok4);
    const int gapMs = parser.value(gapOpt).toInt(&ok5);
    const int dragSteps = parser.value(dragOpt).toInt(&ok6);
    const int dragMs = parser.value(dragMsOpt).toInt(&ok7);
    if (!(ok1 && ok2 && ok3 && ok4 && ok5 && ok6 && ok7) || changes < 1 || warmup < 0 || gapMs < 0
        || dragSteps < 0 || dragMs < 1)
        return fail(QStringLiteral("--d-model, --heads, --changes (≥ 1), --warmup, --gap-ms, "
                                   "--drag and --drag-ms (≥ 1) take non-negative integers"));
    const auto cases = parseCases(parser.value(casesOpt), dModel, heads);
    if (!cases)
        return fail(QStringLiteral("--n takes a comma-separated list of lengths 1 … %1")
                        .arg(SessionParameters::maxSequence));
    const QString format = parser.value(formatOpt);
    if (format != QLatin1String("text") && format != QLatin1String("json"))
        return fail(QStringLiteral("--format is text or json, not '%1'").arg(format));

    MainWindow window;
    window.resize(window.sizeHint());
    window.show();
    if (parser.isSet(longOpt)) {
        window.resize(1600, 900);
        LongMapBenchOptions o;
        bool okN = false, okSteps = false;
        o.n = parser.value(longOpt).toInt(&okN);
        o.steps = parser.value(longStepsOpt).toInt(&okSteps);
        if (!okN || o.n < 2 || o.n > SessionParameters::maxLongSequence || !okSteps || o.steps < 1)
            return fail(QStringLiteral("--long takes a length 2 … %1, --long-steps a count ≥ 1")
                            .arg(SessionParameters::maxLongSequence));
        o.dModel = dModel;
        o.heads = heads;
        o.mean = parser.isSet(longMeanOpt);
        o.json = format == QLatin1String("json");
        o.dtype = parser.value(dtypeOpt);
        QTextStream out(stdout);
        return runLongMapBench(app, window, o, out, err);
    }
    auto *alpha = window.controlPanel()->findChild<QSlider *>(QStringLiteral("alphaSlider"));
    if (!alpha)
        return fail(QStringLiteral("the control panel has no α slider (alphaSlider)"));
    if (parser.isSet(dtypeOpt)) {
        const auto dtype = attn::parseDType(parser.value(dtypeOpt));
        if (!dtype)
            return fail(QStringLiteral("--dtype is float32 or float64"));
        SessionParameters p = window.session()->parameters();
        p.dtype = *dtype;
        window.session()->setParameters(p);
    }
    // Let the first result and the E2 sweep of the start-up settle.
    spinUntil([&window] { return window.heatmapWidget()->result() != nullptr; }, 60000);
    idle(300);

    GuiBench bench(&window, alpha);
    std::vector<LatencyStats> latencies;
    std::vector<DragStats> drags;
    for (const Case &c : *cases) {
        if (!bench.setUp(c))
            return fail(QStringLiteral("n = %1 was never painted").arg(c.n));
        // The E2 sweep for the new n_k starts after a debounce and runs in the thread pool: let
        // it finish, so the α steps are timed in the steady state of a slider drag.
        const auto *sweep = window.findChild<attn::ScalingSweepRunner *>();
        idle(sweep->startDelay() + 100);
        spinUntil([sweep] { return !sweep->isBusy(); }, 120000);
        idle(50);
        latencies.push_back(bench.latency(c, changes, warmup, gapMs));
        if (dragSteps > 0) {
            idle(100);
            drags.push_back(bench.drag(c, dragSteps, dragMs));
        }
    }

    const QString dtype = attn::dtypeId(window.session()->parameters().dtype);
    QTextStream out(stdout);
    int status = 0;
    for (const LatencyStats &s : latencies)
        if (s.timeouts > 0)
            status = 1;
    for (const DragStats &d : drags)
        if (d.settleMs < 0)
            status = 1;

    if (format == QLatin1String("json")) {
        QJsonArray rows, dragRows;
        for (const LatencyStats &s : latencies) {
            rows.append(QJsonObject {{"n", s.c.n},
                                     {"d_model", s.c.dModel},
                                     {"heads", s.c.heads},
                                     {"dtype", dtype},
                                     {"changes", int(s.totalMs.size())},
                                     {"timeouts", s.timeouts},
                                     {"p50_ms", percentile(s.totalMs, 0.5)},
                                     {"p95_ms", percentile(s.totalMs, 0.95)},
                                     {"max_ms", percentile(s.totalMs, 1.0)},
                                     {"compute_p50_ms", percentile(s.computeMs, 0.5)},
                                     {"gui_p50_ms", percentile(s.guiMs, 0.5)},
                                     {"gui_p95_ms", percentile(s.guiMs, 0.95)}});
        }
        for (const DragStats &d : drags) {
            dragRows.append(QJsonObject {{"n", d.c.n},
                                         {"steps", d.steps},
                                         {"drag_ms", d.dragMs},
                                         {"requests", double(d.requests)},
                                         {"started", double(d.started)},
                                         {"completed", double(d.completed)},
                                         {"delivered", double(d.delivered)},
                                         {"dropped_unstarted", double(d.requests - d.started)},
                                         {"paints", d.paints},
                                         {"settle_ms", d.settleMs}});
        }
        out << QJsonDocument(QJsonObject {{"latency", rows}, {"drag", dragRows}}).toJson();
        return status;
    }

    out << "GUI latency: α slider step → heatmaps repainted with the new result (" << dtype
        << ", offscreen, " << QString::fromLatin1(qgetenv("QT_QPA_PLATFORM")) << ")\n";
    out << QStringLiteral("%1 %2 %3 %4 %5 %6 %7 %8 %9\n")
               .arg(QStringLiteral("n"), 6)
               .arg(QStringLiteral("d_model"), 8)
               .arg(QStringLiteral("h"), 3)
               .arg(QStringLiteral("changes"), 8)
               .arg(QStringLiteral("p50 ms"), 8)
               .arg(QStringLiteral("p95 ms"), 8)
               .arg(QStringLiteral("max ms"), 8)
               .arg(QStringLiteral("compute p50"), 12)
               .arg(QStringLiteral("gui p50/p95"), 14);
    for (const LatencyStats &s : latencies) {
        out << QStringLiteral("%1 %2 %3 %4 %5 %6 %7 %8 %9\n")
                   .arg(s.c.n, 6)
                   .arg(s.c.dModel, 8)
                   .arg(s.c.heads, 3)
                   .arg(int(s.totalMs.size()), 8)
                   .arg(percentile(s.totalMs, 0.5), 8, 'f', 1)
                   .arg(percentile(s.totalMs, 0.95), 8, 'f', 1)
                   .arg(percentile(s.totalMs, 1.0), 8, 'f', 1)
                   .arg(percentile(s.computeMs, 0.5), 12, 'f', 1)
                   .arg(QStringLiteral("%1/%2")
                            .arg(percentile(s.guiMs, 0.5), 0, 'f', 1)
                            .arg(percentile(s.guiMs, 0.95), 0, 'f', 1),
                        14);
        if (s.timeouts > 0)
            out << "  (" << s.timeouts << " changes never painted within 60 s)\n";
    }
    if (!drags.empty()) {
        out << "\nRapid drag: α slider steps in quick succession; requests superseded while "
               "pending are dropped\n";
        out << QStringLiteral("%1 %2 %3 %4 %5 %6 %7 %8 %9\n")
                   .arg(QStringLiteral("n"), 6)
                   .arg(QStringLiteral("steps"), 6)
                   .arg(QStringLiteral("in ms"), 7)
                   .arg(QStringLiteral("started"), 8)
                   .arg(QStringLiteral("dropped"), 8)
                   .arg(QStringLiteral("completed"), 10)
                   .arg(QStringLiteral("delivered"), 10)
                   .arg(QStringLiteral("painted"), 8)
                   .arg(QStringLiteral("last step → final paint"), 24);
        for (const DragStats &d : drags) {
            out << QStringLiteral("%1 %2 %3 %4 %5 %6 %7 %8 %9\n")
                       .arg(d.c.n, 6)
                       .arg(d.steps, 6)
                       .arg(d.dragMs, 7, 'f', 0)
                       .arg(d.started, 8)
                       .arg(d.requests - d.started, 8)
                       .arg(d.completed, 10)
                       .arg(d.delivered, 10)
                       .arg(d.paints, 8)
                       .arg(d.settleMs < 0 ? QStringLiteral("never")
                                           : QStringLiteral("%1 ms").arg(d.settleMs, 0, 'f', 1),
                            24);
        }
        out << "(started: computations the worker began; dropped: requests replaced before "
               "they started; completed: ran to the end while newest; painted: new results "
               "drawn)\n";
        out.flush();
    }
    return status;
}
