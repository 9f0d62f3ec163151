#pragma once
// The .npy format's internals that npy.cpp (arrays: data, writing), npyheader.cpp (the header:
// preamble, Python literals, dtype and shape) and npz.cpp (archives through libzip) share. Not
// part of attncore's interface: include core/io/npy.h.

#include "core/io/npy.h"

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace attn::npyformat {

/// Throws NpyError("<name>: <problem>").
[[noreturn]] void fail(const std::string &name, const std::string &problem);
/// NumPy's repr of a shape tuple: "()", "(3,)", "(2, 3)".
std::string shapeToString(const std::vector<std::int64_t> &shape);
/// `s` as Python's repr quotes a string, for messages.
std::string quoted(std::string_view s);

struct Preamble
{
    int major = 0;
    int minor = 0;
    std::size_t prefixBytes = 0; ///< magic + version + header length field
    std::uint64_t headerBytes = 0;
};

inline constexpr std::uint8_t kMagic[6] = {0x93, 'N', 'U', 'M', 'P', 'Y'};

/// `data` holds the first min(totalSize, 12) bytes (or more) of a file of `totalSize` bytes.
Preamble parsePreamble(const std::uint8_t *data, std::size_t avail, std::uint64_t totalSize,
                       const std::string &name);

/// Element count of `shape` for elements of `itemSize` bytes, with NumPy's rule for what an
/// array may be (PyArray_NewFromDescr): itemSize times the product of the non-zero axes must fit
/// in a signed 64-bit size, whether or not an axis is zero (so (2^32, 2^32, 0) is refused, as
/// NumPy refuses it). nullopt when it does not; negative axes are the caller's to refuse first.
std::optional<std::uint64_t> checkedElementCount(const std::vector<std::int64_t> &shape,
                                                 int itemSize);
/// The message for a shape whose elements do not fit (checkedElementCount gave nullopt).
std::string tooBigMessage(const std::string &shapeText, int itemSize);

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
inline constexpr int kMaxUnicodeChars = 4096;

/// Parses the header text and checks every size against the file of `totalSize` bytes.
HeaderInfo parseHeader(const Preamble &p, std::string_view text, std::uint64_t totalSize,
                       const std::string &name, bool allowUnicode = false);

/// Converts the raw data (info.dataBytes bytes at `data`) into C-order doubles. int64 values
/// without an exact double (some beyond ±2^53) are refused (naming `name`), never rounded.
NpyArray decode(const HeaderInfo &info, const std::uint8_t *data, const std::string &name);
/// The items of a unicode string array (info.unicodeChars > 0) as UTF-8, trailing NULs dropped
/// (as NumPy drops them). Code points beyond U+10FFFF or surrogates are refused, naming the item.
NpyStrings decodeStrings(const HeaderInfo &info, const std::uint8_t *data, const std::string &name);

/// An array as .npy bytes (the data C-order, little-endian); `name` names it in messages.
std::vector<std::uint8_t> serialize(const NpyArray &a, const std::string &name);

/// A unicode string array as .npy: '<U{k}' with k the longest item's code points (at least 1),
/// each item UTF-32LE padded with NULs, as np.save writes np.array(list_of_str).
std::vector<std::uint8_t> serializeStrings(const NpyStrings &a, const std::string &name);

/// strerror(e).
std::string errnoText(int e);
/// Writes `bytes` to a new temporary file next to `path`, then renames it over `path`. On any
/// failure the temporary file is removed and `path` is untouched.
void writeAtomically(const std::string &path, const std::vector<std::uint8_t> &bytes);

} // namespace attn::npyformat
