#include "core/training/optimizer.h"

#include <cmath>

namespace attn::training {

namespace {

void checkUnit(double v, const char *what)
{
    if (!(v >= 0 && v < 1))
        throw InvalidArgument(std::string(what) + " must be in [0, 1), got " + std::to_string(v));
}

/// Applies `f(param, grad, first, second)` to each of the four tensors' arrays.
template<typename T, typename F>
void forEachTensor(Parameters<T> &p, const Parameters<T> &g, Parameters<T> &a, Parameters<T> &b,
                   F f)
{
    f(p.inProjWeight.array(), g.inProjWeight.array(), a.inProjWeight.array(),
      b.inProjWeight.array());
    f(p.inProjBias.array(), g.inProjBias.array(), a.inProjBias.array(), b.inProjBias.array());
    f(p.outProjWeight.array(), g.outProjWeight.array(), a.outProjWeight.array(),
      b.outProjWeight.array());
    f(p.outProjBias.array(), g.outProjBias.array(), a.outProjBias.array(), b.outProjBias.array());
}

} // namespace

void OptimizerConfig::validate() const
{
    if (!(learningRate > 0) || !std::isfinite(learningRate))
        throw InvalidArgument("learning rate must be > 0 and finite, got "
                              + std::to_string(learningRate));
    checkUnit(momentum, "momentum");
    checkUnit(beta1, "beta1");
    checkUnit(beta2, "beta2");
    if (!(eps > 0) || !std::isfinite(eps))
        throw InvalidArgument("eps must be > 0 and finite, got " + std::to_string(eps));
}

OptimizerKind optimizerKindFromName(std::string_view name)
{
    if (name == "sgd")
        return OptimizerKind::Sgd;
    if (name == "adam")
        return OptimizerKind::Adam;
    throw InvalidArgument("unknown optimizer '" + std::string(name) + "', expected sgd or adam");
}

const char *optimizerKindName(OptimizerKind kind)
{
    return kind == OptimizerKind::Adam ? "adam" : "sgd";
}

template<typename T>
Optimizer<T>::Optimizer(const OptimizerConfig &config)
    : m_config(config)
{
    m_config.validate();
}

template<typename T> void Optimizer<T>::setLearningRate(double lr)
{
    OptimizerConfig c = m_config;
    c.learningRate = lr;
    c.validate();
    m_config = c;
}

template<typename T> void Optimizer<T>::step(Parameters<T> &params, const Parameters<T> &grads)
{
    const Index E = params.dModel();
    grads.checkShapes(E);
    if (m_steps == 0) {
        m_first = Parameters<T>::zeros(E);
        m_second = Parameters<T>::zeros(E);
    }
    m_first.checkShapes(E);
    ++m_steps;
    const T lr = T(m_config.learningRate);
    if (m_config.kind == OptimizerKind::Sgd) {
        const T mu = T(m_config.momentum);
        const bool first = m_steps == 1;
        forEachTensor(params, grads, m_first, m_second, [&](auto p, auto g, auto buf, auto) {
            if (mu == T(0)) {
                p -= lr * g;
                return;
            }
            if (first)
                buf = g;
            else
                buf = mu * buf + g;
            p -= lr * buf;
        });
        return;
    }
    // Scalars in double, as PyTorch computes them in Python before scaling the tensors.
    const T b1 = T(m_config.beta1), b2 = T(m_config.beta2), eps = T(m_config.eps);
    const T oneMinusB1 = T(1.0 - m_config.beta1), oneMinusB2 = T(1.0 - m_config.beta2);
    const double t = double(m_steps);
    const T correction2Sqrt = T(std::sqrt(1.0 - std::pow(m_config.beta2, t)));
    const T stepSize = T(m_config.learningRate / (1.0 - std::pow(m_config.beta1, t)));
    forEachTensor(params, grads, m_first, m_second, [&](auto p, auto g, auto m, auto v) {
        m = b1 * m + oneMinusB1 * g;
        v = b2 * v + oneMinusB2 * g * g;
        p -= stepSize * (m / (v.sqrt() / correction2Sqrt + eps));
    });
}

template class Optimizer<float>;
template class Optimizer<double>;

} // namespace attn::training
