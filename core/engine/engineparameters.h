#pragma once
// The parameters of what the window's main view computes, as one Qt-free value type with one
// rule set: the seeded multi-head self- or cross-attention problem (n, d_model, h, the scale,
// positions, masks, precision), its limits, validate() and normalized() (the rules every control,
// session file and command line obeys), scale(), and the one function that builds the
// attention mask such parameters ask for. The window's SessionParameters adds only Qt-side state
// (opened tensors) to it.

#include "core/attention/mask.h"
#include "core/attention/positional.h"
#include "core/base/types.h"
#include "core/random/torchrandom.h"

#include <algorithm>
#include <cstdint>
#include <string>
#include <vector>

namespace attn {

/// The three uses of attention (Vaswani et al. 2017, §3.2.3).
enum class AttentionKind {
    EncoderSelf, ///< all pairs; mask chosen by MaskChoice
    DecoderCausal, ///< masked self-attention: causal mask always on
    EncoderDecoder ///< queries from the decoder (n rows), keys/values from the encoder (nK rows)
};
/// The mask chosen on top of the kind: none, causal, or the last `paddingCount` keys padding.
enum class MaskChoice { None, Causal, KeyPadding };
/// Element type of the arithmetic (results are shown in float64 either way).
enum class DType { Float32, Float64 };

/// The causal mask (top-left aligned, as PyTorch's is_causal) when the kind is DecoderCausal or
/// `mask` is Causal, OR-ed with a key padding mask of the last `paddingCount` of nK keys when
/// `mask` is KeyPadding, and with the sliding window of width `window` and its `sinks`
/// (AttentionMask::slidingWindow, which brings the causal mask) when window > 0; an empty mask
/// otherwise. The one place parameters become a mask (the session engine, loaded tensors, the
/// command line), so every cell's state carries the window bit wherever the window applies.
/// Throws InvalidArgument (from AttentionMask) when paddingCount is outside [0, nK] with
/// KeyPadding, window < 0, or sinks < 0.
AttentionMask maskFromParameters(AttentionKind kind, MaskChoice mask, Index paddingCount, Index nQ,
                                 Index nK, Index window = 0, Index sinks = 0);

/// The divisors of n ≥ 1 in increasing order (empty for n < 1): the head counts h that split
/// d_model = n into equal heads.
std::vector<Index> divisors(Index n);
/// The divisor of n closest to `wanted` (ties go to the smaller one); 1 for n < 1.
Index nearestDivisor(Index n, Index wanted);

struct EngineParameters
{
    static constexpr Index maxSequence = 4096; ///< upper bound of n and n_k (full matrices)
    /// Upper bound of n and n_k for views computed by the tile engine (core/tiles/tileengine.h):
    /// `attnlab heatmap` and the Long tab beyond maxSequence.
    static constexpr Index maxLongSequence = 65536;
    static constexpr Index maxDModel = 4096; ///< upper bound of d_model
    /// The range of τ every control, session file and command line accepts.
    static constexpr double minTemperature = 1e-300;
    static constexpr double maxTemperature = 1e300;
    static constexpr double maxRopeBase = 1e12; ///< RoPE base θ in [1, 1e12]

    Index n = 8; ///< query count n (= n_q); 1 … maxN
    Index nK = 10; ///< key count for encoder–decoder attention; 1 … maxN (self-attention: n)
    Index dModel = 64; ///< d_model; d_k = d_model / heads
    Index heads = 4; ///< h, a divisor of d_model
    std::uint64_t seed = 0; ///< numpy.random.default_rng(seed), or torch.manual_seed(seed)
    /// Whose streams draw the layer and the inputs from the seed (sessioninputs.h): NumPy's
    /// (initXavier, then standard_normal) or PyTorch's (nn.MultiheadAttention's default init,
    /// then torch.randn in the session's precision). Typed tokens' vectors are NumPy's either way.
    RandomSource generator = RandomSource::NumPy;
    AttentionKind kind = AttentionKind::EncoderSelf;
    MaskChoice mask = MaskChoice::None;
    Index paddingCount = 2; ///< last m keys are padding (MaskChoice::KeyPadding)
    double scaleExponent = 0.5; ///< α: scale = d_k^(−α)/τ (0.5 = 1/√d_k, 0 = unscaled)
    double temperature = 1.0; ///< τ > 0
    bool positional = false; ///< add sinusoidal positional encoding (§3.5) to the inputs
    /// RoPE on every head's q (positions 0…n_q−1) and k (0…n_k−1), Su et al. 2021; excludes
    /// positional and alibi.
    bool rope = false;
    RopeConvention ropeConvention = RopeConvention::Half;
    double ropeBase = kRopeDefaultBase; ///< θ_i = ropeBase^(−2i/d_k)
    /// ALiBi (Press et al. 2021): −m_h·(i − j) (−m_h·|i − j| without a causal mask) added to
    /// head h's scaled scores, slopes alibiSlopes(h).
    bool alibi = false;
    /// Key/value heads g (divides h; 0 means h): the h heads' keys mean-pooled into g groups
    /// (GQA §2.1), query head i reads key head ⌊i·g/h⌋.
    Index kvHeads = 0;
    Index window = 0; ///< sliding-window causal mask width (query i sees i − w < j ≤ i); 0 = off
    Index sinks = 0; ///< attention sinks: the first keys the window never masks
    /// Learned sink (gpt-oss; core/attention/variants.h): every head's softmax denominator
    /// gains exp(sinkLogit), w_ij = exp(s_ij) / (exp(b) + Σ_k exp(s_ik)); b in
    /// [−maxVariantLogit, maxVariantLogit].
    bool learnedSink = false;
    double sinkLogit = 0.0;
    /// Differential attention (Ye et al. 2025, Eq. 1): weights A₁ − λA₂, A₂ from a second
    /// layer's queries and keys drawn after the inputs (sessioninputs.h); λ in [−1, 2]. Not with
    /// learnedSink.
    bool differential = false;
    double lambda = 0.5;
    /// Differential attention with a λ per head: h values in [−1, 2] (head u uses
    /// headLambdas[u]); empty: `lambda` in every head. normalized() drops a list whose length is
    /// not h.
    std::vector<double> headLambdas;
    /// Gated attention, head-wise (Qiu et al. 2025, §2.2, the gate σ(X W_θ) with one score per
    /// head): head u's output row i is multiplied by σ(x_i·w_u + gateBias), w (d_model × h) drawn
    /// after the inputs (sessioninputs.h). A head's output being Σ_j w_ij v_j, the weights shown
    /// are σ(g_iu)·w_ij (rows sum to the gate). gateBias in [−maxVariantLogit, maxVariantLogit].
    bool outputGate = false;
    double gateBias = 0.0;
    /// Multi-head latent attention (DeepSeek-V2 §2.1.2–2.1.3; core/attention/variants.h): keys
    /// and values from a latent of latentDim = d_c values per token (in [1, maxDModel]) and a
    /// RoPE key of latentRopeDim = d_r values shared by the heads (even, in [2, maxLatentRopeDim];
    /// interleaved rotation with ropeBase), queries [q^C_i, q^R_i] of d_k + d_r values; the
    /// scale is (d_k + d_r)^(−α)/τ. latentAbsorbed scores the queries against the cache itself
    /// (W_UK absorbed into the query) rather than decompressing the keys: the same weights. Its
    /// projections are drawn after the inputs (sessioninputs.h); the layer's W_Q, W_K are not
    /// used. Self-attention only; not with RoPE (it brings its own), ALiBi, g < h or
    /// differential attention.
    bool latent = false;
    Index latentDim = 16;
    Index latentRopeDim = 8;
    bool latentAbsorbed = false;
    static constexpr Index maxLatentRopeDim = 1024;
    static constexpr double maxVariantLogit = 50.0;
    DType dtype = DType::Float64;
    /// Typed tokens, UTF-8: token i < n gives query row i its embedding and label
    /// (sessioninputs.h); for encoder–decoder attention token n + j gives encoder row j its
    /// embedding and label. Positions stand in where a token is missing.
    std::vector<std::string> tokens;

    Index dK() const { return heads > 0 ? dModel / heads : 0; }
    /// The width of a query (and key) the scores are products of: d_k, or d_k + d_r with
    /// multi-head latent attention.
    Index scoreDim() const { return dK() + (latent ? latentRopeDim : 0); }
    /// The layer's parameter count (weights and biases): nn.MultiheadAttention's with g
    /// key/value heads (groupedQueryParameterCount), or with MLA its six projections and W_O
    /// (d_model·d_c + 2·d_c·h·d_k + d_model·d_r + d_model·h·d_k + d_model·h·d_r + d_model², no
    /// biases, DeepSeek-V2 §2.1); plus differential attention's second W_Q (d_model² + d_model)
    /// and W_K grouped as the first (g·d_k·d_model + g·d_k), the head-wise gate's w_θ
    /// (d_model·h) and a learned sink's logit per head (h). Throws what
    /// groupedQueryParameterCount throws.
    Index parameterCount() const;
    /// Bytes cached per token and layer: the keys and values of g heads (kvCacheBytesPerToken,
    /// 2·g·d_k elements), with differential attention the second keys too (3·g·d_k), or with
    /// MLA the latent and the RoPE key (mlaCacheValues, d_c + d_r); times bytesPerElement.
    /// Throws what kvCacheBytesPerToken throws.
    Index cacheBytesPerToken(Index bytesPerElement) const;
    /// Differential attention's λ of each of the h heads: headLambdas, or `lambda` h times.
    std::vector<double> lambdaPerHead() const
    {
        return headLambdas.size() == std::size_t(heads) && heads > 0
            ? headLambdas
            : std::vector<double>(std::size_t(std::max<Index>(heads, 0)), lambda);
    }
    /// g: kvHeads, or h when 0.
    Index keyValueHeads() const { return kvHeads > 0 ? kvHeads : heads; }
    Index queryCount() const { return n; }
    Index keyCount() const { return kind == AttentionKind::EncoderDecoder ? nK : n; }
    /// True when the causal mask is applied (decoder kind, MaskChoice::Causal, or a window).
    bool causalMasked() const
    {
        return kind == AttentionKind::DecoderCausal || mask == MaskChoice::Causal || window > 0;
    }
    /// The position scheme in effect (sinusoidal, RoPE, ALiBi or none).
    PositionalScheme positionalScheme() const
    {
        return rope      ? PositionalScheme::Rope
            : alibi      ? PositionalScheme::Alibi
            : positional ? PositionalScheme::Sinusoidal
                         : PositionalScheme::None;
    }
    /// The factor the scores Q Kᵀ are multiplied by: d^(−α) / τ with d = scoreDim() (Vaswani et
    /// al. 2017, §3.2.1, with the exponent α and the temperature τ); d is taken as at least 1.
    double scale() const;
    /// maskFromParameters for these parameters (n_q × n_k), with the sliding window and its
    /// sinks when window > 0.
    AttentionMask attentionMask() const
    {
        return maskFromParameters(kind, mask, paddingCount, queryCount(), keyCount(), window,
                                  sinks);
    }

    /// Empty when valid, else a message (UTF-8) naming the first bad parameter, its value and
    /// its range: n and n_k in [1, maxN], d_model in [1, maxDModel], h in [1, d_model] dividing
    /// d_model, n_q·n_k·h at most 2^40, the padding count in [0, n_k] with a padding mask, α in
    /// [0, 1], τ finite > 0, one position scheme, an even d_k with RoPE, the RoPE base in
    /// [1, 1e12], g dividing h, window and sinks in [0, maxN], sinks only with a window, the
    /// sink logit in [−50, 50], λ in [−1, 2] (every per-head λ too, h of them), a learned sink
    /// and differential attention not together, the gate bias in [−50, 50], multi-head latent
    /// attention with d_c in [1, maxDModel], an even d_r in [2, 1024], self-attention, and
    /// without RoPE, ALiBi, g < h and differential attention.
    std::string validate(Index maxN = maxSequence) const;
    /// Throws InvalidArgument("session: " + validate(maxN)) when the parameters are invalid.
    void check(Index maxN = maxLongSequence) const;
    /// The controls' rules applied: n follows the typed tokens (at most maxSequence of them
    /// kept); n, n_k clamped to [1, maxSequence], d_model to [1, maxDModel]; h moved to the
    /// nearest divisor of d_model when it does not divide it; the padding count (`wantedPadding`
    /// when ≥ 0, the user's choice kept while n shrinks below it) clamped to [0, n_k]; α to
    /// [0, 1]; τ to [minTemperature, maxTemperature]. Never throws.
    EngineParameters normalized(Index wantedPadding = -1) const;

    bool operator==(const EngineParameters &) const = default;
};

} // namespace attn
