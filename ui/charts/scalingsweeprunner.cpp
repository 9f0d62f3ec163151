#include "ui/charts/scalingsweeprunner.h"

#include "core/experiments/livecharts.h"

#include <QElapsedTimer>
#include <QtConcurrent/QtConcurrentRun>

#include <algorithm>
#include <exception>

namespace attn {

ScalingSweepRunner::ScalingSweepRunner(QObject *parent)
    : QObject(parent)
{
    connect(&m_watcher, &QFutureWatcher<Outcome>::finished, this, &ScalingSweepRunner::onFinished);
    m_startTimer.setSingleShot(true);
    m_startTimer.setInterval(120);
    connect(&m_startTimer, &QTimer::timeout, this, [this] {
        if (m_newest && !m_running)
            start(*m_newest);
    });
}

ScalingSweepRunner::~ScalingSweepRunner()
{
    if (m_cancel)
        m_cancel->store(true);
    m_watcher.disconnect(this);
    m_watcher.waitForFinished();
}

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
    const Request r {seed, std::max(1, keys), alpha, temperature};
    if (m_newest && *m_newest == r)
        return;
    m_newest = r;
    setBusy(true);
    if (m_running) {
        // Supersede the running sweep: stop it; onFinished starts the newest request.
        if (m_cancel)
            m_cancel->store(true);
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
    m_cancel = std::make_shared<std::atomic<bool>>(false);
    m_running = true;
    m_started = r;
    auto cancel = m_cancel;
    m_watcher.setFuture(QtConcurrent::run([r, cancel]() -> Outcome {
        Outcome out;
        try {
            QElapsedTimer timer;
            timer.start();
            RunContext context;
            context.cancel = cancel.get();
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
            out.data = std::move(data);
        } catch (const Cancelled &) {
            out.cancelled = true;
        } catch (const std::exception &e) {
            out.error = QString::fromUtf8(e.what());
        }
        return out;
    }));
}

void ScalingSweepRunner::onFinished()
{
    const Outcome out = m_watcher.result();
    m_running = false;
    if (m_newest && (out.cancelled || !(*m_newest == m_started))) {
        // Superseded (stale result dropped) or cancelled for a request that came back to the
        // same values: run the newest request.
        start(*m_newest);
        return;
    }
    setBusy(false);
    if (out.cancelled)
        return;
    if (!out.error.isEmpty()) {
        emit failed(out.error);
        return;
    }
    m_data = out.data;
    emit finished(m_data);
}

} // namespace attn
