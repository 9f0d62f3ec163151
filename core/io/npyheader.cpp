// The .npy header: the preamble (magic, version, header length), the header text parsed by a
// small parser for Python literals (strings, integers, True/False/None, tuples, lists, dicts;
// anything else is refused, nothing is evaluated), and its dtype, order and shape, every size
// checked against the bytes of the file.

#include "core/io/npy.h"
#include "core/io/npyformat.h"

#include <algorithm>
#include <charconv>
#include <cmath>
#include <cstring>
#include <limits>

namespace attn {

using namespace npyformat;

namespace {

std::uint16_t loadLe16(const std::uint8_t *p)
{
    return std::uint16_t(p[0] | (p[1] << 8));
}

std::uint32_t loadLe32(const std::uint8_t *p)
{
    return std::uint32_t(p[0]) | (std::uint32_t(p[1]) << 8) | (std::uint32_t(p[2]) << 16)
        | (std::uint32_t(p[3]) << 24);
}

// ---------------------------------------------------------------------------------------------
// Python literal parser (the subset ast.literal_eval accepts that .npy headers use)

struct PyValue
{
    enum class Kind { Str, Int, Bool, None, Tuple, List, Dict };
    Kind kind = Kind::None;
    std::string str; ///< Str
    std::int64_t integer = 0; ///< Int
    bool boolean = false; ///< Bool
    std::vector<PyValue> items; ///< Tuple/List elements; Dict: key, value, key, value, ...
};

class LiteralParser
{
public:
    LiteralParser(std::string_view text, const std::string &name, bool allowLongSuffix)
        : m_text(text)
        , m_name(name)
        , m_allowLongSuffix(allowLongSuffix)
    { }

    PyValue parseAll()
    {
        skipSpace();
        PyValue v = parseValue(0);
        skipSpace();
        if (m_pos != m_text.size())
            error("unexpected " + quoted(m_text.substr(m_pos)) + " after the header dictionary");
        return v;
    }

private:
    static constexpr int kMaxDepth = 16;

    [[noreturn]] void error(const std::string &what) const
    {
        fail(m_name, "bad .npy header: " + what);
    }

    bool atEnd() const { return m_pos >= m_text.size(); }
    char peek() const { return m_text[m_pos]; }

    void skipSpace()
    {
        while (!atEnd()) {
            const char c = peek();
            if (c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\f' || c == '\v')
                ++m_pos;
            else
                break;
        }
    }

    void expectMore(const char *context) const
    {
        if (atEnd())
            error(std::string("header ends inside ") + context);
    }

    static bool isIdentStart(char c)
    {
        return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '_';
    }
    static bool isIdentChar(char c) { return isIdentStart(c) || (c >= '0' && c <= '9'); }

    PyValue parseValue(int depth)
    {
        if (depth > kMaxDepth)
            error("nesting deeper than " + std::to_string(kMaxDepth) + " levels");
        expectMore("a value");
        const char c = peek();
        if (c == '\'' || c == '"')
            return parseString();
        if (c == '{')
            return parseDict(depth);
        if (c == '(')
            return parseTuple(depth);
        if (c == '[')
            return parseList(depth);
        if (c == '-' || c == '+' || (c >= '0' && c <= '9'))
            return parseInt();
        if (isIdentStart(c)) {
            const std::size_t start = m_pos;
            while (!atEnd() && isIdentChar(peek()))
                ++m_pos;
            const std::string_view word = m_text.substr(start, m_pos - start);
            PyValue v;
            if (word == "True" || word == "False") {
                v.kind = PyValue::Kind::Bool;
                v.boolean = word == "True";
                return v;
            }
            if (word == "None")
                return v;
            error("non-literal token " + quoted(word) + " (only literals are accepted)");
        }
        error("unexpected character " + quoted(m_text.substr(m_pos, 1)));
    }

    PyValue parseString()
    {
        const char quote = peek();
        ++m_pos;
        PyValue v;
        v.kind = PyValue::Kind::Str;
        while (true) {
            expectMore("a string");
            char c = peek();
            ++m_pos;
            if (c == quote)
                return v;
            if (c == '\n')
                error("line break inside a string");
            if (c == '\\') {
                expectMore("a string");
                c = peek();
                ++m_pos;
                switch (c) {
                case 'n':
                    v.str += '\n';
                    break;
                case 't':
                    v.str += '\t';
                    break;
                case '\\':
                case '\'':
                case '"':
                    v.str += c;
                    break;
                default:
                    v.str += '\\';
                    v.str += c;
                }
                continue;
            }
            v.str += c;
        }
    }

    PyValue parseInt()
    {
        const std::size_t start = m_pos;
        bool negative = false;
        if (peek() == '-' || peek() == '+') {
            negative = peek() == '-';
            ++m_pos;
            skipSpace();
        }
        if (atEnd() || !(peek() >= '0' && peek() <= '9'))
            error("sign without a number");
        std::uint64_t magnitude = 0;
        const std::uint64_t limit = std::uint64_t(std::numeric_limits<std::int64_t>::max()) + 1;
        while (!atEnd() && peek() >= '0' && peek() <= '9') {
            const unsigned digit = unsigned(peek() - '0');
            if (magnitude > (limit - digit) / 10)
                error("integer " + quoted(m_text.substr(start)) + " does not fit in 64 bits");
            magnitude = magnitude * 10 + digit;
            ++m_pos;
        }
        // Python 2 era writers added an 'L' suffix; numpy filters it for versions 1.0 and 2.0.
        if (m_allowLongSuffix && !atEnd() && (peek() == 'L' || peek() == 'l'))
            ++m_pos;
        if (!atEnd() && (isIdentChar(peek()) || peek() == '.'))
            error("malformed number " + quoted(m_text.substr(start, m_pos - start + 1)));
        if (!negative && magnitude == limit)
            error("integer " + quoted(m_text.substr(start)) + " does not fit in 64 bits");
        PyValue v;
        v.kind = PyValue::Kind::Int;
        v.integer = negative ? std::int64_t(0 - magnitude) : std::int64_t(magnitude);
        return v;
    }

    // Comma-separated values up to `close`, trailing comma allowed. Returns whether any comma
    // was seen (to tell "(3)" from "(3,)").
    bool parseSequence(char close, int depth, std::vector<PyValue> &out, const char *context)
    {
        ++m_pos; // opening bracket
        bool sawComma = false;
        while (true) {
            skipSpace();
            expectMore(context);
            if (peek() == close) {
                ++m_pos;
                return sawComma;
            }
            out.push_back(parseValue(depth + 1));
            skipSpace();
            expectMore(context);
            if (peek() == ',') {
                ++m_pos;
                sawComma = true;
            } else if (peek() != close) {
                error(std::string("expected ',' or '") + close + "' in " + context + ", found "
                      + quoted(m_text.substr(m_pos, 1)));
            }
        }
    }

    PyValue parseTuple(int depth)
    {
        PyValue v;
        v.kind = PyValue::Kind::Tuple;
        const bool sawComma = parseSequence(')', depth, v.items, "a tuple");
        if (v.items.size() == 1 && !sawComma)
            return std::move(v.items.front()); // "(3)" is just 3 in Python
        return v;
    }

    PyValue parseList(int depth)
    {
        PyValue v;
        v.kind = PyValue::Kind::List;
        parseSequence(']', depth, v.items, "a list");
        return v;
    }

    PyValue parseDict(int depth)
    {
        PyValue v;
        v.kind = PyValue::Kind::Dict;
        ++m_pos; // '{'
        while (true) {
            skipSpace();
            expectMore("the dictionary");
            if (peek() == '}') {
                ++m_pos;
                return v;
            }
            v.items.push_back(parseValue(depth + 1));
            skipSpace();
            expectMore("the dictionary");
            if (peek() != ':')
                error("expected ':' after a dictionary key, found "
                      + quoted(m_text.substr(m_pos, 1)));
            ++m_pos;
            skipSpace();
            v.items.push_back(parseValue(depth + 1));
            skipSpace();
            expectMore("the dictionary");
            if (peek() == ',')
                ++m_pos;
            else if (peek() != '}')
                error("expected ',' or '}' in the dictionary, found "
                      + quoted(m_text.substr(m_pos, 1)));
        }
    }

    std::string_view m_text;
    const std::string &m_name;
    bool m_allowLongSuffix;
    std::size_t m_pos = 0;
};

void parseDescr(const std::string &descr, HeaderInfo &info, const std::string &name,
                bool allowUnicode = false)
{
    std::string_view d = descr;
    char order = '=';
    if (!d.empty() && (d[0] == '<' || d[0] == '>' || d[0] == '|' || d[0] == '='))
        order = d[0], d.remove_prefix(1);
    const std::string shown = quoted(descr);
    if (d.empty())
        fail(name, "empty dtype descriptor " + shown);
    const char kind = d[0];
    if (kind == 'O')
        fail(name,
             "object arrays (dtype " + shown
                 + ") are refused: they hold pickled Python objects, which are never interpreted");
    if (kind == 'U' && allowUnicode) {
        // NumPy's str arrays: '<U5' is 5 UTF-32 code units per item, little-endian ('>' big).
        const std::string_view digits = d.substr(1);
        int chars = 0;
        const auto [end, ec] = std::from_chars(digits.data(), digits.data() + digits.size(), chars);
        if (digits.empty() || ec != std::errc() || end != digits.data() + digits.size() || chars < 1
            || chars > kMaxUnicodeChars)
            fail(name,
                 "string dtype " + shown + ": expected '<U' and 1 to "
                     + std::to_string(kMaxUnicodeChars) + " characters per item");
        if (order == '|')
            fail(name, "dtype " + shown + " has no byte order ('|') but needs one");
        const bool fileBig
            = order == '>' || (order == '=' && std::endian::native == std::endian::big);
        info.unicodeChars = chars;
        info.itemSize = 4 * chars;
        info.swap = fileBig != (std::endian::native == std::endian::big);
        return;
    }
    if (kind == 'U' || kind == 'S' || kind == 'a')
        fail(name, "string dtype " + shown + " is not supported (numeric arrays only)");
    if (kind == 'V')
        fail(name, "structured/void dtype " + shown + " is not supported");

    struct Known
    {
        std::string_view code;
        NpyType type;
        int size;
    };
    static constexpr Known known[] = {
        {"f4", NpyType::Float32, 4}, {"f8", NpyType::Float64, 8}, {"b1", NpyType::Bool, 1},
        {"i4", NpyType::Int32, 4},   {"i8", NpyType::Int64, 8},   {"u1", NpyType::UInt8, 1},
    };
    for (const Known &k : known) {
        if (d != k.code)
            continue;
        if (k.size == 1) {
            // byte order is irrelevant for single bytes: '|b1', '<b1', '=u1' all mean the same
        } else if (order == '|') {
            fail(name, "dtype " + shown + " has no byte order ('|') but needs one");
        }
        const bool fileBig
            = order == '>' || (order == '=' && std::endian::native == std::endian::big);
        info.type = k.type;
        info.itemSize = k.size;
        info.swap = k.size > 1 && (fileBig != (std::endian::native == std::endian::big));
        return;
    }
    fail(name,
         "unsupported dtype " + shown
             + " (supported: <f4 <f8 >f4 >f8 =f4 =f8 |b1 <i4 <i8 >i4 >i8 |u1)");
}

} // namespace

namespace npyformat {

/// `data` holds the first min(totalSize, 12) bytes (or more) of a file of `totalSize` bytes.
Preamble parsePreamble(const std::uint8_t *data, std::size_t avail, std::uint64_t totalSize,
                       const std::string &name)
{
    if (totalSize < 10 || avail < 10) {
        if (totalSize >= 6 && std::memcmp(data, kMagic, 6) == 0)
            fail(name,
                 "truncated .npy file: " + std::to_string(totalSize)
                     + " bytes end inside the preamble");
        fail(name, "not a .npy file (only " + std::to_string(totalSize) + " bytes, no magic)");
    }
    if (std::memcmp(data, kMagic, 6) != 0)
        fail(name, "not a .npy file (bad magic: the file does not start with \"\\x93NUMPY\")");
    Preamble p;
    p.major = data[6];
    p.minor = data[7];
    if (p.minor != 0 || p.major < 1 || p.major > 3)
        fail(name,
             "unsupported .npy format version " + std::to_string(p.major) + "."
                 + std::to_string(p.minor) + " (supported: 1.0, 2.0, 3.0)");
    if (p.major == 1) {
        p.prefixBytes = 10;
        p.headerBytes = loadLe16(data + 8);
    } else {
        if (totalSize < 12 || avail < 12)
            fail(name,
                 "truncated .npy file: " + std::to_string(totalSize)
                     + " bytes end inside the preamble");
        p.prefixBytes = 12;
        p.headerBytes = loadLe32(data + 8);
    }
    if (p.headerBytes > totalSize - p.prefixBytes)
        fail(name,
             "header length " + std::to_string(p.headerBytes) + " runs past the end of the file ("
                 + std::to_string(totalSize) + " bytes)");
    return p;
}

/// Element count of `shape` for elements of `itemSize` bytes, with NumPy's rule for what an
/// array may be (PyArray_NewFromDescr): itemSize times the product of the non-zero axes must fit
/// in a signed 64-bit size, whether or not an axis is zero (so (2^32, 2^32, 0) is refused, as
/// NumPy refuses it). nullopt when it does not; negative axes are the caller's to refuse first.
std::optional<std::uint64_t> checkedElementCount(const std::vector<std::int64_t> &shape,
                                                 int itemSize)
{
    const std::uint64_t maxBytes = std::uint64_t(std::numeric_limits<std::int64_t>::max());
    std::uint64_t bytes = std::uint64_t(itemSize);
    bool empty = false;
    for (std::int64_t dim : shape) {
        if (dim == 0) {
            empty = true;
            continue;
        }
        if (bytes > maxBytes / std::uint64_t(dim))
            return std::nullopt;
        bytes *= std::uint64_t(dim);
    }
    return empty ? 0 : bytes / std::uint64_t(itemSize);
}

std::string tooBigMessage(const std::string &shapeText, int itemSize)
{
    return "shape " + shapeText + " has more elements than fit in int64 with "
        + std::to_string(itemSize)
        + "-byte items: the item size times the product of its non-zero axes exceeds 2^63 - 1 "
          "bytes (NumPy refuses such an array too, even when an axis is 0)";
}

/// Parses the header text and checks every size against the file of `totalSize` bytes.
HeaderInfo parseHeader(const Preamble &p, std::string_view text, std::uint64_t totalSize,
                       const std::string &name, bool allowUnicode)
{
    LiteralParser parser(text, name, p.major <= 2);
    const PyValue dict = parser.parseAll();
    if (dict.kind != PyValue::Kind::Dict)
        fail(name, "bad .npy header: not a dictionary");

    const PyValue *descr = nullptr, *fortran = nullptr, *shape = nullptr;
    for (std::size_t i = 0; i + 1 < dict.items.size(); i += 2) {
        const PyValue &key = dict.items[i];
        if (key.kind != PyValue::Kind::Str)
            fail(name, "bad .npy header: a key is not a string");
        const PyValue **slot = key.str == "descr" ? &descr
            : key.str == "fortran_order"          ? &fortran
            : key.str == "shape"                  ? &shape
                                                  : nullptr;
        if (!slot)
            fail(name,
                 "bad .npy header: unexpected key " + quoted(key.str)
                     + " (expected 'descr', 'fortran_order', 'shape')");
        if (*slot)
            fail(name, "bad .npy header: duplicate key " + quoted(key.str));
        *slot = &dict.items[i + 1];
    }
    if (!descr || !fortran || !shape)
        fail(name,
             std::string("bad .npy header: missing key '")
                 + (!descr         ? "descr"
                        : !fortran ? "fortran_order"
                                   : "shape")
                 + "'");

    HeaderInfo info;
    if (descr->kind == PyValue::Kind::List)
        fail(name, "structured dtypes (a list of fields as 'descr') are not supported");
    if (descr->kind != PyValue::Kind::Str)
        fail(name, "bad .npy header: 'descr' is not a dtype string");
    parseDescr(descr->str, info, name, allowUnicode);

    if (fortran->kind != PyValue::Kind::Bool)
        fail(name, "bad .npy header: 'fortran_order' is not True or False");
    info.fortran = fortran->boolean;

    if (shape->kind != PyValue::Kind::Tuple)
        fail(name, "bad .npy header: 'shape' is not a tuple");
    for (const PyValue &dim : shape->items) {
        if (dim.kind != PyValue::Kind::Int)
            fail(name, "bad .npy header: 'shape' holds a non-integer");
        if (dim.integer < 0)
            fail(name,
                 "bad .npy header: negative dimension " + std::to_string(dim.integer)
                     + " in shape");
        info.shape.push_back(dim.integer);
    }
    const std::string shapeText = shapeToString(info.shape);
    const auto count = checkedElementCount(info.shape, info.itemSize);
    if (!count)
        fail(name, tooBigMessage(shapeText, info.itemSize));
    info.count = *count;
    if (info.count > kMaxNpyBytes / sizeof(double))
        fail(name,
             "shape " + shapeText + " holds " + std::to_string(info.count)
                 + " elements: held as float64 that is "
                 + std::to_string(info.count * sizeof(double)) + " bytes, over the "
                 + std::to_string(kMaxNpyBytes) + " bytes an array may take");
    info.dataBytes = info.count * std::uint64_t(info.itemSize);
    info.dataOffset = p.prefixBytes + p.headerBytes;
    if (info.dataBytes > totalSize - info.dataOffset)
        fail(name,
             "truncated data: shape " + shapeText + " of " + quoted(descr->str) + " needs "
                 + std::to_string(info.dataBytes) + " bytes, the file holds "
                 + std::to_string(totalSize - info.dataOffset));
    return info;
}

} // namespace npyformat

} // namespace attn
