#include "ui/charts/scalingsweeprunner.h"

#include "core/experiments/livecharts.h"

#include <QElapsedTimer>
#include <QTimer>

#include <algorithm>
#include <deque>
#include <exception>
#include <mutex>

namespace attn {

namespace {

struct CachedSweep
{
    quint64 seed;
    int keys;
    double alpha, temperature;
    std::shared_ptr<const ScalingSweepData> data;
};

std::mutex &cacheMutex()
{
    static std::mutex m;
    return m;
}

std::deque<CachedSweep> &cache()
{
    static std::deque<CachedSweep> c;
    return c;
}

std::shared_ptr<const ScalingSweepData> cached(quint64 seed, int keys, double alpha, double tau)
{
    const std::lock_guard lock(cacheMutex());
    for (const CachedSweep &c : cache())
        if (c.seed == seed && c.keys == keys && c.alpha == alpha && c.temperature == tau)
            return c.data;
    return nullptr;
}

void remember(const std::shared_ptr<const ScalingSweepData> &data)
{
    const std::lock_guard lock(cacheMutex());
    cache().push_back({data->seed, data->keys, data->alpha, data->temperature, data});
    while (cache().size() > ScalingSweepRunner::kCached)
        cache().pop_front();
}

} // namespace

ScalingSweepRunner::ScalingSweepRunner(QObject *parent)
    : QObject(parent)
{
    m_startTimer.setSingleShot(true);
    m_startTimer.setInterval(120);
    connect(&m_startTimer, &QTimer::timeout, this, [this] {
        if (m_newest)
            start(*m_newest);
    });
    connect(&m_jobs, &JobRunner::failed, this, [this](const QString &message) {
        setBusy(false);
        emit failed(message);
    });
}

ScalingSweepRunner::~ScalingSweepRunner() = default; // m_jobs cancels and waits

std::vector<int> ScalingSweepRunner::sweepDks()
{
    std::vector<int> dks;
    for (int dk = 2; dk <= 2048; dk *= 2)
        dks.push_back(dk);
    return dks;
}

int ScalingSweepRunner::trialsFor(int keys)
{
    double sumDk = 0;
    for (int dk : sweepDks())
        sumDk += double(dk);
    const double budget = 2e7; // random draws per sweep
    const double trials = budget / ((std::max(1, keys) + 1) * sumDk);
    return int(std::clamp(trials, 16.0, 300.0));
}

void ScalingSweepRunner::request(quint64 seed, int keys, double alpha, double temperature)
{
    const Request r {seed, std::clamp(keys, 1, maxKeys), alpha, temperature};
    if (m_newest && *m_newest == r)
        return;
    m_newest = r;
    setBusy(true);
    if (m_jobs.isBusy()) {
        // Supersede the running sweep: it stops, then the newest request runs.
        m_startTimer.stop();
        start(r);
        return;
    }
    m_startTimer.start(); // (re)starts the debounce
}

void ScalingSweepRunner::setBusy(bool busy)
{
    if (busy == m_busy)
        return;
    m_busy = busy;
    emit busyChanged(busy);
}

void ScalingSweepRunner::start(const Request &r)
{
    if (auto known = cached(r.seed, r.keys, r.alpha, r.temperature)) {
        m_jobs.cancel(); // a sweep still running is superseded
        QTimer::singleShot(0, this, [this, r, known] {
            if (!m_newest || !(*m_newest == r))
                return; // another request came meanwhile: it runs instead
            setBusy(false);
            m_data = known;
            emit finished(m_data);
        });
        return;
    }
    m_jobs.run(
        [r](const JobContext &job) {
            QElapsedTimer timer;
            timer.start();
            RunContext context;
            context.cancel = job.cancel;
            const std::vector<int> dks = sweepDks();
            const std::vector<Index> dkIndex(dks.begin(), dks.end());
            const int trials = trialsFor(r.keys);
            AttentionOptions custom;
            custom.scaleExponent = r.alpha;
            custom.temperature = r.temperature;
            const Table table = scalingSweep(r.seed, trials, r.keys, dkIndex, RandomSource::NumPy,
                                             custom, context);
            auto data = std::make_shared<ScalingSweepData>();
            data->seed = r.seed;
            data->keys = r.keys;
            data->trials = trials;
            data->alpha = r.alpha;
            data->temperature = r.temperature;
            for (std::size_t row = 0; row < table.rowCount(); ++row) {
                data->dk.push_back(table.number(row, "d_k"));
                data->scoreStd.push_back(table.number(row, "score_std"));
                data->maxWeightUnscaled.push_back(table.number(row, "max_weight_unscaled"));
                data->maxWeightScaled.push_back(table.number(row, "max_weight_scaled"));
                data->jacobianUnscaled.push_back(table.number(row, "jacobian_norm_unscaled"));
                data->jacobianScaled.push_back(table.number(row, "jacobian_norm_scaled"));
                data->maxWeightCustom.push_back(table.number(row, "max_weight_custom"));
                data->jacobianCustom.push_back(table.number(row, "jacobian_norm_custom"));
            }
            data->seconds = timer.nsecsElapsed() * 1e-9;
            std::shared_ptr<const ScalingSweepData> done = std::move(data);
            remember(done);
            return done;
        },
        [this](std::shared_ptr<const ScalingSweepData> data) {
            setBusy(false);
            m_data = std::move(data);
            emit finished(m_data);
        });
}

} // namespace attn
