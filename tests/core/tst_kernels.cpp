// The three attention kernels (core/kernels/kernels.h) agree with each other and with
// scaledDotProductAttention: float32 and float64, no mask / causal / key padding / custom /
// additive, n from 1 to 2048 with odd head dimensions, cross-attention, every streaming tile.

#include "core/attention/attention.h"
#include "core/io/npy.h"
#include "core/kernels/avx512.h"
#include "core/kernels/kernels.h"
#include "core/random/random.h"
#include "testutil.h"

#include <QTest>

#include <cmath>
#include <limits>
#include <map>
#include <thread>
#include <type_traits>
#include <utility>
#include <vector>

using namespace attn;

namespace {

enum class MaskKind { None, Causal, CausalBottomRight, Padding, Custom, Additive, Combined };

const char *maskName(MaskKind m)
{
    switch (m) {
    case MaskKind::None:
        return "none";
    case MaskKind::Causal:
        return "causal";
    case MaskKind::CausalBottomRight:
        return "causal-bottom-right";
    case MaskKind::Padding:
        return "padding";
    case MaskKind::Custom:
        return "custom";
    case MaskKind::Additive:
        return "additive";
    case MaskKind::Combined:
        return "causal|padding|custom";
    }
    return "?";
}

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
    return sizeof(T) == 4 ? 1e-5 : 1e-12;
}

} // namespace

Q_DECLARE_METATYPE(MaskKind)

class TestKernels : public QObject
{
    Q_OBJECT

private:
    template<typename T>
    void agree(Index nQ, Index nK, Index dK, Index dV, MaskKind kind, Index tile)
    {
        Generator rng {std::uint64_t(1000 + nQ + 7 * nK + 31 * dK)};
        const Matrix<T> q = rng.standardNormal(nQ, dK).cast<T>();
        const Matrix<T> k = rng.standardNormal(nK, dK).cast<T>();
        const Matrix<T> v = rng.standardNormal(nK, dV).cast<T>();
        const AttentionMask mask = makeMask(kind, nQ, nK, rng);
        const T scale = T(1.0 / std::sqrt(double(dK)));

        Matrix<T> loopWeights, matWeights;
        const Matrix<T> loop = attentionLoop<T>(q, k, v, scale, mask, &loopWeights);
        const Matrix<T> mat = attentionMaterialized<T>(q, k, v, scale, mask, &matWeights);
        const Matrix<T> str = attentionStreaming<T>(q, k, v, scale, mask, tile);
        QCOMPARE(loop.rows(), nQ);
        QCOMPARE(loop.cols(), dV);
        ATTN_COMPARE_CLOSE(mat, loop, tolerance<T>(), 0.0);
        ATTN_COMPARE_CLOSE(str, loop, tolerance<T>(), 0.0);
        ATTN_COMPARE_CLOSE(matWeights, loopWeights, tolerance<T>(), 0.0);

        // Masked weights are exactly zero; fully masked rows give a zero output everywhere.
        for (Index i = 0; i < nQ; ++i) {
            bool any = false;
            for (Index j = 0; j < nK; ++j) {
                if (mask.isMasked(i, j)) {
                    QCOMPARE(matWeights(i, j), T(0));
                    QCOMPARE(loopWeights(i, j), T(0));
                } else {
                    any = true;
                }
            }
            if (!any) {
                QCOMPARE(loop.row(i).cwiseAbs().sum(), T(0));
                QCOMPARE(mat.row(i).cwiseAbs().sum(), T(0));
                QCOMPARE(str.row(i).cwiseAbs().sum(), T(0));
            } else {
                QVERIFY(std::abs(double(matWeights.row(i).sum()) - 1.0) <= tolerance<T>());
            }
        }

        // And with scaledDotProductAttention (independent GEMM + softmax path), small cases.
        if (nQ * nK <= 300 * 300) {
            AttentionOptions o;
            o.scaleOverride = double(scale);
            const AttentionResult<T> r = scaledDotProductAttention<T>(q, k, v, mask, o);
            ATTN_COMPARE_CLOSE(r.output, loop, tolerance<T>(), 0.0);
            ATTN_COMPARE_CLOSE(r.weights, loopWeights, tolerance<T>(), 0.0);
        }
        // The dispatcher calls the same kernels.
        ATTN_COMPARE_CLOSE(attentionKernel<T>(KernelKind::Streaming, q, k, v, scale, mask), loop,
                           tolerance<T>(), 0.0);
    }

    template<typename T> void checkAvx512Exp()
    {
#ifdef ATTN_HAVE_AVX512_KERNELS
        const InstructionSetScope scope(true);
        if (!scope.active())
            QSKIP("this CPU has no AVX-512F");
        using Limits = std::numeric_limits<T>;
        const bool f32 = std::is_same_v<T, float>;
        // Below `zeroUnder` exp is under half the smallest subnormal: 0.
        const long double zeroUnder = f32 ? -103.98L : -745.14L;
        const long double subnormalStep = Limits::denorm_min();
        std::vector<T> x;
        for (long double t = f32 ? -120.0L : -760.0L; t <= 0.0L; t += f32 ? 0.0137L : 0.0913L)
            x.push_back(T(t));
        for (T special : {-Limits::infinity(), T(-1e9), T(-104.0), T(-103.9), T(-87.5), T(-87.3),
                          T(-745.2), T(-745.0), T(-708.5), T(-708.3), T(0.0), T(-0.0), T(1e-30)})
            x.push_back(special);
        if (x.size() % 2 == 1)
            x.push_back(T(-1.0));
        for (const T scale : {T(1.0), T(0.125)}) {
            for (const T shift : {T(0.0), T(3.5)}) {
                std::vector<T> e = x;
                // An odd length (main loop, masked tail); the last entry stays out.
                const Index n = Index(e.size()) - 1;
                const T sum = detail::avx512::expShiftSum(e.data(), n, shift, scale);
                long double expectedSum = 0.0L;
                for (Index j = 0; j < n; ++j) {
                    const T xj = x[std::size_t(j)];
                    // The kernel's argument: x·scale − shift with one rounding (FMA; exact in
                    // long double for these scales and shifts).
                    const T arg = T((long double)xj * scale - shift);
                    const long double want = T(std::exp((long double)arg)); // rounded to T
                    const long double got = e[std::size_t(j)];
                    expectedSum += want;
                    if (xj == -Limits::infinity() || arg < zeroUnder) {
                        QVERIFY2(
                            got == 0.0L,
                            qPrintable(
                                QStringLiteral("exp(%1) = %2").arg(double(arg)).arg(double(got))));
                        continue;
                    }
                    const long double tol = want >= (long double)Limits::min()
                        ? 2.0L * Limits::epsilon() * want
                        : subnormalStep;
                    QVERIFY2(std::abs(got - want) <= tol,
                             qPrintable(QStringLiteral("exp(%1) = %2, want %3")
                                            .arg(double(arg), 0, 'g', 17)
                                            .arg(double(got), 0, 'g', 17)
                                            .arg(double(want), 0, 'g', 17)));
                }
                QVERIFY(std::abs((long double)sum - expectedSum)
                        <= 4.0L * Limits::epsilon() * n * expectedSum);
                QCOMPARE(e[std::size_t(n)], x[std::size_t(n)]); // past n: untouched
            }
        }
        // rowMax and the suspicious flag on every tail length.
        for (Index n = 0; n <= 40; ++n) {
            std::vector<T> row(std::size_t(n) + 1, T(-5));
            if (n > 0)
                row[std::size_t(n - 1)] = T(2);
            row[std::size_t(n)] = T(100); // past n: ignored
            bool suspicious = true;
            const T mx = detail::avx512::rowMax(row.data(), n, suspicious);
            QCOMPARE(mx, n > 0 ? T(2) : -Limits::infinity());
            QVERIFY(!suspicious);
            if (n > 0) {
                row[0] = Limits::quiet_NaN();
                detail::avx512::rowMax(row.data(), n, suspicious);
                QVERIFY(suspicious);
            }
        }
#else
        QSKIP("built without the AVX-512 code (not x86-64)");
#endif
    }

    template<typename T> void shapeErrors()
    {
        const Matrix<T> q = Matrix<T>::Ones(5, 4), k = Matrix<T>::Ones(5, 8),
                        v = Matrix<T>::Ones(5, 3), v6 = Matrix<T>::Ones(6, 3);
        for (KernelKind kind :
             {KernelKind::Materialized, KernelKind::Streaming, KernelKind::Loop}) {
            try {
                attentionKernel<T>(kind, q, k, v, T(1));
                QFAIL("no exception for mismatched d_k");
            } catch (const InvalidArgument &e) {
                QVERIFY2(
                    QString::fromUtf8(e.what()).contains(QStringLiteral(
                        "key has d_k = 8 but query has d_k = 4 (query 5\u00d74, key 5\u00d78)")),
                    e.what());
            }
            QVERIFY_THROWS_EXCEPTION(InvalidArgument, attentionKernel<T>(kind, q, q, v6, T(1)));
            QVERIFY_THROWS_EXCEPTION(
                InvalidArgument,
                attentionKernel<T>(kind, q, q, v, T(1), AttentionMask::causal(5, 4)));
            Matrix<T> bad = q;
            bad(1, 2) = std::numeric_limits<T>::quiet_NaN();
            try {
                attentionKernel<T>(kind, q, bad, v, T(1));
                QFAIL("no exception for NaN");
            } catch (const NonFiniteInput &e) {
                QVERIFY2(QString::fromUtf8(e.what()).contains(
                             QStringLiteral("key has NaN at row 1, col 2")),
                         e.what());
            }
        }
        QVERIFY_THROWS_EXCEPTION(InvalidArgument, attentionStreaming<T>(q, q, v, T(1), {}, 0));
    }

private slots:
    void agreement_data()
    {
        QTest::addColumn<bool>("float32");
        QTest::addColumn<int>("n");
        QTest::addColumn<int>("d");
        QTest::addColumn<MaskKind>("mask");
        const MaskKind masks[]
            = {MaskKind::None, MaskKind::Causal, MaskKind::Padding, MaskKind::Custom};
        for (bool f32 : {true, false}) {
            for (int n : {1, 2, 7, 64, 129, 1000, 2048}) {
                // Under the sanitizers the oracle at n = 2048 takes minutes; 1000 already spans
                // several tiles of every kernel.
                if (ATTN_SANITIZER_BUILD && n > 1000)
                    continue;
                const int d = n >= 1000 ? 17 : 33; // odd head dims; smaller for the big n
                for (MaskKind m : masks)
                    QTest::addRow("%s n=%d d=%d %s", f32 ? "float32" : "float64", n, d, maskName(m))
                        << f32 << n << d << m;
            }
        }
        for (bool f32 : {true, false})
            for (MaskKind m : {MaskKind::Additive, MaskKind::Combined})
                QTest::addRow("%s n=77 d=9 %s", f32 ? "float32" : "float64", maskName(m))
                    << f32 << 77 << 9 << m;
    }
    void agreement()
    {
        QFETCH(bool, float32);
        QFETCH(int, n);
        QFETCH(int, d);
        QFETCH(MaskKind, mask);
        if (float32)
            agree<float>(n, n, d, d, mask, kDefaultStreamingTile);
        else
            agree<double>(n, n, d, d, mask, kDefaultStreamingTile);
    }

    void crossAttention_data()
    {
        QTest::addColumn<bool>("float32");
        QTest::addColumn<int>("nQ");
        QTest::addColumn<int>("nK");
        QTest::addColumn<MaskKind>("mask");
        for (bool f32 : {true, false}) {
            const char *t = f32 ? "float32" : "float64";
            for (MaskKind m : {MaskKind::None, MaskKind::Causal, MaskKind::CausalBottomRight,
                               MaskKind::Padding, MaskKind::Combined}) {
                QTest::addRow("%s 37x300 %s", t, maskName(m)) << f32 << 37 << 300 << m;
                QTest::addRow("%s 300x37 %s", t, maskName(m)) << f32 << 300 << 37 << m;
            }
        }
    }
    void crossAttention()
    {
        QFETCH(bool, float32);
        QFETCH(int, nQ);
        QFETCH(int, nK);
        QFETCH(MaskKind, mask);
        // d_k ≠ d_v on purpose (d_v = 16 takes the AVX-512 path of native float32 builds).
        if (float32)
            agree<float>(nQ, nK, 12, 16, mask, 64);
        else
            agree<double>(nQ, nK, 12, 5, mask, 64);
    }

    void vectorWidths_data()
    {
        // d_v a multiple of 16 (the AVX-512 float32 code takes these on CPUs with AVX-512F:
        // 1–4 vector registers per row and a second 64-column pass for 80 and 128) with odd d_k;
        // both with the AVX-512 code (float64: its row passes) and with Eigen's (the portable
        // fallback).
        QTest::addColumn<QString>("isa");
        QTest::addColumn<bool>("float32");
        QTest::addColumn<int>("n");
        QTest::addColumn<int>("dK");
        QTest::addColumn<int>("dV");
        QTest::addColumn<MaskKind>("mask");
        QTest::addColumn<int>("tile");
        const std::pair<const char *, bool> types[] = {{"float32 avx512", true},
                                                       {"float32 eigen", true},
                                                       {"float64 avx512", false},
                                                       {"float64 eigen", false}};
        for (const auto &[t, f32] : types) {
            const QString isa = QString::fromLatin1(t).section(QLatin1Char(' '), 1);
            for (int dV : {16, 48, 64, 80, 128})
                for (MaskKind m : {MaskKind::None, MaskKind::Causal, MaskKind::Custom})
                    QTest::addRow("%s n=301 d_k=33 d_v=%d %s", t, dV, maskName(m))
                        << isa << f32 << 301 << 33 << dV << m << 128;
            QTest::addRow("%s n=64 d_k=1 d_v=32 tile 50", t)
                << isa << f32 << 64 << 1 << 32 << MaskKind::Padding << 50;
            const int nLong = ATTN_SANITIZER_BUILD ? 700 : 2048;
            QTest::addRow("%s n=%d d_k=63 d_v=64 causal", t, nLong)
                << isa << f32 << nLong << 63 << 64 << MaskKind::Causal << 128;
            QTest::addRow("%s n=1000 d_k=64 d_v=64 none tile 96", t)
                << isa << f32 << 1000 << 64 << 64 << MaskKind::None << 96;
            QTest::addRow("%s n=200 d_k=64 d_v=64 additive", t)
                << isa << f32 << 200 << 64 << 64 << MaskKind::Additive << 64;
            QTest::addRow("%s n=77 d_k=16 d_v=16 combined tile 20", t)
                << isa << f32 << 77 << 16 << 16 << MaskKind::Combined << 20;
        }
    }
    void vectorWidths()
    {
        QFETCH(QString, isa);
        QFETCH(bool, float32);
        QFETCH(int, n);
        QFETCH(int, dK);
        QFETCH(int, dV);
        QFETCH(MaskKind, mask);
        QFETCH(int, tile);
        const InstructionSetScope scope(isa == QLatin1String("avx512"));
        if (!isa.isEmpty() && !scope.active())
            QSKIP("this CPU or build has no AVX-512F");
        if (float32)
            agree<float>(n, n, dK, dV, mask, tile);
        else
            agree<double>(n, n, dK, dV, mask, tile);
    }

    void torchReference_data()
    {
        // tests/reference/make_kernel_fixtures.py: torch.softmax(Q Kᵀ · scale + mask) @ V in
        // float64 from the stored inputs. Every kernel on both code paths.
        QTest::addColumn<QString>("fixture");
        QTest::addColumn<QString>("kernel");
        QTest::addColumn<bool>("avx512");
        for (const char *fixture : {"plain_float64", "plain_float32", "causal_float32",
                                    "cross_padding_float32", "cross_causal_float64"})
            for (const char *kernel : {"materialized", "streaming", "loop"})
                for (const bool avx512 : {true, false})
                    QTest::addRow("%s %s %s", fixture, kernel, avx512 ? "avx512" : "eigen")
                        << QString::fromLatin1(fixture) << QString::fromLatin1(kernel) << avx512;
    }
    void torchReference()
    {
        QFETCH(QString, fixture);
        QFETCH(QString, kernel);
        QFETCH(bool, avx512);
        const InstructionSetScope scope(avx512);
        if (!scope.active())
            QSKIP("this CPU or build has no AVX-512F");
        std::map<std::string, NpyArray> c;
        for (auto &[member, array] :
             readNpz(QStringLiteral(ATTN_FIXTURE_DIR "/kernels/%1.npz").arg(fixture).toStdString()))
            c.emplace(member, std::move(array));
        const Index nQ = Index(c.at("query").shape[0]);
        const Index nK = Index(c.at("key").shape[0]);
        AttentionMask mask;
        if (c.at("causal").toScalarInt("causal") != 0)
            mask = AttentionMask::causal(nQ, nK);
        if (const Index padding = Index(c.at("padding").toScalarInt("padding")); padding > 0)
            mask = mask | AttentionMask::keyPaddingLast(nQ, nK, padding);
        const MatrixD expected = c.at("expected_output").toMatrix<double>("expected_output");
        const KernelKind kind = kernelFromName(kernel.toStdString());
        if (c.at("query").type == NpyType::Float32) {
            const MatrixF out = attentionKernel<float>(
                kind, c.at("query").toMatrix<float>("query"), c.at("key").toMatrix<float>("key"),
                c.at("value").toMatrix<float>("value"), float(c.at("scale").values.at(0)), mask);
            ATTN_COMPARE_CLOSE(out.cast<double>().eval(), expected, 1e-5, 0.0);
        } else {
            const MatrixD out = attentionKernel<double>(
                kind, c.at("query").toMatrix<double>("query"), c.at("key").toMatrix<double>("key"),
                c.at("value").toMatrix<double>("value"), c.at("scale").values.at(0), mask);
            ATTN_COMPARE_CLOSE(out, expected, 1e-12, 0.0);
        }
    }

    void avx512Exp_data()
    {
        QTest::addColumn<bool>("float32");
        QTest::newRow("float32") << true;
        QTest::newRow("float64") << false;
    }
    void avx512Exp()
    {
        // The exp of the AVX-512 row passes against a correctly rounded exp (long double):
        // within 2 ulps for normal results, within one subnormal step below the smallest normal,
        // exactly 0 for −inf, a −1e9 fill and everything under the last subnormal.
        QFETCH(bool, float32);
        if (float32)
            checkAvx512Exp<float>();
        else
            checkAvx512Exp<double>();
    }

    void instructionSetSwitch()
    {
        // ATTN_NO_AVX512 / setAvx512KernelsEnabled select the float32 code; "eigen" is always
        // available and both give the same numbers (within 1e-5).
        const bool had = kernelInstructionSet() == "avx512";
        QVERIFY(!setAvx512KernelsEnabled(false));
        QCOMPARE(kernelInstructionSet(), std::string_view("eigen"));
        Generator rng(8);
        const MatrixF q = rng.standardNormal(300, 64).cast<float>();
        const MatrixF k = rng.standardNormal(300, 64).cast<float>();
        const MatrixF v = rng.standardNormal(300, 64).cast<float>();
        const MatrixF eigen = attentionMaterialized<float>(q, k, v, 0.125f);
        const bool avx = setAvx512KernelsEnabled(true);
        QCOMPARE(kernelInstructionSet(), std::string_view(avx ? "avx512" : "eigen"));
        ATTN_COMPARE_CLOSE(attentionMaterialized<float>(q, k, v, 0.125f), eigen, 1e-5, 0.0);
        ATTN_COMPARE_CLOSE(attentionStreaming<float>(q, k, v, 0.125f), eigen, 1e-5, 0.0);
        setAvx512KernelsEnabled(had);
    }

    void streamingTiles_data()
    {
        QTest::addColumn<int>("tile");
        QTest::addColumn<MaskKind>("mask");
        for (int tile : {1, 3, 16, 50, 128, 200, 1000})
            for (MaskKind m : {MaskKind::None, MaskKind::Causal, MaskKind::Custom})
                QTest::addRow("tile %d %s", tile, maskName(m)) << tile << m;
    }
    void streamingTiles()
    {
        QFETCH(int, tile);
        QFETCH(MaskKind, mask);
        agree<double>(150, 150, 8, 8, mask, tile);
    }

    void unusualScales_data()
    {
        QTest::addColumn<double>("scale");
        QTest::addColumn<MaskKind>("mask");
        for (double scale : {0.0, -0.7, 3.0})
            for (MaskKind m : {MaskKind::None, MaskKind::Causal, MaskKind::Custom})
                QTest::addRow("scale %g %s", scale, maskName(m)) << scale << m;
    }
    void unusualScales()
    {
        // Scale 0 (uniform weights), a negative override and a temperature below 1: the fast
        // kernels fold a positive scale into the exponent and must not do so otherwise.
        QFETCH(double, scale);
        QFETCH(MaskKind, mask);
        Generator rng {55};
        const Index n = 90;
        const MatrixD q = rng.standardNormal(n, 7), k = rng.standardNormal(n, 7),
                      v = rng.standardNormal(n, 5);
        const AttentionMask m = makeMask(mask, n, n, rng);
        MatrixD loopWeights, matWeights;
        const MatrixD loop = attentionLoop<double>(q, k, v, scale, m, &loopWeights);
        ATTN_COMPARE_CLOSE(attentionMaterialized<double>(q, k, v, scale, m, &matWeights), loop,
                           1e-12, 0.0);
        ATTN_COMPARE_CLOSE(matWeights, loopWeights, 1e-12, 0.0);
        ATTN_COMPARE_CLOSE(attentionStreaming<double>(q, k, v, scale, m, 32), loop, 1e-12, 0.0);
        if (scale == 0.0 && mask == MaskKind::None)
            QVERIFY(std::abs(loopWeights(3, 4) - 1.0 / n) <= 1e-15);
    }

    void reusedWeightsMatrix()
    {
        // A caller may pass the same weights matrix again (no reallocation); results are
        // recomputed, not accumulated, and a different shape is resized.
        Generator rng {56};
        const MatrixF q = rng.standardNormal(50, 8).cast<float>();
        const MatrixF k = rng.standardNormal(60, 8).cast<float>();
        const MatrixF v = rng.standardNormal(60, 3).cast<float>();
        MatrixF w = MatrixF::Constant(50, 60, 7.0f), ref;
        const float *before = w.data();
        const MatrixF loop = attentionLoop<float>(q, k, v, 0.5f, {}, &ref);
        attentionMaterialized<float>(q, k, v, 0.5f, {}, &w);
        QCOMPARE(w.data(), before);
        ATTN_COMPARE_CLOSE(w, ref, 1e-6, 0.0);
        attentionMaterialized<float>(q, k, v, 0.5f, {}, &w);
        ATTN_COMPARE_CLOSE(w, ref, 1e-6, 0.0);
        attentionMaterialized<float>(q.topRows(20), k, v, 0.5f, {}, &w);
        QCOMPARE(w.rows(), Index(20));
        // The scratch buffer of the weight-less call can be released and re-created.
        releaseKernelWorkspace();
        ATTN_COMPARE_CLOSE(attentionMaterialized<float>(q, k, v, 0.5f), loop, 1e-6, 0.0);
        releaseKernelWorkspace();
    }

    void overflowIsReported()
    {
        // Finite inputs whose scaled scores overflow float32 are reported by every kernel.
        const MatrixF q = MatrixF::Constant(3, 4, 1e19f);
        for (KernelKind kind :
             {KernelKind::Materialized, KernelKind::Streaming, KernelKind::Loop}) {
            QVERIFY_THROWS_EXCEPTION(NonFiniteInput, attentionKernel<float>(kind, q, q, q, 1.0f));
            // Scores 4e38 · 0.5 are finite in float before scaling only in double; a scale > 1
            // pushes finite float scores over the edge.
            const MatrixF q2 = MatrixF::Constant(3, 4, 9e18f); // q·k = 3.24e38 (finite)
            QVERIFY_THROWS_EXCEPTION(NonFiniteInput,
                                     attentionKernel<float>(kind, q2, q2, q2, 2.0f));
        }
    }

    void largeScoresStayStable()
    {
        // Unscaled attention with large dot products (d_k = 1024, scale 1, scores of order
        // ±100): the online softmax rescales its running sums many times and still agrees with
        // the loop. Inputs are small integers so every score is exact in float32 too (|s| <
        // 2^24) and the comparison measures the softmax, not the rounding of the dot products.
        Generator rng {77};
        MatrixD q = rng.standardNormal(40, 1024), k = rng.standardNormal(300, 1024);
        q = (q * 1.5).array().round().matrix();
        k = (k * 1.5).array().round().matrix();
        const MatrixD v = rng.standardNormal(300, 3);
        const MatrixD loop = attentionLoop<double>(q, k, v, 1.0);
        QVERIFY(loop.allFinite());
        ATTN_COMPARE_CLOSE(attentionStreaming<double>(q, k, v, 1.0, {}, 16), loop, 1e-12, 0.0);
        ATTN_COMPARE_CLOSE(attentionMaterialized<double>(q, k, v, 1.0), loop, 1e-12, 0.0);
        const MatrixF qf = q.cast<float>(), kf = k.cast<float>(), vf = v.cast<float>();
        const MatrixF loopF = attentionLoop<float>(qf, kf, vf, 1.0f);
        ATTN_COMPARE_CLOSE(loopF, loop, 1e-5, 0.0);
        ATTN_COMPARE_CLOSE(attentionStreaming<float>(qf, kf, vf, 1.0f, {}, 16), loopF, 1e-5, 0.0);
        ATTN_COMPARE_CLOSE(attentionMaterialized<float>(qf, kf, vf, 1.0f), loopF, 1e-5, 0.0);
    }

    void shapeAndFiniteErrors()
    {
        shapeErrors<float>();
        shapeErrors<double>();
    }

    void names()
    {
        for (KernelKind k : {KernelKind::Materialized, KernelKind::Streaming, KernelKind::Loop})
            QCOMPARE(kernelFromName(kernelName(k)), k);
        QCOMPARE(kernelName(KernelKind::Streaming), std::string_view("streaming"));
        try {
            kernelFromName("flash");
            QFAIL("no exception");
        } catch (const InvalidArgument &e) {
            QVERIFY(QString::fromUtf8(e.what()).contains(QStringLiteral("materialized")));
        }
    }

    void extraBytes()
    {
        // Materialized: the n² score matrix (2 GiB at n = 16384 in float64) …
        QCOMPARE(kernelExtraBytes(KernelKind::Materialized, 16384, 16384, 64, 8),
                 std::size_t(2) << 30);
        // … in float32 1 GiB, plus Kᵀ packed for the AVX-512 micro-kernels in native builds.
        const std::size_t m32 = kernelExtraBytes(KernelKind::Materialized, 16384, 16384, 64, 4);
        QVERIFY(m32 == std::size_t(1) << 30 || m32 == (std::size_t(1) << 30) + 16384 * 64 * 4);
        QCOMPARE(kernelExtraBytes(KernelKind::Loop, 100, 300, 64, 8), std::size_t(300 * 8));
        // Streaming: per-thread buffers independent of n (the packed keys grow as n·d).
        const std::size_t s1 = kernelExtraBytes(KernelKind::Streaming, 4096, 4096, 64, 8);
        const std::size_t s2 = kernelExtraBytes(KernelKind::Streaming, 16384, 16384, 64, 8);
        QCOMPARE(s1, s2);
        QCOMPARE(s2,
                 std::size_t((128 * 128 + 128 * 64 + 3 * 128) * 8) * std::size_t(kernelThreads()));
        // Under 32 MiB at n = 16384 (the window's budget for long sequences) in float32 too.
        QVERIFY(kernelExtraBytes(KernelKind::Streaming, 16384, 16384, 64, 4) < std::size_t(32)
                    << 20);
    }

    // timings_invert_under_load (new-user trial): small problems now run on the calling thread
    // alone; the thread count is set for this thread only and restored afterwards.
    void threadPolicy()
    {
        const Index all = kernelThreads();
        QVERIFY(all >= 1);
        // 4·n²·d flops: n = 256, d = 64 is 1.7e7 (one thread), n = 512 is 6.7e7 (all).
        QCOMPARE(kernelThreadsFor(256, 256, 64, 64), Index(1));
        QCOMPARE(kernelThreadsFor(512, 512, 64, 64), all);
        QCOMPARE(kernelThreadsFor(0, 0, 64, 64), Index(1));
        {
            const ScopedKernelThreads one(1);
            QCOMPARE(kernelThreads(), Index(1));
            {
                const ScopedKernelThreads three(3);
                QCOMPARE(kernelThreads(), Index(3));
            }
            QCOMPARE(kernelThreads(), Index(1));
            // Another thread keeps its own setting.
            Index other = 0;
            std::thread t([&other] { other = kernelThreads(); });
            t.join();
            QVERIFY(other >= 1);
        }
        QCOMPARE(kernelThreads(), all);
        // A small and a large kernel call leave the caller's setting as it was, and agree.
        Generator rng(3);
        for (const Index n : {Index(64), Index(600)}) {
            const MatrixD q = rng.standardNormal(n, 64);
            const MatrixD k = rng.standardNormal(n, 64);
            const MatrixD v = rng.standardNormal(n, 64);
            const MatrixD m = attentionMaterialized<double>(q, k, v, 0.125);
            QCOMPARE(kernelThreads(), all);
            const MatrixD st = attentionStreaming<double>(q, k, v, 0.125);
            QCOMPARE(kernelThreads(), all);
            const MatrixD loop = attentionLoop<double>(q, k, v, 0.125);
            ATTN_COMPARE_CLOSE(m, loop, 1e-12, 0.0);
            ATTN_COMPARE_CLOSE(st, loop, 1e-12, 0.0);
        }
    }
};

QTEST_APPLESS_MAIN(TestKernels)
#include "tst_kernels.moc"
