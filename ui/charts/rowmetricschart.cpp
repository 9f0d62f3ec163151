#include "ui/charts/rowmetricschart.h"

#include "ui/charts/chartstyle.h"

#include <QChart>
#include <QChartView>
#include <QComboBox>
#include <QCursor>
#include <QDockWidget>
#include <QEvent>
#include <QFontMetricsF>
#include <QHBoxLayout>
#include <QLabel>
#include <QLineSeries>
#include <QScatterSeries>
#include <QSignalBlocker>
#include <QToolTip>
#include <QVBoxLayout>
#include <QValueAxis>

#include <algorithm>
#include <cmath>
#include <utility>

namespace attn {

namespace {

// The smallest "nice" upper bound ≥ x whose fifth is a 1-2-2.5-5 step, so three value axes with
// six ticks each share the same grid lines.
double niceUpperBound(double x)
{
    const double step = std::max(x, 1e-12) / 5;
    const double decade = std::pow(10.0, std::floor(std::log10(step)));
    for (double f : {1.0, 2.0, 2.5, 5.0, 10.0}) {
        if (f * decade >= step * (1 - 1e-12))
            return 5 * f * decade;
    }
    return 50 * decade;
}

/// The keys a row may attend to: those some row leaves unmasked (padded keys are masked in
/// every row); every key of a result without mask states.
int unmaskedKeys(const SessionResult &r)
{
    const MatrixB &mask = r.maskState;
    const Index nK = r.keyCount();
    if (mask.rows() == 0 || mask.cols() != nK)
        return int(nK);
    int count = 0;
    for (Index j = 0; j < nK; ++j) {
        for (Index i = 0; i < mask.rows(); ++i) {
            if (mask(i, j) == 0) {
                ++count;
                break;
            }
        }
    }
    return count;
}

} // namespace

RowMetricsChart::RowMetricsChart(QWidget *parent)
    : QWidget(parent)
{
    setObjectName(QStringLiteral("rowMetricsChart"));
    auto *layout = new QVBoxLayout(this);
    layout->setContentsMargins(0, 0, 0, 0);
    layout->setSpacing(2);

    auto *bar = new QHBoxLayout;
    bar->setContentsMargins(6, 2, 6, 0);
    auto *headLabel = new QLabel(tr("Head:"), this);
    m_headCombo = new QComboBox(this);
    m_headCombo->setObjectName(QStringLiteral("rowMetricsHeadCombo"));
    m_headCombo->setToolTip(
        tr("Head whose rows are plotted (clicking a heatmap tile selects it)."));
    m_headCombo->setSizeAdjustPolicy(QComboBox::AdjustToContents);
    headLabel->setBuddy(m_headCombo);
    m_info = new QLabel(this);
    m_info->setObjectName(QStringLiteral("rowMetricsInfo"));
    // The line wraps in a narrow dock instead of setting the chart's minimum width.
    m_info->setWordWrap(true);
    m_info->setSizePolicy(QSizePolicy::Ignored, QSizePolicy::Preferred);
    m_info->setMinimumWidth(60);
    m_info->setToolTip(tr("Reference values: a uniform row over the n unmasked keys (padded "
                          "keys, masked in every row, excluded) has weights 1/n, entropy ln n "
                          "and n effective terms; a one-hot row has 0 and 1."));
    bar->addWidget(headLabel);
    bar->addWidget(m_headCombo);
    bar->addSpacing(8);
    bar->addWidget(m_info, 1);
    layout->addLayout(bar);

    m_view = new QChartView(this);
    m_view->setRenderHint(QPainter::Antialiasing);
    m_view->setMinimumSize(260, 180);
    m_view->setWhatsThis(
        tr("Per query row i of the selected head: the largest weight, the entropy −Σ w log w "
           "in nats (ln n for a row uniform over its n unmasked keys, 0 for one-hot) and the "
           "effective number of attended keys 1/Σw² (n uniform, 1 one-hot). Fully masked rows "
           "have all-zero weights and are marked."));
    layout->addWidget(m_view, 1);

    auto *chart = new QChart;
    chart->legend()->setAlignment(Qt::AlignBottom);
    m_view->setChart(chart);

    m_maxWeight = new QLineSeries(chart);
    m_maxWeight->setName(tr("max weight"));
    m_entropy = new QLineSeries(chart);
    m_entropy->setName(tr("entropy (nats)"));
    m_effective = new QLineSeries(chart);
    m_effective->setName(tr("1/Σw² terms"));
    m_masked = new QScatterSeries(chart);
    m_masked->setName(tr("fully masked row"));
    m_masked->setMarkerShape(QScatterSeries::MarkerShapeRectangle);
    m_masked->setMarkerSize(7);
    chart->addSeries(m_maxWeight);
    chart->addSeries(m_entropy);
    chart->addSeries(m_effective);
    chart->addSeries(m_masked);

    m_xAxis = new QValueAxis(chart);
    m_xAxis->setTitleText(tr("query i (row)"));
    m_xAxis->setLabelFormat(QStringLiteral("%d"));
    m_maxAxis = new QValueAxis(chart);
    m_maxAxis->setTitleText(tr("max weight"));
    m_maxAxis->setRange(0, 1);
    m_maxAxis->setLabelFormat(QStringLiteral("%.1f"));
    m_maxAxis->setTickCount(6);
    m_entropyAxis = new QValueAxis(chart);
    m_entropyAxis->setTitleText(tr("entropy (nats)"));
    m_entropyAxis->setLabelFormat(QStringLiteral("%g"));
    m_entropyAxis->setTickCount(6);
    m_effectiveAxis = new QValueAxis(chart);
    m_effectiveAxis->setTitleText(tr("effective terms"));
    m_effectiveAxis->setLabelFormat(QStringLiteral("%g"));
    m_effectiveAxis->setTickCount(6);
    chart->addAxis(m_xAxis, Qt::AlignBottom);
    connect(chart, &QChart::plotAreaChanged, this, &RowMetricsChart::fitXTicks);
    connect(chart, &QChart::plotAreaChanged, this, &RowMetricsChart::fitAxisTitles);
    chart->addAxis(m_maxAxis, Qt::AlignLeft);
    chart->addAxis(m_entropyAxis, Qt::AlignRight);
    chart->addAxis(m_effectiveAxis, Qt::AlignRight);
    for (QAbstractSeries *s : chart->series())
        s->attachAxis(m_xAxis);
    m_maxWeight->attachAxis(m_maxAxis);
    m_masked->attachAxis(m_maxAxis);
    m_entropy->attachAxis(m_entropyAxis);
    m_effective->attachAxis(m_effectiveAxis);

    for (QLineSeries *s : {m_maxWeight, m_entropy, m_effective}) {
        connect(s, &QXYSeries::hovered, this, [this, s](const QPointF &p, bool state) {
            if (state)
                QToolTip::showText(QCursor::pos(),
                                   tr("head %1, query i = %2\n%3 = %4")
                                       .arg(m_head)
                                       .arg(std::lround(p.x()))
                                       .arg(s->name())
                                       .arg(p.y(), 0, 'g', 4),
                                   m_view);
            else
                QToolTip::hideText();
        });
    }

    connect(m_headCombo, &QComboBox::currentIndexChanged, this, [this](int index) {
        if (index >= 0)
            setHead(index);
    });

    m_redrawTimer.setSingleShot(true);
    m_redrawTimer.setInterval(16);
    connect(&m_redrawTimer, &QTimer::timeout, this, [this] {
        if (isOnScreen())
            redraw();
        else
            m_stale = true; // hidden before the timer fired: redrawn when shown
    });
    applyTheme();
    redraw();
    updateInfo();
}

void RowMetricsChart::applyTheme()
{
    QChart *chart = m_view->chart();
    chartstyle::applyTheme(chart, this);
    const QColor colors[]
        = {chartstyle::scaledColor(), chartstyle::unscaledColor(), chartstyle::thirdColor()};
    QLineSeries *series[] = {m_maxWeight, m_entropy, m_effective};
    QValueAxis *axes[] = {m_maxAxis, m_entropyAxis, m_effectiveAxis};
    for (int i = 0; i < 3; ++i) {
        series[i]->setPen(chartstyle::seriesPen(colors[i], 1.8));
        series[i]->setColor(colors[i]);
        // Each axis wears its series' colour so the three scales are told apart.
        axes[i]->setLinePenColor(colors[i]);
        axes[i]->setLabelsColor(colors[i]);
        axes[i]->setTitleBrush(colors[i]);
    }
    const QColor marker = chartstyle::markerColor(this);
    m_masked->setColor(marker);
    m_masked->setBorderColor(marker);
}

void RowMetricsChart::changeEvent(QEvent *event)
{
    QWidget::changeEvent(event);
    if (event->type() == QEvent::PaletteChange || event->type() == QEvent::FontChange)
        applyTheme();
}

void RowMetricsChart::showEvent(QShowEvent *event)
{
    followDock(); // (in MainWindow the chart is put in its dock after construction)
    if (isOnScreen())
        ensureCurrent(); // before the first paint: the newest result, never the one of before
    QWidget::showEvent(event);
}

void RowMetricsChart::followDock()
{
    QDockWidget *dock = nullptr;
    for (QWidget *w = parentWidget(); w && !dock; w = w->parentWidget())
        dock = qobject_cast<QDockWidget *>(w);
    if (dock == m_dock)
        return;
    disconnect(m_dockConnection);
    m_dock = dock;
    m_dockShown = true;
    if (dock)
        m_dockConnection = connect(dock, &QDockWidget::visibilityChanged, this, [this](bool shown) {
            m_dockShown = shown;
            if (isOnScreen())
                ensureCurrent(); // its tab came to the front: the newest result
        });
}

void RowMetricsChart::setResult(std::shared_ptr<const SessionResult> result)
{
    m_result = std::move(result);
    const int heads = m_result && m_result->ok() ? int(m_result->metrics.size()) : 0;
    if (m_headCombo->count() != heads) {
        const QSignalBlocker blocker(m_headCombo);
        m_headCombo->clear();
        for (int h = 0; h < heads; ++h)
            m_headCombo->addItem(tr("head %1").arg(h));
    }
    if (heads > 0) {
        const int clamped = std::clamp(m_head, 0, heads - 1);
        const QSignalBlocker blocker(m_headCombo);
        m_headCombo->setCurrentIndex(clamped);
        if (clamped != m_head) {
            m_head = clamped;
            emit headChanged(m_head);
        }
    }
    updateInfo();
    scheduleRedraw();
}

void RowMetricsChart::setHead(int head)
{
    const int heads = m_headCombo->count();
    if (heads > 0)
        head = std::clamp(head, 0, heads - 1);
    if (head == m_head)
        return;
    m_head = head;
    {
        const QSignalBlocker blocker(m_headCombo);
        m_headCombo->setCurrentIndex(head);
    }
    updateInfo();
    scheduleRedraw();
    emit headChanged(m_head);
}

QList<QPointF> RowMetricsChart::maxWeightPoints() const
{
    ensureCurrent();
    return m_maxWeight->points();
}

QList<QPointF> RowMetricsChart::entropyPoints() const
{
    ensureCurrent();
    return m_entropy->points();
}

QList<QPointF> RowMetricsChart::effectiveTermsPoints() const
{
    ensureCurrent();
    return m_effective->points();
}

void RowMetricsChart::scheduleRedraw()
{
    if (!isOnScreen()) {
        m_redrawTimer.stop();
        m_stale = true;
        return;
    }
    if (!m_redrawTimer.isActive())
        m_redrawTimer.start();
}

void RowMetricsChart::ensureCurrent() const
{
    if (m_stale)
        redraw();
}

void RowMetricsChart::updateInfo()
{
    if (!m_result || !m_result->ok() || m_head < 0 || m_head >= int(m_result->metrics.size())) {
        m_info->setText(tr("no result yet"));
        return;
    }
    const RowMetrics &m = m_result->metrics[std::size_t(m_head)];
    const int nQ = int(m.maxWeight.size());
    const int nK = int(m_result->keyCount()); // the shown keys (a trimmed view has fewer)
    int masked = 0; // as redraw() marks them
    for (int i = 0; i < nQ && i < int(m.fullyMasked.size()); ++i)
        masked += m.fullyMasked[std::size_t(i)] != 0;
    // The uniform row spreads its weight over the keys it may attend to: padded keys (masked
    // in every row) take none.
    const int open = std::max(1, unmaskedKeys(*m_result));
    // No line break inside "w = 1/n".
    QString info = (open < nK ? tr("%1 rows × %2 keys · uniform row over the %3 unmasked keys: "
                                   "w\u00a0=\u00a01/%3, %4 nats, %3 terms")
                              : tr("%1 rows × %2 keys · uniform row: w\u00a0=\u00a01/%3, %4 nats, "
                                   "%3 terms"))
                       .arg(nQ)
                       .arg(nK)
                       .arg(open)
                       .arg(std::log(double(open)), 0, 'f', 2);
    if (masked > 0)
        info += tr(" · %1 fully masked").arg(masked);
    if (nQ > 0 && std::isnan(m.entropy(0)))
        info += tr(" · signed weights: no entropy or effective terms");
    // What the heatmap view changed (ui/session/resultview.h): the metrics follow it.
    if (m_result->viewNote.contains(QLatin1String("padding trimmed")))
        info += tr(" · real tokens only");
    if (m_result->renormalized)
        info += tr(" · renormalised");
    else if (m_result->viewNote.contains(QLatin1String("hidden")))
        info += tr(" · raw (keys hidden)");
    m_info->setText(info);
}

void RowMetricsChart::redraw() const
{
    m_stale = false;
    QList<QPointF> maxWeight, entropy, effective, masked;
    int nQ = 1, nK = 1;
    if (m_result && m_result->ok() && m_head >= 0 && m_head < int(m_result->metrics.size())) {
        const RowMetrics &m = m_result->metrics[std::size_t(m_head)];
        nQ = int(m.maxWeight.size());
        nK = int(m_result->keyCount()); // the shown keys (a trimmed view has fewer)
        maxWeight.reserve(nQ);
        entropy.reserve(nQ);
        effective.reserve(nQ);
        for (int i = 0; i < nQ; ++i) {
            if (i < int(m.fullyMasked.size()) && m.fullyMasked[std::size_t(i)]) {
                masked.append(QPointF(i, 0.0));
                continue; // no weights on this row: a gap, never a fake 0
            }
            // A metric that is not available (NaN: a signed row's entropy) is left out.
            for (auto [series, value] :
                 {std::pair {&maxWeight, m.maxWeight(i)}, std::pair {&entropy, m.entropy(i)},
                  std::pair {&effective, m.effectiveTerms(i)}})
                if (std::isfinite(value))
                    series->append(QPointF(i, value));
        }
    }
    const bool showPoints = nQ <= 32;
    for (QLineSeries *s : {m_maxWeight, m_entropy, m_effective})
        s->setPointsVisible(showPoints);
    m_maxWeight->replace(maxWeight);
    m_entropy->replace(entropy);
    m_effective->replace(effective);
    m_masked->replace(masked);
    m_masked->setVisible(!masked.isEmpty());

    const double span = std::max(1, nQ - 1);
    m_queryCount = nQ;
    m_xAxis->setRange(nQ > 1 ? -0.02 * span : -0.5, nQ > 1 ? span * 1.02 : 0.5);
    fitXTicks();
    m_entropyAxis->setRange(0, niceUpperBound(std::max(0.1, std::log(double(nK)))));
    m_effectiveAxis->setRange(0, niceUpperBound(std::max(1.0, double(nK))));
}

void RowMetricsChart::fitAxisTitles() const
{
    const qreal height = m_view->chart()->plotArea().height();
    const std::pair<QValueAxis *, QStringList> titles[]
        = {{m_maxAxis, {tr("max weight"), tr("max w")}},
           {m_entropyAxis, {tr("entropy (nats)"), tr("entropy"), tr("nats")}},
           {m_effectiveAxis, {tr("effective terms"), tr("terms")}}};
    for (const auto &[axis, candidates] : titles) {
        const QFontMetricsF fm(axis->titleFont());
        QString fitting; // none fits: no title (the legend and the axis colour name it)
        for (const QString &title : candidates) {
            // Qt keeps a little padding at each end of the title.
            if (height > 0 && fm.horizontalAdvance(title) + 4 <= height) {
                fitting = title;
                break;
            }
        }
        if (height <= 0)
            fitting = candidates.front(); // not laid out yet
        if (axis->titleText() != fitting)
            axis->setTitleText(fitting);
    }
}

void RowMetricsChart::fitXTicks() const
{
    // Integer ticks at a 1-2-5 step, anchored at row 0: about eight, or as many labels as fit
    // side by side in the plot (the widest is n_q − 1, plus a gap of two digits).
    const int nQ = std::max(m_queryCount, 1);
    const double span = std::max(1, nQ - 1);
    const QFontMetricsF fm(m_xAxis->labelsFont());
    const qreal labelW = fm.horizontalAdvance(QString::number(nQ - 1) + QStringLiteral("00"));
    const qreal width = m_view->chart()->plotArea().width();
    const double fit = width > 0 ? std::floor(width / std::max<qreal>(labelW, 1.0)) : 8.0;
    const double ticks = std::clamp(fit - 1.0, 1.0, 8.0); // intervals between fit labels
    const double raw = std::max(1.0, span / ticks);
    const double decade = std::pow(10.0, std::floor(std::log10(raw)));
    double step = decade;
    for (double f : {1.0, 2.0, 5.0, 10.0}) {
        if (f * decade >= raw) {
            step = f * decade;
            break;
        }
    }
    m_xAxis->setTickType(QValueAxis::TicksDynamic);
    m_xAxis->setTickAnchor(0);
    if (m_xAxis->tickInterval() != step)
        m_xAxis->setTickInterval(step);
}

} // namespace attn
