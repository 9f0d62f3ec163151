// NumPy .npy/.npz reading and writing. Format: numpy/lib/format.py (NumPy 1.24), NEP 1.
//
// .npy layout: "\x93NUMPY", major, minor, header length (uint16 LE for 1.0, uint32 LE for 2.0
// and 3.0), header (a Python dict literal, latin-1 for 1.x/2.x, UTF-8 for 3.0), then the raw
// data. The header is parsed by a small parser for Python literals (strings, integers,
// True/False/None, tuples, lists, dicts); anything else is refused, nothing is evaluated.
//
// Every size taken from a file is checked against the bytes actually present before it is used,
// and element counts are checked for overflow and against kMaxNpyBytes before any allocation.

// The header is read in npyheader.cpp, .npz archives in npz.cpp.

#include "core/io/npy.h"
#include "core/io/npyformat.h"
#include "core/io/regularfile.h"

#include <algorithm>
#include <bit>
#include <cerrno>
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

namespace attn {

namespace npyformat {

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

} // namespace npyformat

using namespace npyformat;

namespace {

std::uint32_t byteSwap32(std::uint32_t v)
{
    return ((v & 0x000000ffu) << 24) | ((v & 0x0000ff00u) << 8) | ((v & 0x00ff0000u) >> 8)
        | ((v & 0xff000000u) >> 24);
}

std::uint64_t byteSwap64(std::uint64_t v)
{
    return (std::uint64_t(byteSwap32(std::uint32_t(v))) << 32) | byteSwap32(std::uint32_t(v >> 32));
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

} // namespace

namespace npyformat {

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

} // namespace npyformat

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
    // Opened without blocking on a FIFO, and only a regular file.
    std::uintmax_t size = 0;
    std::string error;
    const int fd = openRegularFile(path, size, error);
    if (fd < 0)
        fail(path, "cannot read: " + error);
    std::FILE *f = ::fdopen(fd, "rb");
    if (!f) {
        const int e = errno;
        ::close(fd);
        fail(path, "cannot open: " + errnoText(e));
    }
    struct Closer
    {
        std::FILE *f;
        ~Closer() { std::fclose(f); }
    } closer {f};
    const std::uint64_t total = std::uint64_t(size);

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
