#pragma once
#include <QString>

namespace attn {
/// Creates the main window (optionally opening a session file, then a tensor file as File →
/// Open Tensors… does) and runs the event loop. Requires a QApplication. Returns the exit code.
int runGui(const QString &sessionFile, const QString &tensorFile = {});
} // namespace attn
