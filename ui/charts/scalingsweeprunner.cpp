#include "ui/charts/scalingsweeprunner.h"

#include "core/experiments/livecharts.h"

#include <QElapsedTimer>

#include <algorithm>
#include <exception>

namespace attn {

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
            return std::shared_ptr<const ScalingSweepData>(std::move(data));
        },
        [this](std::shared_ptr<const ScalingSweepData> data) {
            setBusy(false);
            m_data = std::move(data);
            emit finished(m_data);
        });
}

} // namespace attn
