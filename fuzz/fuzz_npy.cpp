// libFuzzer target: the .npy reader (parseNpy) on arbitrary bytes, and the writer on what it
// accepts. Every input must either be refused with NpyError or read into an array whose shape
// and values survive serializeNpy → parseNpy unchanged (bit for bit, NaN payloads aside).

#include "core/io/npy.h"

#include <cmath>
#include <cstdint>
#include <cstdlib>
#include <cstring>

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t *data, std::size_t size)
{
    attn::NpyArray a;
    try {
        a = attn::parseNpy(data, size, "input");
    } catch (const attn::NpyError &) {
        return 0;
    }
    if (a.values.size() != std::size_t(a.size()))
        std::abort(); // the reader returned a shape that does not match its values
    std::vector<std::uint8_t> bytes;
    try {
        bytes = attn::serializeNpy(a);
    } catch (const attn::NpyError &) {
        std::abort(); // what the reader accepts the writer must write
    }
    const attn::NpyArray b = attn::parseNpy(bytes.data(), bytes.size(), "round trip");
    if (b.shape != a.shape || b.type != a.type || b.values.size() != a.values.size())
        std::abort();
    for (std::size_t i = 0; i < a.values.size(); ++i) {
        const double x = a.values[i], y = b.values[i];
        if (!(x == y || (std::isnan(x) && std::isnan(y))))
            std::abort();
    }
    return 0;
}
