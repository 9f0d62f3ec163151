// `attnlab compute` end to end: runs the built executable (ATTNLAB_EXE) with
// QProcess on the PyTorch fixtures of tests/reference/fixtures/torch/ (written by
// tests/reference/make_torch_fixtures.py) and compares what it writes with PyTorch's
// expected_output / expected_weights; every error path exits 2, names the problem and writes
// nothing.

#include "testutil.h"

#include "core/io/npy.h"

#include <QDir>
#include <QFile>
#include <QFileInfo>
#include <QObject>
#include <QProcess>
#include <QTemporaryDir>
#include <QTest>

#include <sys/resource.h>

#include <cmath>
#include <limits>
#include <map>
#include <string>

using namespace attn;

namespace {

using Arrays = std::map<std::string, NpyArray>;

QString fixturePath(const QString &name)
{
    return QStringLiteral(ATTN_FIXTURE_DIR "/torch/%1.npz").arg(name);
}

Arrays load(const QString &path)
{
    Arrays arrays;
    for (auto &[name, array] : readNpz(path.toStdString()))
        arrays.emplace(name, std::move(array));
    return arrays;
}

void save(const QString &path, const Arrays &arrays)
{
    std::vector<std::pair<std::string, NpyArray>> members(arrays.begin(), arrays.end());
    writeNpz(path.toStdString(), members, false);
}

struct Run
{
    int exitCode = -1;
    QString out, err;
};

Run runCompute(const QStringList &arguments)
{
    QProcess p;
    p.setProgram(QStringLiteral(ATTNLAB_EXE));
    p.setArguments(QStringList {QStringLiteral("compute")} + arguments);
    p.start();
    Run r;
    if (!p.waitForFinished(60000) || p.exitStatus() != QProcess::NormalExit)
        return r;
    r.exitCode = p.exitCode();
    r.out = QString::fromUtf8(p.readAllStandardOutput());
    r.err = QString::fromUtf8(p.readAllStandardError());
    return r;
}

// Per-row references computed here from PyTorch's weights (a probability row p).
double maxOf(const RowVector<double> &p)
{
    return p.maxCoeff();
}
double entropyOf(const RowVector<double> &p)
{
    double s = 0;
    for (Index j = 0; j < p.size(); ++j)
        s -= p(j) > 0 ? p(j) * std::log(p(j)) : 0.0;
    return s;
}
double effectiveOf(const RowVector<double> &p)
{
    return 1.0 / p.squaredNorm();
}
double jacobianOf(const RowVector<double> &p)
{
    const VectorD v = p.transpose();
    const MatrixD j = MatrixD(v.asDiagonal()) - v * v.transpose(); // diag(p) − p pᵀ
    return j.norm();
}

} // namespace

class TestCliCompute : public QObject
{
    Q_OBJECT

private:
    QTemporaryDir m_dir;
    double m_worst = 0; // largest |compute − PyTorch| over float64 outputs and weights

    QString tempPath(const QString &name) const { return m_dir.filePath(name); }

private Q_SLOTS:
    void initTestCase();
    void help();
    void matchesTorch_data();
    void matchesTorch();
    void fullyMaskedRow();
    void fullyMaskedRowWithoutProjection();
    void successLineNamesTheOutputFolder();
    void windowThatMasksNothingSaysSo();
    void projectedHeadsMatchTorch_data();
    void projectedHeadsMatchTorch();
    void positionOptionErrors_data();
    void positionOptionErrors();
    void wrongConventionDiffers();
    void variantsMatchNumPy_data();
    void variantsMatchNumPy();
    void variantErrors_data();
    void variantErrors();
    void errors_data();
    void errors();
    void outOfMemoryIsAMessage();
    void batchAxis();
    void cleanupTestCase();
};

void TestCliCompute::initTestCase()
{
    QVERIFY(m_dir.isValid());
    QVERIFY2(QFile::exists(QStringLiteral(ATTNLAB_EXE)), ATTNLAB_EXE);
}

void TestCliCompute::help()
{
    const Run r = runCompute({QStringLiteral("--help")});
    QCOMPARE(r.exitCode, 0);
    QVERIFY(r.out.contains(QLatin1String("--mask-convention")));
    QVERIFY(r.out.contains(QLatin1String("--dtype")));
    QVERIFY(r.out.contains(QLatin1String("--memory-budget-mib")));
    for (const char *option :
         {"--positional", "--rope-convention", "--rope-base", "--kv-heads", "--window", "--sinks"})
        QVERIFY2(r.out.contains(QLatin1String(option)), option);
    QVERIFY(r.out.simplified().contains(QLatin1String("[default: 2048]")));
}

void TestCliCompute::matchesTorch_data()
{
    QTest::addColumn<QString>("name");
    QTest::addColumn<QStringList>("options");
    QTest::addColumn<double>("tolerance");
    const QStringList none;
    QTest::newRow("self_attn") << QStringLiteral("self_attn") << none << 1e-12;
    QTest::newRow("causal") << QStringLiteral("causal") << none << 1e-12;
    QTest::newRow("key_padding") << QStringLiteral("key_padding") << none << 1e-12;
    QTest::newRow("cross") << QStringLiteral("cross") << none << 1e-12;
    QTest::newRow("cross_causal_padding") << QStringLiteral("cross_causal_padding")
                                          << QStringList {"--mask-convention", "masked"} << 1e-12;
    QTest::newRow("no_bias") << QStringLiteral("no_bias") << none << 1e-12;
    QTest::newRow("h1") << QStringLiteral("h1") << none << 1e-12;
    QTest::newRow("h8") << QStringLiteral("h8") << none << 1e-12;
    QTest::newRow("additive_mask") << QStringLiteral("additive_mask") << none << 1e-12;
    QTest::newRow("hand_d2") << QStringLiteral("hand_d2") << QStringList {"--dtype", "float64"}
                             << 1e-12;
    QTest::newRow("plain") << QStringLiteral("plain") << none << 1e-12;
    QTest::newRow("plain_allowed (--mask-convention allowed)")
        << QStringLiteral("plain_allowed") << QStringList {"--mask-convention", "allowed"} << 1e-12;
    QTest::newRow("self_attn_float32 (--dtype float32)")
        << QStringLiteral("self_attn_float32") << QStringList {"--dtype", "float32"} << 1e-5;
    QTest::newRow("causal_float32 (--dtype float32)")
        << QStringLiteral("causal_float32") << QStringList {"--dtype", "float32"} << 1e-5;
}

void TestCliCompute::matchesTorch()
{
    QFETCH(QString, name);
    QFETCH(QStringList, options);
    QFETCH(double, tolerance);
    const QString out = tempPath(name + QStringLiteral("_result.npz"));
    const Run r = runCompute(QStringList {"--in", fixturePath(name), "--out", out} + options);
    QVERIFY2(r.exitCode == 0, qPrintable(r.err));
    QVERIFY2(r.out.contains(QLatin1String("worst row-sum error")), qPrintable(r.out));

    const Arrays c = load(fixturePath(name));
    const Arrays res = load(out);
    const NpyType computeType = tolerance < 1e-9 ? NpyType::Float64 : NpyType::Float32;
    QCOMPARE(res.at("output").type, computeType);
    QCOMPARE(res.at("weights").type, computeType);

    const MatrixD expectedOut = c.at("expected_output").toMatrix<double>("expected_output");
    const auto outReport
        = attn::test::compareClose(res.at("output").toMatrix<double>("output"), expectedOut, 0);
    if (tolerance < 1e-9)
        m_worst = std::max(m_worst, outReport.worstAbs);
    ATTN_COMPARE_CLOSE(res.at("output").toMatrix<double>("output"), expectedOut, tolerance, 0.0);

    const NpyArray &expectedW = c.at("expected_weights");
    const std::int64_t heads = expectedW.shape.at(0), nQ = expectedW.shape.at(1),
                       nK = expectedW.shape.at(2);
    QCOMPARE(res.at("weights").shape, expectedW.shape);
    QCOMPARE(res.at("scores").shape, expectedW.shape);
    QCOMPARE(res.at("weights_mean").shape, (std::vector<std::int64_t> {nQ, nK}));
    const std::vector<std::int64_t> perRow {heads, nQ};
    for (const char *metric :
         {"max_weight", "entropy", "effective_terms", "jacobian_norm", "fully_masked"})
        QCOMPARE(res.at(metric).shape, perRow);
    QCOMPARE(res.at("fully_masked").type, NpyType::Bool);

    MatrixD mean = MatrixD::Zero(nQ, nK);
    MatrixD maxW(heads, nQ), entropy(heads, nQ), effective(heads, nQ), jacobian(heads, nQ);
    for (std::int64_t h = 0; h < heads; ++h) {
        const MatrixD ew = expectedW.slice<double>(h, "expected_weights");
        const MatrixD w = res.at("weights").slice<double>(h, "weights");
        m_worst = std::max(m_worst,
                           tolerance < 1e-9 ? attn::test::compareClose(w, ew, 0).worstAbs : 0.0);
        ATTN_COMPARE_CLOSE(w, ew, tolerance, 0.0);
        mean += ew;
        for (std::int64_t i = 0; i < nQ; ++i) {
            const RowVector<double> p = ew.row(i);
            maxW(h, i) = maxOf(p);
            entropy(h, i) = entropyOf(p);
            effective(h, i) = effectiveOf(p);
            jacobian(h, i) = jacobianOf(p);
        }
    }
    mean /= double(heads);
    ATTN_COMPARE_CLOSE(res.at("weights_mean").toMatrix<double>("weights_mean"), mean, tolerance,
                       0.0);
    // Metrics are float64 whatever --dtype; compared with values computed here from PyTorch's
    // weights (relative tolerance: effective terms grow with n_k).
    ATTN_COMPARE_CLOSE(res.at("max_weight").toMatrix<double>("max_weight"), maxW, tolerance, 0.0);
    ATTN_COMPARE_CLOSE(res.at("entropy").toMatrix<double>("entropy"), entropy, 10 * tolerance, 0.0);
    ATTN_COMPARE_CLOSE(res.at("effective_terms").toMatrix<double>("effective_terms"), effective,
                       tolerance, 10 * tolerance);
    ATTN_COMPARE_CLOSE(res.at("jacobian_norm").toMatrix<double>("jacobian_norm"), jacobian,
                       10 * tolerance, 0.0);
    for (double flag : res.at("fully_masked").values)
        QCOMPARE(flag, 0.0);
}

// Already-projected heads (query n_q × h·d_k, key n_k × g·d_k, num_heads, num_kv_heads) with
// the position and window options, against tests/reference/make_modern_fixtures.py (PyTorch:
// repeat_interleave, RoPE/ALiBi written out, window and sinks), 1e-12 in float64.
void TestCliCompute::projectedHeadsMatchTorch_data()
{
    QTest::addColumn<QString>("fixture");
    QTest::addColumn<QStringList>("options");
    QTest::addColumn<bool>("kvHeadsOption"); // g by --kv-heads instead of num_kv_heads
    QTest::newRow("gqa h8 g2") << "gqa_h8_g2_float64" << QStringList {} << false;
    QTest::newRow("gqa h8 g2 by --kv-heads")
        << "gqa_h8_g2_float64" << QStringList {"--kv-heads", "2"} << true;
    QTest::newRow("gqa h6 g3 cross, padding")
        << "gqa_h6_g3_cross_float64" << QStringList {} << false;
    QTest::newRow("rope interleaved, causal")
        << "rope_interleaved_float64"
        << QStringList {"--positional", "rope", "--rope-convention", "interleaved"} << false;
    QTest::newRow("rope half base 500 gqa")
        << "rope_half_gqa_base500_float64"
        << QStringList {"--positional", "rope", "--rope-convention", "half", "--rope-base", "500"}
        << false;
    QTest::newRow("alibi h12 g4 bidirectional")
        << "alibi_h12_bidirectional_float64" << QStringList {"--positional", "alibi"} << false;
    QTest::newRow("window 4 sinks 2")
        << "window4_sinks2_float64" << QStringList {"--window", "4", "--sinks", "2"} << false;
    QTest::newRow("window 3 sinks 1 padding alibi")
        << "window3_sinks1_padding_alibi_float64"
        << QStringList {"--positional", "alibi", "--window", "3", "--sinks", "1"} << false;
}

void TestCliCompute::projectedHeadsMatchTorch()
{
    QFETCH(QString, fixture);
    QFETCH(QStringList, options);
    QFETCH(bool, kvHeadsOption);
    const Arrays c = load(QStringLiteral(ATTN_FIXTURE_DIR "/modern/%1.npz").arg(fixture));
    Arrays in;
    for (const char *name : {"query", "key", "value", "num_heads", "num_kv_heads"})
        in[name] = c.at(name);
    if (kvHeadsOption)
        in.erase("num_kv_heads");
    const Index nQ = Index(c.at("query").shape[0]), nK = Index(c.at("key").shape[0]);
    // A causal mask without a window travels as a boolean attn_mask (True = masked out).
    if (c.at("causal").toScalarInt("causal") != 0 && c.at("window").toScalarInt("window") == 0) {
        NpyArray m;
        m.shape = {nQ, nK};
        m.type = NpyType::Bool;
        for (Index i = 0; i < nQ; ++i)
            for (Index j = 0; j < nK; ++j)
                m.values.push_back(j > i ? 1.0 : 0.0);
        in["attn_mask"] = m;
    }
    if (const Index padding = c.at("padding").toScalarInt("padding"); padding > 0) {
        NpyArray m;
        m.shape = {nK};
        m.type = NpyType::Bool;
        for (Index j = 0; j < nK; ++j)
            m.values.push_back(j >= nK - padding ? 1.0 : 0.0);
        in["key_padding_mask"] = m;
    }
    const QString inPath = tempPath(fixture + QStringLiteral("_in.npz"));
    const QString outPath = tempPath(fixture + QStringLiteral("_out.npz"));
    save(inPath, in);
    const Run r = runCompute(QStringList {"--in", inPath, "--out", outPath} + options);
    QVERIFY2(r.exitCode == 0, qPrintable(r.err));
    const Arrays res = load(outPath);
    const NpyArray &expectedW = c.at("expected_weights");
    QCOMPARE(res.at("weights").shape, expectedW.shape);
    for (std::int64_t h = 0; h < expectedW.shape[0]; ++h)
        ATTN_COMPARE_CLOSE(res.at("weights").slice<double>(h, "weights"),
                           expectedW.slice<double>(h, "expected_weights"), 1e-12, 0.0);
    ATTN_COMPARE_CLOSE(res.at("output").toMatrix<double>("output"),
                       c.at("expected_output").toMatrix<double>("expected_output"), 1e-12, 0.0);
    if (options.contains(QLatin1String("alibi")))
        ATTN_COMPARE_CLOSE(res.at("alibi_slopes").toVector<double>("alibi_slopes"),
                           c.at("alibi_slopes").toVector<double>("alibi_slopes"), 1e-15, 0.0);
    if (options.contains(QLatin1String("--sinks"))) {
        // Mass on the sink keys: Σ_{j < s} w_ij from PyTorch's weights.
        const Index sinks = c.at("sinks").toScalarInt("sinks");
        const NpyArray &mass = res.at("sink_mass");
        QCOMPARE(mass.shape, (std::vector<std::int64_t> {expectedW.shape[0], nQ}));
        for (std::int64_t h = 0; h < expectedW.shape[0]; ++h) {
            const MatrixD w = expectedW.slice<double>(h, "expected_weights");
            for (Index i = 0; i < nQ; ++i)
                QVERIFY(std::abs(mass.values[std::size_t(h * nQ + i)] - w.row(i).head(sinks).sum())
                        <= 1e-12);
        }
    }
    QVERIFY2(r.out.contains(QLatin1String("projected heads")), qPrintable(r.out));
}

void TestCliCompute::positionOptionErrors_data()
{
    QTest::addColumn<QString>("fixture"); // modern fixture or torch fixture ("torch:")
    QTest::addColumn<QStringList>("options");
    QTest::addColumn<QString>("message");
    QTest::newRow("sinks without window")
        << "gqa_h8_g2_float64" << QStringList {"--sinks", "2"} << "--sinks needs --window";
    QTest::newRow("rope base without rope")
        << "gqa_h8_g2_float64" << QStringList {"--rope-base", "500"} << "--rope-base needs";
    QTest::newRow("unknown scheme") << "gqa_h8_g2_float64" << QStringList {"--positional", "xpos"}
                                    << "--positional must be none, sinusoidal, rope or alibi";
    QTest::newRow("bad convention")
        << "gqa_h8_g2_float64" << QStringList {"--positional", "rope", "--rope-convention", "neox"}
        << "--rope-convention must be interleaved or half";
    QTest::newRow("window 0") << "gqa_h8_g2_float64" << QStringList {"--window", "0"} << "--window";
    // 2^40 was taken; the range is the window's and the session file's.
    QTest::newRow("window 2^40")
        << "gqa_h8_g2_float64" << QStringList {"--window", "1099511627776"}
        << "--window must be an integer in [1, 65536], got '1099511627776'";
    QTest::newRow("sinks 2^40") << "gqa_h8_g2_float64"
                                << QStringList {"--window", "2", "--sinks", "1099511627776"}
                                << "--sinks must be an integer in [0, 65536], got '1099511627776'";
    QTest::newRow("kv heads disagree") << "gqa_h8_g2_float64" << QStringList {"--kv-heads", "4"}
                                       << "--kv-heads 4 disagrees with num_kv_heads";
    QTest::newRow("sinusoidal on projected heads")
        << "gqa_h8_g2_float64" << QStringList {"--positional", "sinusoidal"}
        << "already-projected heads";
    QTest::newRow("kv heads with PyTorch layout") << "torch:h8" << QStringList {"--kv-heads", "2"}
                                                  << "--kv-heads needs already-projected heads";
}

void TestCliCompute::positionOptionErrors()
{
    QFETCH(QString, fixture);
    QFETCH(QStringList, options);
    QFETCH(QString, message);
    const QString in = fixture.startsWith(QLatin1String("torch:"))
        ? fixturePath(fixture.mid(6))
        : QStringLiteral(ATTN_FIXTURE_DIR "/modern/%1.npz").arg(fixture);
    QVERIFY(QFile::exists(in));
    const QString out = tempPath(QStringLiteral("position_error.npz"));
    const Run r = runCompute(QStringList {"--in", in, "--out", out} + options);
    QCOMPARE(r.exitCode, 2);
    QVERIFY2(r.err.contains(message), qPrintable(r.err));
    QVERIFY(!QFile::exists(out));
}

// Learned sinks, differential attention and the output gate on already-projected heads, with
// GQA, RoPE, the window and the masks, against tests/reference/make_variant_compute_fixtures.py
// (NumPy from the papers' formulas): 1e-12 in float64, 1e-5 in float32. The invariants hold:
// rows plus sink mass sum to 1, differential rows to 1 − λ, the gate lies in (0, 1).
void TestCliCompute::variantsMatchNumPy_data()
{
    QTest::addColumn<QString>("fixture");
    QTest::addColumn<QStringList>("options");
    QTest::addColumn<double>("tolerance");
    QTest::newRow("learned sinks, gqa, rope, window")
        << "sinks_gqa_rope_window"
        << QStringList {"--positional", "rope", "--rope-convention", "half", "--window", "4"}
        << 1e-12;
    QTest::newRow("differential, mqa, padding, gate")
        << "differential_gated" << QStringList {} << 1e-12;
    QTest::newRow("differential, rope, causal")
        << "differential_rope_causal"
        << QStringList {"--positional", "rope", "--rope-convention", "interleaved"} << 1e-12;
    QTest::newRow("learned sink, plain, float32")
        << "sink_plain_float32" << QStringList {"--dtype", "float32"} << 1e-5;
}

void TestCliCompute::variantsMatchNumPy()
{
    QFETCH(QString, fixture);
    QFETCH(QStringList, options);
    QFETCH(double, tolerance);
    const QString in = QStringLiteral(ATTN_FIXTURE_DIR "/variants/compute_%1.npz").arg(fixture);
    const QString out = tempPath(fixture + QStringLiteral("_variant.npz"));
    const Run r = runCompute(QStringList {"--in", in, "--out", out} + options);
    QVERIFY2(r.exitCode == 0, qPrintable(r.err));
    const Arrays c = load(in);
    const Arrays res = load(out);
    const auto compareStacks = [&](const char *ours, const char *expected) {
        const NpyArray &a = res.at(ours), &e = c.at(expected);
        QCOMPARE(a.shape, e.shape);
        for (std::int64_t h = 0; h < e.shape[0]; ++h)
            ATTN_COMPARE_CLOSE(a.slice<double>(h, ours), e.slice<double>(h, expected), tolerance,
                               0.0);
    };
    compareStacks("weights", "expected_weights");
    ATTN_COMPARE_CLOSE(res.at("output").toMatrix<double>("output"),
                       c.at("expected_output").toMatrix<double>("expected_output"), tolerance, 0.0);
    const MatrixD rowSum = res.at("row_sum").toMatrix<double>("row_sum");
    ATTN_COMPARE_CLOSE(rowSum, c.at("expected_row_sum").toMatrix<double>("expected_row_sum"),
                       tolerance, 0.0);
    if (c.count("expected_sink_mass")) {
        const MatrixD mass = res.at("learned_sink_mass").toMatrix<double>("learned_sink_mass");
        ATTN_COMPARE_CLOSE(mass, c.at("expected_sink_mass").toMatrix<double>("expected_sink_mass"),
                           tolerance, 0.0);
        QVERIFY(((rowSum + mass).array() - 1.0).abs().maxCoeff() <= 10 * tolerance);
        QVERIFY2(r.out.contains(QLatin1String("learned sinks")), qPrintable(r.out));
    }
    if (c.count("expected_first")) {
        compareStacks("weights_first", "expected_first");
        compareStacks("weights_second", "expected_second");
        const std::vector<double> lambda = res.at("lambda").values;
        QCOMPARE(Index(lambda.size()), Index(rowSum.rows()));
        for (Index h = 0; h < rowSum.rows(); ++h)
            QVERIFY((rowSum.row(h).array() - (1.0 - lambda[std::size_t(h)])).abs().maxCoeff()
                    <= 1e-12);
        // The metrics describe A₁ and A₂: h × 2 × n_q.
        QCOMPARE(res.at("entropy").shape,
                 (std::vector<std::int64_t> {rowSum.rows(), 2, rowSum.cols()}));
        QVERIFY2(r.out.contains(QLatin1String("differential attention")), qPrintable(r.out));
    }
    if (c.count("expected_gate")) {
        const MatrixD gate = res.at("gate").toMatrix<double>("gate");
        ATTN_COMPARE_CLOSE(gate, c.at("expected_gate").toMatrix<double>("expected_gate"), tolerance,
                           0.0);
        QVERIFY(gate.minCoeff() > 0.0 && gate.maxCoeff() < 1.0);
    }
}

// Each variant array that does not fit exits 2 naming it and the sizes, and writes nothing.
void TestCliCompute::variantErrors_data()
{
    QTest::addColumn<QString>("fixture");
    QTest::addColumn<QString>("change");
    QTest::addColumn<QString>("message");
    QTest::newRow("sink logits: wrong count")
        << "sinks_gqa_rope_window"
        << "sink_logits:3"
        << "array 'sink_logits' must be a number or a 1-d array of h = 4 numbers";
    QTest::newRow("sink logits: nan") << "sinks_gqa_rope_window"
                                      << "sink_logits:nan"
                                      << "holds nan at 0";
    QTest::newRow("sinks with differential")
        << "differential_gated"
        << "sink_logits:2"
        << "learned sinks and differential attention do not combine";
    QTest::newRow("query2 without lambda")
        << "differential_gated"
        << "drop:lambda"
        << "missing array 'lambda' (differential attention: query2, key2 and lambda go together)";
    QTest::newRow("key2 shaped wrong") << "differential_gated"
                                       << "key2:rows"
                                       << "array 'key2' (8, 4) must be shaped as key";
    QTest::newRow("lambda three for two heads")
        << "differential_gated"
        << "lambda:3"
        << "array 'lambda' must be a number or a 1-d array of h = 2 numbers";
    QTest::newRow("gate logits too narrow")
        << "differential_gated"
        << "gate_logits:cols"
        << "array 'gate_logits' (7, 9) must be n_q × h·d_v = (7, 10)";
    QTest::newRow("variants with nn.MultiheadAttention's layout")
        << "torch:self_attn"
        << "sink_logits:1"
        << "array 'sink_logits' is for already-projected";
}

void TestCliCompute::variantErrors()
{
    QFETCH(QString, fixture);
    QFETCH(QString, change);
    QFETCH(QString, message);
    Arrays c = load(fixture.startsWith(QLatin1String("torch:"))
                        ? fixturePath(fixture.mid(6))
                        : QStringLiteral(ATTN_FIXTURE_DIR "/variants/compute_%1.npz").arg(fixture));
    const QString name = change.section(QLatin1Char(':'), 0, 0);
    const QString how = change.section(QLatin1Char(':'), 1);
    const auto vector = [](std::vector<double> values) {
        NpyArray a;
        a.shape = {std::int64_t(values.size())};
        a.values = std::move(values);
        return a;
    };
    if (name == QLatin1String("drop")) {
        c.erase(how.toStdString());
    } else if (name == QLatin1String("sink_logits") || name == QLatin1String("lambda")) {
        c[name.toStdString()] = how == QLatin1String("nan")
            ? vector({std::nan(""), 0, 0, 0})
            : vector(std::vector<double>(std::size_t(how.toInt()), 0.5));
    } else {
        // One row or one column fewer.
        NpyArray &a = c.at(name.toStdString());
        const MatrixD m = a.toMatrix<double>(name.toStdString().c_str());
        a = NpyArray::fromMatrix<double>(how == QLatin1String("rows")
                                             ? MatrixD(m.topRows(m.rows() - 1))
                                             : MatrixD(m.leftCols(m.cols() - 1)));
    }
    const QString in = tempPath(QStringLiteral("variant_error_in.npz"));
    const QString out = tempPath(QStringLiteral("variant_error_out.npz"));
    QFile::remove(out);
    save(in, c);
    const Run r = runCompute({"--in", in, "--out", out});
    QCOMPARE(r.exitCode, 2);
    QVERIFY2(r.err.contains(message), qPrintable(r.err));
    QVERIFY(!QFile::exists(out));
}

// The success line named only the output file's name: it gives the path written, folder and all.
void TestCliCompute::successLineNamesTheOutputFolder()
{
    QDir(m_dir.path()).mkpath(QStringLiteral("sub folder"));
    const QString out = tempPath(QStringLiteral("sub folder/plain_result.npz"));
    const Run r = runCompute({"--in", fixturePath(QStringLiteral("plain")), "--out", out});
    QVERIFY2(r.exitCode == 0, qPrintable(r.err));
    const QString written = QFileInfo(out).absoluteFilePath();
    QVERIFY2(r.out.startsWith(QStringLiteral("plain.npz \u2192 %1: ").arg(written)),
             qPrintable(r.out));
}

// A window at least as long as the sequence masks nothing beyond the causal mask: compute runs
// and says so on stderr; a shorter one says nothing.
void TestCliCompute::windowThatMasksNothingSaysSo()
{
    const QString in = QStringLiteral(ATTN_FIXTURE_DIR "/modern/window4_float64.npz");
    const Arrays c = load(in);
    const Index n = Index(c.at("query").shape.at(0));
    const QString out = tempPath(QStringLiteral("window_note.npz"));
    Run r = runCompute({"--in", in, "--out", out, "--window", QString::number(n + 5)});
    QVERIFY2(r.exitCode == 0, qPrintable(r.err));
    QVERIFY2(r.err.contains(QStringLiteral("attnlab compute: note: --window %1 is not shorter "
                                           "than the sequence (n = %2)")
                                .arg(n + 5)
                                .arg(n)),
             qPrintable(r.err));
    // The summary names the window's causal mask among the masks.
    QVERIFY2(r.out.contains(QLatin1String("masks: causal sliding window")), qPrintable(r.out));
    r = runCompute({"--in", in, "--out", out, "--window", "2"});
    QVERIFY2(r.exitCode == 0, qPrintable(r.err));
    QVERIFY2(!r.err.contains(QLatin1String("note: --window")), qPrintable(r.err));
    // Sinusoidal positions on a PyTorch-layout case are named in the summary.
    r = runCompute(
        {"--in", fixturePath(QStringLiteral("plain")), "--out", out, "--positional", "sinusoidal"});
    QVERIFY2(r.exitCode == 0, qPrintable(r.err));
    QVERIFY2(r.out.contains(QLatin1String("sinusoidal added to the inputs")), qPrintable(r.out));
}

// PyTorch gives NaN on the fully masked query 2; compute writes zeros there, flags the row in
// every head, and says so in its summary.
void TestCliCompute::fullyMaskedRow()
{
    const QString out = tempPath(QStringLiteral("fully_masked_result.npz"));
    const Run r
        = runCompute({"--in", fixturePath(QStringLiteral("fully_masked_row")), "--out", out});
    QVERIFY2(r.exitCode == 0, qPrintable(r.err));
    QVERIFY2(r.out.contains(QLatin1String("head 0 row 2")), qPrintable(r.out));
    QVERIFY2(r.out.contains(QLatin1String("head 1 row 2")), qPrintable(r.out));
    QVERIFY2(r.out.contains(QLatin1String("output row = out_proj_bias")), qPrintable(r.out));

    const Arrays c = load(fixturePath(QStringLiteral("fully_masked_row")));
    const Arrays res = load(out);
    const MatrixD flags = res.at("fully_masked").toMatrix<double>("fully_masked");
    const MatrixD expectedOut = c.at("expected_output").toMatrix<double>("expected_output");
    const MatrixD output = res.at("output").toMatrix<double>("output");
    QVERIFY(expectedOut.row(2).array().isNaN().all()); // what PyTorch 1.13 gave
    QVERIFY(output.allFinite());
    for (Index h = 0; h < flags.rows(); ++h) {
        const MatrixD w = res.at("weights").slice<double>(h, "weights");
        const MatrixD ew = c.at("expected_weights").slice<double>(h, "expected_weights");
        QVERIFY(ew.row(2).array().isNaN().all());
        for (Index i = 0; i < flags.cols(); ++i) {
            QCOMPARE(flags(h, i), i == 2 ? 1.0 : 0.0);
            if (i == 2) {
                QVERIFY((w.row(i).array() == 0.0).all());
                QCOMPARE(res.at("effective_terms").toMatrix<double>("effective_terms")(h, i), 0.0);
            } else {
                ATTN_COMPARE_CLOSE(w.row(i), ew.row(i), 1e-12, 0.0);
            }
        }
    }
    for (Index i = 0; i < output.rows(); ++i) {
        if (i != 2)
            ATTN_COMPARE_CLOSE(output.row(i), expectedOut.row(i), 1e-12, 0.0);
    }
}

// Plain attention has no output projection: a fully masked row's output is 0, and the summary
// says so (not out_proj_bias).
void TestCliCompute::fullyMaskedRowWithoutProjection()
{
    Arrays a = load(fixturePath(QStringLiteral("plain")));
    a.erase("attn_mask");
    const std::int64_t nQ = a.at("query").shape.at(0), nK = a.at("key").shape.at(0);
    NpyArray mask;
    mask.shape = {nQ, nK};
    mask.type = NpyType::Bool;
    mask.values.assign(std::size_t(nQ * nK), 0.0);
    for (std::int64_t j = 0; j < nK; ++j)
        mask.values[std::size_t(j)] = 1; // query 0 sees no key
    a["attn_mask"] = mask;
    const QString in = tempPath(QStringLiteral("plain_row0_masked.npz"));
    save(in, a);
    const QString out = tempPath(QStringLiteral("plain_row0_masked_result.npz"));
    const Run r = runCompute({"--in", in, "--out", out});
    QVERIFY2(r.exitCode == 0, qPrintable(r.err));
    QVERIFY2(r.out.contains(QLatin1String("plain scaled dot-product attention")),
             qPrintable(r.out));
    QVERIFY2(r.out.contains(QLatin1String("(weights 0, output row = 0)")), qPrintable(r.out));
    const MatrixD output = load(out).at("output").toMatrix<double>("output");
    QVERIFY((output.row(0).array() == 0.0).all());
    QVERIFY((output.row(1).array() != 0.0).any());
}

// E10's trap through the command line: plain_allowed's mask means "may attend"; read with the
// default convention ("masked out") the command runs without complaint but attends to the
// complement, so the output is far from PyTorch's.
void TestCliCompute::wrongConventionDiffers()
{
    const QString out = tempPath(QStringLiteral("wrong_convention_result.npz"));
    const Run r = runCompute({"--in", fixturePath(QStringLiteral("plain_allowed")), "--out", out});
    QVERIFY2(r.exitCode == 0, qPrintable(r.err));
    QVERIFY2(r.out.contains(QLatin1String("True = masked out")), qPrintable(r.out));
    const Arrays c = load(fixturePath(QStringLiteral("plain_allowed")));
    const MatrixD output = load(out).at("output").toMatrix<double>("output");
    const MatrixD expected = c.at("expected_output").toMatrix<double>("expected_output");
    const auto report = attn::test::compareClose(output, expected, 0);
    QVERIFY2(report.worstAbs > 0.1, qPrintable(report.message()));
}

void TestCliCompute::errors_data()
{
    QTest::addColumn<QString>("edit"); // how the self_attn case is broken ("" = used as is)
    QTest::addColumn<QStringList>("options"); // extra arguments; "IN" / "OUT" are replaced
    QTest::addColumn<QString>("message"); // substring of stderr

    const QStringList inOut {"--in", "IN", "--out", "OUT"};
    QTest::newRow("missing input file")
        << QString() << QStringList {"--in", "/nonexistent/case.npz", "--out", "OUT"}
        << QStringLiteral("'/nonexistent/case.npz' does not exist");
    QTest::newRow("not an npz") << QStringLiteral("garbage") << inOut << QStringLiteral("IN");
    QTest::newRow("missing value")
        << QStringLiteral("drop value") << inOut << QStringLiteral("missing array 'value'");
    QTest::newRow("missing num_heads")
        << QStringLiteral("drop num_heads") << inOut << QStringLiteral("missing array 'num_heads'");
    QTest::newRow("key d_model") << QStringLiteral("key 6x5") << inOut
                                 << QStringLiteral("array 'key' has 5 columns but query has 16");
    QTest::newRow("query 1-d") << QStringLiteral("query 1-d") << inOut
                               << QStringLiteral("array 'query' must be 2-d");
    QTest::newRow("in_proj_weight shape")
        << QStringLiteral("in_proj_weight 16x16") << inOut
        << QStringLiteral("array 'in_proj_weight' has shape (16, 16) but must be (48, 16)");
    QTest::newRow("in_proj_bias length")
        << QStringLiteral("in_proj_bias 5") << inOut
        << QStringLiteral("array 'in_proj_bias' must be a 1-d numeric array of length 48");
    QTest::newRow("num_heads does not divide")
        << QStringLiteral("num_heads 3") << inOut
        << QStringLiteral("num_heads = 3 must be at least 1 and divide d_model = 16");
    QTest::newRow("num_heads float") << QStringLiteral("num_heads float") << inOut
                                     << QStringLiteral("'num_heads' must be a 0-d integer array");
    QTest::newRow("attn_mask shape") << QStringLiteral("attn_mask 6x5") << inOut
                                     << QStringLiteral("array 'attn_mask' has shape (6, 5)");
    QTest::newRow("key_padding_mask length")
        << QStringLiteral("key_padding_mask 4") << inOut
        << QStringLiteral("array 'key_padding_mask' has shape (4,)");
    QTest::newRow("NaN in query") << QStringLiteral("query nan") << inOut
                                  << QStringLiteral("array 'query' (6, 16) holds a non-finite");
    QTest::newRow("Inf in out_proj_weight")
        << QStringLiteral("out_proj_weight inf") << inOut
        << QStringLiteral("array 'out_proj_weight' (16, 16) holds a non-finite");
    QTest::newRow("bad --dtype") << QString() << inOut + QStringList {"--dtype", "float16"}
                                 << QStringLiteral("--dtype must be 'float32' or 'float64'");
    QTest::newRow("bad --mask-convention")
        << QString() << inOut + QStringList {"--mask-convention", "true"}
        << QStringLiteral("--mask-convention must be 'masked' or 'allowed'");
    QTest::newRow("unknown option")
        << QString() << inOut + QStringList {"--frobnicate"} << QStringLiteral("frobnicate");
    QTest::newRow("no --in") << QString() << QStringList {"--out", "OUT"}
                             << QStringLiteral("--in <file> is required");
    QTest::newRow("--out not .npz")
        << QString() << QStringList {"--in", "IN", "--out", "OUT.csv"}
        << QStringLiteral("must end in .npz: compute writes an .npz archive");
    QTest::newRow("no --out") << QString() << QStringList {"--in", "IN"}
                              << QStringLiteral("--out <file> is required");
    // compute_huge_n_bad_alloc (new-user trial): a large n gave std::bad_alloc and exit 1. Now the
    // sizes are checked against --memory-budget-mib before anything n_q x n_k is allocated.
    QTest::newRow("n 20000 over the default budget")
        << QStringLiteral("n 20000") << inOut
        << QStringLiteral("n_q = 20000 queries x n_k = 20000 keys need about");
    QTest::newRow("n 20000 names the budget")
        << QStringLiteral("n 20000") << inOut << QStringLiteral("over --memory-budget-mib 2048");
    QTest::newRow("n 300 over a 1 MiB budget")
        << QStringLiteral("n 300") << inOut + QStringList {"--memory-budget-mib", "1"}
        << QStringLiteral("over --memory-budget-mib 1:");
    QTest::newRow("bad --memory-budget-mib")
        << QString() << inOut + QStringList {"--memory-budget-mib", "0"}
        << QStringLiteral("--memory-budget-mib must be an integer in [1, 1048576]");
}

void TestCliCompute::errors()
{
    QFETCH(QString, edit);
    QFETCH(QStringList, options);
    QFETCH(QString, message);

    const QString tag = QString::fromLatin1(QTest::currentDataTag()).replace(' ', '_');
    QString in = fixturePath(QStringLiteral("self_attn"));
    if (!edit.isEmpty()) {
        in = tempPath(tag + QStringLiteral("_in.npz"));
        if (edit == QLatin1String("garbage")) {
            QFile f(in);
            QVERIFY(f.open(QIODevice::WriteOnly));
            f.write("this is not a zip archive");
        } else {
            Arrays a = load(fixturePath(QStringLiteral("self_attn")));
            auto matrix = [](std::int64_t rows, std::int64_t cols) {
                return NpyArray::fromMatrix<double>(MatrixD::Ones(rows, cols));
            };
            if (edit == QLatin1String("drop value"))
                a.erase("value");
            else if (edit == QLatin1String("drop num_heads"))
                a.erase("num_heads");
            else if (edit == QLatin1String("key 6x5"))
                a["key"] = matrix(6, 5);
            else if (edit == QLatin1String("query 1-d"))
                a["query"].shape = {96};
            else if (edit == QLatin1String("in_proj_weight 16x16"))
                a["in_proj_weight"] = matrix(16, 16);
            else if (edit == QLatin1String("in_proj_bias 5")) {
                a["in_proj_bias"].shape = {5};
                a["in_proj_bias"].values.resize(5);
            } else if (edit == QLatin1String("num_heads 3"))
                a["num_heads"] = NpyArray::scalarInt(3);
            else if (edit == QLatin1String("num_heads float"))
                a["num_heads"].type = NpyType::Float64;
            else if (edit == QLatin1String("attn_mask 6x5")) {
                a["attn_mask"] = matrix(6, 5);
                a["attn_mask"].type = NpyType::Bool;
            } else if (edit == QLatin1String("key_padding_mask 4")) {
                NpyArray pad;
                pad.shape = {4};
                pad.type = NpyType::Bool;
                pad.values = {0, 0, 1, 1};
                a["key_padding_mask"] = pad;
            } else if (edit == QLatin1String("query nan"))
                a["query"].values[7] = std::numeric_limits<double>::quiet_NaN();
            else if (edit == QLatin1String("out_proj_weight inf"))
                a["out_proj_weight"].values[3] = std::numeric_limits<double>::infinity();
            else if (edit.startsWith(QLatin1String("n "))) {
                // n queries and keys of self_attn's width (a few MiB of input at most).
                const std::int64_t n = edit.mid(2).toLongLong();
                const std::int64_t d = a["query"].shape.at(1);
                MatrixD x(n, d);
                for (std::int64_t i = 0; i < n; ++i)
                    for (std::int64_t j = 0; j < d; ++j)
                        x(i, j) = std::sin(double(i * d + j));
                for (const char *name : {"query", "key", "value"})
                    a[name] = NpyArray::fromMatrix<double>(x);
            } else
                QFAIL("unknown edit");
            save(in, a);
        }
    }
    const QString out = tempPath(tag + QStringLiteral("_out.npz"));
    QStringList arguments;
    for (const QString &o : options)
        arguments << (o == QLatin1String("IN")                 ? in
                          : o.startsWith(QLatin1String("OUT")) ? out + o.mid(3)
                                                               : o);
    message.replace(QLatin1String("IN"), in);

    const Run r = runCompute(arguments);
    QCOMPARE(r.exitCode, 2);
    QVERIFY2(r.err.contains(message), qPrintable(r.err));
    QVERIFY(r.out.isEmpty());
    QVERIFY(!QFile::exists(out)); // nothing written on error
    QCOMPARE(QDir(m_dir.path()).entryList({tag + QStringLiteral("_out*")}, QDir::Files),
             QStringList());
}

void TestCliCompute::outOfMemoryIsAMessage()
{
    // compute_huge_n_bad_alloc, second half: sizes within --memory-budget-mib that the machine
    // cannot hold all the same (here: an address-space limit of 640 MiB on the child) end in a
    // message and exit 1, never an uncaught std::bad_alloc (abort, exit 134).
#if ATTN_SANITIZER_BUILD
    QSKIP("sanitizers reserve more address space than the limit");
#else
    Arrays a = load(fixturePath(QStringLiteral("self_attn")));
    const Index n = 2500, d = a["query"].shape.at(1); // 4 heads x 2500 x 2500: ~1.3 GiB in all
    MatrixD x(n, d);
    for (Index i = 0; i < n; ++i)
        for (Index j = 0; j < d; ++j)
            x(i, j) = std::sin(double(i * d + j));
    for (const char *name : {"query", "key", "value"})
        a[name] = NpyArray::fromMatrix<double>(x);
    const QString in = tempPath(QStringLiteral("oom_in.npz"));
    const QString out = tempPath(QStringLiteral("oom_out.npz"));
    save(in, a);

    QProcess p;
    p.setProgram(QStringLiteral(ATTNLAB_EXE));
    // A budget above the estimate (about 2.2 GiB), so the address-space limit is what fails.
    p.setArguments({QStringLiteral("compute"), QStringLiteral("--in"), in, QStringLiteral("--out"),
                    out, QStringLiteral("--memory-budget-mib"), QStringLiteral("4096")});
    p.setChildProcessModifier([] {
        const rlimit limit {rlim_t(640) << 20, rlim_t(640) << 20};
        setrlimit(RLIMIT_AS, &limit);
    });
    p.start();
    QVERIFY(p.waitForFinished(120000));
    const QString err = QString::fromUtf8(p.readAllStandardError());
    QCOMPARE(p.exitStatus(), QProcess::NormalExit);
    QCOMPARE(p.exitCode(), 1);
    // Where the allocation fails decides the words: ours, or libzip's while building the archive.
    QVERIFY2(err.contains(QLatin1String("error: out of memory"))
                 || err.contains(QLatin1String("Malloc failure")),
             qPrintable(err));
    QVERIFY(!QFile::exists(out));
#endif
}

void TestCliCompute::cleanupTestCase()
{
    qInfo("largest |attnlab compute - PyTorch| (float64 output and weights): %.3g", m_worst);
}

// Inputs saved with their batch axis (tests/reference/make_batch_fixtures.py, docs/formats.md's
// snippet: B = 3): --batch I computes item I, whose weights and output equal PyTorch's for it;
// the default is item 0; an item out of range exits 2 naming B and writes nothing.
void TestCliCompute::batchAxis()
{
    const QString in = QStringLiteral(ATTN_FIXTURE_DIR "/batch/mha_batch.npz");
    const Arrays c = load(in);
    const NpyArray &expectedWeights = c.at("expected_weights"); // B × h × n × n
    const NpyArray &expectedOutput = c.at("expected_output"); // B × n × E
    for (int b : {-1, 0, 2}) { // -1: no --batch (item 0)
        const QString out = tempPath(QStringLiteral("batch_%1.npz").arg(b));
        const QStringList options
            = b < 0 ? QStringList {} : QStringList {"--batch", QString::number(b)};
        const Run r = runCompute(QStringList {"--in", in, "--out", out} + options);
        QVERIFY2(r.exitCode == 0, qPrintable(r.err));
        const Arrays o = load(out);
        const int item = std::max(b, 0);
        const NpyArray &w = o.at("weights"); // h × n × n
        QCOMPARE(w.shape, (std::vector<std::int64_t> {4, 6, 6}));
        double worst = 0;
        for (std::size_t k = 0; k < w.values.size(); ++k)
            worst = std::max(
                worst, std::abs(w.values[k] - expectedWeights.values[std::size_t(item) * 144 + k]));
        const NpyArray &output = o.at("output"); // n × E
        for (std::size_t k = 0; k < output.values.size(); ++k)
            worst = std::max(
                worst,
                std::abs(output.values[k] - expectedOutput.values[std::size_t(item) * 96 + k]));
        QVERIFY2(worst <= 1e-12, qPrintable(QString::number(worst)));
    }
    const QString out = tempPath(QStringLiteral("batch_out_of_range.npz"));
    const Run r = runCompute(QStringList {"--in", in, "--out", out, "--batch", "3"});
    QCOMPARE(r.exitCode, 2);
    QVERIFY2(r.err.contains(QStringLiteral("B = 3")), qPrintable(r.err));
    QVERIFY(!QFileInfo::exists(out));
    const Run bad = runCompute(QStringList {"--in", in, "--out", out, "--batch", "one"});
    QCOMPARE(bad.exitCode, 2);
    QVERIFY2(bad.err.contains(QStringLiteral("--batch")), qPrintable(bad.err));
}

QTEST_GUILESS_MAIN(TestCliCompute)
#include "tst_cli_compute.moc"
