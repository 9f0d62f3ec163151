#pragma once
// GPT-2's byte ↔ printable-character table: bytes_to_unicode() of OpenAI's gpt-2
// src/encoder.py (also tokenizers/src/pre_tokenizers/byte_level.rs). The printable bytes
// '!'..'~', '¡'..'¬', '®'..'ÿ' map to the code point of the same value; the other 68 bytes map
// to U+0100, U+0101, ... in byte order. Every byte-level vocabulary is written in these
// characters ("Ġ" is the space, U+0120).

#include <array>
#include <optional>
#include <string>
#include <string_view>

namespace attn::text {

class ByteLevelAlphabet
{
public:
    /// The one table (immutable, built once).
    static const ByteLevelAlphabet &instance();

    /// The code point byte b maps to.
    char32_t charOf(unsigned char b) const { return m_chars[b]; }
    /// The UTF-8 form of charOf(b) (1 or 2 bytes).
    const std::string &utf8Of(unsigned char b) const { return m_utf8[b]; }
    /// The byte code point c stands for, or nothing when c is not in the table.
    std::optional<unsigned char> byteOf(char32_t c) const;

    /// Every byte of `bytes` as its character, in UTF-8.
    std::string encode(std::string_view bytes) const;
    /// The bytes a byte-level string stands for; nothing when a character is not in the
    /// table.
    std::optional<std::string> decode(std::string_view mapped) const;

private:
    ByteLevelAlphabet();
    std::array<char32_t, 256> m_chars {};
    std::array<std::string, 256> m_utf8;
    std::array<short, 512> m_byteOf {}; ///< code point (< 512) → byte, -1 when none
};

} // namespace attn::text
