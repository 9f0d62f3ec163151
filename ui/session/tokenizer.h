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
/// - a backslash makes the character after it part of the word, whatever it is, so a token
///   with spaces or punctuation can be typed: `New\ York` → {"New York"}, `don\'t` → {"don't"},
///   `\\` → {"\"}; a backslash at the very end is a token of its own.
/// Example: "The cat, sat." → {"The", "cat", ",", "sat", "."}. Empty or blank text gives {}.
QStringList splitTokens(const QString &text);

/// The text splitTokens splits back into exactly `tokens`: the tokens separated by spaces, a
/// backslash in front of each character that would split one (a space, punctuation, a
/// backslash): {"New York", "."} → `New\ York .`. Tokens that split into themselves are
/// written as they are. An empty token has no text: it is left out.
QString joinTokens(const QStringList &tokens);

/// Labels as the Tensors panel takes them (a file's own token labels, punctuation and all):
/// separated by white space, a backslash making the next character part of the label, so a
/// label with a space can be typed: `New\ York is .` → {"New York", "is", "."}; a backslash
/// at the very end is kept. Blank text gives {}.
QStringList splitLabels(const QString &text);

/// The text splitLabels splits back into exactly `labels`: separated by spaces, a backslash in
/// front of each white-space character and backslash. An empty label has no text: left out.
QString joinLabels(const QStringList &labels);

} // namespace attn
