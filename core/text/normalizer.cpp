#include "core/text/normalizer.h"

#include <utf8proc.h>

#include <cstdlib>
#include <memory>
#include <stdexcept>

namespace attn::text {

namespace {

// NFC of one cluster (valid UTF-8); nothing changes when utf8proc refuses it.
std::string nfc(std::string_view s)
{
    utf8proc_uint8_t *out = nullptr;
    const utf8proc_ssize_t n
        = utf8proc_map(reinterpret_cast<const utf8proc_uint8_t *>(s.data()),
                       static_cast<utf8proc_ssize_t>(s.size()), &out,
                       static_cast<utf8proc_option_t>(UTF8PROC_STABLE | UTF8PROC_COMPOSE));
    if (n < 0) {
        return std::string(s);
    }
    std::unique_ptr<utf8proc_uint8_t, decltype(&std::free)> owner(out, &std::free);
    return std::string(reinterpret_cast<const char *>(out), static_cast<std::size_t>(n));
}

} // namespace

AlignedText NfcNormalizer::normalize(std::string_view segment) const
{
    AlignedText out;
    // Fast path: text already in NFC is returned with the identity alignment.
    bool ascii = true;
    for (char c : segment) {
        if (static_cast<unsigned char>(c) >= 0x80) {
            ascii = false;
            break;
        }
    }
    if (ascii) {
        out.text.assign(segment);
        return out;
    }
    std::string whole = nfc(segment);
    if (whole == segment) {
        out.text = std::move(whole);
        return out;
    }
    out.text.reserve(segment.size());
    out.origBegin.reserve(segment.size());
    out.origEnd.reserve(segment.size());
    std::size_t i = 0;
    while (i < segment.size()) {
        // One extended grapheme cluster [i, j).
        std::size_t j = i;
        utf8proc_int32_t state = 0;
        char32_t prev = nextCodePoint(segment, j);
        while (j < segment.size()) {
            std::size_t k = j;
            const char32_t c = nextCodePoint(segment, k);
            if (utf8proc_grapheme_break_stateful(static_cast<utf8proc_int32_t>(prev),
                                                 static_cast<utf8proc_int32_t>(c), &state)) {
                break;
            }
            prev = c;
            j = k;
        }
        const std::string_view cluster = segment.substr(i, j - i);
        const std::string composed = j - i == 1 ? std::string(cluster) : nfc(cluster);
        if (composed == cluster) {
            for (std::size_t b = i; b < j; ++b) {
                out.origBegin.push_back(static_cast<std::uint32_t>(b));
                out.origEnd.push_back(static_cast<std::uint32_t>(b + 1));
            }
        } else {
            for (std::size_t b = 0; b < composed.size(); ++b) {
                out.origBegin.push_back(static_cast<std::uint32_t>(i));
                out.origEnd.push_back(static_cast<std::uint32_t>(j));
            }
        }
        out.text += composed;
        i = j;
    }
    return out;
}

namespace {

bool isCjk(char32_t c)
{
    return (c >= 0x4E00 && c <= 0x9FFF) || (c >= 0x3400 && c <= 0x4DBF)
        || (c >= 0x20000 && c <= 0x2A6DF) || (c >= 0x2A700 && c <= 0x2B73F)
        || (c >= 0x2B740 && c <= 0x2B81F) || (c >= 0x2B820 && c <= 0x2CEAF)
        || (c >= 0xF900 && c <= 0xFAFF) || (c >= 0x2F800 && c <= 0x2FA1F);
}

} // namespace

BertNormalizer::BertNormalizer(bool cleanText, bool handleChineseChars, bool stripAccents,
                               bool lowercase)
    : m_cleanText(cleanText)
    , m_handleChineseChars(handleChineseChars)
    , m_stripAccents(stripAccents)
    , m_lowercase(lowercase)
{ }

AlignedText BertNormalizer::normalize(std::string_view segment) const
{
    AlignedText out;
    out.text.reserve(segment.size());
    out.origBegin.reserve(segment.size());
    out.origEnd.reserve(segment.size());
    std::size_t i = 0;
    while (i < segment.size()) {
        const std::size_t begin = i;
        const char32_t c = nextCodePoint(segment, i);
        auto emit = [&](char32_t d) {
            const std::size_t before = out.text.size();
            appendUtf8(out.text, d);
            for (std::size_t k = before; k < out.text.size(); ++k) {
                out.origBegin.push_back(static_cast<std::uint32_t>(begin));
                out.origEnd.push_back(static_cast<std::uint32_t>(i));
            }
        };
        const auto category = utf8proc_category(static_cast<utf8proc_int32_t>(c));
        if (m_cleanText) {
            if (c == 0 || c == 0xFFFD) {
                continue;
            }
            if (c == '\t' || c == '\n' || c == '\r' || category == UTF8PROC_CATEGORY_ZS) {
                emit(' ');
                continue;
            }
            if (category == UTF8PROC_CATEGORY_CC || category == UTF8PROC_CATEGORY_CF
                || category == UTF8PROC_CATEGORY_CO || category == UTF8PROC_CATEGORY_CS
                || category == UTF8PROC_CATEGORY_CN) {
                continue;
            }
        }
        if (m_handleChineseChars && isCjk(c)) {
            emit(' ');
            emit(c);
            emit(' ');
            continue;
        }
        // The code point's canonical decomposition when accents go.
        utf8proc_int32_t parts[8];
        utf8proc_ssize_t n = 1;
        parts[0] = static_cast<utf8proc_int32_t>(c);
        if (m_stripAccents) {
            int last = 0;
            n = utf8proc_decompose_char(static_cast<utf8proc_int32_t>(c), parts, 8,
                                        UTF8PROC_DECOMPOSE, &last);
            if (n < 0 || n > 8) {
                n = 1;
                parts[0] = static_cast<utf8proc_int32_t>(c);
            }
        }
        for (utf8proc_ssize_t k = 0; k < n; ++k) {
            utf8proc_int32_t d = parts[k];
            if (m_stripAccents && utf8proc_category(d) == UTF8PROC_CATEGORY_MN) {
                continue;
            }
            if (m_lowercase) {
                d = utf8proc_tolower(d);
            }
            emit(static_cast<char32_t>(d));
        }
    }
    return out;
}

PrependNormalizer::PrependNormalizer(std::string prefix)
    : m_prefix(std::move(prefix))
{ }

AlignedText PrependNormalizer::normalize(std::string_view segment) const
{
    AlignedText out;
    if (segment.empty()) {
        return out;
    }
    out.text = m_prefix;
    out.text.append(segment);
    out.origBegin.assign(m_prefix.size(), 0);
    out.origEnd.assign(m_prefix.size(), 0);
    for (std::size_t k = 0; k < segment.size(); ++k) {
        out.origBegin.push_back(static_cast<std::uint32_t>(k));
        out.origEnd.push_back(static_cast<std::uint32_t>(k + 1));
    }
    return out;
}

ReplaceNormalizer::ReplaceNormalizer(std::string pattern, std::string content)
    : m_pattern(std::move(pattern))
    , m_content(std::move(content))
{ }

AlignedText ReplaceNormalizer::normalize(std::string_view segment) const
{
    AlignedText out;
    if (m_pattern.empty() || segment.find(m_pattern) == std::string_view::npos) {
        out.text.assign(segment);
        return out;
    }
    std::size_t at = 0;
    while (at < segment.size()) {
        if (segment.compare(at, m_pattern.size(), m_pattern) == 0) {
            out.text += m_content;
            out.origBegin.insert(out.origBegin.end(), m_content.size(),
                                 static_cast<std::uint32_t>(at));
            out.origEnd.insert(out.origEnd.end(), m_content.size(),
                               static_cast<std::uint32_t>(at + m_pattern.size()));
            at += m_pattern.size();
            continue;
        }
        out.text.push_back(segment[at]);
        out.origBegin.push_back(static_cast<std::uint32_t>(at));
        out.origEnd.push_back(static_cast<std::uint32_t>(at + 1));
        ++at;
    }
    return out;
}

SequenceNormalizer::SequenceNormalizer(std::vector<std::unique_ptr<Normalizer>> stages)
    : m_stages(std::move(stages))
{ }

AlignedText SequenceNormalizer::normalize(std::string_view segment) const
{
    AlignedText current;
    current.text.assign(segment);
    for (const auto &stage : m_stages) {
        current = composeAlignment(current, stage->normalize(current.text));
    }
    return current;
}

AlignedText composeAlignment(const AlignedText &inner, AlignedText outer)
{
    if (inner.origBegin.empty()) {
        return outer;
    }
    if (outer.origBegin.empty()) {
        outer.origBegin = inner.origBegin;
        outer.origEnd = inner.origEnd;
        return outer;
    }
    for (std::size_t i = 0; i < outer.text.size(); ++i) {
        const auto [b, e] = inner.originalSpan(outer.origBegin[i], outer.origEnd[i]);
        outer.origBegin[i] = static_cast<std::uint32_t>(b);
        outer.origEnd[i] = static_cast<std::uint32_t>(e);
    }
    return outer;
}

} // namespace attn::text
