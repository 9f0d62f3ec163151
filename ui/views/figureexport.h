#pragma once
// The Export dialog shared by the steps and A/B views: asks for a PNG/SVG/PDF file name and
// calls `write(path)`, reporting failures in a message box and success in the status bar.

#include <QString>

#include <functional>

class QWidget;

namespace attn {

/// Returns the chosen path ("" when cancelled or failed). `write` returns false with an error.
QString exportFigureInteractive(QWidget *parent, const QString &title, const QString &suggestedName,
                                const std::function<bool(const QString &, QString *)> &write);

} // namespace attn
