#include "core/models/config.h"

#include "core/io/regularfile.h"

#include "core/models/json_p.h"
#include "core/models/safetensors.h"

#include <cmath>
#include <filesystem>
#include <fstream>
#include <limits>
#include <optional>

namespace attn::models {

namespace {

using nlohmann::json;

constexpr Index kMaxVocab = Index(1) << 22;
constexpr Index kMaxHidden = Index(1) << 16;
constexpr Index kMaxIntermediate = Index(1) << 18;
constexpr Index kMaxLayers = 1024;
constexpr Index kMaxHeads = 1024;
constexpr Index kMaxHeadDim = 4096;
constexpr Index kMaxPositions = Index(1) << 24;
constexpr Index kMaxTypes = Index(1) << 16;

// Reads fields of one JSON object; every error names the config and the field.
class Fields
{
public:
    Fields(const json &object, std::string name)
        : m_object(object)
        , m_name(std::move(name))
    { }

    // The field, or nullptr when absent or null (Hugging Face writes null for "not set").
    const json *get(const char *key) const
    {
        const auto it = m_object.find(key);
        if (it == m_object.end() || it->is_null())
            return nullptr;
        return &*it;
    }

    Index integer(const char *key, std::optional<Index> fallback, Index lo, Index hi) const
    {
        const json *v = get(key);
        if (!v) {
            if (!fallback)
                throw ModelError(m_name + ": missing field \"" + key + "\"");
            return *fallback;
        }
        Index value = 0;
        if (v->is_number_integer()) {
            if (v->is_number_unsigned()
                && v->get<std::uint64_t>() > std::uint64_t(std::numeric_limits<Index>::max()))
                value = std::numeric_limits<Index>::max();
            else
                value = v->get<Index>();
        } else if (v->is_number_float()) {
            const double d = v->get<double>();
            if (!(std::floor(d) == d) || std::abs(d) > 9e15)
                throw ModelError(m_name + ": field \"" + key + "\" must be an integer, got "
                                 + v->dump());
            value = Index(d);
        } else {
            throw ModelError(m_name + ": field \"" + key + "\" must be an integer, got "
                             + detail::jsonTypeName(*v));
        }
        if (value < lo || value > hi)
            throw ModelError(m_name + ": field \"" + key + "\" = " + v->dump() + " is outside ["
                             + std::to_string(lo) + ", " + std::to_string(hi) + "]");
        return value;
    }

    double number(const char *key, std::optional<double> fallback, double lo, double hi) const
    {
        const json *v = get(key);
        if (!v) {
            if (!fallback)
                throw ModelError(m_name + ": missing field \"" + key + "\"");
            return *fallback;
        }
        if (!v->is_number())
            throw ModelError(m_name + ": field \"" + key + "\" must be a number, got "
                             + detail::jsonTypeName(*v));
        const double d = v->get<double>();
        if (!std::isfinite(d) || d < lo || d > hi)
            throw ModelError(m_name + ": field \"" + key + "\" = " + v->dump() + " is outside ["
                             + json(lo).dump() + ", " + json(hi).dump() + "]");
        return d;
    }

    bool boolean(const char *key, bool fallback) const
    {
        const json *v = get(key);
        if (!v)
            return fallback;
        if (!v->is_boolean())
            throw ModelError(m_name + ": field \"" + key + "\" must be true or false, got "
                             + detail::jsonTypeName(*v));
        return v->get<bool>();
    }

    std::string string(const char *key, const char *fallback) const
    {
        const json *v = get(key);
        if (!v) {
            if (!fallback)
                throw ModelError(m_name + ": missing field \"" + key + "\"");
            return fallback;
        }
        if (!v->is_string())
            throw ModelError(m_name + ": field \"" + key + "\" must be a string, got "
                             + detail::jsonTypeName(*v));
        return v->get<std::string>();
    }

    const std::string &name() const { return m_name; }

private:
    const json &m_object;
    std::string m_name;
};

Activation parseActivation(const std::string &name, const std::string &field, bool gated,
                           const std::string &where)
{
    if (gated) {
        if (name == "silu" || name == "swish")
            return Activation::Silu;
        throw ModelError(where + ": " + field + " \"" + name
                         + "\" is not supported for this family (supported: silu)");
    }
    if (name == "gelu_new" || name == "gelu_pytorch_tanh")
        return Activation::GeluTanh;
    if (name == "gelu")
        return Activation::GeluErf;
    if (name == "relu")
        return Activation::Relu;
    throw ModelError(where + ": " + field + " \"" + name
                     + "\" is not supported (supported: gelu_new, gelu_pytorch_tanh, gelu, relu)");
}

// rope_theta and rope_scaling (Transformers ≤ 4) or rope_parameters (Transformers 5).
void parseRope(const Fields &top, const json &root, ModelConfig &c)
{
    const std::string &where = top.name();
    const json *params = top.get("rope_parameters");
    const json *scaling = top.get("rope_scaling");
    if (params && !params->is_object())
        throw ModelError(where + ": field \"rope_parameters\" must be an object, got "
                         + detail::jsonTypeName(*params));
    if (scaling && !scaling->is_object())
        throw ModelError(where + ": field \"rope_scaling\" must be an object or null, got "
                         + detail::jsonTypeName(*scaling));
    const double topTheta = top.number("rope_theta", 10000.0, 1.0, 1e12);
    const json *source = params ? params : scaling;
    c.ropeTheta = topTheta;
    if (!source)
        return;
    const Fields f(*source, where + ": " + (params ? "rope_parameters" : "rope_scaling"));
    if (params) {
        c.ropeTheta = f.number("rope_theta", topTheta, 1.0, 1e12);
        if (top.get("rope_theta") && c.ropeTheta != topTheta)
            throw ModelError(where + ": rope_theta " + json(topTheta).dump()
                             + " disagrees with rope_parameters.rope_theta "
                             + json(c.ropeTheta).dump());
    }
    std::string type
        = f.get("rope_type") ? f.string("rope_type", nullptr) : f.string("type", "default");
    if (params && scaling) {
        const Fields s(*scaling, where + ": rope_scaling");
        const std::string other
            = s.get("rope_type") ? s.string("rope_type", nullptr) : s.string("type", "default");
        if (other != type)
            throw ModelError(where + ": rope_scaling type \"" + other
                             + "\" disagrees with rope_parameters type \"" + type + "\"");
    }
    (void)root;
    if (type == "default")
        return;
    if (type == "linear") {
        c.ropeScaling.type = RopeScalingType::Linear;
        c.ropeScaling.factor = f.number("factor", std::nullopt, 1e-6, 1e6);
        return;
    }
    if (type == "llama3") {
        RopeScaling &s = c.ropeScaling;
        s.type = RopeScalingType::Llama3;
        s.factor = f.number("factor", std::nullopt, 1e-6, 1e6);
        s.lowFreqFactor = f.number("low_freq_factor", std::nullopt, 1e-6, 1e6);
        s.highFreqFactor = f.number("high_freq_factor", std::nullopt, 1e-6, 1e6);
        s.originalMaxPositions
            = double(f.integer("original_max_position_embeddings", std::nullopt, 1, kMaxPositions));
        if (!(s.highFreqFactor > s.lowFreqFactor))
            throw ModelError(f.name() + ": high_freq_factor " + json(s.highFreqFactor).dump()
                             + " must exceed low_freq_factor " + json(s.lowFreqFactor).dump());
        return;
    }
    throw ModelError(f.name() + ": RoPE type \"" + type
                     + "\" is not supported (supported: default, linear, llama3)");
}

// GPT-2's and BERT's common layout: hidden / heads dimensions per head (the keys `hiddenKey` and
// `headsKey` named when they do not divide), as many key/value heads, LayerNorm, learned
// positions, biases on every projection, embeddings tied unless the config says not.
void learnedPositionLayout(const Fields &f, ModelConfig &c, const char *hiddenKey,
                           const char *headsKey)
{
    if (c.hiddenSize % c.heads != 0)
        throw ModelError(f.name() + ": " + hiddenKey + " " + std::to_string(c.hiddenSize)
                         + " is not divisible by " + headsKey + " " + std::to_string(c.heads));
    c.kvHeads = c.heads;
    c.headDim = c.hiddenSize / c.heads;
    c.norm = NormKind::LayerNorm;
    c.tieWordEmbeddings = f.boolean("tie_word_embeddings", true);
    c.learnedPositions = true;
    c.qkvBias = c.outputBias = c.mlpBias = true;
}

void parseGpt2(const Fields &f, ModelConfig &c)
{
    c.hiddenSize = f.integer("n_embd", std::nullopt, 1, kMaxHidden);
    c.heads = f.integer("n_head", std::nullopt, 1, kMaxHeads);
    c.layers = f.integer("n_layer", std::nullopt, 1, kMaxLayers);
    c.maxPositions = f.integer("n_positions", std::nullopt, 1, kMaxPositions);
    c.vocabSize = f.integer("vocab_size", std::nullopt, 1, kMaxVocab);
    c.intermediateSize = f.integer("n_inner", 4 * c.hiddenSize, 1, kMaxIntermediate);
    c.normEps = f.number("layer_norm_epsilon", 1e-5, 0.0, 1.0);
    c.activation = parseActivation(f.string("activation_function", "gelu_new"),
                                   "activation_function", false, f.name());
    learnedPositionLayout(f, c, "n_embd", "n_head");
}

void parseBert(const Fields &f, ModelConfig &c)
{
    c.hiddenSize = f.integer("hidden_size", std::nullopt, 1, kMaxHidden);
    c.heads = f.integer("num_attention_heads", std::nullopt, 1, kMaxHeads);
    c.layers = f.integer("num_hidden_layers", std::nullopt, 1, kMaxLayers);
    c.intermediateSize = f.integer("intermediate_size", std::nullopt, 1, kMaxIntermediate);
    c.vocabSize = f.integer("vocab_size", std::nullopt, 1, kMaxVocab);
    c.maxPositions = f.integer("max_position_embeddings", 512, 1, kMaxPositions);
    c.typeVocabSize = f.integer("type_vocab_size", 2, 1, kMaxTypes);
    c.normEps = f.number("layer_norm_eps", 1e-12, 0.0, 1.0);
    c.activation = parseActivation(f.string("hidden_act", "gelu"), "hidden_act", false, f.name());
    const std::string positions = f.string("position_embedding_type", "absolute");
    if (positions != "absolute")
        throw ModelError(f.name() + ": position_embedding_type \"" + positions
                         + "\" is not supported (supported: absolute)");
    learnedPositionLayout(f, c, "hidden_size", "num_attention_heads");
    c.postNorm = true;
    c.causal = false;
}

// "layer_types": one "full_attention" or "sliding_attention" per layer.
void parseLayerTypes(const Fields &f, ModelConfig &c)
{
    const json *types = f.get("layer_types");
    if (!types)
        return;
    if (!types->is_array() || Index(types->size()) != c.layers)
        throw ModelError(f.name() + ": field \"layer_types\" must be an array of "
                         + std::to_string(c.layers) + " strings (one per layer), got "
                         + types->dump().substr(0, 80));
    for (const json &t : *types) {
        const bool sliding = t == "sliding_attention";
        if (!sliding && t != "full_attention")
            throw ModelError(f.name() + ": layer_types entry " + t.dump().substr(0, 40)
                             + " is not \"full_attention\" or \"sliding_attention\"");
        c.slidingLayers.push_back(sliding ? 1 : 0);
    }
}

// Llama, Qwen2, Qwen3.
void parseLlamaLike(const Fields &f, const json &root, ModelConfig &c)
{
    c.hiddenSize = f.integer("hidden_size", std::nullopt, 1, kMaxHidden);
    c.heads = f.integer("num_attention_heads", std::nullopt, 1, kMaxHeads);
    c.layers = f.integer("num_hidden_layers", std::nullopt, 1, kMaxLayers);
    c.intermediateSize = f.integer("intermediate_size", std::nullopt, 1, kMaxIntermediate);
    c.vocabSize = f.integer("vocab_size", std::nullopt, 1, kMaxVocab);
    c.kvHeads = f.integer("num_key_value_heads", c.heads, 1, kMaxHeads);
    c.maxPositions = f.integer("max_position_embeddings", 2048, 1, kMaxPositions);
    c.normEps = f.number("rms_norm_eps", 1e-6, 0.0, 1.0);
    c.activation = parseActivation(f.string("hidden_act", "silu"), "hidden_act", true, f.name());
    const bool explicitHeadDim = f.get("head_dim") != nullptr;
    if (c.family == ModelFamily::Qwen3 || explicitHeadDim) {
        c.headDim = f.integer("head_dim", std::optional<Index>(128), 1, kMaxHeadDim);
    } else {
        if (c.hiddenSize % c.heads != 0)
            throw ModelError(f.name() + ": hidden_size " + std::to_string(c.hiddenSize)
                             + " is not divisible by num_attention_heads " + std::to_string(c.heads)
                             + " (and no head_dim is given)");
        c.headDim = c.hiddenSize / c.heads;
    }
    if (c.heads % c.kvHeads != 0)
        throw ModelError(f.name() + ": num_attention_heads " + std::to_string(c.heads)
                         + " is not divisible by num_key_value_heads " + std::to_string(c.kvHeads));
    if (c.headDim % 2 != 0)
        throw ModelError(f.name() + ": head_dim " + std::to_string(c.headDim)
                         + " is odd; RoPE rotates pairs of dimensions");
    const double partial = f.number("partial_rotary_factor", 1.0, 0.0, 1.0);
    if (partial != 1.0)
        throw ModelError(f.name() + ": partial_rotary_factor " + json(partial).dump()
                         + " is not supported (only 1.0)");
    c.norm = NormKind::RmsNorm;
    c.tieWordEmbeddings = f.boolean("tie_word_embeddings", false);
    c.rope = true;
    parseRope(f, root, c);
    const bool attentionBias = f.boolean("attention_bias", false);
    c.qkvBias = c.family == ModelFamily::Qwen2 || attentionBias;
    c.outputBias = attentionBias && c.family != ModelFamily::Qwen2;
    c.mlpBias = f.boolean("mlp_bias", false);
    c.qkNorm = c.family == ModelFamily::Qwen3;
    if (c.family == ModelFamily::Qwen2 || c.family == ModelFamily::Qwen3) {
        c.slidingWindow = f.boolean("use_sliding_window", false);
        if (c.slidingWindow) {
            c.slidingWindowSize = f.integer("sliding_window", 4096, 1, kMaxPositions);
            c.maxWindowLayers = f.integer("max_window_layers", 28, 0, kMaxLayers);
            parseLayerTypes(f, c);
        }
    }
}

} // namespace

const char *modelFamilyName(ModelFamily family)
{
    switch (family) {
    case ModelFamily::Gpt2:
        return "gpt2";
    case ModelFamily::Llama:
        return "llama";
    case ModelFamily::Qwen2:
        return "qwen2";
    case ModelFamily::Qwen3:
        return "qwen3";
    case ModelFamily::Bert:
        return "bert";
    }
    return "?";
}

bool ModelConfig::usesSlidingWindow(Index layer) const
{
    if (!slidingWindow)
        return false;
    if (!slidingLayers.empty())
        return layer >= 0 && layer < Index(slidingLayers.size())
            && slidingLayers[std::size_t(layer)] != 0;
    return layer >= maxWindowLayers;
}

ModelConfig parseModelConfig(std::string_view text, const std::string &name)
{
    const json root = detail::parseJsonStrict(text, name);
    if (!root.is_object())
        throw ModelError(name + ": a config.json must be a JSON object, got "
                         + detail::jsonTypeName(root));
    const Fields f(root, name);
    const char *supported = "gpt2, llama, qwen2, qwen3, bert";
    if (!f.get("model_type"))
        throw ModelError(name + ": missing field \"model_type\" (supported: " + supported + ")");
    const std::string type = f.string("model_type", nullptr);
    ModelConfig c;
    if (type == "gpt2") {
        c.family = ModelFamily::Gpt2;
        parseGpt2(f, c);
    } else if (type == "bert") {
        c.family = ModelFamily::Bert;
        parseBert(f, c);
    } else if (type == "llama" || type == "qwen2" || type == "qwen3") {
        c.family = type == "llama" ? ModelFamily::Llama
            : type == "qwen2"      ? ModelFamily::Qwen2
                                   : ModelFamily::Qwen3;
        parseLlamaLike(f, root, c);
    } else {
        throw ModelError(name + ": model_type \"" + type
                         + "\" is not supported (supported: " + supported + ")");
    }
    return c;
}

ModelConfig readModelConfig(const std::string &path)
{
    constexpr std::uintmax_t kLimit = 16u << 20;
    std::string text;
    const std::string error = readRegularFile(path, kLimit, text);
    if (!error.empty())
        throw ModelError(
            path + ": " + error
            + (error.find("accepted") != std::string::npos ? " for a config.json (16 MiB)" : ""));
    return parseModelConfig(text, path);
}

std::vector<double> ropeFrequencies(const ModelConfig &c)
{
    std::vector<double> f;
    if (!c.rope)
        return f;
    const Index planes = c.headDim / 2;
    const RopeScaling &s = c.ropeScaling;
    constexpr double kTwoPi = 6.283185307179586476925286766559;
    for (Index i = 0; i < planes; ++i) {
        double inv = std::pow(c.ropeTheta, -double(2 * i) / double(c.headDim));
        if (s.type == RopeScalingType::Linear) {
            inv /= s.factor;
        } else if (s.type == RopeScalingType::Llama3) {
            const double lowWavelength = s.originalMaxPositions / s.lowFreqFactor;
            const double highWavelength = s.originalMaxPositions / s.highFreqFactor;
            const double wavelength = kTwoPi / inv;
            if (wavelength > lowWavelength) {
                inv /= s.factor;
            } else if (wavelength >= highWavelength) {
                const double smooth = (s.originalMaxPositions / wavelength - s.lowFreqFactor)
                    / (s.highFreqFactor - s.lowFreqFactor);
                inv = (1.0 - smooth) * inv / s.factor + smooth * inv;
            }
        }
        f.push_back(inv);
    }
    return f;
}

} // namespace attn::models
