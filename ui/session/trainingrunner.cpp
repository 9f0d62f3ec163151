#include "ui/session/trainingrunner.h"

#include "ui/session/handover.h"

#include "core/attention/mask.h"
#include "core/base/threads.h"
#include "core/io/npy.h"

#include <QCoreApplication>
#include <QEventLoop>
#include <QFile>

#include <algorithm>
#include <mutex>
#include <utility>

namespace attn {

using namespace training;

/// Between the worker and the GUI thread: the chunks done, and the A/B choices to use next.
struct TrainingRunner::Mailbox
{
    std::mutex mutex;
    std::vector<ChunkResult> chunks; ///< done, not yet drained
    QString error; ///< what the worker threw
    bool posted = false; ///< a drain is queued
    RunChoice a, b; ///< α and lr for the worker's next chunk (mid-run changes)
    double threshold = 0; ///< the loss threshold for the next chunk (0 = none)
    bool thresholdEither = false;
};

TrainingRunner::TrainingRunner(QObject *parent)
    : QObject(parent)
    , m_jobs(new JobRunner(this))
{
    rebuild();
}

TrainingRunner::~TrainingRunner()
{
    if (m_working) {
        *m_cancel = true;
        m_jobs->cancel();
    }
    m_jobs->waitForDone(); // at most the step in progress; posts to `this` are dropped
}

void TrainingRunner::rebuild()
{
    abandonWork();
    m_run = std::make_shared<PairedRun>(m_settings.toConfig());
    m_latest = m_run->probe();
    m_probeMask = m_run->probeMask();
    const std::size_t perSnapshot = std::max<std::size_t>(1, m_latest.bytes());
    const std::size_t capacity
        = std::clamp<std::size_t>(snapshotBudgetBytes / perSnapshot, 2, maxSnapshots);
    m_history = std::make_unique<TrainingHistory>(snapshotInterval, capacity);
    m_history->setInitial(m_latest);
    m_rate = 0;
    emit restarted();
    emit progressed();
}

std::shared_ptr<const SessionResult> TrainingRunner::probeResult(const ProbeSnapshot &snapshot,
                                                                 bool runB) const
{
    auto r = std::make_shared<SessionResult>();
    const std::vector<MatrixD> &weights = runB ? snapshot.weightsB : snapshot.weightsA;
    if (weights.empty()) {
        r->error = tr("no weights recorded");
        return r;
    }
    const RunChoice &run = runB ? m_settings.b : m_settings.a;
    const Index L = weights.front().rows();
    r->weights = weights;
    r->weightsMean = runB ? snapshot.meanB : snapshot.meanA;
    const bool copy = m_settings.task == TaskKind::Copy;
    r->maskState = MatrixB::Zero(L, L);
    if (m_probeMask.rows() == L && m_probeMask.cols() == L)
        for (Index i = 0; i < L; ++i)
            for (Index j = 0; j < L; ++j)
                if (m_probeMask(i, j))
                    r->maskState(i, j) = copy && j > i ? MaskCausal : MaskCustom;
    r->fullyMasked.assign(weights.size(), std::vector<std::uint8_t>(std::size_t(L), 0));
    SessionParameters &p = r->params;
    p.n = int(L);
    p.dModel = m_settings.dModel;
    p.heads = m_settings.heads;
    p.seed = m_settings.seed;
    p.scaleExponent = run.scaleExponent;
    p.mask = copy ? MaskChoice::Causal : MaskChoice::None;
    p.positional = copy;
    p.dtype = m_settings.float32 ? DType::Float32 : DType::Float64;
    if (m_settings.task == TaskKind::Recall) {
        for (int i = 0; i < m_settings.n; ++i)
            p.tokens.push_back(QStringLiteral("k%1").arg(i).toStdString());
        p.tokens.push_back("query");
    }
    r->viewNote = tr("run %1, step %2, the probe sequence of task %3%4")
                      .arg(runB ? QStringLiteral("B") : QStringLiteral("A"))
                      .arg(snapshot.step)
                      .arg(QString::fromLatin1(taskKindName(m_settings.task)))
                      .arg(m_settings.task == TaskKind::Recall
                               ? tr("; the diagonal is masked (no token attends to itself)")
                               : QString());
    return r;
}

void TrainingRunner::abandonWork()
{
    if (!m_working)
        return;
    // The worker holds its own references to the PairedRun and the mailbox: it finishes the
    // step in progress and what it posts is never used (drain ignores an old mailbox, and the
    // cancelled job's end is not delivered).
    *m_cancel = true;
    m_jobs->cancel();
    m_working = false;
    m_mailbox.reset();
}

bool TrainingRunner::setSettings(const TrainingSettings &settings, QString *error)
{
    const QString problem = settings.validate();
    if (!problem.isEmpty()) {
        if (error)
            *error = problem;
        return false;
    }
    if (error)
        error->clear();
    if (settings == m_settings)
        return true;
    const bool restart = !settings.sameRunSetup(m_settings);
    m_settings = settings;
    if (!restart && m_mailbox) {
        const std::lock_guard lock(m_mailbox->mutex);
        m_mailbox->a = settings.a;
        m_mailbox->b = settings.b;
        m_mailbox->threshold = settings.activeThreshold();
        m_mailbox->thresholdEither = settings.thresholdEither;
    }
    if (restart) {
        setPlaying(false);
        m_stopReason.clear();
        rebuild();
    }
    return true;
}

void TrainingRunner::setPlaying(bool playing)
{
    if (playing == m_playing)
        return;
    m_playing = playing;
    if (playing) {
        m_rateClock.start();
        m_rateSteps = stepCount();
    }
    emit playingChanged(playing);
}

void TrainingRunner::play()
{
    if (m_playing)
        return;
    if (stepCount() >= m_settings.steps) {
        m_stopReason = tr("step limit (%1) reached").arg(m_settings.steps);
        emit stopped(m_stopReason);
        return;
    }
    if (thresholdReached()) {
        m_stopReason
            = tr("%1 (switch the threshold off or lower it to go on)").arg(thresholdStatus());
        emit stopped(m_stopReason);
        return;
    }
    m_stopReason.clear();
    setPlaying(true);
    if (!m_working)
        startWork(m_settings.steps - stepCount());
}

void TrainingRunner::pause()
{
    if (m_working)
        *m_cancel = true;
    setPlaying(false);
}

void TrainingRunner::step()
{
    if (m_playing || m_working || stepCount() >= m_settings.steps)
        return;
    startWork(1);
}

void TrainingRunner::reset()
{
    setPlaying(false);
    m_stopReason.clear();
    rebuild();
}

void TrainingRunner::waitForIdle()
{
    while (m_working)
        QCoreApplication::processEvents(QEventLoop::WaitForMoreEvents);
}

void TrainingRunner::startWork(std::int64_t maxSteps)
{
    m_cancel = std::make_shared<std::atomic<bool>>(false);
    m_mailbox = std::make_shared<Mailbox>();
    m_mailbox->a = m_settings.a;
    m_mailbox->b = m_settings.b;
    m_mailbox->threshold = m_settings.activeThreshold();
    m_mailbox->thresholdEither = m_settings.thresholdEither;
    m_working = true;
    const std::int64_t snapshotEvery = m_history->interval(); // thinning keeps multiples of it
    m_jobs->run(
        [this, run = m_run, cancel = m_cancel, box = m_mailbox, maxSteps,
         snapshotEvery](const JobContext &) {
            // One kernel thread: the GUI thread keeps a core to animate on, and a team of
            // OpenMP threads that spin while waiting for each other loses badly on a busy
            // machine (6× slower than one thread at load 9 on 2 cores, d_model 64, n 32, B 32).
            const ScopedKernelThreads oneThread(1);
            std::int64_t left = maxSteps;
            while (left > 0 && !*cancel) {
                ChunkRequest request;
                request.maxSteps = left;
                request.maxSeconds = chunkSeconds;
                request.snapshotEvery = snapshotEvery;
                {
                    const std::lock_guard lock(box->mutex);
                    request.a = box->a;
                    request.b = box->b;
                    request.lossThreshold = box->threshold;
                    request.thresholdEither = box->thresholdEither;
                }
                bool stop = false, post = false;
                try {
                    ChunkResult chunk = run->advance(request, CancelToken(cancel.get()));
                    left -= std::int64_t(chunk.a.size());
                    stop = chunk.nonFiniteStep > 0 || chunk.cancelled || chunk.thresholdReached;
                    const std::lock_guard lock(box->mutex);
                    box->chunks.push_back(std::move(chunk));
                    post = !std::exchange(box->posted, true);
                } catch (const std::exception &e) {
                    stop = true;
                    const std::lock_guard lock(box->mutex);
                    box->error = QString::fromUtf8(e.what());
                    post = !std::exchange(box->posted, true);
                }
                // Queued to the GUI thread; dropped if the runner is gone (its destructor waits
                // for this worker, so it is alive while the worker posts).
                if (post)
                    postTo(this, [this, box] { drain(box); });
                if (stop)
                    break;
            }
            return true;
        },
        [this](bool) { workFinished(); });
}

void TrainingRunner::drain(const std::shared_ptr<Mailbox> &box)
{
    if (box != m_mailbox)
        return; // an abandoned worker's
    std::vector<ChunkResult> chunks;
    QString error;
    {
        const std::lock_guard lock(box->mutex);
        chunks.swap(box->chunks);
        error = box->error;
        box->posted = false;
    }
    if (chunks.empty() && error.isEmpty())
        return;
    QString reason;
    for (const ChunkResult &chunk : chunks) {
        m_history->append(chunk);
        m_latest = chunk.latest;
        if (chunk.nonFiniteStep > 0)
            reason = tr("non-finite loss or gradient at step %1 (that update was skipped): try "
                        "a smaller learning rate")
                         .arg(chunk.nonFiniteStep);
        else if (chunk.thresholdReached)
            reason = tr("paused at the loss threshold, %1").arg(thresholdStatus());
    }
    if (!error.isEmpty())
        reason = tr("training stopped: %1").arg(error);
    else if (reason.isEmpty() && stepCount() >= m_settings.steps)
        reason = tr("step limit (%1) reached").arg(m_settings.steps);
    if (m_playing && m_rateClock.elapsed() >= 1000) {
        m_rate = double(stepCount() - m_rateSteps) * 1000.0 / double(m_rateClock.elapsed());
        m_rateSteps = stepCount();
        m_rateClock.start();
    }
    emit progressed();
    if (!reason.isEmpty()) {
        m_stopReason = reason;
        setPlaying(false);
        emit stopped(reason);
    }
}

void TrainingRunner::workFinished()
{
    m_working = false;
    const std::shared_ptr<Mailbox> box = m_mailbox;
    drain(box); // anything posted after the last queued drain
    m_mailbox.reset();
    // Paused and played again while the worker was finishing its step: go on.
    if (m_playing && stepCount() < m_settings.steps)
        startWork(m_settings.steps - stepCount());
}

std::int64_t TrainingRunner::thresholdStep(bool runB) const
{
    return firstStepBelow(runB ? m_history->b() : m_history->a(), m_settings.lossThreshold);
}

bool TrainingRunner::thresholdReached() const
{
    if (!m_settings.stopAtLoss)
        return false;
    const bool a = thresholdStep(false) > 0, b = thresholdStep(true) > 0;
    return m_settings.thresholdEither ? a || b : a && b;
}

QString TrainingRunner::thresholdStatus() const
{
    if (!m_settings.stopAtLoss)
        return {};
    const auto at = [this](bool runB) {
        const std::int64_t step = thresholdStep(runB);
        return step > 0 ? tr("at step %1").arg(step) : tr("not yet");
    };
    return tr("loss < %1: A %2, B %3")
        .arg(m_settings.lossThreshold, 0, 'g', 4)
        .arg(at(false), at(true));
}

bool TrainingRunner::writeNpz(const QString &path, QString *error)
{
    const bool resume = m_playing;
    if (m_working) {
        pause();
        waitForIdle();
    }
    bool ok = true;
    try {
        attn::writeNpz(QFile::encodeName(path).toStdString(), trainingArrays(*m_run, *m_history));
        if (error)
            error->clear();
    } catch (const std::exception &e) {
        ok = false;
        if (error)
            *error = QString::fromUtf8(e.what());
    }
    if (resume)
        play();
    return ok;
}

} // namespace attn
