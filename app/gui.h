#pragma once
#include <QString>

namespace attn {
/// Creates the main window (optionally opening a session file) and runs the event loop.
/// Requires a QApplication. Returns the exit code.
int runGui(const QString &sessionFile);
} // namespace attn
