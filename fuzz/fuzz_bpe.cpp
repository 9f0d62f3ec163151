// libFuzzer target: core/text tokenizers on arbitrary text (any bytes, invalid UTF-8 included),
// with two small tokenizers built here: GPT-2's pipeline (ByteLevel with its regex) and
// Llama 3's (a Split pattern with (?i:…), \p{…} classes and lookahead, then ByteLevel without
// regex) plus NFC and added tokens with lstrip/rstrip. Every input must encode without
// throwing; the spans must cover the input in order (tiling it exactly where nothing
// normalizes), and decoding must give back the input with invalid UTF-8 replaced as
// sanitizeUtf8 says (NFC aside).

#include "core/text/bytelevel.h"
#include "core/text/loader.h"

#include <algorithm>
#include <cstdint>
#include <cstdlib>
#include <memory>
#include <string>

namespace {

using namespace attn::text;

// A byte-level vocabulary: the 256 byte characters, then a few merges over common pairs.
std::string config(const std::string &preTokenizer, const std::string &normalizer)
{
    const ByteLevelAlphabet &a = ByteLevelAlphabet::instance();
    std::string vocab = "{";
    for (int b = 0; b < 256; ++b) {
        std::string c = a.utf8Of(static_cast<unsigned char>(b));
        if (c == "\"" || c == "\\") {
            c = "\\" + c;
        }
        vocab += "\"" + c + "\": " + std::to_string(b) + ", ";
    }
    const char *merges[][2] = {{"t", "h"}, {"th", "e"}, {"Ġ", "t"},   {"Ġt", "h"}, {"Ġth", "e"},
                               {"i", "n"}, {"Ġ", "Ġ"},  {"ĠĠ", "ĠĠ"}, {"e", "r"},  {"Ã", "©"},
                               {"1", "2"}, {"a", "a"},  {"aa", "aa"}, {"aa", "a"}};
    std::string mergeList = "[";
    int id = 256;
    for (const auto &m : merges) {
        vocab += "\"" + std::string(m[0]) + m[1] + "\": " + std::to_string(id++) + ", ";
        mergeList += "[\"" + std::string(m[0]) + "\", \"" + m[1] + "\"], ";
    }
    vocab.resize(vocab.size() - 2);
    vocab += "}";
    mergeList.resize(mergeList.size() - 2);
    mergeList += "]";
    return R"({"normalizer": )" + normalizer + R"(, "pre_tokenizer": )" + preTokenizer
        + R"(, "added_tokens": [
        {"id": 1000, "content": "<|s|>", "special": true},
        {"id": 1001, "content": "<x>", "lstrip": true, "rstrip": true},
        {"id": 1002, "content": "<|s|><|s|>", "special": true}],
        "model": {"type": "BPE", "ignore_merges": true, "vocab": )"
        + vocab + R"(, "merges": )" + mergeList + "}}";
}

const Tokenizer &gpt2()
{
    static const auto tok = parseTokenizerJson(
        config(R"({"type": "ByteLevel", "add_prefix_space": true, "use_regex": true})", "null"),
        "gpt2-like");
    return *tok;
}

const Tokenizer &llama()
{
    static const auto tok = parseTokenizerJson(
        config(R"({"type": "Sequence", "pretokenizers": [{"type": "Split", "pattern": {"Regex":
            "(?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\\r\\n\\p{L}\\p{N}]?\\p{L}+|\\p{N}{1,3}| ?[^\\s\\p{L}\\p{N}]+[\\r\\n]*|\\s*[\\r\\n]+|\\s+(?!\\S)|\\s+"},
            "behavior": "Isolated", "invert": false},
            {"type": "ByteLevel", "add_prefix_space": false, "use_regex": false}]})",
               R"({"type": "NFC"})"),
        "llama-like");
    return *tok;
}

void checkSpans(const Encoding &e, std::size_t length, bool tiled)
{
    std::size_t reach = 0, lastBegin = 0;
    for (const Token &t : e.tokens) {
        if (t.begin > t.end || t.end > length || t.begin > reach || t.begin < lastBegin)
            std::abort();
        if (tiled && t.begin != reach && !t.special)
            std::abort();
        reach = std::max(reach, t.end);
        lastBegin = t.begin;
    }
    if (reach != length)
        std::abort();
}

} // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t *data, std::size_t size)
{
    const std::string text(reinterpret_cast<const char *>(data), size);
    const std::string sane = sanitizeUtf8(text).text;
    // (lstrip/rstrip of <x> drop the whitespace they take from the decoded text.)
    const bool strips = sane.find("<x>") != std::string::npos;
    // GPT-2-like: the prefix space is an extra byte in the decoded text (an empty span).
    const Encoding a = gpt2().encode(text);
    checkSpans(a, size, false);
    const std::string decodedA = gpt2().decode(a.ids());
    if (!strips && decodedA.size() < sane.size())
        std::abort();
    // Llama-like: without NFC changes the decoded text is the sanitized input.
    const Encoding b = llama().encode(text);
    checkSpans(b, size, false);
    const std::string decodedB = llama().decode(b.ids());
    bool ascii = true;
    for (char c : sane) {
        ascii = ascii && static_cast<unsigned char>(c) < 0x80;
    }
    if (ascii && !strips && decodedB != sane)
        std::abort();
    return 0;
}
