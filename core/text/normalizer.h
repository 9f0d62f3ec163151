#pragma once
// Normalizers: the first stage of a tokenizer (Hugging Face tokenizers/src/normalizers/).
// Each takes one segment of text (the text between added tokens, already valid UTF-8) and
// returns its normalized form aligned to the segment's bytes.

#include "core/text/alignedtext.h"

#include <memory>
#include <string_view>
#include <vector>

namespace attn::text {

class Normalizer
{
public:
    virtual ~Normalizer() = default;
    /// The normalized text; its alignment refers to bytes of `segment` (empty = identity).
    virtual AlignedText normalize(std::string_view segment) const = 0;
};

/// Unicode Normalization Form C (UAX #15) through utf8proc (UTF8PROC_STABLE |
/// UTF8PROC_COMPOSE), as tokenizers' NFC (normalizers/unicode.rs). Normalized one extended
/// grapheme cluster at a time, so each output byte is aligned with the whole cluster it came
/// from: composition and canonical reordering never cross a cluster boundary (combining marks
/// and Hangul jamo continue their cluster), so the text equals NFC of the whole segment.
class NfcNormalizer : public Normalizer
{
public:
    AlignedText normalize(std::string_view segment) const override;
};

/// BERT's normalizer (tokenizers' normalizers::bert::BertNormalizer; google-research/bert
/// tokenization.py BasicTokenizer), one code point at a time, each output byte aligned with the
/// code point it came from:
///  - cleanText: drops U+0000, U+FFFD and control characters (categories Cc, Cf, Co, Cs, Cn,
///    except TAB, LF, CR), and turns whitespace (TAB, LF, CR, category Zs) into ' ';
///  - handleChineseChars: a space on either side of each CJK Unified Ideograph (the blocks
///    4E00–9FFF, 3400–4DBF, 20000–2A6DF, 2A700–2B73F, 2B740–2B81F, 2B820–2CEAF, F900–FAFF,
///    2F800–2FA1F);
///  - stripAccents (default: as lowercase): NFD, then combining marks (Mn) dropped;
///  - lowercase: utf8proc's simple lowercase mapping (one code point to one; Rust's
///    to_lowercase in tokenizers expands a few, such as U+0130, to two).
class BertNormalizer : public Normalizer
{
public:
    BertNormalizer(bool cleanText, bool handleChineseChars, bool stripAccents, bool lowercase);
    AlignedText normalize(std::string_view segment) const override;

private:
    bool m_cleanText, m_handleChineseChars, m_stripAccents, m_lowercase;
};

/// tokenizers' normalizers::prepend::Prepend: `prefix` before non-empty text (aligned with
/// nothing: an empty span at the start).
class PrependNormalizer : public Normalizer
{
public:
    explicit PrependNormalizer(std::string prefix);
    AlignedText normalize(std::string_view segment) const override;

private:
    std::string m_prefix;
};

/// tokenizers' normalizers::replace::Replace with a literal pattern (the "String" form):
/// each occurrence, left to right, becomes `content`, aligned with the bytes it replaces.
class ReplaceNormalizer : public Normalizer
{
public:
    ReplaceNormalizer(std::string pattern, std::string content);
    AlignedText normalize(std::string_view segment) const override;

private:
    std::string m_pattern, m_content;
};

/// Normalizers applied in order (tokenizers' normalizers::Sequence).
class SequenceNormalizer : public Normalizer
{
public:
    explicit SequenceNormalizer(std::vector<std::unique_ptr<Normalizer>> stages);
    AlignedText normalize(std::string_view segment) const override;

private:
    std::vector<std::unique_ptr<Normalizer>> m_stages;
};

/// The alignment of `outer` (bytes of `inner.text` → bytes of the original) composed after
/// `inner` (bytes of some text → bytes of inner.text): the result maps to the original.
AlignedText composeAlignment(const AlignedText &inner, AlignedText outer);

} // namespace attn::text
