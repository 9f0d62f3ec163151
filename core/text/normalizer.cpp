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
