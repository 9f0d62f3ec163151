#include "sessioncompute.h"

#include <multihead.h>
#include <positional.h>
#include <random.h>

#include <algorithm>
#include <chrono>
#include <exception>
#include <string>

namespace attn {

namespace {

struct CancelledError
{
};

template<typename T>
void computeTyped(const SessionParameters &p, SessionResult &r,
                  const std::function<bool()> &cancelled)
{
    auto checkpoint = [&] {
        if (cancelled && cancelled())
            throw CancelledError {};
    };
    const Index nQ = p.queryCount();
    const Index nK = p.keyCount();
    const Index d = p.dModel;

    // Draw order: layer parameters, decoder/query-side input X, encoder input E (cross only).
    Generator rng(p.seed);
    MultiheadAttention<T> layer(d, p.heads);
    layer.initXavier(rng);
    MatrixD x = rng.standardNormal(nQ, d); // X: n_q × d_model
    MatrixD e; // E: n_k × d_model (encoder–decoder attention only)
    if (p.kind == AttentionKind::EncoderDecoder)
        e = rng.standardNormal(nK, d);
    // Typed tokens replace the drawn rows: query i by tokens[i] (i < n), for encoder–decoder
    // attention encoder row j by tokens[n + j]; every token counts, the empty one too.
    const Index tokenCount = p.tokens.size();
    for (Index i = 0; i < std::min(nQ, tokenCount); ++i)
        x.row(i) = tokenEmbedding(p.tokens.at(i), p.seed, int(d)).transpose();
    for (Index j = 0; e.size() > 0 && j < nK && nQ + j < tokenCount; ++j)
        e.row(j) = tokenEmbedding(p.tokens.at(nQ + j), p.seed, int(d)).transpose();
    if (p.positional) {
        x += sinusoidalEncoding(nQ, d);
        if (e.size() > 0)
            e += sinusoidalEncoding(nK, d);
    }
    checkpoint();

    AttentionMask mask;
    if (p.causalMasked())
        mask = AttentionMask::causal(nQ, nK, CausalAlignment::TopLeft);
    if (p.mask == MaskChoice::KeyPadding)
        mask = mask | AttentionMask::keyPaddingLast(nQ, nK, p.paddingCount);

    AttentionOptions options;
    options.scaleExponent = p.scaleExponent;
    options.temperature = p.temperature;

    const Matrix<T> query = x.cast<T>();
    const Matrix<T> keyValue = e.size() > 0 ? Matrix<T>(e.cast<T>()) : query;
    MultiheadResult<T> out = layer.forward(query, keyValue, keyValue, mask, options);
    checkpoint();

    r.scale = out.scale;
    r.maskState = mask.stateMatrix(nQ, nK);
    r.fullyMasked = out.fullyMasked;
    const int h = p.heads;
    r.weights.reserve(h);
    r.scores.reserve(h);
    r.scaledScores.reserve(h);
    r.metrics.reserve(h);
    for (int head = 0; head < h; ++head) {
        // weights, scores, scaledScores: n_q × n_k, row-major
        r.weights.push_back(out.weights[head].template cast<double>());
        r.scores.push_back(out.scores[head].template cast<double>());
        r.scaledScores.push_back(out.scaledScores[head].template cast<double>());
        out.scores[head].resize(0, 0); // release memory early for large n
        out.scaledScores[head].resize(0, 0);
        r.metrics.push_back(rowMetrics(out.weights[head], out.fullyMasked[head]));
        r.worstRowSumError
            = std::max(r.worstRowSumError, summarize(r.metrics.back()).worstRowSumError);

        const NonFiniteReport nf = findNonFinite(out.weights[head]);
        if (nf.found) {
            if (!r.nonFinite.found) {
                r.nonFinite = nf;
            } else {
                r.nonFinite.nanCount += nf.nanCount;
                r.nonFinite.infCount += nf.infCount;
            }
        }
        checkpoint();
    }
    r.weightsMean = out.weightsMean.template cast<double>();
}

} // namespace

quint64 tokenHash(const QString &token)
{
    quint64 hash = 14695981039346656037ULL;
    for (char byte : token.toUtf8()) {
        hash ^= quint64(static_cast<unsigned char>(byte));
        hash *= 1099511628211ULL;
    }
    return hash;
}

VectorD tokenEmbedding(const QString &token, quint64 seed, int dModel)
{
    if (dModel < 0)
        throw InvalidArgument("tokenEmbedding: d_model must be >= 0, got "
                              + std::to_string(dModel));
    const quint64 hash = tokenHash(token);
    // default_rng(seed + 2**64 * hash): the integer's little-endian 32-bit words.
    Generator rng = Generator::fromWords({std::uint32_t(seed), std::uint32_t(seed >> 32),
                                          std::uint32_t(hash), std::uint32_t(hash >> 32)});
    VectorD v(dModel);
    rng.fillStandardNormal(v.data(), std::size_t(dModel));
    return v;
}

SessionResult computeSession(const SessionParameters &params)
{
    return computeSession(params, {});
}

SessionResult computeSession(const SessionParameters &params,
                             const std::function<bool()> &cancelled)
{
    SessionResult r;
    r.params = params;
    const auto start = std::chrono::steady_clock::now();
    r.error = params.validate();
    if (!r.ok())
        return r;
    try {
        if (params.dtype == DType::Float32)
            computeTyped<float>(params, r, cancelled);
        else
            computeTyped<double>(params, r, cancelled);
    } catch (const CancelledError &) {
        r = SessionResult {};
        r.params = params;
        r.error = QStringLiteral("cancelled");
    } catch (const std::bad_alloc &) {
        r = SessionResult {};
        r.params = params;
        r.error = QStringLiteral("out of memory for n_q=%1, n_k=%2, h=%3")
                      .arg(params.queryCount())
                      .arg(params.keyCount())
                      .arg(params.heads);
    } catch (const std::exception &e) {
        r = SessionResult {};
        r.params = params;
        r.error = QString::fromStdString(e.what());
    } catch (...) {
        r = SessionResult {};
        r.params = params;
        r.error = QStringLiteral("unknown error in the attention computation");
    }
    r.computeSeconds
        = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    return r;
}

} // namespace attn
