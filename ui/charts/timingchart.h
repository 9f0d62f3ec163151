#pragma once
// TimingChart: chart (4), what n² costs (EXPERIMENTS.md E8). On demand (Run), core timingSweep
// measures materialized attention for n = 128 … n_max in a worker thread (QtConcurrent), with a
// progress bar and Cancel (std::atomic<bool> through RunContext). Plots time vs n on log–log
// axes with the fitted exponent, and the score matrix's MiB on a second log axis.

#include <QFutureWatcher>
#include <QString>
#include <QWidget>

#include <atomic>
#include <memory>
#include <vector>

class QChartView;
class QCheckBox;
class QComboBox;
class QLabel;
class QLineSeries;
class QLogValueAxis;
class QProgressBar;
class QPushButton;
class QSpinBox;

namespace attn {

/// One timing run, as plotted.
struct TimingData
{
    std::vector<double> n; ///< sequence lengths
    std::vector<double> seconds; ///< mean time per run (seconds)
    std::vector<double> mib; ///< size of one n × n score matrix (MiB)
    double exponent = 0; ///< least-squares slope of log time vs log n
    int d = 64;
    bool float32 = true;
    int repeats = 3;
};

class TimingChart : public QWidget
{
    Q_OBJECT
public:
    explicit TimingChart(QWidget *parent = nullptr);
    ~TimingChart() override; ///< cancels and waits for a running measurement

    bool isRunning() const { return m_running; }
    /// Latest completed run (nullptr before the first).
    std::shared_ptr<const TimingData> data() const { return m_data; }
    /// The n values a run measures for the current "n up to" choice.
    std::vector<int> sequenceLengths() const;

    QSize sizeHint() const override { return {420, 320}; }

public slots:
    void run();
    void cancel();

signals:
    void runningChanged(bool running);
    void finished(std::shared_ptr<const attn::TimingData> data);

private:
    struct Outcome
    {
        std::shared_ptr<const TimingData> data;
        QString error;
        bool cancelled = false;
    };
    void onFinished();
    void setRunning(bool running);
    void plot();

    QComboBox *m_maxNCombo = nullptr;
    QSpinBox *m_dSpin = nullptr;
    QCheckBox *m_float32Check = nullptr;
    QSpinBox *m_repeatsSpin = nullptr;
    QPushButton *m_runButton = nullptr;
    QPushButton *m_cancelButton = nullptr;
    QProgressBar *m_progress = nullptr;
    QLabel *m_status = nullptr;
    QChartView *m_view = nullptr;
    QLineSeries *m_time = nullptr;
    QLineSeries *m_fit = nullptr;
    QLineSeries *m_mib = nullptr;
    QLogValueAxis *m_xAxis = nullptr;
    QLogValueAxis *m_timeAxis = nullptr;
    QLogValueAxis *m_mibAxis = nullptr;

    QFutureWatcher<Outcome> m_watcher;
    std::shared_ptr<std::atomic<bool>> m_cancel;
    bool m_running = false;
    std::shared_ptr<const TimingData> m_data;
};

} // namespace attn
