// The Long tab (LongMapView over LongMapTiles) on maps small enough to materialize: the first
// full view, a zoomed view and a panned view export exactly the max- and mean-pooled weights of
// computeSession's materialized weights over the visible window (float64 1e-12, float32 1e-6);
// the tiles drawn carry the colours of those pooled values; zooming and panning compute only the
// tiles that came into sight, and until they arrive the coarser level is drawn; the hover
// readout gives the materialized raw score, scaled score, weight and mask state and names the
// pixel's cell range and pooling; Cancel stops the first full view; the memory budget is refused
// with a message; the state round-trips; the A/B button compares the visible window with B's
// parameters exactly. (The variants, RoPE, ALiBi and g < h: tst_longmapvariants.)

#include "longmaptest.h"

#include "ui/render/colormap.h"
#include "ui/render/figurefile.h"
#include "ui/render/longmaptiles.h"
#include "ui/render/tileimage.h"
#include "ui/session/attentionsession.h"
#include "ui/session/sessioncompute.h"
#include "ui/session/tensorsource.h"
#include "ui/views/attentionviews.h"
#include "ui/views/compareview.h"
#include "ui/views/heatmapwidget.h"
#include "ui/views/longmapview.h"
#include "ui/views/stepsview.h"

#include "ui/svgtext.h"

#include "core/attention/mask.h"
#include "core/io/npy.h"

#include <QImage>
#include <QLabel>
#include <QPushButton>
#include <QSignalSpy>
#include <QSpinBox>
#include <QTemporaryDir>
#include <QTest>

#include <algorithm>
#include <cmath>
#include <limits>
#include <vector>

using namespace attn;
using namespace attn::test::longmap;

class TestLongMap : public QObject
{
    Q_OBJECT

private:
    /// Four heads of 8 dimensions, causal: the sessions whose windows go to Steps and A/B.
    static SessionParameters windowParameters()
    {
        SessionParameters p = smallParameters();
        p.heads = 4;
        p.dModel = 32;
        return p;
    }

    /// `session` with windowParameters() and its Long tab in `views` at n tokens, shown, its
    /// first full view on screen.
    static bool showLongTab(AttentionSession &session, AttentionViews &views, int n)
    {
        session.setParameters(windowParameters());
        if (!QTest::qWaitFor([&] { return session.result() != nullptr; }, 60000))
            return false;
        LongMapView *view = views.longMapView();
        view->setLength(n);
        QSignalSpy shown(view, &LongMapView::fullViewShown);
        views.resize(900, 700);
        views.show();
        views.setCurrentIndex(AttentionViews::LongTab);
        return QTest::qWaitForWindowExposed(&views) && shown.wait(60000);
    }

private slots:
    void initTestCase() { setSessionMemoryBudget(0); }

    void fullZoomedAndPannedViewsEqualMaterialized_data()
    {
        QTest::addColumn<bool>("float32");
        QTest::addColumn<bool>("meanPooling");
        QTest::addColumn<int>("n");
        QTest::newRow("float64 max 1500") << false << false << 1500;
        QTest::newRow("float64 mean 1283") << false << true << 1283;
        QTest::newRow("float32 max 1711") << true << false << 1711;
    }
    void fullZoomedAndPannedViewsEqualMaterialized()
    {
        QFETCH(bool, float32);
        QFETCH(bool, meanPooling);
        QFETCH(int, n);
        SessionParameters p = smallParameters();
        p.dtype = float32 ? DType::Float32 : DType::Float64;
        auto view = std::make_unique<LongMapView>(nullptr, 64);
        view->resize(760, 620);
        view->setParameters(p);
        view->setLength(n);
        view->setPooling(meanPooling ? TilePooling::Mean : TilePooling::Max);
        QSignalSpy shown(view.get(), &LongMapView::fullViewShown);
        view->show();
        QVERIFY(QTest::qWaitForWindowExposed(view.get()));
        QVERIFY(shown.wait(60000));
        QVERIFY(waitFor([&] { return view->viewComplete(); }));

        SessionParameters materialized = view->mapParameters();
        const SessionResult ref = computeSession(materialized);
        QVERIFY2(ref.ok(), qPrintable(ref.error));
        const double tol = float32 ? 1e-6 : 1e-12;
        // The full view: the level that fits, every head pooled.
        QVERIFY(view->level() >= 1);
        checkExport(*view, ref, tol, "full view");
        checkTileColours(*view, ref);
        QVERIFY(view->statusText().contains(meanPooling ? QStringLiteral("mean pooling")
                                                        : QStringLiteral("max pooling")));

        // Zoomed in about a point: a finer level; only its tiles are computed, coarse first.
        const int before = view->level();
        const quint64 computedBefore = view->tiles()->stats().tilesComputed;
        const QRectF area = view->mapArea();
        view->zoomAt(area.center() + QPointF(40, 30), 6.0);
        QVERIFY(view->level() < before);
        QVERIFY(!view->viewComplete());
        QVERIFY(waitFor([&] { return view->viewComplete(); }));
        const quint64 zoomTiles = view->tiles()->stats().tilesComputed - computedBefore;
        const TilePyramid &pyramid = *view->tiles()->pyramid();
        QCOMPARE(zoomTiles, quint64(pyramid.tilesCovering(view->level(), view->viewRect()).size()));
        checkExport(*view, ref, tol, "zoomed");
        checkTileColours(*view, ref);

        // Panned by a third of the view: only the tiles that came into sight are computed.
        const auto oldTiles = pyramid.tilesCovering(view->level(), view->viewRect());
        const quint64 computedPan = view->tiles()->stats().tilesComputed;
        view->panBy(QPointF(-area.width() / 3, -area.height() / 4));
        QVERIFY(waitFor([&] { return view->viewComplete(); }));
        quint64 fresh = 0;
        for (const TileIndex &t : pyramid.tilesCovering(view->level(), view->viewRect()))
            if (std::find(oldTiles.begin(), oldTiles.end(), t) == oldTiles.end())
                ++fresh;
        QCOMPARE(view->tiles()->stats().tilesComputed - computedPan, fresh);
        checkExport(*view, ref, tol, "panned");

        // The mean over heads.
        view->setHead(kHeadMean);
        QVERIFY(waitFor([&] { return view->viewComplete(); }));
        checkTileColours(*view, ref);
    }

    // Zooming about a point keeps the cell under it, also from the fitted view of a map that is
    // shorter than the view (here the view is taller than wide) and at the map's corner.
    void zoomKeepsTheCellUnderThePointer()
    {
        auto view = std::make_unique<LongMapView>(nullptr, 16);
        view->resize(420, 760);
        view->setParameters(smallParameters());
        view->setLength(2000);
        QSignalSpy shown(view.get(), &LongMapView::fullViewShown);
        view->show();
        QVERIFY(QTest::qWaitForWindowExposed(view.get()));
        QVERIFY(shown.wait(60000));
        const auto cellAt = [&](QPointF p) {
            const QRectF area = view->mapArea();
            const CellRect v = view->viewRect();
            const double s = v.cols() / area.width();
            return QPointF(v.colBegin + (p.x() - area.left()) * s,
                           v.rowBegin + (p.y() - area.top()) * s);
        };
        const QRectF area = view->mapArea();
        const CellRect fit = view->viewRect();
        QVERIFY(fit.rowBegin < 0); // the map is shorter than the view
        // The map's top-left corner on screen, and a point inside it.
        const double s = fit.cols() / area.width();
        const QPointF corner(area.left() + (0 - fit.colBegin) / s + 0.5,
                             area.top() + (0 - fit.rowBegin) / s + 0.5);
        for (const QPointF &at : {corner, corner + QPointF(100, 150)}) {
            view->fit();
            const QPointF before = cellAt(at);
            for (int notch = 0; notch < 6; ++notch) {
                view->zoomAt(at, 1.25);
                const QPointF now = cellAt(at);
                const double pixel = view->viewRect().cols() / area.width();
                const auto text = [](QPointF c) {
                    return QStringLiteral("(query %1, key %2)").arg(c.y()).arg(c.x());
                };
                QVERIFY2(std::abs(now.x() - before.x()) <= pixel
                             && std::abs(now.y() - before.y()) <= pixel,
                         qPrintable(text(before) + QStringLiteral(" moved to ") + text(now)));
            }
        }
    }

    // Switching the pooling of a computed map keeps the zoom and the row statistics: no first
    // full view again, the visible tiles pooled anew, exactly.
    void poolingSwitchKeepsTheView()
    {
        auto view = makeView(smallParameters(), 700);
        QVERIFY(view);
        const SessionResult ref = computeSession(view->mapParameters());
        QVERIFY2(ref.ok(), qPrintable(ref.error));
        view->zoomAt(view->mapArea().center(), 3.0);
        QVERIFY(waitFor([&] { return view->viewComplete(); }));
        const CellRect before = view->viewRect();
        QSignalSpy shown(view.get(), &LongMapView::fullViewShown);
        view->setPooling(TilePooling::Mean);
        QCOMPARE(view->tiles()->pooling(), TilePooling::Mean);
        QVERIFY(view->tiles()->isReady());
        QVERIFY(waitFor([&] { return view->viewComplete(); }));
        QCOMPARE(shown.count(), 0);
        QCOMPARE(view->viewRect().rowBegin, before.rowBegin);
        QCOMPARE(view->viewRect().colEnd, before.colEnd);
        checkExport(*view, ref, 1e-12, "mean after max");
        checkTileColours(*view, ref);
        view->setPooling(TilePooling::Max);
        QVERIFY(waitFor([&] { return view->viewComplete(); }));
        QCOMPARE(shown.count(), 0);
        checkExport(*view, ref, 1e-12, "max again");
        checkTileColours(*view, ref);
    }

    // A window of masked keys only (above a causal diagonal) exports its pixels as masked but
    // no row as fully masked: those queries attend to the keys left of the window.
    void windowOfMaskedKeysHasNoFullyMaskedRow()
    {
        auto view = makeView(smallParameters(), 300);
        QVERIFY(view);
        view->setViewRect({0, 60, 200, 260});
        QVERIFY(waitFor([&] { return view->viewComplete(); }));
        QTemporaryDir dir;
        const QString path = dir.filePath(QStringLiteral("masked.npz"));
        QSignalSpy done(view.get(), &LongMapView::exported);
        view->exportWindow(path);
        QVERIFY(done.wait(60000));
        QVERIFY2(done.first().at(1).toString().isEmpty(),
                 qPrintable(done.first().at(1).toString()));
        const NpyArray states = readNpzMember(path.toStdString(), "mask_state");
        const NpyArray rows = readNpzMember(path.toStdString(), "fully_masked");
        QVERIFY(!states.values.empty() && !rows.values.empty());
        for (double v : states.values)
            QVERIFY(v != 0);
        for (double v : rows.values)
            QCOMPARE(v, 0.0);
        const SessionResult ref = computeSession(view->mapParameters());
        checkExport(*view, ref, 1e-12, "masked window");
    }

    // An exported figure keeps the colours on screen: its colour bar spans the tiles' range
    // ([0, max weight], [0, 1], or five decades below the largest weight).
    void exportedFigureKeepsTheScreensColours_data()
    {
        QTest::addColumn<int>("scale");
        QTest::newRow("0 … max weight") << int(LongMapView::Scale::MaxWeight);
        QTest::newRow("0 … 1") << int(LongMapView::Scale::Unit);
        QTest::newRow("log") << int(LongMapView::Scale::Log);
    }
    void exportedFigureKeepsTheScreensColours()
    {
        QFETCH(int, scale);
        SessionParameters p = smallParameters();
        p.mask = MaskChoice::None; // a causal first row has weight 1
        auto view = makeView(p, 300);
        QVERIFY(view);
        view->setScale(LongMapView::Scale(scale));
        const ColorNorm norm = view->tiles()->norm();
        QVERIFY(norm.vmax > 0 && norm.vmax <= 1);
        if (LongMapView::Scale(scale) != LongMapView::Scale::Unit)
            QVERIFY(norm.vmax < 1);
        QTemporaryDir dir;
        const QString path = dir.filePath(QStringLiteral("window.svg"));
        QSignalSpy done(view.get(), &LongMapView::exported);
        view->exportWindow(path, QSize(640, 480));
        QVERIFY(done.wait(60000));
        QVERIFY2(done.first().at(1).toString().isEmpty(),
                 qPrintable(done.first().at(1).toString()));
        const test::SvgTexts svg = test::readSvgTextsFile(path);
        QVERIFY2(svg.error.isEmpty(), qPrintable(svg.error));
        const QString words = svg.texts.join(QLatin1Char(' '));
        const QString range
            = QStringLiteral("%1 [%2, %3]")
                  .arg(LongMapView::Scale(scale) == LongMapView::Scale::Unit
                           ? QStringLiteral("fixed")
                           : QStringLiteral("to max weight"),
                       figure::formatTick(norm.vmin), figure::formatTick(norm.vmax));
        QVERIFY2(words.contains(range), qPrintable(range + QStringLiteral(" not in ") + words));
    }

    /// A PNG export draws masked cells as the tab does and its legend as the cells: the whole
    /// map's pooled pixels flat in the causal mask colour, its legend swatch flat too (no hatch
    /// line in it). (Big cells, hatched in the map and the legend: tst_heatmaprenderer.)
    void exportedMaskLegendMatchesTheCells()
    {
        const SessionParameters p = smallParameters(); // causal
        auto view = makeView(p, 2000);
        QVERIFY(view);
        const QRgb flat = maskColor(view->tiles()->colormap(), MaskCausal);
        const QRgb hatch = figure::hatchColor(flat).rgb();
        const auto same = [](QRgb a, QRgb b) { return (a & 0xffffff) == (b & 0xffffff); };
        // The legend's swatch: right of the map (whose masked cells reach its right edge in the
        // middle row), the columns and rows mostly of the mask colour (antialiased text has a
        // few pixels of it too).
        const auto swatch = [&](const QImage &image) {
            int mapRight = 0;
            for (int x = 0; x < image.width(); ++x)
                if (same(image.pixel(x, image.height() / 2), flat))
                    mapRight = x;
            std::vector<int> perColumn(std::size_t(image.width()), 0);
            for (int y = 0; y < image.height(); ++y)
                for (int x = mapRight + 8; x < image.width(); ++x)
                    perColumn[std::size_t(x)] += same(image.pixel(x, y), flat);
            const int most = *std::max_element(perColumn.begin(), perColumn.end());
            QRect box;
            for (int x = mapRight + 8; x < image.width(); ++x) {
                if (most < 10 || perColumn[std::size_t(x)] < most / 2)
                    continue;
                for (int y = 0; y < image.height(); ++y)
                    if (same(image.pixel(x, y), flat)) {
                        int inRow = 0;
                        for (int u = mapRight + 8; u < image.width(); ++u)
                            inRow += perColumn[std::size_t(u)] >= most / 2
                                && same(image.pixel(u, y), flat);
                        if (inRow >= 5)
                            box |= QRect(x, y, 1, 1);
                    }
            }
            return box;
        };
        const auto count = [&](const QImage &image, const QRect &box, QRgb c) {
            qint64 n = 0;
            for (int y = box.top(); y <= box.bottom(); ++y)
                for (int x = box.left(); x <= box.right(); ++x)
                    n += same(image.pixel(x, y), c);
            return n;
        };
        QTemporaryDir dir;
        const auto exportPng = [&](const QString &name) {
            const QString path = dir.filePath(name);
            QSignalSpy done(view.get(), &LongMapView::exported);
            view->exportWindow(path, QSize(600, 550), 2);
            if (!done.wait(60000) || !done.first().at(1).toString().isEmpty())
                return QImage();
            return QImage(path);
        };
        const QImage whole = exportPng(QStringLiteral("whole.png"));
        QVERIFY(!whole.isNull());
        QVERIFY(count(whole, whole.rect(), flat) > 10000); // the masked half, flat
        const QRect wholeSwatch = swatch(whole);
        QVERIFY(wholeSwatch.width() >= 10 && wholeSwatch.height() >= 10);
        QVERIFY(wholeSwatch.left() > whole.width() * 3 / 4);
        QCOMPARE(count(whole, wholeSwatch, hatch), qint64(0));
    }

    void hoverComputesTheCell()
    {
        const SessionParameters p = smallParameters();
        auto view = makeView(p, 200);
        QVERIFY(view);
        const SessionResult ref = computeSession(view->mapParameters());
        QVERIFY(ref.ok());
        view->zoomAt(view->mapArea().center(), 4.0);
        const QRectF area = view->mapArea();
        const QPoint pos
            = (area.topLeft() + QPointF(area.width() * 0.7, area.height() * 0.6)).toPoint();
        const std::pair<Index, Index> cell = view->cellAt(pos);
        const Index i = cell.first, j = cell.second;
        QVERIFY(i >= 0 && j >= 0);
        QSignalSpy hovered(view.get(), &LongMapView::hoverChanged);
        QSignalSpy strip(view.get(), &LongMapView::rowStripChanged);
        QTest::mouseMove(view->canvas(), pos);
        QVERIFY(waitFor([&] {
            return !view->hoverText().contains(QStringLiteral("computing"))
                && !view->hoverText().isEmpty();
        }));
        const QString text = view->hoverText();
        const auto num = [](double v) { return figure::minusSign(QString::number(v, 'g', 6)); };
        const double raw = ref.scores[0](i, j), weight = ref.weights[0](i, j);
        QVERIFY2(text.contains(QStringLiteral("query %1, key %2").arg(i).arg(j)), qPrintable(text));
        QVERIFY2(text.contains(QStringLiteral("raw score %1").arg(num(raw))), qPrintable(text));
        QVERIFY2(text.contains(QStringLiteral("weight %1").arg(num(weight))), qPrintable(text));
        const bool masked = ref.maskState(i, j) != 0;
        QVERIFY(text.contains(masked ? QStringLiteral("masked") : QStringLiteral("allowed")));
        if (!masked)
            QVERIFY(text.contains(
                QStringLiteral("scaled score %1").arg(num(ref.scaledScores[0](i, j)))));
        const Index per = TilePyramid::cellsPerPixel(view->level());
        const Index r0 = i / per * per, c0 = j / per * per;
        if (per > 1)
            QVERIFY2(text.contains(
                         QStringLiteral("queries %1–%2 × keys %3–%4; the map shows the largest of")
                             .arg(r0)
                             .arg(std::min<Index>(199, r0 + per - 1))
                             .arg(c0)
                             .arg(std::min<Index>(199, c0 + per - 1))),
                     qPrintable(text));
        else
            QVERIFY(text.contains(QStringLiteral("one cell")));

        // The row strip: query i's weights over the visible keys, max-pooled as the map.
        QVERIFY(waitFor([&] { return view->rowStrip().query == i; }));
        const LongRowStrip &row = view->rowStrip();
        const TileWindow w = view->visibleWindow();
        QCOMPARE(row.colBegin, w.colBegin);
        QCOMPARE(row.colEnd, w.colEnd);
        const MatrixD expected = poolReference(ref.weights[0], ref.maskState, i, i + 1, w.colBegin,
                                               w.colEnd, 1, row.colsPerPixel, true);
        QCOMPARE(Index(row.values.size()), expected.cols());
        for (Index x = 0; x < expected.cols(); ++x)
            QVERIFY2(std::abs(row.values[std::size_t(x)] - expected(0, x)) <= 1e-12,
                     qPrintable(QStringLiteral("x %1: %2 vs %3, per %4, i %5, cols %6-%7")
                                    .arg(x)
                                    .arg(row.values[std::size_t(x)])
                                    .arg(expected(0, x))
                                    .arg(row.colsPerPixel)
                                    .arg(i)
                                    .arg(w.colBegin)
                                    .arg(w.colEnd)));
        // Panning keeps the strip on the same query, over the new keys.
        view->panBy(QPointF(view->mapArea().width() / 5, 0));
        QVERIFY(
            waitFor([&] { return view->rowStrip().colBegin == view->visibleWindow().colBegin; }));
        QCOMPARE(view->rowStrip().query, i);
    }

    /// Fit pressed after a hover (the pointer has left the map for the button): the row strip
    /// shows the same query over every key at once, its values those of the materialized row.
    void rowStripFollowsFit()
    {
        const SessionParameters p = smallParameters();
        auto view = makeView(p, 200);
        QVERIFY(view);
        const SessionResult ref = computeSession(view->mapParameters());
        QVERIFY(ref.ok());
        view->zoomAt(view->mapArea().center(), 4.0);
        const QRectF area = view->mapArea();
        const QPoint pos
            = (area.topLeft() + QPointF(area.width() * 0.6, area.height() * 0.7)).toPoint();
        const Index i = view->cellAt(pos).first;
        QVERIFY(i >= 0);
        QTest::mouseMove(view->canvas(), pos);
        QVERIFY(waitFor([&] { return view->rowStrip().query == i; }));
        const Index zoomedBegin = view->rowStrip().colBegin;
        QVERIFY(zoomedBegin > 0); // zoomed in: the strip starts past key 0
        // The pointer leaves the map for the Fit button.
        QEvent leave(QEvent::Leave);
        QCoreApplication::sendEvent(view->canvas(), &leave);
        QVERIFY(view->hoverText().isEmpty());
        auto *fit = view->findChild<QPushButton *>(QStringLiteral("longFitButton"));
        QVERIFY(fit);
        QTest::mouseClick(fit, Qt::LeftButton);
        const TileWindow w = view->visibleWindow();
        QCOMPARE(w.colBegin, Index(0));
        QCOMPARE(w.colEnd, Index(200));
        QVERIFY(waitFor(
            [&] {
                return view->rowStrip().colBegin == w.colBegin
                    && view->rowStrip().colEnd == w.colEnd;
            },
            10000));
        const LongRowStrip &row = view->rowStrip();
        QCOMPARE(row.query, i);
        const MatrixD expected = poolReference(ref.weights[0], ref.maskState, i, i + 1, 0, 200, 1,
                                               row.colsPerPixel, true);
        QCOMPARE(Index(row.values.size()), expected.cols());
        for (Index x = 0; x < expected.cols(); ++x)
            QVERIFY(std::abs(row.values[std::size_t(x)] - expected(0, x)) <= 1e-12);
    }

    /// The Steps button of a window zoomed to at most 256 × 256 cells shows exactly its weights,
    /// raw and scaled scores, mask states and each row's metrics over every key in the Steps tab.
    void stepsGetTheWindowExactly()
    {
        AttentionSession session;
        AttentionViews views(new HeatmapWidget, &session);
        QVERIFY(showLongTab(session, views, 1000));
        LongMapView *view = views.longMapView();
        auto *steps = view->findChild<QPushButton *>(QStringLiteral("longStepsButton"));
        QVERIFY(steps);
        QVERIFY(!steps->isEnabled()); // the whole map is too large for Steps
        view->setHead(2);
        view->setViewRect({400, 520, 300, 450});
        const TileWindow w = view->visibleWindow();
        QVERIFY(w.rows() <= LongMapView::maxStepsSide && w.cols() <= LongMapView::maxStepsSide);
        QVERIFY(steps->isEnabled());
        QSignalSpy opened(view, &LongMapView::windowMaterialized);
        QTest::mouseClick(steps, Qt::LeftButton);
        QVERIFY(opened.wait(60000));
        QCOMPARE(views.currentIndex(), int(AttentionViews::StepsTab));
        const auto r = views.stepsView()->result();
        QVERIFY(r);
        QCOMPARE(views.stepsView()->head(), 2);

        const SessionResult ref = computeSession(view->mapParameters());
        QVERIFY(ref.ok());
        QCOMPARE(r->headCount(), 4);
        QCOMPARE(r->queryCount(), w.rows());
        QCOMPARE(r->keyCount(), w.cols());
        QCOMPARE(r->originalQuery(0), int(w.rowBegin));
        QCOMPARE(r->originalKey(0), int(w.colBegin));
        QVERIFY(r->maskState == ref.maskState.block(w.rowBegin, w.colBegin, w.rows(), w.cols()));
        for (int h = 0; h < 4; ++h) {
            const auto block = [&](const MatrixD &m) {
                return MatrixD(m.block(w.rowBegin, w.colBegin, w.rows(), w.cols()));
            };
            QVERIFY((r->weights[std::size_t(h)] - block(ref.weights[std::size_t(h)]))
                        .cwiseAbs()
                        .maxCoeff()
                    <= 1e-12);
            QVERIFY((r->scores[std::size_t(h)] - block(ref.scores[std::size_t(h)]))
                        .cwiseAbs()
                        .maxCoeff()
                    <= 1e-12);
            const MatrixD scaled = block(ref.scaledScores[std::size_t(h)]);
            for (Index i = 0; i < scaled.rows(); ++i)
                for (Index j = 0; j < scaled.cols(); ++j) {
                    const double a = r->scaledScores[std::size_t(h)](i, j), b = scaled(i, j);
                    QVERIFY(std::isinf(b) ? a == b : std::abs(a - b) <= 1e-12);
                }
            const RowMetrics &m = r->metrics[std::size_t(h)];
            const RowMetrics &mr = ref.metrics[std::size_t(h)];
            QVERIFY((m.entropy - mr.entropy.segment(w.rowBegin, w.rows())).cwiseAbs().maxCoeff()
                    <= 1e-12);
            QVERIFY((m.maxWeight - mr.maxWeight.segment(w.rowBegin, w.rows())).cwiseAbs().maxCoeff()
                    <= 1e-12);
            QVERIFY((m.jacobianNorm - mr.jacobianNorm.segment(w.rowBegin, w.rows()))
                        .cwiseAbs()
                        .maxCoeff()
                    <= 1e-12);
        }
        QVERIFY((r->weightsMean - ref.weightsMean.block(w.rowBegin, w.colBegin, w.rows(), w.cols()))
                    .cwiseAbs()
                    .maxCoeff()
                <= 1e-12);
        QVERIFY(r->viewNote.contains(QStringLiteral("long map")));
    }

    /// The A/B button of a window zoomed to at most 256 × 256 cells makes it A of the Compare
    /// A/B tab, and B is the same window computed for B's parameters: both equal the window of
    /// computeSession's materialized weights (A's parameters and B's), with B's row metrics
    /// over every key; a changed B is computed again for the window, a changed map refuses B,
    /// and the session's next result ends the window comparison.
    void compareGetsTheWindowExactly()
    {
        AttentionSession session;
        AttentionViews views(new HeatmapWidget, &session);
        QVERIFY(showLongTab(session, views, 900));
        LongMapView *view = views.longMapView();
        QSignalSpy shown(view, &LongMapView::fullViewShown);
        auto *ab = view->findChild<QPushButton *>(QStringLiteral("longCompareButton"));
        QVERIFY(ab);
        QVERIFY(!ab->isEnabled()); // the whole map is too large to compare cell by cell
        view->setHead(1);
        view->setViewRect({610, 700, 100, 250});
        const TileWindow w = view->visibleWindow();
        QVERIFY(w.rows() <= LongMapView::maxStepsSide && w.cols() <= LongMapView::maxStepsSide);
        QVERIFY(ab->isEnabled());
        CompareView *compare = views.compareView();
        QSignalSpy compared(compare, &CompareView::comparisonChanged);
        QTest::mouseClick(ab, Qt::LeftButton);
        QVERIFY(compared.wait(60000));
        QCOMPARE(views.currentIndex(), int(AttentionViews::CompareTab));
        QVERIFY(compare->comparesWindow());
        QCOMPARE(compare->head(), 1);

        const auto block = [&](const MatrixD &m) {
            return MatrixD(m.block(w.rowBegin, w.colBegin, w.rows(), w.cols()));
        };
        const auto checkWindow = [&](const SessionResult &r, const SessionParameters &params) {
            const SessionResult ref = computeSession(params);
            QVERIFY(ref.ok());
            QCOMPARE(r.params, params);
            QCOMPARE(r.queryCount(), w.rows());
            QCOMPARE(r.keyCount(), w.cols());
            QCOMPARE(r.originalQuery(0), int(w.rowBegin));
            QCOMPARE(r.originalKey(0), int(w.colBegin));
            QVERIFY(r.maskState == ref.maskState.block(w.rowBegin, w.colBegin, w.rows(), w.cols()));
            for (std::size_t h = 0; h < 4; ++h) {
                QVERIFY((r.weights[h] - block(ref.weights[h])).cwiseAbs().maxCoeff() <= 1e-12);
                QVERIFY(
                    (r.metrics[h].entropy - ref.metrics[h].entropy.segment(w.rowBegin, w.rows()))
                        .cwiseAbs()
                        .maxCoeff()
                    <= 1e-12);
            }
            QVERIFY((r.weightsMean - block(ref.weightsMean)).cwiseAbs().maxCoeff() <= 1e-12);
        };
        const auto a = compare->renderer().resultA();
        const auto b = compare->renderer().resultB();
        QVERIFY(a && b);
        const SessionParameters pa = view->mapParameters();
        checkWindow(*a, pa);
        // B follows A with the scale toggled: unscaled.
        QCOMPARE(b->params.scaleExponent, 0.0);
        checkWindow(*b, *compare->parametersB());
        if (QTest::currentTestFailed())
            return;
        QVERIFY((b->weights[1] - a->weights[1]).cwiseAbs().maxCoeff() > 1e-3);

        // A different d_k (so other inputs) and no mask: B's window again, exactly.
        CompareVariant v = compare->variant();
        v.dK = 4;
        v.mask = CompareVariant::Mask::None;
        compare->setVariant(v);
        QVERIFY(compared.wait(60000));
        const auto b2 = compare->renderer().resultB();
        QVERIFY(b2 && b2 != b);
        QCOMPARE(b2->params.dModel, 16);
        checkWindow(*b2, *compare->parametersB());
        QVERIFY(compare->statusLabel()->text().contains(QStringLiteral("long map")));

        // The map computed again for another n: B of the old window is refused, by name.
        views.setCurrentIndex(AttentionViews::LongTab);
        view->setLength(700);
        view->recompute();
        QVERIFY(shown.wait(60000));
        v.temperature = 2;
        compare->setVariant(v);
        QTRY_VERIFY(compare->statusLabel()->text().contains(QStringLiteral("changed")));
        QVERIFY(!compare->renderer().resultB()); // the old B (τ = 1) is not drawn as this B

        // The session's next result is A again.
        SessionParameters p = windowParameters();
        p.seed = 8;
        session.setParameters(p);
        QTRY_VERIFY(!compare->comparesWindow());
    }

    void cancelStopsTheFirstFullView()
    {
        SessionParameters p = smallParameters();
        p.dModel = 64;
        p.heads = 4;
        LongMapView view(nullptr, 64);
        view.resize(700, 600);
        view.setParameters(p);
        view.setLength(16384);
        QSignalSpy shown(&view, &LongMapView::fullViewShown);
        QSignalSpy cancelled(view.tiles(), &LongMapTiles::cancelled);
        view.show();
        QVERIFY(QTest::qWaitForWindowExposed(&view));
        QVERIFY(waitFor([&] { return view.tiles()->isComputingFullView(); }, 5000));
        auto *cancel = view.findChild<QPushButton *>(QStringLiteral("longCancelButton"));
        QVERIFY(cancel && cancel->isVisible());
        QTest::mouseClick(cancel, Qt::LeftButton);
        QCOMPARE(cancelled.count(), 1);
        QVERIFY(!view.tiles()->isComputingFullView());
        QVERIFY(!view.tiles()->isReady());
        QTest::qWait(300);
        QCOMPARE(shown.count(), 0);
        QVERIFY(view.statusText().contains(QStringLiteral("Cancelled")));
        // A smaller map afterwards is computed as usual.
        view.setLength(300);
        QVERIFY(shown.wait(60000));
    }

    /// Opened inputs are drawn from the file's own queries, keys and mask, at the file's n_q ×
    /// n_k (the view's n does not apply): the exported window equals computeTensorSession's
    /// weights — with the file's learned sinks and differential attention (query2, key2,
    /// lambda) too. Stored weights have no queries and keys: the tab says so and draws nothing.
    void openedTensorsAreDrawnFromTheFile_data()
    {
        QTest::addColumn<QString>("fixture");
        for (const char *name :
             {"torch/self_attn", "torch/key_padding", "torch/cross_causal_padding", "torch/plain",
              "torch/additive_mask", "variants/compute_sink_plain_float32",
              "variants/compute_differential_gated"})
            QTest::newRow(name) << QString::fromLatin1(name);
    }

    void openedTensorsAreDrawnFromTheFile()
    {
        QFETCH(QString, fixture);
        const QString path = QStringLiteral(ATTN_FIXTURE_DIR "/%1.npz").arg(fixture);
        QString error;
        const std::shared_ptr<const TensorSource> source
            = makeTensorSource(readTensorFile(path), {}, MaskConvention::Masked, &error);
        QVERIFY2(source, qPrintable(error));
        const SessionParameters p = source->parametersFor(SessionParameters {}, source);
        const SessionResult ref = computeTensorSession(p);
        QVERIFY2(ref.ok(), qPrintable(ref.error));
        auto view = makeView(p, 3000);
        QVERIFY2(view, qPrintable(fixture));
        QCOMPARE(view->mapParameters().queryCount(), ref.queryCount());
        QCOMPARE(view->mapParameters().keyCount(), ref.keyCount());
        QVERIFY(!view->findChild<QSpinBox *>(QStringLiteral("longLengthSpin"))->isEnabled());
        checkExport(*view, ref, 1e-12, qPrintable(fixture));
    }

    /// Tensors opened over the seeded inputs show the file's length in the disabled field; the
    /// length set for the seeded inputs is the one saved meanwhile and comes back with them (it
    /// stayed at the file's).
    void lengthSurvivesOpenedTensors()
    {
        const QString path = QStringLiteral(ATTN_FIXTURE_DIR "/torch/self_attn.npz");
        QString error;
        const std::shared_ptr<const TensorSource> source
            = makeTensorSource(readTensorFile(path), {}, MaskConvention::Masked, &error);
        QVERIFY2(source, qPrintable(error));
        SessionParameters seeded;
        seeded.n = 8;
        LongMapView view(nullptr, 16);
        view.setParameters(seeded);
        view.setLength(700);
        auto *field = view.findChild<QSpinBox *>(QStringLiteral("longLengthSpin"));
        QVERIFY(field);
        const SessionParameters opened = source->parametersFor(seeded, source);
        view.setParameters(opened);
        QCOMPARE(field->value(), int(opened.n));
        QVERIFY(!field->isEnabled());
        QCOMPARE(view.state().value(QStringLiteral("n")).toInt(), 700);
        view.setParameters(seeded);
        QVERIFY(field->isEnabled());
        QCOMPARE(field->value(), 700);
        QCOMPARE(view.mapParameters().n, Index(700));
    }

    void storedWeightsAreRefused()
    {
        const QString path = QStringLiteral(ATTN_FIXTURE_DIR "/modelstack/stack.npz");
        QString error;
        const std::shared_ptr<const TensorSource> source
            = makeTensorSource(readTensorFile(path), {}, MaskConvention::Masked, &error);
        QVERIFY2(source && source->isWeights(), qPrintable(error));
        LongMapView view(nullptr, 16);
        view.resize(700, 600);
        view.setParameters(source->parametersFor(SessionParameters {}, source));
        view.show();
        QVERIFY(QTest::qWaitForWindowExposed(&view));
        QVERIFY(waitFor(
            [&] { return view.statusText().contains(QStringLiteral("stored weights")); }, 5000));
        QVERIFY2(view.statusText().contains(QStringLiteral("stored weights")),
                 qPrintable(view.statusText()));
        QVERIFY2(view.statusText().contains(QStringLiteral("stack.npz")),
                 qPrintable(view.statusText()));
        QVERIFY(!view.tiles()->isReady());
    }

    // The status line's level and cells per pixel follow the view when the window is resized
    // (they kept the first size's, while the hover gave the new level's pixel).
    void statusFollowsAResize()
    {
        auto view = makeView(smallParameters(), 4096);
        QVERIFY(view);
        const auto says = [&] {
            const Index per = TilePyramid::cellsPerPixel(view->level());
            return view->statusText().contains(QStringLiteral("of %1 \u00d7 %1 cells per pixel "
                                                              "(level %2)")
                                                   .arg(per)
                                                   .arg(view->level()));
        };
        QVERIFY2(says(), qPrintable(view->statusText()));
        const int before = view->level();
        view->resize(1500, 1100);
        QTRY_VERIFY(view->level() != before);
        QTRY_VERIFY2(says(), qPrintable(view->statusText()));
    }

    void refusalsNameTheProblem()
    {
        SessionParameters p = smallParameters();
        LongMapView view(nullptr, 16);
        view.resize(700, 600);
        view.setParameters(p);
        view.setLength(20000);
        setSessionMemoryBudget(std::size_t(8) << 20); // 8 MiB
        view.show();
        QVERIFY(QTest::qWaitForWindowExposed(&view));
        QVERIFY(waitFor([&] { return view.statusText().contains(QStringLiteral("budget")); }));
        QVERIFY2(view.statusText().contains(QStringLiteral("tile engine")),
                 qPrintable(view.statusText()));
        setSessionMemoryBudget(0);
    }

    void stateRoundTrips()
    {
        SessionParameters p = smallParameters();
        LongMapView a(nullptr, 16), b(nullptr, 16);
        a.setParameters(p);
        b.setParameters(p);
        a.setLength(1234);
        a.setPooling(TilePooling::Mean);
        a.setScale(LongMapView::Scale::Log);
        a.setHead(kHeadMean);
        b.setState(a.state());
        QCOMPARE(b.length(), 1234);
        QCOMPARE(b.pooling(), TilePooling::Mean);
        QCOMPARE(b.head(), kHeadMean);
        QCOMPARE(b.state(), a.state());
        // Out-of-range values are ignored.
        QJsonObject bad = a.state();
        bad.insert(QStringLiteral("n"), 999999);
        bad.insert(QStringLiteral("head"), 7);
        bad.insert(QStringLiteral("pooling"), QStringLiteral("median"));
        b.setState(bad);
        QCOMPARE(b.length(), 1234);
        QCOMPARE(b.head(), kHeadMean);
        QCOMPARE(b.pooling(), TilePooling::Mean);
    }
};

QTEST_MAIN(TestLongMap)
#include "tst_longmap.moc"
