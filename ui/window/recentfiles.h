#pragma once
// RecentFiles: the File → Open Recent list (newest first, at most maxCount entries, no
// duplicates), stored in QSettings under "recentFiles" and shown as a menu of numbered actions.

#include <QObject>
#include <QStringList>

#include <functional>

class QMenu;
class QSettings;

namespace attn {

class RecentFiles : public QObject
{
    Q_OBJECT
public:
    static constexpr int maxCount = 10;

    explicit RecentFiles(QObject *parent = nullptr);
    /// A list stored under `settingsKey`, its menu titled `menuTitle` (e.g. the recent model
    /// folders: "recentModels", "Recent &Models").
    RecentFiles(const QString &settingsKey, const QString &menuTitle, QObject *parent = nullptr);
    ~RecentFiles() override;

    /// How an entry is named in the menu (default: its file name) and what an empty menu says.
    void setLabels(std::function<QString(const QString &)> label, const QString &emptyText);

    QStringList files() const { return m_files; }
    /// Puts `path` (made absolute) first; drops the oldest beyond maxCount.
    void add(const QString &path);
    void remove(const QString &path);
    void clear();

    /// Reads the list from `settings` (key "recentFiles" unless given); entries that no longer
    /// exist are dropped.
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

    QString m_settingsKey;
    std::function<QString(const QString &)> m_label;
    QString m_emptyText;
    QStringList m_files;
    QMenu *m_menu;
};

} // namespace attn
