// libFuzzer target: config.json parsing (parseModelConfig) on arbitrary bytes, then the RoPE
// frequencies of what it accepts. Every input must either be refused with ModelError or give a
// config whose sizes are positive and consistent (kv heads divide heads, even head_dim with
// RoPE) and whose frequencies are finite.

#include "core/models/config.h"
#include "core/models/safetensors.h"

#include <cmath>
#include <cstdint>
#include <cstdlib>
#include <string_view>

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t *data, std::size_t size)
{
    using namespace attn::models;
    ModelConfig c;
    try {
        c = parseModelConfig(std::string_view(reinterpret_cast<const char *>(data), size), "input");
    } catch (const ModelError &) {
        return 0;
    }
    if (c.hiddenSize < 1 || c.layers < 1 || c.heads < 1 || c.kvHeads < 1 || c.headDim < 1
        || c.vocabSize < 1 || c.intermediateSize < 1 || c.heads % c.kvHeads != 0)
        std::abort();
    if (c.rope) {
        if (c.headDim % 2 != 0)
            std::abort();
        const auto f = ropeFrequencies(c);
        if (attn::Index(f.size()) != c.headDim / 2)
            std::abort();
        for (double x : f)
            if (!std::isfinite(x))
                std::abort();
    }
    return 0;
}
