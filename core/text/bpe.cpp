#include "core/text/bpe.h"

#include "core/text/alignedtext.h"

#include <algorithm>
#include <cstdio>
#include <queue>
#include <stdexcept>

namespace attn::text {

namespace {

constexpr std::size_t kMaxCachedWordBytes = 256;
constexpr std::size_t kMaxCacheEntries = 10000;

} // namespace

BpeModel::BpeModel(std::unordered_map<std::string, TokenId> vocab,
                   const std::vector<std::pair<std::string, std::string>> &merges,
                   BpeOptions options)
    : m_vocab(std::move(vocab))
    , m_options(std::move(options))
{
    m_tokens.reserve(m_vocab.size());
    for (const auto &[token, id] : m_vocab) {
        const auto [it, inserted] = m_tokens.try_emplace(id, token);
        if (!inserted) {
            // Both names, in a fixed order whatever the hash order.
            const auto &[a, b] = std::minmax(it->second, token);
            throw std::invalid_argument("id " + std::to_string(id) + " is given to both \"" + a
                                        + "\" and \"" + b + "\"");
        }
    }
    m_merges.reserve(merges.size());
    const std::string &prefix = m_options.continuingSubwordPrefix;
    for (std::size_t rank = 0; rank < merges.size(); ++rank) {
        const std::string &a = merges[rank].first;
        const std::string &b = merges[rank].second;
        const auto ia = m_vocab.find(a);
        const auto ib = m_vocab.find(b);
        auto where
            = [&] { return "merge " + std::to_string(rank) + " (\"" + a + "\" \"" + b + "\")"; };
        if (ia == m_vocab.end()) {
            throw std::invalid_argument(where() + ": token \"" + a + "\" is not in the vocabulary");
        }
        if (ib == m_vocab.end()) {
            throw std::invalid_argument(where() + ": token \"" + b + "\" is not in the vocabulary");
        }
        // The right part loses its continuing-subword prefix in the merged token.
        std::string merged = a;
        if (!prefix.empty() && b.compare(0, prefix.size(), prefix) == 0) {
            merged += b.substr(prefix.size());
        } else {
            merged += b;
        }
        const auto im = m_vocab.find(merged);
        if (im == m_vocab.end()) {
            throw std::invalid_argument(where() + ": the merged token \"" + merged
                                        + "\" is not in the vocabulary");
        }
        // A pair listed twice keeps its first (highest-priority) rank.
        m_merges.try_emplace(key(ia->second, ib->second),
                             Merge {static_cast<std::uint32_t>(rank), im->second});
    }
    if (m_options.unkToken) {
        const auto it = m_vocab.find(*m_options.unkToken);
        if (it == m_vocab.end()) {
            throw std::invalid_argument("unk_token \"" + *m_options.unkToken
                                        + "\" is not in the vocabulary");
        }
        m_unk = it->second;
    }
}

void BpeModel::addToken(const std::string &token, TokenId id)
{
    m_tokens.try_emplace(id, token);
    m_vocab.try_emplace(token, id);
}

std::optional<TokenId> BpeModel::tokenToId(std::string_view token) const
{
    return findTokenId(m_vocab, token);
}

const std::string *BpeModel::idToToken(TokenId id) const
{
    return findToken(m_tokens, id);
}

void BpeModel::tokenize(std::string_view word, std::vector<ModelToken> &out) const
{
    if (word.empty()) {
        return;
    }
    if (m_options.ignoreMerges) {
        if (const auto id = tokenToId(word)) {
            out.push_back({*id, 0, word.size()});
            return;
        }
    }
    const bool cacheable = word.size() <= kMaxCachedWordBytes;
    if (cacheable) {
        std::lock_guard lock(m_cacheMutex);
        const auto it = m_cache.find(std::string(word));
        if (it != m_cache.end()) {
            out.insert(out.end(), it->second.begin(), it->second.end());
            return;
        }
    }
    const std::size_t first = out.size();
    merge(word, out);
    if (cacheable) {
        std::vector<ModelToken> tokens(out.begin() + static_cast<std::ptrdiff_t>(first), out.end());
        std::lock_guard lock(m_cacheMutex);
        if (m_cache.size() >= kMaxCacheEntries) {
            m_cache.clear();
        }
        m_cache.emplace(std::string(word), std::move(tokens));
    }
}

void BpeModel::merge(std::string_view word, std::vector<ModelToken> &out) const
{
    // Symbols: a doubly linked list over an array; a merged-away symbol has len 0.
    struct Symbol
    {
        TokenId id;
        std::uint32_t begin; ///< bytes of `word`
        std::uint32_t len;
        std::int32_t prev;
        std::int32_t next;
    };
    std::vector<Symbol> symbols;
    symbols.reserve(word.size());
    const BpeOptions &opt = m_options;
    std::string piece;
    bool lastWasUnk = false;
    std::size_t i = 0;
    while (i < word.size()) {
        const std::size_t begin = i;
        nextCodePoint(word, i);
        piece.clear();
        if (begin > 0) {
            piece += opt.continuingSubwordPrefix;
        }
        piece.append(word.substr(begin, i - begin));
        if (i == word.size()) {
            piece += opt.endOfWordSuffix;
        }
        auto add = [&](TokenId id, std::size_t b, std::size_t e) {
            const auto n = static_cast<std::int32_t>(symbols.size());
            symbols.push_back({id, static_cast<std::uint32_t>(b), static_cast<std::uint32_t>(e - b),
                               n - 1, n + 1});
        };
        if (const auto it = m_vocab.find(piece); it != m_vocab.end()) {
            add(it->second, begin, i);
            lastWasUnk = false;
            continue;
        }
        if (opt.byteFallback) {
            std::vector<TokenId> bytes;
            for (std::size_t b = begin; b < i; ++b) {
                char name[8];
                std::snprintf(name, sizeof name, "<0x%02X>", static_cast<unsigned char>(word[b]));
                const auto it = m_vocab.find(name);
                if (it == m_vocab.end()) {
                    bytes.clear();
                    break;
                }
                bytes.push_back(it->second);
            }
            if (!bytes.empty()) {
                for (std::size_t k = 0; k < bytes.size(); ++k) {
                    add(bytes[k], begin + k, begin + k + 1);
                }
                lastWasUnk = false;
                continue;
            }
        }
        if (m_unk) {
            if (opt.fuseUnk && lastWasUnk) {
                symbols.back().len = static_cast<std::uint32_t>(i - symbols.back().begin);
            } else {
                add(*m_unk, begin, i);
            }
            lastWasUnk = true;
        }
    }
    if (symbols.empty()) {
        return;
    }
    symbols.back().next = -1;
    // Candidate merges: (rank, left position) ordered, the ids they were made for.
    struct Candidate
    {
        std::uint32_t rank;
        std::int32_t left;
        TokenId leftId, rightId, result;
        bool operator>(const Candidate &o) const
        {
            return rank != o.rank ? rank > o.rank : left > o.left;
        }
    };
    std::priority_queue<Candidate, std::vector<Candidate>, std::greater<>> heap;
    auto consider = [&](std::int32_t left) {
        if (left < 0) {
            return;
        }
        const std::int32_t right = symbols[left].next;
        if (right < 0) {
            return;
        }
        const auto it = m_merges.find(key(symbols[left].id, symbols[right].id));
        if (it != m_merges.end()) {
            heap.push(
                {it->second.rank, left, symbols[left].id, symbols[right].id, it->second.result});
        }
    };
    for (std::int32_t k = 0; k + 1 < static_cast<std::int32_t>(symbols.size()); ++k) {
        consider(k);
    }
    while (!heap.empty()) {
        const Candidate c = heap.top();
        heap.pop();
        Symbol &left = symbols[c.left];
        if (left.len == 0 || left.id != c.leftId || left.next < 0) {
            continue;
        }
        Symbol &right = symbols[left.next];
        if (right.id != c.rightId) {
            continue;
        }
        left.id = c.result;
        left.len += right.len;
        left.next = right.next;
        right.len = 0;
        if (left.next >= 0) {
            symbols[left.next].prev = c.left;
        }
        consider(left.prev);
        consider(c.left);
    }
    for (std::int32_t k = 0; k >= 0; k = symbols[k].next) {
        const Symbol &s = symbols[k];
        out.push_back({s.id, s.begin, std::size_t(s.begin) + s.len});
    }
}

} // namespace attn::text
