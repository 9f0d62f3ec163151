#include "gui.h"

#include "ui/window/mainwindow.h"
#include "ui/window/sessioncontroller.h"
#include "ui/window/tensorcontroller.h"
#include "ui/window/tour.h"

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
        // A first start opens on the lesson, unless a file given on the command line replaces it.
        if (!SessionController::hasLastSession(settings) && sessionFile.isEmpty()
            && tensorFile.isEmpty())
            window.showFirstLesson();
    }
    window.show();
    {
        // The guided tour, once: on a first start without a file given on the command line.
        QSettings settings;
        if (Tour::shouldStartAutomatically(settings,
                                           !sessionFile.isEmpty() || !tensorFile.isEmpty())) {
            settings.setValue(QLatin1String(Tour::shownKey), true);
            QTimer::singleShot(500, &window, [&window] { window.tour()->start(); });
        }
    }
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
