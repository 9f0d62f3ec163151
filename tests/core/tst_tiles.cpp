// The tile engine (core/tiles/tileengine.h) against the materialized weights of
// scaledDotProductAttention (core/attention/attention.h), per head and for the head mean, pooled by
// an obvious per-pixel loop here: float64 to 1e-12, float32 to 1e-6, for random windows and grids
// (zoomed out and in past one cell per pixel), every mask kind, finite fill values, scales
// below zero, cross-attention and sizes that are not multiples of the row blocks, on the AVX-512
// and the Eigen code. Per-row metrics equal rowMetrics() of the materialized weights; single
// cells equal the materialized raw score, scaled score and weight; a planted spike and a sink
// column stay visible at every zoom level under max pooling.

#include "core/analysis/metrics.h"
#include "core/attention/attention.h"
#include "core/attention/variants.h"
#include "core/kernels/kernels.h"
#include "core/random/random.h"
#include "core/tiles/tileengine.h"
#include "core/tiles/tilepyramid.h"
#include "testutil.h"

#include <QTest>

#include <atomic>
#include <cmath>
#include <limits>
#include <vector>

using namespace attn;

namespace {

enum class MaskKind { None, Causal, CausalBottomRight, Padding, Custom, Additive, Combined };

AttentionMask makeMask(MaskKind kind, Index nQ, Index nK, Generator &rng)
{
    switch (kind) {
    case MaskKind::None:
        return {};
    case MaskKind::Causal:
        return AttentionMask::causal(nQ, nK);
    case MaskKind::CausalBottomRight:
        return AttentionMask::causal(nQ, nK, CausalAlignment::BottomRight);
    case MaskKind::Padding:
        return AttentionMask::keyPaddingLast(nQ, nK, nK / 3);
    case MaskKind::Custom: {
        // Random cells masked with probability 0.3, plus one fully masked row.
        MatrixB m(nQ, nK);
        for (Index i = 0; i < m.size(); ++i)
            m.data()[i] = rng.random() < 0.3 ? 1 : 0;
        if (nQ > 2)
            m.row(nQ / 2).setOnes();
        return AttentionMask::fromMasked(m);
    }
    case MaskKind::Additive: {
        MatrixD a = rng.standardNormal(nQ, nK);
        for (Index i = 0; i < a.size(); ++i)
            if (rng.random() < 0.2)
                a.data()[i] = -std::numeric_limits<double>::infinity();
        return AttentionMask::additive(a);
    }
    case MaskKind::Combined: {
        MatrixB m(nQ, nK);
        for (Index i = 0; i < m.size(); ++i)
            m.data()[i] = rng.random() < 0.1 ? 1 : 0;
        return AttentionMask::causal(nQ, nK) | AttentionMask::keyPaddingLast(nQ, nK, nK / 4)
            | AttentionMask::fromMasked(m);
    }
    }
    return {};
}

/// Selects the float32 code for its lifetime ("avx512" or "eigen") and restores the default.
class InstructionSetScope
{
public:
    explicit InstructionSetScope(bool avx512)
        : m_previous(kernelInstructionSet() == "avx512")
    {
        m_active = setAvx512KernelsEnabled(avx512) == avx512;
    }
    ~InstructionSetScope() { setAvx512KernelsEnabled(m_previous); }
    InstructionSetScope(const InstructionSetScope &) = delete;
    InstructionSetScope &operator=(const InstructionSetScope &) = delete;
    bool active() const { return m_active; }

private:
    bool m_previous;
    bool m_active = false;
};

template<typename T> double tolerance()
{
    return sizeof(T) == 4 ? 1e-6 : 1e-12;
}

/// The materialized weights of every head and their mean (MultiheadAttention's weightsMean).
template<typename T> struct Reference
{
    std::vector<AttentionResult<T>> heads;
    Matrix<T> mean;
};

template<typename T>
Reference<T> materialize(const Matrix<T> &q, const Matrix<T> &k, Index heads,
                         const AttentionMask &mask, const AttentionOptions &options)
{
    Reference<T> ref;
    const Index dK = q.cols() / heads;
    const Matrix<T> v = Matrix<T>::Zero(k.rows(), 1);
    ref.mean.setZero(q.rows(), k.rows());
    for (Index h = 0; h < heads; ++h) {
        ref.heads.push_back(scaledDotProductAttention<T>(
            q.middleCols(h * dK, dK), k.middleCols(h * dK, dK), v, mask, options));
        ref.mean += ref.heads.back().weights;
    }
    ref.mean /= T(heads);
    return ref;
}

/// Max or mean of each pixel's unmasked cells, one pixel at a time (0 and the OR of the states
/// where every cell is masked).
template<typename T>
void poolReference(const Matrix<T> &w, const AttentionMask &mask, const TileWindow &win,
                   const TileGrid &g, TilePooling pooling, MatrixD &values, MatrixB &states,
                   bool signedMax = false)
{
    values.resize(g.height, g.width);
    states.resize(g.height, g.width);
    for (Index y = 0; y < g.height; ++y) {
        for (Index x = 0; x < g.width; ++x) {
            const Index i0 = win.rowBegin + y * g.rowsPerPixel;
            const Index i1 = std::min(win.rowEnd, i0 + g.rowsPerPixel);
            const Index j0 = win.colBegin + x * g.colsPerPixel;
            const Index j1 = std::min(win.colEnd, j0 + g.colsPerPixel);
            double best = -std::numeric_limits<double>::infinity(), sum = 0;
            Index count = 0;
            std::uint8_t st = 0;
            for (Index i = i0; i < i1; ++i) {
                for (Index j = j0; j < j1; ++j) {
                    if (const std::uint8_t s = mask.state(i, j)) {
                        st |= s;
                        continue;
                    }
                    if (!signedMax)
                        best = std::max(best, double(w(i, j)));
                    else if (count == 0 || std::abs(double(w(i, j))) > std::abs(best))
                        best = double(w(i, j)); // the largest magnitude, its sign kept
                    sum += double(w(i, j));
                    ++count;
                }
            }
            values(y, x)
                = count == 0 ? 0.0 : (pooling == TilePooling::Max ? best : sum / double(count));
            states(y, x) = count == 0 ? st : 0;
        }
    }
}

template<typename T> Matrix<T> randomMatrix(Generator &rng, Index rows, Index cols, double sd)
{
    return (rng.standardNormal(rows, cols) * sd).cast<T>();
}

/// A random window of the n_q × n_k cells (sometimes every cell, sometimes one row or column).
TileWindow randomWindow(Generator &rng, Index nQ, Index nK)
{
    const auto range = [&](Index n, Index &a, Index &b) {
        const double u = rng.random();
        if (u < 0.25) {
            a = 0;
            b = n;
            return;
        }
        a = Index(rng.random() * double(n));
        b = a + 1 + Index(rng.random() * double(n - a));
        b = std::min(b, n);
    };
    TileWindow w;
    range(nQ, w.rowBegin, w.rowEnd);
    range(nK, w.colBegin, w.colEnd);
    return w;
}

} // namespace

Q_DECLARE_METATYPE(MaskKind)

class TestTiles : public QObject
{
    Q_OBJECT

private:
    template<typename T> void variantsEqualFullMatrices()
    {
        QFETCH(bool, sink);
        QFETCH(bool, differential);
        QFETCH(bool, gate);
        QFETCH(MaskKind, maskKind);
        const Index nQ = 37, nK = 41, heads = 3, dK = 5;
        Generator rng {std::uint64_t(nQ * 7 + (sink ? 1 : 0) + (differential ? 2 : 0)
                                     + (gate ? 4 : 0) + int(maskKind) * 8)};
        const Matrix<T> q = randomMatrix<T>(rng, nQ, heads * dK, 1.5);
        const Matrix<T> k = randomMatrix<T>(rng, nK, heads * dK, 1.5);
        const AttentionMask mask = makeMask(maskKind, nQ, nK, rng);
        TileVariants<T> v;
        if (sink)
            v.sinkLogits = {1.25, -0.5, -std::numeric_limits<double>::infinity()};
        if (differential) {
            v.query2 = randomMatrix<T>(rng, nQ, heads * dK, 1.5);
            v.key2 = randomMatrix<T>(rng, nK, heads * dK, 1.5);
            v.lambda = {0.3, 1.4, -0.6};
        }
        if (gate)
            v.gate = (1.0 / (1.0 + (-rng.standardNormal(nQ, heads)).array().exp())).matrix();
        AttentionOptions options;
        options.temperature = 0.8;

        // The full matrices: the weights shown, A₁ and the metrics (A₁'s, with the sink).
        const Matrix<T> value = Matrix<T>::Zero(nK, 1);
        std::vector<Matrix<T>> shown, first;
        std::vector<RowMetrics> metrics;
        Matrix<T> mean = Matrix<T>::Zero(nQ, nK);
        for (Index u = 0; u < heads; ++u) {
            const Matrix<T> qu = q.middleCols(u * dK, dK), ku = k.middleCols(u * dK, dK);
            Matrix<T> a1;
            if (sink) {
                const SinkAttentionResult<T> r = learnedSinkAttention<T>(
                    qu, ku, value, v.sinkLogits[std::size_t(u)], mask, options);
                a1 = r.attention.weights;
                metrics.push_back(learnedSinkRowMetrics(a1.template cast<double>(),
                                                        r.sinkMass.template cast<double>(),
                                                        r.attention.fullyMasked));
            } else {
                const AttentionResult<T> r
                    = scaledDotProductAttention<T>(qu, ku, value, mask, options);
                a1 = r.weights;
                metrics.push_back(rowMetrics<double>(a1.template cast<double>(), r.fullyMasked));
            }
            Matrix<T> w = a1;
            if (differential) {
                const Matrix<T> q2 = v.query2.middleCols(u * dK, dK);
                const Matrix<T> k2 = v.key2.middleCols(u * dK, dK);
                w -= T(v.lambda[std::size_t(u)])
                    * scaledDotProductAttention<T>(q2, k2, value, mask, options).weights;
            }
            if (gate)
                w = Vector<T>(v.gate.col(u).template cast<T>()).asDiagonal() * w;
            first.push_back(a1);
            shown.push_back(w);
            mean += w / T(heads);
        }

        TileEngine<T> engine(q, k, heads, mask, options, v);
        QCOMPARE(engine.signedWeights(), differential);
        const double tol = tolerance<T>();
        const std::vector<Index> which {0, 1, 2, kHeadMean};
        std::vector<RowMetrics> got;
        const std::vector<PooledTile<T>> level0
            = engine.render(which, engine.fullWindow(),
                            tileGridWithCells(engine.fullWindow(), 1, 1), TilePooling::Max, &got);
        double largest = 0;
        for (Index u = 0; u < heads; ++u) {
            ATTN_COMPARE_CLOSE(level0[std::size_t(u)].values, shown[std::size_t(u)], tol, tol);
            const RowMetrics &m = metrics[std::size_t(u)], &g = got[std::size_t(u)];
            ATTN_COMPARE_CLOSE(g.maxWeight, m.maxWeight, tol, tol);
            ATTN_COMPARE_CLOSE(g.entropy, m.entropy, 100 * tol, 100 * tol);
            ATTN_COMPARE_CLOSE(g.jacobianNorm, m.jacobianNorm, tol, tol);
            ATTN_COMPARE_CLOSE(g.rowSumError, m.rowSumError, 10 * tol, 10 * tol);
            QCOMPARE(g.fullyMasked, m.fullyMasked);
            const double top = double(shown[std::size_t(u)].cwiseAbs().maxCoeff());
            QVERIFY2(std::abs(engine.maxWeight(u) - top) <= tol,
                     qPrintable(QStringLiteral("%1 vs %2").arg(engine.maxWeight(u)).arg(top)));
            largest = std::max(largest, top);
        }
        ATTN_COMPARE_CLOSE(level0.back().values, mean, tol, tol);
        QVERIFY(std::abs(engine.maxWeight(kHeadMean) - largest) <= tol);
        if (differential) // the signed map has negative weights to show
            QVERIFY(level0[1].values.minCoeff() < T(0));

        // Pooled grids, and windows from the kept row statistics (an engine whose rows are
        // known from one full pass), in both poolings.
        TileEngine<T> kept(q, k, heads, mask, options, v);
        kept.render(which, kept.fullWindow(), 3, 3, TilePooling::Mean);
        for (int trial = 0; trial < 6; ++trial) {
            const TileWindow win = trial == 0 ? kept.fullWindow() : randomWindow(rng, nQ, nK);
            const Index side = 1 + Index(rng.random() * 9);
            for (TilePooling pooling : {TilePooling::Max, TilePooling::Mean}) {
                const std::vector<PooledTile<T>> tiles
                    = kept.render(which, win, side, side, pooling);
                for (std::size_t n = 0; n < which.size(); ++n) {
                    const Matrix<T> &w = which[n] == kHeadMean ? mean : shown[n];
                    MatrixD values;
                    MatrixB states;
                    poolReference<T>(w, mask, win, tiles[n].grid, pooling, values, states,
                                     differential);
                    ATTN_COMPARE_CLOSE(MatrixD(tiles[n].values.template cast<double>()), values,
                                       tol, tol);
                    QCOMPARE(tiles[n].maskState, states);
                }
            }
        }

        // Cells on demand, in an engine that has computed nothing yet.
        TileEngine<T> cells(q, k, heads, mask, options, v);
        for (int trial = 0; trial < 12; ++trial) {
            const Index i = Index(rng.random() * double(nQ)), j = Index(rng.random() * double(nK));
            const Index u = trial % heads;
            const TileCell c = cells.cell(u, i, j);
            QVERIFY(std::abs(c.weight - double(shown[std::size_t(u)](i, j))) <= tol);
            QVERIFY(std::abs(c.firstWeight - double(first[std::size_t(u)](i, j))) <= tol);
            QVERIFY(std::abs(c.gate - (gate ? v.gate(i, u) : 1.0)) <= tol);
            if (sink && !metrics[std::size_t(u)].fullyMasked[std::size_t(i)])
                QVERIFY(std::abs(c.sinkMass + double(first[std::size_t(u)].row(i).sum()) - 1.0)
                        <= 10 * tol);
            const TileCell m = cells.cell(kHeadMean, i, j);
            QVERIFY(std::abs(m.weight - double(mean(i, j))) <= tol);
        }
    }

    template<typename T>
    void pooledEqualsMaterialized(Index nQ, Index nK, Index heads, Index dK, MaskKind kind,
                                  const AttentionOptions &options)
    {
        Generator rng {std::uint64_t(17 + nQ * 3 + nK * 5 + dK * 7 + int(kind))};
        const Matrix<T> q = randomMatrix<T>(rng, nQ, heads * dK, 1.0);
        const Matrix<T> k = randomMatrix<T>(rng, nK, heads * dK, 1.0);
        const AttentionMask mask = makeMask(kind, nQ, nK, rng);
        const Reference<T> ref = materialize<T>(q, k, heads, mask, options);
        TileEngine<T> engine(q, k, heads, mask, options);
        QCOMPARE(engine.scale(), ref.heads[0].scale);

        std::vector<Index> all;
        for (Index h = 0; h < heads; ++h)
            all.push_back(h);
        all.push_back(kHeadMean);
        // The first windows run before any row statistics are known (rows computed in full),
        // the later ones mostly on recorded statistics (only the window's columns computed).
        for (int trial = 0; trial < 12; ++trial) {
            const TileWindow win = randomWindow(rng, nQ, nK);
            const Index maxW = 1 + Index(rng.random() * double(2 * win.cols()));
            const Index maxH = 1 + Index(rng.random() * double(2 * win.rows()));
            const TilePooling pooling = trial % 2 ? TilePooling::Mean : TilePooling::Max;
            const bool withMetrics = trial % 3 == 0;
            std::vector<RowMetrics> metrics;
            const std::vector<PooledTile<T>> tiles
                = engine.render(all, win, maxW, maxH, pooling, withMetrics ? &metrics : nullptr);
            QCOMPARE(tiles.size(), all.size());
            const TileGrid g = tileGrid(win, maxW, maxH);
            for (std::size_t a = 0; a < all.size(); ++a) {
                const Matrix<T> &w
                    = all[a] == kHeadMean ? ref.mean : ref.heads[std::size_t(all[a])].weights;
                MatrixD values;
                MatrixB states;
                poolReference(w, mask, win, g, pooling, values, states);
                QCOMPARE(tiles[a].grid.width, g.width);
                QCOMPARE(tiles[a].grid.height, g.height);
                QCOMPARE(tiles[a].head, all[a]);
                ATTN_COMPARE_CLOSE(tiles[a].values.template cast<double>(), values, tolerance<T>(),
                                   0.0);
                QVERIFY(tiles[a].maskState == states);
                if (!withMetrics)
                    continue;
                const std::vector<std::uint8_t> &flags = ref.heads[0].fullyMasked;
                const RowMetrics m = rowMetrics(w, flags);
                const RowMetrics &got = metrics[a];
                const Index r0 = win.rowBegin, rows = win.rows();
                const double tol = tolerance<T>();
                const double rtol = sizeof(T) == 4 ? 1e-5 : 1e-12;
                ATTN_COMPARE_CLOSE(got.maxWeight, m.maxWeight.segment(r0, rows), tol, rtol);
                ATTN_COMPARE_CLOSE(got.entropy, m.entropy.segment(r0, rows), tol, rtol);
                ATTN_COMPARE_CLOSE(got.effectiveTerms, m.effectiveTerms.segment(r0, rows), tol,
                                   rtol);
                ATTN_COMPARE_CLOSE(got.jacobianNorm, m.jacobianNorm.segment(r0, rows), tol, rtol);
                ATTN_COMPARE_CLOSE(got.rowSumError, m.rowSumError.segment(r0, rows),
                                   sizeof(T) == 4 ? 1e-5 : 1e-12, 0.0);
                for (Index r = 0; r < rows; ++r)
                    QCOMPARE(got.fullyMasked[std::size_t(r)], flags[std::size_t(r0 + r)]);
            }
        }

        // Cells on demand: raw and scaled scores, weight and mask state.
        for (int trial = 0; trial < 40; ++trial) {
            const Index i = Index(rng.random() * double(nQ));
            const Index j = Index(rng.random() * double(nK));
            const Index h = Index(rng.random() * double(heads + 1)) - 1; // −1 = the mean
            const TileCell c = engine.cell(h == -1 ? kHeadMean : h, i, j);
            QCOMPARE(c.maskState, mask.state(i, j));
            const double tol = tolerance<T>();
            if (h == -1) {
                QVERIFY(!c.hasScores);
                QVERIFY2(std::abs(c.weight - double(ref.mean(i, j))) <= tol,
                         qPrintable(QString::number(c.weight - double(ref.mean(i, j)))));
                continue;
            }
            const AttentionResult<T> &r = ref.heads[std::size_t(h)];
            QVERIFY(c.hasScores);
            const double rtol = sizeof(T) == 4 ? 1e-5 : 1e-12;
            QVERIFY(std::abs(c.rawScore - double(r.scores(i, j)))
                    <= tol + rtol * std::abs(double(r.scores(i, j))));
            if (std::isinf(double(r.scaledScores(i, j))))
                QCOMPARE(c.scaledScore, double(r.scaledScores(i, j)));
            else
                QVERIFY(std::abs(c.scaledScore - double(r.scaledScores(i, j)))
                        <= tol + rtol * std::abs(double(r.scaledScores(i, j))));
            QVERIFY2(std::abs(c.weight - double(r.weights(i, j))) <= tol,
                     qPrintable(QStringLiteral("cell (%1, %2) head %3: %4 vs %5")
                                    .arg(i)
                                    .arg(j)
                                    .arg(h)
                                    .arg(c.weight, 0, 'g', 17)
                                    .arg(double(r.weights(i, j)), 0, 'g', 17)));
        }

        // Every row's metrics of one head at once.
        const RowMetrics all0 = engine.rowMetrics(0);
        const RowMetrics ref0 = rowMetrics(ref.heads[0].weights, ref.heads[0].fullyMasked);
        const double rtol = sizeof(T) == 4 ? 1e-5 : 1e-12;
        ATTN_COMPARE_CLOSE(all0.entropy, ref0.entropy, tolerance<T>(), rtol);
        ATTN_COMPARE_CLOSE(all0.jacobianNorm, ref0.jacobianNorm, tolerance<T>(), rtol);
        ATTN_COMPARE_CLOSE(all0.effectiveTerms, ref0.effectiveTerms, tolerance<T>(), rtol);
        ATTN_COMPARE_CLOSE(all0.maxWeight, ref0.maxWeight, tolerance<T>(), rtol);
    }

    void addRows()
    {
        QTest::addColumn<bool>("avx512");
        QTest::addColumn<Index>("nQ");
        QTest::addColumn<Index>("nK");
        QTest::addColumn<Index>("heads");
        QTest::addColumn<Index>("dK");
        QTest::addColumn<MaskKind>("mask");
        QTest::addColumn<int>("options"); // 0 default, 1 fill −1e9, 2 α = 0 τ = 2, 3 scale −0.3
        const struct
        {
            const char *name;
            MaskKind kind;
        } masks[] = {{"none", MaskKind::None},
                     {"causal", MaskKind::Causal},
                     {"causal-bottom-right", MaskKind::CausalBottomRight},
                     {"padding", MaskKind::Padding},
                     {"custom", MaskKind::Custom},
                     {"additive", MaskKind::Additive},
                     {"combined", MaskKind::Combined}};
        // Several row blocks and pixel columns with a partial last one; under the sanitizers
        // (several times slower) a smaller map with the same partial blocks.
        const Index bigQ = ATTN_SANITIZER_BUILD ? 211 : 611,
                    bigK = ATTN_SANITIZER_BUILD ? 300 : 700;
        for (bool avx : {true, false}) {
            const char *code = avx ? "avx512" : "eigen";
            for (const auto &m : masks) {
                QTest::addRow("%s %s %dx%d h3 dk16", code, m.name, int(bigQ), int(bigK))
                    << avx << bigQ << bigK << Index(3) << Index(16) << m.kind << 0;
                QTest::addRow("%s %s 203x77 h2 dk5", code, m.name)
                    << avx << Index(203) << Index(77) << Index(2) << Index(5) << m.kind << 0;
            }
            QTest::addRow("%s causal fill -1e9", code)
                << avx << Index(300) << Index(300) << Index(2) << Index(8) << MaskKind::Causal << 1;
            QTest::addRow("%s padding fill -1e9", code)
                << avx << Index(150) << Index(260) << Index(2) << Index(8) << MaskKind::Padding
                << 1;
            QTest::addRow("%s none alpha 0 tau 2", code)
                << avx << Index(129) << Index(131) << Index(4) << Index(3) << MaskKind::None << 2;
            QTest::addRow("%s causal scale -0.3", code)
                << avx << Index(97) << Index(97) << Index(1) << Index(32) << MaskKind::Causal << 3;
            QTest::addRow("%s none 1x33", code)
                << avx << Index(1) << Index(33) << Index(2) << Index(4) << MaskKind::None << 0;
            QTest::addRow("%s causal 37x1", code)
                << avx << Index(37) << Index(1) << Index(1) << Index(4) << MaskKind::Causal << 0;
            QTest::addRow("%s causal-bottom-right 40x9 (rows before the first key)", code)
                << avx << Index(40) << Index(9) << Index(1) << Index(4)
                << MaskKind::CausalBottomRight << 0;
        }
    }

    template<typename T> void runRow()
    {
        QFETCH(bool, avx512);
        QFETCH(Index, nQ);
        QFETCH(Index, nK);
        QFETCH(Index, heads);
        QFETCH(Index, dK);
        QFETCH(MaskKind, mask);
        QFETCH(int, options);
        InstructionSetScope scope(avx512);
        if (!scope.active())
            QSKIP("this CPU or build has no AVX-512F");
        AttentionOptions o;
        if (options == 1)
            o.maskFill = -1e9;
        else if (options == 2) {
            o.scaleExponent = 0.0;
            o.temperature = 2.0;
        } else if (options == 3)
            o.scaleOverride = -0.3;
        pooledEqualsMaterialized<T>(nQ, nK, heads, dK, mask, o);
    }

    /// Q, K with query `spikeRow` attending key `spikeCol` with weight ≈ 1 and every other query
    /// putting about half its weight on key 0 (an attention sink).
    template<typename T> static TileEngine<T> spikeAndSink(Index n, Index spikeRow, Index spikeCol)
    {
        Generator rng {std::uint64_t(99)};
        const Index d = 8;
        Matrix<T> q = randomMatrix<T>(rng, n, d, 0.3);
        Matrix<T> k = randomMatrix<T>(rng, n, d, 0.3);
        // Sink: every query has a component 1 along feature 0, key 0 a large one there.
        q.col(0).setConstant(T(1));
        k.col(0).setZero();
        k(0, 0) = T(2 * std::log(double(n)) * std::sqrt(double(d))); // exp(·/√d) ≈ n²
        // Spike: feature 1 of spikeRow very large, of spikeCol large (other queries barely see it).
        q.row(spikeRow).setZero();
        k(spikeCol, 1) = T(4);
        q(spikeRow, 1) = T(400);
        return TileEngine<T>(q, k, 1);
    }

private slots:
    void pooledEqualsMaterializedFloat64_data() { addRows(); }
    void pooledEqualsMaterializedFloat64() { runRow<double>(); }
    void pooledEqualsMaterializedFloat32_data() { addRows(); }
    void pooledEqualsMaterializedFloat32() { runRow<float>(); }

    void spikeAndSinkVisibleAtEveryZoom()
    {
        const Index n = 3001, spikeRow = 1777, spikeCol = 2222;
        TileEngine<double> engine = spikeAndSink<double>(n, spikeRow, spikeCol);
        QVERIFY(engine.cell(0, spikeRow, spikeCol).weight > 0.999);
        for (Index side : {Index(1), Index(2), Index(7), Index(64), Index(333), Index(1024), n}) {
            const PooledTile<double> max
                = engine.render(0, engine.fullWindow(), side, side, TilePooling::Max);
            const PooledTile<double> mean
                = engine.render(0, engine.fullWindow(), side, side, TilePooling::Mean);
            const Index y = (spikeRow - max.window.rowBegin) / max.grid.rowsPerPixel;
            const Index x = (spikeCol - max.window.colBegin) / max.grid.colsPerPixel;
            QVERIFY2(max.values(y, x) > 0.999, qPrintable(QString::number(side)));
            QCOMPARE(max.values.maxCoeff(), max.values(y, x));
            // The sink column (key 0) in every pixel row except the spike's: about half a row.
            for (Index r = 0; r < max.grid.height; ++r) {
                if (r == y)
                    continue;
                QVERIFY2(max.values(r, 0) > 0.3,
                         qPrintable(QStringLiteral("side %1 row %2: %3")
                                        .arg(side)
                                        .arg(r)
                                        .arg(max.values(r, 0))));
            }
            // Mean pooling dilutes the spike to ~1 / cells per pixel once zoomed out.
            const double cells = double(mean.grid.rowsPerPixel * mean.grid.colsPerPixel);
            if (cells >= 100)
                QVERIFY(mean.values(y, x) < 2.0 / cells + 0.01);
        }
        // Zoomed into a window around the spike, and a window without key 0.
        const TileWindow around {spikeRow - 100, spikeRow + 57, spikeCol - 300, spikeCol + 3};
        const PooledTile<double> z = engine.render(0, around, 16, 16, TilePooling::Max);
        QVERIFY(z.values.maxCoeff() > 0.999);
    }

    /// Every tile of every level of a pyramid, rendered on its fixed grid, equals the pooling of
    /// the materialized weights over the same pixels; a level's tiles partition the weights and
    /// their pixels start at multiples of 2^level; the largest weight is the materialized one.
    void pyramidTilesEqualMaterialized_data()
    {
        QTest::addColumn<Index>("nQ");
        QTest::addColumn<Index>("nK");
        QTest::addColumn<Index>("tilePixels");
        QTest::addColumn<MaskKind>("mask");
        QTest::newRow("70x53 t8 causal") << Index(70) << Index(53) << Index(8) << MaskKind::Causal;
        QTest::newRow("33x97 t5 custom") << Index(33) << Index(97) << Index(5) << MaskKind::Custom;
        QTest::newRow("64x64 t16 none") << Index(64) << Index(64) << Index(16) << MaskKind::None;
        QTest::newRow("41x41 t3 padding")
            << Index(41) << Index(41) << Index(3) << MaskKind::Padding;
    }
    void pyramidTilesEqualMaterialized()
    {
        QFETCH(Index, nQ);
        QFETCH(Index, nK);
        QFETCH(Index, tilePixels);
        QFETCH(MaskKind, mask);
        const Index heads = 2, dK = 4;
        Generator rng {std::uint64_t(101 + nQ + 7 * nK + int(mask))};
        const MatrixD q = randomMatrix<double>(rng, nQ, heads * dK, 1.5);
        const MatrixD k = randomMatrix<double>(rng, nK, heads * dK, 1.5);
        const AttentionMask m = makeMask(mask, nQ, nK, rng);
        const Reference<double> ref = materialize<double>(q, k, heads, m, {});
        TileEngine<double> engine(q, k, heads, m);
        QVERIFY(!engine.rowStatisticsComplete(0));
        QVERIFY_THROWS_EXCEPTION(InvalidArgument, engine.maxWeight(0));
        const TilePyramid pyramid(nQ, nK, tilePixels);
        QVERIFY(pyramid.tileCells(pyramid.topLevel()) >= std::max(nQ, nK));
        QVERIFY(pyramid.topLevel() == 0
                || pyramid.tileCells(pyramid.topLevel() - 1) < std::max(nQ, nK));
        // Top level first, as a view's first full view does: it records every row's statistics.
        for (int level = pyramid.topLevel(); level >= 0; --level) {
            const Index per = TilePyramid::cellsPerPixel(level);
            Index cells = 0;
            for (Index ty = 0; ty < pyramid.tilesDown(level); ++ty) {
                for (Index tx = 0; tx < pyramid.tilesAcross(level); ++tx) {
                    const TileWindow w = pyramid.tileWindow(level, {tx, ty});
                    const TileGrid g = pyramid.tileGrid(level, {tx, ty});
                    cells += w.rows() * w.cols();
                    QCOMPARE(w.rowBegin % per, Index(0));
                    QCOMPARE(w.colBegin % per, Index(0));
                    QVERIFY(g.width <= tilePixels && g.height <= tilePixels);
                    const std::vector<PooledTile<double>> tiles = engine.render(
                        {0, 1, kHeadMean}, w, g, tx % 2 ? TilePooling::Mean : TilePooling::Max);
                    for (std::size_t a = 0; a < 3; ++a) {
                        const MatrixD &weights = a == 2 ? ref.mean : ref.heads[a].weights;
                        MatrixD values;
                        MatrixB states;
                        poolReference(weights, m, w, g, tiles[a].pooling, values, states);
                        ATTN_COMPARE_CLOSE(tiles[a].values, values, 1e-12, 0.0);
                        QVERIFY(tiles[a].maskState == states);
                        for (Index y = 0; y < g.height; ++y)
                            QCOMPARE(tiles[a].pixelRowBegin(y) % per, Index(0));
                    }
                }
            }
            QCOMPARE(cells, nQ * nK);
            QVERIFY(engine.rowStatisticsComplete(kHeadMean));
        }
        for (Index h = 0; h < heads; ++h) {
            double best = 0;
            for (Index i = 0; i < nQ; ++i)
                for (Index j = 0; j < nK; ++j)
                    if (!m.state(i, j))
                        best = std::max(best, ref.heads[std::size_t(h)].weights(i, j));
            QVERIFY2(std::abs(engine.maxWeight(h) - best) <= 1e-12,
                     qPrintable(QString::number(engine.maxWeight(h) - best)));
        }
        QCOMPARE(engine.maxWeight(kHeadMean), std::max(engine.maxWeight(0), engine.maxWeight(1)));
    }

    void pyramidLevelsAndCovering()
    {
        const TilePyramid p(16384, 16384, 256);
        QCOMPARE(p.topLevel(), 6); // 256 · 2^6 = 16 384
        QCOMPARE(p.tilesAcross(5), Index(2));
        QCOMPARE(p.tilesDown(0), Index(64));
        // ⌈log₂⌉ of the zoom, clamped: each tile pixel takes 1 to 2 screen pixels.
        QCOMPARE(p.levelFor(0.25), 0);
        QCOMPARE(p.levelFor(1.0), 0);
        QCOMPARE(p.levelFor(1.01), 1);
        QCOMPARE(p.levelFor(2.0), 1);
        QCOMPARE(p.levelFor(20.5), 5);
        QCOMPARE(p.levelFor(1e9), 6);
        QCOMPARE(p.levelFor(std::nan("")), 0);
        // A view of 700 × 900 cells around (5000, 9000) at level 1 (512-cell tiles).
        const CellRect view {4650, 5350, 8550, 9450};
        const std::vector<TileIndex> tiles = p.tilesCovering(1, view);
        Index expected = 0;
        for (Index ty = 4650 / 512; ty <= 5349 / 512; ++ty)
            for (Index tx = 8550 / 512; tx <= 9449 / 512; ++tx, ++expected) {
                const TileIndex t {tx, ty};
                QVERIFY(std::find(tiles.begin(), tiles.end(), t) != tiles.end());
            }
        QCOMPARE(Index(tiles.size()), expected);
        // The tile holding the centre comes first; distances never decrease.
        QCOMPARE(tiles.front(), (TileIndex {9000 / 512, 5000 / 512}));
        const auto distance = [](const TileIndex &t) {
            const double dy = (double(t.ty) + 0.5) * 512 - 5000,
                         dx = (double(t.tx) + 0.5) * 512 - 9000;
            return dx * dx + dy * dy;
        };
        for (std::size_t a = 1; a < tiles.size(); ++a)
            QVERIFY(distance(tiles[a - 1]) <= distance(tiles[a]));
        // Clipped to the weights; nothing outside them.
        QCOMPARE(p.tilesCovering(6, {-100, 20000, -5, 30000}).size(), std::size_t(1));
        QVERIFY(p.tilesCovering(0, {17000, 18000, 0, 10}).empty());
        QVERIFY(p.tilesCovering(0, {10, 10, 0, 10}).empty());
        // The last tile of a level is clipped, its pixels still 2^level cells.
        const TilePyramid q(1000, 300, 64);
        const TileWindow last = q.tileWindow(2, {q.tilesAcross(2) - 1, q.tilesDown(2) - 1});
        QCOMPARE(last.rowEnd, Index(1000));
        QCOMPARE(last.colEnd, Index(300));
        QCOMPARE(last.rowBegin, Index(768));
        QCOMPARE(last.colBegin, Index(256));
        const TileGrid g = q.tileGrid(2, {1, 3});
        QCOMPARE(g.rowsPerPixel, Index(4));
        QCOMPARE(g.colsPerPixel, Index(4));
        QCOMPARE(g.height, Index(58)); // ⌈232 / 4⌉
        QCOMPARE(g.width, Index(11)); // ⌈44 / 4⌉
        QVERIFY_THROWS_EXCEPTION(InvalidArgument, q.tileWindow(2, {5, 0}));
        QVERIFY_THROWS_EXCEPTION(InvalidArgument, q.tileWindow(9, {0, 0}));
        QVERIFY_THROWS_EXCEPTION(InvalidArgument, TilePyramid(0, 5, 8));
        QVERIFY_THROWS_EXCEPTION(InvalidArgument, TilePyramid(5, 5, 0));
        QVERIFY_THROWS_EXCEPTION(InvalidArgument, tileGridWithCells({0, 4, 0, 4}, 0, 1));
        QVERIFY_THROWS_EXCEPTION(InvalidArgument, tileGridWithCells({0, 0, 0, 4}, 1, 1));
        // A grid that does not cover its window is refused.
        const MatrixD qq = MatrixD::Ones(8, 2), kk = MatrixD::Ones(8, 2);
        TileEngine<double> e(qq, kk, 1);
        TileGrid bad = tileGridWithCells({0, 8, 0, 8}, 2, 2);
        bad.width = 3; // 3 · 2 < 8
        QVERIFY_THROWS_EXCEPTION(InvalidArgument,
                                 e.render({0}, {0, 8, 0, 8}, bad, TilePooling::Max));
    }

    void badArgumentsThrow()
    {
        Generator rng {std::uint64_t(5)};
        const MatrixD q = rng.standardNormal(10, 6), k = rng.standardNormal(12, 6);
        QVERIFY_THROWS_EXCEPTION(InvalidArgument, TileEngine<double>(q, k, 4));
        QVERIFY_THROWS_EXCEPTION(InvalidArgument, TileEngine<double>(q, k, 0));
        QVERIFY_THROWS_EXCEPTION(InvalidArgument,
                                 TileEngine<double>(q, rng.standardNormal(12, 4), 2));
        QVERIFY_THROWS_EXCEPTION(InvalidArgument,
                                 TileEngine<double>(q, k, 2, AttentionMask::causal(10, 11)));
        MatrixD bad = q;
        bad(3, 4) = std::numeric_limits<double>::quiet_NaN();
        QVERIFY_THROWS_EXCEPTION(NonFiniteInput, TileEngine<double>(bad, k, 2));
        AttentionOptions fill;
        fill.maskFill = std::numeric_limits<double>::infinity();
        QVERIFY_THROWS_EXCEPTION(InvalidArgument, TileEngine<double>(q, k, 2, {}, fill));

        TileEngine<double> e(q, k, 2);
        QVERIFY_THROWS_EXCEPTION(InvalidArgument,
                                 e.render(0, TileWindow {0, 11, 0, 12}, 4, 4, TilePooling::Max));
        QVERIFY_THROWS_EXCEPTION(InvalidArgument,
                                 e.render(0, TileWindow {3, 3, 0, 12}, 4, 4, TilePooling::Max));
        QVERIFY_THROWS_EXCEPTION(InvalidArgument,
                                 e.render(0, e.fullWindow(), 0, 4, TilePooling::Max));
        QVERIFY_THROWS_EXCEPTION(InvalidArgument,
                                 e.render(2, e.fullWindow(), 4, 4, TilePooling::Max));
        QVERIFY_THROWS_EXCEPTION(InvalidArgument, e.cell(0, 10, 0));
        QVERIFY_THROWS_EXCEPTION(InvalidArgument, e.cell(-2, 0, 0));

        // Finite scores that overflow once scaled.
        AttentionOptions huge;
        huge.scaleOverride = 1e306;
        TileEngine<double> over(q * 100, k * 100, 2, {}, huge);
        QVERIFY_THROWS_EXCEPTION(NonFiniteInput,
                                 over.render(0, over.fullWindow(), 4, 4, TilePooling::Max));
    }

    // The 2025 variants in the tile engine against the full matrices of core/attention/
    // variants.h (each checked against NumPy in tst_variants): learned sinks, differential
    // attention and the head-wise gate, alone and combined, under masks with a fully masked
    // row; every pixel at level 0 and on pooled grids (signed Max pooling keeps the value of
    // largest magnitude), windows computed from kept row statistics, cells, the per-row
    // metrics (the softmax rows' over the keys and the sink) and the largest |w|.
    void variantsEqualFullMatrices_data()
    {
        QTest::addColumn<bool>("sink");
        QTest::addColumn<bool>("differential");
        QTest::addColumn<bool>("gate");
        QTest::addColumn<MaskKind>("maskKind");
        QTest::newRow("sink, custom") << true << false << false << MaskKind::Custom;
        QTest::newRow("sink, causal") << true << false << false << MaskKind::Causal;
        QTest::newRow("differential, padding") << false << true << false << MaskKind::Padding;
        QTest::newRow("differential, custom") << false << true << false << MaskKind::Custom;
        QTest::newRow("gate, causal") << false << false << true << MaskKind::Causal;
        QTest::newRow("sink + gate, combined") << true << false << true << MaskKind::Combined;
        QTest::newRow("differential + gate, none") << false << true << true << MaskKind::None;
    }
    void variantsEqualFullMatrices()
    {
        variantsEqualFullMatrices<double>();
        variantsEqualFullMatrices<float>();
    }

    void variantArgumentsThrow()
    {
        Generator rng {std::uint64_t(8)};
        const MatrixD q = rng.standardNormal(6, 4), k = rng.standardNormal(7, 4);
        const auto make = [&](TileVariants<double> v, AttentionOptions o = {}) {
            return TileEngine<double>(q, k, 2, {}, o, std::move(v));
        };
        TileVariants<double> v;
        v.sinkLogits = {0.5};
        QVERIFY_THROWS_EXCEPTION(InvalidArgument, make(v)); // one logit for two heads
        v.sinkLogits = {0.5, std::numeric_limits<double>::quiet_NaN()};
        QVERIFY_THROWS_EXCEPTION(InvalidArgument, make(v));
        v.sinkLogits = {0.5, 1.0};
        AttentionOptions finiteFill;
        finiteFill.maskFill = -1e9;
        QVERIFY_THROWS_EXCEPTION(InvalidArgument, make(v, finiteFill));
        v.query2 = q;
        v.key2 = k;
        v.lambda = {0.5, 0.5};
        QVERIFY_THROWS_EXCEPTION(InvalidArgument, make(v)); // sink with differential
        v.sinkLogits.clear();
        v.key2 = rng.standardNormal(7, 2);
        QVERIFY_THROWS_EXCEPTION(InvalidArgument, make(v)); // key2 not shaped as key
        v.key2 = k;
        v.lambda = {0.5};
        QVERIFY_THROWS_EXCEPTION(InvalidArgument, make(v)); // one λ for two heads
        v.lambda = {0.5, std::numeric_limits<double>::infinity()};
        QVERIFY_THROWS_EXCEPTION(InvalidArgument, make(v));
        v.lambda = {0.5, -0.25};
        QCOMPARE(make(v).signedWeights(), true);
        TileVariants<double> g;
        g.gate = MatrixD::Constant(6, 2, 0.5);
        g.gate(3, 1) = 1.5;
        QVERIFY_THROWS_EXCEPTION(InvalidArgument, make(g));
        g.gate = MatrixD::Constant(5, 2, 0.5);
        QVERIFY_THROWS_EXCEPTION(InvalidArgument, make(g));
        g.gate = MatrixD::Constant(6, 2, 0.5);
        QCOMPARE(make(g).hasVariants(), true);
        QCOMPARE(make(g).signedWeights(), false);
    }

    void cancelStops()
    {
        Generator rng {std::uint64_t(6)};
        TileEngine<float> e(randomMatrix<float>(rng, 500, 8, 1.0),
                            randomMatrix<float>(rng, 500, 8, 1.0), 1);
        std::atomic<bool> cancel {true};
        QVERIFY_THROWS_EXCEPTION(
            Cancelled, e.render({0}, e.fullWindow(), 50, 50, TilePooling::Max, nullptr, &cancel));
        cancel = false;
        QCOMPARE(e.render({0}, e.fullWindow(), 50, 50, TilePooling::Max, nullptr, &cancel)
                     .front()
                     .grid.width,
                 Index(50));
    }

    void heldBytesCountsNoSquareMatrix()
    {
        // n = 65 536, one head of 64: Q, K (+ packed Kᵀ) and row blocks, far below n² floats.
        const std::size_t held = TileEngine<float>::heldBytes(65536, 65536, 1, 64, 4);
        QVERIFY(held < (std::size_t(256) << 20));
        QVERIFY(held >= std::size_t(2) * 65536 * 64 * 4);
        QCOMPARE(TileEngine<float>::imageBytes(1024, 512, 4), std::size_t(1024) * 512 * 5);
    }
};

QTEST_GUILESS_MAIN(TestTiles)
#include "tst_tiles.moc"
