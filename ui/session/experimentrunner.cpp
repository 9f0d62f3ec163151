#include "ui/session/experimentrunner.h"

#include <algorithm>
#include <cmath>

namespace attn {

ExperimentRunner::ExperimentRunner(QObject *parent)
    : QObject(parent)
{
    connect(&m_jobs, &JobRunner::progressChanged, this, [this](double fraction) {
        if (!(fraction >= 0))
            fraction = 0;
        const int value = int(std::lround(std::min(fraction, 1.0) * 1000));
        if (value == m_progress)
            return;
        m_progress = value;
        emit progressChanged(value / 1000.0);
    });
    connect(&m_jobs, &JobRunner::failed, this, &ExperimentRunner::failed);
    connect(&m_jobs, &JobRunner::cancelled, this, &ExperimentRunner::cancelled);
}

void ExperimentRunner::run(const std::string &id, const ExperimentParams &params)
{
    m_stopRequested = false;
    m_progress = -1;
    m_jobs.run(
        [id, params](const JobContext &job) {
            RunContext context;
            context.cancel = job.cancel;
            context.progress = job.progress;
            return std::make_shared<const ExperimentResult>(runExperiment(id, params, context));
        },
        [this](std::shared_ptr<const ExperimentResult> result) {
            if (m_stopRequested) // finished before it saw the cancel: still cancelled
                emit cancelled();
            else
                emit finished(std::move(result));
        });
}

void ExperimentRunner::cancel()
{
    if (!m_jobs.isBusy())
        return;
    m_stopRequested = true;
    m_jobs.requestStop();
}

} // namespace attn
