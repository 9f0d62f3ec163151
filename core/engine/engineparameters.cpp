#include "core/engine/engineparameters.h"

#include <cmath>
#include <string>

namespace attn {

AttentionMask maskFromParameters(AttentionKind kind, MaskChoice mask, Index paddingCount, Index nQ,
                                 Index nK, Index window, Index sinks)
{
    if (window < 0)
        throw InvalidArgument("sliding window width w must be >= 0 (0 = none), got "
                              + std::to_string(window));
    AttentionMask m;
    if (window > 0)
        m = AttentionMask::slidingWindow(nQ, nK, window, sinks);
    else if (kind == AttentionKind::DecoderCausal || mask == MaskChoice::Causal)
        m = AttentionMask::causal(nQ, nK, CausalAlignment::TopLeft);
    if (mask == MaskChoice::KeyPadding)
        m = m | AttentionMask::keyPaddingLast(nQ, nK, paddingCount);
    return m;
}

void EngineParameters::check() const
{
    auto fail = [](const std::string &message) { throw InvalidArgument("session: " + message); };
    if (n < 1)
        fail("n must be >= 1, got " + std::to_string(n));
    if (kind == AttentionKind::EncoderDecoder && nK < 1)
        fail("n_k must be >= 1, got " + std::to_string(nK));
    if (dModel < 1)
        fail("d_model must be >= 1, got " + std::to_string(dModel));
    if (heads < 1 || dModel % heads != 0)
        fail("h=" + std::to_string(heads) + " does not divide d_model=" + std::to_string(dModel));
    // n_q · n_k · h cells of float64 must be addressable: at most 2^40 (8 TiB).
    if (double(n) * double(keyCount()) * double(heads) > 1099511627776.0)
        fail("n_q=" + std::to_string(n) + ", n_k=" + std::to_string(keyCount())
             + ", h=" + std::to_string(heads) + " is too large (n_q*n_k*h over 2^40)");
    if (mask == MaskChoice::KeyPadding && (paddingCount < 0 || paddingCount > keyCount()))
        fail("padding count must be in [0, n_k=" + std::to_string(keyCount()) + "], got "
             + std::to_string(paddingCount));
    if (!std::isfinite(scaleExponent) || scaleExponent < 0.0 || scaleExponent > 1.0)
        fail("scale exponent alpha must be in [0, 1], got " + std::to_string(scaleExponent));
    if (!std::isfinite(temperature) || temperature <= 0.0)
        fail("temperature tau must be a finite number > 0, got " + std::to_string(temperature));
    if (int(rope) + int(alibi) + int(positional) > 1)
        fail("choose one position scheme: sinusoidal, RoPE or ALiBi");
    if (rope && dK() % 2 != 0)
        fail("RoPE rotates pairs of dimensions: d_k=" + std::to_string(dK()) + " must be even");
    if (rope && (!std::isfinite(ropeBase) || ropeBase <= 0.0))
        fail("RoPE base must be finite and > 0, got " + std::to_string(ropeBase));
    if (kvHeads < 0 || (kvHeads > 0 && (kvHeads > heads || heads % kvHeads != 0)))
        fail("g=" + std::to_string(kvHeads)
             + " key/value heads must divide h=" + std::to_string(heads));
    if (window < 0 || sinks < 0 || (sinks > 0 && window == 0))
        fail("window w >= 0 and sinks >= 0 (sinks only with a window), got w="
             + std::to_string(window) + ", sinks=" + std::to_string(sinks));
}

} // namespace attn
