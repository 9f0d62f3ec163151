#pragma once
// TensorSource's data, shared by the files that build sources (tensorsource.cpp for tensor
// files, modelrun.cpp for a model's forward pass). Not part of the session tier's interface.

#include "ui/session/tensorsource.h"

#include "core/models/forward.h"

#include <memory>

namespace attn {

struct TensorSource::Data
{
    Kind kind = Kind::Inputs;
    QString path;
    QString arrayName;
    MaskConvention convention = MaskConvention::Masked;
    std::optional<TensorCase<double>> tensors; // Kind::Inputs
    std::optional<WeightStack> weights; // Kind::Weights
    bool selfAttention = true; // inputs: keys are the queries (same shape and values)
    int batch = 0; // inputs: the batch item shown
    int batchCount = 0; // inputs: B of a leading batch axis, 0 without one
    bool attentionStack = false; // weights read from `attentions`
    QStringList tokens; // the stack's `tokens`
    RowSumCheck rowSums; // the stack's row sums
    QString description;
    QStringList notes;
    // A model run (ui/session/modelrun.h): the checkpoint folder is `path`.
    bool modelRun = false;
    QString modelName; // "ORG/NAME" or the folder's name
    QString modelFamily; // "gpt2", "llama", …
    // The run's queries and keys (its weights and logits dropped): the layer shown gets its raw
    // and scaled scores and its mask from them. A run whose stack exceeds the budget
    // (`onDemand`) has `weights` with the sizes but no matrices: each layer shown is computed
    // from the queries and keys (models::headWeights), and the Model tab draws `thumbnails`
    // (every head max-pooled to ≤ 256 × 256, `thumbnailBlock` cells a side per value). A run
    // too long for even one layer's matrices (`longOnly`, implies onDemand) is shown by the
    // Model tab's thumbnails and the Long tab's tiles only.
    std::shared_ptr<const models::ForwardResult> forward;
    models::ModelConfig modelConfig;
    bool onDemand = false;
    bool longOnly = false;
    std::optional<WeightStack> thumbnails;
    int thumbnailBlock = 1;
};

} // namespace attn
