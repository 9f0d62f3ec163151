#include "ui/window/recentfiles.h"

#include <QAction>
#include <QDir>
#include <QFileInfo>
#include <QMenu>
#include <QSettings>

namespace attn {

namespace {

QString normalized(const QString &path)
{
    return QDir::cleanPath(QFileInfo(path).absoluteFilePath());
}

} // namespace

RecentFiles::RecentFiles(QObject *parent)
    : RecentFiles(QStringLiteral("recentFiles"), tr("Open &Recent"), parent)
{ }

RecentFiles::RecentFiles(const QString &settingsKey, const QString &menuTitle, QObject *parent)
    : QObject(parent)
    , m_settingsKey(settingsKey)
    , m_menu(new QMenu(menuTitle))
{
    m_menu->setObjectName(QStringLiteral("recentFilesMenu"));
    m_menu->setIcon(QIcon::fromTheme(QStringLiteral("document-open-recent")));
    m_menu->setToolTipsVisible(true);
    rebuildMenu();
}

RecentFiles::~RecentFiles()
{
    delete m_menu;
}

void RecentFiles::setLabels(std::function<QString(const QString &)> label, const QString &emptyText)
{
    m_label = std::move(label);
    m_emptyText = emptyText;
    rebuildMenu();
}

void RecentFiles::set(const QStringList &files)
{
    if (files == m_files)
        return;
    m_files = files;
    rebuildMenu();
    emit changed();
}

void RecentFiles::add(const QString &path)
{
    if (path.isEmpty())
        return;
    const QString file = normalized(path);
    QStringList files = m_files;
    files.removeAll(file);
    files.prepend(file);
    while (files.size() > maxCount)
        files.removeLast();
    set(files);
}

void RecentFiles::remove(const QString &path)
{
    QStringList files = m_files;
    files.removeAll(normalized(path));
    set(files);
}

void RecentFiles::clear()
{
    set({});
}

void RecentFiles::load(const QSettings &settings)
{
    QStringList files;
    for (const QString &f : settings.value(m_settingsKey).toStringList()) {
        const QString file = normalized(f);
        if (QFileInfo::exists(file) && !files.contains(file) && files.size() < maxCount)
            files.append(file);
    }
    set(files);
}

void RecentFiles::save(QSettings &settings) const
{
    settings.setValue(m_settingsKey, m_files);
}

void RecentFiles::rebuildMenu()
{
    m_menu->clear();
    int index = 1;
    for (const QString &file : std::as_const(m_files)) {
        QString label = m_label ? m_label(file) : QFileInfo(file).fileName();
        label.replace(QLatin1Char('&'), QLatin1String("&&"));
        if (index <= 9)
            label = QStringLiteral("&%1 %2").arg(index).arg(label);
        QAction *a = m_menu->addAction(label);
        a->setToolTip(QDir::toNativeSeparators(file));
        a->setStatusTip(tr("Open %1").arg(QDir::toNativeSeparators(file)));
        a->setData(file);
        connect(a, &QAction::triggered, this, [this, file] { emit openRequested(file); });
        ++index;
    }
    if (m_files.isEmpty()) {
        QAction *none
            = m_menu->addAction(m_emptyText.isEmpty() ? tr("No recent files") : m_emptyText);
        none->setEnabled(false);
    } else {
        m_menu->addSeparator();
        QAction *clearAction = m_menu->addAction(tr("&Clear Menu"));
        clearAction->setStatusTip(tr("Forget the recently used sessions"));
        connect(clearAction, &QAction::triggered, this, &RecentFiles::clear);
    }
}

} // namespace attn
