#pragma once
// Everything the main view's controls set, as one value type (saved in .attnlab.json).

#include "core/attention/positional.h"
#include "core/engine/engineparameters.h"
#include "core/random/torchrandom.h"

#include <QJsonObject>
#include <QString>
#include <QStringList>

#include <memory>
#include <optional>
#include <vector>

namespace attn {

class TensorSource;

/// The engine's parameters (core/engine/engineparameters.h: the fields, limits, validate(),
/// normalized(), scale()) and the Qt-side state of the window: the tensors opened with File →
/// Open Tensors…, and the labels, captions and JSON of sessions.
struct SessionParameters : EngineParameters
{
    /// Tensors loaded with File → Open tensors… (TensorSource), shown instead of the seeded
    /// random inputs; nullptr for random inputs. They fix n, n_k, d_model and h (validate()
    /// says so). Compared by identity; not part of toJson (session files store the path).
    std::shared_ptr<const TensorSource> tensors;

    /// The typed tokens as Qt strings (EngineParameters::tokens holds them as UTF-8).
    QStringList tokenList() const;
    void setTokens(const QStringList &list);

    /// Label of query i / key j: the token when there is one, else the position as text.
    QString queryLabel(Index i) const;
    QString keyLabel(Index j) const;
    /// The same with the position in front of a token ("3:the"), so a repeated word can be
    /// told apart; a position alone when there is no token ("3").
    QString indexedQueryLabel(Index i) const;
    QString indexedKeyLabel(Index j) const;

    /// Empty when valid, else a message naming the first bad parameter: EngineParameters's
    /// rules (n, n_k, the sliding window w and the sinks up to maxN, maxLongSequence for the
    /// tile engine's views; always maxLongSequence for a long model run, TensorSource::longOnly),
    /// then those of the opened tensors.
    QString validate(Index maxN = maxSequence) const;

    bool operator==(const SessionParameters &) const = default;

    /// Keys: version, n, n_k, d_model, heads, seed, generator (numpy|torch; numpy when missing,
    /// as in older files), kind, mask, padding, scale_exponent, temperature, positional, dtype,
    /// tokens; rope, rope_convention, rope_base, alibi, kv_heads, window, sinks only when they
    /// differ from the defaults; learned_sink, sink_logit, differential,
    /// differential_lambda, differential_head_lambdas (a list of h numbers), output_gate,
    /// gate_bias, latent_attention, latent_dim, latent_rope_dim and latent_absorbed likewise.
    /// The seed is written
    /// as a decimal string (JSON numbers lose integers above 2^53); fromJson accepts a number too.
    QJsonObject toJson() const;
    /// Parses what toJson wrote; missing keys take defaults; invalid values → nullopt + error.
    static std::optional<SessionParameters> fromJson(const QJsonObject &o, QString *error);
    /// Every key fromJson reads (toJson writes some only when they differ from the defaults).
    static const QStringList &jsonKeys();

    /// "n=8, d_model=64, h=4, d_k=16, scale=1/√d_k, mask=causal, PE=off, float64, seed=0"
    /// (", torch" appended with PyTorch's streams).
    QString caption() const;
};

/// Differential attention's per-head λ as typed: numbers separated by commas or spaces ("0.2,
/// 0.5 0.8"), each in [−1, 2], h of them; empty text gives an empty list (the one λ in every
/// head). nullopt and *error (naming the entry or the count) otherwise.
std::optional<std::vector<double>> parseHeadLambdas(const QString &text, Index heads,
                                                    QString *error);
/// The list as parseHeadLambdas reads it back ("0.2, 0.5": the shortest text of each number).
QString headLambdasText(const std::vector<double> &lambdas);

/// Human-readable names ("encoder self-attention", "key padding", ...).
QString attentionKindName(AttentionKind k);
QString maskChoiceName(MaskChoice m);

/// Short identifiers used in JSON and on the command line: encoder|decoder|cross,
/// none|causal|padding, float32|float64. The parse functions return nullopt for unknown text.
QString attentionKindId(AttentionKind k);
QString maskChoiceId(MaskChoice m);
QString dtypeId(DType t);
std::optional<AttentionKind> parseAttentionKind(const QString &id);
std::optional<MaskChoice> parseMaskChoice(const QString &id);
std::optional<DType> parseDType(const QString &id);

/// The formula of the score scale d_k^(−α) / τ (Vaswani et al. 2017, §3.2.1, with the
/// exponent α = `scaleExponent` and the temperature τ = `temperature`), the one wording of
/// every caption, status bar, control and comparison: "1/√d_k" (α = 0.5), "1 (unscaled)"
/// (α = 0), "d_k^−0.25" otherwise, then " / τ (τ=2)" when τ ≠ 1 (numbers with up to 6
/// significant digits). With `dK` > 0 the number replaces the symbol: "1/√64", "64^−0.25".
/// Never throws; any α and τ give a text.
QString scaleFormula(double scaleExponent, double temperature, Index dK = 0);

} // namespace attn
