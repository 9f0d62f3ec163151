#include "ui/window/presentationmode.h"

#include "ui/window/windowlayout.h"

#include <QAction>
#include <QLabel>
#include <QMainWindow>
#include <QMenuBar>
#include <QShortcut>
#include <QStatusBar>
#include <QTabBar>
#include <QTabWidget>
#include <QTimer>

#include <cmath>

namespace attn {

PresentationMode::PresentationMode(QMainWindow *window, WindowLayout *layout, QTabWidget *modes)
    : QObject(window)
    , m_window(window)
    , m_layout(layout)
    , m_modes(modes)
    , m_action(new QAction(tr("&Presentation Mode"), this))
    , m_escape(new QShortcut(QKeySequence(Qt::Key_Escape), window))
    , m_hint(new QLabel(window))
    , m_hintTimer(new QTimer(this))
{
    setObjectName(QStringLiteral("presentationMode"));
    m_action->setObjectName(QStringLiteral("presentationAction"));
    m_action->setCheckable(true);
    m_action->setShortcut(QKeySequence(tr("Ctrl+Shift+P")));
    m_action->setStatusTip(tr("The current view fills the window with larger text, the panels "
                              "and bars hidden (Esc leaves)"));
    // On the window as well as in the View menu: the shortcut works while the menu bar is hidden.
    window->addAction(m_action);
    connect(m_action, &QAction::toggled, this, &PresentationMode::setActive);

    m_escape->setObjectName(QStringLiteral("presentationEscape"));
    m_escape->setContext(Qt::WindowShortcut);
    m_escape->setEnabled(false);
    connect(m_escape, &QShortcut::activated, this, &PresentationMode::leave);

    m_hint->setObjectName(QStringLiteral("presentationHint"));
    m_hint->setText(tr("Presentation mode \u2014 Esc or %1 leaves")
                        .arg(m_action->shortcut().toString(QKeySequence::NativeText)));
    m_hint->setStyleSheet(QStringLiteral("QLabel { background: rgba(0, 0, 0, 170); color: white; "
                                         "padding: 6px 14px; border-radius: 4px; }"));
    m_hint->setAttribute(Qt::WA_TransparentForMouseEvents);
    m_hint->hide();
    m_hintTimer->setSingleShot(true);
    m_hintTimer->setInterval(3000);
    connect(m_hintTimer, &QTimer::timeout, m_hint, &QWidget::hide);
}

void PresentationMode::setActive(bool active)
{
    if (active == m_active)
        return;
    m_active = active;
    if (active)
        enter();
    else
        restore();
    if (m_action->isChecked() != active)
        m_action->setChecked(active); // (toggled → setActive: no-op, m_active is set)
    m_escape->setEnabled(active);
    emit activeChanged(active);
}

void PresentationMode::enter()
{
    m_menuBarHidden = m_window->menuBar()->isHidden();
    m_statusBarHidden = m_window->statusBar()->isHidden();
    m_modeTabsHidden = m_modes->tabBar()->isHidden();
    m_ownFont = m_modes->testAttribute(Qt::WA_SetFont);
    m_font = m_modes->font();

    m_layout->hideDocks(WindowLayout::DocksHiddenFor::Presentation);
    m_window->menuBar()->hide();
    m_window->statusBar()->hide();
    m_modes->tabBar()->hide();
    QFont large = m_font;
    if (large.pointSizeF() > 0)
        large.setPointSizeF(m_font.pointSizeF() * fontScale);
    else
        large.setPixelSize(int(std::lround(m_font.pixelSize() * fontScale)));
    m_modes->setFont(large);

    m_hint->adjustSize();
    m_hint->move((m_window->width() - m_hint->width()) / 2, 12);
    m_hint->raise();
    m_hint->show();
    m_hintTimer->start();
}

void PresentationMode::restore()
{
    m_hintTimer->stop();
    m_hint->hide();
    // A default-constructed font has no attributes of its own: the centre inherits again.
    m_modes->setFont(m_ownFont ? m_font : QFont());
    m_modes->tabBar()->setVisible(!m_modeTabsHidden);
    m_window->statusBar()->setVisible(!m_statusBarHidden);
    m_window->menuBar()->setVisible(!m_menuBarHidden);
    m_layout->restoreDocks(WindowLayout::DocksHiddenFor::Presentation);
}

} // namespace attn
