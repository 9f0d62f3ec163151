#pragma once
// Reading Hugging Face checkpoints in the safetensors format (huggingface/safetensors, README
// "Format"), memory-mapped and never modified:
//
//   8 bytes   N, unsigned 64-bit little-endian (the header's length, at most kMaxHeaderBytes)
//   N bytes   UTF-8 JSON object: "name": {"dtype": "BF16", "shape": [r, c],
//             "data_offsets": [begin, end]}, offsets relative to the data buffer, end one past;
//             optional "__metadata__": {string: string}; may be padded with spaces
//   the rest  the data buffer: little-endian, C order, no strides
//
// Everything is checked before any tensor is read: the header length against the limit and the
// file, the JSON (no duplicate names, no trailing bytes, an object of objects), every entry's
// fields, shape products (overflow-checked), end − begin against product(shape) × dtype size,
// and that the tensors tile the data buffer exactly (sorted by offset: no overlap, no hole, no
// byte after the last one), as the format requires. Tensors may start at any byte (real
// checkpoints have odd header lengths), so values are read with memcpy, never by pointer casts.
//
// Files of other formats are recognised and refused with what was found and what to do: GGUF
// (llama.cpp, magic "GGUF") and PyTorch pickles (.bin/.pt: a zip archive "PK\x03\x04" or a bare
// pickle starting 0x80 <protocol>).
//
// Sharded checkpoints: a directory with model.safetensors.index.json, whose "weight_map" maps
// each tensor name to its shard file (Hugging Face transformers, modeling_utils.py).

#include "core/base/types.h"

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <map>
#include <memory>
#include <stdexcept>
#include <string>
#include <string_view>
#include <vector>

namespace attn::models {

/// Errors of checkpoint and config reading and of the model forward's inputs. The message names
/// the file, the tensor or field, and the numbers that disagree.
class ModelError : public std::runtime_error
{
public:
    using std::runtime_error::runtime_error;
};

/// The largest header the format allows: 100 MB (huggingface/safetensors, README "Format").
inline constexpr std::uint64_t kMaxHeaderBytes = 100'000'000;

/// Element types named by the format. Only F32, F16 and BF16 can be read as numbers; the others
/// are parsed (so their sizes are checked) and refused by name when a tensor is read.
enum class DType {
    Bool,
    U8,
    I8,
    F8_E5M2,
    F8_E4M3,
    F8_E8M0,
    I16,
    U16,
    F16,
    BF16,
    I32,
    U32,
    F32,
    I64,
    U64,
    F64,
    F6_E2M3,
    F6_E3M2,
    F4,
};

/// The format's name of a dtype ("BF16", "F32", …). Never throws.
const char *dtypeName(DType type);
/// Bits per element (1 for BOOL is stored as 8). Never throws.
int dtypeBits(DType type);

/// One tensor as the header describes it (offsets relative to the data buffer, in bytes).
struct TensorInfo
{
    std::string name;
    DType dtype = DType::F32;
    std::vector<std::int64_t> shape; ///< empty for rank 0
    std::uint64_t begin = 0;
    std::uint64_t end = 0;
    std::uint64_t elements = 0; ///< product(shape), 1 for rank 0

    /// "[3, 4]", "[]" for rank 0.
    std::string shapeString() const;
};

/// IEEE 754 binary16 → binary32, exact (normal, subnormal, ±0, ±Inf, NaN keeping its payload's
/// top bits). Never throws.
float halfToFloat(std::uint16_t bits);
/// bfloat16 → binary32: the 16 bits become the top half of the float (exact). Never throws.
float bfloat16ToFloat(std::uint16_t bits);

/// A parsed safetensors image: the header's tensors and metadata, and the data buffer (owned
/// through a memory map, or borrowed from the caller's bytes).
class SafetensorsFile
{
public:
    /// Memory-maps `path` read-only (POSIX mmap, MAP_PRIVATE; the file is never written) and
    /// parses it. Throws ModelError naming the file: it cannot be opened or mapped, it is GGUF
    /// or a PyTorch pickle (with what to do instead), or the header fails a check (see the file
    /// comment).
    static SafetensorsFile open(const std::string &path);
    /// Parses `size` bytes at `data` (never reads beyond); the bytes are borrowed and must
    /// outlive the returned object and every view of it. `name` starts every error message.
    /// Throws ModelError as open() does.
    static SafetensorsFile fromMemory(const std::uint8_t *data, std::size_t size,
                                      const std::string &name);

    const std::string &name() const { return m_name; }
    /// Tensors in header order.
    const std::vector<TensorInfo> &tensors() const { return m_tensors; }
    /// The tensor called `name`, or nullptr.
    const TensorInfo *find(std::string_view name) const;
    /// The "__metadata__" entries (empty when absent).
    const std::map<std::string, std::string> &metadata() const { return m_metadata; }
    /// Bytes of the header JSON (N) and of the data buffer.
    std::uint64_t headerBytes() const { return m_headerBytes; }
    std::uint64_t dataBytes() const { return m_dataSize; }

    /// Converts elements [first, first + count) of the tensor (C order) to float32 into
    /// out[0 … count). F32 is copied, BF16 and F16 widened exactly. Throws ModelError naming
    /// the file, the tensor and its dtype for any other dtype, or when the range is outside
    /// the tensor's elements. With count 0 nothing is read and `out` may be null.
    void readFloats(const TensorInfo &tensor, std::uint64_t first, std::uint64_t count,
                    float *out) const;
    /// The tensor's elements where they lie in the data buffer, as float32 (C order), when
    /// they can be read without a copy: an F32 tensor starting at a float-aligned address, on a
    /// little-endian machine. Else nullptr (readFloats copies or widens). Never throws.
    const float *floatsInPlace(const TensorInfo &tensor) const;
    /// Whether `tensor` (one of tensors()) was marked checked: every element found finite.
    /// The mapped data never changes, so a reader that views it in place (floatsInPlace) scans
    /// a tensor once. Thread-safe; false for a tensor of another file. Never throws.
    bool checkedFinite(const TensorInfo &tensor) const;
    void markCheckedFinite(const TensorInfo &tensor) const;

private:
    SafetensorsFile() = default;
    void parse(const std::uint8_t *bytes, std::size_t size);

    std::string m_name;
    std::shared_ptr<const void> m_owner; ///< the memory map (empty when borrowed)
    const std::uint8_t *m_data = nullptr; ///< start of the data buffer
    std::uint64_t m_dataSize = 0;
    std::uint64_t m_headerBytes = 0;
    std::vector<TensorInfo> m_tensors;
    std::map<std::string, std::size_t, std::less<>> m_index; ///< name → position in m_tensors
    std::map<std::string, std::string> m_metadata;
    /// One flag per tensor (header order): checked finite (see checkedFinite).
    std::unique_ptr<std::atomic<bool>[]> m_checkedFinite;
};

/// A checkpoint: one safetensors file, or the shards of a model.safetensors.index.json, with
/// tensors looked up by name across shards.
class Checkpoint
{
public:
    /// `path` is a directory (model.safetensors, else model.safetensors.index.json), a
    /// .safetensors file or an index .json. Throws ModelError: nothing usable found (naming what
    /// the directory holds instead, e.g. pytorch_model.bin or a .gguf, and how to convert it),
    /// an index without a "weight_map" object of strings, a shard name with a '/' or "..", a
    /// tensor the index puts in a shard that lacks it, or any error of SafetensorsFile::open.
    static Checkpoint open(const std::string &path);
    /// One in-memory file (see SafetensorsFile::fromMemory).
    static Checkpoint fromFile(SafetensorsFile file);

    /// A tensor and the file holding it.
    struct Entry
    {
        const SafetensorsFile *file = nullptr;
        const TensorInfo *tensor = nullptr;
    };
    /// The tensor called `name`, or {nullptr, nullptr}.
    Entry find(std::string_view name) const;
    /// Every tensor name, sorted.
    std::vector<std::string> names() const;
    /// Where the checkpoint came from (directory or file).
    const std::string &source() const { return m_source; }
    /// The shards (one for a single file).
    const std::vector<std::unique_ptr<SafetensorsFile>> &files() const { return m_files; }

private:
    std::string m_source;
    std::vector<std::unique_ptr<SafetensorsFile>> m_files;
    std::map<std::string, Entry, std::less<>> m_entries;
};

/// Refuses files that are not safetensors with a message saying what they are and what to do,
/// from their first bytes: GGUF, a zip (PyTorch's torch.save since 1.6), a pickle. Returns
/// without throwing otherwise. `name` starts the message.
void refuseForeignFormat(const std::uint8_t *head, std::size_t size, const std::string &name);

} // namespace attn::models
