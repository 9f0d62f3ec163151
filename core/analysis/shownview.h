#pragma once
// What a heatmap view shows of a computed result: the cells of chosen rows (queries) and columns
// (keys) — padding trimmed away, chosen keys (a BOS token that soaks up attention) hidden — with
// each row's weights renormalised over the shown keys or left raw, and the per-row metrics of
// what is shown. The window's view transform (ui/session/resultview.h) is this plus its labels
// and notes.

#include "core/engine/sessionengine.h"

#include <vector>

namespace attn {

/// The kept rows and columns of a result (indices of the computation, increasing).
struct ShownCells
{
    std::vector<int> queries;
    std::vector<int> keys;
    /// Each shown row divided by its sum over the shown keys (w'_ij = w_ij / Σ_{k shown} w_ik);
    /// a gated row σ(g_i)·a_i keeps its gate (w'_ij = σ(g_i)·a_ij / Σ_{k shown} a_ik); a row
    /// whose shown keys carry no weight becomes all 0 and fully masked. False: the raw w_ij
    /// (rows then sum to less than 1).
    bool renormalize = false;
    /// The metrics of each kept row are the computation's (only padding, of weight 0, was
    /// dropped): copied instead of recomputed.
    bool keepRowMetrics = false;
};

/// `in` restricted to `cells`: weights, weightsMean, scores, scaledScores (when `in` has them),
/// unrotatedScores, positionBias, maskState, fullyMasked (h × shown rows), metrics (recomputed
/// from the shown weights with rowMetrics, or kept), nonFinite and worstRowSumError of the
/// shown weights (of the rows before the gate when `in` has one); scale, alibiSlopes, sinkMass
/// and positionBiasCausal as in `in` (sinkMass is of the whole rows); gate, learnedSinkMass, A₁
/// and A₂ of the shown rows (and cells). Matrices: h × (shown rows × shown keys), row-major. Heads
/// run in parallel by the core's thread policy. Throws InvalidArgument when an index is outside
/// `in`'s n_q × n_k or the selection is empty.
EngineResult selectShownCells(const EngineResult &in, const ShownCells &cells);

} // namespace attn
