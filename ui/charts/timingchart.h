#pragma once
// TimingChart: chart (4), what n² costs (docs/experiments.md, E8). On demand (Run), core
// timingSweep measures the real kernels — materialized, streaming (online softmax) and the
// per-row loop, each optional — for n = 128 … n_max on a worker thread (measureTiming in
// ui/charts/timingrun.h, run by a JobRunner), with a progress bar and Cancel (its CancelToken).
// Plots time vs n on log–log axes with each kernel's fitted exponent and, on a second tab, the
// extra memory each kernel allocates (kernelExtraBytes) on log–log axes with the memory budget. A
// kernel whose run would need more than the budget at some n is not run there: the UI says why
// (status line, and the memory it would need is drawn as a refused point above the budget line), so
// a large n never ends in an out-of-memory crash.

#include "ui/charts/timingrun.h"
#include "ui/session/jobrunner.h"

#include "core/experiments/livecharts.h"

#include <QString>
#include <QStringList>
#include <QWidget>

#include <cstddef>
#include <memory>
#include <utility>
#include <vector>

class QChartView;
class QCheckBox;
class QComboBox;
class QLabel;
class QLineSeries;
class QLogValueAxis;
class QProgressBar;
class QPushButton;
class QScatterSeries;
class QSpinBox;
class QTabWidget;

namespace attn {

class TimingChart : public QWidget
{
    Q_OBJECT
public:
    explicit TimingChart(QWidget *parent = nullptr);
    ~TimingChart() override; ///< cancels and waits for a running measurement

    bool isRunning() const { return m_running; }
    /// Latest completed run (nullptr before the first).
    std::shared_ptr<const TimingData> data() const { return m_data; }
    /// The n values a run measures for the current "n up to" choice (n doubles from 128).
    std::vector<int> sequenceLengths() const;
    /// Memory budget of a run (bytes): a kernel is not run at an n where it would need more.
    std::size_t memoryBudget() const;
    /// The per-row loop is not run beyond this n (one run would take tens of seconds).
    static constexpr int loopMaxN = 4096;
    /// Bytes one run of `kernel` needs at n: kernelExtraBytes plus Q, K, V and the output
    /// (the check core timingSweep makes).
    static std::size_t runBytes(const QString &kernel, int n, int d, bool float32);
    /// The status line as plain text (what was measured, what was refused and why).
    QString statusText() const;

    /// The large-n fit (core/experiments/livecharts.h, fitLargeNExponent).
    using LargeNFit = attn::LargeNFit;
    static LargeNFit fitLargeN(const std::vector<double> &n, const std::vector<double> &seconds)
    {
        return fitLargeNExponent(n, seconds);
    }
    /// From this n on the 4·n²·d flops dominate a run's fixed costs (allocation, threads).
    static constexpr double nSquaredFromN = 1024;

    QSize sizeHint() const override { return {420, 420}; }

public slots:
    void run();
    void cancel();

signals:
    void runningChanged(bool running);
    void finished(std::shared_ptr<const attn::TimingData> data);

private:
    void onFinished(const TimingOutcome &out);
    void setRunning(bool running);
    void plot();
    QStringList checkedKernels() const;
    /// Shows `html` (or `plain`, escaped) in the status line; statusText() returns `plain`.
    void setStatus(const QString &plain, const QString &html = QString());

    QComboBox *m_maxNCombo = nullptr;
    QSpinBox *m_dSpin = nullptr;
    QCheckBox *m_float32Check = nullptr;
    QSpinBox *m_repeatsSpin = nullptr;
    QComboBox *m_budgetCombo = nullptr;
    QList<QCheckBox *> m_kernelChecks;
    QPushButton *m_runButton = nullptr;
    QPushButton *m_cancelButton = nullptr;
    QProgressBar *m_progress = nullptr;
    QLabel *m_status = nullptr;
    QString m_statusPlain;
    QTabWidget *m_plotTabs = nullptr;
    QChartView *m_timeView = nullptr;
    QChartView *m_memoryView = nullptr;
    QList<QLineSeries *> m_time; ///< per kernel
    QList<QLineSeries *> m_fit; ///< per kernel
    QList<QLineSeries *> m_memory; ///< per kernel
    QScatterSeries *m_refused = nullptr;
    QLineSeries *m_budgetLine = nullptr;
    QLogValueAxis *m_timeX = nullptr;
    QLogValueAxis *m_timeY = nullptr;
    QLogValueAxis *m_memoryX = nullptr;
    QLogValueAxis *m_memoryY = nullptr;
    /// The data's span of each value axis (seconds, MiB), which the axis widens to whole
    /// decades, or to every k-th decade to fit the plot's height.
    std::pair<double, double> m_timeRange {1e-5, 10};
    std::pair<double, double> m_memoryRange {0.01, 10000};

    JobRunner m_jobs {nullptr, 1}; ///< runs measureTiming (ui/charts/timingrun.h)
    bool m_running = false;
    std::shared_ptr<const TimingData> m_data;
};

} // namespace attn
