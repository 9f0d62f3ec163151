#include "positionoptions.h"

#include "common.h"

#include "ui/session/sessionparameters.h"

#include <algorithm>

namespace attn::cli {

QList<QCommandLineOption> positionOptions()
{
    return {
        QCommandLineOption(
            QStringLiteral("positional"),
            QStringLiteral(
                "Position scheme: none, sinusoidal (added to the inputs, Vaswani et "
                "al. 2017), rope (queries and keys of every head rotated, Su et al. "
                "2021) or alibi (per-head linear bias on the scaled scores, Press et "
                "al. 2021; minus m_h*(i - j) with a causal mask, minus m_h*|i - j| without)."),
            QStringLiteral("scheme")),
        QCommandLineOption(
            QStringLiteral("rope-convention"),
            QStringLiteral("RoPE's pairing of dimensions: interleaved (x[2i], x[2i+1]; RoFormer, "
                           "GPT-J) or half (x[i], x[i + d_k/2], rotate_half; GPT-NeoX, Llama). "
                           "Only with --positional rope."),
            QStringLiteral("convention"), QStringLiteral("half")),
        QCommandLineOption(QStringLiteral("rope-base"),
                           QStringLiteral("RoPE's base: plane i turns by position * "
                                          "base^(-2i/d_k). Only with --positional rope."),
                           QStringLiteral("B"), QStringLiteral("10000")),
        QCommandLineOption(
            QStringLiteral("kv-heads"),
            QStringLiteral("Key/value heads g of grouped-query attention (g divides h; query head "
                           "i reads kv head floor(i*g/h); g = 1 multi-query, g = h multi-head)."),
            QStringLiteral("G")),
        QCommandLineOption(QStringLiteral("window"),
                           QStringLiteral("Sliding-window causal mask: query i sees the W keys "
                                          "i - W < j <= i (exactly W keys, plus the sinks)."),
                           QStringLiteral("W")),
        QCommandLineOption(QStringLiteral("sinks"),
                           QStringLiteral("Attention sinks: the first S keys are never masked by "
                                          "the window (StreamingLLM). Only with --window."),
                           QStringLiteral("S")),
    };
}

std::optional<PositionSettings> positionSettings(const QCommandLineParser &parser, QString *error)
{
    PositionSettings s;
    if (parser.isSet(QStringLiteral("positional"))) {
        try {
            s.scheme
                = parsePositionalScheme(parser.value(QStringLiteral("positional")).toStdString());
        } catch (const InvalidArgument &) {
            *error = QStringLiteral("--positional must be none, sinusoidal, rope or alibi, got "
                                    "'%1'")
                         .arg(parser.value(QStringLiteral("positional")));
            return std::nullopt;
        }
        s.schemeGiven = true;
    }
    const bool rope = s.scheme == PositionalScheme::Rope;
    for (const char *name : {"rope-convention", "rope-base"}) {
        if (parser.isSet(QLatin1String(name)) && !rope) {
            *error = QStringLiteral("--%1 needs --positional rope").arg(QLatin1String(name));
            return std::nullopt;
        }
    }
    const QString convention = parser.value(QStringLiteral("rope-convention"));
    if (convention == QLatin1String("interleaved"))
        s.ropeConvention = RopeConvention::Interleaved;
    else if (convention == QLatin1String("half"))
        s.ropeConvention = RopeConvention::Half;
    else {
        *error = QStringLiteral("--rope-convention must be interleaved or half, got '%1'")
                     .arg(convention);
        return std::nullopt;
    }
    const auto base = doubleOption(parser, QStringLiteral("rope-base"), 1.0, 1e12, error);
    if (!base)
        return std::nullopt;
    s.ropeBase = *base;
    if (parser.isSet(QStringLiteral("kv-heads"))) {
        const auto g = intOption(parser, QStringLiteral("kv-heads"), 1, 4096, error);
        if (!g)
            return std::nullopt;
        s.kvHeads = Index(*g);
    }
    if (parser.isSet(QStringLiteral("window"))) {
        // Up to the longest sequence (the tile engine's); validate() bounds it by the n allowed.
        const auto w = intOption(parser, QStringLiteral("window"), 1,
                                 SessionParameters::maxLongSequence, error);
        if (!w)
            return std::nullopt;
        s.window = Index(*w);
    }
    if (parser.isSet(QStringLiteral("sinks"))) {
        if (s.window == 0) {
            *error = QStringLiteral("--sinks needs --window (sinks are the keys the sliding "
                                    "window never masks)");
            return std::nullopt;
        }
        const auto n = intOption(parser, QStringLiteral("sinks"), 0,
                                 SessionParameters::maxLongSequence, error);
        if (!n)
            return std::nullopt;
        s.sinks = Index(*n);
    }
    return s;
}

QString windowNote(const PositionSettings &settings, Index nQ, Index nK)
{
    if (settings.window <= 0)
        return {};
    // Query i's window starts at key max(min(i + 1, n_k) - w, 0) (top-left causal limit); the
    // last query's start is the largest, min(n_q, n_k) - w. Keys before it other than the
    // sinks are masked, so the window masks a cell only when that start exceeds the sinks.
    const Index reach = std::min(nQ, nK) - settings.window;
    if (reach > settings.sinks)
        return {};
    const QString shape = nQ == nK ? QStringLiteral("n = %1").arg(nQ)
                                   : QStringLiteral("n_q = %1, n_k = %2").arg(nQ).arg(nK);
    if (reach <= 0)
        return QStringLiteral("note: --window %1 is not shorter than the sequence (%2): the "
                              "sliding window masks no key, only the causal mask applies")
            .arg(settings.window)
            .arg(shape);
    return QStringLiteral("note: --window %1 with --sinks %2 masks no key (%3): every key "
                          "before a window is a sink, only the causal mask applies")
        .arg(settings.window)
        .arg(settings.sinks)
        .arg(shape);
}

} // namespace attn::cli
