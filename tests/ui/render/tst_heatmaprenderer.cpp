// HeatmapRenderer: known values → known colours at known pixels (expected colours from
// matplotlib's tables, tests/reference/fixtures/colormaps), masked cells distinct from near-zero
// weights and from each other, fully masked rows marked, pooling, hit-testing, tooltips, and the
// PNG/SVG/PDF exports.

#include "ui/handmaderesult.h"
#include "ui/render/colormap.h"
#include "ui/render/figurefile.h"
#include "ui/render/headatlas.h"
#include "ui/render/heatmaprenderer.h"
#include "ui/session/sessioncompute.h"
#include "ui/views/heatmapwidget.h"

#include "core/attention/positional.h"

#include <QBuffer>
#include <QFile>
#include <QFontMetricsF>
#include <QImageReader>
#include <QJsonArray>
#include <QJsonDocument>
#include <QJsonObject>
#include <QPainter>
#include <QSignalSpy>
#include <QTemporaryDir>
#include <QTest>
#include <QXmlStreamReader>

#include <map>

using namespace attn;

namespace {

using attn::test::makeResult;

QRgb pixelAt(const QImage &image, QPointF logical)
{
    const qreal dpr = image.devicePixelRatio();
    return image.pixel(int(logical.x() * dpr), int(logical.y() * dpr)) | 0xff000000u;
}

QPointF cellCenter(const HeatmapLayout &lay, int tile, int i, int j)
{
    const QRectF &map = lay.tiles.at(tile).map;
    return {map.left() + (j + 0.5) * lay.cellSize, map.top() + (i + 0.5) * lay.cellSize};
}

// The most frequent colour inside a cell (hatch lines are thinner than the background).
QRgb dominantColor(const QImage &image, const HeatmapLayout &lay, int tile, int i, int j)
{
    const QRectF &map = lay.tiles.at(tile).map;
    std::map<QRgb, int> counts;
    const int x0 = int(std::ceil(map.left() + j * lay.cellSize)) + 1;
    const int y0 = int(std::ceil(map.top() + i * lay.cellSize)) + 1;
    const int x1 = int(map.left() + (j + 1) * lay.cellSize) - 1;
    const int y1 = int(map.top() + (i + 1) * lay.cellSize) - 1;
    for (int y = y0; y < y1; ++y)
        for (int x = x0; x < x1; ++x)
            ++counts[image.pixel(x, y) | 0xff000000u];
    QRgb best = 0;
    int bestCount = -1;
    for (auto [c, n] : counts)
        if (n > bestCount) {
            best = c;
            bestCount = n;
        }
    return best;
}

int distinctColors(const QImage &image, const HeatmapLayout &lay, int tile, int i, int j)
{
    const QRectF &map = lay.tiles.at(tile).map;
    QSet<QRgb> colors;
    for (int y = int(map.top() + i * lay.cellSize) + 1;
         y < int(map.top() + (i + 1) * lay.cellSize) - 1; ++y)
        for (int x = int(map.left() + j * lay.cellSize) + 1;
             x < int(map.left() + (j + 1) * lay.cellSize) - 1; ++x)
            colors.insert(image.pixel(x, y));
    return int(colors.size());
}

} // namespace

class TestHeatmapRenderer : public QObject
{
    Q_OBJECT

private:
    QJsonObject m_maps;

    QRgb matplotlib(const QString &name, int index) const
    {
        const QJsonArray e = m_maps.value(name)
                                 .toObject()
                                 .value(QStringLiteral("table"))
                                 .toArray()
                                 .at(index)
                                 .toArray();
        return qRgb(e.at(0).toInt(), e.at(1).toInt(), e.at(2).toInt());
    }

private slots:
    void initTestCase()
    {
        QFile file(QStringLiteral(ATTN_FIXTURE_DIR "/colormaps/colormaps.json"));
        QVERIFY2(file.open(QIODevice::ReadOnly), qPrintable(file.fileName()));
        m_maps = QJsonDocument::fromJson(file.readAll())
                     .object()
                     .value(QStringLiteral("maps"))
                     .toObject();
        QVERIFY(!m_maps.isEmpty());
    }

    // A long caption (16 heads, ALiBi, a window with sinks, a pinned query, heads sorted) in a
    // narrow view: it wraps at the view's width onto at most three lines, the third ending in
    // "…", and the caption's rectangle holds every line drawn (none cut off below it); in a wide
    // view it is whole.
    void captionWrapsWithinTheWidth()
    {
        SessionParameters p;
        p.n = 12;
        p.dModel = 64;
        p.heads = 16;
        p.alibi = true;
        p.window = 4;
        p.sinks = 1;
        auto result = std::make_shared<SessionResult>(computeSession(p));
        QVERIFY2(result->ok(), qPrintable(result->error));
        HeatmapRenderer renderer;
        renderer.setResult(result);
        HeatmapOptions options = renderer.options();
        options.pinnedQuery = 3;
        options.headSort = HeadOrderKey::Entropy;
        renderer.setOptions(options);
        const QString caption = renderer.captionText();
        for (const qreal width : {300.0, 420.0, 2400.0}) {
            const HeatmapLayout lay = renderer.layout(QRectF(0, 0, width, 900));
            const QStringList lines = lay.captionLines.split(QLatin1Char('\n'));
            const QFontMetricsF fm(figure::makeFont(lay.fontPixelSize));
            const QString where = QStringLiteral("%1 px: %2").arg(width).arg(lay.captionLines);
            QVERIFY2(lines.size() >= 1 && lines.size() <= 3, qPrintable(where));
            QVERIFY2(lay.caption.height() >= lines.size() * fm.height(), qPrintable(where));
            for (const QString &line : lines)
                QVERIFY2(fm.horizontalAdvance(line) <= lay.caption.width() + 0.5,
                         qPrintable(where));
            // Whole when three lines hold it, else cut to three ending in "…".
            const qreal whole = fm.boundingRect(QRectF(0, 0, lay.caption.width(), 1e6),
                                                Qt::AlignLeft | Qt::TextWordWrap, caption)
                                    .height();
            const bool tooLong = whole > 3.5 * fm.height();
            QVERIFY(width > 300 || tooLong); // the narrow view needs the ellipsis
            if (tooLong) {
                QVERIFY2(lines.size() == 3 && lines.last().endsWith(QChar(0x2026)),
                         qPrintable(where));
                QVERIFY(caption.startsWith(lines.first()));
            } else {
                QCOMPARE(lines.join(QLatin1Char(' ')).simplified(), caption.simplified());
            }
        }
    }

    // A weight w shows matplotlib's colour cmap(w) (index ⌊w·256⌋, fixed range [0, 1]) at the
    // centre of its cell, in every tile, for every sequential colormap.
    // ALiBi slopes in the tile titles (the short form on narrow tiles); the sliding window's
    // cells have their own legend entry stating the key count.
    void alibiTitlesAndWindowLegend()
    {
        SessionParameters p;
        p.n = 12;
        p.dModel = 32;
        p.heads = 4;
        p.alibi = true;
        p.window = 4;
        p.sinks = 1;
        auto result = std::make_shared<SessionResult>(computeSession(p));
        QVERIFY2(result->ok(), qPrintable(result->error));
        QCOMPARE(result->alibiSlopes, alibiSlopes(4));
        HeatmapRenderer renderer;
        renderer.setResult(result);
        const HeatmapLayout lay = renderer.layout(QRectF(0, 0, 1200, 800));
        // … and, with sinks, the head's mean weight mass on them (sinkMass, checked against the
        // weights in tst_session), to two decimals.
        QCOMPARE(result->sinkMass.size(), std::size_t(4));
        QCOMPARE(lay.tiles.first().title,
                 QStringLiteral("head 0 (m = 0.25) \u00b7 sinks %1")
                     .arg(result->sinkMass.front(), 0, 'f', 2));
        QCOMPARE(lay.tiles.at(3).shortTitle,
                 QStringLiteral("h3 m=0.00391 s=%1").arg(result->sinkMass.at(3), 0, 'f', 2));
        QVERIFY(lay.tiles.last().mean);
        QCOMPARE(result->maskState(11, 5), std::uint8_t(MaskWindow));
        // The legend names the window: rendered to SVG, its text is there.
        QTemporaryDir dir;
        const QString path = dir.filePath(QStringLiteral("window.svg"));
        QString error;
        QVERIFY2(renderer.saveSvg(path, QSize(1200, 800), &error), qPrintable(error));
        QFile file(path);
        QVERIFY(file.open(QIODevice::ReadOnly));
        QVERIFY2(file.readAll().contains("window: 4 keys + 1 sink<"), "legend");
    }

    // A tile's title stays inside its tile at every width (a long one is shortened or elided,
    // never drawn into the gap before the colour bar), and its tooltip gives it whole and says
    // what "sinks" and "m" are.
    void tileTitlesStayInTheirTiles()
    {
        SessionParameters p;
        p.n = 24;
        p.dModel = 32;
        p.heads = 4;
        p.alibi = true;
        p.window = 4;
        p.sinks = 1;
        auto result = std::make_shared<SessionResult>(computeSession(p));
        QVERIFY2(result->ok(), qPrintable(result->error));
        HeatmapRenderer renderer;
        renderer.setResult(result);
        HeatmapOptions o;
        o.background = Qt::white;
        o.foreground = Qt::black;
        renderer.setOptions(o);
        for (int width = 360; width <= 1400; width += 20) {
            const QSize size(width, 420);
            const HeatmapLayout lay = renderer.layout(QRectF(QPointF(0, 0), QSizeF(size)));
            QVERIFY(!lay.tiles.isEmpty());
            const QImage image = renderer.render(size, 1.0);
            for (const HeatmapLayout::Tile &tile : lay.tiles) {
                // Right of the tile's frame, up to the next tile or the legend, in the title's
                // band: nothing of this title.
                const bool lastInRow
                    = tile.frame.right() + 1 >= lay.legend.left() - lay.fontPixelSize;
                if (!lastInRow)
                    continue;
                for (int y = int(std::ceil(tile.frame.top())); y < int(tile.map.top()) - 1; ++y)
                    for (int x = int(std::ceil(tile.frame.right())) + 1;
                         x < int(lay.legend.left()) - 1; ++x)
                        QVERIFY2(image.pixel(x, y) == qRgb(255, 255, 255),
                                 qPrintable(QStringLiteral("width %1: title ink at (%2, %3), "
                                                           "the tile ends at %4")
                                                .arg(width)
                                                .arg(x)
                                                .arg(y)
                                                .arg(tile.frame.right())));
            }
        }
        const QRectF bounds(0, 0, 700, 420);
        const HeatmapLayout lay = renderer.layout(bounds);
        const HeatmapLayout::Tile &first = lay.tiles.first();
        const QString tip = renderer.titleToolTipAt(
            bounds, QPointF(first.map.center().x(), (first.frame.top() + first.map.top()) / 2));
        QVERIFY2(tip.startsWith(first.title) && first.title.contains(QStringLiteral("sinks"))
                     && tip.contains(QStringLiteral("sinks: the weight the head's rows put on "
                                                    "the 1 sink key(s) together"))
                     && tip.contains(QStringLiteral("m: the head's ALiBi slope")),
                 qPrintable(tip));
        // Over the map: a cell's tooltip, not the title's.
        QVERIFY(renderer.titleToolTipAt(bounds, first.map.center()).isEmpty());
    }

    void knownColours_data()
    {
        QTest::addColumn<int>("colormap");
        QTest::addColumn<QString>("name");
        QTest::addColumn<qreal>("dpr");
        QTest::newRow("viridis") << int(ColormapId::Viridis) << QStringLiteral("viridis") << 1.0;
        QTest::newRow("magma") << int(ColormapId::Magma) << QStringLiteral("magma") << 1.0;
        QTest::newRow("cividis") << int(ColormapId::Cividis) << QStringLiteral("cividis") << 1.0;
        QTest::newRow("gray") << int(ColormapId::Grayscale) << QStringLiteral("gray") << 1.0;
        QTest::newRow("viridis dpr 2")
            << int(ColormapId::Viridis) << QStringLiteral("viridis") << 2.0;
    }
    void knownColours()
    {
        QFETCH(int, colormap);
        QFETCH(QString, name);
        QFETCH(qreal, dpr);
        // cell (i, j) of head h holds one of these values; indices ⌊v·256⌋ clipped to 255.
        const double values[] = {0.0, 0.25, 0.5, 0.75, 1.0, 0.1};
        const int indices[] = {0, 64, 128, 192, 255, 25};
        auto value = [&](int head, int i, int j) { return values[(head + i * 3 + j) % 6]; };
        HeatmapRenderer renderer;
        renderer.setResult(makeResult(2, 3, 4, value));
        HeatmapOptions options;
        options.colormap = ColormapId(colormap);
        options.showMean = false;
        renderer.setOptions(options);
        const QSize size(900, 600);
        const QImage image = renderer.render(size, dpr);
        QCOMPARE(image.size(), size * dpr);
        const HeatmapLayout lay = renderer.layout(QRectF(QPointF(0, 0), QSizeF(size)));
        QCOMPARE(lay.tiles.size(), 2);
        QVERIFY(lay.cellSize > 20);
        for (int head = 0; head < 2; ++head)
            for (int i = 0; i < 3; ++i)
                for (int j = 0; j < 4; ++j) {
                    const QRgb want = matplotlib(name, indices[(head + i * 3 + j) % 6]);
                    const QRgb got = pixelAt(image, cellCenter(lay, head, i, j));
                    QVERIFY2(got == want,
                             qPrintable(QStringLiteral("head %1 (%2, %3): %4 vs %5")
                                            .arg(head)
                                            .arg(i)
                                            .arg(j)
                                            .arg(got, 0, 16)
                                            .arg(want, 0, 16)));
                }
    }

    void tileImageOnePixelPerCell()
    {
        HeatmapRenderer renderer;
        renderer.setResult(makeResult(3, 5, 7, [](int, int i, int j) { return (i + j) / 12.0; }));
        QCOMPARE(renderer.tileCount(), 4); // h + the mean
        for (int t = 0; t < 4; ++t) {
            QCOMPARE(renderer.tileImage(t).size(), QSize(7, 5)); // n_k wide, n_q high
        }
        const Colormap cmap(ColormapId::Viridis);
        QCOMPARE(QRgb(renderer.tileImage(0).pixel(6, 4)), cmap.map(10.0 / 12.0));
        QCOMPARE(QRgb(renderer.tileImage(3).pixel(2, 1)), cmap.map(3.0 / 12.0)); // mean
    }

    void pooling_data()
    {
        QTest::addColumn<int>("pooling");
        QTest::addColumn<double>("expected");
        QTest::newRow("max") << int(HeatmapPooling::Max) << 0.8;
        QTest::newRow("mean") << int(HeatmapPooling::Mean) << 0.2;
    }
    void pooling()
    {
        QFETCH(int, pooling);
        QFETCH(double, expected);
        // 4 × 4 cells pooled to 2 × 2 pixels: block (0, 0) holds 0.8, 0, 0, 0.
        HeatmapRenderer renderer;
        renderer.setResult(
            makeResult(1, 4, 4, [](int, int i, int j) { return i == 0 && j == 0 ? 0.8 : 0.0; }));
        HeatmapOptions options;
        options.maxImageSide = 2;
        options.pooling = HeatmapPooling(pooling);
        renderer.setOptions(options);
        const QImage image = renderer.tileImage(0);
        QCOMPARE(image.size(), QSize(2, 2));
        const Colormap cmap(ColormapId::Viridis);
        QCOMPARE(QRgb(image.pixel(0, 0)), cmap.map(expected));
        QCOMPARE(QRgb(image.pixel(1, 1)), cmap.map(0.0));
    }

    // Signed weights (differential attention's A₁ − λA₂) are drawn on the diverging RdBu_r scale
    // centred on 0 over their data range, whatever colormap the options hold: a negative weight
    // is blue, 0 white, the largest |w| at the ends; the colourbar says so.
    // The atlas of head scores: a negative score (signed weights) switches the grid to RdBu_r
    // centred on 0 over the largest |score|, and the note says so; non-negative scores keep
    // viridis on the score's range.
    void atlasSignedScoresUseTheDivergingScale()
    {
        HeadAtlasFigure f;
        f.name = QStringLiteral("previous_token");
        f.values = MatrixD(1, 2);
        f.values << -0.4, 0.2;
        QImage image(f.naturalSize(), QImage::Format_RGB32);
        image.fill(Qt::white);
        {
            QPainter painter(&image);
            f.paint(&painter, QRectF(QPointF(0, 0), QSizeF(image.size())));
        }
        const QRectF g = f.grid(QRectF(QPointF(0, 0), QSizeF(image.size())));
        const Colormap rdbu(ColormapId::RdBu);
        const ColorNorm norm = ColorNorm::symmetric(0.4);
        const qreal c = g.width() / 2;
        QCOMPARE(image.pixel(QPoint(int(g.left() + c / 2), int(g.top() + c / 2))),
                 rdbu.map(norm(-0.4)));
        QCOMPARE(image.pixel(QPoint(int(g.left() + 1.5 * c), int(g.top() + c / 2))),
                 rdbu.map(norm(0.2)));
        QTemporaryDir dir;
        QString error;
        const QString svg = dir.filePath(QStringLiteral("atlas.svg"));
        QVERIFY2(f.write(svg, &error), qPrintable(error));
        QFile file(svg);
        QVERIFY(file.open(QIODevice::ReadOnly));
        const QString text = QString::fromUtf8(file.readAll());
        QVERIFY2(text.contains(QStringLiteral("RdBu_r, negative scores: centred on 0, [")),
                 qPrintable(text.right(600)));
        f.values << 0.1, 0.2; // no negative score: viridis on [0, 1]
        QImage plain(f.naturalSize(), QImage::Format_RGB32);
        plain.fill(Qt::white);
        {
            QPainter painter(&plain);
            f.paint(&painter, QRectF(QPointF(0, 0), QSizeF(plain.size())));
        }
        const QRectF g2 = f.grid(QRectF(QPointF(0, 0), QSizeF(plain.size())));
        QCOMPARE(plain.pixel(QPoint(int(g2.left() + g2.width() / 4), int(g2.top() + 3))),
                 Colormap(ColormapId::Viridis).map(0.1));
    }

    void signedWeightsUseTheDivergingScale()
    {
        HeatmapRenderer renderer;
        auto result = makeResult(1, 1, 3, [](int, int, int j) {
            return j == 0 ? -0.4 : j == 1 ? 0.0 : 0.2;
        });
        result->signedWeights = true;
        renderer.setResult(result);
        HeatmapOptions options;
        options.colormap = ColormapId::Viridis;
        renderer.setOptions(options);
        QCOMPARE(renderer.colormap().id(), ColormapId::RdBu);
        const ColorNorm norm = renderer.norm();
        QCOMPARE(norm.vmin, -0.4);
        QCOMPARE(norm.vmax, 0.4);
        const QImage image = renderer.tileImage(0);
        const Colormap cmap(ColormapId::RdBu);
        QCOMPARE(QRgb(image.pixel(0, 0)), cmap.map(0.0));
        QCOMPARE(QRgb(image.pixel(1, 0)), cmap.map(0.5));
        QCOMPARE(QRgb(image.pixel(2, 0)), cmap.map(0.75));
        QVERIFY(renderer.colorbarLines().join(QLatin1Char(' ')).contains(QLatin1String("signed")));
        // The same weights unsigned keep the options' colormap and the fixed range [0, 1].
        result->signedWeights = false;
        renderer.setResult(result);
        QCOMPARE(renderer.colormap().id(), ColormapId::Viridis);
        QCOMPARE(renderer.norm().vmax, 1.0);
    }

    // Signed weights on the log scale: a symmetric log over ±the largest |w| (SymLogNorm,
    // linear within 10⁻⁵ of it), named "symlog" in the legend; weights keep their sign.
    void signedWeightsOnTheLogScale()
    {
        HeatmapRenderer renderer;
        auto result = makeResult(1, 1, 3, [](int, int, int j) {
            return j == 0 ? -0.4 : j == 1 ? 0.0 : 0.004;
        });
        result->signedWeights = true;
        renderer.setResult(result);
        HeatmapOptions options;
        options.scale = ColorScale::Log;
        renderer.setOptions(options);
        const ColorNorm norm = renderer.norm();
        QCOMPARE(norm.scale, ColorScale::SymLog);
        QCOMPARE(norm.vmin, -0.4);
        QCOMPARE(norm.vmax, 0.4);
        // t(0.004) = 1/2 + (10/9 + 3)/(2·(10/9 + 5)) = 1/2 + 37/110: two decades below the top
        // keep a third of the upper half, where the linear scale gave 1/2 + 1/200.
        QVERIFY(std::abs(norm(0.004) - (0.5 + 37 / 110.0)) <= 1e-12);
        const QImage image = renderer.tileImage(0);
        const Colormap cmap(ColormapId::RdBu);
        QCOMPARE(QRgb(image.pixel(0, 0)), cmap.map(0.0));
        QCOMPARE(QRgb(image.pixel(1, 0)), cmap.map(0.5));
        QCOMPARE(QRgb(image.pixel(2, 0)), cmap.map(0.5 + 37 / 110.0));
        QCOMPARE(renderer.colorbarLines().value(0), QStringLiteral("RdBu_r, symlog"));
    }

    // Signed weights with every cell masked: nothing sets the range, and the legend says so on
    // the signed scale ([−1, 1] centred on 0), not "auto [0, 1]".
    void allMaskedSignedWeightsLegend()
    {
        const MatrixB state = MatrixB::Constant(2, 3, std::uint8_t(MaskPadding));
        auto result = makeResult(
            1, 2, 3, [](int, int, int) { return 0.0; }, state);
        result->signedWeights = true;
        HeatmapRenderer renderer;
        renderer.setResult(result);
        renderer.setOptions(HeatmapOptions());
        QCOMPARE(renderer.norm().vmin, -1.0);
        QCOMPARE(renderer.norm().vmax, 1.0);
        const QStringList lines = renderer.colorbarLines();
        QCOMPARE(lines.value(0), QStringLiteral("RdBu_r, linear"));
        QCOMPARE(lines.value(1), QStringLiteral("every cell masked, centred on 0 [\u22121, 1]"));
        QCOMPARE(lines.value(2), QStringLiteral("signed weights, 0 = white"));
        QVERIFY2(!renderer.captionText().contains(QLatin1String("auto [0, 1]")),
                 qPrintable(renderer.captionText()));
        // With a cell to measure, the range is its |w|, centred on 0.
        auto some
            = makeResult(1, 2, 3, [](int, int i, int j) { return i == 1 && j == 0 ? -0.3 : 0.1; });
        some->signedWeights = true;
        renderer.setResult(some);
        QCOMPARE(renderer.colorbarLines().value(1),
                 QStringLiteral("auto, centred on 0 [\u22120.3, 0.3]"));
    }

    // Masked cells: not the colour of a weight near 0, causal differs from padding, both hatched.
    void maskedCellsDistinct()
    {
        // 4 × 4: causal above the diagonal, key 3 padding in every row; unmasked weights 1e-6.
        MatrixB state = MatrixB::Zero(4, 4);
        for (int i = 0; i < 4; ++i)
            for (int j = 0; j < 4; ++j)
                state(i, j) = std::uint8_t((j > i ? MaskCausal : 0) | (j == 3 ? MaskPadding : 0));
        auto result = makeResult(
            1, 4, 4, [](int, int, int) { return 1e-6; }, state);
        HeatmapRenderer renderer;
        renderer.setResult(result);
        const QSize size(800, 600);
        const QImage image = renderer.render(size);
        const HeatmapLayout lay = renderer.layout(QRectF(QPointF(0, 0), QSizeF(size)));
        const QRgb nearZero = dominantColor(image, lay, 0, 2, 0);
        const QRgb causal = dominantColor(image, lay, 0, 0, 1); // causal only
        const QRgb padding = dominantColor(image, lay, 0, 3, 3); // padding only (j == i)
        const QRgb both = dominantColor(image, lay, 0, 0, 3);
        QCOMPARE(nearZero, Colormap(ColormapId::Viridis).map(1e-6));
        QCOMPARE(causal, renderer.maskedColor(MaskCausal));
        QCOMPARE(padding, renderer.maskedColor(MaskPadding));
        QCOMPARE(both, renderer.maskedColor(MaskCausal | MaskPadding));
        QVERIFY(causal != nearZero);
        QVERIFY(padding != nearZero);
        QVERIFY(causal != padding);
        QVERIFY(both != causal && both != padding);
        // Hatched: a masked cell shows more than one colour, an unmasked one exactly one.
        QCOMPARE(distinctColors(image, lay, 0, 2, 0), 1);
        QVERIFY(distinctColors(image, lay, 0, 0, 1) > 1);
        QVERIFY(distinctColors(image, lay, 0, 3, 3) > 1);
    }

    void maskedColorsAvoidColormap_data()
    {
        QTest::addColumn<int>("colormap");
        for (ColormapId id : Colormap::all())
            QTest::newRow(qPrintable(Colormap(id).name())) << int(id);
    }
    void maskedColorsAvoidColormap()
    {
        QFETCH(int, colormap);
        HeatmapRenderer renderer;
        HeatmapOptions options;
        options.colormap = ColormapId(colormap);
        renderer.setOptions(options);
        const Colormap cmap(options.colormap);
        auto distance = [](QRgb a, QRgb b) {
            return std::hypot(qRed(a) - qRed(b), qGreen(a) - qGreen(b), qBlue(a) - qBlue(b));
        };
        const QRgb states[] = {renderer.maskedColor(MaskCausal), renderer.maskedColor(MaskPadding),
                               renderer.maskedColor(MaskCausal | MaskPadding)};
        for (QRgb masked : states) {
            double nearest = 1e9;
            for (int k = 0; k < Colormap::size; ++k)
                nearest = std::min(nearest, distance(cmap.entry(k), masked));
            QVERIFY2(nearest >= 40,
                     qPrintable(QStringLiteral("masked colour %1 is %2 from the map")
                                    .arg(masked, 0, 16)
                                    .arg(nearest)));
        }
        QVERIFY(distance(states[0], states[1]) >= 20);
        QVERIFY(distance(states[0], states[2]) >= 20);
        QVERIFY(distance(states[1], states[2]) >= 20);
    }

    void fullyMaskedRowMarked()
    {
        MatrixB state = MatrixB::Zero(3, 3);
        state.row(1).setConstant(MaskPadding); // row 1: every key masked
        auto result = makeResult(
            1, 3, 3, [](int, int i, int) { return i == 1 ? 0.0 : 1.0 / 3; }, state);
        QCOMPARE(result->fullyMasked[0][1], std::uint8_t(1));
        HeatmapRenderer renderer;
        renderer.setResult(result);
        const QSize size(700, 500);
        const QImage image = renderer.render(size);
        const HeatmapLayout lay = renderer.layout(QRectF(QPointF(0, 0), QSizeF(size)));
        const QRectF map = lay.tiles.at(0).map;
        const qreal x = map.left() - 0.3 * lay.fontPixelSize; // inside the marker strip
        const QRgb red = HeatmapRenderer::fullyMaskedMarkerColor().rgb();
        QCOMPARE(pixelAt(image, QPointF(x, map.top() + 1.5 * lay.cellSize)), red);
        QVERIFY(pixelAt(image, QPointF(x, map.top() + 0.5 * lay.cellSize)) != red);
        QVERIFY(pixelAt(image, QPointF(x, map.top() + 2.5 * lay.cellSize)) != red);
    }

    void views_data()
    {
        QTest::addColumn<int>("view");
        QTest::addColumn<bool>("showMean");
        QTest::addColumn<int>("head");
        QTest::addColumn<QStringList>("titles");
        const QStringList all = {QStringLiteral("head 0"), QStringLiteral("head 1"),
                                 QStringLiteral("head 2"), QStringLiteral("mean over heads")};
        QTest::newRow("grid") << int(HeatmapView::Grid) << true << 0 << all;
        QTest::newRow("grid without mean") << int(HeatmapView::Grid) << false << 0 << all.mid(0, 3);
        QTest::newRow("head 1") << int(HeatmapView::SingleHead) << true << 1
                                << QStringList {QStringLiteral("head 1")};
        QTest::newRow("single mean") << int(HeatmapView::SingleHead) << true << 3
                                     << QStringList {QStringLiteral("mean over heads")};
    }
    void views()
    {
        QFETCH(int, view);
        QFETCH(bool, showMean);
        QFETCH(int, head);
        QFETCH(QStringList, titles);
        HeatmapRenderer renderer;
        renderer.setResult(makeResult(3, 4, 4, [](int, int, int) { return 0.25; }));
        HeatmapOptions options;
        options.view = HeatmapView(view);
        options.showMean = showMean;
        options.head = head;
        renderer.setOptions(options);
        const HeatmapLayout lay = renderer.layout(QRectF(0, 0, 1000, 700));
        QStringList got;
        for (const auto &t : lay.tiles) {
            got << t.title;
            QVERIFY(QRectF(0, 0, 1000, 700).contains(t.map));
            QVERIFY(!lay.colorbar.intersects(t.map));
        }
        QCOMPARE(got, titles);
        // Tiles never overlap.
        for (int a = 0; a < lay.tiles.size(); ++a)
            for (int b = a + 1; b < lay.tiles.size(); ++b)
                QVERIFY(!lay.tiles[a].frame.intersects(lay.tiles[b].frame.adjusted(1, 1, -1, -1)));
    }

    void singleHeadGridHasNoMeanTile()
    {
        HeatmapRenderer renderer;
        renderer.setResult(makeResult(1, 3, 3, [](int, int, int) { return 0.5; }));
        QCOMPARE(renderer.tileCount(), 1);
        QCOMPARE(renderer.layout(QRectF(0, 0, 600, 400)).tiles.at(0).title,
                 QStringLiteral("head 0"));
    }

    void cellAt_data()
    {
        QTest::addColumn<int>("tile");
        QTest::addColumn<int>("row");
        QTest::addColumn<int>("col");
        QTest::newRow("head 0 (0, 0)") << 0 << 0 << 0;
        QTest::newRow("head 1 (2, 5)") << 1 << 2 << 5;
        QTest::newRow("mean (3, 1)") << 2 << 3 << 1;
    }
    void cellAt()
    {
        QFETCH(int, tile);
        QFETCH(int, row);
        QFETCH(int, col);
        HeatmapRenderer renderer;
        renderer.setResult(makeResult(2, 4, 6, [](int, int, int) { return 0.5; }));
        const QRectF bounds(0, 0, 1200, 800);
        const HeatmapLayout lay = renderer.layout(bounds);
        const HeatmapHit hit = renderer.cellAt(bounds, cellCenter(lay, tile, row, col));
        QVERIFY(hit.valid());
        QCOMPARE(hit.tile, tile);
        QCOMPARE(hit.head, tile); // head index, 2 = the mean
        QCOMPARE(hit.mean, tile == 2);
        QCOMPARE(hit.row, row);
        QCOMPARE(hit.col, col);
        QVERIFY(renderer.cellRect(bounds, hit).contains(cellCenter(lay, tile, row, col)));
        QVERIFY(!renderer.cellAt(bounds, QPointF(1, 1)).valid());
    }

    void tooltip()
    {
        MatrixB state = MatrixB::Zero(3, 3);
        state(0, 2) = MaskCausal;
        auto result = makeResult(
            2, 3, 3, [](int h, int i, int j) { return 0.1 * (h + i + j); }, state);
        result->params.tokens = {"the", "cat", "sat"};
        HeatmapRenderer renderer;
        renderer.setResult(result);
        HeatmapHit hit;
        hit.tile = 1;
        hit.head = 1;
        hit.row = 2;
        hit.col = 1;
        const QString text = renderer.describeCell(hit);
        QVERIFY2(text.contains(QStringLiteral("head 1")), qPrintable(text));
        QVERIFY(text.contains(QStringLiteral("query i = 2 (row)")));
        QVERIFY(text.contains(QStringLiteral("key j = 1 (column)")));
        QVERIFY(text.contains(QStringLiteral("\u201csat\u201d \u2192 \u201ccat\u201d")));
        QVERIFY(text.contains(QStringLiteral("weight 0.4")));
        QVERIFY(text.contains(QStringLiteral("raw score 4")));
        QVERIFY(text.contains(QStringLiteral("scaled score 2")));
        QVERIFY(text.contains(QStringLiteral("mask: allowed")));
        QVERIFY(text.contains(QStringLiteral("effective terms")));

        hit.row = 0;
        hit.col = 2;
        const QString masked = renderer.describeCell(hit);
        QVERIFY2(masked.contains(QStringLiteral("mask: causal-masked")), qPrintable(masked));
        QVERIFY(masked.contains(QStringLiteral("scaled score \u2212\u221e")));

        hit.tile = 2;
        hit.head = 2;
        hit.mean = true;
        const QString mean = renderer.describeCell(hit);
        QVERIFY2(mean.contains(QStringLiteral("mean over 2 heads")), qPrintable(mean));
        QVERIFY(!mean.contains(QStringLiteral("raw score")));
    }

    // Under the 2025 variants the tooltip names the parts of the weight where the result has
    // them: differential attention's A₁, A₂ and λ, the gate σ(g) of the row, the learned sink's
    // mass of the row.
    void variantTooltip()
    {
        HeatmapHit hit;
        hit.tile = 1;
        hit.head = 1;
        hit.row = 1;
        hit.col = 0;
        // Differential: head 1's weight at (1, 0) is A₁ − λA₂ = 0.6 − 0.5 · 0.2.
        auto diff = makeResult(2, 2, 2, [](int, int, int) { return 0.25; });
        diff->firstWeights
            = {MatrixD::Constant(2, 2, 0.5), (MatrixD(2, 2) << 0.4, 0.6, 0.6, 0.4).finished()};
        diff->secondWeights
            = {MatrixD::Constant(2, 2, 0.5), (MatrixD(2, 2) << 0.5, 0.5, 0.2, 0.8).finished()};
        diff->lambda = {0.3, 0.5};
        diff->weights[1] = diff->firstWeights[1] - 0.5 * diff->secondWeights[1];
        diff->signedWeights = true;
        HeatmapRenderer renderer;
        renderer.setResult(diff);
        const QString text = renderer.describeCell(hit);
        QVERIFY2(text.contains(QStringLiteral("\nweight 0.5\n")), qPrintable(text));
        QVERIFY2(text.contains(QStringLiteral(
                     "A\u2081 0.6, A\u2082 0.2, \u03bb 0.5: A\u2081 \u2212 \u03bbA\u2082 = 0.5")),
                 qPrintable(text));
        QVERIFY(!text.contains(QLatin1String("gate")));
        QVERIFY(!text.contains(QLatin1String("learned sink")));
        // The mean tile has no per-head parts.
        HeatmapHit mean = hit;
        mean.tile = 2;
        mean.head = 2;
        mean.mean = true;
        QVERIFY(!renderer.describeCell(mean).contains(QStringLiteral("A\u2081")));

        // The gate: head 0's row 1 is scaled by σ(g) = 0.25, so its weight 0.2 is 0.25 × 0.8.
        auto gated = makeResult(
            1, 2, 2, [](int, int i, int j) { return i == 1 ? 0.25 * (j == 0 ? 0.8 : 0.2) : 0.5; });
        gated->gate = {(VectorD(2) << 1.0, 0.25).finished()};
        renderer.setResult(gated);
        hit.tile = 0;
        hit.head = 0;
        const QString gate = renderer.describeCell(hit);
        QVERIFY2(gate.contains(QStringLiteral("\nweight 0.2\n")), qPrintable(gate));
        QVERIFY2(gate.contains(QStringLiteral("gate \u03c3(g) 0.25 (row i): weight = \u03c3(g) "
                                              "\u00d7 0.8")),
                 qPrintable(gate));
        QVERIFY(!gate.contains(QStringLiteral("A\u2081")));

        // The learned sink: row 1 puts 0.3 on the sink, 0.35 on each key.
        auto sunk = makeResult(1, 2, 2, [](int, int i, int) { return i == 1 ? 0.35 : 0.5; });
        sunk->learnedSinkMass = {(VectorD(2) << 0.0, 0.3).finished()};
        renderer.setResult(sunk);
        const QString sink = renderer.describeCell(hit);
        QVERIFY2(sink.contains(QStringLiteral("learned sink mass of row i 0.3 (row + sink = 1)")),
                 qPrintable(sink));
        // A result without the variants keeps the plain tooltip.
        renderer.setResult(makeResult(1, 2, 2, [](int, int, int) { return 0.5; }));
        const QString plain = renderer.describeCell(hit);
        QVERIFY(!plain.contains(QLatin1String("gate")) && !plain.contains(QLatin1String("sink"))
                && !plain.contains(QStringLiteral("\u03bb")));
    }

    void autoAndLogRange()
    {
        HeatmapRenderer renderer;
        renderer.setResult(makeResult(2, 2, 2, [](int h, int i, int j) {
            return 0.1 + 0.1 * (h + i + 2 * j); // 0.1 … 0.5
        }));
        QCOMPARE(renderer.norm(), ColorNorm::linear(0.0, 1.0));
        HeatmapOptions options;
        options.autoRange = true;
        renderer.setOptions(options);
        QCOMPARE(renderer.norm().vmin, 0.1);
        QCOMPARE(renderer.norm().vmax, 0.5);
        options.autoRange = false;
        options.scale = ColorScale::Log;
        renderer.setOptions(options);
        QCOMPARE(renderer.norm(), ColorNorm::log(1e-4, 1.0));
        options.quantity = HeatmapQuantity::Scores;
        options.colormap = ColormapId::RdBu;
        renderer.setOptions(options);
        QCOMPARE(renderer.norm(), ColorNorm::symmetric(5.0)); // scores 1 … 5
        QCOMPARE(renderer.tileCount(), 2); // no mean tile for scores
    }

    void noResult()
    {
        HeatmapRenderer renderer;
        QCOMPARE(renderer.tileCount(), 0);
        const QImage image = renderer.render(QSize(200, 100));
        QCOMPARE(image.size(), QSize(200, 100));
        auto failed = std::make_shared<SessionResult>();
        failed->error = QStringLiteral("h=3 does not divide d_model=16");
        renderer.setResult(failed);
        QCOMPARE(renderer.tileCount(), 0);
        QVERIFY(!renderer.cellAt(QRectF(0, 0, 200, 100), QPointF(100, 50)).valid());
    }

    void tinyBounds()
    {
        HeatmapRenderer renderer;
        renderer.setResult(makeResult(8, 64, 64, [](int, int, int) { return 1.0 / 64; }));
        for (QSize size : {QSize(1, 1), QSize(40, 30), QSize(120, 60)}) {
            const QImage image = renderer.render(size);
            QCOMPARE(image.size(), size);
            QVERIFY(!renderer
                         .cellAt(QRectF(QPointF(0, 0), QSizeF(size)),
                                 QPointF(size.width() / 2.0, size.height() / 2.0))
                         .valid());
        }
    }

    void exportPng_data()
    {
        QTest::addColumn<QSize>("size");
        QTest::addColumn<qreal>("dpr");
        QTest::newRow("640x480") << QSize(640, 480) << 1.0;
        QTest::newRow("800x500 @2") << QSize(800, 500) << 2.0;
    }
    void exportPng()
    {
        QFETCH(QSize, size);
        QFETCH(qreal, dpr);
        QTemporaryDir dir;
        HeatmapRenderer renderer;
        renderer.setResult(
            makeResult(4, 8, 8, [](int h, int i, int j) { return (h + i + j) / 24.0; }));
        const QString path = dir.filePath(QStringLiteral("heads.png"));
        QString error;
        QVERIFY2(renderer.savePng(path, size, dpr, &error), qPrintable(error));
        QImageReader reader(path);
        QCOMPARE(reader.format(), QByteArray("png"));
        const QImage image = reader.read();
        QCOMPARE(image.size(), size * dpr);
        // The file shows what render() shows.
        QImage expected = renderer.render(size, dpr).convertToFormat(QImage::Format_RGB32);
        expected.setDevicePixelRatio(1.0); // a PNG file has no device pixel ratio
        QCOMPARE(image.convertToFormat(QImage::Format_RGB32), expected);
    }

    void exportSvg()
    {
        QTemporaryDir dir;
        HeatmapRenderer renderer;
        const int h = 4;
        renderer.setResult(
            makeResult(h, 6, 6, [](int, int i, int j) { return j <= i ? 0.2 : 0.0; }));
        const QString path = dir.filePath(QStringLiteral("heads.svg"));
        QString error;
        QVERIFY2(renderer.saveSvg(path, QSize(1000, 700), &error), qPrintable(error));
        QFile file(path);
        QVERIFY(file.open(QIODevice::ReadOnly));
        QXmlStreamReader xml(&file);
        int images = 0;
        QStringList titles;
        bool svgRoot = false;
        while (!xml.atEnd()) {
            if (xml.readNext() != QXmlStreamReader::StartElement)
                continue;
            if (xml.name() == QLatin1String("svg"))
                svgRoot = true;
            else if (xml.name() == QLatin1String("image"))
                ++images;
            else if (xml.name() == QLatin1String("text")) {
                const QString t
                    = xml.readElementText(QXmlStreamReader::IncludeChildElements).trimmed();
                if (t.startsWith(QLatin1String("head ")) || t == QLatin1String("mean over heads"))
                    titles << t;
            }
        }
        QVERIFY2(!xml.hasError(), qPrintable(xml.errorString()));
        QVERIFY(svgRoot);
        QCOMPARE(titles.size(), h + 1); // one tile per head plus the mean
        // The colourbar; the 6 × 6 maps are rectangles, one per cell (at most 64 × 64 cells per
        // head: tst_heatmapgrid).
        QCOMPARE(images, 1);
    }

    void exportPdf()
    {
        QTemporaryDir dir;
        HeatmapRenderer renderer;
        renderer.setResult(makeResult(2, 5, 5, [](int, int, int) { return 0.2; }));
        const QString path = dir.filePath(QStringLiteral("heads.pdf"));
        QString error;
        QVERIFY2(renderer.save(path, QSize(800, 500), 1.0, &error), qPrintable(error));
        QFile file(path);
        QVERIFY(file.open(QIODevice::ReadOnly));
        const QByteArray data = file.readAll();
        QVERIFY(data.startsWith("%PDF"));
        QVERIFY(data.contains("/Type /Page"));
        QVERIFY(data.contains("/MediaBox [0 0 800.000000 500.000000]")); // points
        // Its images (the colourbar) are stored losslessly: no JPEG (DCTDecode) whose colours
        // would differ from the colormap's.
        QVERIFY(data.contains("/Subtype /Image"));
        QVERIFY(!data.contains("/DCTDecode"));

        // Maps over 64 × 64 cells are images too: also lossless.
        HeatmapRenderer large;
        large.setResult(makeResult(1, 70, 70, [](int, int i, int j) { return (i + j) % 7 / 7.0; }));
        const QString largePath = dir.filePath(QStringLiteral("large.pdf"));
        QVERIFY2(large.save(largePath, QSize(800, 500), 1.0, &error), qPrintable(error));
        QFile largeFile(largePath);
        QVERIFY(largeFile.open(QIODevice::ReadOnly));
        const QByteArray largeData = largeFile.readAll();
        QVERIFY(largeData.count("/Subtype /Image") >= 2); // the map and the colourbar
        QVERIFY(!largeData.contains("/DCTDecode"));
    }

    void exportErrors()
    {
        HeatmapRenderer renderer;
        renderer.setResult(makeResult(1, 2, 2, [](int, int, int) { return 0.5; }));
        QString error;
        QVERIFY(!renderer.save(QStringLiteral("/tmp/heads.bmp"), QSize(100, 100), 1.0, &error));
        QVERIFY2(error.contains(QStringLiteral("heads.bmp")), qPrintable(error));
        error.clear();
        QVERIFY(!renderer.savePng(QStringLiteral("/nonexistent-dir/x.png"), QSize(100, 100), 1.0,
                                  &error));
        QVERIFY2(error.contains(QStringLiteral("/nonexistent-dir/x.png")), qPrintable(error));
    }

    // The widget: tooltip for the hovered cell, click → tileActivated(head), single-head view.
    void widget()
    {
        HeatmapWidget widget;
        widget.resize(900, 600);
        widget.setResult(
            makeResult(3, 4, 4, [](int h, int i, int j) { return 0.1 * (h + i + j); }));
        widget.show();
        QVERIFY(QTest::qWaitForWindowExposed(&widget));
        QCOMPARE(widget.renderer().tileCount(), 4);
        // The heatmaps fill the widget above the row strip.
        QVERIFY(widget.heatmapBounds().height() < widget.height());
        const HeatmapLayout lay = widget.renderer().layout(widget.heatmapBounds());
        const QPointF p = cellCenter(lay, 2, 1, 3);
        const HeatmapHit hit = widget.cellAt(p);
        QCOMPARE(hit.head, 2);
        QCOMPARE(hit.row, 1);
        QCOMPARE(hit.col, 3);
        const QString tip = widget.toolTipAt(p);
        QVERIFY2(tip.contains(QStringLiteral("head 2"))
                     && tip.contains(QStringLiteral("weight 0.6")),
                 qPrintable(tip));

        QSignalSpy activated(&widget, &HeatmapWidget::tileActivated);
        QTest::mouseClick(&widget, Qt::LeftButton, {}, cellCenter(lay, 3, 0, 0).toPoint());
        QCOMPARE(activated.count(), 1);
        QCOMPARE(activated.at(0).at(0).toInt(), 3); // the mean tile
        QTest::mouseClick(&widget, Qt::LeftButton, {}, QPoint(2, 2)); // outside every tile
        QCOMPARE(activated.count(), 1);

        widget.showSingleHead(1);
        QVERIFY(widget.isSingleHead());
        QCOMPARE(widget.renderer().tileCount(), 1);
        QCOMPARE(widget.renderer().layout(widget.heatmapBounds()).tiles.at(0).title,
                 QStringLiteral("head 1"));
        widget.showGrid();
        QCOMPARE(widget.renderer().tileCount(), 4);
        // What the widget shows is what the renderer paints.
        const QImage shown = widget.grab().toImage();
        QVERIFY(!shown.isNull());
        const HeatmapLayout grid = widget.renderer().layout(widget.heatmapBounds());
        const QRgb want = Colormap(ColormapId::Viridis).map(0.1 * (0 + 2 + 1));
        QCOMPARE(pixelAt(shown, cellCenter(grid, 0, 2, 1)), want);
    }
};

QTEST_MAIN(TestHeatmapRenderer)
#include "tst_heatmaprenderer.moc"
