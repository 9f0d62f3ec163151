#pragma once
// The head atlas as a figure (`attnlab heads --out atlas.png|svg|pdf`): a layers × heads grid of
// cells coloured by one head score, with layer and head labels and a colourbar. Written through
// the app's figure files (ui/render/figurefile.h: one paint function for PNG, SVG and PDF) in a
// colormap of ui/render/colormap.h.

#include "core/analysis/headscores.h"

#include <QString>
#include <QStringList>

#include <utility>

namespace attn::cli {

/// The scores of every stack a figure can show, named as in the json of `attnlab heads` (a
/// model run adds its own, heads.cpp).
QStringList atlasScoreNames();

/// The colour range of score `name` over `values`: [0, 1] for the fractions (pattern scores,
/// sink, and a model's prefix_matching and value_norm_sink); [0, largest finite value] for the
/// others (entropy, effective terms, distance, value_norm_mass, ablation_kl; [0, 1] when none is
/// above 0).
std::pair<double, double> atlasRange(const QString &name, const MatrixD &values);

/// Writes the figure of `values` (layers × heads; NaN cells grey) for score `name` to `path`
/// (.png, .svg or .pdf), the `caption` lines under the title. False with `error` naming the
/// path.
bool writeHeadAtlas(const QString &path, const MatrixD &values, const QString &name,
                    const QStringList &caption, QString *error);

} // namespace attn::cli
