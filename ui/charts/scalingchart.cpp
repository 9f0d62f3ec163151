#include "ui/charts/scalingchart.h"

#include "ui/charts/chartstyle.h"

#include <QCursor>
#include <QEvent>
#include <QGraphicsLayout>
#include <QLegendMarker>
#include <QLineSeries>
#include <QLogValueAxis>
#include <QScatterSeries>
#include <QToolTip>
#include <QValueAxis>

#include <algorithm>
#include <cmath>
#include <optional>

namespace attn {

namespace {

QList<QPointF> toPoints(const std::vector<double> &x, const std::vector<double> &y)
{
    QList<QPointF> points;
    points.reserve(qsizetype(std::min(x.size(), y.size())));
    for (std::size_t i = 0; i < x.size() && i < y.size(); ++i) {
        if (std::isfinite(y[i]))
            points.append(QPointF(x[i], y[i]));
    }
    return points;
}

// y at x on a curve whose x is log-spaced (interpolated linearly in log₂ x); nullopt outside.
std::optional<double> interpolateLog2(const QList<QPointF> &points, double x)
{
    for (qsizetype i = 0; i + 1 < points.size(); ++i) {
        const QPointF a = points[i], b = points[i + 1];
        if (x >= a.x() && x <= b.x()) {
            const double t
                = (std::log2(x) - std::log2(a.x())) / (std::log2(b.x()) - std::log2(a.x()));
            return a.y() + t * (b.y() - a.y());
        }
    }
    return std::nullopt;
}

} // namespace

ScalingChart::ScalingChart(const QString &title, const QString &yTitle, QWidget *parent)
    : QChartView(parent)
    , m_title(title)
{
    setRenderHint(QPainter::Antialiasing);
    setMinimumSize(260, 180);

    auto *chart = new QChart;
    chart->legend()->setAlignment(Qt::AlignBottom);
    setChart(chart);
    chartstyle::applyTheme(chart, this);

    m_unscaled = new QLineSeries(chart);
    m_unscaled->setName(tr("unscaled"));
    m_unscaled->setPointsVisible(true);
    m_scaled = new QLineSeries(chart);
    m_scaled->setName(tr("scaled 1/√d_k"));
    m_scaled->setPointsVisible(true);
    m_custom = new QLineSeries(chart);
    m_custom->setName(tr("α, τ"));
    m_custom->setPointsVisible(true);
    m_marker = new QLineSeries(chart);
    m_markerPoints = new QScatterSeries(chart);
    m_markerPoints->setMarkerSize(9);
    m_markerPoints->setName(tr("current d_k"));

    for (QXYSeries *s : {static_cast<QXYSeries *>(m_unscaled), static_cast<QXYSeries *>(m_scaled),
                         static_cast<QXYSeries *>(m_custom), static_cast<QXYSeries *>(m_marker),
                         static_cast<QXYSeries *>(m_markerPoints)})
        chart->addSeries(s);

    m_xAxis = new QLogValueAxis(chart);
    m_xAxis->setBase(2);
    m_xAxis->setLabelFormat(QStringLiteral("%g"));
    m_xAxis->setTitleText(tr("d_k (log₂ axis)"));
    m_xAxis->setMinorTickCount(0);
    m_xAxis->setRange(1.5, 2800);
    m_yAxis = new QValueAxis(chart);
    m_yAxis->setTitleText(yTitle);
    m_yAxis->setLabelFormat(QStringLiteral("%g"));
    chart->addAxis(m_xAxis, Qt::AlignBottom);
    chart->addAxis(m_yAxis, Qt::AlignLeft);
    for (QAbstractSeries *s : chart->series()) {
        s->attachAxis(m_xAxis);
        s->attachAxis(m_yAxis);
    }
    // The vertical marker line needs no legend entry of its own (the points carry the name).
    chart->legend()->markers(m_marker).constFirst()->setVisible(false);

    for (QXYSeries *s : {static_cast<QXYSeries *>(m_unscaled), static_cast<QXYSeries *>(m_scaled),
                         static_cast<QXYSeries *>(m_custom)}) {
        connect(s, &QXYSeries::hovered, this, [this, s](const QPointF &p, bool state) {
            if (state)
                QToolTip::showText(
                    QCursor::pos(),
                    tr("%1\nd_k = %2: %3").arg(s->name()).arg(p.x()).arg(p.y(), 0, 'g', 4), this);
            else
                QToolTip::hideText();
        });
    }

    // The plot's width decides how many d_k labels fit (a narrow dock thins them).
    connect(chart, &QChart::plotAreaChanged, this, &ScalingChart::fitAxisLabels);

    m_redrawTimer.setSingleShot(true);
    m_redrawTimer.setInterval(16); // at most one repaint per frame while a slider moves
    connect(&m_redrawTimer, &QTimer::timeout, this, &ScalingChart::redraw);
    applyTheme();
    updateTitle();
}

void ScalingChart::applyTheme()
{
    chartstyle::applyTheme(chart(), this);
    m_unscaled->setPen(chartstyle::seriesPen(chartstyle::unscaledColor()));
    m_unscaled->setColor(chartstyle::unscaledColor());
    m_scaled->setPen(chartstyle::seriesPen(chartstyle::scaledColor()));
    m_scaled->setColor(chartstyle::scaledColor());
    const QColor custom(0x2c, 0xa0, 0x2c); // green, apart from the two curves and the marker
    m_custom->setPen(chartstyle::seriesPen(custom, 2.0, Qt::DashLine));
    m_custom->setColor(custom);
    const QColor marker = chartstyle::markerColor(this);
    m_marker->setPen(chartstyle::seriesPen(marker, 1.5, Qt::DashLine));
    m_markerPoints->setColor(marker);
    m_markerPoints->setBorderColor(marker);
}

double ScalingChart::xAxisBase() const
{
    return m_xAxis->base();
}

QStringList ScalingChart::xAxisLabels(double base) const
{
    return chartstyle::logAxisLabels(m_xAxis->min(), m_xAxis->max(),
                                     base > 1 ? base : m_xAxis->base());
}

qreal ScalingChart::xAxisLabelsWidth(double base) const
{
    return chartstyle::logAxisLabelsWidth(m_xAxis, base > 1 ? base : m_xAxis->base());
}

void ScalingChart::fitAxisLabels()
{
    chartstyle::fitLogAxisLabels(m_xAxis, chart()->plotArea().width());
}

void ScalingChart::changeEvent(QEvent *event)
{
    QChartView::changeEvent(event);
    if (event->type() == QEvent::PaletteChange || event->type() == QEvent::FontChange)
        applyTheme();
}

void ScalingChart::setSweep(std::shared_ptr<const ScalingSweepData> data)
{
    m_data = std::move(data);
    m_error.clear();
    scheduleRedraw();
}

void ScalingChart::setCurrentDk(int dk)
{
    if (dk == m_dk)
        return;
    m_dk = dk;
    scheduleRedraw();
}

void ScalingChart::setBusy(bool busy)
{
    if (busy == m_busy)
        return;
    m_busy = busy;
    updateTitle();
}

void ScalingChart::setErrorText(const QString &message)
{
    m_error = message;
    updateTitle();
}

QList<QPointF> ScalingChart::unscaledPoints() const
{
    return m_unscaled->points();
}

QList<QPointF> ScalingChart::scaledPoints() const
{
    return m_scaled->points();
}

QList<QPointF> ScalingChart::customPoints() const
{
    return m_custom->points();
}

QString ScalingChart::customName() const
{
    return m_custom->name();
}

namespace {
// The user's setting is one of the two drawn curves: α = 0 (unscaled) or α = ½ at τ = 1.
bool isDrawnCurve(double alpha, double temperature)
{
    return temperature == 1.0 && (alpha == 0.0 || alpha == 0.5);
}
} // namespace

std::pair<double, double> ScalingChart::yRange(double maxValue) const
{
    return {0.0, maxValue > 0 ? maxValue * 1.08 : 1.0};
}

void ScalingChart::scheduleRedraw()
{
    if (!m_redrawTimer.isActive())
        m_redrawTimer.start();
}

void ScalingChart::redraw()
{
    QList<QPointF> unscaled, scaled, custom;
    if (m_data) {
        unscaled = toPoints(m_data->dk, unscaledValues(*m_data));
        scaled = toPoints(m_data->dk, scaledValues(*m_data));
        // The third curve only for the setting it was swept with (a new sweep is on its way
        // otherwise) and only when it is not one of the two curves.
        if (!isDrawnCurve(m_alpha, m_temperature) && m_data->alpha == m_alpha
            && m_data->temperature == m_temperature)
            custom = toPoints(m_data->dk, customValues(*m_data));
    }
    m_unscaled->replace(unscaled);
    m_scaled->replace(scaled);
    m_custom->replace(custom);
    m_custom->setName(tr("α = %1, τ = %2").arg(m_alpha, 0, 'g', 3).arg(m_temperature, 0, 'g', 3));
    // Three legend entries fit a narrow dock: with the third curve the current d_k is told by
    // its dashed line alone.
    bool changed = false;
    for (QLegendMarker *marker : chart()->legend()->markers(m_custom)) {
        changed = changed || marker->isVisible() != !custom.isEmpty();
        marker->setVisible(!custom.isEmpty());
    }
    for (QLegendMarker *marker : chart()->legend()->markers(m_markerPoints)) {
        changed = changed || marker->isVisible() != custom.isEmpty();
        marker->setVisible(custom.isEmpty());
    }
    if (changed && chart()->legend()->layout()) // lay the entries out again (else they overlap)
        chart()->legend()->layout()->invalidate();

    double maxValue = 0;
    for (const QList<QPointF> *list : {&unscaled, &scaled, &custom})
        for (const QPointF &p : *list)
            maxValue = std::max(maxValue, p.y());
    const auto [y0, y1] = yRange(maxValue);
    m_yAxis->setRange(y0, y1);
    m_yAxis->applyNiceNumbers(); // round ticks (0, 0.1, 0.2, …)

    const double lo = std::min(1.5, m_dk > 0 ? m_dk / 1.3 : 1.5);
    const double hi = std::max(2800.0, m_dk * 1.3);
    m_xAxis->setRange(lo, hi);
    fitAxisLabels();

    QList<QPointF> marker, markerPoints;
    if (m_dk > 0) {
        marker = {QPointF(m_dk, m_yAxis->min()), QPointF(m_dk, m_yAxis->max())};
        for (const QList<QPointF> *list : {&unscaled, &scaled, &custom}) {
            if (const auto y = interpolateLog2(*list, m_dk))
                markerPoints.append(QPointF(m_dk, *y));
        }
        m_markerPoints->setName(tr("d_k = %1").arg(m_dk));
    } else {
        m_markerPoints->setName(tr("d_k —"));
    }
    m_marker->replace(marker);
    m_markerPoints->replace(markerPoints);
    updateTitle();
}

void ScalingChart::setCurrentScale(double alpha, double temperature)
{
    if (alpha == m_alpha && temperature == m_temperature)
        return;
    m_alpha = alpha;
    m_temperature = temperature;
    scheduleRedraw(); // the third curve follows the setting
    updateTitle();
}

void ScalingChart::updateTitle()
{
    QString sub;
    if (!m_error.isEmpty())
        sub = tr("sweep failed: %1").arg(m_error.toHtmlEscaped());
    else if (m_data)
        sub = tr("E2 sweep: %1 trials × %2 keys per d_k, seed %3")
                  .arg(m_data->trials)
                  .arg(m_data->keys)
                  .arg(m_data->seed);
    else
        sub = tr("E2 sweep: waiting for the first result");
    if (m_busy)
        sub += tr(" · computing…");
    if (m_data && m_error.isEmpty()) {
        const QString note = keysNote(*m_data);
        if (!note.isEmpty())
            sub += QStringLiteral("<br>") + note;
    }
    // Which curve is the user's own setting.
    if (m_temperature == 1.0 && m_alpha == 0.0)
        sub += QStringLiteral("<br>") + tr("your setting α = 0, τ = 1: the unscaled curve");
    else if (m_temperature == 1.0 && m_alpha == 0.5)
        sub += QStringLiteral("<br>") + tr("your setting α = ½, τ = 1: the scaled curve");
    else if (m_data && m_data->alpha == m_alpha && m_data->temperature == m_temperature)
        sub += QStringLiteral("<br>")
            + tr("your α = %1, τ = %2: the dashed green curve (scale d_k<sup>−α</sup>/τ)")
                  .arg(m_alpha, 0, 'g', 3)
                  .arg(m_temperature, 0, 'g', 3);
    else
        sub += QStringLiteral("<br>")
            + tr("your α = %1, τ = %2: its curve is being swept")
                  .arg(m_alpha, 0, 'g', 3)
                  .arg(m_temperature, 0, 'g', 3);
    chart()->setTitle(
        QStringLiteral("<b>%1</b><br><small>%2</small>").arg(m_title.toHtmlEscaped(), sub));
}

MaxWeightChart::MaxWeightChart(QWidget *parent)
    : ScalingChart(tr("Mean max weight vs d_k"), tr("max weight"), parent)
{
    setObjectName(QStringLiteral("maxWeightChart"));
    setWhatsThis(tr("Mean over random queries of the largest softmax weight, for keys whose "
                    "count is the session's n_k. Unscaled scores have std √d_k, so the softmax "
                    "saturates toward one-hot (max → 1) as d_k grows; dividing by √d_k keeps it "
                    "flat (Vaswani et al. 2017, §3.2.1; docs/experiments.md E2)."));
}

QString MaxWeightChart::keysNote(const ScalingSweepData &d) const
{
    // Many keys (a long session): the curves sit far below E2's table of 16 keys.
    if (d.keys <= 64)
        return {};
    return tr("%1 keys: uniform max weight 1/%1 = %2; E2: 16 keys")
        .arg(d.keys)
        .arg(1.0 / d.keys, 0, 'g', 2);
}

QString JacobianNormChart::keysNote(const ScalingSweepData &d) const
{
    // ‖J‖ depends on the number of keys K as well as on d_k: say which K this sweep uses.
    QString note
        = tr("‖J‖ depends on the number of keys: %1 here (the session's n_k; E2: 16)").arg(d.keys);
    // Many keys: the scaled softmax is nearly uniform, whose ‖diag(p) − ppᵀ‖_F is
    // √(1/K − 1/K²) ≈ 1/√K, so the unscaled curve can lie above the scaled one.
    if (d.keys > 64) {
        const double k = d.keys;
        note += QStringLiteral("<br>")
            + tr("%1 keys: scaled is near uniform (‖J‖ ≈ %2), unscaled above it")
                  .arg(d.keys)
                  .arg(std::sqrt(1.0 / k - 1.0 / (k * k)), 0, 'g', 2);
    }
    return note;
}

JacobianNormChart::JacobianNormChart(QWidget *parent)
    : ScalingChart(tr("Mean softmax-Jacobian norm vs d_k"), tr("mean ‖J‖<sub>F</sub>"), parent)
{
    setObjectName(QStringLiteral("jacobianNormChart"));
    setWhatsThis(tr("Mean Frobenius norm of the softmax Jacobian J = diag(p) − ppᵀ: how much "
                    "gradient flows through the softmax. Unscaled it falls toward 0 as d_k grows "
                    "(vanishing gradients); with 1/√d_k it stays flat (docs/experiments.md E2)."));
}

} // namespace attn
