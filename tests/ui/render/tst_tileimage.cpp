// The tile-image builder (ui/render/tileimage.h) against pixels worked out by hand: each cell's
// colour is the colormap entry ⌊t·256⌋ (clipped) of t = (v − vmin)/(vmax − vmin), as matplotlib
// indexes its 256-entry tables (the tables themselves are checked in tst_colormap); masked cells
// take the mask colours, NaN the bad colour; pooled blocks take the max or the mean of their
// unmasked cells.

#include "ui/render/colormap.h"
#include "ui/render/figurefile.h"
#include "ui/render/tileimage.h"

#include "core/attention/mask.h"

#include <QTest>

#include <cmath>
#include <limits>

using namespace attn;

namespace {

constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();

/// Viridis entry `index` (0 … 255).
QRgb viridis(int index)
{
    return Colormap(ColormapId::Viridis).entry(index);
}

QString rgbText(QRgb c)
{
    return QStringLiteral("(%1, %2, %3)").arg(qRed(c)).arg(qGreen(c)).arg(qBlue(c));
}

#define COMPARE_RGB(actual, expected)                                                              \
    QVERIFY2(((actual)&0xffffff) == ((expected)&0xffffff),                                         \
             qPrintable(rgbText(actual) + QStringLiteral(" ≠ ") + rgbText(expected)))

// The light greys of the viridis mask palette: causal, padding, both.
const QRgb causalGrey = qRgb(216, 216, 216);
const QRgb paddingGrey = qRgb(168, 168, 168);
const QRgb bothGrey = qRgb(190, 190, 190);

} // namespace

class TestTileImage : public QObject
{
    Q_OBJECT

private slots:
    void oneCellPerPixel();
    void cellWindow();
    void maxPooling();
    void meanPooling();
    void poolingBlocks();
    void nonFiniteColor();
    void maskColors();
    void hatching();
    void emptyInput();
};

// 3 × 3 on [0, 1]: t = v, index ⌊256 v⌋: 0 → 0, 0.5 → 128, 1 → 255 (clipped), 0.25 → 64,
// 0.75 → 192, 0.1 → ⌊25.6⌋ = 25; NaN is magenta; masked cells are grey whatever their value.
void TestTileImage::oneCellPerPixel()
{
    MatrixD w(3, 3);
    w << 0.0, 0.5, 1.0, 0.25, kNaN, 0.75, 0.9, 0.1, 0.3;
    MatrixB state = MatrixB::Zero(3, 3);
    state(2, 0) = MaskCausal;
    state(2, 2) = MaskPadding;
    TileImageRequest request;
    request.values = &w;
    request.maskState = &state;
    request.norm = ColorNorm::linear(0.0, 1.0);
    const QImage image = buildTileImage(request);
    QCOMPARE(image.size(), QSize(3, 3));
    COMPARE_RGB(image.pixel(0, 0), viridis(0));
    COMPARE_RGB(image.pixel(1, 0), viridis(128));
    COMPARE_RGB(image.pixel(2, 0), viridis(255));
    COMPARE_RGB(image.pixel(0, 1), viridis(64));
    COMPARE_RGB(image.pixel(1, 1), qRgb(255, 0, 255));
    COMPARE_RGB(image.pixel(2, 1), viridis(192));
    COMPARE_RGB(image.pixel(0, 2), causalGrey);
    COMPARE_RGB(image.pixel(1, 2), viridis(25));
    COMPARE_RGB(image.pixel(2, 2), paddingGrey);

    // A scale of [−1, 1]: t = (v + 1)/2, so 0 → 128, 0.5 → 192, 1 → 255, 0.25 → 160.
    request.norm = ColorNorm::linear(-1.0, 1.0);
    const QImage wide = buildTileImage(request);
    COMPARE_RGB(wide.pixel(0, 0), viridis(128));
    COMPARE_RGB(wide.pixel(1, 0), viridis(192));
    COMPARE_RGB(wide.pixel(2, 0), viridis(255));
    COMPARE_RGB(wide.pixel(0, 1), viridis(160));
}

// The cell window (x = first key, y = first query): keys 1–2 of queries 1–2 of the 3 × 3 above.
void TestTileImage::cellWindow()
{
    MatrixD w(3, 3);
    w << 0.0, 0.5, 1.0, 0.25, kNaN, 0.75, 0.9, 0.1, 0.3;
    MatrixB state = MatrixB::Zero(3, 3);
    state(2, 2) = MaskPadding;
    TileImageRequest request;
    request.values = &w;
    request.maskState = &state;
    request.norm = ColorNorm::linear(0.0, 1.0);
    request.window = QRect(1, 1, 2, 2);
    const QImage image = buildTileImage(request);
    QCOMPARE(image.size(), QSize(2, 2));
    COMPARE_RGB(image.pixel(0, 0), qRgb(255, 0, 255));
    COMPARE_RGB(image.pixel(1, 0), viridis(192));
    COMPARE_RGB(image.pixel(0, 1), viridis(25));
    COMPARE_RGB(image.pixel(1, 1), paddingGrey);
}

namespace {

// 4 × 4 in 2 × 2 blocks; the lower-right block is fully masked (causal and padding cells), the
// lower-left has one masked cell (excluded from the pool).
struct PoolCase
{
    MatrixD w = MatrixD(4, 4);
    MatrixB state = MatrixB::Zero(4, 4);
    PoolCase()
    {
        w << 0.1, 0.2, 0.9, 0.0, //
            0.3, 0.4, 0.5, 0.6, //
            0.6, 0.99, 0.7, 0.7, //
            0.3, 0.0, 0.7, 0.7;
        state(2, 1) = MaskCausal; // the 0.99 is masked: neither max nor mean sees it
        state(2, 2) = state(2, 3) = MaskCausal;
        state(3, 2) = state(3, 3) = MaskPadding;
    }
    QImage build(HeatmapPooling pooling) const
    {
        TileImageRequest request;
        request.values = &w;
        request.maskState = &state;
        request.norm = ColorNorm::linear(0.0, 1.0);
        request.pooling = pooling;
        request.rowBlock = 2;
        request.colBlock = 2;
        return buildTileImage(request);
    }
};

} // namespace

// Max: upper-left max(0.1, 0.2, 0.3, 0.4) = 0.4 → ⌊102.4⌋ = 102; upper-right 0.9 → ⌊230.4⌋ =
// 230; lower-left max(0.6, 0.3, 0.0) = 0.6 → ⌊153.6⌋ = 153; lower-right only masked cells of
// both kinds → the "both" grey.
void TestTileImage::maxPooling()
{
    const QImage image = PoolCase().build(HeatmapPooling::Max);
    QCOMPARE(image.size(), QSize(2, 2));
    COMPARE_RGB(image.pixel(0, 0), viridis(102));
    COMPARE_RGB(image.pixel(1, 0), viridis(230));
    COMPARE_RGB(image.pixel(0, 1), viridis(153));
    COMPARE_RGB(image.pixel(1, 1), bothGrey);
}

// Mean: upper-left (0.1 + 0.2 + 0.3 + 0.4)/4 = 0.25 → 64; upper-right (0.9 + 0 + 0.5 + 0.6)/4
// = 0.5 → 128; lower-left (0.6 + 0.3 + 0.0)/3 = 0.3 → ⌊76.8⌋ = 76 (the masked cell is not
// counted); lower-right masked.
void TestTileImage::meanPooling()
{
    const QImage image = PoolCase().build(HeatmapPooling::Mean);
    QCOMPARE(image.size(), QSize(2, 2));
    COMPARE_RGB(image.pixel(0, 0), viridis(64));
    COMPARE_RGB(image.pixel(1, 0), viridis(128));
    COMPARE_RGB(image.pixel(0, 1), viridis(76));
    COMPARE_RGB(image.pixel(1, 1), bothGrey);

    // A 5 × 5 in 2 × 2 blocks: 3 × 3 pixels, the last row and column pool the remaining cells.
    MatrixD w = MatrixD::Constant(5, 5, 0.5);
    w(4, 4) = 1.0;
    w(4, 0) = 0.0;
    w(4, 1) = 0.5;
    TileImageRequest request;
    request.values = &w;
    request.norm = ColorNorm::linear(0.0, 1.0);
    request.pooling = HeatmapPooling::Mean;
    request.rowBlock = 2;
    request.colBlock = 2;
    const QImage odd = buildTileImage(request);
    QCOMPARE(odd.size(), QSize(3, 3));
    COMPARE_RGB(odd.pixel(2, 2), viridis(255)); // the single cell 1.0
    COMPARE_RGB(odd.pixel(0, 2), viridis(64)); // (0 + 0.5)/2 = 0.25
    COMPARE_RGB(odd.pixel(1, 1), viridis(128));
}

void TestTileImage::poolingBlocks()
{
    QCOMPARE(tilePoolingBlocks(QSize(64, 64), QSize(1024, 1024)), QSize(1, 1));
    QCOMPARE(tilePoolingBlocks(QSize(4096, 100), QSize(1024, 1024)), QSize(4, 1));
    QCOMPARE(tilePoolingBlocks(QSize(1000, 1000), QSize(300, 333)), QSize(4, 4)); // ⌈1000/300⌉
    QCOMPARE(tilePoolingBlocks(QSize(1000, 999), QSize(300, 333)), QSize(4, 3)); // ⌈999/333⌉
}

// The experiment figures' red for NaN and ±Inf; without it +Inf clips to the top entry.
void TestTileImage::nonFiniteColor()
{
    MatrixD w(1, 3);
    w << kNaN, std::numeric_limits<double>::infinity(), 0.5;
    TileImageRequest request;
    request.values = &w;
    request.norm = ColorNorm::linear(0.0, 1.0);
    request.colormap = ColormapId::RdBu;
    QImage image = buildTileImage(request);
    COMPARE_RGB(image.pixel(0, 0), qRgb(255, 0, 255));
    COMPARE_RGB(image.pixel(1, 0), Colormap(ColormapId::RdBu).entry(255));
    COMPARE_RGB(image.pixel(2, 0), Colormap(ColormapId::RdBu).entry(128));
    request.nonFiniteColor = qRgb(214, 0, 0);
    image = buildTileImage(request);
    COMPARE_RGB(image.pixel(0, 0), qRgb(214, 0, 0));
    COMPARE_RGB(image.pixel(1, 0), qRgb(214, 0, 0));
    COMPARE_RGB(image.pixel(2, 0), Colormap(ColormapId::RdBu).entry(128));
}

// The mask palette per colormap: causal, padding (custom alike), both, and outside the sliding
// window alone (a colour of its own, told from the causal cells where cells are too small to
// hatch); each at least 40 from every entry of its colormap.
void TestTileImage::maskColors()
{
    COMPARE_RGB(maskColor(ColormapId::Viridis, MaskCausal), causalGrey);
    COMPARE_RGB(maskColor(ColormapId::Viridis, MaskPadding), paddingGrey);
    COMPARE_RGB(maskColor(ColormapId::Viridis, MaskCustom), paddingGrey);
    COMPARE_RGB(maskColor(ColormapId::Viridis, MaskCausal | MaskPadding), bothGrey);
    COMPARE_RGB(maskColor(ColormapId::Viridis, MaskWindow), qRgb(180, 205, 235));
    COMPARE_RGB(maskColor(ColormapId::Viridis, MaskWindow | MaskCausal), causalGrey);
    COMPARE_RGB(maskColor(ColormapId::Viridis, MaskWindow | MaskPadding), paddingGrey);
    QVERIFY(maskColor(ColormapId::RdBu, MaskWindow) != maskColor(ColormapId::RdBu, MaskCausal));
    COMPARE_RGB(maskColor(ColormapId::RdBu, MaskPadding), qRgb(128, 128, 128));
    COMPARE_RGB(maskColor(ColormapId::Grayscale, MaskCausal), qRgb(244, 196, 140));
    for (ColormapId id : Colormap::all()) {
        const Colormap map(id);
        for (std::uint8_t state :
             {std::uint8_t(MaskCausal), std::uint8_t(MaskPadding),
              std::uint8_t(MaskCausal | MaskPadding), std::uint8_t(MaskWindow)}) {
            const QRgb c = maskColor(id, state);
            for (int k = 0; k < Colormap::size; ++k) {
                const QRgb e = map.entry(k);
                const double dr = qRed(c) - qRed(e), dg = qGreen(c) - qGreen(e),
                             db = qBlue(c) - qBlue(e);
                QVERIFY2(std::sqrt(dr * dr + dg * dg + db * db) >= 40, qPrintable(map.name()));
            }
        }
    }
}

// Hatching an image enlarged to 10 device pixels per cell: unmasked cells keep their colour
// exactly; the causal cell gets "/" lines in the darker hatch colour, the cell outside the
// window horizontal lines only when asked.
void TestTileImage::hatching()
{
    MatrixD w = MatrixD::Constant(2, 2, 0.5);
    MatrixB state = MatrixB::Zero(2, 2);
    state(0, 1) = MaskCausal;
    state(1, 0) = MaskWindow;
    TileImageRequest request;
    request.values = &w;
    request.maskState = &state;
    request.norm = ColorNorm::linear(0.0, 1.0);
    const QImage cells = buildTileImage(request);
    for (bool windowLines : {false, true}) {
        QImage image = cells.scaled(20, 20, Qt::IgnoreAspectRatio, Qt::FastTransformation);
        hatchMaskedCells(image, state, QRect(), ColormapId::Viridis, 5.0, windowLines);
        const QRgb hatch = figure::hatchColor(causalGrey).rgb();
        const QRgb windowColor = maskColor(ColormapId::Viridis, MaskWindow);
        int windowHatch = 0;
        for (int y = 0; y < 20; ++y)
            for (int x = 0; x < 20; ++x) {
                const QRgb p = image.pixel(x, y);
                if (x >= 10 && y >= 10)
                    COMPARE_RGB(p, viridis(128)); // unmasked: untouched
                if (x < 10 && y < 10)
                    COMPARE_RGB(p, viridis(128));
                if (x < 10 && y >= 10)
                    windowHatch += (p & 0xffffff) != (windowColor & 0xffffff);
            }
        // "/" lines every 5 px: x + y = 5k; the centre (14.5, 0.5) of pixel (14, 0) is on
        // x + y = 15 (painted in the hatch colour, antialiased).
        const QRgb onLine = image.pixel(14, 0);
        QVERIFY2(qRed(onLine) < qRed(causalGrey), qPrintable(rgbText(onLine)));
        QVERIFY(qRed(hatch) < qRed(causalGrey));
        QCOMPARE(windowHatch > 0, windowLines);
    }
}

void TestTileImage::emptyInput()
{
    TileImageRequest request;
    QVERIFY(buildTileImage(request).isNull());
    MatrixD empty(0, 0);
    request.values = &empty;
    QVERIFY(buildTileImage(request).isNull());
}

QTEST_MAIN(TestTileImage)
#include "tst_tileimage.moc"
