#pragma once
// TrainingChart: the Training tab's curves of runs A and B against the step — the loss (before
// each update), the mean largest weight, the mean softmax-Jacobian norm ‖J‖_F or the gradient
// norm reaching W_Q and W_K, all as core recorded them (core/training/pairedrun.h,
// TrainingHistory). A long run is drawn from every k-th step (k = ⌈steps / maxPoints⌉, the
// last step always), so a redraw costs the same at step 100 and at step 100 000. A vertical
// marker shows the step the scrubber looks at.

#include "core/training/pairedrun.h"

#include <QWidget>

class QChart;
class QChartView;
class QCheckBox;
class QComboBox;
class QLogValueAxis;
class QLineSeries;
class QValueAxis;

namespace attn {

class TrainingChart : public QWidget
{
    Q_OBJECT
public:
    enum class Metric { Loss, MeanMaxWeight, JacobianNorm, GradNormQk };
    /// Points drawn per run at most.
    static constexpr int maxPoints = 1500;

    explicit TrainingChart(QWidget *parent = nullptr);

    /// The curves to draw (not owned; the runner's history, which outlives the chart's use of
    /// it until the next setHistory). nullptr clears the chart.
    void setHistory(const training::TrainingHistory *history);
    /// Redraws from the history (after new steps).
    void refresh();
    /// The step marked by a vertical line; −1 hides it.
    void setMarker(std::int64_t step);
    /// Legend names of the two runs, e.g. "A: 1/√d_k" and "B: 1 (unscaled)".
    void setRunNames(const QString &a, const QString &b);
    /// The curve shown (named apart from QWidget::metric, the paint-device metric).
    Metric shownMetric() const { return m_metric; }
    void setMetric(Metric metric);
    /// Log-scaled y axis (on by default: the losses span decades; non-positive values are not
    /// drawn on it).
    bool logScale() const { return m_log; }
    void setLogScale(bool on);
    /// The metric's name as on the axis ("loss (MSE)", "mean max weight", …).
    static QString metricName(Metric metric);

    /// The chart (for export: ui/views/figureexport.h exportWidget of view()).
    QChartView *view() const { return m_view; }
    /// Plotted points of A and B (tests).
    QList<QPointF> pointsA() const;
    QList<QPointF> pointsB() const;

    QSize sizeHint() const override { return {520, 300}; }
    /// The chart view's minimum height: a plot about 170 pixels tall under the legend and
    /// the step axis.
    static constexpr int minimumViewHeight = 280;
    /// Decades between two labels of the log axis (1, 2, 3, …): the smallest that keeps the
    /// labels two text lines apart over the plot's height (tests).
    int decadesPerLabel() const;

protected:
    void changeEvent(QEvent *event) override;

private:
    double value(const training::StepPoint &p) const;
    void applyStyle();
    /// The log axis over whole multiples of decadesPerLabel() decades around the data (labels
    /// at each multiple: base 10^k), then the marker.
    void placeLogAxis();
    /// The scrubbed step's vertical line over the y axis' range.
    void placeMarker();

    const training::TrainingHistory *m_history = nullptr;
    Metric m_metric = Metric::Loss;
    std::int64_t m_marker = -1;
    QComboBox *m_metricBox;
    QChart *m_chart;
    QChartView *m_view;
    QLineSeries *m_a;
    QLineSeries *m_b;
    QLineSeries *m_markerSeries;
    QValueAxis *m_x;
    QValueAxis *m_y;
    QLogValueAxis *m_logY;
    QCheckBox *m_logBox;
    bool m_log = true;
    int m_bottomDecade = -1, m_topDecade = 0; ///< the data's decades (log scale)
};

} // namespace attn
