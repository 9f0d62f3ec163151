#include "ui/session/modelrun.h"

#include "ui/session/sessioncompute.h"
#include "ui/session/sessionparameters.h"
#include "ui/session/tensorsource_p.h"
#include "ui/session/tokenizer.h"

#include "core/models/layertiles.h"
#include "core/models/modelfolder.h"
#include "core/models/safetensors.h"
#include "core/text/loader.h"
#include "core/text/piecelabel.h"

#include <QFile>
#include <QFileInfo>
#include <QRegularExpression>

#include <chrono>
#include <cmath>
#include <span>

namespace attn {
namespace {

QString q(const std::string &s)
{
    return QString::fromUtf8(s.data(), qsizetype(s.size()));
}

/// Every head of the run max-pooled to at most 256 × 256 values, smaller while the whole set
/// exceeds half of `budgetBytes` (down to 16 × 16); `block` gets the cells a side per value. Each
/// layer's heads come from the tile engine on the run's queries and keys
/// (models::layerTileEngine): the largest weight of each block's unmasked cells, 0 where all are
/// masked, without holding an n × n matrix. `progress(layer + 1)` after each layer.
WeightStack pooledThumbnails(const models::ForwardResult &f, const models::ModelConfig &c,
                             double budgetBytes, Index *block,
                             const std::function<void(Index layersDone)> &progress,
                             const CancelToken &cancel)
{
    const Index n = Index(f.ids.size());
    Index side = 256;
    const auto bytes = [&](Index s) { return double(c.layers * c.heads) * double(s * s) * 8.0; };
    while (side > 16 && bytes(std::min(side, n)) > budgetBytes / 2)
        side /= 2;
    *block = (n + side - 1) / side;
    WeightStack t;
    t.layers = c.layers;
    t.heads = c.heads;
    t.queries = t.keys = (n + *block - 1) / *block;
    t.type = NpyType::Float32;
    std::vector<Index> heads(std::size_t(c.heads));
    for (Index h = 0; h < c.heads; ++h)
        heads[std::size_t(h)] = h;
    for (Index l = 0; l < c.layers; ++l) {
        cancel.throwIfCancelled();
        TileEngine<float> engine = models::layerTileEngine<float>(f, c, l);
        const TileWindow all = engine.fullWindow();
        const auto tiles = engine.render(heads, all, tileGridWithCells(all, *block, *block),
                                         TilePooling::Max, nullptr, cancel);
        for (const PooledTile<float> &tile : tiles)
            t.weights.push_back(tile.values.cast<double>());
        if (progress)
            progress(l + 1);
    }
    return t;
}

/// A label for a token id without the text it came from: its decoded bytes, or "#id".
QString idLabel(const text::Tokenizer *tokenizer, std::int64_t id)
{
    if (!tokenizer)
        return QStringLiteral("#%1").arg(id);
    try {
        const text::TokenId tid = text::TokenId(id);
        return q(text::pieceLabel(tokenizer->decode(std::span<const text::TokenId>(&tid, 1))));
    } catch (const std::out_of_range &) {
        return QStringLiteral("#%1").arg(id);
    }
}

/// The most tokens the model and the window take: the Long tab's length (a run over
/// SessionParameters::maxSequence tokens is shown there and in the Model tab only).
std::int64_t maxTokens(const models::ModelConfig &c)
{
    std::int64_t limit = SessionParameters::maxLongSequence;
    if (c.learnedPositions)
        limit = std::min<std::int64_t>(limit, c.maxPositions);
    return limit;
}

/// The attention of `f` as a TensorSource of weights: every head kept (f holds them), or, when
/// `onDemand`, the sizes and max-pooled thumbnails, the layer shown computed from f's queries and
/// keys.
std::shared_ptr<const TensorSource>
stackSource(const ModelRun &run, const std::shared_ptr<const models::ForwardResult> &f,
            double budgetBytes, const std::function<void(Index layersDone)> &progress,
            const CancelToken &cancel)
{
    const models::ModelConfig &c = run.model->model->config();
    const Index n = Index(f->ids.size());
    auto data = std::make_shared<TensorSource::Data>();
    data->kind = TensorSource::Kind::Weights;
    data->path = run.model->folder;
    data->arrayName = QStringLiteral("attention");
    data->attentionStack = true;
    data->modelRun = true;
    data->modelName = run.model->name;
    data->modelFamily = run.model->family;
    WeightStack s;
    s.layers = c.layers;
    s.heads = c.heads;
    s.queries = s.keys = n;
    s.type = NpyType::Float32;
    if (run.onDemand) {
        Index block = 1;
        data->thumbnails = pooledThumbnails(*f, c, budgetBytes, &block, progress, cancel);
        data->thumbnailBlock = int(block);
        data->onDemand = true;
        data->longOnly = run.longOnly;
        if (run.longOnly)
            data->notes << QStringLiteral("%1 tokens: every head would take %2, one layer more "
                                          "than a view holds")
                               .arg(n)
                               .arg(byteSizeText(modelStackBytes(c, n)))
                        << QStringLiteral("click a head to see it whole in the Long tab, computed "
                                          "from the queries and keys");
        else
            data->notes << QStringLiteral("%1 tokens: every head would take %2, over the budget "
                                          "of %3")
                               .arg(n)
                               .arg(byteSizeText(modelStackBytes(c, n)), byteSizeText(budgetBytes))
                        << QStringLiteral("each layer is computed from the queries and keys when "
                                          "shown");
    } else {
        s.weights.reserve(std::size_t(c.layers * c.heads));
        for (Index l = 0; l < c.layers; ++l) {
            cancel.throwIfCancelled();
            for (Index h = 0; h < c.heads; ++h)
                s.weights.push_back(
                    f->layers[std::size_t(l)].weights[std::size_t(h)].cast<double>());
        }
        data->rowSums = checkRowSums(s, rowSumTolerance(NpyType::Float32, n));
    }
    data->weights = std::move(s);
    data->forward = f;
    data->modelConfig = c;
    for (const TokenPiece &piece : run.input.pieces)
        data->tokens << piece.label;
    data->description = QStringLiteral("%1 layers \u00d7 %2 heads, n = %3 tokens")
                            .arg(c.layers)
                            .arg(c.heads)
                            .arg(n);
    if (c.slidingWindow)
        data->notes << QStringLiteral("sliding window of %1 on the layers that use it")
                           .arg(c.slidingWindowSize);
    return std::make_shared<const TensorSource>(std::move(data));
}

} // namespace

QString nextTokenNumberText(double value)
{
    return QString::number(value, 'g', 6);
}

QString OpenedModel::summary() const
{
    const models::ModelConfig &c = model->config();
    const models::TensorInfo *embedding = model->weights().tokenEmbedding.tensor;
    return QStringLiteral("%1, %2 layers \u00d7 %3 heads (d_k %4%5), vocab %6, %7, %8 of weights")
        .arg(family)
        .arg(c.layers)
        .arg(c.heads)
        .arg(c.headDim)
        .arg(c.kvHeads != c.heads ? QStringLiteral(", %1 key/value heads").arg(c.kvHeads)
                                  : QString())
        .arg(c.vocabSize)
        .arg(QString::fromLatin1(embedding ? models::dtypeName(embedding->dtype) : "?"))
        .arg(byteSizeText(double(model->weightBytes())));
}

std::shared_ptr<const OpenedModel> openModelFolder(const QString &folder, QString *error)
{
    auto fail = [&](const QString &message) -> std::shared_ptr<const OpenedModel> {
        if (error)
            *error = message;
        return nullptr;
    };
    const QFileInfo info(folder);
    if (!info.exists())
        return fail(QStringLiteral("%1: no such folder").arg(folder));
    if (!info.isDir())
        return fail(QStringLiteral("%1: not a folder (choose the folder holding config.json and "
                                   "the .safetensors weights)")
                        .arg(folder));
    auto opened = std::make_shared<OpenedModel>();
    opened->folder = info.absoluteFilePath();
    const std::string local = QFile::encodeName(opened->folder).toStdString();
    try {
        opened->model = std::make_shared<const models::Model>(models::Model::open(local));
    } catch (const models::ModelError &e) {
        return fail(q(e.what()));
    } catch (const std::bad_alloc &) {
        return fail(QStringLiteral("%1: out of memory").arg(folder));
    }
    opened->name = q(models::modelDisplayName(local));
    opened->family = QString::fromLatin1(models::modelFamilyName(opened->model->config().family));
    try {
        opened->tokenizer = text::loadTokenizer(local);
    } catch (const text::TokenizerError &e) {
        opened->tokenizerProblem = q(e.what());
    }
    return opened;
}

QVector<TokenPiece> tokenPieces(const OpenedModel *model, const QString &text)
{
    QVector<TokenPiece> out;
    if (!model || !model->tokenizer) {
        for (const QString &word : splitTokens(text)) {
            TokenPiece p;
            p.label = word;
            p.bytesHex = q(text::hexBytes(word.toStdString()));
            out.push_back(p);
        }
        return out;
    }
    const std::string bytes = text.toStdString();
    const text::Tokenizer &tokenizer = *model->tokenizer;
    const text::Encoding e = tokenizer.encode(bytes);
    out.reserve(qsizetype(e.tokens.size()));
    for (const text::Token &t : e.tokens) {
        const std::string tokenBytes = text::tokenBytes(tokenizer, t, bytes);
        TokenPiece p;
        p.label = q(text::pieceLabel(tokenBytes));
        p.id = t.id;
        p.begin = std::int64_t(t.begin);
        p.end = std::int64_t(t.end);
        p.bytesHex = q(text::hexBytes(tokenBytes));
        p.special = t.special;
        out.push_back(p);
    }
    return out;
}

std::optional<ModelInput> prepareModelInput(const OpenedModel &model, const QString &text,
                                            bool asIds, QString *error)
{
    auto fail = [&](const QString &message) -> std::optional<ModelInput> {
        if (error)
            *error = message;
        return std::nullopt;
    };
    const models::ModelConfig &c = model.model->config();
    ModelInput input;
    input.text = text;
    input.fromIds = asIds || !model.tokenizer;
    if (input.fromIds) {
        const QStringList parts
            = text.split(QRegularExpression(QStringLiteral("[\\s,]+")), Qt::SkipEmptyParts);
        for (const QString &part : parts) {
            bool ok = false;
            const qlonglong id = part.toLongLong(&ok);
            if (!ok || id < 0 || id >= c.vocabSize)
                return fail(QStringLiteral("token id '%1' is not a whole number in [0, %2) "
                                           "(the vocabulary of %3)")
                                .arg(part)
                                .arg(c.vocabSize)
                                .arg(model.name));
            input.ids.push_back(id);
            TokenPiece p;
            p.id = id;
            p.label = idLabel(model.tokenizer.get(), id);
            input.pieces.push_back(p);
        }
    } else {
        input.pieces = tokenPieces(&model, text);
        for (const TokenPiece &p : input.pieces) {
            if (p.id >= c.vocabSize)
                return fail(QStringLiteral("token \u201c%1\u201d has id %2, outside the "
                                           "vocabulary [0, %3) of %4: its tokenizer does not "
                                           "match the checkpoint")
                                .arg(p.label)
                                .arg(p.id)
                                .arg(c.vocabSize)
                                .arg(model.name));
            input.ids.push_back(p.id);
        }
    }
    if (input.ids.empty())
        return fail(input.fromIds ? QStringLiteral("type token ids, e.g. 464, 3797, 3332")
                                  : QStringLiteral("type some text to run the model on"));
    const std::int64_t limit = maxTokens(c);
    if (std::int64_t(input.ids.size()) > limit)
        return fail(QStringLiteral("%1 tokens are more than %2 takes (at most %3%4)")
                        .arg(input.ids.size())
                        .arg(model.name)
                        .arg(limit)
                        .arg(c.learnedPositions && limit == c.maxPositions
                                 ? QStringLiteral(", its learned positions")
                                 : QString()));
    return input;
}

// TensorSource's model shape is defined here, beside the run that sets its data.
std::optional<TensorSource::ModelShape> TensorSource::modelShape() const
{
    if (!m_data->modelRun)
        return std::nullopt;
    const models::ModelConfig &c = m_data->modelConfig;
    ModelShape shape;
    shape.dModel = int(c.hiddenSize);
    shape.headDim = int(c.headDim);
    shape.kvHeads = int(c.kvHeads);
    shape.causal = c.causal;
    shape.window = c.usesSlidingWindow(m_layer) ? int(c.slidingWindowSize) : 0;
    shape.scale = m_data->forward ? m_data->forward->scale : 1.0 / std::sqrt(double(c.headDim));
    return shape;
}

QString byteSizeText(double bytes)
{
    if (bytes >= double(1 << 30))
        return QStringLiteral("%1 GiB").arg(bytes / double(1 << 30), 0, 'f', 1);
    if (bytes >= double(1 << 20))
        return QStringLiteral("%1 MiB").arg(bytes / double(1 << 20), 0, 'f', 1);
    return QStringLiteral("%1 KiB").arg(bytes / 1024.0, 0, 'f', 0);
}

double modelStackBytes(const models::ModelConfig &config, std::int64_t tokens)
{
    const double n = double(tokens);
    return double(config.layers) * double(config.heads) * n * n * 8.0;
}

ModelRun runModel(const std::shared_ptr<const OpenedModel> &model, const ModelInput &input,
                  std::uint64_t budgetBytes, int topK,
                  const std::function<void(int done, int total)> &progress,
                  const CancelToken &cancel)
{
    const models::ModelConfig &c = model->model->config();
    const std::int64_t n = std::int64_t(input.ids.size());
    ModelRun run;
    run.model = model;
    run.input = input;
    run.onDemand = modelStackBytes(c, n) > double(budgetBytes);
    // A layer shown holds its weights and their raw and scaled scores, as float64; past
    // maxSequence tokens or the session's budget only the Long and Model tabs show the run.
    const double layerBytes = double(c.heads) * double(n) * double(n) * 8.0 * 3.0;
    run.longOnly = run.onDemand
        && (n > SessionParameters::maxSequence || layerBytes > double(sessionMemoryBudget()));
    // Held meanwhile: every layer's queries and keys (float32), and one layer's tile engine.
    const double keptBytes
        = double(c.layers) * double(c.heads + c.kvHeads) * double(n) * double(c.headDim) * 4.0;
    const double engineBytes = double(TileEngine<float>::heldBytes(
        Index(n), Index(n), Index(c.heads), Index(c.headDim), sizeof(float)));
    if (keptBytes + engineBytes > double(sessionMemoryBudget()))
        throw InvalidArgument(
            QStringLiteral("%1 tokens: the queries and keys of %2 layers \u00d7 (%3 + %4 key/value "
                           "heads) \u00d7 d_k %5 take %6 (and %7 to draw a layer), over the "
                           "session's memory budget of %8; type fewer tokens")
                .arg(n)
                .arg(c.layers)
                .arg(c.heads)
                .arg(c.kvHeads)
                .arg(c.headDim)
                .arg(byteSizeText(keptBytes), byteSizeText(engineBytes),
                     byteSizeText(double(sessionMemoryBudget())))
                .toStdString());
    models::ForwardOptions options;
    if (!run.onDemand)
        options.keepWeights = [](Index, Index) { return true; };
    options.keepQueriesKeys = true;
    // The readout needs the last position's logits only (n × vocab would be 2 GiB for Llama 3's
    // vocabulary at 4 096 tokens).
    options.lastLogitsOnly = true;
    options.cancel = cancel;
    // Progress in steps of a layer: the forward's layers, then (on demand) the thumbnails'.
    const int steps = int(c.layers) * (run.onDemand ? 2 : 1);
    if (progress)
        options.progress = [&](Index done, Index) { progress(int(done), steps); };
    const auto start = std::chrono::steady_clock::now();
    auto forward = std::make_shared<models::ForwardResult>(
        models::forward(*model->model, input.ids, options));
    run.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    run.next = models::topNextTokens(forward->logits, topK);
    for (const models::NextToken &t : run.next)
        run.nextLabels << idLabel(model->tokenizer.get(), t.id);
    const auto thumbnailsDone = [&](Index layersDone) {
        if (progress)
            progress(int(c.layers + layersDone), steps);
    };
    run.source = stackSource(run, forward, double(budgetBytes), thumbnailsDone, cancel);
    // Kept: the queries and keys (headWeights); the weights are in the source, the logits read.
    for (models::LayerAttention &layer : forward->layers)
        layer.weights.clear();
    forward->logits.resize(0, 0);
    run.forward = std::move(forward);
    return run;
}

} // namespace attn
