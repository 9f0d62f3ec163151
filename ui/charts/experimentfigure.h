#pragma once
// Figures for experiment results (charts and heatmaps), shared by the Experiments panel and
// `attnlab experiment --figure`. One widget tree serves both: the panel shows it, the export
// lays it out off screen at the requested size and paints it with QWidget::render into a QImage
// (PNG) or a QSvgGenerator (SVG), so a file equals what the window shows.
//
// Figures per experiment (docs/experiments.md): E1 the weight heatmap; E2 max weight and ‖J‖_F vs
// d_k (log axis, unscaled vs scaled) and score std vs √d_k; E3 effective terms and max weight vs
// d_k; E4 one heatmap per head; E5 the output difference per position without and with
// positions (each on its own scale); E6 the rotation error per frequency; E7 the per-position
// output change without / with the causal mask (bars); E8 time and MiB vs n on log–log axes
// with the fitted exponent; E9 loop vs matrix time (bars); E10 the right- and reversed-convention
// heatmaps side by side with their difference; E11 the masked-key weight per fill and dtype
// (bars) over the textbook weights per dtype and fill (the fully masked row); E12 naive vs
// stable float32 softmax heatmaps and the wrong-axis row sums (bars). Columns and matrices are
// picked by name from the result; when they are missing the figure is unavailable (the panel
// still shows the table). Heatmaps use viridis (signed differences RdBu_r) from colormap.h, their
// cells built by buildTileImage (ui/render/tileimage.h); NaN/Inf cells are red and labelled.
// Values at rounding level (< 1e-5) are drawn in units of 10^e, named in the axis title.

#include "core/experiments/experiments.h"

#include <QImage>
#include <QSize>
#include <QString>
#include <QVector>

class QWidget;

namespace attn {

/// A widget showing the result's figure (chart and/or heatmaps), owned by `parent`. When the
/// result lacks what its figure needs, the widget is a QLabel (objectName
/// "experimentFigureUnavailable") saying why.
QWidget *createExperimentFigure(const ExperimentResult &result, QWidget *parent = nullptr);

/// Renders the same figure to `path` (.png or .svg chosen by suffix) at `size` pixels (an empty
/// size takes defaultExperimentFigureSize()). Needs a QApplication (the CLI creates one).
/// Returns false and sets `error` (naming the path) when the suffix is unknown, the result has
/// no figure, or writing fails.
bool exportExperimentFigure(const ExperimentResult &result, const QString &path, QSize size,
                            QString *error);

/// True when the result has a figure; otherwise sets `reason` (e.g. a missing column).
bool experimentHasFigure(const ExperimentResult &result, QString *reason = nullptr);

/// What one heatmap of a figure plots, as createExperimentFigure laid it out.
struct ExperimentHeatmap
{
    QString title; ///< above the cells (the matrix's caption without the experiment id)
    MatrixD values; ///< the matrix shown, n_q × n_k (row i = query i), row-major
    double lo = 0, hi = 1; ///< the colour range: lo → the colormap's first entry, hi → its last
    bool divergent = false; ///< RdBu_r around 0 (signed differences) instead of viridis
    QString rowTitle, columnTitle; ///< the axis titles (rows, columns)
    QImage cells; ///< one pixel per cell (buildTileImage), NaN / ±Inf cells red
};

/// The heatmaps of a figure made by createExperimentFigure, in layout order (row by row).
QVector<ExperimentHeatmap> experimentHeatmaps(const QWidget *figure);

/// A size in pixels that suits the experiment's figure layout (e.g. 1500×520 for E2's three
/// charts in a row).
QSize defaultExperimentFigureSize(const ExperimentResult &result);

} // namespace attn
