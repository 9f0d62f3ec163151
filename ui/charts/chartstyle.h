#pragma once
// Small shared helpers of the metric charts: theme from the system palette, series pens.

#include <QChart>
#include <QColor>
#include <QPen>

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

} // namespace attn::chartstyle
