#pragma once
// The head atlas as a figure: a layers × heads grid of cells coloured by one head score
// (core/analysis/headscores.h), with layer and head labels, a colourbar and, optionally, the
// cells at or above a threshold outlined. One paint function for the window's Atlas tab and the
// files of `attnlab heads --out` and the tab's export (ui/render/figurefile.h: PNG, SVG, PDF), in
// a colormap of ui/render/colormap.h.

#include "core/analysis/headscores.h"

#include <QPainter>
#include <QRectF>
#include <QSize>
#include <QString>
#include <QStringList>

#include <optional>
#include <utility>

namespace attn {

/// The scores of every stack a figure can show, named as in the json of `attnlab heads` (a
/// model run adds its own, app/cli/heads.cpp).
QStringList atlasScoreNames();

/// The colour range of score `name` over `values`: [0, 1] for the fractions (pattern scores,
/// sink, and a model's prefix_matching and value_norm_sink); [0, largest finite value] for the
/// others (entropy, effective terms, distance, value_norm_mass, ablation_kl; [0, 1] when none is
/// above 0).
std::pair<double, double> atlasRange(const QString &name, const MatrixD &values);

/// What one atlas figure shows.
struct HeadAtlasFigure
{
    MatrixD values; ///< layers × heads, row-major by layer; NaN cells grey ("no value")
    QString name; ///< the score's name (atlasScoreNames, or a model's own)
    QStringList caption; ///< lines under the title
    /// Cells with a value ≥ this are outlined (the classification threshold); none when unset.
    std::optional<double> threshold;

    /// The figure's natural size in logical pixels (every text line whole).
    QSize naturalSize() const;
    /// The grid of cells inside a figure painted in `bounds`: layers × heads cells of side
    /// grid.width() / heads, layer l in row l.
    QRectF grid(const QRectF &bounds) const;
    /// The (layer, head) of the cell at `pos` of a figure painted in `bounds`; none off the grid.
    std::optional<std::pair<Index, Index>> cellAt(const QRectF &bounds, QPointF pos) const;
    /// Paints the figure into `bounds` (at its natural size from the top left).
    void paint(QPainter *painter, const QRectF &bounds) const;
    /// Writes the figure to `path` (.png, .svg or .pdf). False with `error` naming the path.
    bool write(const QString &path, QString *error) const;
};

/// Writes the figure of `values` (layers × heads; NaN cells grey) for score `name` to `path`
/// (.png, .svg or .pdf), the `caption` lines under the title. False with `error` naming the
/// path.
bool writeHeadAtlas(const QString &path, const MatrixD &values, const QString &name,
                    const QStringList &caption, QString *error);

} // namespace attn
