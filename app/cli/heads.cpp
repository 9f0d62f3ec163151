// attnlab heads: the head atlas of a stored attention stack or of a model run on a text — what
// kind of head each (layer, head) is (core/analysis/headscores.h) and, with a model, what it
// contributes (core/analysis/headcontributions.h).
//
//   attnlab heads --in STACK.npz [--tokens a,b,c] [--format table|csv|json] [--exclude-bos]
//                 [--exclude-current] [--sink-epsilon E] [--out atlas.png|svg|pdf [--score S]]
//   attnlab heads --model DIR (--text T | --ids 1,2,3) [--prefix-tokens N] [--prefix-draws D]
//                 [--seed S] [--contributions [--ablation zero|mean] [--out-npz FILE.npz]]
//                 [the options above]
//
// Input: an .npz as `attnlab compute` writes (weights, heads × n × n) or a model's stack as the
// window opens it (attentions, layers × heads × n × n, with tokens); the weights are the first
// of weights, attn_weights, attention, attentions present (or the file's only array), 2-d, 3-d
// or 4-d, square. Tokens for the duplicate-token and induction scores: --tokens, else the
// file's 'tokens' (strings) or 'ids' / 'input_ids' (integers); without any they are null.
// Signed weights (negative entries, such as differential attention's A₁ − λA₂) are scored as
// they stand, as the window's Atlas scores them, with a note.
// --out also draws the atlas figure (ui/render/headatlas.h): a layers × heads grid coloured by
// --score (RdBu_r centred on 0 when a score is negative). With --model the stack is every layer
// and head of the model's forward on the text's ids (the ids are the tokens), and the scores
// gain prefix_matching (Olsson et al. 2022, on random tokens repeated twice) per head and
// rank_collapse (Dong et al. 2021) per layer; with --contributions also value-weighted norms,
// attention rollout and head ablation.
// The command runs in three steps: parse (options → HeadsArguments), plan (read and check the
// file → HeadsPlan), run (score, format, print).

#include "common.h"
#include "ui/render/headatlas.h"

#include "core/analysis/headcontributions.h"
#include "core/analysis/headreport.h"
#include "core/analysis/headscores.h"
#include "core/io/npy.h"
#include "core/io/table.h"
#include "core/io/tensorcase.h"
#include "core/models/config.h"
#include "core/models/forward.h"
#include "core/models/model.h"
#include "core/models/safetensors.h"
#include "core/text/tokenizererror.h"

#include <QFile>
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
    QString modelDir; ///< --model: run this checkpoint instead of reading --in
    std::optional<QString> text; ///< --text, tokenized by the model folder's tokenizer
    std::vector<std::int64_t> ids; ///< --ids
    Index prefixTokens = 25; ///< --prefix-tokens N
    Index prefixDraws = 4; ///< --prefix-draws D
    std::uint64_t seed = 0; ///< --seed of the prefix-matching draws
    bool contributions = false; ///< --contributions
    models::Ablation ablation = models::Ablation::Zero; ///< --ablation
    QString outNpz; ///< --out-npz: value norms and rollout; empty for none
};

/// What only a model run gives (see the file's comment).
struct ModelExtras
{
    QString source; ///< "gpt2 (2 layers x 4 heads)"
    std::optional<std::int64_t> bos; ///< the id before the prefix-matching sequences
    ModelHeadReport report;
};

/// The stack read from the file, with its tokens and where they came from.
struct HeadsPlan
{
    WeightStack stack;
    std::string member; ///< the array the weights came from
    std::string shape; ///< "float64 (2, 3, 9, 9)"
    std::vector<std::int64_t> tokens; ///< n ids, or none
    QString tokenSource; ///< "--tokens", "array 'ids'", …; empty without tokens
    std::vector<std::string> tokenLabels; ///< --model --text: the text's piece of each token
    std::optional<ModelExtras> model; ///< --model only
    /// Where the first negative weight is and its value ("layer 0, head 1, row 2, column 0:
    /// -0.25"); empty when every weight is >= 0 (the stack is not signed).
    std::string firstNegative;
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
         QStringLiteral("The score the --out figure shows: %1; with --model also "
                        "prefix_matching, with --contributions value_norm_sink, value_norm_mass "
                        "and ablation_kl.")
             .arg(atlasScoreNames().join(QStringLiteral(", "))),
         QStringLiteral("name"), QStringLiteral("previous_token")},
        {QStringLiteral("model"),
         QStringLiteral("Instead of --in: run this checkpoint folder (as attnlab model; builtin: "
                        "the built-in model) on --text "
                        "or --ids and score every layer and head; adds prefix_matching per head "
                        "and rank_collapse per layer."),
         QStringLiteral("dir")},
        {QStringLiteral("text"),
         QStringLiteral("With --model: the text, tokenized by the folder's tokenizer."),
         QStringLiteral("text")},
        {QStringLiteral("ids"),
         QStringLiteral("With --model: the token ids, comma-separated (they are the tokens of "
                        "the duplicate-token and induction scores)."),
         QStringLiteral("ids")},
        {QStringLiteral("prefix-tokens"),
         QStringLiteral("With --model: N random tokens, repeated twice, for prefix_matching: the "
                        "mean over second-copy queries i of A[i, i-N+1] (Olsson et al. 2022)."),
         QStringLiteral("N"), QStringLiteral("25")},
        {QStringLiteral("prefix-draws"),
         QStringLiteral("With --model: random sequences prefix_matching averages over."),
         QStringLiteral("D"), QStringLiteral("4")},
        {QStringLiteral("seed"),
         QStringLiteral("With --model: seed of the prefix-matching draws "
                        "(numpy.random.default_rng(seed).integers(0, vocab))."),
         QStringLiteral("S"), QStringLiteral("0")},
        {QStringLiteral("contributions"),
         QStringLiteral("With --model: also value-weighted norms per head (value_norm_sink, "
                        "value_norm_mass; Kobayashi et al. 2020), attention rollout (Abnar & "
                        "Zuidema 2020) and head ablation (ablation_kl, ablation_top1: one forward "
                        "per head).")},
        {QStringLiteral("ablation"),
         QStringLiteral("With --contributions: what an ablated head's output becomes: zero, or "
                        "mean (each row the mean of the head's outputs over the positions)."),
         QStringLiteral("kind"), QStringLiteral("zero")},
        {QStringLiteral("out-npz"),
         QStringLiteral("With --contributions: write value_norms (layers x heads x n x n), "
                        "rollout (n x n), rank_collapse, prefix_matching and ids to this .npz."),
         QStringLiteral("file")},
    };
}

/// --out and --score: a figure file that can be written, a score it can show.
std::optional<int> parseFigure(const QCommandLineParser &parser, HeadsArguments &args)
{
    const QString score = parser.value(QStringLiteral("score"));
    QStringList names = atlasScoreNames();
    if (!args.modelDir.isEmpty())
        names << QStringLiteral("prefix_matching");
    if (args.contributions)
        names << QStringLiteral("value_norm_sink") << QStringLiteral("value_norm_mass")
              << QStringLiteral("ablation_kl");
    if (!names.contains(score))
        return usageError(kCommand,
                          QStringLiteral("--score must be one of %1, got '%2'")
                              .arg(names.join(QStringLiteral(", ")), score));
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
    return std::nullopt;
}

/// --model and what goes with it: the ids (or text), the prefix-matching draws, the
/// contributions.
std::optional<int> parseModel(const QCommandLineParser &parser, HeadsArguments &args)
{
    static const char *const kModelOnly[]
        = {"text", "ids",           "prefix-tokens", "prefix-draws",
           "seed", "contributions", "ablation",      "out-npz"};
    if (!parser.isSet(QStringLiteral("model"))) {
        for (const char *name : kModelOnly)
            if (parser.isSet(QLatin1String(name)))
                return usageError(kCommand,
                                  QStringLiteral("--%1 needs --model <dir> (the stack "
                                                 "of --in is scored as stored)")
                                      .arg(QLatin1String(name)));
        return std::nullopt;
    }
    args.modelDir = modelFolderArgument(parser.value(QStringLiteral("model")));
    if (parser.isSet(QStringLiteral("tokens")))
        return usageError(kCommand,
                          QStringLiteral("--tokens is for --in; with --model the "
                                         "tokens are the ids of --text or --ids"));
    if (parser.isSet(QStringLiteral("text")) == parser.isSet(QStringLiteral("ids")))
        return usageError(kCommand, QStringLiteral("--model needs either --text or --ids"));
    QString error;
    if (!textOrIdsOption(parser, &args.text, &args.ids, &error))
        return usageError(kCommand, error);
    const auto tokens = intOption(parser, QStringLiteral("prefix-tokens"), 1, 1 << 20, &error);
    if (!tokens)
        return usageError(kCommand, error);
    const auto draws = intOption(parser, QStringLiteral("prefix-draws"), 1, 1 << 20, &error);
    if (!draws)
        return usageError(kCommand, error);
    const auto seed = seedOption(parser, QStringLiteral("seed"), &error);
    if (!seed)
        return usageError(kCommand, error);
    args.prefixTokens = Index(*tokens);
    args.prefixDraws = Index(*draws);
    args.seed = *seed;
    args.contributions = parser.isSet(QStringLiteral("contributions"));
    args.outNpz = parser.value(QStringLiteral("out-npz"));
    if (parser.isSet(QStringLiteral("ablation"))) {
        if (!args.contributions)
            return usageError(kCommand,
                              QStringLiteral("--ablation chooses how --contributions ablates "
                                             "heads; give --contributions too"));
        const QString kind = parser.value(QStringLiteral("ablation"));
        if (kind != QLatin1String("zero") && kind != QLatin1String("mean"))
            return usageError(
                kCommand, QStringLiteral("--ablation must be zero or mean, got '%1'").arg(kind));
        args.ablation = models::ablationFromName(kind.toStdString());
    }
    if (!args.outNpz.isEmpty() && !args.contributions)
        return usageError(kCommand,
                          QStringLiteral("--out-npz writes the contributions; give "
                                         "--contributions too"));
    if (!args.outNpz.isEmpty() && QFileInfo(args.outNpz).suffix().toLower() != QLatin1String("npz"))
        return usageError(kCommand,
                          QStringLiteral("--out-npz '%1' must end in .npz").arg(args.outNpz));
    return std::nullopt;
}

/// Parses the command line into `args`; returns the exit code when the command should stop.
std::optional<int> parseHeads(const QStringList &arguments, HeadsArguments &args)
{
    QCommandLineParser parser;
    parser.setApplicationDescription(QStringLiteral(
        "The head atlas: scores of every (layer, head) of a stored attention stack (--in) or "
        "of a checkpoint run on a text (--model, adding prefix matching per head and rank "
        "collapse per layer, and with --contributions value-weighted norms, rollout and head "
        "ablation). "
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
    if (parser.isSet(QStringLiteral("in")) == parser.isSet(QStringLiteral("model")))
        return usageError(kCommand, QStringLiteral("give either --in <file> or --model <dir>"));
    args.inPath = parser.value(QStringLiteral("in"));
    if (const auto done = parseModel(parser, args))
        return done;
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
    if (const auto done = parseFigure(parser, args))
        return done;
    return checkOutputPaths(
        kCommand,
        {{QStringLiteral("--out"), args.outPath}, {QStringLiteral("--out-npz"), args.outNpz}},
        {{QStringLiteral("--in"), args.inPath}});
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
    // A single .npy (NumPy's magic "\x93NUMPY" where a zip archive starts "PK"): say what to
    // write instead of the zip reader's "not a zip archive".
    QFile file(path);
    if (file.open(QIODevice::ReadOnly) && file.read(6) == QByteArray("\x93NUMPY", 6))
        throw InvalidArgument(QStringLiteral("'%1' is an .npy file (one array); --in reads an .npz "
                                             "holding the stack, e.g. np.savez('run.npz', "
                                             "attentions=a, tokens=tokens)")
                                  .arg(path)
                                  .toStdString());
    file.close();
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
/// The scores assume each row is a distribution (softmax weights): NaN and ±inf weights are
/// refused naming the first one; rows that do not sum to 1 (nor to 0, a fully masked row)
/// within 1e-3 are reported on standard error with the worst one. Negative weights mark a stack
/// of signed weights (differential attention's A₁ − λA₂, whose rows sum to 1 − λ): it is scored
/// as it stands, as the window's Atlas scores it, with a note instead of the row-sum check.
void checkDistributions(HeadsPlan &plan)
{
    const WeightStack &s = plan.stack;
    double worst = 0;
    Index worstLayer = 0, worstHead = 0, worstRow = 0;
    for (Index l = 0; l < s.layers; ++l) {
        for (Index h = 0; h < s.heads; ++h) {
            const MatrixD &w = s.at(l, h);
            for (Index i = 0; i < w.rows(); ++i) {
                double sum = 0;
                for (Index j = 0; j < w.cols(); ++j) {
                    const double v = w(i, j);
                    const auto where = [&] {
                        return "layer " + std::to_string(l) + ", head " + std::to_string(h)
                            + ", row " + std::to_string(i) + ", column " + std::to_string(j);
                    };
                    if (!std::isfinite(v))
                        throw InvalidArgument("array '" + plan.member + "' " + plan.shape + ": "
                                              + where() + " holds " + Table::formatNumber(v)
                                              + ": attention weights must be finite");
                    if (v < 0 && plan.firstNegative.empty())
                        plan.firstNegative = where() + ": " + Table::formatNumber(v);
                    sum += v;
                }
                const double off = sum == 0 ? 0 : std::abs(sum - 1);
                if (off > worst) {
                    worst = off;
                    worstLayer = l;
                    worstHead = h;
                    worstRow = i;
                }
            }
        }
    }
    if (!plan.firstNegative.empty())
        QTextStream(stderr) << "attnlab heads: note: '" << q(plan.member)
                            << "' holds negative weights (first at " << q(plan.firstNegative)
                            << "): signed weights, such as differential attention's A1 - "
                               "lambda A2, are scored as they stand, as the window's Atlas "
                               "scores them (rows need not sum to 1); the --out figure draws "
                               "negative scores on RdBu_r centred on 0\n";
    else if (worst > 1e-3)
        QTextStream(stderr) << "attnlab heads: note: rows of '" << q(plan.member)
                            << "' do not sum to 1 (worst |sum - 1| = "
                            << q(Table::formatNumber(worst)) << " at layer " << worstLayer
                            << ", head " << worstHead << ", row " << worstRow
                            << "): the scores treat each row as a distribution\n";
}

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
    checkDistributions(plan);
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

// ---- plan and run a model (--model) ----

/// Refuses (InvalidArgument naming the numbers) ids outside the vocabulary, more tokens than
/// learned positions, and runs whose arrays exceed the memory budget (with the arithmetic).
void checkModelRun(const HeadsArguments &args, const models::ModelConfig &c,
                   const std::vector<std::int64_t> &ids, Index prefixLength)
{
    const QString source = args.text ? QStringLiteral("--text") : QStringLiteral("--ids");
    for (std::size_t i = 0; i < ids.size(); ++i)
        if (ids[i] >= c.vocabSize)
            throw InvalidArgument(QStringLiteral("%1: token id %2 at position %3 is outside the "
                                                 "vocabulary [0, %4)")
                                      .arg(source)
                                      .arg(ids[i])
                                      .arg(i)
                                      .arg(c.vocabSize)
                                      .toStdString());
    const Index n = Index(ids.size());
    if (c.learnedPositions && n > c.maxPositions)
        throw InvalidArgument(QStringLiteral("%1 gives %2 tokens, but the model has learned "
                                             "positions for %3")
                                  .arg(source)
                                  .arg(n)
                                  .arg(c.maxPositions)
                                  .toStdString());
    if (c.learnedPositions && prefixLength > c.maxPositions)
        throw InvalidArgument(
            QStringLiteral("--prefix-tokens %1: the prefix-matching sequence "
                           "has %2 tokens (%3 + 2 x %1), but the model has "
                           "learned positions for %4: give --prefix-tokens "
                           "<= %5")
                .arg(args.prefixTokens)
                .arg(prefixLength)
                .arg(prefixLength - 2 * args.prefixTokens)
                .arg(c.maxPositions)
                .arg((c.maxPositions - (prefixLength - 2 * args.prefixTokens)) / 2)
                .toStdString());
    // The stack: float32 kept by the forward plus float64 scored; the prefix run's float32
    // weights; with --contributions one more float64 stack (value norms and the widened
    // weights while they are measured).
    const double lh = double(c.layers) * double(c.heads);
    const double stack = lh * double(n) * double(n) * 12.0;
    const double prefix = lh * double(prefixLength) * double(prefixLength) * 8.0;
    const double contributions = args.contributions ? lh * double(n) * double(n) * 8.0 : 0.0;
    const double total = stack + prefix + contributions;
    if (total > args.budgetBytes)
        throw InvalidArgument(
            QStringLiteral("%1 layers x %2 heads need %3 x %3 x 12 bytes (the stack, float32 "
                           "computed and float64 scored) + %4 x %4 x 8 bytes (the "
                           "prefix-matching run)%5 = %6, over --memory-budget-mib %7; give "
                           "fewer tokens or a larger budget")
                .arg(c.layers)
                .arg(c.heads)
                .arg(n)
                .arg(prefixLength)
                .arg(args.contributions
                         ? QStringLiteral(" + %1 x %1 x 8 bytes (--contributions)").arg(n)
                         : QString())
                .arg(mibText(total))
                .arg(mibText(args.budgetBytes))
                .toStdString());
}

/// Runs the model and fills the plan as --in would (stack, tokens) plus the model's extras.
HeadsPlan planModel(const HeadsArguments &args)
{
    const models::Model model = models::Model::open(args.modelDir.toStdString());
    const models::ModelConfig &c = model.config();
    HeadsPlan plan;
    std::vector<std::int64_t> ids = args.ids;
    plan.tokenSource = QStringLiteral("--ids");
    if (args.text) {
        TokenizedText tokenized = tokenizeForModel(args.modelDir, *args.text);
        if (tokenized.ids.empty())
            throw InvalidArgument(QStringLiteral("--text gives no tokens with %1")
                                      .arg(tokenized.tokenizer)
                                      .toStdString());
        ids = std::move(tokenized.ids);
        plan.tokenLabels = std::move(tokenized.labels);
        plan.tokenSource = QStringLiteral("--text (the ids of %1)").arg(tokenized.tokenizer);
    }
    ModelExtras extras;
    extras.bos = leadingSpecialToken(args.modelDir);
    const Index prefixLength = (extras.bos ? 1 : 0) + 2 * args.prefixTokens;
    checkModelRun(args, c, ids, prefixLength);

    const models::ForwardResult r
        = models::forward(model, ids, modelHeadForwardOptions(args.contributions));
    const Index n = Index(ids.size());
    plan.stack.layers = c.layers;
    plan.stack.heads = c.heads;
    plan.stack.queries = plan.stack.keys = n;
    plan.stack.type = NpyType::Float32;
    for (const models::LayerAttention &layer : r.layers)
        for (const MatrixF &w : layer.weights)
            plan.stack.weights.push_back(w.cast<double>());
    plan.member = "attention";
    plan.shape = "float32 (" + std::to_string(c.layers) + ", " + std::to_string(c.heads) + ", "
        + std::to_string(n) + ", " + std::to_string(n) + ")";
    plan.tokens = ids;

    extras.source = QStringLiteral("%1 (%2 layers x %3 heads)")
                        .arg(q(models::modelFamilyName(c.family)))
                        .arg(c.layers)
                        .arg(c.heads);
    ModelHeadOptions options;
    options.prefixTokens = args.prefixTokens;
    options.prefixDraws = args.prefixDraws;
    options.seed = args.seed;
    options.bos = extras.bos;
    options.contributions = args.contributions;
    options.ablation = args.ablation;
    options.keepValueNorms = !args.outNpz.isEmpty();
    extras.report = reportModelHeads(model, r, options);
    plan.model = std::move(extras);
    return plan;
}

/// The --out-npz file: value_norms, rollout, rank_collapse, prefix_matching, ids (and tokens).
void writeContributionsNpz(const HeadsArguments &args, const HeadsPlan &plan)
{
    const ModelHeadReport &m = plan.model->report;
    std::vector<std::pair<std::string, NpyArray>> members;
    NpyArray ids;
    ids.type = NpyType::Int64;
    ids.shape = {std::int64_t(plan.tokens.size())};
    ids.values.assign(plan.tokens.begin(), plan.tokens.end());
    members.emplace_back("ids", std::move(ids));
    NpyArray norms;
    norms.type = NpyType::Float64;
    norms.shape = {plan.stack.layers, plan.stack.heads, plan.stack.keys, plan.stack.keys};
    norms.values = m.valueNorms;
    members.emplace_back("value_norms", std::move(norms));
    members.emplace_back("rollout", NpyArray::fromMatrix<double>(m.rollout));
    NpyArray collapse;
    collapse.type = NpyType::Float64;
    collapse.shape = {std::int64_t(m.rankCollapse.size())};
    collapse.values = m.rankCollapse;
    members.emplace_back("rank_collapse", std::move(collapse));
    members.emplace_back("prefix_matching", NpyArray::fromMatrix<double>(m.prefixMatching));
    NpzStrings strings;
    if (!plan.tokenLabels.empty())
        strings.emplace_back(
            "tokens", NpyStrings {{std::int64_t(plan.tokenLabels.size())}, plan.tokenLabels});
    writeNpz(args.outNpz.toStdString(), members, true, strings);
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

/// The pattern scores' exclusions, for notes and captions.
std::string exclusionText(const HeadScoreOptions &o)
{
    if (o.excludeFirstKey && o.excludeCurrent)
        return "first key and diagonal excluded";
    if (o.excludeFirstKey || o.excludeCurrent)
        return o.excludeFirstKey ? "first key excluded" : "diagonal excluded";
    return "nothing excluded";
}

/// The note on a stack of signed weights, for the table and the figure's caption.
std::string signedNote(const HeadsPlan &plan)
{
    return "signed weights (negative entries, first at " + plan.firstNegative
        + "): scored as they stand, as the window's Atlas";
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
    const std::string source = plan.model ? QFileInfo(args.modelDir).fileName().toStdString() + ": "
            + plan.model->source.toStdString() + " on " + std::to_string(st.keys) + " tokens"
                                          : QFileInfo(args.inPath).fileName().toStdString()
            + ": array '" + plan.member + "' " + plan.shape + ", " + std::to_string(st.layers)
            + " layers x " + std::to_string(st.heads) + " heads, n = " + std::to_string(st.keys);
    std::vector<std::string> notes
        = {source, tokens + "; pattern scores: " + exclusionText(args.options),
           "pattern scores sum(A*P)/sum(A) over all rows; sink_flag: sink > "
               + Table::formatNumber(args.options.sinkEpsilon)
               + "; zero_rows: all-zero rows left out of the row means"};
    if (!plan.firstNegative.empty())
        notes.push_back(signedNote(plan));
    if (const ModelExtras *m = plan.model ? &*plan.model : nullptr) {
        notes.push_back("prefix_matching: mean over " + std::to_string(args.prefixDraws)
                        + " draws (seed " + std::to_string(args.seed) + ") of "
                        + std::to_string(args.prefixTokens) + " random tokens repeated twice"
                        + (m->bos ? " after id " + std::to_string(*m->bos) : std::string())
                        + " of the second copy's A[i, i-N+1]");
        if (m->report.contributions)
            notes.push_back(
                "value_norm_sink: mean_i N_i0/sum_j N_ij, value_norm_mass: mean_i sum_j N_ij, "
                "N_ij = ||A_ij v_j W_O^h||; ablation_kl: KL(p||q) in nats of the last "
                "position's next token with the head's output "
                + std::string(m->report.ablationKind == models::Ablation::Mean
                                  ? "replaced by its mean over the positions"
                                  : "zeroed")
                + ", ablation_top1 its most probable token (the model's: "
                + std::to_string(m->report.ablation.top1)
                + "); rollout: --format json or --out-npz");
    }
    return notes;
}

/// The per-layer section of a model's table: rank collapse.
Table layerTable(const ModelHeadReport &m)
{
    Table table({"layer", "rank_collapse"});
    for (std::size_t l = 0; l < m.rankCollapse.size(); ++l)
        table.addRow({std::int64_t(l), QString::number(m.rankCollapse[l], 'f', 4).toStdString()});
    table.notes = {"rank_collapse: ||X - 1 mean(X)||_F / ||X||_F of each layer's output X "
                   "(Dong et al. 2021); 0 when every token's state is the same"};
    return table;
}

int runPlan(const HeadsArguments &args, const HeadsPlan &plan)
{
    const HeadScores scores = scoreStack(plan, args.options);
    const ModelHeadReport *model = plan.model ? &plan.model->report : nullptr;
    std::string text;
    if (args.format == Format::Json) {
        text = headReportJson(scores, model);
    } else {
        Table table = headReportTable(scores, model, args.format == Format::Table);
        if (args.format == Format::Csv) {
            text = table.toCsv();
        } else {
            table.notes = tableNotes(args, plan);
            text = table.toText();
            if (model)
                text += "\n" + layerTable(*model).toText();
        }
    }
    if (model && args.format == Format::Csv)
        QTextStream(stderr) << "attnlab heads: note: the csv holds the per-head scores; "
                               "rank_collapse (per layer) and rollout are in --format json\n";
    if (plan.tokens.empty() && args.format != Format::Table)
        QTextStream(stderr) << "attnlab heads: note: no tokens (--tokens, or 'tokens' / 'ids' "
                               "in the file): duplicate_token and induction are not computed\n";
    QString error;
    if (!writeText(QString(), QByteArray::fromStdString(text), &error))
        return failure(kCommand, error);
    if (model && !args.outNpz.isEmpty())
        writeContributionsNpz(args, plan);
    if (!args.outPath.isEmpty()) {
        const std::vector<std::string> notes = tableNotes(args, plan);
        QStringList caption = {q(notes[0]), q(notes[1])};
        if (!plan.firstNegative.empty())
            caption << q(signedNote(plan));
        const MatrixD *values = nullptr;
        for (const auto &[name, matrix] : headReportColumns(scores, model))
            if (args.score == QLatin1String(name))
                values = matrix;
        if (!writeHeadAtlas(args.outPath, *values, args.score, caption, &error))
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
        return runPlan(args, args.modelDir.isEmpty() ? planHeads(args) : planModel(args));
    } catch (const NpyError &e) {
        return inputError(QString::fromUtf8(e.what()));
    } catch (const InvalidArgument &e) {
        return inputError(QString::fromUtf8(e.what()));
    } catch (const models::ModelError &e) { // the model folder's files: the input's fault
        return inputError(QString::fromUtf8(e.what()));
    } catch (const text::TokenizerError &e) {
        return inputError(QString::fromUtf8(e.what()));
    }
}

} // namespace attn::cli
