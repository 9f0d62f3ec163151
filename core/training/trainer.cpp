#include "core/training/trainer.h"

#include <cmath>

namespace attn::training {

template<typename T>
Trainer<T>::Trainer(const LayerConfig &layer, const Parameters<T> &initial,
                    const OptimizerConfig &optimizer, Loss loss)
    : m_layer(layer)
    , m_params(initial)
    , m_optimizer(optimizer)
    , m_loss(loss)
{
    m_layer.validate();
    m_params.checkShapes(m_layer.dModel);
}

template<typename T> void Trainer<T>::setScaleExponent(double alpha)
{
    LayerConfig c = m_layer;
    c.scaleExponent = alpha;
    c.validate();
    m_layer = c;
}

template<typename T> double Trainer<T>::evaluate(const Batch<T> &batch) const
{
    const ForwardCache<T> cache = forward(m_layer, m_params, batch);
    return lossValue(m_loss, cache.output, batch);
}

template<typename T> StepReport Trainer<T>::step(const Batch<T> &batch)
{
    forwardInto(m_layer, m_params, batch, m_cache);
    const ForwardCache<T> &cache = m_cache;
    StepReport r;
    r.step = m_optimizer.steps() + 1;
    r.loss = lossValue(m_loss, cache.output, batch);
    if (m_diagnostics) {
        const AttentionDiagnostics d = diagnostics(cache);
        r.meanMaxWeight = d.meanMaxWeight;
        r.meanJacobianNorm = d.meanJacobianNorm;
    }
    lossGradientInto(m_loss, cache.output, batch, m_dOutput);
    backwardInto(m_layer, m_params, cache, m_dOutput, m_grads, m_scratch);
    const Parameters<T> &g = m_grads;
    const Index E = m_layer.dModel;
    r.gradNormQuery = double(g.inProjWeight.topRows(E).norm());
    r.gradNormKey = double(g.inProjWeight.middleRows(E, E).norm());
    r.gradNormValue = double(g.inProjWeight.bottomRows(E).norm());
    r.gradNorm = g.norm();
    r.finite = std::isfinite(r.loss) && std::isfinite(r.gradNorm);
    if (r.finite)
        m_optimizer.step(m_params, g);
    return r;
}

template class Trainer<float>;
template class Trainer<double>;

} // namespace attn::training
