#pragma once
// Added tokens (special tokens such as <|begin_of_text|>, and others the file adds), found in
// the raw text before any other stage runs (Hugging Face
// tokenizers/src/tokenizer/added_vocabulary.rs; transformers.js's DictionarySplitter).

#include "core/text/bpe.h"

#include <array>
#include <cstddef>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

namespace attn::text {

struct AddedToken
{
    std::string content;
    TokenId id = 0;
    bool special = false;
    bool lstrip = false; ///< the match takes the whitespace before it
    bool rstrip = false; ///< the match takes the whitespace after it
    bool singleWord = false; ///< matches only where no word character touches it
};

class AddedVocabulary
{
public:
    struct Match
    {
        std::size_t begin, end; ///< bytes of the text, with lstrip/rstrip whitespace
        const AddedToken *token;
    };

    AddedVocabulary() = default;
    explicit AddedVocabulary(std::vector<AddedToken> tokens);

    /// The added tokens in `text`, left to right, the longest at each position
    /// (leftmost-longest, as tokenizers' Aho-Corasick with MatchKind::LeftmostLongest). Empty
    /// contents never match. Whitespace for lstrip/rstrip: ASCII space, TAB, LF, VT, FF, CR.
    std::vector<Match> find(std::string_view text) const;

    const std::vector<AddedToken> &tokens() const { return m_tokens; }
    const AddedToken *byId(TokenId id) const;

private:
    std::vector<AddedToken> m_tokens;
    std::array<std::vector<std::size_t>, 256> m_byFirstByte; ///< longest first
    std::unordered_map<TokenId, std::size_t> m_byId;
};

} // namespace attn::text
