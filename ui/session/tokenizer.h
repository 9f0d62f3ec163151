#pragma once
// Splitting a typed sentence into the tokens that label the heatmap axes.
// Not a subword tokenizer (no BPE/WordPiece): words are runs of letters, digits and combining
// marks; every other visible character (punctuation, symbols, emoji) is a token by itself;
// whitespace separates tokens and is dropped.

#include <QString>
#include <QStringList>

namespace attn {

/// Splits `text` into tokens, by Unicode code point (surrogate pairs stay together):
/// - whitespace (QChar::isSpace: spaces, tabs, new lines, no-break spaces) separates tokens,
///   and so do control and invisible format characters (zero-width space/joiner, BOM);
/// - letters, digits and combining marks (categories L*, N*, M*) form words, so "naïve", "Ελλάδα"
///   and "東京" are one token each (scripts without spaces stay one run);
/// - every other character (punctuation P*, symbols S*, other) is a token of its own:
///   "don't" → "don", "'", "t"; "U.S." → "U", ".", "S", "."; "a--b" → "a", "-", "-", "b".
/// - special tokens stay whole: "<" or "[" followed by 1–24 letters, digits, "/", "_", "|" or
///   "-" and the matching ">" or "]" — "<s>", "</s>", "<|endoftext|>", "[CLS]", "[SEP]";
///   "<" or "[" not closed that way are punctuation as usual ("a < b" → "a", "<", "b").
/// Example: "The cat, sat." → {"The", "cat", ",", "sat", "."}. Empty or blank text gives {}.
QStringList splitTokens(const QString &text);

} // namespace attn
