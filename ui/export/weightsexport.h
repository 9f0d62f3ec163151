#pragma once
// File → Export weights: the attention weights of a SessionResult (as shown: a
// trimmed or renormalised view exports what it shows) as one NumPy array or one CSV table.
//
//   .npy  all heads: float64 (h × n_q × n_k); one head or the mean: float64 (n_q × n_k);
//         np.load(path) gives them back bit for bit.
//   .csv  one head or the mean: a header row "query,<key label 0>,<key label 1>,…" and one row
//         per query "<query label>,w_i0,w_i1,…"; all heads: a leading "head" column
//         ("head,query,<key labels>…"), heads one after the other. Labels are the tokens, or
//         the positions; fields with commas, quotes or line breaks are quoted (RFC 4180).
//         Numbers are the shortest text that reads back to the same double; NaN and ±Inf are
//         written nan, inf, -inf (as NumPy and pandas read them).
// Files are written atomically (writeNpy / QSaveFile): a failed export leaves nothing behind.

#include "ui/session/sessioncompute.h"

#include <QString>

namespace attn {

/// Which weights to export: a head 0 … h−1, the mean over heads, or all heads.
inline constexpr int allHeads = -1;

/// Writes the weights of `head` (allHeads, 0 … h−1, or h for the mean) of `result` to `path`;
/// the format follows the suffix (.npy or .csv). Returns false with `error` naming the file
/// and the problem (no result, head out of range, unknown suffix, unwritable).
bool exportWeights(const SessionResult &result, const QString &path, int head, QString *error);

/// The CSV text exportWeights writes (see above).
QByteArray weightsCsv(const SessionResult &result, int head);

} // namespace attn
