#pragma once
// The Export dialog shared by the steps and A/B views: asks for a PNG/SVG/PDF file name and
// calls `write(path)`, reporting failures in a message box and success in the status bar.
// exportWidget writes a widget as shown (e.g. a live chart) to PNG, SVG or PDF. Every export
// dialog of the window starts in the folder of the last export (exportFolder).

#include <QSize>
#include <QString>

#include <functional>

class QWidget;

namespace attn {

/// The folder export dialogs start in: the folder of the last export (QSettings key
/// "exportFolder", kept across runs), else the Pictures folder, else the current directory.
QString exportFolder();
/// exportFolder() joined with a suggested file name, for a save dialog's starting path.
QString exportStartPath(const QString &fileName);
/// Remembers the folder of an export: `path`'s folder for a file, `path` itself for a folder
/// (Export Each Head, Play's frames). Empty paths are ignored.
void rememberExportFolder(const QString &path);

/// Starts in exportStartPath(suggestedName); a written file's folder is remembered.
/// Returns the chosen path ("" when cancelled or failed). `write` returns false with an error.
QString exportFigureInteractive(QWidget *parent, const QString &title, const QString &suggestedName,
                                const std::function<bool(const QString &, QString *)> &write);

/// Paints `widget` as shown (QWidget::render, its own paint code) scaled to `size` — logical
/// pixels for PNG (written at `dpr` device pixels per pixel) and SVG, points for PDF — into
/// `path`, PNG/SVG/PDF by suffix, on a white page. An empty `size` takes the widget's size.
/// Returns false with `error` naming the path (unknown suffix, empty widget, write failure).
bool exportWidget(QWidget *widget, const QString &path, QSize size, qreal dpr, QString *error);

} // namespace attn
