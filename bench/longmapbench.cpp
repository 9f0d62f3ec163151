#include "longmapbench.h"
#include "guiwait.h"

#include "ui/session/attentionsession.h"
#include "ui/views/attentionviews.h"
#include "ui/views/longmapview.h"
#include "ui/window/mainwindow.h"

#include <QJsonArray>
#include <QJsonDocument>
#include <QJsonObject>
#include <QMouseEvent>
#include <QTextStream>
#include <QTimer>
#include <QWheelEvent>

#include <algorithm>
#include <cmath>
#include <map>
#include <random>
#include <vector>

bool TimedApplication::notify(QObject *receiver, QEvent *event)
{
    if (!m_armed && !m_watched)
        return QApplication::notify(receiver, event);
    const bool paint = receiver == m_watched && event->type() == QEvent::Paint;
    const int type = int(event->type());
    const double start = nowMs();
    ++m_depth;
    const bool handled = QApplication::notify(receiver, event);
    --m_depth;
    const double end = nowMs();
    if (paint) {
        m_lastPaintEnd = end;
        if (m_armed)
            m_maxPaint = std::max(m_maxPaint, end - start);
    }
    if (m_armed && m_depth == 0) {
        ++m_events;
        if (end - start > m_maxMs) {
            m_maxMs = end - start;
            m_maxWhat = QStringLiteral("event %1 on %2")
                            .arg(type)
                            .arg(QString::fromLatin1(receiver->metaObject()->className()));
        }
        if (end - start > 16)
            ++m_over16;
    }
    return handled;
}

namespace {

using guibench::percentile;
using guibench::spinUntil;

void wheel(QWidget *canvas, QPointF at, int notches)
{
    QWheelEvent e(at, canvas->mapToGlobal(at), QPoint(), QPoint(0, 120 * notches), Qt::NoButton,
                  Qt::NoModifier, Qt::NoScrollPhase, false);
    QCoreApplication::sendEvent(canvas, &e);
}

void drag(QWidget *canvas, QPointF from, QPointF to)
{
    QMouseEvent press(QEvent::MouseButtonPress, from, canvas->mapToGlobal(from), Qt::LeftButton,
                      Qt::LeftButton, Qt::NoModifier);
    QCoreApplication::sendEvent(canvas, &press);
    QMouseEvent move(QEvent::MouseMove, to, canvas->mapToGlobal(to), Qt::NoButton, Qt::LeftButton,
                     Qt::NoModifier);
    QCoreApplication::sendEvent(canvas, &move);
    QMouseEvent release(QEvent::MouseButtonRelease, to, canvas->mapToGlobal(to), Qt::LeftButton,
                        Qt::NoButton, Qt::NoModifier);
    QCoreApplication::sendEvent(canvas, &release);
}

} // namespace

int runLongMapBench(TimedApplication &app, attn::MainWindow &window, const LongMapBenchOptions &o,
                    QTextStream &out, QTextStream &err)
{
    using namespace attn;
    auto *views = window.findChild<AttentionViews *>();
    if (!views) {
        err << "attn_bench_gui: the window has no attention views\n";
        return 2;
    }
    LongMapView *view = views->longMapView();
    SessionParameters p = window.session()->parameters();
    p.dModel = o.dModel;
    p.heads = o.heads;
    if (!o.dtype.isEmpty()) {
        const auto dtype = parseDType(o.dtype);
        if (!dtype) {
            err << "attn_bench_gui: --dtype is float32 or float64\n";
            return 2;
        }
        p.dtype = *dtype;
    }
    window.session()->setParameters(p);
    view->setLength(o.n);
    QCoreApplication::processEvents();
    views->setCurrentIndex(AttentionViews::LongTab);
    app.watchPaints(view->canvas());

    const double t0 = app.nowMs();
    app.arm(true);
    if (!spinUntil([&] { return view->tiles()->isReady() && view->viewComplete(); }, 600000)) {
        err << "attn_bench_gui: the first full view of n = " << o.n
            << " was not shown within 10 minutes: " << view->statusText() << "\n";
        return 1;
    }
    spinUntil([&] { return app.lastPaintEndMs() > t0; }, 10000);
    const double fullViewMs = app.lastPaintEndMs() - t0;
    const double fullViewMaxEvent = app.maxEventMs();
    if (o.mean) {
        view->setHead(kHeadMean);
        spinUntil([&] { return view->viewComplete(); }, 120000);
    }

    QWidget *canvas = view->canvas();
    const QRectF area = view->mapArea();
    std::mt19937 rng(12345);
    std::uniform_real_distribution<double> unit(0.0, 1.0);
    const auto randomPoint = [&] {
        return QPointF(area.left() + area.width() * (0.2 + 0.6 * unit(rng)),
                       area.top() + area.height() * (0.2 + 0.6 * unit(rng)));
    };
    // A view of at most 1024 × 1024 cells somewhere new.
    const auto jumpTarget = [&] {
        const double side = 1024;
        const double r = unit(rng) * (double(o.n) - side), c = unit(rng) * (double(o.n) - side);
        const double s = side / std::max(area.width(), area.height());
        return CellRect {r + side / 2 - area.height() * s / 2, r + side / 2 + area.height() * s / 2,
                         c + side / 2 - area.width() * s / 2, c + side / 2 + area.width() * s / 2};
    };
    view->setViewRect(jumpTarget());
    spinUntil([&] { return view->viewComplete(); }, 120000);

    double completedAt = -1;
    QObject::connect(view, &LongMapView::viewCompleted, view, [&] { completedAt = app.nowMs(); });
    std::map<QString, std::vector<double>> byKind;
    std::vector<double> all;
    std::vector<double> viewCells;
    int timeouts = 0;
    const quint64 computedBefore = view->tiles()->stats().tilesComputed;
    app.arm(true);
    for (int step = 0; step < o.steps; ++step) {
        QString kind;
        const double start = app.nowMs();
        completedAt = -1;
        const CellRect before = view->viewRect();
        switch (step % 5) {
        case 0:
        case 1: {
            kind = QStringLiteral("pan");
            const QPointF from = randomPoint();
            const QPointF by((unit(rng) - 0.5) * area.width() * 0.8,
                             (unit(rng) - 0.5) * area.height() * 0.8);
            drag(canvas, from, from + by);
            break;
        }
        case 2:
            kind = QStringLiteral("zoom in");
            wheel(canvas, randomPoint(), 1);
            break;
        case 3:
            kind = QStringLiteral("zoom out");
            wheel(canvas, randomPoint(), -1);
            break;
        case 4:
            kind = QStringLiteral("jump");
            view->setViewRect(jumpTarget());
            break;
        }
        const CellRect after = view->viewRect();
        if (after.rows() > 1024.5 || after.cols() > 1024.5) { // keep to ≤ 1024 × 1024 cells
            view->setViewRect(before);
            spinUntil([&] { return view->viewComplete(); }, 60000);
            continue;
        }
        if (view->viewComplete() && completedAt < 0)
            completedAt = start;
        const bool ok = spinUntil(
            [&] { return completedAt >= 0 && app.lastPaintEndMs() >= completedAt; }, 60000);
        if (!ok) {
            ++timeouts;
            continue;
        }
        const double ms = app.lastPaintEndMs() - start;
        byKind[kind].push_back(ms);
        all.push_back(ms);
        viewCells.push_back(after.rows() * after.cols());
    }
    const double maxEvent = app.maxEventMs();
    const QString maxWhat = app.maxEventWhat();
    const double maxPaint = app.maxPaintMs();
    const int over16 = app.eventsOver16Ms();
    const long events = app.events();
    app.arm(false);
    const quint64 tiles = view->tiles()->stats().tilesComputed - computedBefore;

    const QString dtype = dtypeId(view->mapParameters().dtype);
    if (o.json) {
        QJsonObject kinds;
        for (const auto &[k, v] : byKind)
            kinds.insert(k,
                         QJsonObject {{"steps", int(v.size())},
                                      {"p50_ms", percentile(v, 0.5)},
                                      {"p95_ms", percentile(v, 0.95)},
                                      {"max_ms", percentile(v, 1.0)}});
        out << QJsonDocument(
                   QJsonObject {
                       {"n", o.n},
                       {"d_model", o.dModel},
                       {"heads", o.heads},
                       {"dtype", dtype},
                       {"shown", o.mean ? "mean" : "head 0"},
                       {"map_pixels",
                        QStringLiteral("%1x%2").arg(int(area.width())).arg(int(area.height()))},
                       {"full_view_ms", fullViewMs},
                       {"full_view_max_event_ms", fullViewMaxEvent},
                       {"steps", int(all.size())},
                       {"timeouts", timeouts},
                       {"p50_ms", percentile(all, 0.5)},
                       {"p95_ms", percentile(all, 0.95)},
                       {"max_ms", percentile(all, 1.0)},
                       {"max_view_cells", percentile(viewCells, 1.0)},
                       {"tiles_computed", double(tiles)},
                       {"max_gui_event_ms", maxEvent},
                       {"gui_events_over_16ms", over16},
                       {"gui_events", double(events)},
                       {"by_kind", kinds}})
                   .toJson();
        return timeouts > 0 ? 1 : 0;
    }
    out << "Long tab: n = " << o.n << ", d_model = " << o.dModel << ", h = " << o.heads << ", "
        << dtype << ", " << (o.mean ? "the mean over heads" : "head 0") << ", map "
        << int(area.width()) << " × " << int(area.height()) << " px\n";
    out << QStringLiteral("first full view (every head's row statistics, progress bar): %1 s; "
                          "longest GUI event meanwhile %2 ms\n")
               .arg(fullViewMs / 1000, 0, 'f', 2)
               .arg(fullViewMaxEvent, 0, 'f', 1);
    out << QStringLiteral("%1 %2 %3 %4 %5\n")
               .arg(QStringLiteral("step"), 9)
               .arg(QStringLiteral("count"), 6)
               .arg(QStringLiteral("p50 ms"), 8)
               .arg(QStringLiteral("p95 ms"), 8)
               .arg(QStringLiteral("max ms"), 8);
    const auto row = [&](const QString &k, const std::vector<double> &v) {
        out << QStringLiteral("%1 %2 %3 %4 %5\n")
                   .arg(k, 9)
                   .arg(int(v.size()), 6)
                   .arg(percentile(v, 0.5), 8, 'f', 1)
                   .arg(percentile(v, 0.95), 8, 'f', 1)
                   .arg(percentile(v, 1.0), 8, 'f', 1);
    };
    for (const auto &[k, v] : byKind)
        row(k, v);
    row(QStringLiteral("all"), all);
    out << QStringLiteral("views of at most %1 cells (≤ 1024 × 1024); %2 tiles computed; "
                          "%3 timeouts\n")
               .arg(percentile(viewCells, 1.0), 0, 'f', 0)
               .arg(tiles)
               .arg(timeouts);
    out << QStringLiteral("GUI thread: longest event %1 ms (%4), %2 of %3 events over 16 ms "
                          "(step → first paint after the view's last tile)\n")
               .arg(maxEvent, 0, 'f', 1)
               .arg(over16)
               .arg(events)
               .arg(maxWhat);
    out << QStringLiteral("longest paint of the map: %1 ms\n").arg(maxPaint, 0, 'f', 1);
    out.flush();
    return timeouts > 0 ? 1 : 0;
}
