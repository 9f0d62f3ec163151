#pragma once
// NumPy .npy (format versions 1.0, 2.0, 3.0) and .npz (zip of .npy members, stored or
// deflate-compressed, ZIP64) reading and writing. Format: numpy/lib/format.py
// (NEP 1, "A simple file format for NumPy arrays"). .npz goes through libzip.
//
// Accepted dtypes: <f4 <f8 >f4 >f8 =f4 =f8 |b1 <i4 <i8 |u1, also >i4 >i8 and any byte-order
// character on the one-byte types ('<b1', '=u1'); C or Fortran order (Fortran data is reordered
// so values are always C order, never transposed); any number of dimensions (0-d to 4-d and
// zero-length are tested). The header is parsed as Python literals only (keys in any order, any
// spacing, trailing commas, Python 2 'L' suffixes in 1.0/2.0); its length is always the one in
// the file. Trailing bytes after the data are ignored, as np.load does.
//
// Refused with NpyError naming the file (and member) and the problem: object arrays (|O,
// pickles are never interpreted), structured, void and string dtypes, other dtypes (f2, c16,
// M8, ...), bad magic, versions other than 1.0/2.0/3.0, a header length past the end of file,
// truncated data, malformed or non-literal header tokens (`__import__`, calls, arithmetic),
// missing/extra/duplicate keys, negative dimensions, shapes NumPy refuses (the item size times
// the product of the non-zero axes over 2^63 − 1, even when another axis is 0; the writer
// refuses the same shapes), element counts that exceed kMaxNpyBytes, int64 values that no
// double holds exactly (some beyond ±2^53: values are held as double, never rounded). Sizes are
// checked against the bytes present before anything is allocated; .npz members are decompressed in
// chunks and abandoned once they exceed what their header describes (by 1 MiB) or their zip entry
// claims more than the limit.
//
// Unicode string arrays ('<U{k}' / '>U{k}': k UTF-32 code units per item, what NumPy writes for
// np.array(["the", "cat"]) or a list of str given to np.savez) are read only where a caller asks
// for them (readNpz's `strings`, readNpzHeaders' `allowStrings`), as UTF-8 with trailing NULs
// dropped (as NumPy drops them); 1 ≤ k ≤ 4096, code points beyond U+10FFFF or surrogates are
// refused. Everywhere else they are refused like the other string dtypes.

#include "core/base/types.h"

#include <cstdint>
#include <limits>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

namespace attn {

/// Largest array we agree to read or allocate: 4 GiB, counted both as the payload in the file
/// and as the converted doubles in NpyArray::values (so at most 512 Mi elements). Checked from
/// the header before anything is allocated.
inline constexpr std::uint64_t kMaxNpyBytes = std::uint64_t(4) << 30;

/// Errors of .npy/.npz reading and writing; the message starts with the file (and member) name.
class NpyError : public std::runtime_error
{
public:
    using std::runtime_error::runtime_error;
};

/// Element type as stored in the file.
enum class NpyType { Float32, Float64, Bool, Int32, Int64, UInt8 };

/// NumPy's name of the dtype: "float32", "float64", "bool", "int32", "int64" or "uint8"
/// (numpy.dtype.name). Never throws.
const char *npyTypeName(NpyType type);

/// An array with its shape; values converted to double, in C order.
struct NpyArray
{
    std::vector<std::int64_t> shape; ///< empty for 0-d
    NpyType type = NpyType::Float64; ///< dtype found in the file (or to write)
    std::vector<double> values; ///< product(shape) values, C order

    /// Product of shape (1 for 0-d, 0 when any axis is 0 whatever the others are). Throws
    /// NpyError for a negative axis or a product over int64 (never for arrays read from files).
    std::int64_t size() const;
    int ndim() const { return int(shape.size()); }
    std::string shapeString() const; ///< "(3, 4)", "(3,)", "()" like NumPy

    /// 2-d array as a row-major matrix. Throws NpyError naming `what` and the shape otherwise.
    template<typename T> Matrix<T> toMatrix(const std::string &what) const;
    /// 1-d array as a column vector. Throws NpyError naming `what` and the shape otherwise.
    template<typename T> Vector<T> toVector(const std::string &what) const;
    /// Value of a 0-d (or one-element) array holding an integer (any dtype, integral value).
    /// Throws NpyError naming `what` otherwise.
    std::int64_t toScalarInt(const std::string &what) const;
    /// Slice k of the first axis of an (m × r × c) array as an r × c matrix.
    template<typename T> Matrix<T> slice(std::int64_t k, const std::string &what) const;

    /// rows × cols array; type Float64 for double, Float32 for float.
    template<typename T> static NpyArray fromMatrix(const Matrix<T> &m);
    /// Stacks equally shaped matrices into a (count × rows × cols) array; shape (0, 0, 0) when
    /// empty. Throws NpyError when the shapes differ.
    template<typename T> static NpyArray fromMatrices(const std::vector<Matrix<T>> &ms);
    /// 0-d int64 array (exact for |v| ≤ 2^53, the values are stored as double).
    static NpyArray scalarInt(std::int64_t v);
};

/// A unicode string array ('<U…'): its items as UTF-8, in C order.
struct NpyStrings
{
    std::vector<std::int64_t> shape; ///< empty for 0-d
    std::vector<std::string> values; ///< product(shape) strings
};
/// The string arrays of an .npz, by name (without ".npy"), in archive order.
using NpzStrings = std::vector<std::pair<std::string, NpyStrings>>;

/// Parses an in-memory .npy image of `size` bytes (never reads beyond); `name` starts every
/// error message. Throws NpyError.
NpyArray parseNpy(const std::uint8_t *data, std::size_t size, const std::string &name);
/// Reads a .npy file: preamble and header first, data only after its size was checked against
/// the file size. Throws NpyError (message starts with `path`).
NpyArray readNpy(const std::string &path);
/// Serialises to .npy format 1.0 (2.0 when the header needs it), little-endian, C order, with
/// NumPy's header layout (byte-identical to np.save of the same array in NumPy 1.24). Values are
/// converted to `array.type`; Bool writes value != 0; integer types require integral values in
/// range. Throws NpyError ("serializeNpy: ...") on values.size() != size() or unrepresentable
/// values.
std::vector<std::uint8_t> serializeNpy(const NpyArray &array);
/// Writes a .npy file atomically: a temporary file next to `path` (".<name>.tmp-…", mode
/// 0666 & ~umask) renamed into place; on failure nothing is left and an existing file at `path`
/// is untouched. Throws NpyError (message starts with `path`).
void writeNpy(const std::string &path, const NpyArray &array);

/// Names of the members of an .npz archive without the ".npy" suffix, in archive order.
std::vector<std::string> listNpz(const std::string &path);
/// What an .npy header declares, before any data is read.
struct NpyHeader
{
    NpyType type = NpyType::Float64;
    std::vector<std::int64_t> shape; ///< empty for 0-d
    bool fortranOrder = false;
    std::uint64_t count = 0; ///< product of shape (checked as NumPy checks it)
    std::uint64_t dataBytes = 0; ///< count × item size, the bytes of data in the file
    /// > 0 for a unicode string array: UTF-32 code units per item (`type` is then meaningless).
    int stringChars = 0;

    /// Bytes of NpyArray::values once read: count × 8 (float64).
    std::uint64_t valueBytes() const;
};

/// The headers of every member of an .npz archive (names without ".npy"), in archive order,
/// decompressing only the few bytes each header takes (at most 1 MiB each). Linear in the
/// member count. Throws NpyError like readNpz (a malformed header, an ambiguous archive); a
/// unicode string member only without `allowStrings` (with it, its stringChars is set).
std::vector<std::pair<std::string, NpyHeader>> readNpzHeaders(const std::string &path,
                                                              bool allowStrings = false);
/// Reads every member of an .npz archive (names without ".npy"), in archive order; opening is
/// linear in the member count. Errors in a member start with "<path>: member '<name>.npy': ".
/// When `budgetBytes` is given, the sizes the headers declare (data bytes as stored plus 8 bytes
/// a value once read, summed over the members) must not exceed it; this is checked from the
/// headers before any member's data is decompressed. When `strings` is given, unicode string
/// members go there (not into the result) instead of being refused. Throws NpyError.
std::vector<std::pair<std::string, NpyArray>> readNpz(const std::string &path,
                                                      std::uint64_t budgetBytes
                                                      = std::numeric_limits<std::uint64_t>::max(),
                                                      NpzStrings *strings = nullptr);
/// Reads one member (name with or without ".npy"). A missing name throws NpyError listing the
/// names that exist.
NpyArray readNpzMember(const std::string &path, const std::string &name);
/// Writes an .npz (deflate-compressed when `compress`, like np.savez_compressed; stored like
/// np.savez otherwise) atomically: nothing is left at `path` when writing fails. Member names
/// are the keys + ".npy" (as np.savez does); keys must be unique and non-empty. Entries carry
/// the fixed timestamp 1980-01-01 00:00 so equal inputs give equal files. `strings` are written
/// after the numeric members as '<U{k}' arrays (k the longest item, at least 1; UTF-8 in, as
/// np.savez writes a list of str). Throws NpyError (also for strings that are not UTF-8).
void writeNpz(const std::string &path, const std::vector<std::pair<std::string, NpyArray>> &members,
              bool compress = true, const NpzStrings &strings = {});

} // namespace attn
