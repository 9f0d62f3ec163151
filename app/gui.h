#pragma once
#include <QString>

namespace attn {

/// What the window opens at start-up (from the command line).
struct GuiStart
{
    QString sessionFile; ///< a saved session (.attnlab.json)
    QString tensorFile; ///< tensors, as File → Open Tensors… opens them
    QString modelFolder; ///< a checkpoint folder, as File → Open Model… opens it
    QString modelText; ///< with modelFolder: the text (or ids) it is run on at once
};

/// Creates the main window (optionally opening a session file, then a tensor file as File →
/// Open Tensors… does, then a model folder run on a text) and runs the event loop. Requires a
/// QApplication. Returns the exit code.
int runGui(const GuiStart &start);

} // namespace attn
