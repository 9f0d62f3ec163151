#pragma once
// ExperimentRunner: runs one experiment of docs/experiments.md (core runExperiment) off the GUI
// thread for the Experiments panel, through a JobRunner: progress arrives as a signal, Cancel
// stops the run at its next cancellation check, and the newest run wins (starting a run cancels
// the running one, whose result is never delivered).

#include "ui/session/jobrunner.h"

#include "core/experiments/experiments.h"

#include <QObject>
#include <QString>

#include <memory>
#include <string>

namespace attn {

class ExperimentRunner : public QObject
{
    Q_OBJECT
public:
    explicit ExperimentRunner(QObject *parent = nullptr);

    /// Runs experiment `id` with `params` on a worker thread; a running experiment is cancelled
    /// and its result dropped.
    void run(const std::string &id, const ExperimentParams &params);
    /// Stops the running experiment at its next cancellation check; cancelled() follows.
    void cancel();
    /// True from run() until finished, failed or cancelled.
    bool isRunning() const { return m_jobs.isBusy(); }

signals:
    /// Progress of the running experiment, a fraction in [0, 1] in steps of 0.001.
    void progressChanged(double fraction);
    void finished(std::shared_ptr<const attn::ExperimentResult> result);
    /// The experiment threw (bad parameters, over its memory cap …): the message.
    void failed(const QString &message);
    void cancelled();

private:
    JobRunner m_jobs;
    bool m_stopRequested = false; ///< cancel() was called for the running experiment
    int m_progress = -1; ///< last progress emitted, in thousandths
};

} // namespace attn
