#include "core/text/pretokenizer.h"

#include <utf8proc.h>

#include <cctype>

namespace attn::text {

namespace {

// Cuts [s.begin, s.end) at the matches of `regex` into pieces marked delimiter or not.
struct Piece
{
    std::size_t begin, end;
    bool delimiter;
};

std::vector<Piece> cut(const Regex &regex, const std::string &text, const Split &s, bool invert)
{
    std::vector<Piece> pieces;
    std::size_t at = s.begin;
    for (const auto &[b, e] : regex.findAll(text, s.begin, s.end)) {
        if (b > at) {
            pieces.push_back({at, b, invert});
        }
        pieces.push_back({b, e, !invert});
        at = e;
    }
    if (at < s.end) {
        pieces.push_back({at, s.end, invert});
    }
    return pieces;
}

const Regex &gpt2Regex()
{
    static const Regex regex(ByteLevelPreTokenizer::gpt2Pattern());
    return regex;
}

} // namespace

SplitPreTokenizer::SplitPreTokenizer(const std::string &pattern, SplitBehavior behavior,
                                     bool invert)
    : m_regex(pattern)
    , m_behavior(behavior)
    , m_invert(invert)
{ }

std::string SplitPreTokenizer::quoteLiteral(const std::string &literal)
{
    std::string out;
    for (char c : literal) {
        // Every non-alphanumeric ASCII character escaped; UTF-8 bytes pass as they are.
        const auto u = static_cast<unsigned char>(c);
        if (u < 0x80 && !std::isalnum(u)) {
            if (u < 0x20 || u == 0x7F) {
                static const char *hex = "0123456789ABCDEF";
                out += "\\x{";
                out += hex[u >> 4];
                out += hex[u & 15];
                out += '}';
                continue;
            }
            out += '\\';
        }
        out += c;
    }
    return out;
}

void SplitPreTokenizer::preTokenize(AlignedText &text, std::vector<Split> &splits) const
{
    std::vector<Split> out;
    out.reserve(splits.size());
    for (const Split &s : splits) {
        const std::vector<Piece> pieces = cut(m_regex, text.text, s, m_invert);
        switch (m_behavior) {
        case SplitBehavior::Removed:
            for (const Piece &p : pieces) {
                if (!p.delimiter) {
                    out.push_back({p.begin, p.end});
                }
            }
            break;
        case SplitBehavior::Isolated:
            for (const Piece &p : pieces) {
                out.push_back({p.begin, p.end});
            }
            break;
        case SplitBehavior::MergedWithPrevious: {
            bool open = false; // whether the last output piece can take a delimiter
            for (const Piece &p : pieces) {
                if (p.delimiter && open) {
                    out.back().end = p.end;
                    open = false;
                } else {
                    out.push_back({p.begin, p.end});
                    open = !p.delimiter;
                }
            }
            break;
        }
        case SplitBehavior::MergedWithNext: {
            bool pending = false; // the last output piece is a delimiter waiting for the next
            for (const Piece &p : pieces) {
                if (pending && !p.delimiter) {
                    out.back().end = p.end;
                    pending = false;
                } else {
                    out.push_back({p.begin, p.end});
                    pending = p.delimiter;
                }
            }
            break;
        }
        case SplitBehavior::Contiguous: {
            bool lastDelimiter = false;
            for (std::size_t k = 0; k < pieces.size(); ++k) {
                const Piece &p = pieces[k];
                if (p.delimiter && lastDelimiter && k > 0) {
                    out.back().end = p.end;
                } else {
                    out.push_back({p.begin, p.end});
                }
                lastDelimiter = p.delimiter;
            }
            break;
        }
        }
    }
    splits = std::move(out);
}

const char *ByteLevelPreTokenizer::gpt2Pattern()
{
    return R"('s|'t|'re|'ve|'m|'ll|'d| ?\p{L}+| ?\p{N}+| ?[^\s\p{L}\p{N}]+|\s+(?!\S)|\s+)";
}

ByteLevelPreTokenizer::ByteLevelPreTokenizer(bool addPrefixSpace, bool useRegex)
    : m_addPrefixSpace(addPrefixSpace)
    , m_useRegex(useRegex)
{ }

void ByteLevelPreTokenizer::preTokenize(AlignedText &text, std::vector<Split> &splits) const
{
    if (m_addPrefixSpace) {
        // A space before every split that does not start with one; it stands for no original
        // bytes (an empty span at the split's start).
        AlignedText spaced;
        spaced.originOffset = text.originOffset;
        std::vector<Split> shifted;
        const bool identity = text.origBegin.empty();
        spaced.text.reserve(text.text.size() + splits.size());
        std::size_t copied = 0;
        auto copy = [&](std::size_t upTo) {
            for (; copied < upTo; ++copied) {
                spaced.text.push_back(text.text[copied]);
                spaced.origBegin.push_back(identity ? static_cast<std::uint32_t>(copied)
                                                    : text.origBegin[copied]);
                spaced.origEnd.push_back(identity ? static_cast<std::uint32_t>(copied + 1)
                                                  : text.origEnd[copied]);
            }
        };
        for (const Split &s : splits) {
            copy(s.begin);
            const std::size_t begin = spaced.text.size();
            if (s.end > s.begin && text.text[s.begin] != ' ') {
                const auto at = text.originalSpan(s.begin, s.begin).first;
                spaced.text.push_back(' ');
                spaced.origBegin.push_back(static_cast<std::uint32_t>(at));
                spaced.origEnd.push_back(static_cast<std::uint32_t>(at));
            }
            copy(s.end);
            shifted.push_back({begin, spaced.text.size()});
        }
        copy(text.text.size());
        text = std::move(spaced);
        splits = std::move(shifted);
    }
    if (!m_useRegex) {
        return;
    }
    std::vector<Split> out;
    out.reserve(splits.size());
    for (const Split &s : splits) {
        for (const Piece &p : cut(gpt2Regex(), text.text, s, false)) {
            out.push_back({p.begin, p.end});
        }
    }
    splits = std::move(out);
}

namespace {

bool isBertWhitespace(char32_t c)
{
    if (c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == 0x0B || c == 0x0C || c == 0x85
        || c == 0x2028 || c == 0x2029) {
        return true;
    }
    return utf8proc_category(static_cast<utf8proc_int32_t>(c)) == UTF8PROC_CATEGORY_ZS;
}

bool isBertPunctuation(char32_t c)
{
    if ((c >= 33 && c <= 47) || (c >= 58 && c <= 64) || (c >= 91 && c <= 96)
        || (c >= 123 && c <= 126)) {
        return true;
    }
    switch (utf8proc_category(static_cast<utf8proc_int32_t>(c))) {
    case UTF8PROC_CATEGORY_PC:
    case UTF8PROC_CATEGORY_PD:
    case UTF8PROC_CATEGORY_PS:
    case UTF8PROC_CATEGORY_PE:
    case UTF8PROC_CATEGORY_PI:
    case UTF8PROC_CATEGORY_PF:
    case UTF8PROC_CATEGORY_PO:
        return true;
    default:
        return false;
    }
}

} // namespace

void BertPreTokenizer::preTokenize(AlignedText &text, std::vector<Split> &splits) const
{
    std::vector<Split> out;
    for (const Split &s : splits) {
        std::size_t wordBegin = s.begin;
        std::size_t i = s.begin;
        while (i < s.end) {
            const std::size_t at = i;
            const char32_t c = nextCodePoint(text.text, i);
            const bool space = isBertWhitespace(c);
            if (space || isBertPunctuation(c)) {
                if (at > wordBegin) {
                    out.push_back({wordBegin, at});
                }
                if (!space) {
                    out.push_back({at, i});
                }
                wordBegin = i;
            }
        }
        if (s.end > wordBegin) {
            out.push_back({wordBegin, s.end});
        }
    }
    splits = std::move(out);
}

MetaspacePreTokenizer::MetaspacePreTokenizer(std::string replacement, PrependScheme scheme,
                                             bool split)
    : m_replacement(std::move(replacement))
    , m_scheme(scheme)
    , m_split(split)
{ }

void MetaspacePreTokenizer::preTokenize(AlignedText &text, std::vector<Split> &splits) const
{
    // Rebuild the text: spaces become the replacement (aligned with the space), and a
    // replacement goes before each split that qualifies (aligned with nothing).
    AlignedText out;
    out.originOffset = text.originOffset;
    std::vector<Split> rebuilt;
    const bool identity = text.origBegin.empty();
    auto push = [&](const std::string &bytes, std::uint32_t b, std::uint32_t e) {
        out.text += bytes;
        out.origBegin.insert(out.origBegin.end(), bytes.size(), b);
        out.origEnd.insert(out.origEnd.end(), bytes.size(), e);
    };
    auto origin = [&](std::size_t k) {
        return std::pair<std::uint32_t, std::uint32_t>(
            identity ? static_cast<std::uint32_t>(k) : text.origBegin[k],
            identity ? static_cast<std::uint32_t>(k + 1) : text.origEnd[k]);
    };
    std::size_t copied = 0;
    auto copy = [&](std::size_t upTo) {
        for (; copied < upTo; ++copied) {
            const auto [b, e] = origin(copied);
            if (text.text[copied] == ' ') {
                push(m_replacement, b, e);
            } else {
                push(std::string(1, text.text[copied]), b, e);
            }
        }
    };
    for (const Split &s : splits) {
        copy(s.begin);
        const std::size_t begin = out.text.size();
        const auto at = static_cast<std::uint32_t>(text.originalSpan(s.begin, s.begin).first);
        const bool startsReplaced = s.end > s.begin
            && (text.text[s.begin] == ' '
                || text.text.compare(s.begin, m_replacement.size(), m_replacement) == 0);
        const bool prepend = s.end > s.begin && !startsReplaced
            && (m_scheme == PrependScheme::Always
                || (m_scheme == PrependScheme::First && text.originOffset + at == 0));
        if (prepend) {
            push(m_replacement, at, at);
        }
        copy(s.end);
        if (!m_split) {
            rebuilt.push_back({begin, out.text.size()});
            continue;
        }
        // Each word starts at a replacement (MergedWithNext on the replacement).
        std::size_t word = begin;
        for (std::size_t k = begin + 1; k < out.text.size(); ++k) {
            if (out.text.compare(k, m_replacement.size(), m_replacement) == 0) {
                rebuilt.push_back({word, k});
                word = k;
                k += m_replacement.size() - 1;
            }
        }
        if (out.text.size() > word) {
            rebuilt.push_back({word, out.text.size()});
        }
    }
    copy(text.text.size());
    text = std::move(out);
    splits = std::move(rebuilt);
}

SequencePreTokenizer::SequencePreTokenizer(std::vector<std::unique_ptr<PreTokenizer>> stages)
    : m_stages(std::move(stages))
{ }

void SequencePreTokenizer::preTokenize(AlignedText &text, std::vector<Split> &splits) const
{
    for (const auto &stage : m_stages) {
        stage->preTokenize(text, splits);
    }
}

bool SequencePreTokenizer::isByteLevel() const
{
    for (const auto &stage : m_stages) {
        if (stage->isByteLevel()) {
            return true;
        }
    }
    return false;
}

} // namespace attn::text
