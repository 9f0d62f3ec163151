// attnlab experiment: list or run the experiments E1–E20 of docs/experiments.md headless.
//   attnlab experiment --list
//   attnlab experiment E<k> [--seed S] [--<param> value …] [--format table|csv|json]
//                           [--out FILE] [--figure FILE.png|.svg] [--figure-size WxH]

#include "common.h"

#include "ui/charts/experimentfigure.h"

#include "core/experiments/experiments.h"
#include <QElapsedTimer>
#include <QFileInfo>

#include <QRegularExpression>
#include <QSize>
#include <QTextStream>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <set>

#include <unistd.h>

namespace attn::cli {

namespace {

QString dashed(const std::string &name)
{
    return QString::fromStdString(name).replace(QLatin1Char('_'), QLatin1Char('-'));
}

QString kindName(ParamSpec::Kind kind)
{
    switch (kind) {
    case ParamSpec::Kind::Int:
        return QStringLiteral("int");
    case ParamSpec::Kind::Double:
        return QStringLiteral("number");
    case ParamSpec::Kind::IntList:
        return QStringLiteral("list");
    case ParamSpec::Kind::Choice:
        return QStringLiteral("choice");
    case ParamSpec::Kind::Text:
        return QStringLiteral("text");
    }
    return {};
}

/// One experiment's section of the help: title, parameters with defaults, table columns.
QString experimentHelp(const ExperimentInfo &info)
{
    QString text;
    QTextStream out(&text);
    out << "  " << QString::fromStdString(info.id).leftJustified(4) << " "
        << QString::fromStdString(info.title) << "  (" << QString::fromStdString(info.paperSection)
        << ")\n";
    for (const ParamSpec &p : info.params) {
        QString option = QStringLiteral("--%1 <%2>").arg(dashed(p.name), kindName(p.kind));
        QString help = QString::fromStdString(p.help);
        if (p.kind == ParamSpec::Kind::Choice) {
            QStringList choices;
            for (const std::string &c : p.choices)
                choices << QString::fromStdString(c);
            help += QStringLiteral(": ") + choices.join(QStringLiteral(" | "));
        }
        QString range;
        const auto number = [&p](double v) {
            if (p.name == "seed" && v >= 1.8e19)
                return QStringLiteral("18446744073709551615"); // 2^64 - 1, as a double 2^64
            if (v == std::floor(v) && std::fabs(v) < 1e15)
                return QString::number(qint64(v));
            return QString::number(v, 'g', 12);
        };
        switch (p.kind) {
        case ParamSpec::Kind::Int:
        case ParamSpec::Kind::Double:
            range = QStringLiteral(", range %1-%2").arg(number(p.minimum), number(p.maximum));
            break;
        case ParamSpec::Kind::IntList:
            range = QStringLiteral(", each %1-%2").arg(number(p.minimum), number(p.maximum));
            break;
        case ParamSpec::Kind::Choice:
        case ParamSpec::Kind::Text:
            break;
        }
        out << "       " << option.leftJustified(28) << " "
            << QStringLiteral("[default: %1%2] ")
                   .arg(QString::fromStdString(p.defaultValue).isEmpty()
                            ? QStringLiteral("(none)")
                            : QString::fromStdString(p.defaultValue),
                        range)
            << help << "\n";
    }
    QStringList columns;
    for (const std::string &c : info.columns)
        columns << QString::fromStdString(c);
    out << "       columns: " << columns.join(QStringLiteral(", "));
    if (info.id == "E1")
        out << " (one key_<j> column per key)";
    out << "\n";
    return text;
}

QString allExperimentsHelp()
{
    QString text = QStringLiteral(
        "\nExperiments (parameters as --name <kind> [default, range] meaning; '_' or '-' both "
        "work, and --dk, --dv, --nk for d_k, d_v, n_k):\n");
    for (const ExperimentInfo &info : experimentList())
        text += experimentHelp(info);
    text += QStringLiteral(
        "\nOutput: --format table (aligned text with notes), csv (header + rows, numbers as "
        "Python's repr), json ({\"id\", \"params\", \"columns\", \"rows\": [{column: value}], "
        "\"non_finite\", \"notes\", \"scalars\"}; NaN/Inf are null and listed in non_finite).\n"
        "Exit status: 0 ok, 1 failure (e.g. cannot write a file), 2 bad arguments (unknown "
        "experiment or parameter, bad value).\n");
    return text;
}

int printList(const QString &format, const QString &outPath, const QString &command)
{
    QString text;
    Table t({"id", "title", "paper_section"});
    for (const ExperimentInfo &info : experimentList())
        t.addRow({info.id, info.title, info.paperSection});
    if (format == QLatin1String("json")) {
        text = QString::fromStdString(t.toJson("list", {}));
    } else if (format == QLatin1String("csv")) {
        text = QString::fromStdString(t.toCsv());
    } else {
        for (const ExperimentInfo &info : experimentList())
            text += QString::fromStdString(info.id).leftJustified(5)
                + QString::fromStdString(info.title) + QLatin1Char('\n');
    }
    QString error;
    if (!writeText(outPath, text.toUtf8(), &error))
        return failure(command, error);
    return ExitOk;
}

std::optional<QSize> parseSize(const QString &text)
{
    static const QRegularExpression re(QStringLiteral("^(\\d{1,5})[xX](\\d{1,5})$"));
    const QRegularExpressionMatch m = re.match(text);
    if (!m.hasMatch())
        return std::nullopt;
    const QSize size(m.captured(1).toInt(), m.captured(2).toInt());
    if (size.width() < 64 || size.height() < 64 || size.width() > 10000 || size.height() > 10000)
        return std::nullopt;
    return size;
}

/// Adds every experiment's parameters to `parser` as options (the union; which ones apply is
/// checked once the experiment is known); returns their names.
std::set<std::string> addParameterOptions(QCommandLineParser &parser)
{
    // Listed per experiment in the help, hidden from the generic list.
    std::set<std::string> paramNames;
    for (const ExperimentInfo &info : experimentList())
        for (const ParamSpec &p : info.params)
            paramNames.insert(p.name);
    for (const std::string &name : paramNames) {
        QStringList names = {dashed(name)};
        if (QString::fromStdString(name) != names.front())
            names << QString::fromStdString(name);
        // d_k, d_v, n_k: also --dk, --dv, --nk, as `attnlab sweep --dk` spells it.
        if (name.size() == 3 && name[1] == '_')
            names << QString::fromStdString(name).remove(QLatin1Char('_'));
        QCommandLineOption option(names, QStringLiteral("Experiment parameter."),
                                  QStringLiteral("value"));
        if (name == "seed")
            option.setDescription(QStringLiteral("Seed of the generator (default: the "
                                                 "experiment's, see below)."));
        else if (name == "generator")
            option.setDescription(QStringLiteral(
                "Random streams of E2, E4, E5, E7: numpy (numpy.random.default_rng(seed), the "
                "default) or torch (torch.manual_seed(seed): PyTorch 1.13's CPU generator, "
                "nn.MultiheadAttention's init and torch.randn, bit for bit)."));
        else
            option.setFlags(QCommandLineOption::HiddenFromHelp);
        parser.addOption(option);
    }

    return paramNames;
}

/// Prints (or writes to --out) the result in `formatName`, after the figure when one is asked.
int writeResult(const ExperimentResult &result, const ExperimentInfo &info,
                const QString &formatName, const QString &outPath, const QString &figurePath,
                const std::optional<QSize> &size, const QString &command)
{
    std::string text;
    if (formatName == QLatin1String("csv")) {
        text = result.table.toCsv();
    } else if (formatName == QLatin1String("json")) {
        text = result.table.toJson(result.id, result.params, result.scalars);
    } else {
        text = result.id + " \u2014 " + info.title + "\n\n" + result.table.toText();
        if (!result.scalars.empty()) {
            text += result.table.notes.empty() ? "\n" : "";
            for (const auto &[name, value] : result.scalars)
                // NaN: not available (e.g. E8's exponent from one n; the notes say why).
                text += "# " + name + " = "
                    + (std::isnan(value) ? std::string("n/a") : Table::formatNumber(value)) + "\n";
        }
    }
    // The figure first: when it fails, no --out file is left as if the run had succeeded.
    QString error;
    if (size && !exportExperimentFigure(result, figurePath, *size, &error))
        return failure(command, error);
    if (!writeText(outPath, QByteArray::fromStdString(text), &error))
        return failure(command, error);
    return ExitOk;
}

/// The experiment's parameters given on the command line into *params; a usage error naming
/// the experiment's own parameters for one it does not have.
std::optional<int> experimentParams(const QCommandLineParser &parser, const ExperimentInfo &info,
                                    const std::set<std::string> &paramNames, const QString &command,
                                    ExperimentParams *params)
{
    QStringList valid;
    for (const ParamSpec &p : info.params)
        valid << QStringLiteral("--") + dashed(p.name);
    for (const std::string &name : paramNames) {
        if (!parser.isSet(dashed(name)))
            continue;
        const bool applies = std::any_of(info.params.begin(), info.params.end(),
                                         [&](const ParamSpec &p) { return p.name == name; });
        if (!applies)
            return usageError(command,
                              QStringLiteral("%1 has no parameter --%2; its parameters: "
                                             "%3")
                                  .arg(QString::fromStdString(info.id), dashed(name),
                                       valid.join(QStringLiteral(", "))));
        (*params)[name] = parser.value(dashed(name)).toStdString();
    }
    return std::nullopt;
}

/// --figure FILE's format (.png or .svg) and --figure-size WxH into *size, checked before a long
/// run; a usage error naming the bad value.
std::optional<int> figureOptions(const QString &file, const QString &sizeText,
                                 const QString &command, std::optional<QSize> *size)
{
    // Check the figure's format before a long run, not after it.
    const QString suffix = QFileInfo(file).suffix().toLower();
    if (suffix != QLatin1String("png") && suffix != QLatin1String("svg"))
        return usageError(command,
                          QStringLiteral("--figure must end in .png or .svg, got '%1'").arg(file));
    *size = parseSize(sizeText);
    if (!*size)
        return usageError(command,
                          QStringLiteral("--figure-size must be WxH with each side "
                                         "in [64, 10000], got '%1'")
                              .arg(sizeText));
    return std::nullopt;
}

} // namespace

int runExperiment(const QStringList &arguments)
{
    const QString command = QStringLiteral("experiment");
    QCommandLineParser parser;
    parser.setApplicationDescription(QStringLiteral(
        "List or run the experiments E1-E20 of docs/experiments.md and print the result table."));
    parser.addPositionalArgument(QStringLiteral("experiment"),
                                 QStringLiteral("Experiment id, E1 … E20 (case-insensitive)."),
                                 QStringLiteral("[E<k>]"));
    const QCommandLineOption help({QStringLiteral("h"), QStringLiteral("help")},
                                  QStringLiteral("Show this help (with an id: that experiment)."));
    const QCommandLineOption list(QStringLiteral("list"),
                                  QStringLiteral("List the experiments (ids and titles)."));
    const QCommandLineOption format(QStringLiteral("format"),
                                    QStringLiteral("Output format: table, csv or json."),
                                    QStringLiteral("format"), QStringLiteral("table"));
    const QCommandLineOption out(QStringLiteral("out"),
                                 QStringLiteral("Write the output to FILE instead of stdout."),
                                 QStringLiteral("file"));
    const QCommandLineOption figure(QStringLiteral("figure"),
                                    QStringLiteral("Also export the experiment's figure (.png or "
                                                   ".svg, chosen by suffix)."),
                                    QStringLiteral("file"));
    const QCommandLineOption figureSize(QStringLiteral("figure-size"),
                                        QStringLiteral("Figure size in pixels, WxH."),
                                        QStringLiteral("WxH"), QStringLiteral("1200x800"));
    parser.addOption(help);
    addOptionsWithDefaults(parser, {list, format, out, figure, figureSize});

    const std::set<std::string> paramNames = addParameterOptions(parser);

    if (!parser.parse(arguments))
        return usageError(command, parseErrorText(parser, arguments));
    const QStringList positional = parser.positionalArguments();
    if (parser.isSet(help)) {
        QTextStream stdoutStream(stdout);
        if (positional.size() == 1) {
            try {
                const ExperimentInfo &info = experimentInfo(positional.front().toStdString());
                stdoutStream << commandHelpText(parser, command) << "\n"
                             << experimentHelp(info) << "\n       "
                             << QString::fromStdString(info.note) << "\n";
                return ExitOk;
            } catch (const InvalidArgument &) {
                // fall through to the full help
            }
        }
        stdoutStream << commandHelpText(parser, command) << allExperimentsHelp();
        return ExitOk;
    }
    if (const QString repeated = repeatedOption(parser); !repeated.isEmpty())
        return usageError(command,
                          QStringLiteral("%1 is given more than once: give it once").arg(repeated));

    const QString formatName = parser.value(format);
    if (formatName != QLatin1String("table") && formatName != QLatin1String("csv")
        && formatName != QLatin1String("json"))
        return usageError(
            command,
            QStringLiteral("--format must be table, csv or json, got '%1'").arg(formatName));
    if (parser.isSet(list)) {
        if (!positional.isEmpty())
            return usageError(command, QStringLiteral("--list takes no experiment id"));
        if (const auto refused
            = checkOutputPaths(command, {{QStringLiteral("--out"), parser.value(out)}}))
            return *refused;
        return printList(formatName, parser.value(out), command);
    }
    if (positional.isEmpty())
        return usageError(command, QStringLiteral("name an experiment (E1 … E20) or use --list"));
    if (positional.size() > 1)
        return usageError(command,
                          QStringLiteral("one experiment at a time, got '%1'")
                              .arg(positional.join(QStringLiteral("', '"))));

    const ExperimentInfo *info = nullptr;
    try {
        info = &experimentInfo(positional.front().toStdString());
    } catch (const InvalidArgument &e) {
        return usageError(command, QString::fromUtf8(e.what()));
    }

    ExperimentParams params;
    if (const auto refused = experimentParams(parser, *info, paramNames, command, &params))
        return *refused;

    std::optional<QSize> size;
    if (parser.isSet(figure)) {
        if (const auto refused
            = figureOptions(parser.value(figure), parser.value(figureSize), command, &size))
            return *refused;
    }

    // Both files checked before the (possibly long) run: writable, not the same file.
    if (const auto refused = checkOutputPaths(command,
                                              {{QStringLiteral("--out"), parser.value(out)},
                                               {QStringLiteral("--figure"), parser.value(figure)}}))
        return *refused;

    // On a terminal, the run's progress on stderr (at most once a second; nothing when stderr is
    // a file or a pipe, so scripts see only the result).
    RunContext context;
    QElapsedTimer sinceReport;
    bool reported = false;
    if (isatty(fileno(stderr)) != 0) {
        sinceReport.start();
        context.progress = [&](double fraction) {
            if (sinceReport.elapsed() < 1000)
                return;
            sinceReport.restart();
            reported = true;
            std::fprintf(stderr, "\r%s: %3.0f %%", info->id.c_str(), 100.0 * fraction);
            std::fflush(stderr);
        };
    }
    const auto endProgressLine = [&](bool done) {
        if (reported)
            std::fputs(done ? ("\r" + info->id + ": done  \n").c_str() : "\n", stderr);
    };
    ExperimentResult result;
    try {
        result = attn::runExperiment(info->id, params, context);
        endProgressLine(true);
    } catch (const InvalidArgument &e) {
        endProgressLine(false);
        return usageError(command, QString::fromUtf8(e.what()));
    } catch (const std::exception &e) {
        endProgressLine(false);
        return failure(command,
                       QStringLiteral("%1 failed: %2")
                           .arg(QString::fromStdString(info->id), QString::fromUtf8(e.what())));
    }

    return writeResult(result, *info, formatName, parser.value(out), parser.value(figure), size,
                       command);
}

} // namespace attn::cli
