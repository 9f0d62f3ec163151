#include "core/models/safetensors.h"

#include "core/io/regularfile.h"

#include "core/models/json_p.h"

#include <algorithm>
#include <array>
#include <bit>
#include <cerrno>
#include <cmath>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <limits>
#include <set>
#include <sstream>

#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

namespace attn::models {

namespace {

using nlohmann::json;

struct DTypeName
{
    DType type;
    const char *name;
    int bits;
};

constexpr std::array<DTypeName, 19> kDTypes = {{
    {DType::Bool, "BOOL", 8},       {DType::U8, "U8", 8},           {DType::I8, "I8", 8},
    {DType::F8_E5M2, "F8_E5M2", 8}, {DType::F8_E4M3, "F8_E4M3", 8}, {DType::F8_E8M0, "F8_E8M0", 8},
    {DType::I16, "I16", 16},        {DType::U16, "U16", 16},        {DType::F16, "F16", 16},
    {DType::BF16, "BF16", 16},      {DType::I32, "I32", 32},        {DType::U32, "U32", 32},
    {DType::F32, "F32", 32},        {DType::I64, "I64", 64},        {DType::U64, "U64", 64},
    {DType::F64, "F64", 64},        {DType::F6_E2M3, "F6_E2M3", 6}, {DType::F6_E3M2, "F6_E3M2", 6},
    {DType::F4, "F4", 4},
}};

bool parseDType(const std::string &name, DType &type)
{
    for (const auto &d : kDTypes)
        if (name == d.name) {
            type = d.type;
            return true;
        }
    return false;
}

std::uint64_t readU64LE(const std::uint8_t *p)
{
    std::uint64_t v = 0;
    for (int i = 7; i >= 0; --i)
        v = (v << 8) | p[i];
    return v;
}

std::string quoted(const std::string &s)
{
    return "'" + s + "'";
}

std::string whatIs(const std::string &file, const std::string &tensor)
{
    return file + ": tensor " + quoted(tensor);
}

// A read-only private mapping, unmapped when the last owner goes.
std::shared_ptr<const void> mapFile(const std::string &path, std::size_t &size)
{
    std::uintmax_t bytes = 0;
    std::string error;
    const int fd = openRegularFile(path, bytes, error);
    if (fd < 0)
        throw ModelError(path + ": " + error);
    if (bytes < 8) {
        ::close(fd);
        throw ModelError(path + ": " + std::to_string(bytes)
                         + " bytes, too short for a safetensors file (an 8-byte header length, "
                           "then the header)");
    }
    if (bytes > std::numeric_limits<std::size_t>::max()) {
        ::close(fd);
        throw ModelError(path + ": " + std::to_string(bytes) + " bytes, too large to map");
    }
    size = std::size_t(bytes);
    void *p = ::mmap(nullptr, size, PROT_READ, MAP_PRIVATE, fd, 0);
    const int e = errno;
    ::close(fd);
    if (p == MAP_FAILED)
        throw ModelError(path + ": cannot memory-map " + std::to_string(size) + " bytes ("
                         + std::strerror(e) + ")");
    const std::size_t mapped = size;
    return std::shared_ptr<const void>(
        p, [mapped](const void *q) { ::munmap(const_cast<void *>(q), mapped); });
}

const char *const kConvertAdvice
    = "convert it with Hugging Face transformers: "
      "AutoModelForCausalLM.from_pretrained(dir).save_pretrained(out, safe_serialization=True)";

std::uint64_t unsignedField(const json &v, const std::string &context)
{
    if (!v.is_number_unsigned()) {
        if (v.is_number_integer())
            throw ModelError(context + " is negative (" + v.dump() + ")");
        throw ModelError(context + " must be a non-negative integer, got " + detail::jsonTypeName(v)
                         + " " + v.dump().substr(0, 40));
    }
    return v.get<std::uint64_t>();
}

} // namespace

const char *dtypeName(DType type)
{
    for (const auto &d : kDTypes)
        if (d.type == type)
            return d.name;
    return "?";
}

int dtypeBits(DType type)
{
    for (const auto &d : kDTypes)
        if (d.type == type)
            return d.bits;
    return 0;
}

std::string TensorInfo::shapeString() const
{
    std::string s = "[";
    for (std::size_t i = 0; i < shape.size(); ++i)
        s += (i ? ", " : "") + std::to_string(shape[i]);
    return s + "]";
}

float halfToFloat(std::uint16_t h)
{
    const std::uint32_t sign = std::uint32_t(h & 0x8000u) << 16;
    const std::uint32_t exponent = (h >> 10) & 0x1fu;
    const std::uint32_t mantissa = h & 0x3ffu;
    if (exponent == 0) {
        // ±0 and subnormals: mantissa · 2^−24 (exact in binary32).
        const float magnitude = std::ldexp(float(mantissa), -24);
        return sign ? -magnitude : magnitude;
    }
    std::uint32_t bits;
    if (exponent == 31)
        bits = sign | 0x7f800000u | (mantissa << 13); // Inf, NaN (payload kept)
    else
        bits = sign | ((exponent + 112u) << 23) | (mantissa << 13); // rebias 15 → 127
    float f;
    std::memcpy(&f, &bits, sizeof f);
    return f;
}

float bfloat16ToFloat(std::uint16_t b)
{
    const std::uint32_t bits = std::uint32_t(b) << 16;
    float f;
    std::memcpy(&f, &bits, sizeof f);
    return f;
}

void refuseForeignFormat(const std::uint8_t *head, std::size_t size, const std::string &name)
{
    if (size >= 4 && std::memcmp(head, "GGUF", 4) == 0)
        throw ModelError(name
                         + ": this is a GGUF file (llama.cpp's format, magic \"GGUF\"), not "
                           "safetensors; use the original Hugging Face checkpoint "
                           "(model.safetensors and config.json) instead");
    if (size >= 4 && std::memcmp(head, "PK\x03\x04", 4) == 0)
        throw ModelError(name
                         + ": this is a zip archive (PyTorch's torch.save format, as in "
                           "pytorch_model.bin), not safetensors; pickles are never loaded: "
                         + kConvertAdvice);
    if (size >= 2 && head[0] == 0x80 && head[1] >= 2 && head[1] <= 5)
        throw ModelError(name + ": this is a Python pickle (protocol " + std::to_string(head[1])
                         + ", a legacy PyTorch .bin/.pt), not safetensors; pickles are never "
                           "loaded: "
                         + kConvertAdvice);
}

SafetensorsFile SafetensorsFile::open(const std::string &path)
{
    SafetensorsFile f;
    f.m_name = path;
    std::size_t size = 0;
    f.m_owner = mapFile(path, size);
    f.parse(static_cast<const std::uint8_t *>(f.m_owner.get()), size);
    return f;
}

SafetensorsFile SafetensorsFile::fromMemory(const std::uint8_t *data, std::size_t size,
                                            const std::string &name)
{
    SafetensorsFile f;
    f.m_name = name;
    f.parse(data, size);
    return f;
}

void SafetensorsFile::parse(const std::uint8_t *bytes, std::size_t size)
{
    const std::string &file = m_name;
    if (size < 8) {
        refuseForeignFormat(bytes, size, file);
        throw ModelError(file + ": " + std::to_string(size)
                         + " bytes, too short for a safetensors file (an 8-byte header length, "
                           "then the header)");
    }
    const std::uint64_t n = readU64LE(bytes);
    if (n > kMaxHeaderBytes) {
        refuseForeignFormat(bytes, size, file);
        throw ModelError(file + ": header length " + std::to_string(n)
                         + " bytes exceeds the format's limit of " + std::to_string(kMaxHeaderBytes)
                         + " bytes (100 MB)");
    }
    if (n > size - 8) {
        refuseForeignFormat(bytes, size, file);
        throw ModelError(file + ": header length " + std::to_string(n)
                         + " bytes runs past the end of the file (" + std::to_string(size)
                         + " bytes, so at most " + std::to_string(size - 8) + ")");
    }
    if (n < 2 || bytes[8] != '{') {
        refuseForeignFormat(bytes, size, file);
        throw ModelError(file + ": the header (" + std::to_string(n)
                         + " bytes) does not start with '{': not a safetensors file");
    }
    m_headerBytes = n;
    m_data = bytes + 8 + n;
    m_dataSize = size - 8 - n;
    const std::string_view text(reinterpret_cast<const char *>(bytes + 8), std::size_t(n));
    const json header = detail::parseJsonStrict(text, file + ": header");
    if (!header.is_object())
        throw ModelError(file + ": the header must be a JSON object, got "
                         + detail::jsonTypeName(header));

    for (const auto &[key, value] : header.items()) {
        if (key == "__metadata__") {
            if (!value.is_object())
                throw ModelError(file + ": __metadata__ must be an object of strings, got "
                                 + detail::jsonTypeName(value));
            for (const auto &[mk, mv] : value.items()) {
                if (!mv.is_string())
                    throw ModelError(file + ": __metadata__ entry " + quoted(mk)
                                     + " must be a string, got " + detail::jsonTypeName(mv));
                m_metadata.emplace(mk, mv.get<std::string>());
            }
            continue;
        }
        const std::string where = whatIs(file, key);
        if (!value.is_object())
            throw ModelError(where + ": entry must be an object, got "
                             + detail::jsonTypeName(value));
        for (const auto &[field, fieldValue] : value.items()) {
            (void)fieldValue;
            if (field != "dtype" && field != "shape" && field != "data_offsets")
                throw ModelError(where + ": unknown field " + quoted(field)
                                 + " (expected dtype, shape, data_offsets)");
        }
        for (const char *field : {"dtype", "shape", "data_offsets"})
            if (!value.contains(field))
                throw ModelError(where + ": missing field " + quoted(field));
        TensorInfo t;
        t.name = key;
        const json &dtype = value.at("dtype");
        if (!dtype.is_string())
            throw ModelError(where + ": dtype must be a string, got "
                             + detail::jsonTypeName(dtype));
        if (!parseDType(dtype.get<std::string>(), t.dtype))
            throw ModelError(where + ": unknown dtype " + quoted(dtype.get<std::string>()));
        const json &shape = value.at("shape");
        if (!shape.is_array())
            throw ModelError(where + ": shape must be an array, got "
                             + detail::jsonTypeName(shape));
        std::uint64_t elements = 1;
        bool overflow = false;
        for (std::size_t i = 0; i < shape.size(); ++i) {
            const std::uint64_t dim
                = unsignedField(shape[i], where + ": shape[" + std::to_string(i) + "]");
            if (dim > std::uint64_t(std::numeric_limits<std::int64_t>::max()))
                overflow = true;
            t.shape.push_back(std::int64_t(std::min<std::uint64_t>(
                dim, std::uint64_t(std::numeric_limits<std::int64_t>::max()))));
            if (__builtin_mul_overflow(elements, dim, &elements))
                overflow = true;
        }
        std::uint64_t bits = 0;
        if (!overflow && __builtin_mul_overflow(elements, std::uint64_t(dtypeBits(t.dtype)), &bits))
            overflow = true;
        if (overflow)
            throw ModelError(where + ": shape " + shape.dump() + " of " + dtypeName(t.dtype)
                             + " holds more than 2^64 bits (the file has "
                             + std::to_string(m_dataSize) + " bytes of data)");
        t.elements = elements;
        const std::uint64_t expectedBytes = bits / 8 + (bits % 8 ? 1 : 0);
        const json &offsets = value.at("data_offsets");
        if (!offsets.is_array() || offsets.size() != 2)
            throw ModelError(where + ": data_offsets must be an array [begin, end], got "
                             + offsets.dump().substr(0, 60));
        t.begin = unsignedField(offsets[0], where + ": data_offsets[0]");
        t.end = unsignedField(offsets[1], where + ": data_offsets[1]");
        if (t.end < t.begin)
            throw ModelError(where + ": data_offsets [" + std::to_string(t.begin) + ", "
                             + std::to_string(t.end) + "] end before begin");
        if (t.end > m_dataSize)
            throw ModelError(where + ": data_offsets [" + std::to_string(t.begin) + ", "
                             + std::to_string(t.end) + "] end past the data buffer of "
                             + std::to_string(m_dataSize) + " bytes");
        if (t.end - t.begin != expectedBytes)
            throw ModelError(where + ": data_offsets [" + std::to_string(t.begin) + ", "
                             + std::to_string(t.end) + "] span " + std::to_string(t.end - t.begin)
                             + " bytes but shape " + t.shapeString() + " of " + dtypeName(t.dtype)
                             + " needs " + std::to_string(expectedBytes) + " bytes");
        m_index.emplace(t.name, m_tensors.size());
        m_tensors.push_back(std::move(t));
    }

    m_checkedFinite = std::make_unique<std::atomic<bool>[]>(m_tensors.size());

    // The tensors must tile the data buffer: sorted by offset, each starts where the previous
    // ends, the last ends at the end of the file.
    std::vector<const TensorInfo *> order;
    order.reserve(m_tensors.size());
    for (const auto &t : m_tensors)
        order.push_back(&t);
    std::stable_sort(order.begin(), order.end(), [](const TensorInfo *a, const TensorInfo *b) {
        return a->begin != b->begin ? a->begin < b->begin : a->end < b->end;
    });
    std::uint64_t expected = 0;
    const TensorInfo *previous = nullptr;
    for (const TensorInfo *t : order) {
        if (t->begin < expected)
            throw ModelError(file + ": tensors " + quoted(previous->name) + " (bytes "
                             + std::to_string(previous->begin) + "–" + std::to_string(previous->end)
                             + ") and " + quoted(t->name) + " (bytes " + std::to_string(t->begin)
                             + "–" + std::to_string(t->end) + ") overlap");
        if (t->begin > expected)
            throw ModelError(file + ": bytes " + std::to_string(expected) + "–"
                             + std::to_string(t->begin) + " of the data buffer before tensor "
                             + quoted(t->name)
                             + " belong to no tensor (the format allows no "
                               "holes)");
        expected = t->end;
        previous = t;
    }
    if (expected != m_dataSize)
        throw ModelError(file + ": " + std::to_string(m_dataSize - expected)
                         + " trailing bytes after the last tensor (data buffer "
                         + std::to_string(m_dataSize) + " bytes, tensors end at "
                         + std::to_string(expected) + ")");
}

const TensorInfo *SafetensorsFile::find(std::string_view name) const
{
    const auto it = m_index.find(name);
    return it == m_index.end() ? nullptr : &m_tensors[it->second];
}

void SafetensorsFile::readFloats(const TensorInfo &t, std::uint64_t first, std::uint64_t count,
                                 float *out) const
{
    if (t.dtype != DType::F32 && t.dtype != DType::F16 && t.dtype != DType::BF16)
        throw ModelError(whatIs(m_name, t.name) + " is " + dtypeName(t.dtype)
                         + ": only F32, F16 and BF16 tensors can be read as weights");
    if (first > t.elements || count > t.elements - first)
        throw ModelError(whatIs(m_name, t.name) + ": elements " + std::to_string(first) + " + "
                         + std::to_string(count) + " requested of " + std::to_string(t.elements));
    if (count == 0)
        return; // an empty tensor: `out` may be null (memcpy must not see it)
    const std::uint64_t size = std::uint64_t(dtypeBits(t.dtype) / 8);
    const std::uint8_t *p = m_data + t.begin + first * size;
    if (t.dtype == DType::F32) {
        std::memcpy(out, p, std::size_t(count * 4));
        return;
    }
    const bool half = t.dtype == DType::F16;
    for (std::uint64_t i = 0; i < count; ++i) {
        std::uint16_t bits;
        std::memcpy(&bits, p + 2 * i, 2);
        out[i] = half ? halfToFloat(bits) : bfloat16ToFloat(bits);
    }
}

namespace {

// Position of `t` in `tensors`, or −1 when it is not one of them.
std::ptrdiff_t positionOf(const std::vector<TensorInfo> &tensors, const TensorInfo &t)
{
    const std::ptrdiff_t k = &t - tensors.data();
    return tensors.empty() || k < 0 || k >= std::ptrdiff_t(tensors.size()) ? -1 : k;
}

} // namespace

bool SafetensorsFile::checkedFinite(const TensorInfo &t) const
{
    const std::ptrdiff_t k = positionOf(m_tensors, t);
    return k >= 0 && m_checkedFinite && m_checkedFinite[std::size_t(k)].load();
}

void SafetensorsFile::markCheckedFinite(const TensorInfo &t) const
{
    const std::ptrdiff_t k = positionOf(m_tensors, t);
    if (k >= 0 && m_checkedFinite)
        m_checkedFinite[std::size_t(k)].store(true);
}

const float *SafetensorsFile::floatsInPlace(const TensorInfo &t) const
{
    if constexpr (std::endian::native != std::endian::little)
        return nullptr;
    const std::uint8_t *p = m_data + t.begin;
    if (t.dtype != DType::F32 || reinterpret_cast<std::uintptr_t>(p) % alignof(float) != 0)
        return nullptr;
    return reinterpret_cast<const float *>(p);
}

// ---- Checkpoint ----

namespace {

namespace fs = std::filesystem;

std::string readSmallFile(const std::string &path, std::uintmax_t limit)
{
    std::string text;
    const std::string error = readRegularFile(path, limit, text);
    if (!error.empty())
        throw ModelError(path + ": " + error
                         + (error.find("accepted") != std::string::npos ? " for this file" : ""));
    return text;
}

// What a directory without model.safetensors holds instead, and what to do about it.
[[noreturn]] void refuseDirectory(const std::string &dir)
{
    std::vector<std::string> found;
    std::error_code ec;
    for (const auto &e : fs::directory_iterator(dir, ec)) {
        const std::string name = e.path().filename().string();
        const std::string ext = e.path().extension().string();
        if (ext == ".bin" || ext == ".pt" || ext == ".pth" || ext == ".gguf" || ext == ".ckpt"
            || ext == ".safetensors")
            found.push_back(name);
    }
    std::sort(found.begin(), found.end());
    std::string msg = dir + ": no model.safetensors or model.safetensors.index.json";
    if (found.empty())
        throw ModelError(msg + " (and no other weight file)");
    msg += "; found ";
    bool pickle = false, gguf = false;
    for (std::size_t i = 0; i < found.size() && i < 8; ++i) {
        msg += (i ? ", " : "") + found[i];
        const std::string ext = fs::path(found[i]).extension().string();
        pickle = pickle || ext == ".bin" || ext == ".pt" || ext == ".pth" || ext == ".ckpt";
        gguf = gguf || ext == ".gguf";
    }
    if (pickle)
        msg += std::string("; PyTorch pickles are never loaded: ") + kConvertAdvice;
    if (gguf)
        msg += "; GGUF (llama.cpp) files are not read: use the Hugging Face checkpoint";
    throw ModelError(msg);
}

bool safeShardName(const std::string &s)
{
    return !s.empty() && s.find('/') == std::string::npos && s.find('\\') == std::string::npos
        && s != "." && s != ".." && s.find('\0') == std::string::npos;
}

} // namespace

Checkpoint Checkpoint::fromFile(SafetensorsFile file)
{
    Checkpoint c;
    c.m_source = file.name();
    c.m_files.push_back(std::make_unique<SafetensorsFile>(std::move(file)));
    for (const auto &t : c.m_files.front()->tensors())
        c.m_entries.emplace(t.name, Entry {c.m_files.front().get(), &t});
    return c;
}

Checkpoint Checkpoint::open(const std::string &path)
{
    std::error_code ec;
    std::string indexPath;
    if (fs::is_directory(path, ec)) {
        const fs::path dir(path);
        if (fs::exists(dir / "model.safetensors", ec))
            return fromFile(SafetensorsFile::open((dir / "model.safetensors").string()));
        if (!fs::exists(dir / "model.safetensors.index.json", ec))
            refuseDirectory(path);
        indexPath = (dir / "model.safetensors.index.json").string();
    } else if (fs::path(path).extension() == ".json") {
        indexPath = path;
    } else {
        return fromFile(SafetensorsFile::open(path));
    }

    const json index
        = detail::parseJsonStrict(readSmallFile(indexPath, kMaxHeaderBytes), indexPath);
    if (!index.is_object() || !index.contains("weight_map") || !index["weight_map"].is_object())
        throw ModelError(indexPath
                         + ": a sharded checkpoint's index needs a \"weight_map\" "
                           "object (tensor name → shard file)");
    const json &map = index["weight_map"];
    std::map<std::string, std::size_t> shardOf;
    Checkpoint c;
    c.m_source = path;
    const fs::path dir = fs::path(indexPath).parent_path();
    for (const auto &[tensor, shard] : map.items()) {
        if (!shard.is_string())
            throw ModelError(indexPath + ": weight_map entry " + quoted(tensor)
                             + " must be a file name, got " + detail::jsonTypeName(shard));
        const std::string file = shard.get<std::string>();
        if (!safeShardName(file))
            throw ModelError(indexPath + ": weight_map entry " + quoted(tensor) + " names "
                             + quoted(file) + ", not a file in the index's directory");
        if (!shardOf.count(file)) {
            shardOf.emplace(file, c.m_files.size());
            c.m_files.push_back(
                std::make_unique<SafetensorsFile>(SafetensorsFile::open((dir / file).string())));
        }
    }
    for (const auto &f : c.m_files)
        for (const auto &t : f->tensors())
            if (!c.m_entries.emplace(t.name, Entry {f.get(), &t}).second)
                throw ModelError(indexPath + ": tensor " + quoted(t.name) + " is in both "
                                 + c.m_entries[t.name].file->name() + " and " + f->name());
    for (const auto &[tensor, shard] : map.items()) {
        const auto it = c.m_entries.find(tensor);
        const std::string file = shard.get<std::string>();
        if (it == c.m_entries.end() || it->second.file != c.m_files[shardOf[file]].get())
            throw ModelError(indexPath + ": weight_map puts tensor " + quoted(tensor) + " in "
                             + file + ", which does not hold it");
    }
    return c;
}

Checkpoint::Entry Checkpoint::find(std::string_view name) const
{
    const auto it = m_entries.find(name);
    return it == m_entries.end() ? Entry {} : it->second;
}

std::vector<std::string> Checkpoint::names() const
{
    std::vector<std::string> out;
    out.reserve(m_entries.size());
    for (const auto &e : m_entries)
        out.push_back(e.first);
    return out;
}

} // namespace attn::models
