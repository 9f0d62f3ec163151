#pragma once
// The main view of long sequences (n up to SessionParameters::maxLongSequence) from the tile
// engine (core/tiles/tileengine.h): every head and the mean over heads pooled to at most
// side × side pixels straight from the projected queries and keys, without the n_q × n_k
// matrices a SessionResult of computeSession holds (sessionResultBytes: 1.2 GB at n = 2048,
// h = 12). The result is a SessionResult whose "cells" are the pooled pixels, which
// HeatmapRenderer draws as it draws any result.

#include "ui/session/sessioncompute.h"
#include "ui/session/sessionparameters.h"
#include "ui/session/sessionresult.h"

#include "core/tiles/tileengine.h"

#include <algorithm>
#include <functional>

namespace attn {

/// What computePooledSession holds for `params` with images of at most side × side pixels
/// (bytes).
struct PooledSessionBytes
{
    double inputs = 0; ///< while projecting: X (and E) in float64, their copies in the dtype, q, k
                       ///< and the layer's parameters
    double engine = 0; ///< TileEngine::heldBytes: q, k, packed keys, row statistics, row blocks
    double images = 0; ///< (h + 1) pooled images in the dtype and in float64 (the result), their
                       ///< mask states, and HeatmapRenderer's 4-byte tile images of them
    /// The peak: max(inputs, engine + images).
    double total() const { return std::max(inputs, engine + images); }
};

/// What of `params` the tile engine's pooled view does not apply ("RoPE", "ALiBi", "shared
/// key/value heads (g = 2)", joined by ", "), or an empty string: it applies the masks, the
/// scale and sinusoidal positions only, and computePooledSession refuses the others.
QString pooledSessionUnsupported(const SessionParameters &params);
/// Where what pooledSessionUnsupported names is drawn for n_q × n_k cells: "`computedBy` from
/// the full matrices, …" when both are at most SessionParameters::maxSequence, else that only
/// the full matrices can, their limit and these lengths named.
QString fullMatricesNote(Index nQ, Index nK, const QString &computedBy);

/// The bytes of computePooledSession(params, side) (params valid, seeded inputs).
PooledSessionBytes pooledSessionBytes(const SessionParameters &params, int side);

/// The tile engine of the session's attention: the seeded inputs as computeSession draws them,
/// projected to queries and keys as MultiheadAttention::forward does (q = X W_Qᵀ + b_Q,
/// k = E W_Kᵀ + b_K, n × d_model each, heads side by side), with the session's mask, α and τ;
/// with opened inputs (params.tensors) their queries and keys as computeTensorSession projects
/// them, with the file's mask OR-ed with the session's; for a model run the layer shown from the
/// run's kept queries (after RoPE) and keys, with the layer's mask and 1/√d_k. `params` must be
/// valid up to maxLongSequence and pooledSessionUnsupported(params) empty. Throws Cancelled when
/// `cancelled` says so after the projections, InvalidArgument from the engine or for stored
/// weights (no queries and keys), std::bad_alloc when memory runs out.
template<typename T>
TileEngine<T> sessionTileEngine(const SessionParameters &params,
                                const std::function<bool()> &cancelled = {});

/// The images of one engine.render() of heads 0 … heads − 1, then kHeadMean when heads > 1 (all
/// of one window and grid), as a SessionResult whose cells are the pixels: weights and
/// weightsMean grid.height × grid.width (float64), maskState, fullyMasked per pixel row (every
/// query of it fully masked over all keys, TileEngine::rowFullyMasked — not merely masked in a
/// window of keys), queryIndex / keyIndex the first query / key of each pixel row / column,
/// viewNote "tile engine: max of 16 × 16 cells per pixel". Moves the values out of `tiles`.
/// Scores, scaled scores and per-row metrics are not filled.
template<typename T>
void pooledTilesResult(std::vector<PooledTile<T>> &tiles, const TileEngine<T> &engine,
                       SessionResult &r);

/// The session's weights (seeded inputs as computeSession draws them, params.tensors unset) by
/// the tile engine: per head and for the mean over heads the full view pooled to
/// tileGrid(n_q × n_k, side, side) by `pooling`. The result's weights / weightsMean are
/// grid.height × grid.width (the pixels, float64), maskState the pixels' mask states (a pixel
/// whose cells are all masked), fullyMasked per pixel row (every row of it fully masked),
/// queryIndex / keyIndex the first query / key of each pixel row / column (so the axes show
/// positions), viewNote "tile engine: max of 16 × 16 cells per pixel". Scores, scaled scores and
/// per-row metrics are not filled (the view shows weights). Never throws: errors (invalid
/// parameters up to maxLongSequence, what pooledSessionUnsupported names, cancellation, out of
/// memory) land in SessionResult::error.
SessionResult computePooledSession(const SessionParameters &params, int side, TilePooling pooling,
                                   const std::function<bool()> &cancelled = {});

} // namespace attn
