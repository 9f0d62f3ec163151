#pragma once
// Everything the main view's controls set, as one value type (saved in .attnlab.json).

#include <QJsonObject>
#include <QString>
#include <QStringList>

#include <optional>

namespace attn {

/// The three uses of attention (Vaswani et al. 2017, §3.2.3).
enum class AttentionKind {
    EncoderSelf, ///< all pairs; mask chosen by MaskChoice
    DecoderCausal, ///< masked self-attention: causal mask always on
    EncoderDecoder ///< queries from the decoder (n rows), keys/values from the encoder (nK rows)
};
enum class MaskChoice { None, Causal, KeyPadding };
enum class DType { Float32, Float64 };

struct SessionParameters
{
    int n = 8; ///< query count n (= n_q); 1 … 4096
    int nK = 10; ///< key count for encoder–decoder attention; 1 … 4096
    int dModel = 64; ///< d_model; d_k = d_model / heads
    int heads = 4; ///< h, a divisor of d_model
    quint64 seed = 0; ///< numpy.random.default_rng(seed)
    AttentionKind kind = AttentionKind::EncoderSelf;
    MaskChoice mask = MaskChoice::None;
    int paddingCount = 2; ///< last m keys are padding (MaskChoice::KeyPadding)
    double scaleExponent = 0.5; ///< α: scale = d_k^(−α)/τ (0.5 = 1/√d_k, 0 = unscaled)
    double temperature = 1.0; ///< τ > 0
    bool positional = false; ///< add sinusoidal positional encoding (§3.5) to the inputs
    DType dtype = DType::Float64;
    QStringList tokens; ///< optional axis labels (query and key tokens)

    int dK() const { return heads > 0 ? dModel / heads : 0; }
    int queryCount() const { return n; }
    int keyCount() const { return kind == AttentionKind::EncoderDecoder ? nK : n; }

    /// Empty when valid, else a message naming the first bad parameter.
    QString validate() const;

    bool operator==(const SessionParameters &) const = default;

    QJsonObject toJson() const;
    /// Parses what toJson wrote; missing keys take defaults; invalid values → nullopt + error.
    static std::optional<SessionParameters> fromJson(const QJsonObject &o, QString *error);

    /// "n=8, d_model=64, h=4, d_k=16, scale=1/√d_k, mask=causal, PE=off, float64, seed=0".
    QString caption() const;
};

QString attentionKindName(AttentionKind k);
QString maskChoiceName(MaskChoice m);

} // namespace attn
