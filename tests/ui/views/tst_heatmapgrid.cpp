// The heads grid with many heads, many tokens and non-square maps: tiles keep a minimum map
// size and the widget scrolls (h = 16, h = 32 at a window-like size), "Stretch to fit" fills a
// tile whatever the cell ratio while the default keeps square cells and widens a sliver, and the
// axis labels carry their positions ("3:the"), first and last included, at a regular step,
// never overlapping. Sorting the heads by mean entropy or max weight, the pinned query's
// outline at its row's cell bounds, copying a cell or row from the hover, and SVG cells as
// rectangles in the colormap's colours.

#include "ui/document/sessionfile.h"
#include "ui/handmaderesult.h"
#include "ui/render/figurefile.h"
#include "ui/render/heatmaprenderer.h"
#include "ui/session/attentionsession.h"
#include "ui/views/attentionviews.h"
#include "ui/views/heatmapactions.h"
#include "ui/views/heatmapwidget.h"

#include "core/attention/mask.h"

#include <QAction>
#include <QApplication>
#include <QCheckBox>
#include <QClipboard>
#include <QComboBox>
#include <QFontMetricsF>
#include <QGuiApplication>
#include <QLineEdit>
#include <QPushButton>
#include <QScrollBar>
#include <QSignalSpy>
#include <QTemporaryDir>
#include <QTest>
#include <QVBoxLayout>
#include <QWheelEvent>
#include <QXmlStreamReader>

#include <limits>

using namespace attn;

namespace {

using attn::test::makeResult;

// A weight that differs between heads, rows and columns and stays in [0, 1].
double weight(int h, int i, int j)
{
    return 0.05 + 0.9 * ((h * 7 + i * 3 + j) % 11) / 10.0;
}

// Three heads of 2 × 4 with known mean row entropies and max weights: head 0 uniform (ln 4,
// 0.25), head 1 one-hot (0, 1), head 2 two halves (ln 2, 0.5).
double sortWeight(int h, int i, int j)
{
    if (h == 0)
        return 0.25;
    if (h == 1)
        return j == i ? 1.0 : 0.0;
    return (j + i) % 2 == 0 ? 0.5 : 0.0;
}

/// One <rect> of an SVG with the fill of the group it is in.
struct SvgRect
{
    QRectF rect;
    QString fill;
};

QVector<SvgRect> svgRects(const QByteArray &bytes)
{
    QVector<SvgRect> rects;
    QStringList fills {QString()};
    QXmlStreamReader xml(bytes);
    while (!xml.atEnd()) {
        const auto token = xml.readNext();
        if (token == QXmlStreamReader::StartElement) {
            const auto a = xml.attributes();
            if (xml.name() == QLatin1String("g"))
                fills << (a.hasAttribute(QLatin1String("fill"))
                              ? a.value(QLatin1String("fill")).toString()
                              : fills.last());
            else if (xml.name() == QLatin1String("rect"))
                rects.append({QRectF(a.value(QLatin1String("x")).toDouble(),
                                     a.value(QLatin1String("y")).toDouble(),
                                     a.value(QLatin1String("width")).toDouble(),
                                     a.value(QLatin1String("height")).toDouble()),
                              a.hasAttribute(QLatin1String("fill"))
                                  ? a.value(QLatin1String("fill")).toString()
                                  : fills.last()});
        } else if (token == QXmlStreamReader::EndElement && xml.name() == QLatin1String("g")) {
            fills.removeLast();
        }
    }
    return rects;
}

/// The number of tiles in the layout's first row.
int firstRowTiles(const HeatmapLayout &lay)
{
    int columns = 0;
    for (const HeatmapLayout::Tile &tile : lay.tiles)
        columns += qFuzzyCompare(tile.frame.top(), lay.tiles.first().frame.top());
    return columns;
}

QRgb pixelAt(const QImage &image, QPointF logical)
{
    const qreal dpr = image.devicePixelRatio();
    return image.pixel(int(logical.x() * dpr), int(logical.y() * dpr)) | 0xff000000u;
}

} // namespace

class TestHeatmapGrid : public QObject
{
    Q_OBJECT

private slots:
    // Hand-worked cases of the label thinning.
    void axisTicksByHand_data()
    {
        QTest::addColumn<int>("first");
        QTest::addColumn<int>("count");
        QTest::addColumn<double>("cell");
        QTest::addColumn<double>("need");
        QTest::addColumn<int>("step");
        QTest::addColumn<QVector<int>>("ticks");
        // need / cell = 16 / 3 = 5.3 → step 10; 190 is 9 · 3 = 27 ≥ 16 px from 199: kept.
        QVector<int> every10;
        for (int i = 0; i <= 190; i += 10)
            every10 << i;
        QTest::newRow("200 cells of 3 px")
            << 0 << 200 << 3.0 << 16.0 << 10 << (QVector<int>(every10) << 199);
        // need 30 px: still step 10, but 190 is only 27 px from 199: left out.
        QVector<int> without190 = every10;
        without190.removeLast();
        QTest::newRow("last wins") << 0 << 200 << 3.0 << 30.0 << 10 << (without190 << 199);
        // A window from 3 to 22: step 5; 5 is 4 px from 3 and 20 is 4 px from 22 (need 10).
        QTest::newRow("window 3–22") << 3 << 20 << 2.0 << 10.0 << 5 << QVector<int> {3, 10, 15, 22};
        QTest::newRow("room for all")
            << 0 << 5 << 20.0 << 15.0 << 1 << QVector<int> {0, 1, 2, 3, 4};
        QTest::newRow("one cell") << 7 << 1 << 20.0 << 15.0 << 1 << QVector<int> {7};
        // Two cells of 1 px cannot hold two labels of 10 px: the first only.
        QTest::newRow("two overlap") << 0 << 2 << 1.0 << 10.0 << 10 << QVector<int> {0};
    }
    void axisTicksByHand()
    {
        QFETCH(int, first);
        QFETCH(int, count);
        QFETCH(double, cell);
        QFETCH(double, need);
        QFETCH(int, step);
        QFETCH(QVector<int>, ticks);
        int gotStep = 0;
        QCOMPARE(axisTicks(first, count, cell, need, &gotStep), ticks);
        QCOMPARE(gotStep, step);
    }

    // h = 16 (d_model 64) and h = 32 in a heads view of a 1280 × 800 window (about 1000 × 640
    // pixels): every map keeps at least 96 pixels, the grid is taller than the view and
    // scrolls, and scrolled to the end the last tile (the mean) is hit-tested and painted with
    // its weights.
    void minimumTilesScroll_data()
    {
        QTest::addColumn<int>("heads");
        QTest::addColumn<QSize>("size");
        QTest::newRow("h = 16, 1000 × 640") << 16 << QSize(1000, 640);
        QTest::newRow("h = 32, 1000 × 640") << 32 << QSize(1000, 640);
        QTest::newRow("h = 32, 1280 × 800") << 32 << QSize(1280, 800);
    }
    void minimumTilesScroll()
    {
        QFETCH(int, heads);
        QFETCH(QSize, size);
        const int n = 8;
        HeatmapWidget widget;
        widget.resize(size);
        widget.setResult(makeResult(heads, n, n, weight));
        widget.show();
        QVERIFY(QTest::qWaitForWindowExposed(&widget));
        QCOMPARE(widget.renderer().tileCount(), heads + 1);

        QVERIFY(widget.isScrollable());
        QScrollBar *bar = widget.verticalScrollBar();
        QVERIFY(bar->isVisible());
        const QRectF view = widget.heatmapBounds();
        // The bar takes its own strip at the right; the heatmaps end left of it.
        QCOMPARE(view.right(), qreal(bar->geometry().left()));
        const HeatmapLayout lay = widget.renderer().layout(widget.contentBounds());
        QCOMPARE(lay.tiles.size(), heads + 1);
        const qreal minSide = 96;
        QCOMPARE(widget.options().minMapSide, minSide);
        qreal lastBottom = 0;
        for (const HeatmapLayout::Tile &tile : lay.tiles) {
            QVERIFY2(
                tile.map.width() >= minSide && tile.map.height() >= minSide,
                qPrintable(QStringLiteral("%1 × %2").arg(tile.map.width()).arg(tile.map.height())));
            // Square maps keep square cells: n × cell on both sides.
            QCOMPARE(tile.map.width(), tile.map.height());
            QVERIFY(tile.frame.right() <= view.right() + 0.5);
            lastBottom = std::max(lastBottom, tile.frame.bottom());
        }
        // As many columns as the width holds at the minimum: one more would not fit.
        int columns = 0;
        for (const HeatmapLayout::Tile &tile : lay.tiles)
            columns += qFuzzyCompare(tile.frame.top(), lay.tiles.first().frame.top());
        QVERIFY(columns >= 2);
        const qreal margins = lay.tiles.first().frame.width() - lay.tiles.first().map.width();
        QVERIFY((columns + 1) * (minSide + margins) > lay.legend.left() - view.left());
        const int rows = (heads + 1 + columns - 1) / columns;
        QCOMPARE(int(std::round((lastBottom - lay.tiles.first().frame.top())
                                / lay.tiles.first().frame.height())),
                 rows);
        // The content runs below the view; the bar scrolls exactly the difference.
        QVERIFY(lay.contentHeight > view.height());
        QVERIFY(lastBottom - view.top() <= lay.contentHeight);
        QCOMPARE(widget.contentHeight(), lay.contentHeight);
        QCOMPARE(bar->maximum(), int(std::ceil(lay.contentHeight - view.height())));

        // Scrolled to the end: the mean tile is in view, at the same place in the content.
        bar->setValue(bar->maximum());
        const HeatmapLayout end = widget.renderer().layout(widget.contentBounds());
        const QRectF mean = end.tiles.last().map;
        QVERIFY(end.tiles.last().mean);
        QVERIFY(view.contains(mean));
        QCOMPARE(mean.top(), lay.tiles.last().map.top() - bar->maximum());
        const int i = 5, j = 2;
        const qreal cell = mean.width() / n;
        const QPointF at(mean.left() + (j + 0.5) * cell, mean.top() + (i + 0.5) * cell);
        const HeatmapHit hit = widget.cellAt(at);
        QCOMPARE(hit.head, heads);
        QVERIFY(hit.mean);
        QCOMPARE(hit.row, i);
        QCOMPARE(hit.col, j);
        // What is painted there is the mean's colour (fixed range [0, 1], viridis).
        double mw = 0;
        for (int h = 0; h < heads; ++h)
            mw += weight(h, i, j) / heads;
        const QImage shown = widget.grab().toImage();
        QCOMPARE(pixelAt(shown, at), Colormap(ColormapId::Viridis).map(mw));
        // The colourbar stays where it was at the top of the view: its middle shows viridis at
        // 0.5 (entry 127 or 128 of 256, depending on the pixel row).
        const QRgb middle = pixelAt(shown, lay.colorbar.center());
        const Colormap viridis(ColormapId::Viridis);
        QVERIFY(middle == viridis.map(127.5 / 256) || middle == viridis.map(128.5 / 256));
        // Head 0's tile scrolled out above the view: nothing is hit there.
        const QPointF head0 = end.tiles.first().map.center();
        QVERIFY(head0.y() < view.top());
        QVERIFY(!widget.cellAt(head0).valid());

        // The wheel scrolls (Ctrl+wheel would zoom): one notch up moves the view up.
        const int before = bar->value();
        QWheelEvent wheel(QPointF(view.center()), widget.mapToGlobal(view.center()), QPoint(),
                          QPoint(0, 120), Qt::NoButton, Qt::NoModifier, Qt::NoScrollPhase, false);
        QCoreApplication::sendEvent(&widget, &wheel);
        QVERIFY(bar->value() < before);
        QVERIFY(!widget.isZoomed());

        // An export is not scrolled: its default size holds the whole grid.
        HeatmapActions actions(&widget, &widget);
        QCOMPARE(actions.screenSize().height(), int(std::ceil(lay.contentHeight)));
        QVERIFY(!actions.exportOptions().scrollable);
    }

    // h = 16 on the Heads tab of a 1280 × 800 window (about 520 × 560 pixels between the
    // docks) and of a 1600 × 900 one: by default the maps keep their minimum and only a few
    // heads show at a time; "Fit all" puts all 16 heads and the mean inside the view at once,
    // none scrolled away, each map the same size and larger than a sliver; "Heads per row"
    // sets the columns, with Fit all as without it.
    void fitAllShowsEveryHead_data()
    {
        QTest::addColumn<QSize>("size");
        QTest::newRow("1280 × 800 window") << QSize(520, 560);
        QTest::newRow("1600 × 900 window") << QSize(760, 640);
    }
    void fitAllShowsEveryHead()
    {
        QFETCH(QSize, size);
        const int heads = 16, n = 10;
        AttentionSession session;
        auto *widget = new HeatmapWidget;
        AttentionViews views(widget, &session);
        views.resize(size);
        widget->setResult(makeResult(heads, n, n, weight));
        views.show();
        QVERIFY(QTest::qWaitForWindowExposed(&views));
        QCOMPARE(widget->renderer().tileCount(), heads + 1);
        const auto visibleTiles = [widget] {
            const QRectF view = widget->heatmapBounds();
            int inside = 0;
            for (const HeatmapLayout::Tile &tile :
                 widget->renderer().layout(widget->contentBounds()).tiles)
                inside += view.contains(tile.map);
            return inside;
        };
        QVERIFY(widget->isScrollable());
        QVERIFY(visibleTiles() < heads); // a few at a time

        QCheckBox *fit = views.fitAllCheck();
        QComboBox *perRow = views.headsPerRowCombo();
        QVERIFY(fit && perRow);
        QVERIFY(views.widget(AttentionViews::HeadsTab)->isAncestorOf(fit));
        QVERIFY(!fit->isChecked());
        QCOMPARE(perRow->currentData().toInt(), 0);
        QCOMPARE(perRow->currentText(), QStringLiteral("Auto"));
        fit->setChecked(true);
        QVERIFY(widget->options().fitAll);
        QTRY_VERIFY(!widget->verticalScrollBar()->isVisible());
        QVERIFY(!widget->isScrollable());
        const HeatmapLayout lay = widget->renderer().layout(widget->contentBounds());
        QCOMPARE(lay.tiles.size(), heads + 1);
        QCOMPARE(visibleTiles(), heads + 1);
        for (const HeatmapLayout::Tile &tile : lay.tiles) {
            QVERIFY2(widget->heatmapBounds().contains(tile.frame),
                     qPrintable(QStringLiteral("head %1").arg(tile.head)));
            QCOMPARE(tile.map.size(), lay.tiles.first().map.size());
            QVERIFY2(tile.map.width() >= 4 * n,
                     qPrintable(QStringLiteral("%1 px").arg(tile.map.width())));
        }
        // The whole grid is hit-tested in place: the last head's tile, cell (3, 7).
        const HeatmapLayout::Tile last = lay.tiles[heads - 1];
        const HeatmapHit hit = widget->cellAt(
            QPointF(last.map.left() + 7.5 * lay.cellWidth, last.map.top() + 3.5 * lay.cellHeight));
        QCOMPARE(hit.head, last.head);
        QCOMPARE(hit.row, 3);
        QCOMPARE(hit.col, 7);

        // Four per row: 4 columns of 5 rows, all still inside the view.
        perRow->setCurrentIndex(perRow->findData(4));
        QCOMPARE(widget->options().headsPerRow, 4);
        const HeatmapLayout four = widget->renderer().layout(widget->contentBounds());
        QCOMPARE(firstRowTiles(four), 4);
        QCOMPARE(visibleTiles(), heads + 1);

        // One per row without Fit all: each map as wide as the view allows, the grid scrolls.
        fit->setChecked(false);
        perRow->setCurrentIndex(perRow->findData(1));
        QVERIFY(widget->isScrollable());
        const HeatmapLayout one = widget->renderer().layout(widget->contentBounds());
        QCOMPARE(firstRowTiles(one), 1);
        QVERIFY(one.tiles.first().map.width() > 2 * lay.tiles.first().map.width());

        // A session's choice reaches the strip, also a count the list does not offer.
        HeatmapOptions o = widget->options();
        o.headsPerRow = 5;
        o.fitAll = true;
        widget->setOptions(o);
        QCOMPARE(perRow->currentText(), QStringLiteral("5"));
        QVERIFY(fit->isChecked());
        QCOMPARE(firstRowTiles(widget->renderer().layout(widget->contentBounds())), 5);
        const QJsonObject saved = heatmapViewToJson(widget->options());
        QCOMPARE(saved.value(QLatin1String("heads_per_row")).toInt(-1), 5);
        QCOMPARE(saved.value(QLatin1String("fit_all")).toBool(false), true);
        const HeatmapOptions back = heatmapViewFromJson(saved, HeatmapOptions());
        QCOMPARE(back.headsPerRow, 5);
        QVERIFY(back.fitAll);
        // Out of range: the value kept.
        QCOMPARE(heatmapViewFromJson(QJsonObject {{"heads_per_row", 65}}, back).headsPerRow, 5);
        QCOMPARE(heatmapViewFromJson(QJsonObject {{"heads_per_row", -1}}, back).headsPerRow, 5);
    }

    // Sixteen heads with typed tokens in sight at once (Fit all) at the Heads tab's size at
    // 1280 × 800: each tile's axes give positions, not tokens, and the maps take the room the
    // tokens would have taken; four tiles or fewer (three heads and the mean), and tiles with
    // room for them, keep their token labels.
    void fitAllLabelsPositions()
    {
        const QStringList tokens
            = QString::fromLatin1("the animal did not cross the street because it was tired")
                  .split(QLatin1Char(' '));
        const auto layoutOf = [&](int heads, bool fitAll, QSizeF size = QSizeF(580, 640)) {
            auto r = makeResult(heads, 11, 11, weight);
            r->params.setTokens(tokens);
            HeatmapRenderer renderer;
            renderer.setResult(r);
            HeatmapOptions o;
            o.fitAll = fitAll;
            renderer.setOptions(o);
            return renderer.layout(QRectF(QPointF(0, 0), size));
        };
        const HeatmapLayout many = layoutOf(16, true);
        QVERIFY(many.positionLabels);
        QVERIFY(!many.rotateKeyLabels);
        QCOMPARE(many.tiles.size(), 17); // and the mean
        QVERIFY(!many.rowLabels.isEmpty() && !many.colLabels.isEmpty());
        for (const HeatmapLayout::AxisLabel &l : many.rowLabels)
            QCOMPARE(l.text, QString::number(l.index));
        for (const HeatmapLayout::AxisLabel &l : many.colLabels)
            QCOMPARE(l.text, QString::number(l.index));
        // With token labels on every tile the maps were 25 px; by position at least twice that.
        QVERIFY2(many.tiles.first().map.width() >= 50,
                 qPrintable(QString::number(many.tiles.first().map.width())));

        const HeatmapLayout few = layoutOf(3, true);
        QVERIFY(!few.positionLabels);
        QVERIFY(few.rotateKeyLabels);
        QCOMPARE(few.rowLabels.first().text, QStringLiteral("0:the"));
        QVERIFY(!layoutOf(16, false).positionLabels);
        // Room enough (four heads and the mean at the Heads tab's size at 1600 × 900): the
        // tokens stay.
        const HeatmapLayout roomy = layoutOf(4, true, QSizeF(1000, 700));
        QVERIFY(!roomy.positionLabels);
        QCOMPARE(roomy.rowLabels.first().text, QStringLiteral("0:the"));
    }

    // A few heads that fit: no scroll bar, the layout is the bounds.
    void fewHeadsDoNotScroll()
    {
        HeatmapWidget widget;
        widget.resize(1000, 640);
        widget.setResult(makeResult(4, 8, 8, weight));
        widget.show();
        QVERIFY(QTest::qWaitForWindowExposed(&widget));
        QVERIFY(!widget.isScrollable());
        QVERIFY(!widget.verticalScrollBar()->isVisible());
        QCOMPARE(widget.heatmapBounds().width(), qreal(widget.width()));
        const HeatmapLayout lay = widget.renderer().layout(widget.contentBounds());
        QCOMPARE(lay.contentHeight, widget.heatmapBounds().height());
        for (const HeatmapLayout::Tile &tile : lay.tiles)
            QVERIFY(tile.map.width() > 96);
    }

    // Cross attention n_q = 1024, n_k = 10: square cells would make a 10-cell-wide sliver; the
    // default widens it to the minimum, stretched it fills the tile.
    void nonSquareMaps()
    {
        const int nQ = 1024, nK = 10;
        HeatmapRenderer renderer;
        renderer.setResult(
            makeResult(1, nQ, nK, [](int, int i, int j) { return (i + j) % 2 ? 0.2 : 0.8; }));
        HeatmapOptions o;
        o.fontPixelSize = 12;
        renderer.setOptions(o);
        const QRectF bounds(0, 0, 1000, 640);
        const HeatmapLayout square = renderer.layout(bounds);
        QCOMPARE(square.tiles.size(), 1);
        const QRectF map = square.tiles.first().map;
        // The height gives cells of under one pixel: 10 of them would be a sliver. The short side
        // takes the minimum instead, 96 pixels = 10 cells of 9.6 pixels, whole pixels: 10 × 10.
        QVERIFY(map.height() > 400 && map.height() <= 640);
        QCOMPARE(square.cellWidth, 10.0);
        QCOMPARE(map.width(), 100.0);
        QCOMPARE(square.cellHeight, map.height() / nQ);
        QVERIFY(square.cellHeight < 1.0);

        o.stretch = true;
        renderer.setOptions(o);
        const HeatmapLayout stretched = renderer.layout(bounds);
        const QRectF fill = stretched.tiles.first().map;
        // The map fills the room left of the legend and below the caption: its aspect is the
        // viewport's (1000 : 640 less the margins), not the cells' 10 : 1024.
        QVERIFY(fill.width() > 0.6 * bounds.width());
        QVERIFY(fill.height() > 0.6 * bounds.height());
        const qreal aspect = fill.width() / fill.height();
        QVERIFY2(aspect > 1.0 && aspect < 2.0, qPrintable(QString::number(aspect)));
        QCOMPARE(fill.width(), stretched.cellWidth * nK);
        QCOMPARE(fill.height(), stretched.cellHeight * nQ);
        // Hit-testing follows the stretched cells: key 7, query 1000.
        const HeatmapHit hit = renderer.cellAt(bounds,
                                               QPointF(fill.left() + 7.5 * stretched.cellWidth,
                                                       fill.top() + 1000.5 * stretched.cellHeight));
        QCOMPARE(hit.col, 7);
        QCOMPARE(hit.row, 1000);
        QCOMPARE(renderer.cellRect(bounds, hit).width(), stretched.cellWidth);

        // Square maps keep square cells by default; stretched, they take the tile's shape.
        HeatmapRenderer squareMaps;
        squareMaps.setResult(makeResult(1, 8, 8, weight));
        HeatmapOptions so;
        so.fontPixelSize = 12;
        squareMaps.setOptions(so);
        const HeatmapLayout s0 = squareMaps.layout(bounds);
        QCOMPARE(s0.cellWidth, s0.cellHeight);
        so.stretch = true;
        squareMaps.setOptions(so);
        const HeatmapLayout s1 = squareMaps.layout(bounds);
        QVERIFY(s1.cellWidth > s1.cellHeight * 1.2);
    }

    // Stretched maps of four heads and their mean fill a heads view of 640 × 640 without a
    // scroll bar: 2 columns × 3 rows of maps above the minimum.
    void stretchedFitsWithoutScrolling()
    {
        HeatmapWidget widget;
        widget.resize(640, 640);
        widget.setResult(makeResult(4, 1024, 10, weight));
        widget.setStretch(true);
        widget.show();
        QVERIFY(QTest::qWaitForWindowExposed(&widget));
        QVERIFY(!widget.isScrollable());
        const HeatmapLayout lay = widget.renderer().layout(widget.contentBounds());
        QCOMPARE(lay.contentHeight, widget.heatmapBounds().height());
        QCOMPARE(lay.tiles.size(), 5);
        int columns = 0;
        for (const HeatmapLayout::Tile &tile : lay.tiles) {
            QVERIFY(tile.map.width() >= 96 && tile.map.height() >= 96);
            QVERIFY(widget.heatmapBounds().contains(tile.frame));
            columns += qFuzzyCompare(tile.frame.top(), lay.tiles.first().frame.top());
        }
        QCOMPARE(columns, 2);
    }

    // The stretch option is a checkable View action and a view option saved with the session.
    void stretchActionAndSession()
    {
        HeatmapWidget widget;
        HeatmapActions actions(&widget, &widget);
        QAction *stretch = actions.stretchAction();
        QVERIFY(stretch->isCheckable());
        QVERIFY(actions.viewActions().contains(stretch));
        QVERIFY(!stretch->isChecked());
        QVERIFY(!widget.options().stretch);
        stretch->setChecked(true);
        QVERIFY(widget.options().stretch);
        QVERIFY(widget.isStretched());
        const QJsonObject saved = heatmapViewToJson(widget.options());
        QCOMPARE(saved.value(QLatin1String("stretch")).toBool(), true);
        // An opened session's view options reach the widget and the action.
        widget.setOptions(heatmapViewFromJson(QJsonObject {{"stretch", false}}, widget.options()));
        QVERIFY(!stretch->isChecked());
        QVERIFY(heatmapViewFromJson(saved, HeatmapOptions()).stretch);
    }

    // Sorted heads: the tiles follow the mean row entropies / max weights worked out by hand,
    // the mean tile stays last, titles keep their head numbers and hit-testing reports the head
    // drawn; the caption says the order.
    void sortHeadsByKnownMeans_data()
    {
        QTest::addColumn<int>("key");
        QTest::addColumn<bool>("descending");
        QTest::addColumn<QVector<int>>("heads");
        QTest::newRow("index") << int(HeadOrderKey::Index) << false << QVector<int> {0, 1, 2, 3};
        QTest::newRow("entropy, low first")
            << int(HeadOrderKey::Entropy) << false << QVector<int> {1, 2, 0, 3};
        QTest::newRow("entropy, high first")
            << int(HeadOrderKey::Entropy) << true << QVector<int> {0, 2, 1, 3};
        QTest::newRow("max weight, low first")
            << int(HeadOrderKey::MaxWeight) << false << QVector<int> {0, 2, 1, 3};
        QTest::newRow("max weight, high first")
            << int(HeadOrderKey::MaxWeight) << true << QVector<int> {1, 2, 0, 3};
    }
    void sortHeadsByKnownMeans()
    {
        QFETCH(int, key);
        QFETCH(bool, descending);
        QFETCH(QVector<int>, heads);
        HeatmapRenderer renderer;
        renderer.setResult(makeResult(3, 2, 4, sortWeight));
        HeatmapOptions o;
        o.fontPixelSize = 12;
        o.headSort = HeadOrderKey(key);
        o.headSortDescending = descending;
        renderer.setOptions(o);
        const QRectF bounds(0, 0, 1000, 600);
        const HeatmapLayout lay = renderer.layout(bounds);
        QCOMPARE(lay.tiles.size(), 4);
        for (int t = 0; t < 4; ++t) {
            const HeatmapLayout::Tile &tile = lay.tiles[t];
            QCOMPARE(tile.head, heads[t]);
            QCOMPARE(tile.mean, t == 3);
            QCOMPARE(tile.title,
                     t == 3 ? QStringLiteral("mean over heads")
                            : QStringLiteral("head %1").arg(heads[t]));
            // The cell drawn at query 0, key 0 of this tile is that head's.
            const HeatmapHit hit = renderer.cellAt(bounds, tile.map.topLeft() + QPointF(2, 2));
            QCOMPARE(hit.head, heads[t]);
            QCOMPARE(hit.tile, t);
        }
        const bool sorted = HeadOrderKey(key) != HeadOrderKey::Index;
        QCOMPARE(
            renderer.captionText().contains(
                QStringLiteral("heads by mean %1, %2")
                    .arg(HeadOrderKey(key) == HeadOrderKey::Entropy ? QStringLiteral("entropy")
                                                                    : QStringLiteral("max weight"),
                         descending ? QStringLiteral("descending") : QStringLiteral("ascending"))),
            sorted);
    }

    // The pinned query: in every tile, bars of pinnedOutlineWidth just outside row i's cells,
    // above, below and at both ends; the row's own cells and the rows beyond the bars keep the
    // unpinned picture's colours.
    void pinOutlineAtRowBounds()
    {
        const int row = 2;
        HeatmapRenderer renderer;
        renderer.setResult(makeResult(2, 6, 6, weight));
        HeatmapOptions o;
        o.fontPixelSize = 12;
        o.showCaption = false; // the caption names the pin: the same layout both ways
        renderer.setOptions(o);
        const QSize size(800, 500);
        const QImage plain = renderer.render(size);
        o.pinnedQuery = row;
        renderer.setOptions(o);
        QCOMPARE(renderer.pinnedRow(), row);
        const QImage pinned = renderer.render(size);
        const HeatmapLayout lay = renderer.layout(QRectF(QPointF(0, 0), QSizeF(size)));
        QCOMPARE(lay.tiles.size(), 3);
        QVERIFY(lay.cellHeight >= 8);
        const QRgb pin = HeatmapRenderer::pinnedRowColor().rgb();
        const auto px
            = [](const QImage &image, int x, int y) { return image.pixel(x, y) | 0xff000000u; };
        for (const HeatmapLayout::Tile &tile : lay.tiles) {
            const QRectF &map = tile.map;
            const qreal y0 = map.top() + row * lay.cellHeight, y1 = y0 + lay.cellHeight;
            const qreal w = HeatmapRenderer::pinnedOutlineWidth;
            for (int x : {int(map.left()) + 2, int(map.center().x()), int(map.right()) - 2}) {
                QCOMPARE(px(pinned, x, int(std::floor(y0)) - 1), pin); // just above the row
                QCOMPARE(px(pinned, x, int(std::ceil(y1))), pin); // just below it
                // The row's first and last pixel rows: its cells, as unpinned.
                QCOMPARE(px(pinned, x, int(std::ceil(y0))), px(plain, x, int(std::ceil(y0))));
                QCOMPARE(px(pinned, x, int(std::floor(y1)) - 1),
                         px(plain, x, int(std::floor(y1)) - 1));
                QVERIFY(px(pinned, x, int(std::ceil(y0))) != pin);
                // Beyond the bars: the neighbouring rows, as unpinned.
                const int above = int(std::floor(y0 - w)) - 1, below = int(std::ceil(y1 + w));
                QCOMPARE(px(pinned, x, above), px(plain, x, above));
                QCOMPARE(px(pinned, x, below), px(plain, x, below));
            }
            const int mid = int(y0 + lay.cellHeight / 2);
            QCOMPARE(px(pinned, int(std::floor(map.left())) - 1, mid), pin);
            QCOMPARE(px(pinned, int(std::ceil(map.right())), mid), pin);
            // Another row of the map is as unpinned.
            const int other = int(map.top() + 4.5 * lay.cellHeight);
            QCOMPARE(px(pinned, int(map.center().x()), other),
                     px(plain, int(map.center().x()), other));
        }
        o.showCaption = true;
        renderer.setOptions(o);
        QVERIFY(renderer.captionText().contains(QStringLiteral("pinned query 2")));
        o.showCaption = false;
        // A pin past the rows draws nothing.
        o.pinnedQuery = 6;
        renderer.setOptions(o);
        QCOMPARE(renderer.pinnedRow(), -1);
        QCOMPARE(renderer.render(size), plain);
    }

    // 200 queries labelled every few rows: the pinned one is labelled all the same, and no
    // other label comes closer to it than a line.
    void pinnedRowAlwaysLabelled()
    {
        HeatmapRenderer renderer;
        renderer.setResult(makeResult(1, 200, 200, weight));
        HeatmapOptions o;
        o.fontPixelSize = 12;
        o.pinnedQuery = 7;
        renderer.setOptions(o);
        const HeatmapLayout lay = renderer.layout(QRectF(0, 0, 900, 600));
        QVERIFY(lay.tickStepRows >= 5); // 7 is no multiple of the step
        const qreal lineH = QFontMetricsF(figure::makeFont(12)).height();
        bool found = false;
        for (int k = 0; k < lay.rowLabels.size(); ++k) {
            found = found || lay.rowLabels[k].index == 7;
            if (k + 1 < lay.rowLabels.size())
                QVERIFY((lay.rowLabels[k + 1].index - lay.rowLabels[k].index) * lay.cellHeight
                        >= lineH);
        }
        QVERIFY(found);
        QCOMPARE(lay.rowLabels.first().index, 0);
        QCOMPARE(lay.rowLabels.last().index, 199);
    }

    // Pinning by clicking a query label or Shift+clicking a cell; the same again or Esc unpins;
    // a plain click still enlarges the tile.
    void pinGestures()
    {
        HeatmapWidget widget;
        widget.resize(900, 600);
        widget.setResult(makeResult(2, 6, 6, weight));
        widget.show();
        QVERIFY(QTest::qWaitForWindowExposed(&widget));
        const HeatmapLayout lay = widget.renderer().layout(widget.contentBounds());
        const HeatmapLayout::Tile &tile = lay.tiles[1];
        const auto rowY = [&](int i) { return tile.map.top() + (i + 0.5) * lay.cellHeight; };
        const QPoint label(int(tile.map.left() - 0.3 * lay.fontPixelSize - 8), int(rowY(4)));
        QCOMPARE(widget.renderer().queryLabelAt(widget.contentBounds(), label), 4);
        QTest::mouseClick(&widget, Qt::LeftButton, {}, label);
        QCOMPARE(widget.pinnedQuery(), 4);
        QTest::mouseClick(&widget, Qt::LeftButton, {}, label); // again: unpinned
        QCOMPARE(widget.pinnedQuery(), -1);
        const QPoint cell(int(tile.map.left() + 3.5 * lay.cellWidth), int(rowY(1)));
        QSignalSpy activated(&widget, &HeatmapWidget::tileActivated);
        QTest::mouseClick(&widget, Qt::LeftButton, Qt::ShiftModifier, cell);
        QCOMPARE(widget.pinnedQuery(), 1);
        QCOMPARE(activated.count(), 0);
        QTest::keyClick(&widget, Qt::Key_Escape);
        QCOMPARE(widget.pinnedQuery(), -1);
        QTest::mouseClick(&widget, Qt::LeftButton, {}, cell);
        QCOMPARE(activated.count(), 1);
        QCOMPARE(activated.first().first().toInt(), tile.head);
        QCOMPARE(widget.pinnedQuery(), -1);
    }

    // Copy from the hover: Ctrl+C over a cell puts its values on the clipboard as two
    // tab-separated lines, and Copy Row the row's weights with the keys' labels.
    void copyCellAndRow()
    {
        // 3 × 3, causal (j > i masked, weight 0): row 1 is [0.25, 0.75, 0].
        MatrixB state = MatrixB::Zero(3, 3);
        for (int i = 0; i < 3; ++i)
            for (int j = i + 1; j < 3; ++j)
                state(i, j) = MaskCausal;
        const auto value = [](int h, int i, int j) {
            if (j > i)
                return 0.0;
            const double rows[3][3] = {{1, 0, 0}, {0.25, 0.75, 0}, {0.5, 0.125, 0.375}};
            return h == 0 ? rows[i][j] : (j == 0 ? 1.0 : 0.0);
        };
        auto result = makeResult(2, 3, 3, value, state);
        result->params.tokens = {"the", "cat", "sat"};
        HeatmapWidget widget;
        widget.resize(900, 600);
        widget.setResult(result);
        widget.show();
        QVERIFY(QTest::qWaitForWindowExposed(&widget));
        QGuiApplication::clipboard()->clear();
        const HeatmapLayout lay = widget.renderer().layout(widget.contentBounds());
        const QRectF map = lay.tiles[0].map;
        // Hover head 0, query 1, key 1 and press Ctrl+C.
        const QPoint over(int(map.left() + 1.5 * lay.cellWidth),
                          int(map.top() + 1.5 * lay.cellHeight));
        QMouseEvent move(QEvent::MouseMove, QPointF(over), widget.mapToGlobal(QPointF(over)),
                         Qt::NoButton, Qt::NoButton, Qt::NoModifier);
        QApplication::sendEvent(&widget, &move);
        QCOMPARE(widget.hoveredCell().row, 1);
        QCOMPARE(widget.hoveredCell().col, 1);
        QTest::keyClick(&widget, Qt::Key_C, Qt::ControlModifier);
        const QString header = QStringLiteral("head\tquery i\tkey j\tquery token\tkey token\traw "
                                              "score\tscaled score\tweight\tmask\n");
        // Scores are 10·w and 5·w (makeResult).
        QCOMPARE(QGuiApplication::clipboard()->text(),
                 header + QStringLiteral("0\t1\t1\tcat\tcat\t7.5\t3.75\t0.75\tallowed\n"));
        // A masked cell: its scaled score is −inf, its weight 0.
        QVERIFY(widget.copyCell({0, 0, false, 0, 2}));
        QCOMPARE(QGuiApplication::clipboard()->text(),
                 header + QStringLiteral("0\t0\t2\tthe\tsat\t0\t-inf\t0\tcausal-masked\n"));
        // The mean tile has no scores: head "mean", the mean weight (0.25 + 1) / 2.
        QVERIFY(widget.copyCell({2, 2, true, 1, 0}));
        QCOMPARE(QGuiApplication::clipboard()->text(),
                 header + QStringLiteral("mean\t1\t0\tcat\tthe\t\t\t0.625\tallowed\n"));
        // The whole row 2 of head 0.
        QVERIFY(widget.copyRow({0, 0, false, 2, 1}));
        QCOMPARE(QGuiApplication::clipboard()->text(),
                 QStringLiteral("key j\t0:the\t1:cat\t2:sat\n2:sat\t0.5\t0.125\t0.375\n"));
        // Nothing hovered: Ctrl+C leaves the clipboard alone.
        QVERIFY(!widget.copyCell({}));
        QCOMPARE(QGuiApplication::clipboard()->text().count(QLatin1Char('\n')), 2);
    }

    // Ctrl+C over a cell works whatever had the keyboard focus (the map takes it on hover),
    // except a field being typed in, which keeps it; stored weights' scores (NaN: not
    // available) copy as empty fields, not "nan".
    void copyWithoutFocusAndStoredScores()
    {
        const auto value = [](int, int i, int j) { return i == j ? 1.0 : 0.0; };
        auto result = makeResult(1, 3, 3, value);
        const double nan = std::numeric_limits<double>::quiet_NaN();
        for (MatrixD &m : result->scores)
            m.setConstant(nan);
        for (MatrixD &m : result->scaledScores)
            m.setConstant(nan);
        QWidget window;
        auto *button = new QPushButton(QStringLiteral("Run"), &window);
        auto *field = new QLineEdit(&window);
        auto *widget = new HeatmapWidget(&window);
        auto *layout = new QVBoxLayout(&window);
        layout->addWidget(button);
        layout->addWidget(field);
        layout->addWidget(widget, 1);
        window.resize(900, 700);
        widget->setResult(result);
        window.show();
        window.activateWindow();
        QVERIFY(QTest::qWaitForWindowActive(&window));
        button->setFocus();
        QTRY_VERIFY(button->hasFocus());
        QGuiApplication::clipboard()->clear();
        const HeatmapLayout lay = widget->renderer().layout(widget->contentBounds());
        const QRectF map = lay.tiles[0].map;
        const QPoint over(int(map.left() + 1.5 * lay.cellWidth),
                          int(map.top() + 1.5 * lay.cellHeight));
        QMouseEvent move(QEvent::MouseMove, QPointF(over), widget->mapToGlobal(QPointF(over)),
                         Qt::NoButton, Qt::NoButton, Qt::NoModifier);
        QApplication::sendEvent(widget, &move);
        QCOMPARE(widget->hoveredCell().row, 1);
        QVERIFY(widget->hasFocus());
        QTest::keyClick(QApplication::focusWidget(), Qt::Key_C, Qt::ControlModifier);
        QCOMPARE(
            QGuiApplication::clipboard()->text(),
            QStringLiteral("head\tquery i\tkey j\tquery token\tkey token\traw "
                           "score\tscaled score\tweight\tmask\n0\t1\t1\t\t\t\t\t1\tallowed\n"));
        // Typing in a field: hovering leaves the focus there.
        field->setFocus();
        QTRY_VERIFY(field->hasFocus());
        QApplication::sendEvent(widget, &move);
        QVERIFY(field->hasFocus());
    }

    // SVG of a 3 × 3 map: exactly 9 cell rectangles per head at the cells' places, each in
    // viridis's colour of its weight (fixed range [0, 1]); over 64 × 64 cells an image instead,
    // and the caption says so.
    void svgCellsAsRectangles()
    {
        const auto value = [](int h, int i, int j) { return (h * 9 + i * 3 + j) / 17.0; };
        HeatmapRenderer renderer;
        renderer.setResult(makeResult(2, 3, 3, value));
        HeatmapOptions o;
        o.fontPixelSize = 12;
        renderer.setOptions(o);
        QTemporaryDir dir;
        const QString path = dir.filePath(QStringLiteral("cells.svg"));
        const QSize size(700, 400);
        QString error;
        QVERIFY2(renderer.saveSvg(path, size, &error), qPrintable(error));
        QFile file(path);
        QVERIFY(file.open(QIODevice::ReadOnly));
        const QByteArray bytes = file.readAll();
        const QVector<SvgRect> rects = svgRects(bytes);
        const HeatmapLayout lay = renderer.layout(QRectF(QPointF(0, 0), QSizeF(size)));
        QCOMPARE(lay.tiles.size(), 3);
        const Colormap viridis(ColormapId::Viridis);
        for (const HeatmapLayout::Tile &tile : lay.tiles) {
            int cells = 0;
            for (const SvgRect &r : rects) {
                // A cell: at most a cell (plus the seam overlap) big, inside the map.
                if (r.rect.width() > lay.cellWidth + 0.6 || r.rect.height() > lay.cellHeight + 0.6
                    || !tile.map.adjusted(-0.01, -0.01, 0.01, 0.01).contains(r.rect.topLeft()))
                    continue;
                ++cells;
                const int j = int(std::lround((r.rect.x() - tile.map.left()) / lay.cellWidth));
                const int i = int(std::lround((r.rect.y() - tile.map.top()) / lay.cellHeight));
                QVERIFY(std::abs(r.rect.x() - (tile.map.left() + j * lay.cellWidth)) < 1e-3);
                QVERIFY(std::abs(r.rect.y() - (tile.map.top() + i * lay.cellHeight)) < 1e-3);
                QVERIFY(r.rect.width() >= lay.cellWidth - 1e-3);
                QVERIFY(r.rect.height() >= lay.cellHeight - 1e-3);
                const double w
                    = tile.mean ? (value(0, i, j) + value(1, i, j)) / 2 : value(tile.head, i, j);
                QCOMPARE(r.fill, QColor(viridis.map(w)).name());
            }
            QCOMPARE(cells, 9);
        }
        // The colourbar is an image, the cells are not.
        const int images = int(bytes.count("<image"));

        // 65 × 65 cells: each of the 3 maps is an embedded image and the caption names the limit.
        renderer.setResult(makeResult(2, 65, 65, weight));
        QVERIFY2(renderer.saveSvg(path, size, &error), qPrintable(error));
        QFile big(path);
        QVERIFY(big.open(QIODevice::ReadOnly));
        const QByteArray bigBytes = big.readAll();
        QCOMPARE(int(bigBytes.count("<image")), images + 3);
        QVERIFY(svgRects(bigBytes).size() < 20);
        QVERIFY(bigBytes.contains("cells as an image (over 64"));
        QVERIFY(!renderer.captionText().contains(QStringLiteral("cells as an image")));
    }

    // 200 typed words (a six-word sentence repeated): every label has its position, the first
    // (0) and the last (199) are there, labels lie a regular step apart and never overlap.
    void labelsForManyTokens()
    {
        const QStringList sentence = {"the", "cat", "sat", "on", "the", "mat"};
        const int n = 200;
        auto result = makeResult(2, n, n, weight);
        result->params.kind = AttentionKind::EncoderSelf;
        for (int k = 0; k < n; ++k)
            result->params.tokens.push_back(sentence.at(k % 6).toStdString());
        HeatmapRenderer renderer;
        renderer.setResult(result);
        HeatmapOptions o;
        o.fontPixelSize = 12;
        o.view = HeatmapView::SingleHead;
        renderer.setOptions(o);
        const HeatmapLayout lay = renderer.layout(QRectF(0, 0, 1000, 700));
        const qreal lineH = QFontMetricsF(figure::makeFont(12)).height();
        for (const auto *labels : {&lay.rowLabels, &lay.colLabels}) {
            const bool rows = labels == &lay.rowLabels;
            const qreal cell = rows ? lay.cellHeight : lay.cellWidth;
            QVERIFY(labels->size() >= 3);
            QCOMPARE(labels->first().index, 0);
            QCOMPARE(labels->first().text, QStringLiteral("0:the"));
            QCOMPARE(labels->last().index, 199);
            QCOMPARE(labels->last().text, QStringLiteral("199:cat")); // 199 = 6 · 33 + 1
            // The repeated "the" at 0, 4, 6, 10, … is told apart by its position.
            for (const HeatmapLayout::AxisLabel &label : *labels)
                QCOMPARE(
                    label.text,
                    QStringLiteral("%1:%2").arg(label.index).arg(sentence.at(label.index % 6)));
            // Interior labels: multiples of one step from 1, 2, 5, 10, 20, 50 …, consecutive.
            const int step = (*labels)[2].index - (*labels)[1].index;
            QVERIFY(QVector<int>({1, 2, 5, 10, 20, 50, 100}).contains(step));
            for (int k = 1; k + 1 < labels->size(); ++k) {
                QCOMPARE((*labels)[k].index % step, 0);
                if (k + 2 < labels->size())
                    QCOMPARE((*labels)[k + 1].index - (*labels)[k].index, step);
            }
            // No two labels overlap: rows are one text line tall; key tokens are written
            // vertically, so they too need one line along the axis.
            for (int k = 0; k + 1 < labels->size(); ++k)
                QVERIFY2(((*labels)[k + 1].index - (*labels)[k].index) * cell >= lineH,
                         qPrintable(QStringLiteral("%1 → %2 at %3 px per cell")
                                        .arg((*labels)[k].index)
                                        .arg((*labels)[k + 1].index)
                                        .arg(cell)));
            // And the step is the densest of those that do not overlap: half as many cells
            // (the next smaller nice step) would.
            const QVector<int> nice = {1, 2, 5, 10, 20, 50, 100};
            if (const int k = int(nice.indexOf(step)); k > 0)
                QVERIFY(nice[k - 1] * cell < 1.05 * lineH);
        }
    }
};

QTEST_MAIN(TestHeatmapGrid)
#include "tst_heatmapgrid.moc"
