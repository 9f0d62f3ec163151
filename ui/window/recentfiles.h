#pragma once
// RecentFiles: the File → Open Recent list (newest first, at most maxCount entries, no
// duplicates), stored in QSettings under "recentFiles" and shown as a menu of numbered actions.

#include <QObject>
#include <QStringList>

class QMenu;
class QSettings;

namespace attn {

class RecentFiles : public QObject
{
    Q_OBJECT
public:
    static constexpr int maxCount = 10;

    explicit RecentFiles(QObject *parent = nullptr);
    ~RecentFiles() override;

    QStringList files() const { return m_files; }
    /// Puts `path` (made absolute) first; drops the oldest beyond maxCount.
    void add(const QString &path);
    void remove(const QString &path);
    void clear();

    /// Reads the list from `settings` ("recentFiles"); entries that no longer exist are dropped.
    void load(const QSettings &settings);
    void save(QSettings &settings) const;

    /// The Open Recent menu; rebuilt on every change. Owned by this object.
    QMenu *menu() const { return m_menu; }

signals:
    /// An entry of the menu was chosen.
    void openRequested(const QString &path);
    void changed();

private:
    void set(const QStringList &files);
    void rebuildMenu();

    QStringList m_files;
    QMenu *m_menu;
};

} // namespace attn
