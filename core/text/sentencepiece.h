#pragma once
// SentencePiece models (tokenizer.model: Llama 2, Gemma, T5, ...) through Debian's
// libsentencepiece (google/sentencepiece, SentencePieceProcessor). The library does its own
// normalization (the model's rule, e.g. nmt_nfkc), whitespace handling ("▁") and
// segmentation (unigram or BPE, byte fallback), so the tokenizer built around it has no
// normalizer or pre-tokenizer: each segment between added tokens goes to the library whole.

#include "core/text/model.h"

#include <memory>
#include <string_view>

namespace sentencepiece {
class SentencePieceProcessor;
}

namespace attn::text {

class SentencePieceModel : public Model
{
public:
    /// The model from a serialized ModelProto (the bytes of tokenizer.model). Throws
    /// std::invalid_argument with the library's message when it cannot be loaded.
    explicit SentencePieceModel(std::string_view serializedProto);
    ~SentencePieceModel() override;

    /// The pieces of `text` with the spans the library reports (bytes of `text`; the pieces
    /// of one character's byte fallback share its span). Throws std::runtime_error when the
    /// library fails.
    void tokenize(std::string_view text, std::vector<ModelToken> &out) const override;
    std::optional<TokenId> tokenToId(std::string_view token) const override;
    const std::string *idToToken(TokenId id) const override;
    std::size_t vocabSize() const override;
    /// Added tokens beyond the model's pieces are recorded for idToToken only.
    void addToken(const std::string &token, TokenId id) override;
    /// SentencePieceProcessor::Decode: "▁" → space, the dummy prefix space dropped, byte
    /// pieces joined into their bytes.
    std::optional<std::string> decode(const std::vector<TokenId> &ids) const override;
    /// Whether `id` is a control piece (<s>, </s>) of the model.
    bool isControl(TokenId id) const;

private:
    std::unique_ptr<sentencepiece::SentencePieceProcessor> m_processor;
    std::vector<std::pair<std::string, TokenId>> m_extra;
};

} // namespace attn::text
