#include "core/training/initialization.h"

#include "core/attention/positional.h"
#include "core/random/random.h"

#include <cmath>

namespace attn::training {

Initialization initializationFromName(std::string_view name)
{
    if (name == "xavier")
        return Initialization::Xavier;
    if (name == "unit_qk")
        return Initialization::UnitVarianceQk;
    throw InvalidArgument("unknown initialisation '" + std::string(name)
                          + "' (expected xavier or unit_qk)");
}

const char *initializationName(Initialization init)
{
    return init == Initialization::UnitVarianceQk ? "unit_qk" : "xavier";
}

std::vector<std::string> initializationNames()
{
    return {"xavier", "unit_qk"};
}

void unitVarianceQk(Parameters<double> &p, const LayerConfig &layer, const Batch<double> &batch)
{
    layer.validate();
    p.checkShapes(layer.dModel);
    batch.validate(layer.dModel);
    const Index E = layer.dModel;
    MatrixD x = batch.inputs;
    if (layer.positionWidth > 0) {
        const MatrixD pe = sinusoidalEncoding(batch.length, layer.positionWidth);
        for (Index b = 0; b < batch.batch; ++b)
            x.block(b * batch.length, E - layer.positionWidth, batch.length, layer.positionWidth)
                += pe;
    }
    for (Index part = 0; part < 2; ++part) {
        MatrixD proj = x * p.inProjWeight.middleRows(part * E, E).transpose();
        proj.rowwise() += p.inProjBias.segment(part * E, E).transpose();
        const double mean = proj.mean();
        const double sd = std::sqrt((proj.array() - mean).square().mean());
        if (sd > 0) {
            p.inProjWeight.middleRows(part * E, E) /= sd;
            p.inProjBias.segment(part * E, E) /= sd;
        }
    }
}

Parameters<double> initialParameters(Initialization init, const LayerConfig &layer,
                                     std::uint64_t seed, const Batch<double> &firstBatch)
{
    layer.validate();
    Generator rng(seed);
    MultiheadAttention<double> xavier(layer.dModel, layer.heads);
    xavier.initXavier(rng);
    Parameters<double> p = Parameters<double>::fromLayer(xavier);
    if (init == Initialization::UnitVarianceQk)
        unitVarianceQk(p, layer, firstBatch);
    return p;
}

} // namespace attn::training
