#include "stagedfiles.h"

#include <QDir>
#include <QFile>
#include <QFileInfo>

#include <cerrno>
#include <cstdio>
#include <cstring>

namespace attn::cli {

StagedFiles::~StagedFiles()
{
    m_staging.clear();
    if (!m_committed) {
        for (auto it = m_created.rbegin(); it != m_created.rend(); ++it)
            QDir().rmdir(*it);
    }
}

QString StagedFiles::folderFor(const QString &directory, QString *error)
{
    const QString target
        = QDir(directory.isEmpty() ? QStringLiteral(".") : directory).absolutePath();
    auto it = m_staging.find(target);
    if (it != m_staging.end())
        return it->second->path();
    if (!QFileInfo(target).isDir()) {
        // Record the folders made on the way, so a failed set leaves none behind.
        QStringList missing;
        for (QString d = target; !QFileInfo::exists(d); d = QFileInfo(d).absolutePath())
            missing.prepend(d);
        if (!QDir().mkpath(target)) {
            *error = QStringLiteral("cannot create the folder '%1'").arg(target);
            return {};
        }
        m_created += missing;
    }
    auto dir = std::make_unique<QTemporaryDir>(target + QStringLiteral("/.attnlab-export-XXXXXX"));
    if (!dir->isValid()) {
        *error = QStringLiteral("cannot create a staging folder in '%1': %2")
                     .arg(target, dir->errorString());
        return {};
    }
    const QString path = dir->path();
    m_staging.emplace(target, std::move(dir));
    return path;
}

QString StagedFiles::pathFor(const QString &target, QString *error)
{
    const QFileInfo info(target);
    const QString folder = folderFor(info.path(), error);
    return folder.isEmpty() ? QString() : folder + QLatin1Char('/') + info.fileName();
}

bool StagedFiles::commit(QString *error)
{
    QStringList done;
    for (const auto &[target, dir] : m_staging) {
        const QStringList files
            = QDir(dir->path())
                  .entryList(QDir::Files | QDir::Hidden | QDir::NoDotAndDotDot, QDir::Name);
        for (const QString &f : files) {
            const QString from = dir->path() + QLatin1Char('/') + f;
            const QString to = target + QLatin1Char('/') + f;
            if (std::rename(QFile::encodeName(from).constData(), QFile::encodeName(to).constData())
                != 0) {
                const QString why = QString::fromLocal8Bit(std::strerror(errno));
                *error = QStringLiteral("cannot move '%1' into place (%2); %3")
                             .arg(to, why,
                                  done.isEmpty() ? QStringLiteral("no file of the set was written")
                                                 : QStringLiteral("already written: %1")
                                                       .arg(done.join(QStringLiteral(", "))));
                return false;
            }
            done << to;
        }
    }
    m_committed = true;
    return true;
}

} // namespace attn::cli
