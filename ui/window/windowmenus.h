#pragma once
// WindowMenus: the main window's own actions and its menu bar. File (sessions, tensors,
// exports, quit), Edit (undo/redo, the parameter shortcuts: Ctrl+K scale, Ctrl+M mask,
// Ctrl+]/[ d_k, Ctrl+R seed, F5 recompute, Ctrl+T timing), View (modes, the attention tabs,
// heads, zoom, docks, reset layout, full screen, presentation mode) and Help (shortcuts, What's
// This, About). The actions of the controllers (sessions, tensors, heatmap exports) are theirs;
// this class orders them in the menus.

#include <QKeySequence>
#include <QList>
#include <QObject>

class QAction;

namespace attn {

class MainWindow;
class TimingChart;

class WindowMenus : public QObject
{
    Q_OBJECT
public:
    /// Builds the actions and fills `window`'s menu bar; `timing` is the chart Ctrl+T runs.
    WindowMenus(MainWindow *window, TimingChart *timing);

    /// Leaves full screen (View → Full Screen unchecked); nothing when not in full screen.
    void leaveFullScreen();

public slots:
    /// Help → About Attention Lab: version, the paper, Eigen's and Qt's versions.
    void showAbout();

private:
    /// An action with `text`, `shortcut` (may be empty) and status tip `tip`.
    QAction *makeAction(const QString &text, const QKeySequence &shortcut, const QString &tip);
    void createMenus();

    MainWindow *m_window;
    TimingChart *m_timing;
    QAction *m_fullScreen = nullptr;
    QAction *m_quit = nullptr;
    QList<QAction *> m_editActions; ///< Edit menu after undo/redo; nullptr = separator
    QList<QAction *> m_viewActions; ///< View menu, the heads part
    QAction *m_attentionMode = nullptr;
    QAction *m_experimentsMode = nullptr;
    QAction *m_trainingMode = nullptr;
    QAction *m_resetLayout = nullptr;
    QList<QAction *> m_helpActions; ///< Help menu; nullptr = separator
};

} // namespace attn
