// attnlab heads: the head atlas of a stored attention stack — what kind of head each (layer,
// head) is (core/analysis/headscores.h).
//
//   attnlab heads --in STACK.npz [--tokens a,b,c] [--format table|csv|json] [--exclude-bos]
//                 [--exclude-current] [--sink-epsilon E] [--out atlas.png|svg|pdf [--score S]]
//
// Input: an .npz as `attnlab compute` writes (weights, heads × n × n) or a model's stack as the
// window opens it (attentions, layers × heads × n × n, with tokens); the weights are the first
// of weights, attn_weights, attention, attentions present (or the file's only array), 2-d, 3-d
// or 4-d, square. Tokens for the duplicate-token and induction scores: --tokens, else the
// file's 'tokens' (strings) or 'ids' / 'input_ids' (integers); without any they are null.
// --out also draws the atlas figure (headsatlas.h): a layers × heads grid coloured by --score.
// The command runs in three steps: parse (options → HeadsArguments), plan (read and check the
// file → HeadsPlan), run (score, format, print).

#include "common.h"
#include "headsatlas.h"

#include "core/analysis/headscores.h"
#include "core/io/npy.h"
#include "core/io/table.h"
#include "core/io/tensorcase.h"

#include <QFileInfo>
#include <QTextStream>

#include <cmath>
#include <limits>
#include <optional>
#include <string>
#include <vector>

namespace attn::cli {
namespace {

const QString kCommand = QStringLiteral("heads");

/// Numeric members that may hold the token ids, in the order they are looked for.
constexpr const char *kIdArrays[] = {"ids", "input_ids", "token_ids"};

enum class Format { Table, Csv, Json };

/// What the command line asks for.
struct HeadsArguments
{
    QString inPath;
    std::optional<QStringList> tokens; ///< --tokens, split at commas
    Format format = Format::Table;
    HeadScoreOptions options;
    double budgetBytes = 0;
    QString outPath; ///< --out: the atlas figure; empty for none
    QString score = QStringLiteral("previous_token"); ///< --score: what the figure shows
};

/// The stack read from the file, with its tokens and where they came from.
struct HeadsPlan
{
    WeightStack stack;
    std::string member; ///< the array the weights came from
    std::string shape; ///< "float64 (2, 3, 9, 9)"
    std::vector<std::int64_t> tokens; ///< n ids, or none
    QString tokenSource; ///< "--tokens", "array 'ids'", …; empty without tokens
};

QString q(const std::string &s)
{
    return QString::fromStdString(s);
}

// ---- parse ----

QList<QCommandLineOption> headsOptions()
{
    return {
        {QStringLiteral("in"),
         QStringLiteral("Attention stack (.npz): weights (heads x n x n, as compute writes) or "
                        "attentions (layers x heads x n x n, as a model's stack is saved)."),
         QStringLiteral("file")},
        {QStringLiteral("tokens"),
         QStringLiteral("The n tokens, comma-separated (equal tokens are duplicates); default: "
                        "the file's 'tokens' strings or 'ids' / 'input_ids' integers."),
         QStringLiteral("a,b,c")},
        {QStringLiteral("format"), QStringLiteral("table, csv or json."), QStringLiteral("format"),
         QStringLiteral("table")},
        {QStringLiteral("exclude-bos"),
         QStringLiteral("Leave the first key (column 0) out of the pattern scores, numerator "
                        "and denominator (TransformerLens exclude_bos).")},
        {QStringLiteral("exclude-current"),
         QStringLiteral("Leave the diagonal (each query's own key) out of the pattern scores "
                        "(TransformerLens exclude_current_token).")},
        {QStringLiteral("sink-epsilon"),
         QStringLiteral("Flag a head as a sink when its mean weight on the first key exceeds "
                        "this (Gu et al. 2025)."),
         QStringLiteral("E"), QStringLiteral("0.3")},
        memoryBudgetOption(QStringLiteral("stacks whose arrays (as stored plus as float64) "
                                          "need")),
        {QStringLiteral("out"),
         QStringLiteral("Also draw the atlas, a layers x heads grid coloured by --score, to this "
                        "PNG, SVG or PDF (by suffix). The scores still go to standard output."),
         QStringLiteral("file")},
        {QStringLiteral("score"),
         QStringLiteral("The score the --out figure shows: %1.")
             .arg(atlasScoreNames().join(QStringLiteral(", "))),
         QStringLiteral("name"), QStringLiteral("previous_token")},
    };
}

/// --out and --score: a figure file that can be written, a score it can show.
std::optional<int> parseFigure(const QCommandLineParser &parser, HeadsArguments &args)
{
    const QString score = parser.value(QStringLiteral("score"));
    if (!atlasScoreNames().contains(score))
        return usageError(kCommand,
                          QStringLiteral("--score must be one of %1, got '%2'")
                              .arg(atlasScoreNames().join(QStringLiteral(", ")), score));
    args.score = score;
    if (!parser.isSet(QStringLiteral("out"))) {
        if (parser.isSet(QStringLiteral("score")))
            return usageError(kCommand,
                              QStringLiteral("--score chooses what the --out figure "
                                             "shows; give --out too"));
        return std::nullopt;
    }
    args.outPath = parser.value(QStringLiteral("out"));
    const QString suffix = QFileInfo(args.outPath).suffix().toLower();
    if (suffix != QLatin1String("png") && suffix != QLatin1String("svg")
        && suffix != QLatin1String("pdf"))
        return usageError(kCommand,
                          QStringLiteral("--out '%1' must end in .png, .svg or .pdf "
                                         "(the atlas figure)")
                              .arg(args.outPath));
    return checkOutputPaths(kCommand, {{QStringLiteral("--out"), args.outPath}},
                            {{QStringLiteral("--in"), args.inPath}});
}

/// Parses the command line into `args`; returns the exit code when the command should stop.
std::optional<int> parseHeads(const QStringList &arguments, HeadsArguments &args)
{
    QCommandLineParser parser;
    parser.setApplicationDescription(QStringLiteral(
        "The head atlas: scores of every (layer, head) of a stored attention stack. "
        "Previous-token, duplicate-token and induction scores as TransformerLens's "
        "head_detector (sum(A*P)/sum(A) for a 0/1 pattern P, all rows); sink (mean weight on "
        "the first key, flagged above --sink-epsilon); mean entropy (nats), effective terms "
        "1/sum(w^2) and distance sum_j w_j |i-j| over rows that are not all zero. A score with "
        "nothing to measure (0/0) is null (json) or nan."));
    addOptionsWithDefaults(parser, headsOptions());
    if (const auto done = parseArguments(parser, kCommand, arguments))
        return done;
    if (!parser.positionalArguments().isEmpty())
        return usageError(
            kCommand,
            QStringLiteral("unexpected argument '%1'").arg(parser.positionalArguments().first()));
    if (!parser.isSet(QStringLiteral("in")))
        return usageError(kCommand, QStringLiteral("--in <file> is required"));
    args.inPath = parser.value(QStringLiteral("in"));
    if (parser.isSet(QStringLiteral("tokens")))
        args.tokens = parser.value(QStringLiteral("tokens")).split(QLatin1Char(','));
    const QString format = parser.value(QStringLiteral("format"));
    if (format == QLatin1String("table"))
        args.format = Format::Table;
    else if (format == QLatin1String("csv"))
        args.format = Format::Csv;
    else if (format == QLatin1String("json"))
        args.format = Format::Json;
    else
        return usageError(
            kCommand, QStringLiteral("--format must be table, csv or json, got '%1'").arg(format));
    args.options.excludeFirstKey = parser.isSet(QStringLiteral("exclude-bos"));
    args.options.excludeCurrent = parser.isSet(QStringLiteral("exclude-current"));
    QString error;
    const auto epsilon = doubleOption(parser, QStringLiteral("sink-epsilon"), 0.0, 1.0, &error);
    if (!epsilon)
        return usageError(kCommand, error);
    args.options.sinkEpsilon = *epsilon;
    const auto budget = memoryBudgetBytes(parser, &error);
    if (!budget)
        return usageError(kCommand, error);
    args.budgetBytes = *budget;
    return parseFigure(parser, args);
}

// ---- plan ----

/// Every member of the .npz at `path`, string arrays into `strings`. Refuses (InvalidArgument)
/// what is not a regular file and archives whose arrays declare more than `budgetBytes`.
NamedArrays readStackFile(const QString &path, double budgetBytes, NpzStrings &strings)
{
    if (!QFileInfo(path).isFile()) {
        const QString kind = fileKind(path);
        throw InvalidArgument((kind == QLatin1String("nothing")
                                   ? QStringLiteral("input file '%1' does not exist").arg(path)
                                   : QStringLiteral("input '%1' is %2, not a regular file (an "
                                                    ".npz)")
                                         .arg(path, kind))
                                  .toStdString());
    }
    double declared = 0;
    for (const auto &[name, header] : readNpzHeaders(path.toStdString(), true))
        declared += double(header.dataBytes) + double(header.valueBytes());
    if (declared > budgetBytes)
        throw InvalidArgument(QStringLiteral("the arrays of '%1' declare %2 once read (as stored "
                                             "plus as float64), over --memory-budget-mib %3: "
                                             "raise it or use a smaller stack")
                                  .arg(path, mibText(declared))
                                  .arg(budgetBytes / (1024.0 * 1024.0), 0, 'f', 0)
                                  .toStdString());
    return readNpz(path.toStdString(), std::numeric_limits<std::uint64_t>::max(), &strings);
}

/// The weight stack of `arrays` (see the file's comment): 2-, 3- or 4-d and square.
void planStack(const NamedArrays &arrays, const QString &path, HeadsPlan &plan)
{
    plan.member = defaultWeightArray(arrays);
    if (plan.member.empty())
        throw InvalidArgument(path.toStdString()
                              + " holds no attention weights: name the array 'weights' (heads, "
                                "n, n) or 'attentions' (layers, heads, n, n)");
    const NpyArray *array = nullptr;
    for (const auto &[name, a] : arrays) {
        if (name == plan.member)
            array = &a;
    }
    plan.shape = describeArray(*array);
    if (array->ndim() == 5)
        throw InvalidArgument("array '" + plan.member + "' " + plan.shape
                              + " has a batch axis (layers, B, heads, n, n): save one batch "
                                "item, (layers, heads, n, n)");
    plan.stack = weightStackFromArray(*array, plan.member);
    if (plan.stack.queries != plan.stack.keys)
        throw InvalidArgument("array '" + plan.member + "' " + plan.shape
                              + " is not square: head scores need self-attention, n_q = n_k (got "
                              + std::to_string(plan.stack.queries) + " queries, "
                              + std::to_string(plan.stack.keys) + " keys)");
}

/// Checks that `count` tokens from `source` fit the stack's n.
void checkTokenCount(std::size_t count, const QString &source, const HeadsPlan &plan)
{
    if (Index(count) != plan.stack.keys)
        throw InvalidArgument(QStringLiteral("%1 holds %2 tokens but the stack '%3' %4 has n = %5 "
                                             "positions: give one token per position")
                                  .arg(source)
                                  .arg(count)
                                  .arg(q(plan.member), q(plan.shape))
                                  .arg(plan.stack.keys)
                                  .toStdString());
}

/// The tokens: --tokens, else 'tokens' strings, else the first integer id array present.
void planTokens(const HeadsArguments &args, const NamedArrays &arrays, const NpzStrings &strings,
                HeadsPlan &plan)
{
    if (args.tokens) {
        std::vector<std::string> tokens;
        for (const QString &t : *args.tokens)
            tokens.push_back(t.toStdString());
        plan.tokenSource = QStringLiteral("--tokens");
        checkTokenCount(tokens.size(), plan.tokenSource, plan);
        plan.tokens = tokenIds(tokens);
        return;
    }
    for (const auto &[name, s] : strings) {
        if (name != attentionTokensArray)
            continue;
        plan.tokenSource = QStringLiteral("array 'tokens'");
        checkTokenCount(s.values.size(), plan.tokenSource, plan);
        plan.tokens = tokenIds(s.values);
        return;
    }
    for (const char *idName : kIdArrays) {
        for (const auto &[name, a] : arrays) {
            if (name != idName)
                continue;
            plan.tokenSource = QStringLiteral("array '%1'").arg(QLatin1String(idName));
            const bool integral
                = a.type == NpyType::Int32 || a.type == NpyType::Int64 || a.type == NpyType::UInt8;
            // (n,) or (1, n) as a tokenizer's batch of one
            if (!integral || a.ndim() < 1 || a.ndim() > 2 || (a.ndim() == 2 && a.shape[0] != 1))
                throw InvalidArgument(plan.tokenSource.toStdString() + " " + describeArray(a)
                                      + " must be integer token ids shaped (n,) or (1, n)");
            checkTokenCount(a.values.size(), plan.tokenSource, plan);
            for (double v : a.values)
                plan.tokens.push_back(std::int64_t(v));
            return;
        }
    }
}

HeadsPlan planHeads(const HeadsArguments &args)
{
    NpzStrings strings;
    const NamedArrays arrays = readStackFile(args.inPath, args.budgetBytes, strings);
    HeadsPlan plan;
    planStack(arrays, args.inPath, plan);
    planTokens(args, arrays, strings, plan);
    return plan;
}

// ---- run ----

HeadScores scoreStack(const HeadsPlan &plan, const HeadScoreOptions &options)
{
    const WeightStack &s = plan.stack;
    // layers · heads matrices n × n, in the C order of (layers, heads, n, n)
    std::vector<double> values;
    values.reserve(std::size_t(s.layers * s.heads * s.keys * s.keys));
    for (const MatrixD &w : s.weights)
        values.insert(values.end(), w.data(), w.data() + w.size());
    return headScores<double>(values, {s.layers, s.heads, s.keys}, plan.tokens, options);
}

/// The scores in the order every format lists them, with their JSON names.
std::vector<std::pair<const char *, const MatrixD *>> scoreColumns(const HeadScores &s)
{
    return {{"previous_token", &s.previousToken},
            {"duplicate_token", &s.duplicateToken},
            {"induction", &s.induction},
            {"sink", &s.sink},
            {"entropy", &s.entropy},
            {"effective_terms", &s.effectiveTerms},
            {"distance", &s.distance}};
}

std::string jsonNumber(double v)
{
    return std::isfinite(v) ? Table::formatNumber(v) : std::string("null");
}

/// {"layers": L, "heads": H, "scores": {name: [[per head] per layer], …}}
std::string formatJson(const HeadScores &s)
{
    std::string out = "{\"layers\": " + std::to_string(s.layers)
        + ", \"heads\": " + std::to_string(s.heads) + ", \"scores\": {";
    bool firstScore = true;
    for (const auto &[name, m] : scoreColumns(s)) {
        out += std::string(firstScore ? "" : ", ") + "\"" + name + "\": [";
        firstScore = false;
        for (Index l = 0; l < s.layers; ++l) {
            out += l ? ", [" : "[";
            for (Index h = 0; h < s.heads; ++h)
                out += (h ? ", " : "") + jsonNumber((*m)(l, h));
            out += "]";
        }
        out += "]";
    }
    return out + "}}\n";
}

/// A score as the text table shows it: 4 decimals (nan for NaN).
std::string roundedText(double v)
{
    return std::isnan(v) ? std::string("nan") : QString::number(v, 'f', 4).toStdString();
}

/// One row per (layer, head): layer, head, the scores (every digit, or `rounded` to 4
/// decimals), sink_flag and zero_rows.
Table scoreTable(const HeadScores &s, bool rounded)
{
    std::vector<std::string> columns = {"layer", "head"};
    for (const auto &[name, m] : scoreColumns(s))
        columns.emplace_back(name);
    columns.insert(columns.end(), {"sink_flag", "zero_rows"});
    Table table(columns);
    for (Index l = 0; l < s.layers; ++l) {
        for (Index h = 0; h < s.heads; ++h) {
            std::vector<Table::Cell> row = {std::int64_t(l), std::int64_t(h)};
            for (const auto &[name, m] : scoreColumns(s)) {
                if (rounded)
                    row.emplace_back(roundedText((*m)(l, h)));
                else
                    row.emplace_back((*m)(l, h));
            }
            row.emplace_back(std::int64_t(s.sinkFlag(l, h)));
            row.emplace_back(std::int64_t(s.zeroRows(l, h)));
            table.addRow(std::move(row));
        }
    }
    return table;
}

/// The pattern scores' exclusions, for notes and captions.
std::string exclusionText(const HeadScoreOptions &o)
{
    if (o.excludeFirstKey && o.excludeCurrent)
        return "first key and diagonal excluded";
    if (o.excludeFirstKey || o.excludeCurrent)
        return o.excludeFirstKey ? "first key excluded" : "diagonal excluded";
    return "nothing excluded";
}

/// The table's notes: what was read and how it was scored (the figure's caption: the first
/// two).
std::vector<std::string> tableNotes(const HeadsArguments &args, const HeadsPlan &plan)
{
    const WeightStack &st = plan.stack;
    const std::string tokens = plan.tokens.empty()
        ? std::string("no tokens: duplicate_token and induction are nan (give --tokens or an "
                      "'ids' array)")
        : "tokens from " + plan.tokenSource.toStdString();
    return {QFileInfo(args.inPath).fileName().toStdString() + ": array '" + plan.member + "' "
                + plan.shape + ", " + std::to_string(st.layers) + " layers x "
                + std::to_string(st.heads) + " heads, n = " + std::to_string(st.keys),
            tokens + "; pattern scores: " + exclusionText(args.options),
            "pattern scores sum(A*P)/sum(A) over all rows; sink_flag: sink > "
                + Table::formatNumber(args.options.sinkEpsilon)
                + "; zero_rows: all-zero rows left out of the row means"};
}

int runPlan(const HeadsArguments &args, const HeadsPlan &plan)
{
    const HeadScores scores = scoreStack(plan, args.options);
    std::string text;
    if (args.format == Format::Json) {
        text = formatJson(scores);
    } else {
        Table table = scoreTable(scores, args.format == Format::Table);
        if (args.format == Format::Csv) {
            text = table.toCsv();
        } else {
            table.notes = tableNotes(args, plan);
            text = table.toText();
        }
    }
    if (plan.tokens.empty() && args.format != Format::Table)
        QTextStream(stderr) << "attnlab heads: note: no tokens (--tokens, or 'tokens' / 'ids' "
                               "in the file): duplicate_token and induction are not computed\n";
    QString error;
    if (!writeText(QString(), QByteArray::fromStdString(text), &error))
        return failure(kCommand, error);
    if (!args.outPath.isEmpty()) {
        const std::vector<std::string> notes = tableNotes(args, plan);
        const QStringList caption = {q(notes[0]), q(notes[1])};
        if (!writeHeadAtlas(args.outPath, *atlasScore(scores, args.score), args.score, caption,
                            &error))
            return failure(kCommand, error);
    }
    return ExitOk;
}

int inputError(const QString &message)
{
    QTextStream(stderr) << "attnlab " << kCommand << ": error: " << message << "\n";
    return ExitUsage;
}

} // namespace

int runHeads(const QStringList &arguments)
{
    HeadsArguments args;
    if (const auto done = parseHeads(arguments, args))
        return *done;
    try {
        return runPlan(args, planHeads(args));
    } catch (const NpyError &e) {
        return inputError(QString::fromUtf8(e.what()));
    } catch (const InvalidArgument &e) {
        return inputError(QString::fromUtf8(e.what()));
    }
}

} // namespace attn::cli
