#include "positionoptions.h"

#include "common.h"

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
        const auto w = intOption(parser, QStringLiteral("window"), 1, std::int64_t(1) << 40, error);
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
        const auto n = intOption(parser, QStringLiteral("sinks"), 0, std::int64_t(1) << 40, error);
        if (!n)
            return std::nullopt;
        s.sinks = Index(*n);
    }
    return s;
}

} // namespace attn::cli
