#include "core/engine/sessioninputs.h"

#include "core/attention/positional.h"
#include "core/random/random.h"
#include "core/random/torchrandom.h"

#include <algorithm>
#include <cmath>
#include <string>
#include <type_traits>

namespace attn {

std::uint64_t tokenHash(std::string_view utf8)
{
    std::uint64_t hash = 14695981039346656037ULL;
    for (char byte : utf8) {
        hash ^= std::uint64_t(static_cast<unsigned char>(byte));
        hash *= 1099511628211ULL;
    }
    return hash;
}

VectorD tokenEmbedding(std::string_view utf8, std::uint64_t seed, Index dModel)
{
    if (dModel < 0)
        throw InvalidArgument("tokenEmbedding: d_model must be >= 0, got "
                              + std::to_string(dModel));
    const std::uint64_t hash = tokenHash(utf8);
    // default_rng(seed + 2**64 * hash): the integer's little-endian 32-bit words.
    Generator rng = Generator::fromWords({std::uint32_t(seed), std::uint32_t(seed >> 32),
                                          std::uint32_t(hash), std::uint32_t(hash >> 32)});
    VectorD v(dModel);
    rng.fillStandardNormal(v.data(), std::size_t(dModel));
    return v;
}

template<typename T> SessionInputs<T> sessionInputs(const EngineParameters &p)
{
    p.check();
    const Index nQ = p.queryCount();
    const Index nK = p.keyCount();
    const Index d = p.dModel;
    // Draw order: layer parameters, decoder/query-side input X, encoder input E (cross only).
    SessionInputs<T> in {MultiheadAttention<T>(d, p.heads),
                         MatrixD(),
                         MatrixD(),
                         std::nullopt,
                         MatrixD(),
                         std::nullopt};
    const bool cross = p.kind == AttentionKind::EncoderDecoder;
    // MLA's and the gate's projections, after the second layer: standard normal / √rows.
    const auto drawVariants = [&p, &in, d](const auto &normal) {
        const auto draw = [&normal](Index rows, Index cols) {
            return MatrixD(normal(rows, cols) / std::sqrt(double(rows)));
        };
        const Index h = p.heads, dK = p.dK();
        if (p.latent) {
            MlaWeights<T> w;
            w.heads = h;
            w.ropeBase = p.ropeBase;
            w.downKeyValue = draw(d, p.latentDim).template cast<T>();
            w.upKey = draw(p.latentDim, h * dK).template cast<T>();
            w.upValue = draw(p.latentDim, h * dK).template cast<T>();
            w.ropeKey = draw(d, p.latentRopeDim).template cast<T>();
            w.query = draw(d, h * dK).template cast<T>();
            w.ropeQuery = draw(d, h * p.latentRopeDim).template cast<T>();
            in.latent = std::move(w);
        }
        // The gate last: turning it on never changes the draws of the weights it scales.
        if (p.outputGate)
            in.gateWeights = draw(d, h);
    };
    if (p.generator == RandomSource::Torch) {
        // nn.MultiheadAttention(d, h) in T, then torch.randn(1, n, d) in T.
        TorchGenerator rng(p.seed);
        initTorchDefault(in.layer, rng);
        const auto draw = [&rng, d](Index rows) {
            if constexpr (std::is_same_v<T, float>)
                return MatrixD(rng.randnMatrixFloat(rows, d).template cast<double>());
            else
                return rng.randnMatrix(rows, d);
        };
        in.query = draw(nQ);
        if (cross)
            in.encoder = draw(nK);
        if (p.differential) {
            in.secondLayer.emplace(d, p.heads);
            initTorchDefault(*in.secondLayer, rng);
        }
        drawVariants([&rng](Index rows, Index cols) {
            if constexpr (std::is_same_v<T, float>)
                return MatrixD(rng.randnMatrixFloat(rows, cols).template cast<double>());
            else
                return rng.randnMatrix(rows, cols);
        });
    } else {
        Generator rng(p.seed);
        in.layer.initXavier(rng);
        in.query = rng.standardNormal(nQ, d);
        if (cross)
            in.encoder = rng.standardNormal(nK, d);
        if (p.differential) {
            in.secondLayer.emplace(d, p.heads);
            in.secondLayer->initXavier(rng);
        }
        drawVariants([&rng](Index rows, Index cols) { return rng.standardNormal(rows, cols); });
    }
    // Typed tokens replace the drawn rows: query i by tokens[i] (i < n), for encoder–decoder
    // attention encoder row j by tokens[n + j]; every token counts, the empty one too.
    const Index tokenCount = Index(p.tokens.size());
    for (Index i = 0; i < std::min(nQ, tokenCount); ++i)
        in.query.row(i) = tokenEmbedding(p.tokens[std::size_t(i)], p.seed, d).transpose();
    for (Index j = 0; in.encoder.size() > 0 && j < nK && nQ + j < tokenCount; ++j)
        in.encoder.row(j) = tokenEmbedding(p.tokens[std::size_t(nQ + j)], p.seed, d).transpose();
    if (p.positional) {
        in.query += sinusoidalEncoding(nQ, d);
        if (in.encoder.size() > 0)
            in.encoder += sinusoidalEncoding(nK, d);
    }
    return in;
}

template SessionInputs<float> sessionInputs<float>(const EngineParameters &);
template SessionInputs<double> sessionInputs<double>(const EngineParameters &);

} // namespace attn
