// Loaded tensors in the window: a model's stack of attention weights on the Model tab (PyTorch's
// weights of every layer and head, nothing invented for stored weights, refusals, one colour
// scale, a click opens the head), the window disabling the shape controls while tensors are
// loaded (and undo), load errors in a dialog, and going back to random inputs.

#include "opentensorstest.h"

using namespace opentensorstest;

class TestTensorWindow : public QObject
{
    Q_OBJECT

private slots:
    void initTestCase();
    void modelStackShowsTorchWeights();
    void storedWeightsShowNothingInvented();
    void modelStackRefusals_data();
    void modelStackRefusals();
    void modelViewSharedScale();
    void modelOutFileOpensWithTokens();
    void modelTabClickOpensHead();
    void backToRandomInputs();
    void windowLocksControlsAndUndoes();
    void windowShowsLoadErrorInDialog_data();
    void windowShowsLoadErrorInDialog();

private:
    QTemporaryDir m_dir;
    QString path(const QString &name) const { return m_dir.filePath(name); }
};

void TestTensorWindow::initTestCase()
{
    QVERIFY(m_dir.isValid());
}

namespace {

QString stackPath(const char *name)
{
    return QStringLiteral(ATTN_FIXTURE_DIR "/modelstack/%1.npz").arg(QLatin1String(name));
}

/// PyTorch's weights of layer `layer`, batch item `item` (h × n × n) as h matrices.
std::vector<MatrixD> torchWeights(int layer, int item)
{
    const NpyArray a
        = member(stackPath("expected"),
                 QStringLiteral("w_l%1_b%2").arg(layer).arg(item).toUtf8().constData());
    std::vector<MatrixD> heads;
    for (std::int64_t h = 0; h < a.shape[0]; ++h)
        heads.push_back(a.slice<double>(h, "expected"));
    return heads;
}

/// Shows `window` and waits until its first (random) result is in; false when it never is.
bool showAndSettle(MainWindow &window)
{
    window.show();
    if (!QTest::qWaitForWindowExposed(&window))
        return false;
    AttentionSession *session = window.session();
    return QTest::qWaitFor([&] { return session->result() && !session->isBusy(); },
                           attn::test::kWorkTimeoutMs);
}

} // namespace

void TestTensorWindow::modelStackShowsTorchWeights()
{
    const QStringList tokens
        = {QStringLiteral("the"), QStringLiteral("caf\u00e9"), QStringLiteral("sat"),
           QStringLiteral("on"),  QStringLiteral("a"),         QStringLiteral("mat")};
    for (const bool batched : {false, true}) {
        Bench b;
        QVERIFY(b.start());
        int askedWith = 0;
        b.controller.setBatchChooser([&](const TensorFile &, int batchCount) {
            askedWith = batchCount;
            return 1;
        });
        QString error;
        QVERIFY2(b.controller.openFile(stackPath(batched ? "stack_batch" : "stack"), &error),
                 qPrintable(error));
        QCOMPARE(askedWith, batched ? 2 : 0); // (L, B, H, n, n): the picker; (L, H, n, n): none
        const int item = batched ? 1 : 0;
        for (int layer : {0, 1}) {
            b.controller.setLayer(layer);
            const ResultPtr r = b.settle();
            QVERIFY(r && r->ok());
            const SessionParameters &p = b.session.parameters();
            QVERIFY(p.tensors && p.tensors->isAttentionStack());
            QCOMPARE(p.tensors->layer(), layer);
            QCOMPARE(p.tensors->layerCount(), 2);
            QCOMPARE(p.tensors->batch(), item);
            QCOMPARE(p.tokenList(), tokens); // the file's '<U4' strings, the accent included
            QVERIFY(p.tensors->rowSumCheck().ok());
            const std::vector<MatrixD> expected = torchWeights(layer, item);
            QCOMPARE(r->headCount(), 4);
            for (int h = 0; h < 4; ++h)
                ATTN_COMPARE_CLOSE(r->weights[std::size_t(h)], expected[std::size_t(h)], 1e-12,
                                   0.0);
        }
    }
}

// A loaded attention stack has no layer weights, no d_k and no scores: the window shows them as
// not available instead of values computed from the parameters' placeholders (d_k = 1), and
// the cell tooltip names the layer.
void TestTensorWindow::storedWeightsShowNothingInvented()
{
    MainWindow window;
    QVERIFY(showAndSettle(window));
    AttentionSession *session = window.session();
    QString error;
    QVERIFY2(window.tensorController()->openFile(stackPath("stack"), &error), qPrintable(error));
    window.tensorController()->setLayer(1);
    QVERIFY(QTest::qWaitFor(
        [&] {
            const ResultPtr r = window.heatmapWidget()->renderer().result();
            return !session->isBusy() && r && r->params.tensors && r->params.tensors->layer() == 1;
        },
        attn::test::kWorkTimeoutMs));
    QVERIFY(session->parameters().tensors->isWeights());

    ControlPanel *controls = window.controlPanel();
    auto *info = controls->findChild<QLabel *>(QStringLiteral("headsInfoLabel"));
    auto *dk = controls->findChild<QLabel *>(QStringLiteral("dkLabel"));
    auto *scale = controls->findChild<QLabel *>(QStringLiteral("scaleLabel"));
    QVERIFY(info && dk && scale);
    QVERIFY2(info->text().contains(QLatin1String("n/a (stored weights)")),
             qPrintable(info->text()));
    QVERIFY2(!info->text().contains(QLatin1String("B/token")), qPrintable(info->text()));
    QCOMPARE(dk->text(), QStringLiteral("n/a"));
    QVERIFY2(scale->text().contains(QLatin1String("n/a")), qPrintable(scale->text()));
    // Nor a d_model, nor whether a causal mask made them: not the parameters' d_model = h,
    // encoder self-attention and no mask.
    auto *dModel = controls->findChild<QSpinBox *>(QStringLiteral("dModelSpin"));
    auto *kind = controls->findChild<QComboBox *>(QStringLiteral("kindCombo"));
    auto *mask = controls->findChild<QComboBox *>(QStringLiteral("maskCombo"));
    auto *heads = controls->findChild<QComboBox *>(QStringLiteral("headsCombo"));
    QVERIFY(dModel && kind && mask && heads);
    QCOMPARE(dModel->text(), QStringLiteral("n/a"));
    // (No item chosen: the combo boxes show their placeholder text.)
    QCOMPARE(kind->currentIndex(), -1);
    QCOMPARE(kind->placeholderText(), QStringLiteral("n/a"));
    QCOMPARE(mask->currentIndex(), -1);
    QCOMPARE(mask->placeholderText(), QStringLiteral("n/a"));
    auto *kvHeads = controls->findChild<QComboBox *>(QStringLiteral("kvHeadsCombo"));
    QVERIFY(kvHeads);
    QCOMPARE(kvHeads->currentIndex(), -1);
    QCOMPARE(kvHeads->placeholderText(), QStringLiteral("n/a"));
    QCOMPARE(heads->currentText(), QStringLiteral("4")); // the stack's own

    const QList<ScalingChart *> charts = window.findChildren<ScalingChart *>();
    QVERIFY(!charts.isEmpty());
    for (const ScalingChart *chart : charts)
        QCOMPARE(chart->currentDk(), 0);

    HeatmapHit hit;
    hit.tile = 0;
    hit.head = 2;
    hit.row = 3;
    hit.col = 1;
    const QString cell = window.heatmapWidget()->renderer().describeCell(hit);
    QVERIFY2(cell.contains(QLatin1String("layer 1 of 2")), qPrintable(cell));
    QVERIFY2(cell.contains(QLatin1String("raw score n/a (stored weights)")), qPrintable(cell));
    QVERIFY2(!cell.contains(QLatin1String("nan"), Qt::CaseInsensitive), qPrintable(cell));

    // Back to random inputs: the fields show numbers and kinds again.
    window.tensorController()->backToRandomInputs();
    QVERIFY(!session->parameters().tensors);
    QCOMPARE(dModel->text(), QString::number(session->parameters().dModel));
    QCOMPARE(kind->currentIndex(), kind->findData(int(session->parameters().kind)));
    QCOMPARE(mask->currentIndex(), mask->findData(int(session->parameters().mask)));
    QCOMPARE(kvHeads->currentIndex(),
             kvHeads->findData(int(session->parameters().keyValueHeads())));
    QCOMPARE(dk->text(), QString::number(session->parameters().dK()));
}

void TestTensorWindow::modelStackRefusals_data()
{
    QTest::addColumn<QString>("kind");
    QTest::addColumn<QString>("expected");
    QTest::newRow("rank 3") << "rank3"
                            << "expected (layers, heads, n_q, n_k)";
    QTest::newRow("NaN") << "nan"
                         << "holds nan at layer 1, head 2, query 3, key 4";
    QTest::newRow("tokens count") << "tokens5"
                                  << "'tokens' holds 5 strings but the attentions need 6";
    QTest::newRow("numeric tokens") << "tokensNumeric"
                                    << "must be a 1-d array of strings";
    QTest::newRow("over budget") << "budget"
                                 << "over the budget of 1 MiB";
}

void TestTensorWindow::modelStackRefusals()
{
    QFETCH(QString, kind);
    QFETCH(QString, expected);
    QTemporaryDir dir;
    const std::string path = dir.filePath(QStringLiteral("stack.npz")).toStdString();
    NpyArray attentions = probabilityRows({2, 3, 6, 6});
    NpzStrings strings = {{"tokens", {{6}, {"a", "b", "c", "d", "e", "f"}}}};
    NamedArrays arrays;
    if (kind == QLatin1String("rank3")) {
        attentions = probabilityRows({3, 6, 6});
    } else if (kind == QLatin1String("nan")) {
        attentions.values[std::size_t((((1 * 3 + 2) * 6 + 3) * 6) + 4)]
            = std::numeric_limits<double>::quiet_NaN();
    } else if (kind == QLatin1String("tokens5")) {
        strings[0].second = {{5}, {"a", "b", "c", "d", "e"}};
    } else if (kind == QLatin1String("tokensNumeric")) {
        strings.clear();
        arrays.emplace_back("tokens", arrayOf({6}, [](std::size_t k) { return double(k); }));
    } else {
        // 512 KiB stored, NaN everywhere: refused for its declared size, before any value is read.
        attentions = arrayOf({4, 4, 64, 64},
                             [](std::size_t) { return std::numeric_limits<double>::quiet_NaN(); });
    }
    arrays.emplace(arrays.begin(), "attentions", attentions);
    writeNpz(path, arrays, true, strings);

    Bench b;
    QVERIFY(b.start());
    QString error;
    if (kind == QLatin1String("budget"))
        setSessionMemoryBudget(std::size_t(1) << 20);
    const bool opened = b.controller.openFile(QString::fromStdString(path), &error);
    setSessionMemoryBudget(0);
    QVERIFY(!opened);
    QVERIFY2(error.contains(expected), qPrintable(error));
    QVERIFY2(!error.contains(QLatin1String("nan")) || kind == QLatin1String("nan"),
             qPrintable(error));
    QVERIFY(!b.session.parameters().tensors); // the view is kept
}

// What `attnlab model --out run.npz` writes: 'attention' (layers × heads × n × n) beside ids,
// logits and the pieces as string 'tokens'. It opens as stored weights labelled by the pieces;
// 'tokens' of another length is named as not shown.
void TestTensorWindow::modelOutFileOpensWithTokens()
{
    QTemporaryDir dir;
    const std::string path = dir.filePath(QStringLiteral("run.npz")).toStdString();
    const NpyArray attention = probabilityRows({2, 3, 6, 6});
    const NamedArrays arrays = {{"ids", arrayOf({6}, [](std::size_t k) { return double(k); })},
                                {"attention", attention}};
    const std::vector<std::string> pieces = {"the", " cat", " sat", " on", " a", " mat"};
    writeNpz(path, arrays, true, {{"tokens", {{6}, pieces}}});
    QString error;
    const auto source = makeTensorSource(readTensorFile(QString::fromStdString(path)), {},
                                         MaskConvention::Masked, &error);
    QVERIFY2(source, qPrintable(error));
    QVERIFY(source->isWeights());
    QCOMPARE(source->weightStack()->layers, Index(2));
    QStringList expected;
    for (const std::string &t : pieces)
        expected << QString::fromStdString(t);
    QCOMPARE(source->fileTokens(), expected);
    QCOMPARE(source->parametersFor(SessionParameters {}, source).tokens.size(),
             std::size_t(pieces.size()));

    const std::string other = dir.filePath(QStringLiteral("other.npz")).toStdString();
    writeNpz(other, arrays, true, {{"tokens", {{2}, {"a", "b"}}}});
    const auto unlabelled = makeTensorSource(readTensorFile(QString::fromStdString(other)), {},
                                             MaskConvention::Masked, &error);
    QVERIFY2(unlabelled, qPrintable(error));
    QVERIFY(unlabelled->fileTokens().isEmpty());
    QVERIFY2(unlabelled->notes().join(' ').contains(QStringLiteral("tokens (2 strings)")),
             qPrintable(unlabelled->notes().join(' ')));
}

void TestTensorWindow::modelViewSharedScale()
{
    QString error;
    const auto source
        = makeTensorSource(readTensorFile(stackPath("stack")), {}, MaskConvention::Masked, &error);
    QVERIFY2(source, qPrintable(error));
    ModelRenderer renderer;
    renderer.setStack(std::shared_ptr<const WeightStack>(source, source->weightStack()));
    const QSize size = renderer.naturalSize();
    const QImage image
        = renderFigure(size, 1.0, Qt::white,
                       [&](QPainter *p, const QRectF &r, bool v) { renderer.paint(p, r, v); });
    // The one scale: [0, the largest weight of every layer and head], from PyTorch's weights.
    double top = 0;
    for (int l : {0, 1})
        for (const MatrixD &w : torchWeights(l, 0))
            top = std::max(top, w.maxCoeff());
    QCOMPARE(renderer.norm().vmin, 0.0);
    QCOMPARE(renderer.norm().vmax, top);
    const Colormap viridis(ColormapId::Viridis);
    const ModelViewLayout lay = renderer.layout(QRectF(QPointF(0, 0), QSizeF(size)));
    struct Cell
    {
        int layer, head, i, j;
    };
    for (const Cell c : {Cell {1, 2, 3, 4}, Cell {0, 0, 0, 0}, Cell {0, 3, 5, 1}}) {
        const QRectF r = lay.thumbnailRect(c.layer, c.head);
        const QPoint centre((r.left() + (c.j + 0.5) * r.width() / 6),
                            (r.top() + (c.i + 0.5) * r.height() / 6));
        const double w = torchWeights(c.layer, 0)[std::size_t(c.head)](c.i, c.j);
        QCOMPARE(QColor(image.pixel(centre)), QColor(viridis.map(w / top)));
    }
}

void TestTensorWindow::modelTabClickOpensHead()
{
    MainWindow window;
    window.resize(1280, 800);
    QVERIFY(showAndSettle(window));
    AttentionSession *session = window.session();
    QString error;
    QVERIFY2(window.tensorController()->openFile(stackPath("stack"), &error), qPrintable(error));
    AttentionViews *views = window.attentionViews();
    views->setCurrentIndex(AttentionViews::ModelTab);
    ModelView *model = views->modelView();
    QCOMPARE(model->source(), session->parameters().tensors);
    model->waitForThumbnails();
    QVERIFY(model->thumbnailsReady());
    const QRect thumb = model->thumbnailRect(1, 2);
    QVERIFY(!thumb.isEmpty());
    QTest::mouseClick(model->canvas(), Qt::LeftButton, {}, thumb.center());
    QCOMPARE(views->currentIndex(), int(AttentionViews::HeadsTab));
    HeatmapWidget *heads = window.heatmapWidget();
    QVERIFY(heads->isSingleHead());
    QCOMPARE(heads->options().head, 2);
    QVERIFY(QTest::qWaitFor([&] { return !session->isBusy(); }, attn::test::kWorkTimeoutMs));
    QCOMPARE(session->parameters().tensors->layer(), 1);
    QTRY_VERIFY(heads->result() && heads->result()->params.tensors->layer() == 1);
    ATTN_COMPARE_CLOSE(heads->result()->weights[2], torchWeights(1, 0)[2], 1e-12, 0.0);
    // File → Export names the Model view on its tab.
    views->setCurrentIndex(AttentionViews::ModelTab);
    QTemporaryDir dir;
    const QString out = dir.filePath(QStringLiteral("model.png"));
    QVERIFY2(model->exportFigure(out, {}, 1.0, &error), qPrintable(error));
    QCOMPARE(QImage(out).size(), model->defaultExportSize());
}

void TestTensorWindow::backToRandomInputs()
{
    Bench b;
    SessionParameters random = b.session.parameters();
    random.n = 12;
    random.seed = 7;
    b.session.setParameters(random);
    const ResultPtr first = b.settle();
    QVERIFY(first && first->ok());
    QString error;
    QVERIFY2(b.controller.openFile(fixturePath(QStringLiteral("h8")), &error), qPrintable(error));
    QVERIFY(b.settle());
    QVERIFY(b.controller.backAction()->isEnabled());
    QVERIFY(b.controller.panel()->backButton()->isEnabled());
    b.controller.backToRandomInputs();
    const ResultPtr r = b.settle();
    QVERIFY(r && r->ok());
    QCOMPARE(b.session.parameters(), random);
    QVERIFY(!b.session.parameters().tensors);
    QVERIFY(b.controller.loadedPath().isEmpty());
    QVERIFY(!b.controller.backAction()->isEnabled());
    QVERIFY(b.controller.statusLabel()->isHidden());
    for (int h = 0; h < r->headCount(); ++h) // the same seeded numbers as before
        ATTN_COMPARE_CLOSE(r->weights[std::size_t(h)], first->weights[std::size_t(h)], 0.0, 0.0);

    // RoPE, grouped key/value heads and a sliding window chosen for the seeded inputs do not
    // stand in the way of opened tensors or a stored stack (both were refused: "RoPE rotates
    // pairs of dimensions: d_k=1 must be even"); Back to Random Inputs brings them back.
    SessionParameters modern = random;
    modern.dModel = 64;
    modern.heads = 4;
    modern.rope = true;
    modern.kvHeads = 2;
    modern.window = 3;
    b.session.setParameters(modern);
    QVERIFY(b.settle());
    for (const QString &file :
         QStringList {fixturePath(QStringLiteral("h8")), stackPath("stack")}) {
        QVERIFY2(b.controller.openFile(file, &error), qPrintable(error));
        QVERIFY(b.settle());
        QVERIFY(!b.session.parameters().rope && b.session.parameters().kvHeads == 0);
        b.controller.backToRandomInputs();
        QVERIFY(b.settle());
        QCOMPARE(b.session.parameters(), modern);
    }
}

void TestTensorWindow::windowLocksControlsAndUndoes()
{
    MainWindow window;
    QVERIFY(showAndSettle(window));
    AttentionSession *session = window.session();
    const SessionParameters random = session->parameters();
    TensorController *tensors = window.tensorController();
    QVERIFY(tensors);

    // The File menu offers the three actions.
    QMenu *file = window.menuBar()->actions().at(0)->menu();
    QVERIFY(file->actions().contains(tensors->openAction()));
    QVERIFY(file->actions().contains(tensors->backAction()));
    QVERIFY(file->actions().contains(tensors->exportAction()));
    auto *dock = window.findChild<QDockWidget *>(QStringLiteral("tensorsDock"));
    QVERIFY(dock);
    QVERIFY(!dock->isVisible());

    QString error;
    QVERIFY2(tensors->openFile(fixturePath(QStringLiteral("self_attn")), &error),
             qPrintable(error));
    QVERIFY(QTest::qWaitFor([&] { return !session->isBusy(); }, attn::test::kWorkTimeoutMs));
    QVERIFY(dock->isVisible());
    QVERIFY(tensors->statusLabel()->isVisible());
    ControlPanel *controls = window.controlPanel();
    auto *nSpin = controls->findChild<QSpinBox *>(QStringLiteral("nSpin"));
    auto *dModel = controls->findChild<QSpinBox *>(QStringLiteral("dModelSpin"));
    auto *headsCombo = controls->findChild<QComboBox *>(QStringLiteral("headsCombo"));
    auto *alpha = controls->findChild<QSlider *>(QStringLiteral("alphaSlider"));
    QVERIFY(nSpin && dModel && headsCombo && alpha);
    QCOMPARE(nSpin->value(), 6);
    QCOMPARE(dModel->value(), 16);
    QCOMPARE(headsCombo->currentData().toInt(), 4);
    QVERIFY(!nSpin->isEnabled());
    QVERIFY(!dModel->isEnabled());
    QVERIFY(!headsCombo->isEnabled());
    QVERIFY(alpha->isEnabled()); // the scale still applies to loaded inputs

    // Loaded weights: nothing is recomputed, so nothing else applies either.
    const QString weights = path(QStringLiteral("window_weights.npy"));
    writeNpy(weights.toStdString(), probabilityRows({3, 2, 5, 5}));
    QVERIFY2(tensors->openFile(weights, &error), qPrintable(error));
    QVERIFY(QTest::qWaitFor([&] { return !session->isBusy(); }, attn::test::kWorkTimeoutMs));
    QVERIFY(!alpha->isEnabled());
    QVERIFY(tensors->panel()->layerSpin()->isVisible());
    tensors->panel()->layerSpin()->setValue(2); // the layer selector
    QVERIFY(QTest::qWaitFor([&] { return !session->isBusy(); }, attn::test::kWorkTimeoutMs));
    QCOMPARE(session->parameters().tensors->layer(), 2);
    QVERIFY(window.heatmapWidget()->renderer().result()->params.caption().contains(
        QLatin1String("layer 2 of 3")));
    // The head selector drives the heatmap.
    QComboBox *heads = tensors->panel()->headCombo();
    QCOMPARE(heads->count(), 1 + 2 + 1);
    heads->setCurrentIndex(2);
    emit heads->activated(2);
    QVERIFY(window.heatmapWidget()->isSingleHead());
    QCOMPARE(window.heatmapWidget()->options().head, 1);

    // Undo walks back: layer 0, the first file, random inputs.
    QUndoStack *undo = window.sessionController()->undoStack();
    undo->undo();
    QCOMPARE(session->parameters().tensors->layer(), 0);
    undo->undo();
    QCOMPARE(session->parameters().tensors->fileName(), QStringLiteral("self_attn.npz"));
    undo->undo();
    QVERIFY(!session->parameters().tensors);
    QCOMPARE(session->parameters(), random);
    QVERIFY(QTest::qWaitFor([&] { return !session->isBusy(); }, attn::test::kWorkTimeoutMs));
    QVERIFY(nSpin->isEnabled());
    QVERIFY(alpha->isEnabled());
    QVERIFY(!dock->isVisible());
}

void TestTensorWindow::windowShowsLoadErrorInDialog_data()
{
    QTest::addColumn<bool>("overflow");
    QTest::addColumn<QString>("message");
    QTest::newRow("1-d weights") << false << "is not attention weights";
    QTest::newRow("scores overflow") << true << "scaled scores overflowed: softmax input has";
}

void TestTensorWindow::windowShowsLoadErrorInDialog()
{
    QFETCH(bool, overflow);
    QFETCH(QString, message);
    MainWindow window;
    QVERIFY(showAndSettle(window));
    AttentionSession *session = window.session();
    const ResultPtr before = session->result();
    const SessionParameters params = session->parameters();

    QString bad;
    if (overflow) { // q and k × 1e200: the scores overflow (the trial's huge_vals.npz)
        auto arrays = readNpz(fixturePath(QStringLiteral("self_attn")).toStdString());
        for (auto &[n, x] : arrays)
            if (n == "query" || n == "key")
                for (double &v : x.values)
                    v *= 1e200;
        bad = path(QStringLiteral("window_huge_vals.npz"));
        writeNpz(bad.toStdString(), arrays);
    } else {
        bad = path(QStringLiteral("window_bad.npy"));
        writeNpy(bad.toStdString(), arrayOf({7}, [](std::size_t) { return 1.0; }));
    }
    const auto answer = answerNextMessageBox();
    QVERIFY(!window.tensorController()->open(bad));
    QVERIFY(answer->seen);
    QVERIFY2(answer->text.contains(QFileInfo(bad).fileName()), qPrintable(answer->text));
    QVERIFY2(answer->text.contains(message), qPrintable(answer->text));
    QVERIFY2(answer->text.contains(QLatin1String("current view is kept")),
             qPrintable(answer->text));
    QCOMPARE(session->result(), before);
    QCOMPARE(session->parameters(), params);
    QCOMPARE(window.heatmapWidget()->result(), before);
    // No badge or panel for a file that was not loaded.
    QVERIFY(window.tensorController()->loadedPath().isEmpty());
    QVERIFY(window.tensorController()->statusLabel()->isHidden());
}
QTEST_MAIN(TestTensorWindow)
#include "tst_tensorwindow.moc"
