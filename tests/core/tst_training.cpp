// The training engine (core/training/) against PyTorch 1.13 autograd and optimizers, against
// central finite differences, and the synthetic tasks.
//
// Fixtures: tests/reference/fixtures/training/<case>.npz from
// tests/reference/make_training_fixtures.py (explicit multi-head forward with scale
// d_k^(−α)/τ, checked there against torch.nn.MultiheadAttention; loss.backward();
// torch.optim.SGD / Adam). 1e-12 in float64, 1e-5 in float32.

#include "testutil.h"

#include "core/base/blas.h"
#include "core/io/npy.h"
#include "core/random/random.h"
#include "core/training/layer.h"
#include "core/training/optimizer.h"
#include "core/training/tasks.h"
#include "core/training/trainer.h"

#include <QObject>
#include <QTest>

#include <algorithm>
#include <cmath>
#include <limits>
#include <map>
#include <string>
#include <vector>

using namespace attn;
using namespace attn::training;

namespace {

using Case = std::map<std::string, NpyArray>;

Case loadCase(const QString &name)
{
    Case c;
    const QString path = QStringLiteral(ATTN_FIXTURE_DIR "/training/%1.npz").arg(name);
    for (auto &[member, array] : readNpz(path.toStdString()))
        c.emplace(member, std::move(array));
    return c;
}

/// A (B × n × E) array as (B·n) × E rows (C order is the same memory layout).
template<typename T> Matrix<T> stacked(const NpyArray &a)
{
    const Index cols = Index(a.shape.back());
    const Index rows = Index(a.values.size()) / cols;
    Matrix<T> m(rows, cols);
    for (Index i = 0; i < m.size(); ++i)
        m.data()[i] = T(a.values[std::size_t(i)]);
    return m;
}

template<typename T> Vector<T> flat(const NpyArray &a)
{
    Vector<T> v(Index(a.values.size()));
    for (Index i = 0; i < v.size(); ++i)
        v(i) = T(a.values[std::size_t(i)]);
    return v;
}

double scalar(const Case &c, const char *name)
{
    return c.at(name).values.at(0);
}

template<typename T> Parameters<T> parametersOf(const Case &c, const std::string &prefix = {})
{
    return {stacked<T>(c.at(prefix + "in_proj_weight")), flat<T>(c.at(prefix + "in_proj_bias")),
            stacked<T>(c.at(prefix + "out_proj_weight")), flat<T>(c.at(prefix + "out_proj_bias"))};
}

LayerConfig configOf(const Case &c)
{
    LayerConfig config;
    config.dModel = Index(c.at("out_proj_weight").shape[0]);
    config.heads = Index(scalar(c, "num_heads"));
    config.scaleExponent = scalar(c, "scale_exponent");
    config.temperature = scalar(c, "temperature");
    config.causal = scalar(c, "causal") != 0;
    config.positionWidth = Index(scalar(c, "position_width"));
    return config;
}

template<typename T> Batch<T> batchOf(const Case &c)
{
    Batch<T> b;
    const NpyArray &x = c.at("inputs");
    b.batch = Index(x.shape[0]);
    b.length = Index(x.shape[1]);
    b.inputs = stacked<T>(x);
    b.targets = stacked<T>(c.at("targets"));
    if (c.count("row_weights"))
        b.rowWeights = flat<T>(c.at("row_weights"));
    if (c.count("attn_mask"))
        b.mask = c.at("attn_mask").toMatrix<double>("attn_mask").cast<std::uint8_t>();
    return b;
}

Loss lossOf(const Case &c)
{
    return scalar(c, "cross_entropy") != 0 ? Loss::CrossEntropy : Loss::MeanSquaredError;
}

template<typename DA, typename DB>
void checkClose(const Eigen::MatrixBase<DA> &actual, const Eigen::MatrixBase<DB> &expected,
                double tol, const char *what)
{
    const test::CompareReport r = test::compareClose(actual, expected, tol, tol);
    QVERIFY2(r.ok, qPrintable(QStringLiteral("%1: %2").arg(QLatin1String(what), r.message())));
}

template<typename T>
void checkParameters(const Parameters<T> &actual, const Parameters<T> &expected, double tol)
{
    checkClose(actual.inProjWeight, expected.inProjWeight, tol, "in_proj_weight");
    checkClose(actual.inProjBias, expected.inProjBias, tol, "in_proj_bias");
    checkClose(actual.outProjWeight, expected.outProjWeight, tol, "out_proj_weight");
    checkClose(actual.outProjBias, expected.outProjBias, tol, "out_proj_bias");
}

template<typename T> void checkGradientCase(const Case &c, double tol)
{
    const LayerConfig config = configOf(c);
    const Parameters<T> params = parametersOf<T>(c);
    const Batch<T> batch = batchOf<T>(c);
    const ForwardCache<T> cache = forward(config, params, batch);
    checkClose(cache.output, stacked<T>(c.at("expected_output")), tol, "output");
    const double loss = lossValue(lossOf(c), cache.output, batch);
    const double expectedLoss = scalar(c, "expected_loss");
    QVERIFY2(std::abs(loss - expectedLoss) <= tol * (1 + std::abs(expectedLoss)),
             qPrintable(QStringLiteral("loss %1 vs PyTorch %2")
                            .arg(loss, 0, 'g', 17)
                            .arg(expectedLoss, 0, 'g', 17)));
    const Parameters<T> g
        = backward(config, params, cache, lossGradient(lossOf(c), cache.output, batch));
    checkParameters(g, parametersOf<T>(c, "grad_"), tol);
}

template<typename T> void checkOptimizerCase(const Case &c, double tol)
{
    OptimizerConfig oc;
    oc.kind = scalar(c, "optimizer") == 0 ? OptimizerKind::Sgd : OptimizerKind::Adam;
    oc.learningRate = scalar(c, "lr");
    oc.momentum = scalar(c, "momentum");
    Trainer<T> trainer(configOf(c), parametersOf<T>(c), oc, lossOf(c));
    const Batch<T> batch = batchOf<T>(c);
    const int steps = int(scalar(c, "steps"));
    const std::vector<double> &expected = c.at("expected_losses").values;
    QCOMPARE(int(expected.size()), steps + 1);
    for (int s = 0; s < steps; ++s) {
        const StepReport r = trainer.step(batch);
        QVERIFY(r.finite);
        QCOMPARE(r.step, std::int64_t(s + 1));
        QVERIFY2(std::abs(r.loss - expected[std::size_t(s)])
                     <= tol * (1 + std::abs(expected[std::size_t(s)])),
                 qPrintable(QStringLiteral("step %1: loss %2 vs PyTorch %3")
                                .arg(s)
                                .arg(r.loss, 0, 'g', 17)
                                .arg(expected[std::size_t(s)], 0, 'g', 17)));
    }
    const double last = trainer.evaluate(batch);
    QVERIFY2(std::abs(last - expected.back()) <= tol * (1 + std::abs(expected.back())),
             qPrintable(QStringLiteral("final loss %1 vs PyTorch %2")
                            .arg(last, 0, 'g', 17)
                            .arg(expected.back(), 0, 'g', 17)));
    Parameters<T> expectedFinal = parametersOf<T>(c, "final_");
    if (oc.kind == OptimizerKind::Adam) {
        // The key bias b_K adds q·b_K to every score of a row, which the softmax ignores: its
        // gradient is 0 analytically and rounding noise (~1e-17) in both implementations. Adam
        // divides by √v + ε, so that noise moves b_K by up to lr per step in a direction no
        // loss decides; compare b_K only against Adam's bound |Δθ| ≤ lr per step.
        const Index E = configOf(c).dModel;
        const Vector<T> initial = parametersOf<T>(c).inProjBias.segment(E, E);
        const Vector<T> moved = trainer.parameters().inProjBias.segment(E, E) - initial;
        QVERIFY(moved.cwiseAbs().maxCoeff() <= T(1.0001 * oc.learningRate * steps));
        expectedFinal.inProjBias.segment(E, E) = trainer.parameters().inProjBias.segment(E, E);
    }
    checkParameters(trainer.parameters(), expectedFinal, tol);
}

} // namespace

class TestTraining : public QObject
{
    Q_OBJECT

private slots:
    void gradientsMatchAutograd_data()
    {
        QTest::addColumn<QString>("name");
        for (const char *name :
             {"grad_scaled", "grad_unscaled", "grad_alpha1", "grad_causal", "grad_temperature",
              "grad_positions", "grad_mask_rows", "grad_cross_entropy", "grad_h1_d16",
              "grad_scaled_float32", "grad_unscaled_float32", "grad_causal_float32",
              "grad_long_causal_float32", "grad_long_mask_float32"})
            QTest::newRow(name) << QString::fromLatin1(name);
    }
    void gradientsMatchAutograd()
    {
        QFETCH(QString, name);
        const Case c = loadCase(name);
        if (c.at("inputs").type == NpyType::Float32)
            checkGradientCase<float>(c, 1e-5);
        else
            checkGradientCase<double>(c, 1e-12);
    }

    void optimizerStepsMatchTorch_data()
    {
        QTest::addColumn<QString>("name");
        for (const char *name :
             {"opt_sgd", "opt_sgd_momentum", "opt_adam", "opt_adam_causal_ce", "opt_adam_float32"})
            QTest::newRow(name) << QString::fromLatin1(name);
    }
    void optimizerStepsMatchTorch()
    {
        QFETCH(QString, name);
        const Case c = loadCase(name);
        if (c.at("inputs").type == NpyType::Float32)
            checkOptimizerCase<float>(c, 1e-5);
        else
            checkOptimizerCase<double>(c, 1e-12);
    }

    // Central differences (h = 1e-6) of the loss against every analytic gradient entry of a case
    // with positions, a causal mask, row weights and the cross-entropy loss.
    void gradientsMatchFiniteDifferences_data()
    {
        QTest::addColumn<QString>("name");
        QTest::addColumn<bool>("crossEntropy");
        QTest::newRow("positions causal mse") << QStringLiteral("grad_positions") << false;
        QTest::newRow("mask rows cross-entropy") << QStringLiteral("grad_mask_rows") << true;
        QTest::newRow("alpha1") << QStringLiteral("grad_alpha1") << false;
    }
    void gradientsMatchFiniteDifferences()
    {
        QFETCH(QString, name);
        QFETCH(bool, crossEntropy);
        const Case c = loadCase(name);
        const LayerConfig config = configOf(c);
        const Parameters<double> params = parametersOf<double>(c);
        Batch<double> batch = batchOf<double>(c);
        if (crossEntropy) // rows of softmax(targets) are probability vectors
            for (Index r = 0; r < batch.targets.rows(); ++r) {
                batch.targets.row(r) = batch.targets.row(r).array().exp();
                batch.targets.row(r) /= batch.targets.row(r).sum();
            }
        const Loss loss = crossEntropy ? Loss::CrossEntropy : Loss::MeanSquaredError;
        const auto lossAt = [&](const Parameters<double> &p) {
            return lossValue(loss, forward(config, p, batch).output, batch);
        };
        const ForwardCache<double> cache = forward(config, params, batch);
        const Parameters<double> g
            = backward(config, params, cache, lossGradient(loss, cache.output, batch));
        const double h = 1e-6;
        double worst = 0;
        const auto probe = [&](auto member, const auto &analytic) {
            for (Index i = 0; i < analytic.size(); ++i) {
                Parameters<double> plus = params, minus = params;
                (plus.*member).data()[i] += h;
                (minus.*member).data()[i] -= h;
                const double numeric = (lossAt(plus) - lossAt(minus)) / (2 * h);
                const double a = analytic.data()[i];
                worst = std::max(worst, std::abs(numeric - a) / (1e-6 + std::abs(a)));
                QVERIFY2(std::abs(numeric - a) <= 1e-7 + 1e-5 * std::abs(a),
                         qPrintable(QStringLiteral("entry %1: analytic %2, numeric %3")
                                        .arg(i)
                                        .arg(a, 0, 'g', 12)
                                        .arg(numeric, 0, 'g', 12)));
            }
        };
        probe(&Parameters<double>::inProjWeight, g.inProjWeight);
        probe(&Parameters<double>::inProjBias, g.inProjBias);
        probe(&Parameters<double>::outProjWeight, g.outProjWeight);
        probe(&Parameters<double>::outProjBias, g.outProjBias);
        QVERIFY(g.norm() > 1e-3); // the comparison above was not between zeros
    }

    // SGD with μ = 0 is θ ← θ − lr·g exactly; Adam's first step moves every entry with a
    // non-zero gradient by lr·g/(|g| + ε·…) ≈ lr in the direction of −g.
    void optimizerFormulas()
    {
        Parameters<double> p = Parameters<double>::zeros(2), g = Parameters<double>::zeros(2);
        for (Index i = 0; i < g.inProjWeight.size(); ++i)
            g.inProjWeight.data()[i] = double(i) - 5.5;
        OptimizerConfig sgd;
        sgd.learningRate = 0.25;
        Optimizer<double> o(sgd);
        o.step(p, g);
        for (Index i = 0; i < g.inProjWeight.size(); ++i)
            QCOMPARE(p.inProjWeight.data()[i], -0.25 * g.inProjWeight.data()[i]);
        OptimizerConfig adam;
        adam.kind = OptimizerKind::Adam;
        adam.learningRate = 0.1;
        Parameters<double> q = Parameters<double>::zeros(2);
        Optimizer<double> a(adam);
        a.step(q, g);
        for (Index i = 0; i < g.inProjWeight.size(); ++i) {
            const double gi = g.inProjWeight.data()[i];
            // m̂ = g, v̂ = g²: step = lr·g / (|g| + ε)
            QCOMPARE(q.inProjWeight.data()[i], -0.1 * (0.1 * gi / 0.1) / (std::abs(gi) + 1e-8));
        }
    }

    void badInputIsRefused()
    {
        LayerConfig config;
        config.dModel = 6;
        config.heads = 4;
        QVERIFY_THROWS_EXCEPTION(InvalidArgument, config.validate());
        config.heads = 3;
        config.temperature = 0;
        QVERIFY_THROWS_EXCEPTION(InvalidArgument, config.validate());
        config.temperature = 1;
        Batch<double> b;
        b.batch = 2;
        b.length = 3;
        b.inputs = MatrixD::Zero(6, 6);
        b.targets = MatrixD::Zero(5, 6);
        QVERIFY_THROWS_EXCEPTION(InvalidArgument, forward(config, Parameters<double>::zeros(6), b));
        b.targets = MatrixD::Zero(6, 6);
        QVERIFY_THROWS_EXCEPTION(InvalidArgument, forward(config, Parameters<double>::zeros(5), b));
        b.inputs(1, 1) = std::nan("");
        QVERIFY_THROWS_EXCEPTION(NonFiniteInput, forward(config, Parameters<double>::zeros(6), b));
        OptimizerConfig oc;
        oc.learningRate = -1;
        QVERIFY_THROWS_EXCEPTION(InvalidArgument, Optimizer<double> {oc});
        QVERIFY_THROWS_EXCEPTION(InvalidArgument, optimizerKindFromName("rmsprop"));
        TaskConfig tc;
        tc.kind = TaskKind::Copy;
        tc.n = 4;
        tc.offset = 4;
        QVERIFY_THROWS_EXCEPTION(InvalidArgument, TaskGenerator {tc});
        tc.offset = 1;
        tc.dModel = 7;
        QVERIFY_THROWS_EXCEPTION(InvalidArgument, TaskGenerator {tc});
    }

    // Same seed, same batches; the recall target is the value of the pair whose key the query
    // copies (the nearest key for small noise); every target row is a probability vector.
    void tasksAreSeededAndConsistent_data()
    {
        QTest::addColumn<QString>("task");
        for (const std::string &t : taskNames())
            QTest::newRow(t.c_str()) << QString::fromStdString(t);
    }
    void tasksAreSeededAndConsistent()
    {
        QFETCH(QString, task);
        TaskConfig tc;
        tc.kind = taskKindFromName(task.toStdString());
        tc.n = 6;
        tc.dModel = 12;
        tc.batch = 5;
        tc.noise = 0.05;
        tc.offset = 2;
        tc.seed = 7;
        TaskGenerator a(tc), b(tc);
        const Batch<double> x = a.next(), y = b.next();
        QCOMPARE(x.inputs, y.inputs);
        QCOMPARE(x.targets, y.targets);
        QVERIFY(a.next().inputs != x.inputs);
        QCOMPARE(x.length, tc.length());
        x.validate(tc.dModel);
        for (Index r = 0; r < x.targets.rows(); ++r)
            if (x.rowWeights(r) > 0)
                QVERIFY(std::abs(x.targets.row(r).sum() - 1.0) < 1e-12);
        if (tc.kind == TaskKind::Recall) {
            const Index half = tc.dModel / 2, L = tc.length();
            for (Index s = 0; s < tc.batch; ++s) {
                const auto query = x.inputs.block(s * L + tc.n, 0, 1, half);
                Index best = 0;
                double bestDistance = 1e300;
                for (Index i = 0; i < tc.n; ++i) {
                    const double d = (x.inputs.block(s * L + i, 0, 1, half) - query).norm();
                    if (d < bestDistance) {
                        bestDistance = d;
                        best = i;
                    }
                }
                QCOMPARE(x.targets.block(s * L + tc.n, half, 1, half),
                         x.inputs.block(s * L + best, half, 1, half));
                QCOMPARE(x.rowWeights.segment(s * L, L).sum(), 1.0);
            }
        }
        if (tc.kind == TaskKind::Copy) {
            const Index half = tc.dModel / 2, L = tc.length();
            for (Index t = tc.offset; t < L; ++t) {
                Index row = 0, cls = 0;
                x.inputs.block(t - tc.offset, 0, 1, half).maxCoeff(&row, &cls);
                QCOMPARE(x.targets(t, cls), 1.0);
            }
        }
    }

    // The copy task needs positions: trained the same way, the layer with sinusoidal positions
    // ends far below the one without (which cannot tell the earlier tokens apart).
    void copyNeedsPositions()
    {
        TaskConfig tc;
        tc.kind = TaskKind::Copy;
        tc.n = 8;
        tc.dModel = 16;
        tc.batch = 16;
        tc.noise = 0;
        tc.offset = 1;
        tc.seed = 3;
        OptimizerConfig oc;
        oc.kind = OptimizerKind::Adam;
        oc.learningRate = 0.02;
        const auto finalLoss = [&](bool positions) {
            LayerConfig lc = tc.layerConfig(1);
            if (!positions)
                lc.positionWidth = 0;
            Generator rng(11);
            MultiheadAttention<double> init(tc.dModel, 1);
            init.initXavier(rng);
            Trainer<double> trainer(lc, Parameters<double>::fromLayer(init), oc,
                                    Loss::MeanSquaredError);
            TaskGenerator gen(tc);
            for (int s = 0; s < 400; ++s)
                trainer.step(gen.next());
            TaskGenerator test({tc.kind, tc.n, tc.dModel, 64, 0, 1, 99});
            return trainer.evaluate(test.next());
        };
        const double with = finalLoss(true), without = finalLoss(false);
        qInfo("copy task, MSE after 400 Adam steps: with positions %g, without %g", with, without);
        QVERIFY2(with < 0.5 * without,
                 qPrintable(QStringLiteral("with %1, without %2").arg(with).arg(without)));
    }

    // The float32 softmax rows (AVX2 on CPUs that have it) against the softmax written out in
    // double from the cached projections: n = 19 (two 8-float vectors and a tail of 3), a mask
    // with one query row that sees no key (all-zero weights, flagged) and scattered cells.
    void softmaxRowsWithMaskedCells()
    {
        const Index B = 2, n = 19, E = 16, h = 2, dk = E / h;
        Generator rng(11);
        Parameters<float> params;
        params.inProjWeight = (rng.standardNormal(3 * E, E) * 0.5).cast<float>();
        params.inProjBias = rng.standardNormal(3 * E, 1).col(0).cast<float>();
        params.outProjWeight = rng.standardNormal(E, E).cast<float>();
        params.outProjBias = rng.standardNormal(E, 1).col(0).cast<float>();
        Batch<float> batch;
        batch.batch = B;
        batch.length = n;
        batch.inputs = rng.standardNormal(B * n, E).cast<float>();
        batch.targets = rng.standardNormal(B * n, E).cast<float>();
        batch.mask = MatrixB::Zero(n, n);
        batch.mask.row(3).setOnes();
        for (Index i = 0; i < n; ++i)
            batch.mask(i, (5 * i + 2) % n) = 1;
        LayerConfig config;
        config.dModel = E;
        config.heads = h;
        const ForwardCache<float> cache = forward(config, params, batch);
        const double scale = config.scale();
        for (Index b = 0; b < B; ++b)
            for (Index head = 0; head < h; ++head) {
                const std::size_t k = std::size_t(b * h + head);
                const MatrixF &p = cache.weights[k];
                for (Index i = 0; i < n; ++i) {
                    QCOMPARE(int(cache.fullyMasked[k][std::size_t(i)]), i == 3 ? 1 : 0);
                    std::vector<double> s(std::size_t(n), 0.0);
                    double m = -std::numeric_limits<double>::infinity(), sum = 0;
                    for (Index j = 0; j < n; ++j) {
                        if (batch.mask(i, j))
                            continue;
                        double dot = 0;
                        for (Index e = 0; e < dk; ++e)
                            dot += double(cache.qkv(b * n + i, head * dk + e))
                                * double(cache.qkv(b * n + j, E + head * dk + e));
                        s[std::size_t(j)] = dot * scale;
                        m = std::max(m, s[std::size_t(j)]);
                    }
                    for (Index j = 0; j < n; ++j)
                        if (!batch.mask(i, j))
                            sum += std::exp(s[std::size_t(j)] - m);
                    for (Index j = 0; j < n; ++j) {
                        const double want
                            = batch.mask(i, j) ? 0.0 : std::exp(s[std::size_t(j)] - m) / sum;
                        if (batch.mask(i, j))
                            QCOMPARE(p(i, j), 0.0f);
                        else
                            QVERIFY2(std::abs(double(p(i, j)) - want) <= 1e-6,
                                     qPrintable(QStringLiteral("(%1, %2): %3, expected %4")
                                                    .arg(i)
                                                    .arg(j)
                                                    .arg(double(p(i, j)))
                                                    .arg(want)));
                    }
                }
            }
    }

    void transposedAProduct()
    {
        // The weight gradients' product C = Aᵀ B (core/base/blas.h) against the sum written out, in
        // both precisions, through OpenBLAS (when built with it) and through Eigen; on a block
        // of a wider matrix (a leading dimension larger than the row).
        Generator rng(3);
        const MatrixD wide = rng.standardNormal(70, 40);
        const MatrixD a = wide.block(0, 0, 70, 23), b = rng.standardNormal(70, 31);
        MatrixD expected(23, 31);
        for (Index i = 0; i < 23; ++i)
            for (Index j = 0; j < 31; ++j) {
                double sum = 0;
                for (Index k = 0; k < 70; ++k)
                    sum += a(k, i) * b(k, j);
                expected(i, j) = sum;
            }
        for (const bool blas : {true, false}) {
            setBlasEnabled(blas);
            MatrixD c(23, 31);
            gemmTransposedA<double>(wide.block(0, 0, 70, 23), b, c);
            QVERIFY((c - expected).cwiseAbs().maxCoeff() < 1e-12);
            const MatrixF wideF = wide.cast<float>(), bF = b.cast<float>();
            MatrixF cF(23, 31);
            gemmTransposedA<float>(wideF.block(0, 0, 70, 23), bF, cF);
            QVERIFY((cF.cast<double>() - expected).cwiseAbs().maxCoeff() < 1e-4);
            MatrixD wrong(31, 23);
            QVERIFY_THROWS_EXCEPTION(InvalidArgument, gemmTransposedA<double>(a, b, wrong));
        }
        setBlasEnabled(true);
    }

    void transposedAddProduct()
    {
        // The projections' C += A Bᵀ (core/base/blas.h, C holding the bias rows) against the sum
        // written out, through OpenBLAS (when built with it) and through Eigen; A a block of a
        // wider matrix.
        Generator rng(4);
        const MatrixD wide = rng.standardNormal(37, 40);
        const MatrixD a = wide.block(0, 0, 37, 21), b = rng.standardNormal(29, 21);
        const MatrixD start = rng.standardNormal(37, 29);
        MatrixD expected = start;
        for (Index i = 0; i < 37; ++i)
            for (Index j = 0; j < 29; ++j)
                for (Index k = 0; k < 21; ++k)
                    expected(i, j) += a(i, k) * b(j, k);
        for (const bool blas : {true, false}) {
            setBlasEnabled(blas);
            MatrixD c = start;
            gemmTransposedAdd<double>(wide.block(0, 0, 37, 21), b, c);
            QVERIFY((c - expected).cwiseAbs().maxCoeff() < 1e-12);
            MatrixF cF = start.cast<float>();
            const MatrixF wideF = wide.cast<float>(), bF = b.cast<float>();
            gemmTransposedAdd<float>(wideF.block(0, 0, 37, 21), bF, cF);
            QVERIFY((cF.cast<double>() - expected).cwiseAbs().maxCoeff() < 1e-4);
            MatrixD empty = start; // k = 0: no terms, C unchanged
            gemmTransposedAdd<double>(MatrixD(37, 0), MatrixD(29, 0), empty);
            QCOMPARE(empty, start);
            MatrixD wrong(29, 37);
            QVERIFY_THROWS_EXCEPTION(InvalidArgument, gemmTransposedAdd<double>(a, b, wrong));
        }
        setBlasEnabled(true);
    }
};

QTEST_GUILESS_MAIN(TestTraining)
#include "tst_training.moc"
