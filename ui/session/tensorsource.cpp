#include "ui/session/tensorsource.h"

#include "ui/session/sessioncompute.h"
#include "ui/session/tensorsource_p.h"

#include "core/analysis/metrics.h"
#include "core/attention/attention.h"
#include "core/attention/groupedattention.h"
#include "core/attention/mask.h"
#include "core/attention/multihead.h"
#include "core/attention/variants.h"
#include "core/base/messages.h"
#include "core/base/threads.h"
#include "core/engine/engineparameters.h"

#include <QDir>
#include <QFile>
#include <QFileInfo>
#include <QStringDecoder>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <exception>
#include <limits>
#include <new>
#include <type_traits>

namespace attn {

namespace {

QString q(const std::string &s)
{
    return QString::fromStdString(s);
}

/// Adds one head's report to the result's running NaN/Inf report.
void mergeNonFinite(NonFiniteReport &into, const NonFiniteReport &nf)
{
    if (!nf.found)
        return;
    if (!into.found) {
        into = nf;
    } else {
        into.nanCount += nf.nanCount;
        into.infCount += nf.infCount;
    }
}

/// Inputs: the forward pass of MultiheadAttention<T> (or plain attention) with the session's
/// scale, temperature, extra mask and dtype.
template<typename T>
void computeInputs(const SessionParameters &p, const TensorCase<double> &c, SessionResult &r,
                   const CancelToken &cancel)
{
    const Index nQ = c.queryCount(), nK = c.keyCount();
    const AttentionMask mask
        = c.mask | maskFromParameters(p.kind, p.mask, p.paddingCount, nQ, nK, p.window, p.sinks);
    // Projections 2·(n_q + 2·n_k)·d_model², scores and W V 4·n_q·n_k·d_model.
    const double d = double(c.dModel());
    const ScopedKernelThreads team(threadsForFlops(2.0 * (double(nQ) + 2.0 * double(nK)) * d * d
                                                   + 4.0 * double(nQ) * double(nK) * d));
    AttentionOptions options;
    options.scaleExponent = p.scaleExponent;
    options.temperature = p.temperature;

    // query n_q × d_model, key n_k × d_model, value n_k × d_v, in T
    const Matrix<T> query = c.query.cast<T>();
    const Matrix<T> key = c.key.cast<T>();
    const Matrix<T> value = c.value.cast<T>();
    std::vector<Matrix<T>> weights, scores, scaled;
    std::vector<std::vector<std::uint8_t>> fully;
    Matrix<T> mean;
    if (c.multihead) {
        MultiheadAttention<T> layer(c.dModel(), c.heads, c.bias);
        if (c.separateProjections) // key n_k × kdim, value n_k × vdim
            layer.setSeparateProjections(c.qProjWeight.cast<T>(), c.kProjWeight.cast<T>(),
                                         c.vProjWeight.cast<T>(), c.inProjBias.cast<T>(),
                                         c.outProjWeight.cast<T>(), c.outProjBias.cast<T>());
        else
            layer.setParameters(c.inProjWeight.cast<T>(), c.inProjBias.cast<T>(),
                                c.outProjWeight.cast<T>(), c.outProjBias.cast<T>());
        MultiheadResult<T> m = layer.forward(query, key, value, mask, options);
        weights = std::move(m.weights);
        scores = std::move(m.scores);
        scaled = std::move(m.scaledScores);
        fully = std::move(m.fullyMasked);
        mean = std::move(m.weightsMean);
        r.scale = m.scale;
    } else if (c.projectedHeads || c.variants.any()) {
        // Already-projected heads: query n_q × h·d_k, key n_k × g·d_k, value n_k × g·d_v (plain
        // attention with a variant's arrays as one head).
        GroupedAttentionResult<T> g;
        if (c.variants.any()) {
            GroupedVariants<T> variants;
            variants.sinkLogits = c.variants.sinkLogits;
            variants.query2 = c.variants.query2.template cast<T>();
            variants.key2 = c.variants.key2.template cast<T>();
            variants.lambda = c.variants.lambda;
            variants.gateLogits = c.variants.gateLogits.template cast<T>();
            GroupedVariantResult<T> v = groupedVariantAttention<T>(
                query, key, value, c.heads, c.kvHeads, variants, mask, options);
            g = std::move(v.attention);
            for (const Matrix<T> &w : v.firstWeights)
                r.firstWeights.push_back(w.template cast<double>());
            for (const Matrix<T> &w : v.secondWeights)
                r.secondWeights.push_back(w.template cast<double>());
            r.lambda = v.lambda;
            r.signedWeights = !v.lambda.empty();
            r.learnedSinkMass = std::move(v.sinkMass);
            r.sinkLogits = v.sinkLogits;
        } else {
            g = groupedQueryAttention<T>(query, key, value, c.heads, c.kvHeads, mask, options);
        }
        mean = Matrix<T>::Zero(nQ, nK);
        for (const Matrix<T> &w : g.weights)
            mean += w;
        mean /= T(c.heads);
        weights = std::move(g.weights);
        scores = std::move(g.scores);
        scaled = std::move(g.scaledScores);
        fully = std::move(g.fullyMasked);
        r.scale = g.scale;
    } else {
        AttentionResult<T> a = scaledDotProductAttention<T>(query, key, value, mask, options);
        mean = a.weights;
        weights.push_back(std::move(a.weights));
        scores.push_back(std::move(a.scores));
        scaled.push_back(std::move(a.scaledScores));
        fully.push_back(std::move(a.fullyMasked));
        r.scale = a.scale;
    }
    cancel.throwIfCancelled();

    r.maskState = mask.stateMatrix(nQ, nK);
    r.fullyMasked = fully;
    for (std::size_t h = 0; h < weights.size(); ++h) {
        // Metrics of each row's distribution: with a learned sink the keys and the sink, with
        // differential attention A₁ (a signed row has no entropy).
        if (!r.learnedSinkMass.empty()) {
            r.metrics.push_back(learnedSinkRowMetrics(weights[h].template cast<double>(),
                                                      r.learnedSinkMass[h], fully[h]));
        } else if (!r.firstWeights.empty()) {
            r.metrics.push_back(rowMetrics(r.firstWeights[h], fully[h]));
        } else {
            r.metrics.push_back(rowMetrics(weights[h], fully[h]));
        }
        mergeNonFinite(r.nonFinite, findNonFinite(weights[h]));
        r.worstRowSumError
            = std::max(r.worstRowSumError, summarize(r.metrics.back()).worstRowSumError);
        r.weights.push_back(weights[h].template cast<double>());
        r.scores.push_back(scores[h].template cast<double>());
        r.scaledScores.push_back(scaled[h].template cast<double>());
    }
    r.weightsMean = mean.template cast<double>();
    if (c.variants.hasSinks() || c.variants.isDifferential())
        r.meanRowSum = meanRowSums(r.weights, r.fullyMasked);
}

/// A model run's raw scores q kᵀ of (layer, head) from its queries and keys (n × n).
MatrixD modelScores(const models::ForwardResult &f, const models::ModelConfig &c, Index layer,
                    Index head)
{
    const models::LayerAttention &a = f.layers[std::size_t(layer)];
    const MatrixF &q = a.queries[std::size_t(head)];
    const MatrixF &k = a.keys[std::size_t(f.kvHeadOf(head, c.heads))];
    return (q * k.transpose()).cast<double>();
}

/// Weights: layer `layer` as stored (or computed, for a model run on demand). Scores and mask
/// states unknown (NaN, 0) for stored weights; a model run's from its queries and keys: raw
/// q kᵀ, scaled q kᵀ·scale with −∞ where its layer's mask (causal, sliding window) masks.
void showWeights(const TensorSource &source, const TensorSource::Data &data, SessionResult &r,
                 const CancelToken &cancel)
{
    const double nan = std::numeric_limits<double>::quiet_NaN();
    const Index queries = source.queryCount(), keys = source.keyCount();
    const models::ForwardResult *forward = data.forward.get();
    r.scale = forward ? forward->scale : nan;
    r.maskState = forward
        ? models::layerMask(data.modelConfig, source.layer(), queries).stateMatrix(queries, keys)
        : MatrixB::Zero(queries, keys);
    r.weightsMean = MatrixD::Zero(queries, keys);
    for (int h = 0; h < source.headCount(); ++h) {
        cancel.throwIfCancelled();
        r.weights.push_back(source.headWeights(source.layer(), h));
        const MatrixD &w = r.weights.back();
        if (forward) {
            r.scores.push_back(modelScores(*forward, data.modelConfig, source.layer(), h));
            MatrixD scaled = r.scores.back() * forward->scale;
            for (Index i = 0; i < queries; ++i)
                for (Index j = 0; j < keys; ++j)
                    if (r.maskState(i, j) != MaskAllowed)
                        scaled(i, j) = -std::numeric_limits<double>::infinity();
            r.scaledScores.push_back(std::move(scaled));
        } else {
            r.scores.push_back(MatrixD::Constant(queries, keys, nan));
            r.scaledScores.push_back(r.scores.back());
        }
        r.fullyMasked.emplace_back(std::size_t(queries), std::uint8_t(0));
        r.metrics.push_back(rowMetrics(w));
        mergeNonFinite(r.nonFinite, findNonFinite(w));
        // Stored weights with negative entries (differential attention's A₁ − λA₂ written by
        // attnlab compute) are drawn on the signed scale; the check still reports the rows. A
        // signed row is no distribution: its entropy, effective terms and Jacobian norm are not
        // available (NaN), its largest weight and row sum are.
        if ((w.array() < 0.0).any()) {
            r.signedWeights = true;
            RowMetrics &m = r.metrics.back();
            for (VectorD *series : {&m.entropy, &m.effectiveTerms, &m.jacobianNorm})
                series->setConstant(nan);
        }
        const VectorD &e = r.metrics.back().rowSumError;
        for (Index i = 0; i < e.size(); ++i) {
            if (std::isfinite(e(i)))
                r.worstRowSumError = std::max(r.worstRowSumError, e(i));
        }
        r.weightsMean += w;
    }
    r.weightsMean /= double(source.headCount());
}

bool isZipFile(const QString &path)
{
    QFile f(path);
    if (!f.open(QIODevice::ReadOnly))
        return false;
    const QByteArray head = f.read(4);
    return head == QByteArray("PK\x03\x04", 4) || head == QByteArray("PK\x05\x06", 4);
}

} // namespace

TensorSource::TensorSource(std::shared_ptr<const Data> data, int layer)
    : m_data(std::move(data))
    , m_layer(layer)
{ }

TensorSource::Kind TensorSource::kind() const
{
    return m_data->kind;
}

QString TensorSource::path() const
{
    return m_data->path;
}

QString TensorSource::fileName() const
{
    return m_data->modelRun ? m_data->modelName : QFileInfo(m_data->path).fileName();
}

bool TensorSource::isModelRun() const
{
    return m_data->modelRun;
}

QString TensorSource::modelName() const
{
    return m_data->modelName;
}

QString TensorSource::modelFamily() const
{
    return m_data->modelFamily;
}

QString TensorSource::title() const
{
    if (m_data->modelRun)
        return QStringLiteral("model: %1 (%2), %3")
            .arg(m_data->modelName, m_data->modelFamily, m_data->description);
    return QStringLiteral("loaded: %1 [%2 %3]").arg(fileName(), arrayName(), description());
}

QString TensorSource::arrayName() const
{
    return m_data->arrayName;
}

MaskConvention TensorSource::maskConvention() const
{
    return m_data->convention;
}

int TensorSource::batch() const
{
    return m_data->batch;
}

int TensorSource::batchCount() const
{
    return m_data->batchCount;
}

bool TensorSource::isAttentionStack() const
{
    return m_data->attentionStack;
}

QStringList TensorSource::fileTokens() const
{
    return m_data->tokens;
}

RowSumCheck TensorSource::rowSumCheck() const
{
    return m_data->rowSums;
}

int TensorSource::layerCount() const
{
    return m_data->weights ? int(m_data->weights->layers) : 1;
}

int TensorSource::headCount() const
{
    return m_data->weights ? int(m_data->weights->heads) : int(m_data->tensors->heads);
}

int TensorSource::queryCount() const
{
    return m_data->weights ? int(m_data->weights->queries) : int(m_data->tensors->queryCount());
}

int TensorSource::keyCount() const
{
    return m_data->weights ? int(m_data->weights->keys) : int(m_data->tensors->keyCount());
}

int TensorSource::dModel() const
{
    if (const auto shape = modelShape();
        shape && shape->dModel <= SessionParameters::maxDModel && shape->dModel % headCount() == 0)
        return shape->dModel;
    return m_data->weights ? int(m_data->weights->heads) : int(m_data->tensors->dModel());
}

bool TensorSource::weightsOnDemand() const
{
    return m_data->onDemand;
}

std::vector<std::int64_t> TensorSource::tokenIds() const
{
    return m_data->forward ? m_data->forward->ids : std::vector<std::int64_t>();
}

bool TensorSource::longOnly() const
{
    return m_data->longOnly;
}

MatrixD TensorSource::headWeights(int layer, int head) const
{
    if (!m_data->weights)
        throw InvalidArgument("TensorSource::headWeights: the tensors are inputs, not weights");
    if (m_data->onDemand) {
        if (layer < 0 || layer >= layerCount() || head < 0 || head >= headCount())
            throw InvalidArgument("TensorSource::headWeights: (layer, head) out of range");
        return models::headWeights(*m_data->forward, m_data->modelConfig, layer, head)
            .cast<double>();
    }
    return m_data->weights->at(layer, head);
}

const WeightStack *TensorSource::thumbnailStack() const
{
    return m_data->thumbnails ? &*m_data->thumbnails : weightStack();
}

int TensorSource::thumbnailBlock() const
{
    return m_data->thumbnailBlock;
}

const TensorCase<double> *TensorSource::tensorCase() const
{
    return m_data->tensors ? &*m_data->tensors : nullptr;
}

const WeightStack *TensorSource::weightStack() const
{
    return m_data->weights ? &*m_data->weights : nullptr;
}

QString TensorSource::description() const
{
    return m_data->description;
}

QStringList TensorSource::notes() const
{
    return m_data->notes;
}

std::shared_ptr<const TensorSource> TensorSource::withLayer(int layer) const
{
    return std::make_shared<const TensorSource>(m_data, std::clamp(layer, 0, layerCount() - 1));
}

SessionParameters TensorSource::parametersFor(const SessionParameters &base,
                                              const std::shared_ptr<const TensorSource> &self) const
{
    SessionParameters p = base;
    p.tensors = self;
    p.n = queryCount();
    p.nK = keyCount();
    p.dModel = dModel();
    p.heads = headCount();
    const bool cross = queryCount() != keyCount() || !m_data->selfAttention;
    const auto shape = modelShape();
    p.kind = cross               ? AttentionKind::EncoderDecoder
        : shape && shape->causal ? AttentionKind::DecoderCausal
                                 : AttentionKind::EncoderSelf;
    p.mask = MaskChoice::None;
    p.paddingCount = std::min(p.paddingCount, p.keyCount());
    p.scaleExponent = 0.5;
    p.temperature = 1.0;
    p.positional = false;
    // The seeded inputs' position schemes and grouped heads do not apply to opened tensors
    // (Back to Random Inputs restores them); stored weights take no mask either.
    p.rope = false;
    p.alibi = false;
    p.kvHeads = 0;
    // A tensor file's variants are its own arrays (sink_logits, query2/key2/lambda).
    p.learnedSink = false;
    p.differential = false;
    if (isWeights()) {
        p.window = 0;
        p.sinks = 0;
    }
    p.setTokens(m_data->tokens); // core checked their count
    return p;
}

QString TensorSource::checkParameters(const SessionParameters &p) const
{
    const QString file = fileName();
    auto fixed = [&](const QString &what, int wanted, int got) {
        return QStringLiteral("%1 is fixed at %2 by the loaded tensors %3 (got %4); use \u201cBack "
                              "to random inputs\u201d to change it")
            .arg(what, QString::number(wanted), file, QString::number(got));
    };
    if (p.n != queryCount())
        return fixed(QStringLiteral("n (queries)"), queryCount(), p.n);
    if (p.keyCount() != keyCount())
        return fixed(QStringLiteral("n_k (keys)"), keyCount(), p.keyCount());
    if (p.dModel != dModel())
        return fixed(QStringLiteral("d_model"), dModel(), p.dModel);
    if (p.heads != headCount())
        return fixed(QStringLiteral("h (heads)"), headCount(), p.heads);
    if (p.positional)
        return QStringLiteral("positional encoding applies to random inputs only, not to the "
                              "loaded tensors %1")
            .arg(file);
    // A causal model's run is decoder self-attention (its own mask, shown as computed); any
    // other weights take no mask.
    const auto shape = modelShape();
    if (isWeights()
        && (p.scaleExponent != 0.5 || p.temperature != 1.0 || p.window != 0
            || p.causalMasked() != (shape && shape->causal) || p.mask != MaskChoice::None))
        return (m_data->modelRun ? QStringLiteral("the weights of the model %1 are shown as "
                                                  "computed: scale, temperature and masks are "
                                                  "the model's")
                                 : QStringLiteral("the weights loaded from %1 are shown as stored: "
                                                  "scale, temperature and masks do not apply"))
            .arg(file);
    return {};
}

QString TensorSource::caption(const SessionParameters &p) const
{
    QStringList parts;
    if (m_data->modelRun) {
        const WeightStack &s = *m_data->weights;
        parts << QStringLiteral("model: %1 (%2)").arg(m_data->modelName, m_data->modelFamily)
              << QStringLiteral("layer %1 of %2").arg(m_layer).arg(s.layers)
              << QStringLiteral("h=%1").arg(s.heads) << QStringLiteral("n=%1 tokens").arg(s.queries)
              << QStringLiteral("weights of the forward pass");
        return parts.join(QStringLiteral(", "));
    }
    parts << QStringLiteral("loaded: %1").arg(fileName());
    if (isWeights()) {
        const WeightStack &s = *m_data->weights;
        parts.back() += QStringLiteral(" [%1 %2]").arg(arrayName(), description());
        if (m_data->batchCount > 0)
            parts << QStringLiteral("batch item %1 of B=%2")
                         .arg(m_data->batch)
                         .arg(m_data->batchCount);
        if (s.layers > 1)
            parts << QStringLiteral("layer %1 of %2").arg(m_layer).arg(s.layers);
        parts << QStringLiteral("h=%1").arg(s.heads);
        if (s.queries == s.keys)
            parts << QStringLiteral("n=%1").arg(s.queries);
        else
            parts << QStringLiteral("n_q=%1").arg(s.queries)
                  << QStringLiteral("n_k=%1").arg(s.keys);
        parts << QStringLiteral("stored weights (not recomputed)");
        return parts.join(QStringLiteral(", "));
    }
    const TensorCase<double> &c = *m_data->tensors;
    if (m_data->batchCount > 0)
        parts.back() += QStringLiteral(" [batch item %1 of B=%2]")
                            .arg(m_data->batch)
                            .arg(m_data->batchCount);
    parts << (c.multihead ? QStringLiteral("PyTorch multi-head attention")
                  : c.projectedHeads
                  ? QStringLiteral("projected heads, g=%1 kv heads").arg(c.kvHeads)
                  : QStringLiteral("plain attention"));
    if (c.queryCount() == c.keyCount() && m_data->selfAttention)
        parts << QStringLiteral("n=%1").arg(c.queryCount());
    else
        parts << QStringLiteral("n_q=%1").arg(c.queryCount())
              << QStringLiteral("n_k=%1").arg(c.keyCount());
    parts << QStringLiteral("d_model=%1").arg(c.dModel()) << QStringLiteral("h=%1").arg(c.heads)
          << QStringLiteral("d_k=%1").arg(c.headDim());
    parts << QStringLiteral("scale=") + scaleFormula(p.scaleExponent, p.temperature);
    const auto numbers = [](const std::vector<double> &values) {
        QStringList text;
        for (const double v : values)
            text << QString::number(v, 'g', 4);
        text.removeDuplicates();
        return text.join(QLatin1Char('/'));
    };
    if (c.variants.hasSinks())
        parts << QStringLiteral("learned sinks b=%1 (rows sum to 1 − sink mass)")
                     .arg(numbers(c.variants.sinkLogits));
    if (c.variants.isDifferential())
        parts << QStringLiteral("differential A₁−λA₂, λ=%1 (rows sum to "
                                "1−λ)")
                     .arg(numbers(c.variants.lambda));
    if (c.variants.hasGate())
        parts << QStringLiteral("gated outputs σ(g)");
    // The file's masks named as the legend and the tooltips name their cells (maskStateText):
    // a boolean attn_mask and the -inf cells of an additive one are custom, key_padding_mask is
    // padding.
    QStringList masks;
    for (const std::string &d : c.maskDescription) {
        const std::string array = d.substr(0, d.find(' '));
        masks << (array == "key_padding_mask" ? QStringLiteral("padding(key_padding_mask)")
                                              : QStringLiteral("custom(%1)").arg(q(array)));
    }
    // The Controls' masks apply to loaded inputs too: the sliding window is named with its
    // width and sinks (it brings the causal mask).
    if (p.window > 0)
        masks << QStringLiteral("window=%1").arg(p.window)
                + (p.sinks == 1      ? QStringLiteral("+1 sink")
                       : p.sinks > 1 ? QStringLiteral("+%1 sinks").arg(p.sinks)
                                     : QString());
    else if (p.causalMasked())
        masks << QStringLiteral("causal");
    if (p.mask == MaskChoice::KeyPadding)
        masks << QStringLiteral("padding(%1)").arg(p.paddingCount);
    parts << QStringLiteral("mask=")
            + (masks.isEmpty() ? QStringLiteral("none") : masks.join(QLatin1Char('+')));
    parts << dtypeId(p.dtype);
    return parts.join(QStringLiteral(", "));
}

TensorFile readTensorFile(const QString &path)
{
    const QFileInfo info(path);
    if (!info.exists())
        throw NpyError(path.toStdString() + ": no such file");
    if (!info.isFile())
        throw NpyError(path.toStdString() + ": not a file");
    TensorFile file;
    file.path = info.absoluteFilePath();
    const std::string local = QFile::encodeName(file.path).toStdString();
    if (isZipFile(file.path)) {
        file.npz = true;
        const std::vector<std::string> names = listNpz(local);
        if (std::find(names.begin(), names.end(), attentionStackArray) != names.end()) {
            // A model's attention stack: what its headers declare decides before any data is
            // decompressed.
            try {
                checkAttentionStackHeaders(readNpzHeaders(local, true), attentionStackBudget(),
                                           local);
            } catch (const InvalidArgument &e) {
                throw NpyError(local + ": " + e.what());
            }
            file.arrays = readNpz(local, std::numeric_limits<std::uint64_t>::max(), &file.strings);
        } else {
            // What the headers declare (as stored plus as float64) decides before any member
            // is decompressed: a small archive may expand to gigabytes. String members (the
            // 'tokens' of `attnlab model --out`) are kept aside.
            file.arrays = readNpz(local, sessionMemoryBudget(), &file.strings);
        }
    } else {
        file.arrays.emplace_back(info.completeBaseName().toStdString(), readNpy(local));
    }
    return file;
}

bool holdsInputs(const TensorFile &file)
{
    for (const auto &[name, array] : file.arrays) {
        if (name == "query" || name == "key" || name == "value")
            return true;
    }
    return false;
}

QStringList describeArrays(const TensorFile &file)
{
    QStringList lines;
    for (const auto &[name, array] : file.arrays)
        lines << QStringLiteral("%1 %2").arg(q(name), q(describeArray(array)));
    return lines;
}

namespace {

// describeArrays for an error message: the first few and a count (shortList).
QString arraysForMessage(const TensorFile &file)
{
    std::vector<std::string> items;
    for (const QString &line : describeArrays(file))
        items.push_back(line.toStdString());
    return q(shortList(items));
}

} // namespace

std::shared_ptr<const TensorSource> makeTensorSource(const TensorFile &file,
                                                     const QString &weightsArray,
                                                     MaskConvention convention, QString *error,
                                                     int batch)
{
    const QString fileName = QFileInfo(file.path).fileName();
    auto fail = [&](const QString &message) -> std::shared_ptr<const TensorSource> {
        if (error)
            *error = message;
        return nullptr;
    };
    auto tooLarge = [&](const QString &what, Index value, int limit) {
        return fail(QStringLiteral("%1: %2 = %3 is more than the window shows (at most %4)")
                        .arg(file.path, what, QString::number(value), QString::number(limit)));
    };
    auto data = std::make_shared<TensorSource::Data>();
    data->path = file.path;
    data->convention = convention;
    try {
        if (holdsInputs(file)) {
            data->kind = TensorSource::Kind::Inputs;
            // A leading batch axis (B, n, E), as PyTorch saves batch_first inputs: one item.
            data->batchCount = int(tensorBatchSize(file.arrays));
            data->batch = batch;
            data->tensors = tensorCaseFromArrays<double>(tensorBatchItem(file.arrays, batch),
                                                         fileName.toStdString(), convention);
            const TensorCase<double> &c = *data->tensors;
            if (c.queryCount() > SessionParameters::maxSequence)
                return tooLarge(QStringLiteral("n_q"), c.queryCount(),
                                SessionParameters::maxSequence);
            if (c.keyCount() > SessionParameters::maxSequence)
                return tooLarge(QStringLiteral("n_k"), c.keyCount(),
                                SessionParameters::maxSequence);
            if (c.dModel() > SessionParameters::maxDModel)
                return tooLarge(QStringLiteral("d_model"), c.dModel(),
                                SessionParameters::maxDModel);
            data->selfAttention = c.query.rows() == c.key.rows() && c.query.cols() == c.key.cols()
                && c.query == c.key;
            QStringList masks;
            for (const std::string &d : c.maskDescription)
                masks << q(d);
            data->description
                = (c.multihead
                       ? QStringLiteral("PyTorch multi-head attention, h = %1, %2%3")
                             .arg(c.heads)
                             .arg(c.bias ? QStringLiteral("with bias") : QStringLiteral("no bias"),
                                  c.separateProjections
                                      ? QStringLiteral(", separate q/k/v projections (kdim = "
                                                       "%1, vdim = %2)")
                                            .arg(c.key.cols())
                                            .arg(c.value.cols())
                                      : QString())
                       : c.projectedHeads
                       ? QStringLiteral("already-projected heads, h = %1, g = %2 key/value heads")
                             .arg(c.heads)
                             .arg(c.kvHeads)
                       : QStringLiteral("plain scaled dot-product attention"))
                + (c.variants.hasSinks() ? QStringLiteral(", learned sinks (sink_logits)")
                                         : QString())
                + (c.variants.isDifferential()
                       ? QStringLiteral(", differential attention (query2, key2, lambda)")
                       : QString())
                + (c.variants.hasGate() ? QStringLiteral(", gated outputs (gate_logits)")
                                        : QString())
                + QStringLiteral("; %1").arg(q(c.shapeSummary()))
                + (masks.isEmpty()
                       ? QString()
                       : QStringLiteral("; masks: %1").arg(masks.join(QStringLiteral(", "))));
            if (!c.unusedArrays.empty()) {
                QStringList unused;
                for (const std::string &n : c.unusedArrays)
                    unused << q(n);
                data->notes
                    << QStringLiteral("not used: %1").arg(unused.join(QStringLiteral(", ")));
            }
        } else {
            data->kind = TensorSource::Kind::Weights;
            std::string name = weightsArray.toStdString();
            if (name.empty())
                name = defaultWeightArray(file.arrays);
            if (name.empty()) {
                return fail(
                    QStringLiteral("%1 holds %2 arrays (%3), none named query/key/value or %4; "
                                   "choose the array of weights (attnlab heatmap --array NAME)")
                        .arg(file.path, QString::number(file.arrays.size()), arraysForMessage(file),
                             QStringLiteral("weights, attn_weights or attention")));
            }
            const NpyArray *array = nullptr;
            for (const auto &[n, a] : file.arrays) {
                if (n == name)
                    array = &a;
            }
            if (!array)
                return fail(QStringLiteral("%1 has no array '%2' (it holds: %3)")
                                .arg(file.path, q(name), arraysForMessage(file)));
            data->arrayName = q(name);
            if (name == attentionStackArray) {
                AttentionStack stack = attentionStackFromArrays(file.arrays, file.strings, batch);
                data->attentionStack = true;
                data->batch = int(stack.batch);
                data->batchCount = int(stack.batchCount);
                data->rowSums = stack.rowSums;
                for (const std::string &t : stack.tokens)
                    data->tokens << q(t);
                data->weights = std::move(stack.weights);
                data->notes << q(data->rowSums.text());
            } else {
                data->weights = weightStackFromArray(*array, name);
                // Token strings beside self-attention weights label its positions.
                const WeightStack &w = *data->weights;
                for (const auto &[n, strings] : file.strings) {
                    if (n == attentionTokensArray && w.queries == w.keys
                        && std::int64_t(strings.values.size()) == w.queries) {
                        for (const std::string &t : strings.values)
                            data->tokens << q(t);
                    }
                }
            }
            const WeightStack &s = *data->weights;
            if (s.queries > SessionParameters::maxSequence)
                return tooLarge(QStringLiteral("n_q"), s.queries, SessionParameters::maxSequence);
            if (s.keys > SessionParameters::maxSequence)
                return tooLarge(QStringLiteral("n_k"), s.keys, SessionParameters::maxSequence);
            if (s.heads > SessionParameters::maxDModel)
                return tooLarge(QStringLiteral("h"), s.heads, SessionParameters::maxDModel);
            data->description = q(describeArray(*array));
            QStringList others;
            for (const auto &[n, a] : file.arrays) {
                if (n != name)
                    others << QStringLiteral("%1 %2").arg(q(n), q(describeArray(a)));
            }
            for (const auto &[n, strings] : file.strings) {
                if (!(n == attentionTokensArray && !data->tokens.isEmpty()))
                    others
                        << QStringLiteral("%1 (%2 strings)").arg(q(n)).arg(strings.values.size());
            }
            if (!others.isEmpty())
                data->notes
                    << QStringLiteral("not shown: %1").arg(others.join(QStringLiteral(", ")));
        }
    } catch (const InvalidArgument &e) {
        return fail(QStringLiteral("%1: %2").arg(file.path, QString::fromUtf8(e.what())));
    } catch (const NpyError &e) {
        return fail(QString::fromUtf8(e.what()));
    } catch (const std::bad_alloc &) {
        return fail(QStringLiteral("%1: out of memory").arg(file.path));
    }
    return std::make_shared<const TensorSource>(std::move(data));
}

std::uint64_t attentionStackBudget()
{
    return std::min<std::uint64_t>(kDefaultStackBudgetBytes, sessionMemoryBudget());
}

QString loadedTensorPath(const SessionParameters &p)
{
    return p.tensors ? p.tensors->path() : QString();
}

SessionResult computeTensorSession(const SessionParameters &params, const CancelToken &cancel)
{
    SessionResult r;
    r.params = params;
    const auto start = std::chrono::steady_clock::now();
    if (!params.tensors) {
        r.error = QStringLiteral("no tensors loaded");
        return r;
    }
    r.error = params.validate();
    if (r.error.isEmpty())
        r.error = params.tensors->checkParameters(params);
    if (!r.ok())
        return r;
    const TensorSource &source = *params.tensors;
    if (source.longOnly()) {
        const double n = double(source.queryCount());
        r.error = QStringLiteral("%1 tokens: one layer's %2 heads of %1 \u00d7 %1 weights and "
                                 "scores take %3 GiB, so this view is not computed; the Long tab "
                                 "shows every head from the run's queries and keys, the Model "
                                 "tab every layer \u00d7 head pooled")
                      .arg(source.queryCount())
                      .arg(source.headCount())
                      .arg(n * n * double(source.headCount()) * 24.0 / double(1 << 30), 0, 'f', 1);
        return r;
    }
    auto failWith = [&](const QString &message) {
        r = SessionResult {};
        r.params = params;
        r.error = message;
    };
    try {
        if (source.isWeights())
            showWeights(source, source.data(), r, cancel);
        else if (params.dtype == DType::Float32)
            computeInputs<float>(params, *source.tensorCase(), r, cancel);
        else
            computeInputs<double>(params, *source.tensorCase(), r, cancel);
    } catch (const Cancelled &) {
        failWith(QStringLiteral("cancelled"));
    } catch (const NonFiniteInput &e) {
        // The file's (or the parameters') fault, as in computeSession: exit status 2 in the CLI.
        failWith(QStringLiteral("%1: %2").arg(source.fileName(), QString::fromUtf8(e.what())));
        r.inputError = true;
    } catch (const InvalidArgument &e) {
        failWith(QStringLiteral("%1: %2").arg(source.fileName(), QString::fromUtf8(e.what())));
        r.inputError = true;
    } catch (const std::bad_alloc &) {
        failWith(QStringLiteral("out of memory for the tensors of %1").arg(source.fileName()));
    } catch (const std::exception &e) {
        failWith(QStringLiteral("%1: %2").arg(source.fileName(), QString::fromUtf8(e.what())));
    }
    r.computeSeconds
        = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    return r;
}

QString WeightCheck::text() const
{
    if (rows == 0)
        return QStringLiteral("no rows to check");
    if (ok())
        return QStringLiteral("all %1 rows sum to 1 (worst |\u03a3w \u2212 1| = %2)")
            .arg(rows)
            .arg(worstRowSumError, 0, 'g', 2);
    QStringList problems;
    if (badSumRows > 0)
        problems << QStringLiteral("%1 of %2 rows do not sum to 1 (worst |\u03a3w \u2212 1| = %3 "
                                   "at head %4, row %5; tolerance %6)")
                        .arg(badSumRows)
                        .arg(rows)
                        .arg(worstRowSumError, 0, 'g', 3)
                        .arg(worstHead)
                        .arg(worstRow)
                        .arg(tolerance, 0, 'g', 2);
    if (nonFiniteRows > 0)
        problems << QStringLiteral("%1 NaN/Inf: %2 NaN and %3 Inf cells, the first at "
                                   "head %4, row %5, key %6")
                        .arg(nonFiniteRows == 1 ? QStringLiteral("1 row holds")
                                                : QStringLiteral("%1 rows hold").arg(nonFiniteRows))
                        .arg(nanCells)
                        .arg(infCells)
                        .arg(firstNonFiniteHead)
                        .arg(firstNonFiniteRow)
                        .arg(firstNonFiniteKey);
    if (negativeRows > 0)
        problems << QStringLiteral("%1 rows have negative weights").arg(negativeRows);
    return problems.join(QStringLiteral("; "));
}

WeightCheck checkWeights(const SessionResult &result, NpyType storedType)
{
    return checkWeights(result.weights.data(), int(result.weights.size()), storedType);
}

WeightCheck checkWeights(const MatrixD *heads, int count, NpyType storedType)
{
    WeightCheck c;
    const Index nK = count > 0 ? heads[0].cols() : 0;
    c.tolerance = 1e-6;
    if (storedType == NpyType::Float32)
        c.tolerance += 4.0 * double(nK) * std::ldexp(1.0, -24);
    for (int h = 0; h < count; ++h) {
        const MatrixD &w = heads[h];
        for (Index i = 0; i < w.rows(); ++i) {
            ++c.rows;
            const auto row = w.row(i);
            if (!row.allFinite()) {
                const NonFiniteReport cells = findNonFinite<double>(row);
                if (c.nonFiniteRows++ == 0) {
                    c.firstNonFiniteHead = h;
                    c.firstNonFiniteRow = int(i);
                    c.firstNonFiniteKey = int(cells.col);
                }
                c.nanCells += cells.nanCount;
                c.infCells += cells.infCount;
                continue;
            }
            if ((row.array() < 0.0).any())
                ++c.negativeRows;
            const double error = std::abs(row.sum() - 1.0);
            if (error > c.worstRowSumError || c.worstHead < 0) {
                c.worstRowSumError = error;
                c.worstHead = h;
                c.worstRow = int(i);
            }
            if (error > c.tolerance)
                ++c.badSumRows;
        }
    }
    return c;
}

std::optional<QStringList> readTokenFile(const QString &path, QString *error)
{
    QFile f(path);
    if (!f.open(QIODevice::ReadOnly)) {
        if (error)
            *error
                = QStringLiteral("%1: cannot read the token file (%2)").arg(path, f.errorString());
        return std::nullopt;
    }
    constexpr qint64 maxBytes = 64 << 20;
    if (f.size() > maxBytes) {
        if (error)
            *error = QStringLiteral("%1: a token file of %2 bytes is too large (at most %3)")
                         .arg(path, QString::number(f.size()), QString::number(maxBytes));
        return std::nullopt;
    }
    const QByteArray bytes = f.readAll();
    QStringDecoder decoder(QStringDecoder::Utf8);
    QString text = decoder.decode(bytes);
    if (decoder.hasError()) {
        if (error)
            *error = QStringLiteral("%1: the token file is not UTF-8 text").arg(path);
        return std::nullopt;
    }
    if (text.startsWith(QChar(0xfeff)))
        text.remove(0, 1); // byte order mark
    QStringList tokens = text.split(QLatin1Char('\n'));
    if (!tokens.isEmpty() && tokens.last().isEmpty())
        tokens.removeLast(); // the final line break
    for (QString &t : tokens) {
        if (t.endsWith(QLatin1Char('\r')))
            t.chop(1);
    }
    return tokens;
}

QString tokenSidecarPath(const QString &tensorPath)
{
    const QFileInfo info(tensorPath);
    const QDir dir = info.absoluteDir();
    for (const QString &name : {info.completeBaseName(), info.fileName()}) {
        const QString candidate = dir.filePath(name + QStringLiteral(".tokens.txt"));
        if (QFileInfo(candidate).isFile())
            return candidate;
    }
    return {};
}

int expectedTokenCount(const SessionParameters &p)
{
    return p.kind == AttentionKind::EncoderDecoder ? p.n + p.nK : p.n;
}

QString checkTokenCount(const SessionParameters &p, int count)
{
    const int expected = expectedTokenCount(p);
    if (count == expected)
        return {};
    const QString need = p.kind == AttentionKind::EncoderDecoder
        ? QStringLiteral("%1 tokens (n_q = %2 query tokens, then n_k = %3 key tokens)")
              .arg(expected)
              .arg(p.n)
              .arg(p.nK)
        : QStringLiteral("%1 tokens (one per position; the keys are the same positions)")
              .arg(expected);
    return QStringLiteral("%1 token labels given but the tensors need %2; positions 0, 1, 2, … "
                          "are shown instead")
        .arg(count)
        .arg(need);
}

} // namespace attn
