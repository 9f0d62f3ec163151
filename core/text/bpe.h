#pragma once
// Byte-pair encoding, the model stage (Sennrich et al. 2016; Hugging Face
// tokenizers/src/models/bpe/model.rs and word.rs; OpenAI gpt-2 src/encoder.py `bpe`).

#include "core/text/model.h"

#include <cstddef>
#include <cstdint>
#include <list>
#include <mutex>
#include <optional>
#include <string>
#include <string_view>
#include <unordered_map>
#include <utility>
#include <vector>

namespace attn::text {

struct BpeOptions
{
    std::optional<std::string> unkToken; ///< for characters outside the vocabulary
    bool fuseUnk = false; ///< consecutive unknowns become one unk
    bool byteFallback = false; ///< unknown characters as <0xXX> byte tokens
    bool ignoreMerges = false; ///< a word in the vocabulary is one token
    std::string continuingSubwordPrefix; ///< put before every symbol but the first
    std::string endOfWordSuffix; ///< put after the last symbol
};

class BpeModel : public Model
{
public:
    /// `vocab`: token string → id. `merges`: pairs of token strings, highest priority first.
    /// Throws std::invalid_argument naming the merge (its index and tokens) when a merge's
    /// parts or its result are not in the vocabulary, or when an id is duplicated.
    BpeModel(std::unordered_map<std::string, TokenId> vocab,
             const std::vector<std::pair<std::string, std::string>> &merges, BpeOptions options);

    /// Tokenizes one word (valid UTF-8; for byte-level models already in GPT-2's alphabet).
    /// Symbols start as single characters and the pair of lowest merge rank is merged first
    /// (leftmost among equal ranks), with a min-heap over a linked list: O(n log n) for a
    /// word of n characters. Words up to 256 bytes are cached (at most 10 000, then the cache
    /// is cleared). Characters without a token are dropped unless unk or byte fallback say
    /// otherwise (as tokenizers does). Thread-safe.
    void tokenize(std::string_view word, std::vector<ModelToken> &out) const override;

    std::optional<TokenId> tokenToId(std::string_view token) const override;
    /// The token string of `id`, or nullptr when the vocabulary has no such id.
    const std::string *idToToken(TokenId id) const override;
    std::size_t vocabSize() const override { return m_vocab.size(); }
    const BpeOptions &options() const { return m_options; }
    /// Adds a token (an added token outside the model's vocabulary) with its id.
    void addToken(const std::string &token, TokenId id) override;
    bool byteFallback() const override { return m_options.byteFallback; }

private:
    struct Merge
    {
        std::uint32_t rank;
        TokenId result;
    };
    static std::uint64_t key(TokenId a, TokenId b) { return (std::uint64_t(a) << 32) | b; }
    void merge(std::string_view word, std::vector<ModelToken> &out) const;

    std::unordered_map<std::string, TokenId> m_vocab;
    std::unordered_map<TokenId, std::string> m_tokens; ///< id → token (ids may be sparse)
    std::unordered_map<std::uint64_t, Merge> m_merges;
    BpeOptions m_options;
    std::optional<TokenId> m_unk;

    mutable std::mutex m_cacheMutex;
    mutable std::unordered_map<std::string, std::vector<ModelToken>> m_cache;
};

} // namespace attn::text
