#include "gui.h"

#include <QApplication>
#include <QLabel>

namespace attn {
// Placeholder until ui/mainwindow lands: shows a label so the executable links and runs.
int runGui(const QString &sessionFile)
{
    QLabel label(QStringLiteral("Attention Lab is being built. Session: %1").arg(sessionFile));
    label.show();
    return QApplication::exec();
}
} // namespace attn
