#pragma once
// What the main window tests share (tst_mainwindow_controls.cpp: the Controls panel and the
// session; _export: File → Export; _views: the views and chart docks; _layout: docks and layout
// at window sizes; _tour: the guided tour and presentation mode; _menus: menus, shortcuts, undo
// and files): a window made and shown before each test function and deleted after it, its first
// result, and the Controls panel's widgets by name.

#include "testutil.h"
#include "ui/panels/controlpanel.h"
#include "ui/session/attentionsession.h"
#include "ui/session/sessioncompute.h"
#include "ui/window/mainwindow.h"
#include "ui/window/windowlayout.h"

#include <QCheckBox>
#include <QComboBox>
#include <QLabel>
#include <QObject>
#include <QSignalSpy>
#include <QSlider>
#include <QSpinBox>
#include <QTest>

#include <memory>

namespace mainwindowtest {

using ResultPtr = std::shared_ptr<const attn::SessionResult>;

/// The base of the main window test classes: their init() calls openWindow(), their cleanup()
/// closeWindow(), so each test function starts with a new window.
class MainWindowTest : public QObject
{
protected:
    /// Makes and shows the window, and waits until it is exposed.
    void openWindow()
    {
        m_window = std::make_unique<attn::MainWindow>();
        m_window->show();
        QVERIFY(QTest::qWaitForWindowExposed(m_window.get()));
    }

    void closeWindow() { m_window.reset(); }

    /// Waits for the window's first result (the defaults).
    ResultPtr waitForFirstResult()
    {
        attn::AttentionSession *session = m_window->session();
        if (!session->result()) {
            QSignalSpy spy(session, &attn::AttentionSession::resultChanged);
            if (!spy.wait(attn::test::kWorkTimeoutMs))
                return nullptr;
        }
        // Let the coalesced redraws run.
        QTest::qWait(50);
        return session->result();
    }

    /// Gives the session the parameters `p` and waits for their result; false when it does not
    /// come in time.
    bool showParameters(const attn::SessionParameters &p)
    {
        m_window->session()->setParameters(p);
        return QTest::qWaitFor(
            [&] {
                const ResultPtr r = m_window->session()->result();
                return r && r->params == p;
            },
            attn::test::kWorkTimeoutMs);
    }

    /// Resizes the window to `size` (what a screen opens) with the first-start dock sizes; false
    /// when the window does not take the size.
    bool resizeWithDefaultDocks(QSize size)
    {
        m_window->resize(size);
        if (!QTest::qWaitFor([&] { return m_window->size() == size; }, 5000))
            return false;
        m_window->windowLayout()->applyDefaultDockSizes();
        return true;
    }

    /// The Controls panel's widget of type T named `name`; null (with a warning) when there is
    /// none.
    template<typename T> T *control(const char *name) const
    {
        T *w = m_window->controlPanel()->findChild<T *>(QLatin1String(name));
        if (!w)
            qWarning("no control named %s", name);
        return w;
    }

    std::unique_ptr<attn::MainWindow> m_window;
};

} // namespace mainwindowtest
