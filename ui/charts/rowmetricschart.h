#pragma once
// RowMetricsChart: chart (3), the per-row metrics of one head of a SessionResult against the
// query row i — max weight (left axis, [0, 1]), entropy in nats (right axis, [0, ln n_k]) and
// effective terms 1/Σw² (second right axis, [0, n_k]). Fully masked rows are marked.
// Fed in bulk (QXYSeries::replace); redraws coalesced by a single-shot timer.
//
// While the chart is hidden (its dock closed or a tab behind another dock, or the chart itself
// hidden), a new result or head only updates the head selector and the info line: the series
// are redrawn with the newest result when the chart is shown (showEvent, or its dock's
// visibilityChanged(true): a tabified dock behind another tab is moved off-screen, not hidden,
// so no show event reaches the chart) or its points are read, so a hidden chart costs nothing
// per slider step (the redraw is ≈ 1.3–2.5 ms per result at n = 1024) and never shows old data.

#include "ui/session/sessioncompute.h"

#include <QPointer>
#include <QTimer>
#include <QWidget>

#include <memory>

class QChartView;
class QComboBox;
class QDockWidget;
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

    /// Plots `result` (on the coalescing timer when visible, else when shown or first read).
    void setResult(std::shared_ptr<const SessionResult> result);
    /// Selected head (clamped to 0 … h−1).
    int head() const { return m_head; }

    /// Plotted points (after the coalesced redraw; a hidden chart is brought up to date with
    /// the newest result and head first): for tests.
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
    void showEvent(QShowEvent *event) override;

private:
    /// Starts the coalescing timer when visible; while hidden only marks the series outdated.
    void scheduleRedraw();
    /// Visible and, inside a dock, the dock's tab in front (see above).
    bool isOnScreen() const { return isVisible() && m_dockShown; }
    /// Follows the visibilityChanged signal of the nearest QDockWidget ancestor, if any.
    void followDock();
    /// Redraws the series if a result or head came while the chart was hidden (no-op when
    /// current). Const because reading the points needs it: the series are a cache of
    /// m_result and m_head.
    void ensureCurrent() const;
    void redraw() const;
    /// The line above the chart (n_q × n_k, reference values, masked rows, view changes); kept
    /// current also while hidden (it is cheap: one pass over the fully-masked flags).
    void updateInfo();
    void applyTheme();
    /// Integer query ticks at a 1-2-5 step: about eight, fewer when their labels would not fit
    /// the plot's width.
    void fitXTicks() const;
    /// The value axes' titles that fit the plot's height whole ("entropy (nats)", else
    /// "entropy", else none): Qt elides a vertical title taller than the plot, down to a lone
    /// "…" that reads as "⋮" in a short plot.
    void fitAxisTitles() const;

    std::shared_ptr<const SessionResult> m_result;
    mutable int m_queryCount = 0; ///< n_q of the plotted rows (for the x ticks)
    /// A result or head set while hidden is not plotted yet (see above).
    mutable bool m_stale = false;
    QPointer<QDockWidget> m_dock; ///< the dock followed by followDock()
    QMetaObject::Connection m_dockConnection;
    bool m_dockShown = true; ///< the dock's last visibilityChanged (true without a dock)
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
