// libFuzzer target: the safetensors reader (SafetensorsFile::fromMemory) on arbitrary bytes,
// then every tensor read as float32. Every input must either be refused with ModelError or
// parse into tensors that lie inside the data buffer, tile it, and read without touching bytes
// outside the input (ASan checks the reads).

#include "core/models/safetensors.h"

#include <cstdint>
#include <cstdlib>
#include <vector>

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t *data, std::size_t size)
{
    using namespace attn::models;
    try {
        const SafetensorsFile file = SafetensorsFile::fromMemory(data, size, "input");
        std::uint64_t covered = 0;
        for (const TensorInfo &t : file.tensors()) {
            if (t.end < t.begin || t.end > file.dataBytes())
                std::abort(); // the checks let a tensor outside the data through
            covered += t.end - t.begin;
            if (t.dtype != DType::F32 && t.dtype != DType::F16 && t.dtype != DType::BF16) {
                try {
                    float x;
                    file.readFloats(t, 0, 0, &x);
                    std::abort(); // other dtypes must be refused by name
                } catch (const ModelError &) { }
                continue;
            }
            if (t.elements * std::uint64_t(dtypeBits(t.dtype) / 8) != t.end - t.begin)
                std::abort();
            std::vector<float> values(std::size_t(t.elements));
            file.readFloats(t, 0, t.elements, values.data());
        }
        if (covered != file.dataBytes())
            std::abort(); // tensors must tile the data buffer
    } catch (const ModelError &) { }
    return 0;
}
