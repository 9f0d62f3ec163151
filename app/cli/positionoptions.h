#pragma once
// The options `attnlab compute` and `attnlab heatmap` share for the position scheme, grouped-query
// heads and the sliding window: --positional none|sinusoidal|rope|alibi, --rope-convention
// interleaved|half, --rope-base B, --kv-heads G, --window W, --sinks S.

#include "core/positional.h"
#include "core/types.h"

#include <QCommandLineOption>
#include <QCommandLineParser>
#include <QList>
#include <QString>

#include <optional>

namespace attn::cli {

struct PositionSettings
{
    PositionalScheme scheme = PositionalScheme::None;
    bool schemeGiven = false; ///< --positional was on the command line
    RopeConvention ropeConvention = RopeConvention::Half;
    double ropeBase = kRopeDefaultBase;
    std::optional<Index> kvHeads; ///< --kv-heads, when given
    Index window = 0; ///< --window, 0 = none
    Index sinks = 0; ///< --sinks
};

/// The six options with their defaults and help texts.
QList<QCommandLineOption> positionOptions();

/// Parses and checks them (--rope-convention / --rope-base only with rope, --sinks only with
/// --window). Returns nullopt and sets *error naming the option otherwise.
std::optional<PositionSettings> positionSettings(const QCommandLineParser &parser, QString *error);

} // namespace attn::cli
