// Tests of the model folders and files around a run in the window (File → Open Model…): the
// Hugging Face cache scan lists a fake cache's models and skips other folders; a broken folder
// is refused with core's message and the session kept; sessions keep the model folder and the
// text, and say when the folder is gone; Cancel stops the forward pass; the token strip shows
// the GPT-2 tokenizer's pieces and ids, or the words without a model.

#include "modelwindowtest.h"

#include "ui/windowtest.h"

#include "core/models/forward.h"
#include "core/models/modelfolder.h"
#include "core/text/loader.h"
#include "core/text/piecelabel.h"
#include "ui/document/sessionfile.h"
#include "ui/panels/controlpanel.h"
#include "ui/panels/modelpanel.h"
#include "ui/session/modelrun.h"
#include "ui/session/tensorsource.h"
#include "ui/session/tokenizer.h"
#include "ui/views/tokenstrip.h"
#include "ui/window/sessioncontroller.h"
#include "ui/window/tensorcontroller.h"

#include <QAction>
#include <QComboBox>
#include <QDir>
#include <QFile>
#include <QFileInfo>
#include <QJsonDocument>
#include <QJsonObject>
#include <QLabel>
#include <QMenu>
#include <QPlainTextEdit>
#include <QPushButton>
#include <QSpinBox>
#include <QTemporaryDir>
#include <QTest>

#include <atomic>

using namespace attn;
using namespace modelwindowtest;

namespace {

bool copyFolder(const QString &from, const QString &to)
{
    if (!QDir().mkpath(to))
        return false;
    for (const QString &name : QDir(from).entryList(QDir::Files))
        if (!QFile::copy(QDir(from).filePath(name), QDir(to).filePath(name)))
            return false;
    return true;
}

bool writeFile(const QString &path, const QByteArray &bytes)
{
    QDir().mkpath(QFileInfo(path).absolutePath());
    QFile f(path);
    return f.open(QIODevice::WriteOnly) && f.write(bytes) == bytes.size();
}

using windowtest::answerNextMessageBox;
using windowtest::MessageBoxAnswer;

} // namespace

class TestModelWindowFiles : public QObject
{
    Q_OBJECT
private slots:
    void huggingFaceCacheScan();
    void brokenFolderKeepsSession();
    void sessionKeepsModelAndText();
    void controlsAndSessionShowModelShape_data();
    void controlsAndSessionShowModelShape();
    void sessionWithMissingFolderSaysSo();
    void sessionFileChecksModelKey();
    void cancelStopsTheForwardPass();
    void tokenStripShowsTokenizerPieces();
    void tokenStripWithoutModelSplitsWords();
    void pieceLabelsShowSpacesAndSplitBytes();
};

void TestModelWindowFiles::huggingFaceCacheScan()
{
    QTemporaryDir home;
    QVERIFY(home.isValid());
    const QString hub = home.filePath(QStringLiteral("hub"));
    const QString good = hub + QStringLiteral("/models--openai-community--gpt2/snapshots/0123abc");
    QVERIFY(copyFolder(fixtureFolder(QStringLiteral("gpt2")), good));
    const QString llama = hub + QStringLiteral("/models--meta--tiny-llama/snapshots/feed");
    QVERIFY(copyFolder(fixtureFolder(QStringLiteral("llama_gqa")), llama));
    // An unsupported family is listed with its problem; folders that are no model are skipped.
    QVERIFY(writeFile(hub + QStringLiteral("/models--state--mamba/snapshots/1/config.json"),
                      R"({"model_type": "mamba", "vocab_size": 8})"));
    QVERIFY(writeFile(hub + QStringLiteral("/models--x--readme-only/snapshots/2/README.md"), "hi"));
    QVERIFY(writeFile(hub + QStringLiteral("/datasets--x--data/snapshots/3/config.json"), "{}"));
    QVERIFY(writeFile(hub + QStringLiteral("/version.txt"), "1"));
    QVERIFY(QDir().mkpath(hub + QStringLiteral("/models--empty--repo")));

    const auto found = models::scanHuggingFaceCache(hub.toStdString());
    QCOMPARE(int(found.size()), 3);
    QCOMPARE(found[0].name, std::string("meta/tiny-llama"));
    QCOMPARE(found[0].family, std::string("llama"));
    QVERIFY(found[0].supported());
    QCOMPARE(found[1].name, std::string("openai-community/gpt2"));
    QCOMPARE(found[1].family, std::string("gpt2"));
    QCOMPARE(found[1].revision, std::string("0123abc"));
    QCOMPARE(found[1].weightBytes,
             std::uint64_t(QFileInfo(good + QStringLiteral("/model.safetensors")).size()));
    QCOMPARE(found[2].name, std::string("state/mamba"));
    QVERIFY(!found[2].supported());
    QVERIFY2(QString::fromStdString(found[2].problem).contains(QStringLiteral("mamba")),
             found[2].problem.c_str());
    QCOMPARE(models::modelDisplayName(good.toStdString()), std::string("openai-community/gpt2"));

    // $HF_HOME/hub is where the window looks unless told otherwise.
    const QByteArray oldHome = qgetenv("HF_HOME"), oldCache = qgetenv("HF_HUB_CACHE");
    qunsetenv("HF_HUB_CACHE");
    qputenv("HF_HOME", home.path().toUtf8());
    QCOMPARE(QString::fromStdString(models::huggingFaceHubDir().string()), hub);
    Window w;
    QVERIFY(w.start());
    QCOMPARE(w.models()->hubFolder(), hub);
    QMenu *menu = w.models()->cacheMenu();
    QMetaObject::invokeMethod(menu, "aboutToShow");
    QStringList folders;
    for (QAction *a : menu->actions())
        if (!a->data().toString().isEmpty())
            folders << a->data().toString();
    // The built-in model first (the source tree's models/brown-gpt for a build tree), then the
    // cache's.
    const QString builtin = ModelController::builtinFolder();
    QVERIFY(QFileInfo(builtin + QStringLiteral("/model.safetensors")).isFile());
    QCOMPARE(menu->actions().first()->data().toString(), builtin);
    QCOMPARE(folders,
             (QStringList {builtin, llama, good,
                           hub + QStringLiteral("/models--state--mamba/snapshots/1")}));
    if (oldHome.isNull())
        qunsetenv("HF_HOME");
    else
        qputenv("HF_HOME", oldHome);
    if (!oldCache.isNull())
        qputenv("HF_HUB_CACHE", oldCache);

    // A cached model opens with its repository's name.
    QString error;
    QVERIFY2(w.models()->openFolder(good, &error), qPrintable(error));
    QCOMPARE(w.models()->model()->name, QStringLiteral("openai-community/gpt2"));
}

void TestModelWindowFiles::brokenFolderKeepsSession()
{
    Window w;
    QString error;
    QVERIFY2(w.startWithGpt2(&error), qPrintable(error));
    const SessionParameters before = w.window.session()->parameters();
    const auto model = w.models()->model();

    QTemporaryDir dir;
    struct Case
    {
        QString folder;
        QString expectedText;
    };
    const QString pickle = dir.filePath(QStringLiteral("pickle"));
    QVERIFY(copyFolder(fixtureFolder(QStringLiteral("gpt2")), pickle));
    QVERIFY(QFile::remove(pickle + QStringLiteral("/model.safetensors")));
    QVERIFY(writeFile(pickle + QStringLiteral("/pytorch_model.bin"), "not read"));
    const QString gguf = dir.filePath(QStringLiteral("gguf"));
    QVERIFY(writeFile(gguf + QStringLiteral("/model.gguf"), "GGUF"));
    QVERIFY(writeFile(gguf + QStringLiteral("/config.json"), R"({"model_type": "llama"})"));
    const QString family = dir.filePath(QStringLiteral("family"));
    QVERIFY(writeFile(family + QStringLiteral("/config.json"), R"({"model_type": "mamba"})"));
    const QString notModel = dir.filePath(QStringLiteral("photos"));
    QVERIFY(writeFile(notModel + QStringLiteral("/cat.jpg"), "jpeg"));
    for (const Case &c :
         {Case {pickle, QStringLiteral("pytorch_model.bin")}, Case {gguf, QStringLiteral("gguf")},
          Case {family, QStringLiteral("mamba")}, Case {notModel, QStringLiteral("config.json")},
          Case {dir.filePath(QStringLiteral("absent")), QStringLiteral("no such folder")}}) {
        error.clear();
        QVERIFY(!w.models()->openFolder(c.folder, &error));
        QVERIFY2(error.contains(c.expectedText, Qt::CaseInsensitive), qPrintable(error));
        QCOMPARE(w.models()->model(), model);
        QVERIFY(w.window.session()->parameters() == before);
    }
    // Through the menu's path: a message box with core's message, the session kept.
    const auto answer = answerNextMessageBox();
    QVERIFY(!w.models()->open(family));
    QVERIFY(answer->seen);
    QVERIFY2(answer->text.contains(QStringLiteral("mamba")), qPrintable(answer->text));
    QVERIFY2(answer->text.contains(QStringLiteral("current session is kept")),
             qPrintable(answer->text));
    QVERIFY(w.window.session()->parameters() == before);
}

void TestModelWindowFiles::sessionKeepsModelAndText()
{
    QTemporaryDir dir;
    const QString file = dir.filePath(QStringLiteral("model.attnlab.json"));
    const QString folder = fixtureFolder(QStringLiteral("llama_gqa"));
    const QString ids = idsText(QStringLiteral("llama_gqa"));
    QString error;
    SessionParameters random;
    {
        Window w;
        QVERIFY(w.start());
        // Controls set before the model is opened: the session keeps them beside the model's.
        random = w.window.session()->parameters();
        random.n = 7;
        random.dModel = 96;
        random.heads = 3;
        random.seed = 42;
        w.window.session()->setParameters(random);
        QVERIFY2(w.run(folder, ids, true, &error), qPrintable(error));
        w.window.tensorController()->setLayer(1);
        QTRY_VERIFY(w.window.session()->parameters().tensors->layer() == 1);
        QVERIFY2(w.window.sessionController()->saveFile(file, &error), qPrintable(error));
    }
    QFile f(file);
    QVERIFY(f.open(QIODevice::ReadOnly));
    const QJsonObject saved = QJsonDocument::fromJson(f.readAll()).object();
    const QJsonObject model = saved.value(QLatin1String("model")).toObject();
    QCOMPARE(model.value(QLatin1String("folder")).toString(), QFileInfo(folder).absoluteFilePath());
    QCOMPARE(model.value(QLatin1String("text")).toString(), ids);
    QVERIFY(saved.value(QLatin1String("tensors")).toObject().isEmpty());

    Window again;
    QVERIFY(again.start());
    QVERIFY2(again.window.sessionController()->openFile(file, &error), qPrintable(error));
    QVERIFY2(again.window.sessionController()->openWarning().isEmpty(),
             qPrintable(again.window.sessionController()->openWarning()));
    QCOMPARE(again.models()->model()->folder, QFileInfo(folder).absoluteFilePath());
    QCOMPARE(again.models()->text(), ids);
    again.models()->waitForRun();
    AttentionSession *s = again.window.session();
    QTRY_VERIFY_WITH_TIMEOUT(s->parameters().tensors && s->parameters().tensors->isModelRun()
                                 && !s->isBusy(),
                             attn::test::kWorkTimeoutMs);
    QCOMPARE(s->parameters().tensors->layer(), 1);
    QVERIFY(!again.window.sessionController()->isModified());
    // Back to Random Inputs after the restart: the Controls as they were before the model.
    again.window.tensorController()->backToRandomInputs();
    QVERIFY(!s->parameters().tensors);
    QCOMPARE(s->parameters(), random);
}
namespace {

/// The Controls' texts for the attention shape: d_model, h, d_k, g, the kind, the mask, the
/// window and the scale.
QStringList shownShape(const MainWindow &window)
{
    const ControlPanel *c = window.controlPanel();
    const auto combo = [c](const char *name) {
        const auto *w = c->findChild<QComboBox *>(QLatin1String(name));
        return w ? w->currentText() : QStringLiteral("(no %1)").arg(QLatin1String(name));
    };
    const auto spin = [c](const char *name) {
        const auto *w = c->findChild<QSpinBox *>(QLatin1String(name));
        return w ? w->text() : QStringLiteral("(no %1)").arg(QLatin1String(name));
    };
    const auto label = [c](const char *name) {
        const auto *w = c->findChild<QLabel *>(QLatin1String(name));
        return w ? w->text() : QStringLiteral("(no %1)").arg(QLatin1String(name));
    };
    return {QStringLiteral("d_model ") + spin("dModelSpin"),
            QStringLiteral("h ") + combo("headsCombo"),
            QStringLiteral("d_k ") + label("dkLabel"),
            QStringLiteral("g ") + combo("kvHeadsCombo"),
            QStringLiteral("kind ") + combo("kindCombo"),
            QStringLiteral("mask ") + combo("maskCombo"),
            QStringLiteral("window ") + spin("windowSpin"),
            QStringLiteral("scale ") + label("scaleLabel")};
}

} // namespace

void TestModelWindowFiles::controlsAndSessionShowModelShape_data()
{
    QTest::addColumn<QString>("fixture");
    QTest::addColumn<int>("layer");
    QTest::addColumn<QString>("kind"); // the session's "kind"
    QTest::addColumn<QStringList>("shape");
    // GPT-2: d_model 16, h = 4, d_k = 4, causal; the scale 1/√d_k.
    QTest::newRow("gpt2") << "gpt2" << 0 << "decoder"
                          << QStringList {"d_model 16",
                                          "h 4",
                                          "d_k 4",
                                          "g 4 (multi-head)",
                                          "kind Causal self-attention",
                                          "mask Causal (decoder)",
                                          "window off",
                                          "scale 1/√4 = 0.5"};
    // Qwen3's head_dim 8 is not d_model / h = 4: d_k and the scale are the model's.
    QTest::newRow("qwen3") << "qwen3" << 0 << "decoder"
                           << QStringList {"d_model 16",
                                           "h 4",
                                           "d_k 8",
                                           "g 2",
                                           "kind Causal self-attention",
                                           "mask Causal (decoder)",
                                           "window off",
                                           "scale 1/√8 = 0.3536"};
    // BERT: no mask.
    QTest::newRow("bert") << "bert" << 1 << "encoder" << QStringList {"d_model 16",
                                                                      "h 4",
                                                                      "d_k 4",
                                                                      "g 4 (multi-head)",
                                                                      "kind Encoder self-attention",
                                                                      "mask None",
                                                                      "window off",
                                                                      "scale 1/√4 = 0.5"};
    // Qwen2's sliding window (w = 4) in the layers from max_window_layers = 1 on.
    QTest::newRow("qwen2 window") << "qwen2_window" << 1 << "decoder"
                                  << QStringList {"d_model 16",
                                                  "h 4",
                                                  "d_k 4",
                                                  "g 2",
                                                  "kind Causal self-attention",
                                                  "mask Causal (sliding window)",
                                                  "window 4",
                                                  "scale 1/√4 = 0.5"};
}

// A model run knows its shape: the greyed Controls show its d_model, h, d_k, kv heads, causal
// mask and scale (not the placeholders of stored weights), the session file's "parameters"
// record them, and the reopened session runs the model again with the same parameters.
void TestModelWindowFiles::controlsAndSessionShowModelShape()
{
    QFETCH(QString, fixture);
    QFETCH(int, layer);
    QFETCH(QString, kind);
    QFETCH(QStringList, shape);
    QTemporaryDir dir;
    const QString file = dir.filePath(QStringLiteral("shape.attnlab.json"));
    QString error;
    QJsonObject shown;
    {
        Window w;
        QVERIFY(w.start());
        QVERIFY2(w.run(fixtureFolder(fixture), idsText(fixture), true, &error), qPrintable(error));
        w.window.tensorController()->setLayer(layer);
        QTRY_VERIFY(w.window.session()->parameters().tensors->layer() == layer);
        QCOMPARE(shownShape(w.window), shape);
        const SessionParameters &p = w.window.session()->parameters();
        QVERIFY2(p.validate().isEmpty(), qPrintable(p.validate()));
        shown = p.toJson();
        QVERIFY2(w.window.sessionController()->saveFile(file, &error), qPrintable(error));
    }
    QFile f(file);
    QVERIFY(f.open(QIODevice::ReadOnly));
    const QJsonObject saved = QJsonDocument::fromJson(f.readAll())
                                  .object()
                                  .value(QLatin1String("parameters"))
                                  .toObject();
    QCOMPARE(saved.value(QLatin1String("d_model")).toInt(), 16);
    QCOMPARE(saved.value(QLatin1String("heads")).toInt(), 4);
    QCOMPARE(saved.value(QLatin1String("kind")).toString(), kind);
    QCOMPARE(saved.value(QLatin1String("mask")).toString(), QStringLiteral("none"));
    // The file reads back as valid parameters, and reopening it runs the model again.
    const auto document = SessionFile::load(file, &error);
    QVERIFY2(document, qPrintable(error));
    QVERIFY(document->parameters.validate().isEmpty());

    Window again;
    QVERIFY(again.start());
    QVERIFY2(again.window.sessionController()->openFile(file, &error), qPrintable(error));
    QVERIFY2(again.window.sessionController()->openWarning().isEmpty(),
             qPrintable(again.window.sessionController()->openWarning()));
    again.models()->waitForRun();
    AttentionSession *s = again.window.session();
    QTRY_VERIFY_WITH_TIMEOUT(s->parameters().tensors && s->parameters().tensors->isModelRun()
                                 && s->parameters().tensors->layer() == layer && !s->isBusy(),
                             attn::test::kWorkTimeoutMs);
    QCOMPARE(s->parameters().toJson(), shown);
    QCOMPARE(shownShape(again.window), shape);
}

void TestModelWindowFiles::sessionWithMissingFolderSaysSo()
{
    QTemporaryDir dir;
    const QString folder = dir.filePath(QStringLiteral("moved-model"));
    QVERIFY(copyFolder(fixtureFolder(QStringLiteral("gpt2")), folder));
    const QString file = dir.filePath(QStringLiteral("gone.attnlab.json"));
    QString error;
    SessionParameters random;
    {
        Window w;
        QVERIFY(w.start());
        random = w.window.session()->parameters();
        random.n = 5;
        random.dModel = 48;
        random.heads = 6;
        w.window.session()->setParameters(random);
        QVERIFY2(w.run(folder, QStringLiteral("1 2 3"), true, &error), qPrintable(error));
        // The model's shape (n = 3 tokens, h = 4) replaces the Controls' while it is shown.
        QCOMPARE(w.window.session()->parameters().n, 3);
        QCOMPARE(w.window.session()->parameters().heads, 4);
        QVERIFY2(w.window.sessionController()->saveFile(file, &error), qPrintable(error));
    }
    QVERIFY(QDir(folder).removeRecursively());
    Window again;
    QVERIFY(again.start());
    QVERIFY2(again.window.sessionController()->openFile(file, &error), qPrintable(error));
    const QString warning = again.window.sessionController()->openWarning();
    QVERIFY2(warning.contains(QDir::toNativeSeparators(folder)), qPrintable(warning));
    QVERIFY2(warning.contains(QStringLiteral("gone")), qPrintable(warning));
    QVERIFY(!again.models()->model());
    // The rest of the session is open, with the Controls' parameters from before the model (not
    // the model's shape over random inputs).
    QVERIFY(!again.window.session()->parameters().tensors);
    QCOMPARE(again.window.session()->parameters(), random);
}

void TestModelWindowFiles::sessionFileChecksModelKey()
{
    const QByteArray head = R"({"format": "attnlab-session", "version": 1, "parameters": {},)";
    QString error;
    const auto good = SessionFile::fromJson(
        head
            + R"("model": {"folder": "/m", "text": "hi", "ids": false, "shown": true, "layer": 2}})",
        &error);
    QVERIFY2(good, qPrintable(error));
    QCOMPARE(good->model.value(QLatin1String("folder")).toString(), QStringLiteral("/m"));
    QCOMPARE(good->model.value(QLatin1String("layer")).toInt(), 2);
    QVERIFY(good->extra.isEmpty());
    // Written back as read.
    const auto again = SessionFile::fromJson(SessionFile::toJson(*good), &error);
    QVERIFY2(again, qPrintable(error));
    QCOMPARE(again->model, good->model);
    for (const char *bad : {R"("model": {"text": "no folder"}})", R"("model": {"folder": 3}})",
                            R"("model": {"folder": "/m", "layer": -1}})",
                            R"("model": {"folder": "/m", "text": 5}})", R"("model": [1]})"}) {
        error.clear();
        QVERIFY2(!SessionFile::fromJson(head + bad, &error), bad);
        QVERIFY2(error.contains(QStringLiteral("\"model\"")), qPrintable(error));
    }
    // No model: no key.
    SessionDocument plain;
    QVERIFY(!SessionFile::toJson(plain).contains("\"model\""));
    QVERIFY(!SessionFile::toJson(plain).contains("\"random_inputs\""));

    // The random inputs' parameters beside a model: read, written back, checked as "parameters".
    const auto withRandom = SessionFile::fromJson(
        head + R"("model": {"folder": "/m"}, "random_inputs": {"n": 9, "heads": 2}})", &error);
    QVERIFY2(withRandom, qPrintable(error));
    QVERIFY(withRandom->randomInputs);
    QCOMPARE(withRandom->randomInputs->n, 9);
    QCOMPARE(withRandom->randomInputs->heads, 2);
    QVERIFY(withRandom->extra.isEmpty());
    const auto randomAgain = SessionFile::fromJson(SessionFile::toJson(*withRandom), &error);
    QVERIFY2(randomAgain && randomAgain->randomInputs, qPrintable(error));
    QCOMPARE(*randomAgain->randomInputs, *withRandom->randomInputs);
    for (const char *bad : {R"("random_inputs": {"n": -1}})", R"("random_inputs": [1]})",
                            R"("random_inputs": {"heads": 5, "d_model": 64}})"}) {
        error.clear();
        QVERIFY2(!SessionFile::fromJson(head + bad, &error), bad);
        QVERIFY2(error.contains(QStringLiteral("\"random_inputs\"")), qPrintable(error));
    }
}

void TestModelWindowFiles::cancelStopsTheForwardPass()
{
    // In core's loop: a cancel after the first layer stops before the second.
    QString error;
    const auto model = openModelFolder(fixtureFolder(QStringLiteral("gpt2")), &error);
    QVERIFY2(model, qPrintable(error));
    const auto input = prepareModelInput(*model, idsText(QStringLiteral("gpt2")), true, &error);
    QVERIFY2(input, qPrintable(error));
    std::atomic<bool> stop {false};
    int reported = 0;
    bool cancelled = false;
    try {
        runModel(
            model, *input, std::uint64_t(1) << 30, 5,
            [&](int done, int total) {
                ++reported;
                QCOMPARE(total, 2);
                stop = true;
                (void)done;
            },
            CancelToken(&stop));
    } catch (const Cancelled &) {
        cancelled = true;
    }
    QVERIFY(cancelled);
    QCOMPARE(reported, 1);

    // In the window: Cancel drops the run, the views keep what they showed.
    Window w;
    QVERIFY(w.start());
    const SessionParameters before = w.window.session()->parameters();
    QVERIFY2(w.models()->openFolder(fixtureFolder(QStringLiteral("gpt2")), &error),
             qPrintable(error));
    w.models()->setText(idsText(QStringLiteral("gpt2")), true);
    QVERIFY2(w.models()->run(&error), qPrintable(error));
    QVERIFY(w.models()->isRunning());
    QVERIFY(w.models()->panel()->cancelButton()->isVisibleTo(w.models()->panel()));
    w.models()->panel()->cancelButton()->click();
    QVERIFY(!w.models()->isRunning());
    QTest::qWait(200);
    QVERIFY(!w.models()->lastRun());
    QVERIFY(w.window.session()->parameters() == before);
    QVERIFY(w.models()->panel()->messageLabel()->text().contains(QStringLiteral("Cancelled")));
    QVERIFY(w.models()->panel()->runButton()->isEnabled());
}

void TestModelWindowFiles::tokenStripShowsTokenizerPieces()
{
    const QString refs = QStringLiteral(ATTN_TOKENIZER_MODELS "/gpt2-hf");
    QVERIFY2(QFileInfo::exists(refs + QStringLiteral("/vocab.json")),
             "the GPT-2 tokenizer files are fetched by the tokenizer_refs test fixture");
    QTemporaryDir dir;
    const QString folder = dir.filePath(QStringLiteral("gpt2-with-tokenizer"));
    QVERIFY(copyFolder(fixtureFolder(QStringLiteral("gpt2")), folder));
    QVERIFY(
        QFile::copy(refs + QStringLiteral("/vocab.json"), folder + QStringLiteral("/vocab.json")));
    QVERIFY(
        QFile::copy(refs + QStringLiteral("/merges.txt"), folder + QStringLiteral("/merges.txt")));

    Window w;
    QVERIFY(w.start());
    QString error;
    QVERIFY2(w.models()->openFolder(folder, &error), qPrintable(error));
    QVERIFY(w.models()->model()->tokenizer);
    const QString text = QStringLiteral("Hello world, na\u00efve caf\u00e9 \u9f98!");
    // Typed into the panel, as a user does.
    w.models()->panel()->textEdit()->setPlainText(text);
    const QVector<TokenPiece> pieces = w.models()->panel()->tokenStrip()->pieces();
    const auto tokenizer = text::loadTokenizer(folder.toStdString());
    const std::string bytes = text.toStdString();
    const text::Encoding encoding = tokenizer->encode(bytes);
    QCOMPARE(pieces.size(), qsizetype(encoding.tokens.size()));
    for (qsizetype k = 0; k < pieces.size(); ++k) {
        const text::Token &t = encoding.tokens[std::size_t(k)];
        QCOMPARE(pieces[k].id, std::int64_t(t.id));
        QCOMPARE(pieces[k].begin, std::int64_t(t.begin));
        QCOMPARE(pieces[k].end, std::int64_t(t.end));
        QCOMPARE(pieces[k].label,
                 QString::fromStdString(text::pieceLabel(text::tokenBytes(*tokenizer, t, bytes))));
    }
    QCOMPARE(pieces[0].label, QStringLiteral("Hello"));
    QCOMPARE(pieces[1].label, QStringLiteral("\u2423world"));
    // The three bytes of 龘 (E9 BE 98) are split between byte-level tokens: marked in hex.
    bool split = false;
    for (const TokenPiece &p : pieces)
        split = split || p.label.contains(QStringLiteral("\u2039E9\u203a\u2039BE\u203a"));
    QVERIFY(split);
    TokenStrip *strip = w.models()->panel()->tokenStrip();
    const QString tip = strip->pieceToolTip(1);
    QVERIFY2(tip.contains(QStringLiteral("id %1").arg(pieces[1].id)), qPrintable(tip));
    QVERIFY2(tip.contains(QStringLiteral("20 77 6F 72 6C 64")), qPrintable(tip));
    QVERIFY(!strip->pieceRect(int(pieces.size()) - 1).isEmpty());
    // The tiny checkpoint's vocabulary (48) is smaller than GPT-2's: refused, with the id named.
    QVERIFY(!w.models()->run(&error));
    QVERIFY2(error.contains(QStringLiteral("[0, 48)")), qPrintable(error));
    QVERIFY(w.models()->panel()->messageLabel()->text().contains(QStringLiteral("[0, 48)")));
}

void TestModelWindowFiles::tokenStripWithoutModelSplitsWords()
{
    Window w;
    QVERIFY(w.start());
    QVERIFY(!w.models()->model());
    const QString text = QStringLiteral("The cat, sat.");
    w.models()->panel()->textEdit()->setPlainText(text);
    QStringList labels;
    for (const TokenPiece &p : w.models()->panel()->tokenStrip()->pieces()) {
        labels << p.label;
        QCOMPARE(p.id, std::int64_t(-1));
    }
    QCOMPARE(labels, splitTokens(text));
    QVERIFY(!w.models()->panel()->runButton()->isEnabled());
}

void TestModelWindowFiles::pieceLabelsShowSpacesAndSplitBytes()
{
    QCOMPARE(text::pieceLabel(" cat"), std::string("\u2423cat"));
    QCOMPARE(text::pieceLabel("a\nb\t"), std::string("a\u21b5b\u21e5"));
    QCOMPARE(text::pieceLabel("caf\xc3\xa9"), std::string("caf\u00e9"));
    QCOMPARE(text::pieceLabel("\xF0\x9F"), std::string("\u2039F0\u203a\u20399F\u203a"));
    QCOMPARE(text::pieceLabel(""), std::string("\u2205"));
    QCOMPARE(text::hexBytes(" ca"), std::string("20 63 61"));
}

QTEST_MAIN(TestModelWindowFiles)
#include "tst_modelwindow_files.moc"
