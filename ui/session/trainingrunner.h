#pragma once
// TrainingRunner: trains the Training tab's two runs (core/training/pairedrun.h) off the GUI
// thread and keeps their history on it. Every thread of the Training tab is in this class: one
// worker (a job of the class's JobRunner, ui/session/jobrunner.h) advances the pair in chunks of at
// most chunkSeconds of work and posts each chunk (steps, snapshots, the current probe weights)
// to a mailbox the GUI thread drains, so the GUI hears about 60 times a second (once a step when
// a step takes longer), and the worker never waits for the GUI (a long paint does not stall
// training). Only the worker touches the PairedRun while it runs; the history (TrainingHistory) is
// appended on the GUI thread. The worker computes on one thread (its OpenMP team is 1), leaving
// the other cores to the GUI.
//
// pause() sets the worker's cancel flag: the step in progress is the last one. reset(),
// setSettings() with a new task or model and the destructor never wait for more than that step:
// a superseded chunk's result is dropped (the worker keeps its PairedRun alive until done).

#include "ui/session/jobrunner.h"
#include "ui/session/sessionresult.h"
#include "ui/session/trainingsettings.h"

#include "core/training/pairedrun.h"

#include <QElapsedTimer>
#include <QObject>
#include <QString>

#include <atomic>
#include <memory>

namespace attn {

class TrainingRunner : public QObject
{
    Q_OBJECT
public:
    /// Wall time of one chunk of steps on the worker (seconds): the GUI hears twice per frame.
    static constexpr double chunkSeconds = 1.0 / 60.0;
    /// Snapshots of the probe's weights: one every snapshotInterval steps at first, at most
    /// snapshotBudgetBytes (and maxSnapshots) of them (TrainingHistory thins them out).
    static constexpr std::int64_t snapshotInterval = 10;
    static constexpr std::size_t maxSnapshots = 400;
    static constexpr std::size_t snapshotBudgetBytes = std::size_t(64) << 20;

    /// Builds the runs for the default TrainingSettings (step 0, paused).
    explicit TrainingRunner(QObject *parent = nullptr);
    /// Stops the worker after its current step and waits for it.
    ~TrainingRunner() override;

    const TrainingSettings &settings() const { return m_settings; }
    /// New settings. Different A/B α or learning rates only: used from the next chunk on (the
    /// runs go on). Anything else: the runs start again from step 0 (paused). Invalid settings
    /// are refused: false with `error` set, nothing changed.
    bool setSettings(const TrainingSettings &settings, QString *error = nullptr);

    /// Trains until pause(), the step limit, the loss threshold (when on: the step at which both
    /// runs, or either run, have gone below it), or a non-finite loss or gradient. Refused (with
    /// stopped()) when the step limit or the loss threshold is already reached.
    void play();
    /// Stops after the step in progress (playing() is false at once; busy() until it is back).
    void pause();
    /// One step of both runs (when paused and idle).
    void step();
    /// Back to step 0 with the same settings (paused).
    void reset();

    bool playing() const { return m_playing; }
    /// True while the worker runs.
    bool busy() const { return m_working; }
    /// Runs the event loop until no chunk is out (tests, benchmarks).
    void waitForIdle();

    const training::TrainingHistory &history() const { return *m_history; }
    /// The two runs. The worker advances them while busy(): read them only when idle.
    const training::PairedRun &run() const { return *m_run; }
    std::int64_t stepCount() const { return m_history->steps(); }
    /// The probe's weights after the last step delivered (step 0: the initial weights).
    const training::ProbeSnapshot &latest() const { return m_latest; }
    /// `snapshot`'s weights of run A (or B) as a result for HeatmapRenderer: one tile per head
    /// plus the mean, the probe's mask drawn as masked (recall: the diagonal, custom; copy:
    /// causal), the recall tokens labelled k0 … k(n−1) and "query", and a view note naming the
    /// run and the step.
    std::shared_ptr<const SessionResult> probeResult(const training::ProbeSnapshot &snapshot,
                                                     bool runB) const;

    /// The first step (1-based) at which run A's (or B's) loss was below the loss threshold, 0
    /// when it has not been yet (whether or not stopping at it is on).
    std::int64_t thresholdStep(bool runB) const;
    /// Whether the runs have reached the loss threshold as the settings ask (both or either);
    /// false when stopping at it is off.
    bool thresholdReached() const;
    /// "loss < 0.002: A at step 120, B not yet" (empty when stopping at a loss is off).
    QString thresholdStatus() const;

    /// Writes trainingArrays (core/training/pairedrun.h: the curves, the probe's weights, the
    /// current and initial parameters under PyTorch's names) to an .npz at `path`. While the
    /// worker runs it is paused first (the step in progress finishes) and played again after,
    /// so the arrays are those of one step. False with `error` set when writing fails.
    bool writeNpz(const QString &path, QString *error = nullptr);

    /// Steps of both runs per second of wall time over the last second of playing (0 before).
    double stepsPerSecond() const { return m_rate; }
    /// Why the last run stopped by itself ("step limit reached", "non-finite loss at step
    /// 12 …"); empty while playing or after pause().
    QString stopReason() const { return m_stopReason; }

signals:
    /// New steps (or a reset) are in history() and latest(): on the GUI thread.
    void progressed();
    void playingChanged(bool playing);
    /// The runs were rebuilt (reset, new settings): the history starts at step 0 again.
    void restarted();
    /// The runs stopped by themselves (step limit, non-finite values): `reason` says why.
    void stopped(const QString &reason);

private:
    struct Mailbox;
    void rebuild();
    /// Starts the worker for at most `maxSteps` steps.
    void startWork(std::int64_t maxSteps);
    /// Takes what the worker has posted to `box` (ignored unless it is the current one).
    void drain(const std::shared_ptr<Mailbox> &box);
    void workFinished();
    void setPlaying(bool playing);
    void abandonWork();

    TrainingSettings m_settings;
    std::shared_ptr<training::PairedRun> m_run;
    MatrixB m_probeMask;
    std::unique_ptr<training::TrainingHistory> m_history;
    training::ProbeSnapshot m_latest;
    JobRunner *m_jobs = nullptr; ///< runs the worker (a child: outlives every job it ran)
    bool m_working = false; ///< a worker runs for the current runs
    std::shared_ptr<std::atomic<bool>> m_cancel;
    std::shared_ptr<Mailbox> m_mailbox;
    bool m_playing = false;
    QString m_stopReason;
    QElapsedTimer m_rateClock;
    std::int64_t m_rateSteps = 0;
    double m_rate = 0;
};

} // namespace attn
