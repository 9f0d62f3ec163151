#pragma once
// The head atlas of a model run, as one report: the pattern and row scores of every head
// (headscores.h) plus what only a model gives (headcontributions.h) — Olsson et al.'s prefix
// matching per head, Dong et al.'s rank-collapse residual per layer and, asked for, value-weighted
// norms, attention rollout and head ablation — and the two writers every consumer shares (the
// command line's `attnlab heads`, the window's Atlas tab): a table (one row per head) and JSON
//   {"layers": L, "heads": H, "scores": {name: [[per head] per layer], …}}
// with a model also "rank_collapse": [per layer] and, with the contributions, "rollout":
// [[n × n]], "ablation": "zero" | "mean" and "ablation_top1": {"original": id, "ablated":
// [[per head] per layer]}. Non-finite numbers are null in JSON.

#include "core/analysis/headcontributions.h"
#include "core/analysis/headscores.h"
#include "core/base/cancel.h"
#include "core/io/table.h"
#include "core/models/forward.h"
#include "core/models/model.h"

#include <cstdint>
#include <optional>
#include <string>
#include <utility>
#include <vector>

namespace attn {

/// What reportModelHeads computes beyond the forward it is given.
struct ModelHeadOptions
{
    Index prefixTokens = 25; ///< N random tokens repeated twice for prefix matching (≥ 1)
    Index prefixDraws = 4; ///< sequences prefix matching averages over (≥ 1)
    std::uint64_t seed = 0; ///< of prefixMatchingSequences
    std::optional<std::int64_t> bos; ///< the id before each prefix-matching sequence
    /// Value-weighted norms, rollout and head ablation (1 + L·h more forwards).
    bool contributions = false;
    models::Ablation ablation = models::Ablation::Zero;
    /// Keep every head's value-weighted norms N (L·h·n·n float64) in the report.
    bool keepValueNorms = false;
};

/// The forward options reportModelHeads needs of its forward: every head's weights, the
/// residual stream and, with `contributions`, the values; no queries, keys or logits.
models::ForwardOptions modelHeadForwardOptions(bool contributions);

struct ModelHeadReport
{
    MatrixD prefixMatching; ///< layers × heads
    std::vector<double> rankCollapse; ///< per layer
    bool contributions = false;
    MatrixD valueNormSink, valueNormMass; ///< layers × heads (with contributions)
    MatrixD rollout; ///< n × n (with contributions)
    HeadAblation ablation; ///< (with contributions)
    models::Ablation ablationKind = models::Ablation::Zero;
    /// L·h·n·n float64 in the C order of (layers, heads, n, n), with keepValueNorms.
    std::vector<double> valueNorms;
};

/// The report of `model`'s forward `run` (made with modelHeadForwardOptions(
/// options.contributions) on the same ids). Throws InvalidArgument when `run` lacks what the
/// options need (weights of every head, the residual stream, the values), Cancelled, and what
/// forward() throws (prefix-matching sequences past the model's positions, ids outside the
/// vocabulary).
ModelHeadReport reportModelHeads(const models::Model &model, const models::ForwardResult &run,
                                 const ModelHeadOptions &options, const CancelToken &cancel = {});

/// The per-head scores in the order every writer lists them, with their JSON names: the
/// stack's (headScoreColumns), then with a report prefix_matching and, with its contributions,
/// value_norm_sink, value_norm_mass, ablation_kl.
std::vector<std::pair<const char *, const MatrixD *>>
headReportColumns(const HeadScores &scores, const ModelHeadReport *report);

/// One row per (layer, head): layer, head, the columns (every digit, or `rounded` to 4
/// decimals as text, "nan" for NaN), sink_flag, zero_rows and, with contributions,
/// ablation_top1.
Table headReportTable(const HeadScores &scores, const ModelHeadReport *report, bool rounded);

/// The JSON of the file's comment, with a final newline.
std::string headReportJson(const HeadScores &scores, const ModelHeadReport *report);

} // namespace attn
