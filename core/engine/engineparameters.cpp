#include "core/engine/engineparameters.h"

#include "core/attention/attention.h"
#include "core/attention/groupedattention.h"
#include "core/attention/variants.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <string>

namespace attn {

namespace {

/// A number as the messages show it: integers in full ("1048576"), others to 6 significant
/// digits ("0.001", "1e-09").
std::string numberText(double v)
{
    if (std::isfinite(v) && v == std::floor(v) && std::abs(v) < 1e15)
        return std::to_string(static_cast<long long>(v));
    char buffer[32];
    std::snprintf(buffer, sizeof buffer, "%.6g", v);
    return buffer;
}

/// The one range check of the parameters: "<name> must be in [lo, hi], got v" when v lies
/// outside [lo, hi] or is not finite; empty otherwise. `hiText` replaces hi in the message
/// ("n_k=8"), for a bound that is another parameter.
std::string outOfRange(const std::string &name, double v, double lo, double hi,
                       const std::string &hiText = {})
{
    if (std::isfinite(v) && v >= lo && v <= hi)
        return {};
    return name + " must be in [" + numberText(lo) + ", "
        + (hiText.empty() ? numberText(hi) : hiText) + "], got " + numberText(v);
}

} // namespace

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

std::vector<Index> divisors(Index n)
{
    std::vector<Index> small, large;
    for (Index d = 1; d * d <= n; ++d) {
        if (n % d == 0) {
            small.push_back(d);
            if (d != n / d)
                large.push_back(n / d);
        }
    }
    small.insert(small.end(), large.rbegin(), large.rend());
    return small;
}

Index nearestDivisor(Index n, Index wanted)
{
    const std::vector<Index> ds = divisors(n);
    Index best = ds.empty() ? 1 : ds.front();
    for (Index d : ds)
        if (std::abs(d - wanted) < std::abs(best - wanted))
            best = d;
    return best;
}

Index EngineParameters::parameterCount() const
{
    const Index d = dModel, h = heads, dk = dK();
    const Index layer = latent ? d * latentDim + 2 * latentDim * h * dk + d * latentRopeDim
            + d * h * dk + d * h * latentRopeDim + d * d
                               : groupedQueryParameterCount(d, h, keyValueHeads());
    // Differential attention's second W_Q (d × d) and W_K (g·d_k × d, grouped as the first's),
    // with their biases; the gate's w_θ (d × h); a learned sink's logit per head.
    const Index gk = keyValueHeads() * dk;
    return layer + (differential ? d * d + d + gk * d + gk : 0) + (outputGate ? d * h : 0)
        + (learnedSink ? h : 0);
}

Index EngineParameters::cacheBytesPerToken(Index bytesPerElement) const
{
    if (latent)
        return mlaCacheValues(latentDim, latentRopeDim) * bytesPerElement;
    const Index kv
        = kvCacheBytesPerToken(keyValueHeads(), std::max<Index>(1, dK()), bytesPerElement);
    return differential ? kv / 2 * 3 : kv; // K₂ beside K and V
}

double EngineParameters::scale() const
{
    return scoreScale(scoreDim(), scaleExponent, temperature);
}

std::string EngineParameters::validate(Index maxN) const
{
    const double top = double(maxN);
    if (std::string e = outOfRange("n", double(n), 1, top); !e.empty())
        return e;
    if (kind == AttentionKind::EncoderDecoder)
        if (std::string e = outOfRange("n_k", double(nK), 1, top); !e.empty())
            return e;
    if (std::string e = outOfRange("d_model", double(dModel), 1, double(maxDModel)); !e.empty())
        return e;
    if (std::string e = outOfRange("h (heads)", double(heads), 1, double(dModel),
                                   "d_model=" + std::to_string(dModel));
        !e.empty())
        return e;
    if (dModel % heads != 0)
        return "h=" + std::to_string(heads) + " does not divide d_model=" + std::to_string(dModel)
            + " (d_k = d_model / h must be an integer)";
    // n_q · n_k · h cells of float64 must be addressable: at most 2^40 (8 TiB).
    if (double(n) * double(keyCount()) * double(heads) > 1099511627776.0)
        return "n_q=" + std::to_string(n) + ", n_k=" + std::to_string(keyCount())
            + ", h=" + std::to_string(heads) + " is too large (n_q*n_k*h over 2^40)";
    if (mask == MaskChoice::KeyPadding)
        if (std::string e = outOfRange("padding count", double(paddingCount), 0, double(keyCount()),
                                       "n_k=" + std::to_string(keyCount()));
            !e.empty())
            return e;
    if (std::string e = outOfRange("scale exponent \u03b1", scaleExponent, 0, 1); !e.empty())
        return e;
    if (!std::isfinite(temperature) || temperature <= 0.0)
        return "temperature \u03c4 must be a finite number > 0, got " + numberText(temperature);
    if (int(rope) + int(alibi) + int(positional) > 1)
        return "choose one position scheme: sinusoidal, RoPE or ALiBi";
    if (rope && dK() % 2 != 0)
        return "RoPE rotates pairs of dimensions: d_k=" + std::to_string(dK()) + " must be even";
    if (std::string e = outOfRange("RoPE base", ropeBase, 1, maxRopeBase, "1e12"); !e.empty())
        return e;
    if (kvHeads < 0 || (kvHeads > 0 && (kvHeads > heads || heads % kvHeads != 0)))
        return "g=" + std::to_string(kvHeads)
            + " key/value heads must divide h=" + std::to_string(heads);
    if (std::string e = outOfRange("window w", double(window), 0, top); !e.empty())
        return e;
    if (std::string e = outOfRange("sinks", double(sinks), 0, top); !e.empty())
        return e;
    if (sinks > 0 && window == 0)
        return "attention sinks need a sliding window (w > 0)";
    if (learnedSink)
        if (std::string e
            = outOfRange("sink logit b", sinkLogit, -maxVariantLogit, maxVariantLogit);
            !e.empty())
            return e;
    if (differential)
        if (std::string e = outOfRange("differential \u03bb", lambda, -1, 2); !e.empty())
            return e;
    if (differential && !headLambdas.empty()) {
        if (headLambdas.size() != std::size_t(heads))
            return "differential attention needs one \u03bb or h=" + std::to_string(heads)
                + " of them, got " + std::to_string(headLambdas.size());
        for (std::size_t u = 0; u < headLambdas.size(); ++u)
            if (std::string e = outOfRange("differential \u03bb of head " + std::to_string(u),
                                           headLambdas[u], -1, 2);
                !e.empty())
                return e;
    }
    if (learnedSink && differential)
        return "a learned sink and differential attention do not combine (no published model "
               "uses both): choose one";
    if (outputGate)
        if (std::string e = outOfRange("gate bias", gateBias, -maxVariantLogit, maxVariantLogit);
            !e.empty())
            return e;
    if (latent) {
        if (std::string e = outOfRange("latent d_c", double(latentDim), 1, double(maxDModel));
            !e.empty())
            return e;
        if (std::string e
            = outOfRange("latent RoPE d_r", double(latentRopeDim), 2, double(maxLatentRopeDim));
            !e.empty())
            return e;
        if (latentRopeDim % 2 != 0)
            return "the latent RoPE key rotates pairs of dimensions: d_r="
                + std::to_string(latentRopeDim) + " must be even";
        if (kind == AttentionKind::EncoderDecoder)
            return "multi-head latent attention is self-attention here: its keys come from the "
                   "latent of the same tokens (choose encoder or decoder)";
        if (rope || alibi)
            return std::string("multi-head latent attention brings its own decoupled RoPE key: ")
                + (rope ? "turn RoPE off" : "turn ALiBi off");
        if (keyValueHeads() != heads)
            return "multi-head latent attention shares one latent between all heads: g="
                + std::to_string(kvHeads) + " key/value heads do not apply";
        if (differential)
            return "multi-head latent attention and differential attention do not combine (no "
                   "published model uses both): choose one";
    }
    return {};
}

void EngineParameters::check(Index maxN) const
{
    if (const std::string e = validate(maxN); !e.empty())
        throw InvalidArgument("session: " + e);
}

EngineParameters EngineParameters::normalized(Index wantedPadding) const
{
    EngineParameters p = *this;
    if (wantedPadding >= 0)
        p.paddingCount = wantedPadding;
    // Typed tokens: n follows their count (at most maxSequence tokens are used).
    if (p.tokens.size() > std::size_t(maxSequence))
        p.tokens.resize(std::size_t(maxSequence));
    if (!p.tokens.empty())
        p.n = Index(p.tokens.size());
    p.n = std::clamp<Index>(p.n, 1, maxSequence);
    p.nK = std::clamp<Index>(p.nK, 1, maxSequence);
    p.dModel = std::clamp<Index>(p.dModel, 1, maxDModel);
    if (p.heads < 1 || p.dModel % p.heads != 0)
        p.heads = nearestDivisor(p.dModel, std::max<Index>(1, p.heads));
    p.paddingCount = std::clamp<Index>(p.paddingCount, 0, p.keyCount());
    if (std::isfinite(p.scaleExponent))
        p.scaleExponent = std::clamp(p.scaleExponent, 0.0, 1.0);
    if (std::isfinite(p.temperature))
        p.temperature = std::clamp(p.temperature, minTemperature, maxTemperature);
    // A per-head λ list follows h: one of another length (h changed) is dropped.
    if (p.headLambdas.size() != std::size_t(p.heads))
        p.headLambdas.clear();
    return p;
}

} // namespace attn
