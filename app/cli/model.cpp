// attnlab model: a Hugging Face checkpoint (config.json + model.safetensors, or the shards of
// model.safetensors.index.json) run on token ids by core/models (GPT-2, Llama, Qwen2, Qwen3,
// BERT); writes the attention weights, logits and final hidden states to an .npz.
//
//   attnlab model --model DIR --info
//   attnlab model --model DIR (--ids 1,2,3 | --text T) [--layer L] [--head H] [--top-k K]
//                 [--out FILE.npz]
//
// --text is tokenized by the folder's tokenizer (core/text/loader.h), as attnlab tokenize does.
// Output arrays: ids (n, int64), tokens (n strings, text::tokenLabels: the text's piece of each
// token, with --text), attention (layers × heads × n × n float32: every layer and
// head, or only --layer L and/or --head H; layer and head name the ones written), logits
// (n × vocab float32), hidden (n × hidden float32). The full attention stack is refused when it
// exceeds --memory-budget-mib, with the arithmetic. Parse → plan → run, each step its own
// function.

#include "common.h"

#include "core/models/config.h"
#include "core/models/forward.h"
#include "core/models/model.h"
#include "core/models/nexttoken.h"
#include "core/models/safetensors.h"
#include "core/text/loader.h"
#include "core/text/piecelabel.h"
#include "ui/session/modelrun.h"

#include <QDir>
#include <QFileInfo>
#include <QTemporaryDir>
#include <QTextStream>

#include <algorithm>
#include <cmath>
#include <optional>
#include <string>
#include <vector>

namespace attn::cli {
namespace {

using namespace attn::models;

const QString kCommand = QStringLiteral("model");

/// What the command line asks for.
struct ModelRequest
{
    QString modelDir;
    bool info = false;
    std::vector<std::int64_t> ids; ///< given by --ids, or the tokenizer's for --text
    std::optional<QString> text; ///< --text: tokenized by the model folder's tokenizer
    std::vector<std::string> tokens; ///< labels of the ids (text::tokenLabels) for --text
    std::optional<Index> layer; ///< only this layer's attention
    std::optional<Index> head; ///< only this head's attention
    std::int64_t topK = 0;
    QString outPath;
    double budgetBytes = 0;
};

/// The layers and heads whose attention is written.
struct ModelPlan
{
    std::vector<Index> layers;
    std::vector<Index> heads;
    double attentionBytes = 0; ///< float32 in the file plus float64 while the .npz is built
};

QString q(const std::string &s)
{
    return QString::fromStdString(s);
}

// Parses the command line into `request`; returns an exit code when the command is done
// (--help, or a usage error).
// --out names a figure (PNG, SVG or PDF) rather than an .npz.
bool isFigurePath(const QString &path)
{
    const QString suffix = QFileInfo(path).suffix().toLower();
    return suffix == QLatin1String("png") || suffix == QLatin1String("svg")
        || suffix == QLatin1String("pdf");
}

std::optional<int> parseRequest(const QStringList &arguments, ModelRequest &request)
{
    QCommandLineParser parser;
    parser.setApplicationDescription(QStringLiteral(
        "Run a Hugging Face checkpoint (a folder with config.json and model.safetensors or "
        "model.safetensors.index.json; GPT-2, Llama, Qwen2, Qwen3, BERT) on token ids, or on a "
        "text tokenized by the folder's own tokenizer, and write ids (and tokens), attention "
        "(layers x heads x n x n), logits (n x vocab) and hidden (n x hidden) to "
        "an .npz. Weights are memory-mapped; F32, F16 and BF16 checkpoints are read."));
    const QCommandLineOption modelOption(
        QStringLiteral("model"),
        QStringLiteral("Checkpoint folder, or builtin: the built-in byte-level GPT trained on the "
                       "Brown Corpus."),
        QStringLiteral("dir"));
    const QCommandLineOption infoOption(QStringLiteral("info"),
                                        QStringLiteral("Print the model's configuration."));
    const QCommandLineOption idsOption(QStringLiteral("ids"),
                                       QStringLiteral("Token ids, comma-separated."),
                                       QStringLiteral("ids"));
    const QCommandLineOption textOption(
        QStringLiteral("text"),
        QStringLiteral("Text, tokenized by the model folder's tokenizer (as attnlab tokenize)."),
        QStringLiteral("text"));
    const QCommandLineOption layerOption(QStringLiteral("layer"),
                                         QStringLiteral("Write only this layer's attention."),
                                         QStringLiteral("L"));
    const QCommandLineOption headOption(QStringLiteral("head"),
                                        QStringLiteral("Write only this head's attention."),
                                        QStringLiteral("H"));
    const QCommandLineOption topKOption(
        QStringLiteral("top-k"),
        QStringLiteral("Print the K most probable next tokens after the last id."),
        QStringLiteral("K"));
    const QCommandLineOption outOption(
        QStringLiteral("out"),
        QStringLiteral("Output .npz file (written atomically), or a figure (.png, .svg, .pdf): "
                       "every layer and head, the --layer's heads, or one --layer --head."),
        QStringLiteral("file"));
    addOptionsWithDefaults(parser,
                           {modelOption, infoOption, idsOption, textOption, layerOption, headOption,
                            topKOption, outOption,
                            memoryBudgetOption(QStringLiteral(
                                "runs whose attention stack (layers x heads x n x n) needs"))});
    if (const auto done = parseArguments(parser, kCommand, arguments))
        return *done;
    if (!parser.positionalArguments().isEmpty())
        return usageError(
            kCommand,
            QStringLiteral("unexpected argument '%1'").arg(parser.positionalArguments().first()));
    if (!parser.isSet(modelOption))
        return usageError(kCommand, QStringLiteral("--model <dir> is required"));
    request.modelDir = modelFolderArgument(parser.value(modelOption));
    request.info = parser.isSet(infoOption);
    if (request.info)
        return std::nullopt;
    if (parser.isSet(idsOption) && parser.isSet(textOption))
        return usageError(kCommand,
                          QStringLiteral("give either --ids or --text (or --info), not both"));
    if (!parser.isSet(idsOption) && !parser.isSet(textOption))
        return usageError(kCommand,
                          QStringLiteral("give the input: --ids 464,2068,... or --text \"...\" "
                                         "(or --info for the model alone)"));
    if (!parser.isSet(outOption) && !parser.isSet(topKOption))
        return usageError(kCommand, QStringLiteral("--out <file> or --top-k K is required"));
    QString error;
    if (!textOrIdsOption(parser, &request.text, &request.ids, &error))
        return usageError(kCommand, error);
    for (const auto &[option, target] :
         {std::pair {&layerOption, &request.layer}, std::pair {&headOption, &request.head}}) {
        if (!parser.isSet(*option))
            continue;
        const auto v = intOption(parser, option->names().first(), 0, 1 << 20, &error);
        if (!v)
            return usageError(kCommand, error);
        *target = Index(*v);
    }
    if (parser.isSet(topKOption)) {
        const auto k = intOption(parser, QStringLiteral("top-k"), 1, 1000, &error);
        if (!k)
            return usageError(kCommand, error);
        request.topK = *k;
    }
    request.outPath = parser.value(outOption);
    const auto budget = memoryBudgetBytes(parser, &error);
    if (!budget)
        return usageError(kCommand, error);
    request.budgetBytes = *budget;
    if (!request.outPath.isEmpty()) {
        const QString suffix = QFileInfo(request.outPath).suffix().toLower();
        if (suffix != QLatin1String("npz") && !isFigurePath(request.outPath))
            return usageError(kCommand,
                              QStringLiteral("--out '%1': write .npz (the arrays) or "
                                             ".png, .svg or .pdf (a figure)")
                                  .arg(request.outPath));
        // Every file of the model folder is an input: --out must not replace the checkpoint,
        // its config or its tokenizer.
        std::vector<OutputPath> inputs;
        const QDir folder(request.modelDir);
        for (const QString &name : folder.entryList(QDir::Files | QDir::Hidden))
            inputs.push_back({QStringLiteral("--model"), folder.filePath(name)});
        if (const auto refused = checkOutputPaths(
                kCommand, {OutputPath {QStringLiteral("--out"), request.outPath}}, inputs))
            return *refused;
    }
    return std::nullopt;
}

// The folder's tokenizer: required for --text (TokenizerError naming the expected files when
// there is none); for --top-k with ids only, used when present to show the pieces.
std::unique_ptr<text::Tokenizer> openTokenizer(const ModelRequest &request)
{
    try {
        return text::loadTokenizer(request.modelDir.toStdString());
    } catch (const text::TokenizerError &) {
        if (request.text)
            throw;
        return nullptr;
    }
}

int printInfo(const Model &model)
{
    const ModelConfig &c = model.config();
    QTextStream out(stdout);
    const auto &files = model.checkpoint().files();
    const TensorInfo *embedding = model.weights().tokenEmbedding.tensor;
    out << "family: " << modelFamilyName(c.family) << "\n"
        << "layers: " << c.layers << "\n"
        << "hidden: " << c.hiddenSize << "\n"
        << "heads: " << c.heads << " (key/value heads " << c.kvHeads << ", head_dim " << c.headDim
        << ")\n"
        << "intermediate: " << c.intermediateSize << "\n"
        << "vocab: " << c.vocabSize << "\n"
        << "norm: " << (c.norm == NormKind::LayerNorm ? "LayerNorm" : "RMSNorm") << " (eps "
        << c.normEps << ")" << (c.postNorm ? ", post-LN" : "") << "\n"
        << "attention: " << (c.causal ? "causal" : "bidirectional");
    if (c.slidingWindow)
        out << ", sliding window " << c.slidingWindowSize << " from layer " << c.maxWindowLayers;
    out << "\n";
    if (c.rope) {
        static const char *const kScaling[] = {"none", "linear", "llama3"};
        out << "rope: theta " << c.ropeTheta << ", scaling " << kScaling[int(c.ropeScaling.type)];
        if (c.ropeScaling.type != RopeScalingType::None)
            out << " (factor " << c.ropeScaling.factor << ")";
        out << "\n";
    } else {
        out << "positions: learned (" << c.maxPositions << ")\n";
    }
    out << "tied embeddings: " << (c.tieWordEmbeddings ? "yes" : "no") << "\n"
        << "dtype: " << dtypeName(embedding->dtype) << "\n"
        << "files: " << files.size() << " (" << model.weightBytes() << " bytes of weights)\n"
        << "tensors: " << model.checkpoint().names().size() << "\n";
    return ExitOk;
}

// Which layers/heads are written, and whether the attention stack fits the budget.

std::optional<int> planRun(const ModelRequest &request, const ModelConfig &c, ModelPlan &plan)
{
    const auto check = [&](const std::optional<Index> &v, Index count, const char *option) {
        return !v || *v < count ? QString()
                                : QStringLiteral("--%1 %2 is past the model's last (%3)")
                                      .arg(option)
                                      .arg(*v)
                                      .arg(count - 1);
    };
    for (const QString &message :
         {check(request.layer, c.layers, "layer"), check(request.head, c.heads, "head")})
        if (!message.isEmpty())
            return usageError(kCommand, message);
    for (const std::int64_t id : request.ids)
        if (id >= c.vocabSize)
            return usageError(kCommand,
                              QStringLiteral("--ids: token id %1 is outside the "
                                             "vocabulary [0, %2)")
                                  .arg(id)
                                  .arg(c.vocabSize));
    plan.layers.clear();
    plan.heads.clear();
    for (Index l = 0; l < c.layers; ++l)
        if (!request.layer || *request.layer == l)
            plan.layers.push_back(l);
    for (Index h = 0; h < c.heads; ++h)
        if (!request.head || *request.head == h)
            plan.heads.push_back(h);
    // A figure draws every head of its layers.
    const bool figure = !request.outPath.isEmpty() && isFigurePath(request.outPath);
    if (figure && request.head && !request.layer)
        return usageError(kCommand, QStringLiteral("a figure of one --head needs its --layer"));
    const double n = double(request.ids.size());
    const double heads = figure ? double(c.heads) : double(plan.heads.size());
    const double values = double(plan.layers.size()) * heads * n * n;
    // An .npz: float32 computed plus float64 while the archive is built; a figure: the stack's
    // float32 file read back by the renderer as the heatmap command counts it (20 bytes a value).
    const double bytesPerValue = figure ? 20.0 : 12.0;
    plan.attentionBytes = values * bytesPerValue;
    if ((figure || (!request.layer && !request.head)) && !request.outPath.isEmpty()
        && plan.attentionBytes > request.budgetBytes)
        return usageError(
            kCommand,
            QStringLiteral("the attention stack needs %1 layers x %2 heads x %3 x %3 values x %4 "
                           "bytes (%5) = %6, over --memory-budget-mib %7; %8")
                .arg(plan.layers.size())
                .arg(heads)
                .arg(request.ids.size())
                .arg(bytesPerValue)
                .arg(figure ? QStringLiteral("float32 computed, float64 while it is drawn")
                            : QStringLiteral("float32 computed, float64 while the .npz is built"),
                     mibText(plan.attentionBytes), mibText(request.budgetBytes),
                     figure ? QStringLiteral("ask for one --layer, fewer ids, or a larger budget")
                            : QStringLiteral("ask for one --layer or --head, fewer ids, or a "
                                             "larger budget")));
    // An .npz also holds the logits (n × vocab) and the hidden states: float32 computed plus a
    // float64 copy while the archive is built.
    const bool npz = !request.outPath.isEmpty() && !figure;
    const double logitBytes = npz ? n * double(c.vocabSize) * 12.0 : 0.0;
    if (npz && logitBytes > request.budgetBytes)
        return usageError(kCommand,
                          QStringLiteral("the logits need %1 x %2 values x 12 bytes = %3, over "
                                         "--memory-budget-mib %4; give fewer ids, or use "
                                         "--top-k or a figure (--out FILE.png), which keep only "
                                         "the last position's logits")
                              .arg(request.ids.size())
                              .arg(c.vocabSize)
                              .arg(mibText(logitBytes))
                              .arg(mibText(request.budgetBytes)));
    return std::nullopt;
}

NpyArray attentionArray(const ForwardResult &r, const ModelPlan &plan)
{
    const std::int64_t n = std::int64_t(r.ids.size());
    NpyArray a;
    a.type = NpyType::Float32;
    a.shape = {std::int64_t(plan.layers.size()), std::int64_t(plan.heads.size()), n, n};
    a.values.reserve(std::size_t(a.size()));
    for (const Index l : plan.layers)
        for (const Index h : plan.heads) {
            const MatrixF &w = r.layers[std::size_t(l)].weights[std::size_t(h)];
            a.values.insert(a.values.end(), w.data(), w.data() + w.size());
        }
    return a;
}

NpyArray intArray(const std::vector<Index> &values)
{
    NpyArray a;
    a.type = NpyType::Int64;
    a.shape = {std::int64_t(values.size())};
    a.values.assign(values.begin(), values.end());
    return a;
}

void writeOutput(const ModelRequest &request, const ForwardResult &r, const ModelPlan &plan)
{
    NpyArray ids;
    ids.type = NpyType::Int64;
    ids.shape = {std::int64_t(r.ids.size())};
    ids.values.assign(r.ids.begin(), r.ids.end());
    std::vector<std::pair<std::string, NpyArray>> members;
    members.emplace_back("ids", std::move(ids));
    members.emplace_back("attention", attentionArray(r, plan));
    members.emplace_back("layers", intArray(plan.layers));
    members.emplace_back("heads", intArray(plan.heads));
    if (r.logits.size() > 0)
        members.emplace_back("logits", NpyArray::fromMatrix<float>(r.logits));
    members.emplace_back("hidden", NpyArray::fromMatrix<float>(r.hidden));
    NpzStrings strings;
    if (!request.tokens.empty())
        strings.emplace_back("tokens",
                             NpyStrings {{std::int64_t(request.tokens.size())}, request.tokens});
    writeNpz(request.outPath.toStdString(), members, true, strings);
}

// --out FILE.png / .svg / .pdf: the attention written as a model's stack ('attentions', layers ×
// heads × n × n, with 'tokens') into a temporary file named after the model (and the layer) and
// drawn by the heatmap command's renderers: every layer and head (--view model), one layer's
// heads (grid), or one head of that layer (head). `figure` holds every head of the layers drawn.
int writeFigure(const ModelRequest &request, const ForwardResult &r, const ModelPlan &figure)
{
    QTemporaryDir dir;
    if (!dir.isValid())
        return failure(
            kCommand,
            QStringLiteral("cannot create a temporary folder: %1").arg(dir.errorString()));
    QString name = QFileInfo(QDir::cleanPath(request.modelDir)).fileName();
    if (name.isEmpty())
        name = QStringLiteral("model");
    if (request.layer)
        name += QStringLiteral(" layer %1").arg(*request.layer);
    const QString stack = dir.filePath(name + QStringLiteral(".npz"));
    std::vector<std::string> tokens = request.tokens;
    if (tokens.empty())
        for (const std::int64_t id : r.ids)
            tokens.push_back(std::to_string(id));
    writeNpz(stack.toStdString(), {{"attentions", attentionArray(r, figure)}}, false,
             {{"tokens", NpyStrings {{std::int64_t(tokens.size())}, tokens}}});
    QStringList arguments {QStringLiteral("heatmap"),
                           QStringLiteral("--in"),
                           stack,
                           QStringLiteral("--out"),
                           request.outPath,
                           QStringLiteral("--memory-budget-mib"),
                           QString::number(std::max<qint64>(1, qint64(request.budgetBytes) >> 20))};
    if (request.layer && request.head)
        arguments << QStringLiteral("--view") << QStringLiteral("head") << QStringLiteral("--head")
                  << QString::number(*request.head);
    else if (request.layer)
        arguments << QStringLiteral("--view") << QStringLiteral("grid");
    else // the model view's natural size (64-pixel maps), at twice the pixels for a PNG
        arguments << QStringLiteral("--view") << QStringLiteral("model") << QStringLiteral("--dpr")
                  << (QFileInfo(request.outPath).suffix().toLower() == QLatin1String("png")
                          ? QStringLiteral("2")
                          : QStringLiteral("1"));
    return runHeatmap(arguments);
}

// The K most probable next tokens after the last position (models::topNextTokens), with their
// pieces when the folder has a tokenizer.
void printTopK(const ForwardResult &r, std::int64_t k, const text::Tokenizer *tokenizer)
{
    QTextStream out(stdout);
    if (r.logits.size() == 0) {
        out << "no logits (the checkpoint has no language-model head)\n";
        return;
    }
    out << "rank\tid\tprobability\tlogit" << (tokenizer ? "\ttoken" : "") << "\n";
    int rank = 0;
    for (const NextToken &t : topNextTokens(r.logits, r.logits.rows() - 1, Index(k))) {
        out << ++rank << "\t" << t.id << "\t" << nextTokenNumberText(t.probability) << "\t"
            << nextTokenNumberText(t.logit);
        if (tokenizer) {
            const text::TokenId id = text::TokenId(t.id);
            std::string piece;
            try {
                piece = tokenizer->decode(std::span(&id, 1));
            } catch (const std::out_of_range &) {
                piece = "(not in the tokenizer)";
            }
            out << "\t" << q(text::pieceLabel(piece));
        }
        out << "\n";
    }
}

int runForward(const ModelRequest &request, const Model &model, ModelPlan plan,
               const text::Tokenizer *tokenizer)
{
    const bool figure = !request.outPath.isEmpty() && isFigurePath(request.outPath);
    if (figure) // every head of the layers drawn: the grid's and the head view's captions
        for (Index h = 0; h < model.config().heads; ++h)
            if (std::find(plan.heads.begin(), plan.heads.end(), h) == plan.heads.end())
                plan.heads.push_back(h);
    std::sort(plan.heads.begin(), plan.heads.end());
    ForwardOptions options;
    const std::vector<Index> &layers = plan.layers, &heads = plan.heads;
    if (!request.outPath.isEmpty())
        options.keepWeights = [&](Index l, Index h) {
            return std::find(layers.begin(), layers.end(), l) != layers.end()
                && std::find(heads.begin(), heads.end(), h) != heads.end();
        };
    options.keepQueriesKeys = false;
    // Only an .npz holds every position's logits; --top-k and figures read the last row.
    options.lastLogitsOnly = request.outPath.isEmpty() || figure;
    const ForwardResult r = models::forward(model, request.ids, options);
    if (request.topK > 0)
        printTopK(r, request.topK, tokenizer);
    if (figure)
        return writeFigure(request, r, plan);
    if (!request.outPath.isEmpty())
        writeOutput(request, r, plan);
    return ExitOk;
}

} // namespace

int runModel(const QStringList &arguments)
{
    ModelRequest request;
    if (const auto done = parseRequest(arguments, request))
        return *done;
    try {
        const Model model = Model::open(request.modelDir.toStdString());
        if (request.info)
            return printInfo(model);
        std::unique_ptr<text::Tokenizer> tokenizer;
        if (request.text || request.topK > 0)
            tokenizer = openTokenizer(request);
        if (request.text) {
            TokenizedText tokenized = tokenizeForModel(request.modelDir, *request.text);
            request.ids = std::move(tokenized.ids);
            request.tokens = std::move(tokenized.labels);
            if (request.ids.empty())
                return usageError(
                    kCommand,
                    QStringLiteral("--text gives no tokens with %1").arg(tokenized.tokenizer));
        }
        ModelPlan plan;
        if (const auto refused = planRun(request, model.config(), plan))
            return *refused;
        return runForward(request, model, plan, tokenizer.get());
    } catch (const ModelError &e) { // the model folder's files: the input's fault
        return inputError(kCommand, q(e.what()));
    } catch (const NpyError &e) { // writing the .npz
        return failure(kCommand, q(e.what()));
    } catch (const text::TokenizerError &e) {
        return inputError(kCommand, q(e.what()));
    }
}

} // namespace attn::cli
