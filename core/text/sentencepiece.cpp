#include "core/text/sentencepiece.h"

#include <sentencepiece_processor.h>

#include <stdexcept>

namespace attn::text {

SentencePieceModel::SentencePieceModel(std::string_view serializedProto)
    : m_processor(std::make_unique<sentencepiece::SentencePieceProcessor>())
{
    const auto status = m_processor->LoadFromSerializedProto(serializedProto);
    if (!status.ok()) {
        throw std::invalid_argument("SentencePiece cannot load the model: "
                                    + std::string(status.message()));
    }
}

SentencePieceModel::~SentencePieceModel() = default;

void SentencePieceModel::tokenize(std::string_view text, std::vector<ModelToken> &out) const
{
    sentencepiece::ImmutableSentencePieceText spt;
    const auto status = m_processor->Encode(text, spt.mutable_proto());
    if (!status.ok()) {
        throw std::runtime_error("SentencePiece cannot encode: " + std::string(status.message()));
    }
    for (std::size_t k = 0; k < spt.pieces_size(); ++k) {
        const auto piece = spt.pieces(static_cast<int>(k));
        out.push_back({piece.id(), piece.begin(), piece.end()});
    }
}

std::optional<TokenId> SentencePieceModel::tokenToId(std::string_view token) const
{
    for (const auto &[t, id] : m_extra) {
        if (t == token) {
            return id;
        }
    }
    const int id = m_processor->PieceToId(token);
    // PieceToId answers unk_id for unknown pieces.
    if (id == m_processor->unk_id() && token != m_processor->IdToPiece(id)) {
        return std::nullopt;
    }
    return static_cast<TokenId>(id);
}

const std::string *SentencePieceModel::idToToken(TokenId id) const
{
    if (id < static_cast<TokenId>(m_processor->GetPieceSize())) {
        return &m_processor->IdToPiece(static_cast<int>(id));
    }
    for (const auto &[t, extra] : m_extra) {
        if (extra == id) {
            return &t;
        }
    }
    return nullptr;
}

std::size_t SentencePieceModel::vocabSize() const
{
    return static_cast<std::size_t>(m_processor->GetPieceSize()) + m_extra.size();
}

void SentencePieceModel::addToken(const std::string &token, TokenId id)
{
    if (id >= static_cast<TokenId>(m_processor->GetPieceSize()) && !idToToken(id)) {
        m_extra.emplace_back(token, id);
    }
}

bool SentencePieceModel::isControl(TokenId id) const
{
    return id < static_cast<TokenId>(m_processor->GetPieceSize())
        && m_processor->IsControl(static_cast<int>(id));
}

std::optional<std::string> SentencePieceModel::decode(const std::vector<TokenId> &ids) const
{
    std::vector<int> pieces;
    pieces.reserve(ids.size());
    for (TokenId id : ids) {
        if (id >= static_cast<TokenId>(m_processor->GetPieceSize())) {
            throw std::out_of_range("decode: id " + std::to_string(id)
                                    + " is not in the vocabulary");
        }
        pieces.push_back(static_cast<int>(id));
    }
    std::string text;
    const auto status = m_processor->Decode(pieces, &text);
    if (!status.ok()) {
        throw std::out_of_range("SentencePiece cannot decode: " + std::string(status.message()));
    }
    return text;
}

} // namespace attn::text
