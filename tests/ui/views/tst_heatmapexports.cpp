// Heatmap exports: PNG at a DPI, SVG/PDF structure, one file per head, data export round trips
// (CSV, NPY via readNpy, NPZ, JSON), the control and view panels, and `attnlab heatmap
// --tokens/--batch-dir/--data`.

#include "heatmaptest.h"

using namespace heatmaptest;

class TestHeatmapExports : public QObject
{
    Q_OBJECT

private slots:
    // ---- exports ----

    void svgHasOneTilePerHead_data()
    {
        QTest::addColumn<int>("heads");
        QTest::addColumn<int>("view");
        QTest::addColumn<int>("tiles");
        QTest::newRow("grid h=1") << 1 << int(HeatmapView::Grid) << 1;
        QTest::newRow("grid h=2: heads and the mean") << 2 << int(HeatmapView::Grid) << 3;
        QTest::newRow("grid h=4") << 4 << int(HeatmapView::Grid) << 5;
        QTest::newRow("single head") << 4 << int(HeatmapView::SingleHead) << 1;
    }
    void svgHasOneTilePerHead()
    {
        QFETCH(int, heads);
        QFETCH(int, view);
        QFETCH(int, tiles);
        SessionParameters p;
        p.n = 6;
        p.dModel = 8 * heads;
        p.heads = heads;
        p.setTokens(attn::splitTokens(QStringLiteral("the cat sat on the mat")));
        HeatmapRenderer renderer;
        renderer.setResult(compute(p));
        HeatmapOptions o;
        o.view = HeatmapView(view);
        o.head = 1 % heads;
        o.colormap = ColormapId::Magma;
        renderer.setOptions(o);
        QTemporaryDir dir;
        const QString path = dir.filePath(QStringLiteral("v.svg"));
        QString error;
        QVERIFY2(renderer.saveSvg(path, QSize(1000, 700), &error), qPrintable(error));
        QFile f(path);
        QVERIFY(f.open(QIODevice::ReadOnly));
        const QByteArray bytes = f.readAll();
        const QStringList texts = svgTexts(bytes, &error);
        QVERIFY2(error.isEmpty(), qPrintable(error));
        int titles = 0;
        for (const QString &t : texts)
            titles += t.startsWith(QLatin1String("head ")) || t == QLatin1String("mean over heads");
        QCOMPARE(titles, tiles);
        QVERIFY(texts.contains(QStringLiteral("magma, linear")));
        QCOMPARE(texts.count(QStringLiteral("query i (row)")), tiles);
        QCOMPARE(texts.count(QStringLiteral("key j (column)")), tiles);
        QVERIFY(texts.contains(QStringLiteral("5:mat"))); // token labels, with their positions
        const QString all = texts.join(QLatin1Char(' '));
        QVERIFY(all.contains(QLatin1String("n=6, d_model=")));
        QVERIFY(all.contains(QLatin1String("seed=0")));
        QVERIFY(all.contains(QLatin1String("colour: magma, linear, fixed [0, 1]")));
        QVERIFY(QSvgRenderer(bytes).isValid());
    }

    void pdfHasAPage()
    {
        SessionParameters p;
        HeatmapRenderer renderer;
        renderer.setResult(compute(p));
        QTemporaryDir dir;
        const QString path = dir.filePath(QStringLiteral("v.pdf"));
        QString error;
        QVERIFY2(renderer.savePdf(path, QSize(800, 500), &error), qPrintable(error));
        QFile f(path);
        QVERIFY(f.open(QIODevice::ReadOnly));
        const QByteArray bytes = f.readAll();
        QVERIFY(bytes.startsWith("%PDF-"));
        // One page object ("/Type /Page", not "/Type /Pages").
        const QRegularExpression page(QStringLiteral("/Type\\s*/Page(?!s)"));
        int pages = 0;
        for (auto it = page.globalMatch(QString::fromLatin1(bytes)); it.hasNext(); it.next())
            ++pages;
        QCOMPARE(pages, 1);
        QVERIFY(bytes.contains("/MediaBox"));
    }

    void pngAtDpi_data()
    {
        QTest::addColumn<QSize>("pixels");
        QTest::addColumn<double>("dpi");
        QTest::newRow("screen 96") << QSize(900, 600) << 96.0;
        QTest::newRow("print 300") << QSize(1800, 1200) << 300.0;
        QTest::newRow("odd 150") << QSize(1001, 777) << 150.0;
    }
    void pngAtDpi()
    {
        QFETCH(QSize, pixels);
        QFETCH(double, dpi);
        HeatmapRenderer renderer;
        renderer.setResult(compute(SessionParameters()));
        QTemporaryDir dir;
        const QString path = dir.filePath(QStringLiteral("v.png"));
        QString error;
        QVERIFY2(renderer.savePngAtDpi(path, pixels, dpi, &error), qPrintable(error));
        QImageReader reader(path);
        QCOMPARE(reader.format(), QByteArray("png"));
        const QImage image = reader.read();
        QCOMPARE(image.size(), pixels);
        QCOMPARE(image.dotsPerMeterX(), qRound(dpi / 0.0254));
        // At 96 dpi one pixel is one logical pixel: the PNG is the on-screen picture.
        if (dpi == 96.0)
            QCOMPARE(image.convertToFormat(QImage::Format_RGB32),
                     renderer.render(pixels).convertToFormat(QImage::Format_RGB32));
        QVERIFY(!renderer.savePngAtDpi(path, pixels, 10.0, &error));
        QVERIFY(error.contains(QLatin1String("dpi")));
    }

    // One file per head, plus the mean when h > 1 (the grid's tiles).
    void batchExport_data()
    {
        QTest::addColumn<int>("heads");
        QTest::addColumn<QString>("format");
        QTest::addColumn<QStringList>("files");
        QTest::newRow("h=1 png") << 1 << "png" << QStringList {"head-0.png"};
        QTest::newRow("h=4 png") << 4 << "png"
                                 << QStringList {"head-0.png", "head-1.png", "head-2.png",
                                                 "head-3.png", "head-mean.png"};
        QTest::newRow("h=2 svg") << 2 << "svg"
                                 << QStringList {"head-0.svg", "head-1.svg", "head-mean.svg"};
        QTest::newRow("h=3 pdf") << 3 << "pdf"
                                 << QStringList {"head-0.pdf", "head-1.pdf", "head-2.pdf",
                                                 "head-mean.pdf"};
    }
    void batchExport()
    {
        QFETCH(int, heads);
        QFETCH(QString, format);
        QFETCH(QStringList, files);
        SessionParameters p;
        p.dModel = 4 * heads;
        p.heads = heads;
        HeatmapRenderer renderer;
        renderer.setResult(compute(p));
        HeatmapOptions o;
        o.colormap = ColormapId::Cividis;
        renderer.setOptions(o);
        QTemporaryDir dir;
        const QString folder = dir.filePath(QStringLiteral("heads/new"));
        QStringList written;
        QString error;
        QVERIFY2(exportEachHead(renderer, folder, QStringLiteral("head"), format, QSize(600, 500),
                                144, &written, &error),
                 qPrintable(error));
        QCOMPARE(written.size(), heads + (heads > 1 ? 1 : 0));
        QStringList names = QDir(folder).entryList(QDir::Files, QDir::Name);
        QStringList want = files;
        want.sort();
        QCOMPARE(names, want);
        if (format == QLatin1String("svg")) { // each file is one tile: that head's
            QFile f(QDir(folder).filePath(QStringLiteral("head-1.svg")));
            QVERIFY(f.open(QIODevice::ReadOnly));
            const QStringList texts = svgTexts(f.readAll(), &error);
            QVERIFY(texts.contains(QStringLiteral("head 1")));
            QVERIFY(!texts.contains(QStringLiteral("head 0")));
            QVERIFY(texts.contains(QStringLiteral("cividis, linear")));
        }
        if (format == QLatin1String("png"))
            QCOMPARE(QImage(QDir(folder).filePath(files.first())).size(), QSize(600, 500));
        QVERIFY(!exportEachHead(renderer, folder, QStringLiteral("head"), QStringLiteral("bmp"),
                                QSize(600, 500), 96, nullptr, &error));
    }

    // ---- data export ----

    void dataExportRoundTrip_data()
    {
        QTest::addColumn<bool>("transformed");
        QTest::newRow("as computed") << false;
        QTest::newRow("padding trimmed, key 0 hidden and renormalised") << true;
    }
    void dataExportRoundTrip()
    {
        QFETCH(bool, transformed);
        SessionParameters p;
        p.n = 6;
        p.dModel = 12;
        p.heads = 3;
        p.seed = 9;
        p.mask = MaskChoice::KeyPadding;
        p.paddingCount = 2;
        p.setTokens(attn::splitTokens(QStringLiteral("Hello, \"world\" ok")));
        QCOMPARE(int(p.tokens.size()), 6);
        std::shared_ptr<const SessionResult> r = compute(p);
        if (transformed) {
            ViewTransform t;
            t.trimPadding = true;
            t.hiddenKeys = {0};
            r = applyViewTransform(r, t);
        }
        QVERIFY(r->ok());
        const int h = r->headCount();
        const Index nQ = r->queryCount(), nK = r->keyCount();
        QTemporaryDir dir;
        QStringList written;
        QString error;

        // NPZ: every array; NPY: one file each, read back with readNpy.
        const QString npz = dir.filePath(QStringLiteral("run.npz"));
        QVERIFY2(exportData(*r, npz, &written, &error), qPrintable(error));
        QCOMPARE(written, QStringList {npz});
        const NpyArray weights = readNpzMember(npz.toStdString(), "weights");
        QCOMPARE(weights.shape, (std::vector<std::int64_t> {h, nQ, nK}));
        for (int k = 0; k < h; ++k)
            ATTN_COMPARE_CLOSE(weights.slice<double>(k, "weights"), r->weights[std::size_t(k)], 0.0,
                               0.0);
        written.clear();
        const QString npy = dir.filePath(QStringLiteral("run.npy"));
        QVERIFY2(exportData(*r, npy, &written, &error), qPrintable(error));
        QVERIFY(written.contains(dir.filePath(QStringLiteral("run_weights.npy"))));
        QCOMPARE(written.size(), 13);
        const NpyArray scores
            = readNpy(dir.filePath(QStringLiteral("run_scores.npy")).toStdString());
        for (int k = 0; k < h; ++k)
            ATTN_COMPARE_CLOSE(scores.slice<double>(k, "scores"), r->scores[std::size_t(k)], 0.0,
                               0.0);
        const NpyArray scaled
            = readNpy(dir.filePath(QStringLiteral("run_scaled_scores.npy")).toStdString());
        ATTN_COMPARE_CLOSE(scaled.slice<double>(0, "scaled"), r->scaledScores[0], 0.0, 0.0);
        const NpyArray mean
            = readNpy(dir.filePath(QStringLiteral("run_weights_mean.npy")).toStdString());
        ATTN_COMPARE_CLOSE(mean.toMatrix<double>("mean"), r->weightsMean, 0.0, 0.0);
        const NpyArray entropy
            = readNpy(dir.filePath(QStringLiteral("run_entropy.npy")).toStdString());
        QCOMPARE(entropy.shape, (std::vector<std::int64_t> {h, nQ}));
        for (int k = 0; k < h; ++k)
            for (Index i = 0; i < nQ; ++i)
                QCOMPARE(entropy.values[std::size_t(k * nQ + i)],
                         r->metrics[std::size_t(k)].entropy(i));
        const NpyArray keyIndex
            = readNpy(dir.filePath(QStringLiteral("run_key_index.npy")).toStdString());
        QCOMPARE(keyIndex.type, NpyType::Int64);
        for (Index j = 0; j < nK; ++j)
            QCOMPARE(int(keyIndex.values[std::size_t(j)]), r->originalKey(int(j)));
        const NpyArray mask
            = readNpy(dir.filePath(QStringLiteral("run_mask_state.npy")).toStdString());
        QCOMPARE(mask.type, NpyType::UInt8);
        QCOMPARE(mask.values.back(), double(r->maskState(nQ - 1, nK - 1)));

        // JSON: exact doubles, −inf as null, labels and the view note.
        const QString json = dir.filePath(QStringLiteral("run.json"));
        QVERIFY2(exportData(*r, json, nullptr, &error), qPrintable(error));
        const QJsonObject o = readJson(json);
        QCOMPARE(o.value(QLatin1String("format")).toString(), QStringLiteral("attnlab-data"));
        QCOMPARE(o.value(QLatin1String("renormalized")).toBool(), transformed);
        QCOMPARE(o.value(QLatin1String("view")).toString(), r->viewNote);
        QCOMPARE(o.value(QLatin1String("parameters")).toObject(), r->params.toJson());
        // The last two keys are padding; trimmed away, no exported cell is masked.
        QCOMPARE(o.value(QLatin1String("masked_by")).toString(),
                 transformed ? QStringLiteral("none") : QStringLiteral("padding"));
        const QJsonArray heads = o.value(QLatin1String("heads")).toArray();
        QCOMPARE(heads.size(), h);
        for (int k = 0; k < h; ++k) {
            const QJsonObject head = heads.at(k).toObject();
            ATTN_COMPARE_CLOSE(jsonMatrix(head.value(QLatin1String("weights")).toArray()),
                               r->weights[std::size_t(k)], 0.0, 0.0);
            ATTN_COMPARE_CLOSE(jsonMatrix(head.value(QLatin1String("scaled_scores")).toArray()),
                               r->scaledScores[std::size_t(k)], 0.0, 0.0);
            const QJsonArray effective = head.value(QLatin1String("metrics"))
                                             .toObject()
                                             .value(QLatin1String("effective_terms"))
                                             .toArray();
            QCOMPARE(effective.size(), int(nQ));
            for (Index i = 0; i < nQ; ++i)
                QCOMPARE(effective.at(int(i)).toDouble(),
                         r->metrics[std::size_t(k)].effectiveTerms(i));
        }
        const QJsonArray keyLabels = o.value(QLatin1String("key_labels")).toArray();
        QCOMPARE(keyLabels.size(), int(nK));
        QCOMPARE(keyLabels.at(0).toString(), r->keyLabel(0));

        // CSV: one row per cell (heads, then the mean), quoted tokens; metrics file beside it.
        const QString csv = dir.filePath(QStringLiteral("run.csv"));
        written.clear();
        QVERIFY2(exportData(*r, csv, &written, &error), qPrintable(error));
        QCOMPARE(written, (QStringList {csv, dir.filePath(QStringLiteral("run_metrics.csv"))}));
        QFile f(csv);
        QVERIFY(f.open(QIODevice::ReadOnly | QIODevice::Text));
        const QStringList lines
            = QString::fromUtf8(f.readAll()).split(QLatin1Char('\n'), Qt::SkipEmptyParts);
        QCOMPARE(lines.first(),
                 QStringLiteral("head,query,key,query_label,key_label,weight,"
                                "raw_score,scaled_score,mask"));
        QCOMPARE(lines.size(), 1 + int((h + 1) * nQ * nK));
        int checked = 0;
        for (int row = 1; row < lines.size(); ++row) {
            // Split on commas outside quotes.
            QStringList fields;
            QString field;
            bool quoted = false;
            const QString &line = lines.at(row);
            for (int c = 0; c < line.size(); ++c) {
                const QChar ch = line.at(c);
                if (ch == QLatin1Char('"')) {
                    if (quoted && c + 1 < line.size() && line.at(c + 1) == QLatin1Char('"')) {
                        field += ch;
                        ++c;
                    } else {
                        quoted = !quoted;
                    }
                } else if (ch == QLatin1Char(',') && !quoted) {
                    fields << field;
                    field.clear();
                } else {
                    field += ch;
                }
            }
            fields << field;
            QCOMPARE(fields.size(), 9);
            if (fields.at(0) == QLatin1String("mean"))
                continue;
            const int k = fields.at(0).toInt();
            const int qi = fields.at(1).toInt(), kj = fields.at(2).toInt();
            // Shown position of the computation's key kj.
            int c = 0;
            while (r->originalKey(c) != kj)
                ++c;
            QCOMPARE(fields.at(3), r->params.queryLabel(qi));
            QCOMPARE(fields.at(4), r->params.keyLabel(kj));
            QCOMPARE(fields.at(5).toDouble(), r->weights[std::size_t(k)](qi, c));
            QCOMPARE(fields.at(6).toDouble(), r->scores[std::size_t(k)](qi, c));
            const double s = r->scaledScores[std::size_t(k)](qi, c);
            if (std::isinf(s))
                QCOMPARE(fields.at(7), QStringLiteral("-inf"));
            else
                QCOMPARE(fields.at(7).toDouble(), s);
            QCOMPARE(fields.at(8) == QLatin1String("allowed"), r->maskState(qi, c) == 0);
            ++checked;
        }
        QCOMPARE(checked, int(h * nQ * nK));
        QFile m(dir.filePath(QStringLiteral("run_metrics.csv")));
        QVERIFY(m.open(QIODevice::ReadOnly | QIODevice::Text));
        QCOMPARE(QString::fromUtf8(m.readLine()).trimmed(),
                 QStringLiteral("head,query,query_label,max_weight,entropy,effective_terms,"
                                "jacobian_norm,row_sum_error,fully_masked"));
        QCOMPARE(QString::fromUtf8(m.readAll()).count(QLatin1Char('\n')), int(h * nQ));
    }

    void dataExportErrors()
    {
        const auto r = compute(SessionParameters());
        QTemporaryDir dir;
        QString error;
        QVERIFY(!exportData(*r, dir.filePath(QStringLiteral("x.txt")), nullptr, &error));
        QVERIFY(error.contains(QLatin1String("unknown data format")));
        QVERIFY(
            !exportData(*r, dir.filePath(QStringLiteral("missing/dir/x.json")), nullptr, &error));
        QVERIFY(error.contains(QLatin1String("cannot write")));
        SessionResult failed;
        failed.error = QStringLiteral("bad");
        QVERIFY(!exportData(failed, dir.filePath(QStringLiteral("x.npz")), nullptr, &error));
        QVERIFY(QDir(dir.path()).entryList(QDir::Files).isEmpty());
    }

    // ---- panels ----

    void controlPanelTokens()
    {
        ControlPanel panel;
        QSignalSpy edited(&panel, &ControlPanel::parametersEdited);
        auto *edit = panel.findChild<QLineEdit *>(QStringLiteral("tokensEdit"));
        auto *nSpin = panel.findChild<QSpinBox *>(QStringLiteral("nSpin"));
        QVERIFY(edit && nSpin);
        QCOMPARE(nSpin->maximum(), 4096);
        QVERIFY(!edit->toolTip().isEmpty());
        edit->setText(QStringLiteral("The cat, sat."));
        QCOMPARE(edited.count(), 1);
        QCOMPARE(panel.parameters().tokenList(), (QStringList {"The", "cat", ",", "sat", "."}));
        QCOMPARE(panel.parameters().n, 5);
        QVERIFY(!nSpin->isEnabled());
        edit->setText(QStringLiteral("The  cat , sat . ")); // same tokens: no new edit
        QCOMPARE(edited.count(), 1);
        edit->clear();
        QCOMPARE(edited.count(), 2);
        QVERIFY(panel.parameters().tokens.empty());
        QCOMPARE(panel.parameters().n, 5); // n stays, now free again
        QVERIFY(nSpin->isEnabled());
        // Parameters from outside (an opened session) show their tokens.
        SessionParameters p;
        p.setTokens(QStringList {"a", "b", "c"});
        p.n = 3;
        panel.setParameters(p);
        QCOMPARE(edit->text(), QStringLiteral("a b c"));
        QCOMPARE(edited.count(), 2);
    }

    void viewPanelDrivesWidget()
    {
        HeatmapWidget widget;
        HeatmapViewPanel panel(&widget);
        SessionParameters p;
        p.mask = MaskChoice::KeyPadding;
        p.paddingCount = 2;
        widget.setResult(compute(p));
        panel.colormapCombo()->setCurrentIndex(
            panel.colormapCombo()->findData(int(ColormapId::Magma)));
        QCOMPARE(widget.options().colormap, ColormapId::Magma);
        panel.scaleCombo()->setCurrentIndex(1);
        QCOMPARE(widget.options().scale, ColorScale::Log);
        panel.rangeCombo()->setCurrentIndex(1);
        QVERIFY(widget.options().autoRange);
        panel.poolingCombo()->setCurrentIndex(
            panel.poolingCombo()->findData(int(HeatmapPooling::Mean)));
        QCOMPARE(widget.options().pooling, HeatmapPooling::Mean);
        QSignalSpy shown(&widget, &HeatmapWidget::shownResultChanged);
        panel.trimPaddingCheck()->setChecked(true);
        QCOMPARE(shown.count(), 1);
        QCOMPARE(widget.result()->queryCount(), Index(6));
        QCOMPARE(widget.sessionResult()->queryCount(), Index(8));
        panel.hideKeysEdit()->setText(QStringLiteral("0"));
        QCOMPARE(widget.viewTransform().hiddenKeys, QList<int> {0});
        QVERIFY(widget.result()->renormalized);
        panel.renormalizeCheck()->setChecked(false);
        QVERIFY(!widget.result()->renormalized);
        panel.hideKeysEdit()->setText(QStringLiteral("zero")); // refused: the last valid stays
        QCOMPARE(widget.viewTransform().hiddenKeys, QList<int> {0});
        // Options set from outside (an opened session) show in the panel.
        HeatmapOptions o = widget.options();
        o.colormap = ColormapId::Cividis;
        widget.setOptions(o);
        QCOMPARE(ColormapId(panel.colormapCombo()->currentData().toInt()), ColormapId::Cividis);
    }

    void exportActionsWriteFiles()
    {
        QWidget parent;
        auto *widget = new HeatmapWidget(&parent);
        widget->resize(900, 600);
        SessionParameters p;
        p.heads = 2;
        p.dModel = 16;
        widget->setResult(compute(p));
        HeatmapOptions o = widget->options();
        o.colormap = ColormapId::Grayscale;
        widget->setOptions(o);
        widget->zoomBy(2.0);
        HeatmapActions actions(widget, &parent);
        QCOMPARE(actions.fileActions().size(), 3);
        QCOMPARE(actions.exportViewAction()->shortcut(),
                 QKeySequence(QStringLiteral("Ctrl+Shift+E")));
        QTemporaryDir dir;
        QString error;
        // The export is the view as shown (zoom window, colormap) on a white page.
        const QString svg = dir.filePath(QStringLiteral("view.svg"));
        QVERIFY2(actions.exportView(svg, QSize(900, 600), 96, &error), qPrintable(error));
        QFile f(svg);
        QVERIFY(f.open(QIODevice::ReadOnly));
        const QStringList texts = svgTexts(f.readAll(), &error);
        QVERIFY(texts.contains(QStringLiteral("gray, linear")));
        const QString png = dir.filePath(QStringLiteral("view.png"));
        QVERIFY2(actions.exportView(png, QSize(1200, 800), 192, &error), qPrintable(error));
        QCOMPARE(QImage(png).size(), QSize(1200, 800));
        QCOMPARE(QImage(png).pixel(2, 2) | 0xff000000u, qRgb(255, 255, 255));
        QStringList written;
        QVERIFY2(actions.exportHeads(dir.filePath(QStringLiteral("heads")), QStringLiteral("png"),
                                     QSize(500, 400), 96, &written, &error),
                 qPrintable(error));
        QCOMPARE(written.size(), 3);
        written.clear();
        QVERIFY2(actions.exportData(dir.filePath(QStringLiteral("d.npz")), &written, &error),
                 qPrintable(error));
        QCOMPARE(written.size(), 1);
        // Zoom actions reach the widget.
        actions.zoomResetAction()->trigger();
        QVERIFY(!widget->isZoomed());
        actions.zoomInAction()->trigger();
        QVERIFY(widget->isZoomed());
    }

    // ---- command line ----

    void cliTokensBatchAndData()
    {
        QTemporaryDir dir;
        QProcess process;
        process.setProcessChannelMode(QProcess::MergedChannels);
        const QString out = dir.filePath(QStringLiteral("t.svg"));
        const QString batch = dir.filePath(QStringLiteral("batch"));
        const QString data = dir.filePath(QStringLiteral("t.npz"));
        process.start(QStringLiteral(ATTNLAB_EXE),
                      {QStringLiteral("heatmap"), QStringLiteral("--tokens"),
                       QStringLiteral("the cat sat, on the mat"), QStringLiteral("--heads"),
                       QStringLiteral("2"), QStringLiteral("--colormap"), QStringLiteral("magma"),
                       QStringLiteral("--scale"), QStringLiteral("log"), QStringLiteral("--range"),
                       QStringLiteral("auto"), QStringLiteral("--out"), out,
                       QStringLiteral("--batch-dir"), batch, QStringLiteral("--format"),
                       QStringLiteral("svg"), QStringLiteral("--data"), data});
        QVERIFY(process.waitForFinished(60000));
        QVERIFY2(process.exitCode() == 0, process.readAll().constData());
        QFile f(out);
        QVERIFY(f.open(QIODevice::ReadOnly));
        QString error;
        const QStringList texts = svgTexts(f.readAll(), &error);
        QVERIFY(texts.contains(QStringLiteral("magma, log")));
        QVERIFY(texts.contains(QStringLiteral("3:,"))); // the comma token at position 3
        QVERIFY(texts.first().startsWith(QLatin1String("n=7,"))); // the caption: n follows
        QCOMPARE(QDir(batch).entryList(QDir::Files, QDir::Name),
                 (QStringList {"head-0.svg", "head-1.svg", "head-mean.svg"}));
        // The data equal the window's computation for the same parameters.
        SessionParameters p;
        p.setTokens(attn::splitTokens(QStringLiteral("the cat sat, on the mat")));
        p.n = int(p.tokens.size());
        p.dModel = 16;
        p.heads = 2;
        const auto r = compute(p);
        const NpyArray w = readNpzMember(data.toStdString(), "weights");
        ATTN_COMPARE_CLOSE(w.slice<double>(1, "weights"), r->weights[1], 0.0, 0.0);

        // PNG at a DPI: exactly --width × --height pixels.
        const QString png = dir.filePath(QStringLiteral("t.png"));
        process.start(QStringLiteral(ATTNLAB_EXE),
                      {QStringLiteral("heatmap"), QStringLiteral("--dpi"), QStringLiteral("300"),
                       QStringLiteral("--width"), QStringLiteral("1500"),
                       QStringLiteral("--height"), QStringLiteral("1000"), QStringLiteral("--mask"),
                       QStringLiteral("padding"), QStringLiteral("--trim-padding"),
                       QStringLiteral("--hide-keys"), QStringLiteral("0"), QStringLiteral("--out"),
                       png});
        QVERIFY(process.waitForFinished(60000));
        QVERIFY2(process.exitCode() == 0, process.readAll().constData());
        const QImage image(png);
        QCOMPARE(image.size(), QSize(1500, 1000));
        QCOMPARE(image.dotsPerMeterX(), qRound(300 / 0.0254));
    }

    void cliBadArguments_data()
    {
        QTest::addColumn<QStringList>("arguments");
        QTest::addColumn<QString>("message");
        QTest::newRow("n does not match tokens")
            << QStringList {"--tokens", "a b", "--n", "3", "--out", "x.png"}
            << "does not match the 2 tokens";
        QTest::newRow("blank tokens")
            << QStringList {"--tokens", "  ", "--out", "x.png"} << "no tokens";
        QTest::newRow("no output") << QStringList {"--n", "4"} << "--out is required";
        QTest::newRow("bad data suffix") << QStringList {"--data", "x.txt"} << "--data";
        QTest::newRow("bad hide-keys")
            << QStringList {"--hide-keys", "bos", "--out", "x.png"} << "--hide-keys";
        QTest::newRow("bad pooling")
            << QStringList {"--pooling", "median", "--out", "x.png"} << "--pooling";
        QTest::newRow("bad dpi") << QStringList {"--dpi", "5", "--out", "x.png"} << "--dpi";
        QTest::newRow("steps view with batch")
            << QStringList {"--view", "steps", "--out", "x.png", "--batch-dir", "d"}
            << "--batch-dir and --data go with --view grid or head";
        // Options that would be ignored are refused, naming what they need.
        QTest::newRow("option without its value") << QStringList {"--n", "--out", "x.png"}
                                                  << "--n needs a value: '--out' is the next "
                                                     "option";
        QTest::newRow("padding without the padding mask")
            << QStringList {"--mask", "causal", "--padding", "3", "--out", "x.png"}
            << "--padding 3 has no effect without --mask padding";
        QTest::newRow("raw without hide-keys")
            << QStringList {"--raw", "--out", "x.png"} << "--raw has no effect without --hide-keys";
        QTest::newRow("compare key twice")
            << QStringList {"--view", "compare", "--compare", "alpha=0,scale=on", "--out", "x.png"}
            << "--compare: the scale (alpha) is given twice";
        QTest::newRow("compare tau twice")
            << QStringList {"--view", "compare", "--compare", "tau=2,temperature=3",
                            "--out",  "x.png"}
            << "--compare: tau is given twice";
    }
    void cliBadArguments()
    {
        QFETCH(QStringList, arguments);
        QFETCH(QString, message);
        QTemporaryDir dir;
        QProcess process;
        process.setWorkingDirectory(dir.path());
        process.setProcessChannelMode(QProcess::MergedChannels);
        process.start(QStringLiteral(ATTNLAB_EXE),
                      QStringList {QStringLiteral("heatmap")} + arguments);
        QVERIFY(process.waitForFinished(60000));
        const QString output = QString::fromUtf8(process.readAll());
        QCOMPARE(process.exitCode(), 2);
        QVERIFY2(output.contains(message), qPrintable(output));
        QVERIFY(QDir(dir.path()).entryList(QDir::Files).isEmpty());
    }
};

QTEST_MAIN(TestHeatmapExports)
#include "tst_heatmapexports.moc"
