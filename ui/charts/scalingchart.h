#pragma once
// ScalingChart: one metric of the E2 scaling sweep against d_k (log₂ axis), unscaled and with
// the 1/√d_k scale, with the session's current d_k marked. Data arrive in bulk
// (QXYSeries::replace) and redraws are coalesced by a single-shot timer, so a d_k slider drag
// repaints at most once per frame. Subclasses choose the metric: MaxWeightChart and
// JacobianNormChart.

#include "ui/charts/scalingsweeprunner.h"

#include <QChartView>
#include <QTimer>

#include <memory>

class QLineSeries;
class QLogValueAxis;
class QScatterSeries;
class QValueAxis;

namespace attn {

class ScalingChart : public QChartView
{
    Q_OBJECT
public:
    /// Sweep to plot (nullptr clears the curves).
    void setSweep(std::shared_ptr<const ScalingSweepData> data);
    /// The session's d_k, drawn as a vertical line with its interpolated values; 0 or less:
    /// none (stored weights have no d_k), nothing marked.
    void setCurrentDk(int dk);
    /// The session's scale exponent α and temperature τ. The curves are α = 0 and α = ½ at
    /// τ = 1; another setting is drawn as a third curve "your α = …, τ = …" once a sweep with
    /// that setting has arrived (ScalingSweepData::alpha, temperature), and the title says which
    /// curve is the user's.
    void setCurrentScale(double alpha, double temperature);
    /// Shows "computing…" in the title while a new sweep runs.
    void setBusy(bool busy);
    void setErrorText(const QString &message);

    int currentDk() const { return m_dk; }
    /// Plotted points (after the coalesced redraw): for tests.
    QList<QPointF> unscaledPoints() const;
    QList<QPointF> scaledPoints() const;
    /// The third curve (the user's α, τ; empty when it is one of the other two or not swept).
    QList<QPointF> customPoints() const;
    QString customName() const;

    QSize sizeHint() const override { return {420, 260}; }
    /// Base of the log x axis's labelled ticks: 2 when every power of two fits under the plot,
    /// else 4 or 8 (labels thinned to what fits; never elided like "10…").
    double xAxisBase() const;
    /// The x axis's tick labels for `base` (0: the current one) and the current range ("2",
    /// "4", … "2048").
    QStringList xAxisLabels(double base = 0) const;
    /// Width the labels need side by side for `base` (0: the current one), logical pixels.
    qreal xAxisLabelsWidth(double base = 0) const;

protected:
    ScalingChart(const QString &title, const QString &yTitle, QWidget *parent);
    /// The plotted metric of a sweep (one value per d_k).
    virtual const std::vector<double> &unscaledValues(const ScalingSweepData &d) const = 0;
    virtual const std::vector<double> &scaledValues(const ScalingSweepData &d) const = 0;
    virtual const std::vector<double> &customValues(const ScalingSweepData &d) const = 0;
    /// y range for the data; the default is [0, nice(max)].
    virtual std::pair<double, double> yRange(double maxValue) const;
    /// A line under the title explaining how the sweep's key count shapes the curves (HTML;
    /// empty: none).
    virtual QString keysNote(const ScalingSweepData &) const { return {}; }
    void changeEvent(QEvent *event) override;

private:
    void scheduleRedraw();
    void redraw();
    void updateTitle();
    void applyTheme();
    void fitAxisLabels();

    QString m_title;
    std::shared_ptr<const ScalingSweepData> m_data;
    int m_dk = 0;
    double m_alpha = 0.5, m_temperature = 1.0;
    bool m_busy = false;
    QString m_error;
    QTimer m_redrawTimer;

    QLineSeries *m_unscaled = nullptr;
    QLineSeries *m_scaled = nullptr;
    QLineSeries *m_custom = nullptr;
    QLineSeries *m_marker = nullptr;
    QScatterSeries *m_markerPoints = nullptr;
    QLogValueAxis *m_xAxis = nullptr;
    QValueAxis *m_yAxis = nullptr;
};

/// Chart (1): mean over trials of the largest softmax weight vs d_k.
class MaxWeightChart : public ScalingChart
{
    Q_OBJECT
public:
    explicit MaxWeightChart(QWidget *parent = nullptr);

protected:
    const std::vector<double> &unscaledValues(const ScalingSweepData &d) const override
    {
        return d.maxWeightUnscaled;
    }
    const std::vector<double> &scaledValues(const ScalingSweepData &d) const override
    {
        return d.maxWeightScaled;
    }
    const std::vector<double> &customValues(const ScalingSweepData &d) const override
    {
        return d.maxWeightCustom;
    }
    std::pair<double, double> yRange(double) const override { return {0.0, 1.0}; }
    QString keysNote(const ScalingSweepData &d) const override;
};

/// Chart (2): mean Frobenius norm of the softmax Jacobian diag(p) − ppᵀ vs d_k.
class JacobianNormChart : public ScalingChart
{
    Q_OBJECT
public:
    explicit JacobianNormChart(QWidget *parent = nullptr);

protected:
    const std::vector<double> &unscaledValues(const ScalingSweepData &d) const override
    {
        return d.jacobianUnscaled;
    }
    const std::vector<double> &scaledValues(const ScalingSweepData &d) const override
    {
        return d.jacobianScaled;
    }
    const std::vector<double> &customValues(const ScalingSweepData &d) const override
    {
        return d.jacobianCustom;
    }
    QString keysNote(const ScalingSweepData &d) const override;
};

} // namespace attn
