#include "gui.h"

#include <mainwindow.h>

#include <QApplication>
#include <QTimer>

namespace attn {

int runGui(const QString &sessionFile)
{
    MainWindow window;
    window.show();
    if (!sessionFile.isEmpty()) {
        // After the window is up, so the message has a parent on screen.
        QTimer::singleShot(0, &window, [&window, sessionFile] { window.openSession(sessionFile); });
    }
    return QApplication::exec();
}

} // namespace attn
