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

/// The scalars of one update (step t = steps taken including this one), in double as PyTorch
/// computes them in Python before scaling the tensors.
template<typename T> struct UpdateScalars
{
    UpdateScalars(const OptimizerConfig &c, std::int64_t t)
        : lr(T(c.learningRate))
        , mu(T(c.momentum))
        , first(t == 1)
        , b1(T(c.beta1))
        , b2(T(c.beta2))
        , eps(T(c.eps))
        , oneMinusB1(T(1.0 - c.beta1))
        , oneMinusB2(T(1.0 - c.beta2))
        , correction2Sqrt(T(std::sqrt(1.0 - std::pow(c.beta2, double(t)))))
        , stepSize(T(c.learningRate / (1.0 - std::pow(c.beta1, double(t)))))
    { }
    T lr, mu;
    bool first;
    T b1, b2, eps, oneMinusB1, oneMinusB2, correction2Sqrt, stepSize;
};

/// torch.optim.SGD's update of one array (buf: the momentum buffer).
template<typename T, typename P, typename G, typename B>
void sgdUpdate(const UpdateScalars<T> &s, P &&p, const G &g, B &&buf)
{
    if (s.mu == T(0)) {
        p -= s.lr * g;
        return;
    }
    if (s.first)
        buf = g;
    else
        buf = s.mu * buf + g;
    p -= s.lr * buf;
}

/// torch.optim.Adam's update of one array.
template<typename T, typename P, typename G, typename M, typename V>
void adamUpdate(const UpdateScalars<T> &s, P &&p, const G &g, M &&m, V &&v)
{
    m = s.b1 * m + s.oneMinusB1 * g;
    v = s.b2 * v + s.oneMinusB2 * g * g;
    p -= s.stepSize * (m / (v.sqrt() / s.correction2Sqrt + s.eps));
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

namespace {

/// `config` with learning rate `lr`, validated (InvalidArgument unless lr > 0 and finite); the
/// optimizer's state is kept by its caller.
OptimizerConfig withLearningRate(OptimizerConfig config, double lr)
{
    config.learningRate = lr;
    config.validate();
    return config;
}

} // namespace

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
    m_config = withLearningRate(m_config, lr);
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
    const UpdateScalars<T> s(m_config, m_steps);
    if (m_config.kind == OptimizerKind::Sgd) {
        forEachTensor(params, grads, m_first, m_second,
                      [&](auto p, auto g, auto buf, auto) { sgdUpdate(s, p, g, buf); });
        return;
    }
    forEachTensor(params, grads, m_first, m_second,
                  [&](auto p, auto g, auto m, auto v) { adamUpdate(s, p, g, m, v); });
}

template class Optimizer<float>;
template class Optimizer<double>;

template<typename T>
ArrayListOptimizer<T>::ArrayListOptimizer(const OptimizerConfig &config)
    : m_config(config)
{
    m_config.validate();
}

template<typename T> void ArrayListOptimizer<T>::setLearningRate(double lr)
{
    m_config = withLearningRate(m_config, lr);
}

template<typename T>
void ArrayListOptimizer<T>::step(const std::vector<std::span<T>> &params,
                                 const std::vector<std::span<const T>> &grads)
{
    if (params.size() != grads.size())
        throw InvalidArgument("optimizer: " + std::to_string(params.size())
                              + " parameter arrays but " + std::to_string(grads.size())
                              + " gradient arrays");
    if (m_steps > 0 && params.size() != m_first.size())
        throw InvalidArgument("optimizer: " + std::to_string(params.size())
                              + " parameter arrays, the state holds "
                              + std::to_string(m_first.size()));
    for (std::size_t i = 0; i < params.size(); ++i) {
        const std::size_t expected
            = m_steps > 0 ? std::size_t(m_first[i].size()) : params[i].size();
        if (params[i].size() != expected || grads[i].size() != expected)
            throw InvalidArgument("optimizer: array " + std::to_string(i) + " has "
                                  + std::to_string(params[i].size()) + " parameters and "
                                  + std::to_string(grads[i].size()) + " gradients, expected "
                                  + std::to_string(expected));
    }
    if (m_steps == 0) {
        m_first.assign(params.size(), Vector<T>());
        m_second.assign(params.size(), Vector<T>());
        for (std::size_t i = 0; i < params.size(); ++i) {
            m_first[i].setZero(Index(params[i].size()));
            m_second[i].setZero(Index(params[i].size()));
        }
    }
    ++m_steps;
    const UpdateScalars<T> s(m_config, m_steps);
    using ArrayMap = Eigen::Map<Eigen::Array<T, Eigen::Dynamic, 1>>;
    using ConstArrayMap = Eigen::Map<const Eigen::Array<T, Eigen::Dynamic, 1>>;
    for (std::size_t i = 0; i < params.size(); ++i) {
        const Index size = Index(params[i].size());
        ArrayMap p(params[i].data(), size);
        const ConstArrayMap g(grads[i].data(), size);
        if (m_config.kind == OptimizerKind::Sgd)
            sgdUpdate(s, p, g, m_first[i].array());
        else
            adamUpdate(s, p, g, m_first[i].array(), m_second[i].array());
    }
}

template class ArrayListOptimizer<float>;
template class ArrayListOptimizer<double>;

} // namespace attn::training
