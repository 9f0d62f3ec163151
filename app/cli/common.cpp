#include "common.h"

#include <QFile>
#include <QSaveFile>
#include <QTextStream>

#include <QFileInfo>

#include <cmath>
#include <exception>
#include <limits>
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
        {"sweep", "Print the E2 scaling sweep (why divide by sqrt(d_k))", &guarded<&runSweep>},
        {"experiment", "List or run the experiments E1-E12 of EXPERIMENTS.md",
         &guarded<&runExperiment>},
        {"compute", "Attention on your tensors: .npz in, .npz out", &guarded<&runCompute>},
        {"bench", "Time the attention kernels (materialized, streaming, loop)",
         &guarded<&runBench>},
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

std::optional<int> parseArguments(QCommandLineParser &parser, const QString &command,
                                  const QStringList &arguments, bool addHelpOption)
{
    const QCommandLineOption help({"h", "help"}, "Show this help.");
    if (addHelpOption)
        parser.addOption(help);
    if (!parser.parse(arguments))
        return usageError(command, parser.errorText());
    if (parser.isSet(help)) {
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
        QTextStream(stdout) << text;
        return ExitOk;
    }
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

std::optional<double> memoryBudgetBytes(const QCommandLineParser &parser, QString *error)
{
    const auto mib = intOption(parser, QStringLiteral("memory-budget-mib"), 1, 1 << 20, error);
    if (!mib)
        return std::nullopt;
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
    QSaveFile file(path);
    if (!file.open(QIODevice::WriteOnly) || file.write(text) != text.size() || !file.commit()) {
        *error = QStringLiteral("cannot write '%1': %2").arg(path, file.errorString());
        return false;
    }
    return true;
}

} // namespace attn::cli
