#pragma once
// Two training runs side by side, for the window's Training tab: runs A and B of one task
// (core/training/tasks.h) start from the same initial weights and train on the same batches,
// and differ in their scale exponent α (s = d_k^(−α)) and learning rate — e.g. 1/√d_k against
// unscaled scores. No threads here: the caller advances the pair in chunks of steps (on a
// worker) and keeps what they report in a TrainingHistory (bounded snapshots of a probe
// sequence's attention weights, the per-step curves).
//
// Seeds, from the one seed of the config (as `attnlab train --task`):
//   initial weights  Generator(seed), MultiheadAttention(d_model, h).initXavier; for unit_qk
//                    then W_Q, W_K rescaled on the first training batch (initialization.h)
//   training batches TaskGenerator with seed + 1 (one fresh batch per step, shared by A and B)
//   probe sequence   the first sequence of a TaskGenerator batch with seed + 2 (B = 1)

#include "core/base/cancel.h"
#include "core/io/npy.h"
#include "core/io/table.h"
#include "core/training/initialization.h"
#include "core/training/tasks.h"
#include "core/training/trainer.h"

#include <cstdint>
#include <deque>
#include <memory>
#include <string>
#include <utility>
#include <vector>

namespace attn::training {

/// What differs between A and B.
struct RunChoice
{
    double scaleExponent = 0.5; ///< α in d_k^(−α) (0.5 = 1/√d_k, 0 = unscaled, 1 = 1/d_k)
    double learningRate = 0.005; ///< lr > 0

    bool operator==(const RunChoice &) const = default;
};

struct PairedRunConfig
{
    /// Kind, n, d_model, batch size, noise, offset, classes; its seed is ignored (seed + 1).
    TaskConfig task;
    Index heads = 1; ///< h, must divide d_model
    OptimizerKind optimizer = OptimizerKind::Adam;
    double momentum = 0.0; ///< SGD's μ
    Loss loss = Loss::MeanSquaredError;
    bool float32 = true; ///< train in float32 (else float64)
    std::uint64_t seed = 0;
    Initialization init = Initialization::Xavier; ///< the initial weights A and B share
    RunChoice a {0.5, 0.005};
    RunChoice b {0.0, 0.005};

    /// Throws InvalidArgument naming the field (TaskConfig, LayerConfig and OptimizerConfig
    /// checks for both runs).
    void validate() const;
    /// The task's layer (causal and positions for copy) with h heads and α of `run`.
    LayerConfig layerConfig(const RunChoice &run) const;
    /// The task with the batch seed (seed + 1).
    TaskConfig batchTask() const;
    /// The probe's task: batch size 1, seed + 2.
    TaskConfig probeTask() const;
};

/// One step of one run, as the curves keep it.
struct StepPoint
{
    double loss = 0; ///< before the update
    double meanMaxWeight = 0;
    double meanJacobianNorm = 0; ///< mean ‖diag(p) − ppᵀ‖_F over the batch's rows
    double gradNormQk = 0; ///< √(‖∂L/∂W_Q‖² + ‖∂L/∂W_K‖²)
    bool finite = true;
};

/// The probe sequence's attention weights of both runs after `step` updates.
struct ProbeSnapshot
{
    std::int64_t step = 0; ///< updates taken (0 = the initial weights)
    std::vector<MatrixD> weightsA; ///< h matrices L × L (L = the task's sequence length)
    std::vector<MatrixD> weightsB;
    MatrixD meanA, meanB; ///< the mean over heads of weightsA, weightsB (L × L)
    /// Bytes of the matrices.
    std::size_t bytes() const;
};

/// What to do in one chunk of training.
struct ChunkRequest
{
    std::int64_t maxSteps = 1; ///< at most this many steps (≥ 0)
    double maxSeconds = 0; ///< stop after the step that passes this wall time; 0 = no limit
    /// Record a snapshot after each step whose number is a multiple of this (≥ 1).
    std::int64_t snapshotEvery = 10;
    /// A and B's α and learning rate from the chunk's first step on (state kept, as editing
    /// PyTorch's param_groups).
    RunChoice a, b;
    /// Stop after the step at which the loss (before that step's update) of both runs — or of
    /// either run when thresholdEither — has been below this value at some step so far; 0 = no
    /// threshold. Must be ≥ 0 and finite.
    double lossThreshold = 0;
    bool thresholdEither = false;
};

struct ChunkResult
{
    std::int64_t firstStep = 1; ///< number of the first step taken (1 = the first update)
    std::vector<StepPoint> a, b; ///< one entry per step taken
    std::vector<ProbeSnapshot> snapshots; ///< at the multiples of snapshotEvery
    ProbeSnapshot latest; ///< after the chunk's last step (the current weights)
    /// A loss or gradient of A or B was NaN/Inf at step nonFiniteStep (that run's update was
    /// skipped; the chunk stopped there). 0 when all were finite.
    std::int64_t nonFiniteStep = 0;
    bool cancelled = false; ///< stopped early by the cancel token
    /// Stopped at the step at which the loss threshold was reached (ChunkRequest::lossThreshold).
    bool thresholdReached = false;
};

class PairedRun
{
public:
    /// Throws InvalidArgument (PairedRunConfig::validate).
    explicit PairedRun(const PairedRunConfig &config);
    ~PairedRun();
    PairedRun(const PairedRun &) = delete;
    PairedRun &operator=(const PairedRun &) = delete;

    const PairedRunConfig &config() const { return m_config; }
    /// Steps taken (both runs take the same).
    std::int64_t steps() const;
    /// The probe's weights with the current parameters.
    ProbeSnapshot probe() const;
    /// The initial parameters A and B started from (float64; in float32 runs they were rounded
    /// to float32 before training).
    const Parameters<double> &initialParameters() const { return m_initial; }
    /// The current parameters of run A (or B), converted to double (exact from float32).
    Parameters<double> parameters(bool runB) const;
    /// The probe's mask, L × L (1 = masked: the diagonal for recall, causal for copy; empty
    /// when nothing is masked).
    MatrixB probeMask() const;
    /// Runs up to request.maxSteps steps: each draws the next batch and steps A, then B on it.
    /// Polls `cancel` before every step (a step in progress is finished). Stops after the first
    /// step with a non-finite loss or gradient. Throws InvalidArgument for a bad α or lr.
    ChunkResult advance(const ChunkRequest &request, const CancelToken &cancel = {});

private:
    struct Impl;
    template<typename T> struct ImplT;
    PairedRunConfig m_config;
    Parameters<double> m_initial;
    std::unique_ptr<Impl> m_impl;
};

/// The curves of both runs and bounded snapshots of the probe's weights. Snapshots are kept
/// every `interval()` steps; when there are `capacity` of them, every second one is dropped
/// (step 0 stays) and the interval doubles, so any length of run keeps at most `capacity`
/// snapshots spread over the whole run.
class TrainingHistory
{
public:
    /// interval ≥ 1; capacity ≥ 2 (smaller values are raised).
    explicit TrainingHistory(std::int64_t interval = 10, std::size_t capacity = 256);

    /// Appends a chunk's steps and snapshots (chunks must follow each other: firstStep = one
    /// past the steps recorded; InvalidArgument otherwise). Snapshots off the current interval
    /// (recorded before it doubled) are dropped.
    void append(const ChunkResult &chunk);
    /// The snapshot of the initial weights (step 0).
    void setInitial(ProbeSnapshot snapshot);

    std::int64_t steps() const { return std::int64_t(m_a.size()); }
    const std::vector<StepPoint> &a() const { return m_a; }
    const std::vector<StepPoint> &b() const { return m_b; }
    const std::deque<ProbeSnapshot> &snapshots() const { return m_snapshots; }
    /// Index of the last snapshot at or before `step` (−1 when none).
    int snapshotIndexAt(std::int64_t step) const;
    std::int64_t interval() const { return m_interval; }
    std::size_t capacity() const { return m_capacity; }
    /// Bytes held by the snapshots' matrices.
    std::size_t snapshotBytes() const;

private:
    void thin();
    std::vector<StepPoint> m_a, m_b;
    std::deque<ProbeSnapshot> m_snapshots;
    std::int64_t m_interval;
    std::size_t m_capacity;
};

/// The first step (1-based) whose loss (before its update) is below `threshold`, 0 when none.
std::int64_t firstStepBelow(const std::vector<StepPoint> &points, double threshold);

/// The curves as a table, one row per step: step, then loss_a, mean_max_weight_a,
/// mean_jacobian_norm_a, grad_norm_qk_a and the same four for b (the loss before that step's
/// update).
Table historyTable(const TrainingHistory &history);

/// A training run as .npz members (writeNpz), for steps S = history.steps(), h heads, probe
/// length L:
///   step (S, int64: 1 … S), loss_a, loss_b (before each step's update), max_weight_a/_b (mean
///   largest weight), jacobian_norm_a/_b (mean ‖diag(p) − ppᵀ‖_F), grad_norm_qk_a/_b
///   (√(‖∂L/∂W_Q‖² + ‖∂L/∂W_K‖²)): S float64 values each, the history's curves;
///   probe_step (0-d int64) and probe_weights_a/_b (h × L × L): the probe sequence's attention
///   weights with the current parameters;
///   a_in_proj_weight (3E × E), a_in_proj_bias (3E), a_out_proj_weight (E × E), a_out_proj_bias
///   (E) and the same with b_: the current parameters under torch.nn.MultiheadAttention's names;
///   init_in_proj_weight … init_out_proj_bias: the initial parameters both started from;
///   num_heads (0-d int64).
/// Parameters and probe weights are float32 for a float32 run, else float64. Throws
/// InvalidArgument unless the history holds exactly the run's steps.
std::vector<std::pair<std::string, NpyArray>> trainingArrays(const PairedRun &run,
                                                             const TrainingHistory &history);

} // namespace attn::training
