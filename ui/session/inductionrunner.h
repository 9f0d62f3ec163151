#pragma once
// InductionRunner: trains the Training tab's induction run (core/training/induction.h, the
// model and data of experiment E17) off the GUI thread and keeps its curve on it. One worker (a
// job of the class's JobRunner, ui/session/jobrunner.h) takes steps and, every evalEvery steps,
// measures the model on the held-out sequences; each measurement (a Point and the two best
// heads' weights) goes to a mailbox the GUI thread drains. Only the worker touches the
// InductionRun while it runs, on one kernel thread, and it never waits for the GUI. The points
// are E17's rows at eval_every = evalEvery: the same seeds, batches and numbers.
//
// pause() sets the worker's cancel flag: the step in progress is the last one. reset(),
// setConfig() and the destructor never wait for more than that step: a superseded worker's
// posts are dropped (it keeps its InductionRun alive until done).

#include "ui/session/jobrunner.h"

#include "core/training/induction.h"

#include <QObject>
#include <QString>

#include <atomic>
#include <cstdint>
#include <memory>
#include <vector>

namespace attn {

class InductionRunner : public QObject
{
    Q_OBJECT
public:
    /// Steps between two measurements on the held-out sequences.
    static constexpr std::int64_t evalEvery = 25;

    /// One measurement: the model after `step` updates (E17's columns).
    struct Point
    {
        std::int64_t step = 0;
        double loss = 0; ///< held-out cross-entropy on the repeated half, nats
        double trainLoss
            = 0; ///< mean training loss since the previous point (step 0: the first batch's)
        double accuracy = 0; ///< held-out accuracy on the repeated half
        double inductionScore = 0; ///< best last-layer head's prefix-matching score
        double previousTokenScore = 0; ///< best first-layer head's previous-token score
    };

    /// Builds the run for the default InductionRunConfig (E17's defaults; step 0, paused).
    explicit InductionRunner(QObject *parent = nullptr);
    /// Stops the worker after its current step and waits for it.
    ~InductionRunner() override;

    const training::InductionRunConfig &config() const { return m_config; }
    /// A new configuration: the run starts again from step 0 (paused). Invalid ones are
    /// refused: false with `error` set, nothing changed.
    bool setConfig(const training::InductionRunConfig &config, QString *error = nullptr);
    std::int64_t stepLimit() const { return m_stepLimit; }
    /// Steps after which play() stops (≥ 1; from the next chunk on).
    void setStepLimit(std::int64_t steps);

    /// Trains until pause() or the step limit.
    void play();
    /// Stops after the step in progress (playing() is false at once; busy() until it is back).
    void pause();
    /// Back to step 0 with the same configuration (paused).
    void reset();

    bool playing() const { return m_playing; }
    bool busy() const { return m_working; }
    /// Runs the event loop until the worker is back (tests).
    void waitForIdle();

    /// Steps taken as far as the GUI has heard.
    std::int64_t stepCount() const { return m_steps; }
    /// Every measurement so far, in step order (the first at step 0 once the worker has run).
    const std::vector<Point> &points() const { return m_points; }
    /// The last measurement's scores and the first held-out sequence's weights (empty before
    /// the first).
    const training::InductionEvaluation &latest() const { return m_latest; }
    /// Tokens of the first held-out sequence (2N ids).
    std::vector<std::int64_t> firstHeldOutSequence() const;

signals:
    /// New points (or a reset): on the GUI thread.
    void progressed();
    void playingChanged(bool playing);
    /// The run was rebuilt (reset, new configuration): no points yet.
    void restarted();
    /// The run stopped by itself (step limit, an error): `reason` says why.
    void stopped(const QString &reason);

private:
    struct Mailbox;
    void rebuild();
    void startWork(std::int64_t maxSteps);
    void drain(const std::shared_ptr<Mailbox> &box);
    void workFinished();
    void setPlaying(bool playing);

    training::InductionRunConfig m_config;
    std::int64_t m_stepLimit = 1200;
    std::shared_ptr<training::InductionRun> m_run;
    std::vector<Point> m_points;
    training::InductionEvaluation m_latest;
    std::int64_t m_steps = 0;
    JobRunner *m_jobs = nullptr; ///< runs the worker (a child: outlives every job it ran)
    bool m_working = false;
    bool m_playing = false;
    std::shared_ptr<std::atomic<bool>> m_cancel;
    std::shared_ptr<Mailbox> m_mailbox;
};

} // namespace attn
