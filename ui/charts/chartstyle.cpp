#include "chartstyle.h"

#include <QPalette>
#include <QWidget>

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

} // namespace attn::chartstyle
