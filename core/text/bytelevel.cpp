#include "core/text/bytelevel.h"

#include "core/text/alignedtext.h"

namespace attn::text {

const ByteLevelAlphabet &ByteLevelAlphabet::instance()
{
    static const ByteLevelAlphabet table;
    return table;
}

ByteLevelAlphabet::ByteLevelAlphabet()
{
    m_byteOf.fill(-1);
    auto printable = [](int b) {
        return (b >= '!' && b <= '~') || (b >= 0xA1 && b <= 0xAC) || (b >= 0xAE && b <= 0xFF);
    };
    int next = 0;
    for (int b = 0; b < 256; ++b) {
        const char32_t c = printable(b) ? char32_t(b) : char32_t(256 + next++);
        m_chars[b] = c;
        appendUtf8(m_utf8[b], c);
        m_byteOf[c] = static_cast<short>(b);
    }
}

std::optional<unsigned char> ByteLevelAlphabet::byteOf(char32_t c) const
{
    if (c >= m_byteOf.size() || m_byteOf[c] < 0) {
        return std::nullopt;
    }
    return static_cast<unsigned char>(m_byteOf[c]);
}

std::string ByteLevelAlphabet::encode(std::string_view bytes) const
{
    std::string out;
    out.reserve(bytes.size() * 2);
    for (char b : bytes) {
        out += m_utf8[static_cast<unsigned char>(b)];
    }
    return out;
}

std::optional<std::string> ByteLevelAlphabet::decode(std::string_view mapped) const
{
    std::string out;
    out.reserve(mapped.size());
    std::size_t i = 0;
    while (i < mapped.size()) {
        const auto b = byteOf(nextCodePoint(mapped, i));
        if (!b) {
            return std::nullopt;
        }
        out.push_back(static_cast<char>(*b));
    }
    return out;
}

} // namespace attn::text
