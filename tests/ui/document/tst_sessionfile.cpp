// Session files (.attnlab.json): save → open gives identical parameters, view state and rendered
// heatmaps (through SessionFile, through the window, and through `attnlab heatmap --session`);
// saving is atomic (a failed write leaves the old file byte for byte); newer-version, corrupted
// and invalid files are refused with a message naming the file and the problem while the
// window's state stays as it was; unknown keys survive a load/save; tensors are saved by path
// with their batch item. The window's handling of sessions is tested in tst_sessionwindow.cpp.

#include "ui/sessiontest.h"

using namespace sessiontest;

class TestSessionFile : public QObject
{
    Q_OBJECT

private slots:
    void initTestCase();
    void init();
    void cleanup();

    void documentRoundTrip_data();
    void documentRoundTrip();
    void fileFormat();
    void unknownKeysKept();
    void unknownKeysReported();
    void windowRoundTrip_data();
    void windowRoundTrip();
    void atomicSaveKeepsOldFile_data();
    void atomicSaveKeepsOldFile();
    void failedSaveKeepsWindowState();
    void stepsViewRoundTrip();
    void badFileKeepsState_data();
    void badFileKeepsState();
    void openErrorNamesFileAndProblem();
    void tensorsRoundTrip_data();
    void tensorsRoundTrip();
    void tensorPathRelativeToSession();
    void tensorBatchItemRestored();
    void missingTensorFileOpensTheRest();
    void cliRendersSession_data();
    void cliRendersSession();

private:
    QTemporaryDir m_dir;
    std::unique_ptr<MainWindow> m_window;
};

void TestSessionFile::initTestCase()
{
    QVERIFY(m_dir.isValid());
    QStandardPaths::setTestModeEnabled(true); // never touch the user's QSettings
}

void TestSessionFile::init()
{
    m_window = newWindow();
    QVERIFY(m_window);
}

void TestSessionFile::cleanup()
{
    closeWindow(m_window);
}

void TestSessionFile::documentRoundTrip_data()
{
    QTest::addColumn<int>("variant");
    QTest::newRow("defaults, grid") << 0;
    QTest::newRow("decoder, float32, PE, tokens; head 2, magma, log") << 1;
    QTest::newRow("cross, padding, alpha 0.3, tau 2.5; cividis auto, no mean") << 2;
    QTest::newRow("seed above 2^53, unscaled, causal; gray head 0") << 3;
}

void TestSessionFile::documentRoundTrip()
{
    QFETCH(int, variant);
    SessionDocument saved;
    saved.parameters = makeParameters(variant);
    QVERIFY2(saved.parameters.validate().isEmpty(), qPrintable(saved.parameters.validate()));
    const HeatmapOptions options = makeOptions(variant);
    const ViewTransform transform = makeTransform(variant);
    saved.view = makeView(variant);

    const QString path = m_dir.filePath(QStringLiteral("round%1.attnlab.json").arg(variant));
    QString error;
    QVERIFY2(SessionFile::save(path, saved, &error), qPrintable(error));
    const auto loaded = SessionFile::load(path, &error);
    QVERIFY2(loaded, qPrintable(error));

    QCOMPARE(loaded->parameters, saved.parameters);
    QCOMPARE(loaded->parameters.seed, saved.parameters.seed);
    QCOMPARE(loaded->parameters.tokenList(), saved.parameters.tokenList());
    QCOMPARE(loaded->view, saved.view);
    const HeatmapOptions loadedOptions
        = heatmapViewFromJson(loaded->view.value(QLatin1String("heatmap")).toObject(), {});
    QVERIFY(loadedOptions == options);
    const ViewTransform loadedTransform
        = viewTransformFromJson(loaded->view.value(QLatin1String("transform")).toObject(), {});
    QVERIFY(loadedTransform == transform);

    // The same picture from the loaded session as from the saved one, pixel for pixel.
    const QImage before = renderDocument(saved.parameters, options, transform);
    const QImage after = renderDocument(loaded->parameters, loadedOptions, loadedTransform);
    QVERIFY(!before.isNull());
    QCOMPARE(after, before);
}

void TestSessionFile::fileFormat()
{
    SessionDocument d;
    d.parameters = makeParameters(3);
    const QJsonObject o = QJsonDocument::fromJson(SessionFile::toJson(d)).object();
    QCOMPARE(o.value(QLatin1String("format")).toString(), QStringLiteral("attnlab-session"));
    QCOMPARE(o.value(QLatin1String("version")).toInt(), SessionFile::formatVersion);
    const QJsonObject p = o.value(QLatin1String("parameters")).toObject();
    for (const char *key :
         {"n", "n_k", "d_model", "heads", "seed", "generator", "kind", "mask", "padding",
          "scale_exponent", "temperature", "positional", "dtype", "tokens"})
        QVERIFY2(p.contains(QLatin1String(key)), key);
    // The seed as a decimal string: exact beyond 2^53.
    QCOMPARE(p.value(QLatin1String("seed")).toString(), QStringLiteral("18446744073709551557"));
    QCOMPARE(p.value(QLatin1String("mask")).toString(), QStringLiteral("causal"));
    QVERIFY(o.value(QLatin1String("view")).isObject());
    QVERIFY(o.value(QLatin1String("tensors")).isObject());
    // The Compare A/B view's B (view "compare"): every mask by its id, read back as written.
    const QList<std::pair<CompareVariant::Mask, QString>> masks
        = {{CompareVariant::Mask::None, QStringLiteral("none")},
           {CompareVariant::Mask::Causal, QStringLiteral("causal")},
           {CompareVariant::Mask::Padding, QStringLiteral("padding")},
           {CompareVariant::Mask::CausalPadding, QStringLiteral("causal_padding")}};
    for (const auto &[mask, id] : masks) {
        const CompareVariant v {0.125, 0.5, mask, 64};
        const QJsonObject c = compareViewToJson(v, 2);
        QCOMPARE(c.value(QLatin1String("alpha")).toDouble(), 0.125);
        QCOMPARE(c.value(QLatin1String("temperature")).toDouble(), 0.5);
        QCOMPARE(c.value(QLatin1String("mask")).toString(), id);
        QCOMPARE(c.value(QLatin1String("d_k")).toInt(), 64);
        QCOMPARE(c.value(QLatin1String("head")).toInt(), 2);
        int head = -1;
        QCOMPARE(compareViewFromJson(c, CompareVariant {}, &head), v);
        QCOMPARE(head, 2);
    }
    QCOMPARE(SessionFile::withSuffix(QStringLiteral("/a/b")), QStringLiteral("/a/b.attnlab.json"));
    QCOMPARE(SessionFile::withSuffix(QStringLiteral("/a/b.json")), QStringLiteral("/a/b.json"));
}

void TestSessionFile::unknownKeysKept()
{
    // A file from a future version (same format version, more keys): nothing is lost when the
    // window opens and saves it again.
    QJsonObject file;
    file.insert(QStringLiteral("format"), QStringLiteral("attnlab-session"));
    file.insert(QStringLiteral("version"), 1);
    QJsonObject params = makeParameters(1).toJson();
    params.insert(QStringLiteral("future_knob"), 42);
    file.insert(QStringLiteral("parameters"), params);
    QJsonObject heatmap = heatmapViewToJson(makeOptions(1));
    heatmap.insert(QStringLiteral("zoom"), 3.5);
    file.insert(QStringLiteral("view"),
                QJsonObject {{QStringLiteral("heatmap"), heatmap},
                             {QStringLiteral("steps_view"), QJsonObject {{"row", 4}}}});
    file.insert(QStringLiteral("notes"), QStringLiteral("kept"));
    const QString in = m_dir.filePath(QStringLiteral("future.attnlab.json"));
    QVERIFY(writeAll(in, QJsonDocument(file).toJson()));

    SessionController *c = m_window->sessionController();
    QString error;
    QVERIFY2(c->openFile(in, &error), qPrintable(error));
    QCOMPARE(m_window->session()->parameters(), makeParameters(1));
    QVERIFY(m_window->heatmapWidget()->isSingleHead());
    QCOMPARE(m_window->heatmapWidget()->options().colormap, ColormapId::Magma);

    const QString out = m_dir.filePath(QStringLiteral("future-again.attnlab.json"));
    QVERIFY2(c->saveFile(out, &error), qPrintable(error));
    const QJsonObject again = QJsonDocument::fromJson(readAll(out)).object();
    QCOMPARE(again.value(QLatin1String("notes")).toString(), QStringLiteral("kept"));
    QCOMPARE(
        again.value(QLatin1String("parameters")).toObject().value(QLatin1String("future_knob")),
        QJsonValue(42));
    const QJsonObject view = again.value(QLatin1String("view")).toObject();
    QCOMPARE(view.value(QLatin1String("steps_view")).toObject().value(QLatin1String("row")),
             QJsonValue(4));
    QCOMPARE(view.value(QLatin1String("heatmap")).toObject().value(QLatin1String("zoom")),
             QJsonValue(3.5));
}

// Keys the version does not know (a newer file, or a typo) are named when the session opens,
// each with its block, as the window reports a session's other problems; a file of known keys
// opens without a word.
void TestSessionFile::unknownKeysReported()
{
    QJsonObject file;
    file.insert(QStringLiteral("format"), QStringLiteral("attnlab-session"));
    file.insert(QStringLiteral("version"), 1);
    file.insert(QStringLiteral("parameters"), makeParameters(1).toJson());
    const QString plain = m_dir.filePath(QStringLiteral("plain.attnlab.json"));
    QVERIFY(writeAll(plain, QJsonDocument(file).toJson()));
    SessionController *c = m_window->sessionController();
    QString error;
    QVERIFY2(c->openFile(plain, &error), qPrintable(error));
    QCOMPARE(c->openWarning(), QString());
    // What the window writes reads back without a word too (every key it writes is known).
    const QString saved = m_dir.filePath(QStringLiteral("saved.attnlab.json"));
    QVERIFY2(c->saveFile(saved, &error), qPrintable(error));
    const auto again = SessionFile::load(saved, &error);
    QVERIFY2(again, qPrintable(error));
    QCOMPARE(again->unknownKeys, QStringList());

    QJsonObject params = makeParameters(1).toJson();
    params.insert(QStringLiteral("temprature"), 2.0);
    file.insert(QStringLiteral("parameters"), params);
    file.insert(QStringLiteral("view"),
                QJsonObject {{QStringLiteral("row_strip"), true},
                             {QStringLiteral("steps_view"), QJsonObject {{"row", 4}}}});
    file.insert(QStringLiteral("notes"), QStringLiteral("kept"));
    const QString odd = m_dir.filePath(QStringLiteral("odd.attnlab.json"));
    QVERIFY(writeAll(odd, QJsonDocument(file).toJson()));
    const auto document = SessionFile::load(odd, &error);
    QVERIFY2(document, qPrintable(error));
    QCOMPARE(
        document->unknownKeys,
        QStringList({QStringLiteral("\"notes\""), QStringLiteral("\"parameters\": \"temprature\""),
                     QStringLiteral("\"view\": \"steps_view\"")}));
    QSignalSpy status(c, &SessionController::statusMessage);
    QVERIFY2(c->openFile(odd, &error), qPrintable(error));
    QCOMPARE(m_window->session()->parameters(), makeParameters(1)); // read all the same
    const QString warning = c->openWarning();
    QCOMPARE(warning,
             QStringLiteral("The session file has keys this version does not know, so "
                            "they change nothing: \"notes\", \"parameters\": "
                            "\"temprature\", \"view\": \"steps_view\"."));
    QVERIFY(!status.isEmpty());
    QCOMPARE(status.constFirst().constFirst().toString(), warning);
}

void TestSessionFile::windowRoundTrip_data()
{
    documentRoundTrip_data();
}

void TestSessionFile::windowRoundTrip()
{
    // Save from one window, open in a fresh one: same parameters, same view, same pixels.
    QFETCH(int, variant);
    const SessionParameters p = makeParameters(variant);
    SessionController *c = m_window->sessionController();
    c->editParameters(p);
    QCOMPARE(m_window->session()->parameters(), p);
    m_window->setViewState(makeView(variant));
    QVERIFY(waitForResult(m_window.get(), p));
    QVERIFY(m_window->heatmapWidget()->viewTransform() == makeTransform(variant));
    QCOMPARE(m_window->heatmapWidget()->isRowStripVisible(), variant != 2);
    // The A/B view's B: α = 0 (unscaled), τ = 2, causal; it must come back from the file.
    const QJsonObject compareB {{QStringLiteral("alpha"), 0.0},
                                {QStringLiteral("temperature"), 2.0},
                                {QStringLiteral("mask"), QStringLiteral("causal")}};
    m_window->attentionViews()->compareView()->setState(compareB);
    const QJsonObject compareSaved
        = m_window->viewState().value(QLatin1String("compare")).toObject();
    QCOMPARE(compareSaved.value(QLatin1String("alpha")).toDouble(-1), 0.0);
    QCOMPARE(compareSaved.value(QLatin1String("temperature")).toDouble(-1), 2.0);
    QCOMPARE(compareSaved.value(QLatin1String("mask")).toString(), QStringLiteral("causal"));
    const QImage before = m_window->heatmapWidget()->renderer().render(QSize(900, 560));

    const QString path = m_dir.filePath(QStringLiteral("window%1.attnlab.json").arg(variant));
    QString error;
    QVERIFY2(c->saveFile(path, &error), qPrintable(error));
    QVERIFY(!c->isModified());
    QCOMPARE(QFileInfo(c->filePath()), QFileInfo(path));

    auto other = newWindow();
    QVERIFY(other);
    QVERIFY2(other->sessionController()->openFile(path, &error), qPrintable(error));
    QCOMPARE(other->session()->parameters(), p);
    QCOMPARE(other->controlPanel()->parameters(), p);
    QCOMPARE(other->viewState(), m_window->viewState());
    QCOMPARE(other->viewState().value(QLatin1String("compare")).toObject(), compareSaved);
    QVERIFY(other->heatmapWidget()->options() == m_window->heatmapWidget()->options());
    QVERIFY(waitForResult(other.get(), p));
    const QImage after = other->heatmapWidget()->renderer().render(QSize(900, 560));
    QVERIFY(!before.isNull());
    QCOMPARE(after, before);
    QVERIFY(!other->sessionController()->isModified());
    QCOMPARE(other->sessionController()->undoStack()->count(), 0);
}

void TestSessionFile::atomicSaveKeepsOldFile_data()
{
    QTest::addColumn<QString>("target"); // relative to a fresh folder; "" = the old file
    QTest::addColumn<qint64>("failAfter"); // simulated failure after this many bytes; −1 none
    QTest::addColumn<bool>("readOnlyFolder");
    QTest::addColumn<QString>("expectedError");

    QTest::newRow("simulated failure after 40 bytes")
        << QString() << qint64(40) << false << QStringLiteral("write failed");
    QTest::newRow("simulated failure before any byte")
        << QString() << qint64(0) << false << QStringLiteral("write failed");
    QTest::newRow("folder does not exist") << QStringLiteral("missing/s.attnlab.json") << qint64(-1)
                                           << false << QStringLiteral("does not exist");
    QTest::newRow("target is a folder")
        << QStringLiteral("afolder") << qint64(-1) << false << QStringLiteral("is a folder");
    QTest::newRow("read-only folder")
        << QString() << qint64(-1) << true << QStringLiteral("cannot be written");
}

void TestSessionFile::atomicSaveKeepsOldFile()
{
    QFETCH(QString, target);
    QFETCH(qint64, failAfter);
    QFETCH(bool, readOnlyFolder);
    QFETCH(QString, expectedError);

    QTemporaryDir dir;
    QVERIFY(dir.isValid());
    QVERIFY(QDir(dir.path()).mkdir(QStringLiteral("afolder")));
    const QString oldPath = dir.filePath(QStringLiteral("s.attnlab.json"));
    SessionDocument old;
    old.parameters = makeParameters(1);
    QString error;
    QVERIFY2(SessionFile::save(oldPath, old, &error), qPrintable(error));
    const QByteArray oldBytes = readAll(oldPath);
    QVERIFY(oldBytes.size() > 100);
    const QStringList entriesBefore
        = QDir(dir.path()).entryList(QDir::NoDotAndDotDot | QDir::AllEntries);

    const QString path = target.isEmpty() ? oldPath : dir.filePath(target);
    SessionDocument next;
    next.parameters = makeParameters(2);
    const QByteArray data = SessionFile::toJson(next);
    if (readOnlyFolder) {
        QFile::setPermissions(dir.path(), QFile::ReadOwner | QFile::ExeOwner);
        // Root ignores permissions: the test would not fail a write, so it proves nothing.
        if (QFileInfo(dir.path()).isWritable()
            || QFile(dir.filePath("probe")).open(QIODevice::WriteOnly)) {
            QFile::remove(dir.filePath(QStringLiteral("probe")));
            QFile::setPermissions(dir.path(),
                                  QFile::ReadOwner | QFile::WriteOwner | QFile::ExeOwner);
            QSKIP("running as a user who may write into read-only folders (root)");
        }
    }
    const bool ok = SessionFile::writeAtomically(path, data, &error, failAfter);
    QFile::setPermissions(dir.path(), QFile::ReadOwner | QFile::WriteOwner | QFile::ExeOwner);
    QVERIFY(!ok);
    QVERIFY2(error.contains(expectedError), qPrintable(error));
    QVERIFY2(error.contains(QFileInfo(path).fileName()), qPrintable(error)); // names the file
    // The old file byte for byte, and no temporary file left behind.
    QCOMPARE(readAll(oldPath), oldBytes);
    QCOMPARE(QDir(dir.path()).entryList(QDir::NoDotAndDotDot | QDir::AllEntries), entriesBefore);
    QVERIFY(SessionFile::load(oldPath, &error));
}

void TestSessionFile::failedSaveKeepsWindowState()
{
    SessionController *c = m_window->sessionController();
    const QString good = m_dir.filePath(QStringLiteral("kept.attnlab.json"));
    QString error;
    QVERIFY2(c->saveFile(good, &error), qPrintable(error));
    c->editParameters(makeParameters(2));
    QVERIFY(c->isModified());
    QVERIFY(!c->saveFile(m_dir.filePath(QStringLiteral("nowhere/x.attnlab.json")), &error));
    QVERIFY(c->isModified()); // still unsaved
    QCOMPARE(c->filePath(), QFileInfo(good).absoluteFilePath()); // still the old file
    QVERIFY(m_window->isWindowModified());
}

// The Steps tab's head, its vectors and "Same score range" are saved and come back (they were
// lost on reopening); a bad value is refused naming the key.
void TestSessionFile::stepsViewRoundTrip()
{
    SessionController *c = m_window->sessionController();
    c->editParameters(makeParameters(2));
    StepsView *steps = m_window->attentionViews()->stepsView();
    steps->setState({{QStringLiteral("head"), 1},
                     {QStringLiteral("vectors"), true},
                     {QStringLiteral("same_score_range"), true}});
    const QString file = m_dir.filePath(QStringLiteral("steps.attnlab.json"));
    QString error;
    QVERIFY2(c->saveFile(file, &error), qPrintable(error));
    steps->setState({{QStringLiteral("head"), 0},
                     {QStringLiteral("vectors"), false},
                     {QStringLiteral("same_score_range"), false}});
    QVERIFY2(c->openFile(file, &error), qPrintable(error));
    const QJsonObject state = steps->state();
    QCOMPARE(state.value(QLatin1String("head")).toInt(), 1);
    QCOMPARE(state.value(QLatin1String("vectors")).toBool(), true);
    QCOMPARE(state.value(QLatin1String("same_score_range")).toBool(), true);

    const QByteArray head
        = R"({"format": "attnlab-session", "version": 1, "parameters": {"heads": 2, "d_model": 8}, "view": )";
    for (const char *bad :
         {R"({"steps": {"head": 2}}})", R"({"steps": {"vectors": 1}}})", R"({"steps": [1]}})"}) {
        error.clear();
        QVERIFY2(!SessionFile::fromJson(head + bad, &error), bad);
        QVERIFY2(error.contains(QStringLiteral("\"steps\"")), qPrintable(error));
    }
}

void TestSessionFile::badFileKeepsState_data()
{
    QTest::addColumn<QByteArray>("content"); // empty with missing = true: no file at all
    QTest::addColumn<bool>("missing");
    QTest::addColumn<QString>("expectedError");

    QJsonObject valid;
    valid.insert(QStringLiteral("format"), QStringLiteral("attnlab-session"));
    valid.insert(QStringLiteral("version"), 1);
    valid.insert(QStringLiteral("parameters"), makeParameters(2).toJson());
    const QByteArray validBytes = QJsonDocument(valid).toJson();

    QJsonObject newer = valid;
    newer.insert(QStringLiteral("version"), 2);
    QJsonObject wrongFormat = valid;
    wrongFormat.insert(QStringLiteral("format"), QStringLiteral("something-else"));
    QJsonObject noParameters = valid;
    noParameters.remove(QStringLiteral("parameters"));
    QJsonObject badHeads = valid;
    QJsonObject p = makeParameters(2).toJson();
    p.insert(QStringLiteral("heads"), 3); // does not divide d_model = 32
    badHeads.insert(QStringLiteral("parameters"), p);
    QJsonObject newerParameters = valid;
    p = makeParameters(2).toJson();
    p.insert(QStringLiteral("version"), 9);
    newerParameters.insert(QStringLiteral("parameters"), p);
    QJsonObject badTensors = valid;
    badTensors.insert(QStringLiteral("tensors"), QJsonObject {{QStringLiteral("file"), 5}});

    QJsonObject badPin = valid;
    badPin.insert(
        QStringLiteral("view"),
        QJsonObject {{QStringLiteral("heatmap"), QJsonObject {{QStringLiteral("pin_query"), -2}}}});
    QJsonObject badSort = valid;
    badSort.insert(
        QStringLiteral("view"),
        QJsonObject {{QStringLiteral("heatmap"),
                      QJsonObject {{QStringLiteral("sort_heads"), QStringLiteral("variance")}}}});

    const auto longMapView = [&valid](const QString &key, const QJsonValue &value) {
        QJsonObject bad = valid;
        bad.insert(QStringLiteral("view"),
                   QJsonObject {{QStringLiteral("long_map"), QJsonObject {{key, value}}}});
        return QJsonDocument(bad).toJson();
    };
    // makeParameters(2) has 2 heads: head 2 does not exist, -1 is the mean over heads.
    QTest::newRow("long map pooling unknown")
        << longMapView(QStringLiteral("pooling"), QStringLiteral("sum")) << false
        << QStringLiteral("\"long_map\": \"pooling\" must be \"max\" or \"mean\", got \"sum\"");
    QTest::newRow("long map scale unknown")
        << longMapView(QStringLiteral("scale"), 3) << false
        << QStringLiteral("\"scale\" must be \"max_weight\", \"unit\" or \"log\", got 3");
    QTest::newRow("long map n too small")
        << longMapView(QStringLiteral("n"), 1) << false << QStringLiteral("\"long_map\": \"n\"");
    QTest::newRow("long map head beyond the heads")
        << longMapView(QStringLiteral("head"), 2) << false
        << QStringLiteral("\"long_map\": \"head\" must be an integer in [-1, 1]");
    QTest::newRow("long map head not an integer")
        << longMapView(QStringLiteral("head"), 0.5) << false
        << QStringLiteral("\"long_map\": \"head\" must be an integer");
    const auto viewWith = [&valid](const QString &key, const QJsonValue &value) {
        QJsonObject bad = valid;
        bad.insert(QStringLiteral("view"), QJsonObject {{key, value}});
        return QJsonDocument(bad).toJson();
    };
    QTest::newRow("long map block an array")
        << viewWith(QStringLiteral("long_map"), QJsonArray {1, 2, 3}) << false
        << QStringLiteral("\"view\": \"long_map\" must be an object, got [1,2,3]");
    QTest::newRow("tokens block a string")
        << viewWith(QStringLiteral("tokens"), QStringLiteral("x")) << false
        << QStringLiteral("\"view\": \"tokens\" must be an object, got \"x\"");
    // Out of range for the session (makeParameters(2): 2 heads, n queries) or unknown values of
    // the Tokens, Play and Training blocks: refused naming the key, never dropped in silence.
    const auto block = [&viewWith](const char *name, const QString &key, const QJsonValue &value) {
        return viewWith(QLatin1String(name), QJsonObject {{key, value}});
    };
    QTest::newRow("pinned query past the session's queries")
        << block("heatmap", QStringLiteral("pin_query"), 999) << false
        << QStringLiteral("\"pin_query\" must be an integer in [-1, ");
    QTest::newRow("heads per row negative")
        << block("heatmap", QStringLiteral("heads_per_row"), -1) << false
        << QStringLiteral("\"heads_per_row\" must be an integer in [0, 64], got -1");
    QTest::newRow("heads per row fractional")
        << block("heatmap", QStringLiteral("heads_per_row"), 2.5) << false
        << QStringLiteral("\"heads_per_row\" must be an integer in [0, 64], got 2.5");
    QTest::newRow("fit all a string")
        << block("heatmap", QStringLiteral("fit_all"), QStringLiteral("yes")) << false
        << QStringLiteral("\"fit_all\" must be true or false, got \"yes\"");
    QTest::newRow("tokens view unknown")
        << block("tokens", QStringLiteral("view"), QStringLiteral("nope")) << false
        << QStringLiteral("\"tokens\": \"view\" must be \"heads\" or \"text\", got \"nope\"");
    QTest::newRow("tokens head beyond the heads")
        << block("tokens", QStringLiteral("head"), 2) << false
        << QStringLiteral("\"tokens\": \"head\" must be an integer in [0, 1]");
    QTest::newRow("play frames negative")
        << block("play", QStringLiteral("frames"), -1) << false
        << QStringLiteral("'frames' must be an integer in [1, 1000]");
    QTest::newRow("training heads 0") << block("training", QStringLiteral("heads"), 0) << false
                                      << QStringLiteral("heads must be >= 1, got 0");
    QTest::newRow("tabs a string")
        << viewWith(QStringLiteral("tabs"), QStringLiteral("longMapView")) << false
        << QStringLiteral("\"tabs\" must be an array");
    QTest::newRow("row strip a number") << viewWith(QStringLiteral("row_strip"), 1) << false
                                        << QStringLiteral("\"row_strip\" must be true or false");
    QTest::newRow("newer format version")
        << QJsonDocument(newer).toJson() << false << QStringLiteral("newer Attention Lab");
    QTest::newRow("pinned query negative")
        << QJsonDocument(badPin).toJson() << false
        << QStringLiteral("\"pin_query\" must be an integer in [-1, ");
    QTest::newRow("unknown head order")
        << QJsonDocument(badSort).toJson() << false
        << QStringLiteral("\"sort_heads\" must be \"index\", \"entropy\" or \"max_weight\", "
                          "got \"variance\"");
    QTest::newRow("newer parameters version") << QJsonDocument(newerParameters).toJson() << false
                                              << QStringLiteral("newer Attention Lab");
    QTest::newRow("half-written (truncated) file")
        << validBytes.left(validBytes.size() / 2) << false << QStringLiteral("not valid JSON");
    QTest::newRow("binary garbage")
        << QByteArray("\x89PNG\r\n\x1a\n\0\0", 10) << false << QStringLiteral("not valid JSON");
    QTest::newRow("empty file") << QByteArray() << false << QStringLiteral("not valid JSON");
    QTest::newRow("JSON array") << QByteArray("[1, 2, 3]") << false
                                << QStringLiteral("not an Attention Lab session");
    QTest::newRow("another format") << QJsonDocument(wrongFormat).toJson() << false
                                    << QStringLiteral("not an Attention Lab session");
    QTest::newRow("no parameters") << QJsonDocument(noParameters).toJson() << false
                                   << QStringLiteral("\"parameters\" is missing");
    QTest::newRow("h does not divide d_model")
        << QJsonDocument(badHeads).toJson() << false << QStringLiteral("does not divide d_model");
    QTest::newRow("tensor path not a string")
        << QJsonDocument(badTensors).toJson() << false << QStringLiteral("must be a file path");
    QTest::newRow("no such file") << QByteArray() << true << QStringLiteral("no such file");
}

void TestSessionFile::badFileKeepsState()
{
    QFETCH(QByteArray, content);
    QFETCH(bool, missing);
    QFETCH(QString, expectedError);

    SessionController *c = m_window->sessionController();
    // A state worth keeping: a saved file, then an unsaved edit and a non-default view.
    const QString current = m_dir.filePath(QStringLiteral("current.attnlab.json"));
    QString error;
    c->editParameters(makeParameters(1));
    QVERIFY2(c->saveFile(current, &error), qPrintable(error));
    c->editParameters(makeParameters(3));
    m_window->heatmapWidget()->showSingleHead(0);
    const SessionParameters params = m_window->session()->parameters();
    const QJsonObject view = m_window->viewState();
    const int undoCount = c->undoStack()->count();
    QVERIFY(c->isModified());

    const QString bad = m_dir.filePath(QStringLiteral("bad-%1.attnlab.json")
                                           .arg(QString::fromLatin1(QTest::currentDataTag())
                                                    .replace(QLatin1Char(' '), QLatin1Char('-'))));
    QFile::remove(bad);
    if (!missing)
        QVERIFY(writeAll(bad, content));
    QSignalSpy changed(m_window->session(), &AttentionSession::parametersChanged);
    error.clear();
    QVERIFY(!c->openFile(bad, &error));
    QVERIFY2(error.contains(expectedError), qPrintable(error));
    QVERIFY2(error.contains(QFileInfo(bad).fileName()), qPrintable(error));

    QCOMPARE(changed.count(), 0);
    QCOMPARE(m_window->session()->parameters(), params);
    QCOMPARE(m_window->controlPanel()->parameters(), params);
    QCOMPARE(m_window->viewState(), view);
    QCOMPARE(c->filePath(), QFileInfo(current).absoluteFilePath());
    QVERIFY(c->isModified());
    QCOMPARE(c->undoStack()->count(), undoCount);
    QVERIFY(!c->recentFiles()->files().contains(QFileInfo(bad).absoluteFilePath()));
}

void TestSessionFile::openErrorNamesFileAndProblem()
{
    // File → Open on a file from a newer version: a message box names the file and the problem;
    // the window keeps its parameters.
    SessionController *c = m_window->sessionController();
    c->editParameters(makeParameters(2));
    c->undoStack()->setClean();
    const SessionParameters params = m_window->session()->parameters();
    QJsonObject newer;
    newer.insert(QStringLiteral("format"), QStringLiteral("attnlab-session"));
    newer.insert(QStringLiteral("version"), 7);
    newer.insert(QStringLiteral("parameters"), makeParameters(0).toJson());
    const QString path = m_dir.filePath(QStringLiteral("from-the-future.attnlab.json"));
    QVERIFY(writeAll(path, QJsonDocument(newer).toJson()));

    const auto answer = answerNextMessageBox(QMessageBox::Ok);
    QVERIFY(!m_window->openSession(path));
    QVERIFY(answer->seen);
    QVERIFY2(answer->text.contains(QStringLiteral("from-the-future.attnlab.json")),
             qPrintable(answer->text));
    QVERIFY2(answer->text.contains(QStringLiteral("version 7")), qPrintable(answer->text));
    QVERIFY2(answer->text.contains(QStringLiteral("newer")), qPrintable(answer->text));
    QCOMPARE(m_window->session()->parameters(), params);
}

void TestSessionFile::tensorsRoundTrip_data()
{
    QTest::addColumn<QString>("file"); // empty: write a 3-layer weights file
    QTest::addColumn<int>("layer");
    QTest::addColumn<double>("alpha"); // < 0: keep
    QTest::newRow("inputs (PyTorch causal fixture), alpha 0.3")
        << QStringLiteral(ATTN_FIXTURE_DIR "/torch/causal.npz") << 0 << 0.3;
    QTest::newRow("inputs (cross, causal, padding)")
        << QStringLiteral(ATTN_FIXTURE_DIR "/torch/cross_causal_padding.npz") << 0 << -1.0;
    QTest::newRow("stored weights, layer 2 of 3") << QString() << 2 << -1.0;
}

void TestSessionFile::tensorsRoundTrip()
{
    // Loaded tensors are saved as their file and loaded again when the session is opened: the
    // same parameters (apart from the TensorSource's identity) and the same picture.
    QFETCH(QString, file);
    QFETCH(int, layer);
    QFETCH(double, alpha);
    if (file.isEmpty()) {
        file = m_dir.filePath(QStringLiteral("weights-3x2x5x5.npz"));
        NpyArray w;
        w.shape = {3, 2, 5, 5};
        w.type = NpyType::Float64;
        w.values.resize(std::size_t(w.size()));
        for (std::size_t row = 0; row < w.values.size() / 5; ++row) {
            double sum = 0;
            for (std::size_t j = 0; j < 5; ++j)
                sum += w.values[row * 5 + j] = 1.0 + double((row * 31 + j * 7) % 11);
            for (std::size_t j = 0; j < 5; ++j)
                w.values[row * 5 + j] /= sum;
        }
        writeNpz(file.toStdString(), {{"attention", w}});
    }
    QString error;
    QVERIFY2(m_window->tensorController()->openFile(file, &error), qPrintable(error));
    if (layer > 0)
        m_window->tensorController()->setLayer(layer);
    if (alpha >= 0) {
        SessionParameters p = m_window->session()->parameters();
        p.scaleExponent = alpha;
        m_window->sessionController()->editParameters(p);
    }
    m_window->heatmapWidget()->showSingleHead(1);
    const SessionParameters saved = m_window->session()->parameters();
    QVERIFY(saved.tensors);
    QCOMPARE(saved.tensors->layer(), layer);
    QVERIFY(waitForResult(m_window.get(), saved));
    const QImage before = m_window->heatmapWidget()->renderer().render(QSize(900, 560));

    const QString session = m_dir.filePath(
        QStringLiteral("tensors-%1.attnlab.json").arg(QFileInfo(file).completeBaseName()));
    QVERIFY2(m_window->sessionController()->saveFile(session, &error), qPrintable(error));
    const QJsonObject tensors = QJsonDocument::fromJson(readAll(session))
                                    .object()
                                    .value(QLatin1String("tensors"))
                                    .toObject();
    QCOMPARE(tensors.value(QLatin1String("file")).toString(), QFileInfo(file).absoluteFilePath());
    QCOMPARE(tensors.value(QLatin1String("layer")).toInt(), layer);

    auto other = newWindow();
    QVERIFY(other);
    QVERIFY2(other->sessionController()->openFile(session, &error), qPrintable(error));
    QVERIFY2(other->sessionController()->openWarning().isEmpty(),
             qPrintable(other->sessionController()->openWarning()));
    SessionParameters opened = other->session()->parameters();
    QVERIFY(opened.tensors);
    QCOMPARE(opened.tensors->path(), saved.tensors->path());
    QCOMPARE(opened.tensors->layer(), layer);
    QCOMPARE(opened.tensors->arrayName(), saved.tensors->arrayName());
    QVERIFY(waitForResult(other.get(), opened));
    SessionParameters a = saved, b = opened;
    a.tensors = b.tensors = nullptr;
    QCOMPARE(b, a);
    QVERIFY(other->heatmapWidget()->isSingleHead());
    QCOMPARE(other->heatmapWidget()->renderer().render(QSize(900, 560)), before);
    QVERIFY(!other->sessionController()->isModified());
    QCOMPARE(other->sessionController()->undoStack()->count(), 0);
}

void TestSessionFile::tensorPathRelativeToSession()
{
    // A session next to its tensors names them relative to itself and still finds them after
    // the folder moved.
    QTemporaryDir moved;
    QVERIFY(moved.isValid());
    QVERIFY(QFile::copy(QStringLiteral(ATTN_FIXTURE_DIR "/torch/h8.npz"),
                        moved.filePath(QStringLiteral("case.npz"))));
    QJsonObject file;
    file.insert(QStringLiteral("format"), QStringLiteral("attnlab-session"));
    file.insert(QStringLiteral("version"), 1);
    file.insert(QStringLiteral("parameters"), SessionParameters().toJson());
    file.insert(QStringLiteral("tensors"),
                QJsonObject {{QStringLiteral("file"), QStringLiteral("case.npz")}});
    const QString session = moved.filePath(QStringLiteral("relative.attnlab.json"));
    QVERIFY(writeAll(session, QJsonDocument(file).toJson()));
    QString error;
    QVERIFY2(m_window->sessionController()->openFile(session, &error), qPrintable(error));
    QVERIFY2(m_window->sessionController()->openWarning().isEmpty(),
             qPrintable(m_window->sessionController()->openWarning()));
    const auto tensors = m_window->session()->parameters().tensors;
    QVERIFY(tensors);
    QCOMPARE(tensors->path(),
             QFileInfo(moved.filePath(QStringLiteral("case.npz"))).absoluteFilePath());
    QCOMPARE(tensors->headCount(), 8);
}

void TestSessionFile::missingTensorFileOpensTheRest()
{
    // The session opens with seeded random inputs and says which file it could not load.
    QJsonObject file;
    file.insert(QStringLiteral("format"), QStringLiteral("attnlab-session"));
    file.insert(QStringLiteral("version"), 1);
    file.insert(QStringLiteral("parameters"), makeParameters(2).toJson());
    file.insert(QStringLiteral("tensors"),
                QJsonObject {{QStringLiteral("file"), QStringLiteral("gone-away.npz")}});
    const QString session = m_dir.filePath(QStringLiteral("lost-tensors.attnlab.json"));
    QVERIFY(writeAll(session, QJsonDocument(file).toJson()));
    QString error;
    QVERIFY2(m_window->sessionController()->openFile(session, &error), qPrintable(error));
    const QString warning = m_window->sessionController()->openWarning();
    QVERIFY2(warning.contains(QStringLiteral("gone-away.npz")), qPrintable(warning));
    QCOMPARE(m_window->session()->parameters(), makeParameters(2));
    QVERIFY(!m_window->session()->parameters().tensors);
    QVERIFY(!m_window->sessionController()->isModified());
}

// A session of batched inputs stores the batch item shown ("batch") and restores it; an item
// the file does not have is an error naming B.
void TestSessionFile::tensorBatchItemRestored()
{
    const QString file = QStringLiteral(ATTN_FIXTURE_DIR "/batch/mha_batch.npz");
    QJsonObject tensors;
    tensors.insert(QStringLiteral("file"), file);
    tensors.insert(QStringLiteral("batch"), 2);
    QString error;
    const auto source = loadSessionTensors(tensors, &error);
    QVERIFY2(source, qPrintable(error));
    QCOMPARE(source->batch(), 2);
    QCOMPARE(source->batchCount(), 3);
    tensors.insert(QStringLiteral("batch"), 5);
    QVERIFY(!loadSessionTensors(tensors, &error));
    QVERIFY2(error.contains(QStringLiteral("B = 3")), qPrintable(error));
}

void TestSessionFile::cliRendersSession_data()
{
    QTest::addColumn<int>("variant");
    QTest::addColumn<QStringList>("extraArgs");
    QTest::addColumn<int>("overrideN"); // 0: none

    QTest::newRow("decoder, tokens, zoomed head 2, magma log, key 0 hidden")
        << 1 << QStringList() << 0;
    QTest::newRow("cross, padding trimmed, cividis auto") << 2 << QStringList() << 0;
    QTest::newRow("seed above 2^53, raw weights without keys 0 and 3") << 3 << QStringList() << 0;
    QTest::newRow("explicit --n overrides the session")
        << 1 << QStringList {QStringLiteral("--n"), QStringLiteral("4")} << 4;
}

void TestSessionFile::cliRendersSession()
{
    // `attnlab heatmap --session FILE --out x.png` draws what the session holds, pixel for pixel.
    QFETCH(int, variant);
    QFETCH(QStringList, extraArgs);
    QFETCH(int, overrideN);

    SessionDocument d;
    d.parameters = makeParameters(variant);
    const HeatmapOptions options = makeOptions(variant);
    d.view = makeView(variant);
    const QString session = m_dir.filePath(QStringLiteral("cli%1.attnlab.json").arg(variant));
    QString error;
    QVERIFY2(SessionFile::save(session, d, &error), qPrintable(error));
    const QString out = m_dir.filePath(QStringLiteral("cli%1-%2.png").arg(variant).arg(overrideN));
    QFile::remove(out);

    QProcess process;
    process.setProgram(QStringLiteral(ATTNLAB_EXE));
    process.setArguments(QStringList {QStringLiteral("heatmap"), QStringLiteral("--session"),
                                      session, QStringLiteral("--width"), QStringLiteral("900"),
                                      QStringLiteral("--height"), QStringLiteral("560"),
                                      QStringLiteral("--out"), out}
                         + extraArgs);
    process.start();
    QVERIFY(process.waitForFinished(120000));
    QVERIFY2(process.exitCode() == 0, process.readAllStandardError().constData());

    SessionParameters expected = d.parameters;
    if (overrideN > 0) {
        expected.n = overrideN;
        expected.tokens.clear(); // an explicit --n drops the session's tokens
    }
    QImage want = renderDocument(expected, options, makeTransform(variant));
    QVERIFY(!want.isNull());
    QImage got(out);
    QVERIFY(!got.isNull());
    QCOMPARE(got.size(), want.size());
    QCOMPARE(got.convertToFormat(QImage::Format_RGB32), want.convertToFormat(QImage::Format_RGB32));
}

QTEST_MAIN(TestSessionFile)
#include "tst_sessionfile.moc"
