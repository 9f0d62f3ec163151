// LongMapViewport alone, without a widget: the Long tab's view rectangle over a map of
// n_q × n_k cells in an area of screen pixels, as fit, zoom, pan, clamping, the pyramid level,
// the cell under a pixel and the visible window move it. The expected numbers are worked out by
// hand in each test's comments (or by an independent rule), not by the viewport's own functions.

#include "ui/session/longmapviewport.h"

#include <QTest>

#include <utility>

using namespace attn;

namespace {

/// 1 000 queries × 2 000 keys in tiles of 64 pixels, shown in a 400 × 300 area at (10, 20).
LongMapViewport wideMap()
{
    LongMapViewport v;
    v.setPyramid(TilePyramid(1000, 2000, 64));
    v.setMapArea(QRectF(10, 20, 400, 300));
    v.fit();
    return v;
}

void compareRect(const CellRect &got, double rowBegin, double rowEnd, double colBegin,
                 double colEnd)
{
    QCOMPARE(got.rowBegin, rowBegin);
    QCOMPARE(got.rowEnd, rowEnd);
    QCOMPARE(got.colBegin, colBegin);
    QCOMPARE(got.colEnd, colEnd);
}

} // namespace

class TestLongMapViewport : public QObject
{
    Q_OBJECT

private slots:
    void fitShowsTheWholeMap()
    {
        const LongMapViewport v = wideMap();
        // Keys need 2000 / 400 = 5 cells a pixel, queries 1000 / 300 = 3.33: the fit is 5, the
        // view centred on (500, 1000) is 300 · 5 = 1500 rows by 400 · 5 = 2000 columns.
        QCOMPARE(v.cellsPerPixel(), 5.0);
        QVERIFY(!v.isViewSet());
        compareRect(v.viewRect(), -250, 1250, 0, 2000);
        const TileWindow w = v.visibleWindow();
        QCOMPARE(w.rowBegin, Index(0));
        QCOMPARE(w.rowEnd, Index(1000));
        QCOMPARE(w.colBegin, Index(0));
        QCOMPARE(w.colEnd, Index(2000));
        // ⌈log₂ 5⌉ = 3: pixels of 8 × 8 cells.
        QCOMPARE(v.level(), 3);
    }

    void anUnsetViewFollowsTheFit()
    {
        LongMapViewport v = wideMap();
        // A taller area: still 2000 / 400 = 5; a wider one: 1000 / 300 = 3.33 wins.
        v.setMapArea(QRectF(10, 20, 400, 600));
        v.clamp();
        QCOMPARE(v.cellsPerPixel(), 5.0);
        v.setMapArea(QRectF(10, 20, 800, 300));
        v.clamp();
        QCOMPARE(v.cellsPerPixel(), 1000.0 / 300.0);
        // Once zoomed, the view keeps its zoom when the area changes.
        v.zoomAt(QPointF(410, 170), 2);
        const double zoomed = v.cellsPerPixel();
        v.setMapArea(QRectF(10, 20, 700, 300));
        v.clamp();
        QCOMPARE(v.cellsPerPixel(), zoomed);
    }

    void zoomKeepsTheCellUnderThePointer()
    {
        LongMapViewport v = wideMap();
        // The pointer 100 pixels right of and below the area's corner: column 0 + 100 · 5 = 500,
        // row −250 + 100 · 5 = 250.
        const QPointF pointer(110, 120);
        QCOMPARE(v.cellAt(pointer), std::make_pair(Index(250), Index(500)));
        v.zoomAt(pointer, 2);
        // 2.5 cells a pixel; the view starts 100 · 2.5 = 250 cells before the pointer's cell
        // on both axes: rows 0 … 300 · 2.5, columns 250 … 250 + 400 · 2.5.
        QCOMPARE(v.cellsPerPixel(), 2.5);
        QVERIFY(v.isViewSet());
        compareRect(v.viewRect(), 0, 750, 250, 1250);
        QCOMPARE(v.cellAt(pointer), std::make_pair(Index(250), Index(500)));
        // Zooming out again by the same factor comes back to the fit.
        v.zoomAt(pointer, 0.5);
        QCOMPARE(v.cellsPerPixel(), 5.0);
        compareRect(v.viewRect(), -250, 1250, 0, 2000);
        // A factor that is not positive changes nothing.
        v.zoomAt(pointer, 0);
        v.zoomAt(pointer, -2);
        QCOMPARE(v.cellsPerPixel(), 5.0);
    }

    void zoomStopsAtItsLimits()
    {
        LongMapViewport v = wideMap();
        // In: at most 32 pixels a cell.
        v.zoomAt(QPointF(210, 170), 1e6);
        QCOMPARE(v.cellsPerPixel(), 1.0 / 32);
        QCOMPARE(v.level(), 0);
        // Out: no further than the fit.
        v.zoomAt(QPointF(210, 170), 1e-6);
        QCOMPARE(v.cellsPerPixel(), 5.0);
        // A map smaller than 32 pixels a cell stays at its fit: 4 / 300 cells a pixel.
        LongMapViewport small;
        small.setPyramid(TilePyramid(4, 4, 64));
        small.setMapArea(QRectF(0, 0, 400, 300));
        small.fit();
        small.zoomAt(QPointF(200, 150), 8);
        QCOMPARE(small.cellsPerPixel(), 4.0 / 300);
    }

    void panClampsAtTheEdges()
    {
        LongMapViewport v = wideMap();
        v.zoomAt(QPointF(110, 120), 2); // rows 0 … 750, columns 250 … 1250 (above)
        // Content follows the pointer: dragging right and down by 40 pixels shows 100 cells
        // further up and left.
        v.panBy(QPointF(40, 0));
        compareRect(v.viewRect(), 0, 750, 150, 1150);
        // Far past the top-left corner: the centre stops on the corner (a view shorter than
        // the map keeps its centre on the map): half the view, 375 rows and 500 columns, before it.
        v.panBy(QPointF(1e5, 1e5));
        compareRect(v.viewRect(), -375, 375, -500, 500);
        // And past the bottom-right corner: the centre on (1000, 2000).
        v.panBy(QPointF(-1e6, -1e6));
        compareRect(v.viewRect(), 625, 1375, 1500, 2500);
        QCOMPARE(v.cellsPerPixel(), 2.5);
    }

    void aViewLongerThanTheMapKeepsItInSight()
    {
        LongMapViewport v = wideMap();
        // At the fit the view is 1500 rows over 1000: its centre may move within 250 … 750.
        v.panBy(QPointF(0, 50)); // 50 pixels · 5 = 250 rows up: centre 250
        compareRect(v.viewRect(), -500, 1000, 0, 2000);
        v.panBy(QPointF(0, 100)); // would be −250: stays at 250, the map's last row in sight
        compareRect(v.viewRect(), -500, 1000, 0, 2000);
        v.panBy(QPointF(0, -1000)); // the other way: centre 750, the first row in sight
        compareRect(v.viewRect(), 0, 1500, 0, 2000);
        // Columns fit exactly: they do not move.
        v.panBy(QPointF(30, 0));
        compareRect(v.viewRect(), 0, 1500, 0, 2000);
    }

    void setViewRectShowsTheCells()
    {
        LongMapViewport v = wideMap();
        // Rows 100 … 200 × columns 300 … 500 in 400 × 300 pixels: 200 / 400 = 0.5 across wins
        // over 100 / 300; the centre (150, 400); the rows shown are 300 · 0.5 = 150.
        v.setViewRect({100, 200, 300, 500});
        QVERIFY(v.isViewSet());
        QCOMPARE(v.cellsPerPixel(), 0.5);
        compareRect(v.viewRect(), 75, 225, 300, 500);
        QCOMPARE(v.level(), 0);
        const TileWindow w = v.visibleWindow();
        QCOMPARE(w.rowBegin, Index(75));
        QCOMPARE(w.rowEnd, Index(225));
        QCOMPARE(w.colBegin, Index(300));
        QCOMPARE(w.colEnd, Index(500));
        // A fractional view is widened to whole cells.
        v.setViewRect({10.25, 11.75, 20.5, 22.5}); // 2 / 400 across: the deepest is 1/32 a pixel
        QCOMPARE(v.cellsPerPixel(), 1.0 / 32);
        // 400 / 32 = 12.5 columns and 300 / 32 = 9.375 rows about (11, 21.5).
        compareRect(v.viewRect(), 11 - 4.6875, 11 + 4.6875, 21.5 - 6.25, 21.5 + 6.25);
        const TileWindow f = v.visibleWindow();
        QCOMPARE(f.rowBegin, Index(6));
        QCOMPARE(f.rowEnd, Index(16));
        QCOMPARE(f.colBegin, Index(15));
        QCOMPARE(f.colEnd, Index(28));
        // fit() undoes it.
        v.fit();
        QVERIFY(!v.isViewSet());
        compareRect(v.viewRect(), -250, 1250, 0, 2000);
    }

    void cellAtInvertsPointOf()
    {
        LongMapViewport v = wideMap();
        // At the fit the map's corner (0, 0) is at (10, 20 + 250 / 5) and cell (999, 1999)'s far
        // corner at (10 + 2000 / 5, 70 + 1000 / 5).
        QCOMPARE(v.pointOf(0, 0), QPointF(10, 70));
        QCOMPARE(v.pointOf(1000, 2000), QPointF(410, 270));
        v.setViewRect({100, 200, 300, 500}); // 0.5 cells a pixel: a cell is 2 × 2 pixels
        QCOMPARE(v.pointOf(75, 300), QPointF(10, 20));
        QCOMPARE(v.pointOf(100, 350), QPointF(110, 70));
        for (const auto &[row, col] :
             {std::pair<Index, Index> {75, 300}, {100, 350}, {150, 400}, {224, 499}, {180, 317}}) {
            const QPointF middle = v.pointOf(double(row) + 0.5, double(col) + 0.5);
            QCOMPARE(v.cellAt(middle), std::make_pair(row, col));
        }
        // Outside the area, or inside it but off the map's cells: nothing.
        QCOMPARE(v.cellAt(QPointF(5, 100)), std::make_pair(Index(-1), Index(-1)));
        QCOMPARE(v.cellAt(QPointF(200, 400)), std::make_pair(Index(-1), Index(-1)));
        v.fit();
        QCOMPARE(v.cellAt(QPointF(200, 40)), std::make_pair(Index(-1), Index(-1))); // above row 0
        QCOMPARE(v.cellAt(QPointF(200, 300)), std::make_pair(Index(-1), Index(-1))); // below
    }

    void levelFollowsThePyramidsRule()
    {
        // 65 536 × 65 536 cells in 512 × 512 pixels: the fit is 128 cells a pixel; tiles of 64
        // pixels make the top level ⌈log₂(65 536 / 64)⌉ = 10. The level is the first L with
        // 2^L cells a pixel at least the zoom (each pixel of the tiles then takes one to two
        // screen pixels).
        LongMapViewport v;
        v.setPyramid(TilePyramid(65536, 65536, 64));
        v.setMapArea(QRectF(0, 0, 512, 512));
        v.fit();
        QCOMPARE(v.cellsPerPixel(), 128.0);
        QCOMPARE(v.level(), 7);
        const std::pair<double, int> cases[] = {{0.1, 0}, {1, 0},   {1.01, 1}, {2, 1},   {2.5, 2},
                                                {4, 2},   {4.5, 3}, {64, 6},   {100, 7}, {128, 7}};
        for (const auto &[cellsPerPixel, expected] : cases) {
            const double half = 256 * cellsPerPixel;
            v.setViewRect({32768 - half, 32768 + half, 32768 - half, 32768 + half});
            QCOMPARE(v.cellsPerPixel(), cellsPerPixel);
            int rule = 0;
            while (double(Index(1) << rule) < cellsPerPixel && rule < 10)
                ++rule;
            QCOMPARE(rule, expected);
            QCOMPARE(v.level(), expected);
        }
    }

    void withoutAMapNothingIsShown()
    {
        LongMapViewport v;
        v.setMapArea(QRectF(0, 0, 400, 300));
        v.fit();
        QCOMPARE(v.level(), 0);
        QCOMPARE(v.cellAt(QPointF(200, 150)), std::make_pair(Index(-1), Index(-1)));
        const TileWindow w = v.visibleWindow();
        QCOMPARE(w.rows(), Index(0));
        QCOMPARE(w.cols(), Index(0));
        // No map to clamp to: the view stays where it is put.
        v.setViewRect({0, 30, 0, 40});
        QCOMPARE(v.cellsPerPixel(), 0.1);
        v.panBy(QPointF(-100, 0));
        compareRect(v.viewRect(), 0, 30, 10, 50);
    }
};

QTEST_GUILESS_MAIN(TestLongMapViewport)
#include "tst_longmapviewport.moc"
