#pragma once
// One training run: a layer (core/training/layer.h), its parameters, an optimizer and a loss.
// step() is forward → loss → backward → update, as a PyTorch loop of
//   loss = loss_fn(mha(x), y); opt.zero_grad(); loss.backward(); opt.step()

#include "core/training/layer.h"
#include "core/training/optimizer.h"

#include <cstdint>

namespace attn::training {

/// What one step saw, before its update.
struct StepReport
{
    std::int64_t step = 0; ///< 1 for the first update
    double loss = 0; ///< loss before the update (nats for cross-entropy)
    double meanMaxWeight = 0; ///< AttentionDiagnostics, before the update (0 when switched off)
    double meanJacobianNorm = 0;
    double gradNormQuery = 0; ///< ‖∂loss/∂W_Q‖_F (rows 0 … E−1 of in_proj_weight)
    double gradNormKey = 0; ///< ‖∂loss/∂W_K‖_F (rows E … 2E−1)
    double gradNormValue = 0; ///< ‖∂loss/∂W_V‖_F (rows 2E … 3E−1)
    double gradNorm = 0; ///< ‖∂loss/∂θ‖ over every parameter
    bool finite = true; ///< loss and gradients finite (else the update was skipped)
};

template<typename T> class Trainer
{
public:
    /// Throws InvalidArgument from LayerConfig::validate, OptimizerConfig::validate or
    /// Parameters::checkShapes.
    Trainer(const LayerConfig &layer, const Parameters<T> &initial,
            const OptimizerConfig &optimizer, Loss loss);

    /// One update on `batch`. A non-finite loss or gradient leaves the parameters as they were
    /// and reports finite = false. Throws InvalidArgument for a batch of the wrong shape.
    StepReport step(const Batch<T> &batch);
    /// The loss on `batch` with the current parameters (no update).
    double evaluate(const Batch<T> &batch) const;

    const Parameters<T> &parameters() const { return m_params; }
    const LayerConfig &layerConfig() const { return m_layer; }
    Optimizer<T> &optimizer() { return m_optimizer; }
    Loss loss() const { return m_loss; }
    /// Whether step() computes the attention diagnostics (mean max weight, mean ‖J‖_F: O(B·h·n²)
    /// extra work per step, which a PyTorch training step does not do). On by default.
    void setDiagnosticsEnabled(bool on) { m_diagnostics = on; }
    /// Changes α for the following steps (e.g. mid-run in the window). Throws InvalidArgument
    /// when not finite.
    void setScaleExponent(double alpha);

private:
    LayerConfig m_layer;
    Parameters<T> m_params;
    Optimizer<T> m_optimizer;
    Loss m_loss;
    bool m_diagnostics = true;
    // Storage of step()'s passes, kept between steps so that a step allocates nothing once the
    // batch shape repeats (fresh (B·n) × 3E arrays cost page faults every step).
    ForwardCache<T> m_cache;
    Matrix<T> m_dOutput;
    Parameters<T> m_grads;
    BackwardScratch<T> m_scratch;
};

} // namespace attn::training
