#pragma once
// PresentationMode: View → Presentation Mode (Ctrl+Shift+P) for a lecture. The current view
// gets the whole window: the docks, the menu bar, the status bar and the mode tabs' bar are
// hidden, and the centre's font is fontScale times larger (the heatmaps, the Steps and A/B
// panels and their controls take their text size from it). Esc or the same shortcut leaves it;
// everything comes back as it was (the dock layout through WindowLayout, the bars' visibility,
// the centre's own font or none). The action stays on the window, so its shortcut works while
// the menu bar is hidden.

#include <QFont>
#include <QObject>

class QAction;
class QLabel;
class QMainWindow;
class QShortcut;
class QTabWidget;
class QTimer;

namespace attn {

class WindowLayout;

class PresentationMode : public QObject
{
    Q_OBJECT
public:
    /// The centre's font size in presentation, relative to its size outside it.
    static constexpr qreal fontScale = 1.5;

    /// `window`, its `layout` and its centre `modes` (the mode tabs) are not owned.
    PresentationMode(QMainWindow *window, WindowLayout *layout, QTabWidget *modes);

    /// The checkable View-menu action (Ctrl+Shift+P).
    QAction *action() const { return m_action; }
    bool isActive() const { return m_active; }
    /// The hint shown for a few seconds on entering ("Esc leaves").
    QLabel *hint() const { return m_hint; }

public slots:
    /// Enters (true) or leaves (false) presentation mode; nothing when already so.
    void setActive(bool active);
    void leave() { setActive(false); }

signals:
    void activeChanged(bool active);

private:
    void enter();
    void restore();

    QMainWindow *m_window;
    WindowLayout *m_layout;
    QTabWidget *m_modes;
    QAction *m_action;
    QShortcut *m_escape;
    QLabel *m_hint;
    QTimer *m_hintTimer;
    bool m_active = false;
    // What enter() changed, as it was before.
    bool m_menuBarHidden = false;
    bool m_statusBarHidden = false;
    bool m_modeTabsHidden = false;
    bool m_ownFont = false; ///< the centre had a font of its own (else it inherits one)
    QFont m_font;
};

} // namespace attn
