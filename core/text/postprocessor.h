#pragma once
// Post-processors: the last stage, after the model (Hugging Face
// tokenizers/src/processors/). They add special tokens around the sequence or adjust spans.

#include "core/text/encoding.h"

#include <memory>
#include <string>
#include <vector>

namespace attn::text {

class PostProcessor
{
public:
    virtual ~PostProcessor() = default;
    /// Adjusts `encoding` of `text` (the input of encode()); `addSpecialTokens` false asks
    /// to leave the special tokens out.
    virtual void process(Encoding &encoding, std::string_view text,
                         bool addSpecialTokens) const = 0;
};

/// tokenizers' processors::template::TemplateProcessing for single sequences: the template's
/// items in order, "$A" (the sequence) and special tokens, each special token standing for
/// its ids (the file's special_tokens map). Special tokens get an empty span at the start of
/// the text when they come before the sequence and at its end after it.
class TemplateProcessor : public PostProcessor
{
public:
    struct Item
    {
        bool sequence = false; ///< $A
        std::vector<TokenId> ids; ///< a special token's ids
        std::vector<std::string> pieces;
    };
    explicit TemplateProcessor(std::vector<Item> single);
    void process(Encoding &encoding, std::string_view text, bool addSpecialTokens) const override;

private:
    std::vector<Item> m_single;
};

/// tokenizers' processors::byte_level::ByteLevel: with trim_offsets, each token's span
/// leaves out the spaces (Ġ, U+0120) at its start and end, unless the token is only spaces.
class ByteLevelProcessor : public PostProcessor
{
public:
    explicit ByteLevelProcessor(bool trimOffsets);
    void process(Encoding &encoding, std::string_view text, bool addSpecialTokens) const override;

private:
    bool m_trimOffsets;
};

/// Processors applied in order (tokenizers' processors::sequence::Sequence).
class SequenceProcessor : public PostProcessor
{
public:
    explicit SequenceProcessor(std::vector<std::unique_ptr<PostProcessor>> stages);
    void process(Encoding &encoding, std::string_view text, bool addSpecialTokens) const override;

private:
    std::vector<std::unique_ptr<PostProcessor>> m_stages;
};

} // namespace attn::text
