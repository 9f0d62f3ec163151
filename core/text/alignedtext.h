#pragma once
// Text that remembers where each of its bytes came from in the text the caller gave: the
// normalized form of Hugging Face tokenizers' NormalizedString (tokenizers/src/tokenizer/
// normalizer.rs), kept as byte spans, so that every token can report its byte span
// [begin, end) in the original input.

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace attn::text {

/// A UTF-8 string plus, for each of its bytes, the span [begin, end) of original bytes it
/// stands for. An empty alignment means the identity (byte i came from byte i).
struct AlignedText
{
    std::string text;
    std::vector<std::uint32_t> origBegin; ///< text.size() entries, or empty for the identity
    std::vector<std::uint32_t> origEnd; ///< text.size() entries, or empty for the identity
    /// Where the original's byte 0 lies in the caller's whole input (a segment between added
    /// tokens starts later): Metaspace's prepend_scheme "first" looks at it.
    std::size_t originOffset = 0;

    /// The original span of text bytes [b, e). An empty range maps to an empty span at the
    /// original position of byte b (or the end of byte b - 1 when b is the end).
    std::pair<std::size_t, std::size_t> originalSpan(std::size_t b, std::size_t e) const;
};

/// Valid UTF-8 in, identity alignment out. Invalid UTF-8 follows the WHATWG Encoding
/// standard's UTF-8 decoder (what TextDecoder, and so the JavaScript references, do): each
/// maximal subpart of an ill-formed sequence becomes U+FFFD (EF BF BD), aligned with the
/// bytes it replaces. Surrogates (ED A0..BF) and overlongs (C0, C1, E0 80..9F, F0 80..8F) and
/// code points past U+10FFFF are ill-formed. Offsets are 32-bit: inputs are limited to
/// 4 GiB - 1 bytes (longer ones throw std::length_error).
AlignedText sanitizeUtf8(std::string_view input);

/// Length of the well-formed UTF-8 character starting at bytes[at] (Unicode 15 table 3-7: no
/// overlongs, surrogates or code points past U+10FFFF), or 0 when the bytes there are not one.
std::size_t wellFormedUtf8Length(std::string_view bytes, std::size_t at);

/// Length in bytes of the UTF-8 sequence starting with lead byte `lead` (1 for anything that
/// is not a valid lead byte). Only for text that sanitizeUtf8 has made valid.
inline std::size_t utf8Length(unsigned char lead)
{
    if (lead < 0xC0) {
        return 1;
    }
    if (lead < 0xE0) {
        return 2;
    }
    if (lead < 0xF0) {
        return 3;
    }
    return 4;
}

/// Decodes the code point at text[i] (valid UTF-8) and advances i past it.
char32_t nextCodePoint(std::string_view text, std::size_t &i);

/// Appends code point `c` (≤ U+10FFFF) to `out` in UTF-8.
void appendUtf8(std::string &out, char32_t c);

} // namespace attn::text
