#include "core/models/modelfolder.h"

#include "core/models/config.h"
#include "core/models/safetensors.h"

#include <algorithm>
#include <cstdlib>
#include <system_error>

namespace attn::models {
namespace {

namespace fs = std::filesystem;

fs::path fromEnv(const char *name)
{
    const char *value = std::getenv(name);
    return value && *value ? fs::path(value) : fs::path();
}

/// "models--ORG--NAME" → "ORG/NAME"; empty for another folder name.
std::string repositoryName(const std::string &folderName)
{
    const std::string prefix = "models--";
    if (folderName.rfind(prefix, 0) != 0 || folderName.size() == prefix.size())
        return {};
    const std::string rest = folderName.substr(prefix.size());
    const std::size_t split = rest.find("--");
    if (split == std::string::npos)
        return rest;
    return rest.substr(0, split) + '/' + rest.substr(split + 2);
}

/// Sum of the sizes of `folder`'s *.safetensors files (symbolic links followed); 0 when none.
std::uint64_t safetensorsBytes(const fs::path &folder, bool *found)
{
    std::uint64_t total = 0;
    std::error_code ec;
    for (fs::directory_iterator it(folder, ec), end; !ec && it != end; it.increment(ec)) {
        if (it->path().extension() != ".safetensors")
            continue;
        std::error_code sizeError;
        const auto size = fs::file_size(it->path(), sizeError);
        if (!sizeError) {
            total += size;
            *found = true;
        }
    }
    return total;
}

CachedModel describeSnapshot(const std::string &name, const fs::path &snapshot)
{
    CachedModel m;
    m.name = name;
    m.folder = snapshot;
    m.revision = snapshot.filename().string();
    try {
        m.family = modelFamilyName(readModelConfig((snapshot / "config.json").string()).family);
    } catch (const ModelError &e) {
        m.problem = e.what();
    }
    bool found = false;
    m.weightBytes = safetensorsBytes(snapshot, &found);
    if (m.problem.empty() && !found)
        m.problem = snapshot.string() + ": no .safetensors weights (only safetensors are read)";
    return m;
}

} // namespace

fs::path huggingFaceHubDir()
{
    if (fs::path p = fromEnv("HF_HUB_CACHE"); !p.empty())
        return p;
    if (fs::path p = fromEnv("HF_HOME"); !p.empty())
        return p / "hub";
    if (fs::path p = fromEnv("XDG_CACHE_HOME"); !p.empty())
        return p / "huggingface" / "hub";
    return fromEnv("HOME") / ".cache" / "huggingface" / "hub";
}

fs::path builtinModelFolder(const fs::path &executableDir)
{
    std::vector<fs::path> candidates;
    if (!executableDir.empty())
        candidates.push_back(executableDir / ".." / "share" / "attnlab" / "models" / "brown-gpt");
    candidates.emplace_back(ATTN_BUILTIN_MODEL_SOURCE_DIR);
    for (const fs::path &folder : candidates) {
        std::error_code ec;
        if (fs::is_regular_file(folder / "config.json", ec))
            return folder.lexically_normal();
    }
    return {};
}

std::vector<CachedModel> scanHuggingFaceCache(const fs::path &hub)
{
    std::vector<CachedModel> out;
    std::error_code ec;
    for (fs::directory_iterator repo(hub, ec), end; !ec && repo != end; repo.increment(ec)) {
        const std::string name = repositoryName(repo->path().filename().string());
        std::error_code typeError;
        if (name.empty() || !repo->is_directory(typeError))
            continue;
        std::error_code snapshotError;
        for (fs::directory_iterator snap(repo->path() / "snapshots", snapshotError);
             !snapshotError && snap != end; snap.increment(snapshotError)) {
            std::error_code fileError;
            if (fs::is_regular_file(snap->path() / "config.json", fileError))
                out.push_back(describeSnapshot(name, snap->path()));
        }
    }
    std::sort(out.begin(), out.end(), [](const CachedModel &a, const CachedModel &b) {
        return a.name != b.name ? a.name < b.name : a.revision < b.revision;
    });
    return out;
}

std::string modelDisplayName(const fs::path &folder)
{
    fs::path f = folder;
    if (f.filename().empty())
        f = f.parent_path();
    const fs::path snapshots = f.parent_path();
    if (snapshots.filename() == "snapshots") {
        const std::string repo = repositoryName(snapshots.parent_path().filename().string());
        if (!repo.empty())
            return repo;
    }
    return f.filename().string();
}

} // namespace attn::models
