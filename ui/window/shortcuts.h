#pragma once
// WindowShortcuts: the main window's keyboard shortcuts as a whole — the list of every menu
// action with a shortcut (menu order), Help → Keyboard Shortcuts (a dialog listing them and the
// heatmaps' mouse and key gestures), and an application event filter that lets the window's
// own shortcuts win over a focused editor's ShortcutOverride (QLineEdit takes Ctrl+E as "end of
// line", Ctrl+K as "delete to end of line").

#include <QList>
#include <QObject>

class QAction;
class QKeySequence;
class QMainWindow;

namespace attn {

class WindowShortcuts : public QObject
{
    Q_OBJECT
public:
    /// Reads `window`'s menu bar; installs the event filter on the application (removed by
    /// the destructor).
    explicit WindowShortcuts(QMainWindow *window);
    ~WindowShortcuts() override;

    /// Every action with a shortcut, in menu order.
    QList<QAction *> actions() const;
    /// True when `key` is the shortcut of one of the window's enabled actions that wins over a
    /// focused text field or spin box (Ctrl+E, Ctrl+Shift+E, F5, Ctrl+K, Ctrl+Page Up/Down,
    /// Ctrl+Alt+1/2/3 …): any action shortcut with Ctrl, Alt or Meta, or a function key,
    /// except the editor's own standard keys (undo, redo, cut, copy, paste, select all, delete).
    bool isWindowShortcut(const QKeySequence &key) const;

public slots:
    /// Help → Keyboard Shortcuts: a modal dialog, one group per menu, then the heatmaps'.
    void showDialog();

protected:
    bool eventFilter(QObject *watched, QEvent *event) override;

private:
    QMainWindow *m_window;
};

} // namespace attn
