#pragma once
// RowMetricsChart: chart (3), the per-row metrics of one head of a SessionResult against the
// query row i — max weight (left axis, [0, 1]), entropy in nats (right axis, [0, ln n_k]) and
// effective terms 1/Σw² (second right axis, [0, n_k]). Fully masked rows are marked.
// Fed in bulk (QXYSeries::replace); redraws coalesced by a single-shot timer.

#include "sessioncompute.h"

#include <QTimer>
#include <QWidget>

#include <memory>

class QChartView;
class QComboBox;
class QLabel;
class QLineSeries;
class QScatterSeries;
class QValueAxis;

namespace attn {

class RowMetricsChart : public QWidget
{
    Q_OBJECT
public:
    explicit RowMetricsChart(QWidget *parent = nullptr);

    void setResult(std::shared_ptr<const SessionResult> result);
    /// Selected head (clamped to 0 … h−1).
    int head() const { return m_head; }

    /// Plotted points (after the coalesced redraw): for tests.
    QList<QPointF> maxWeightPoints() const;
    QList<QPointF> entropyPoints() const;
    QList<QPointF> effectiveTermsPoints() const;

    QSize sizeHint() const override { return {420, 280}; }

public slots:
    void setHead(int head);

signals:
    void headChanged(int head);

protected:
    void changeEvent(QEvent *event) override;

private:
    void scheduleRedraw();
    void redraw();
    void applyTheme();
    /// Integer query ticks at a 1-2-5 step: about eight, fewer when their labels would not fit
    /// the plot's width.
    void fitXTicks();

    std::shared_ptr<const SessionResult> m_result;
    int m_queryCount = 0; ///< n_q of the plotted rows (for the x ticks)
    int m_head = 0;
    QTimer m_redrawTimer;

    QComboBox *m_headCombo = nullptr;
    QLabel *m_info = nullptr;
    QChartView *m_view = nullptr;
    QLineSeries *m_maxWeight = nullptr;
    QLineSeries *m_entropy = nullptr;
    QLineSeries *m_effective = nullptr;
    QScatterSeries *m_masked = nullptr;
    QValueAxis *m_xAxis = nullptr;
    QValueAxis *m_maxAxis = nullptr;
    QValueAxis *m_entropyAxis = nullptr;
    QValueAxis *m_effectiveAxis = nullptr;
};

} // namespace attn
