#pragma once
// What the main view shows: the core engine's numbers (core/engine/sessionengine.h,
// EngineResult) with the parameters that made them, the error text and, for results derived
// for display, which rows and columns are shown.

#include "ui/session/sessionparameters.h"

#include "core/base/types.h"
#include "core/engine/sessionengine.h"

#include <QString>

#include <cstddef>
#include <vector>

namespace attn {

/// EngineResult's fields (weights, weightsMean, scores, scaledScores, maskState, fullyMasked,
/// metrics, scale, worstRowSumError, nonFinite; every matrix n_q × n_k, float64) plus these.
///
/// Errors: a computation that fails (bad parameters, a bad tensor file, too little memory,
/// NaN/Inf input) throws nothing to its caller; it returns a result with `error` set to a
/// message naming the problem and empty matrices (headCount() 0, queryCount() and keyCount()
/// 0), `params` kept. Check ok() before reading the numbers. A cancelled computation's error
/// is "cancelled". The accessors below never throw; the index ones take shown rows/columns in
/// [0, queryCount()) and [0, keyCount()) (out-of-range indices are undefined behaviour, as
/// std::vector's operator[]).
struct SessionResult : EngineResult
{
    quint64 requestId = 0;
    SessionParameters params;
    double computeSeconds = 0; ///< wall time of the computation (seconds)
    QString error; ///< non-empty when the computation failed (the message names the problem)
    /// The failure is the input's (NaN/Inf, scaled scores that overflow the dtype, invalid
    /// parameters: core's NonFiniteInput / InvalidArgument), not the machine's.
    bool inputError = false;

    // Set only on a result derived for display by applyViewTransform (ui/resultview.h): which
    // rows/columns of the computation are shown, and how. Empty maps mean "all, in order".
    std::vector<int> queryIndex; ///< shown row r is query queryIndex[r] of the computation
    std::vector<int> keyIndex; ///< shown column c is key keyIndex[c] of the computation
    /// A pooled view (pooledTilesResult): one past the last query / key its last pixel row /
    /// column holds, so the axes end on the last position shown; 0 otherwise.
    int pooledQueryEnd = 0, pooledKeyEnd = 0;
    bool renormalized = false; ///< weights renormalised over the shown keys (keys were hidden)
    QString viewNote; ///< what the view changed, e.g. "padding trimmed: metrics over 6 real tokens"

    bool ok() const { return error.isEmpty(); }
    /// Query / key of the computation behind shown row r / column c.
    int originalQuery(int r) const { return queryIndex.empty() ? r : queryIndex[std::size_t(r)]; }
    int originalKey(int c) const { return keyIndex.empty() ? c : keyIndex[std::size_t(c)]; }
    /// Axis labels of shown row r / column c (the token, else the original position).
    QString queryLabel(int r) const { return params.queryLabel(originalQuery(r)); }
    QString keyLabel(int c) const { return params.keyLabel(originalKey(c)); }
    /// Axis labels with the position in front of a token ("3:the"), for shown row r / column c.
    QString indexedQueryLabel(int r) const { return params.indexedQueryLabel(originalQuery(r)); }
    QString indexedKeyLabel(int c) const { return params.indexedKeyLabel(originalKey(c)); }
    int headCount() const { return int(weights.size()); }
    Index queryCount() const { return weightsMean.rows(); }
    Index keyCount() const { return weightsMean.cols(); }
};

} // namespace attn
