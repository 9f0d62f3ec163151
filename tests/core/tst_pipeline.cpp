// The attention pipeline's vectors (core/engine/pipeline.h) against NumPy: the embeddings,
// positions, each head's query, key and value, head outputs, the concatenation and the output
// projection of tests/reference/make_pipeline_fixtures.py, written from Vaswani et al. 2017
// §3.2.2 and §3.5 and the documented draw order, at 1e-12. Grouped-query heads with RoPE: the
// pipeline's q·kᵀ are the engine's scores; float32 agrees with float64 to 1e-5.

#include "testutil.h"

#include "core/engine/pipeline.h"
#include "core/engine/sessionengine.h"
#include "core/io/npy.h"

#include <QObject>
#include <QTest>

#include <map>
#include <string>

using namespace attn;

namespace {

std::map<std::string, NpyArray> fixtures()
{
    std::map<std::string, NpyArray> m;
    for (auto &[name, array] : readNpz(ATTN_FIXTURE_DIR "/session/pipeline.npz"))
        m.emplace(name, std::move(array));
    return m;
}

// Matrix k of a 3-d array (count × rows × cols), or the whole of a 2-d one (k = 0).
MatrixD slice(const NpyArray &a, Index k = 0)
{
    const bool three = a.shape.size() == 3;
    const Index rows = Index(a.shape[three ? 1 : 0]), cols = Index(a.shape[three ? 2 : 1]);
    MatrixD m(rows, cols);
    const std::size_t base = std::size_t(k * rows * cols);
    for (Index i = 0; i < rows; ++i)
        for (Index j = 0; j < cols; ++j)
            m(i, j) = a.values[base + std::size_t(i * cols + j)];
    return m;
}

EngineParameters caseParameters(const NpyArray &c)
{
    const std::vector<double> &v = c.values;
    EngineParameters p;
    p.n = Index(v[0]);
    p.nK = Index(v[1]);
    p.dModel = Index(v[2]);
    p.heads = Index(v[3]);
    p.seed = std::uint64_t(v[4]);
    p.kind = v[5] == 0 ? AttentionKind::EncoderSelf
        : v[5] == 1    ? AttentionKind::DecoderCausal
                       : AttentionKind::EncoderDecoder;
    p.mask = v[6] == 0 ? MaskChoice::None : v[6] == 1 ? MaskChoice::Causal : MaskChoice::KeyPadding;
    p.paddingCount = Index(v[7]);
    p.scaleExponent = v[8];
    p.temperature = v[9];
    p.positional = v[10] != 0;
    return p;
}

} // namespace

class TestPipeline : public QObject
{
    Q_OBJECT

private slots:
    void matchesNumpy_data()
    {
        QTest::addColumn<int>("index");
        for (int k = 0; k < 5; ++k)
            QTest::newRow(qPrintable(QStringLiteral("case %1").arg(k))) << k;
    }

    void matchesNumpy()
    {
        QFETCH(int, index);
        const auto f = fixtures();
        const std::string prefix = QStringLiteral("c%1_").arg(index).toStdString();
        const auto at = [&](const char *name) { return f.at(prefix + name); };
        const EngineParameters p = caseParameters(at("case"));
        const EngineResult r = computeEngine(p);
        const AttentionPipeline pipe = attentionPipeline(p, r.weights);
        const double tol = 1e-12;
        ATTN_COMPARE_CLOSE(pipe.embeddings, slice(at("embeddings")), tol, tol);
        ATTN_COMPARE_CLOSE(pipe.positions, slice(at("positions")), tol, tol);
        ATTN_COMPARE_CLOSE(pipe.input, slice(at("embeddings")) + slice(at("positions")), tol, tol);
        ATTN_COMPARE_CLOSE(pipe.source, slice(at("source")), tol, tol);
        QCOMPARE(Index(pipe.queries.size()), p.heads);
        for (Index h = 0; h < p.heads; ++h) {
            ATTN_COMPARE_CLOSE(r.weights[std::size_t(h)], slice(at("weights"), h), tol, tol);
            ATTN_COMPARE_CLOSE(pipe.queries[std::size_t(h)], slice(at("queries"), h), tol, tol);
            ATTN_COMPARE_CLOSE(pipe.keys[std::size_t(h)], slice(at("keys"), h), tol, tol);
            ATTN_COMPARE_CLOSE(pipe.values[std::size_t(h)], slice(at("values"), h), tol, tol);
            ATTN_COMPARE_CLOSE(pipe.headOutputs[std::size_t(h)], slice(at("head_outputs"), h), tol,
                               tol);
        }
        ATTN_COMPARE_CLOSE(pipe.concatenated, slice(at("concatenated")), tol, tol);
        ATTN_COMPARE_CLOSE(pipe.output, slice(at("output")), tol, tol);
    }

    // Grouped-query heads with RoPE and a causal mask: each head's q·kᵀ is the engine's raw
    // score (after the rotation), its output its weights times its group's values.
    void groupedRopeAgreesWithTheEngine()
    {
        EngineParameters p;
        p.n = 9;
        p.dModel = 32;
        p.heads = 4;
        p.kvHeads = 2;
        p.rope = true;
        p.kind = AttentionKind::DecoderCausal;
        p.seed = 7;
        const EngineResult r = computeEngine(p);
        const AttentionPipeline pipe = attentionPipeline(p, r.weights);
        for (Index h = 0; h < p.heads; ++h) {
            const MatrixD scores
                = pipe.queries[std::size_t(h)] * pipe.keys[std::size_t(h)].transpose();
            ATTN_COMPARE_CLOSE(scores, r.scores[std::size_t(h)], 1e-12, 1e-12);
            ATTN_COMPARE_CLOSE(pipe.headOutputs[std::size_t(h)],
                               r.weights[std::size_t(h)] * pipe.values[std::size_t(h)], 1e-12,
                               1e-12);
        }
        // Heads 0 and 1 share key head 0.
        QCOMPARE(pipe.keys[0], pipe.keys[1]);
        QVERIFY(pipe.keys[1] != pipe.keys[2]);

        EngineParameters single = p;
        single.dtype = DType::Float32;
        const AttentionPipeline f32 = attentionPipeline(single, computeEngine(single).weights);
        ATTN_COMPARE_CLOSE(f32.output, pipe.output, 1e-5, 1e-5);
    }

    void refusesMismatchedWeights()
    {
        EngineParameters p;
        const EngineResult r = computeEngine(p);
        std::vector<MatrixD> fewer(r.weights.begin(), r.weights.end() - 1);
        QVERIFY_THROWS_EXCEPTION(InvalidArgument, attentionPipeline(p, fewer));
        std::vector<MatrixD> wrong = r.weights;
        wrong[1] = MatrixD::Zero(3, 3);
        QVERIFY_THROWS_EXCEPTION(InvalidArgument, attentionPipeline(p, wrong));
    }
};

QTEST_GUILESS_MAIN(TestPipeline)
#include "tst_pipeline.moc"
