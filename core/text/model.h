#pragma once
// The model stage's interface: one word in, its tokens out (Hugging Face
// tokenizers/src/models/mod.rs, trait Model). BpeModel (bpe.h) and WordPieceModel
// (wordpiece.h) implement it.

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

namespace attn::text {

using TokenId = std::uint32_t;

/// One token of a word: its id and its bytes [begin, end) in the word.
struct ModelToken
{
    TokenId id;
    std::size_t begin;
    std::size_t end;
};

/// `token`'s id in a vocabulary (token → id), or nullopt when it has none.
inline std::optional<TokenId> findTokenId(const std::unordered_map<std::string, TokenId> &vocab,
                                          std::string_view token)
{
    const auto it = vocab.find(std::string(token));
    return it == vocab.end() ? std::nullopt : std::optional<TokenId>(it->second);
}

/// `id`'s token in a vocabulary's inverse (id → token), or nullptr when it has none.
inline const std::string *findToken(const std::unordered_map<TokenId, std::string> &tokens,
                                    TokenId id)
{
    const auto it = tokens.find(id);
    return it == tokens.end() ? nullptr : &it->second;
}

class Model
{
public:
    virtual ~Model() = default;
    /// Appends the tokens of `word` (valid UTF-8, non-empty) to `out`. Thread-safe.
    virtual void tokenize(std::string_view word, std::vector<ModelToken> &out) const = 0;
    virtual std::optional<TokenId> tokenToId(std::string_view token) const = 0;
    /// The token string of `id`, or nullptr when the vocabulary has no such id.
    virtual const std::string *idToToken(TokenId id) const = 0;
    virtual std::size_t vocabSize() const = 0;
    /// Adds a token (an added token outside the model's vocabulary) with its id; an id or
    /// string already there is kept.
    virtual void addToken(const std::string &token, TokenId id) = 0;
    /// Whether <0xXX> tokens stand for single bytes (BPE byte_fallback).
    virtual bool byteFallback() const { return false; }
    /// The text of `ids` when the model decodes by itself (SentencePiece); nothing when the
    /// tokenizer joins the pieces (the default). Throws std::out_of_range for unknown ids.
    virtual std::optional<std::string> decode(const std::vector<TokenId> &ids) const
    {
        (void)ids;
        return std::nullopt;
    }
};

} // namespace attn::text
