#pragma once
// Labels that show a token as the reader typed it: the bytes of the text the token covers, with
// white space made visible and the bytes of a character split between tokens (byte-level BPE
// cuts multi-byte UTF-8) marked, for heatmap axes and the window's token strip.

#include "core/text/encoding.h"

#include <string>
#include <string_view>
#include <vector>

namespace attn::text {

class Tokenizer;

/// `bytes` as a label (UTF-8): a space as "␣" (U+2423), a line feed as "↵", a carriage return as
/// "␍", a tab as "⇥", other control characters as "\xNN"; complete UTF-8 characters as they are,
/// and every byte that is not part of a complete character (a split one) as "‹NN›" in hex
/// ("‹E2›‹80›"). An empty `bytes` gives "∅".
std::string pieceLabel(std::string_view bytes);

/// `bytes` in hex, separated by spaces: "20 63 61 74".
std::string hexBytes(std::string_view bytes);

/// The bytes token `token` stands for: for a byte-level tokenizer what its id decodes to (part
/// of a character included); otherwise its span of `text` when it has one (end > begin), else
/// its decoded id (special tokens the post-processor added, e.g. "<s>"). Throws
/// std::out_of_range for an id the tokenizer does not know.
std::string tokenBytes(const Tokenizer &tokenizer, const Token &token, std::string_view text);

/// pieceLabel(tokenBytes(…)) of every token of `encoding` (made from `text`).
std::vector<std::string> tokenLabels(const Tokenizer &tokenizer, const Encoding &encoding,
                                     std::string_view text);

} // namespace attn::text
