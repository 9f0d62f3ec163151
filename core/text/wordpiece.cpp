#include "core/text/wordpiece.h"

#include "core/text/alignedtext.h"

#include <algorithm>
#include <stdexcept>

namespace attn::text {

WordPieceModel::WordPieceModel(std::unordered_map<std::string, TokenId> vocab, std::string unkToken,
                               std::string continuingSubwordPrefix,
                               std::size_t maxInputCharsPerWord)
    : m_vocab(std::move(vocab))
    , m_prefix(std::move(continuingSubwordPrefix))
    , m_maxChars(maxInputCharsPerWord)
{
    for (const auto &[token, id] : m_vocab) {
        const auto [it, inserted] = m_tokens.try_emplace(id, token);
        if (!inserted) {
            const auto &[a, b] = std::minmax(it->second, token);
            throw std::invalid_argument("id " + std::to_string(id) + " is given to both \"" + a
                                        + "\" and \"" + b + "\"");
        }
    }
    const auto it = m_vocab.find(unkToken);
    if (it == m_vocab.end()) {
        throw std::invalid_argument("unk_token \"" + unkToken + "\" is not in the vocabulary");
    }
    m_unk = it->second;
}

void WordPieceModel::tokenize(std::string_view word, std::vector<ModelToken> &out) const
{
    // Character boundaries of the word.
    std::vector<std::size_t> bounds;
    for (std::size_t i = 0; i < word.size();) {
        bounds.push_back(i);
        nextCodePoint(word, i);
    }
    bounds.push_back(word.size());
    const std::size_t chars = bounds.size() - 1;
    if (chars > m_maxChars) {
        out.push_back({m_unk, 0, word.size()});
        return;
    }
    const std::size_t first = out.size();
    std::string piece;
    std::size_t start = 0;
    while (start < chars) {
        // The longest piece [start, end) in the vocabulary.
        std::size_t end = chars;
        std::optional<TokenId> found;
        while (end > start) {
            piece.clear();
            if (start > 0) {
                piece = m_prefix;
            }
            piece.append(word.substr(bounds[start], bounds[end] - bounds[start]));
            if (const auto it = m_vocab.find(piece); it != m_vocab.end()) {
                found = it->second;
                break;
            }
            --end;
        }
        if (!found) {
            out.resize(first);
            out.push_back({m_unk, 0, word.size()});
            return;
        }
        out.push_back({*found, bounds[start], bounds[end]});
        start = end;
    }
}

std::optional<TokenId> WordPieceModel::tokenToId(std::string_view token) const
{
    return findTokenId(m_vocab, token);
}

const std::string *WordPieceModel::idToToken(TokenId id) const
{
    return findToken(m_tokens, id);
}

void WordPieceModel::addToken(const std::string &token, TokenId id)
{
    m_tokens.try_emplace(id, token);
    m_vocab.try_emplace(token, id);
}

} // namespace attn::text
