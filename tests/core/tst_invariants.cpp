// One invariant suite stamped over every implementation of attention in the core (as manif
// stamps its group tests over each Lie group): scaledDotProductAttention, MultiheadAttention,
// the four kernels of the dispatch (materialized, streaming, loop, fused) and the window's
// fused multi-head engine (fusedMultihead, core/engine/sessionengine.h). Each test's data rows
// are implementation × dtype × mask; the checks are written once:
//  - rows of the weights sum to 1 (fully masked rows are all 0);
//  - masked cells are exactly 0, allowed cells > 0;
//  - h = 1 with identity projections equals plain attention (scaledDotProductAttention);
//  - float32 agrees with float64 on the same inputs (1e-5);
//  - agreement with the PyTorch 1.13 fixtures (tests/reference/make_torch_fixtures.py for the
//    multi-head implementations, make_kernel_fixtures.py for the single-head ones; 1e-12
//    float64, 1e-5 float32).
// Single-head implementations run on Q, K, V directly (h = 1, no projections); their weights
// come from the kernel dispatch with V = I_{n_k} (O = W I = W exactly), so the streaming
// kernel, which never forms the weights, is checked on the same numbers.

#include "testutil.h"

#include "core/attention/attention.h"
#include "core/attention/mask.h"
#include "core/attention/multihead.h"
#include "core/engine/sessionengine.h"
#include "core/io/npy.h"
#include "core/io/tensorcase.h"
#include "core/kernels/kernels.h"
#include "core/random/random.h"

#include <QObject>
#include <QTest>

#include <cmath>
#include <map>
#include <string>
#include <vector>

using namespace attn;

namespace {

enum class Impl { Sdpa, Multihead, Materialized, Streaming, Loop, FusedKernel, FusedEngine };

const std::vector<Impl> &allImpls()
{
    static const std::vector<Impl> impls {Impl::Sdpa,       Impl::Multihead, Impl::Materialized,
                                          Impl::Streaming,  Impl::Loop,      Impl::FusedKernel,
                                          Impl::FusedEngine};
    return impls;
}

const char *implName(Impl impl)
{
    switch (impl) {
    case Impl::Sdpa:
        return "sdpa";
    case Impl::Multihead:
        return "multihead";
    case Impl::Materialized:
        return "materialized";
    case Impl::Streaming:
        return "streaming";
    case Impl::Loop:
        return "loop";
    case Impl::FusedKernel:
        return "fused kernel";
    case Impl::FusedEngine:
        return "fused engine";
    }
    return "?";
}

/// Multi-head implementations project the inputs with a layer; the others take Q, K, V as is.
bool isMultihead(Impl impl)
{
    return impl == Impl::Multihead || impl == Impl::FusedEngine;
}

KernelKind kernelOf(Impl impl)
{
    switch (impl) {
    case Impl::Materialized:
        return KernelKind::Materialized;
    case Impl::Streaming:
        return KernelKind::Streaming;
    case Impl::Loop:
        return KernelKind::Loop;
    default:
        return KernelKind::Fused;
    }
}

/// One attention problem: query n_q × d, key n_k × d, value n_k × d_v; `layer` is used by the
/// multi-head implementations only.
template<typename T> struct Problem
{
    Matrix<T> query, key, value;
    MultiheadAttention<T> layer {1, 1};
    AttentionMask mask;
    AttentionOptions options;
};

/// The weights `impl` computes for `p`, one n_q × n_k matrix per head.
template<typename T> std::vector<Matrix<T>> weightsOf(Impl impl, const Problem<T> &p)
{
    switch (impl) {
    case Impl::Sdpa:
        return {scaledDotProductAttention<T>(p.query, p.key, p.value, p.mask, p.options).weights};
    case Impl::Multihead:
        return p.layer.forward(p.query, p.key, p.value, p.mask, p.options).weights;
    case Impl::FusedEngine: {
        EngineResult r;
        fusedMultihead<T>(p.layer, p.query, p.key, p.mask, p.options, r);
        std::vector<Matrix<T>> w;
        for (const MatrixD &m : r.weights)
            w.push_back(m.cast<T>()); // exact: float32 runs compute in float32
        return w;
    }
    default: {
        // O = W · I_{n_k} = W, through the dispatch.
        const Index nK = p.key.rows();
        const Matrix<T> identity = Matrix<T>::Identity(nK, nK);
        const T scale = T(effectiveScale(p.query.cols(), p.options));
        return {attentionKernel<T>(kernelOf(impl), p.query, p.key, identity, scale, p.mask)};
    }
    }
}

enum class MaskCase { None, Causal, Padding, CausalPadding, Custom };

const char *maskCaseName(MaskCase m)
{
    switch (m) {
    case MaskCase::None:
        return "no mask";
    case MaskCase::Causal:
        return "causal";
    case MaskCase::Padding:
        return "key padding";
    case MaskCase::CausalPadding:
        return "causal+padding";
    case MaskCase::Custom:
        return "custom";
    }
    return "?";
}

AttentionMask maskFor(MaskCase m, Index nQ, Index nK)
{
    switch (m) {
    case MaskCase::None:
        return {};
    case MaskCase::Causal:
        return AttentionMask::causal(nQ, nK);
    case MaskCase::Padding:
        return AttentionMask::keyPaddingLast(nQ, nK, 3);
    case MaskCase::CausalPadding:
        // Query 0 still sees key 0 (not padding): no row is fully masked.
        return AttentionMask::causal(nQ, nK) | AttentionMask::keyPaddingLast(nQ, nK, 3);
    case MaskCase::Custom: {
        MatrixB masked = MatrixB::Zero(nQ, nK);
        for (Index i = 0; i < nQ; ++i)
            for (Index j = 0; j < nK; ++j)
                masked(i, j) = ((i * 7 + j * 3) % 5 == 0) ? 1 : 0;
        for (Index j = 0; j < nK; ++j)
            masked(nQ - 1, j) = 1; // one fully masked row
        return AttentionMask::fromMasked(masked);
    }
    }
    return {};
}

/// Seeded problem: inputs and a Xavier layer of `heads` heads for multi-head implementations
/// (d_model = 16), plain Q, K, V (d_k = 16) for the others. Float32 inputs are the float64
/// draws rounded, so float32 and float64 runs see the same numbers up to that rounding.
template<typename T> Problem<T> makeProblem(Impl impl, MaskCase m, Index nQ, Index nK, Index heads)
{
    const Index d = 16;
    Generator rng(20240611);
    Problem<T> p;
    MultiheadAttention<T> layer(d, isMultihead(impl) ? heads : 1);
    layer.initXavier(rng);
    p.layer = layer;
    p.query = rng.standardNormal(nQ, d).cast<T>();
    p.key = rng.standardNormal(nK, d).cast<T>();
    p.value = rng.standardNormal(nK, d).cast<T>();
    p.mask = maskFor(m, nQ, nK);
    return p;
}

template<typename T> double tolerance()
{
    return std::is_same_v<T, float> ? 1e-5 : 1e-12;
}

void addImplRows(bool withHeads)
{
    QTest::addColumn<int>("impl");
    QTest::addColumn<bool>("float32");
    QTest::addColumn<int>("mask");
    QTest::addColumn<bool>("cross");
    for (Impl impl : allImpls())
        for (bool float32 : {false, true})
            for (MaskCase m : {MaskCase::None, MaskCase::Causal, MaskCase::Padding,
                               MaskCase::CausalPadding, MaskCase::Custom})
                for (bool cross : {false, true})
                    QTest::addRow("%s %s %s %s%s", implName(impl), float32 ? "float32" : "float64",
                                  maskCaseName(m), cross ? "cross" : "self",
                                  withHeads && isMultihead(impl) ? " h=4" : "")
                        << int(impl) << float32 << int(m) << cross;
}

std::map<std::string, NpyArray> loadFixture(const QString &path)
{
    std::map<std::string, NpyArray> c;
    for (auto &[member, array] : readNpz(path.toStdString()))
        c.emplace(member, std::move(array));
    return c;
}

} // namespace

class TestInvariants : public QObject
{
    Q_OBJECT

    template<typename T> void checkProbabilityRows(Impl impl, MaskCase m, bool cross)
    {
        const Index nQ = cross ? 7 : 9, nK = cross ? 11 : 9;
        const Problem<T> p = makeProblem<T>(impl, m, nQ, nK, 4);
        const std::vector<Matrix<T>> weights = weightsOf(impl, p);
        QCOMPARE(Index(weights.size()), p.layer.heads());
        const double tol = tolerance<T>();
        for (std::size_t h = 0; h < weights.size(); ++h) {
            const Matrix<T> &w = weights[h];
            QCOMPARE(w.rows(), nQ);
            QCOMPARE(w.cols(), nK);
            for (Index i = 0; i < nQ; ++i) {
                bool fullyMasked = true;
                for (Index j = 0; j < nK; ++j) {
                    if (p.mask.isMasked(i, j)) {
                        // exactly 0, whatever the implementation
                        QVERIFY2(w(i, j) == T(0),
                                 qPrintable(QStringLiteral("head %1 masked cell (%2, %3) = %4")
                                                .arg(h)
                                                .arg(i)
                                                .arg(j)
                                                .arg(double(w(i, j)), 0, 'g', 17)));
                    } else {
                        fullyMasked = false;
                        QVERIFY2(w(i, j) > T(0),
                                 qPrintable(QStringLiteral("(%1, %2) = %3")
                                                .arg(i)
                                                .arg(j)
                                                .arg(double(w(i, j)))));
                    }
                }
                const double sum = double(w.row(i).sum());
                const double want = fullyMasked ? 0.0 : 1.0;
                QVERIFY2(std::abs(sum - want) <= tol,
                         qPrintable(QStringLiteral("head %1 row %2 sums to %3")
                                        .arg(h)
                                        .arg(i)
                                        .arg(sum, 0, 'g', 17)));
            }
        }
    }

    template<typename T> void checkIdentityProjections(Impl impl, MaskCase m, bool cross)
    {
        const Index nQ = cross ? 7 : 9, nK = cross ? 11 : 9;
        Problem<T> p = makeProblem<T>(impl, m, nQ, nK, 1);
        p.layer = MultiheadAttention<T>(p.query.cols(), 1);
        p.layer.setIdentity();
        const std::vector<Matrix<T>> weights = weightsOf(impl, p);
        QCOMPARE(weights.size(), std::size_t(1));
        const Matrix<T> plain
            = scaledDotProductAttention<T>(p.query, p.key, p.value, p.mask, p.options).weights;
        ATTN_COMPARE_CLOSE(weights[0], plain, tolerance<T>(), 0.0);
    }

    template<typename T>
    void loadTorchCase(const QString &name, Problem<T> &p, MatrixD &expected,
                       std::vector<MatrixD> &expectedWeights)
    {
        const auto c = loadFixture(QStringLiteral(ATTN_FIXTURE_DIR "/torch/%1.npz").arg(name));
        NamedArrays arrays;
        for (const auto &[member, array] : c)
            arrays.emplace_back(member, array);
        const TensorCase<T> tc = tensorCaseFromArrays<T>(arrays, name.toStdString());
        p.query = tc.query;
        p.key = tc.key;
        p.value = tc.value;
        p.layer = tc.layer();
        p.mask = tc.mask;
        expected = c.at("expected_output").toMatrix<double>("expected_output");
        const NpyArray &w = c.at("expected_weights");
        const Index heads = Index(w.shape.at(0)), rows = Index(w.shape.at(1)),
                    cols = Index(w.shape.at(2));
        for (Index h = 0; h < heads; ++h) {
            MatrixD m(rows, cols);
            for (Index i = 0; i < rows * cols; ++i)
                m.data()[i] = w.values.at(std::size_t(h * rows * cols + i));
            expectedWeights.push_back(m);
        }
    }

private Q_SLOTS:
    // Rows sum to 1 (fully masked rows to 0), masked cells are exactly 0, allowed cells > 0;
    // multi-head implementations with h = 4 random projections.
    void probabilityRows_data() { addImplRows(true); }
    void probabilityRows()
    {
        QFETCH(int, impl);
        QFETCH(bool, float32);
        QFETCH(int, mask);
        QFETCH(bool, cross);
        if (float32)
            checkProbabilityRows<float>(Impl(impl), MaskCase(mask), cross);
        else
            checkProbabilityRows<double>(Impl(impl), MaskCase(mask), cross);
    }

    // h = 1 with identity projections (zero biases) equals plain scaled dot-product attention on
    // the inputs; for the single-head implementations this is their agreement with it.
    void identityProjectionsArePlainAttention_data() { addImplRows(false); }
    void identityProjectionsArePlainAttention()
    {
        QFETCH(int, impl);
        QFETCH(bool, float32);
        QFETCH(int, mask);
        QFETCH(bool, cross);
        if (float32)
            checkIdentityProjections<float>(Impl(impl), MaskCase(mask), cross);
        else
            checkIdentityProjections<double>(Impl(impl), MaskCase(mask), cross);
    }

    // Float32 and float64 runs on the same inputs (the float64 draws rounded to float32 for
    // both) agree within 1e-5.
    void float32MatchesFloat64_data()
    {
        QTest::addColumn<int>("impl");
        QTest::addColumn<int>("mask");
        for (Impl impl : allImpls())
            for (MaskCase m :
                 {MaskCase::None, MaskCase::Causal, MaskCase::CausalPadding, MaskCase::Custom})
                QTest::addRow("%s %s", implName(impl), maskCaseName(m)) << int(impl) << int(m);
    }
    void float32MatchesFloat64()
    {
        QFETCH(int, impl);
        QFETCH(int, mask);
        const Problem<float> p32 = makeProblem<float>(Impl(impl), MaskCase(mask), 9, 9, 4);
        Problem<double> p64;
        p64.query = p32.query.cast<double>();
        p64.key = p32.key.cast<double>();
        p64.value = p32.value.cast<double>();
        p64.mask = p32.mask;
        p64.layer = MultiheadAttention<double>(p32.layer.dModel(), p32.layer.heads());
        p64.layer.setParameters(
            p32.layer.inProjWeight().cast<double>(), p32.layer.inProjBias().cast<double>(),
            p32.layer.outProjWeight().cast<double>(), p32.layer.outProjBias().cast<double>());
        const auto w32 = weightsOf(Impl(impl), p32);
        const auto w64 = weightsOf(Impl(impl), p64);
        QCOMPARE(w32.size(), w64.size());
        for (std::size_t h = 0; h < w32.size(); ++h)
            ATTN_COMPARE_CLOSE(w32[h].cast<double>().eval(), w64[h], 1e-5, 0.0);
    }

    // PyTorch 1.13: torch.nn.MultiheadAttention(batch_first=True) weights for the multi-head
    // implementations (average_attn_weights=False), torch.softmax(Q Kᵀ · scale + mask) @ V for
    // the single-head ones (the output; the fused kernel and SDPA also give it).
    void pytorchFixtures_data()
    {
        QTest::addColumn<int>("impl");
        QTest::addColumn<QString>("fixture");
        for (Impl impl : allImpls()) {
            if (isMultihead(impl)) {
                for (const char *name : {"self_attn", "causal", "key_padding", "cross",
                                         "cross_causal_padding", "no_bias", "h1", "h8",
                                         "additive_mask", "self_attn_float32", "causal_float32"})
                    QTest::addRow("%s torch/%s", implName(impl), name)
                        << int(impl) << QString::fromLatin1(name);
            } else {
                for (const char *name : {"plain_float64", "plain_float32", "causal_float32",
                                         "cross_padding_float32", "cross_causal_float64"})
                    QTest::addRow("%s kernels/%s", implName(impl), name)
                        << int(impl) << QString::fromLatin1(name);
            }
        }
    }
    void pytorchFixtures()
    {
        QFETCH(int, impl);
        QFETCH(QString, fixture);
        const bool float32 = fixture.endsWith(QLatin1String("float32"));
        if (isMultihead(Impl(impl))) {
            MatrixD output;
            std::vector<MatrixD> expected;
            std::vector<MatrixD> got;
            if (float32) {
                Problem<float> p;
                loadTorchCase(fixture, p, output, expected);
                for (const MatrixF &w : weightsOf(Impl(impl), p))
                    got.push_back(w.cast<double>());
            } else {
                Problem<double> p;
                loadTorchCase(fixture, p, output, expected);
                got = weightsOf(Impl(impl), p);
            }
            QCOMPARE(got.size(), expected.size());
            const double tol = float32 ? 1e-5 : 1e-12;
            for (std::size_t h = 0; h < got.size(); ++h)
                ATTN_COMPARE_CLOSE(got[h], expected[h], tol, 0.0);
            return;
        }
        const auto c = loadFixture(QStringLiteral(ATTN_FIXTURE_DIR "/kernels/%1.npz").arg(fixture));
        const Index nQ = Index(c.at("query").shape[0]);
        const Index nK = Index(c.at("key").shape[0]);
        AttentionMask mask;
        if (c.at("causal").toScalarInt("causal") != 0)
            mask = AttentionMask::causal(nQ, nK);
        if (const Index padding = Index(c.at("padding").toScalarInt("padding")); padding > 0)
            mask = mask | AttentionMask::keyPaddingLast(nQ, nK, padding);
        const MatrixD expected = c.at("expected_output").toMatrix<double>("expected_output");
        const double scale = c.at("scale").values.at(0);
        QCOMPARE(effectiveScale(Index(c.at("query").shape[1]), AttentionOptions {}), scale);
        auto run = [&](auto zero) -> MatrixD {
            using T = decltype(zero);
            const Matrix<T> q = c.at("query").toMatrix<T>("query");
            const Matrix<T> k = c.at("key").toMatrix<T>("key");
            const Matrix<T> v = c.at("value").toMatrix<T>("value");
            if (Impl(impl) == Impl::Sdpa) // α = 0.5: the fixture's scale (checked below)
                return scaledDotProductAttention<T>(q, k, v, mask).output.template cast<double>();
            return attentionKernel<T>(kernelOf(Impl(impl)), q, k, v, T(scale), mask)
                .template cast<double>();
        };
        if (float32)
            ATTN_COMPARE_CLOSE(run(0.0f), expected, 1e-5, 0.0);
        else
            ATTN_COMPARE_CLOSE(run(0.0), expected, 1e-12, 0.0);
    }
};

QTEST_GUILESS_MAIN(TestInvariants)
#include "tst_invariants.moc"
