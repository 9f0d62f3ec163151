#include "core/text/postprocessor.h"

namespace attn::text {

TemplateProcessor::TemplateProcessor(std::vector<Item> single)
    : m_single(std::move(single))
{ }

void TemplateProcessor::process(Encoding &encoding, std::string_view text,
                                bool addSpecialTokens) const
{
    if (!addSpecialTokens) {
        return;
    }
    Encoding out;
    bool afterSequence = false;
    for (const Item &item : m_single) {
        if (item.sequence) {
            out.tokens.insert(out.tokens.end(), encoding.tokens.begin(), encoding.tokens.end());
            afterSequence = true;
            continue;
        }
        const std::size_t at = afterSequence ? text.size() : 0;
        for (std::size_t k = 0; k < item.ids.size(); ++k) {
            out.tokens.push_back({item.ids[k], item.pieces[k], at, at, true});
        }
    }
    encoding = std::move(out);
}

ByteLevelProcessor::ByteLevelProcessor(bool trimOffsets)
    : m_trimOffsets(trimOffsets)
{ }

void ByteLevelProcessor::process(Encoding &encoding, std::string_view, bool) const
{
    if (!m_trimOffsets) {
        return;
    }
    static const std::string space = "\xC4\xA0"; // Ġ, the byte-level space
    for (Token &t : encoding.tokens) {
        if (t.special) {
            continue;
        }
        std::size_t lead = 0, trail = 0;
        while (t.piece.compare(lead * 2, 2, space) == 0 && lead * 2 + 2 <= t.piece.size()) {
            ++lead;
        }
        if (lead * 2 == t.piece.size()) {
            continue; // only spaces: kept whole
        }
        while (t.piece.size() >= (trail + 1) * 2
               && t.piece.compare(t.piece.size() - (trail + 1) * 2, 2, space) == 0) {
            ++trail;
        }
        // Each Ġ stands for one byte of the text; spans that do not (NFC) are left alone.
        if (t.end - t.begin >= lead + trail) {
            t.begin += lead;
            t.end -= trail;
        }
    }
}

SequenceProcessor::SequenceProcessor(std::vector<std::unique_ptr<PostProcessor>> stages)
    : m_stages(std::move(stages))
{ }

void SequenceProcessor::process(Encoding &encoding, std::string_view text,
                                bool addSpecialTokens) const
{
    for (const auto &stage : m_stages) {
        stage->process(encoding, text, addSpecialTokens);
    }
}

} // namespace attn::text
