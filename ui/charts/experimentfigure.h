#pragma once
// Figures for experiment results (charts and heatmaps), shared by the Experiments panel and
// `attnlab experiment --figure`.

#include <experiments/experiments.h>

#include <QSize>
#include <QString>

class QWidget;

namespace attn {

/// A widget showing the result's figure (chart and/or heatmaps), owned by `parent`.
QWidget *createExperimentFigure(const ExperimentResult &result, QWidget *parent = nullptr);

/// Renders the same figure to `path` (.png or .svg chosen by suffix) at `size` pixels.
/// Returns false and sets `error` (naming the path) when the suffix is unknown or writing fails.
bool exportExperimentFigure(const ExperimentResult &result, const QString &path, QSize size,
                            QString *error);

} // namespace attn
