// libFuzzer target: the tokenizer files other than tokenizer.json, parsed from arbitrary bytes —
// GPT-2's vocab.json + merges.txt (parseGpt2) and BERT's vocab.txt (parseBertVocab) — then a
// fixed text with several scripts, special tokens and invalid UTF-8 encoded and decoded; and
// WordPiece (BERT's normalizer and pre-tokenizer) on arbitrary text. The first byte chooses:
// 0 mod 4 GPT-2, the vocabulary and merges split at the first NUL; 1 mod 4 vocab.txt (lower-cased
// when bit 2 is set); 2 and 3 mod 4 a fixed vocab.txt and the rest as the text (lower-cased for
// 3). Every input must either be refused with TokenizerError or encode the text to ids that
// decode without error, with byte spans inside the text.

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
    static constexpr std::string_view kVocab
        = "[PAD]\n[UNK]\n[CLS]\n[SEP]\n[MASK]\nhello\nworld\n,\n!\nit\n'\ns\n##s\nna\n##ive\ncafe\n"
          "\xE6\x9D\xB1\n\xE4\xBA\xAC\n##a\na\n";
    std::string_view text = kText;
    std::unique_ptr<Tokenizer> tokenizer;
    try {
        if (data[0] % 4 >= 2) {
            tokenizer = parseBertVocab(kVocab, "vocab.txt", data[0] % 4 == 3);
            text = rest;
        } else if (data[0] % 4 == 0) {
            const std::size_t nul = rest.find('\0');
            const std::string_view vocab = rest.substr(0, nul);
            const std::string_view merges
                = nul == std::string_view::npos ? std::string_view() : rest.substr(nul + 1);
            tokenizer = parseGpt2(vocab, "vocab.json", merges, "merges.txt");
        } else {
            tokenizer = parseBertVocab(rest, "vocab.txt", (data[0] & 4) != 0);
        }
        const Encoding encoding = tokenizer->encode(text);
        for (const Token &t : encoding.tokens)
            if (t.begin > t.end || t.end > text.size())
                std::abort();
        const auto ids = encoding.ids();
        (void)tokenizer->decode(ids);
    } catch (const TokenizerError &) { }
    return 0;
}
