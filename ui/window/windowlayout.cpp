#include "ui/window/windowlayout.h"

#include <QDockWidget>
#include <QGuiApplication>
#include <QMainWindow>
#include <QResizeEvent>
#include <QScreen>
#include <QScrollArea>
#include <QSettings>
#include <QStyle>
#include <QTimer>

#include <algorithm>

namespace attn {

WindowLayout::WindowLayout(QMainWindow *window)
    : QObject(window)
    , m_window(window)
{
    setObjectName(QStringLiteral("windowLayout"));
}

QScrollArea *WindowLayout::scrollable(QWidget *content)
{
    auto *scroll = new QScrollArea;
    scroll->setObjectName(content->objectName() + QStringLiteral("Scroll"));
    scroll->setWidget(content);
    scroll->setWidgetResizable(true);
    scroll->setFrameShape(QFrame::NoFrame);
    return scroll;
}

QDockWidget *WindowLayout::addDock(QWidget *widget, const QString &title, const QString &objectName,
                                   Qt::DockWidgetArea area)
{
    auto *dock = new QDockWidget(title, m_window);
    dock->setObjectName(objectName);
    dock->setWidget(widget);
    dock->setFeatures(QDockWidget::DockWidgetClosable | QDockWidget::DockWidgetMovable
                      | QDockWidget::DockWidgetFloatable);
    m_window->addDockWidget(area, dock);
    m_docks.append(dock);
    return dock;
}

void WindowLayout::stackRightColumn(QDockWidget *max, QDockWidget *jacobian, QDockWidget *row,
                                    QDockWidget *timing)
{
    m_window->tabifyDockWidget(row, timing);
    row->raise();
    // A short screen (e.g. 1600 × 900, 1280 × 800): the two sweep charts share a place as tabs.
    m_shortScreen = sizeHint().height() < 900;
    if (m_shortScreen) {
        m_window->tabifyDockWidget(max, jacobian);
        max->raise();
    }
    m_maxDock = max;
    m_jacobianDock = jacobian;
    m_rowDock = row;
}

void WindowLayout::captureDefaultLayout()
{
    m_defaultLayout = m_window->saveState();
}

QSize WindowLayout::sizeHint() const
{
    QSize size(1500, 950);
    const QScreen *s = m_window->isVisible() && m_window->screen()
        ? m_window->screen()
        : QGuiApplication::primaryScreen();
    if (s) {
        const QRect available = s->availableGeometry();
        size = size.boundedTo(QSize(available.width() * 9 / 10, available.height() * 9 / 10));
    }
    return size;
}

void WindowLayout::fitToScreen()
{
    const QScreen *s = m_window->isVisible() && m_window->screen()
        ? m_window->screen()
        : QGuiApplication::primaryScreen();
    m_window->resize(sizeHint());
    if (s) {
        QRect r(QPoint(0, 0), m_window->size());
        r.moveCenter(s->availableGeometry().center());
        m_window->move(r.topLeft());
    }
}

void WindowLayout::clampToScreen()
{
    if (m_window->isMaximized() || m_window->isFullScreen())
        return;
    const QRect frame = m_window->frameGeometry();
    QScreen *s = QGuiApplication::screenAt(frame.center());
    if (!s)
        s = QGuiApplication::primaryScreen();
    if (!s)
        return;
    const QRect available = s->availableGeometry();
    // The frame (title bar, borders) counts: the client size shrinks by the same amount.
    const QSize decoration = frame.size() - m_window->size();
    const QSize client = m_window->size().boundedTo(available.size() - decoration);
    if (client != m_window->size())
        m_window->resize(client);
    QRect r(frame.topLeft(), client + decoration);
    if (r.right() > available.right())
        r.moveRight(available.right());
    if (r.bottom() > available.bottom())
        r.moveBottom(available.bottom());
    if (r.left() < available.left())
        r.moveLeft(available.left());
    if (r.top() < available.top())
        r.moveTop(available.top());
    if (r.topLeft() != frame.topLeft())
        m_window->move(r.topLeft());
}

int WindowLayout::defaultControlsWidth(int windowWidth) const
{
    // 330 | centre | 520 pixels on a large screen; on a smaller one the side columns shrink
    // with the window (left: room for the controls when it can), the centre keeps at least
    // about 41 % of the width.
    const int scrollBar = m_window->style()->pixelMetric(QStyle::PM_ScrollBarExtent) + 4;
    int wantLeft = 0;
    for (const QWidget *content : m_leftContents)
        wantLeft = std::max(wantLeft, content->minimumSizeHint().width());
    return std::min(std::max(330, wantLeft + scrollBar), windowWidth * 28 / 100);
}

void WindowLayout::applyDefaultDockSizes()
{
    if (m_docks.isEmpty() || !m_maxDock)
        return;
    const int w = m_window->width();
    m_window->resizeDocks({m_docks.constFirst()}, {defaultControlsWidth(w)}, Qt::Horizontal);
    m_window->resizeDocks({m_maxDock}, {std::min(520, w * 31 / 100)}, Qt::Horizontal);
    const int h = m_window->height();
    if (m_shortScreen)
        m_window->resizeDocks({m_maxDock, m_rowDock}, {h * 45 / 100, h * 55 / 100}, Qt::Vertical);
    else
        m_window->resizeDocks({m_maxDock, m_jacobianDock, m_rowDock},
                              {h * 29 / 95, h * 29 / 95, h * 33 / 95}, Qt::Vertical);
}

void WindowLayout::clampDockWidths()
{
    if (m_docks.isEmpty() || !m_maxDock)
        return;
    const int w = m_window->width();
    const int leftMax = std::max(defaultControlsWidth(w), w * 30 / 100);
    const int rightMax = std::max(std::min(520, w * 31 / 100), w * 33 / 100);
    for (QDockWidget *dock : std::as_const(m_docks)) {
        if (!dock->isVisible() || dock->isFloating())
            continue;
        const Qt::DockWidgetArea area = m_window->dockWidgetArea(dock);
        const int most = area == Qt::LeftDockWidgetArea ? leftMax
            : area == Qt::RightDockWidgetArea           ? rightMax
                                                        : 0;
        // Resizing one dock of a column resizes the whole column.
        if (most > 0 && dock->width() > most)
            m_window->resizeDocks({dock}, {most}, Qt::Horizontal);
    }
}

void WindowLayout::windowShown()
{
    if (m_clampOnShow) {
        m_clampOnShow = false;
        clampToScreen();
    }
    if (m_initialSizes) {
        applyDefaultDockSizes();
        m_initialSizes = false;
    }
    if (m_clampDocksOnShow) {
        m_clampDocksOnShow = false;
        clampDockWidths();
        // The docks take their restored widths once the window is laid out at its real size
        // (a window manager may apply it later): clamp again then.
        QTimer::singleShot(100, this, [this] { clampDockWidths(); });
    }
}

void WindowLayout::windowResized(const QResizeEvent *event)
{
    const QSize old = event->oldSize();
    const int w = event->size().width();
    // A window made very small squeezes the docks to their minimum; QMainWindow gives all the
    // room of a later enlargement to the centre. A width the user chose that is wider stays.
    if (m_initialSizes || !old.isValid() || w < old.width() * 5 / 4 || m_docks.isEmpty()
        || !m_maxDock)
        return;
    QDockWidget *left = m_docks.constFirst();
    if (left->isVisible() && !left->isFloating() && left->width() < defaultControlsWidth(w))
        m_window->resizeDocks({left}, {defaultControlsWidth(w)}, Qt::Horizontal);
    const int right = std::min(520, w * 31 / 100);
    if (m_maxDock->isVisible() && !m_maxDock->isFloating() && m_maxDock->width() < right)
        m_window->resizeDocks({m_maxDock}, {right}, Qt::Horizontal);
}

void WindowLayout::reset()
{
    if (m_window->isMaximized() || m_window->isMinimized())
        m_window->showNormal();
    m_attentionLayout.clear();
    m_hiddenFor = 0;
    for (QDockWidget *dock : std::as_const(m_docks))
        dock->setFloating(false);
    m_window->restoreState(m_defaultLayout);
    fitToScreen();
    applyDefaultDockSizes();
    // A window manager may apply the new size later: size the docks again once it has.
    QTimer::singleShot(100, this, [this] { applyDefaultDockSizes(); });
}

void WindowLayout::hideDocks(DocksHiddenFor reason)
{
    const bool shown = m_hiddenFor == 0;
    m_hiddenFor |= int(reason);
    if (!shown)
        return; // already hidden (from one whole-window mode to another, or presenting)
    m_attentionLayout = m_window->saveState();
    for (QDockWidget *dock : std::as_const(m_docks))
        dock->hide();
}

void WindowLayout::restoreDocks(DocksHiddenFor reason)
{
    if (!(m_hiddenFor & int(reason)))
        return;
    m_hiddenFor &= ~int(reason);
    if (m_hiddenFor != 0 || m_attentionLayout.isEmpty())
        return; // another reason keeps them hidden
    m_window->restoreState(m_attentionLayout);
    m_attentionLayout.clear();
}

void WindowLayout::restoreSettings(QSettings &settings)
{
    settings.beginGroup(QStringLiteral("window"));
    const QByteArray geometry = settings.value(QStringLiteral("geometry")).toByteArray();
    const QByteArray state = settings.value(QStringLiteral("state")).toByteArray();
    settings.endGroup();
    if (!geometry.isEmpty() && m_window->restoreGeometry(geometry)) {
        clampToScreen(); // saved on a larger screen: fit this one
        m_clampOnShow = true; // again once the frame (title bar, borders) is known
    }
    if (!state.isEmpty() && m_window->restoreState(state)) {
        m_initialSizes = false; // the saved dock sizes win over the defaults,
        m_clampDocksOnShow = true; // within a share of this window's width
    }
}

void WindowLayout::saveSettings(QSettings &settings) const
{
    settings.beginGroup(QStringLiteral("window"));
    settings.setValue(QStringLiteral("geometry"), m_window->saveGeometry());
    // In the experiments mode the docks are hidden: keep the attention view's layout.
    settings.setValue(QStringLiteral("state"),
                      m_attentionLayout.isEmpty() ? m_window->saveState() : m_attentionLayout);
    settings.endGroup();
}

} // namespace attn
