#include "ui/charts/chartstyle.h"

#include <QFontMetricsF>
#include <QLogValueAxis>
#include <QPalette>
#include <QWidget>

#include <cmath>

namespace attn::chartstyle {

namespace {
bool isDark(const QWidget *widget)
{
    return widget->palette().color(QPalette::Window).lightness() < 128;
}
} // namespace

void applyTheme(QChart *chart, const QWidget *widget)
{
    const auto theme = isDark(widget) ? QChart::ChartThemeDark : QChart::ChartThemeLight;
    if (chart->theme() != theme)
        chart->setTheme(theme);
    chart->setBackgroundBrush(widget->palette().color(QPalette::Base));
    chart->setBackgroundRoundness(0);
    chart->setMargins(QMargins(4, 4, 4, 4));
    QFont titleFont = widget->font();
    chart->setTitleFont(titleFont);
    chart->setTitleBrush(widget->palette().color(QPalette::Text));
    chart->legend()->setFont(widget->font());
    chart->legend()->setLabelColor(widget->palette().color(QPalette::Text));
}

QColor unscaledColor()
{
    return QColor(0xD5, 0x5E, 0x00);
}

QColor scaledColor()
{
    return QColor(0x00, 0x72, 0xB2);
}

QColor thirdColor()
{
    return QColor(0x00, 0x9E, 0x73);
}

QColor markerColor(const QWidget *widget)
{
    return isDark(widget) ? QColor(200, 200, 200) : QColor(90, 90, 90);
}

QPen seriesPen(const QColor &color, qreal width, Qt::PenStyle style)
{
    QPen pen(color, width, style);
    pen.setCosmetic(true);
    return pen;
}

QStringList logAxisLabels(double min, double max, double base)
{
    QStringList labels;
    if (!(min > 0) || !(max >= min) || !(base > 1))
        return labels;
    const int first = int(std::ceil(std::log(min) / std::log(base) - 1e-9));
    const int last = int(std::floor(std::log(max) / std::log(base) + 1e-9));
    for (int k = first; k <= last; ++k)
        labels << QString::number(std::pow(base, k), 'g', 6);
    return labels;
}

qreal logAxisLabelsWidth(const QLogValueAxis *axis, double base)
{
    const QFontMetricsF fm(axis->labelsFont());
    const QStringList labels = logAxisLabels(axis->min(), axis->max(), base);
    qreal widest = 0;
    for (const QString &label : labels)
        widest = std::max(widest, fm.horizontalAdvance(label));
    return labels.size() * (widest + fm.horizontalAdvance(QStringLiteral("00")));
}

double fitLogAxisLabels(QLogValueAxis *axis, qreal width)
{
    if (!(width > 0))
        return axis->base();
    double chosen = 8.0; // (bases ≥ 10 mean decades to the timing chart's range helper)
    for (double base : {2.0, 4.0, 8.0}) {
        if (logAxisLabelsWidth(axis, base) <= width) {
            chosen = base;
            break;
        }
    }
    if (chosen != axis->base())
        axis->setBase(chosen);
    return chosen;
}

} // namespace attn::chartstyle
