#include "gui.h"

#include "cli/common.h"

#include "ui/window/mainwindow.h"
#include "ui/window/modelcontroller.h"
#include "ui/window/sessioncontroller.h"
#include "ui/window/tensorcontroller.h"
#include "ui/window/tour.h"

#include <QApplication>
#include <QSettings>
#include <QTimer>

namespace attn {

int runGui(const GuiStart &start)
{
    const QString &sessionFile = start.sessionFile;
    const QString &tensorFile = start.tensorFile;
    const bool fileGiven
        = !sessionFile.isEmpty() || !tensorFile.isEmpty() || !start.modelFolder.isEmpty();
    MainWindow window;
    {
        // Last geometry, dock layout, parameters, view and recent files (saved on close).
        QSettings settings;
        window.restoreSettings(settings);
        // A first start opens on the lesson, unless a file given on the command line replaces it.
        if (!SessionController::hasLastSession(settings) && !fileGiven)
            window.showFirstLesson();
    }
    window.show();
    {
        // The guided tour, once: on a first start without a file given on the command line.
        QSettings settings;
        if (Tour::shouldStartAutomatically(settings, fileGiven)) {
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
    if (!start.modelFolder.isEmpty()) {
        QTimer::singleShot(0, &window, [&window, start] {
            ModelController *models = window.modelController();
            if (!models->open(cli::modelFolderArgument(start.modelFolder))
                || start.modelText.isEmpty())
                return;
            models->setText(start.modelText, !models->model()->tokenizer);
            models->run();
        });
    }
    return QApplication::exec();
}

} // namespace attn
