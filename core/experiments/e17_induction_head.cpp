// E17 — an induction head forms (Olsson et al. 2022, "In-context Learning and Induction Heads",
// §2–§3; the model of Elhage et al. 2021, "A Mathematical Framework for Transformer Circuits").
//
// A two-layer attention-only transformer (core/training/attentiononly.h) is trained with Adam on
// random tokens repeated twice (core/training/induction.h: the first half's length N varies per
// batch, so that only the tokens, not the positions, say where the repeat is), next-token
// cross-entropy on the repeated half. Every `eval_every` steps the model is measured on
// held-out sequences of N = `repeat`: the loss and accuracy on the repeated half, the best
// last-layer head's prefix-matching score (the mean weight of the second copy's query i on key
// i − N + 1, the token after its first occurrence) and the best first-layer head's
// previous-token score. The phase change: loss and induction score stay flat, then within a
// few hundred steps the previous-token head and the induction head appear together and the
// loss on the repeated half falls towards 0.

#include "core/experiments/experiments_p.h"

#include "core/training/induction.h"

#include <cmath>
#include <cstdio>
#include <limits>

namespace attn::experiments {

namespace {

using namespace attn::training;

const std::vector<std::string> kColumns = {"step",
                                           "loss",
                                           "train_loss",
                                           "accuracy",
                                           "induction_score",
                                           "induction_head",
                                           "previous_token_score",
                                           "previous_token_head"};

/// `v` with three significant digits, for the notes.
std::string brief(double v)
{
    char text[32];
    std::snprintf(text, sizeof text, "%.3g", v);
    return text;
}

/// The first row of `values` whose entry reaches `threshold`, as a step; −1 when none does.
double firstStepReaching(const std::vector<double> &values, const std::vector<double> &steps,
                         double threshold)
{
    for (std::size_t i = 0; i < values.size(); ++i)
        if (values[i] >= threshold)
            return steps[i];
    return -1;
}

ExperimentResult run(const ParamValues &pv, const RunContext &context)
{
    InductionRunConfig rc;
    rc.seed = pv.seed();
    rc.vocab = pv.integer("vocab");
    rc.dModel = pv.integer("d_model");
    rc.heads = pv.integer("heads");
    rc.repeat = pv.integer("repeat");
    rc.minRepeat = pv.integer("min_repeat");
    rc.batch = pv.integer("batch");
    rc.heldOut = pv.integer("held_out");
    rc.learningRate = pv.real("lr");
    rc.initStd = pv.real("init_std");
    rc.float32 = pv.text("dtype") == "float32";
    const Index steps = pv.integer("steps");
    const Index every = pv.integer("eval_every");
    if (rc.dModel % rc.heads != 0)
        throw InvalidArgument("E17: heads = " + std::to_string(rc.heads)
                              + " must divide d_model = " + std::to_string(rc.dModel));
    if (rc.minRepeat > rc.repeat)
        throw InvalidArgument("E17: min_repeat = " + std::to_string(rc.minRepeat)
                              + " must be <= repeat = " + std::to_string(rc.repeat));

    InductionRun runner(rc);
    Table table(kColumns);
    ExperimentResult result;
    const Index rows = steps / every + 1 + (steps % every != 0 ? 1 : 0);
    const Index L = rc.layers, h = rc.heads;
    // Per row: every head's prefix-matching and previous-token score, layer by layer.
    MatrixD inductionScores(rows, L * h), previousScores(rows, L * h);
    std::vector<double> stepColumn, inductionColumn, lossColumn;
    double trainSum = 0;
    Index trainCount = 0;
    Index row = 0;
    InductionEvaluation last;
    const auto record = [&](Index s, InductionEvaluation e, double trainLoss) {
        table.addRow({std::int64_t(s), e.loss, trainLoss, e.accuracy, e.inductionScore,
                      std::int64_t(e.inductionHead), e.previousTokenScore,
                      std::int64_t(e.previousTokenHead)});
        for (Index l = 0; l < L; ++l)
            for (Index head = 0; head < h; ++head) {
                inductionScores(row, l * h + head) = e.prefixMatching(l, head);
                previousScores(row, l * h + head) = e.previousToken(l, head);
            }
        stepColumn.push_back(double(s));
        inductionColumn.push_back(e.inductionScore);
        lossColumn.push_back(e.loss);
        ++row;
        last = std::move(e);
    };
    // Row 0: the untrained model, with the loss of the first batch (taken by the first step).
    InductionEvaluation untrained = runner.evaluate();
    for (Index s = 0; s < steps; ++s) {
        const double loss = runner.step();
        if (s == 0)
            record(0, std::move(untrained), loss);
        trainSum += loss;
        ++trainCount;
        if ((s + 1) % every == 0 || s + 1 == steps) {
            record(Index(runner.steps()), runner.evaluate(), trainSum / double(trainCount));
            trainSum = 0;
            trainCount = 0;
        }
        if (s % 8 == 0) {
            context.checkCancel();
            context.report(double(s + 1) / double(steps));
        }
    }

    const double lossStart = lossColumn.front(), lossEnd = lossColumn.back();
    const double phase = firstStepReaching(inductionColumn, stepColumn, 0.5);
    result.scalars["induction_score_initial"] = inductionColumn.front();
    result.scalars["induction_score_final"] = inductionColumn.back();
    result.scalars["loss_initial"] = lossStart;
    result.scalars["loss_final"] = lossEnd;
    result.scalars["loss_ratio"] = lossEnd / lossStart;
    result.scalars["phase_change_step"] = phase;
    result.scalars["parameters"] = double(runner.parameters().count());

    std::string setup = "two-layer attention-only transformer (d_model ";
    setup += std::to_string(rc.dModel) + ", " + std::to_string(h) + " heads a layer, vocab ";
    setup += std::to_string(rc.vocab) + ", " + std::to_string(runner.parameters().count());
    setup += std::string(" parameters, ") + (rc.float32 ? "float32" : "float64") + "), Adam lr ";
    setup += Table::formatNumber(rc.learningRate) + ", " + std::to_string(rc.batch);
    setup += " sequences a step of N tokens repeated twice, N in [" + std::to_string(rc.minRepeat);
    setup += ", " + std::to_string(rc.repeat) + "] per batch";
    table.notes.push_back(setup);
    table.notes.push_back(
        "loss, accuracy and scores on " + std::to_string(rc.heldOut)
        + " held-out sequences of N = " + std::to_string(rc.repeat)
        + " tokens repeated twice; loss and accuracy over the repeated half's queries (chance "
          "loss ln V = "
        + brief(std::log(double(rc.vocab))) + "); train_loss = mean over the "
        + "steps since the previous row");
    table.notes.push_back(
        "induction_score: the best layer-1 head's mean weight from second-copy query i on key "
        "i - N + 1 (prefix matching); previous_token_score: the best layer-0 head's "
        "sum_i A[i, i-1] / n");
    if (phase >= 0)
        table.notes.push_back(
            "the induction score first reaches 0.5 at step " + std::to_string(std::int64_t(phase))
            + " (" + brief(inductionColumn.front()) + " -> " + brief(inductionColumn.back())
            + "); held-out loss " + brief(lossStart) + " -> " + brief(lossEnd) + " nats (x"
            + brief(lossEnd / lossStart) + ")");
    else
        table.notes.push_back("the induction score never reaches 0.5 within "
                              + std::to_string(steps)
                              + " steps: no induction head formed (try more steps)");

    result.table = std::move(table);
    result.matrices.push_back(
        {"induction_scores",
         "E17 prefix-matching score of every head (rows: table rows, columns: layer-major heads)",
         inductionScores});
    result.matrices.push_back(
        {"previous_token_scores",
         "E17 previous-token score of every head (rows: table rows, columns: layer-major heads)",
         previousScores});
    result.matrices.push_back({"previous_token_head_weights",
                               "E17 layer 0, head " + std::to_string(last.previousTokenHead)
                                   + " (best previous-token) on held-out sequence 0",
                               last.firstSequenceWeights[std::size_t(last.previousTokenHead)]});
    result.matrices.push_back(
        {"induction_head_weights",
         "E17 layer " + std::to_string(L - 1) + ", head " + std::to_string(last.inductionHead)
             + " (best induction) on held-out sequence 0",
         last.firstSequenceWeights[std::size_t((L - 1) * h + last.inductionHead)]});
    return result;
}

} // namespace

Entry inductionHeadEntry()
{
    ExperimentInfo info;
    info.id = "E17";
    info.title = "An induction head forms";
    info.paperSection = "Olsson et al. 2022, \u00a72\u2013\u00a73; Elhage et al. 2021";
    info.note = "A two-layer attention-only transformer learns to continue random tokens "
                "repeated twice. For a while the loss on the repeated half stays near ln V; then "
                "a layer-0 head starts attending to the previous token and a layer-1 head to the "
                "token after the current token's first occurrence (prefix matching), and the "
                "loss falls: the phase change of Olsson et al. Compare the two scores and the "
                "loss against steps, and the two heads' maps.";
    info.params = {
        seedParam(0,
                  "initial weights from default_rng(seed), training batches from seed + 1, "
                  "held-out sequences from seed + 2"),
        intParam("steps", 1200, 1, 1000000, "Adam steps"),
        intParam("eval_every", 50, 1, 1000000, "steps between rows (held-out measurements)"),
        intParam("vocab", 64, 2, 65536, "vocabulary size V"),
        intParam("d_model", 64, 1, 1024, "model width d_model"),
        intParam("heads", 2, 1, 64, "heads per layer (divide d_model)"),
        intParam("repeat", 16, 2, 1024, "N of the held-out sequences; longest training half"),
        intParam("min_repeat", 8, 2, 1024, "shortest training half (= repeat: one fixed N)"),
        intParam("batch", 32, 1, 4096, "training sequences per step"),
        intParam("held_out", 64, 1, 4096, "held-out sequences the scores average over"),
        doubleParam("lr", 3e-3, 1e-6, 1, "Adam learning rate"),
        doubleParam("init_std", 0.1, 0, 10, "std of the normal initial weights"),
        choiceParam("dtype", "float32", {"float32", "float64"}, "training precision"),
    };
    info.columns = kColumns;
    return {info, &run};
}

} // namespace attn::experiments
