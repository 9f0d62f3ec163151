// attnlab train: trains one multi-head self-attention layer (core/training/) on a user's case
// (.npz in, loss curve and final parameters out) or on a built-in synthetic task.
//
// --in case.npz holds (names as torch.nn.MultiheadAttention's state_dict):
//   in_proj_weight 3E × E, in_proj_bias 3E, out_proj_weight E × E, out_proj_bias E,
//   num_heads (0-d integer dividing E), inputs B × n × E (query = key = value = inputs),
//   targets B × n × E, and optionally attn_mask n × n bool (meaning by --mask-convention).
// The loss is mean((MHA(inputs) − targets)²) over all elements (or the cross-entropy of the
// rows), the optimizer plain SGD θ ← θ − lr·∇θ (optionally with momentum) or Adam, as PyTorch.
// --out r.npz holds `loss` (S + 1 values: before each step, then after the last) and the final
// parameters under the names above (plus num_heads).

#include "common.h"

#include "core/io/npy.h"
#include "core/io/table.h"
#include "core/io/tensorcase.h"
#include "core/training/tasks.h"
#include "core/training/trainer.h"

#include <QFileInfo>
#include <QStringList>
#include <QTextStream>

#include <cmath>
#include <map>
#include <string>
#include <vector>

namespace attn::cli {
namespace {

using namespace attn::training;

const QString kCommand = QStringLiteral("train");

QString q(const std::string &s)
{
    return QString::fromStdString(s);
}

/// A case file's arrays, checked; thrown InvalidArgument names the array.
struct TrainingCase
{
    Parameters<double> params;
    Index heads = 1;
    Batch<double> batch;
};

const NpyArray &member(const std::map<std::string, NpyArray> &arrays, const std::string &name,
                       const QString &path)
{
    const auto it = arrays.find(name);
    if (it == arrays.end())
        throw InvalidArgument(QStringLiteral("'%1' has no array '%2' (a training case needs "
                                             "in_proj_weight, in_proj_bias, out_proj_weight, "
                                             "out_proj_bias, num_heads, inputs and targets)")
                                  .arg(path, q(name))
                                  .toStdString());
    if (it->second.type == NpyType::Bool && name != "attn_mask")
        throw InvalidArgument(name + " is " + describeArray(it->second) + ", expected numbers");
    return it->second;
}

std::string shapeText(const std::vector<std::int64_t> &shape)
{
    std::string s = "(";
    for (std::size_t i = 0; i < shape.size(); ++i)
        s += (i ? ", " : "") + std::to_string(shape[i]);
    return s + (shape.size() == 1 ? ",)" : ")");
}

void expectShape(const NpyArray &a, const std::string &name, std::vector<std::int64_t> shape)
{
    if (a.shape != shape)
        throw InvalidArgument(name + " is " + describeArray(a) + ", expected shape "
                              + shapeText(shape));
}

TrainingCase readCase(const QString &path, MaskConvention convention)
{
    std::map<std::string, NpyArray> arrays;
    for (auto &[name, array] : readInputNpz(
             path, double(kDefaultMemoryBudgetMib) * 1024.0 * 1024.0,
             QStringLiteral("the %1 MiB budget of training cases").arg(kDefaultMemoryBudgetMib)))
        arrays.emplace(name, std::move(array));
    const NpyArray &outW = member(arrays, "out_proj_weight", path);
    if (outW.ndim() != 2 || outW.shape[0] != outW.shape[1] || outW.shape[0] < 1)
        throw InvalidArgument("out_proj_weight is " + describeArray(outW)
                              + ", expected a square (E, E) matrix");
    const std::int64_t E = outW.shape[0];
    const NpyArray &inW = member(arrays, "in_proj_weight", path);
    expectShape(inW, "in_proj_weight", {3 * E, E});
    const NpyArray &inB = member(arrays, "in_proj_bias", path);
    expectShape(inB, "in_proj_bias", {3 * E});
    const NpyArray &outB = member(arrays, "out_proj_bias", path);
    expectShape(outB, "out_proj_bias", {E});
    const NpyArray &heads = member(arrays, "num_heads", path);
    const std::int64_t h = heads.toScalarInt("num_heads");
    if (h < 1 || E % h != 0)
        throw InvalidArgument("num_heads = " + std::to_string(h)
                              + " must be >= 1 and divide d_model = " + std::to_string(E));
    const NpyArray &inputs = member(arrays, "inputs", path);
    if (inputs.ndim() != 3 || inputs.shape[2] != E || inputs.shape[0] < 1 || inputs.shape[1] < 1)
        throw InvalidArgument("inputs are " + describeArray(inputs) + ", expected (B, n, "
                              + std::to_string(E) + ") with B, n >= 1");
    const NpyArray &targets = member(arrays, "targets", path);
    expectShape(targets, "targets", inputs.shape);

    TrainingCase c;
    c.heads = Index(h);
    const auto rows = [](const NpyArray &a, Index cols) {
        MatrixD m(Index(a.values.size()) / cols, cols);
        std::copy(a.values.begin(), a.values.end(), m.data());
        return m;
    };
    c.params.inProjWeight = rows(inW, E);
    c.params.inProjBias = Eigen::Map<const VectorD>(inB.values.data(), 3 * E);
    c.params.outProjWeight = rows(outW, E);
    c.params.outProjBias = Eigen::Map<const VectorD>(outB.values.data(), E);
    for (const auto &[name, m] :
         {std::pair<const char *, const MatrixD *> {"in_proj_weight", &c.params.inProjWeight},
          {"out_proj_weight", &c.params.outProjWeight}})
        if (!m->allFinite())
            throw NonFiniteInput(std::string(name) + " holds NaN or Inf");
    if (!c.params.inProjBias.allFinite() || !c.params.outProjBias.allFinite())
        throw NonFiniteInput("in_proj_bias or out_proj_bias holds NaN or Inf");
    c.batch.batch = Index(inputs.shape[0]);
    c.batch.length = Index(inputs.shape[1]);
    c.batch.inputs = rows(inputs, E);
    c.batch.targets = rows(targets, E);
    if (const auto it = arrays.find("attn_mask"); it != arrays.end()) {
        const NpyArray &m = it->second;
        const std::int64_t n = inputs.shape[1];
        if (m.type != NpyType::Bool)
            throw InvalidArgument(
                "attn_mask is " + describeArray(m)
                + ", expected a bool (n, n) mask (train takes no additive masks)");
        expectShape(m, "attn_mask", {n, n});
        c.batch.mask.resize(Index(n), Index(n));
        for (Index i = 0; i < c.batch.mask.size(); ++i) {
            const bool set = m.values[std::size_t(i)] != 0;
            c.batch.mask.data()[i]
                = std::uint8_t(convention == MaskConvention::Masked ? set : !set);
        }
    }
    c.batch.validate(E); // NonFiniteInput naming inputs / targets
    return c;
}

/// Options shared by both modes, validated.
struct RunOptions
{
    Index steps = 100;
    OptimizerConfig optimizer;
    double alpha = 0.5, temperature = 1.0;
    Loss loss = Loss::MeanSquaredError;
    bool float32 = false;
    Index logEvery = 10;
    QString format = QStringLiteral("table");
    QString outPath;
};

NpyArray vectorArray(const std::vector<double> &v)
{
    NpyArray a;
    a.shape = {std::int64_t(v.size())};
    a.type = NpyType::Float64;
    a.values = v;
    return a;
}

template<typename T> NpyArray typedArray(const Matrix<T> &m, bool vector)
{
    NpyArray a = NpyArray::fromMatrix<T>(m);
    if (vector)
        a.shape = {std::int64_t(m.size())};
    return a;
}

/// Trains and writes the progress table (stdout) and --out. `nextBatch` gives step s's batch.
template<typename T, typename NextBatch>
int trainAs(const LayerConfig &layer, const Parameters<double> &initial, const RunOptions &o,
            NextBatch nextBatch, const Batch<double> *evalBatch, const std::string &title,
            const std::map<std::string, std::string> &params)
{
    const auto toT = [](const Batch<double> &b) {
        Batch<T> out;
        out.batch = b.batch;
        out.length = b.length;
        out.inputs = b.inputs.cast<T>();
        out.targets = b.targets.cast<T>();
        out.rowWeights = b.rowWeights.cast<T>();
        out.mask = b.mask;
        return out;
    };
    Trainer<T> trainer(layer, initial.cast<T>(), o.optimizer, o.loss);
    Table table({"step", "loss", "mean_max_weight", "mean_jacobian_norm", "grad_norm_w_q",
                 "grad_norm_w_k", "grad_norm"});
    std::vector<double> losses;
    Batch<T> batch;
    for (Index s = 0; s < o.steps; ++s) {
        batch = toT(nextBatch(s));
        const StepReport r = trainer.step(batch);
        if (!r.finite && s == 0)
            // Before any update the parameters are the initial ones: the input is at fault.
            return inputError(kCommand,
                              QStringLiteral("the loss or its gradient is not finite before any "
                                             "update (loss %1, scale %2): the inputs, targets "
                                             "or parameters overflow at this scale; use "
                                             "smaller values or a larger --temperature")
                                  .arg(r.loss)
                                  .arg(Table::formatNumber(layer.scale()).c_str()));
        if (!r.finite)
            return failure(kCommand,
                           QStringLiteral("the loss or its gradient is not finite at "
                                          "step %1 (loss %2): try a smaller --lr")
                               .arg(s + 1)
                               .arg(r.loss));
        losses.push_back(r.loss);
        if (s % o.logEvery == 0 || s + 1 == o.steps)
            table.addRow({std::int64_t(r.step), r.loss, r.meanMaxWeight, r.meanJacobianNorm,
                          r.gradNormQuery, r.gradNormKey, r.gradNorm});
    }
    const double last = evalBatch
        ? trainer.evaluate(toT(*evalBatch))
        : (o.steps > 0 ? trainer.evaluate(batch) : trainer.evaluate(toT(nextBatch(0))));
    losses.push_back(last);
    table.notes.push_back(title);
    table.notes.push_back("loss after the last step: " + Table::formatNumber(last));
    // A built-in task run too short (or too slow) to show learning says so: with the defaults
    // (Adam, lr 0.01) each task's loss halves within the default 100 steps.
    // A loss that doubled (or became non-finite) points at too large a step instead.
    const bool diverged = !std::isfinite(last) || last > 2.0 * losses.front();
    if (params.count("task") && o.steps > 0 && !losses.empty() && diverged)
        QTextStream(stderr) << "attnlab " << kCommand << ": note: the loss grew from "
                            << QString::fromStdString(Table::formatNumber(losses.front())) << " to "
                            << QString::fromStdString(Table::formatNumber(last)) << " in "
                            << o.steps << " steps: try a smaller --lr (the default is 0.01)\n";
    else if (params.count("task") && o.steps > 0 && !losses.empty()
             && !(last < 0.5 * losses.front()))
        QTextStream(stderr) << "attnlab " << kCommand << ": note: the loss went from "
                            << QString::fromStdString(Table::formatNumber(losses.front())) << " to "
                            << QString::fromStdString(Table::formatNumber(last)) << " in "
                            << o.steps
                            << " steps, not yet half: with the defaults (--optimizer adam --lr "
                               "0.01) each task's loss halves within 100 steps; give more "
                               "--steps (or a larger --lr)\n";

    if (!o.outPath.isEmpty()) {
        const Parameters<T> &p = trainer.parameters();
        const std::vector<std::pair<std::string, NpyArray>> members = {
            {"loss", vectorArray(losses)},
            {"in_proj_weight", typedArray<T>(p.inProjWeight, false)},
            {"in_proj_bias", typedArray<T>(Matrix<T>(p.inProjBias.transpose()), true)},
            {"out_proj_weight", typedArray<T>(p.outProjWeight, false)},
            {"out_proj_bias", typedArray<T>(Matrix<T>(p.outProjBias.transpose()), true)},
            {"num_heads", NpyArray::scalarInt(layer.heads)},
        };
        try {
            writeNpz(o.outPath.toStdString(), members);
        } catch (const NpyError &e) {
            return failure(kCommand, QString::fromUtf8(e.what()));
        }
    }
    std::string text;
    if (o.format == QLatin1String("csv"))
        text = table.toCsv();
    else if (o.format == QLatin1String("json"))
        text = table.toJson("train", params);
    else
        text = table.toText();
    QString error;
    if (!writeText(QString(), QByteArray::fromStdString(text), &error))
        return failure(kCommand, error);
    return ExitOk;
}

/// Everything train takes from its command line: the run's options, and where the layer and
/// its batches come from (a case file or a built-in task).
struct TrainRequest
{
    RunOptions o;
    bool fromCase = false; ///< --in (else --task)
    QString inPath; ///< --in
    QString convention; ///< --mask-convention
    std::map<std::string, std::string> params; ///< the run's parameters, for --format json
};

/// The options every run takes (optimizer, loss, dtype, output …), checked, and the outputs.
std::optional<int> parseRunOptions(const QCommandLineParser &parser, TrainRequest &req)
{
    RunOptions &o = req.o;
    const bool fromCase = req.fromCase;
    QString &inPath = req.inPath;
    QString &convention = req.convention;
    std::map<std::string, std::string> &params = req.params;
    QString error;
    const auto steps = intOption(parser, QStringLiteral("steps"), 0, 1000000, &error);
    if (!steps)
        return usageError(kCommand, error);
    o.steps = Index(*steps);
    const auto lr = doubleOption(parser, QStringLiteral("lr"), 0, 1e6, &error);
    if (!lr || !(*lr > 0))
        return usageError(kCommand,
                          QStringLiteral("--lr must be a number in (0, 1e+06], got '%1'")
                              .arg(parser.value(QStringLiteral("lr"))));
    o.optimizer.learningRate = *lr;
    const QString optimizer = parser.value(QStringLiteral("optimizer"));
    if (optimizer != QLatin1String("sgd") && optimizer != QLatin1String("adam"))
        return usageError(
            kCommand, QStringLiteral("--optimizer must be sgd or adam, got '%1'").arg(optimizer));
    o.optimizer.kind
        = optimizer == QLatin1String("adam") ? OptimizerKind::Adam : OptimizerKind::Sgd;
    const auto momentum = doubleOption(parser, QStringLiteral("momentum"), 0, 0.999999, &error);
    if (!momentum)
        return usageError(kCommand, error);
    if (*momentum > 0 && o.optimizer.kind == OptimizerKind::Adam)
        return usageError(kCommand,
                          QStringLiteral("--momentum applies to --optimizer sgd only (the "
                                         "default optimizer is adam)"));
    o.optimizer.momentum = *momentum;
    const auto alpha = doubleOption(parser, QStringLiteral("scale-exponent"), -4, 4, &error);
    if (!alpha)
        return usageError(kCommand, error);
    o.alpha = *alpha;
    const auto temperature = doubleOption(parser, QStringLiteral("temperature"), 0, 1e6, &error);
    if (!temperature)
        return usageError(kCommand, error);
    if (!(*temperature > 0))
        return usageError(kCommand,
                          QStringLiteral("--temperature must be > 0, got '%1'")
                              .arg(parser.value(QStringLiteral("temperature"))));
    o.temperature = *temperature;
    const QString loss = parser.value(QStringLiteral("loss"));
    if (loss != QLatin1String("mse") && loss != QLatin1String("cross-entropy"))
        return usageError(
            kCommand, QStringLiteral("--loss must be mse or cross-entropy, got '%1'").arg(loss));
    o.loss = loss == QLatin1String("mse") ? Loss::MeanSquaredError : Loss::CrossEntropy;
    convention = parser.value(QStringLiteral("mask-convention"));
    if (convention != QLatin1String("masked") && convention != QLatin1String("allowed"))
        return usageError(kCommand,
                          QStringLiteral("--mask-convention must be 'masked' or "
                                         "'allowed', got '%1'")
                              .arg(convention));
    const QString dtype = parser.value(QStringLiteral("dtype"));
    if (dtype != QLatin1String("float32") && dtype != QLatin1String("float64"))
        return usageError(
            kCommand,
            QStringLiteral("--dtype must be 'float32' or 'float64', got '%1'").arg(dtype));
    o.float32 = dtype == QLatin1String("float32");
    o.format = parser.value(QStringLiteral("format"));
    if (o.format != QLatin1String("table") && o.format != QLatin1String("csv")
        && o.format != QLatin1String("json"))
        return usageError(
            kCommand,
            QStringLiteral("--format must be table, csv or json, got '%1'").arg(o.format));
    const auto logEvery = intOption(parser, QStringLiteral("log-every"), 0, 1000000, &error);
    if (!logEvery)
        return usageError(kCommand, error);
    o.logEvery = *logEvery > 0 ? Index(*logEvery) : std::max<Index>(1, (o.steps + 9) / 10);
    o.outPath = parser.value(QStringLiteral("out"));
    if (fromCase && o.outPath.isEmpty())
        return usageError(kCommand, QStringLiteral("--out <r.npz> is required with --in"));
    if (parser.isSet(QStringLiteral("out"))
        && (o.outPath.isEmpty() || o.outPath == QLatin1String("-")))
        return usageError(kCommand,
                          QStringLiteral("--out needs a file name (.npz); standard "
                                         "output cannot hold an .npz archive"));
    inPath = parser.value(QStringLiteral("in"));
    std::vector<OutputPath> inputs;
    if (fromCase)
        inputs.push_back({QStringLiteral("--in"), inPath});
    if (const auto refused
        = checkOutputPaths(kCommand, {{QStringLiteral("--out"), o.outPath}}, inputs))
        return *refused;

    params = {
        {"steps", std::to_string(o.steps)},
        {"lr", Table::formatNumber(o.optimizer.learningRate)},
        {"optimizer", optimizer.toStdString()},
        {"scale_exponent", Table::formatNumber(o.alpha)},
        {"temperature", Table::formatNumber(o.temperature)},
        {"loss", loss.toStdString()},
        {"dtype", dtype.toStdString()},
    };
    return std::nullopt;
}

/// Trains on --in's case: its parameters, heads, batch and mask.
/// Refuses (InvalidArgument, exit status 2) a run whose training step would hold more than the
/// default memory budget, with the arithmetic (training::trainingStepBytes).
void checkStepMemory(Index batch, Index heads, Index n, bool float32)
{
    const std::size_t element = float32 ? 4 : 8;
    const double bytes = trainingStepBytes(batch, heads, n, element);
    if (bytes > double(kDefaultMemoryBudgetMib) * 1024.0 * 1024.0)
        throw InvalidArgument(
            QStringLiteral("B = %1 sequences x h = %2 heads of n = %3 tokens hold (2 x B x h + 3) "
                           "x n x n x %4 bytes = %5 of attention weights, their gradients and "
                           "work matrices at each step, over the %6 MiB budget; use fewer "
                           "sequences, heads or tokens%7")
                .arg(batch)
                .arg(heads)
                .arg(n)
                .arg(element)
                .arg(mibText(bytes))
                .arg(kDefaultMemoryBudgetMib)
                .arg(float32 ? QString() : QStringLiteral(", or --dtype float32"))
                .toStdString());
}

int trainOnCase(TrainRequest &req)
{
    const RunOptions &o = req.o;
    const QString &inPath = req.inPath;
    const QString &convention = req.convention;
    std::map<std::string, std::string> &params = req.params;
    const TrainingCase c = readCase(
        inPath,
        convention == QLatin1String("allowed") ? MaskConvention::Allowed : MaskConvention::Masked);
    // A query whose every key is masked gets all-zero weights here (its output row is
    // out_proj_bias); nn.MultiheadAttention gives NaN there, and a NaN loss.
    QStringList blindQueries;
    for (Index i = 0; i < c.batch.mask.rows(); ++i)
        if ((c.batch.mask.row(i).array() != 0).all())
            blindQueries << QString::number(i);
    if (!blindQueries.isEmpty())
        QTextStream(stderr)
            << "attnlab " << kCommand << ": note: attn_mask masks every key for quer"
            << (blindQueries.size() == 1 ? "y " : "ies ") << blindQueries.join(QStringLiteral(", "))
            << ": their weights are 0 and their output is out_proj_bias, so they learn "
               "only that bias (PyTorch gives NaN there, and a NaN loss)\n";
    LayerConfig layer;
    layer.dModel = c.params.dModel();
    layer.heads = c.heads;
    layer.scaleExponent = o.alpha;
    layer.temperature = o.temperature;
    layer.validate();
    checkStepMemory(c.batch.batch, layer.heads, c.batch.length, o.float32);
    if (o.loss == Loss::CrossEntropy)
        for (Index r = 0; r < c.batch.targets.rows(); ++r)
            if ((c.batch.targets.row(r).array() < 0).any())
                throw InvalidArgument("targets row " + std::to_string(r)
                                      + " has a negative entry: cross-entropy needs "
                                        "probabilities");
    params["in"] = QFileInfo(inPath).fileName().toStdString();
    const auto next = [&](Index) -> const Batch<double> & { return c.batch; };
    const std::string title = "trained " + QFileInfo(inPath).fileName().toStdString()
        + ": B = " + std::to_string(c.batch.batch) + ", n = " + std::to_string(c.batch.length)
        + ", d_model = " + std::to_string(layer.dModel) + ", h = " + std::to_string(layer.heads)
        + ", scale " + Table::formatNumber(layer.scale());
    return o.float32 ? trainAs<float>(layer, c.params, o, next, &c.batch, title, params)
                     : trainAs<double>(layer, c.params, o, next, &c.batch, title, params);
}

/// Trains on --task's built-in task: a fresh batch a step, the layer initialised from --seed.
int trainOnTask(const QCommandLineParser &parser, TrainRequest &req)
{
    const RunOptions &o = req.o;
    std::map<std::string, std::string> &params = req.params;
    QString error;
    TaskConfig tc;
    tc.kind = taskKindFromName(parser.value(QStringLiteral("task")).toStdString());
    const auto n = intOption(parser, QStringLiteral("n"), 1, 4096, &error);
    const auto dModel
        = n ? intOption(parser, QStringLiteral("d-model"), 2, 4096, &error) : std::nullopt;
    const auto heads
        = dModel ? intOption(parser, QStringLiteral("heads"), 1, 4096, &error) : std::nullopt;
    const auto batch
        = heads ? intOption(parser, QStringLiteral("batch-size"), 1, 65536, &error) : std::nullopt;
    const auto noise
        = batch ? doubleOption(parser, QStringLiteral("noise"), 0, 1e6, &error) : std::nullopt;
    const auto offset
        = noise ? intOption(parser, QStringLiteral("offset"), 1, 4095, &error) : std::nullopt;
    const auto classes
        = offset ? intOption(parser, QStringLiteral("classes"), 0, 2048, &error) : std::nullopt;
    const auto seed = classes ? seedOption(parser, QStringLiteral("seed"), &error) : std::nullopt;
    if (!seed)
        return usageError(kCommand, error);
    if (parser.isSet(QStringLiteral("offset")) && tc.kind != TaskKind::Copy)
        return usageError(kCommand, QStringLiteral("--offset applies to --task copy only"));
    if (parser.isSet(QStringLiteral("classes")) && tc.kind != TaskKind::Recall)
        return usageError(kCommand, QStringLiteral("--classes applies to --task recall only"));
    if (parser.isSet(QStringLiteral("no-positions")) && tc.kind != TaskKind::Copy)
        return usageError(kCommand, QStringLiteral("--no-positions applies to --task copy only"));
    tc.n = Index(*n);
    tc.dModel = Index(*dModel);
    tc.batch = Index(*batch);
    tc.noise = *noise;
    tc.offset = Index(*offset);
    tc.classes = Index(*classes);
    tc.seed = *seed + 1; // wraps at 2^64
    LayerConfig layer = tc.layerConfig(Index(*heads), o.alpha);
    layer.temperature = o.temperature;
    if (parser.isSet(QStringLiteral("no-positions")))
        layer.positionWidth = 0;
    layer.validate();
    checkStepMemory(tc.batch, layer.heads, tc.n, o.float32);
    TaskGenerator generator(tc); // validates the task
    Generator rng(*seed);
    MultiheadAttention<double> init(tc.dModel, layer.heads);
    init.initXavier(rng);
    params["task"] = taskKindName(tc.kind);
    params["n"] = std::to_string(tc.n);
    params["d_model"] = std::to_string(tc.dModel);
    params["heads"] = std::to_string(layer.heads);
    params["batch_size"] = std::to_string(tc.batch);
    params["noise"] = Table::formatNumber(tc.noise);
    params["seed"] = std::to_string(*seed);
    if (tc.kind == TaskKind::Recall)
        params["classes"] = std::to_string(tc.valueClasses());
    if (tc.kind == TaskKind::Copy) {
        params["offset"] = std::to_string(tc.offset);
        params["positions"] = layer.positionWidth > 0 ? "sinusoidal" : "none";
    }
    Batch<double> current;
    const auto next = [&](Index) -> const Batch<double> & {
        current = generator.next();
        return current;
    };
    const std::string title = std::string("task ") + taskKindName(tc.kind)
        + ": n = " + std::to_string(tc.n) + ", d_model = " + std::to_string(tc.dModel)
        + ", h = " + std::to_string(layer.heads) + ", B = " + std::to_string(tc.batch) + ", scale "
        + Table::formatNumber(layer.scale()) + "; each step on a fresh batch, the last loss "
        + "on the last batch";
    const Parameters<double> initial = Parameters<double>::fromLayer(init);
    return o.float32 ? trainAs<float>(layer, initial, o, next, nullptr, title, params)
                     : trainAs<double>(layer, initial, o, next, nullptr, title, params);
}

} // namespace

int runTrain(const QStringList &arguments)
{
    QCommandLineParser parser;
    parser.setApplicationDescription(QStringLiteral(
        "Train one multi-head self-attention layer (PyTorch's parameter layout, analytic "
        "gradients). Either on your case: --in case.npz with in_proj_weight (3E x E), "
        "in_proj_bias (3E), out_proj_weight (E x E), out_proj_bias (E), num_heads, inputs and "
        "targets (B x n x E) and optionally a bool attn_mask (n x n); --out r.npz receives "
        "'loss' (S+1 values: before each step, then after the last) and the final parameters. "
        "Or on a built-in task: --task recall|copy|average. Progress (loss, mean max weight, "
        "mean softmax-Jacobian norm, gradient norms reaching W_Q and W_K) is printed as a table, "
        "CSV or JSON. Bad input exits with status 2."));
    const QCommandLineOption inOption(QStringLiteral("in"),
                                      QStringLiteral("Training case .npz (instead of --task)."),
                                      QStringLiteral("file"));
    const QCommandLineOption taskOption(
        QStringLiteral("task"),
        QStringLiteral("Built-in task: recall (associative recall), copy (the token --offset "
                       "positions back, causal) or average (mean of the tokens)."),
        QStringLiteral("recall|copy|average"));
    const QCommandLineOption outOption(
        QStringLiteral("out"),
        QStringLiteral("Write loss and final parameters to this .npz (required with --in)."),
        QStringLiteral("file"));
    const QCommandLineOption stepsOption(QStringLiteral("steps"),
                                         QStringLiteral("Optimizer steps S (0-1000000)."),
                                         QStringLiteral("S"), QStringLiteral("100"));
    const QCommandLineOption lrOption(QStringLiteral("lr"), QStringLiteral("Learning rate."),
                                      QStringLiteral("LR"), QStringLiteral("0.01"));
    const QCommandLineOption optimizerOption(
        QStringLiteral("optimizer"),
        QStringLiteral("sgd (torch.optim.SGD) or adam (torch.optim.Adam, betas 0.9, 0.999, "
                       "eps 1e-8)."),
        QStringLiteral("sgd|adam"), QStringLiteral("adam"));
    const QCommandLineOption momentumOption(QStringLiteral("momentum"),
                                            QStringLiteral("SGD momentum in [0, 1)."),
                                            QStringLiteral("mu"), QStringLiteral("0"));
    const QCommandLineOption alphaOption(
        QStringLiteral("scale-exponent"),
        QStringLiteral("alpha in the scale d_k^-alpha / T: 0.5 = 1/sqrt(d_k), 0 = unscaled, "
                       "1 = 1/d_k."),
        QStringLiteral("A"), QStringLiteral("0.5"));
    const QCommandLineOption temperatureOption(QStringLiteral("temperature"),
                                               QStringLiteral("Softmax temperature T > 0."),
                                               QStringLiteral("T"), QStringLiteral("1"));
    const QCommandLineOption lossOption(
        QStringLiteral("loss"),
        QStringLiteral("mse (mean over all elements) or cross-entropy (rows of the output as "
                       "logits, rows of the targets as probabilities)."),
        QStringLiteral("mse|cross-entropy"), QStringLiteral("mse"));
    const QCommandLineOption conventionOption(
        QStringLiteral("mask-convention"),
        QStringLiteral("Meaning of True in a bool attn_mask: 'masked' (nn.MultiheadAttention) "
                       "or 'allowed' (F.scaled_dot_product_attention)."),
        QStringLiteral("masked|allowed"), QStringLiteral("masked"));
    const QCommandLineOption dtypeOption(
        QStringLiteral("dtype"), QStringLiteral("Compute type: float64 or float32."),
        QStringLiteral("float32|float64"), QStringLiteral("float64"));
    const QCommandLineOption formatOption(
        QStringLiteral("format"), QStringLiteral("Progress output: table, csv or json."),
        QStringLiteral("table|csv|json"), QStringLiteral("table"));
    const QCommandLineOption logEveryOption(
        QStringLiteral("log-every"),
        QStringLiteral("Print every k-th step (and the last); 0 = about 10 rows."),
        QStringLiteral("k"), QStringLiteral("0"));
    const QCommandLineOption nOption(QStringLiteral("n"),
                                     QStringLiteral("Task: pairs (recall) or tokens (copy, "
                                                    "average)."),
                                     QStringLiteral("n"), QStringLiteral("8"));
    const QCommandLineOption dModelOption(QStringLiteral("d-model"),
                                          QStringLiteral("Task: model width d_model (even for "
                                                         "recall and copy)."),
                                          QStringLiteral("E"), QStringLiteral("16"));
    const QCommandLineOption headsOption(QStringLiteral("heads"),
                                         QStringLiteral("Task: heads h (must divide d_model)."),
                                         QStringLiteral("h"), QStringLiteral("1"));
    const QCommandLineOption batchOption(QStringLiteral("batch-size"),
                                         QStringLiteral("Task: sequences per batch B."),
                                         QStringLiteral("B"), QStringLiteral("16"));
    const QCommandLineOption noiseOption(
        QStringLiteral("noise"),
        QStringLiteral("Task: std of the noise (recall: on the query's key; else on the "
                       "tokens)."),
        QStringLiteral("sigma"), QStringLiteral("0.1"));
    const QCommandLineOption offsetOption(QStringLiteral("offset"),
                                          QStringLiteral("Task copy: copy the token k positions "
                                                         "back."),
                                          QStringLiteral("k"), QStringLiteral("1"));
    const QCommandLineOption classesOption(
        QStringLiteral("classes"), QStringLiteral("Task recall: value classes V (0 = d_model/2)."),
        QStringLiteral("V"), QStringLiteral("0"));
    const QCommandLineOption noPositionsOption(
        QStringLiteral("no-positions"),
        QStringLiteral("Task copy: leave out the sinusoidal positions (the task is then "
                       "unlearnable)."));
    const QCommandLineOption seedOpt(
        QStringLiteral("seed"),
        QStringLiteral("Task: the layer is initialised (xavier, as PyTorch) from "
                       "default_rng(seed), the batches are drawn from default_rng(seed + 1)."),
        QStringLiteral("seed"), QStringLiteral("0"));
    addOptionsWithDefaults(
        parser, {inOption,         taskOption,        outOption,    stepsOption,       lrOption,
                 optimizerOption,  momentumOption,    alphaOption,  temperatureOption, lossOption,
                 conventionOption, dtypeOption,       formatOption, logEveryOption,    nOption,
                 dModelOption,     headsOption,       batchOption,  noiseOption,       offsetOption,
                 classesOption,    noPositionsOption, seedOpt});
    if (const std::optional<int> done = parseCommandLine(parser, kCommand, arguments))
        return *done;
    const bool fromCase = parser.isSet(inOption);
    if (fromCase == parser.isSet(taskOption))
        return usageError(kCommand,
                          QStringLiteral("give either --in <case.npz> or --task "
                                         "recall|copy|average (exactly one)"));
    for (const QCommandLineOption *o :
         {&nOption, &dModelOption, &headsOption, &batchOption, &noiseOption, &offsetOption,
          &classesOption, &noPositionsOption, &seedOpt})
        if (fromCase && parser.isSet(*o))
            return usageError(kCommand,
                              QStringLiteral("--%1 is a task option; with --in the "
                                             "case file decides it")
                                  .arg(o->names().front()));
    if (!fromCase && parser.isSet(conventionOption))
        return usageError(kCommand, QStringLiteral("--mask-convention applies to --in only"));

    TrainRequest req;
    req.fromCase = fromCase;
    if (const auto done = parseRunOptions(parser, req))
        return *done;
    try {
        return fromCase ? trainOnCase(req) : trainOnTask(parser, req);
    } catch (const NpyError &e) {
        return inputError(kCommand, QString::fromUtf8(e.what()));
    } catch (const InvalidArgument &e) {
        return inputError(kCommand, QString::fromUtf8(e.what()));
    } catch (const NonFiniteInput &e) {
        return inputError(kCommand, QString::fromUtf8(e.what()));
    }
}

} // namespace attn::cli
