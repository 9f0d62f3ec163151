#pragma once
// Session files (.attnlab.json): the parameters, view state and loaded-tensor paths of a window,
// read and written as one JSON document. Writes are atomic (QSaveFile: a temporary file renamed
// over the target on commit), so a crash or a failed write never leaves a half-written file and
// never touches the previous one. Keys this version does not know are kept and written back, so
// a file passed through an older Attention Lab loses nothing, and named (unknownKeys) for the
// window to report.
//
// Format (version 1):
//   {
//     "format": "attnlab-session",        // required
//     "version": 1,                       // required; newer versions are refused
//     "parameters": { … },                // SessionParameters::toJson() (n, n_k, d_model, heads,
//                                         // seed, kind, mask, padding, scale_exponent,
//                                         // temperature, positional, dtype, tokens)
//     "view": {                           // optional; what the window shows
//       "mode": "attention" | "experiments",
//       "tabs": [ "<page>", … ],          // the current page of each nested tab widget
//       "heatmap": { "view": "grid" | "head", "head": 0 … h (h = mean),
//                    "quantity": "weights" | "scores" | "scaled_scores",
//                    "colormap": "viridis" | "magma" | "cividis" | "gray" | "RdBu_r",
//                    "scale": "linear" | "log", "range": "fixed" | "auto",
//                    "pooling": "max" | "mean", "show_mean": true | false,
//                    "stretch": false | true,      // maps fill their tiles (non-square cells)
//                    "fit_all": false | true,      // every tile fits the view (no scrolling)
//                    "heads_per_row": 0 … 64,      // tiles per row; 0 = chosen to fit
//                    "sort_heads": "index" | "entropy" | "max_weight",   // tile order (mean
//                    "sort_descending": false | true,                     // over rows)
//                    "pin_query": 0 … n_q − 1,     // query row outlined in every tile; absent =
//                    none "window": [key0, query0, keys, queries] },   // zoom; absent = all cells
//       "transform": { "trim_padding": false, "hidden_keys": [0, …], "renormalize": true },
//       "row_strip": true,
//       "compare": { "alpha": 0 … 1, "temperature": 1e-300 … 1e300, // B of the Compare A/B view
//                    "mask": "none" | "causal" | "padding" | "causal_padding",
//                    "d_k": 1 … 4096, "head": 0 … h (h = mean) },
//       "tokens": { "view": "heads" | "text",     // the Tokens tab: head view or coloured text
//                   "hidden_heads": [k, …],       // head view: heads whose lines are hidden
//                   "mean": false,                // head view: the mean's lines drawn
//                   "head": 0 … h (h = mean),     // coloured text: the head shown
//                   "query": -1 | 0 …,            // coloured text: the query (-1: the last)
//                   "range": "row" | "fixed" },   // colours over [0, row max] or [0, 1]
//       "steps": { "head": 0 … h − 1,         // the Steps tab: the head shown,
//                  "vectors": false,             // its vectors strip shown,
//                  "same_score_range": false },  // raw and scaled scores on one range
//       "long_map": { "n": 2 … 65536,         // the Long tab: sequence length of its own,
//                     "head": -1 | 0 … h − 1,    // the head shown (-1: the mean over heads),
//                     "pooling": "max" | "mean", // how a pixel pools its cells,
//                     "scale": "max_weight" | "unit" | "log" },   // colour scale
//       "training": { "task": "recall" | "copy" | "average", "n", "d_model", "heads",
//                     "batch", "noise", "offset", "classes", "seed": "<decimal>", "steps",
//                     "optimizer": "adam" | "sgd", "dtype": "float32" | "float64",
//                     "a": { "alpha", "lr" }, "b": { "alpha", "lr" } },
//                                         // the Training tab (ui/session/trainingsettings.h);
//                                         // absent in older files: the defaults; settings the
//                                         // core refuses are ignored
//       "play": { "parameter": "dk" | "alpha" | "tau", "from", "to", "frames": 1 … 1000,
//                 "fps": 0.25 … 60, "loop": false },   // the Play dock (playsettings.h);
//                                         // absent or invalid: the dock keeps its settings
//       …                                 // further keys of newer views are kept
//     },
//     "tensors": {                        // optional; File → Open Tensors…
//     (ui/session/tensorsource.h)
//       "file": "<path>",                 // .npz/.npy; relative paths: to the session's folder
//       "array": "<name>",                // weights: the array shown (empty for inputs)
//       "mask_convention": "masked" | "allowed",
//       "layer": 0,                       // weights: the layer shown
//       "batch": 0                        // inputs with a batch axis (B, n, E): the item shown
//     },
//     "model": {                          // optional; File → Open Model… (ui/session/modelrun.h)
//       "folder": "<path>",               // the checkpoint folder; relative: to the session's
//                                         // folder
//       "text": "<text>",                 // the text typed (or the token ids as typed)
//       "ids": false,                     // the text is token ids
//       "shown": true,                    // the views showed its run: it is run again on open
//       "layer": 0                        // the layer shown
//     },
//     "random_inputs": { … }              // optional; with "tensors" or "model": the Controls'
//                                         // parameters of the seeded random inputs (as
//                                         // "parameters"), which Back to Random Inputs restores
//                                         // and which are shown when the tensors or the model
//                                         // cannot be loaded ("parameters" then holds the
//                                         // stored source's shape)
//   }

#include "ui/render/comparerenderer.h"
#include "ui/render/heatmaprenderer.h"
#include "ui/render/tokenfigure.h"
#include "ui/session/resultview.h"
#include "ui/session/sessionparameters.h"

#include <QByteArray>
#include <QJsonObject>
#include <QString>
#include <QStringList>

#include <memory>
#include <optional>

namespace attn {

class TensorSource;

/// Everything a session file holds.
struct SessionDocument
{
    SessionParameters parameters;
    /// View state (see the format above). Unknown keys are kept as read.
    QJsonObject view;
    /// The loaded tensors (see the format above; empty: seeded random inputs). load() makes a
    /// relative "file" absolute (relative to the session file's folder); save() writes it as
    /// given.
    QJsonObject tensors;
    /// The open model (see the format above; empty: none). load() makes a relative "folder"
    /// absolute.
    QJsonObject model;
    /// The parameters of the seeded random inputs while tensors or a model are shown (see
    /// "random_inputs" above; nullopt: none stored).
    std::optional<SessionParameters> randomInputs;
    /// Top-level keys and "parameters" keys this version does not know, written back unchanged.
    QJsonObject extra;
    QJsonObject parametersExtra;
    /// The keys fromJson found that this version does not use, in file order by block, each
    /// written as its path: "\"colour\"", "\"parameters\": \"heads_x\"", "\"view\": \"foo\"".
    /// The file is read all the same; SessionController reports them.
    QStringList unknownKeys;
};

class SessionFile
{
public:
    static constexpr const char *formatName = "attnlab-session";
    static constexpr int formatVersion = 1; ///< the newest version this build reads and writes
    static constexpr const char *suffix = ".attnlab.json";
    static constexpr qint64 maxFileBytes = 64 * 1024 * 1024; ///< larger files are refused

    /// The document as indented UTF-8 JSON.
    static QByteArray toJson(const SessionDocument &document);
    /// Parses toJson's output. Returns nullopt and sets `error` to the problem (not JSON, not a
    /// session, newer format version, invalid parameter, a "model" without a "folder", a view-state
    /// number out of its range above (a head, the zoom window, the pinned query, the heads per
    /// row, an unknown "sort_heads", a "fit_all" that is not a boolean, hidden keys, B's α, τ, d_k,
    /// the Long tab's n, head, pooling and scale), a negative or fractional tensors "layer" …)
    /// without naming a file.
    static std::optional<SessionDocument> fromJson(const QByteArray &data, QString *error);

    /// Reads a session file. `error` names the file and the problem.
    static std::optional<SessionDocument> load(const QString &path, QString *error);
    /// Writes a session file atomically (see writeAtomically). `error` names the file.
    static bool save(const QString &path, const SessionDocument &document, QString *error);

    /// Writes `data` to `path` through QSaveFile: the old file (if any) stays untouched until
    /// every byte is written and the temporary file is renamed over it. `failAfterBytes` ≥ 0
    /// simulates a failure (a crash or full disk) after that many bytes: the write is abandoned
    /// and false returned, as for a real failure. Returns false with `error` naming the file.
    static bool writeAtomically(const QString &path, const QByteArray &data, QString *error,
                                qint64 failAfterBytes = -1);

    /// `path` with ".attnlab.json" appended unless it already ends in ".json".
    static QString withSuffix(const QString &path);
};

/// Loads the tensors a session names (SessionDocument::tensors: file, array, mask convention,
/// layer) for headless use. Returns nullptr with an empty `error` when it names none, nullptr
/// with `error` naming the file and the problem when they cannot be loaded.
std::shared_ptr<const TensorSource> loadSessionTensors(const QJsonObject &tensors, QString *error);

/// The "heatmap" view-state object for `options` (colours and font are not stored).
QJsonObject heatmapViewToJson(const HeatmapOptions &options);
/// Applies the keys present in `o` to `base`; unknown or invalid values leave `base`'s value.
HeatmapOptions heatmapViewFromJson(const QJsonObject &o, HeatmapOptions base);
/// The "transform" view-state object (trim padding, hidden keys, renormalisation).
QJsonObject viewTransformToJson(const ViewTransform &transform);
/// Applies the keys present in `o` to `base` (invalid values are ignored).
ViewTransform viewTransformFromJson(const QJsonObject &o, ViewTransform base);
/// The "compare" view-state object: B's variant of the Compare A/B view and the head compared
/// (0 … h−1, h = the mean).
QJsonObject compareViewToJson(const CompareVariant &variant, int head);
/// Applies the keys present in `o` to `base` (and `head`, if given); unknown or invalid values
/// (α outside [0, 1], τ outside [1e-300, 1e300], d_k outside [1, 4096], a negative or fractional
/// head, an unknown mask) leave the old value.
CompareVariant compareViewFromJson(const QJsonObject &o, CompareVariant base, int *head = nullptr);

/// The "tokens" view-state object (the Tokens tab): view, hidden_heads, mean, head (text view),
/// query (text view, −1 = the last) and range; colours, font and the hover are not stored.
QJsonObject tokenViewToJson(const TokenViewOptions &options);
/// Applies the keys present in `o` to `base`; unknown or invalid values (an unknown view or
/// range, a negative or fractional head, a query below −1, a hidden head that is not a whole
/// number ≥ 0) leave `base`'s value.
TokenViewOptions tokenViewFromJson(const QJsonObject &o, TokenViewOptions base);

} // namespace attn
