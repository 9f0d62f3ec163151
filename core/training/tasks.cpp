#include "core/training/tasks.h"

#include <cmath>

namespace attn::training {

TaskKind taskKindFromName(std::string_view name)
{
    if (name == "recall")
        return TaskKind::Recall;
    if (name == "copy")
        return TaskKind::Copy;
    if (name == "average")
        return TaskKind::Average;
    throw InvalidArgument("unknown task '" + std::string(name)
                          + "', expected recall, copy or average");
}

const char *taskKindName(TaskKind kind)
{
    switch (kind) {
    case TaskKind::Recall:
        return "recall";
    case TaskKind::Copy:
        return "copy";
    case TaskKind::Average:
        return "average";
    }
    return "recall";
}

std::vector<std::string> taskNames()
{
    return {"recall", "copy", "average"};
}

Index TaskConfig::length() const
{
    return kind == TaskKind::Recall ? n + 1 : n;
}

void TaskConfig::validate() const
{
    const std::string task = taskKindName(kind);
    const Index minN = kind == TaskKind::Recall ? 1 : 2;
    if (n < minN)
        throw InvalidArgument(task + ": n must be >= " + std::to_string(minN) + ", got "
                              + std::to_string(n));
    if (dModel < 2 || (kind != TaskKind::Average && dModel % 2 != 0))
        throw InvalidArgument(task + ": d_model must be "
                              + (kind == TaskKind::Average
                                     ? "an integer >= 2"
                                     : "even and >= 2 (keys or tokens use one "
                                       "half of the features)")
                              + ", got " + std::to_string(dModel));
    if (batch < 1)
        throw InvalidArgument(task + ": batch size must be >= 1, got " + std::to_string(batch));
    if (!(noise >= 0) || !std::isfinite(noise))
        throw InvalidArgument(task + ": noise must be >= 0 and finite, got "
                              + std::to_string(noise));
    if (kind == TaskKind::Copy && (offset < 1 || offset > n - 1))
        throw InvalidArgument("copy: offset must be in [1, n - 1 = " + std::to_string(n - 1)
                              + "], got " + std::to_string(offset));
    // B·length·E numbers per array; refuse before multiplying anything large.
    const double numbers = double(batch) * double(length()) * double(dModel);
    if (numbers > double(Index(1) << 26))
        throw InvalidArgument(task + ": a batch of B = " + std::to_string(batch) + " sequences of "
                              + std::to_string(length()) + " tokens × d_model = "
                              + std::to_string(dModel) + " is over 2^26 numbers");
}

LayerConfig TaskConfig::layerConfig(Index heads, double scaleExponent) const
{
    LayerConfig c;
    c.dModel = dModel;
    c.heads = heads;
    c.scaleExponent = scaleExponent;
    c.causal = kind == TaskKind::Copy;
    c.positionWidth = kind == TaskKind::Copy ? dModel / 2 : 0;
    return c;
}

TaskGenerator::TaskGenerator(const TaskConfig &config)
    : m_config(config)
    , m_rng(config.seed)
{
    m_config.validate();
}

Batch<double> TaskGenerator::next()
{
    const TaskConfig &c = m_config;
    const Index B = c.batch, L = c.length(), E = c.dModel, half = E / 2;
    Batch<double> out;
    out.batch = B;
    out.length = L;
    out.inputs = MatrixD::Zero(B * L, E);
    out.targets = MatrixD::Zero(B * L, E);
    out.rowWeights = VectorD::Zero(B * L);
    switch (c.kind) {
    case TaskKind::Recall: {
        out.mask = MatrixB::Zero(L, L);
        for (Index i = 0; i < L; ++i)
            out.mask(i, i) = 1;
        for (Index b = 0; b < B; ++b) {
            const Index r0 = b * L;
            const MatrixD keys = m_rng.standardNormal(c.n, half); // n × half
            out.inputs.block(r0, 0, c.n, half) = keys;
            std::vector<Index> values(std::size_t(c.n));
            for (Index i = 0; i < c.n; ++i) {
                values[std::size_t(i)] = Index(m_rng.integers(0, half));
                out.inputs(r0 + i, half + values[std::size_t(i)]) = 1.0;
            }
            const Index j = Index(m_rng.integers(0, c.n));
            const MatrixD eps = m_rng.standardNormal(1, half);
            out.inputs.block(r0 + c.n, 0, 1, half) = keys.row(j) + c.noise * eps;
            out.targets(r0 + c.n, half + values[std::size_t(j)]) = 1.0;
            out.rowWeights(r0 + c.n) = 1.0;
        }
        break;
    }
    case TaskKind::Copy: {
        for (Index b = 0; b < B; ++b) {
            const Index r0 = b * L;
            std::vector<Index> cls(static_cast<std::size_t>(L));
            for (Index t = 0; t < L; ++t) {
                cls[std::size_t(t)] = Index(m_rng.integers(0, half));
                out.inputs(r0 + t, cls[std::size_t(t)]) = 1.0;
            }
            if (c.noise > 0)
                out.inputs.block(r0, 0, L, half) += c.noise * m_rng.standardNormal(L, half);
            for (Index t = c.offset; t < L; ++t) {
                out.targets(r0 + t, cls[std::size_t(t - c.offset)]) = 1.0;
                out.rowWeights(r0 + t) = 1.0;
            }
        }
        break;
    }
    case TaskKind::Average: {
        for (Index b = 0; b < B; ++b) {
            const Index r0 = b * L;
            RowVector<double> mean = RowVector<double>::Zero(E);
            for (Index t = 0; t < L; ++t) {
                const Index k = Index(m_rng.integers(0, E));
                out.inputs(r0 + t, k) = 1.0;
                mean(k) += 1.0 / double(L);
            }
            if (c.noise > 0)
                out.inputs.block(r0, 0, L, E) += c.noise * m_rng.standardNormal(L, E);
            for (Index t = 0; t < L; ++t)
                out.targets.row(r0 + t) = mean;
            out.rowWeights.segment(r0, L).setOnes();
        }
        break;
    }
    }
    return out;
}

} // namespace attn::training
