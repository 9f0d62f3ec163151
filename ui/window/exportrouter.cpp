#include "ui/window/exportrouter.h"

#include "ui/charts/experimentfigure.h"
#include "ui/charts/trainingchart.h"
#include "ui/panels/experimentpage.h"
#include "ui/panels/experimentspanel.h"
#include "ui/panels/trainingpanel.h"
#include "ui/render/heatmaprenderer.h"
#include "ui/session/attentionsession.h"
#include "ui/views/attentionviews.h"
#include "ui/views/compareview.h"
#include "ui/views/figureexport.h"
#include "ui/views/heatmapactions.h"
#include "ui/views/heatmapwidget.h"
#include "ui/views/longmapview.h"
#include "ui/views/modelview.h"
#include "ui/views/positionsview.h"
#include "ui/views/stepsview.h"
#include "ui/views/tokensview.h"

#include <QAction>
#include <QApplication>
#include <QChartView>
#include <QDockWidget>
#include <QFileInfo>
#include <QIcon>
#include <QMessageBox>
#include <QScopeGuard>
#include <QTabWidget>

#include <algorithm>

namespace attn {

ExportRouter::ExportRouter(AttentionSession *session, HeatmapActions *heatmapActions,
                           AttentionViews *views, QTabWidget *modes, ExperimentsPanel *experiments,
                           QWidget *dialogParent)
    : QObject(dialogParent)
    , m_session(session)
    , m_heatmapActions(heatmapActions)
    , m_views(views)
    , m_modes(modes)
    , m_experiments(experiments)
    , m_dialogParent(dialogParent)
    , m_exportAction(new QAction(tr("&Export Heatmap Grid…"), this))
{
    setObjectName(QStringLiteral("exportRouter"));
    m_exportAction->setObjectName(QStringLiteral("exportAction"));
    m_exportAction->setShortcut(QKeySequence(tr("Ctrl+E")));
    m_exportAction->setIcon(QIcon::fromTheme(QStringLiteral("document-export")));
    connect(m_exportAction, &QAction::triggered, this, &ExportRouter::exportCurrentViewInteractive);
    // The action names the view it exports.
    connect(m_modes, &QTabWidget::currentChanged, this, &ExportRouter::updateExportAction);
    connect(m_views, &QTabWidget::currentChanged, this, [this] {
        // A chart keeping the focus would stay the export target after a tab switch.
        if (focusedChart())
            m_views->currentWidget()->setFocus(Qt::OtherFocusReason);
        updateExportAction();
    });
    connect(m_views->headsView(), &HeatmapWidget::optionsChanged, this,
            &ExportRouter::updateExportAction);
    connect(m_experiments, &ExperimentsPanel::currentExperimentChanged, this,
            &ExportRouter::updateExportAction);
    connect(m_views->tokensView(), &TokensView::stateChanged, this,
            &ExportRouter::updateExportAction); // head view or coloured text
    connect(qApp, &QApplication::focusChanged, this, &ExportRouter::updateExportAction);
    updateExportAction();
}

void ExportRouter::setTrainingPanel(TrainingPanel *training)
{
    m_training = training;
    updateExportAction();
}

bool ExportRouter::trainingChart() const
{
    return m_frozen ? m_frozenTrainingChart : m_training && m_training->chartFocused();
}

void ExportRouter::addChart(QDockWidget *dock, QWidget *chart)
{
    m_chartDocks.append(dock);
    m_charts.append(chart);
}

QWidget *ExportRouter::focusedChart() const
{
    if (m_frozen)
        return m_frozenChart;
    const QWidget *focus = QApplication::focusWidget();
    if (!focus || focus->window() != m_dialogParent)
        return nullptr;
    for (qsizetype i = 0; i < m_charts.size(); ++i) {
        if (m_chartDocks[i]->isVisible() && m_chartDocks[i]->isAncestorOf(focus))
            return m_charts[i];
    }
    return nullptr;
}

QString ExportRouter::chartTitle(const QWidget *chart) const
{
    const qsizetype i = m_charts.indexOf(chart);
    return i < 0 ? QString() : m_chartDocks[i]->windowTitle();
}

ExportRouter::Target ExportRouter::currentTarget() const
{
    if (m_frozen)
        return m_frozenTarget;
    if (focusedChart())
        return Target::Chart;
    if (m_modes->currentWidget() == m_experiments)
        return Target::Experiment;
    if (m_training && m_modes->currentWidget() == m_training)
        return Target::Training;
    switch (m_views->currentIndex()) {
    case AttentionViews::StepsTab:
        return Target::Steps;
    case AttentionViews::CompareTab:
        return Target::Compare;
    case AttentionViews::ModelTab:
        return Target::Model;
    case AttentionViews::PositionsTab:
        return Target::Positions;
    case AttentionViews::TokensTab:
        return Target::Tokens;
    case AttentionViews::LongTab:
        return Target::Long;
    default:
        return Target::Heads;
    }
}

QString ExportRouter::currentName() const
{
    const HeatmapWidget *heatmap = m_views->headsView();
    switch (currentTarget()) {
    case Target::Heads: {
        if (!heatmap->isSingleHead())
            return tr("Heatmap Grid");
        const int head = heatmap->options().head;
        return head >= m_session->parameters().heads ? tr("Mean over Heads")
                                                     : tr("Head %1").arg(head);
    }
    case Target::Steps:
        return tr("Attention Steps");
    case Target::Compare:
        return tr("A/B Comparison");
    case Target::Model:
        return tr("Model View");
    case Target::Positions:
        return tr("Positional Encoding");
    case Target::Tokens:
        return m_views->tokensView()->exportName();
    case Target::Chart: {
        const QString title = chartTitle(focusedChart());
        return title.isEmpty() ? tr("Chart") : tr("Chart “%1”").arg(title);
    }
    case Target::Experiment:
        return m_experiments->currentExperiment().isEmpty()
            ? tr("Experiment Figure")
            : tr("%1 Figure").arg(m_experiments->currentExperiment());
    case Target::Training:
        return trainingChart() ? tr("Training Chart") : tr("Training Heatmaps");
    case Target::Long:
        return tr("Long Map");
    }
    return {};
}

QString ExportRouter::currentFileName() const
{
    const HeatmapWidget *heatmap = m_views->headsView();
    switch (currentTarget()) {
    case Target::Heads:
        if (!heatmap->isSingleHead())
            return QStringLiteral("attention-heads.png");
        if (heatmap->options().head >= m_session->parameters().heads)
            return QStringLiteral("attention-mean.png");
        return QStringLiteral("attention-head%1.png").arg(heatmap->options().head);
    case Target::Steps:
        return QStringLiteral("attention-steps-head%1.png")
            .arg(std::max(m_views->stepsView()->head(), 0));
    case Target::Compare:
        return QStringLiteral("attention-compare.png");
    case Target::Model:
        return QStringLiteral("attention-model.png");
    case Target::Positions:
        return QStringLiteral("positional-encoding.png");
    case Target::Tokens:
        return m_views->tokensView()->exportFileName();
    case Target::Chart: {
        // "Max weight vs d_k" → chart-max-weight-vs-d-k.png
        QString slug;
        for (const QChar c : chartTitle(focusedChart()).toLower()) {
            if ((c >= QLatin1Char('a') && c <= QLatin1Char('z'))
                || (c >= QLatin1Char('0') && c <= QLatin1Char('9')))
                slug += c;
            else if (!slug.endsWith(QLatin1Char('-')))
                slug += QLatin1Char('-');
        }
        while (slug.endsWith(QLatin1Char('-')))
            slug.chop(1);
        return QStringLiteral("chart-%1.png").arg(slug.isEmpty() ? QStringLiteral("view") : slug);
    }
    case Target::Experiment:
        return QStringLiteral("%1.png").arg(m_experiments->currentExperiment().toLower());
    case Target::Training:
        return trainingChart() ? QStringLiteral("training-chart.png")
                               : QStringLiteral("training-heatmaps.png");
    case Target::Long:
        return QStringLiteral("attention-long.png");
    }
    return QStringLiteral("attention.png");
}

QSize ExportRouter::defaultExportSize() const
{
    const QSize s = m_views->headsView()->size();
    return QSize(std::max(800, s.width()), std::max(500, s.height()));
}

QSize ExportRouter::currentSize() const
{
    switch (currentTarget()) {
    case Target::Heads:
        return defaultExportSize();
    case Target::Steps:
        return m_views->stepsView()->defaultExportSize();
    case Target::Compare:
        return m_views->compareView()->defaultExportSize();
    case Target::Model:
        return m_views->modelView()->defaultExportSize();
    case Target::Positions:
        return m_views->positionsView()->defaultExportSize();
    case Target::Tokens:
        return m_views->tokensView()->defaultExportSize();
    case Target::Chart:
        return focusedChart()->size();
    case Target::Experiment: {
        const ExperimentPage *page = m_experiments->currentPage();
        return page && page->result() ? defaultExperimentFigureSize(*page->result()) : QSize();
    }
    case Target::Training:
        return trainingChart() ? m_training->chart()->view()->size()
                               : m_training->heatmapsExportSize();
    case Target::Long:
        return LongMapView::defaultExportSize();
    }
    return {};
}

bool ExportRouter::exportCurrentView(const QString &path, QString *error, QSize size,
                                     qreal dpr) const
{
    if (size.isEmpty())
        size = currentSize();
    const bool png = QFileInfo(path).suffix().toLower() == QLatin1String("png");
    switch (currentTarget()) {
    case Target::Heads:
        // The heatmaps as shown (grid or one head, zoom window, colormap …), white page; a PNG
        // of `size` × `dpr` pixels at 96 × `dpr` dpi looks like the screen, only sharper.
        return png
            ? m_heatmapActions->exportView(path, (QSizeF(size) * dpr).toSize(), 96.0 * dpr, error)
            : m_heatmapActions->exportView(path, size, 96.0, error);
    case Target::Steps:
        return m_views->stepsView()->exportFigure(path, size, dpr, error);
    case Target::Compare:
        return m_views->compareView()->exportFigure(path, size, dpr, error);
    case Target::Model:
        return m_views->modelView()->exportFigure(path, size, dpr, error);
    case Target::Positions:
        return m_views->positionsView()->exportFigure(path, size, dpr, error);
    case Target::Tokens:
        return m_views->tokensView()->exportFigure(path, size, dpr, error);
    case Target::Chart:
        return exportWidget(focusedChart(), path, size, dpr, error);
    case Target::Experiment: {
        const ExperimentPage *page = m_experiments->currentPage();
        if (!page) {
            if (error)
                *error = tr("No experiment is selected.");
            return false;
        }
        return page->exportFigure(path, size, error);
    }
    case Target::Training:
        return trainingChart() ? m_training->exportChart(path, size, dpr, error)
                               : m_training->exportHeatmaps(path, size, dpr, error);
    case Target::Long:
        m_views->longMapView()->exportWindow(path, size, dpr);
        return true;
    }
    return false;
}

bool ExportRouter::exportHeatmapGrid(const QString &path, QSize size, qreal dpr,
                                     QString *error) const
{
    const auto result = m_session->result();
    if (!result || !result->ok()) {
        if (error)
            *error = tr("There is no computed heatmap to export yet.");
        return false;
    }
    // The grid as the heatmaps show it (colormap, scale, range, trimmed or hidden keys), whole.
    HeatmapRenderer renderer;
    HeatmapOptions options = m_heatmapActions->exportOptions();
    options.view = HeatmapView::Grid;
    options.showMean = true;
    options.window = QRect();
    renderer.setOptions(options);
    const auto shown = m_views->headsView()->result();
    renderer.setResult(shown && shown->requestId == result->requestId ? shown : result);
    QString message;
    const bool ok = renderer.save(path, size, dpr, &message);
    if (!ok && error)
        *error = message;
    return ok;
}

void ExportRouter::updateExportAction()
{
    const QString name = currentName();
    m_exportAction->setText(tr("&Export %1…").arg(name));
    m_exportAction->setStatusTip(
        currentTarget() == Target::Experiment
            ? tr("Save the figure of the current experiment as PNG or SVG")
            : tr("Save the current view (%1) as PNG, SVG or PDF; click a chart first to export "
                 "that chart")
                  .arg(name));
}

void ExportRouter::exportCurrentViewInteractive()
{
    if (currentTarget() == Target::Long) {
        // Its own dialog: figures and data of the visible window, written in the background.
        m_views->longMapView()->exportInteractive();
        return;
    }
    const QString title = tr("Export %1").arg(currentName());
    if (currentTarget() == Target::Heads && !m_session->result()) {
        QMessageBox::information(m_dialogParent, title,
                                 tr("There is no computed heatmap to export yet."));
        return;
    }
    // The file dialog takes the focus (from a focused chart): keep the target until it is written.
    m_frozenTarget = currentTarget();
    m_frozenChart = focusedChart();
    m_frozenTrainingChart = trainingChart();
    m_frozen = true;
    const auto unfreeze = qScopeGuard([this] {
        m_frozen = false;
        m_frozenChart = nullptr;
        updateExportAction();
    });
    exportFigureInteractive(
        m_dialogParent, title, currentFileName(),
        [this](const QString &path, QString *error) { return exportCurrentView(path, error); });
}

} // namespace attn
