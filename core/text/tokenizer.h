#pragma once
// A tokenizer as Hugging Face tokenizers runs one (tokenizers/src/tokenizer/mod.rs,
// encode_single_sequence): added tokens are found in the raw text; the text between them is
// normalized, pre-tokenized into words, and each word tokenized by the model; then the
// post-processor adds special tokens. Every token keeps its byte span in the input.
// Built by the loaders of loader.h.

#include "core/text/addedtokens.h"
#include "core/text/bpe.h"
#include "core/text/encoding.h"
#include "core/text/normalizer.h"
#include "core/text/postprocessor.h"
#include "core/text/pretokenizer.h"

#include <memory>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

namespace attn::text {

class Tokenizer
{
public:
    struct Stages
    {
        std::unique_ptr<Normalizer> normalizer; ///< may be null
        std::unique_ptr<PreTokenizer> preTokenizer; ///< may be null (the segment is one word)
        std::unique_ptr<Model> model; ///< required
        std::unique_ptr<PostProcessor> postProcessor; ///< may be null
        AddedVocabulary added;
        /// How decode() joins pieces: as they are (byte-level and byte-fallback pieces as
        /// their bytes), or WordPiece's way (tokenizers' decoders::wordpiece): a space before
        /// each piece but the first unless it starts with the prefix, which is dropped; with
        /// cleanup, the spaces before . ? ! , and in front of 's 've 're n't 'm go.
        struct WordPieceDecoding
        {
            std::string prefix = "##";
            bool cleanup = true;
        };
        std::optional<WordPieceDecoding> wordPieceDecoding;
        /// SentencePiece-style decoding (tokenizers' decoders Metaspace, or Sequence of
        /// Replace "▁" → " ", ByteFallback, Fuse, Strip): in each piece the replacement becomes
        /// a space, and the first leading space of the text goes when stripLeadingSpace.
        struct MetaspaceDecoding
        {
            std::string replacement = "\xE2\x96\x81";
            bool stripLeadingSpace = true;
        };
        std::optional<MetaspaceDecoding> metaspaceDecoding;
        std::string description; ///< e.g. "tokenizer.json (BPE, 128000 tokens)"
    };
    explicit Tokenizer(Stages stages);

    /// Tokenizes `text` (any bytes: invalid UTF-8 is replaced as sanitizeUtf8 says, each
    /// U+FFFD spanning the bytes it replaces). Spans are bytes of `text`, in order; without a
    /// normalizer that changes text they tile the text exactly. Throws std::runtime_error
    /// only when the regex engine gives up (alignedtext.h: inputs under 4 GiB).
    Encoding encode(std::string_view text, bool addSpecialTokens = true) const;
    std::vector<TokenId> encodeIds(std::string_view text, bool addSpecialTokens = true) const
    {
        return encode(text, addSpecialTokens).ids();
    }

    /// The bytes the ids stand for: byte-level tokens through GPT-2's table, byte-fallback
    /// tokens <0xXX> as their byte, added tokens as their content (left out with
    /// skipSpecialTokens when special). The result is raw bytes: ids that cut a character
    /// give its partial UTF-8 (no replacement). Throws std::out_of_range for an unknown id.
    std::string decode(std::span<const TokenId> ids, bool skipSpecialTokens = false) const;

    std::optional<TokenId> tokenToId(std::string_view token) const;
    /// The vocabulary string of `id`; throws std::out_of_range for an unknown id.
    std::string idToToken(TokenId id) const;
    /// Tokens in the vocabulary, added tokens included.
    std::size_t vocabSize() const;
    bool isByteLevel() const { return m_byteLevel; }
    const std::string &description() const { return m_stages.description; }
    const AddedVocabulary &addedTokens() const { return m_stages.added; }

private:
    void encodeSegment(const AlignedText &input, std::size_t begin, std::size_t end,
                       Encoding &out) const;

    Stages m_stages;
    bool m_byteLevel = false;
};

} // namespace attn::text
