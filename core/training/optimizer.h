#pragma once
// First-order optimizers with PyTorch 1.13's update formulas (weight_decay = 0, maximize =
// False), applied to the four parameter tensors of core/training/layer.h (Optimizer) or to any
// list of parameter arrays (ArrayListOptimizer, e.g. the attention-only transformer of
// core/training/attentiononly.h):
//
// torch.optim.SGD(lr, momentum=μ, dampening=0, nesterov=False):
//   step 1: buf = g;  later steps: buf = μ·buf + g;  θ ← θ − lr·buf   (μ = 0: θ ← θ − lr·g)
// torch.optim.Adam(lr, betas=(β₁, β₂), eps=ε, amsgrad=False), step t = 1, 2, …:
//   m = β₁ m + (1 − β₁) g,  v = β₂ v + (1 − β₂) g²,
//   θ ← θ − (lr / (1 − β₁ᵗ)) · m / (√v / √(1 − β₂ᵗ) + ε)

#include "core/training/layer.h"

#include <cstdint>
#include <span>
#include <string>
#include <string_view>
#include <vector>

namespace attn::training {

enum class OptimizerKind { Sgd, Adam };

struct OptimizerConfig
{
    OptimizerKind kind = OptimizerKind::Sgd;
    double learningRate = 0.01; ///< lr > 0
    double momentum = 0.0; ///< SGD's μ in [0, 1)
    double beta1 = 0.9; ///< Adam's β₁ in [0, 1)
    double beta2 = 0.999; ///< Adam's β₂ in [0, 1)
    double eps = 1e-8; ///< Adam's ε > 0

    /// Throws InvalidArgument naming the field when a value is outside the ranges above.
    void validate() const;
};

/// "sgd" / "adam" → kind; throws InvalidArgument listing both otherwise.
OptimizerKind optimizerKindFromName(std::string_view name);
const char *optimizerKindName(OptimizerKind kind);

/// Optimizer state (SGD's momentum buffer, Adam's m and v) for one set of parameters.
template<typename T> class Optimizer
{
public:
    /// Throws InvalidArgument (OptimizerConfig::validate).
    explicit Optimizer(const OptimizerConfig &config);

    /// One update of `params` with `grads` (same shapes; InvalidArgument otherwise).
    void step(Parameters<T> &params, const Parameters<T> &grads);
    /// Updates taken so far (Adam's t).
    std::int64_t steps() const { return m_steps; }
    const OptimizerConfig &config() const { return m_config; }
    /// Changes the learning rate for the following steps (state kept, as editing
    /// param_groups[0]["lr"] in PyTorch). Throws InvalidArgument unless lr > 0 and finite.
    void setLearningRate(double lr);

private:
    OptimizerConfig m_config;
    std::int64_t m_steps = 0;
    Parameters<T> m_first; ///< SGD momentum buffer, Adam's m
    Parameters<T> m_second; ///< Adam's v
};

/// The same optimizers over a list of parameter arrays of any sizes (as torch.optim takes a list
/// of tensors): each array is updated element by element with the formulas above, so the list's
/// order and the arrays' shapes do not matter, only their sizes.
template<typename T> class ArrayListOptimizer
{
public:
    /// Throws InvalidArgument (OptimizerConfig::validate).
    explicit ArrayListOptimizer(const OptimizerConfig &config);

    /// One update of every array of `params` with the array of `grads` at the same place. The
    /// first step fixes the number of arrays and their sizes; a later step with other ones, or
    /// grads not matching params, throws InvalidArgument naming the array index and both sizes.
    void step(const std::vector<std::span<T>> &params,
              const std::vector<std::span<const T>> &grads);
    std::int64_t steps() const { return m_steps; }
    const OptimizerConfig &config() const { return m_config; }
    /// As Optimizer::setLearningRate.
    void setLearningRate(double lr);

private:
    OptimizerConfig m_config;
    std::int64_t m_steps = 0;
    std::vector<Vector<T>> m_first; ///< SGD momentum buffers, Adam's m, one per array
    std::vector<Vector<T>> m_second; ///< Adam's v
};

} // namespace attn::training
