#include "figureexport.h"

#include <QDir>
#include <QFileDialog>
#include <QFileInfo>
#include <QMainWindow>
#include <QMessageBox>
#include <QStandardPaths>
#include <QStatusBar>
#include <QWidget>

namespace attn {

QString exportFigureInteractive(QWidget *parent, const QString &title, const QString &suggestedName,
                                const std::function<bool(const QString &, QString *)> &write)
{
    QString dir = QStandardPaths::writableLocation(QStandardPaths::PicturesLocation);
    if (dir.isEmpty() || !QDir(dir).exists())
        dir = QDir::currentPath();
    QString selectedFilter;
    QString path = QFileDialog::getSaveFileName(
        parent, title, QDir(dir).filePath(suggestedName),
        QObject::tr("PNG image (*.png);;SVG drawing (*.svg);;PDF document (*.pdf)"),
        &selectedFilter);
    if (path.isEmpty())
        return {};
    if (QFileInfo(path).suffix().isEmpty()) {
        if (selectedFilter.contains(QLatin1String("svg")))
            path += QStringLiteral(".svg");
        else if (selectedFilter.contains(QLatin1String("pdf")))
            path += QStringLiteral(".pdf");
        else
            path += QStringLiteral(".png");
    }
    QString error;
    if (!write(path, &error)) {
        QMessageBox::warning(parent, title, error);
        return {};
    }
    if (auto *window = qobject_cast<QMainWindow *>(parent ? parent->window() : nullptr))
        window->statusBar()->showMessage(
            QObject::tr("Exported %1").arg(QDir::toNativeSeparators(path)), 6000);
    return path;
}

} // namespace attn
