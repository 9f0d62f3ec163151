#pragma once
// What a tokenizer gives back: tokens with their ids, vocabulary strings and byte spans.

#include "core/text/bpe.h"

#include <cstddef>
#include <string>
#include <vector>

namespace attn::text {

struct Token
{
    TokenId id = 0;
    std::string piece; ///< the vocabulary string (GPT-2's alphabet for byte-level models)
    std::size_t begin = 0; ///< byte span [begin, end) in the text given to encode()
    std::size_t end = 0;
    bool special = false; ///< an added token marked special, or one the post-processor added
};

struct Encoding
{
    std::vector<Token> tokens;

    std::vector<TokenId> ids() const
    {
        std::vector<TokenId> out;
        out.reserve(tokens.size());
        for (const Token &t : tokens) {
            out.push_back(t.id);
        }
        return out;
    }
};

} // namespace attn::text
