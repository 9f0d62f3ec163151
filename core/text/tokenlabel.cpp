#include "core/text/tokenlabel.h"

#include "core/text/alignedtext.h"

#include <algorithm>
#include <cstdio>

namespace attn::text {

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
