#include "ui/views/figureexport.h"

#include "ui/render/figurefile.h"

#include <QDir>
#include <QFileDialog>
#include <QFileInfo>
#include <QImage>
#include <QMainWindow>
#include <QMessageBox>
#include <QPainter>
#include <QSettings>
#include <QStandardPaths>
#include <QStatusBar>
#include <QWidget>

namespace attn {

namespace {

const QString exportFolderKey = QStringLiteral("exportFolder");

} // namespace

QString exportFolder()
{
    const QString last = QSettings().value(exportFolderKey).toString();
    if (!last.isEmpty() && QDir(last).exists())
        return last;
    QString dir = QStandardPaths::writableLocation(QStandardPaths::PicturesLocation);
    if (dir.isEmpty() || !QDir(dir).exists())
        dir = QDir::currentPath();
    return dir;
}

QString exportStartPath(const QString &fileName)
{
    return QDir(exportFolder()).filePath(fileName);
}

void rememberExportFolder(const QString &path)
{
    if (path.isEmpty())
        return;
    const QFileInfo info(path);
    QSettings().setValue(exportFolderKey,
                         info.isDir() ? info.absoluteFilePath() : info.absolutePath());
}

QString exportFigureInteractive(QWidget *parent, const QString &title, const QString &suggestedName,
                                const std::function<bool(const QString &, QString *)> &write)
{
    QString selectedFilter;
    QString path = QFileDialog::getSaveFileName(
        parent, title, exportStartPath(suggestedName),
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
    rememberExportFolder(path);
    if (auto *window = qobject_cast<QMainWindow *>(parent ? parent->window() : nullptr))
        window->statusBar()->showMessage(
            QObject::tr("Exported %1").arg(QDir::toNativeSeparators(path)), 6000);
    return path;
}

bool exportWidget(QWidget *widget, const QString &path, QSize size, qreal dpr, QString *error)
{
    auto fail = [&](const QString &message) {
        if (error)
            *error = message;
        return false;
    };
    const QString suffix = QFileInfo(path).suffix().toLower();
    if (suffix != QLatin1String("png") && suffix != QLatin1String("svg")
        && suffix != QLatin1String("pdf"))
        return fail(QObject::tr("cannot write '%1': unknown format '%2' (expected .png, .svg or "
                                ".pdf)")
                        .arg(path, suffix));
    if (!widget || widget->width() < 1 || widget->height() < 1)
        return fail(QObject::tr("cannot write '%1': there is nothing shown to export").arg(path));
    if (size.isEmpty())
        size = widget->size();
    if (size.width() > 20000 || size.height() > 20000 || dpr <= 0 || dpr > 8)
        return fail(QObject::tr("cannot write '%1': size %2\u00d7%3 at %4 device pixels per "
                                "pixel is out of range")
                        .arg(path)
                        .arg(size.width())
                        .arg(size.height())
                        .arg(dpr));
    // The widget paints itself at its own size; the painter scales that to `size`.
    const FigurePainter paint = [&](QPainter *painter, const QRectF &bounds, bool) {
        painter->fillRect(bounds, Qt::white);
        painter->scale(bounds.width() / qreal(widget->width()),
                       bounds.height() / qreal(widget->height()));
        widget->render(painter, QPoint(), QRegion(), QWidget::DrawChildren);
    };
    const QString title
        = widget->windowTitle().isEmpty() ? QStringLiteral("Attention Lab") : widget->windowTitle();
    return writeFigure(path, size, dpr, Qt::white, title, QString(), paint, error);
}

} // namespace attn
