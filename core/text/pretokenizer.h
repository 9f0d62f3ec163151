#pragma once
// Pre-tokenizers: cut normalized text into the words the model tokenizes on their own
// (Hugging Face tokenizers/src/pre_tokenizers/). A split is a byte range [begin, end) of the
// segment's normalized text; a stage refines the splits of the stage before.

#include "core/text/alignedtext.h"
#include "core/text/regex.h"

#include <cstddef>
#include <memory>
#include <string>
#include <vector>

namespace attn::text {

struct Split
{
    std::size_t begin = 0; ///< bytes of the normalized segment
    std::size_t end = 0;
};

class PreTokenizer
{
public:
    virtual ~PreTokenizer() = default;
    /// Refines `splits` (ranges of text.text, in order, non-overlapping). A stage may insert
    /// bytes into `text` (ByteLevel's prefix space), shifting the splits after them.
    virtual void preTokenize(AlignedText &text, std::vector<Split> &splits) const = 0;
    /// Whether this stage (or one inside it) maps bytes to GPT-2's printable characters: the
    /// model then sees each split in that alphabet (bytelevel.h).
    virtual bool isByteLevel() const { return false; }
};

/// What Split does with the pieces its pattern matches (tokenizers'
/// SplitDelimiterBehavior).
enum class SplitBehavior { Removed, Isolated, MergedWithPrevious, MergedWithNext, Contiguous };

/// tokenizers' pre_tokenizers::split::Split: the pattern's matches are the delimiters (the
/// text between them when `invert`), treated as `behavior` says.
class SplitPreTokenizer : public PreTokenizer
{
public:
    /// `pattern` is a PCRE2 pattern (regex.h); a literal "String" pattern must be escaped
    /// by the caller (see quoteLiteral). Throws std::invalid_argument for a rejected pattern.
    SplitPreTokenizer(const std::string &pattern, SplitBehavior behavior, bool invert);
    void preTokenize(AlignedText &text, std::vector<Split> &splits) const override;

    /// `literal` as a pattern matching exactly itself (\Q…\E, with \E inside handled).
    static std::string quoteLiteral(const std::string &literal);

private:
    Regex m_regex;
    SplitBehavior m_behavior;
    bool m_invert;
};

/// GPT-2's pre-tokenization (tokenizers' pre_tokenizers::byte_level::ByteLevel): an optional
/// space before each split not starting with one (add_prefix_space), then, with use_regex,
/// the splits cut by GPT-2's pattern
///   's|'t|'re|'ve|'m|'ll|'d| ?\p{L}+| ?\p{N}+| ?[^\s\p{L}\p{N}]+|\s+(?!\S)|\s+
/// (OpenAI gpt-2 src/encoder.py), and the model sees bytes as GPT-2's characters.
class ByteLevelPreTokenizer : public PreTokenizer
{
public:
    ByteLevelPreTokenizer(bool addPrefixSpace, bool useRegex);
    void preTokenize(AlignedText &text, std::vector<Split> &splits) const override;
    bool isByteLevel() const override { return true; }

    static const char *gpt2Pattern();

private:
    bool m_addPrefixSpace;
    bool m_useRegex;
};

/// BERT's pre-tokenization (tokenizers' pre_tokenizers::bert::BertPreTokenizer): splits on
/// whitespace (TAB, LF, CR, category Zs and the other White_Space code points; removed) and
/// on punctuation (ASCII 33–47, 58–64, 91–96, 123–126 and categories P*; each its own split).
class BertPreTokenizer : public PreTokenizer
{
public:
    void preTokenize(AlignedText &text, std::vector<Split> &splits) const override;
};

/// SentencePiece's whitespace as a pre-tokenizer (tokenizers' pre_tokenizers::metaspace::
/// Metaspace): every space becomes `replacement` ("▁", U+2581), one is put before a split
/// not starting with it (prepend_scheme "always"; "first": only where the split starts the
/// whole input; "never"), and with `split` the text is cut before each replacement.
class MetaspacePreTokenizer : public PreTokenizer
{
public:
    enum class PrependScheme { Always, First, Never };
    MetaspacePreTokenizer(std::string replacement, PrependScheme scheme, bool split);
    void preTokenize(AlignedText &text, std::vector<Split> &splits) const override;

private:
    std::string m_replacement;
    PrependScheme m_scheme;
    bool m_split;
};

/// Stages applied in order (tokenizers' pre_tokenizers::sequence::Sequence).
class SequencePreTokenizer : public PreTokenizer
{
public:
    explicit SequencePreTokenizer(std::vector<std::unique_ptr<PreTokenizer>> stages);
    void preTokenize(AlignedText &text, std::vector<Split> &splits) const override;
    bool isByteLevel() const override;

private:
    std::vector<std::unique_ptr<PreTokenizer>> m_stages;
};

} // namespace attn::text
