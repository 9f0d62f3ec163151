#include "core/models/model.h"

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <initializer_list>

namespace attn::models {

namespace {

std::string shapeText(const std::vector<std::int64_t> &shape)
{
    std::string s = "[";
    for (std::size_t i = 0; i < shape.size(); ++i)
        s += (i ? ", " : "") + std::to_string(shape[i]);
    return s + "]";
}

// Looks tensors up under one prefix and checks their shapes against the config.
class Binder
{
public:
    Binder(const Checkpoint &checkpoint, const ModelConfig &config, std::string prefix)
        : m_checkpoint(checkpoint)
        , m_config(config)
        , m_prefix(std::move(prefix))
    { }

    // The first of `names` (each under the prefix unless `bare`) that exists, or an absent ref.
    WeightRef find(std::initializer_list<std::string> names, bool bare = false) const
    {
        for (const std::string &n : names) {
            const Checkpoint::Entry e = m_checkpoint.find(bare ? n : m_prefix + n);
            if (e.tensor)
                return WeightRef {e.file, e.tensor};
        }
        return {};
    }

    WeightRef require(std::initializer_list<std::string> names,
                      const std::vector<std::int64_t> &shape, bool bare = false) const
    {
        const WeightRef w = find(names, bare);
        if (!w.present()) {
            std::string tried;
            for (const std::string &n : names)
                tried += (tried.empty() ? "'" : " or '") + (bare ? n : m_prefix + n) + "'";
            throw ModelError(m_checkpoint.source() + ": missing tensor " + tried + " (a "
                             + modelFamilyName(m_config.family) + " model of "
                             + std::to_string(m_config.layers) + " layers; the checkpoint has "
                             + std::to_string(m_checkpoint.names().size()) + " tensors)");
        }
        check(w, shape);
        return w;
    }

    WeightRef optional(std::initializer_list<std::string> names,
                       const std::vector<std::int64_t> &shape, bool bare = false) const
    {
        const WeightRef w = find(names, bare);
        if (w.present())
            check(w, shape);
        return w;
    }

    void check(const WeightRef &w, const std::vector<std::int64_t> &shape) const
    {
        if (w.tensor->shape != shape)
            throw ModelError(w.file->name() + ": tensor '" + w.tensor->name + "' has shape "
                             + w.tensor->shapeString() + " but config.json implies "
                             + shapeText(shape) + " (hidden " + std::to_string(m_config.hiddenSize)
                             + ", heads " + std::to_string(m_config.heads) + ", kv heads "
                             + std::to_string(m_config.kvHeads) + ", head_dim "
                             + std::to_string(m_config.headDim) + ", intermediate "
                             + std::to_string(m_config.intermediateSize) + ", vocab "
                             + std::to_string(m_config.vocabSize) + ")");
    }

    // y = x Wᵀ (+ b): W [out, in].
    LinearWeights linear(const std::string &base, Index in, Index out, bool bias,
                         bool bare = false) const
    {
        LinearWeights l;
        l.in = in;
        l.out = out;
        l.weight = require({base + ".weight"}, {out, in}, bare);
        if (bias)
            l.bias = require({base + ".bias"}, {out}, bare);
        return l;
    }

    // GPT-2 Conv1D: y = x W + b, W [in, out].
    LinearWeights conv1d(const std::string &base, Index in, Index out) const
    {
        LinearWeights l;
        l.in = in;
        l.out = out;
        l.inputMajor = true;
        l.weight = require({base + ".weight"}, {in, out});
        l.bias = require({base + ".bias"}, {out});
        return l;
    }

    NormWeights norm(const std::string &base, Index width, bool bias, bool bare = false) const
    {
        NormWeights n;
        n.weight = require({base + ".weight", base + ".gamma"}, {width}, bare);
        if (bias)
            n.bias = require({base + ".bias", base + ".beta"}, {width}, bare);
        return n;
    }

private:
    const Checkpoint &m_checkpoint;
    const ModelConfig &m_config;
    std::string m_prefix;
};

std::string findPrefix(const Checkpoint &checkpoint, const ModelConfig &c)
{
    std::vector<std::string> prefixes;
    std::string embedding;
    switch (c.family) {
    case ModelFamily::Gpt2:
        prefixes = {"transformer.", ""};
        embedding = "wte.weight";
        break;
    case ModelFamily::Bert:
        prefixes = {"bert.", ""};
        embedding = "embeddings.word_embeddings.weight";
        break;
    default:
        prefixes = {"model.", ""};
        embedding = "embed_tokens.weight";
        break;
    }
    for (const std::string &p : prefixes)
        if (checkpoint.find(p + embedding).tensor)
            return p;
    throw ModelError(checkpoint.source() + ": missing tensor '" + prefixes.front() + embedding
                     + "' (nor '" + embedding + "'): no " + modelFamilyName(c.family)
                     + " token embedding in this checkpoint");
}

void bindGpt2(const Binder &b, const ModelConfig &c, ModelWeights &w)
{
    const Index h = c.hiddenSize, inner = c.intermediateSize;
    w.tokenEmbedding = b.require({"wte.weight"}, {c.vocabSize, h});
    w.positionEmbedding = b.require({"wpe.weight"}, {c.maxPositions, h});
    for (Index i = 0; i < c.layers; ++i) {
        const std::string p = "h." + std::to_string(i) + ".";
        LayerWeights l;
        l.attentionNorm = b.norm(p + "ln_1", h, true);
        l.qkv = b.conv1d(p + "attn.c_attn", h, 3 * h);
        l.o = b.conv1d(p + "attn.c_proj", h, h);
        l.mlpNorm = b.norm(p + "ln_2", h, true);
        l.up = b.conv1d(p + "mlp.c_fc", h, inner);
        l.down = b.conv1d(p + "mlp.c_proj", inner, h);
        w.layers.push_back(std::move(l));
    }
    w.finalNorm = b.norm("ln_f", h, true);
}

void bindLlamaLike(const Binder &b, const ModelConfig &c, ModelWeights &w)
{
    const Index h = c.hiddenSize, d = c.headDim, inner = c.intermediateSize;
    w.tokenEmbedding = b.require({"embed_tokens.weight"}, {c.vocabSize, h});
    for (Index i = 0; i < c.layers; ++i) {
        const std::string p = "layers." + std::to_string(i) + ".";
        LayerWeights l;
        l.attentionNorm = b.norm(p + "input_layernorm", h, false);
        l.q = b.linear(p + "self_attn.q_proj", h, c.heads * d, c.qkvBias);
        l.k = b.linear(p + "self_attn.k_proj", h, c.kvHeads * d, c.qkvBias);
        l.v = b.linear(p + "self_attn.v_proj", h, c.kvHeads * d, c.qkvBias);
        l.o = b.linear(p + "self_attn.o_proj", c.heads * d, h, c.outputBias);
        if (c.qkNorm) {
            l.qNorm = b.norm(p + "self_attn.q_norm", d, false);
            l.kNorm = b.norm(p + "self_attn.k_norm", d, false);
        }
        l.mlpNorm = b.norm(p + "post_attention_layernorm", h, false);
        l.gate = b.linear(p + "mlp.gate_proj", h, inner, c.mlpBias);
        l.up = b.linear(p + "mlp.up_proj", h, inner, c.mlpBias);
        l.down = b.linear(p + "mlp.down_proj", inner, h, c.mlpBias);
        w.layers.push_back(std::move(l));
    }
    w.finalNorm = b.norm("norm", h, false);
}

void bindBert(const Binder &b, const ModelConfig &c, ModelWeights &w)
{
    const Index h = c.hiddenSize, inner = c.intermediateSize;
    w.tokenEmbedding = b.require({"embeddings.word_embeddings.weight"}, {c.vocabSize, h});
    w.positionEmbedding = b.require({"embeddings.position_embeddings.weight"}, {c.maxPositions, h});
    w.tokenTypeEmbedding
        = b.require({"embeddings.token_type_embeddings.weight"}, {c.typeVocabSize, h});
    w.embeddingNorm = b.norm("embeddings.LayerNorm", h, true);
    for (Index i = 0; i < c.layers; ++i) {
        const std::string p = "encoder.layer." + std::to_string(i) + ".";
        LayerWeights l;
        l.q = b.linear(p + "attention.self.query", h, h, true);
        l.k = b.linear(p + "attention.self.key", h, h, true);
        l.v = b.linear(p + "attention.self.value", h, h, true);
        l.o = b.linear(p + "attention.output.dense", h, h, true);
        l.attentionNorm = b.norm(p + "attention.output.LayerNorm", h, true);
        l.up = b.linear(p + "intermediate.dense", h, inner, true);
        l.down = b.linear(p + "output.dense", inner, h, true);
        l.mlpNorm = b.norm(p + "output.LayerNorm", h, true);
        w.layers.push_back(std::move(l));
    }
    // The masked-LM head (BertForMaskedLM), when the checkpoint has it.
    w.hasLmHead = b.find({"cls.predictions.transform.dense.weight"}, true).present();
    if (!w.hasLmHead)
        return;
    w.mlmTransform = b.linear("cls.predictions.transform.dense", h, h, true, true);
    w.mlmNorm = b.norm("cls.predictions.transform.LayerNorm", h, true, true);
    w.lmBias
        = b.require({"cls.predictions.bias", "cls.predictions.decoder.bias"}, {c.vocabSize}, true);
    if (!c.tieWordEmbeddings)
        w.lmHead = b.require({"cls.predictions.decoder.weight"}, {c.vocabSize, h}, true);
}

// Refuses a checkpoint holding tensors of a layer past the config's count (a config.json from a
// smaller model beside these weights would otherwise run the first layers only, silently).
void checkNoExtraLayers(const Checkpoint &checkpoint, const ModelConfig &c,
                        const std::string &prefix)
{
    std::string container;
    switch (c.family) {
    case ModelFamily::Gpt2:
        container = prefix + "h.";
        break;
    case ModelFamily::Bert:
        container = prefix + "encoder.layer.";
        break;
    default:
        container = prefix + "layers.";
        break;
    }
    for (const std::string &name : checkpoint.names()) {
        if (name.compare(0, container.size(), container) != 0)
            continue;
        const std::size_t end = name.find('.', container.size());
        const std::string digits = name.substr(container.size(), end - container.size());
        if (digits.empty() || digits.size() > 9
            || !std::all_of(digits.begin(), digits.end(),
                            [](char ch) { return ch >= '0' && ch <= '9'; }))
            continue;
        const long layer = std::stol(digits);
        if (layer >= c.layers)
            throw ModelError(checkpoint.source() + ": the checkpoint holds tensor '" + name
                             + "' of layer " + std::to_string(layer) + " but config.json gives "
                             + std::to_string(c.layers) + " layers (layers 0 … "
                             + std::to_string(c.layers - 1)
                             + "): the config belongs to another model");
    }
}

} // namespace

const std::string &WeightRef::name() const
{
    static const std::string absent = "(absent)";
    return tensor ? tensor->name : absent;
}

Index WeightRef::rows() const
{
    if (!tensor || tensor->shape.empty())
        return tensor ? 1 : 0;
    return Index(tensor->shape[0]);
}

Index WeightRef::cols() const
{
    if (!tensor)
        return 0;
    return tensor->shape.size() >= 2 ? Index(tensor->shape[1]) : 1;
}

MatrixF WeightRef::toMatrix() const
{
    return rowBlock(0, rows());
}

MatrixF WeightRef::rowBlock(Index first, Index count) const
{
    if (!tensor)
        throw ModelError("weight (absent) read");
    if (tensor->shape.size() > 2)
        throw ModelError(file->name() + ": tensor '" + tensor->name + "' of shape "
                         + tensor->shapeString() + " is not a matrix");
    if (first < 0 || count < 0 || first > rows() || count > rows() - first)
        throw ModelError(file->name() + ": tensor '" + tensor->name + "': rows "
                         + std::to_string(first) + " + " + std::to_string(count) + " of "
                         + std::to_string(rows()));
    MatrixF m(count, cols());
    const std::uint64_t begin = std::uint64_t(first) * std::uint64_t(cols());
    const std::uint64_t size = std::uint64_t(count) * std::uint64_t(cols());
    file->readFloats(*tensor, begin, size, m.data());
    requireFinite(m.data(), begin, size);
    return m;
}

VectorF WeightRef::toVector() const
{
    if (!tensor)
        throw ModelError("weight (absent) read");
    VectorF v(Index(tensor->elements));
    file->readFloats(*tensor, 0, tensor->elements, v.data());
    requireFinite(v.data(), 0, tensor->elements);
    return v;
}

void WeightRef::requireFinite(const float *values, std::uint64_t first, std::uint64_t count) const
{
    if (count == 0 || Eigen::Map<const Eigen::ArrayXf>(values, Index(count)).allFinite())
        return;
    std::uint64_t k = 0;
    while (k < count && std::isfinite(values[k]))
        ++k;
    const std::uint64_t element = first + k;
    const std::uint64_t width = std::uint64_t(std::max<Index>(1, cols()));
    const std::string where = tensor->shape.size() >= 2
        ? "row " + std::to_string(element / width) + ", column " + std::to_string(element % width)
        : "element " + std::to_string(element);
    throw ModelError(file->name() + ": tensor '" + tensor->name + "' " + tensor->shapeString()
                     + " holds " + (std::isnan(values[k]) ? "NaN" : "an infinite value") + " at "
                     + where + ": the checkpoint's weights are broken");
}

const float *WeightRef::floatsInPlace() const
{
    const float *values = tensor ? file->floatsInPlace(*tensor) : nullptr;
    if (values && !file->checkedFinite(*tensor)) {
        requireFinite(values, 0, tensor->elements);
        file->markCheckedFinite(*tensor);
    }
    return values;
}

Model Model::open(const std::string &dir)
{
    std::error_code ec;
    if (dir.empty())
        throw ModelError("no model folder given (an empty path)");
    const std::filesystem::path given(dir);
    if (std::filesystem::is_regular_file(given, ec) && given.extension() == ".json")
        throw ModelError(dir + ": a file; give the folder holding config.json and the weights ("
                         + given.parent_path().string() + ")");
    // A config.json that is there but cannot be read as a file is named, not called missing.
    const std::filesystem::path configPath = given / "config.json";
    if (std::filesystem::exists(std::filesystem::symlink_status(configPath, ec))
        && !std::filesystem::is_regular_file(configPath, ec)) {
        const auto status = std::filesystem::status(configPath, ec);
        const char *kind = std::filesystem::is_directory(status) ? "a folder"
            : std::filesystem::is_fifo(status)                   ? "a FIFO"
            : std::filesystem::exists(status)                    ? "a special file"
                                                                 : "a broken link";
        throw ModelError(configPath.string() + ": not a regular file (" + kind + ")");
    }
    if (!std::filesystem::is_regular_file(configPath, ec)) {
        // Say what is there instead (a GGUF or PyTorch file, a folder of other files), else that
        // the weights lack their config.json.
        try {
            Checkpoint::open(dir);
        } catch (const ModelError &e) {
            throw ModelError(dir + ": not a model folder: no config.json (" + e.what() + ")");
        }
        throw ModelError(dir + ": not a model folder: no config.json beside the weights");
    }
    ModelConfig config = readModelConfig(dir + "/config.json");
    return bind(std::move(config), Checkpoint::open(dir));
}

Model Model::bind(ModelConfig config, Checkpoint checkpoint)
{
    Model m;
    m.m_config = std::move(config);
    m.m_checkpoint = std::move(checkpoint);
    const ModelConfig &c = m.m_config;
    ModelWeights &w = m.m_weights;
    w.prefix = findPrefix(m.m_checkpoint, c);
    const Binder b(m.m_checkpoint, c, w.prefix);
    switch (c.family) {
    case ModelFamily::Gpt2:
        bindGpt2(b, c, w);
        break;
    case ModelFamily::Bert:
        bindBert(b, c, w);
        break;
    default:
        bindLlamaLike(b, c, w);
        break;
    }
    checkNoExtraLayers(m.m_checkpoint, c, w.prefix);
    if (c.family != ModelFamily::Bert) {
        if (c.tieWordEmbeddings)
            w.lmHead = w.tokenEmbedding;
        else
            w.lmHead = b.require({"lm_head.weight"}, {c.vocabSize, c.hiddenSize}, true);
    } else if (w.hasLmHead && c.tieWordEmbeddings) {
        w.lmHead = w.tokenEmbedding;
    }
    return m;
}

std::uint64_t Model::weightBytes() const
{
    std::uint64_t total = 0;
    for (const auto &f : m_checkpoint.files())
        total += f->dataBytes();
    return total;
}

} // namespace attn::models
