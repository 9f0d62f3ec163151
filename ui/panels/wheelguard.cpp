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
    const auto guardAll = [guard](const auto &widgets) {
        for (QWidget *w : widgets) {
            w->setFocusPolicy(Qt::StrongFocus);
            w->installEventFilter(guard);
        }
    };
    guardAll(root->findChildren<QComboBox *>());
    guardAll(root->findChildren<QAbstractSpinBox *>());
    guardAll(root->findChildren<QAbstractSlider *>());
}

bool WheelGuard::eventFilter(QObject *watched, QEvent *event)
{
    if (event->type() != QEvent::Wheel || !watched->isWidgetType())
        return false;
    auto *widget = static_cast<QWidget *>(watched);
    if (widget->hasFocus())
        return false; // the user chose this control: the wheel edits it
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
    return true; // never the unfocused control's value
}

} // namespace attn
