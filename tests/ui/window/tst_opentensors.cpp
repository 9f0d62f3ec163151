// Tests of File → Open tensors… and File → Export weights: the PyTorch fixtures
// of tests/reference/fixtures/torch/ (make_torch_fixtures.py) loaded into the session show
// PyTorch's expected_weights; weights written here as 2-d, 3-d and 4-d arrays come back with the
// right layers, heads and values, metrics from the weights, bad rows reported; bad files give a
// message naming the file and the problem and change nothing; token labels from a sidecar or
// typed, with a clear message on a wrong count; exported .npy reads back equal and the CSV has a
// header of key labels. The Model tab and the window with loaded tensors are tested in
// tst_tensorwindow.cpp.

#include "opentensorstest.h"

#include "ui/window/statusbartext.h"

#include <QStatusBar>

using namespace opentensorstest;

class TestOpenTensors : public QObject
{
    Q_OBJECT

private slots:
    void initTestCase();
    void pytorchFixtureShowsExpectedWeights_data();
    void pytorchFixtureShowsExpectedWeights();
    void float32ComputesWithinTolerance();
    void variantsShowNumPyWeights_data();
    void variantsShowNumPyWeights();
    void batchAxisPicksAnItem();
    void sessionScaleAppliesToLoadedInputs();
    void weightArrays_data();
    void weightArrays();
    void weightRowsReportedNotHidden();
    void nanRowsHaveNoSumError();
    void npzArrayChoice();
    void badFilesKeepTheView_data();
    void badFilesKeepTheView();
    void maskConventionReloads();
    void tokenSidecar_data();
    void tokenSidecar();
    void typedTokens();
    void exportNpyReadsBack_data();
    void exportNpyReadsBack();
    void exportCsvHasHeaderAndValues();

private:
    QTemporaryDir m_dir;
    QString path(const QString &name) const { return m_dir.filePath(name); }
};

void TestOpenTensors::initTestCase()
{
    QVERIFY(m_dir.isValid());
}

void TestOpenTensors::pytorchFixtureShowsExpectedWeights_data()
{
    QTest::addColumn<QString>("fixture");
    QTest::addColumn<bool>("cross");

    QTest::newRow("self-attention h=4") << "self_attn" << false;
    QTest::newRow("causal attn_mask") << "causal" << false;
    QTest::newRow("key_padding_mask") << "key_padding" << false;
    QTest::newRow("cross, causal and padding") << "cross_causal_padding" << true;
    QTest::newRow("additive float mask") << "additive_mask" << false;
    QTest::newRow("fully masked row") << "fully_masked_row" << false;
    QTest::newRow("h = 8") << "h8" << false;
    QTest::newRow("bias=False") << "no_bias" << false;
    QTest::newRow("plain attention, n_q != n_k") << "plain" << true;
}

void TestOpenTensors::pytorchFixtureShowsExpectedWeights()
{
    QFETCH(QString, fixture);
    QFETCH(bool, cross);

    Bench b;
    QVERIFY(b.start());
    const QString file = fixturePath(fixture);
    QString error;
    QVERIFY2(b.controller.openFile(file, &error), qPrintable(error));
    const ResultPtr r = b.settle();
    QVERIFY(r && r->ok());

    const NpyArray expected = member(file, "expected_weights");
    const NpyArray query = member(file, "query"), key = member(file, "key");
    const SessionParameters &p = b.session.parameters();
    QVERIFY(p.tensors);
    QCOMPARE(p.tensors->kind(), TensorSource::Kind::Inputs);
    QCOMPARE(p.n, int(query.shape[0]));
    QCOMPARE(p.keyCount(), int(key.shape[0]));
    QCOMPARE(p.dModel, int(query.shape[1]));
    QCOMPARE(p.heads, int(expected.shape[0]));
    QCOMPARE(p.kind == AttentionKind::EncoderDecoder, cross);
    QCOMPARE(loadedTensorPath(p), QFileInfo(file).absoluteFilePath());
    QCOMPARE(b.controller.loadedPath(), QFileInfo(file).absoluteFilePath());
    QVERIFY2(p.caption().startsWith(QStringLiteral("loaded: %1.npz").arg(fixture)),
             qPrintable(p.caption()));
    QVERIFY(b.controller.statusLabel()->text().contains(fixture + QStringLiteral(".npz")));
    // A sliding window left on in the Controls applies to the file's inputs: the caption says so.
    SessionParameters windowed = p;
    windowed.window = 3;
    windowed.sinks = 1;
    QVERIFY2(windowed.caption().contains(QStringLiteral("window=3+1 sink")),
             qPrintable(windowed.caption()));

    QCOMPARE(r->headCount(), int(expected.shape[0]));
    for (int h = 0; h < r->headCount(); ++h) {
        MatrixD reference = expected.slice<double>(h, "expected_weights");
        for (Index i = 0; i < reference.rows(); ++i) {
            // PyTorch 1.13 returns NaN on fully masked rows; the app shows documented zeros.
            if (reference.row(i).array().isNaN().any()) {
                reference.row(i).setZero();
                QVERIFY(r->fullyMasked[std::size_t(h)][std::size_t(i)]);
            }
        }
        ATTN_COMPARE_CLOSE(r->weights[std::size_t(h)], reference, 1e-12, 0.0);
    }
}

// Tensor files with the 2025 variants' arrays (tests/reference/make_variant_compute_fixtures.py,
// NumPy from the papers' formulas) show their weights: learned sinks' rows sum to 1 − sink mass,
// differential attention's A₁ − λA₂ is signed (drawn on the diverging scale) with A₁ and A₂
// kept, and the caption names the variant.
void TestOpenTensors::variantsShowNumPyWeights_data()
{
    QTest::addColumn<QString>("fixture");
    QTest::addColumn<QString>("caption");
    QTest::newRow("learned sinks") << "sinks_gqa_rope_window"
                                   << "learned sinks b=0.5/-inf/2/-1";
    QTest::newRow("differential, gated")
        << "differential_gated"
        << "differential A\u2081\u2212\u03bbA\u2082, \u03bb=0.3/0.8";
}

void TestOpenTensors::variantsShowNumPyWeights()
{
    QFETCH(QString, fixture);
    QFETCH(QString, caption);
    Bench b;
    QVERIFY(b.start());
    const QString file = QStringLiteral(ATTN_FIXTURE_DIR "/variants/compute_%1.npz").arg(fixture);
    QString error;
    QVERIFY2(b.controller.openFile(file, &error), qPrintable(error));
    const ResultPtr r = b.settle();
    QVERIFY(r && r->ok());
    QVERIFY2(b.session.parameters().caption().contains(caption),
             qPrintable(b.session.parameters().caption()));
    const NpyArray expected = member(file, "expected_weights");
    QCOMPARE(r->headCount(), int(expected.shape[0]));
    // The window's sliding window and RoPE are command-line options of this fixture: compare
    // only the fixture without them, and the invariants of both.
    const bool plainOptions = fixture == QLatin1String("differential_gated");
    for (int h = 0; h < r->headCount(); ++h) {
        const MatrixD &w = r->weights[std::size_t(h)];
        if (plainOptions)
            ATTN_COMPARE_CLOSE(w, expected.slice<double>(h, "expected_weights"), 1e-12, 0.0);
        if (!r->learnedSinkMass.empty()) {
            const VectorD total = w.rowwise().sum() + r->learnedSinkMass[std::size_t(h)];
            QVERIFY((total.array() - 1.0).abs().maxCoeff() <= 1e-12);
        } else {
            const double lambda = r->lambda.at(std::size_t(h));
            QVERIFY((w.rowwise().sum().array() - (1.0 - lambda)).abs().maxCoeff() <= 1e-12);
            ATTN_COMPARE_CLOSE(r->firstWeights.at(std::size_t(h)),
                               member(file, "expected_first").slice<double>(h, "expected_first"),
                               1e-12, 0.0);
        }
    }
    QCOMPARE(r->signedWeights, !r->lambda.empty());
    QCOMPARE(r->learnedSinkMass.empty(), plainOptions);
}

// Inputs with PyTorch's batch axis (tests/reference/make_batch_fixtures.py, B = 3): the batch
// picker is asked with B, the chosen item is shown (its weights are PyTorch's for that item,
// padding included), the caption names it, and cancelling the picker keeps the view.

void TestOpenTensors::batchAxisPicksAnItem()
{
    Bench b;
    QVERIFY(b.start());
    const QString file = QStringLiteral(ATTN_FIXTURE_DIR "/batch/mha_batch.npz");
    int askedWith = 0;
    b.controller.setBatchChooser([&](const TensorFile &, int batchCount) {
        askedWith = batchCount;
        return 1;
    });
    QString error;
    QVERIFY2(b.controller.openFile(file, &error), qPrintable(error));
    QCOMPARE(askedWith, 3);
    const ResultPtr r = b.settle();
    QVERIFY(r && r->ok());
    const SessionParameters &p = b.session.parameters();
    QVERIFY(p.tensors);
    QCOMPARE(p.tensors->batch(), 1);
    QCOMPARE(p.tensors->batchCount(), 3);
    QVERIFY2(p.caption().contains(QStringLiteral("batch item 1 of B=3")), qPrintable(p.caption()));
    const NpyArray expected = member(file, "expected_weights"); // B × h × n × n
    QCOMPARE(r->headCount(), 4);
    for (int h = 0; h < 4; ++h) {
        MatrixD reference(6, 6);
        for (Index i = 0; i < 6; ++i)
            for (Index j = 0; j < 6; ++j)
                reference(i, j) = expected.values[std::size_t(((4 + h) * 6 + i) * 6 + j)];
        ATTN_COMPARE_CLOSE(r->weights[std::size_t(h)], reference, 1e-12, 0.0);
    }
    QCOMPARE(r->weights[0](0, 5), 0.0); // item 1 pads its last two keys

    // Cancelling the picker keeps what is shown.
    b.controller.setBatchChooser([](const TensorFile &, int) { return -1; });
    QVERIFY(!b.controller.openFile(file, &error));
    QVERIFY2(error.contains(QStringLiteral("no batch item")), qPrintable(error));
    QCOMPARE(b.session.parameters().tensors->batch(), 1);
}

void TestOpenTensors::float32ComputesWithinTolerance()
{
    Bench b;
    SessionParameters p = b.session.parameters();
    p.dtype = DType::Float32; // kept when loading
    b.session.setParameters(p);
    QVERIFY(b.settle());
    QString error;
    const QString file = fixturePath(QStringLiteral("self_attn_float32"));
    QVERIFY2(b.controller.openFile(file, &error), qPrintable(error));
    const ResultPtr r = b.settle();
    QVERIFY(r && r->ok());
    QCOMPARE(r->params.dtype, DType::Float32);
    const NpyArray expected = member(file, "expected_weights");
    for (int h = 0; h < r->headCount(); ++h)
        ATTN_COMPARE_CLOSE(r->weights[std::size_t(h)], expected.slice<double>(h, "w"), 1e-5, 0.0);
}

void TestOpenTensors::sessionScaleAppliesToLoadedInputs()
{
    // α = 0 (unscaled) on plain attention: weights = softmax(Q Kᵀ), computed here by hand.
    Bench b;
    QVERIFY(b.start());
    QString error;
    const QString file = fixturePath(QStringLiteral("plain"));
    QVERIFY2(b.controller.openFile(file, &error), qPrintable(error));
    QVERIFY(b.settle());
    SessionParameters p = b.session.parameters();
    p.scaleExponent = 0.0;
    b.session.setParameters(p);
    const ResultPtr r = b.settle();
    QVERIFY(r && r->ok());
    const MatrixD q = member(file, "query").toMatrix<double>("query");
    const MatrixD k = member(file, "key").toMatrix<double>("key");
    const MatrixD s = q * k.transpose();
    MatrixD w(s.rows(), s.cols());
    for (Index i = 0; i < s.rows(); ++i) {
        const double m = s.row(i).maxCoeff();
        w.row(i) = (s.row(i).array() - m).exp().matrix();
        w.row(i) /= w.row(i).sum();
    }
    ATTN_COMPARE_CLOSE(r->weights[0], w, 1e-12, 0.0);
    ATTN_COMPARE_CLOSE(r->scores[0], s, 1e-12, 0.0);
    QCOMPARE(r->scale, 1.0);
    // A shape change is refused: the file fixes d_model.
    QSignalSpy failed(&b.session, &AttentionSession::computeFailed);
    SessionParameters wider = b.session.parameters();
    wider.dModel = 12;
    b.session.setParameters(wider);
    QCOMPARE(failed.size(), 1);
    QVERIFY(failed.at(0).at(0).toString().contains(QLatin1String("d_model is fixed at 6")));
    QCOMPARE(b.session.parameters(), p);
}

void TestOpenTensors::weightArrays_data()
{
    QTest::addColumn<QList<qint64>>("shape");
    QTest::addColumn<bool>("npz");
    QTest::addColumn<int>("layers");
    QTest::addColumn<int>("heads");

    QTest::newRow("2-d .npy") << QList<qint64> {5, 7} << false << 1 << 1;
    QTest::newRow("3-d .npy") << QList<qint64> {3, 5, 5} << false << 1 << 3;
    QTest::newRow("4-d .npy") << QList<qint64> {2, 4, 6, 6} << false << 2 << 4;
    QTest::newRow("4-d .npz 'attention'") << QList<qint64> {3, 2, 4, 9} << true << 3 << 2;
}

void TestOpenTensors::weightArrays()
{
    QFETCH(QList<qint64>, shape);
    QFETCH(bool, npz);
    QFETCH(int, layers);
    QFETCH(int, heads);

    const NpyArray weights = probabilityRows(std::vector<std::int64_t>(shape.begin(), shape.end()));
    const QString tag = QString::fromLatin1(QTest::currentDataTag()).replace(' ', '_');
    const QString file = path(tag + (npz ? QStringLiteral(".npz") : QStringLiteral(".npy")));
    if (npz)
        writeNpz(file.toStdString(),
                 {{"tokens_count", NpyArray::scalarInt(4)}, {"attention", weights}});
    else
        writeNpy(file.toStdString(), weights);

    Bench b;
    QVERIFY(b.start());
    QString error;
    QVERIFY2(b.controller.openFile(file, &error), qPrintable(error));
    ResultPtr r = b.settle();
    QVERIFY(r && r->ok());
    const auto source = b.session.parameters().tensors;
    QVERIFY(source && source->isWeights());
    QCOMPARE(source->layerCount(), layers);
    QCOMPARE(source->headCount(), heads);
    QCOMPARE(source->arrayName(),
             npz ? QStringLiteral("attention") : QFileInfo(file).completeBaseName());
    const Index nQ = shape[shape.size() - 2], nK = shape.back();
    QCOMPARE(r->queryCount(), nQ);
    QCOMPARE(r->keyCount(), nK);
    QCOMPARE(b.controller.panel()->layerSpin()->isVisibleTo(b.controller.panel()), layers > 1);

    for (int layer = 0; layer < layers; ++layer) {
        if (layer > 0) {
            b.controller.setLayer(layer);
            r = b.settle();
            QVERIFY(r && r->ok());
            QCOMPARE(b.session.parameters().tensors->layer(), layer);
            QVERIFY(r->params.caption().contains(
                QStringLiteral("layer %1 of %2").arg(layer).arg(layers)));
        }
        QCOMPARE(r->headCount(), heads);
        MatrixD mean = MatrixD::Zero(nQ, nK);
        for (int h = 0; h < heads; ++h) {
            // Element (layer, h, i, j) sits at ((layer·heads + h)·n_q + i)·n_k + j.
            MatrixD expected(nQ, nK);
            for (Index i = 0; i < nQ; ++i)
                for (Index j = 0; j < nK; ++j)
                    expected(i, j)
                        = weights.values[std::size_t(((layer * heads + h) * nQ + i) * nK + j)];
            ATTN_COMPARE_CLOSE(r->weights[std::size_t(h)], expected, 0.0, 0.0);
            mean += expected;
            // Metrics come from the stored weights.
            for (Index i = 0; i < nQ; ++i) {
                QCOMPARE(r->metrics[std::size_t(h)].maxWeight(i), expected.row(i).maxCoeff());
                double entropy = 0;
                for (Index j = 0; j < nK; ++j)
                    entropy -= expected(i, j) * std::log(expected(i, j));
                QVERIFY(std::abs(r->metrics[std::size_t(h)].entropy(i) - entropy) <= 1e-12);
            }
            QVERIFY(r->scores[std::size_t(h)].array().isNaN().all()); // unknown, not invented
        }
        ATTN_COMPARE_CLOSE(r->weightsMean, mean / double(heads), 1e-15, 0.0);
        QVERIFY(checkWeights(*r).ok());
        QVERIFY(b.controller.panel()->checkLabel()->text().contains(QLatin1String("sum to 1")));
    }
}

void TestOpenTensors::weightRowsReportedNotHidden()
{
    // Head 1 row 2 sums to 0.5, head 0 row 1 holds a NaN, head 1 row 0 a negative weight.
    NpyArray w = probabilityRows({2, 3, 4});
    auto at = [&](int h, int i, int j) -> double & {
        return w.values[std::size_t((h * 3 + i) * 4 + j)];
    };
    for (int j = 0; j < 4; ++j)
        at(1, 2, j) *= 0.5;
    at(0, 1, 3) = std::numeric_limits<double>::quiet_NaN();
    at(1, 0, 1) += at(1, 0, 0) + 0.25; // the row still sums to 1
    at(1, 0, 0) = -0.25;
    const QString file = path(QStringLiteral("bad_rows.npy"));
    writeNpy(file.toStdString(), w);

    Bench b;
    QVERIFY(b.start());
    QString error;
    QVERIFY2(b.controller.openFile(file, &error), qPrintable(error));
    const ResultPtr r = b.settle();
    QVERIFY(r && r->ok());
    QVERIFY(std::isnan(r->weights[0](1, 3))); // shown as stored
    QCOMPARE(r->weights[1](0, 0), -0.25);
    QVERIFY(r->nonFinite.found);
    QCOMPARE(r->nonFinite.nanCount, Index(1));
    QCOMPARE(r->worstRowSumError, 0.5);

    const WeightCheck check = checkWeights(*r);
    QCOMPARE(check.rows, 6);
    QCOMPARE(check.badSumRows, 1);
    QCOMPARE(check.worstHead, 1);
    QCOMPARE(check.worstRow, 2);
    QCOMPARE(check.nonFiniteRows, 1);
    QCOMPARE(check.firstNonFiniteHead, 0);
    QCOMPARE(check.firstNonFiniteRow, 1);
    QCOMPARE(check.negativeRows, 1);
    const QString text = b.controller.panel()->checkLabel()->text();
    QVERIFY2(text.contains(QLatin1String("1 of 6 rows do not sum to 1")), qPrintable(text));
    QVERIFY2(text.contains(QLatin1String("1 row holds NaN/Inf: 1 NaN and 0 Inf cells, the "
                                         "first at head 0, row 1, key 3")),
             qPrintable(text));
    QVERIFY2(text.contains(QLatin1String("negative")), qPrintable(text));
}

// A row holding a NaN has no sum error and no metrics (NaN, not a number the skipped NaN
// leaves), and the status bar counts it instead of giving the other rows' worst error for
// every row.
void TestOpenTensors::nanRowsHaveNoSumError()
{
    const double nan = std::numeric_limits<double>::quiet_NaN();
    NpyArray oneNan;
    oneNan.type = NpyType::Float64;
    oneNan.shape = {4, 4};
    oneNan.values.assign(16, 0.25);
    oneNan.values[2 * 4 + 1] = nan;
    NpyArray allNan = oneNan;
    allNan.shape = {3, 3};
    allNan.values.assign(9, nan);
    const QString oneFile = path(QStringLiteral("w_onenan.npy"));
    const QString allFile = path(QStringLiteral("w_allnan.npy"));
    writeNpy(oneFile.toStdString(), oneNan);
    writeNpy(allFile.toStdString(), allNan);

    Bench b;
    QVERIFY(b.start());
    QStatusBar bar;
    QLabel tensorsLabel;
    StatusBarText status(&bar, &tensorsLabel);
    auto *rowSum = bar.findChild<QLabel *>(QStringLiteral("rowSumStatus"));
    QVERIFY(rowSum);
    QString error;
    QVERIFY2(b.controller.openFile(oneFile, &error), qPrintable(error));
    ResultPtr r = b.settle();
    QVERIFY(r && r->ok());
    const RowMetrics &m = r->metrics.at(0);
    QVERIFY(std::isnan(m.rowSumError(2)));
    for (const VectorD *series : {&m.entropy, &m.effectiveTerms, &m.maxWeight, &m.jacobianNorm})
        QVERIFY(std::isnan((*series)(2)));
    QCOMPARE(m.effectiveTerms(0), 4.0);
    QCOMPARE(m.rowSumError(0), 0.0);
    status.showResult(*r);
    QCOMPARE(rowSum->text(),
             QStringLiteral(
                 "row sums: 1 row NaN \u00b7 the other 3 rows: worst |\u03a3w \u2212 1| = 0"));

    QVERIFY2(b.controller.openFile(allFile, &error), qPrintable(error));
    r = b.settle();
    QVERIFY(r && r->ok());
    status.showResult(*r);
    QCOMPARE(rowSum->text(), QStringLiteral("row sums: 3 rows NaN"));
}

void TestOpenTensors::npzArrayChoice()
{
    const NpyArray weights = probabilityRows({2, 3, 3});
    const QString file = path(QStringLiteral("dump.npz"));
    writeNpz(file.toStdString(),
             {{"logits", arrayOf({3}, [](std::size_t k) { return double(k); })},
              {"probs", weights},
              {"ids", arrayOf({3}, [](std::size_t k) { return double(k); })}});
    Bench b;
    QVERIFY(b.start());
    QStringList offered;
    b.controller.setArrayChooser([&](const TensorFile &f) {
        offered = describeArrays(f);
        return QString(); // cancel
    });
    QString error;
    const auto before = b.session.result();
    QVERIFY(!b.controller.openFile(file, &error));
    QCOMPARE(offered,
             (QStringList {"logits float64 (3,)", "probs float64 (2, 3, 3)", "ids float64 (3,)"}));
    QVERIFY2(error.contains(QLatin1String("no array of weights was chosen")), qPrintable(error));
    QCOMPARE(b.session.result(), before);
    QVERIFY(!b.session.parameters().tensors);

    b.controller.setArrayChooser([](const TensorFile &) { return QStringLiteral("probs"); });
    QVERIFY2(b.controller.openFile(file, &error), qPrintable(error));
    const ResultPtr r = b.settle();
    QVERIFY(r && r->ok());
    QCOMPARE(b.session.parameters().tensors->arrayName(), QStringLiteral("probs"));
    QCOMPARE(r->headCount(), 2);
    QVERIFY(b.session.parameters().tensors->notes().join(' ').contains(QLatin1String("logits")));

    // A known name needs no question.
    const QString named = path(QStringLiteral("named.npz"));
    writeNpz(named.toStdString(),
             {{"x", arrayOf({2}, [](std::size_t) { return 1.0; })}, {"attn_weights", weights}});
    b.controller.setArrayChooser(
        [](const TensorFile &) -> QString { qFatal("the chooser must not be asked"); });
    QVERIFY2(b.controller.openFile(named, &error), qPrintable(error));
    QCOMPARE(b.session.parameters().tensors->arrayName(), QStringLiteral("attn_weights"));
}

void TestOpenTensors::badFilesKeepTheView_data()
{
    QTest::addColumn<QString>("kind");
    QTest::addColumn<QString>("message");

    QTest::newRow("missing file") << "missing"
                                  << "no such file";
    QTest::newRow("not a NumPy file") << "garbage"
                                      << "garbage.npy";
    QTest::newRow("object dtype (pickle)") << "object"
                                           << "object arrays (dtype";
    QTest::newRow("missing value") << "no value"
                                   << "missing array 'value'";
    QTest::newRow("key with other d_model") << "key shape"
                                            << "array 'key' has 5 columns but query has 16";
    QTest::newRow("num_heads not dividing") << "heads"
                                            << "num_heads = 3 must be at least 1 and divide";
    QTest::newRow("1-d weights") << "1-d"
                                 << "is not attention weights";
    QTest::newRow("5-d weights") << "5-d"
                                 << "is not attention weights";
    QTest::newRow("bool weights") << "bool"
                                  << "must hold numbers (attention weights)";
    QTest::newRow("empty .npz") << "empty"
                                << "holds no arrays";
    // Readable, but the attention cannot be computed: q·k overflows to ±inf (1e200² > DBL_MAX)
    // and the softmax refuses the non-finite scores (the NaN of inf − inf, or +inf where the
    // BLAS's fused multiply-adds kept one sign). Refused on open, like an unreadable file.
    QTest::newRow("scores overflow") << "overflow"
                                     << "scaled scores overflowed: softmax input has";
}

void TestOpenTensors::badFilesKeepTheView()
{
    QFETCH(QString, kind);
    QFETCH(QString, message);

    const QString tag = QString::fromLatin1(QTest::currentDataTag()).replace(' ', '_');
    QString file;
    auto withCase
        = [&](const std::function<void(std::vector<std::pair<std::string, NpyArray>> &)> &change) {
              auto arrays = readNpz(fixturePath(QStringLiteral("self_attn")).toStdString());
              change(arrays);
              file = path(tag + QStringLiteral(".npz"));
              writeNpz(file.toStdString(), arrays);
          };
    if (kind == "missing") {
        file = path(QStringLiteral("does-not-exist.npz"));
    } else if (kind == "garbage") {
        file = path(QStringLiteral("garbage.npy"));
        QFile f(file);
        QVERIFY(f.open(QIODevice::WriteOnly));
        f.write("definitely not an array");
    } else if (kind == "object") {
        // np.save of an object array: the header says '|O' and a pickle follows.
        file = path(QStringLiteral("object.npy"));
        QByteArray header = "{'descr': '|O', 'fortran_order': False, 'shape': (2,), }";
        while ((10 + header.size() + 1) % 64 != 0)
            header += ' ';
        header += '\n';
        QByteArray bytes("\x93NUMPY\x01\x00", 8);
        bytes += char(header.size() & 0xff);
        bytes += char(header.size() >> 8);
        bytes += header;
        bytes += QByteArray("\x80\x04\x95", 3); // start of a pickle
        QFile f(file);
        QVERIFY(f.open(QIODevice::WriteOnly));
        f.write(bytes);
    } else if (kind == "no value") {
        withCase([](auto &a) { std::erase_if(a, [](auto &x) { return x.first == "value"; }); });
    } else if (kind == "key shape") {
        withCase([](auto &a) {
            for (auto &[n, x] : a)
                if (n == "key")
                    x = NpyArray::fromMatrix<double>(MatrixD::Ones(6, 5));
        });
    } else if (kind == "heads") {
        withCase([](auto &a) {
            for (auto &[n, x] : a)
                if (n == "num_heads")
                    x = NpyArray::scalarInt(3);
        });
    } else if (kind == "1-d" || kind == "5-d" || kind == "bool") {
        NpyArray a = kind == "1-d" ? arrayOf({4}, [](std::size_t) { return 0.25; })
            : kind == "5-d"        ? arrayOf({1, 1, 1, 2, 2}, [](std::size_t) { return 0.5; })
                                   : arrayOf({2, 2}, [](std::size_t) { return 1.0; });
        if (kind == "bool")
            a.type = NpyType::Bool;
        file = path(tag + QStringLiteral(".npy"));
        writeNpy(file.toStdString(), a);
    } else if (kind == "overflow") {
        withCase([](auto &a) {
            for (auto &[n, x] : a)
                if (n == "query" || n == "key")
                    for (double &v : x.values)
                        v *= 1e200;
        });
    } else if (kind == "empty") {
        file = path(QStringLiteral("empty.npz"));
        writeNpz(file.toStdString(), {});
    } else {
        QFAIL("unknown kind");
    }

    // Something loaded first: a bad file must keep it (parameters, result, labels).
    Bench b;
    QVERIFY(b.start());
    QString error;
    const QString good = path(QStringLiteral("good_%1.npy").arg(tag));
    writeNpy(good.toStdString(), probabilityRows({2, 4, 4}));
    QVERIFY2(b.controller.openFile(good, &error), qPrintable(error));
    QVERIFY(b.settle());
    b.controller.setTokenLabels({"a", "b", "c", "d"});
    const ResultPtr before = b.settle();
    QVERIFY(before && before->ok());
    const SessionParameters params = b.session.parameters();
    const QString badge = b.controller.statusLabel()->text();
    const QString panelFile = b.controller.panel()->fileLabel()->text();
    QVERIFY2(badge.contains(QFileInfo(good).fileName()), qPrintable(badge));
    QSignalSpy results(&b.session, &AttentionSession::resultChanged);
    QSignalSpy changes(&b.session, &AttentionSession::parametersChanged);

    QVERIFY(!b.controller.openFile(file, &error));
    QVERIFY2(error.contains(message), qPrintable(error));
    QVERIFY2(error.contains(QFileInfo(file).fileName()), qPrintable(error)); // names the file
    QTest::qWait(50);
    QCOMPARE(results.size(), 0);
    QCOMPARE(changes.size(), 0);
    QCOMPARE(b.session.parameters(), params);
    QCOMPARE(b.session.result(), before);
    QCOMPARE(b.session.result()->queryLabel(2), QStringLiteral("c"));
    // The badge, the panel and the heatmap still agree on the previous file.
    QCOMPARE(b.controller.statusLabel()->text(), badge);
    QCOMPARE(b.controller.panel()->fileLabel()->text(), panelFile);
    QCOMPARE(b.controller.loadedPath(), QFileInfo(good).absoluteFilePath());
    QCOMPARE(b.heatmap.result(), before);
}

void TestOpenTensors::maskConventionReloads()
{
    // plain_allowed's mask means "may attend": read as "masked out" it gives other weights.
    const QString file = fixturePath(QStringLiteral("plain_allowed"));
    const MatrixD expected = member(file, "expected_weights").slice<double>(0, "w");
    Bench b;
    QVERIFY(b.start());
    QString error;
    QVERIFY2(b.controller.openFile(file, &error), qPrintable(error));
    ResultPtr r = b.settle();
    QVERIFY(r && r->ok());
    QVERIFY(!test::compareClose(r->weights[0], expected, 1e-12, 0.0).ok);
    b.controller.setMaskConvention(MaskConvention::Allowed);
    r = b.settle();
    QVERIFY(r && r->ok());
    QCOMPARE(b.session.parameters().tensors->maskConvention(), MaskConvention::Allowed);
    ATTN_COMPARE_CLOSE(r->weights[0], expected, 1e-12, 0.0);
}

void TestOpenTensors::tokenSidecar_data()
{
    QTest::addColumn<QString>("fixture");
    QTest::addColumn<QString>("sidecarName"); // %1 = the fixture's name
    QTest::addColumn<int>("count");
    QTest::addColumn<bool>("fits");

    QTest::newRow("self: n tokens") << "self_attn"
                                    << "%1.tokens.txt" << 6 << true;
    QTest::newRow("self: name.npz.tokens.txt") << "self_attn"
                                               << "%1.npz.tokens.txt" << 6 << true;
    QTest::newRow("self: one short") << "self_attn"
                                     << "%1.tokens.txt" << 5 << false;
    QTest::newRow("self: one too many") << "self_attn"
                                        << "%1.tokens.txt" << 7 << false;
    QTest::newRow("cross: n_q + n_k") << "cross"
                                      << "%1.tokens.txt" << 4 + 9 << true;
    QTest::newRow("cross: n_q only") << "cross"
                                     << "%1.tokens.txt" << 4 << false;
}

void TestOpenTensors::tokenSidecar()
{
    QFETCH(QString, fixture);
    QFETCH(QString, sidecarName);
    QFETCH(int, count);
    QFETCH(bool, fits);

    const QString tag = QString::fromLatin1(QTest::currentDataTag())
                            .replace(QRegularExpression(QStringLiteral("[^A-Za-z0-9]+")), "_");
    QTemporaryDir dir(m_dir.filePath(tag + QStringLiteral("-XXXXXX")));
    QVERIFY(dir.isValid());
    const QString file = dir.filePath(fixture + QStringLiteral(".npz"));
    QVERIFY(QFile::copy(fixturePath(fixture), file));
    QStringList tokens;
    for (int k = 0; k < count; ++k)
        tokens << QStringLiteral("tok%1").arg(k);
    tokens[0] = QStringLiteral("naïve, \"quoted\"");
    {
        QFile f(dir.filePath(sidecarName.arg(fixture)));
        QVERIFY(f.open(QIODevice::WriteOnly));
        f.write((tokens.join(QStringLiteral("\r\n")) + QStringLiteral("\r\n")).toUtf8());
    }

    Bench b;
    QVERIFY(b.start());
    QString error;
    QVERIFY2(b.controller.openFile(file, &error), qPrintable(error));
    const ResultPtr r = b.settle();
    QVERIFY(r && r->ok());
    const QString message = b.controller.tokenMessage();
    const TensorPanel *panel = b.controller.panel();
    if (fits) {
        QVERIFY2(message.isEmpty(), qPrintable(message));
        QCOMPARE(b.session.parameters().tokenList(), tokens);
        QCOMPARE(r->queryLabel(0), tokens[0]);
        QCOMPARE(r->queryLabel(3), QStringLiteral("tok3"));
        const int nQ = r->params.n;
        QCOMPARE(r->keyLabel(1),
                 r->params.kind == AttentionKind::EncoderDecoder ? tokens[nQ + 1] : tokens[1]);
        QVERIFY(panel->tokenMessageLabel()->isHidden());
    } else {
        QVERIFY2(message.contains(QStringLiteral("%1 token labels given").arg(count)),
                 qPrintable(message));
        QVERIFY2(message.contains(QLatin1String("positions 0, 1, 2")), qPrintable(message));
        QVERIFY(message.contains(QLatin1String(".tokens.txt")));
        QVERIFY(b.session.parameters().tokens.empty());
        QCOMPARE(r->queryLabel(3), QStringLiteral("3")); // indices
        QCOMPARE(panel->tokenMessageLabel()->text(), message);
        QVERIFY(!panel->tokenMessageLabel()->isHidden());
    }
}

void TestOpenTensors::typedTokens()
{
    Bench b;
    QVERIFY(b.start());
    QString error;
    QVERIFY2(b.controller.openFile(fixturePath(QStringLiteral("h1")), &error), qPrintable(error));
    QVERIFY(b.settle());
    const int n = b.session.parameters().n;
    QCOMPARE(n, 5);

    // Typed into the panel's field (split at white space), applied on Enter.
    QLineEdit *edit = b.controller.panel()->tokensEdit();
    edit->setFocus();
    edit->clear();
    QTest::keyClicks(edit, QStringLiteral("The  cat sat   on mats"));
    QTest::keyClick(edit, Qt::Key_Return);
    ResultPtr r = b.settle();
    QCOMPARE(b.session.parameters().tokenList(), (QStringList {"The", "cat", "sat", "on", "mats"}));
    QCOMPARE(r->queryLabel(1), QStringLiteral("cat"));
    QVERIFY(b.controller.tokenMessage().isEmpty());

    // A wrong count: message, positions shown, the typed text stays to be corrected.
    const QString message = b.controller.setTokenLabels({"only", "three", "words"});
    QVERIFY2(message.contains(QLatin1String("3 token labels given but the tensors need 5")),
             qPrintable(message));
    r = b.settle();
    QVERIFY(b.session.parameters().tokens.empty());
    QCOMPARE(r->queryLabel(1), QStringLiteral("1"));
    QCOMPARE(edit->text(), QStringLiteral("only three words"));

    // From a file chosen by the user.
    const QString labels = path(QStringLiteral("labels.txt"));
    {
        QFile f(labels);
        QVERIFY(f.open(QIODevice::WriteOnly));
        f.write("a\nb\n\nd\ne\n"); // an empty token is a token
    }
    QVERIFY(b.controller.loadTokenFile(labels).isEmpty());
    r = b.settle();
    QCOMPARE(b.session.parameters().tokenList(), (QStringList {"a", "b", "", "d", "e"}));
    const QString missing = b.controller.loadTokenFile(path(QStringLiteral("nope.txt")));
    QVERIFY2(missing.contains(QLatin1String("nope.txt")), qPrintable(missing));
    QCOMPARE(b.session.parameters().tokenList(), (QStringList {"a", "b", "", "d", "e"})); // kept
}

void TestOpenTensors::exportNpyReadsBack_data()
{
    QTest::addColumn<int>("head"); // allHeads, a head, or h = mean

    QTest::newRow("all heads") << int(allHeads);
    QTest::newRow("head 2") << 2;
    QTest::newRow("mean") << 4;
}

void TestOpenTensors::exportNpyReadsBack()
{
    QFETCH(int, head);
    Bench b;
    QVERIFY(b.start());
    QString error;
    const QString file = fixturePath(QStringLiteral("self_attn"));
    QVERIFY2(b.controller.openFile(file, &error), qPrintable(error));
    const ResultPtr r = b.settle();
    QVERIFY(r && r->headCount() == 4);
    const QString out = path(QStringLiteral("export_%1.npy").arg(head));
    QVERIFY2(b.controller.exportWeights(out, head, &error), qPrintable(error));
    const NpyArray back = readNpy(out.toStdString());
    QCOMPARE(back.type, NpyType::Float64);
    if (head == allHeads) {
        QCOMPARE(back.shape, (std::vector<std::int64_t> {4, 6, 6}));
        const NpyArray expected = member(file, "expected_weights");
        for (int h = 0; h < 4; ++h) {
            ATTN_COMPARE_CLOSE(back.slice<double>(h, "back"), r->weights[std::size_t(h)], 0.0, 0.0);
            ATTN_COMPARE_CLOSE(back.slice<double>(h, "back"), expected.slice<double>(h, "e"), 1e-12,
                               0.0);
        }
    } else {
        QCOMPARE(back.shape, (std::vector<std::int64_t> {6, 6}));
        const MatrixD &shown = head == 4 ? r->weightsMean : r->weights[std::size_t(head)];
        ATTN_COMPARE_CLOSE(back.toMatrix<double>("back"), shown, 0.0, 0.0);
    }
    // The heatmap's enlarged head is the default of File → Export Weights.
    b.controller.showHead(head);
    QCOMPARE(b.controller.currentHead(), head);
}

void TestOpenTensors::exportCsvHasHeaderAndValues()
{
    Bench b;
    QVERIFY(b.start());
    QString error;
    QVERIFY2(b.controller.openFile(fixturePath(QStringLiteral("no_bias")), &error),
             qPrintable(error));
    QVERIFY(b.settle());
    b.controller.setTokenLabels({"the", "a,b", "say \"hi\"", "x", "y"});
    const ResultPtr r = b.settle();
    QVERIFY(r && r->ok());

    auto readCsv = [](const QString &file) {
        QFile f(file);
        f.open(QIODevice::ReadOnly);
        return QString::fromUtf8(f.readAll()).split(QLatin1Char('\n'), Qt::SkipEmptyParts);
    };
    const QString keyHeader = QStringLiteral("the,\"a,b\",\"say \"\"hi\"\"\",x,y");

    const QString one = path(QStringLiteral("head1.csv"));
    QVERIFY2(b.controller.exportWeights(one, 1, &error), qPrintable(error));
    QStringList lines = readCsv(one);
    QCOMPARE(lines.size(), 1 + 5);
    QCOMPARE(lines[0], QStringLiteral("query,") + keyHeader);
    QVERIFY(lines[1].startsWith(QLatin1String("the,")));
    QVERIFY(lines[2].startsWith(QLatin1String("\"a,b\",")));
    const QStringList cells = lines[4].split(QLatin1Char(','));
    QCOMPARE(cells.size(), 6);
    QCOMPARE(cells[0], QStringLiteral("x"));
    for (int j = 0; j < 5; ++j)
        QCOMPARE(cells[j + 1].toDouble(), r->weights[1](3, j)); // shortest round-trip text

    const QString all = path(QStringLiteral("all.csv"));
    QVERIFY2(b.controller.exportWeights(all, allHeads, &error), qPrintable(error));
    lines = readCsv(all);
    QCOMPARE(lines.size(), 1 + 2 * 5);
    QCOMPARE(lines[0], QStringLiteral("head,query,") + keyHeader);
    const QStringList last = lines.last().split(QLatin1Char(','));
    QCOMPARE(last[0], QStringLiteral("1"));
    QCOMPARE(last[1], QStringLiteral("y"));
    QCOMPARE(last[6].toDouble(), r->weights[1](4, 4));

    QVERIFY(!b.controller.exportWeights(path(QStringLiteral("w.txt")), allHeads, &error));
    QVERIFY2(error.contains(QLatin1String("use .npy or .csv")), qPrintable(error));
    QVERIFY(!b.controller.exportWeights(path(QStringLiteral("w.npy")), 9, &error));
    QVERIFY2(error.contains(QLatin1String("head 9 does not exist")), qPrintable(error));
}

QTEST_MAIN(TestOpenTensors)
#include "tst_opentensors.moc"
