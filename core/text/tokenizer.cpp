#include "core/text/tokenizer.h"

#include "core/text/bytelevel.h"

#include <cctype>
#include <stdexcept>

namespace attn::text {

Tokenizer::Tokenizer(Stages stages)
    : m_stages(std::move(stages))
{
    if (!m_stages.model) {
        throw std::invalid_argument("Tokenizer: no model");
    }
    m_byteLevel = m_stages.preTokenizer && m_stages.preTokenizer->isByteLevel();
    for (const AddedToken &t : m_stages.added.tokens()) {
        m_stages.model->addToken(t.content, t.id);
    }
}

Encoding Tokenizer::encode(std::string_view text, bool addSpecialTokens) const
{
    const AlignedText input = sanitizeUtf8(text);
    Encoding out;
    std::size_t at = 0;
    for (const AddedVocabulary::Match &m : m_stages.added.find(input.text)) {
        encodeSegment(input, at, m.begin, out);
        const auto [b, e] = input.originalSpan(m.begin, m.end);
        out.tokens.push_back({m.token->id, m.token->content, b, e, m.token->special});
        at = m.end;
    }
    encodeSegment(input, at, input.text.size(), out);
    if (m_stages.postProcessor) {
        m_stages.postProcessor->process(out, text, addSpecialTokens);
    }
    return out;
}

void Tokenizer::encodeSegment(const AlignedText &input, std::size_t begin, std::size_t end,
                              Encoding &out) const
{
    if (begin >= end) {
        return;
    }
    const std::string_view segment = std::string_view(input.text).substr(begin, end - begin);
    // text: the normalized segment; its alignment maps to bytes of `segment`.
    AlignedText text;
    if (m_stages.normalizer) {
        text = m_stages.normalizer->normalize(segment);
    } else {
        text.text.assign(segment);
    }
    text.originOffset = input.originalSpan(begin, begin).first;
    std::vector<Split> splits {{0, text.text.size()}};
    if (m_stages.preTokenizer) {
        m_stages.preTokenizer->preTokenize(text, splits);
    }
    // Normalized bytes [b, e) → bytes of the caller's text.
    auto spanOf = [&](std::size_t b, std::size_t e) {
        const auto [sb, se] = text.originalSpan(b, e);
        return input.originalSpan(begin + sb, begin + se);
    };
    const ByteLevelAlphabet &alphabet = ByteLevelAlphabet::instance();
    std::vector<ModelToken> tokens;
    std::string word;
    std::vector<std::size_t> sourceOf; // byte-level word byte → split byte
    for (const Split &s : splits) {
        if (s.end <= s.begin) {
            continue;
        }
        tokens.clear();
        const std::string_view bytes = std::string_view(text.text).substr(s.begin, s.end - s.begin);
        if (m_byteLevel) {
            word.clear();
            sourceOf.clear();
            for (std::size_t k = 0; k < bytes.size(); ++k) {
                const std::string &c = alphabet.utf8Of(static_cast<unsigned char>(bytes[k]));
                word += c;
                sourceOf.insert(sourceOf.end(), c.size(), k);
            }
            sourceOf.push_back(bytes.size());
            m_stages.model->tokenize(word, tokens);
            for (ModelToken &t : tokens) {
                t.begin = sourceOf[t.begin];
                t.end = sourceOf[t.end];
            }
        } else {
            m_stages.model->tokenize(bytes, tokens);
        }
        for (const ModelToken &t : tokens) {
            const auto [b, e] = spanOf(s.begin + t.begin, s.begin + t.end);
            const std::string *piece = m_stages.model->idToToken(t.id);
            out.tokens.push_back({t.id, piece ? *piece : std::string(), b, e, false});
        }
    }
}

namespace {

// tokenizers' decoders::wordpiece::cleanup.
std::string cleanUpSpaces(std::string s)
{
    static const std::pair<std::string_view, std::string_view> rules[]
        = {{" .", "."},   {" ?", "?"},     {" !", "!"},    {" ,", ","},
           {" ' ", "'"},  {" n't", "n't"}, {" 'm", "'m"},  {" do not", " don't"},
           {" 's", "'s"}, {" 've", "'ve"}, {" 're", "'re"}};
    for (const auto &[from, to] : rules) {
        std::string out;
        std::size_t at = 0;
        for (std::size_t hit; (hit = s.find(from, at)) != std::string::npos;
             at = hit + from.size()) {
            out.append(s, at, hit - at);
            out += to;
        }
        out.append(s, at, std::string::npos);
        s = std::move(out);
    }
    return s;
}

} // namespace

std::string Tokenizer::decode(std::span<const TokenId> ids, bool skipSpecialTokens) const
{
    const ByteLevelAlphabet &alphabet = ByteLevelAlphabet::instance();
    std::string out;
    if (const auto &wp = m_stages.wordPieceDecoding) {
        bool first = true;
        for (TokenId id : ids) {
            const AddedToken *added = m_stages.added.byId(id);
            if (added && skipSpecialTokens && added->special) {
                continue;
            }
            const std::string *piece = added ? &added->content : m_stages.model->idToToken(id);
            if (!piece) {
                throw std::out_of_range("decode: id " + std::to_string(id)
                                        + " is not in the vocabulary");
            }
            if (!first && !wp->prefix.empty() && piece->starts_with(wp->prefix)) {
                out.append(*piece, wp->prefix.size(), std::string::npos);
            } else {
                if (!first) {
                    out += ' ';
                }
                out += *piece;
            }
            first = false;
        }
        return wp->cleanup ? cleanUpSpaces(std::move(out)) : out;
    }
    if (m_stages.model->decode({})) {
        // The model decodes runs of its own ids; added tokens go between them.
        std::vector<TokenId> run;
        auto flush = [&] {
            if (!run.empty()) {
                out += *m_stages.model->decode(run);
                run.clear();
            }
        };
        for (TokenId id : ids) {
            if (const AddedToken *added = m_stages.added.byId(id)) {
                flush();
                if (!(skipSpecialTokens && added->special)) {
                    out += added->content;
                }
                continue;
            }
            run.push_back(id);
        }
        flush();
        return out;
    }
    for (TokenId id : ids) {
        if (const AddedToken *added = m_stages.added.byId(id)) {
            if (!(skipSpecialTokens && added->special)) {
                out += added->content;
            }
            continue;
        }
        const std::string *piece = m_stages.model->idToToken(id);
        if (!piece) {
            throw std::out_of_range("decode: id " + std::to_string(id)
                                    + " is not in the vocabulary");
        }
        if (m_stages.model->byteFallback() && piece->size() == 6 && piece->compare(0, 3, "<0x") == 0
            && piece->back() == '>' && std::isxdigit(static_cast<unsigned char>((*piece)[3]))
            && std::isxdigit(static_cast<unsigned char>((*piece)[4]))) {
            out.push_back(static_cast<char>(std::stoi(piece->substr(3, 2), nullptr, 16)));
            continue;
        }
        if (m_byteLevel) {
            if (auto bytes = alphabet.decode(*piece)) {
                out += *bytes;
                continue;
            }
        }
        if (const auto &ms = m_stages.metaspaceDecoding; ms && !ms->replacement.empty()) {
            std::size_t at = 0;
            for (std::size_t hit; (hit = piece->find(ms->replacement, at)) != std::string::npos;
                 at = hit + ms->replacement.size()) {
                out.append(*piece, at, hit - at);
                out += ' ';
            }
            out.append(*piece, at, std::string::npos);
            continue;
        }
        out += *piece;
    }
    if (const auto &ms = m_stages.metaspaceDecoding;
        ms && ms->stripLeadingSpace && !out.empty() && out.front() == ' ') {
        out.erase(0, 1);
    }
    return out;
}

std::optional<TokenId> Tokenizer::tokenToId(std::string_view token) const
{
    return m_stages.model->tokenToId(token);
}

std::string Tokenizer::idToToken(TokenId id) const
{
    const std::string *piece = m_stages.model->idToToken(id);
    if (!piece) {
        throw std::out_of_range("id " + std::to_string(id) + " is not in the vocabulary");
    }
    return *piece;
}

std::size_t Tokenizer::vocabSize() const
{
    return m_stages.model->vocabSize();
}

} // namespace attn::text
