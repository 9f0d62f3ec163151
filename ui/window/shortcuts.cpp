#include "ui/window/shortcuts.h"

#include <QAction>
#include <QApplication>
#include <QDialog>
#include <QDialogButtonBox>
#include <QHeaderView>
#include <QKeyEvent>
#include <QKeySequence>
#include <QLabel>
#include <QMainWindow>
#include <QMenu>
#include <QMenuBar>
#include <QTreeWidget>
#include <QVBoxLayout>

namespace attn {

WindowShortcuts::WindowShortcuts(QMainWindow *window)
    : QObject(window)
    , m_window(window)
{
    setObjectName(QStringLiteral("windowShortcuts"));
    qApp->installEventFilter(this);
}

WindowShortcuts::~WindowShortcuts()
{
    qApp->removeEventFilter(this);
}

QList<QAction *> WindowShortcuts::actions() const
{
    QList<QAction *> actions;
    for (QAction *menuAction : m_window->menuBar()->actions()) {
        QMenu *menu = menuAction->menu();
        if (!menu)
            continue;
        for (QAction *a : menu->actions()) {
            if (!a->isSeparator() && !a->shortcut().isEmpty())
                actions.append(a);
        }
    }
    return actions;
}

bool WindowShortcuts::isWindowShortcut(const QKeySequence &key) const
{
    if (key.count() != 1)
        return false;
    const QKeyCombination combination = key[0];
    const Qt::Key k = combination.key();
    const bool functionKey = k >= Qt::Key_F1 && k <= Qt::Key_F35;
    if (!functionKey
        && !(combination.keyboardModifiers()
             & (Qt::ControlModifier | Qt::AltModifier | Qt::MetaModifier)))
        return false; // typing: the editor's
    for (const QKeySequence::StandardKey editing :
         {QKeySequence::Undo, QKeySequence::Redo, QKeySequence::Cut, QKeySequence::Copy,
          QKeySequence::Paste, QKeySequence::SelectAll, QKeySequence::Delete}) {
        if (QKeySequence::keyBindings(editing).contains(key))
            return false;
    }
    for (const QAction *a : actions()) {
        if (a->isEnabled() && a->shortcuts().contains(key))
            return true;
    }
    return false;
}

bool WindowShortcuts::eventFilter(QObject *watched, QEvent *event)
{
    if (event->type() != QEvent::ShortcutOverride || !watched->isWidgetType())
        return false;
    // Only editors of this window (docks may float: follow the parents, not window()).
    const QObject *o = watched;
    while (o && o != m_window)
        o = o->parent();
    if (!o)
        return false;
    const auto *key = static_cast<QKeyEvent *>(event);
    if (!isWindowShortcut(QKeySequence(key->keyCombination())))
        return false;
    event->ignore(); // not overridden: the shortcut map triggers the action
    return true;
}

void WindowShortcuts::showDialog()
{
    QDialog dialog(m_window);
    dialog.setWindowTitle(tr("Keyboard Shortcuts"));
    auto *layout = new QVBoxLayout(&dialog);
    auto *tree = new QTreeWidget(&dialog);
    tree->setColumnCount(2);
    tree->setHeaderLabels({tr("Action"), tr("Shortcut")});
    tree->setAlternatingRowColors(true);
    auto addGroup = [tree](const QString &name) {
        auto *group = new QTreeWidgetItem(tree, {name});
        QFont bold = group->font(0);
        bold.setBold(true);
        group->setFont(0, bold);
        group->setFirstColumnSpanned(true);
        return group;
    };
    const QList<QAction *> withShortcut = actions();
    for (QAction *menuAction : m_window->menuBar()->actions()) {
        QMenu *menu = menuAction->menu();
        if (!menu)
            continue;
        QString menuName = menuAction->text();
        menuName.remove(QLatin1Char('&'));
        QTreeWidgetItem *group = addGroup(menuName);
        for (QAction *a : menu->actions()) {
            if (!withShortcut.contains(a))
                continue;
            QString name = a->text();
            name.remove(QLatin1Char('&'));
            auto *item = new QTreeWidgetItem(
                group, {name, a->shortcut().toString(QKeySequence::NativeText)});
            item->setToolTip(0, a->statusTip());
        }
    }
    QTreeWidgetItem *mouse = addGroup(tr("Heatmaps"));
    new QTreeWidgetItem(mouse, {tr("Enlarge a head / back to the grid"), tr("Click a tile")});
    new QTreeWidgetItem(mouse, {tr("Head, query, key, weight and score"), tr("Hover a cell")});
    new QTreeWidgetItem(mouse, {tr("Zoom in / out around the pointer"), tr("Mouse wheel")});
    new QTreeWidgetItem(mouse, {tr("Zoom in / out"), tr("+ / − over the heatmaps")});
    new QTreeWidgetItem(mouse, {tr("Pan a zoomed heatmap"), tr("Drag, or the arrow keys")});
    new QTreeWidgetItem(mouse, {tr("Show every cell again"), tr("0 or Home")});
    tree->expandAll();
    auto *note = new QLabel(tr("In the controls, Alt + the underlined letter moves the focus to "
                               "a control; arrow keys and Page Up/Down move sliders."),
                            &dialog);
    note->setWordWrap(true);
    tree->header()->setSectionResizeMode(0, QHeaderView::ResizeToContents);
    tree->header()->setStretchLastSection(true);
    layout->addWidget(tree);
    layout->addWidget(note);
    auto *buttons = new QDialogButtonBox(QDialogButtonBox::Close, &dialog);
    connect(buttons, &QDialogButtonBox::rejected, &dialog, &QDialog::reject);
    layout->addWidget(buttons);
    dialog.resize(520, 600);
    dialog.exec();
}

} // namespace attn
