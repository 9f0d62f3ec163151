#pragma once
// A Hugging Face checkpoint bound to its config: every weight the forward pass needs, found by
// its Hugging Face name and checked against the shape the config implies. Weights stay views
// into the memory-mapped files in their stored dtype (F32, F16, BF16) and are widened to float32
// a block at a time when used (as llama2.c's memory_map_weights points into its file), so a
// BF16 model takes its file's size in memory, not twice that.
//
// Names (Hugging Face transformers, modeling_gpt2.py, modeling_llama.py, modeling_qwen2.py,
// modeling_qwen3.py, modeling_bert.py), with the prefix found from the embedding's name:
//   gpt2        [transformer.]wte, wpe, h.{i}.ln_1, attn.c_attn, attn.c_proj, ln_2, mlp.c_fc,
//               mlp.c_proj, ln_f; Conv1D weights stored [in, out] (y = x W + b)
//   llama/qwen  [model.]embed_tokens, layers.{i}.input_layernorm, self_attn.{q,k,v,o}_proj,
//               self_attn.{q,k}_norm (qwen3), post_attention_layernorm,
//               mlp.{gate,up,down}_proj, norm; lm_head ([out, in], y = x Wᵀ + b)
//   bert        [bert.]embeddings.{word,position,token_type}_embeddings, embeddings.LayerNorm,
//               encoder.layer.{i}.attention.self.{query,key,value},
//               attention.output.{dense,LayerNorm}, intermediate.dense, output.{dense,LayerNorm};
//               LayerNorm parameters named weight/bias or (older checkpoints) gamma/beta;
//               the masked-LM head cls.predictions.{transform.dense, transform.LayerNorm, bias,
//               decoder} when present
// The LM head is the input embedding when tie_word_embeddings (GPT-2 always).

#include "core/base/types.h"
#include "core/models/config.h"
#include "core/models/safetensors.h"

#include <string>
#include <vector>

namespace attn::models {

/// A tensor of the checkpoint, not yet converted: a view into its mapped file.
struct WeightRef
{
    const SafetensorsFile *file = nullptr;
    const TensorInfo *tensor = nullptr;

    bool present() const { return tensor != nullptr; }
    const std::string &name() const;
    /// Rows × cols of a 2-D tensor; a 1-D tensor of n elements is n × 1.
    Index rows() const;
    Index cols() const;
    /// The whole tensor widened to float32, rows × cols row-major. Throws ModelError for an
    /// absent tensor, a dtype other than F32/F16/BF16, or a NaN or infinite element (naming the
    /// file, the tensor and the element's row and column).
    MatrixF toMatrix() const;
    /// Rows first … first + count − 1 (count × cols). Throws ModelError outside the tensor or
    /// for a NaN or infinite element, as toMatrix().
    MatrixF rowBlock(Index first, Index count) const;
    /// A 1-D tensor as a vector of its n elements. Throws ModelError when absent or for a NaN or
    /// infinite element.
    VectorF toVector() const;
    /// Throws ModelError naming the file, the tensor and the first NaN or infinite element's row
    /// and column when one of `count` values read from elements first … first + count − 1 (C
    /// order) is not finite: a checkpoint's weights must be numbers.
    void requireFinite(const float *values, std::uint64_t first, std::uint64_t count) const;
    /// The tensor's float32 elements in the mapped file (SafetensorsFile::floatsInPlace), to be
    /// read without a copy; nullptr when absent or when it must be widened. The first call for
    /// a tensor checks all its elements (requireFinite; later calls do not: the file does not
    /// change). Throws ModelError for a NaN or infinite element.
    const float *floatsInPlace() const;
};

/// y = x Wᵀ + b with W stored [out, in] (nn.Linear), or y = x W + b with W stored [in, out]
/// (GPT-2's Conv1D, inputMajor).
struct LinearWeights
{
    WeightRef weight;
    WeightRef bias; ///< absent: no bias
    bool inputMajor = false;
    Index in = 0;
    Index out = 0;
};

/// LayerNorm (weight and bias) or RMSNorm (weight only).
struct NormWeights
{
    WeightRef weight;
    WeightRef bias;
};

struct LayerWeights
{
    NormWeights attentionNorm; ///< pre-LN: before attention; BERT: after (attention.output)
    NormWeights mlpNorm; ///< pre-LN: before the MLP; BERT: after (output.LayerNorm)
    LinearWeights qkv; ///< GPT-2's fused c_attn: hidden → 3·hidden (q, k, v side by side)
    LinearWeights q, k, v; ///< the others: hidden → h·d_k, g·d_k, g·d_k
    LinearWeights o; ///< h·d_k → hidden
    NormWeights qNorm, kNorm; ///< Qwen3: RMSNorm over d_k
    LinearWeights gate; ///< gated MLP only
    LinearWeights up; ///< hidden → intermediate (GPT-2 c_fc, BERT intermediate.dense)
    LinearWeights down; ///< intermediate → hidden (GPT-2 mlp.c_proj, BERT output.dense)
};

struct ModelWeights
{
    std::string prefix; ///< "transformer.", "model.", "bert." or ""
    WeightRef tokenEmbedding; ///< vocab × hidden
    WeightRef positionEmbedding; ///< positions × hidden (GPT-2, BERT)
    WeightRef tokenTypeEmbedding; ///< types × hidden (BERT)
    NormWeights embeddingNorm; ///< BERT
    std::vector<LayerWeights> layers;
    NormWeights finalNorm; ///< absent for BERT
    WeightRef lmHead; ///< vocab × hidden; the token embedding when tied; BERT: the decoder
    LinearWeights mlmTransform; ///< BERT masked-LM head: dense hidden → hidden, then act, norm
    NormWeights mlmNorm;
    WeightRef lmBias; ///< BERT cls.predictions.bias (vocab)
    bool hasLmHead = true; ///< false for a BERT checkpoint without cls.predictions
};

/// A config and its checkpoint, bound.
class Model
{
public:
    /// Reads `dir`/config.json and the checkpoint of `dir` (Checkpoint::open) and binds them.
    /// Throws ModelError as readModelConfig, Checkpoint::open and bind() do.
    static Model open(const std::string &dir);
    /// Binds a parsed config to a checkpoint: finds every weight the family needs (with or
    /// without the family's prefix). Throws ModelError naming the missing tensor (and the
    /// names tried), or a tensor whose shape disagrees with the config (both shapes named).
    static Model bind(ModelConfig config, Checkpoint checkpoint);

    const ModelConfig &config() const { return m_config; }
    const ModelWeights &weights() const { return m_weights; }
    const Checkpoint &checkpoint() const { return m_checkpoint; }

    /// Bytes of the checkpoint's data buffers.
    std::uint64_t weightBytes() const;

private:
    ModelConfig m_config;
    Checkpoint m_checkpoint;
    ModelWeights m_weights;
};

} // namespace attn::models
