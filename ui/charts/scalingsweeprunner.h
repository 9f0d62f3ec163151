#pragma once
// ScalingSweepRunner: runs the E2 scaling sweep (core scalingSweep) for the live charts "mean max
// weight vs d_k" and "mean softmax-Jacobian norm vs d_k", off the GUI thread.
// Newest request wins (JobRunner, ui/session/jobrunner.h): a request made while a sweep runs
// cancels it (RunContext::cancel) and is started when the old one has stopped; only the result
// of the newest request is ever delivered. Requests are debounced (startDelay) so dragging the n
// slider does not start a sweep per step while the heatmaps need the CPU.

#include "ui/session/jobrunner.h"

#include <QObject>
#include <QString>
#include <QTimer>

#include <memory>
#include <optional>
#include <vector>

namespace attn {

/// One sweep, as plotted: every vector has one entry per d_k.
struct ScalingSweepData
{
    quint64 seed = 0;
    int keys = 0; ///< keys per query (the session's n_k)
    int trials = 0; ///< trials per d_k (see ScalingSweepRunner::trialsFor)
    std::vector<double> dk; ///< 2^1 … 2^11
    std::vector<double> scoreStd; ///< std of raw scores q·k (tracks √d_k)
    std::vector<double> maxWeightUnscaled, maxWeightScaled; ///< mean over trials of max_j w_j
    std::vector<double> jacobianUnscaled, jacobianScaled; ///< mean ‖diag(p) − ppᵀ‖_F
    double alpha = 0.5, temperature = 1.0; ///< the user's scale d_k^(−α)/τ of the third curve
    std::vector<double> maxWeightCustom, jacobianCustom; ///< with the user's scale
    double seconds = 0; ///< wall time of the sweep
};

class ScalingSweepRunner : public QObject
{
    Q_OBJECT
public:
    explicit ScalingSweepRunner(QObject *parent = nullptr);
    ~ScalingSweepRunner() override; ///< cancels and waits for a running sweep

    /// d_k values of the sweep: 2^1 … 2^11.
    static std::vector<int> sweepDks();
    /// Trials per d_k for `keys` keys: 300 when cheap, fewer (at least 16) for many keys so a
    /// sweep costs at most ~2·10⁷ random draws (a fraction of a second).
    static int trialsFor(int keys);

    /// The most keys a sweep draws (a long model run's n_k is larger): 16 trials of d_k 2 048
    /// hold 16 · 4 096 · 2 048 float64 draws at most one trial at a time, 64 MiB.
    static constexpr int maxKeys = 4096;

    /// Schedules a sweep for (seed, min(keys, maxKeys)) and the user's scale exponent α and
    /// temperature τ (the third curve) after startDelay(); no-op if it equals the newest request.
    /// The subtitle names the keys drawn.
    void request(quint64 seed, int keys, double alpha = 0.5, double temperature = 1.0);
    /// True from a request until its result (or failure) is delivered.
    bool isBusy() const { return m_busy; }
    /// Debounce delay before a sweep starts (milliseconds, default 120).
    void setStartDelay(int milliseconds) { m_startTimer.setInterval(milliseconds); }
    int startDelay() const { return m_startTimer.interval(); }
    /// Latest delivered data (nullptr before the first).
    std::shared_ptr<const ScalingSweepData> data() const { return m_data; }

    /// Sweeps are deterministic in (seed, keys, α, τ): the last kCached finished ones are kept for
    /// the process, so a setting seen before (a slider moved back, a second window) is shown
    /// without drawing its 2·10⁷ numbers again (still delivered through `finished`, after the
    /// event loop turns).
    static constexpr std::size_t kCached = 16;

signals:
    void finished(std::shared_ptr<const attn::ScalingSweepData> data);
    void failed(const QString &message);
    void busyChanged(bool busy);

private:
    struct Request
    {
        quint64 seed = 0;
        int keys = 0;
        double alpha = 0.5, temperature = 1.0;
        bool operator==(const Request &) const = default;
    };
    void start(const Request &r);
    void setBusy(bool busy);

    JobRunner m_jobs {nullptr, 1}; ///< one sweep at a time: the newest waits for the old to stop
    std::optional<Request> m_newest; ///< the request whose result is wanted
    bool m_busy = false;
    QTimer m_startTimer;
    std::shared_ptr<const ScalingSweepData> m_data;
};

} // namespace attn
