#pragma once
// The options `attnlab compute` and `attnlab heatmap` share for the position scheme, grouped-query
// heads and the sliding window: --positional none|sinusoidal|rope|alibi, --rope-convention
// interleaved|half, --rope-base B, --kv-heads G, --window W, --sinks S.

#include "core/attention/positional.h"
#include "core/base/types.h"

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

/// Parses and checks them: --positional one of the four schemes; --rope-convention interleaved
/// or half and --rope-base in [1, 1e12], both only with rope; --kv-heads in [1, 4096];
/// --window in [1, 4096] and --sinks in [0, 4096] (the window's and the session file's ranges,
/// SessionParameters::maxSequence), --sinks only with --window. Returns nullopt and sets *error
/// to a message naming the option and the value otherwise.
std::optional<PositionSettings> positionSettings(const QCommandLineParser &parser, QString *error);

/// A "note: …" line for stderr when the sliding window of `settings` masks no cell of an
/// n_q × n_k problem (w ≥ min(n_q, n_k), or every key before a window is a sink): the result is
/// then the causal mask alone, as in the window and with a session. Empty otherwise (and
/// without a window).
QString windowNote(const PositionSettings &settings, Index nQ, Index nK);

} // namespace attn::cli
