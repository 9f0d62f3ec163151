#pragma once
// A trainable multi-head self-attention layer: forward pass, loss and analytic backward pass.
//
// Parameters in torch.nn.MultiheadAttention's layout (the same as core/attention/multihead.h):
//   in_proj_weight  3E × E  = [W_Q; W_K; W_V] stacked by rows,  in_proj_bias 3E
//   out_proj_weight E × E,                                      out_proj_bias E
// with E = d_model, h heads of d_k = E / h columns each. Self-attention on a batch of B
// sequences of n tokens, stored stacked: inputs (B·n) × E, row b·n + t = token t of sequence b.
//
// Forward (Vaswani et al. 2017, §3.2.1–§3.2.2; equals torch.nn.MultiheadAttention(
// batch_first=True) with query = key = value = X when α = 0.5, τ = 1):
//   X   = inputs (+ sinusoidal positions, §3.5, on the last `positionWidth` features)
//   QKV = X · in_proj_weightᵀ + in_proj_bias                      (B·n) × 3E
//   S   = Q_h K_hᵀ · s,  s = d_k^(−α) / τ, masked cells −∞          n × n per (b, h)
//   P   = softmax(S) row-wise (a fully masked row is all zeros)    n × n per (b, h)
//   C_h = P V_h,  C = [C_1 … C_h]                                  (B·n) × E
//   Y   = C · out_proj_weightᵀ + out_proj_bias                     (B·n) × E
// Backward (reverse-mode, hand-derived; checked against PyTorch autograd and finite differences
// in tests/tst_training.cpp):
//   dW_out = dYᵀ C, db_out = Σ_rows dY, dC = dY W_out
//   dP = dC_h V_hᵀ, dV_h = Pᵀ dC_h
//   dS = P ⊙ (dP − rowsum(dP ⊙ P))                 (softmax Jacobian diag(p) − ppᵀ per row)
//   dQ_h = s·dS K_h, dK_h = s·dSᵀ Q_h
//   dW_in = dQKVᵀ X, db_in = Σ_rows dQKV

#include "core/attention/multihead.h"
#include "core/base/types.h"

#include <vector>

namespace attn::training {

/// Shape and attention options of the layer.
struct LayerConfig
{
    Index dModel = 16; ///< E = d_model
    Index heads = 1; ///< h, must divide d_model
    double scaleExponent = 0.5; ///< α in s = d_k^(−α) / τ (0.5 = 1/√d_k, 0 = unscaled, 1 = 1/d_k)
    double temperature = 1.0; ///< τ > 0
    bool causal = false; ///< token t attends to tokens 0 … t only (top-left causal mask)
    /// Sinusoidal positions (positional.h, positions 0 … n−1) of width positionWidth added to
    /// the last positionWidth features of every sequence; 0 = no positions.
    Index positionWidth = 0;

    Index headDim() const { return dModel / heads; } ///< d_k
    double scale() const; ///< d_k^(−α) / τ
    /// Throws InvalidArgument naming the field: d_model or h < 1, h not dividing d_model,
    /// τ ≤ 0 or non-finite, α non-finite, positionWidth outside [0, d_model].
    void validate() const;
};

/// The four parameter tensors (also used for their gradients and optimizer state).
template<typename T> struct Parameters
{
    Matrix<T> inProjWeight; ///< 3E × E
    Vector<T> inProjBias; ///< 3E
    Matrix<T> outProjWeight; ///< E × E
    Vector<T> outProjBias; ///< E

    /// All zeros for d_model E.
    static Parameters zeros(Index dModel);
    /// Copies the parameters of a MultiheadAttention layer (biases zero when it has none).
    static Parameters fromLayer(const MultiheadAttention<T> &layer);
    /// A MultiheadAttention layer (with bias) holding these parameters.
    MultiheadAttention<T> toLayer(Index heads) const;
    Index dModel() const { return outProjWeight.rows(); }
    /// 4E² + 4E.
    Index count() const;
    /// √(Σ over all four tensors of x²).
    double norm() const;
    /// Throws InvalidArgument naming the tensor and both shapes unless shaped for d_model E.
    void checkShapes(Index dModel) const;
    template<typename U> Parameters<U> cast() const
    {
        return {inProjWeight.template cast<U>(), inProjBias.template cast<U>(),
                outProjWeight.template cast<U>(), outProjBias.template cast<U>()};
    }
};

/// A batch of B sequences of n tokens.
template<typename T> struct Batch
{
    Index batch = 0; ///< B
    Index length = 0; ///< n
    Matrix<T> inputs; ///< (B·n) × E, row b·n + t
    Matrix<T> targets; ///< (B·n) × E
    /// (B·n) weights of the rows in the loss (a task scores some positions only); empty = all 1.
    Vector<T> rowWeights;
    /// n × n, 1 = masked out (torch.nn.MultiheadAttention's boolean attn_mask), shared by every
    /// sequence and head and combined with LayerConfig::causal; empty = no mask.
    MatrixB mask;

    /// Throws InvalidArgument naming the array and shapes unless inputs and targets are
    /// (B·n) × dModel, rowWeights empty or B·n long with finite values ≥ 0 and a positive sum,
    /// mask empty or n × n, B and n ≥ 1; NonFiniteInput when inputs or targets hold NaN/Inf.
    void validate(Index dModel) const;
};

enum class Loss {
    /// mean((Y − targets)²) over every element of the scored rows (torch.nn.MSELoss()).
    MeanSquaredError,
    /// Rows of Y are logits over E classes, rows of targets are class probabilities:
    /// mean over scored rows of −Σ_e t_e log softmax(y)_e (torch.nn.functional.cross_entropy
    /// with probability targets, reduction='mean'), in nats.
    CrossEntropy,
};

/// Everything the backward pass needs from the forward pass.
template<typename T> struct ForwardCache
{
    Matrix<T> x; ///< (B·n) × E inputs with positions added
    Matrix<T> qkv; ///< (B·n) × 3E projections [Q K V]
    std::vector<Matrix<T>> weights; ///< B·h matrices n × n, index b·h + head
    std::vector<std::vector<std::uint8_t>> fullyMasked; ///< B·h × n flags (rows all zero)
    Matrix<T> concat; ///< (B·n) × E, heads side by side
    Matrix<T> output; ///< (B·n) × E
};

/// The combined mask of a batch and the config (1 = masked), n × n; empty when neither masks.
MatrixB combinedMask(const LayerConfig &config, const MatrixB &batchMask, Index length);

/// Forward pass. Throws InvalidArgument for inconsistent shapes (see Batch::validate,
/// LayerConfig::validate, Parameters::checkShapes).
template<typename T>
ForwardCache<T> forward(const LayerConfig &config, const Parameters<T> &params,
                        const Batch<T> &batch);
/// The same forward pass written into `cache`, reusing its storage: a training loop that keeps
/// one cache allocates nothing once the shapes repeat. Same results and errors as forward();
/// on an error `cache` is left as it was.
template<typename T>
void forwardInto(const LayerConfig &config, const Parameters<T> &params, const Batch<T> &batch,
                 ForwardCache<T> &cache);

/// The loss of `output` against the batch's targets (nats for cross-entropy).
template<typename T> double lossValue(Loss loss, const Matrix<T> &output, const Batch<T> &batch);
/// ∂loss/∂output, (B·n) × E.
template<typename T>
Matrix<T> lossGradient(Loss loss, const Matrix<T> &output, const Batch<T> &batch);
/// ∂loss/∂output written into `d` (resized to (B·n) × E, storage reused).
template<typename T>
void lossGradientInto(Loss loss, const Matrix<T> &output, const Batch<T> &batch, Matrix<T> &d);

/// Gradients of the loss with respect to every parameter, given dOutput = ∂loss/∂Y.
template<typename T>
Parameters<T> backward(const LayerConfig &config, const Parameters<T> &params,
                       const ForwardCache<T> &cache, const Matrix<T> &dOutput);

/// Intermediate arrays of the backward pass, kept between calls of backwardInto.
template<typename T> struct BackwardScratch
{
    Matrix<T> dConcat; ///< (B·n) × E
    Matrix<T> dQkv; ///< (B·n) × 3E
    Matrix<T> dP, dS; ///< n × n
    Vector<T> rowDot; ///< n: rowsum(dP ⊙ P)
};

/// The same gradients written into `grads` (resized for d_model E), reusing the storage of
/// `grads` and `scratch`. Same results and errors as backward().
template<typename T>
void backwardInto(const LayerConfig &config, const Parameters<T> &params,
                  const ForwardCache<T> &cache, const Matrix<T> &dOutput, Parameters<T> &grads,
                  BackwardScratch<T> &scratch);

/// Attention diagnostics of one forward pass, averaged over sequences, heads and query rows
/// that are not fully masked.
struct AttentionDiagnostics
{
    double meanMaxWeight = 0; ///< mean of max_j p_j
    double meanJacobianNorm = 0; ///< mean of ‖diag(p) − ppᵀ‖_F (metrics.h jacobianNorm)
};
template<typename T> AttentionDiagnostics diagnostics(const ForwardCache<T> &cache);

/// Bytes one training step holds at its peak for B sequences of n tokens and h heads, with
/// elements of `elementBytes` (8 float64, 4 float32): (2·B·h + 3)·n² elements — every
/// sequence's and head's n × n weights kept for the backward pass and their gradient, plus
/// three n × n work matrices of one head. Measured with `/usr/bin/time -f %M attnlab train`
/// (n = 1 024: 16.5 MB a sequence and head in float64, 8.3 MB in float32, the same for --in and
/// --task). In double, so that no product overflows.
double trainingStepBytes(Index batch, Index heads, Index n, std::size_t elementBytes);

} // namespace attn::training
