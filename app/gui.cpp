#include "gui.h"

#include "ui/window/mainwindow.h"
#include "ui/window/tensorcontroller.h"

#include <QApplication>
#include <QSettings>
#include <QTimer>

namespace attn {

int runGui(const QString &sessionFile, const QString &tensorFile)
{
    MainWindow window;
    {
        // Last geometry, dock layout, parameters, view and recent files (saved on close).
        QSettings settings;
        window.restoreSettings(settings);
    }
    window.show();
    if (!sessionFile.isEmpty()) {
        // After the window is up, so the message has a parent on screen.
        QTimer::singleShot(0, &window, [&window, sessionFile] { window.openSession(sessionFile); });
    }
    if (!tensorFile.isEmpty()) {
        QTimer::singleShot(0, &window,
                           [&window, tensorFile] { window.tensorController()->open(tensorFile); });
    }
    return QApplication::exec();
}

} // namespace attn
