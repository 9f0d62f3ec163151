#pragma once
// The Long tab's part of attn_bench_gui (`--long N`): the real main window's LongMapView at
// n = N, its first full view timed, then zoom and pan steps made with real wheel and mouse
// events to views of at most 1024 × 1024 cells, each timed from the event to the first paint
// after every tile of the new view arrived. The application's notify() times every event the GUI
// thread handles, so the report says how long the GUI thread was ever busy at once.

#include <QApplication>
#include <QElapsedTimer>
#include <QString>

class QTextStream;

namespace attn {
class MainWindow;
}

/// QApplication that times each top-level event dispatch (notify) while armed: the longest one
/// is the longest time the GUI thread could not take input or paint.
class TimedApplication : public QApplication
{
public:
    TimedApplication(int &argc, char **argv)
        : QApplication(argc, argv)
    {
        m_clock.start();
    }
    bool notify(QObject *receiver, QEvent *event) override;

    void arm(bool on)
    {
        m_armed = on;
        m_maxMs = 0;
        m_over16 = 0;
        m_events = 0;
        m_maxPaint = 0;
    }
    double maxEventMs() const { return m_maxMs; }
    /// The longest event's type and receiver class ("Paint on attn::LongMapView::Canvas").
    QString maxEventWhat() const { return m_maxWhat; }
    int eventsOver16Ms() const { return m_over16; }
    long events() const { return m_events; }
    /// The end of the last paint event of `watched` (ms on clock()).
    void watchPaints(QObject *watched) { m_watched = watched; }
    double lastPaintEndMs() const { return m_lastPaintEnd; }
    /// The longest paint event of the watched object while armed (ms).
    double maxPaintMs() const { return m_maxPaint; }
    double nowMs() const { return double(m_clock.nsecsElapsed()) * 1e-6; }

private:
    QElapsedTimer m_clock;
    bool m_armed = false;
    int m_depth = 0;
    double m_maxMs = 0;
    QString m_maxWhat;
    int m_over16 = 0;
    long m_events = 0;
    QObject *m_watched = nullptr;
    double m_lastPaintEnd = -1;
    double m_maxPaint = 0;
};

struct LongMapBenchOptions
{
    int n = 16384;
    int dModel = 512;
    int heads = 8;
    int steps = 40;
    bool mean = false; ///< show the mean over heads instead of head 0
    bool json = false;
    QString dtype; ///< empty: the window's default
};

/// Runs the benchmark in `window` and prints its table (or JSON) to `out`; returns 0, or 1 when
/// a view never completed within 60 s, 2 on a setup error (message on `err`).
int runLongMapBench(TimedApplication &app, attn::MainWindow &window,
                    const LongMapBenchOptions &options, QTextStream &out, QTextStream &err);
