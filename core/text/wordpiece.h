#pragma once
// WordPiece, BERT's model stage (Wu et al. 2016; Hugging Face
// tokenizers/src/models/wordpiece/mod.rs; google-research/bert tokenization.py
// WordpieceTokenizer): greedy longest-match-first from the left, pieces after the first
// carrying the continuing-subword prefix ("##").

#include "core/text/model.h"

#include <unordered_map>

namespace attn::text {

class WordPieceModel : public Model
{
public:
    /// `vocab`: token → id; `unkToken` must be in it (std::invalid_argument otherwise, and
    /// for an id given twice). A word of more than `maxInputCharsPerWord` characters, or
    /// one that cannot be cut into pieces of the vocabulary, is the one token unkToken.
    WordPieceModel(std::unordered_map<std::string, TokenId> vocab, std::string unkToken,
                   std::string continuingSubwordPrefix = "##",
                   std::size_t maxInputCharsPerWord = 100);

    void tokenize(std::string_view word, std::vector<ModelToken> &out) const override;
    std::optional<TokenId> tokenToId(std::string_view token) const override;
    const std::string *idToToken(TokenId id) const override;
    std::size_t vocabSize() const override { return m_vocab.size(); }
    void addToken(const std::string &token, TokenId id) override;
    const std::string &continuingSubwordPrefix() const { return m_prefix; }

private:
    std::unordered_map<std::string, TokenId> m_vocab;
    std::unordered_map<TokenId, std::string> m_tokens;
    TokenId m_unk = 0;
    std::string m_prefix;
    std::size_t m_maxChars;
};

} // namespace attn::text
