#pragma once
// What the window's main view computes, as a Qt-free value type: the parameters of one seeded
// multi-head self- or cross-attention problem (the ui's SessionParameters converts to it), and
// the one function that builds the attention mask such parameters ask for.

#include "core/attention/mask.h"
#include "core/attention/positional.h"
#include "core/random/torchrandom.h"
#include "core/base/types.h"

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

struct EngineParameters
{
    Index n = 8; ///< query count n (= n_q), ≥ 1
    Index nK = 10; ///< key count for encoder–decoder attention, ≥ 1 (self-attention: n)
    Index dModel = 64; ///< d_model; d_k = d_model / heads
    Index heads = 4; ///< h, a divisor of d_model
    std::uint64_t seed = 0; ///< numpy.random.default_rng(seed), or torch.manual_seed(seed)
    /// Whose streams draw the layer and the inputs from the seed (sessioninputs.h).
    RandomSource generator = RandomSource::NumPy;
    AttentionKind kind = AttentionKind::EncoderSelf;
    MaskChoice mask = MaskChoice::None;
    Index paddingCount = 2; ///< last m keys are padding (MaskChoice::KeyPadding)
    double scaleExponent = 0.5; ///< α: scale = d_k^(−α)/τ (0.5 = 1/√d_k, 0 = unscaled)
    double temperature = 1.0; ///< τ > 0
    bool positional = false; ///< add sinusoidal positional encoding (§3.5) to the inputs
    /// RoPE on every head's q (positions 0…n_q−1) and k (0…n_k−1), Su et al. 2021.
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
    DType dtype = DType::Float64;
    /// Typed tokens, UTF-8: token i < n gives query row i its embedding (sessioninputs.h); for
    /// encoder–decoder attention token n + j gives encoder row j its embedding.
    std::vector<std::string> tokens;

    Index dK() const { return heads > 0 ? dModel / heads : 0; }
    /// g: kvHeads, or h when 0.
    Index keyValueHeads() const { return kvHeads > 0 ? kvHeads : heads; }
    Index queryCount() const { return n; }
    Index keyCount() const { return kind == AttentionKind::EncoderDecoder ? nK : n; }
    /// True when the causal mask is applied (decoder kind, MaskChoice::Causal, or a window).
    bool causalMasked() const
    {
        return kind == AttentionKind::DecoderCausal || mask == MaskChoice::Causal || window > 0;
    }
    /// maskFromParameters for these parameters (n_q × n_k), with the sliding window and its
    /// sinks when window > 0.
    AttentionMask attentionMask() const
    {
        return maskFromParameters(kind, mask, paddingCount, queryCount(), keyCount(), window,
                                  sinks);
    }
    /// Throws InvalidArgument naming the first bad parameter: n, n_k or d_model < 1, h < 1 or
    /// not dividing d_model, n_q·n_k·h over 2^40, padding count outside [0, n_k], α outside
    /// [0, 1], τ not finite > 0.
    void check() const;

    bool operator==(const EngineParameters &) const = default;
};

} // namespace attn
