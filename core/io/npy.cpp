// NumPy .npy/.npz reading and writing. Format: numpy/lib/format.py (NumPy 1.24), NEP 1.
//
// .npy layout: "\x93NUMPY", major, minor, header length (uint16 LE for 1.0, uint32 LE for 2.0
// and 3.0), header (a Python dict literal, latin-1 for 1.x/2.x, UTF-8 for 3.0), then the raw
// data. The header is parsed by a small parser for Python literals (strings, integers,
// True/False/None, tuples, lists, dicts); anything else is refused, nothing is evaluated.
//
// Every size taken from a file is checked against the bytes actually present before it is used,
// and element counts are checked for overflow and against kMaxNpyBytes before any allocation.

#include "core/io/npy.h"

#include "core/base/messages.h"

#include <zip.h>

#include <algorithm>
#include <bit>
#include <cerrno>
#include <charconv>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <fcntl.h>
#include <limits>
#include <optional>
#include <random>
#include <string_view>
#include <sys/stat.h>
#include <unistd.h>
#include <unordered_map>
#include <unordered_set>

namespace attn {

namespace {

// ---------------------------------------------------------------------------------------------
// Small helpers

[[noreturn]] void fail(const std::string &name, const std::string &problem)
{
    throw NpyError(name + ": " + problem);
}

std::string shapeToString(const std::vector<std::int64_t> &shape)
{
    // NumPy's repr of a tuple: "()", "(3,)", "(2, 3)".
    std::string s = "(";
    for (std::size_t i = 0; i < shape.size(); ++i) {
        if (i > 0)
            s += ", ";
        s += std::to_string(shape[i]);
    }
    if (shape.size() == 1)
        s += ",";
    s += ")";
    return s;
}

std::string quoted(std::string_view s)
{
    // Printable excerpt for error messages: at most 40 bytes, control bytes escaped.
    std::string out = "'";
    const std::size_t n = std::min<std::size_t>(s.size(), 40);
    for (std::size_t i = 0; i < n; ++i) {
        const unsigned char c = static_cast<unsigned char>(s[i]);
        if (c < 0x20 || c == 0x7f) {
            char buf[8];
            std::snprintf(buf, sizeof buf, "\\x%02x", c);
            out += buf;
        } else {
            out += char(c);
        }
    }
    if (s.size() > n)
        out += "...";
    return out + "'";
}

std::uint16_t loadLe16(const std::uint8_t *p)
{
    return std::uint16_t(p[0] | (p[1] << 8));
}

std::uint32_t loadLe32(const std::uint8_t *p)
{
    return std::uint32_t(p[0]) | (std::uint32_t(p[1]) << 8) | (std::uint32_t(p[2]) << 16)
        | (std::uint32_t(p[3]) << 24);
}

std::uint32_t byteSwap32(std::uint32_t v)
{
    return ((v & 0x000000ffu) << 24) | ((v & 0x0000ff00u) << 8) | ((v & 0x00ff0000u) >> 8)
        | ((v & 0xff000000u) >> 24);
}

std::uint64_t byteSwap64(std::uint64_t v)
{
    return (std::uint64_t(byteSwap32(std::uint32_t(v))) << 32) | byteSwap32(std::uint32_t(v >> 32));
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

// ---------------------------------------------------------------------------------------------
// .npy header

struct Preamble
{
    int major = 0;
    int minor = 0;
    std::size_t prefixBytes = 0; ///< magic + version + header length field
    std::uint64_t headerBytes = 0;
};

constexpr std::uint8_t kMagic[6] = {0x93, 'N', 'U', 'M', 'P', 'Y'};

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

struct HeaderInfo
{
    NpyType type = NpyType::Float64;
    int itemSize = 8;
    bool swap = false; ///< file byte order differs from ours
    bool fortran = false;
    std::vector<std::int64_t> shape;
    std::uint64_t count = 1;
    std::uint64_t dataOffset = 0;
    std::uint64_t dataBytes = 0;
    int unicodeChars = 0; ///< > 0: a unicode string dtype ('<U…') of that many UTF-32 units
};

/// Longest unicode item accepted (UTF-32 code units per item of a '<U…' dtype).
constexpr int kMaxUnicodeChars = 4096;

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

/// Parses the header text and checks every size against the file of `totalSize` bytes.
HeaderInfo parseHeader(const Preamble &p, std::string_view text, std::uint64_t totalSize,
                       const std::string &name, bool allowUnicode = false)
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

/// Converts the raw data (info.dataBytes bytes at `data`) into C-order doubles. int64 values
/// without an exact double (some beyond ±2^53) are refused (naming `name`), never rounded.
NpyArray decode(const HeaderInfo &info, const std::uint8_t *data, const std::string &name)
{
    NpyArray a;
    a.shape = info.shape;
    a.type = info.type;
    a.values.resize(info.count);
    const std::size_t n = info.count;
    const std::size_t nd = info.shape.size();

    // Destination of element i of the file: i in C order, or the C-order position of the i-th
    // element of a Fortran-order walk (first index fastest).
    const bool reorder = info.fortran && nd > 1 && n > 0; // strides of an empty array unused
    std::vector<std::int64_t> index, cStride;
    if (reorder) {
        index.assign(nd, 0);
        cStride.assign(nd, 1);
        for (std::size_t k = nd - 1; k > 0; --k)
            cStride[k - 1] = cStride[k] * info.shape[k];
    }
    std::int64_t dest = 0;

    for (std::size_t i = 0; i < n; ++i) {
        const std::uint8_t *p = data + i * std::size_t(info.itemSize);
        double v = 0;
        switch (info.type) {
        case NpyType::Float32: {
            std::uint32_t bits;
            std::memcpy(&bits, p, 4);
            v = double(std::bit_cast<float>(info.swap ? byteSwap32(bits) : bits));
            break;
        }
        case NpyType::Float64: {
            std::uint64_t bits;
            std::memcpy(&bits, p, 8);
            v = std::bit_cast<double>(info.swap ? byteSwap64(bits) : bits);
            break;
        }
        case NpyType::Int32: {
            std::uint32_t bits;
            std::memcpy(&bits, p, 4);
            v = double(std::bit_cast<std::int32_t>(info.swap ? byteSwap32(bits) : bits));
            break;
        }
        case NpyType::Int64: {
            std::uint64_t bits;
            std::memcpy(&bits, p, 8);
            const std::int64_t x = std::bit_cast<std::int64_t>(info.swap ? byteSwap64(bits) : bits);
            // Exact when it converts back (2^63 − 1 rounds up to 2^63, past int64: checked
            // before the cast back).
            v = double(x);
            if (!(v < 9223372036854775808.0) || std::int64_t(v) != x)
                fail(name,
                     "int64 value " + std::to_string(x) + " at flat index " + std::to_string(i)
                         + " has no exact float64 (values are read as float64)");
            break;
        }
        case NpyType::Bool:
            v = *p != 0 ? 1.0 : 0.0;
            break;
        case NpyType::UInt8:
            v = double(*p);
            break;
        }
        if (!reorder) {
            a.values[i] = v;
            continue;
        }
        a.values[std::size_t(dest)] = v;
        // advance the Fortran-order odometer
        for (std::size_t k = 0; k < nd; ++k) {
            if (++index[k] < info.shape[k]) {
                dest += cStride[k];
                break;
            }
            dest -= (info.shape[k] - 1) * cStride[k];
            index[k] = 0;
        }
    }
    return a;
}

/// Code points of UTF-8 `s`; nullopt for malformed UTF-8 (overlong forms, surrogates, > U+10FFFF).
std::optional<std::vector<char32_t>> decodeUtf8(std::string_view s)
{
    std::vector<char32_t> out;
    for (std::size_t i = 0; i < s.size();) {
        const auto b0 = std::uint8_t(s[i]);
        const int extra = b0 < 0x80 ? 0
            : (b0 >> 5) == 0x6      ? 1
            : (b0 >> 4) == 0xe      ? 2
            : (b0 >> 3) == 0x1e     ? 3
                                    : -1;
        if (extra < 0 || i + std::size_t(extra) >= s.size())
            return std::nullopt;
        char32_t c = extra == 0 ? b0 : char32_t(b0 & (0x3f >> extra));
        for (int k = 1; k <= extra; ++k) {
            const auto b = std::uint8_t(s[i + std::size_t(k)]);
            if ((b >> 6) != 0x2)
                return std::nullopt;
            c = (c << 6) | (b & 0x3f);
        }
        static constexpr char32_t minimum[] = {0, 0x80, 0x800, 0x10000};
        if (c < minimum[extra] || c > 0x10ffff || (c >= 0xd800 && c <= 0xdfff))
            return std::nullopt;
        out.push_back(c);
        i += std::size_t(extra) + 1;
    }
    return out;
}

/// Appends code point `c` (≤ U+10FFFF, no surrogate) to `out` as UTF-8.
void appendUtf8(std::string &out, char32_t c)
{
    if (c < 0x80) {
        out += char(c);
    } else if (c < 0x800) {
        out += char(0xc0 | (c >> 6));
        out += char(0x80 | (c & 0x3f));
    } else if (c < 0x10000) {
        out += char(0xe0 | (c >> 12));
        out += char(0x80 | ((c >> 6) & 0x3f));
        out += char(0x80 | (c & 0x3f));
    } else {
        out += char(0xf0 | (c >> 18));
        out += char(0x80 | ((c >> 12) & 0x3f));
        out += char(0x80 | ((c >> 6) & 0x3f));
        out += char(0x80 | (c & 0x3f));
    }
}

/// The items of a unicode string array (info.unicodeChars > 0) as UTF-8, trailing NULs dropped
/// (as NumPy drops them). Code points beyond U+10FFFF or surrogates are refused, naming the item.
NpyStrings decodeStrings(const HeaderInfo &info, const std::uint8_t *data, const std::string &name)
{
    if (info.fortran && info.shape.size() > 1)
        fail(name, "string arrays of more than one axis must be in C order");
    NpyStrings a;
    a.shape = info.shape;
    a.values.reserve(std::size_t(info.count));
    for (std::uint64_t i = 0; i < info.count; ++i) {
        const std::uint8_t *item = data + i * std::uint64_t(info.itemSize);
        int length = info.unicodeChars;
        auto unit = [&](int k) {
            std::uint32_t c;
            std::memcpy(&c, item + 4 * k, 4);
            return info.swap ? byteSwap32(c) : c;
        };
        while (length > 0 && unit(length - 1) == 0)
            --length;
        std::string text;
        for (int k = 0; k < length; ++k) {
            const std::uint32_t c = unit(k);
            if (c > 0x10ffff || (c >= 0xd800 && c <= 0xdfff))
                fail(name,
                     "string " + std::to_string(i) + " holds " + std::to_string(c)
                         + ", not a Unicode code point");
            appendUtf8(text, char32_t(c));
        }
        a.values.push_back(std::move(text));
    }
    return a;
}

// ---------------------------------------------------------------------------------------------
// Writing

const char *descrOf(NpyType t)
{
    switch (t) {
    case NpyType::Float32:
        return "<f4";
    case NpyType::Float64:
        return "<f8";
    case NpyType::Bool:
        return "|b1";
    case NpyType::Int32:
        return "<i4";
    case NpyType::Int64:
        return "<i8";
    case NpyType::UInt8:
        return "|u1";
    }
    return "<f8";
}

int itemSizeOf(NpyType t)
{
    switch (t) {
    case NpyType::Float32:
    case NpyType::Int32:
        return 4;
    case NpyType::Float64:
    case NpyType::Int64:
        return 8;
    case NpyType::Bool:
    case NpyType::UInt8:
        return 1;
    }
    return 8;
}

template<typename I> void storeLe(std::uint8_t *p, I v)
{
    using U = std::make_unsigned_t<I>;
    U u = static_cast<U>(v);
    for (std::size_t b = 0; b < sizeof(I); ++b) {
        p[b] = std::uint8_t(u & 0xff);
        u = static_cast<U>(u >> 8);
    }
}

/// Magic, version, header (exactly as numpy.lib.format._write_array_header writes it in NumPy
/// 1.24) and room for `dataBytes` of data after it.
std::vector<std::uint8_t> npyPreamble(const std::string &descr,
                                      const std::vector<std::int64_t> &shape, std::size_t dataBytes,
                                      const std::string &name)
{
    std::string header = "{'descr': '" + descr
        + "', 'fortran_order': False, 'shape': " + shapeToString(shape) + ", }";
    if (!shape.empty()) {
        const std::size_t digits = std::to_string(shape.front()).size();
        header.append(digits < 21 ? 21 - digits : 0, ' '); // GROWTH_AXIS_MAX_DIGITS
    }
    const std::size_t hlen = header.size() + 1;
    std::size_t prefix = 10;
    std::size_t padlen = 64 - ((prefix + hlen) % 64);
    int major = 1;
    if (hlen + padlen >= 65536) {
        major = 2;
        prefix = 12;
        padlen = 64 - ((prefix + hlen) % 64);
    }
    if (hlen + padlen > std::numeric_limits<std::uint32_t>::max())
        fail(name, "cannot write: header too long");
    header.append(padlen, ' ');
    header += '\n';

    std::vector<std::uint8_t> out(prefix + header.size() + dataBytes);
    std::memcpy(out.data(), kMagic, 6);
    out[6] = std::uint8_t(major);
    out[7] = 0;
    if (major == 1)
        storeLe(out.data() + 8, std::uint16_t(header.size()));
    else
        storeLe(out.data() + 8, std::uint32_t(header.size()));
    std::memcpy(out.data() + prefix, header.data(), header.size());
    return out;
}

/// A unicode string array as .npy: '<U{k}' with k the longest item's code points (at least 1),
/// each item UTF-32LE padded with NULs, as np.save writes np.array(list_of_str).
std::vector<std::uint8_t> serializeStrings(const NpyStrings &a, const std::string &name)
{
    std::int64_t count = 1;
    for (std::int64_t dim : a.shape) {
        if (dim < 0 || (dim > 0 && count > (std::int64_t(1) << 40) / dim))
            fail(name, "cannot write string array of shape " + shapeToString(a.shape));
        count *= dim;
    }
    if (std::uint64_t(count) != a.values.size())
        fail(name,
             "cannot write string array of shape " + shapeToString(a.shape) + ": "
                 + std::to_string(a.values.size()) + " strings are given");
    std::vector<std::vector<char32_t>> items;
    std::size_t chars = 1;
    for (std::size_t i = 0; i < a.values.size(); ++i) {
        auto points = decodeUtf8(a.values[i]);
        if (!points)
            fail(name, "cannot write string " + std::to_string(i) + ": not UTF-8");
        while (!points->empty() && points->back() == 0)
            points->pop_back(); // NumPy drops trailing NULs too
        chars = std::max(chars, points->size());
        items.push_back(std::move(*points));
    }
    if (chars > std::size_t(kMaxUnicodeChars))
        fail(name,
             "cannot write a string of more than " + std::to_string(kMaxUnicodeChars)
                 + " characters");
    const std::size_t itemSize = 4 * chars;
    std::vector<std::uint8_t> out
        = npyPreamble("<U" + std::to_string(chars), a.shape, items.size() * itemSize, name);
    std::uint8_t *p = out.data() + (out.size() - items.size() * itemSize);
    for (const auto &item : items) {
        for (std::size_t k = 0; k < item.size(); ++k)
            storeLe(p + 4 * k, std::uint32_t(item[k]));
        p += itemSize;
    }
    return out;
}

std::vector<std::uint8_t> serialize(const NpyArray &a, const std::string &name)
{
    for (std::int64_t dim : a.shape) {
        if (dim < 0)
            fail(name, "cannot write shape " + shapeToString(a.shape) + ": negative dimension");
    }
    // The reader's rule (checkedElementCount): what is written can be read back.
    const auto checked = checkedElementCount(a.shape, itemSizeOf(a.type));
    if (!checked)
        fail(name, "cannot write: " + tooBigMessage(shapeToString(a.shape), itemSizeOf(a.type)));
    const std::uint64_t count = *checked;
    if (count != a.values.size())
        fail(name,
             "cannot write shape " + shapeToString(a.shape) + ": it has " + std::to_string(count)
                 + " elements but " + std::to_string(a.values.size()) + " values are given");

    const int itemSize = itemSizeOf(a.type);
    std::vector<std::uint8_t> out
        = npyPreamble(descrOf(a.type), a.shape, count * std::size_t(itemSize), name);
    std::uint8_t *p = out.data() + (out.size() - count * std::size_t(itemSize));
    auto integral = [&](std::size_t i, double lo, double hiExclusive) {
        const double v = a.values[i];
        if (!(v >= lo && v < hiExclusive) || v != std::trunc(v)) {
            char buf[64];
            std::snprintf(buf, sizeof buf, "%.17g", v);
            fail(name,
                 std::string("cannot write value ") + buf + " at flat index " + std::to_string(i)
                     + " as " + npyTypeName(a.type));
        }
        return v;
    };
    for (std::size_t i = 0; i < count; ++i, p += itemSize) {
        switch (a.type) {
        case NpyType::Float32:
            storeLe(p, std::bit_cast<std::uint32_t>(static_cast<float>(a.values[i])));
            break;
        case NpyType::Float64:
            storeLe(p, std::bit_cast<std::uint64_t>(a.values[i]));
            break;
        case NpyType::Int32:
            storeLe(p, static_cast<std::int32_t>(integral(i, -2147483648.0, 2147483648.0)));
            break;
        case NpyType::Int64:
            storeLe(p,
                    static_cast<std::int64_t>(
                        integral(i, -9223372036854775808.0, 9223372036854775808.0)));
            break;
        case NpyType::Bool:
            *p = a.values[i] != 0 ? 1 : 0; // NaN counts as True, like NumPy's astype(bool)
            break;
        case NpyType::UInt8:
            *p = static_cast<std::uint8_t>(integral(i, 0.0, 256.0));
            break;
        }
    }
    return out;
}

std::string errnoText(int e)
{
    return std::strerror(e);
}

/// Writes `bytes` to a new temporary file next to `path`, then renames it over `path`. On any
/// failure the temporary file is removed and `path` is untouched.
void writeAtomically(const std::string &path, const std::vector<std::uint8_t> &bytes)
{
    const std::size_t slash = path.find_last_of('/');
    const std::string dir = slash == std::string::npos ? std::string() : path.substr(0, slash + 1);
    const std::string base = slash == std::string::npos ? path : path.substr(slash + 1);
    if (base.empty())
        fail(path, "cannot write: the path names a directory");

    std::random_device rd;
    std::string tmp;
    int fd = -1;
    for (int attempt = 0; attempt < 16 && fd < 0; ++attempt) {
        char suffix[48];
        std::snprintf(suffix, sizeof suffix, ".tmp-%ld-%08x", long(::getpid()), unsigned(rd()));
        tmp = dir + "." + base + suffix;
        // 0666 & ~umask, like any newly created file (np.save uses open(path, "wb")).
        fd = ::open(tmp.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0666);
        if (fd < 0 && errno != EEXIST)
            break;
    }
    if (fd < 0)
        fail(path, "cannot create a temporary file next to it: " + errnoText(errno));

    std::size_t done = 0;
    while (done < bytes.size()) {
        const ssize_t w = ::write(fd, bytes.data() + done, bytes.size() - done);
        if (w < 0 && errno == EINTR)
            continue;
        if (w <= 0) {
            const int e = w < 0 ? errno : EIO;
            ::close(fd);
            ::unlink(tmp.c_str());
            fail(path, "cannot write: " + errnoText(e));
        }
        done += std::size_t(w);
    }
    if (::close(fd) != 0) {
        const int e = errno;
        ::unlink(tmp.c_str());
        fail(path, "cannot write: " + errnoText(e));
    }
    if (std::rename(tmp.c_str(), path.c_str()) != 0) {
        const int e = errno;
        ::unlink(tmp.c_str());
        fail(path, "cannot rename the temporary file into place: " + errnoText(e));
    }
}

// ---------------------------------------------------------------------------------------------
// .npz through libzip

std::string zipErrorText(int code)
{
    zip_error_t e;
    zip_error_init_with_code(&e, code);
    std::string s = zip_error_strerror(&e);
    zip_error_fini(&e);
    return s;
}

/// Extra bytes tolerated in an .npz member beyond its header and data (NumPy ignores trailing
/// bytes); also the allowance for the header itself in the member size limit.
constexpr std::uint64_t kMaxNpzSlack = std::uint64_t(1) << 20;

/// Size (header + data) an .npy image declares, once `data` holds its whole header; nullopt
/// while incomplete or malformed (parseNpy then reports the problem on the complete data).
std::optional<std::uint64_t> declaredNpyBytes(const std::uint8_t *data, std::size_t size,
                                              bool allowUnicode)
{
    const std::uint64_t unknown = std::numeric_limits<std::uint64_t>::max();
    try {
        if (size < 12)
            return std::nullopt;
        const Preamble p = parsePreamble(data, size, unknown, std::string());
        if (size < p.prefixBytes + p.headerBytes)
            return std::nullopt;
        const std::string_view text(reinterpret_cast<const char *>(data + p.prefixBytes),
                                    std::size_t(p.headerBytes));
        const HeaderInfo info = parseHeader(p, text, unknown, std::string(), allowUnicode);
        return info.dataOffset + info.dataBytes;
    } catch (const NpyError &) {
        return std::nullopt;
    }
}

/// An open zip member, closed on destruction.
struct ZipFile
{
    zip_file_t *f;
    ZipFile(zip_file_t *file)
        : f(file)
    { }
    ZipFile(const ZipFile &) = delete;
    ZipFile &operator=(const ZipFile &) = delete;
    ~ZipFile()
    {
        if (f)
            zip_fclose(f);
    }
};

class ZipReader
{
public:
    explicit ZipReader(const std::string &path)
        : m_path(path)
    {
        int code = 0;
        m_zip = zip_open(path.c_str(), ZIP_RDONLY, &code);
        if (!m_zip)
            fail(path, "cannot open as .npz (zip archive): " + zipErrorText(code));
        const zip_int64_t n = zip_get_num_entries(m_zip, 0);
        std::unordered_map<std::string, std::size_t> byArray; // array name → index in m_entries
        for (zip_int64_t i = 0; i < n; ++i) {
            const char *entry = zip_get_name(m_zip, zip_uint64_t(i), ZIP_FL_ENC_GUESS);
            if (!entry)
                continue;
            std::string s = entry;
            if (!s.empty() && s.back() == '/')
                continue; // directory entry
            // One lookup per member (linear in the member count).
            const auto [it, inserted] = byArray.emplace(arrayName(s), m_entries.size());
            if (!inserted) {
                const std::string first = m_entries[it->second].name;
                zip_discard(m_zip);
                m_zip = nullptr;
                fail(path,
                     "two members hold array " + quoted(it->first) + " (" + quoted(first) + " and "
                         + quoted(s) + "): an ambiguous archive (numpy.load would take the last)");
            }
            m_entries.push_back({s, zip_uint64_t(i)});
        }
    }
    ~ZipReader()
    {
        if (m_zip)
            zip_discard(m_zip);
    }
    ZipReader(const ZipReader &) = delete;
    ZipReader &operator=(const ZipReader &) = delete;

    struct Entry
    {
        std::string name; ///< as stored, e.g. "query.npy"
        zip_uint64_t index;
    };
    const std::vector<Entry> &entries() const { return m_entries; }

    static std::string arrayName(const std::string &member)
    {
        const std::string suffix = ".npy";
        if (member.size() >= suffix.size()
            && member.compare(member.size() - suffix.size(), suffix.size(), suffix) == 0)
            return member.substr(0, member.size() - suffix.size());
        return member;
    }

    /// The .npy header of a member, decompressing only as many bytes as the header needs (at
    /// most kMaxNpzSlack: longer headers are refused). Throws NpyError naming the member.
    HeaderInfo readHeader(const Entry &e, bool allowUnicode = false) const
    {
        const std::string name = m_path + ": member " + quoted(e.name);
        zip_stat_t st;
        zip_stat_init(&st);
        const bool sized
            = zip_stat_index(m_zip, e.index, 0, &st) == 0 && (st.valid & ZIP_STAT_SIZE);
        const std::uint64_t total
            = sized ? std::uint64_t(st.size) : std::numeric_limits<std::uint64_t>::max();
        ZipFile file {zip_fopen_index(m_zip, e.index, 0)};
        if (!file.f)
            fail(name, std::string("cannot open: ") + zip_strerror(m_zip));
        std::vector<std::uint8_t> buf;
        // Reads until buf holds `want` bytes; false when the member ends first.
        auto fill = [&](std::uint64_t want) {
            while (buf.size() < want) {
                const std::size_t old = buf.size();
                buf.resize(std::size_t(want));
                const zip_int64_t got = zip_fread(file.f, buf.data() + old, buf.size() - old);
                if (got < 0)
                    fail(name, std::string("cannot read: ") + zip_file_strerror(file.f));
                buf.resize(old + std::size_t(got));
                if (got == 0)
                    return false;
            }
            return true;
        };
        const bool whole = fill(12);
        const Preamble p = parsePreamble(buf.data(), buf.size(), whole ? total : buf.size(), name);
        const std::uint64_t need = p.prefixBytes + p.headerBytes;
        if (need > kMaxNpzSlack)
            fail(name,
                 "the .npy header claims " + std::to_string(p.headerBytes)
                     + " bytes, more than the " + std::to_string(kMaxNpzSlack)
                     + " a header may have");
        if (!fill(need)) {
            parseNpy(buf.data(), buf.size(), name); // names how the member ends too early
            fail(name, "truncated .npy header");
        }
        const std::string_view text(reinterpret_cast<const char *>(buf.data() + p.prefixBytes),
                                    std::size_t(p.headerBytes));
        return parseHeader(p, text, total, name, allowUnicode);
    }

    NpyArray read(const Entry &e) const
    {
        const std::string name = m_path + ": member " + quoted(e.name);
        const std::vector<std::uint8_t> buf = readBytes(e, false);
        return parseNpy(buf.data(), buf.size(), name);
    }

    /// A member holding a unicode string array ('<U…').
    NpyStrings readStrings(const Entry &e) const
    {
        const std::string name = m_path + ": member " + quoted(e.name);
        const std::vector<std::uint8_t> buf = readBytes(e, true);
        const Preamble p = parsePreamble(buf.data(), buf.size(), buf.size(), name);
        const std::string_view text(reinterpret_cast<const char *>(buf.data() + p.prefixBytes),
                                    std::size_t(p.headerBytes));
        const HeaderInfo info = parseHeader(p, text, buf.size(), name, true);
        if (info.unicodeChars == 0)
            fail(name, "not a string array");
        return decodeStrings(info, buf.data() + info.dataOffset, name);
    }

    /// The member's decompressed bytes.
    std::vector<std::uint8_t> readBytes(const Entry &e, bool allowUnicode) const
    {
        const std::string name = m_path + ": member " + quoted(e.name);
        // The member's sizes are claims: the uncompressed size in the zip directory is checked
        // against the limit up front, then the data is decompressed in chunks (memory grows
        // only with bytes actually produced) and reading stops once it exceeds what the .npy
        // header describes by more than kMaxNpzSlack, or the limit (a "zip bomb").
        const std::uint64_t cap = kMaxNpyBytes + kMaxNpzSlack;
        zip_stat_t st;
        zip_stat_init(&st);
        if (zip_stat_index(m_zip, e.index, 0, &st) == 0 && (st.valid & ZIP_STAT_SIZE)
            && st.size > cap)
            fail(name,
                 "member claims " + std::to_string(st.size) + " bytes, more than the limit of "
                     + std::to_string(cap));
        ZipFile file {zip_fopen_index(m_zip, e.index, 0)};
        if (!file.f)
            fail(name, std::string("cannot open: ") + zip_strerror(m_zip));
        std::vector<std::uint8_t> buf;
        std::uint64_t limit = cap;
        bool limitFromHeader = false;
        constexpr std::size_t chunk = std::size_t(1) << 16;
        while (true) {
            const std::size_t old = buf.size();
            buf.resize(old + chunk);
            const zip_int64_t got = zip_fread(file.f, buf.data() + old, chunk);
            if (got < 0)
                fail(name, std::string("cannot read: ") + zip_file_strerror(file.f));
            buf.resize(old + std::size_t(got));
            if (got == 0)
                break;
            if (!limitFromHeader) {
                if (const auto declared = declaredNpyBytes(buf.data(), buf.size(), allowUnicode)) {
                    limit = std::min(cap, *declared + kMaxNpzSlack);
                    limitFromHeader = true;
                }
            }
            if (buf.size() > limit)
                fail(name,
                     limitFromHeader ? "member holds more than " + std::to_string(limit)
                             + " bytes, far more than its .npy header describes"
                                     : "member is larger than the limit of " + std::to_string(limit)
                             + " bytes");
        }
        return buf;
    }

    [[noreturn]] void missing(const std::string &wanted) const
    {
        std::vector<std::string> names;
        for (const Entry &e : m_entries)
            names.push_back(arrayName(e.name));
        fail(m_path,
             "no array " + quoted(wanted) + " in the archive; it holds "
                 + (names.empty() ? std::string("no arrays") : shortList(names)));
    }

private:
    std::string m_path;
    zip_t *m_zip = nullptr;
    std::vector<Entry> m_entries;
};

std::vector<std::uint8_t> buildZip(const std::string &path,
                                   const std::vector<std::pair<std::string, NpyArray>> &members,
                                   bool compress, const NpzStrings &strings)
{
    if (members.empty() && strings.empty()) {
        // libzip removes archives without entries; NumPy writes (and reads) the bare end of
        // central directory record for np.savez() without arrays.
        std::vector<std::uint8_t> eocd(22, 0);
        eocd[0] = 'P', eocd[1] = 'K', eocd[2] = 5, eocd[3] = 6;
        return eocd;
    }
    std::vector<std::vector<std::uint8_t>> payloads;
    std::vector<std::string> names;
    payloads.reserve(members.size() + strings.size());
    std::unordered_set<std::string> keys;
    auto addKey = [&](const std::string &key) {
        if (key.empty())
            fail(path, "cannot write an array with an empty name");
        if (!keys.insert(key).second)
            fail(path, "cannot write: duplicate array name " + quoted(key));
        names.push_back(key);
        return path + ": member " + quoted(key);
    };
    for (const auto &[key, array] : members)
        payloads.push_back(serialize(array, addKey(key)));
    for (const auto &[key, array] : strings)
        payloads.push_back(serializeStrings(array, addKey(key)));

    zip_error_t err;
    zip_error_init(&err);
    zip_source_t *mem = zip_source_buffer_create(nullptr, 0, 0, &err);
    if (!mem) {
        const std::string why = zip_error_strerror(&err);
        zip_error_fini(&err);
        fail(path, "cannot create the archive in memory: " + why);
    }
    zip_t *za = zip_open_from_source(mem, ZIP_TRUNCATE, &err);
    if (!za) {
        const std::string why = zip_error_strerror(&err);
        zip_error_fini(&err);
        zip_source_free(mem);
        fail(path, "cannot create the archive in memory: " + why);
    }
    zip_error_fini(&err);
    zip_source_keep(mem); // keep the buffer alive after zip_close

    auto abort = [&](const std::string &why) {
        zip_discard(za);
        zip_source_free(mem);
        fail(path, why);
    };
    for (std::size_t i = 0; i < payloads.size(); ++i) {
        const std::string entry = names[i] + ".npy"; // like np.savez: key + ".npy"
        zip_source_t *src = zip_source_buffer(za, payloads[i].data(), payloads[i].size(), 0);
        if (!src)
            abort(std::string("cannot add ") + quoted(entry) + ": " + zip_strerror(za));
        const zip_int64_t idx = zip_file_add(za, entry.c_str(), src, ZIP_FL_ENC_UTF_8);
        if (idx < 0) {
            zip_source_free(src);
            abort(std::string("cannot add ") + quoted(entry) + ": " + zip_strerror(za));
        }
        // Fixed timestamp 1980-01-01 00:00 (what np.savez stores) keeps output reproducible.
        if (zip_set_file_compression(za, zip_uint64_t(idx),
                                     compress ? ZIP_CM_DEFLATE : ZIP_CM_STORE, 0)
                != 0
            || zip_file_set_dostime(za, zip_uint64_t(idx), 0, (0 << 9) | (1 << 5) | 1, 0) != 0)
            abort(std::string("cannot add ") + quoted(entry) + ": " + zip_strerror(za));
    }
    if (zip_close(za) != 0)
        abort(std::string("cannot write the archive: ") + zip_strerror(za));

    std::vector<std::uint8_t> bytes;
    zip_stat_t st;
    zip_stat_init(&st);
    bool ok
        = zip_source_stat(mem, &st) == 0 && (st.valid & ZIP_STAT_SIZE) && zip_source_open(mem) == 0;
    if (ok) {
        bytes.resize(st.size);
        ok = zip_source_read(mem, bytes.data(), st.size) == zip_int64_t(st.size);
        zip_source_close(mem);
    }
    zip_source_free(mem);
    if (!ok)
        fail(path, "cannot read back the archive built in memory");
    return bytes;
}

} // namespace

// ---------------------------------------------------------------------------------------------
// NpyArray

std::int64_t NpyArray::size() const
{
    // Any zero axis makes the array empty, whatever the others are; the product of the
    // others is checked before it is formed.
    for (std::int64_t d : shape) {
        if (d < 0)
            throw NpyError("NpyArray::size: negative axis in shape " + shapeString());
        if (d == 0)
            return 0;
    }
    std::int64_t n = 1;
    for (std::int64_t d : shape) {
        if (n > std::numeric_limits<std::int64_t>::max() / d)
            throw NpyError("NpyArray::size: shape " + shapeString()
                           + " has more elements than fit in int64");
        n *= d;
    }
    return n;
}

std::string NpyArray::shapeString() const
{
    return shapeToString(shape);
}

template<typename T> Matrix<T> NpyArray::toMatrix(const std::string &what) const
{
    if (ndim() != 2)
        throw NpyError(what + ": expected a 2-d array, got shape " + shapeString());
    if (values.size() != std::size_t(size()))
        throw NpyError(what + ": shape " + shapeString() + " does not match "
                       + std::to_string(values.size()) + " values");
    Matrix<T> m(shape[0], shape[1]);
    for (std::size_t i = 0; i < values.size(); ++i)
        m.data()[i] = static_cast<T>(values[i]);
    return m;
}

template<typename T> Vector<T> NpyArray::toVector(const std::string &what) const
{
    if (ndim() != 1)
        throw NpyError(what + ": expected a 1-d array, got shape " + shapeString());
    if (values.size() != std::size_t(shape[0]))
        throw NpyError(what + ": shape " + shapeString() + " does not match "
                       + std::to_string(values.size()) + " values");
    Vector<T> v(shape[0]);
    for (std::size_t i = 0; i < values.size(); ++i)
        v[Index(i)] = static_cast<T>(values[i]);
    return v;
}

std::int64_t NpyArray::toScalarInt(const std::string &what) const
{
    if (values.size() != 1 || size() != 1)
        throw NpyError(what + ": expected a single integer (a 0-d array), got shape "
                       + shapeString());
    const double v = values.front();
    if (!(v >= -9007199254740992.0 && v <= 9007199254740992.0) || v != std::trunc(v))
        throw NpyError(what + ": expected an integer, got " + std::to_string(v));
    return std::int64_t(v);
}

template<typename T> Matrix<T> NpyArray::slice(std::int64_t k, const std::string &what) const
{
    if (ndim() != 3)
        throw NpyError(what + ": expected a 3-d array, got shape " + shapeString());
    if (values.size() != std::size_t(size()))
        throw NpyError(what + ": shape " + shapeString() + " does not match "
                       + std::to_string(values.size()) + " values");
    if (k < 0 || k >= shape[0])
        throw NpyError(what + ": index " + std::to_string(k) + " is out of range for shape "
                       + shapeString());
    const std::int64_t rows = shape[1], cols = shape[2];
    Matrix<T> m(rows, cols);
    const double *src = values.data() + std::size_t(k * rows * cols);
    for (std::int64_t i = 0; i < rows * cols; ++i)
        m.data()[i] = static_cast<T>(src[i]);
    return m;
}

template<typename T> NpyArray NpyArray::fromMatrix(const Matrix<T> &m)
{
    NpyArray a;
    a.shape = {std::int64_t(m.rows()), std::int64_t(m.cols())};
    a.type = std::is_same_v<T, float> ? NpyType::Float32 : NpyType::Float64;
    a.values.assign(m.data(), m.data() + m.size());
    return a;
}

template<typename T> NpyArray NpyArray::fromMatrices(const std::vector<Matrix<T>> &ms)
{
    NpyArray a;
    a.type = std::is_same_v<T, float> ? NpyType::Float32 : NpyType::Float64;
    if (ms.empty()) {
        a.shape = {0, 0, 0};
        return a;
    }
    const Index rows = ms.front().rows(), cols = ms.front().cols();
    a.shape = {std::int64_t(ms.size()), std::int64_t(rows), std::int64_t(cols)};
    a.values.reserve(ms.size() * std::size_t(rows * cols));
    for (std::size_t k = 0; k < ms.size(); ++k) {
        if (ms[k].rows() != rows || ms[k].cols() != cols)
            throw NpyError("fromMatrices: matrix " + std::to_string(k) + " is "
                           + attn::shapeString(ms[k].rows(), ms[k].cols()) + ", matrix 0 is "
                           + attn::shapeString(rows, cols));
        a.values.insert(a.values.end(), ms[k].data(), ms[k].data() + ms[k].size());
    }
    return a;
}

NpyArray NpyArray::scalarInt(std::int64_t v)
{
    NpyArray a;
    a.type = NpyType::Int64;
    a.values = {double(v)};
    return a;
}

template Matrix<float> NpyArray::toMatrix<float>(const std::string &) const;
template Matrix<double> NpyArray::toMatrix<double>(const std::string &) const;
template Vector<float> NpyArray::toVector<float>(const std::string &) const;
template Vector<double> NpyArray::toVector<double>(const std::string &) const;
template Matrix<float> NpyArray::slice<float>(std::int64_t, const std::string &) const;
template Matrix<double> NpyArray::slice<double>(std::int64_t, const std::string &) const;
template NpyArray NpyArray::fromMatrix<float>(const Matrix<float> &);
template NpyArray NpyArray::fromMatrix<double>(const Matrix<double> &);
template NpyArray NpyArray::fromMatrices<float>(const std::vector<Matrix<float>> &);
template NpyArray NpyArray::fromMatrices<double>(const std::vector<Matrix<double>> &);

// ---------------------------------------------------------------------------------------------
// .npy

NpyArray parseNpy(const std::uint8_t *data, std::size_t size, const std::string &name)
{
    const Preamble p = parsePreamble(data, size, size, name);
    const std::string_view text(reinterpret_cast<const char *>(data + p.prefixBytes),
                                std::size_t(p.headerBytes));
    const HeaderInfo info = parseHeader(p, text, size, name);
    return decode(info, data + info.dataOffset, name);
}

NpyArray readNpy(const std::string &path)
{
    std::FILE *f = std::fopen(path.c_str(), "rb");
    if (!f)
        fail(path, "cannot open: " + errnoText(errno));
    struct Closer
    {
        std::FILE *f;
        ~Closer() { std::fclose(f); }
    } closer {f};

    struct stat st;
    if (::fstat(::fileno(f), &st) != 0)
        fail(path, "cannot read: " + errnoText(errno));
    if (!S_ISREG(st.st_mode))
        fail(path, "cannot read: not a regular file");
    const std::uint64_t total = std::uint64_t(st.st_size);

    auto readExactly = [&](std::uint8_t *dst, std::size_t n) {
        if (n > 0 && std::fread(dst, 1, n, f) != n)
            fail(path,
                 std::string("cannot read: ")
                     + (std::ferror(f) ? errnoText(errno) : "the file shrank while reading"));
    };

    // Preamble and header first; the sizes they claim are checked against the file size before
    // the data is read.
    std::vector<std::uint8_t> head(std::size_t(std::min<std::uint64_t>(total, 12)));
    readExactly(head.data(), head.size());
    const Preamble p = parsePreamble(head.data(), head.size(), total, path);
    head.resize(p.prefixBytes + std::size_t(p.headerBytes));
    if (head.size() > 12)
        readExactly(head.data() + 12, head.size() - 12);
    const std::string_view text(reinterpret_cast<const char *>(head.data() + p.prefixBytes),
                                std::size_t(p.headerBytes));
    const HeaderInfo info = parseHeader(p, text, total, path);
    if (std::fseek(f, long(info.dataOffset), SEEK_SET) != 0)
        fail(path, "cannot read: " + errnoText(errno));
    std::vector<std::uint8_t> data(std::size_t(info.dataBytes));
    readExactly(data.data(), data.size());
    return decode(info, data.data(), path);
}

std::vector<std::uint8_t> serializeNpy(const NpyArray &array)
{
    return serialize(array, "serializeNpy");
}

void writeNpy(const std::string &path, const NpyArray &array)
{
    writeAtomically(path, serialize(array, path));
}

// ---------------------------------------------------------------------------------------------
// .npz

std::vector<std::string> listNpz(const std::string &path)
{
    ZipReader zip(path);
    std::vector<std::string> names;
    for (const auto &e : zip.entries())
        names.push_back(ZipReader::arrayName(e.name));
    return names;
}

std::uint64_t NpyHeader::valueBytes() const
{
    return count * sizeof(double);
}

std::vector<std::pair<std::string, NpyHeader>> readNpzHeaders(const std::string &path,
                                                              bool allowStrings)
{
    ZipReader zip(path);
    std::vector<std::pair<std::string, NpyHeader>> out;
    out.reserve(zip.entries().size());
    for (const auto &e : zip.entries()) {
        const HeaderInfo info = zip.readHeader(e, allowStrings);
        out.emplace_back(ZipReader::arrayName(e.name),
                         NpyHeader {info.type, info.shape, info.fortran, info.count, info.dataBytes,
                                    info.unicodeChars});
    }
    return out;
}

std::vector<std::pair<std::string, NpyArray>>
readNpz(const std::string &path, std::uint64_t budgetBytes, NpzStrings *strings)
{
    ZipReader zip(path);
    const bool allowStrings = strings != nullptr;
    if (budgetBytes != std::numeric_limits<std::uint64_t>::max()) {
        // Every header first: the declared sizes decide before anything is decompressed.
        std::uint64_t total = 0;
        std::string largest;
        std::uint64_t largestBytes = 0;
        for (const auto &e : zip.entries()) {
            const HeaderInfo info = zip.readHeader(e, allowStrings);
            const std::uint64_t bytes = info.count * sizeof(double) + info.dataBytes;
            total += bytes; // each ≤ 2·kMaxNpyBytes: no overflow below 2^31 members
            if (bytes >= largestBytes) {
                largestBytes = bytes;
                largest = ZipReader::arrayName(e.name) + " " + npyTypeName(info.type) + " "
                    + shapeToString(info.shape);
            }
        }
        if (total > budgetBytes)
            fail(path,
                 "its arrays declare " + std::to_string(total)
                     + " bytes (as stored plus as float64 values; the largest is " + largest
                     + "), over the budget of " + std::to_string(budgetBytes)
                     + " bytes; nothing was decompressed");
    }
    std::vector<std::pair<std::string, NpyArray>> out;
    out.reserve(zip.entries().size());
    for (const auto &e : zip.entries()) {
        if (allowStrings && zip.readHeader(e, true).unicodeChars > 0)
            strings->emplace_back(ZipReader::arrayName(e.name), zip.readStrings(e));
        else
            out.emplace_back(ZipReader::arrayName(e.name), zip.read(e));
    }
    return out;
}

NpyArray readNpzMember(const std::string &path, const std::string &name)
{
    ZipReader zip(path);
    const std::string bare = ZipReader::arrayName(name);
    // Exact member name first, then "name.npy", then "name" without its ".npy".
    for (const std::string &candidate : {name, name + ".npy", bare})
        for (const auto &e : zip.entries())
            if (e.name == candidate)
                return zip.read(e);
    zip.missing(name);
}

void writeNpz(const std::string &path, const std::vector<std::pair<std::string, NpyArray>> &members,
              bool compress, const NpzStrings &strings)
{
    writeAtomically(path, buildZip(path, members, compress, strings));
}

const char *npyTypeName(NpyType t)
{
    switch (t) {
    case NpyType::Float32:
        return "float32";
    case NpyType::Float64:
        return "float64";
    case NpyType::Bool:
        return "bool";
    case NpyType::Int32:
        return "int32";
    case NpyType::Int64:
        return "int64";
    case NpyType::UInt8:
        return "uint8";
    }
    return "?";
}

} // namespace attn
