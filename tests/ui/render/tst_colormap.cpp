// Colormap and ColorNorm against matplotlib 3.6 (fixtures from
// tests/reference/make_colormap_fixtures.py): every table entry, normalised samples including
// the index boundaries and out-of-range values, LogNorm and Normalize.

#include "ui/render/colormap.h"
#include "ui/render/figurefile.h"

#include <QFile>
#include <QJsonArray>
#include <QJsonDocument>
#include <QJsonObject>
#include <QTest>

#include <cmath>
#include <limits>

using namespace attn;

namespace {

QRgb rgbFromJson(const QJsonValue &v)
{
    const QJsonArray a = v.toArray();
    return qRgb(a.at(0).toInt(), a.at(1).toInt(), a.at(2).toInt());
}

QString rgbText(QRgb c)
{
    return QStringLiteral("(%1, %2, %3)").arg(qRed(c)).arg(qGreen(c)).arg(qBlue(c));
}

} // namespace

class TestColormap : public QObject
{
    Q_OBJECT

private:
    QJsonObject m_fixture;

    ColormapId idOf(const QString &name)
    {
        const auto id = Colormap::fromName(name);
        if (!id)
            qFatal("unknown colormap %s", qPrintable(name));
        return *id;
    }

private slots:
    void initTestCase()
    {
        QFile file(QStringLiteral(ATTN_FIXTURE_DIR "/colormaps/colormaps.json"));
        QVERIFY2(file.open(QIODevice::ReadOnly), qPrintable(file.fileName()));
        QJsonParseError error;
        m_fixture = QJsonDocument::fromJson(file.readAll(), &error).object();
        QCOMPARE(error.error, QJsonParseError::NoError);
        QCOMPARE(m_fixture.value(QStringLiteral("maps")).toObject().size(), 5);
    }

    void names_data()
    {
        QTest::addColumn<int>("id");
        QTest::addColumn<QString>("name");
        QTest::newRow("viridis") << int(ColormapId::Viridis) << QStringLiteral("viridis");
        QTest::newRow("magma") << int(ColormapId::Magma) << QStringLiteral("magma");
        QTest::newRow("cividis") << int(ColormapId::Cividis) << QStringLiteral("cividis");
        QTest::newRow("gray") << int(ColormapId::Grayscale) << QStringLiteral("gray");
        QTest::newRow("RdBu_r") << int(ColormapId::RdBu) << QStringLiteral("RdBu_r");
    }
    void names()
    {
        QFETCH(int, id);
        QFETCH(QString, name);
        QCOMPARE(Colormap(ColormapId(id)).name(), name);
        QCOMPARE(Colormap::fromName(name), std::optional<ColormapId>(ColormapId(id)));
        QCOMPARE(Colormap::fromName(name.toUpper()), std::optional<ColormapId>(ColormapId(id)));
        QCOMPARE(Colormap(ColormapId(id)).isDiverging(), ColormapId(id) == ColormapId::RdBu);
    }

    void unknownName()
    {
        QVERIFY(!Colormap::fromName(QStringLiteral("jet")));
        QVERIFY(!Colormap::fromName(QString()));
        QCOMPARE(Colormap::fromName(QStringLiteral("grey")),
                 std::optional<ColormapId>(ColormapId::Grayscale));
    }

    // All 256 entries equal matplotlib's Colormap(np.arange(256), bytes=True).
    void table_data()
    {
        QTest::addColumn<QString>("name");
        for (const QString &name : m_fixture.value(QStringLiteral("maps")).toObject().keys())
            QTest::newRow(qPrintable(name)) << name;
    }
    void table()
    {
        QFETCH(QString, name);
        const Colormap cmap(idOf(name));
        const QJsonArray expected = m_fixture.value(QStringLiteral("maps"))
                                        .toObject()
                                        .value(name)
                                        .toObject()
                                        .value(QStringLiteral("table"))
                                        .toArray();
        QCOMPARE(expected.size(), Colormap::size);
        for (int i = 0; i < Colormap::size; ++i) {
            const QRgb want = rgbFromJson(expected.at(i));
            QVERIFY2(cmap.entry(i) == want,
                     qPrintable(QStringLiteral("%1[%2] = %3, matplotlib %4")
                                    .arg(name)
                                    .arg(i)
                                    .arg(rgbText(cmap.entry(i)), rgbText(want))));
            QCOMPARE(qAlpha(cmap.entry(i)), 255);
        }
    }

    // Normalised values → colours: endpoints, midpoint, the index boundary just below 0.5,
    // values outside [0, 1] (clipped like matplotlib's under/over defaults).
    void samples_data()
    {
        QTest::addColumn<QString>("name");
        QTest::addColumn<double>("x");
        QTest::addColumn<QRgb>("expected");
        const QJsonObject maps = m_fixture.value(QStringLiteral("maps")).toObject();
        for (const QString &name : maps.keys()) {
            for (const QJsonValue &s :
                 maps.value(name).toObject().value(QStringLiteral("samples")).toArray()) {
                const double x = s.toArray().at(0).toDouble();
                QTest::addRow("%s x=%.9g", qPrintable(name), x)
                    << name << x << rgbFromJson(s.toArray().at(1));
            }
        }
    }
    void samples()
    {
        QFETCH(QString, name);
        QFETCH(double, x);
        QFETCH(QRgb, expected);
        const QRgb got = Colormap(idOf(name)).map(x);
        QVERIFY2(got == expected,
                 qPrintable(
                     QStringLiteral("got %1, matplotlib %2").arg(rgbText(got), rgbText(expected))));
    }

    void endpointsAndMidpoint_data()
    {
        QTest::addColumn<QString>("name");
        for (const QString &name : m_fixture.value(QStringLiteral("maps")).toObject().keys())
            QTest::newRow(qPrintable(name)) << name;
    }
    void endpointsAndMidpoint()
    {
        QFETCH(QString, name);
        const Colormap cmap(idOf(name));
        const QJsonArray table = m_fixture.value(QStringLiteral("maps"))
                                     .toObject()
                                     .value(name)
                                     .toObject()
                                     .value(QStringLiteral("table"))
                                     .toArray();
        QCOMPARE(cmap.map(0.0), rgbFromJson(table.at(0)));
        QCOMPARE(cmap.map(0.5), rgbFromJson(table.at(128))); // ⌊0.5·256⌋
        QCOMPARE(cmap.map(1.0), rgbFromJson(table.at(255))); // a weight of 1 is the top
    }

    void logNorm_data()
    {
        QTest::addColumn<QString>("name");
        QTest::addColumn<double>("vmin");
        QTest::addColumn<double>("vmax");
        QTest::addColumn<double>("value");
        QTest::addColumn<QRgb>("expected");
        for (const QJsonValue &row : m_fixture.value(QStringLiteral("log")).toArray()) {
            const QJsonArray r = row.toArray();
            QTest::addRow("%s [%g, %g] v=%g", qPrintable(r.at(0).toString()), r.at(1).toDouble(),
                          r.at(2).toDouble(), r.at(3).toDouble())
                << r.at(0).toString() << r.at(1).toDouble() << r.at(2).toDouble()
                << r.at(3).toDouble() << rgbFromJson(r.at(4));
        }
    }
    void logNorm()
    {
        QFETCH(QString, name);
        QFETCH(double, vmin);
        QFETCH(double, vmax);
        QFETCH(double, value);
        QFETCH(QRgb, expected);
        const ColorNorm norm = ColorNorm::log(vmin, vmax);
        QCOMPARE(norm.scaleName(), QStringLiteral("log"));
        const QRgb got = Colormap(idOf(name)).map(norm(value));
        QVERIFY2(got == expected,
                 qPrintable(QStringLiteral("t = %1: got %2, matplotlib %3")
                                .arg(norm(value), 0, 'g', 17)
                                .arg(rgbText(got), rgbText(expected))));
    }

    void linearNorm_data()
    {
        QTest::addColumn<QString>("name");
        QTest::addColumn<double>("vmin");
        QTest::addColumn<double>("vmax");
        QTest::addColumn<double>("value");
        QTest::addColumn<QRgb>("expected");
        for (const QJsonValue &row : m_fixture.value(QStringLiteral("linear")).toArray()) {
            const QJsonArray r = row.toArray();
            QTest::addRow("%s [%g, %g] v=%g", qPrintable(r.at(0).toString()), r.at(1).toDouble(),
                          r.at(2).toDouble(), r.at(3).toDouble())
                << r.at(0).toString() << r.at(1).toDouble() << r.at(2).toDouble()
                << r.at(3).toDouble() << rgbFromJson(r.at(4));
        }
    }
    void linearNorm()
    {
        QFETCH(QString, name);
        QFETCH(double, vmin);
        QFETCH(double, vmax);
        QFETCH(double, value);
        QFETCH(QRgb, expected);
        const ColorNorm norm = ColorNorm::linear(vmin, vmax);
        QCOMPARE(Colormap(idOf(name)).map(norm(value)), expected);
    }

    void logNormNonPositiveIsBottom()
    {
        const ColorNorm norm = ColorNorm::log(1e-4, 1.0);
        const Colormap cmap(ColormapId::Viridis);
        QVERIFY(std::isinf(norm(0.0)) && norm(0.0) < 0);
        QCOMPARE(cmap.map(norm(0.0)), cmap.entry(0));
        QCOMPARE(cmap.map(norm(-1.0)), cmap.entry(0));
        QCOMPARE(cmap.map(norm(1e-9)), cmap.entry(0)); // below vmin: clipped
    }

    void symmetricNorm()
    {
        const ColorNorm norm = ColorNorm::symmetric(-3.0);
        QCOMPARE(norm.vmin, -3.0);
        QCOMPARE(norm.vmax, 3.0);
        QCOMPARE(norm(0.0), 0.5);
        QCOMPARE(norm(3.0), 1.0);
        QCOMPARE(norm(-3.0), 0.0);
    }

    // Signed maps on a log scale: matplotlib's SymLogNorm (base 10, linscale 1) over ±0.5 with
    // linthresh 0.5·10⁻⁵. With c = 1/(1 − 1/10) = 10/9, T(v) = c·v inside ±linthresh and
    // sign(v)·linthresh·(c + log₁₀(|v|/linthresh)) beyond, so T(±0.5) = ±linthresh·55/9 and
    // t = 1/2 + T(v)/(2·T(0.5)): 1/2 + 1/11 at linthresh, 1/2 + 28/110 two decades above it,
    // 1/2 − 5/110 at −linthresh/2, 1/2 − 46/110 at −0.05.
    void symmetricLogNorm()
    {
        const ColorNorm norm = ColorNorm::symmetricLog(-0.5);
        QCOMPARE(norm.scale, ColorScale::SymLog);
        QCOMPARE(norm.scaleName(), QStringLiteral("symlog"));
        QCOMPARE(norm.vmin, -0.5);
        QCOMPARE(norm.vmax, 0.5);
        QVERIFY(std::abs(norm.linthresh - 5e-6) <= 1e-20);
        const std::pair<double, double> expected[] = {{0.0, 0.5},
                                                      {0.5, 1.0},
                                                      {-0.5, 0.0},
                                                      {5e-6, 0.5 + 1 / 11.0},
                                                      {5e-4, 0.5 + 28 / 110.0},
                                                      {-2.5e-6, 0.5 - 5 / 110.0},
                                                      {-0.05, 0.5 - 46 / 110.0}};
        for (const auto &[v, t] : expected)
            QVERIFY2(std::abs(norm(v) - t) <= 1e-12,
                     qPrintable(QStringLiteral("t(%1) = %2, SymLogNorm %3")
                                    .arg(v)
                                    .arg(norm(v), 0, 'g', 17)
                                    .arg(t, 0, 'g', 17)));
        for (double t : {0.0, 0.1, 0.45, 0.5, 0.59, 0.75, 1.0})
            QVERIFY(std::abs(norm(norm.inverse(t)) - t) <= 1e-12);
        QVERIFY(std::isnan(norm(std::numeric_limits<double>::quiet_NaN())));
        // No largest |w| (every cell masked): ±1.
        const ColorNorm none = ColorNorm::symmetricLog(0.0);
        QCOMPARE(none.vmax, 1.0);
        QCOMPARE(none.vmin, -1.0);
        // Its colour-bar ticks: 0 and ±10^k every second decade from 0.1 down to linthresh.
        QCOMPARE(figure::colorBarTicks(norm, 4),
                 (QVector<double> {-0.1, -1e-3, -1e-5, 0.0, 1e-5, 1e-3, 0.1}));
        QCOMPARE(figure::symLogTicks(1.0, 0.05), (QVector<double> {-1.0, 0.0, 1.0}));
    }

    // The Long tab's scales: [0, w] linear, [w·1e-5, w] log; no weight at all gives 1's.
    void upToLargestWeight()
    {
        const ColorNorm lin = ColorNorm::upToLargestWeight(ColorScale::Linear, 0.25);
        QCOMPARE(lin, ColorNorm::linear(0.0, 0.25));
        const ColorNorm log = ColorNorm::upToLargestWeight(ColorScale::Log, 0.01);
        QCOMPARE(log.scale, ColorScale::Log);
        QCOMPARE(log.vmax, 0.01);
        QVERIFY(std::abs(log.vmin - 1e-7) <= 1e-22);
        QVERIFY(std::abs(log(1e-4) - 0.6) <= 1e-12); // (−4 − −7) / (−2 − −7)
        QCOMPARE(ColorNorm::upToLargestWeight(ColorScale::Linear, 0.0), ColorNorm::linear(0, 1));
        const ColorNorm none = ColorNorm::upToLargestWeight(
            ColorScale::Log, std::numeric_limits<double>::quiet_NaN());
        QCOMPARE(none.vmax, 1.0);
        QVERIFY(std::abs(none.vmin - 1e-5) <= 1e-20);
    }

    void inverse_data()
    {
        QTest::addColumn<bool>("log");
        QTest::addColumn<double>("vmin");
        QTest::addColumn<double>("vmax");
        QTest::newRow("linear [0, 1]") << false << 0.0 << 1.0;
        QTest::newRow("linear [-2, 5]") << false << -2.0 << 5.0;
        QTest::newRow("log [1e-4, 1]") << true << 1e-4 << 1.0;
    }
    void inverse()
    {
        QFETCH(bool, log);
        QFETCH(double, vmin);
        QFETCH(double, vmax);
        const ColorNorm norm = log ? ColorNorm::log(vmin, vmax) : ColorNorm::linear(vmin, vmax);
        for (double t : {0.0, 0.125, 0.5, 0.9, 1.0})
            QVERIFY(std::abs(norm(norm.inverse(t)) - t) <= 1e-12);
    }

    void nanIsBadColor()
    {
        const Colormap cmap(ColormapId::Magma);
        QCOMPARE(cmap.map(std::numeric_limits<double>::quiet_NaN()), Colormap::badColor());
        QVERIFY(std::isnan(ColorNorm::linear(0, 1)(std::numeric_limits<double>::quiet_NaN())));
        for (ColormapId id : Colormap::all()) {
            for (int i = 0; i < Colormap::size; ++i)
                QVERIFY(Colormap(id).entry(i) != Colormap::badColor());
        }
    }

    void degenerateRange()
    {
        QCOMPARE(ColorNorm::linear(0.3, 0.3)(0.3), 0.0); // matplotlib: vmin == vmax → 0
    }

    void strip()
    {
        const Colormap cmap(ColormapId::Viridis);
        const QImage h = cmap.strip(256, Qt::Horizontal);
        QCOMPARE(h.size(), QSize(256, 1));
        QCOMPARE(QRgb(h.pixel(0, 0)), cmap.entry(0));
        QCOMPARE(QRgb(h.pixel(255, 0)), cmap.entry(255));
        const QImage v = cmap.strip(256, Qt::Vertical);
        QCOMPARE(v.size(), QSize(1, 256));
        QCOMPARE(QRgb(v.pixel(0, 255)), cmap.entry(0)); // low at the bottom
        QCOMPARE(QRgb(v.pixel(0, 0)), cmap.entry(255));
    }
};

QTEST_GUILESS_MAIN(TestColormap)
#include "tst_colormap.moc"
