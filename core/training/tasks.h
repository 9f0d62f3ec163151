#pragma once
// Seeded synthetic tasks that a single attention layer can only solve by attending to the right
// token. Each draw is a Batch<double> (core/training/layer.h) from the NumPy-compatible
// Generator (core/random/random.h); the same seed gives the same batches.
//
// Feature layout, d_model = E, half = E/2 (E even):
//   recall  — n (key, value) pair tokens [k_i ; onehot(v_i)], then one query token
//             [k_j + noise·ε ; 0] for a random j; sequence length n + 1. Keys k_i and ε are
//             standard normal (unit-variance components) of width half, values v_i are classes
//             in [0, V), V = `classes` (0 = half). Target of the query token: [0 ; onehot(v_j)],
//             the only scored row. Mask: no token attends to itself (the query's own key would
//             match itself).
//   copy    — n tokens [onehot(c_t) + noise·ε ; 0] with classes c_t in [0, half); target of
//             token t ≥ offset: [onehot(c_{t−offset}) ; 0], rows t < offset are not scored.
//             Causal mask. Positions are needed: the task's layer adds sinusoidal positions of
//             width half to the last half of the features (LayerConfig::positionWidth); without
//             them every earlier token looks alike and the loss stays at chance.
//   average — n tokens [onehot(c_t) + noise·ε] with classes in [0, E); every token's target is
//             the mean of the sequence's one-hot tokens (the class histogram / n). Uniform weights
//             solve it: the control task where attention need not be sharp.
// Every target row is a probability vector, so the mean-squared error and the cross-entropy
// both apply.

#include "core/random/random.h"
#include "core/training/layer.h"

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace attn::training {

enum class TaskKind { Recall, Copy, Average };

/// "recall", "copy", "average" → kind; throws InvalidArgument listing the names otherwise.
TaskKind taskKindFromName(std::string_view name);
const char *taskKindName(TaskKind kind);
/// Every task name, in the order above.
std::vector<std::string> taskNames();

struct TaskConfig
{
    TaskKind kind = TaskKind::Recall;
    Index n = 8; ///< pairs (recall) or tokens (copy, average)
    Index dModel = 16; ///< E (even for recall and copy)
    Index batch = 16; ///< B
    double noise = 0.1; ///< std of the Gaussian noise (recall: on the query key; else inputs)
    Index offset = 1; ///< copy: k, the token k positions back
    Index classes = 0; ///< recall: value classes V in [2, E/2]; 0 = E/2
    std::uint64_t seed = 0;

    /// Sequence length: n + 1 for recall, n otherwise.
    Index length() const;
    /// Value classes of recall (classes, or E/2 when 0).
    Index valueClasses() const { return classes > 0 ? classes : dModel / 2; }
    /// Throws InvalidArgument naming the field: n < 1 (recall) or n < 2, E < 2 or odd for
    /// recall / copy, classes outside {0} ∪ [1, E/2] for recall, B < 1, noise < 0 or non-finite,
    /// offset outside [1, n − 1] for copy, or a batch of more than 2^26 numbers.
    void validate() const;
    /// The layer config the task is meant for (causal for copy, positions of width E/2 for copy)
    /// with h heads and scale exponent α.
    LayerConfig layerConfig(Index heads, double scaleExponent = 0.5) const;
};

class TaskGenerator
{
public:
    /// Throws InvalidArgument (TaskConfig::validate).
    explicit TaskGenerator(const TaskConfig &config);
    /// The next batch of B sequences. Draws per sequence, in order: recall — the keys
    /// (standard_normal, n × half), the values (integers(0, V), n of them), j
    /// (integers(0, n)), ε (half); copy and average — the classes (n), then ε (n × half for copy,
    /// n × E for average; only when noise > 0).
    Batch<double> next();
    const TaskConfig &config() const { return m_config; }
    /// Recall: the pair j each sequence of the last batch asks for (B entries); else empty.
    const std::vector<Index> &answers() const { return m_answers; }

private:
    TaskConfig m_config;
    Generator m_rng;
    std::vector<Index> m_answers;
};

} // namespace attn::training
