#pragma once
// Shared pieces of the command-line mode: the command table, exit codes and argument helpers.
// Every command parses with QCommandLineParser, never shows a window, and reports bad
// arguments with a message naming the argument and exit status 2.

#include <QCommandLineParser>
#include <QString>
#include <QStringList>

#include "core/io/npy.h"

#include <cstdint>
#include <optional>
#include <string>
#include <utility>
#include <vector>

namespace attn::cli {

enum ExitCode { ExitOk = 0, ExitFailure = 1, ExitUsage = 2 };

struct Command
{
    const char *name;
    const char *summary;
    int (*run)(const QStringList &arguments); ///< arguments[0] is "attnlab <name>"
};

/// Every command, in the order `attnlab --help` lists them.
const std::vector<Command> &commands();
const Command *findCommand(const QString &name);

/// Prints "attnlab <command>: <message>" and a --help hint to stderr; returns ExitUsage.
int usageError(const QString &command, const QString &message);
/// Prints "attnlab <command>: error: <message>" to stderr; returns ExitFailure.
int failure(const QString &command, const QString &message);
/// Prints "attnlab <command>: error: <message>" to stderr; returns ExitUsage. For input the
/// command cannot use (an unreadable or malformed input file, tensors of the wrong shape): the
/// user's input is at fault, as with a bad argument, but there is no --help hint.
int inputError(const QString &command, const QString &message);

/// Runs parser.process-like parsing without exiting the process: handles --help (prints help,
/// returns ExitOk) and unknown options / missing values (returns ExitUsage). Returns nullopt
/// when parsing succeeded and the command should continue. Adds -h/--help to the parser
/// unless `addHelpOption` is false (when parsing a second time with the same parser).
/// An option given twice ("--n 5 --n 6") is refused (ExitUsage, naming it) unless
/// `refuseRepeatedOptions` is false (heatmap --session puts the session's options in front of
/// the command line's on purpose, so the command line's win).
std::optional<int> parseArguments(QCommandLineParser &parser, const QString &command,
                                  const QStringList &arguments, bool addHelpOption = true,
                                  bool refuseRepeatedOptions = true);
/// The prologue every command without positional arguments shares: parseArguments() with its
/// defaults, then refuses a positional argument ("unexpected argument 'x'", ExitUsage).
/// Returns nullopt when the command should continue, else the exit code (ExitOk after --help).
std::optional<int> parseCommandLine(QCommandLineParser &parser, const QString &command,
                                    const QStringList &arguments);
/// The message for a command line parser.parse(arguments) refused, in the commands' style:
/// "unknown option '--bogus'" (the option as written, with its dashes), "missing value after
/// '--n'", "unexpected value after '--raw=1'" (QCommandLineParser's text, lower case first,
/// no final full stop).
QString parseErrorText(const QCommandLineParser &parser, const QStringList &arguments);
/// parser.helpText() with its first line naming the command ("Usage: attnlab <command>
/// [options] …") instead of the executable's path.
QString commandHelpText(const QCommandLineParser &parser, const QString &command);
/// The first option of a parsed command line given more than once, as written ("--n"; an
/// option with two names counts once whichever is used), or an empty string.
QString repeatedOption(const QCommandLineParser &parser);

/// A file (or folder) a command writes, for checkOutputPaths().
struct OutputPath
{
    QString option; ///< the option naming it in messages, e.g. "--out"
    QString path; ///< "" and "-" (standard output) are not checked
    bool folder = false; ///< a folder files are written into (created when missing)
    /// Name patterns ("run_*.npy") of further files written next to `path` (inside it for a
    /// folder); the existing ones are checked like `path`.
    QStringList alsoWritten = {};
};

/// Checks, before any computation, that every output can be written as a new regular file
/// renamed into place (QSaveFile) without replacing something else. Refuses (prints a message
/// naming the option and the path, returns ExitUsage) when a target exists and is not a regular
/// file (says what it is: folder, character device, FIFO, socket …), is a symbolic link, is
/// read-only (no write permission bit, even for root) or not writable; when its folder does not
/// exist, is not a folder or is not writable; when two outputs are the same file, or an output is
/// one of `inputs` (the same OutputPath shape, folder and alsoWritten unused). Returns nullopt
/// when all is well. Symbolic links in the folders above a target are followed.
std::optional<int> checkOutputPaths(const QString &command, const std::vector<OutputPath> &outputs,
                                    const std::vector<OutputPath> &inputs = {});
/// What is at `path` when it is not a regular file ("a folder", "a FIFO (named pipe)", "a
/// symbolic link", …), "" for a regular file, "nothing" when nothing is there. For messages.
QString fileKind(const QString &path);

/// Parses an integer option within [minimum, maximum]; on error sets `error` to a message that
/// names the option.
/// --NAME as a generator seed: any integer in [0, 2^64 - 1], as numpy.random.default_rng and
/// session files take. Sets *error and returns nullopt otherwise.
std::optional<std::uint64_t> seedOption(const QCommandLineParser &parser, const QString &name,
                                        QString *error);

std::optional<std::int64_t> intOption(const QCommandLineParser &parser, const QString &name,
                                      std::int64_t minimum, std::int64_t maximum, QString *error);
std::optional<double> doubleOption(const QCommandLineParser &parser, const QString &name,
                                   double minimum, double maximum, QString *error);
/// "4,16,64" → {4, 16, 64}, each within [minimum, maximum].
std::optional<std::vector<std::int64_t>> intListOption(const QCommandLineParser &parser,
                                                       const QString &name, std::int64_t minimum,
                                                       std::int64_t maximum, QString *error);

/// The model input of a command that takes --text or --ids, whichever is set: `text` becomes a
/// non-empty --text, or `ids` the token ids of --ids (each in [0, 2^31 - 1]). False with `error`
/// otherwise.
bool textOrIdsOption(const QCommandLineParser &parser, std::optional<QString> *text,
                     std::vector<std::int64_t> *ids, QString *error);

/// Adds `options` to `parser`, appending " [default: X]" to the description of every option that
/// has a default value, so each command's --help shows its defaults.
void addOptionsWithDefaults(QCommandLineParser &parser, QList<QCommandLineOption> options);

/// Default of every command's --memory-budget-mib (MiB).
inline constexpr int kDefaultMemoryBudgetMib = 2048;
/// "--memory-budget-mib <mib>" with the default above; `what` completes "Refuse … whose …".
QCommandLineOption memoryBudgetOption(const QString &what);
/// The --memory-budget-mib value in bytes (1 MiB … 1 TiB); sets *error naming the option.
/// The machine's physical memory in MiB (0 when unknown).
std::int64_t physicalMemoryMib();
std::optional<double> memoryBudgetBytes(const QCommandLineParser &parser, QString *error);
/// "123 MiB" (rounded up) for a byte count.
QString mibText(double bytes);

/// The format (lower case, one of `formats`) of an output file named `outPath`, given the value of
/// a --format option (`format`, empty when not given). The rule every command follows: the format
/// comes from the file's suffix; --format may restate it, or name it when the suffix is not one of
/// `formats` (e.g. "out.bin"). --format and a suffix that name different formats disagree: that,
/// an unknown --format, or no format at all set *error (naming `formatOption` and/or
/// `outOption`) and return nullopt. An empty `outPath` takes --format, else `fallback`.
std::optional<QString> outputFormat(const QString &format, const QString &outPath,
                                    const QStringList &formats, const QString &fallback,
                                    const QString &formatOption, const QString &outOption,
                                    QString *error);

/// Reads the .npz a command takes as its input (`compute --in`, `train --in`): every member in
/// archive order. Refuses, throwing InvalidArgument with a message naming `path`: nothing at
/// the path, a broken symbolic link, or something that is not a regular file (a folder, a
/// FIFO …); and an archive whose members declare more than `budgetBytes` once read (their data
/// as stored plus 8 bytes a value as float64, from the .npy headers, before anything is
/// decompressed), naming the largest member and `budgetName` (e.g. "--memory-budget-mib
/// 2048"). Throws NpyError for a file that is not a readable .npz.
std::vector<std::pair<std::string, NpyArray>> readInputNpz(const QString &path, double budgetBytes,
                                                           const QString &budgetName);

/// A text tokenized by a model folder's tokenizer, as `attnlab model --text` and `attnlab heads
/// --model --text` run it.
struct TokenizedText
{
    std::vector<std::int64_t> ids; ///< with the tokenizer's special tokens (e.g. a BOS)
    std::vector<std::string> labels; ///< text::tokenLabels: the text's piece of each token
    QString tokenizer; ///< the tokenizer's description, for messages
};
/// The folder a --model value names: "builtin" is the built-in model (models::builtinModelFolder
/// next to this executable, else in the source tree); any other value is the folder itself. A
/// "builtin" that is not there comes back unchanged, and opening it fails naming the folder.
QString modelFolderArgument(const QString &value);
/// Tokenizes `text` with the tokenizer of `modelDir` (core/text/loader.h). Throws
/// text::TokenizerError when the folder has no tokenizer it can read.
TokenizedText tokenizeForModel(const QString &modelDir, const QString &text);
/// The id the tokenizer of `modelDir` puts before every text (its BOS, or BERT's [CLS]): the
/// first id of the empty text's encoding with special tokens; nullopt when it adds none or the
/// folder has no tokenizer.
std::optional<std::int64_t> leadingSpecialToken(const QString &modelDir);

/// Writes text to `path` atomically (QSaveFile) or to stdout when path is empty or "-".
bool writeText(const QString &path, const QByteArray &text, QString *error);

/// Runs a command, turning exceptions that escape it into a message and ExitFailure: out of
/// memory (std::bad_alloc) says so and suggests smaller sizes; never an uncaught exception.
/// commands() routes every command through it.
int runGuarded(int (*run)(const QStringList &), const QStringList &arguments);

// The commands (one file each in app/cli/).
int runHeatmap(const QStringList &arguments);
int runAnimate(const QStringList &arguments);
int runSweep(const QStringList &arguments);
int runExperiment(const QStringList &arguments);
int runCompute(const QStringList &arguments);
int runBench(const QStringList &arguments);
int runTrain(const QStringList &arguments);
int runModel(const QStringList &arguments);
int runHeads(const QStringList &arguments);
int runTokenize(const QStringList &arguments);

} // namespace attn::cli
