#pragma once
// ChartDocks: the window's right column — the live charts (E2's max weight and Jacobian norm vs
// d_k, the per-row metrics, the on-demand n² timing) in their docks, and the E2 sweep runner
// that feeds the two d_k charts (recomputed when the key count or seed changes).

#include "ui/session/sessionparameters.h"

#include <QList>
#include <QObject>

class QDockWidget;
class QWidget;

namespace attn {

class ExportRouter;
class JacobianNormChart;
class MaxWeightChart;
class RowMetricsChart;
class ScalingSweepRunner;
class TimingChart;
class WindowLayout;

class ChartDocks : public QObject
{
    Q_OBJECT
public:
    /// Creates the charts, their docks through `layout` (on the right, stacked) and the sweep
    /// runner (objectName "scalingSweepRunner"), all owned by the layout's window.
    explicit ChartDocks(WindowLayout *layout, QObject *parent = nullptr);

    /// The current d_k and scale on the d_k charts; requests the sweep for the key count and
    /// seed (the runner skips a repeated request).
    void setParameters(const SessionParameters &params);
    /// Makes each chart dock exportable by File → Export when it has the focus.
    void addTo(ExportRouter *router) const;

    RowMetricsChart *rowMetrics() const { return m_rowMetrics; }
    TimingChart *timing() const { return m_timing; }

private:
    ScalingSweepRunner *m_sweepRunner = nullptr;
    MaxWeightChart *m_maxWeight = nullptr;
    JacobianNormChart *m_jacobian = nullptr;
    RowMetricsChart *m_rowMetrics = nullptr;
    TimingChart *m_timing = nullptr;
    struct Dock
    {
        QWidget *chart;
        QDockWidget *dock;
    };
    QList<Dock> m_docks;
};

} // namespace attn
