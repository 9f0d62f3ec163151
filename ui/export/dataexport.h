#pragma once
// File → Export data and `attnlab heatmap --data`: the numbers behind the heatmaps of a
// SessionResult (as shown: a trimmed / renormalised view exports what it shows) as CSV, NumPy
// .npy / .npz (core/io/npy.h) or JSON.
//
// Arrays (float64 unless noted; h heads, n_q shown queries, n_k shown keys, C order):
//   weights        h × n_q × n_k   softmax weights (renormalised when the view says so)
//   weights_mean   n_q × n_k       mean over heads
//   scores         h × n_q × n_k   raw scores q kᵀ
//   scaled_scores  h × n_q × n_k   scores · scale + mask (masked cells −inf)
//   mask_state     n_q × n_k       uint8 MaskStateBits: 1 causal, 2 padding, 4 custom (0 allowed)
//   max_weight, entropy (nats), effective_terms, jacobian_norm, row_sum_error
//                  h × n_q         per-row metric series (0 on fully masked rows)
//   fully_masked   h × n_q         bool, rows with every key masked (all weights 0)
//   query_index    n_q, key_index n_k   int64, the positions of the computation that are shown
// A pooled view (the tile engine's: `attnlab heatmap --compute tiles`, the Long tab's export of
// a window) has weights only: scores, scaled_scores and the metric series are left out of .npz
// and .npy, empty in JSON, the CSV has no raw_score and scaled_score columns, and no
// _metrics.csv is written.
//
// Formats (the path's suffix chooses, see dataFormatForPath):
//   .npz  every array above as a member (np.load(path)["weights"]), deflate-compressed;
//   .npy  one file per array next to the chosen path: <stem>_<array>.npy (e.g. run_weights.npy);
//   .json one object: {"format": "attnlab-data", "version": 1, "parameters": {...},
//         "caption", "view", "renormalized", "scale", "query_labels", "key_labels",
//         "query_index", "key_index", "mask_state", "weights_mean",
//         "heads": [{"head", "weights", "scores", "scaled_scores", "metrics": {...}}]};
//         −inf (masked scaled scores) and NaN are written as null;
//   .csv  two files: <path> with one row per cell (head, query, key, query_token, key_token,
//         weight, raw_score, scaled_score, mask; head "mean" rows carry only the weight) and
//         <stem>_metrics.csv with one row per (head, query) and the metric series.
// Numbers are written in the shortest form that reads back to the same double (std::to_chars).
// Text formats refuse more than maxTextCells cells (h·n_q·n_k) with a message pointing to .npz.
// Every file is written atomically (QSaveFile / writeNpy): a failed export leaves no
// half-written file behind.

#include "ui/session/sessioncompute.h"

#include <QString>
#include <QStringList>

#include <optional>

namespace attn {

enum class DataFormat { Csv, Npy, Npz, Json };

/// CSV and JSON hold at most this many cells h·n_q·n_k (about 1–2 GB of text).
inline constexpr qint64 maxTextCells = qint64(1) << 24;

/// Bytes an export of a result with `heads` heads of rows × cols cells holds beside the result
/// (before it is written): .npz and .npy make every array an NpyArray of doubles, its .npy
/// image and, for .npz, the compressed archive in memory — 88 bytes a cell per head and 56 a
/// cell, measured as the peak RSS of `attnlab heatmap --data x.npz` at n = 2048 with 1 and 4
/// heads; .json and .csv are written as they go (0).
double dataExportBytes(DataFormat format, int heads, Index rows, Index cols);

/// ".csv", ".npy", ".npz", ".json" (case-insensitive); nullopt otherwise.
std::optional<DataFormat> dataFormatForPath(const QString &path);
/// "csv", "npy", "npz", "json".
QString dataFormatName(DataFormat format);

/// Writes `result` in `format` to `path` (see above). Returns false with `error` naming the
/// file and the problem (no result, too large for text, unwritable). `written` receives every
/// file written, in order.
bool exportData(const SessionResult &result, const QString &path, DataFormat format,
                QStringList *written, QString *error);
/// As above, the format chosen by the suffix of `path`.
bool exportData(const SessionResult &result, const QString &path, QStringList *written,
                QString *error);

} // namespace attn
