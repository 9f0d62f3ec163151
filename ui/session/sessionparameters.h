#pragma once
// Everything the main view's controls set, as one value type (saved in .attnlab.json).

#include "core/engine/engineparameters.h"
#include "core/attention/positional.h"
#include "core/random/torchrandom.h"

#include <QJsonObject>
#include <QString>
#include <QStringList>

#include <memory>
#include <optional>

namespace attn {

class TensorSource;

// AttentionKind, MaskChoice and DType: core/engine/engineparameters.h.

struct SessionParameters
{
    static constexpr int maxSequence = 4096; ///< upper bound of n and n_k
    /// Upper bound of n and n_k for views computed by the tile engine (core/tiles/tileengine.h,
    /// computePooledSession): `attnlab heatmap` beyond maxSequence.
    static constexpr int maxLongSequence = 65536;
    static constexpr int maxDModel = 4096; ///< upper bound of d_model

    int n = 8; ///< query count n (= n_q); 1 … 4096
    int nK = 10; ///< key count for encoder–decoder attention; 1 … 4096
    int dModel = 64; ///< d_model; d_k = d_model / heads
    int heads = 4; ///< h, a divisor of d_model
    quint64 seed = 0; ///< numpy.random.default_rng(seed), or torch.manual_seed(seed)
    /// Whose streams draw the layer and the inputs from the seed: NumPy's (initXavier, then
    /// standard_normal) or PyTorch's (nn.MultiheadAttention's default init, then torch.randn
    /// in the session's precision). Typed tokens' vectors are NumPy's either way.
    RandomSource generator = RandomSource::NumPy;
    AttentionKind kind = AttentionKind::EncoderSelf;
    MaskChoice mask = MaskChoice::None;
    int paddingCount = 2; ///< last m keys are padding (MaskChoice::KeyPadding)
    double scaleExponent = 0.5; ///< α: scale = d_k^(−α)/τ (0.5 = 1/√d_k, 0 = unscaled)
    double temperature = 1.0; ///< τ > 0
    bool positional = false; ///< add sinusoidal positional encoding (§3.5) to the inputs
    /// RoPE on every head's q and k (Su et al. 2021); excludes positional and alibi.
    bool rope = false;
    RopeConvention ropeConvention = RopeConvention::Half;
    double ropeBase = kRopeDefaultBase; ///< θ_i = ropeBase^(−2i/d_k)
    /// ALiBi: −m_h·(i − j) (−m_h·|i − j| without a causal mask) added to head h's scaled scores.
    bool alibi = false;
    /// Key/value heads g of grouped-query attention (divides h); 0 means g = h (multi-head).
    /// For g < h the h heads' W_K and W_V rows are mean-pooled into g heads (GQA §2.1).
    int kvHeads = 0;
    int window = 0; ///< sliding-window causal mask width w (query i sees i − w < j ≤ i); 0 = off
    int sinks = 0; ///< attention sinks: the first keys the window never masks
    DType dtype = DType::Float64;
    /// Optional axis labels. The first n label the queries; keys reuse them for self-attention,
    /// for encoder–decoder attention entries n … n+n_k−1 (when present) label the keys.
    /// Positions are shown where a label is missing.
    QStringList tokens;
    /// Tensors loaded with File → Open tensors… (TensorSource), shown instead of the seeded
    /// random inputs; nullptr for random inputs. They fix n, n_k, d_model and h (validate()
    /// says so). Compared by identity; not part of toJson (session files store the path).
    std::shared_ptr<const TensorSource> tensors;

    int dK() const { return heads > 0 ? dModel / heads : 0; }
    /// g: kvHeads, or h when 0.
    int keyValueHeads() const { return kvHeads > 0 ? kvHeads : heads; }
    /// The position scheme in effect (sinusoidal, RoPE, ALiBi or none).
    PositionalScheme positionalScheme() const
    {
        return rope      ? PositionalScheme::Rope
            : alibi      ? PositionalScheme::Alibi
            : positional ? PositionalScheme::Sinusoidal
                         : PositionalScheme::None;
    }
    int queryCount() const { return n; }
    int keyCount() const { return kind == AttentionKind::EncoderDecoder ? nK : n; }
    /// True when the causal mask is applied (decoder kind, MaskChoice::Causal, or a window).
    bool causalMasked() const
    {
        return kind == AttentionKind::DecoderCausal || mask == MaskChoice::Causal || window > 0;
    }
    /// Label of query i / key j: the token when there is one, else the position as text.
    QString queryLabel(int i) const;
    QString keyLabel(int j) const;
    /// The same with the position in front of a token ("3:the"), so a repeated word can be
    /// told apart; a position alone when there is no token ("3").
    QString indexedQueryLabel(int i) const;
    QString indexedKeyLabel(int j) const;

    /// Empty when valid, else a message naming the first bad parameter; n, n_k, the sliding
    /// window w and the sinks may be up to maxN (maxLongSequence for the tile engine's views).
    QString validate(int maxN = maxSequence) const;

    bool operator==(const SessionParameters &) const = default;

    /// Keys: version, n, n_k, d_model, heads, seed, generator (numpy|torch; numpy when missing,
    /// as in older files), kind, mask, padding, scale_exponent, temperature, positional, dtype,
    /// tokens; rope, rope_convention, rope_base, alibi, kv_heads, window, sinks only when they
    /// differ from the defaults. The seed is written as a decimal string (JSON numbers lose
    /// integers above 2^53); fromJson accepts a number too.
    QJsonObject toJson() const;
    /// Parses what toJson wrote; missing keys take defaults; invalid values → nullopt + error.
    static std::optional<SessionParameters> fromJson(const QJsonObject &o, QString *error);

    /// "n=8, d_model=64, h=4, d_k=16, scale=1/√d_k, mask=causal, PE=off, float64, seed=0"
    /// (", torch" appended with PyTorch's streams).
    QString caption() const;
};

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
QString scaleFormula(double scaleExponent, double temperature, int dK = 0);

} // namespace attn
