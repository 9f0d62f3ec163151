// Multi-head attention with separate projections (torch.nn.MultiheadAttention(kdim=…, vdim=…):
// q_proj_weight E × E, k_proj_weight E × kdim, v_proj_weight E × vdim, in_proj_bias 3E) against
// PyTorch 1.13: the fixtures tests/reference/fixtures/projections/<case>.npz are written by
// tests/reference/make_projection_fixtures.py and hold PyTorch's expected_output (n_q × E) and
// expected_weights (h × n_q × n_k). Through the core (MultiheadAttention, the tensor case) and
// through `attnlab compute`.

#include "testutil.h"

#include "core/attention/multihead.h"
#include "core/io/npy.h"
#include "core/io/tensorcase.h"

#include "ui/session/sessioncompute.h"
#include "ui/session/tensorsource.h"

#include <QProcess>
#include <QTemporaryDir>
#include <QTest>

#include <cmath>
#include <functional>
#include <map>
#include <optional>
#include <string>

using namespace attn;

namespace {

using Arrays = std::map<std::string, NpyArray>;

QString fixturePath(const QString &name)
{
    return QStringLiteral(ATTN_FIXTURE_DIR "/projections/%1.npz").arg(name);
}

NamedArrays loadNamed(const QString &name)
{
    return readNpz(fixturePath(name).toStdString());
}

const NpyArray &member(const NamedArrays &arrays, const std::string &name)
{
    for (const auto &[n, a] : arrays)
        if (n == name)
            return a;
    throw std::runtime_error("no member " + name);
}

/// Largest |a − b| over two equally shaped matrices (infinite when the shapes differ).
template<typename A, typename B> double maxDiff(const A &a, const B &b)
{
    if (a.rows() != b.rows() || a.cols() != b.cols())
        return INFINITY;
    return (a.template cast<double>() - b.template cast<double>()).cwiseAbs().maxCoeff();
}

std::optional<QString> invalidArgumentOf(const std::function<void()> &f)
{
    try {
        f();
    } catch (const InvalidArgument &e) {
        return QString::fromUtf8(e.what());
    }
    return std::nullopt;
}

} // namespace

class TestProjections : public QObject
{
    Q_OBJECT

private:
    double m_worst64 = 0, m_worst32 = 0;

    template<typename T> void checkCase(const QString &name)
    {
        const NamedArrays arrays = loadNamed(name);
        const TensorCase<T> c = tensorCaseFromArrays<T>(arrays, name.toStdString());
        QVERIFY(c.multihead);
        QVERIFY(c.separateProjections);
        const MultiheadAttention<T> layer = c.layer();
        QVERIFY(layer.hasSeparateProjections());
        QCOMPARE(layer.keyDim(), Index(member(arrays, "key").shape.at(1)));
        QCOMPARE(layer.valueDim(), Index(member(arrays, "value").shape.at(1)));
        const MultiheadResult<T> r = layer.forward(c.query, c.key, c.value, c.mask);

        const double tol = std::is_same_v<T, double> ? 1e-12 : 1e-5;
        const MatrixD expectedOut = member(arrays, "expected_output").toMatrix<double>("out");
        const double outDiff = maxDiff(r.output, expectedOut);
        QVERIFY2(outDiff <= tol, qPrintable(QStringLiteral("output differs by %1").arg(outDiff)));
        const NpyArray &w = member(arrays, "expected_weights");
        QCOMPARE(r.weights.size(), std::size_t(w.shape.at(0)));
        double weightDiff = 0;
        for (std::int64_t h = 0; h < w.shape.at(0); ++h)
            weightDiff
                = std::max(weightDiff, maxDiff(r.weights[std::size_t(h)], w.slice<double>(h, "w")));
        QVERIFY2(weightDiff <= tol,
                 qPrintable(QStringLiteral("weights differ by %1").arg(weightDiff)));
        double &worst = std::is_same_v<T, double> ? m_worst64 : m_worst32;
        worst = std::max({worst, outDiff, weightDiff});
    }

private slots:
    void matchesTorch_data()
    {
        QTest::addColumn<QString>("name");
        for (const char *name :
             {"kvdim", "kvdim_h1", "kdim_only", "vdim_only", "kvdim_no_bias", "kvdim_masks"})
            QTest::newRow(name) << QString::fromLatin1(name);
    }
    void matchesTorch()
    {
        QFETCH(QString, name);
        checkCase<double>(name);
    }

    void matchesTorchFloat32() { checkCase<float>(QStringLiteral("kvdim_float32")); }

    void parameterCount()
    {
        // E·(2E + kdim + vdim) + 4E, as sum(p.numel() for p in mha.parameters()) counts.
        const NamedArrays arrays = loadNamed(QStringLiteral("kvdim"));
        const MultiheadAttention<double> layer
            = tensorCaseFromArrays<double>(arrays, "kvdim").layer();
        QCOMPARE(layer.parameterCount(), Index(16 * (2 * 16 + 10 + 6) + 4 * 16));
        const MultiheadAttention<double> noBias
            = tensorCaseFromArrays<double>(loadNamed(QStringLiteral("kvdim_no_bias")), "nb")
                  .layer();
        QCOMPARE(noBias.parameterCount(), Index(8 * (2 * 8 + 5 + 7)));
    }

    void refusedCases_data()
    {
        QTest::addColumn<QString>("edit");
        QTest::addColumn<QString>("message");
        QTest::newRow("no k_proj_weight") << "drop k_proj_weight"
                                          << "missing array 'k_proj_weight' (separate projections";
        QTest::newRow("in_proj_weight too")
            << "add in_proj_weight"
            << "both 'in_proj_weight' and q/k/v_proj_weight are given";
        QTest::newRow("k_proj_weight for another kdim")
            << "k_proj_weight 16x9"
            << "array 'k_proj_weight' has shape (16, 9) but must be (16, 10)";
        QTest::newRow("v_proj_weight transposed")
            << "v_proj_weight 6x16"
            << "array 'v_proj_weight' has shape (6, 16) but must be (16, 6)";
        QTest::newRow("q_proj_weight not square")
            << "q_proj_weight 16x10"
            << "array 'q_proj_weight' has shape (16, 10) but must be (16, 16)";
        QTest::newRow("in_proj_bias of kdim")
            << "in_proj_bias 36"
            << "'in_proj_bias' must be a 1-d numeric array of length 48";
    }
    void refusedCases()
    {
        QFETCH(QString, edit);
        QFETCH(QString, message);
        NamedArrays arrays = loadNamed(QStringLiteral("kvdim"));
        auto find = [&](const std::string &n) -> NpyArray & {
            for (auto &[name, a] : arrays)
                if (name == n)
                    return a;
            throw std::runtime_error("no " + n);
        };
        auto matrix = [](Index rows, Index cols) {
            return NpyArray::fromMatrix<double>(MatrixD::Constant(rows, cols, 0.25));
        };
        if (edit == QLatin1String("drop k_proj_weight"))
            std::erase_if(arrays, [](const auto &a) { return a.first == "k_proj_weight"; });
        else if (edit == QLatin1String("add in_proj_weight"))
            arrays.emplace_back("in_proj_weight", matrix(48, 16));
        else if (edit == QLatin1String("k_proj_weight 16x9"))
            find("k_proj_weight") = matrix(16, 9);
        else if (edit == QLatin1String("v_proj_weight 6x16"))
            find("v_proj_weight") = matrix(6, 16);
        else if (edit == QLatin1String("q_proj_weight 16x10"))
            find("q_proj_weight") = matrix(16, 10);
        else if (edit == QLatin1String("in_proj_bias 36")) {
            NpyArray &b = find("in_proj_bias");
            b.shape = {36};
            b.values.resize(36);
        } else
            QFAIL("unknown edit");
        const auto err
            = invalidArgumentOf([&] { tensorCaseFromArrays<double>(arrays, "kvdim.npz"); });
        QVERIFY2(err.has_value(), "no InvalidArgument");
        QVERIFY2(err->contains(message), qPrintable(*err));
    }

    void layerChecksShapes()
    {
        MultiheadAttention<double> layer(8, 2, true);
        const auto err = invalidArgumentOf([&] {
            layer.setSeparateProjections(MatrixD::Zero(8, 8), MatrixD::Zero(8, 3),
                                         MatrixD::Zero(7, 5), VectorD::Zero(24),
                                         MatrixD::Zero(8, 8), VectorD::Zero(8));
        });
        QVERIFY2(err && err->contains(QLatin1String("v_proj_weight must be (8, vdim)")),
                 qPrintable(err.value_or("no error")));
        layer.setSeparateProjections(MatrixD::Identity(8, 8), MatrixD::Ones(8, 3),
                                     MatrixD::Ones(8, 5), VectorD::Zero(24),
                                     MatrixD::Identity(8, 8), VectorD::Zero(8));
        // The key must now have kdim = 3 columns, not d_model.
        const auto width = invalidArgumentOf(
            [&] { layer.forward(MatrixD::Ones(2, 8), MatrixD::Ones(4, 8), MatrixD::Ones(4, 5)); });
        QVERIFY2(width && width->contains(QLatin1String("key has 8 columns but kdim = 3")),
                 qPrintable(width.value_or("no error")));
        // Back to the packed layout.
        layer.setIdentity();
        QVERIFY(!layer.hasSeparateProjections());
        QCOMPARE(layer.keyDim(), Index(8));
    }

    // `attnlab compute` on separate projections, plain and with positions or a window on the
    // projected heads (the fixture script writes that layer out in PyTorch).
    void computeMatchesTorch_data()
    {
        QTest::addColumn<QString>("name");
        QTest::addColumn<QStringList>("options");
        QTest::newRow("masks") << "kvdim_masks" << QStringList {};
        QTest::newRow("rope") << "kvdim_rope" << QStringList {"--positional", "rope"};
        QTest::newRow("alibi") << "kvdim_alibi" << QStringList {"--positional", "alibi"};
        QTest::newRow("window 2, 1 sink")
            << "kvdim_window2_sinks1" << QStringList {"--window", "2", "--sinks", "1"};
    }
    void computeMatchesTorch()
    {
        QFETCH(QString, name);
        QFETCH(QStringList, options);
        QTemporaryDir dir;
        const QString out = dir.filePath(QStringLiteral("out.npz"));
        QProcess p;
        p.start(QStringLiteral(ATTNLAB_EXE),
                QStringList {QStringLiteral("compute"), QStringLiteral("--in"), fixturePath(name),
                             QStringLiteral("--out"), out}
                    + options);
        QVERIFY(p.waitForFinished(60000));
        const QString err = QString::fromUtf8(p.readAllStandardError());
        QVERIFY2(p.exitStatus() == QProcess::NormalExit && p.exitCode() == 0, qPrintable(err));
        QVERIFY2(QString::fromUtf8(p.readAllStandardOutput())
                     .contains(QLatin1String("separate q/k/v projections, kdim = 10, vdim = 6")),
                 "the summary does not name the projections");
        const NamedArrays expected = loadNamed(name);
        const NamedArrays got = readNpz(out.toStdString());
        const double outDiff
            = maxDiff(member(got, "output").toMatrix<double>("output"),
                      member(expected, "expected_output").toMatrix<double>("expected_output"));
        QVERIFY2(outDiff <= 1e-12, qPrintable(QString::number(outDiff)));
        const NpyArray &w = member(expected, "expected_weights");
        for (std::int64_t h = 0; h < w.shape.at(0); ++h) {
            const double d = maxDiff(member(got, "weights").slice<double>(h, "weights"),
                                     w.slice<double>(h, "expected_weights"));
            QVERIFY2(d <= 1e-12, qPrintable(QString::number(d)));
        }
    }

    // File → Open Tensors… (and sessions, which load through it) on the same file: the window's
    // result holds PyTorch's weights.
    void openTensorsMatchesTorch()
    {
        const QString file = fixturePath(QStringLiteral("kvdim_masks"));
        QString error;
        const auto source
            = makeTensorSource(readTensorFile(file), QString(), MaskConvention::Masked, &error);
        QVERIFY2(source, qPrintable(error));
        QVERIFY2(source->description().contains(
                     QLatin1String("separate q/k/v projections (kdim = 10, vdim = 6)")),
                 qPrintable(source->description()));
        const SessionParameters p = source->parametersFor(SessionParameters {}, source);
        const SessionResult r = computeTensorSession(p);
        QVERIFY2(r.ok(), qPrintable(r.error));
        const NamedArrays expected = loadNamed(QStringLiteral("kvdim_masks"));
        const NpyArray &w = member(expected, "expected_weights");
        QCOMPARE(r.weights.size(), std::size_t(w.shape.at(0)));
        for (std::int64_t h = 0; h < w.shape.at(0); ++h) {
            const double d = maxDiff(r.weights[std::size_t(h)], w.slice<double>(h, "w"));
            QVERIFY2(d <= 1e-12, qPrintable(QString::number(d)));
        }
    }

    void cleanupTestCase()
    {
        qInfo("largest difference from PyTorch: %.3g (float64), %.3g (float32)", m_worst64,
              m_worst32);
    }
};

QTEST_GUILESS_MAIN(TestProjections)
#include "tst_projections.moc"
