// libFuzzer target: the tokenizer.json loader (parseTokenizerJson) on arbitrary bytes. Every
// input must be refused with TokenizerError or give a tokenizer that encodes a fixed text and
// decodes the ids without crashing (std::runtime_error from the regex engine's limits and
// std::out_of_range from decode are allowed).

#include "core/text/loader.h"

#include <cstdint>
#include <memory>
#include <stdexcept>
#include <string_view>

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t *data, std::size_t size)
{
    using namespace attn::text;
    std::unique_ptr<Tokenizer> tok;
    try {
        tok = parseTokenizerJson(std::string_view(reinterpret_cast<const char *>(data), size),
                                 "input");
    } catch (const TokenizerError &) {
        return 0;
    }
    try {
        const Encoding e
            = tok->encode("Hello, world! It's 2024: caf\xC3\xA9 \xF0\x9F\x98\x80 <s>\r\n\t"
                          "  \xFF end");
        (void)tok->decode(e.ids());
        (void)tok->decode(e.ids(), true);
    } catch (const std::out_of_range &) {
    } catch (const std::runtime_error &) { }
    return 0;
}
