#include "ui/window/chartdocks.h"

#include "ui/charts/rowmetricschart.h"
#include "ui/charts/scalingchart.h"
#include "ui/charts/scalingsweeprunner.h"
#include "ui/charts/timingchart.h"
#include "ui/session/tensorsource.h"
#include "ui/window/exportrouter.h"
#include "ui/window/windowlayout.h"

#include <QDockWidget>

namespace attn {

ChartDocks::ChartDocks(WindowLayout *layout, QObject *parent)
    : QObject(parent)
{
    m_sweepRunner = new ScalingSweepRunner(this);
    m_sweepRunner->setObjectName(QStringLiteral("scalingSweepRunner"));
    // E2 sweep, then per-row metrics, with the on-demand timing panel as a tab behind the
    // per-row metrics. The heatmaps keep the whole height of the centre. Each chart scrolls
    // inside its dock when the dock is smaller.
    m_maxWeight = new MaxWeightChart;
    m_jacobian = new JacobianNormChart;
    m_rowMetrics = new RowMetricsChart;
    m_timing = new TimingChart;
    const struct
    {
        QWidget *chart;
        QString title, objectName;
    } charts[] = {{m_maxWeight, tr("Max weight vs d_k"), QStringLiteral("maxWeightDock")},
                  {m_jacobian, tr("Jacobian norm vs d_k"), QStringLiteral("jacobianDock")},
                  {m_rowMetrics, tr("Per-row metrics"), QStringLiteral("rowMetricsDock")},
                  {m_timing, tr("Timing: what n² costs"), QStringLiteral("timingDock")}};
    for (const auto &c : charts)
        m_docks.append({c.chart,
                        layout->addDock(WindowLayout::scrollable(c.chart), c.title, c.objectName,
                                        Qt::RightDockWidgetArea)});
    layout->stackRightColumn(m_docks[0].dock, m_docks[1].dock, m_docks[2].dock, m_docks[3].dock);

    connect(m_sweepRunner, &ScalingSweepRunner::finished, this,
            [this](std::shared_ptr<const ScalingSweepData> data) {
                m_maxWeight->setSweep(data);
                m_jacobian->setSweep(data);
            });
    connect(m_sweepRunner, &ScalingSweepRunner::failed, this, [this](const QString &message) {
        m_maxWeight->setErrorText(message);
        m_jacobian->setErrorText(message);
    });
    connect(m_sweepRunner, &ScalingSweepRunner::busyChanged, this, [this](bool busy) {
        m_maxWeight->setBusy(busy);
        m_jacobian->setBusy(busy);
    });
}

void ChartDocks::setParameters(const SessionParameters &params)
{
    // Stored weights have no d_k (the parameters' d_k = 1 is a placeholder): nothing is marked.
    const int dK = params.tensors && params.tensors->isWeights() ? 0 : int(params.dK());
    m_maxWeight->setCurrentDk(dK);
    m_jacobian->setCurrentDk(dK);
    m_maxWeight->setCurrentScale(params.scaleExponent, params.temperature);
    m_jacobian->setCurrentScale(params.scaleExponent, params.temperature);
    // The sweep depends on the key count, the seed and (its third curve) α and τ; d_k is its x
    // axis.
    m_sweepRunner->request(params.seed, params.keyCount(), params.scaleExponent,
                           params.temperature);
}

void ChartDocks::addTo(ExportRouter *router) const
{
    for (const Dock &d : m_docks)
        router->addChart(d.dock, d.chart);
}

} // namespace attn
