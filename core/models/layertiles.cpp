#include "core/models/layertiles.h"

#include <string>

namespace attn::models {

template<typename T>
TileEngine<T> layerTileEngine(const ForwardResult &result, const ModelConfig &config, Index layer)
{
    if (layer < 0 || layer >= Index(result.layers.size()))
        throw InvalidArgument("layerTileEngine: layer " + std::to_string(layer)
                              + " is outside the run's " + std::to_string(result.layers.size())
                              + " layers");
    const LayerAttention &l = result.layers[std::size_t(layer)];
    if (Index(l.queries.size()) != config.heads || Index(l.keys.size()) != config.kvHeads)
        throw InvalidArgument("the model run kept no queries and keys for layer "
                              + std::to_string(layer));
    const Index n = l.queries.front().rows(), dK = l.queries.front().cols();
    Matrix<T> q(n, config.heads * dK), k(n, config.heads * dK);
    for (Index i = 0; i < config.heads; ++i) {
        q.middleCols(i * dK, dK) = l.queries[std::size_t(i)].template cast<T>();
        k.middleCols(i * dK, dK)
            = l.keys[std::size_t(result.kvHeadOf(i, config.heads))].template cast<T>();
    }
    AttentionOptions options;
    options.scaleOverride = result.scale;
    return TileEngine<T>(std::move(q), std::move(k), config.heads, layerMask(config, layer, n),
                         options);
}

template TileEngine<float> layerTileEngine<float>(const ForwardResult &, const ModelConfig &,
                                                  Index);
template TileEngine<double> layerTileEngine<double>(const ForwardResult &, const ModelConfig &,
                                                    Index);

} // namespace attn::models
