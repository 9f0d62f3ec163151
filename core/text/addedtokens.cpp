#include "core/text/addedtokens.h"

#include <algorithm>
#include <cctype>

namespace attn::text {

namespace {

bool isSpace(char c)
{
    return c == ' ' || c == '\t' || c == '\n' || c == '\v' || c == '\f' || c == '\r';
}

// Word characters for single_word: ASCII letters, digits, '_' and every non-ASCII byte.
bool isWordByte(char c)
{
    const auto u = static_cast<unsigned char>(c);
    return u >= 0x80 || std::isalnum(u) || c == '_';
}

} // namespace

AddedVocabulary::AddedVocabulary(std::vector<AddedToken> tokens)
    : m_tokens(std::move(tokens))
{
    for (std::size_t k = 0; k < m_tokens.size(); ++k) {
        m_byId.try_emplace(m_tokens[k].id, k);
        if (!m_tokens[k].content.empty()) {
            m_byFirstByte[static_cast<unsigned char>(m_tokens[k].content[0])].push_back(k);
        }
    }
    for (auto &list : m_byFirstByte) {
        std::stable_sort(list.begin(), list.end(), [&](std::size_t a, std::size_t b) {
            return m_tokens[a].content.size() > m_tokens[b].content.size();
        });
    }
}

const AddedToken *AddedVocabulary::byId(TokenId id) const
{
    const auto it = m_byId.find(id);
    return it == m_byId.end() ? nullptr : &m_tokens[it->second];
}

std::vector<AddedVocabulary::Match> AddedVocabulary::find(std::string_view text) const
{
    std::vector<Match> out;
    if (m_tokens.empty()) {
        return out;
    }
    std::size_t floor = 0; // end of the last match: lstrip never reaches before it
    std::size_t i = 0;
    while (i < text.size()) {
        const auto &candidates = m_byFirstByte[static_cast<unsigned char>(text[i])];
        const AddedToken *found = nullptr;
        for (std::size_t k : candidates) {
            const AddedToken &t = m_tokens[k];
            if (text.compare(i, t.content.size(), t.content) != 0) {
                continue;
            }
            if (t.singleWord) {
                const std::size_t e = i + t.content.size();
                if ((i > 0 && isWordByte(text[i - 1]) && isWordByte(t.content.front()))
                    || (e < text.size() && isWordByte(text[e]) && isWordByte(t.content.back()))) {
                    continue;
                }
            }
            found = &t;
            break;
        }
        if (!found) {
            ++i;
            continue;
        }
        std::size_t begin = i, end = i + found->content.size();
        if (found->lstrip) {
            while (begin > floor && isSpace(text[begin - 1])) {
                --begin;
            }
        }
        if (found->rstrip) {
            while (end < text.size() && isSpace(text[end])) {
                ++end;
            }
        }
        out.push_back({begin, end, found});
        floor = end;
        i = end;
    }
    return out;
}

} // namespace attn::text
