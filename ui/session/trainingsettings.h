#pragma once
// What the Training tab sets, as one value type (saved in session files under
// "view" → "training"): the task, the model, the initial weights, the optimizer, the step limit,
// the loss threshold and the two runs A and B (α and learning rate each). toConfig() turns it into
// core's PairedRunConfig (core/training/pairedrun.h), which does every number.

#include "core/training/pairedrun.h"

#include <QJsonObject>
#include <QString>

namespace attn {

struct TrainingSettings
{
    static constexpr int maxSteps = 1000000; ///< upper bound of the step limit

    training::TaskKind task = training::TaskKind::Recall;
    int n = 8; ///< pairs (recall) or tokens (copy, average)
    int dModel = 64; ///< d_model; d_k = d_model / heads
    int heads = 1; ///< h, a divisor of d_model (1: d_k = 64, where the scale shows)
    int batch = 32; ///< B
    double noise = 0.1;
    int offset = 1; ///< copy: k
    int classes = 4; ///< recall: value classes V in [1, d_model/2]
    quint64 seed = 0;
    int steps = 3000; ///< stop after this many steps
    training::OptimizerKind optimizer = training::OptimizerKind::Adam;
    bool float32 = true;
    /// The initial weights A and B share (core/training/initialization.h).
    training::Initialization init = training::Initialization::Xavier;
    bool stopAtLoss = false; ///< pause when the loss threshold is reached
    double lossThreshold = 0.002; ///< > 0 (mean squared error, before a step's update)
    bool thresholdEither = false; ///< stop when either run is below (else when both are)
    training::RunChoice a {0.5, 0.005}; ///< run A: α, learning rate
    training::RunChoice b {0.0, 0.005}; ///< run B

    int dK() const { return heads > 0 ? dModel / heads : 0; }
    /// The core config (loss: mean squared error; momentum 0).
    training::PairedRunConfig toConfig() const;
    /// Empty when valid, else the first problem (core's message, the step limit's or the loss
    /// threshold's).
    QString validate() const;
    /// The loss threshold of a chunk request: lossThreshold when stopAtLoss, else 0 (none).
    double activeThreshold() const { return stopAtLoss ? lossThreshold : 0.0; }
    /// Equal apart from A's and B's α and learning rate (which may change mid-run) and the stop
    /// criteria (step limit, loss threshold).
    bool sameRunSetup(const TrainingSettings &other) const;
    bool operator==(const TrainingSettings &) const = default;

    /// Keys: task (recall|copy|average), n, d_model, heads, batch, noise, offset, classes, seed
    /// (decimal string), steps, optimizer (adam|sgd), dtype (float32|float64), init
    /// (xavier|unit_qk), loss_threshold ({"on": bool, "value": > 0, "runs": "both"|"either"}),
    /// a and b ({"alpha", "lr"}).
    QJsonObject toJson() const;
    /// Applies the keys present in `o` to `base`; a missing key keeps base's value. Invalid
    /// values (wrong type, unknown name, out of range, settings core refuses) → `base` unchanged
    /// and `error` set when given.
    static TrainingSettings fromJson(const QJsonObject &o, const TrainingSettings &base,
                                     QString *error = nullptr);
};

} // namespace attn
