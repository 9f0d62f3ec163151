// attnlab: starts the GUI, or runs one command headless (attnlab <command> --help).

#include "cli/common.h"
#include "gui.h"

#include <QApplication>
#include <QIcon>
#include <QTextStream>

#include "core/base/blas.h"

#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

#include <unistd.h>

namespace {

void printTopLevelHelp()
{
    QTextStream out(stdout);
    out << "Usage: attnlab [--session FILE] [--open-tensors FILE] [--model DIR [--text TEXT]]\n"
           "                                          start the Attention Lab window\n"
           "       attnlab <command> [options]         run a command headless (no window)\n"
           "\nCommands:\n";
    for (const attn::cli::Command &c : attn::cli::commands())
        out << "  " << QString::fromLatin1(c.name).leftJustified(12) << c.summary << "\n";
    out << "\nOptions:\n"
           "  --session FILE   open a saved session (.attnlab.json) in the window\n"
           "  --open-tensors FILE\n"
           "                   show your tensors (.npy/.npz: query/key/value or attention\n"
           "                   weights) in the window, as File > Open Tensors... does\n"
           "  --model DIR      open a Hugging Face checkpoint folder (config.json +\n"
           "                   .safetensors) in the window, as File > Open Model... does;\n"
           "                   builtin: the built-in byte-level GPT (Brown Corpus)\n"
           "  --text TEXT      with --model: type TEXT (token ids when the folder has no\n"
           "                   tokenizer) and run the model on it\n"
           "  -h, --help       show this help; 'attnlab <command> --help' for a command\n"
           "  -v, --version    show the version\n";
}

// A session file given without an option (as a file manager does: Exec=attnlab %f).
bool isSessionPath(const char *arg)
{
    const QString path = QString::fromLocal8Bit(arg);
    return path.endsWith(QLatin1String(".json"), Qt::CaseInsensitive);
}

// Headless commands: Qt's notes about the offscreen platform itself (no XDG runtime folder on a
// server, size hints a plugin cannot pass on) say nothing about the command's work and read like
// errors; they are dropped. Everything else goes to Qt's default handler.
QtMessageHandler g_defaultHandler = nullptr;
void commandMessageHandler(QtMsgType type, const QMessageLogContext &context, const QString &msg)
{
    if (type == QtWarningMsg
        && (msg.startsWith(QLatin1String("QStandardPaths: XDG_RUNTIME_DIR not set"))
            || msg.startsWith(QLatin1String("QStandardPaths: runtime directory"))
            || msg.contains(QLatin1String("does not support propagateSizeHints"))))
        return;
    if (g_defaultHandler)
        g_defaultHandler(type, context, msg);
}

// QGuiApplication reads "-session"/"--session <id>" as an X11 session-management id and removes
// it from the arguments; Attention Lab's --session FILE passes Qt under this name instead.
char hiddenSessionOption[] = "--attnlab-session-file";

} // namespace

int main(int argc, char **argv)
{
    const bool commandMode = argc > 1 && argv[1][0] != '-' && !isSessionPath(argv[1]);
    const bool infoMode = argc > 1
        && (!std::strcmp(argv[1], "--help") || !std::strcmp(argv[1], "-h")
            || !std::strcmp(argv[1], "--version") || !std::strcmp(argv[1], "-v"));
    // The window (the Training tab's worker, the heatmaps): OpenBLAS's AVX-512 or AVX2 kernels
    // where it fell back to SSE3 on a CPU it does not know (core/base/blas.h betterBlasCore). It
    // reads the choice when loaded, so the process starts again with it; when that fails it
    // goes on as it is. Commands keep OpenBLAS's own choice (their numbers do not depend on
    // the machine's identification).
    if (!commandMode && !infoMode) {
        const std::string core = attn::betterBlasCore();
        if (!core.empty() && setenv("OPENBLAS_CORETYPE", core.c_str(), 1) == 0)
            execv("/proc/self/exe", argv);
    }
    // Commands never show a window: render offscreen unless the caller chose a platform.
    if ((commandMode || infoMode) && qEnvironmentVariableIsEmpty("QT_QPA_PLATFORM"))
        qputenv("QT_QPA_PLATFORM", "offscreen");
    // Without a display, Qt's default platform plugin aborts before any argument is checked:
    // parse offscreen, then say plainly why the window cannot open.
    const bool noDisplay = !commandMode && !infoMode
        && qEnvironmentVariableIsEmpty("QT_QPA_PLATFORM") && qEnvironmentVariableIsEmpty("DISPLAY")
        && qEnvironmentVariableIsEmpty("WAYLAND_DISPLAY");
    if (noDisplay)
        qputenv("QT_QPA_PLATFORM", "offscreen");

    if (commandMode || infoMode)
        g_defaultHandler = qInstallMessageHandler(commandMessageHandler);

    std::vector<char *> qtArgv(argv, argv + argc + 1); // argv[argc] is nullptr
    for (char *&arg : qtArgv) {
        if (arg && (!std::strcmp(arg, "--session") || !std::strcmp(arg, "-session")))
            arg = hiddenSessionOption;
    }
    int qtArgc = argc;
    QApplication app(qtArgc, qtArgv.data());
    QApplication::setApplicationName(QStringLiteral("attnlab"));
    QApplication::setApplicationDisplayName(QStringLiteral("Attention Lab"));
    QApplication::setOrganizationName(QStringLiteral("Attention Lab"));
    QApplication::setApplicationVersion(QStringLiteral(ATTNLAB_VERSION));
    QApplication::setDesktopFileName(QStringLiteral("attnlab"));
    QApplication::setWindowIcon(QIcon(QStringLiteral(":/attnlab/icons/attnlab.svg")));

    QStringList arguments = QApplication::arguments();
    for (QString &arg : arguments) {
        if (arg == QLatin1String(hiddenSessionOption))
            arg = QStringLiteral("--session");
    }
    if (commandMode) {
        const QString name = arguments.at(1);
        const attn::cli::Command *command = attn::cli::findCommand(name);
        if (!command) {
            QTextStream(stderr) << "attnlab: unknown command '" << name
                                << "'. Try 'attnlab --help'.\n";
            return attn::cli::ExitUsage;
        }
        QStringList rest = arguments.mid(2);
        rest.prepend(QStringLiteral("attnlab ") + name);
        return command->run(rest);
    }

    attn::GuiStart start;
    QString &sessionFile = start.sessionFile;
    for (int i = 1; i < arguments.size(); ++i) {
        const QString &a = arguments.at(i);
        if (a == QLatin1String("--help") || a == QLatin1String("-h")) {
            printTopLevelHelp();
            return attn::cli::ExitOk;
        }
        if (a == QLatin1String("--version") || a == QLatin1String("-v")) {
            QTextStream(stdout) << "attnlab " << ATTNLAB_VERSION << "\n";
            return attn::cli::ExitOk;
        }
        // Options taking a value: "--name VALUE" or "--name=VALUE".
        const std::pair<const char *, QString *> valued[] = {
            {"--session", &start.sessionFile},
            {"--open-tensors", &start.tensorFile},
            {"--model", &start.modelFolder},
            {"--text", &start.modelText},
        };
        bool taken = false;
        for (const auto &[name, target] : valued) {
            const QString option = QLatin1String(name);
            if (a == option) {
                if (i + 1 >= arguments.size()) {
                    QTextStream(stderr) << "attnlab: " << option << " needs a value.\n";
                    return attn::cli::ExitUsage;
                }
                *target = arguments.at(++i);
                taken = true;
            } else if (a.startsWith(option + QLatin1Char('='))) {
                *target = a.mid(option.size() + 1);
                taken = true;
            }
            if (taken)
                break;
        }
        if (taken)
            continue;
        if (!a.startsWith(QLatin1Char('-')) && sessionFile.isEmpty()) {
            sessionFile = a; // attnlab FILE.attnlab.json
            continue;
        }
        QTextStream(stderr) << "attnlab: unknown option '" << a << "'. Try 'attnlab --help'.\n";
        return attn::cli::ExitUsage;
    }
    if (noDisplay) {
        QTextStream(stderr) << "attnlab: no display to open the window on (neither DISPLAY nor "
                               "WAYLAND_DISPLAY is set).\n"
                               "Run it in a desktop session, or use a command without a window: "
                               "'attnlab --help' lists them.\n";
        return attn::cli::ExitFailure;
    }
    if (!start.modelText.isEmpty() && start.modelFolder.isEmpty()) {
        QTextStream(stderr) << "attnlab: --text needs --model DIR.\n";
        return attn::cli::ExitUsage;
    }
    return attn::runGui(start);
}
