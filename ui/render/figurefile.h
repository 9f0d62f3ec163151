#pragma once
// What every figure of the app (the heads grid, the steps and A/B figures, charts as shown)
// shares when it becomes a file: PNG, SVG and PDF from one paint function, written atomically
// (QSaveFile: a failed write leaves an existing file as it was), and the small drawing helpers
// of their colourbars and axes.

#include "ui/render/colormap.h"

#include <QByteArray>
#include <QColor>
#include <QFont>
#include <QFontMetricsF>
#include <QImage>
#include <QRectF>
#include <QSize>
#include <QString>
#include <QVector>

#include <functional>

class QPainter;

namespace attn {

/// Paints a figure into `bounds` (logical pixels; points in a PDF). `vectorOutput` is true for
/// SVG and PDF (cells as rectangles or an embedded image, no device-pixel snapping).
using FigurePainter
    = std::function<void(QPainter *painter, const QRectF &bounds, bool vectorOutput)>;

/// The figure as an ARGB32 image of size·dpr device pixels (dpr ≤ 0 counts as 1), filled with
/// `background` first.
QImage renderFigure(QSize size, qreal dpr, const QColor &background, const FigurePainter &paint);

/// PNG of renderFigure(size, dpr, …) at `path`. False with `error` ("cannot write '<path>': …")
/// for an empty size, dpr ≤ 0, more than 32768 device pixels a side, or a failed write.
bool writeFigurePng(const QString &path, QSize size, qreal dpr, const QColor &background,
                    const FigurePainter &paint, QString *error);

/// `bytes` at `path`, atomically (QSaveFile, unbuffered, short writes retried): on any failure
/// (a full disk: "No space left on device") nothing is left and an existing file is kept.
/// False with `error` ("cannot write '<path>': <reason>").
bool writeFileBytes(const QString &path, const QByteArray &bytes, QString *error);

/// `image` as PNG at `path` (atomically). False with `error` on a failed write.
bool writeImagePng(const QString &path, const QImage &image, QString *error);

/// SVG of size × size logical pixels (viewBox likewise) with a <title> and <desc>.
bool writeFigureSvg(const QString &path, QSize size, const QString &title,
                    const QString &description, const FigurePainter &paint, QString *error);

/// One-page PDF of size points (72 dpi: one logical pixel = one point), no margins.
bool writeFigurePdf(const QString &path, QSize size, const QString &title,
                    const FigurePainter &paint, QString *error);

/// The writer the suffix of `path` names (.png, .svg or .pdf, any case). False with `error`
/// naming the suffix otherwise.
bool writeFigure(const QString &path, QSize size, qreal dpr, const QColor &background,
                 const QString &title, const QString &description, const FigurePainter &paint,
                 QString *error);

namespace figure {

/// DejaVu Sans (the font shipped for offscreen rendering) at `pixelSize` (at least 1) pixels.
QFont makeFont(qreal pixelSize, bool bold = false);
/// The fonts and colours a figure writes its text with.
struct TextStyle
{
    QFont font; ///< makeFont(pixelSize)
    QFont bold; ///< makeFont(pixelSize, true)
    QFontMetricsF fm; ///< of `font`
    QColor fg; ///< the foreground
    QColor muted; ///< the foreground at 75 % opacity
};
TextStyle textStyle(qreal pixelSize, const QColor &foreground);
/// A leading '-' replaced by the typographic minus U+2212.
QString minusSign(QString s);
/// A colourbar tick: 3 significant digits, |v| < 1e-300 as "0", U+2212 minus.
QString formatTick(double v);
/// The smallest of 1, 2, 5, 10, 20, 50, … (up to 1e9) that is at least `minimum`.
int niceStep(double minimum);
/// About `count` ticks over [lo, hi] at a step of 1, 2, 2.5 or 5 × 10^k; {lo} when hi ≤ lo.
QVector<double> linearTicks(double lo, double hi, int count);
/// The powers of ten in [lo, hi] (0 < lo); {lo, hi} when fewer than two.
QVector<double> logTicks(double lo, double hi);
/// A symmetric log scale's ticks over [−top, top]: 0 and ±10^k every second decade from the
/// largest power of ten ≤ top down to `linthresh` (at most three each side).
QVector<double> symLogTicks(double top, double linthresh);
/// A colour scale's ticks: logTicks, symLogTicks or linearTicks(vmin, vmax, linearCount).
QVector<double> colorBarTicks(const ColorNorm &norm, int linearCount);
/// The hatch colour drawn over a masked cell of colour `base`.
QColor hatchColor(QRgb base);
/// A legend entry's swatch, as the heatmap figures' legends draw it: `box` filled with `base`
/// and hatched as the cells of mask state `hatch` (bits of MaskState: causal and padding as
/// diagonals, the window as horizontal and a custom mask as vertical lines, 0.3 `em` apart; 0
/// for none), then outlined in `border` (a cosmetic pen, left set on `painter`). Drawn as an
/// image of box × `devScale` pixels, so the hatch stays inside the box in SVG too
/// (QSvgGenerator ignores clipping).
void drawLegendSwatch(QPainter *painter, const QRectF &box, QRgb base, int hatch, qreal em,
                      qreal devScale, const QColor &border);

} // namespace figure

} // namespace attn
