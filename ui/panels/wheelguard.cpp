#include "ui/panels/wheelguard.h"

#include <QAbstractScrollArea>
#include <QAbstractSlider>
#include <QAbstractSpinBox>
#include <QComboBox>
#include <QCoreApplication>
#include <QWheelEvent>

namespace attn {

void WheelGuard::install(QWidget *root)
{
    auto *guard = new WheelGuard(root);
    guard->setObjectName(QStringLiteral("wheelGuard"));
    guard->m_root = root;
    const auto guardAll = [guard](const auto &widgets) {
        for (QWidget *w : widgets) {
            w->setFocusPolicy(Qt::StrongFocus);
            w->installEventFilter(guard);
        }
    };
    guardAll(root->findChildren<QComboBox *>());
    guardAll(root->findChildren<QAbstractSpinBox *>());
    guardAll(root->findChildren<QAbstractSlider *>());
    // Wheel events over the labels and margins propagate up to the root: they scroll the panel
    // too, so they end the operation of the focused control.
    root->installEventFilter(guard);
}

bool WheelGuard::eventFilter(QObject *watched, QEvent *event)
{
    if (!watched->isWidgetType())
        return false;
    auto *widget = static_cast<QWidget *>(watched);
    if (widget == m_root) {
        if (event->type() == QEvent::Wheel)
            m_operated = nullptr;
        return false;
    }
    switch (event->type()) {
    case QEvent::FocusIn:
    case QEvent::MouseButtonPress:
    case QEvent::KeyPress:
        m_operated = widget; // the user chose this control
        return false;
    case QEvent::Wheel:
        break;
    default:
        return false;
    }
    if (widget->hasFocus() && m_operated == widget)
        return false; // the user is operating this control: the wheel edits it
    m_operated = nullptr; // the wheel scrolls the panel from here on
    auto *wheel = static_cast<QWheelEvent *>(event);
    for (QWidget *p = widget->parentWidget(); p; p = p->parentWidget()) {
        auto *area = qobject_cast<QAbstractScrollArea *>(p);
        if (!area)
            continue;
        QWidget *viewport = area->viewport();
        const QPointF pos = viewport->mapFromGlobal(wheel->globalPosition());
        QWheelEvent forwarded(pos, wheel->globalPosition(), wheel->pixelDelta(),
                              wheel->angleDelta(), wheel->buttons(), wheel->modifiers(),
                              wheel->phase(), wheel->inverted(), wheel->source(),
                              wheel->pointingDevice());
        QCoreApplication::sendEvent(viewport, &forwarded);
        break;
    }
    return true; // never the value of a control the user is not operating
}

} // namespace attn
