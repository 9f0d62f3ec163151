#pragma once
// Model folders as the window lists them: a checkpoint folder's display name, the built-in model
// (models/brown-gpt/ of the source tree, installed as share/attnlab/models/brown-gpt/), and the
// models of a Hugging Face hub cache (huggingface_hub's layout, file_download.py:
// <hub>/models--ORG--NAME/snapshots/<revision>/ holding config.json and the weights, usually as
// symbolic links into ../../blobs).

#include <cstdint>
#include <filesystem>
#include <string>
#include <vector>

namespace attn::models {

/// A model folder found in a Hugging Face cache.
struct CachedModel
{
    std::string name; ///< "ORG/NAME" (or "NAME" for a repository without an owner)
    std::filesystem::path folder; ///< …/models--ORG--NAME/snapshots/<revision>
    std::string revision; ///< the snapshot folder's name (a commit hash)
    std::string family; ///< "gpt2", "llama", … when config.json parses; else empty
    std::string problem; ///< why the folder cannot be opened (readModelConfig's message, or no
                         ///< .safetensors file); empty when it can be tried
    std::uint64_t weightBytes = 0; ///< total size of its *.safetensors files (links followed)
    bool supported() const { return problem.empty(); }
};

/// The built-in model's folder, a GPT-2-family checkpoint trained on the Brown Corpus
/// (models/train_brown_gpt.py): `executableDir`/../share/attnlab/models/brown-gpt when it holds a
/// config.json (an installed attnlab), else the source tree's models/brown-gpt (a build tree; the
/// path is compiled in). Empty when neither holds a config.json. Never throws.
std::filesystem::path builtinModelFolder(const std::filesystem::path &executableDir);

/// The hub cache folder: $HF_HUB_CACHE, else $HF_HOME/hub, else $XDG_CACHE_HOME/huggingface/hub,
/// else ~/.cache/huggingface/hub (huggingface_hub constants.py). The folder may not exist.
std::filesystem::path huggingFaceHubDir();

/// Every snapshot of `hub` that holds a config.json, sorted by name then revision. Folders that
/// are not models--… repositories, snapshots without config.json, and unreadable entries are
/// skipped; models of unsupported families or without safetensors weights are listed with their
/// problem. Never throws (an absent `hub` gives an empty list).
std::vector<CachedModel> scanHuggingFaceCache(const std::filesystem::path &hub);

/// A name for a model folder: "ORG/NAME" for a snapshot of a hub cache, else the folder's own
/// name (the last non-empty path component).
std::string modelDisplayName(const std::filesystem::path &folder);

} // namespace attn::models
