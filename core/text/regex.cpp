#include "core/text/regex.h"

#define PCRE2_CODE_UNIT_WIDTH 8
#include <pcre2.h>

#include <stdexcept>

namespace attn::text {

namespace {

constexpr std::string_view kEcmaSpace = "\\t\\n\\x0B\\f\\r\\x20\\x{A0}\\x{1680}\\x{2000}-\\x{200A}"
                                        "\\x{2028}\\x{2029}\\x{202F}\\x{205F}\\x{3000}\\x{FEFF}";

std::string pcre2Message(int code)
{
    PCRE2_UCHAR buffer[256];
    pcre2_get_error_message(code, buffer, sizeof buffer);
    return reinterpret_cast<const char *>(buffer);
}

// One JIT stack per thread (32 KiB growing to 16 MiB, for long backtracking matches), shared by
// every pattern: creating one per call would map 16 MiB each time.
pcre2_match_context *jitContext()
{
    struct Holder
    {
        pcre2_match_context *context = pcre2_match_context_create(nullptr);
        pcre2_jit_stack *stack = pcre2_jit_stack_create(32 * 1024, 16 * 1024 * 1024, nullptr);
        Holder()
        {
            if (context && stack) {
                pcre2_jit_stack_assign(context, nullptr, stack);
            }
        }
        ~Holder()
        {
            pcre2_jit_stack_free(stack);
            pcre2_match_context_free(context);
        }
    };
    thread_local Holder holder;
    return holder.context;
}

} // namespace

std::string withEcmaWhitespace(std::string_view pattern)
{
    std::string out;
    out.reserve(pattern.size() + 64);
    bool inClass = false;
    for (std::size_t i = 0; i < pattern.size(); ++i) {
        const char c = pattern[i];
        if (c == '\\' && i + 1 < pattern.size()) {
            const char d = pattern[i + 1];
            if (d == 's') {
                out += inClass ? std::string(kEcmaSpace) : "[" + std::string(kEcmaSpace) + "]";
                ++i;
                continue;
            }
            if (d == 'S') {
                if (inClass) {
                    // A negated set cannot be spliced into a class; PCRE2 has no class
                    // subtraction. Keep PCRE2's \S there (no reference pattern uses it).
                    out += "\\S";
                } else {
                    out += "[^" + std::string(kEcmaSpace) + "]";
                }
                ++i;
                continue;
            }
            out += c;
            out += d;
            ++i;
            continue;
        }
        if (c == '[' && !inClass) {
            inClass = true;
            out += c;
            // A ']' right after '[' or '[^' is a literal.
            if (i + 1 < pattern.size() && pattern[i + 1] == '^') {
                out += '^';
                ++i;
            }
            if (i + 1 < pattern.size() && pattern[i + 1] == ']') {
                out += ']';
                ++i;
            }
            continue;
        }
        if (c == ']' && inClass) {
            inClass = false;
        }
        out += c;
    }
    return out;
}

struct Regex::Impl
{
    pcre2_code *code = nullptr;
    bool jit = false;
};

Regex::Regex(std::string_view pattern)
    : m_pattern(pattern)
    , m_impl(std::make_unique<Impl>())
{
    const std::string rewritten = withEcmaWhitespace(pattern);
    int error = 0;
    PCRE2_SIZE offset = 0;
    m_impl->code = pcre2_compile(reinterpret_cast<PCRE2_SPTR>(rewritten.data()), rewritten.size(),
                                 PCRE2_UTF | PCRE2_UCP, &error, &offset, nullptr);
    if (!m_impl->code) {
        throw std::invalid_argument("PCRE2 rejects the pattern at offset " + std::to_string(offset)
                                    + ": " + pcre2Message(error));
    }
    m_impl->jit = pcre2_jit_compile(m_impl->code, PCRE2_JIT_COMPLETE) == 0;
}

Regex::~Regex()
{
    if (m_impl && m_impl->code) {
        pcre2_code_free(m_impl->code);
    }
}

std::vector<std::pair<std::size_t, std::size_t>>
Regex::findAll(std::string_view text, std::size_t from, std::size_t to) const
{
    std::vector<std::pair<std::size_t, std::size_t>> out;
    // The subject is text[from, to): lookaround sees the split's ends as the ends of the text,
    // as when Hugging Face and transformers.js run the pattern on each split separately.
    const auto *subject = reinterpret_cast<PCRE2_SPTR>(text.data() + from);
    const std::size_t length = to - from;
    std::unique_ptr<pcre2_match_data, decltype(&pcre2_match_data_free)> data(
        pcre2_match_data_create_from_pattern(m_impl->code, nullptr), &pcre2_match_data_free);
    if (!data) {
        throw std::bad_alloc();
    }
    pcre2_match_context *context = m_impl->jit ? jitContext() : nullptr;
    std::size_t at = 0;
    while (at <= length) {
        const int rc = pcre2_match(m_impl->code, subject, length, at, PCRE2_NO_UTF_CHECK,
                                   data.get(), context);
        if (rc == PCRE2_ERROR_NOMATCH) {
            break;
        }
        if (rc < 0) {
            throw std::runtime_error("PCRE2 match failed for pattern " + m_pattern + ": "
                                     + pcre2Message(rc));
        }
        const PCRE2_SIZE *ov = pcre2_get_ovector_pointer(data.get());
        const std::size_t b = ov[0], e = ov[1];
        if (e < b) { // \K in a lookahead can do this; treat as no match.
            break;
        }
        if (e > b) {
            out.emplace_back(from + b, from + e);
            at = e;
        } else {
            // Empty match: skip it and move one character on.
            if (b >= length) {
                break;
            }
            at = b + 1;
            while (at < length && (static_cast<unsigned char>(text[from + at]) & 0xC0) == 0x80) {
                ++at;
            }
        }
    }
    return out;
}

} // namespace attn::text
