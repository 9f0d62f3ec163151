#pragma once
// Multi-head attention, Vaswani et al. 2017, §3.2.2, with torch.nn.MultiheadAttention's
// parameter layout and semantics (batch_first=True, one batch element):
//   in_proj_weight  (3·d_model × d_model) = [W_Q; W_K; W_V] stacked by rows
//   in_proj_bias    (3·d_model)
//   out_proj_weight (d_model × d_model), out_proj_bias (d_model)
//   q = query · W_Qᵀ + b_Q (n_q × d_model); head i uses columns i·d_k … (i+1)·d_k − 1,
//   d_k = d_model / h; each head runs scaled dot-product attention (scale d_k^(−α)/τ);
//   heads are concatenated and projected: output = concat · out_proj_weightᵀ + out_proj_bias.
// Parameter count: 4·d_model² + 4·d_model with bias (4·d_model² without), whatever h is.
//
// Separate projections (torch.nn.MultiheadAttention(kdim=…, vdim=…) when kdim or vdim ≠
// d_model: _qkv_same_embed_dim is False and in_proj_weight is None):
//   q_proj_weight (d_model × d_model), k_proj_weight (d_model × kdim),
//   v_proj_weight (d_model × vdim), in_proj_bias (3·d_model) as above;
//   q = query · W_Qᵀ + b_Q, k = key · W_Kᵀ + b_K (key n_k × kdim), v = value · W_Vᵀ + b_V
//   (value n_k × vdim); the rest as above. Parameter count d_model·(2·d_model + kdim + vdim)
//   (+ 4·d_model with bias).

#include "core/attention/attention.h"
#include "core/attention/mask.h"
#include "core/base/types.h"

#include <cstdint>
#include <vector>

namespace attn {

class Generator;

template<typename T> struct MultiheadResult
{
    Matrix<T> output; ///< n_q × d_model
    std::vector<Matrix<T>> weights; ///< h matrices n_q × n_k (average_attn_weights=False)
    Matrix<T> weightsMean; ///< n_q × n_k, mean over heads
    std::vector<Matrix<T>> scores; ///< h matrices n_q × n_k, raw q_i k_iᵀ
    std::vector<Matrix<T>> scaledScores; ///< h matrices n_q × n_k, scaled + masked
    std::vector<std::vector<std::uint8_t>> fullyMasked; ///< h × n_q flags
    double scale = 1.0; ///< scale applied in every head
};

/// The projected inputs of a layer (MultiheadAttention::project): query n_q × d_model, key and
/// value n_k × d_model; head i is columns i·d_k … (i+1)·d_k − 1 of each.
template<typename T> struct ProjectedInputs
{
    Matrix<T> query;
    Matrix<T> key;
    Matrix<T> value;
};

template<typename T> class MultiheadAttention
{
public:
    /// Zero-initialised layer. Throws InvalidArgument naming both numbers when heads does not
    /// divide dModel, or when either is < 1.
    MultiheadAttention(Index dModel, Index heads, bool bias = true);

    /// torch.nn.MultiheadAttention's initialisation with our generator: xavier_uniform_ on
    /// in_proj_weight (bound √(6/(d_model + 3·d_model))), nn.Linear's kaiming_uniform_(a=√5)
    /// on out_proj_weight (bound 1/√d_model), biases 0. Uniforms u = Generator::random() map to
    /// bound·(2u − 1), drawn in C order, in_proj_weight first.
    void initXavier(Generator &rng);
    /// Identity projections for Q, K, V and the output, zero biases (h = 1 then equals plain
    /// scaled dot-product attention on the inputs).
    void setIdentity();

    Index dModel() const { return m_dModel; }
    /// Columns of the key input: kdim with separate projections, else d_model.
    Index keyDim() const { return m_separate ? m_kProjWeight.cols() : m_dModel; }
    /// Columns of the value input: vdim with separate projections, else d_model.
    Index valueDim() const { return m_separate ? m_vProjWeight.cols() : m_dModel; }
    /// True after setSeparateProjections (q/k/v_proj_weight instead of in_proj_weight).
    bool hasSeparateProjections() const { return m_separate; }
    Index heads() const { return m_heads; }
    Index headDim() const { return m_dModel / m_heads; }
    bool hasBias() const { return m_bias; }
    /// 4·d_model² + 4·d_model (bias) or 4·d_model²; with separate projections
    /// d_model·(2·d_model + kdim + vdim) (+ 4·d_model with bias).
    Index parameterCount() const;

    Matrix<T> &inProjWeight() { return m_inProjWeight; }
    Vector<T> &inProjBias() { return m_inProjBias; }
    Matrix<T> &outProjWeight() { return m_outProjWeight; }
    Vector<T> &outProjBias() { return m_outProjBias; }
    const Matrix<T> &inProjWeight() const { return m_inProjWeight; }
    const Vector<T> &inProjBias() const { return m_inProjBias; }
    const Matrix<T> &outProjWeight() const { return m_outProjWeight; }
    const Vector<T> &outProjBias() const { return m_outProjBias; }

    /// Sets all parameters, checking shapes (InvalidArgument names the parameter and shapes).
    void setParameters(const Matrix<T> &inProjWeight, const Vector<T> &inProjBias,
                       const Matrix<T> &outProjWeight, const Vector<T> &outProjBias);

    /// Separate projections as torch.nn.MultiheadAttention(kdim, vdim) holds them:
    /// qProjWeight d_model × d_model, kProjWeight d_model × kdim, vProjWeight d_model × vdim
    /// (kdim, vdim ≥ 1), inProjBias 3·d_model ([b_Q; b_K; b_V]), outProjWeight
    /// d_model × d_model, outProjBias d_model (empty biases: zero, for a bias = false layer).
    /// Replaces in_proj_weight: afterwards inProjWeight() is empty and forward takes key
    /// n_k × kdim and value n_k × vdim. Throws InvalidArgument naming the parameter and the
    /// shapes, NonFiniteInput on NaN/Inf.
    void setSeparateProjections(const Matrix<T> &qProjWeight, const Matrix<T> &kProjWeight,
                                const Matrix<T> &vProjWeight, const Vector<T> &inProjBias,
                                const Matrix<T> &outProjWeight, const Vector<T> &outProjBias);
    const Matrix<T> &qProjWeight() const { return m_qProjWeight; } ///< empty unless separate
    const Matrix<T> &kProjWeight() const { return m_kProjWeight; } ///< empty unless separate
    const Matrix<T> &vProjWeight() const { return m_vProjWeight; } ///< empty unless separate

    /// The input projections alone: q = query · W_Qᵀ + b_Q (n_q × d_model), k = key · W_Kᵀ + b_K
    /// and v = value · W_Vᵀ + b_V (n_k × d_model each), from in_proj_weight or the separate
    /// q/k/v_proj_weight, whichever the layer holds (torch.nn.MultiheadAttention's
    /// in_projection_packed / in_projection). Head i is columns i·d_k … (i+1)·d_k − 1. The
    /// shapes are those of forward; throws InvalidArgument naming the input and its shape, and
    /// NonFiniteInput on NaN/Inf when checkFinite.
    ProjectedInputs<T> project(const ConstMatrixRef<T> &query, const ConstMatrixRef<T> &key,
                               const ConstMatrixRef<T> &value, bool checkFinite = true) const;

    /// Forward pass. query n_q × d_model, key and value n_k × d_model (n_k × kdim and
    /// n_k × vdim with separate projections). `mask` is combined
    /// attn_mask | key_padding_mask (build it with AttentionMask). Fully masked rows give zero
    /// weights and a flag (PyTorch 1.13 gives NaN there); so does every row when n_k = 0 (the
    /// output is then out_proj_bias), and n_q = 0 gives empty results.
    /// Throws InvalidArgument naming the shapes, NonFiniteInput on NaN/Inf.
    MultiheadResult<T> forward(const ConstMatrixRef<T> &query, const ConstMatrixRef<T> &key,
                               const ConstMatrixRef<T> &value, const AttentionMask &mask = {},
                               const AttentionOptions &options = {}) const;

private:
    void clearSeparate(); // back to the packed in_proj_weight layout

    Index m_dModel;
    Index m_heads;
    bool m_bias;
    Matrix<T> m_inProjWeight; // 3·d_model × d_model
    Vector<T> m_inProjBias; // 3·d_model (zeros when !bias)
    Matrix<T> m_outProjWeight; // d_model × d_model
    Vector<T> m_outProjBias; // d_model
    bool m_separate = false; // q/k/v_proj_weight instead of in_proj_weight
    Matrix<T> m_qProjWeight; // d_model × d_model (separate only)
    Matrix<T> m_kProjWeight; // d_model × kdim (separate only)
    Matrix<T> m_vProjWeight; // d_model × vdim (separate only)
};

} // namespace attn
