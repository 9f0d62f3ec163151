#include "core/text/piecelabel.h"

#include "core/text/tokenizer.h"

#include <array>
#include <cstdio>
#include <span>

namespace attn::text {
namespace {

/// Length of the complete UTF-8 character starting at `s[i]`, 0 when the bytes there are not one
/// (a continuation byte, a truncated or overlong sequence, a surrogate, beyond U+10FFFF).
std::size_t utf8Length(std::string_view s, std::size_t i)
{
    const auto byte = [&](std::size_t k) { return static_cast<unsigned char>(s[k]); };
    const unsigned char c = byte(i);
    std::size_t length = 0;
    char32_t code = 0;
    if (c < 0x80)
        return 1;
    if ((c & 0xE0) == 0xC0) {
        length = 2;
        code = c & 0x1F;
    } else if ((c & 0xF0) == 0xE0) {
        length = 3;
        code = c & 0x0F;
    } else if ((c & 0xF8) == 0xF0) {
        length = 4;
        code = c & 0x07;
    } else {
        return 0;
    }
    if (i + length > s.size())
        return 0;
    for (std::size_t k = 1; k < length; ++k) {
        if ((byte(i + k) & 0xC0) != 0x80)
            return 0;
        code = (code << 6) | (byte(i + k) & 0x3F);
    }
    static constexpr std::array<char32_t, 5> smallest {0, 0, 0x80, 0x800, 0x10000};
    if (code < smallest[length] || code > 0x10FFFF || (code >= 0xD800 && code <= 0xDFFF))
        return 0;
    return length;
}

std::string hexByte(unsigned char c)
{
    char buffer[3];
    std::snprintf(buffer, sizeof buffer, "%02X", unsigned(c));
    return buffer;
}

} // namespace

std::string pieceLabel(std::string_view bytes)
{
    if (bytes.empty())
        return "\xE2\x88\x85"; // ∅
    std::string out;
    for (std::size_t i = 0; i < bytes.size();) {
        const unsigned char c = static_cast<unsigned char>(bytes[i]);
        const std::size_t length = utf8Length(bytes, i);
        if (length == 0) {
            out += "\xE2\x80\xB9" + hexByte(c) + "\xE2\x80\xBA"; // ‹NN›
            ++i;
            continue;
        }
        if (c == ' ')
            out += "\xE2\x90\xA3"; // ␣
        else if (c == '\n')
            out += "\xE2\x86\xB5"; // ↵
        else if (c == '\r')
            out += "\xE2\x90\x8D"; // ␍
        else if (c == '\t')
            out += "\xE2\x87\xA5"; // ⇥
        else if (c < 0x20 || c == 0x7F)
            out += "\\x" + hexByte(c);
        else
            out.append(bytes.substr(i, length));
        i += length;
    }
    return out;
}

std::string hexBytes(std::string_view bytes)
{
    std::string out;
    for (std::size_t i = 0; i < bytes.size(); ++i) {
        if (i > 0)
            out += ' ';
        out += hexByte(static_cast<unsigned char>(bytes[i]));
    }
    return out;
}

std::string tokenBytes(const Tokenizer &tokenizer, const Token &token, std::string_view text)
{
    const TokenId id = token.id;
    // A byte-level token is exactly its bytes, also when it holds part of a character (whose
    // span covers the whole character); other tokens are their span of the text, since their
    // decoding may drop a leading space.
    const bool hasSpan = token.end > token.begin && token.end <= text.size();
    if ((tokenizer.isByteLevel() && !token.special) || !hasSpan)
        return tokenizer.decode(std::span<const TokenId>(&id, 1));
    return std::string(text.substr(token.begin, token.end - token.begin));
}

std::vector<std::string> tokenLabels(const Tokenizer &tokenizer, const Encoding &encoding,
                                     std::string_view text)
{
    std::vector<std::string> out;
    out.reserve(encoding.tokens.size());
    for (const Token &t : encoding.tokens)
        out.push_back(pieceLabel(tokenBytes(tokenizer, t, text)));
    return out;
}

} // namespace attn::text
