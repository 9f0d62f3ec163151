#pragma once
// The main view's computation, free of widgets: parameters → inputs (seeded) → multi-head
// attention → per-head weights, scores, mask states and metrics. Used by AttentionSession's
// worker and by `attnlab heatmap`, so the window and the command line show the same numbers.

#include "sessionparameters.h"

#include <attention.h>
#include <mask.h>
#include <metrics.h>
#include <types.h>

#include <QString>

#include <cstdint>
#include <functional>
#include <vector>

namespace attn {

struct SessionResult
{
    quint64 requestId = 0;
    SessionParameters params;
    // Every matrix is n_q × n_k, row-major, converted to double for display.
    std::vector<MatrixD> weights; ///< h heads
    MatrixD weightsMean; ///< mean over heads
    std::vector<MatrixD> scores; ///< h heads, raw q kᵀ
    std::vector<MatrixD> scaledScores; ///< h heads, scaled + masked (masked = −inf)
    MatrixB maskState; ///< MaskStateBits per cell
    std::vector<std::vector<std::uint8_t>> fullyMasked; ///< h × n_q
    std::vector<RowMetrics> metrics; ///< per head
    double scale = 1.0;
    double worstRowSumError = 0; ///< max over heads and rows of |Σw − 1|
    double computeSeconds = 0; ///< wall time of the computation (seconds)
    NonFiniteReport nonFinite; ///< NaN/Inf found in the weights (shown, never hidden)
    QString error; ///< non-empty when the computation failed
    bool ok() const { return error.isEmpty(); }
    int headCount() const { return int(weights.size()); }
    Index queryCount() const { return weightsMean.rows(); }
    Index keyCount() const { return weightsMean.cols(); }
};

/// Draw order (one generator seeded with params.seed): MultiheadAttention::initXavier, then the
/// query-side input X (n × d_model) then, for encoder–decoder attention, the encoder input
/// (n_k × d_model), all standard normal in C order. Positional encoding (positions 0…) is added
/// to each input when params.positional. Never throws: errors land in SessionResult::error.
/// Float32 inputs are drawn as float64 and rounded (like NumPy's
/// `rng.standard_normal(shape).astype(np.float32)`).
SessionResult computeSession(const SessionParameters &params);

/// As above; `cancelled` is polled between steps (inputs, forward pass, each head's conversion
/// and metrics). When it returns true the computation stops and the result's error is
/// "cancelled" (AttentionSession uses this to drop superseded requests early).
SessionResult computeSession(const SessionParameters &params,
                             const std::function<bool()> &cancelled);

} // namespace attn
