// libFuzzer target: the .npz reader (libzip underneath) on arbitrary bytes written to a file:
// readNpzHeaders, readNpz with a 64 MiB budget, and readNpzMember of the first name; then both
// again with unicode string members allowed. Inputs are refused with NpyError or read; the
// members read must match the headers declared.

#include "core/io/npy.h"

#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <unistd.h>

namespace {

/// A file in /dev/shm (or /tmp) holding the current input, rewritten for every input.
const std::string &inputPath()
{
    static const std::string path = [] {
        const char *dir = access("/dev/shm", W_OK) == 0 ? "/dev/shm" : "/tmp";
        return std::string(dir) + "/attnlab-fuzz-npz-" + std::to_string(getpid()) + ".npz";
    }();
    return path;
}

} // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t *data, std::size_t size)
{
    const std::string &path = inputPath();
    std::FILE *f = std::fopen(path.c_str(), "wb");
    if (!f)
        std::abort();
    if (size > 0 && std::fwrite(data, 1, size, f) != size)
        std::abort();
    std::fclose(f);

    std::vector<std::pair<std::string, attn::NpyHeader>> headers;
    try {
        headers = attn::readNpzHeaders(path);
    } catch (const attn::NpyError &) { }
    try {
        const auto arrays = attn::readNpz(path, std::uint64_t(64) << 20);
        if (arrays.size() != headers.size())
            std::abort(); // readNpz read members whose headers readNpzHeaders refused
        for (std::size_t i = 0; i < arrays.size(); ++i) {
            if (arrays[i].first != headers[i].first
                || arrays[i].second.shape != headers[i].second.shape
                || arrays[i].second.values.size() != headers[i].second.count)
                std::abort();
        }
        if (!arrays.empty())
            attn::readNpzMember(path, arrays.front().first);
    } catch (const attn::NpyError &) { }
    try {
        // The unicode string members too (an attention stack's tokens), as File > Open Tensors
        // reads an archive holding 'attentions'.
        attn::readNpzHeaders(path, true);
        attn::NpzStrings strings;
        attn::readNpz(path, std::uint64_t(64) << 20, &strings);
    } catch (const attn::NpyError &) { }
    std::remove(path.c_str());
    return 0;
}
