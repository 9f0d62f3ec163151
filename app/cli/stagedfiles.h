#pragma once
// A set of files a command writes all or nothing (heatmap's --out, --batch-dir and --data).

#include <QString>
#include <QStringList>
#include <QTemporaryDir>

#include <map>
#include <memory>

namespace attn::cli {

/// A set of files written all or nothing: each file is first written into a hidden staging
/// folder in its target's folder (so the final rename stays on one file system), and commit()
/// renames them into place only once every file of the set is complete. Without commit(), or
/// when a staging folder cannot be made, the staging folders are removed with whatever they
/// hold and the targets are untouched (folders created for them removed again if empty).
class StagedFiles
{
public:
    StagedFiles() = default;
    StagedFiles(const StagedFiles &) = delete;
    StagedFiles &operator=(const StagedFiles &) = delete;
    ~StagedFiles();

    /// The staging folder for files whose target folder is `directory` (created if missing);
    /// empty with `error` set when it cannot be made.
    QString folderFor(const QString &directory, QString *error);

    /// `target`'s path inside its staging folder; empty with `error` set on failure.
    QString pathFor(const QString &target, QString *error);

    /// Renames every staged file into its target folder (each rename is atomic and replaces
    /// a file of that name). Returns false with `error` naming the file that could not be moved
    /// and the files of the set already in place (a rename failing after a complete write is
    /// rare: the folder became unwritable meanwhile).
    bool commit(QString *error);

private:
    std::map<QString, std::unique_ptr<QTemporaryDir>> m_staging; ///< target folder → staging
    QStringList m_created; ///< target folders this set created, outermost first
    bool m_committed = false;
};

} // namespace attn::cli
