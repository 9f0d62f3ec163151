// E13 — does the scale matter for learning? (Vaswani et al. 2017, §3.2.1 and footnote 4: the
// authors "suspect" that unscaled dot products push the softmax into regions of tiny gradients.)
//
// One head (d_model = d_k) is trained on the associative-recall task (core/training/tasks.h) for
// every d_k and every scale choice — 1/√d_k (α = 0.5), none (α = 0) and 1/d_k (α = 1) — from the
// same initial weights and on the same batches, for two initialisations:
//   xavier        torch.nn.MultiheadAttention's default (MultiheadAttention::initXavier)
//   unit_qk       the same, then W_Q and W_K rescaled so that q and k have unit-variance
//                 components on the first training batch (the footnote's assumption)
// Reported per run: the loss on a fixed evaluation batch before and after training (also
// relative to the best constant prediction, (1 − 1/V)/d_model for V value classes), recall
// accuracy and the weight the query puts on the right pair after training, the steps until the
// 10-step running mean of the training loss first falls to threshold × the constant-prediction
// loss, and over training the mean largest weight, the mean ‖diag(p) − ppᵀ‖_F and the mean
// gradient norms reaching W_Q and W_K.

#include "core/experiments/experiments_p.h"

#include "core/training/initialization.h"
#include "core/training/tasks.h"
#include "core/training/trainer.h"

#include <cmath>
#include <numeric>

namespace attn::experiments {

namespace {

using namespace attn::training;

const std::vector<std::string> kColumns = {"init",
                                           "d_k",
                                           "scale",
                                           "scale_value",
                                           "loss_initial",
                                           "loss_final",
                                           "relative_loss",
                                           "accuracy",
                                           "weight_on_match",
                                           "steps_to_threshold",
                                           "mean_max_weight",
                                           "mean_jacobian_norm",
                                           "grad_norm_w_q",
                                           "grad_norm_w_k"};

struct ScaleChoice
{
    const char *name;
    double alpha;
};
const ScaleChoice kScales[] = {{"1/sqrt(d_k)", 0.5}, {"none", 0.0}, {"1/d_k", 1.0}};

struct Evaluation
{
    double loss = 0, accuracy = 0, weightOnMatch = 0;
};

template<typename T> Batch<T> castBatch(const Batch<double> &b)
{
    return {b.batch, b.length, b.inputs.cast<T>(), b.targets.cast<T>(), b.rowWeights.cast<T>(),
            b.mask};
}

template<typename T>
Evaluation evaluate(const LayerConfig &layer, const Parameters<T> &p, const Batch<T> &batch,
                    const std::vector<Index> &answers, Index pairs, Index classes)
{
    const ForwardCache<T> c = forward(layer, p, batch);
    Evaluation e;
    e.loss = lossValue(Loss::MeanSquaredError, c.output, batch);
    const Index E = layer.dModel, half = E / 2, L = batch.length;
    for (Index b = 0; b < batch.batch; ++b) {
        const Index row = b * L + pairs; // the query token
        Index predicted = 0, wanted = 0, r0 = 0;
        c.output.block(row, half, 1, classes).maxCoeff(&r0, &predicted);
        batch.targets.block(row, half, 1, classes).maxCoeff(&r0, &wanted);
        e.accuracy += predicted == wanted ? 1.0 : 0.0;
        for (Index head = 0; head < layer.heads; ++head)
            e.weightOnMatch += (double)c.weights[std::size_t(b * layer.heads + head)](
                                   pairs, answers[std::size_t(b)])
                / double(layer.heads);
    }
    e.accuracy /= double(batch.batch);
    e.weightOnMatch /= double(batch.batch);
    return e;
}

ExperimentResult run(const ParamValues &pv, const RunContext &context)
{
    const std::vector<Index> dks = pv.indexList("d_k");
    const Index steps = pv.integer("steps");
    const Index pairs = pv.integer("pairs");
    const Index batchSize = pv.integer("batch");
    const Index classes = pv.integer("classes");
    const double noise = pv.real("noise");
    const double lr = pv.real("lr");
    const bool perWidth = pv.text("lr_scaling") == "per_width";
    const bool float32 = pv.text("dtype") == "float32";
    const double threshold = pv.real("threshold");
    const std::string optimizer = pv.text("optimizer");
    const std::uint64_t seed = pv.seed();
    for (const Index dk : dks)
        if (dk < 2 * classes)
            throw InvalidArgument("E13: d_k = " + std::to_string(dk)
                                  + " leaves d_k/2 = " + std::to_string(dk / 2) + " features for "
                                  + std::to_string(classes)
                                  + " value classes: use d_k >= 2 x classes");

    OptimizerConfig oc;
    oc.kind = optimizerKindFromName(optimizer);

    Table table(kColumns);
    ExperimentResult result;
    // One row per run of each curve: init × d_k × scale, in table order.
    const Index runs = Index(dks.size()) * 3 * 2;
    MatrixD relLoss(runs, steps), gradQk(runs, steps), jacobian(runs, steps);
    double work = 0, done = 0;
    for (const Index dk : dks)
        work += 6.0 * double(dk) * double(dk);
    Index runIndex = 0;
    Index divergedRuns = 0; // final loss above twice the initial one, or not finite
    for (const char *init : {"xavier", "unit_qk"}) {
        for (const Index dk : dks) {
            TaskConfig tc;
            tc.kind = TaskKind::Recall;
            tc.n = pairs;
            tc.dModel = dk;
            tc.batch = batchSize;
            tc.noise = noise;
            tc.classes = classes;
            tc.seed = seed + 1;
            TaskConfig evalConfig = tc;
            evalConfig.batch = 128;
            evalConfig.seed = seed + 2;
            TaskGenerator evalGenerator(evalConfig);
            const Batch<double> evalBatch = evalGenerator.next();
            const std::vector<Index> evalAnswers = evalGenerator.answers();
            const double constantLoss = (1.0 - 1.0 / double(classes)) / double(dk);
            // Adam moves every parameter by about lr per step, so a row of d_k inputs moves by
            // ~ √d_k·lr: per_width keeps that the same for every width (lr is the rate at
            // d_k = 32).
            oc.learningRate = perWidth ? lr * std::sqrt(32.0 / double(dk)) : lr;

            // unit_qk: q and k of unit variance on the first training batch.
            TaskGenerator first(tc);
            const Parameters<double> initial = initialParameters(
                initializationFromName(init), tc.layerConfig(1), seed, first.next());
            const auto trainAll = [&](auto zero) {
                using T = decltype(zero);
                const Batch<T> evalT = castBatch<T>(evalBatch);
                const Parameters<T> initialT = initial.cast<T>();
                for (const ScaleChoice &sc : kScales) {
                    context.checkCancel();
                    const LayerConfig lc = tc.layerConfig(1, sc.alpha);
                    Trainer<T> trainer(lc, initialT, oc, Loss::MeanSquaredError);
                    TaskGenerator gen(tc); // the same batches for every run
                    const Evaluation before
                        = evaluate(lc, initialT, evalT, evalAnswers, pairs, classes);
                    double sumMax = 0, sumJ = 0, sumGq = 0, sumGk = 0, window = 0;
                    Index reached = -1;
                    for (Index s = 0; s < steps; ++s) {
                        const StepReport r = trainer.step(castBatch<T>(gen.next()));
                        relLoss(runIndex, s) = r.loss / constantLoss;
                        gradQk(runIndex, s) = std::hypot(r.gradNormQuery, r.gradNormKey);
                        jacobian(runIndex, s) = r.meanJacobianNorm;
                        sumMax += r.meanMaxWeight;
                        sumJ += r.meanJacobianNorm;
                        sumGq += r.gradNormQuery;
                        sumGk += r.gradNormKey;
                        window += relLoss(runIndex, s);
                        if (s >= 10)
                            window -= relLoss(runIndex, s - 10);
                        if (reached < 0 && s >= 9 && window / 10.0 <= threshold)
                            reached = s + 1;
                        if (s % 16 == 0)
                            context.checkCancel();
                    }
                    const Evaluation after
                        = evaluate(lc, trainer.parameters(), evalT, evalAnswers, pairs, classes);
                    if (!std::isfinite(after.loss) || after.loss > 2.0 * before.loss)
                        ++divergedRuns;
                    const double denom = double(std::max<Index>(steps, 1));
                    table.addRow({std::string(init), std::int64_t(dk), std::string(sc.name),
                                  lc.scale(), before.loss, after.loss, after.loss / constantLoss,
                                  after.accuracy, after.weightOnMatch,
                                  reached >= 0 ? Table::Cell(std::int64_t(reached))
                                               : Table::Cell(std::string("not reached")),
                                  sumMax / denom, sumJ / denom, sumGq / denom, sumGk / denom});
                    ++runIndex;
                    done += double(dk) * double(dk);
                    context.report(done / work);
                }
            };
            if (float32)
                trainAll(0.0f);
            else
                trainAll(0.0);
        }
    }
    table.notes.push_back(
        "one head (d_model = d_k), associative recall with " + std::to_string(pairs) + " pairs and "
        + std::to_string(classes) + " value classes, " + std::to_string(steps) + " " + optimizer
        + " steps (lr " + Table::formatNumber(lr) + (perWidth ? " x sqrt(32/d_k)" : "") + ", batch "
        + std::to_string(batchSize) + ", " + (float32 ? "float32" : "float64")
        + "); every run of a d_k starts from the same weights and "
          "sees the same batches");
    table.notes.push_back("loss = MSE on a fixed evaluation batch of 128 sequences; relative_loss "
                          "= loss / (1 - 1/V)/d_k, the best constant prediction's loss; chance "
                          "accuracy = 1/"
                          + std::to_string(classes));
    if (divergedRuns > 0) {
        const std::string defaultLr = Table::formatNumber(0.005);
        table.notes.push_back(
            std::to_string(divergedRuns) + " of " + std::to_string(runIndex)
            + " runs diverged (final loss above twice the initial one, or not finite): lr "
            + Table::formatNumber(lr) + " is too large for them; try a smaller lr (the default is "
            + defaultLr + ")");
    }
    table.notes.push_back("steps_to_threshold: first step where the 10-step running mean of the "
                          "training loss is <= "
                          + Table::formatNumber(threshold) + " x the constant prediction's loss");
    // Headline: per scale, how many runs reached the threshold.
    for (const ScaleChoice &sc : kScales) {
        int reachedCount = 0, total = 0;
        double meanRel = 0;
        for (std::size_t i = 0; i < table.rowCount(); ++i) {
            if (std::get<std::string>(table.cell(i, 2)) != sc.name)
                continue;
            ++total;
            meanRel += table.number(i, "relative_loss");
            reachedCount += std::holds_alternative<std::int64_t>(table.cell(i, 9)) ? 1 : 0;
        }
        const std::string key = std::string(sc.name) == "none" ? "unscaled"
            : std::string(sc.name) == "1/d_k"                  ? "over_d_k"
                                                               : "over_sqrt_d_k";
        result.scalars["runs_reaching_threshold_" + key] = reachedCount;
        result.scalars["mean_relative_loss_" + key] = total ? meanRel / total : 0.0;
    }
    result.table = std::move(table);
    result.matrices.push_back({"relative_loss",
                               "E13 training loss / constant-prediction loss "
                               "(rows: runs in table order, columns: steps)",
                               relLoss});
    result.matrices.push_back(
        {"grad_norm_qk", "E13 \u2016\u2202L/\u2202(W_Q, W_K)\u2016 per step", gradQk});
    result.matrices.push_back({"jacobian_norm", "E13 mean \u2016J\u2016_F per step", jacobian});
    return result;
}

} // namespace

Entry scaleLearningEntry()
{
    ExperimentInfo info;
    info.id = "E13";
    info.title = "Does the scale matter for learning?";
    info.paperSection = "Vaswani et al. 2017, \u00a73.2.1 and footnote 4";
    info.note = "E2 measures the scale at initialisation only. Here one head (d_model = d_k) is "
                "trained on associative recall for each d_k with the scale 1/\u221ad_k, none and "
                "1/d_k, from the same initial weights and on the same batches, once with "
                "PyTorch's xavier initialisation and once with W_Q, W_K rescaled to "
                "unit-variance q and k (the footnote's assumption). Compare the loss reached, "
                "the steps to the threshold and the gradient reaching W_Q and W_K.";
    info.params = {
        seedParam(0),
        intListParam("d_k", "8,32,128,512", 2, 1024, "head widths d_k (= d_model, one head)"),
        intParam("steps", 300, 1, 100000, "optimizer steps per run"),
        intParam("pairs", 6, 1, 256, "key/value pairs per sequence"),
        intParam("batch", 8, 1, 4096, "sequences per training batch"),
        intParam("classes", 4, 2, 512, "value classes V (d_k must be >= 2V)"),
        doubleParam("noise", 0.1, 0, 10, "std of the noise on the query's key"),
        choiceParam("optimizer", "adam", {"adam", "sgd"}, "optimizer (PyTorch's formulas)"),
        doubleParam("lr", 0.005, 1e-6, 100,
                    "learning rate (at d_k = 32 with lr_scaling per_width)"),
        choiceParam("lr_scaling", "per_width", {"per_width", "constant"},
                    "per_width: lr x sqrt(32/d_k) for each d_k; constant: lr for every d_k"),
        choiceParam("dtype", "float32", {"float32", "float64"}, "training precision"),
        doubleParam("threshold", 0.2, 0, 10,
                    "relative loss (loss / constant-prediction loss) to reach"),
    };
    info.columns = kColumns;
    return {info, &run};
}

} // namespace attn::experiments
