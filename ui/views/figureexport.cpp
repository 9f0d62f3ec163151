#include "figureexport.h"

#include <QDir>
#include <QFileDialog>
#include <QFileInfo>
#include <QImage>
#include <QMainWindow>
#include <QMessageBox>
#include <QPageSize>
#include <QPainter>
#include <QPdfWriter>
#include <QSaveFile>
#include <QStandardPaths>
#include <QStatusBar>
#include <QSvgGenerator>
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
    auto paint = [&](QPainter &painter) {
        painter.fillRect(QRect(QPoint(0, 0), size), Qt::white);
        painter.scale(size.width() / qreal(widget->width()),
                      size.height() / qreal(widget->height()));
        widget->render(&painter, QPoint(), QRegion(), QWidget::DrawChildren);
    };
    QSaveFile file(path);
    if (!file.open(QIODevice::WriteOnly))
        return fail(QObject::tr("cannot write '%1': %2").arg(path, file.errorString()));
    if (suffix == QLatin1String("png")) {
        QImage image((QSizeF(size) * dpr).toSize(), QImage::Format_ARGB32_Premultiplied);
        image.setDevicePixelRatio(dpr);
        QPainter painter(&image);
        paint(painter);
        painter.end();
        if (!image.save(&file, "PNG"))
            return fail(QObject::tr("cannot write '%1': PNG encoding failed").arg(path));
    } else if (suffix == QLatin1String("svg")) {
        QSvgGenerator generator;
        generator.setOutputDevice(&file);
        generator.setSize(size);
        generator.setViewBox(QRect(QPoint(0, 0), size));
        generator.setTitle(widget->windowTitle().isEmpty() ? QStringLiteral("Attention Lab")
                                                           : widget->windowTitle());
        QPainter painter;
        if (!painter.begin(&generator))
            return fail(QObject::tr("cannot write '%1': SVG painter failed").arg(path));
        paint(painter);
        painter.end();
    } else {
        QPdfWriter writer(&file);
        writer.setResolution(72); // one logical pixel = one point
        writer.setPageSize(
            QPageSize(QSizeF(size), QPageSize::Point, QString(), QPageSize::ExactMatch));
        writer.setPageMargins(QMarginsF(0, 0, 0, 0));
        writer.setCreator(QStringLiteral("Attention Lab"));
        QPainter painter;
        if (!painter.begin(&writer))
            return fail(QObject::tr("cannot write '%1': PDF painter failed").arg(path));
        paint(painter);
        painter.end();
    }
    if (!file.commit())
        return fail(QObject::tr("cannot write '%1': %2").arg(path, file.errorString()));
    return true;
}

} // namespace attn
