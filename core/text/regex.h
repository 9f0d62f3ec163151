#pragma once
// A compiled PCRE2 pattern (UTF + UCP, JIT when available) for the pre-tokenizers' splits:
// the role Oniguruma plays in Hugging Face tokenizers (tokenizers/src/utils/onig.rs) and
// RegExp(…, "gu") in transformers.js.

#include <cstddef>
#include <memory>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace attn::text {

class Regex
{
public:
    /// Compiles `pattern` (UTF-8). `\s` and `\S` (also inside classes) mean ECMAScript's
    /// WhiteSpace + LineTerminator set (TAB LF VT FF CR SPACE U+00A0 U+1680 U+2000–U+200A
    /// U+2028 U+2029 U+202F U+205F U+3000 U+FEFF), as in the JavaScript references
    /// (gpt-3-encoder, transformers.js); PCRE2's own \s would add U+0085 and U+180E and drop
    /// U+FEFF. Throws std::invalid_argument with PCRE2's message and offset when PCRE2 rejects
    /// the pattern.
    explicit Regex(std::string_view pattern);
    ~Regex();
    Regex(const Regex &) = delete;
    Regex &operator=(const Regex &) = delete;

    /// All non-overlapping matches in `text` (valid UTF-8) from left to right, as byte ranges
    /// [begin, end), restricted to the subject range [from, to). An empty match advances one
    /// character. Throws std::runtime_error when PCRE2 gives up (match or depth limit).
    std::vector<std::pair<std::size_t, std::size_t>>
    findAll(std::string_view text, std::size_t from, std::size_t to) const;

    const std::string &pattern() const { return m_pattern; }

private:
    struct Impl;
    std::string m_pattern;
    std::unique_ptr<Impl> m_impl;
};

/// The pattern with every `\s` / `\S` replaced by the explicit ECMAScript set (see Regex).
std::string withEcmaWhitespace(std::string_view pattern);

} // namespace attn::text
