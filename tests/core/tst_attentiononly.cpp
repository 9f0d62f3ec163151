// The attention-only transformer (core/training/attentiononly.h) and the induction measurements
// (core/training/induction.h): logits, loss and every parameter gradient against PyTorch 1.13
// autograd, three Adam steps against torch.optim.Adam, the generic optimizer against the
// layer's, the scores on a planted model, and the refusals.
//
// Fixtures: tests/reference/fixtures/induction/<case>.npz from
// tests/reference/make_induction_fixtures.py (the model written with torch.nn.MultiheadAttention
// layers, loss.backward(), torch.optim.Adam). 1e-12 in float64.

#include "testutil.h"

#include "core/io/npy.h"
#include "core/training/attentiononly.h"
#include "core/training/induction.h"
#include "core/training/optimizer.h"

#include <QObject>
#include <QTest>

#include <cmath>
#include <map>
#include <string>
#include <vector>

using namespace attn;
using namespace attn::training;

namespace {

using Case = std::map<std::string, NpyArray>;

Case loadCase(const char *name)
{
    Case c;
    const QString path = QStringLiteral(ATTN_FIXTURE_DIR "/induction/%1.npz").arg(name);
    for (auto &[member, array] : readNpz(path.toStdString()))
        c.emplace(member, std::move(array));
    return c;
}

/// Any array as rows × last-axis columns (C order).
template<typename T> Matrix<T> stacked(const NpyArray &a)
{
    const Index cols = a.shape.empty() ? 1 : Index(a.shape.back());
    Matrix<T> m(Index(a.values.size()) / cols, cols);
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

Index integer(const Case &c, const char *name)
{
    return Index(c.at(name).values.at(0));
}

/// The parameters stored under `prefix` + their names (make_induction_fixtures.py's layout).
template<typename T>
AttentionOnlyParameters<T> parametersOf(const Case &c, const std::string &prefix = {})
{
    AttentionOnlyParameters<T> p;
    p.embedding = stacked<T>(c.at(prefix + "embedding"));
    p.positions = stacked<T>(c.at(prefix + "positions"));
    for (Index l = 0; l < integer(c, "num_layers"); ++l) {
        const std::string layer = prefix + "layer" + std::to_string(l) + "_";
        p.layers.push_back(
            {stacked<T>(c.at(layer + "in_proj_weight")), flat<T>(c.at(layer + "in_proj_bias")),
             stacked<T>(c.at(layer + "out_proj_weight")), flat<T>(c.at(layer + "out_proj_bias"))});
    }
    p.unembedding = stacked<T>(c.at(prefix + "unembedding"));
    return p;
}

AttentionOnlyConfig configOf(const Case &c)
{
    AttentionOnlyConfig config;
    config.vocab = Index(c.at("embedding").shape[0]);
    config.dModel = Index(c.at("embedding").shape[1]);
    config.maxLength = Index(c.at("positions").shape[0]);
    config.heads = integer(c, "num_heads");
    config.layers = integer(c, "num_layers");
    return config;
}

/// Sequence `index` of the tokens array (B × n, or steps × B × n with a step index).
TokenBatch tokensOf(const Case &c, Index step = -1)
{
    const NpyArray &a = c.at("tokens");
    const std::size_t rank = a.shape.size();
    TokenBatch b;
    b.batch = Index(a.shape[rank - 2]);
    b.length = Index(a.shape[rank - 1]);
    b.firstScoredQuery = integer(c, "first_scored_query");
    const std::size_t count = std::size_t(b.batch * b.length);
    const std::size_t offset = step < 0 ? 0 : std::size_t(step) * count;
    for (std::size_t i = 0; i < count; ++i)
        b.tokens.push_back(std::int64_t(a.values[offset + i]));
    return b;
}

template<typename DA, typename DB>
void checkClose(const Eigen::MatrixBase<DA> &actual, const Eigen::MatrixBase<DB> &expected,
                double tol, const std::string &what)
{
    const test::CompareReport r = test::compareClose(actual, expected, tol, tol);
    QVERIFY2(r.ok,
             qPrintable(QStringLiteral("%1: %2").arg(QString::fromStdString(what), r.message())));
}

template<typename T>
void checkParameters(const AttentionOnlyParameters<T> &actual,
                     const AttentionOnlyParameters<double> &expected, double tol,
                     const std::string &what)
{
    const std::vector<std::string> names
        = AttentionOnlyParameters<T>::tensorNames(Index(expected.layers.size()));
    const auto a = actual.tensors();
    const auto e = expected.tensors();
    QCOMPARE(a.size(), e.size());
    for (std::size_t i = 0; i < a.size(); ++i) {
        QCOMPARE(a[i].size(), e[i].size());
        const Eigen::Map<const Vector<T>> av(a[i].data(), Index(a[i].size()));
        const Eigen::Map<const VectorD> ev(e[i].data(), Index(e[i].size()));
        checkClose(av.template cast<double>(), ev, tol, what + " " + names[i]);
        if (QTest::currentTestFailed())
            return;
    }
}

/// The planted model of plantedInductionModel().
struct Planted
{
    AttentionOnlyConfig config;
    AttentionOnlyParameters<double> params;
    Index repeat = 0;
};

/// A two-layer model whose heads are built, not trained (N = 4, n = 8, V = 8, E = 16, h = 2):
/// W_pos[t] = e_t and W_E[v] = e_{8+v}. Layer 0, head 0 attends from position i to i − 1 (its
/// query maps e_i to c·e_{i−1}, its key is c·I; values and output zero, so the residual stream
/// is unchanged). Layer 1, head 0 attends from i to i − N + 1 (for i ≥ N − 1, else to 0) and
/// writes the attended token's one-hot, doubled, into the token dimensions. The other heads are
/// zero (uniform causal weights, zero output). c²/√d_k = 60: each row's softmax puts all but
/// e^−60 of its weight on the planted key. W_U reads the token dimensions ×30: the attended
/// (next) token's logit leads the current one's by 30.
Planted plantedInductionModel()
{
    Planted p;
    p.repeat = 4;
    const Index N = p.repeat, n = 2 * N, E = 16, dk = 8;
    p.config.vocab = 8;
    p.config.dModel = E;
    p.config.heads = 2;
    p.config.layers = 2;
    p.config.maxLength = n;
    p.params = AttentionOnlyParameters<double>::zeros(p.config);
    for (Index t = 0; t < n; ++t)
        p.params.positions(t, t) = 1;
    for (Index v = 0; v < 8; ++v)
        p.params.embedding(v, 8 + v) = 1;
    const double c = std::sqrt(60.0 * std::sqrt(double(dk)));
    Parameters<double> &l0 = p.params.layers[0];
    for (Index i = 1; i < n; ++i)
        l0.inProjWeight(i - 1, i) = c; // query of head 0: e_i → c·e_{i−1}
    for (Index j = 0; j < n; ++j)
        l0.inProjWeight(E + j, j) = c; // key of head 0: c·e_j
    Parameters<double> &l1 = p.params.layers[1];
    for (Index i = 0; i < n; ++i)
        l1.inProjWeight(i >= N - 1 ? i - N + 1 : 0, i) = c;
    for (Index j = 0; j < n; ++j)
        l1.inProjWeight(E + j, j) = c;
    for (Index r = 0; r < dk; ++r) {
        l1.inProjWeight(2 * E + r, 8 + r) = 1; // value of head 0: the token's one-hot
        l1.outProjWeight(8 + r, r) = 2; // written back into the token dimensions, doubled
    }
    for (Index v = 0; v < 8; ++v)
        p.params.unembedding(8 + v, v) = 30;
    return p;
}

} // namespace

class TestAttentionOnly : public QObject
{
    Q_OBJECT

private slots:
    void gradientsMatchTorch_data();
    void gradientsMatchTorch();
    void float32Gradients();
    void adamMatchesTorch();
    void arrayListOptimizerEqualsLayerOptimizer();
    void plantedScores();
    void repeatedTokenBatches();
    void refusals();
};

void TestAttentionOnly::gradientsMatchTorch_data()
{
    QTest::addColumn<QString>("name");
    for (const char *name : {"grad_repeated", "grad_all_queries", "grad_one_layer"})
        QTest::newRow(name) << QString::fromLatin1(name);
}

void TestAttentionOnly::gradientsMatchTorch()
{
    QFETCH(QString, name);
    const Case c = loadCase(qPrintable(name));
    const AttentionOnlyConfig config = configOf(c);
    const AttentionOnlyParameters<double> params = parametersOf<double>(c);
    const TokenBatch batch = tokensOf(c);
    AttentionOnlyCache<double> cache;
    attentionOnlyForward(config, params, batch, cache);
    checkClose(cache.logits, stacked<double>(c.at("expected_logits")), 1e-12, "logits");
    QVERIFY(std::abs(attentionOnlyLoss(cache, batch) - c.at("expected_loss").values.at(0))
            <= 1e-12);
    AttentionOnlyParameters<double> grads;
    AttentionOnlyScratch<double> scratch;
    attentionOnlyBackward(config, params, batch, cache, grads, scratch);
    checkParameters(grads, parametersOf<double>(c, "grad_"), 1e-12, "gradient");
    // The rows of W_pos past n get no gradient.
    if (batch.length < config.maxLength)
        QCOMPARE(grads.positions.bottomRows(config.maxLength - batch.length).norm(), 0.0);
}

void TestAttentionOnly::float32Gradients()
{
    const Case c = loadCase("grad_repeated");
    const AttentionOnlyConfig config = configOf(c);
    const AttentionOnlyParameters<float> params = parametersOf<float>(c);
    const TokenBatch batch = tokensOf(c);
    AttentionOnlyCache<float> cache;
    attentionOnlyForward(config, params, batch, cache);
    QVERIFY(std::abs(attentionOnlyLoss(cache, batch) - c.at("expected_loss").values.at(0)) <= 1e-5);
    AttentionOnlyParameters<float> grads;
    AttentionOnlyScratch<float> scratch;
    attentionOnlyBackward(config, params, batch, cache, grads, scratch);
    checkParameters(grads, parametersOf<double>(c, "grad_"), 1e-4, "float32 gradient");
}

void TestAttentionOnly::adamMatchesTorch()
{
    const Case c = loadCase("adam_three_steps");
    const AttentionOnlyConfig config = configOf(c);
    OptimizerConfig oc;
    oc.kind = OptimizerKind::Adam;
    oc.learningRate = c.at("lr").values.at(0);
    AttentionOnlyTrainer<double> trainer(config, parametersOf<double>(c), oc);
    const std::vector<double> &losses = c.at("expected_losses").values;
    for (Index s = 0; s < integer(c, "steps"); ++s) {
        const double loss = trainer.step(tokensOf(c, s));
        QVERIFY2(std::abs(loss - losses[std::size_t(s)]) <= 1e-12,
                 qPrintable(QStringLiteral("step %1: %2 vs %3")
                                .arg(s)
                                .arg(loss, 0, 'g', 17)
                                .arg(losses[std::size_t(s)], 0, 'g', 17)));
    }
    QCOMPARE(trainer.steps(), std::int64_t(3));
    // ∂L/∂b_K is 0 in exact arithmetic (a key bias adds q·b_K to a whole row of scores, which
    // the softmax ignores): both sides hold rounding noise of ~1e-17 there, which Adam divides
    // by √v + ε ≈ 1e-8, so the key biases move by noise of ~lr·1e-9. They are compared at 1e-9,
    // then every other entry at 1e-12.
    AttentionOnlyParameters<double> actual = trainer.parameters();
    AttentionOnlyParameters<double> expected = parametersOf<double>(c, "final_");
    const Index E = config.dModel;
    for (std::size_t l = 0; l < actual.layers.size(); ++l) {
        auto a = actual.layers[l].inProjBias.segment(E, E);
        auto e = expected.layers[l].inProjBias.segment(E, E);
        checkClose(a, e, 1e-9, "key bias after 3 Adam steps");
        a = e;
    }
    checkParameters(actual, expected, 1e-12, "after 3 Adam steps");
}

void TestAttentionOnly::arrayListOptimizerEqualsLayerOptimizer()
{
    // The same four tensors through Optimizer (layer.h's Parameters) and ArrayListOptimizer:
    // the same bits after a few steps, for SGD with momentum and for Adam.
    for (const OptimizerKind kind : {OptimizerKind::Sgd, OptimizerKind::Adam}) {
        OptimizerConfig oc;
        oc.kind = kind;
        oc.learningRate = 0.03;
        oc.momentum = 0.9;
        Generator rng(7);
        Parameters<double> a {rng.standardNormal(6, 2), rng.standardNormal(6, 1).col(0),
                              rng.standardNormal(2, 2), rng.standardNormal(2, 1).col(0)};
        Parameters<double> b = a;
        Optimizer<double> layerOptimizer(oc);
        ArrayListOptimizer<double> listOptimizer(oc);
        const auto spans = [](auto &p) {
            using S = std::conditional_t<std::is_const_v<std::remove_reference_t<decltype(p)>>,
                                         const double, double>;
            return std::vector<std::span<S>> {
                std::span<S>(p.inProjWeight.data(), std::size_t(p.inProjWeight.size())),
                std::span<S>(p.inProjBias.data(), std::size_t(p.inProjBias.size())),
                std::span<S>(p.outProjWeight.data(), std::size_t(p.outProjWeight.size())),
                std::span<S>(p.outProjBias.data(), std::size_t(p.outProjBias.size()))};
        };
        for (int s = 0; s < 4; ++s) {
            const Parameters<double> g {rng.standardNormal(6, 2), rng.standardNormal(6, 1).col(0),
                                        rng.standardNormal(2, 2), rng.standardNormal(2, 1).col(0)};
            layerOptimizer.step(a, g);
            listOptimizer.step(spans(b), spans(g));
        }
        QCOMPARE(listOptimizer.steps(), std::int64_t(4));
        QVERIFY(a.inProjWeight == b.inProjWeight && a.inProjBias == b.inProjBias
                && a.outProjWeight == b.outProjWeight && a.outProjBias == b.outProjBias);
        // A list of other sizes after the first step is refused, naming the array.
        std::vector<double> one(3), two(3);
        QVERIFY_THROWS_EXCEPTION(
            InvalidArgument,
            listOptimizer.step({std::span<double>(one)}, {std::span<const double>(two)}));
    }
}

void TestAttentionOnly::plantedScores()
{
    const Planted p = plantedInductionModel();
    const TokenBatch heldOut = repeatedTokens(p.config.vocab, p.repeat, 5, 3);
    const InductionEvaluation e = evaluateInduction(p.config, p.params, heldOut);
    // Layer 1, head 0 puts all but ~e^−60 of each second-half row on key i − N + 1.
    QCOMPARE(e.inductionHead, Index(0));
    QVERIFY2(std::abs(e.inductionScore - 1.0) <= 1e-12,
             qPrintable(QString::number(e.inductionScore)));
    QCOMPARE(e.prefixMatching(1, 0), e.inductionScore);
    // Layer 1, head 1 is uniform over the causal keys: 1/(i+1) on key i − N + 1.
    double uniform = 0;
    for (Index i = p.repeat; i < 2 * p.repeat; ++i)
        uniform += 1.0 / double(i + 1) / double(p.repeat);
    QVERIFY(std::abs(e.prefixMatching(1, 1) - uniform) <= 1e-12);
    // Layer 0, head 0 attends to i − 1 from every row but the first: (n − 1)/n.
    const double n = double(2 * p.repeat);
    QCOMPARE(e.previousTokenHead, Index(0));
    QVERIFY(std::abs(e.previousTokenScore - (n - 1) / n) <= 1e-12);
    // The attended token is the next one: every repeated-half query is right, loss ~ 7e^−30.
    QCOMPARE(e.accuracy, 1.0);
    QVERIFY2(e.loss < 1e-10, qPrintable(QString::number(e.loss)));
    QCOMPARE(e.firstSequenceWeights.size(), std::size_t(4));
    QVERIFY(std::abs(e.firstSequenceWeights[2](7, 4) - 1.0) <= 1e-12); // layer 1, head 0
}

void TestAttentionOnly::repeatedTokenBatches()
{
    RepeatedTokensConfig rc;
    rc.vocab = 11;
    rc.minRepeat = 3;
    rc.repeat = 9;
    rc.batch = 4;
    rc.seed = 5;
    RepeatedTokens gen(rc);
    // numpy: rng = default_rng(5); N = rng.integers(3, 10); rng.integers(0, 11, (4, N)).
    Generator rng(5);
    bool lengthsDiffer = false;
    Index firstLength = -1;
    for (int s = 0; s < 6; ++s) {
        const TokenBatch b = gen.next();
        const Index N = Index(rng.integers(3, 10));
        QCOMPARE(b.length, 2 * N);
        QCOMPARE(b.firstScoredQuery, N);
        QCOMPARE(b.batch, Index(4));
        for (Index i = 0; i < 4; ++i)
            for (Index t = 0; t < N; ++t) {
                const std::int64_t token = rng.integers(0, 11);
                QCOMPARE(b.tokens[std::size_t(i * 2 * N + t)], token);
                QCOMPARE(b.tokens[std::size_t(i * 2 * N + N + t)], token);
            }
        lengthsDiffer = lengthsDiffer || (firstLength >= 0 && firstLength != N);
        firstLength = N;
    }
    QVERIFY(lengthsDiffer);
}

void TestAttentionOnly::refusals()
{
    const auto message = [](const auto &f) {
        try {
            f();
        } catch (const InvalidArgument &e) {
            return QString::fromStdString(e.what());
        }
        return QString();
    };
    AttentionOnlyConfig c;
    c.heads = 3;
    QVERIFY(message([&] { c.validate(); }).contains(QStringLiteral("h = 3, d_model = 64")));
    c = {};
    c.vocab = 1;
    QVERIFY(message([&] { c.validate(); }).contains(QStringLiteral("vocab")));
    c = {};
    c.vocab = 1 << 22;
    QVERIFY(message([&] { c.validate(); }).contains(QStringLiteral("2^28")));
    c = {};
    QVERIFY(message([&] {
                (void)initialAttentionOnly(c, 0, -1.0);
            }).contains(QStringLiteral("init_std")));
    // Tokens outside the vocabulary, sequences longer than W_pos, shapes that do not fit.
    AttentionOnlyConfig small;
    small.vocab = 5;
    small.dModel = 4;
    small.heads = 2;
    small.maxLength = 6;
    const AttentionOnlyParameters<double> p = initialAttentionOnly(small, 1, 0.1);
    AttentionOnlyCache<double> cache;
    TokenBatch b {1, 4, {0, 1, 5, 2}, 0};
    QVERIFY(message([&] {
                attentionOnlyForward(small, p, b, cache);
            }).contains(QStringLiteral("token 2 is 5")));
    b = {1, 8, std::vector<std::int64_t>(8, 0), 0};
    QVERIFY(message([&] {
                attentionOnlyForward(small, p, b, cache);
            }).contains(QStringLiteral("max_length = 6")));
    b = {1, 4, {0, 1, 2, 3}, 3};
    QVERIFY(message([&] {
                attentionOnlyForward(small, p, b, cache);
            }).contains(QStringLiteral("first scored query")));
    AttentionOnlyConfig wider = small;
    wider.dModel = 6;
    b = {1, 4, {0, 1, 2, 3}, 0};
    QVERIFY(message([&] {
                attentionOnlyForward(wider, p, b, cache);
            }).contains(QStringLiteral("embedding W_E is 5\u00d74")));
    RepeatedTokensConfig rc;
    rc.repeat = 4;
    rc.minRepeat = 6;
    QVERIFY(message([&] {
                RepeatedTokens r(rc);
            }).contains(QStringLiteral("repeat = 4, min_repeat = 6")));
    QVERIFY(message([&] {
                (void)evaluateInduction(small, p, TokenBatch {1, 5, {0, 1, 2, 0, 1}, 2});
            }).contains(QStringLiteral("repeated twice")));
}

QTEST_APPLESS_MAIN(TestAttentionOnly)
#include "tst_attentiononly.moc"
