#include "ui/session/pooledsession.h"

#include "ui/session/tensorsource.h"
#include "ui/session/tensorsource_p.h"

#include "core/attention/positional.h"
#include "core/attention/querykeyheads.h"
#include "core/base/blas.h"
#include "core/base/types.h"
#include "core/engine/sessioninputs.h"
#include "core/models/forward.h"
#include "core/models/layertiles.h"

#include <QString>
#include <QStringList>

#include <atomic>
#include <chrono>
#include <exception>
#include <new>
#include <type_traits>

namespace attn {

namespace {

template<typename T>
void computePooled(const SessionParameters &p, int side, TilePooling pooling, SessionResult &r,
                   const std::function<bool()> &cancelled)
{
    TileEngine<T> engine = sessionTileEngine<T>(p, cancelled);
    r.scale = engine.scale();

    std::vector<Index> heads;
    for (Index h = 0; h < p.heads; ++h)
        heads.push_back(h);
    if (p.heads > 1)
        heads.push_back(kHeadMean);
    // The engine polls an atomic flag while it runs; `cancelled` is asked before the pass.
    std::atomic<bool> stop {cancelled && cancelled()};
    if (stop.load())
        throw Cancelled();
    std::vector<PooledTile<T>> tiles
        = engine.render(heads, engine.fullWindow(), side, side, pooling, nullptr, &stop);

    pooledTilesResult(tiles, engine, r);
}

} // namespace

template<typename T>
void pooledTilesResult(std::vector<PooledTile<T>> &tiles, const TileEngine<T> &engine,
                       SessionResult &r)
{
    const Index heads = engine.heads();
    const TileGrid g = tiles.front().grid;
    const TileWindow window = tiles.front().window;
    const TilePooling pooling = tiles.front().pooling;
    r.weights.resize(std::size_t(heads));
    for (Index h = 0; h < heads; ++h) {
        r.weights[std::size_t(h)] = tiles[std::size_t(h)].values.template cast<double>();
        tiles[std::size_t(h)].values = Matrix<T>();
    }
    r.weightsMean
        = heads > 1 ? MatrixD(tiles.back().values.template cast<double>()) : r.weights.front();
    r.signedWeights = engine.signedWeights();
    r.maskState = tiles.front().maskState;
    // A pixel row is fully masked when each of its queries is, over every key: in a window of
    // some keys only, every pixel of a row may be masked while its queries attend elsewhere.
    std::vector<std::uint8_t> rowMasked(std::size_t(g.height), 0);
    for (Index y = 0; y < g.height; ++y) {
        if (!(r.maskState.row(y).array() != 0).all())
            continue;
        bool all = true;
        for (Index i = window.rowBegin + y * g.rowsPerPixel;
             all && i < std::min(window.rowEnd, window.rowBegin + (y + 1) * g.rowsPerPixel); ++i)
            all = engine.rowFullyMasked(i);
        rowMasked[std::size_t(y)] = all ? 1 : 0;
    }
    r.fullyMasked.assign(std::size_t(heads), rowMasked);
    r.queryIndex.resize(std::size_t(g.height));
    for (Index y = 0; y < g.height; ++y)
        r.queryIndex[std::size_t(y)] = int(window.rowBegin + y * g.rowsPerPixel);
    r.pooledQueryEnd = int(window.rowEnd);
    r.pooledKeyEnd = int(window.colEnd);
    r.keyIndex.resize(std::size_t(g.width));
    for (Index x = 0; x < g.width; ++x)
        r.keyIndex[std::size_t(x)] = int(window.colBegin + x * g.colsPerPixel);
    r.viewNote
        = QStringLiteral("tile engine: %1 of %2 \u00d7 %3 cells per pixel")
              .arg(pooling == TilePooling::Max ? QStringLiteral("max") : QStringLiteral("mean"))
              .arg(g.rowsPerPixel)
              .arg(g.colsPerPixel);
}

template void pooledTilesResult<float>(std::vector<PooledTile<float>> &, const TileEngine<float> &,
                                       SessionResult &);
template void pooledTilesResult<double>(std::vector<PooledTile<double>> &,
                                        const TileEngine<double> &, SessionResult &);

namespace {

/// Key n_k × g·d_k with one column block per query head: query head i reads key head ⌊i·g/h⌋.
template<typename T, typename Derived>
Matrix<T> keyPerQueryHead(const Eigen::MatrixBase<Derived> &key, Index heads, Index groups,
                          Index dK)
{
    Matrix<T> k(key.rows(), heads * dK);
    for (Index i = 0; i < heads; ++i)
        k.middleCols(i * dK, dK) = key.middleCols(i * groups / heads * dK, dK).template cast<T>();
    return k;
}

/// The engine of opened inputs: Q and K as computeTensorSession's layer projects them
/// (q = query W_Qᵀ + b_Q, k = key W_Kᵀ + b_K for PyTorch-named parameters; projected heads as
/// they are, each query head given its key group's columns; plain attention one head), with the
/// file's mask OR-ed with the session's.
template<typename T>
TileEngine<T> tensorTileEngine(const SessionParameters &p, const TensorCase<double> &c)
{
    const Index nQ = c.queryCount(), nK = c.keyCount();
    AttentionMask mask
        = c.mask | maskFromParameters(p.kind, p.mask, p.paddingCount, nQ, nK, p.window, p.sinks);
    const Index heads = c.multihead || c.projectedHeads ? c.heads : 1;
    Matrix<T> q, k;
    if (c.multihead) {
        const Index d = c.dModel();
        const Matrix<T> wQ = c.separateProjections ? Matrix<T>(c.qProjWeight.cast<T>())
                                                   : Matrix<T>(c.inProjWeight.topRows(d).cast<T>());
        const Matrix<T> wK = c.separateProjections
            ? Matrix<T>(c.kProjWeight.cast<T>())
            : Matrix<T>(c.inProjWeight.middleRows(d, d).cast<T>());
        const Matrix<T> query = c.query.cast<T>(), key = c.key.cast<T>();
        q.resize(nQ, d);
        k.resize(nK, d);
        gemmTransposed<T>(query, wQ, q);
        gemmTransposed<T>(key, wK, k);
        q.rowwise() += c.inProjBias.segment(0, d).cast<T>().transpose();
        k.rowwise() += c.inProjBias.segment(d, d).cast<T>().transpose();
    } else if (c.projectedHeads) {
        q = c.query.cast<T>();
        k = keyPerQueryHead<T>(c.key, heads, c.kvHeads, c.query.cols() / heads);
    } else {
        q = c.query.cast<T>();
        k = c.key.cast<T>();
    }
    AttentionOptions options;
    options.scaleExponent = p.scaleExponent;
    options.temperature = p.temperature;
    // The file's learned sinks and differential attention (its element-wise gate_logits scale
    // the heads' outputs, not their weights).
    TileVariants<T> variants;
    const GroupedVariants<double> &v = c.variants;
    if (v.hasSinks())
        variants.sinkLogits = v.sinkLogits.size() == 1
            ? std::vector<double>(std::size_t(heads), v.sinkLogits.front())
            : v.sinkLogits;
    if (v.isDifferential()) {
        const Index groups = c.projectedHeads ? c.kvHeads : heads;
        variants.query2 = v.query2.cast<T>();
        variants.key2 = keyPerQueryHead<T>(v.key2, heads, groups, v.query2.cols() / heads);
        variants.lambda = v.lambda.size() == 1
            ? std::vector<double>(std::size_t(heads), v.lambda.front())
            : v.lambda;
    }
    return TileEngine<T>(std::move(q), std::move(k), heads, std::move(mask), options,
                         std::move(variants));
}

} // namespace

/// The tile engine of a model run's layer shown (models::layerTileEngine).
template<typename T> TileEngine<T> modelTileEngine(const TensorSource &source)
{
    const TensorSource::Data &d = source.data();
    if (!d.forward)
        throw InvalidArgument("the model run kept no queries and keys");
    return models::layerTileEngine<T>(*d.forward, d.modelConfig, source.layer());
}

template<typename T>
TileEngine<T> sessionTileEngine(const SessionParameters &p, const std::function<bool()> &cancelled)
{
    if (p.tensors && p.tensors->isModelRun())
        return modelTileEngine<T>(*p.tensors);
    if (p.tensors) {
        const TensorCase<double> *c = p.tensors->tensorCase();
        if (!c)
            throw InvalidArgument("stored weights have no queries and keys to compute from");
        return tensorTileEngine<T>(p, *c);
    }
    // Inputs as the window draws them (core/engine/sessioninputs.h), projected as
    // MultiheadAttention::forward: q = X W_Qᵀ + b_Q (n_q × d_model), k = E W_Kᵀ + b_K.
    const EngineParameters ep = engineParameters(p);
    SessionInputs<T> in = sessionInputs<T>(ep);
    const Index d = ep.dModel;
    // The 2025 variants as the full engine applies them (core/engine/sessionengine.cpp): the
    // sink logit in every head, the gate σ(x_i·w_θ[:, u] + b) from the query-side input.
    TileVariants<T> variants;
    if (ep.learnedSink)
        variants.sinkLogits.assign(std::size_t(ep.heads), ep.sinkLogit);
    if (ep.alibi) { // as the full engine's row pass: causal form under a causal mask
        variants.alibiSlopes = alibiSlopes(ep.heads);
        variants.alibiCausal = ep.attentionMask().hasCausal();
    }
    if (ep.outputGate && in.gateWeights.size() > 0) {
        const MatrixD logits = (in.query * in.gateWeights).array() + ep.gateBias;
        variants.gate = (1.0 / (1.0 + (-logits.array()).exp())).matrix();
    }
    const Matrix<T> x = in.query.template cast<T>();
    in.query = MatrixD();
    if (ep.latent && in.latent) {
        // Multi-head latent attention: each head's decompressed [q^C, q^R] and [k^C, k^R]
        // (the absorbed computation gives the same weights), scaled by (d_k + d_r)^(−α)/τ.
        auto [q, k] = mlaQueryKeyHeads<T>(x, *in.latent);
        if (cancelled && cancelled())
            throw Cancelled();
        AttentionOptions options;
        options.scaleOverride = ep.scale();
        options.checkFinite = false;
        return TileEngine<T>(std::move(q), std::move(k), p.heads, ep.attentionMask(), options,
                             std::move(variants));
    }
    const Matrix<T> e
        = in.encoder.size() > 0 ? Matrix<T>(in.encoder.template cast<T>()) : Matrix<T>();
    in.encoder = MatrixD();
    const Matrix<T> &keyInput = e.size() > 0 ? e : x;
    // q = X W_Qᵀ + b_Q and k = E W_Kᵀ + b_K of `layer`, as the full engine's stage 1
    // (computeScores, core/engine/sessionengine.cpp): g < h key heads each the mean of its
    // group's, RoPE on every query head (positions 0 … n_q − 1) and key head (0 … n_k − 1);
    // the engine then gets one key head per query head, query head i reading ⌊i·g/h⌋.
    const Index h = ep.heads, g = ep.keyValueHeads(), dK = d / h;
    const auto project = [&](const MultiheadAttention<T> &layer, Matrix<T> &q, Matrix<T> &k) {
        QueryKeyHeads<T> qk = groupedQueryKey<T>(layer, x, keyInput, g);
        if (ep.rope) {
            applyRopeHeads<T>(qk.query, h, ep.ropeConvention, ep.ropeBase);
            applyRopeHeads<T>(qk.key, g, ep.ropeConvention, ep.ropeBase);
        }
        q = std::move(qk.query);
        k = g == h ? std::move(qk.key) : keyPerQueryHead<T>(qk.key, h, g, dK);
    };
    Matrix<T> q, k;
    project(in.layer, q, k);
    if (ep.differential && in.secondLayer) {
        // A₂ from the second layer's queries and keys of the same inputs.
        project(*in.secondLayer, variants.query2, variants.key2);
        variants.lambda = ep.lambdaPerHead();
    }
    if (cancelled && cancelled())
        throw Cancelled();
    AttentionOptions options;
    options.scaleExponent = p.scaleExponent;
    options.temperature = p.temperature;
    options.checkFinite = false; // projections of finite seeded inputs
    return TileEngine<T>(std::move(q), std::move(k), p.heads, ep.attentionMask(), options,
                         std::move(variants));
}

template TileEngine<float> sessionTileEngine<float>(const SessionParameters &,
                                                    const std::function<bool()> &);
template TileEngine<double> sessionTileEngine<double>(const SessionParameters &,
                                                      const std::function<bool()> &);

PooledSessionBytes pooledSessionBytes(const SessionParameters &p, int side)
{
    const double elem = p.dtype == DType::Float32 ? 4.0 : 8.0;
    const double nQ = double(p.queryCount()), nK = double(p.keyCount()), d = double(p.dModel);
    const bool cross = p.kind == AttentionKind::EncoderDecoder;
    PooledSessionBytes b;
    const double inputRows = nQ + (cross ? nK : 0.0);
    b.inputs = inputRows * d * (8.0 + elem) + (nQ + nK) * d * elem + (4.0 * d * d + 4.0 * d) * elem;
    // A model run projects nothing here: its queries and keys, of its own d_k, are the run's.
    const auto shape = p.tensors ? p.tensors->modelShape() : std::nullopt;
    if (shape)
        b.inputs = 0;
    // Multi-head latent attention: its six projections, the latent and RoPE keys, and each
    // head's queries and keys of width d_k + d_r.
    const Index width = shape ? Index(shape->headDim) : p.scoreDim();
    if (p.latent) {
        const double h = double(p.heads), dK = double(p.dK()), dC = double(p.latentDim),
                     dR = double(p.latentRopeDim);
        b.inputs += (d * dC + 2.0 * dC * h * dK + d * dR + d * h * dK + d * h * dR) * (8.0 + elem)
            + nQ * (dC + dR + h * dK + h * dR + 2.0 * h * double(width)) * elem;
    }
    // Differential attention's second layer and queries and keys; the gate's w_θ.
    if (p.differential)
        b.inputs += (4.0 * d * d + 4.0 * d) * elem;
    if (p.outputGate)
        b.inputs += d * double(p.heads) * 8.0;
    b.engine = double(p.dtype == DType::Float32
                          ? TileEngine<float>::heldBytes(p.queryCount(), p.keyCount(), p.heads,
                                                         width, 4, p.differential, p.outputGate)
                          : TileEngine<double>::heldBytes(p.queryCount(), p.keyCount(), p.heads,
                                                          width, 8, p.differential, p.outputGate));
    const TileGrid g = tileGrid({0, p.queryCount(), 0, p.keyCount()}, side, side);
    const double pixels = double(g.width) * double(g.height);
    const double images = double(p.heads) + (p.heads > 1 ? 1.0 : 0.0);
    b.images = images * pixels * ((elem + 1.0) + 8.0 + 4.0) + pixels;
    return b;
}

SessionResult computePooledSession(const SessionParameters &params, int side, TilePooling pooling,
                                   const std::function<bool()> &cancelled)
{
    SessionResult r;
    r.params = params;
    const auto start = std::chrono::steady_clock::now();
    r.error = params.validate(SessionParameters::maxLongSequence);
    if (r.ok() && params.tensors)
        r.error = QStringLiteral("the tile engine's view takes seeded inputs, not loaded tensors");
    if (r.ok() && side < 1)
        r.error
            = QStringLiteral("the pooled images need at least 1 pixel a side, got %1").arg(side);
    if (!r.ok())
        return r;
    try {
        if (params.dtype == DType::Float32)
            computePooled<float>(params, side, pooling, r, cancelled);
        else
            computePooled<double>(params, side, pooling, r, cancelled);
    } catch (const Cancelled &) {
        r = SessionResult {};
        r.params = params;
        r.error = QStringLiteral("cancelled");
    } catch (const NonFiniteInput &e) {
        r = SessionResult {};
        r.params = params;
        r.error = QString::fromStdString(e.what());
        r.inputError = true;
    } catch (const InvalidArgument &e) {
        r = SessionResult {};
        r.params = params;
        r.error = QString::fromStdString(e.what());
        r.inputError = true;
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
    }
    r.computeSeconds
        = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    return r;
}

} // namespace attn
