// Steps view (StepsRenderer, StepsView, AttentionViews): the panels' layout, scrolling and
// off-thread painting; a score cell's colour is matplotlib's RdBu_r at the value normalised
// symmetrically about 0 (fixture table); masked cells differ from near-zero cells and causal
// from padding; hover is linked across the panels; PNG/SVG/PDF exports. What the panels and
// tooltips say is tested in tst_stepsvalues.cpp.

#include "stepstest.h"

#include "core/engine/pipeline.h"
#include "ui/render/tileimage.h"
#include "ui/views/pipelinestrip.h"

using namespace stepstest;

class TestStepsView : public QObject
{
    Q_OBJECT

private:
    QJsonArray m_rdbu; // matplotlib's RdBu_r table, 256 × RGB

private slots:
    void initTestCase()
    {
        QFile file(QStringLiteral(ATTN_FIXTURE_DIR "/colormaps/colormaps.json"));
        QVERIFY2(file.open(QIODevice::ReadOnly), qPrintable(file.fileName()));
        m_rdbu = QJsonDocument::fromJson(file.readAll())
                     .object()
                     .value(QStringLiteral("maps"))
                     .toObject()
                     .value(QStringLiteral("RdBu_r"))
                     .toObject()
                     .value(QStringLiteral("table"))
                     .toArray();
        QCOMPARE(m_rdbu.size(), 256);
    }

    // Four panels (RoPE adds the rotation step) in a 1280 × 800 window's centre column: the
    // canvas grows taller than the view and scrolls, so its cells stay readable (they were
    // "Too small to draw the panels"); in a large view nothing scrolls.
    void smallViewScrolls()
    {
        SessionParameters p;
        p.n = 16;
        p.dModel = 64;
        p.heads = 4;
        p.rope = true;
        p.window = 4;
        p.sinks = 2;
        StepsView view;
        view.resize(460, 560);
        view.setResult(compute(p));
        view.show();
        QVERIFY(QTest::qWaitForWindowExposed(&view));
        QCOMPARE(view.renderer().panelCount(), 4);
        FigureCanvas *canvas = view.canvas();
        auto *scroll = qobject_cast<QScrollArea *>(canvas->parentWidget()->parentWidget());
        QVERIFY(scroll);
        const QSize viewport = scroll->viewport()->size();
        // At the viewport's own size the cells would be under the minimum …
        QVERIFY(view.renderer().layout(QRectF(QPointF(0, 0), QSizeF(viewport))).cellSize
                < FigureScrollArea::kMinimumCell);
        // … the canvas is taller, and there they are not.
        QTRY_VERIFY(canvas->height() > viewport.height());
        QVERIFY(scroll->verticalScrollBar()->maximum() > 0);
        QVERIFY(view.renderer().layout(QRectF(canvas->rect())).cellSize
                >= FigureScrollArea::kMinimumCell);
        // A large view: the canvas fills it.
        view.resize(1400, 900);
        QTRY_COMPARE(canvas->height(), scroll->viewport()->height());
        QCOMPARE(scroll->verticalScrollBar()->maximum(), 0);
        QVERIFY(view.renderer().layout(QRectF(canvas->rect())).cellSize
                >= FigureScrollArea::kMinimumCell);
    }

    // A large figure (three 600 × 600 panels, over FigureCanvas::asyncPictureCells cells) is
    // painted on a worker: the paint event returns without the new picture, which arrives
    // later and is the figure's own paint at the canvas's size; a small figure is painted at
    // once. The figure changing while the worker paints never touches freed data (the copy
    // holds the result: an ASan build checks).
    void largeFigurePaintedOffTheGuiThread()
    {
        SessionParameters p;
        p.n = 600;
        p.dModel = 8;
        p.heads = 1;
        StepsView view;
        view.resize(900, 500);
        view.setResult(compute(p));
        view.show();
        QVERIFY(QTest::qWaitForWindowExposed(&view));
        FigureCanvas *canvas = view.canvas();
        QVERIFY(view.renderer().cellCount() >= FigureCanvas::asyncPictureCells);
        canvas->repaint();
        QVERIFY(!canvas->pictureCurrent());
        QTRY_VERIFY_WITH_TIMEOUT(canvas->pictureCurrent(), 60000);
        const QImage shown = canvas->grab().toImage().convertToFormat(QImage::Format_RGB32);
        const QImage expected = view.renderer()
                                    .render(canvas->size(), canvas->devicePixelRatioF())
                                    .convertToFormat(QImage::Format_RGB32);
        QCOMPARE(shown.size(), expected.size());
        QVERIFY(shown == expected);
        // New content while a picture is being painted: the old result may be released.
        canvas->update();
        p.n = 601;
        view.setResult(compute(p));
        canvas->repaint();
        p.n = 8;
        view.setResult(compute(p));
        canvas->repaint();
        QVERIFY(canvas->pictureCurrent()); // small: painted at once
    }

    void linkedHover()
    {
        SessionParameters p;
        p.n = 7;
        p.dModel = 16;
        p.heads = 2;
        p.kind = AttentionKind::DecoderCausal;
        StepsView view;
        view.resize(1400, 560);
        view.setResult(compute(p));
        view.show();
        QVERIFY(QTest::qWaitForWindowExposed(&view));
        FigureCanvas *canvas = view.canvas();
        QSignalSpy hovered(canvas, &FigureCanvas::cellHovered);
        const PanelFigureLayout lay = view.renderer().layout(QRectF(canvas->rect()));
        QTest::mouseMove(canvas, cellRect(lay, StepsRenderer::Weights, 4, 2).center().toPoint());
        QTRY_VERIFY(canvas->hoveredCell().valid());
        QCOMPARE(canvas->hoveredCell(), (FigureHit {StepsRenderer::Weights, 4, 2}));
        QVERIFY(hovered.count() >= 1);
        const QVector<QRectF> rects = canvas->highlightRects();
        QCOMPARE(rects.size(), 3);
        for (int k = 0; k < 3; ++k)
            QCOMPARE(canvas->cellAt(rects[k].center()), (FigureHit {k, 4, 2}));
        // The outline is painted in every panel: the grabbed picture differs from the figure's
        // own picture at each outlined cell's border.
        const QImage grabbed = canvas->grab().toImage();
        const QImage plain = view.renderer().render(canvas->size(), grabbed.devicePixelRatio());
        for (const QRectF &cell : rects) {
            const QPoint edge(int(cell.left() * grabbed.devicePixelRatio()),
                              int(cell.center().y() * grabbed.devicePixelRatio()));
            QVERIFY(grabbed.pixel(edge) != plain.pixel(edge));
        }
    }

    // The colour of a known score cell is matplotlib's RdBu_r at v normalised to [−m, m] with
    // m = max |score| over the panel's unmasked cells (0 is white; min and max honest).
    void scoreColours()
    {
        SessionParameters p;
        p.n = 6;
        p.dModel = 16;
        p.heads = 2;
        p.kind = AttentionKind::DecoderCausal;
        p.seed = 5;
        const ResultPtr r = compute(p);
        StepsRenderer renderer;
        renderer.setResult(r);
        renderer.setHead(1);
        for (int panel : {int(StepsRenderer::RawScores), int(StepsRenderer::ScaledScores)}) {
            const MatrixD &m
                = panel == StepsRenderer::RawScores ? r->scores[1] : r->scaledScores[1];
            double lo = std::numeric_limits<double>::infinity(), hi = -lo;
            for (Index i = 0; i < m.rows(); ++i)
                for (Index j = 0; j < m.cols(); ++j)
                    if (panel == StepsRenderer::RawScores || !r->maskState(i, j)) {
                        lo = std::min(lo, m(i, j));
                        hi = std::max(hi, m(i, j));
                    }
            const FigurePanel &fp = renderer.panel(panel);
            QCOMPARE(fp.dataMin, lo);
            QCOMPARE(fp.dataMax, hi);
            QCOMPARE(fp.colormap, ColormapId::RdBu);
            const double absMax = std::max(std::abs(lo), std::abs(hi));
            const QImage image = renderer.panelImage(panel);
            QCOMPARE(image.size(), QSize(6, 6));
            for (auto [i, j] : {std::pair {5, 0}, std::pair {3, 2}, std::pair {0, 0}}) {
                const double t = (m(i, j) + absMax) / (2 * absMax);
                const int index = std::clamp(int(std::floor(t * 256)), 0, 255);
                const QJsonArray e = m_rdbu.at(index).toArray();
                QCOMPARE(QColor(image.pixel(j, i)),
                         QColor(e[0].toInt(), e[1].toInt(), e[2].toInt()));
            }
        }
        // Weights: the fixed [0, 1] range.
        const FigurePanel &w = renderer.panel(StepsRenderer::Weights);
        QCOMPARE(w.norm.vmin, 0.0);
        QCOMPARE(w.norm.vmax, 1.0);
        QCOMPARE(QColor(renderer.panelImage(StepsRenderer::Weights).pixel(0, 0)),
                 QColor(Colormap(ColormapId::Viridis).map(r->weights[1](0, 0))));
    }

    // "Same score range": panels 1 and 2 share ±max(|raw|, |scaled|), so a cell's colour in
    // panel 2 is its scaled score on panel 1's scale (computed here from the matrices).
    void sharedScoreRange()
    {
        SessionParameters p;
        p.n = 6;
        p.dModel = 64;
        p.heads = 1; // d_k = 64: the scale 1/8 shrinks the scores visibly
        p.seed = 3;
        const ResultPtr r = compute(p);
        StepsRenderer renderer;
        renderer.setResult(r);
        const double rawMax = r->scores[0].cwiseAbs().maxCoeff();
        const double scaledMax = r->scaledScores[0].cwiseAbs().maxCoeff(); // no mask: all finite
        QCOMPARE(renderer.panel(StepsRenderer::RawScores).norm.vmax, rawMax);
        QCOMPARE(renderer.panel(StepsRenderer::ScaledScores).norm.vmax, scaledMax);
        QVERIFY(scaledMax < rawMax);

        renderer.setSharedScoreRange(true);
        for (int panel : {int(StepsRenderer::RawScores), int(StepsRenderer::ScaledScores)}) {
            const FigurePanel &fp = renderer.panel(panel);
            QCOMPARE(fp.norm.vmax, rawMax);
            QCOMPARE(fp.norm.vmin, -rawMax);
            QVERIFY2(fp.rangeNote.contains(QLatin1String("shared")), qPrintable(fp.rangeNote));
        }
        // The scaled panel's strongest cell is now pale: t = (v + m) / 2m is near 0.5.
        const double t = renderer.panel(StepsRenderer::ScaledScores).norm(scaledMax);
        QVERIFY(std::abs(t - 0.5) < 0.5 * scaledMax / rawMax + 1e-12);
        QVERIFY(t < 0.75);

        renderer.setSharedScoreRange(false);
        QCOMPARE(renderer.panel(StepsRenderer::ScaledScores).norm.vmax, scaledMax);
    }

    // Blocks of cells pooled for small paints: weights by max, scores by mean, masked cells
    // left out; an all-masked block keeps its mask colour.
    void pooledImages()
    {
        SessionParameters p;
        p.n = 9;
        p.dModel = 16;
        p.heads = 2;
        p.kind = AttentionKind::DecoderCausal;
        const ResultPtr r = compute(p);
        StepsRenderer renderer;
        renderer.setResult(r);
        const QImage weights = renderer.panelImage(StepsRenderer::Weights, 3, 3);
        const QImage raw = renderer.panelImage(StepsRenderer::RawScores, 3, 3);
        QCOMPARE(weights.size(), QSize(3, 3));
        const Colormap viridis(ColormapId::Viridis);
        const FigurePanel &rawPanel = renderer.panel(StepsRenderer::RawScores);
        const Colormap rdbu(ColormapId::RdBu);
        for (int by = 0; by < 3; ++by)
            for (int bx = 0; bx < 3; ++bx) {
                double maxW = -1, sum = 0;
                int allowed = 0;
                for (int i = 3 * by; i < 3 * by + 3; ++i)
                    for (int j = 3 * bx; j < 3 * bx + 3; ++j) {
                        sum += r->scores[0](i, j);
                        if (r->maskState(i, j))
                            continue;
                        maxW = std::max(maxW, r->weights[0](i, j));
                        ++allowed;
                    }
                const QRgb expectedW = allowed
                    ? viridis.map(maxW)
                    : PanelFigure::maskedColor(ColormapId::Viridis, MaskCausal);
                QCOMPARE(QColor(weights.pixel(bx, by)), QColor(expectedW));
                QCOMPARE(QColor(raw.pixel(bx, by)), QColor(rdbu.map(rawPanel.norm(sum / 9))));
            }
        QCOMPARE(QColor(weights.pixel(2, 0)),
                 QColor(PanelFigure::maskedColor(ColormapId::Viridis, MaskCausal)));
    }

    void maskedCellStyles()
    {
        // Decoder + 3 padding keys, unscaled with a large d_k: weights near 0 exist beside
        // causal-only, padding-only and causal+padding cells.
        SessionParameters p;
        p.n = 8;
        p.dModel = 256;
        p.heads = 2;
        p.kind = AttentionKind::DecoderCausal;
        p.mask = MaskChoice::KeyPadding;
        p.paddingCount = 3;
        p.scaleExponent = 0.0;
        p.seed = 2;
        const ResultPtr r = compute(p);
        QVERIFY2(r->ok(), qPrintable(r->error));
        StepsRenderer renderer;
        renderer.setResult(r);
        renderer.setHead(0);
        FigureStyle style;
        style.fontPixelSize = 12;
        renderer.setStyle(style);
        const QSize size(1500, 620);
        const QImage image = renderer.render(size);
        const PanelFigureLayout lay = renderer.layout(QRectF(QPointF(0, 0), QSizeF(size)));
        QVERIFY(lay.cellSize >= 20);

        // The smallest allowed weight and the allowed scaled score nearest 0.
        int wi = -1, wj = -1, si = -1, sj = -1;
        for (int i = 0; i < 8; ++i)
            for (int j = 0; j < 8; ++j) {
                if (r->maskState(i, j))
                    continue;
                if (wi < 0 || r->weights[0](i, j) < r->weights[0](wi, wj))
                    wi = i, wj = j;
                if (si < 0
                    || std::abs(r->scaledScores[0](i, j)) < std::abs(r->scaledScores[0](si, sj)))
                    si = i, sj = j;
            }
        QVERIFY2(r->weights[0](wi, wj) < 1e-3, qPrintable(QString::number(r->weights[0](wi, wj))));
        QCOMPARE(r->maskState(0, 1), std::uint8_t(MaskCausal));
        QCOMPARE(r->maskState(7, 6), std::uint8_t(MaskPadding));
        QCOMPARE(r->maskState(0, 6), std::uint8_t(MaskCausal | MaskPadding));

        for (int panel : {int(StepsRenderer::ScaledScores), int(StepsRenderer::Weights)}) {
            const QRgb nearZero = panel == StepsRenderer::Weights
                ? dominantColor(image, cellRect(lay, panel, wi, wj))
                : dominantColor(image, cellRect(lay, panel, si, sj));
            const QRgb causal = dominantColor(image, cellRect(lay, panel, 0, 1));
            const QRgb padding = dominantColor(image, cellRect(lay, panel, 7, 6));
            const QRgb both = dominantColor(image, cellRect(lay, panel, 0, 6));
            const QString where = QStringLiteral("panel %1").arg(panel);
            QVERIFY2(distance(causal, nearZero) > 40, qPrintable(where));
            QVERIFY2(distance(padding, nearZero) > 40, qPrintable(where));
            QVERIFY2(distance(both, nearZero) > 40, qPrintable(where));
            QVERIFY2(causal != padding, qPrintable(where));
            QVERIFY2(both != causal && both != padding, qPrintable(where));
            // The grid renderer's mask colours for this panel's colormap.
            const ColormapId id = renderer.panel(panel).colormap;
            QCOMPARE(causal, PanelFigure::maskedColor(id, MaskCausal));
            QCOMPARE(padding, PanelFigure::maskedColor(id, MaskPadding));
        }
        // Raw scores come before masking: the same cells show values (no mask colour).
        const QRgb rawCausal = dominantColor(image, cellRect(lay, StepsRenderer::RawScores, 0, 1));
        QVERIFY(rawCausal != PanelFigure::maskedColor(ColormapId::RdBu, MaskCausal));
    }

    // Side by side in a wide area, stacked in a tall one; never outside the bounds; every
    // panel has the same cell size.
    void layoutFollowsShape_data()
    {
        QTest::addColumn<QSize>("size");
        QTest::addColumn<bool>("oneRow");
        QTest::newRow("wide") << QSize(1600, 600) << true;
        QTest::newRow("tall") << QSize(600, 1000) << false;
        QTest::newRow("narrow strip") << QSize(420, 1400) << false;
    }
    void layoutFollowsShape()
    {
        QFETCH(QSize, size);
        QFETCH(bool, oneRow);
        SessionParameters p;
        p.n = 10;
        p.dModel = 16;
        p.heads = 2;
        p.mask = MaskChoice::KeyPadding;
        StepsRenderer renderer;
        renderer.setResult(compute(p));
        FigureStyle style;
        style.fontPixelSize = 12;
        renderer.setStyle(style);
        const QRectF bounds(QPointF(0, 0), QSizeF(size));
        const PanelFigureLayout lay = renderer.layout(bounds);
        QCOMPARE(lay.maps.size(), 3);
        QVERIFY(lay.cellSize >= 8);
        QCOMPARE(lay.maps[0].top() == lay.maps[2].top(), oneRow);
        for (int k = 0; k < 3; ++k) {
            QVERIFY2(bounds.contains(lay.frames[k]), qPrintable(QString::number(k)));
            QCOMPARE(lay.maps[k].size(), lay.maps[0].size());
            for (int m = k + 1; m < 3; ++m)
                QVERIFY(!lay.frames[k].intersects(lay.frames[m]));
        }
    }

    // Regression (new-user trial): in the 1600×900 window the steps view is about 560×640;
    // the caption was elided ("scale = 0.…") and the titles cut ("2 · scaled + maske…").
    // The caption now wraps inside its rectangle above the panels, and titles wider than their
    // map (in a narrower view; at 560×640 the maps are wide enough) get a line of their own
    // across the whole panel, where they fit.
    void narrowViewKeepsTextWhole_data()
    {
        QTest::addColumn<QSize>("size");
        QTest::addColumn<bool>("titleOwnLine");
        QTest::newRow("1600x900 window centre") << QSize(560, 640) << false;
        QTest::newRow("narrower") << QSize(400, 640) << true;
        QTest::newRow("wide") << QSize(1600, 600) << false;
    }
    void narrowViewKeepsTextWhole()
    {
        QFETCH(QSize, size);
        QFETCH(bool, titleOwnLine);
        SessionParameters p;
        p.n = 8;
        p.dModel = 64;
        p.heads = 4;
        StepsRenderer renderer;
        renderer.setResult(compute(p));
        const QRectF bounds(QPointF(0, 0), QSizeF(size));
        const PanelFigureLayout lay = renderer.layout(bounds);
        QCOMPARE(lay.maps.size(), 3);
        QCOMPARE(lay.titleOwnLine, titleOwnLine);
        QFont font(QStringLiteral("DejaVu Sans"));
        font.setPixelSize(qRound(lay.fontPixelSize));
        QFont bold = font;
        bold.setBold(true);
        const QFontMetricsF fm(font), fmBold(bold);
        // Caption: every line wrapped within the caption's width and height, above the panels.
        qreal needed = 0;
        for (int l = 0; l < renderer.captionLines().size(); ++l)
            needed += (l == 0 ? fmBold : fm)
                          .boundingRect(QRectF(0, 0, lay.caption.width(), 1e6), Qt::TextWordWrap,
                                        renderer.captionLines()[l])
                          .height();
        QVERIFY2(needed <= lay.caption.height() + 0.5,
                 qPrintable(QStringLiteral("%1 > %2").arg(needed).arg(lay.caption.height())));
        for (int k = 0; k < 3; ++k) {
            QVERIFY(lay.caption.bottom() <= lay.frames[k].top());
            QVERIFY(bounds.contains(lay.frames[k]));
            // The title fits where it is drawn: over the map, or across the panel.
            const qreal room = titleOwnLine ? lay.frames[k].width()
                                            : lay.maps[k].width() + 0.8 * lay.fontPixelSize;
            QVERIFY2(fmBold.horizontalAdvance(renderer.panel(k).title) <= room,
                     qPrintable(renderer.panel(k).title));
        }
    }

    void headSelector()
    {
        SessionParameters p;
        p.n = 5;
        p.dModel = 16;
        p.heads = 4;
        const ResultPtr r = compute(p);
        StepsView view;
        view.setResult(r);
        QComboBox *combo = view.headSelector();
        QCOMPARE(combo->count(), 4);
        QSignalSpy changed(&view, &StepsView::headChanged);
        combo->setCurrentIndex(2);
        QCOMPARE(view.head(), 2);
        QCOMPARE(changed.count(), 1);
        QCOMPARE(view.renderer().panel(StepsRenderer::RawScores).values, &r->scores[2]);
        QVERIFY(view.renderer().captionLines().first().contains(QStringLiteral("head 2 of 4")));

        // Fewer heads: the head is clamped and the selector follows.
        SessionParameters two = p;
        two.heads = 2;
        view.setResult(compute(two));
        QCOMPARE(combo->count(), 2);
        QCOMPARE(view.head(), 1);
        QCOMPARE(combo->currentIndex(), 1);
    }

    void noResult()
    {
        StepsRenderer renderer;
        QCOMPARE(renderer.panelCount(), 0);
        QCOMPARE(renderer.message(), QStringLiteral("No result yet"));
        StepsView view;
        QString error;
        QVERIFY(!view.exportFigure(QStringLiteral("/tmp/never.png"), QSize(800, 400), 1, &error));
        QVERIFY(!error.isEmpty());
        QVERIFY(!QFile::exists(QStringLiteral("/tmp/never.png")));
        auto failed = std::make_shared<SessionResult>();
        failed->error = QStringLiteral("boom");
        renderer.setResult(failed);
        QCOMPARE(renderer.panelCount(), 0);
        QVERIFY(renderer.message().contains(QStringLiteral("boom")));
    }

    // Regression (new-user trial): tensors loaded as stored weights (no Q, K) have no scores;
    // the steps view showed NaN panels. It shows a message saying what is missing instead, and
    // refuses to export.
    void storedWeightsOnly()
    {
        QTemporaryDir dir;
        QVERIFY(dir.isValid());
        // 2 heads × 3 queries × 4 keys, each row a probability row.
        MatrixD rows(6, 4);
        rows << 0.1, 0.2, 0.3, 0.4, 0.25, 0.25, 0.25, 0.25, 1, 0, 0, 0, 0.5, 0.5, 0, 0, 0.4, 0.3,
            0.2, 0.1, 0, 0, 0, 1;
        NpyArray weights = NpyArray::fromMatrix(rows);
        weights.shape = {2, 3, 4};
        const QString file = dir.filePath(QStringLiteral("attn_weights.npy"));
        writeNpy(file.toStdString(), weights);
        QString error;
        const auto source
            = makeTensorSource(readTensorFile(file), QString(), MaskConvention::Masked, &error);
        QVERIFY2(source, qPrintable(error));
        QVERIFY(source->isWeights());
        const SessionParameters p = source->parametersFor(SessionParameters {}, source);
        const auto r = std::make_shared<SessionResult>(computeTensorSession(p));
        QVERIFY2(r->ok(), qPrintable(r->error));
        QVERIFY(std::isnan(r->scores[0](0, 0))); // the scores are unknown

        StepsView view;
        view.resize(1200, 600);
        view.setResult(r);
        QCOMPARE(view.renderer().panelCount(), 0);
        QCOMPARE(view.renderer().message(), StepsRenderer::weightsOnlyMessage());
        QVERIFY(view.renderer().message().startsWith(
            QStringLiteral("Steps need query and key tensors; the loaded file has weights only")));
        const QString out = dir.filePath(QStringLiteral("steps.png"));
        QVERIFY(!view.exportFigure(out, QSize(800, 400), 1.0, &error));
        QCOMPARE(error, StepsRenderer::weightsOnlyMessage());
        QVERIFY(!QFile::exists(out));

        // Computed inputs again: the panels come back.
        SessionParameters random;
        random.n = 4;
        view.setResult(compute(random));
        QCOMPARE(view.renderer().panelCount(), 3);
    }

    // The weights panel follows the colormap chosen for the heads heatmaps (AttentionViews
    // passes HeatmapWidget's colormap on); RdBu_r, diverging, falls back to viridis.
    void weightsColormapFollowsHeatmap()
    {
        AttentionSession session;
        auto *heads = new HeatmapWidget;
        AttentionViews views(heads, &session);
        QCOMPARE(views.stepsView()->renderer().weightsColormap(), ColormapId::Viridis);
        HeatmapOptions o = heads->options();
        o.colormap = ColormapId::Magma;
        heads->setOptions(o);
        QCOMPARE(views.stepsView()->renderer().weightsColormap(), ColormapId::Magma);
        QCOMPARE(views.compareView()->renderer().weightsColormap(), ColormapId::Magma);
        o.colormap = ColormapId::RdBu;
        heads->setOptions(o);
        QCOMPARE(views.stepsView()->renderer().weightsColormap(), ColormapId::Viridis);
        QCOMPARE(views.compareView()->renderer().weightsColormap(), ColormapId::Viridis);

        // The weights panel's colours are magma's: weight 1 (row 0 of a one-key result) maps to
        // magma's top colour.
        o.colormap = ColormapId::Magma;
        heads->setOptions(o);
        SessionParameters one;
        one.n = 1;
        one.dModel = 4;
        one.heads = 1;
        views.stepsView()->setResult(compute(one));
        const QImage image = views.stepsView()->renderer().panelImage(StepsRenderer::Weights);
        QCOMPARE(QColor(image.pixel(0, 0)), QColor(Colormap(ColormapId::Magma).map(1.0)));
    }

    void exports()
    {
        QTemporaryDir dir;
        QVERIFY(dir.isValid());
        SessionParameters p;
        p.n = 6;
        p.dModel = 16;
        p.heads = 2;
        p.kind = AttentionKind::DecoderCausal;
        p.setTokens({QStringLiteral("a"), QStringLiteral("b"), QStringLiteral("c"),
                     QStringLiteral("d"), QStringLiteral("e"), QStringLiteral("f")});
        StepsView view;
        view.setResult(compute(p));
        view.setHead(1);
        QString error;

        const QString png = dir.filePath(QStringLiteral("steps.png"));
        QVERIFY2(view.exportFigure(png, QSize(1200, 500), 2.0, &error), qPrintable(error));
        QImageReader reader(png);
        QCOMPARE(reader.format(), QByteArray("png"));
        QCOMPARE(reader.read().size(), QSize(2400, 1000));

        const QString svg = dir.filePath(QStringLiteral("steps.svg"));
        QVERIFY2(view.exportFigure(svg, QSize(1200, 500), 1.0, &error), qPrintable(error));
        const attn::test::SvgTexts parsed = attn::test::readSvgTextsFile(svg);
        QVERIFY2(parsed.error.isEmpty(), qPrintable(parsed.error));
        QCOMPARE(parsed.root, QStringLiteral("svg"));
        const QStringList &texts = parsed.texts;
        QCOMPARE(texts.count(QStringLiteral("query i (row)")), 3);
        QCOMPARE(texts.count(QStringLiteral("key j (column)")), 3);
        QVERIFY(texts.contains(QStringLiteral("raw score")));
        QVERIFY(texts.contains(QStringLiteral("scaled score")));
        QVERIFY(texts.contains(QStringLiteral("weight")));
        QVERIFY(texts.contains(QStringLiteral("causal-masked")));
        // The caption names the parameters.
        QVERIFY(std::any_of(texts.begin(), texts.end(), [](const QString &t) {
            return t.contains(QStringLiteral("d_model=16")) && t.contains(QStringLiteral("seed=0"));
        }));

        const QString pdf = dir.filePath(QStringLiteral("steps.pdf"));
        QVERIFY2(view.exportFigure(pdf, QSize(1200, 500), 1.0, &error), qPrintable(error));
        QFile pdfFile(pdf);
        QVERIFY(pdfFile.open(QIODevice::ReadOnly));
        const QByteArray data = pdfFile.readAll();
        QVERIFY(data.startsWith("%PDF"));
        QVERIFY(data.contains("/Type /Page"));

        QVERIFY(!view.exportFigure(dir.filePath(QStringLiteral("steps.bmp")), QSize(800, 400), 1,
                                   &error));
        QVERIFY(error.contains(QStringLiteral("steps.bmp")));
    }

    // The Heads / Steps / Compare tabs get every result of the session; a tile click in the
    // grid picks the head of the steps view.
    void attentionViewsWiring()
    {
        AttentionSession session;
        auto *heads = new HeatmapWidget;
        AttentionViews views(heads, &session);
        QCOMPARE(views.count(), 8);
        QCOMPARE(views.tabText(AttentionViews::LongTab), QStringLiteral("Long"));
        QCOMPARE(views.widget(AttentionViews::LongTab), views.longMapView());
        QCOMPARE(views.tabText(AttentionViews::AtlasTab), QStringLiteral("Atlas"));
        QCOMPARE(views.widget(AttentionViews::AtlasTab), views.atlasView());
        QCOMPARE(views.tabText(AttentionViews::PositionsTab), QStringLiteral("PE"));
        QCOMPARE(views.widget(AttentionViews::PositionsTab), views.positionsView());
        QCOMPARE(views.tabText(AttentionViews::HeadsTab), QStringLiteral("Heads"));
        QCOMPARE(views.tabText(AttentionViews::StepsTab), QStringLiteral("Steps"));
        QCOMPARE(views.widget(AttentionViews::StepsTab), views.stepsView());
        QCOMPARE(views.widget(AttentionViews::ModelTab), views.modelView());
        QCOMPARE(views.widget(AttentionViews::CompareTab), views.compareView());
        QCOMPARE(views.widget(AttentionViews::TokensTab), views.tokensView());
        QCOMPARE(views.tabText(AttentionViews::TokensTab), QStringLiteral("Tokens"));
        QSignalSpy results(&session, &AttentionSession::resultChanged);
        SessionParameters p;
        p.n = 5;
        p.dModel = 16;
        p.heads = 4;
        session.setParameters(p);
        QTRY_COMPARE(results.count(), 1);
        QCOMPARE(views.stepsView()->result(), session.result());
        QCOMPARE(views.compareView()->resultA(), session.result());
        QCOMPARE(views.tabActions().size(), 8);
        for (int tab = 0; tab < 7; ++tab)
            QCOMPARE(views.tabActions()[tab]->shortcut(),
                     QKeySequence(QStringLiteral("Ctrl+Alt+%1").arg(tab + 1)));
        views.tabActions()[2]->trigger();
        QCOMPARE(views.currentIndex(), int(AttentionViews::CompareTab));
        views.tabActions()[0]->trigger();
        QCOMPARE(views.currentIndex(), int(AttentionViews::HeadsTab));
        emit heads->tileActivated(3);
        QCOMPARE(views.stepsView()->head(), 3);
        emit heads->tileActivated(4); // the mean tile: not a head of the steps view
        QCOMPARE(views.stepsView()->head(), 3);
    }

    // A hidden Steps tab (another tab in front) does not rebuild its panels per result, but
    // never shows or exports an outdated one: result(), the head selector, renderer(),
    // exportFigure and the painted tab all follow the newest result; a visible view applies
    // setResult at once.
    void hiddenViewFollowsNewestResult()
    {
        AttentionSession session;
        auto *heads = new HeatmapWidget;
        AttentionViews views(heads, &session);
        views.resize(1200, 700);
        views.show();
        QVERIFY(QTest::qWaitForWindowExposed(&views));
        QCOMPARE(views.currentIndex(), int(AttentionViews::HeadsTab));
        StepsView *steps = views.stepsView();
        QVERIFY(!steps->isVisible());

        SessionParameters p;
        p.n = 6;
        p.dModel = 16;
        p.heads = 2;
        const ResultPtr a = compute(p);
        p.scaleExponent = 0.0;
        p.heads = 4;
        const ResultPtr b = compute(p);
        QVERIFY2(a->ok() && b->ok(), qPrintable(a->error + b->error));

        // Results A then B while hidden: the panels are not built (the canvas's figure holds
        // none; an eager rebuild would show B's three), but the view answers for B.
        steps->setResult(a);
        steps->setResult(b);
        QCOMPARE(steps->canvas()->figure()->panelCount(), 0);
        QCOMPARE(steps->result(), b);
        QCOMPARE(steps->headSelector()->count(), 4);
        steps->setHead(3);
        QCOMPARE(steps->head(), 3);
        QCOMPARE(steps->headSelector()->currentIndex(), 3);
        // Reading the figure brings it up to date.
        QCOMPARE(steps->renderer().result(), b);
        QCOMPARE(steps->renderer().panel(StepsRenderer::RawScores).values, &b->scores[3]);

        // A newer result with fewer heads while hidden, exported without showing the tab: the
        // file is C's figure at the clamped head, pixel for pixel (the export's white page).
        p.heads = 2;
        const ResultPtr c = compute(p);
        QVERIFY2(c->ok(), qPrintable(c->error));
        steps->setResult(c);
        QCOMPARE(steps->canvas()->figure()->panelCount(), 0);
        QCOMPARE(steps->head(), 1);
        QCOMPARE(steps->headSelector()->count(), 2);
        QCOMPARE(steps->headSelector()->currentIndex(), 1);
        QTemporaryDir dir;
        QVERIFY(dir.isValid());
        const QString png = dir.filePath(QStringLiteral("steps.png"));
        const QSize size(900, 400);
        QString error;
        QVERIFY2(steps->exportFigure(png, size, 1.0, &error), qPrintable(error));
        StepsRenderer exported;
        exported.setResult(c);
        exported.setHead(1);
        FigureStyle style = steps->canvas()->screenStyle();
        style.background = Qt::white;
        style.foreground = Qt::black;
        exported.setStyle(style);
        const QImage written = QImageReader(png).read();
        QCOMPARE(written.size(), size);
        QCOMPARE(written.convertToFormat(QImage::Format_ARGB32),
                 exported.render(size, 1.0).convertToFormat(QImage::Format_ARGB32));

        // Newer still while hidden, then the tab is shown: it paints the newest result, at the
        // head asked for before (3; C had only two heads).
        p.heads = 8;
        const ResultPtr d = compute(p);
        QVERIFY2(d->ok(), qPrintable(d->error));
        steps->setResult(d);
        QCOMPARE(steps->canvas()->figure()->panelCount(), 0);
        QCOMPARE(steps->head(), 3);
        views.setCurrentIndex(AttentionViews::StepsTab);
        QTRY_VERIFY(steps->isVisible());
        // Shown (not read): the canvas's figure holds D's panels of head 3.
        QCOMPARE(steps->canvas()->figure()->panelCount(), 3);
        QCOMPARE(steps->canvas()->figure()->panel(StepsRenderer::RawScores).values, &d->scores[3]);
        QCOMPARE(steps->renderer().result(), d);
        const QImage grabbed = steps->canvas()->grab().toImage();
        StepsRenderer painted;
        painted.setResult(d);
        painted.setHead(3);
        painted.setStyle(steps->canvas()->screenStyle());
        QCOMPARE(grabbed.convertToFormat(QImage::Format_ARGB32),
                 painted.render(steps->canvas()->size(), grabbed.devicePixelRatio())
                     .convertToFormat(QImage::Format_ARGB32));

        // Visible: setResult rebuilds the panels at once.
        steps->setResult(a);
        QCOMPARE(steps->canvas()->figure()->panelCount(), 3);
        QCOMPARE(steps->canvas()->figure()->panel(StepsRenderer::RawScores).values, &a->scores[1]);
        QCOMPARE(steps->renderer().result(), a);
        QCOMPARE(steps->headSelector()->count(), 2);
    }

    // "Vectors": the head's vectors from the embeddings to the output under the panels, the
    // numbers core's pipeline (tst_pipeline checks them against NumPy), each panel's cell (0, 0)
    // the RdBu_r colour of its value over ±max|·| (matplotlib's table); the panels fit the strip
    // without overlapping; another head recomputes.
    void vectorsStrip()
    {
        SessionParameters p;
        p.n = 6;
        p.dModel = 32;
        p.heads = 4;
        p.positional = true;
        p.seed = 3;
        const ResultPtr result = compute(p);
        StepsView view;
        view.resize(900, 640);
        view.setResult(result);
        view.show();
        QVERIFY(QTest::qWaitForWindowExposed(&view));
        PipelineStrip *strip = view.pipelineStrip();
        QVERIFY(strip->isHidden());
        view.setVectorsShown(true);
        QVERIFY(strip->isVisible());
        QVERIFY(strip->waitForPanels(attn::test::kWorkTimeoutMs));
        const auto &panels = strip->panels();
        QCOMPARE(int(panels.size()), 10); // X, PE, X + PE, q, k, v, weights, head, concat, output
        const AttentionPipeline pipe = attentionPipeline(result->params, result->weights);
        QCOMPARE(panels[0].values, pipe.embeddings);
        QCOMPARE(panels[1].values, pipe.positions);
        QCOMPARE(panels[3].values, pipe.queries[0]);
        QCOMPARE(panels[6].values, result->weights[0]);
        QCOMPARE(panels[7].values, pipe.headOutputs[0]);
        QCOMPARE(panels[9].values, pipe.output);
        for (const auto &panel : panels) {
            if (panel.positionColumns)
                continue;
            const double t = 0.5 + 0.5 * panel.values(0, 0) / panel.limit;
            const int index = std::clamp(int(std::floor(t * 256)), 0, 255);
            const QJsonArray rgb = m_rdbu.at(index).toArray();
            const QRgb expected = qRgb(rgb.at(0).toInt(), rgb.at(1).toInt(), rgb.at(2).toInt());
            QCOMPARE(panel.image.pixel(0, 0), expected);
            QCOMPARE(panel.limit, panel.values.cwiseAbs().maxCoeff());
        }
        // Inside the strip, none over another.
        for (int k = 0; k < int(panels.size()); ++k) {
            const QRectF r = strip->panelRect(k);
            QVERIFY(!r.isEmpty());
            QVERIFY2(QRectF(strip->rect()).contains(r), qPrintable(QString::number(k)));
            for (int j = 0; j < k; ++j)
                QVERIFY(!strip->panelRect(j).intersects(r));
        }
        // Head 2: its query and value.
        view.setHead(2);
        QVERIFY(strip->waitForPanels(attn::test::kWorkTimeoutMs));
        QCOMPARE(strip->panels()[3].values, pipe.queries[2]);
        QCOMPARE(strip->panels()[5].values, pipe.values[2]);
        view.setVectorsShown(false);
        QVERIFY(strip->isHidden());
    }

    // Differential attention's weights A₁ − λA₂ are signed: the strip's weights panel is drawn
    // on RdBu_r over ±their largest |w| (matplotlib's table), a negative weight blue, as the
    // heatmaps draw them — not on the [0, 1] viridis scale, where it would look like 0.
    void vectorsStripSignedWeights()
    {
        SessionParameters p;
        p.n = 6;
        p.dModel = 16;
        p.heads = 2;
        p.differential = true;
        p.lambda = 0.9;
        p.seed = 5;
        const ResultPtr result = compute(p);
        QVERIFY(result->signedWeights);
        StepsView view;
        view.resize(900, 640);
        view.setResult(result);
        view.show();
        QVERIFY(QTest::qWaitForWindowExposed(&view));
        view.setVectorsShown(true);
        PipelineStrip *strip = view.pipelineStrip();
        QVERIFY(strip->waitForPanels(attn::test::kWorkTimeoutMs));
        const PipelineStrip::Panel *weights = nullptr;
        for (const auto &panel : strip->panels())
            if (panel.title == QLatin1String("weights"))
                weights = &panel;
        QVERIFY(weights);
        const MatrixD &w = result->weights[0];
        QCOMPARE(weights->limit, w.cwiseAbs().maxCoeff());
        int negative = 0;
        for (Index i = 0; i < w.rows(); ++i)
            for (Index j = 0; j < w.cols(); ++j) {
                const double t = 0.5 + 0.5 * w(i, j) / weights->limit;
                const int index = std::clamp(int(std::floor(t * 256)), 0, 255);
                const QJsonArray rgb = m_rdbu.at(index).toArray();
                QCOMPARE(weights->image.pixel(int(j), int(i)),
                         qRgb(rgb.at(0).toInt(), rgb.at(1).toInt(), rgb.at(2).toInt()));
                negative += w(i, j) < 0 ? 1 : 0;
            }
        QVERIFY(negative > 0);
    }

    // The titles say what is shown: RoPE's rotated q and k, the grouped key head, the encoder
    // input S of cross-attention (its rows encoder positions); masked weights take the masks'
    // colour (the heatmaps' tile builder), never a weight's.
    void vectorsStripTitles()
    {
        SessionParameters p;
        p.n = 5;
        p.dModel = 16;
        p.heads = 4;
        p.kvHeads = 2;
        p.rope = true;
        p.kind = AttentionKind::DecoderCausal;
        StepsView view;
        view.resize(900, 640);
        const ResultPtr causal = compute(p);
        view.setResult(causal);
        view.show();
        QVERIFY(QTest::qWaitForWindowExposed(&view));
        view.setVectorsShown(true);
        view.setHead(3);
        PipelineStrip *strip = view.pipelineStrip();
        QVERIFY(strip->waitForPanels(attn::test::kWorkTimeoutMs));
        QStringList titles;
        for (const auto &panel : strip->panels())
            titles << panel.title;
        QCOMPARE(titles.mid(1, 3),
                 (QStringList {"q = RoPE(X W_Q) (head 3)", "k = RoPE(X W_K) (kv head 1)",
                               "v = X W_V (kv head 1)"}));
        const auto &weights = strip->panels()[4];
        QCOMPARE(weights.title, QStringLiteral("weights"));
        const QRgb masked = maskColor(ColormapId::Viridis, causal->maskState(0, 1));
        QVERIFY(causal->maskState(0, 1) != 0); // key 1 > query 0: masked
        QCOMPARE(weights.image.pixel(1, 0), masked);
        QCOMPARE(weights.image.pixel(0, 0),
                 Colormap(ColormapId::Viridis).map(causal->weights[3](0, 0)));

        p.kvHeads = 0;
        p.rope = false;
        p.kind = AttentionKind::EncoderDecoder;
        p.nK = 7;
        view.setResult(compute(p));
        QVERIFY(strip->waitForPanels(attn::test::kWorkTimeoutMs));
        QCOMPARE(strip->panels()[1].title, QStringLiteral("encoder input S"));
        QCOMPARE(strip->panels()[1].values.rows(), Index(7));
        QCOMPARE(strip->panels()[3].title, QStringLiteral("k = S W_K"));
        QVERIFY(strip->panels()[3].shape.endsWith(QLatin1String("encoder positions")));
    }
};

QTEST_MAIN(TestStepsView)
#include "tst_stepsview.moc"
