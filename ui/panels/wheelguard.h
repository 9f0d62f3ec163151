#pragma once
// WheelGuard: the mouse wheel over a panel that scrolls scrolls the panel, not the control
// that happens to pass under the pointer. Combo boxes, spin boxes and sliders under a root
// widget take the keyboard focus only by click or Tab (Qt::StrongFocus) and take wheel events
// only while they have the focus; otherwise the wheel goes to the enclosing
// QAbstractScrollArea's viewport (or, outside a scroll area, nowhere). The usual desktop habit
// (KDE's and macOS's "scroll the view, not the value").

#include <QObject>

class QWidget;

namespace attn {

class WheelGuard : public QObject
{
    Q_OBJECT
public:
    /// Guards every QComboBox, QAbstractSpinBox and QAbstractSlider under `root` (existing
    /// children only). The guard is a child of `root`.
    static void install(QWidget *root);

protected:
    bool eventFilter(QObject *watched, QEvent *event) override;

private:
    using QObject::QObject;
};

} // namespace attn
