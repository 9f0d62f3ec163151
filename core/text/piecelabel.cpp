#include "core/text/piecelabel.h"

#include "core/text/alignedtext.h"
#include "core/text/tokenizer.h"

#include <array>
#include <cstdio>
#include <span>

namespace attn::text {
namespace {

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
        const std::size_t length = wellFormedUtf8Length(bytes, i);
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
