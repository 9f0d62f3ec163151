#pragma once
// Initial weights of a trainable layer (core/training/layer.h), as E13 and the Training tab
// choose them:
//   xavier   torch.nn.MultiheadAttention's default (MultiheadAttention::initXavier from
//            Generator(seed): xavier_uniform_ in_proj_weight, zero biases, out_proj_weight
//            uniform in ±1/√E)
//   unit_qk  the same, then W_Q and W_K (and their biases) divided by the standard deviation of
//            q and k over every row of one batch, so that both have unit-variance components
//            there (Vaswani et al. 2017, footnote 4: "assume that the components of q and k are
//            independent random variables with mean 0 and variance 1")

#include "core/training/layer.h"

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace attn::training {

enum class Initialization { Xavier, UnitVarianceQk };

/// "xavier", "unit_qk" → kind; throws InvalidArgument listing the names otherwise.
Initialization initializationFromName(std::string_view name);
const char *initializationName(Initialization init);
/// Every name, in the order above.
std::vector<std::string> initializationNames();

/// Divides rows 0 … E−1 (W_Q) and E … 2E−1 (W_K) of in_proj_weight and the matching biases by
/// the population standard deviation of all components of q = X W_Qᵀ + b_Q (resp. k) over
/// every row of `batch`, where X is the batch's inputs with `layer`'s sinusoidal positions
/// added. A part whose standard deviation is 0 is left as it is. Throws InvalidArgument for
/// shapes that do not fit `layer` (Batch::validate, Parameters::checkShapes).
void unitVarianceQk(Parameters<double> &params, const LayerConfig &layer,
                    const Batch<double> &batch);

/// The initial parameters of `init` for d_model E = layer.dModel and layer.heads heads: the
/// xavier layer from Generator(seed), then for unit_qk unitVarianceQk on `firstBatch` (unused
/// for xavier).
Parameters<double> initialParameters(Initialization init, const LayerConfig &layer,
                                     std::uint64_t seed, const Batch<double> &firstBatch);

} // namespace attn::training
