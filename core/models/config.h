#pragma once
// A transformer's hyper-parameters from a Hugging Face config.json, for the families the forward
// pass (core/models/forward.h) runs. Field names and defaults follow Hugging Face transformers'
// configuration classes (configuration_gpt2.py, configuration_llama.py, configuration_qwen2.py,
// configuration_qwen3.py, configuration_bert.py) and its RoPE utilities (modeling_rope_utils.py):
//
//   gpt2   n_embd, n_head, n_layer, n_positions, n_inner (null: 4·n_embd), vocab_size,
//          layer_norm_epsilon, activation_function; pre-LN, learned positions, Conv1D weights
//   llama  hidden_size, intermediate_size, num_attention_heads, num_key_value_heads (GQA),
//          num_hidden_layers, head_dim (default hidden / heads), rms_norm_eps, rope_theta,
//          rope_scaling ("linear", "llama3"), attention_bias, tie_word_embeddings
//   qwen2  as llama with q/k/v biases; use_sliding_window, sliding_window, max_window_layers
//   qwen3  as llama with RMSNorm q_norm / k_norm over head_dim before RoPE; head_dim explicit
//   bert   hidden_size, num_attention_heads, num_hidden_layers, intermediate_size,
//          max_position_embeddings, type_vocab_size, layer_norm_eps, hidden_act; post-LN,
//          bidirectional
//
// Transformers v5 moved rope_theta and rope_scaling into "rope_parameters" (with "rope_type");
// both layouts are read, and a config holding both with different values is refused.

#include "core/base/types.h"

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace attn::models {

enum class ModelFamily { Gpt2, Llama, Qwen2, Qwen3, Bert };

/// "gpt2", "llama", "qwen2", "qwen3", "bert" (the config's model_type).
const char *modelFamilyName(ModelFamily family);

enum class NormKind {
    LayerNorm, ///< (x − mean) / sqrt(var + eps) · w + b (Ba et al. 2016)
    RmsNorm, ///< x · rsqrt(mean(x²) + eps) · w (Zhang & Sennrich 2019)
};

enum class Activation {
    GeluTanh, ///< 0.5x(1 + tanh(√(2/π)(x + 0.044715x³))): "gelu_new", "gelu_pytorch_tanh"
    GeluErf, ///< 0.5x(1 + erf(x/√2)): "gelu" (Hendrycks & Gimpel 2016)
    Relu, ///< max(x, 0): "relu"
    Silu, ///< x·sigmoid(x) in a gated MLP down(silu(gate x) ⊙ up x): "silu" (Shazeer 2020)
};

/// How RoPE frequencies are rescaled (modeling_rope_utils.py).
enum class RopeScalingType {
    None, ///< "default": θ_i = theta^(−2i/d)
    Linear, ///< "linear": θ_i / factor (positions divided by factor)
    Llama3, ///< "llama3": low frequencies / factor, high kept, smooth in between
};

struct RopeScaling
{
    RopeScalingType type = RopeScalingType::None;
    double factor = 1.0;
    double lowFreqFactor = 1.0; ///< llama3
    double highFreqFactor = 4.0; ///< llama3
    double originalMaxPositions = 8192; ///< llama3: original_max_position_embeddings
};

struct ModelConfig
{
    ModelFamily family = ModelFamily::Llama;
    Index vocabSize = 0;
    Index hiddenSize = 0; ///< d_model
    Index layers = 0;
    Index heads = 0; ///< query heads h
    Index kvHeads = 0; ///< key/value heads g (g divides h)
    Index headDim = 0; ///< d_k (h·d_k may differ from d_model for Qwen3)
    Index intermediateSize = 0; ///< MLP width
    Index maxPositions = 0; ///< learned position rows (GPT-2, BERT); informative with RoPE
    Index typeVocabSize = 0; ///< BERT token types
    double normEps = 1e-5;
    NormKind norm = NormKind::RmsNorm;
    Activation activation = Activation::Silu;
    bool tieWordEmbeddings = false; ///< logits use the input embedding matrix
    bool learnedPositions = false; ///< GPT-2, BERT
    bool postNorm = false; ///< BERT: x = LN(x + sublayer(x))
    bool causal = true; ///< false for BERT
    bool qkvBias = false; ///< GPT-2, Qwen2, BERT, Llama with attention_bias
    bool outputBias = false; ///< o_proj / c_proj bias: GPT-2, BERT, Llama with attention_bias
    bool mlpBias = false; ///< GPT-2, BERT, Llama with mlp_bias
    bool qkNorm = false; ///< Qwen3
    bool rope = false;
    double ropeTheta = 10000.0;
    RopeScaling ropeScaling;
    bool slidingWindow = false; ///< Qwen2 use_sliding_window
    Index slidingWindowSize = 0;
    Index maxWindowLayers = 0; ///< layers ≥ this use the window
    /// Per layer, 1 where config.json's "layer_types" says "sliding_attention" (empty when the
    /// config has no layer_types: then max_window_layers decides).
    std::vector<std::uint8_t> slidingLayers;

    /// Whether layer `layer` uses the sliding window: Qwen2/Qwen3 with use_sliding_window, for
    /// the layers "layer_types" marks "sliding_attention", or without layer_types for layers at
    /// or after max_window_layers (as transformers' Qwen2Config derives its layer_types).
    bool usesSlidingWindow(Index layer) const;
};

/// Parses config.json text. `name` starts every error message. Throws ModelError: not a JSON
/// object, a missing or unknown model_type (listing the supported ones), a missing field, a
/// field of the wrong type or out of range (sizes must be ≥ 1 and ≤ bounds that keep every
/// weight's element count within 2^53), heads not dividing hidden_size where the family needs
/// it, kv heads not dividing heads, an odd head_dim with RoPE, an unsupported activation or
/// RoPE type (naming it), or both RoPE layouts present and disagreeing.
ModelConfig parseModelConfig(std::string_view json, const std::string &name);

/// Reads and parses a config.json file (at most 16 MiB). Throws ModelError naming the file.
ModelConfig readModelConfig(const std::string &path);

/// The RoPE angle per position of each of d_k/2 planes: θ_i = theta^(−2i/d_k), rescaled by
/// config.ropeScaling (modeling_rope_utils.py, _compute_default_rope_parameters,
/// _compute_linear_scaling_rope_parameters, _compute_llama3_parameters). Empty without RoPE.
std::vector<double> ropeFrequencies(const ModelConfig &config);

} // namespace attn::models
