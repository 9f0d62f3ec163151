#pragma once
// Labels for tokens: the piece of the user's text each token covers, readable on an axis.

#include "core/text/encoding.h"

#include <string>
#include <string_view>
#include <vector>

namespace attn::text {

/// The label of `token` in `text` (the text given to Tokenizer::encode): the bytes of its span
/// [begin, end), UTF-8, with
///  - a space shown as "␣" (U+2423), a tab as "⇥" (U+21E5), a line feed as "↵" (U+21B5), a
///    carriage return as "␍" (U+240D), so leading spaces and whitespace tokens stay visible;
///  - each byte that is not part of a complete, well-formed UTF-8 character in the span (a
///    character split across tokens by a byte-level BPE, or invalid input) shown as "<0xNN>",
///    as SentencePiece names its byte-fallback pieces;
///  - a token with an empty span (a special token added by the post-processor, e.g. a BOS)
///    shown as its vocabulary piece.
/// Spans past the end of `text` are clamped to it.
std::string tokenLabel(std::string_view text, const Token &token);

/// tokenLabel() of every token of `encoding`, in order.
std::vector<std::string> tokenLabels(std::string_view text, const Encoding &encoding);

} // namespace attn::text
