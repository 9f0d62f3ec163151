#pragma once
// What the heatmap view shows of a SessionResult: padded positions trimmed away and chosen keys
// (e.g. a first/BOS token that soaks up attention) hidden, with the weights renormalised over
// the keys that remain — or left raw. The view works on a derived SessionResult, so the
// heatmaps, tooltips, the token strip, the metric charts and the exports all show the same
// numbers and the same labels.

#include "ui/session/sessioncompute.h"

#include <QList>
#include <QString>

#include <memory>

namespace attn {

struct ViewTransform
{
    /// Hide padding: with MaskChoice::KeyPadding the last m keys are padding and, for
    /// self-attention (encoder or decoder), the last m queries are the same padded positions;
    /// both are dropped. Metrics are then over real tokens only.
    bool trimPadding = false;
    /// Keys (indices of the computation, 0 … n_k − 1) not to show, e.g. {0} for a BOS token.
    /// Indices out of range are ignored.
    QList<int> hiddenKeys;
    /// With hidden keys: true → each row is renormalised over the shown keys,
    /// w'_ij = w_ij / Σ_{k shown} w_ik ("renormalised"); false → the raw w_ij (rows then sum to
    /// less than 1). Rows whose shown keys carry no weight become fully masked (all 0, flagged).
    bool renormalize = true;

    bool isIdentity() const { return !trimPadding && hiddenKeys.isEmpty(); }
    bool operator==(const ViewTransform &) const = default;
};

/// The rows/columns a transform keeps (indices of the computation, increasing).
struct ViewSelection
{
    std::vector<int> queries;
    std::vector<int> keys;
};
ViewSelection viewSelection(const SessionParameters &params, Index queryCount, Index keyCount,
                            const ViewTransform &transform);

/// Parses "0", "0, 3", "0 3", "5-7" into key indices (sorted, unique). Empty text gives {}.
/// Returns false and names the bad part in `error` (negative numbers, garbage, a reversed range).
bool parseKeyList(const QString &text, QList<int> *keys, QString *error);

/// The result as the view shows it: weights, weightsMean, scores, scaledScores, maskState,
/// fullyMasked and metrics restricted to the kept rows and columns (metrics recomputed from the
/// shown weights, so over real tokens only when padding is trimmed), weights renormalised as
/// the transform says, queryIndex/keyIndex mapping back to the computation, renormalized and
/// viewNote set. The identity transform, a null or failed result returns `result` itself (no
/// copy). A transform that leaves no query or no key gives a result whose error says so.
std::shared_ptr<const SessionResult> applyViewTransform(std::shared_ptr<const SessionResult> result,
                                                        const ViewTransform &transform);

} // namespace attn
