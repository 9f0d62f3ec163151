#pragma once
// A model layer's attention as the tile engine computes it: the queries and keys a forward pass
// kept (ForwardOptions::keepQueriesKeys), every head side by side, with the layer's mask and the
// model's scale. Lets a viewer pool or zoom any layer × head at long n without materializing
// n × n matrices (core/tiles/tileengine.h).

#include "core/models/config.h"
#include "core/models/forward.h"
#include "core/tiles/tileengine.h"

namespace attn::models {

/// The tile engine of layer `layer` of `result`: queries n × (h·d_k) (each query head's rows
/// after RoPE, head i in columns [i·d_k, (i+1)·d_k)), keys n × (h·d_k) with head i's columns
/// from its key/value head ⌊i·g/h⌋ (GQA repeated as the forward reads it), layerMask(config,
/// layer, n) and scaleOverride = result.scale (1/√d_k). Its weights equal headWeights(result,
/// config, layer, head) to rounding. T is float or double. Throws InvalidArgument for a layer
/// out of range or a result that kept no queries and keys for it.
template<typename T>
TileEngine<T> layerTileEngine(const ForwardResult &result, const ModelConfig &config, Index layer);

} // namespace attn::models
