#include "ui/session/inductionrunner.h"

#include "ui/session/handover.h"

#include "core/base/threads.h"

#include <QCoreApplication>
#include <QEventLoop>

#include <mutex>
#include <optional>
#include <utility>

namespace attn {

using namespace training;

/// What the worker posts to the GUI thread.
struct InductionRunner::Mailbox
{
    std::mutex mutex;
    std::vector<Point> points;
    InductionEvaluation latest;
    bool haveLatest = false;
    std::int64_t steps = 0;
    QString error;
    bool posted = false; ///< a drain is queued
};

InductionRunner::InductionRunner(QObject *parent)
    : QObject(parent)
    , m_jobs(new JobRunner(this, 1))
{
    rebuild();
}

InductionRunner::~InductionRunner()
{
    if (m_cancel)
        *m_cancel = true;
    m_jobs->cancel();
    m_jobs->waitForDone();
}

bool InductionRunner::setConfig(const InductionRunConfig &config, QString *error)
{
    try {
        config.validate();
    } catch (const std::exception &e) {
        if (error)
            *error = QString::fromUtf8(e.what());
        return false;
    }
    m_config = config;
    setPlaying(false);
    rebuild();
    return true;
}

void InductionRunner::setStepLimit(std::int64_t steps)
{
    m_stepLimit = std::max<std::int64_t>(1, steps);
}

void InductionRunner::rebuild()
{
    // A running worker keeps its own run and mailbox; its posts are dropped from now on.
    if (m_cancel)
        *m_cancel = true;
    m_cancel.reset();
    m_mailbox.reset();
    m_working = false;
    m_run = std::make_shared<InductionRun>(m_config);
    m_points.clear();
    m_latest = {};
    m_steps = 0;
    emit restarted();
    emit progressed();
}

void InductionRunner::setPlaying(bool playing)
{
    if (playing == m_playing)
        return;
    m_playing = playing;
    emit playingChanged(playing);
}

void InductionRunner::play()
{
    if (m_playing)
        return;
    if (m_steps >= m_stepLimit) {
        emit stopped(tr("step limit (%1) reached").arg(m_stepLimit));
        return;
    }
    setPlaying(true);
    if (!m_working)
        startWork(m_stepLimit - m_steps);
}

void InductionRunner::pause()
{
    if (m_working && m_cancel)
        *m_cancel = true;
    setPlaying(false);
}

void InductionRunner::reset()
{
    setPlaying(false);
    rebuild();
}

void InductionRunner::waitForIdle()
{
    while (m_working)
        QCoreApplication::processEvents(QEventLoop::WaitForMoreEvents);
}

std::vector<std::int64_t> InductionRunner::firstHeldOutSequence() const
{
    const TokenBatch &b = m_run->heldOut();
    return {b.tokens.begin(), b.tokens.begin() + b.length};
}

void InductionRunner::startWork(std::int64_t maxSteps)
{
    m_cancel = std::make_shared<std::atomic<bool>>(false);
    m_mailbox = std::make_shared<Mailbox>();
    m_working = true;
    m_jobs->run(
        [this, run = m_run, cancel = m_cancel, box = m_mailbox,
         maxSteps](const JobContext &context) {
            // One kernel thread: the GUI thread keeps a core (TrainingRunner does the same).
            const ScopedKernelThreads oneThread(1);
            const auto post = [&](Point *point, InductionEvaluation *e) {
                bool queue = false;
                {
                    const std::lock_guard lock(box->mutex);
                    if (point)
                        box->points.push_back(*point);
                    if (e) {
                        box->latest = std::move(*e);
                        box->haveLatest = true;
                    }
                    box->steps = run->steps();
                    queue = !std::exchange(box->posted, true);
                }
                // Queued to the GUI thread; the destructor waits for this worker, so the
                // runner is alive while it posts.
                if (queue)
                    postTo(this, [this, box] { drain(box); });
            };
            try {
                // Row 0 (as E17's): the untrained model, with the first batch's loss.
                std::optional<InductionEvaluation> untrained;
                if (run->steps() == 0)
                    untrained = run->evaluate();
                double trainSum = 0;
                std::int64_t trainCount = 0;
                for (std::int64_t left = maxSteps; left > 0; --left) {
                    if (*cancel || context.cancel.isCancelled())
                        break;
                    const double loss = run->step();
                    if (untrained) {
                        Point p0 {0,
                                  untrained->loss,
                                  loss,
                                  untrained->accuracy,
                                  untrained->inductionScore,
                                  untrained->previousTokenScore};
                        post(&p0, &*untrained);
                        untrained.reset();
                    }
                    trainSum += loss;
                    ++trainCount;
                    const std::int64_t s = run->steps();
                    if (s % evalEvery == 0 || left == 1) {
                        InductionEvaluation e = run->evaluate();
                        Point p {s,          e.loss,           trainSum / double(trainCount),
                                 e.accuracy, e.inductionScore, e.previousTokenScore};
                        trainSum = 0;
                        trainCount = 0;
                        post(&p, &e);
                    }
                }
            } catch (const std::exception &e) {
                const std::lock_guard lock(box->mutex);
                box->error = QString::fromUtf8(e.what());
            }
            post(nullptr, nullptr);
            return true;
        },
        [this](bool) { workFinished(); });
}

void InductionRunner::drain(const std::shared_ptr<Mailbox> &box)
{
    if (!box || box != m_mailbox)
        return; // an abandoned worker's
    std::vector<Point> points;
    QString error;
    {
        const std::lock_guard lock(box->mutex);
        points.swap(box->points);
        if (box->haveLatest) {
            m_latest = std::move(box->latest);
            box->haveLatest = false;
        }
        m_steps = box->steps;
        error = box->error;
        box->error.clear();
        box->posted = false;
    }
    m_points.insert(m_points.end(), points.begin(), points.end());
    emit progressed();
    QString reason;
    if (!error.isEmpty())
        reason = tr("training stopped: %1").arg(error);
    else if (m_playing && m_steps >= m_stepLimit)
        reason = tr("step limit (%1) reached").arg(m_stepLimit);
    if (!reason.isEmpty()) {
        setPlaying(false);
        emit stopped(reason);
    }
}

void InductionRunner::workFinished()
{
    m_working = false;
    const std::shared_ptr<Mailbox> box = m_mailbox;
    drain(box);
    m_mailbox.reset();
    // Paused and played again while the worker was finishing its step: go on.
    if (m_playing && m_steps < m_stepLimit)
        startWork(m_stepLimit - m_steps);
}

} // namespace attn
