#include "core/text/tokenlabel.h"

#include <algorithm>
#include <cstdio>

namespace attn::text {

std::size_t wellFormedUtf8Length(std::string_view bytes, std::size_t i)
{
    const auto byte = [&](std::size_t k) { return static_cast<unsigned char>(bytes[k]); };
    const unsigned char b0 = byte(i);
    if (b0 < 0x80) {
        return 1;
    }
    std::size_t length = 0;
    unsigned char low = 0x80;
    unsigned char high = 0xBF;
    if (b0 >= 0xC2 && b0 <= 0xDF) {
        length = 2;
    } else if (b0 >= 0xE0 && b0 <= 0xEF) {
        length = 3;
        low = b0 == 0xE0 ? 0xA0 : 0x80;
        high = b0 == 0xED ? 0x9F : 0xBF;
    } else if (b0 >= 0xF0 && b0 <= 0xF4) {
        length = 4;
        low = b0 == 0xF0 ? 0x90 : 0x80;
        high = b0 == 0xF4 ? 0x8F : 0xBF;
    } else {
        return 0;
    }
    if (bytes.size() - i < length) {
        return 0;
    }
    if (byte(i + 1) < low || byte(i + 1) > high) {
        return 0;
    }
    for (std::size_t k = 2; k < length; ++k) {
        if (byte(i + k) < 0x80 || byte(i + k) > 0xBF) {
            return 0;
        }
    }
    return length;
}

std::string tokenLabel(std::string_view text, const Token &token)
{
    const std::size_t begin = std::min(token.begin, text.size());
    const std::size_t end = std::clamp(token.end, begin, text.size());
    if (begin == end) {
        return token.piece;
    }
    const std::string_view span = text.substr(begin, end - begin);
    std::string label;
    label.reserve(span.size() + 8);
    for (std::size_t i = 0; i < span.size();) {
        const std::size_t length = wellFormedUtf8Length(span, i);
        if (length == 0) {
            char hex[8];
            std::snprintf(hex, sizeof hex, "<0x%02X>", static_cast<unsigned char>(span[i]));
            label += hex;
            ++i;
            continue;
        }
        switch (span[i]) {
        case ' ':
            label += "\u2423";
            break;
        case '\t':
            label += "\u21E5";
            break;
        case '\n':
            label += "\u21B5";
            break;
        case '\r':
            label += "\u240D";
            break;
        default:
            label.append(span.substr(i, length));
        }
        i += length;
    }
    return label;
}

std::vector<std::string> tokenLabels(std::string_view text, const Encoding &encoding)
{
    std::vector<std::string> labels;
    labels.reserve(encoding.tokens.size());
    for (const Token &token : encoding.tokens) {
        labels.push_back(tokenLabel(text, token));
    }
    return labels;
}

} // namespace attn::text
