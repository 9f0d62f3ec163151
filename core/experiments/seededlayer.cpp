// The seeded layer and tokens E4, E5 and E7 share (experiments_p.h), from NumPy's or PyTorch's
// streams.

#include "core/experiments/experiments_p.h"

#include "core/random/random.h"

namespace attn::experiments {

ParamSpec generatorParam()
{
    return choiceParam("generator", "numpy", {"numpy", "torch"},
                       "random streams: numpy (numpy.random.default_rng(seed)) or torch "
                       "(torch.manual_seed(seed), PyTorch 1.13 on the CPU)");
}

ParamSpec seedParamBothGenerators(std::uint64_t defaultSeed)
{
    return seedParam(defaultSeed,
                     "seed of the generator (numpy.random.default_rng(seed), or "
                     "torch.manual_seed(seed) with generator torch)");
}

RandomSource generatorOf(const ParamValues &pv)
{
    return parseRandomSource(pv.text("generator"));
}

SeededLayer seededLayer(RandomSource source, std::uint64_t seed, Index dModel, Index heads, Index n,
                        Index moreRows, bool permutation)
{
    SeededLayer s {MultiheadAttention<double>(dModel, heads), {}, {}, {}};
    if (source == RandomSource::Torch) {
        TorchGenerator rng(seed);
        initTorchDefault(s.layer, rng);
        s.x = rng.randnMatrix(n, dModel);
        s.more = rng.randnMatrix(moreRows, dModel);
        if (permutation)
            s.permutation = TorchGenerator(kTorchPermutationSeed).randperm(n);
        return s;
    }
    Generator rng(seed);
    s.layer.initXavier(rng);
    s.x = rng.standardNormal(n, dModel);
    s.more = rng.standardNormal(moreRows, dModel);
    if (permutation)
        s.permutation = rng.permutation(n);
    return s;
}

} // namespace attn::experiments
