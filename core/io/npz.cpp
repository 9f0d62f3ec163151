// .npz archives through libzip: listing, reading (within a memory budget decided from the
// members' .npy headers before anything is decompressed) and writing (stored or deflated, written
// atomically), as np.savez and np.load.

#include "core/base/messages.h"
#include "core/io/npy.h"
#include "core/io/npyformat.h"
#include "core/io/regularfile.h"

#include <zip.h>

#include <algorithm>
#include <cstring>
#include <limits>
#include <optional>
#include <string_view>
#include <unistd.h>
#include <unordered_map>
#include <unordered_set>

namespace attn {

using namespace npyformat;

namespace {

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
        // Opened without blocking on a FIFO, and only a regular file (libzip would wait for a
        // writer); zip_fdopen owns the descriptor once it succeeds.
        std::uintmax_t size = 0;
        std::string error;
        const int fd = openRegularFile(path, size, error);
        if (fd < 0)
            fail(path, "cannot open as .npz (zip archive): " + error);
        int code = 0;
        m_zip = zip_fdopen(fd, ZIP_RDONLY, &code);
        if (!m_zip) {
            ::close(fd);
            fail(path,
                 "cannot open as .npz (zip archive): " + zipErrorText(code)
                     + (code == ZIP_ER_NOZIP
                            ? " (or a truncated one: its end-of-archive record is missing)"
                            : ""));
        }
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

} // namespace attn
