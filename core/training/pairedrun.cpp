#include "core/training/pairedrun.h"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <limits>
#include <string>

namespace attn::training {

namespace {

template<typename T> Batch<T> castBatch(const Batch<double> &b)
{
    return {b.batch, b.length, b.inputs.cast<T>(), b.targets.cast<T>(), b.rowWeights.cast<T>(),
            b.mask};
}

StepPoint pointOf(const StepReport &r)
{
    return {r.loss, r.meanMaxWeight, r.meanJacobianNorm, std::hypot(r.gradNormQuery, r.gradNormKey),
            r.finite};
}

void checkChoice(const RunChoice &run, const char *name)
{
    if (!std::isfinite(run.scaleExponent))
        throw InvalidArgument(std::string("run ") + name + ": the scale exponent must be finite");
    if (!(run.learningRate > 0) || !std::isfinite(run.learningRate))
        throw InvalidArgument(std::string("run ") + name
                              + ": the learning rate must be > 0 and finite");
}

} // namespace

void PairedRunConfig::validate() const
{
    batchTask().validate();
    checkChoice(a, "A");
    checkChoice(b, "B");
    layerConfig(a).validate();
    OptimizerConfig oc;
    oc.kind = optimizer;
    oc.momentum = momentum;
    oc.learningRate = a.learningRate;
    oc.validate();
}

LayerConfig PairedRunConfig::layerConfig(const RunChoice &run) const
{
    return task.layerConfig(heads, run.scaleExponent);
}

TaskConfig PairedRunConfig::batchTask() const
{
    TaskConfig t = task;
    t.seed = seed + 1; // wraps at 2^64, as attnlab train --task
    return t;
}

TaskConfig PairedRunConfig::probeTask() const
{
    TaskConfig t = task;
    t.batch = 1;
    t.seed = seed + 2;
    return t;
}

std::size_t ProbeSnapshot::bytes() const
{
    std::size_t n = 0;
    for (const auto *list : {&weightsA, &weightsB})
        for (const MatrixD &m : *list)
            n += std::size_t(m.size()) * sizeof(double);
    return n + std::size_t(meanA.size() + meanB.size()) * sizeof(double);
}

struct PairedRun::Impl
{
    virtual ~Impl() = default;
    virtual std::int64_t steps() const = 0;
    virtual ProbeSnapshot probe() const = 0;
    virtual MatrixB probeMask() const = 0;
    virtual Parameters<double> parameters(bool runB) const = 0;
    virtual ChunkResult advance(const ChunkRequest &request, const CancelToken &cancel) = 0;
};

template<typename T> struct PairedRun::ImplT final : PairedRun::Impl
{
    ImplT(const PairedRunConfig &c, const Parameters<double> &initial, OptimizerConfig oa,
          OptimizerConfig ob)
        : config(c)
        , generator(c.batchTask())
        , runA(c.layerConfig(c.a), initial.cast<T>(), oa, c.loss)
        , runB(c.layerConfig(c.b), initial.cast<T>(), ob, c.loss)
    {
        TaskGenerator probeGenerator(c.probeTask());
        probeBatch = castBatch<T>(probeGenerator.next());
    }

    std::int64_t steps() const override { return taken; }

    static std::vector<MatrixD> weightsOf(const Trainer<T> &run, const Batch<T> &batch)
    {
        const ForwardCache<T> cache = forward(run.layerConfig(), run.parameters(), batch);
        std::vector<MatrixD> out;
        out.reserve(cache.weights.size());
        for (const Matrix<T> &w : cache.weights)
            out.push_back(w.template cast<double>());
        return out;
    }

    static MatrixD meanOf(const std::vector<MatrixD> &heads)
    {
        MatrixD mean = MatrixD::Zero(heads.front().rows(), heads.front().cols());
        for (const MatrixD &w : heads)
            mean += w;
        return mean / double(heads.size());
    }

    ProbeSnapshot probe() const override
    {
        ProbeSnapshot s {steps(), weightsOf(runA, probeBatch), weightsOf(runB, probeBatch), {}, {}};
        s.meanA = meanOf(s.weightsA);
        s.meanB = meanOf(s.weightsB);
        return s;
    }

    MatrixB probeMask() const override
    {
        return combinedMask(runA.layerConfig(), probeBatch.mask, probeBatch.length);
    }

    Parameters<double> parameters(bool b) const override
    {
        return (b ? runB : runA).parameters().template cast<double>();
    }

    ChunkResult advance(const ChunkRequest &request, const CancelToken &cancel) override
    {
        if (request.maxSteps < 0 || request.snapshotEvery < 1)
            throw InvalidArgument("a chunk needs maxSteps >= 0 and snapshotEvery >= 1");
        if (!(request.lossThreshold >= 0) || !std::isfinite(request.lossThreshold))
            throw InvalidArgument("the loss threshold must be >= 0 and finite");
        checkChoice(request.a, "A");
        checkChoice(request.b, "B");
        runA.setScaleExponent(request.a.scaleExponent);
        runB.setScaleExponent(request.b.scaleExponent);
        runA.optimizer().setLearningRate(request.a.learningRate);
        runB.optimizer().setLearningRate(request.b.learningRate);
        ChunkResult out;
        out.firstStep = steps() + 1;
        const auto start = std::chrono::steady_clock::now();
        for (std::int64_t s = 0; s < request.maxSteps; ++s) {
            if (cancel.isCancelled()) {
                out.cancelled = true;
                break;
            }
            const Batch<T> batch = castBatch<T>(generator.next());
            const StepReport ra = runA.step(batch);
            const StepReport rb = runB.step(batch);
            // Steps are counted by the batches drawn (a skipped update still counts).
            out.a.push_back(pointOf(ra));
            out.b.push_back(pointOf(rb));
            ++taken;
            // NaN compares false: a non-finite loss never counts as below.
            lowestA = std::min(lowestA, std::isnan(ra.loss) ? lowestA : ra.loss);
            lowestB = std::min(lowestB, std::isnan(rb.loss) ? lowestB : rb.loss);
            if (taken % request.snapshotEvery == 0)
                out.snapshots.push_back(probe());
            if (!ra.finite || !rb.finite) {
                out.nonFiniteStep = taken;
                break;
            }
            if (request.lossThreshold > 0) {
                const bool a = lowestA < request.lossThreshold, b = lowestB < request.lossThreshold;
                if (request.thresholdEither ? a || b : a && b) {
                    out.thresholdReached = true;
                    break;
                }
            }
            if (request.maxSeconds > 0
                && std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count()
                    >= request.maxSeconds)
                break;
        }
        out.latest = probe();
        return out;
    }

    PairedRunConfig config;
    TaskGenerator generator;
    Trainer<T> runA, runB;
    Batch<T> probeBatch;
    std::int64_t taken = 0;
    /// The lowest finite loss of each run so far (a threshold was reached when below it).
    double lowestA = std::numeric_limits<double>::infinity();
    double lowestB = std::numeric_limits<double>::infinity();
};

PairedRun::PairedRun(const PairedRunConfig &config)
    : m_config(config)
{
    m_config.validate();
    TaskGenerator first(m_config.batchTask()); // unit_qk: the first training batch
    m_initial = training::initialParameters(m_config.init, m_config.layerConfig(m_config.a),
                                            m_config.seed, first.next());
    const Parameters<double> &initial = m_initial;
    OptimizerConfig oa;
    oa.kind = config.optimizer;
    oa.momentum = config.momentum;
    oa.learningRate = config.a.learningRate;
    OptimizerConfig ob = oa;
    ob.learningRate = config.b.learningRate;
    if (config.float32)
        m_impl = std::make_unique<ImplT<float>>(m_config, initial, oa, ob);
    else
        m_impl = std::make_unique<ImplT<double>>(m_config, initial, oa, ob);
}

PairedRun::~PairedRun() = default;

std::int64_t PairedRun::steps() const
{
    return m_impl->steps();
}

ProbeSnapshot PairedRun::probe() const
{
    return m_impl->probe();
}

MatrixB PairedRun::probeMask() const
{
    return m_impl->probeMask();
}

Parameters<double> PairedRun::parameters(bool runB) const
{
    return m_impl->parameters(runB);
}

ChunkResult PairedRun::advance(const ChunkRequest &request, const CancelToken &cancel)
{
    return m_impl->advance(request, cancel);
}

TrainingHistory::TrainingHistory(std::int64_t interval, std::size_t capacity)
    : m_interval(std::max<std::int64_t>(1, interval))
    , m_capacity(std::max<std::size_t>(2, capacity))
{ }

void TrainingHistory::setInitial(ProbeSnapshot snapshot)
{
    snapshot.step = 0;
    if (!m_snapshots.empty() && m_snapshots.front().step == 0)
        m_snapshots.front() = std::move(snapshot);
    else
        m_snapshots.push_front(std::move(snapshot));
}

void TrainingHistory::append(const ChunkResult &chunk)
{
    if (chunk.firstStep != steps() + 1 || chunk.a.size() != chunk.b.size())
        throw InvalidArgument("a training chunk starting at step " + std::to_string(chunk.firstStep)
                              + " does not follow the " + std::to_string(steps())
                              + " steps recorded");
    m_a.insert(m_a.end(), chunk.a.begin(), chunk.a.end());
    m_b.insert(m_b.end(), chunk.b.begin(), chunk.b.end());
    for (const ProbeSnapshot &s : chunk.snapshots) {
        if (s.step % m_interval != 0)
            continue;
        m_snapshots.push_back(s);
        while (m_snapshots.size() >= m_capacity)
            thin();
    }
}

void TrainingHistory::thin()
{
    m_interval *= 2;
    std::deque<ProbeSnapshot> kept;
    for (ProbeSnapshot &s : m_snapshots)
        if (s.step % m_interval == 0)
            kept.push_back(std::move(s));
    m_snapshots = std::move(kept);
}

int TrainingHistory::snapshotIndexAt(std::int64_t step) const
{
    int found = -1;
    for (std::size_t i = 0; i < m_snapshots.size() && m_snapshots[i].step <= step; ++i)
        found = int(i);
    return found;
}

std::size_t TrainingHistory::snapshotBytes() const
{
    std::size_t n = 0;
    for (const ProbeSnapshot &s : m_snapshots)
        n += s.bytes();
    return n;
}

Table historyTable(const TrainingHistory &history)
{
    Table t({"step", "loss_a", "mean_max_weight_a", "mean_jacobian_norm_a", "grad_norm_qk_a",
             "loss_b", "mean_max_weight_b", "mean_jacobian_norm_b", "grad_norm_qk_b"});
    for (std::size_t i = 0; i < history.a().size(); ++i) {
        const StepPoint &a = history.a()[i], &b = history.b()[i];
        t.addRow({std::int64_t(i + 1), a.loss, a.meanMaxWeight, a.meanJacobianNorm, a.gradNormQk,
                  b.loss, b.meanMaxWeight, b.meanJacobianNorm, b.gradNormQk});
    }
    return t;
}

std::int64_t firstStepBelow(const std::vector<StepPoint> &points, double threshold)
{
    for (std::size_t i = 0; i < points.size(); ++i)
        if (points[i].loss < threshold)
            return std::int64_t(i + 1);
    return 0;
}

std::vector<std::pair<std::string, NpyArray>> trainingArrays(const PairedRun &run,
                                                             const TrainingHistory &history)
{
    if (history.steps() != run.steps())
        throw InvalidArgument("the history holds " + std::to_string(history.steps())
                              + " steps, the runs took " + std::to_string(run.steps()));
    const NpyType type = run.config().float32 ? NpyType::Float32 : NpyType::Float64;
    const auto vector = [](std::vector<double> v, NpyType t) {
        NpyArray a;
        a.shape = {std::int64_t(v.size())};
        a.type = t;
        a.values = std::move(v);
        return a;
    };
    const auto curve = [&](const std::vector<StepPoint> &points, double StepPoint::*field) {
        std::vector<double> v;
        v.reserve(points.size());
        for (const StepPoint &p : points)
            v.push_back(p.*field);
        return vector(std::move(v), NpyType::Float64);
    };
    const auto typed = [type](NpyArray a) {
        a.type = type;
        return a;
    };
    const auto columnVector = [&](const VectorD &v) {
        return vector(std::vector<double>(v.data(), v.data() + v.size()), type);
    };
    std::vector<std::pair<std::string, NpyArray>> out;
    std::vector<double> steps(std::size_t(history.steps()));
    for (std::size_t i = 0; i < steps.size(); ++i)
        steps[i] = double(i + 1);
    out.emplace_back("step", vector(std::move(steps), NpyType::Int64));
    for (const auto &[suffix, points] :
         {std::pair {"_a", &history.a()}, std::pair {"_b", &history.b()}}) {
        out.emplace_back(std::string("loss") + suffix, curve(*points, &StepPoint::loss));
        out.emplace_back(std::string("max_weight") + suffix,
                         curve(*points, &StepPoint::meanMaxWeight));
        out.emplace_back(std::string("jacobian_norm") + suffix,
                         curve(*points, &StepPoint::meanJacobianNorm));
        out.emplace_back(std::string("grad_norm_qk") + suffix,
                         curve(*points, &StepPoint::gradNormQk));
    }
    const ProbeSnapshot probe = run.probe();
    out.emplace_back("probe_step", NpyArray::scalarInt(probe.step));
    out.emplace_back("probe_weights_a", typed(NpyArray::fromMatrices(probe.weightsA)));
    out.emplace_back("probe_weights_b", typed(NpyArray::fromMatrices(probe.weightsB)));
    const auto addParameters = [&](const std::string &prefix, const Parameters<double> &p) {
        out.emplace_back(prefix + "in_proj_weight", typed(NpyArray::fromMatrix(p.inProjWeight)));
        out.emplace_back(prefix + "in_proj_bias", columnVector(p.inProjBias));
        out.emplace_back(prefix + "out_proj_weight", typed(NpyArray::fromMatrix(p.outProjWeight)));
        out.emplace_back(prefix + "out_proj_bias", columnVector(p.outProjBias));
    };
    addParameters("a_", run.parameters(false));
    addParameters("b_", run.parameters(true));
    addParameters("init_", run.initialParameters());
    out.emplace_back("num_heads", NpyArray::scalarInt(run.config().heads));
    return out;
}

} // namespace attn::training
