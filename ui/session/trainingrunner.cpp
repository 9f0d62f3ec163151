#include "ui/session/trainingrunner.h"

#include "core/mask.h"

#include <QCoreApplication>
#include <QEventLoop>
#include <QtConcurrent/QtConcurrentRun>

#include <algorithm>

namespace attn {

using namespace training;

/// A chunk's outcome, or the message of what the worker threw.
struct TrainingRunner::Chunk
{
    ChunkResult result;
    QString error;
};

TrainingRunner::TrainingRunner(QObject *parent)
    : QObject(parent)
{
    rebuild();
}

TrainingRunner::~TrainingRunner()
{
    if (m_watcher) {
        *m_cancel = true;
        m_watcher->disconnect(this);
        m_watcher->waitForFinished(); // at most the step in progress
    }
}

void TrainingRunner::rebuild()
{
    abandonChunk();
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
            p.tokens << QStringLiteral("k%1").arg(i);
        p.tokens << QStringLiteral("query");
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

void TrainingRunner::abandonChunk()
{
    if (!m_watcher)
        return;
    // The worker holds its own reference to the PairedRun: it finishes the step in progress and
    // its result is never delivered.
    *m_cancel = true;
    m_watcher->disconnect(this);
    connect(m_watcher, &QFutureWatcherBase::finished, m_watcher, &QObject::deleteLater);
    m_watcher = nullptr;
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
    m_stopReason.clear();
    setPlaying(true);
    if (!m_watcher)
        startChunk(m_settings.steps - stepCount());
}

void TrainingRunner::pause()
{
    if (m_watcher)
        *m_cancel = true;
    setPlaying(false);
}

void TrainingRunner::step()
{
    if (m_playing || m_watcher || stepCount() >= m_settings.steps)
        return;
    startChunk(1);
}

void TrainingRunner::reset()
{
    setPlaying(false);
    m_stopReason.clear();
    rebuild();
}

void TrainingRunner::waitForIdle()
{
    while (m_watcher) {
        QEventLoop loop;
        connect(m_watcher, &QFutureWatcherBase::finished, &loop, &QEventLoop::quit,
                Qt::QueuedConnection);
        loop.exec();
    }
}

void TrainingRunner::startChunk(std::int64_t maxSteps)
{
    ChunkRequest request;
    request.maxSteps = maxSteps;
    request.maxSeconds = chunkSeconds;
    request.snapshotEvery = m_history->interval();
    request.a = m_settings.a;
    request.b = m_settings.b;
    m_cancel = std::make_shared<std::atomic<bool>>(false);
    m_watcher = new QFutureWatcher<std::shared_ptr<Chunk>>(this);
    connect(m_watcher, &QFutureWatcherBase::finished, this, &TrainingRunner::finishChunk);
    m_watcher->setFuture(QtConcurrent::run([run = m_run, cancel = m_cancel, request] {
        auto chunk = std::make_shared<Chunk>();
        try {
            chunk->result = run->advance(request, CancelToken(cancel.get()));
        } catch (const std::exception &e) {
            chunk->error = QString::fromUtf8(e.what());
        }
        return chunk;
    }));
}

void TrainingRunner::finishChunk()
{
    auto *watcher = m_watcher;
    m_watcher = nullptr;
    watcher->deleteLater();
    const std::shared_ptr<Chunk> chunk = watcher->future().resultCount() > 0
        ? watcher->future().result()
        : std::make_shared<Chunk>(Chunk {{}, QStringLiteral("the worker ended without a result")});
    QString reason;
    if (!chunk->error.isEmpty()) {
        reason = tr("training stopped: %1").arg(chunk->error);
    } else {
        m_history->append(chunk->result);
        m_latest = chunk->result.latest;
        if (chunk->result.nonFiniteStep > 0)
            reason = tr("non-finite loss or gradient at step %1 (that update was skipped): try "
                        "a smaller learning rate")
                         .arg(chunk->result.nonFiniteStep);
        else if (stepCount() >= m_settings.steps)
            reason = tr("step limit (%1) reached").arg(m_settings.steps);
    }
    if (m_playing && m_rateClock.elapsed() >= 1000) {
        m_rate = double(stepCount() - m_rateSteps) * 1000.0 / double(m_rateClock.elapsed());
        m_rateSteps = stepCount();
        m_rateClock.start();
    }
    if (m_playing && reason.isEmpty())
        startChunk(m_settings.steps - stepCount()); // before the GUI redraws: no idle worker
    emit progressed();
    if (!reason.isEmpty()) {
        m_stopReason = reason;
        setPlaying(false);
        emit stopped(reason);
    }
}

} // namespace attn
