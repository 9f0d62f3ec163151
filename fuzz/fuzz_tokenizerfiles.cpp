// libFuzzer target: the tokenizer files other than tokenizer.json, parsed from arbitrary bytes —
// GPT-2's vocab.json + merges.txt (parseGpt2) and BERT's vocab.txt (parseBertVocab) — then a
// fixed text with several scripts, special tokens and invalid UTF-8 encoded and decoded. The
// first byte chooses the format (even: GPT-2, the vocabulary and merges split at the first NUL;
// odd: vocab.txt, lower-cased when bit 1 is set). Every input must either be refused with
// TokenizerError or encode the text to ids that decode without error, with byte spans inside
// the text.

#include "core/text/loader.h"
#include "core/text/tokenizer.h"
#include "core/text/tokenizererror.h"

#include <cstdint>
#include <cstdlib>
#include <memory>
#include <string_view>

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t *data, std::size_t size)
{
    using namespace attn::text;
    if (size < 1)
        return 0;
    const std::string_view rest(reinterpret_cast<const char *>(data + 1), size - 1);
    static constexpr std::string_view kText = "Hello, world! It's 2026: naïve café, Привет, 東京, "
                                              "🇫🇷👩‍👩‍👧 [CLS] <|endoftext|> "
                                              "\t\r\n  x\xff\xc3";
    std::unique_ptr<Tokenizer> tokenizer;
    try {
        if (data[0] % 2 == 0) {
            const std::size_t nul = rest.find('\0');
            const std::string_view vocab = rest.substr(0, nul);
            const std::string_view merges
                = nul == std::string_view::npos ? std::string_view() : rest.substr(nul + 1);
            tokenizer = parseGpt2(vocab, "vocab.json", merges, "merges.txt");
        } else {
            tokenizer = parseBertVocab(rest, "vocab.txt", (data[0] & 2) != 0);
        }
        const Encoding encoding = tokenizer->encode(kText);
        for (const Token &t : encoding.tokens)
            if (t.begin > t.end || t.end > kText.size())
                std::abort();
        const auto ids = encoding.ids();
        (void)tokenizer->decode(ids);
    } catch (const TokenizerError &) { }
    return 0;
}
