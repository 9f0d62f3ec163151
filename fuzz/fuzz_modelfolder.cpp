// libFuzzer target: a whole model folder in memory — config.json and model.safetensors bound
// together (Model::bind), then a forward pass on two token ids when the model is small. The
// input is [config length, little-endian 16 bits][config.json][model.safetensors]. Every input
// must either be refused with ModelError / InvalidArgument, or bind to weights whose shapes the
// config accepts and run to finite-or-refused results without reading outside the input
// (ASan checks the reads).

#include "core/models/config.h"
#include "core/models/forward.h"
#include "core/models/model.h"
#include "core/models/safetensors.h"

#include <cstdint>
#include <string_view>
#include <vector>

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t *data, std::size_t size)
{
    using namespace attn;
    using namespace attn::models;
    if (size < 2)
        return 0;
    const std::size_t configBytes = std::min<std::size_t>(data[0] | (data[1] << 8), size - 2);
    const std::string_view config(reinterpret_cast<const char *>(data + 2), configBytes);
    const std::uint8_t *weights = data + 2 + configBytes;
    const std::size_t weightBytes = size - 2 - configBytes;
    try {
        ModelConfig c = parseModelConfig(config, "config.json");
        Model model = Model::bind(
            std::move(c),
            Checkpoint::fromFile(SafetensorsFile::fromMemory(weights, weightBytes, "input")));
        const ModelConfig &mc = model.config();
        // A forward only for models whose work stays small (the fuzzer's budget is per input).
        const double work = double(mc.layers) * double(mc.hiddenSize)
                * double(mc.intermediateSize + mc.hiddenSize)
            + double(mc.vocabSize) * mc.hiddenSize;
        if (work > 1e6)
            return 0;
        const std::vector<std::int64_t> ids {0, mc.vocabSize > 1 ? 1 : 0};
        ForwardOptions options;
        options.keepWeights = [](Index, Index) { return true; };
        const ForwardResult r = forward(model, ids, options);
        (void)headWeights(r, mc, mc.layers - 1, mc.heads - 1);
    } catch (const ModelError &) {
    } catch (const InvalidArgument &) {
    } catch (const NonFiniteInput &) { }
    return 0;
}
