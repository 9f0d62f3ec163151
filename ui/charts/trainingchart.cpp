#include "ui/charts/trainingchart.h"

#include "ui/charts/chartstyle.h"
#include "ui/render/figurefile.h"

#include <QChart>
#include <QChartView>
#include <QCheckBox>
#include <QComboBox>
#include <QEvent>
#include <QFontMetricsF>
#include <QHBoxLayout>
#include <QLabel>
#include <QLegendMarker>
#include <QLineSeries>
#include <QLogValueAxis>
#include <QVBoxLayout>
#include <QValueAxis>

#include <algorithm>
#include <cmath>
#include <limits>

namespace attn {

using training::StepPoint;

TrainingChart::TrainingChart(QWidget *parent)
    : QWidget(parent)
    , m_metricBox(new QComboBox)
    , m_chart(new QChart)
    , m_view(new QChartView(m_chart))
    , m_a(new QLineSeries)
    , m_b(new QLineSeries)
    , m_markerSeries(new QLineSeries)
    , m_x(new QValueAxis)
    , m_y(new QValueAxis(this)) // the axis not shown belongs to the widget
    , m_logY(new QLogValueAxis(this))
    , m_logBox(new QCheckBox(tr("Log scale")))
{
    m_metricBox->setObjectName(QStringLiteral("trainingMetric"));
    for (Metric m : {Metric::Loss, Metric::MeanMaxWeight, Metric::JacobianNorm, Metric::GradNormQk})
        m_metricBox->addItem(metricName(m), int(m));
    m_metricBox->setToolTip(tr("What the curves show: every value is core's, before each update"));
    connect(m_metricBox, &QComboBox::currentIndexChanged, this,
            [this](int i) { setMetric(Metric(m_metricBox->itemData(i).toInt())); });

    m_view->setObjectName(QStringLiteral("trainingChartView"));
    m_view->setRenderHint(QPainter::Antialiasing);
    m_view->setFocusPolicy(Qt::ClickFocus);
    m_chart->legend()->setAlignment(Qt::AlignBottom);
    m_chart->setMargins(QMargins(4, 4, 4, 4));
    m_a->setName(tr("A"));
    m_b->setName(tr("B"));
    m_markerSeries->setName(tr("scrubbed step"));
    for (QLineSeries *s : {m_a, m_b, m_markerSeries}) {
        s->setUseOpenGL(false);
        m_chart->addSeries(s);
    }
    m_x->setTitleText(tr("step"));
    m_x->setLabelFormat(QStringLiteral("%d"));
    m_y->setLabelFormat(QStringLiteral("%.3g"));
    m_view->setMinimumHeight(minimumViewHeight);
    m_chart->addAxis(m_x, Qt::AlignBottom);
    m_logY->setLabelFormat(QStringLiteral("%.0e"));
    m_logY->setBase(10);
    m_logY->setMinorTickCount(0); // decade lines only: cheap to redraw 30 times a second
    m_chart->addAxis(m_logY, Qt::AlignLeft);
    for (QLineSeries *s : {m_a, m_b, m_markerSeries}) {
        s->attachAxis(m_x);
        s->attachAxis(m_logY);
    }
    m_chart->legend()->markers(m_markerSeries).constFirst()->setVisible(false);
    // The log axis' labels are spaced for the plot's height (placeLogAxis).
    connect(m_chart, &QChart::plotAreaChanged, this, [this] {
        if (m_log)
            placeLogAxis();
    });
    m_logBox->setObjectName(QStringLiteral("trainingLogScale"));
    m_logBox->setChecked(true);
    connect(m_logBox, &QCheckBox::toggled, this, &TrainingChart::setLogScale);
    applyStyle();

    auto *top = new QHBoxLayout;
    top->setContentsMargins(0, 0, 0, 0);
    top->addWidget(new QLabel(tr("Curve:")));
    top->addWidget(m_metricBox);
    top->addWidget(m_logBox);
    top->addStretch(1);
    auto *layout = new QVBoxLayout(this);
    layout->setContentsMargins(0, 0, 0, 0);
    layout->addLayout(top);
    layout->addWidget(m_view, 1);
    refresh();
}

QString TrainingChart::metricName(Metric metric)
{
    switch (metric) {
    case Metric::Loss:
        return tr("loss (MSE)");
    case Metric::MeanMaxWeight:
        return tr("mean max weight");
    case Metric::JacobianNorm:
        return tr("mean softmax Jacobian ‖J‖_F");
    case Metric::GradNormQk:
        return tr("gradient norm at W_Q, W_K");
    }
    return {};
}

void TrainingChart::setHistory(const training::TrainingHistory *history)
{
    m_history = history;
    refresh();
}

void TrainingChart::setRunNames(const QString &a, const QString &b)
{
    m_a->setName(a);
    m_b->setName(b);
}

void TrainingChart::setMetric(Metric metric)
{
    m_metric = metric;
    const int index = m_metricBox->findData(int(metric));
    if (index >= 0 && index != m_metricBox->currentIndex())
        m_metricBox->setCurrentIndex(index);
    refresh();
}

void TrainingChart::setLogScale(bool on)
{
    if (on == m_log)
        return;
    m_log = on;
    m_logBox->setChecked(on);
    QAbstractAxis *from = on ? static_cast<QAbstractAxis *>(m_y) : m_logY;
    QAbstractAxis *to = on ? static_cast<QAbstractAxis *>(m_logY) : m_y;
    for (QLineSeries *s : {m_a, m_b, m_markerSeries})
        s->detachAxis(from);
    m_chart->removeAxis(from);
    from->setParent(this);
    m_chart->addAxis(to, Qt::AlignLeft);
    for (QLineSeries *s : {m_a, m_b, m_markerSeries})
        s->attachAxis(to);
    refresh();
}

void TrainingChart::setMarker(std::int64_t step)
{
    m_marker = step;
    refresh();
}

double TrainingChart::value(const StepPoint &p) const
{
    switch (m_metric) {
    case Metric::Loss:
        return p.loss;
    case Metric::MeanMaxWeight:
        return p.meanMaxWeight;
    case Metric::JacobianNorm:
        return p.meanJacobianNorm;
    case Metric::GradNormQk:
        return p.gradNormQk;
    }
    return p.loss;
}

void TrainingChart::refresh()
{
    const std::int64_t steps = m_history ? m_history->steps() : 0;
    const std::int64_t stride = std::max<std::int64_t>(1, (steps + maxPoints - 1) / maxPoints);
    double top = 0, bottom = std::numeric_limits<double>::infinity();
    const auto drawn = [this](double v) { return std::isfinite(v) && (!m_log || v > 0); };
    for (const auto &[series, points] : {std::pair {m_a, m_history ? &m_history->a() : nullptr},
                                         std::pair {m_b, m_history ? &m_history->b() : nullptr}}) {
        QList<QPointF> list;
        if (points) {
            list.reserve(qsizetype(steps / stride + 2));
            for (std::int64_t i = 0; i < steps; i += stride) {
                const double v = value((*points)[std::size_t(i)]);
                if (drawn(v)) {
                    list.append(QPointF(double(i + 1), v));
                    top = std::max(top, v);
                    bottom = std::min(bottom, v);
                }
            }
            if (steps > 0 && (steps - 1) % stride != 0) {
                const double v = value(points->back());
                if (drawn(v)) {
                    list.append(QPointF(double(steps), v));
                    top = std::max(top, v);
                    bottom = std::min(bottom, v);
                }
            }
        }
        series->replace(list);
    }
    if (top <= 0)
        top = 1;
    if (!std::isfinite(bottom) || bottom >= top)
        bottom = top / 10;
    const double xMax = double(std::max<std::int64_t>(steps, 10));
    m_x->setRange(0, xMax);
    m_x->setTickType(QValueAxis::TicksDynamic);
    m_x->setTickAnchor(0);
    m_x->setTickInterval(figure::niceStep(xMax / 6));
    // Log: whole decades around the data (placeLogAxis); linear: from 0.
    if (m_log) {
        m_bottomDecade = int(std::floor(std::log10(bottom)));
        m_topDecade = int(std::ceil(std::log10(top * 1.0001)));
        placeLogAxis();
    } else {
        m_y->setRange(0.0, top * 1.05);
        placeMarker();
    }
    m_y->setTitleText(metricName(m_metric));
    m_logY->setTitleText(metricName(m_metric));
}

int TrainingChart::decadesPerLabel() const
{
    // Labels at least two text lines apart over the plot's height: otherwise Qt Charts elides
    // them to "..." (losses spanning many decades in a short chart).
    const int decades = std::max(1, m_topDecade - m_bottomDecade);
    const qreal plot = m_chart->plotArea().height() > 0
        ? m_chart->plotArea().height()
        : qreal(std::max(m_view->height(), minimumViewHeight)) * 0.6;
    const qreal need = 2 * QFontMetricsF(m_logY->labelsFont()).height();
    int k = 1;
    while (k < decades && (decades + k - 1) / k * need > plot)
        ++k;
    return k;
}

void TrainingChart::placeLogAxis()
{
    const int k = decadesPerLabel();
    const auto floorTo = [k](int d) { return int(std::floor(double(d) / k)) * k; };
    const auto ceilTo = [k](int d) { return int(std::ceil(double(d) / k)) * k; };
    int lo = floorTo(m_bottomDecade), hi = ceilTo(m_topDecade);
    if (hi <= lo)
        hi = lo + k;
    m_logY->setBase(std::pow(10.0, k));
    m_logY->setRange(std::pow(10.0, lo), std::pow(10.0, hi));
    placeMarker();
}

void TrainingChart::placeMarker()
{
    const std::int64_t steps = m_history ? m_history->steps() : 0;
    if (m_marker < 0 || steps <= 0) {
        m_markerSeries->clear();
        return;
    }
    const double lo = m_log ? m_logY->min() : 0.0;
    const double hi = m_log ? m_logY->max() : m_y->max();
    m_markerSeries->replace({QPointF(double(m_marker), lo), QPointF(double(m_marker), hi)});
}

QList<QPointF> TrainingChart::pointsA() const
{
    return m_a->points();
}

QList<QPointF> TrainingChart::pointsB() const
{
    return m_b->points();
}

void TrainingChart::changeEvent(QEvent *event)
{
    QWidget::changeEvent(event);
    if (event->type() == QEvent::PaletteChange)
        applyStyle();
}

void TrainingChart::applyStyle()
{
    chartstyle::applyTheme(m_chart, this); // a theme change resets the series' pens
    m_a->setPen(chartstyle::seriesPen(chartstyle::scaledColor()));
    m_b->setPen(chartstyle::seriesPen(chartstyle::unscaledColor()));
    m_markerSeries->setPen(chartstyle::seriesPen(chartstyle::markerColor(this), 1.0, Qt::DashLine));
}

} // namespace attn
