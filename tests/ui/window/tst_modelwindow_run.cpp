// Tests of a model run in the window (File → Open Model…): the committed fixture checkpoints of
// tests/reference/fixtures/models/ (make_model_fixtures.py) opened through ModelController and
// run on their ids give the Model tab L × H thumbnails whose weights, and the head the Heads view
// shows, equal PyTorch's reference attention and core's headWeights; over the memory budget the
// layers are computed on demand, past the longest sequence the Model and Long tabs show the run;
// the Atlas tab scores every head and the model; the next-token readout equals the softmax of
// the reference logits' last row and `attnlab model --top-k`.

#include "modelwindowtest.h"

#include "core/analysis/headscores.h"
#include "core/models/forward.h"
#include "core/models/modelfolder.h"
#include "ui/panels/modelpanel.h"
#include "ui/render/longmaptiles.h"
#include "ui/render/modelrenderer.h"
#include "ui/session/modelrun.h"
#include "ui/session/pooledsession.h"
#include "ui/session/tensorsource.h"
#include "ui/views/atlasview.h"
#include "ui/views/attentionviews.h"
#include "ui/views/heatmapwidget.h"
#include "ui/views/longmapview.h"
#include "ui/views/modelview.h"
#include "ui/views/stepsview.h"
#include "ui/views/tokensview.h"
#include "ui/window/tensorcontroller.h"

#include <QComboBox>
#include <QFile>
#include <QJsonArray>
#include <QJsonDocument>
#include <QJsonObject>
#include <QProcess>
#include <QPushButton>
#include <QRegularExpression>
#include <QStatusBar>
#include <QTableWidget>
#include <QTemporaryDir>
#include <QTest>

#include <cmath>

using namespace attn;
using namespace modelwindowtest;

namespace {

/// The reference attention of (layer, head): n × n.
MatrixD referenceAttention(const NpyArray &a, Index layer, Index head)
{
    const Index heads = a.shape[1], n = a.shape[2];
    MatrixD m(n, n);
    const std::size_t base = std::size_t(((layer * heads) + head) * n * n);
    for (Index i = 0; i < n; ++i)
        for (Index j = 0; j < n; ++j)
            m(i, j) = a.values[base + std::size_t(i * n + j)];
    return m;
}

/// Matrix (a, b) of a 4-d reference array (layers × heads × rows × cols).
MatrixD referenceAttention4(const NpyArray &x, Index a, Index b)
{
    const Index heads = x.shape[1], rows = x.shape[2], cols = x.shape[3];
    MatrixD m(rows, cols);
    const std::size_t base = std::size_t(((a * heads) + b) * rows * cols);
    for (Index i = 0; i < rows; ++i)
        for (Index j = 0; j < cols; ++j)
            m(i, j) = x.values[base + std::size_t(i * cols + j)];
    return m;
}

} // namespace

class TestModelWindowRun : public QObject
{
    Q_OBJECT
private slots:
    void fixtureRunFillsModelTab_data();
    void fixtureRunFillsModelTab();
    void thumbnailShowsHeadWithLabels();
    void overBudgetComputesLayersOnDemand();
    void longRunShownByModelAndLongTabs();
    void atlasScoresEveryHead();
    void atlasScoresTheModel();
    void nextTokensAreSoftmaxOfLastLogits();
};

void TestModelWindowRun::fixtureRunFillsModelTab_data()
{
    QTest::addColumn<QString>("fixture");
    for (const char *name : {"gpt2", "llama_gqa", "qwen2_window", "qwen3", "bert"})
        QTest::newRow(name) << QString::fromLatin1(name);
}

void TestModelWindowRun::fixtureRunFillsModelTab()
{
    QFETCH(QString, fixture);
    Window w;
    QVERIFY(w.start());
    QString error;
    QVERIFY2(w.run(fixtureFolder(fixture), idsText(fixture), true, &error), qPrintable(error));
    const auto run = w.models()->lastRun();
    const models::ModelConfig &config = run->model->model->config();
    const NpyArray attention = expected(fixture, "attention");
    QCOMPARE(Index(attention.shape[0]), config.layers);
    QCOMPARE(Index(attention.shape[1]), config.heads);

    AttentionViews *views = w.window.attentionViews();
    views->setCurrentIndex(AttentionViews::ModelTab);
    ModelView *model = views->modelView();
    QCOMPARE(model->source(), run->source);
    model->waitForThumbnails();
    QVERIFY(model->thumbnailsReady());
    const WeightStack *stack = model->renderer().stack();
    QVERIFY(stack);
    QCOMPARE(stack->layers, config.layers);
    QCOMPARE(stack->heads, config.heads);
    for (Index l = 0; l < config.layers; ++l) {
        for (Index h = 0; h < config.heads; ++h) {
            QVERIFY(!model->thumbnailRect(int(l), int(h)).isEmpty());
            const MatrixD reference = referenceAttention(attention, l, h);
            ATTN_COMPARE_CLOSE(stack->at(l, h), reference, 1e-5, 0.0);
            const MatrixD recomputed
                = models::headWeights(*run->forward, config, l, h).cast<double>();
            ATTN_COMPARE_CLOSE(stack->at(l, h), recomputed, 1e-6, 0.0);
        }
    }
    // The caption names the model, its family and the token count.
    const QString caption = model->renderer().captionLines().join(QLatin1Char('\n'));
    QVERIFY2(caption.contains(
                 QStringLiteral("model: %1 (%2)")
                     .arg(fixture, QString::fromLatin1(models::modelFamilyName(config.family)))),
             qPrintable(caption));
    QVERIFY2(caption.contains(QStringLiteral("n = %1 tokens").arg(attention.shape[2])),
             qPrintable(caption));
}

void TestModelWindowRun::thumbnailShowsHeadWithLabels()
{
    Window w;
    QString error;
    QVERIFY2(w.startWithGpt2(&error), qPrintable(error));
    AttentionViews *views = w.window.attentionViews();
    views->setCurrentIndex(AttentionViews::ModelTab);
    ModelView *model = views->modelView();
    model->waitForThumbnails();
    QTest::mouseClick(model->canvas(), Qt::LeftButton, {}, model->thumbnailRect(1, 2).center());
    QCOMPARE(views->currentIndex(), int(AttentionViews::HeadsTab));
    HeatmapWidget *heads = w.window.heatmapWidget();
    QVERIFY(heads->isSingleHead());
    QCOMPARE(heads->options().head, 2);
    AttentionSession *session = w.window.session();
    QTRY_VERIFY_WITH_TIMEOUT(heads->result() && heads->result()->params.tensors
                                 && heads->result()->params.tensors->layer() == 1
                                 && !session->isBusy(),
                             attn::test::kWorkTimeoutMs);
    // Steps and the Tokens text view follow the clicked head.
    QTRY_COMPARE_WITH_TIMEOUT(views->stepsView()->head(), 2, attn::test::kWorkTimeoutMs);
    QCOMPARE(views->tokensView()->options().textHead, 2);
    const auto run = w.models()->lastRun();
    const models::ModelConfig &config = run->model->model->config();
    ATTN_COMPARE_CLOSE(heads->result()->weights[2],
                       models::headWeights(*run->forward, config, 1, 2).cast<double>(), 1e-6, 0.0);
    ATTN_COMPARE_CLOSE(heads->result()->weights[2],
                       referenceAttention(expected(QStringLiteral("gpt2"), "attention"), 1, 2),
                       1e-5, 0.0);
    // Steps: the raw scores q kᵀ of the reference queries and keys; the causal mask on the
    // scaled scores.
    const NpyArray queries = expected(QStringLiteral("gpt2"), "queries");
    const NpyArray keys = expected(QStringLiteral("gpt2"), "keys");
    const MatrixD q = referenceAttention4(queries, 1, 2), k = referenceAttention4(keys, 1, 2);
    const SessionResult &shown = *heads->result();
    ATTN_COMPARE_CLOSE(shown.scores[2], q * k.transpose(), 1e-4, 1e-5);
    QCOMPARE(shown.scale, 1.0 / std::sqrt(double(q.cols())));
    QVERIFY(shown.maskState(0, 1) != MaskAllowed);
    QCOMPARE(shown.maskState(3, 2), std::uint8_t(MaskAllowed));
    QVERIFY(std::isinf(shown.scaledScores[2](0, 1)));
    QVERIFY(std::abs(shown.scaledScores[2](3, 2) - shown.scores[2](3, 2) * shown.scale) < 1e-9);
    // Token labels: the ids (no tokenizer) label the axes.
    const SessionParameters &p = heads->result()->params;
    const NpyArray ids = expected(QStringLiteral("gpt2"), "ids");
    QCOMPARE(p.queryLabel(0), QStringLiteral("#%1").arg(qint64(ids.values[0])));
    QCOMPARE(p.keyLabel(3), QStringLiteral("#%1").arg(qint64(ids.values[3])));
    // The caption says model, family, layer and tokens.
    const QString caption = p.tensors->caption(p);
    QVERIFY2(caption.contains(QStringLiteral("model: gpt2 (gpt2)")), qPrintable(caption));
    QVERIFY2(caption.contains(QStringLiteral("layer 1 of 2")), qPrintable(caption));
    QVERIFY2(caption.contains(QStringLiteral("n=%1 tokens").arg(ids.values.size())),
             qPrintable(caption));
}

void TestModelWindowRun::overBudgetComputesLayersOnDemand()
{
    // A budget below the stack's 2 layers × 4 heads × 10² float64: every head is computed from
    // the queries and keys when its layer is shown, and the Model tab draws pooled thumbnails.
    const QString fixture = QStringLiteral("llama_gqa");
    Window w;
    QVERIFY(w.start());
    w.models()->setStackBudget(4000);
    QString error;
    QVERIFY2(w.run(fixtureFolder(fixture), idsText(fixture), true, &error), qPrintable(error));
    const auto run = w.models()->lastRun();
    QVERIFY(run->onDemand);
    const auto source = run->source;
    QVERIFY(source->weightsOnDemand());
    QVERIFY(source->weightStack()->weights.empty());
    const NpyArray attention = expected(fixture, "attention");
    const Index n = attention.shape[2];
    QCOMPARE(Index(source->queryCount()), n);

    AttentionViews *views = w.window.attentionViews();
    QCOMPARE(views->currentIndex(), int(AttentionViews::ModelTab));
    ModelView *model = views->modelView();
    model->waitForThumbnails();
    QVERIFY(model->thumbnailsReady());
    const WeightStack *thumbs = model->renderer().stack();
    QCOMPARE(thumbs, source->thumbnailStack());
    QCOMPARE(thumbs->layers, Index(2));
    QCOMPARE(thumbs->heads, Index(4));
    // 8 heads of 10 × 10 doubles exceed half of 4000 bytes down to 16 × 16 thumbnails: n ≤ 16,
    // one cell each, so the thumbnails are the weights themselves.
    QCOMPARE(source->thumbnailBlock(), 1);
    ATTN_COMPARE_CLOSE(thumbs->at(1, 3), referenceAttention(attention, 1, 3), 1e-5, 0.0);
    const QString caption = model->renderer().captionLines().join(QLatin1Char('\n'));
    QVERIFY2(caption.contains(QStringLiteral("computed from the queries and keys")),
             qPrintable(caption));

    // The Heads view of layer 1: computed on the session's worker, equal to the reference.
    QTest::mouseClick(model->canvas(), Qt::LeftButton, {}, model->thumbnailRect(1, 3).center());
    HeatmapWidget *heads = w.window.heatmapWidget();
    AttentionSession *session = w.window.session();
    QTRY_VERIFY_WITH_TIMEOUT(heads->result() && heads->result()->params.tensors
                                 && heads->result()->params.tensors->layer() == 1
                                 && !session->isBusy(),
                             attn::test::kWorkTimeoutMs);
    for (int h = 0; h < 4; ++h)
        ATTN_COMPARE_CLOSE(heads->result()->weights[std::size_t(h)],
                           referenceAttention(attention, 1, h), 1e-5, 0.0);

    // The Long tab's engine for that layer: the run's queries and keys with the layer's mask,
    // one pixel a cell, equal to PyTorch's weights.
    TileEngine<float> engine = sessionTileEngine<float>(heads->result()->params);
    QCOMPARE(engine.queries(), n);
    QCOMPARE(engine.heads(), Index(4));
    for (Index h = 0; h < 4; ++h) {
        const PooledTile<float> map = engine.render(h, engine.fullWindow(), n, n, TilePooling::Max);
        ATTN_COMPARE_CLOSE(map.values, referenceAttention(attention, 1, int(h)), 1e-5, 0.0);
    }
}

void TestModelWindowRun::longRunShownByModelAndLongTabs()
{
    // Past SessionParameters::maxSequence tokens no view holds a whole layer: the session's
    // result is a refusal naming the sizes, the Model tab draws every head max-pooled by the tile
    // engine, and a thumbnail opens that layer × head in the Long tab, computed from the run's
    // queries and keys.
    const QString fixture = QStringLiteral("llama_gqa");
    const Index n = SessionParameters::maxSequence + 1;
    QStringList ids;
    for (Index i = 0; i < n; ++i)
        ids << QString::number((i * 7919) % 47);
    Window w;
    QVERIFY(w.start());
    QString error;
    QVERIFY2(w.run(fixtureFolder(fixture), ids.join(QLatin1Char(',')), true, &error),
             qPrintable(error));
    const auto run = w.models()->lastRun();
    QVERIFY(run->onDemand);
    QVERIFY(run->longOnly);
    const auto source = run->source;
    QVERIFY(source->longOnly());
    QCOMPARE(Index(source->queryCount()), n);

    // The session refuses to compute the layer: the status bar says why and where to look.
    QTRY_VERIFY_WITH_TIMEOUT(w.window.statusBar()->currentMessage().contains(
                                 QStringLiteral("the Long tab shows every head")),
                             attn::test::kWorkTimeoutMs);
    QVERIFY2(w.window.statusBar()->currentMessage().contains(
                 QStringLiteral("%1 tokens: one layer's 4 heads").arg(n)),
             qPrintable(w.window.statusBar()->currentMessage()));
    // The banner over the heatmaps says where the run is shown, not the stack's placeholder
    // sizes (d_k = 1).
    const QString notice = w.window.heatmapWidget()->noticeText();
    QVERIFY2(notice.contains(QStringLiteral("each head whole in the Long tab")),
             qPrintable(notice));
    QVERIFY2(!notice.contains(QRegularExpression(QStringLiteral("d_k = 1(?!\\d)"))),
             qPrintable(notice));

    AttentionViews *views = w.window.attentionViews();
    QCOMPARE(views->currentIndex(), int(AttentionViews::ModelTab));
    ModelView *model = views->modelView();
    model->waitForThumbnails();
    QVERIFY(model->thumbnailsReady());
    const WeightStack *thumbs = model->renderer().stack();
    QCOMPARE(thumbs, source->thumbnailStack());
    // 2 layers × 4 heads fit 256 × 256 thumbnails: ⌈4097 / 256⌉ = 17 cells a side per value.
    const Index block = source->thumbnailBlock();
    QCOMPARE(block, Index(17));
    QCOMPARE(thumbs->queries, (n + block - 1) / block);
    // A thumbnail value is the largest weight of its block, as the materialized head has it.
    const MatrixF head = models::headWeights(*run->forward, run->model->model->config(), 1, 3);
    for (const auto &[r, c] : {std::pair<Index, Index> {0, 0}, {100, 37}, {240, 240}}) {
        const Index rows = std::min(block, n - r * block), cols = std::min(block, n - c * block);
        const double expected = double(head.block(r * block, c * block, rows, cols).maxCoeff());
        QVERIFY2(std::abs(thumbs->at(1, 3)(r, c) - expected) <= 1e-6,
                 qPrintable(QStringLiteral("(%1, %2): %3 vs %4")
                                .arg(r)
                                .arg(c)
                                .arg(thumbs->at(1, 3)(r, c))
                                .arg(expected)));
    }

    // A thumbnail: the Long tab on that layer and head, at the run's length.
    QTest::mouseClick(model->canvas(), Qt::LeftButton, {}, model->thumbnailRect(1, 3).center());
    QCOMPARE(views->currentIndex(), int(AttentionViews::LongTab));
    LongMapView *longView = views->longMapView();
    QCOMPARE(longView->head(), Index(3));
    const SessionParameters mapped = longView->mapParameters();
    QVERIFY(mapped.tensors && mapped.tensors->layer() == 1);
    QCOMPARE(mapped.queryCount(), n);
    QCOMPARE(mapped.dtype, DType::Float32);
    QTRY_VERIFY_WITH_TIMEOUT(longView->tiles()->isReady(), attn::test::kWorkTimeoutMs);
    TileEngine<float> engine = sessionTileEngine<float>(mapped);
    const TileWindow corner {n - 9, n, n - 9, n};
    const PooledTile<float> cells = engine.render(3, corner, 9, 9, TilePooling::Max);
    ATTN_COMPARE_CLOSE(cells.values.cast<double>(), head.block(n - 9, n - 9, 9, 9).cast<double>(),
                       1e-6, 0.0);
}

void TestModelWindowRun::atlasScoresEveryHead()
{
    // The Atlas tab scores every layer × head of the run: the scores of PyTorch's attention with
    // the run's ids; a cell opens its head; the table ranks the heads; CSV and JSON hold every
    // score.
    Window w;
    QString error;
    QVERIFY2(w.startWithGpt2(&error), qPrintable(error));
    AttentionViews *views = w.window.attentionViews();
    views->setCurrentIndex(AttentionViews::AtlasTab);
    AtlasView *atlas = views->atlasView();
    atlas->waitForScores();
    QVERIFY2(atlas->scores().has_value(), qPrintable(atlas->message()));
    const HeadScores &scores = *atlas->scores();
    const NpyArray attention = expected(QStringLiteral("gpt2"), "attention");
    const Index layers = attention.shape[0], heads = attention.shape[1], n = attention.shape[2];
    QCOMPARE(scores.layers, layers);
    QCOMPARE(scores.heads, heads);
    QVERIFY(scores.haveTokens);
    std::vector<std::int64_t> ids;
    for (const double v : expected(QStringLiteral("gpt2"), "ids").values)
        ids.push_back(std::int64_t(v));
    const HeadScores reference = headScores<double>(attention.values, {layers, heads, n}, ids);
    const auto got = headScoreColumns(scores), want = headScoreColumns(reference);
    for (std::size_t k = 0; k < got.size(); ++k)
        ATTN_COMPARE_CLOSE(*got[k].second, *want[k].second, 1e-5, 1e-5);
    // Previous-token by its definition: the weight on key i − 1, over all of the weight (n).
    for (Index l = 0; l < layers; ++l) {
        for (Index h = 0; h < heads; ++h) {
            const MatrixD a = referenceAttention(attention, l, h);
            double onPrevious = 0;
            for (Index i = 1; i < n; ++i)
                onPrevious += a(i, i - 1);
            QVERIFY(std::abs(scores.previousToken(l, h) - onPrevious / a.sum()) < 1e-5);
        }
    }

    // The grid shows the chosen score; the table ranks it, highest first.
    atlas->setScore(QStringLiteral("previous_token"));
    QCOMPARE(atlas->figure().values, scores.previousToken);
    QVERIFY(atlas->figure().threshold.has_value());
    QCOMPARE(atlas->table()->rowCount(), int(layers * heads));
    const double top = atlas->table()->item(0, 2)->data(Qt::DisplayRole).toDouble();
    QVERIFY(std::abs(top - scores.previousToken.maxCoeff()) < 1e-4);

    // Exports: the table as CSV (every score of every head) and JSON, the figure as SVG.
    QTemporaryDir dir;
    QVERIFY(atlas->exportTo(dir.filePath(QStringLiteral("atlas.csv")), &error));
    QFile csv(dir.filePath(QStringLiteral("atlas.csv")));
    QVERIFY(csv.open(QIODevice::ReadOnly));
    const QStringList lines = QString::fromUtf8(csv.readAll()).trimmed().split(QLatin1Char('\n'));
    QCOMPARE(lines.size(), int(layers * heads) + 1);
    QCOMPARE(lines[0],
             QStringLiteral("layer,head,previous_token,duplicate_token,induction,sink,"
                            "entropy,effective_terms,distance,sink_flag,zero_rows"));
    const QStringList row
        = lines[1 + 1 * int(heads) + 2].split(QLatin1Char(',')); // layer 1, head 2
    QCOMPARE(row[0], QStringLiteral("1"));
    QCOMPARE(row[1], QStringLiteral("2"));
    QCOMPARE(row[6].toDouble(), scores.entropy(1, 2));
    QVERIFY(atlas->exportTo(dir.filePath(QStringLiteral("atlas.json")), &error));
    QFile json(dir.filePath(QStringLiteral("atlas.json")));
    QVERIFY(json.open(QIODevice::ReadOnly));
    const QJsonObject root = QJsonDocument::fromJson(json.readAll()).object();
    QCOMPARE(root.value(QStringLiteral("layers")).toInt(), int(layers));
    QCOMPARE(root.value(QStringLiteral("scores"))
                 .toObject()
                 .value(QStringLiteral("sink"))
                 .toArray()
                 .at(1)
                 .toArray()
                 .at(2)
                 .toDouble(),
             scores.sink(1, 2));
    QVERIFY2(atlas->exportTo(dir.filePath(QStringLiteral("atlas.svg")), &error), qPrintable(error));
    QVERIFY(!atlas->exportTo(dir.filePath(QStringLiteral("atlas.txt")), &error));
    QVERIFY2(error.contains(QStringLiteral(".csv")), qPrintable(error));

    // A cell: that head in the Heads view.
    QTest::mouseClick(atlas->canvas(), Qt::LeftButton, {}, atlas->cellRect(1, 3).center());
    QCOMPARE(views->currentIndex(), int(AttentionViews::HeadsTab));
    HeatmapWidget *headsView = w.window.heatmapWidget();
    QCOMPARE(headsView->options().head, 3);
    QTRY_VERIFY_WITH_TIMEOUT(headsView->result() && headsView->result()->params.tensors
                                 && headsView->result()->params.tensors->layer() == 1,
                             attn::test::kWorkTimeoutMs);
    // Another layer of the same run keeps the scores (no new computation).
    QVERIFY(!atlas->isComputing());
    QVERIFY(atlas->scores().has_value());
}

void TestModelWindowRun::atlasScoresTheModel()
{
    // "Score the Model" with mean ablation: value-weighted norms and the mean-ablation KL of
    // every head equal the PyTorch reference's; the scores join the list, the figure and the
    // exports.
    Window w;
    QString error;
    QVERIFY2(w.startWithGpt2(&error), qPrintable(error));
    AttentionViews *views = w.window.attentionViews();
    views->setCurrentIndex(AttentionViews::AtlasTab);
    AtlasView *atlas = views->atlasView();
    atlas->waitForScores();
    auto *button = atlas->findChild<QPushButton *>(QStringLiteral("atlasScoreModel"));
    auto *ablation = atlas->findChild<QComboBox *>(QStringLiteral("atlasAblation"));
    QVERIFY(button && ablation);
    QVERIFY(button->isVisibleTo(atlas) && button->isEnabled());
    ablation->setCurrentIndex(ablation->findData(QStringLiteral("mean")));
    QTest::mouseClick(button, Qt::LeftButton);
    atlas->waitForModelScores();
    QVERIFY2(atlas->modelReport().has_value(), qPrintable(atlas->message()));
    const ModelHeadReport &report = *atlas->modelReport();
    const std::string reference = ATTN_FIXTURE_DIR "/heads_models/gpt2.npz";
    ATTN_COMPARE_CLOSE(report.ablation.kl,
                       readNpzMember(reference, "mean_ablation_kl").toMatrix<double>("kl"), 1e-5,
                       0.0);
    ATTN_COMPARE_CLOSE(report.valueNormSink,
                       readNpzMember(reference, "value_norm_sink").toMatrix<double>("sink"), 1e-5,
                       0.0);
    QCOMPARE(report.ablationKind, models::Ablation::Mean);
    QCOMPARE(atlas->score(), QStringLiteral("ablation_kl"));
    QCOMPARE(atlas->figure().values, report.ablation.kl);
    auto *scores = atlas->findChild<QComboBox *>(QStringLiteral("atlasScore"));
    QVERIFY(scores->findText(QStringLiteral("prefix_matching")) >= 0);

    QTemporaryDir dir;
    QVERIFY(atlas->exportTo(dir.filePath(QStringLiteral("atlas.json")), &error));
    QFile json(dir.filePath(QStringLiteral("atlas.json")));
    QVERIFY(json.open(QIODevice::ReadOnly));
    const QJsonObject root = QJsonDocument::fromJson(json.readAll()).object();
    QCOMPARE(root.value(QStringLiteral("ablation")).toString(), QStringLiteral("mean"));
    QCOMPARE(root.value(QStringLiteral("scores"))
                 .toObject()
                 .value(QStringLiteral("ablation_kl"))
                 .toArray()
                 .at(1)
                 .toArray()
                 .at(2)
                 .toDouble(),
             report.ablation.kl(1, 2));
    QCOMPARE(int(root.value(QStringLiteral("rank_collapse")).toArray().size()),
             int(report.rankCollapse.size()));

    // Another kind of ablation drops the mean-ablation scores: no grid shows them as zero's.
    ablation->setCurrentIndex(ablation->findData(QStringLiteral("zero")));
    QVERIFY(!atlas->modelReport().has_value());
    QCOMPARE(scores->findText(QStringLiteral("ablation_kl")), -1);
    QVERIFY(atlas->score() != QLatin1String("ablation_kl"));
    QVERIFY2(atlas->message().contains(QStringLiteral("press Score the Model for zero")),
             qPrintable(atlas->message()));
}

void TestModelWindowRun::nextTokensAreSoftmaxOfLastLogits()
{
    Window w;
    QVERIFY(w.start());
    QString error;
    for (const QString &fixture : {QStringLiteral("gpt2"), QStringLiteral("qwen3")}) {
        QVERIFY2(w.run(fixtureFolder(fixture), idsText(fixture), true, &error), qPrintable(error));
        const auto run = w.models()->lastRun();
        const NpyArray logits = expected(fixture, "logits");
        const Index n = logits.shape[0], vocab = logits.shape[1];
        VectorD last(vocab);
        for (Index j = 0; j < vocab; ++j)
            last(j) = logits.values[std::size_t((n - 1) * vocab + j)];
        const VectorD p = (last.array() - last.maxCoeff()).exp().matrix();
        const VectorD probabilities = p / p.sum();
        QCOMPARE(int(run->next.size()), ModelController::kTopK);
        double previous = 1.0;
        for (const models::NextToken &t : run->next) {
            QVERIFY(std::abs(t.probability - probabilities(t.id)) <= 1e-5);
            QVERIFY(t.probability <= previous);
            previous = t.probability;
        }
        Index best = 0;
        probabilities.maxCoeff(&best);
        QCOMPARE(run->next.front().id, best);
        // The readout in the dock: the pieces and the probabilities.
        QTableWidget *table = w.models()->panel()->nextTokenTable();
        QCOMPARE(table->rowCount(), ModelController::kTopK);
        QCOMPARE(table->item(0, 0)->text(), QStringLiteral("#%1").arg(best));
        QCOMPARE(table->item(0, 1)->text(), nextTokenNumberText(run->next.front().probability));
        QCOMPARE(table->item(0, 2)->text(), QString::number(best));
        // Written as `attnlab model --top-k` prints them: one formatter for both (the readout
        // rounded to four decimals, the CLI to six significant digits). The values agree to
        // float32's precision: the window keeps every head's weights (the materialized kernel),
        // the CLI streams them, so the sixth digit may differ.
        QProcess cli;
        cli.start(QStringLiteral(ATTNLAB_EXE),
                  {QStringLiteral("model"), QStringLiteral("--model"), fixtureFolder(fixture),
                   QStringLiteral("--ids"), idsText(fixture).remove(QLatin1Char(' ')),
                   QStringLiteral("--top-k"), QString::number(ModelController::kTopK)});
        QVERIFY(cli.waitForFinished(60000));
        QCOMPARE(cli.exitCode(), 0);
        const QStringList lines = QString::fromUtf8(cli.readAllStandardOutput())
                                      .split(QLatin1Char('\n'), Qt::SkipEmptyParts);
        QCOMPARE(lines.size(), ModelController::kTopK + 1); // the header, then one per rank
        for (int row = 0; row < ModelController::kTopK; ++row) {
            const QStringList cells = lines.at(row + 1).split(QLatin1Char('\t'));
            QVERIFY2(cells.size() >= 4, qPrintable(lines.at(row + 1)));
            const models::NextToken &t = run->next[std::size_t(row)];
            QCOMPARE(cells.at(1), table->item(row, 2)->text()); // the id
            QCOMPARE(table->item(row, 1)->text(), nextTokenNumberText(t.probability));
            QCOMPARE(cells.at(2), nextTokenNumberText(cells.at(2).toDouble()));
            QVERIFY2(
                std::abs(cells.at(2).toDouble() - t.probability) <= 1e-5,
                qPrintable(cells.at(2) + QStringLiteral(" vs ") + table->item(row, 1)->text()));
            QCOMPARE(
                table->item(row, 0)->toolTip(),
                QStringLiteral("rank %1, logit %2").arg(row + 1).arg(nextTokenNumberText(t.logit)));
            QCOMPARE(cells.at(3), nextTokenNumberText(cells.at(3).toDouble()));
        }
    }
    // Tensors opened over the run: the readout, which belonged to the run, goes.
    QTemporaryDir dir;
    const QString file = dir.filePath(QStringLiteral("qkv.npz"));
    const MatrixD x = MatrixD::Ones(3, 4);
    writeNpz(file.toStdString(),
             {{"query", NpyArray::fromMatrix(x)},
              {"key", NpyArray::fromMatrix(x)},
              {"value", NpyArray::fromMatrix(x)}});
    QVERIFY(w.window.tensorController()->open(file)); // as File → Open Tensors… does
    QTableWidget *table = w.models()->panel()->nextTokenTable();
    QCOMPARE(table->rowCount(), 0);
    QVERIFY(table->isHidden());
}

QTEST_MAIN(TestModelWindowRun)
#include "tst_modelwindow_run.moc"
