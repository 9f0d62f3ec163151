#include "core/text/alignedtext.h"

#include <limits>
#include <stdexcept>

namespace attn::text {

std::pair<std::size_t, std::size_t> AlignedText::originalSpan(std::size_t b, std::size_t e) const
{
    if (origBegin.empty()) {
        return {b, e};
    }
    if (b >= e) {
        if (b < origBegin.size()) {
            return {origBegin[b], origBegin[b]};
        }
        const std::size_t end = origEnd.empty() ? 0 : origEnd.back();
        return {end, end};
    }
    return {origBegin[b], origEnd[e - 1]};
}

namespace {

// The UTF-8 sequence starting at bytes[at] as a WHATWG decoder reads it (Unicode 15 table 3-7):
// whether the byte can lead one, the continuation bytes it needs, and how many of those follow
// in range before the first that does not.
struct Utf8Scan
{
    bool lead = false;
    std::size_t need = 0;
    std::size_t accepted = 0;
};

Utf8Scan scanUtf8(std::string_view bytes, std::size_t at)
{
    const auto b0 = static_cast<unsigned char>(bytes[at]);
    Utf8Scan scan;
    unsigned char lo = 0x80, hi = 0xBF;
    if (b0 < 0x80) {
        scan.lead = true;
        return scan;
    }
    if (b0 >= 0xC2 && b0 <= 0xDF) {
        scan.need = 1;
    } else if (b0 >= 0xE0 && b0 <= 0xEF) {
        scan.need = 2;
        lo = b0 == 0xE0 ? 0xA0 : 0x80;
        hi = b0 == 0xED ? 0x9F : 0xBF;
    } else if (b0 >= 0xF0 && b0 <= 0xF4) {
        scan.need = 3;
        lo = b0 == 0xF0 ? 0x90 : 0x80;
        hi = b0 == 0xF4 ? 0x8F : 0xBF;
    } else {
        return scan;
    }
    scan.lead = true;
    for (; scan.accepted < scan.need; ++scan.accepted) {
        const std::size_t k = at + scan.accepted + 1;
        if (k >= bytes.size() || static_cast<unsigned char>(bytes[k]) < lo
            || static_cast<unsigned char>(bytes[k]) > hi) {
            break;
        }
        lo = 0x80;
        hi = 0xBF;
    }
    return scan;
}

} // namespace

std::size_t wellFormedUtf8Length(std::string_view bytes, std::size_t at)
{
    const Utf8Scan scan = scanUtf8(bytes, at);
    return scan.lead && scan.accepted == scan.need ? scan.need + 1 : 0;
}

AlignedText sanitizeUtf8(std::string_view input)
{
    if (input.size() >= std::numeric_limits<std::uint32_t>::max()) {
        throw std::length_error("tokenizer input longer than 4 GiB - 1 bytes");
    }
    AlignedText out;
    const auto *s = reinterpret_cast<const unsigned char *>(input.data());
    const std::size_t n = input.size();
    // First pass: find the first ill-formed byte; valid text is returned as is.
    std::size_t i = 0;
    bool valid = true;
    auto sequenceAt = [&](std::size_t at) { return wellFormedUtf8Length(input, at); };
    // Length of the maximal subpart at an ill-formed position: the lead byte plus the
    // continuation bytes that were accepted before the failure (at least 1).
    auto maximalSubpart = [&](std::size_t at) {
        const Utf8Scan scan = scanUtf8(input, at);
        return scan.lead ? scan.accepted + 1 : std::size_t(1);
    };
    while (i < n) {
        const std::size_t len = sequenceAt(i);
        if (len == 0) {
            valid = false;
            break;
        }
        i += len;
    }
    if (valid) {
        out.text.assign(input);
        return out;
    }
    out.text.reserve(n + 16);
    out.origBegin.reserve(n + 16);
    out.origEnd.reserve(n + 16);
    for (std::size_t k = 0; k < i; ++k) {
        out.text.push_back(static_cast<char>(s[k]));
        out.origBegin.push_back(static_cast<std::uint32_t>(k));
        out.origEnd.push_back(static_cast<std::uint32_t>(k + 1));
    }
    while (i < n) {
        const std::size_t len = sequenceAt(i);
        if (len > 0) {
            for (std::size_t k = 0; k < len; ++k) {
                out.text.push_back(static_cast<char>(s[i + k]));
                out.origBegin.push_back(static_cast<std::uint32_t>(i));
                out.origEnd.push_back(static_cast<std::uint32_t>(i + len));
            }
            i += len;
            continue;
        }
        const std::size_t bad = maximalSubpart(i);
        out.text += "\xEF\xBF\xBD";
        for (int k = 0; k < 3; ++k) {
            out.origBegin.push_back(static_cast<std::uint32_t>(i));
            out.origEnd.push_back(static_cast<std::uint32_t>(i + bad));
        }
        i += bad;
    }
    return out;
}

char32_t nextCodePoint(std::string_view text, std::size_t &i)
{
    const auto b0 = static_cast<unsigned char>(text[i]);
    const std::size_t len = utf8Length(b0);
    if (len == 1 || i + len > text.size()) {
        ++i;
        return b0;
    }
    char32_t c = b0 & (len == 2 ? 0x1F : len == 3 ? 0x0F : 0x07);
    for (std::size_t k = 1; k < len; ++k) {
        c = (c << 6) | (static_cast<unsigned char>(text[i + k]) & 0x3F);
    }
    i += len;
    return c;
}

void appendUtf8(std::string &out, char32_t c)
{
    if (c < 0x80) {
        out.push_back(static_cast<char>(c));
    } else if (c < 0x800) {
        out.push_back(static_cast<char>(0xC0 | (c >> 6)));
        out.push_back(static_cast<char>(0x80 | (c & 0x3F)));
    } else if (c < 0x10000) {
        out.push_back(static_cast<char>(0xE0 | (c >> 12)));
        out.push_back(static_cast<char>(0x80 | ((c >> 6) & 0x3F)));
        out.push_back(static_cast<char>(0x80 | (c & 0x3F)));
    } else {
        out.push_back(static_cast<char>(0xF0 | (c >> 18)));
        out.push_back(static_cast<char>(0x80 | ((c >> 12) & 0x3F)));
        out.push_back(static_cast<char>(0x80 | ((c >> 6) & 0x3F)));
        out.push_back(static_cast<char>(0x80 | (c & 0x3F)));
    }
}

} // namespace attn::text
