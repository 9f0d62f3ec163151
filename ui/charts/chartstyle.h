#pragma once
// Small shared helpers of the metric charts: theme from the system palette, series pens.

#include <QChart>
#include <QColor>
#include <QPen>

class QLogValueAxis;
class QWidget;

namespace attn::chartstyle {

/// Light or dark Qt Charts theme following the widget's palette, fonts from the widget.
void applyTheme(QChart *chart, const QWidget *widget);
/// Qualitative colours (Okabe–Ito, readable for colour-blind viewers).
QColor unscaledColor(); ///< vermillion
QColor scaledColor(); ///< blue
QColor thirdColor(); ///< bluish green
QColor markerColor(const QWidget *widget); ///< grey that contrasts with the background
QPen seriesPen(const QColor &color, qreal width = 2.0, Qt::PenStyle style = Qt::SolidLine);

/// Labels of a log axis with `base` over [min, max]: its powers of the base ("2", … "2048").
QStringList logAxisLabels(double min, double max, double base);
/// Width the labels of `axis` with `base` need side by side: count × (widest label + a gap of
/// two digits), logical pixels.
qreal logAxisLabelsWidth(const QLogValueAxis *axis, double base);
/// Keeps the labels of a horizontal base-2 log axis legible: sets the smallest base of 2, 4
/// and 8 whose labels fit in `width` (the plot's width), so labels are thinned rather than
/// elided by Qt Charts ("10…"). Returns the base set.
double fitLogAxisLabels(QLogValueAxis *axis, qreal width);

} // namespace attn::chartstyle
