#include "common.h"

#include <QCoreApplication>
#include <QDir>
#include <QFile>
#include <QFileInfo>
#include <QRegularExpression>
#include <QSaveFile>
#include <QTextStream>

#include "core/models/modelfolder.h"
#include "core/text/loader.h"
#include "core/text/piecelabel.h"

#ifdef Q_OS_UNIX
#include <sys/stat.h>
#include <unistd.h>
#endif

#include <algorithm>
#include <cmath>
#include <exception>
#include <limits>
#include <memory>
#include <new>

namespace attn::cli {

namespace {

template<int (*Run)(const QStringList &)> int guarded(const QStringList &arguments)
{
    return runGuarded(Run, arguments);
}

} // namespace

const std::vector<Command> &commands()
{
    static const std::vector<Command> table = {
        {"heatmap",
         "Render attention weights (grid of heads, one head, steps or A/B compare) to "
         "PNG/SVG/PDF",
         &guarded<&runHeatmap>},
        {"animate",
         "Animate d_k, alpha or tau over a range and write every frame as a PNG (the window's "
         "Play)",
         &guarded<&runAnimate>},
        {"sweep", "Print the E2 scaling sweep (why divide by sqrt(d_k))", &guarded<&runSweep>},
        {"experiment", "List or run the experiments E1-E20 of docs/experiments.md",
         &guarded<&runExperiment>},
        {"compute", "Attention on your tensors: .npz in, .npz out", &guarded<&runCompute>},
        {"bench", "Time the attention kernels (materialized, streaming, loop, fused)",
         &guarded<&runBench>},
        {"train", "Train an attention layer (your .npz case or a built-in task)",
         &guarded<&runTrain>},
        {"model",
         "Run a Hugging Face checkpoint on a text or token ids: attention, logits, hidden states",
         &guarded<&runModel>},
        {"heads",
         "Score every head of a stored attention stack (previous-token, induction, sink, ...)",
         &guarded<&runHeads>},
        {"tokenize", "Tokenize a text with a model folder's tokenizer (ids, pieces, offsets)",
         &guarded<&runTokenize>},
    };
    return table;
}

const Command *findCommand(const QString &name)
{
    for (const Command &c : commands()) {
        if (name == QLatin1String(c.name))
            return &c;
    }
    return nullptr;
}

int usageError(const QString &command, const QString &message)
{
    QTextStream err(stderr);
    err << "attnlab " << command << ": " << message << "\n"
        << "Try 'attnlab " << command << " --help'.\n";
    return ExitUsage;
}

int failure(const QString &command, const QString &message)
{
    QTextStream err(stderr);
    err << "attnlab " << command << ": error: " << message << "\n";
    return ExitFailure;
}

int inputError(const QString &command, const QString &message)
{
    QTextStream(stderr) << "attnlab " << command << ": error: " << message << "\n";
    return ExitUsage;
}

QString commandHelpText(const QCommandLineParser &parser, const QString &command)
{
    // helpText() starts with "Usage: <argv[0]> [options]"; name the command instead.
    QString text = parser.helpText();
    const qsizetype lineEnd = text.indexOf(QLatin1Char('\n'));
    const QString firstLine = text.left(lineEnd);
    const qsizetype optionsAt = firstLine.indexOf(QLatin1String(" [options]"));
    if (firstLine.startsWith(QLatin1String("Usage: ")) && optionsAt > 0)
        text.replace(7, optionsAt - 7,
                     command.startsWith(QLatin1String("attnlab"))
                         ? command
                         : QStringLiteral("attnlab ") + command);
    return text;
}

QString repeatedOption(const QCommandLineParser &parser)
{
    // optionNames() lists each occurrence under the name used; values() gathers the values of
    // every name of an option, so an option with a value given twice under two names is caught.
    const QStringList names = parser.optionNames();
    for (qsizetype i = 0; i < names.size(); ++i) {
        const QString &name = names.at(i);
        if (names.indexOf(name) != i || parser.values(name).size() > 1)
            return QStringLiteral("--") + name; // the commands' one-letter options read --n too
    }
    return {};
}

QString parseErrorText(const QCommandLineParser &parser, const QStringList &arguments)
{
    const QStringList unknown = parser.unknownOptionNames();
    if (!unknown.isEmpty()) {
        // QCommandLineParser names it without its dashes ("Unknown option 'bogus'."): give it
        // as it was written.
        const QString &name = unknown.front();
        QString written = QStringLiteral("--") + name;
        for (const QString &a : arguments.mid(1)) {
            if (a == QLatin1String("--"))
                break;
            if (a == QStringLiteral("--") + name || a.startsWith(QStringLiteral("--%1=").arg(name)))
                break;
            if (a == QStringLiteral("-") + name || a.startsWith(QStringLiteral("-%1=").arg(name))) {
                written = QStringLiteral("-") + name;
                break;
            }
        }
        return QStringLiteral("unknown option '%1'").arg(written);
    }
    // "Missing value after '--n'." → "missing value after '--n'", as the other messages read.
    QString text = parser.errorText().trimmed();
    if (text.endsWith(QLatin1Char('.')))
        text.chop(1);
    if (!text.isEmpty())
        text[0] = text[0].toLower();
    return text;
}

std::optional<int> parseArguments(QCommandLineParser &parser, const QString &command,
                                  const QStringList &arguments, bool addHelpOption,
                                  bool refuseRepeatedOptions)
{
    const QCommandLineOption help({"h", "help"}, "Show this help.");
    if (addHelpOption)
        parser.addOption(help);
    if (!parser.parse(arguments))
        return usageError(command, parseErrorText(parser, arguments));
    if (parser.isSet(help)) {
        QTextStream(stdout) << commandHelpText(parser, command);
        return ExitOk;
    }
    // "--n --out x.png" gives --n the value "--out" and leaves x.png over: name the missing
    // value, not the stray argument.
    for (const QString &name : parser.optionNames())
        for (const QString &value : parser.values(name))
            if (value.startsWith(QLatin1String("--")) && value.size() > 2)
                return usageError(command,
                                  QStringLiteral("--%1 needs a value: '%2' is the next "
                                                 "option")
                                      .arg(name, value));
    if (refuseRepeatedOptions) {
        const QString repeated = repeatedOption(parser);
        if (!repeated.isEmpty())
            return usageError(
                command, QStringLiteral("%1 is given more than once: give it once").arg(repeated));
    }
    return std::nullopt;
}

std::optional<int> parseCommandLine(QCommandLineParser &parser, const QString &command,
                                    const QStringList &arguments)
{
    if (const std::optional<int> done = parseArguments(parser, command, arguments))
        return done;
    const QStringList positional = parser.positionalArguments();
    if (!positional.isEmpty())
        return usageError(command,
                          QStringLiteral("unexpected argument '%1'").arg(positional.front()));
    return std::nullopt;
}

std::optional<std::uint64_t> seedOption(const QCommandLineParser &parser, const QString &name,
                                        QString *error)
{
    const QString text = parser.value(name).trimmed();
    bool ok = false;
    const qulonglong v = text.toULongLong(&ok);
    if (!ok || text.startsWith(QLatin1Char('-')) || text.startsWith(QLatin1Char('+'))) {
        *error = QStringLiteral("--%1 must be an integer in [0, %2], got '%3'")
                     .arg(name)
                     .arg(std::numeric_limits<std::uint64_t>::max())
                     .arg(parser.value(name));
        return std::nullopt;
    }
    return std::uint64_t(v);
}

std::optional<std::int64_t> intOption(const QCommandLineParser &parser, const QString &name,
                                      std::int64_t minimum, std::int64_t maximum, QString *error)
{
    const QString text = parser.value(name);
    bool ok = false;
    const qlonglong v = text.toLongLong(&ok);
    if (!ok || v < minimum || v > maximum) {
        *error = QStringLiteral("--%1 must be an integer in [%2, %3], got '%4'")
                     .arg(name)
                     .arg(minimum)
                     .arg(maximum)
                     .arg(text);
        return std::nullopt;
    }
    return v;
}

std::optional<double> doubleOption(const QCommandLineParser &parser, const QString &name,
                                   double minimum, double maximum, QString *error)
{
    const QString text = parser.value(name);
    bool ok = false;
    const double v = text.toDouble(&ok);
    if (!ok || !std::isfinite(v) || v < minimum || v > maximum) {
        *error = QStringLiteral("--%1 must be a number in [%2, %3], got '%4'")
                     .arg(name)
                     .arg(minimum)
                     .arg(maximum)
                     .arg(text);
        return std::nullopt;
    }
    return v;
}

std::optional<std::vector<std::int64_t>> intListOption(const QCommandLineParser &parser,
                                                       const QString &name, std::int64_t minimum,
                                                       std::int64_t maximum, QString *error)
{
    const QString text = parser.value(name);
    std::vector<std::int64_t> values;
    const QStringList parts = text.split(',', Qt::KeepEmptyParts);
    for (const QString &part : parts) {
        bool ok = false;
        const qlonglong v = part.trimmed().toLongLong(&ok);
        if (!ok || v < minimum || v > maximum) {
            *error = QStringLiteral("--%1 must be a comma-separated list of integers in [%2, %3], "
                                    "got '%4'")
                         .arg(name)
                         .arg(minimum)
                         .arg(maximum)
                         .arg(text);
            return std::nullopt;
        }
        values.push_back(v);
    }
    return values;
}

bool textOrIdsOption(const QCommandLineParser &parser, std::optional<QString> *text,
                     std::vector<std::int64_t> *ids, QString *error)
{
    if (parser.isSet(QStringLiteral("text"))) {
        *text = parser.value(QStringLiteral("text"));
        if (text->value().isEmpty()) {
            *error = QStringLiteral("--text is empty");
            return false;
        }
        return true;
    }
    const auto values = intListOption(parser, QStringLiteral("ids"), 0,
                                      std::numeric_limits<std::int32_t>::max(), error);
    if (!values)
        return false;
    *ids = *values;
    return true;
}

int runGuarded(int (*run)(const QStringList &), const QStringList &arguments)
{
    // arguments[0] is "attnlab <name>".
    QString command = arguments.value(0);
    if (command.startsWith(QLatin1String("attnlab ")))
        command = command.mid(8);
    try {
        return run(arguments);
    } catch (const std::bad_alloc &) {
        return failure(command,
                       QStringLiteral("out of memory: the sizes asked for do not fit in this "
                                      "machine's memory; try smaller sizes or a lower "
                                      "--memory-budget-mib where the command has one"));
    } catch (const std::exception &e) {
        return failure(command, QString::fromUtf8(e.what()));
    }
}

void addOptionsWithDefaults(QCommandLineParser &parser, QList<QCommandLineOption> options)
{
    for (QCommandLineOption &option : options) {
        if (!option.defaultValues().isEmpty())
            option.setDescription(option.description()
                                  + QStringLiteral(" [default: %1]")
                                        .arg(option.defaultValues().join(QLatin1Char(','))));
    }
    parser.addOptions(options);
}

QCommandLineOption memoryBudgetOption(const QString &what)
{
    return QCommandLineOption(QStringLiteral("memory-budget-mib"),
                              QStringLiteral("Refuse, before allocating, %1 more than this "
                                             "(MiB, 1-1048576).")
                                  .arg(what),
                              QStringLiteral("mib"), QString::number(kDefaultMemoryBudgetMib));
}

std::int64_t physicalMemoryMib()
{
    const long pages = sysconf(_SC_PHYS_PAGES);
    const long pageSize = sysconf(_SC_PAGE_SIZE);
    if (pages <= 0 || pageSize <= 0)
        return 0;
    return std::int64_t(double(pages) * double(pageSize) / (1024.0 * 1024.0));
}

std::optional<double> memoryBudgetBytes(const QCommandLineParser &parser, QString *error)
{
    const auto mib = intOption(parser, QStringLiteral("memory-budget-mib"), 1, 1 << 20, error);
    if (!mib)
        return std::nullopt;
    // A budget beyond what the machine has would let the kernel's out-of-memory killer end the
    // run (and perhaps others) instead of this check: at most three quarters of the RAM.
    const std::int64_t ram = physicalMemoryMib();
    if (ram > 0 && *mib > ram * 3 / 4) {
        *error = QStringLiteral("--memory-budget-mib %1 is more than this machine can give: it "
                                "has %2 MiB of memory, at most %3 MiB (three quarters) may be "
                                "budgeted")
                     .arg(*mib)
                     .arg(ram)
                     .arg(ram * 3 / 4);
        return std::nullopt;
    }
    return double(*mib) * 1024.0 * 1024.0;
}

QString mibText(double bytes)
{
    return QStringLiteral("%1 MiB").arg(std::ceil(bytes / (1024.0 * 1024.0)), 0, 'f', 0);
}

std::optional<QString> outputFormat(const QString &format, const QString &outPath,
                                    const QStringList &formats, const QString &fallback,
                                    const QString &formatOption, const QString &outOption,
                                    QString *error)
{
    const QString given = format.toLower();
    if (!given.isEmpty() && !formats.contains(given)) {
        *error = QStringLiteral("%1 must be one of %2, got '%3'")
                     .arg(formatOption, formats.join(QStringLiteral(", ")), format);
        return std::nullopt;
    }
    if (outPath.isEmpty())
        return given.isEmpty() ? fallback : given;
    const QString suffix = QFileInfo(outPath).suffix().toLower();
    if (formats.contains(suffix)) {
        if (!given.isEmpty() && given != suffix) {
            *error = QStringLiteral("%1 %2 disagrees with the suffix of %3 '%4' (.%5): give "
                                    "one, or make them agree")
                         .arg(formatOption, given, outOption, outPath, suffix);
            return std::nullopt;
        }
        return suffix;
    }
    if (!given.isEmpty())
        return given; // e.g. "out.bin" with --format pdf
    QStringList suffixes;
    for (const QString &f : formats)
        suffixes << QLatin1Char('.') + f;
    *error = QStringLiteral("%1 '%2' must end in %3 (or give %4)")
                 .arg(outOption, outPath, suffixes.join(QStringLiteral(", ")), formatOption);
    return std::nullopt;
}

QString fileKind(const QString &path)
{
#ifdef Q_OS_UNIX
    struct stat st
    {
    };
    if (::lstat(QFile::encodeName(path).constData(), &st) != 0)
        return QStringLiteral("nothing");
    if (S_ISREG(st.st_mode))
        return {};
    if (S_ISDIR(st.st_mode))
        return QStringLiteral("a folder");
    if (S_ISLNK(st.st_mode))
        return QStringLiteral("a symbolic link");
    if (S_ISCHR(st.st_mode))
        return QStringLiteral("a character device");
    if (S_ISBLK(st.st_mode))
        return QStringLiteral("a block device");
    if (S_ISFIFO(st.st_mode))
        return QStringLiteral("a FIFO (named pipe)");
    if (S_ISSOCK(st.st_mode))
        return QStringLiteral("a socket");
    return QStringLiteral("not a regular file");
#else
    const QFileInfo info(path);
    if (info.isSymLink())
        return QStringLiteral("a symbolic link");
    if (!info.exists())
        return QStringLiteral("nothing");
    if (info.isDir())
        return QStringLiteral("a folder");
    return info.isFile() ? QString() : QStringLiteral("not a regular file");
#endif
}

namespace {

// Whether the process may write `path` (an existing file or folder); a file without any write
// permission bit counts as read-only even for root, who could replace it.
bool writable(const QString &path, bool folder)
{
#ifdef Q_OS_UNIX
    const QByteArray native = QFile::encodeName(path);
    struct stat st
    {
    };
    if (::stat(native.constData(), &st) != 0)
        return false;
    if (!folder && (st.st_mode & (S_IWUSR | S_IWGRP | S_IWOTH)) == 0)
        return false;
    return ::access(native.constData(), folder ? W_OK | X_OK : W_OK) == 0;
#else
    Q_UNUSED(folder);
    return QFileInfo(path).isWritable();
#endif
}

// The file `path` names once written: its folder's canonical path (symbolic links resolved)
// and its name; empty when the folder does not exist.
QString resolvedPath(const QString &path)
{
    const QFileInfo info(path);
    const QString folder = QFileInfo(info.absolutePath()).canonicalFilePath();
    if (folder.isEmpty())
        return {};
    return QDir(folder).filePath(info.fileName());
}

// A message when `path` (option `option`) cannot be written as a regular file, else "".
QString fileProblem(const QString &option, const QString &path)
{
    const QString kind = fileKind(path);
    if (kind == QLatin1String("a symbolic link"))
        return QStringLiteral("%1 '%2' is a symbolic link (to '%3'): attnlab does not replace "
                              "links; give the path of the file it points to, or another name")
            .arg(option, path, QFileInfo(path).symLinkTarget());
    if (kind == QLatin1String("a folder"))
        return QStringLiteral("%1 '%2' is a folder: give a file name").arg(option, path);
    if (!kind.isEmpty() && kind != QLatin1String("nothing"))
        return QStringLiteral("%1 '%2' is %3, not a regular file: give a file name")
            .arg(option, path, kind);
    if (kind.isEmpty() && !writable(path, false))
        return QStringLiteral("%1 '%2' is read-only: make it writable or give another name")
            .arg(option, path);
    return {};
}

// A message when folder `dir` (the folder of, or for a folder output, the folder named by
// option `option`) cannot take new files, else "". A missing folder output is created: then its
// nearest existing ancestor must be a writable folder.
QString folderProblem(const QString &option, const QString &path, bool createMissing)
{
    QString dir = QFileInfo(path).absoluteFilePath();
    if (!createMissing)
        dir = QFileInfo(dir).absolutePath();
    while (createMissing && !QFileInfo::exists(dir) && QFileInfo(dir).fileName() != QString()
           && fileKind(dir) == QLatin1String("nothing"))
        dir = QFileInfo(dir).absolutePath();
    const QFileInfo info(dir);
    if (!info.exists()) {
        if (fileKind(dir) == QLatin1String("a symbolic link"))
            return QStringLiteral("%1 '%2': the folder '%3' is a broken symbolic link")
                .arg(option, path, dir);
        return QStringLiteral("%1 '%2': the folder '%3' does not exist").arg(option, path, dir);
    }
    if (!info.isDir())
        return QStringLiteral("%1 '%2': '%3' is not a folder").arg(option, path, dir);
    if (!writable(dir, true))
        return QStringLiteral("%1 '%2': the folder '%3' is not writable").arg(option, path, dir);
    return {};
}

} // namespace

std::optional<int> checkOutputPaths(const QString &command, const std::vector<OutputPath> &outputs,
                                    const std::vector<OutputPath> &inputs)
{
    struct Seen
    {
        QString option, path, resolved;
    };
    std::vector<Seen> seen;
    for (const OutputPath &input : inputs) {
        if (input.path.isEmpty() || input.path == QLatin1String("-"))
            continue;
        const QString canonical = QFileInfo(input.path).canonicalFilePath();
        seen.push_back(
            {input.option, input.path, canonical.isEmpty() ? resolvedPath(input.path) : canonical});
    }
    const qsizetype inputCount = qsizetype(seen.size());
    for (const OutputPath &output : outputs) {
        if (output.path.isEmpty() || output.path == QLatin1String("-"))
            continue;
        QString problem;
        QStringList files; // the files to check: `path` unless a folder, existing alsoWritten
        if (output.folder) {
            const QString kind = fileKind(output.path);
            if (!kind.isEmpty() && kind != QLatin1String("nothing")
                && !QFileInfo(output.path).isDir())
                problem = QStringLiteral("%1 '%2' is %3, not a folder")
                              .arg(output.option, output.path, kind);
            else if (kind.isEmpty())
                problem = QStringLiteral("%1 '%2' is a file, not a folder")
                              .arg(output.option, output.path);
            else
                problem = folderProblem(output.option, output.path, true);
        } else {
            problem = folderProblem(output.option, output.path, false);
            if (problem.isEmpty())
                problem = fileProblem(output.option, output.path);
            files << output.path;
        }
        if (problem.isEmpty() && !output.alsoWritten.isEmpty()) {
            const QDir dir(output.folder ? output.path : QFileInfo(output.path).absolutePath());
            const QFileInfoList existing = dir.entryInfoList(
                output.alsoWritten, QDir::AllEntries | QDir::System | QDir::Hidden);
            for (const QFileInfo &info : existing) {
                problem = fileProblem(output.option, info.filePath());
                if (!problem.isEmpty())
                    break;
                files << info.filePath();
            }
        }
        if (!problem.isEmpty())
            return usageError(command, problem);
        for (const QString &file : std::as_const(files)) {
            const QString resolved = resolvedPath(file);
            for (qsizetype i = 0; i < qsizetype(seen.size()); ++i) {
                const Seen &other = seen[std::size_t(i)];
                if (resolved.isEmpty() || resolved != other.resolved)
                    continue;
                if (i < inputCount)
                    return usageError(command,
                                      QStringLiteral("%1 '%2' is the input file (%3 '%4'): choose "
                                                     "another name so the input is not "
                                                     "overwritten")
                                          .arg(output.option, file, other.option, other.path));
                return usageError(command,
                                  QStringLiteral("%1 '%2' and %3 '%4' are the same file: give "
                                                 "each output its own name")
                                      .arg(output.option, file, other.option, other.path));
            }
        }
        for (const QString &file : std::as_const(files))
            seen.push_back({output.option, file, resolvedPath(file)});
    }
    // The files an output writes besides its path (the metrics CSV beside the data, the heads
    // in a batch folder) need not exist yet: no other output may be one of them.
    for (const OutputPath &owner : outputs) {
        if (owner.path.isEmpty() || owner.path == QLatin1String("-") || owner.alsoWritten.isEmpty())
            continue;
        const QString dir = QDir::cleanPath(owner.folder ? QFileInfo(owner.path).absoluteFilePath()
                                                         : QFileInfo(owner.path).absolutePath());
        for (const OutputPath &other : outputs) {
            if (&other == &owner || other.folder || other.path.isEmpty()
                || other.path == QLatin1String("-"))
                continue;
            const QFileInfo info(other.path);
            if (QDir::cleanPath(info.absolutePath()) != dir)
                continue;
            for (const QString &pattern : owner.alsoWritten) {
                const QRegularExpression re(QRegularExpression::anchoredPattern(
                    QRegularExpression::wildcardToRegularExpression(pattern)));
                if (re.match(info.fileName()).hasMatch())
                    return usageError(
                        command,
                        QStringLiteral("%1 '%2' is one of the files %3 '%4' "
                                       "writes (%5): give each output its own "
                                       "name")
                            .arg(other.option, other.path, owner.option, owner.path, pattern));
            }
        }
    }
    return std::nullopt;
}

std::vector<std::pair<std::string, NpyArray>> readInputNpz(const QString &path, double budgetBytes,
                                                           const QString &budgetName)
{
    if (!QFileInfo(path).isFile()) {
        const QString kind = fileKind(path);
        throw InvalidArgument(
            (kind == QLatin1String("nothing")
                 ? QStringLiteral("input file '%1' does not exist").arg(path)
                 : kind == QLatin1String("a symbolic link")
                 ? QStringLiteral("input file '%1' is a broken symbolic link").arg(path)
                 : QStringLiteral("input '%1' is %2, not a regular file (an .npz)").arg(path, kind))
                .toStdString());
    }
    // The sizes the .npy headers declare decide before any member is decompressed: a small
    // archive may expand to gigabytes.
    double declared = 0;
    QString largest;
    double largestBytes = -1;
    for (const auto &[name, header] : readNpzHeaders(path.toStdString())) {
        const double bytes = double(header.dataBytes) + double(header.valueBytes());
        declared += bytes;
        if (bytes > largestBytes) {
            largestBytes = bytes;
            NpyArray shape;
            shape.shape = header.shape;
            largest
                = QStringLiteral("'%1' %2 %3")
                      .arg(QString::fromStdString(name), QLatin1String(npyTypeName(header.type)),
                           QString::fromStdString(shape.shapeString()));
        }
    }
    if (declared > budgetBytes) {
        // "--memory-budget-mib 16" can be raised; a fixed budget cannot.
        const QString raise = budgetName.startsWith(QLatin1String("--"))
            ? QStringLiteral("raise %1 or ").arg(budgetName.section(QLatin1Char(' '), 0, 0))
            : QString();
        throw InvalidArgument(QStringLiteral("the arrays of '%1' declare %2 once read (as stored "
                                             "plus as float64; the largest is %3), over %4: "
                                             "nothing was decompressed; %5use smaller inputs")
                                  .arg(path, mibText(declared), largest, budgetName, raise)
                                  .toStdString());
    }
    return readNpz(path.toStdString(), std::uint64_t(std::min(budgetBytes, 1.8e19)));
}

bool writeText(const QString &path, const QByteArray &text, QString *error)
{
    if (path.isEmpty() || path == QLatin1String("-")) {
        QFile out;
        if (!out.open(stdout, QIODevice::WriteOnly)) {
            *error = QStringLiteral("cannot write to standard output");
            return false;
        }
        out.write(text);
        return true;
    }
    // Unbuffered: a failed write (a full disk) shows in write() and error(), not in a flush
    // inside commit() whose error QSaveFile would not see; on failure nothing replaces `path`.
    QSaveFile file(path);
    if (!file.open(QIODevice::WriteOnly | QIODevice::Unbuffered)) {
        *error = QStringLiteral("cannot write '%1': %2").arg(path, file.errorString());
        return false;
    }
    if (file.write(text) != text.size() || file.error() != QFileDevice::NoError) {
        *error = QStringLiteral("cannot write '%1': %2").arg(path, file.errorString());
        file.cancelWriting();
        return false;
    }
    if (!file.commit()) {
        *error = QStringLiteral("cannot write '%1': %2").arg(path, file.errorString());
        return false;
    }
    return true;
}

QString modelFolderArgument(const QString &value)
{
    if (value != QLatin1String("builtin"))
        return value;
    const std::filesystem::path folder = models::builtinModelFolder(
        QFile::encodeName(QCoreApplication::applicationDirPath()).toStdString());
    return folder.empty() ? value : QString::fromStdString(folder.string());
}

TokenizedText tokenizeForModel(const QString &modelDir, const QString &text)
{
    const std::unique_ptr<text::Tokenizer> tokenizer = text::loadTokenizer(modelDir.toStdString());
    const std::string utf8 = text.toStdString();
    const text::Encoding encoding = tokenizer->encode(utf8);
    TokenizedText out;
    for (const text::Token &t : encoding.tokens)
        out.ids.push_back(std::int64_t(t.id));
    out.labels = text::tokenLabels(*tokenizer, encoding, utf8);
    out.tokenizer = QString::fromStdString(tokenizer->description());
    return out;
}

std::optional<std::int64_t> leadingSpecialToken(const QString &modelDir)
{
    try {
        const auto ids = text::loadTokenizer(modelDir.toStdString())->encodeIds("");
        if (ids.empty())
            return std::nullopt;
        return std::int64_t(ids.front());
    } catch (const text::TokenizerError &) {
        return std::nullopt;
    }
}

} // namespace attn::cli
