// A boolean attn_mask from a file is a custom mask, named alike everywhere: the heatmap's
// legend and tooltip, the Steps and Compare panels' legends and tooltips, the caption and the
// data export; a cell masked twice (custom + causal) is named by both. Weight panels list their
// statistics, and the Steps titles name the mask only when one is on.

#include "testutil.h"
#include "ui/handmaderesult.h"
#include "ui/svgtext.h"

#include "ui/export/dataexport.h"
#include "ui/render/comparerenderer.h"
#include "ui/render/heatmaprenderer.h"
#include "ui/render/stepsrenderer.h"
#include "ui/session/sessioncompute.h"
#include "ui/session/tensorsource.h"

#include "core/attention/mask.h"

#include <QFile>
#include <QJsonArray>
#include <QJsonDocument>
#include <QJsonObject>
#include <QTemporaryDir>
#include <QTest>

#include <memory>

using namespace attn;

namespace {

QString fixture(const char *name)
{
    return QStringLiteral(ATTN_FIXTURE_DIR "/torch/%1.npz").arg(QLatin1String(name));
}

// The result of the window's File → Open Tensors… on a fixture, with `mask` on top.
std::shared_ptr<const SessionResult> openTensors(const char *name, MaskChoice mask, QString *error)
{
    const TensorFile file = readTensorFile(fixture(name));
    const auto source = makeTensorSource(file, QString(), MaskConvention::Masked, error);
    if (!source)
        return nullptr;
    SessionParameters p = source->parametersFor(SessionParameters(), source);
    p.mask = mask;
    return std::make_shared<const SessionResult>(computeSession(p));
}

QStringList svgTexts(const QString &path)
{
    const attn::test::SvgTexts parsed = attn::test::readSvgTextsFile(path);
    return parsed.error.isEmpty() ? parsed.texts : QStringList {parsed.error};
}

} // namespace

class TestCustomMask : public QObject
{
    Q_OBJECT

private slots:
    void initTestCase() { QVERIFY(m_dir.isValid()); }
    void fileMaskIsCustomEverywhere();
    void weightPanelStatistics();
    void stepsTitleNamesTheMaskOnlyWhenOn();

private:
    QTemporaryDir m_dir;
};

// causal.npz holds attn_mask = triu(ones(7, 7), 1) as bool (True = masked): the upper triangle
// is custom-masked; with the session's causal mask on top those cells are masked twice.
void TestCustomMask::fileMaskIsCustomEverywhere()
{
    for (const MaskChoice choice : {MaskChoice::None, MaskChoice::Causal}) {
        QString error;
        const auto r = openTensors("causal", choice, &error);
        QVERIFY2(r && r->ok(), qPrintable(r ? r->error : error));
        const int n = int(r->queryCount());
        QCOMPARE(n, 7);
        const bool twice = choice == MaskChoice::Causal;
        const std::uint8_t upper
            = twice ? std::uint8_t(MaskCausal | MaskCustom) : std::uint8_t(MaskCustom);
        const QString label
            = twice ? QStringLiteral("causal + custom-masked") : QStringLiteral("custom-masked");
        const QString field = twice ? QStringLiteral("causal+custom") : QStringLiteral("custom");
        for (int i = 0; i < n; ++i)
            for (int j = 0; j < n; ++j)
                QCOMPARE(int(r->maskState(i, j)), j > i ? int(upper) : 0);

        // Caption: the file's mask by the same name.
        const QString caption = r->params.caption();
        QVERIFY2(caption.contains(twice ? QStringLiteral("mask=custom(attn_mask)+causal")
                                        : QStringLiteral("mask=custom(attn_mask)")),
                 qPrintable(caption));

        // Heatmap: legend entry and tooltip.
        HeatmapRenderer heatmap;
        heatmap.setResult(r);
        const QString svg = m_dir.filePath(QStringLiteral("heatmap.svg"));
        QVERIFY2(heatmap.saveSvg(svg, QSize(1200, 800), &error), qPrintable(error));
        const QStringList texts = svgTexts(svg);
        QVERIFY2(texts.contains(label), qPrintable(texts.join(QLatin1Char('|'))));
        QVERIFY(!texts.contains(QStringLiteral("padding-masked")));
        HeatmapHit hit;
        hit.tile = 0;
        hit.head = 0;
        hit.row = 1;
        hit.col = 4;
        QVERIFY2(heatmap.describeCell(hit).contains(QStringLiteral("mask: ") + label),
                 qPrintable(heatmap.describeCell(hit)));
        hit.col = 1;
        QVERIFY(heatmap.describeCell(hit).contains(QStringLiteral("mask: allowed")));

        // Steps: the weights and scaled panels' legends and the tooltip.
        StepsRenderer steps;
        steps.setResult(r);
        const QString stepsSvg = m_dir.filePath(QStringLiteral("steps.svg"));
        QVERIFY2(steps.saveSvg(stepsSvg, QSize(1500, 600), &error), qPrintable(error));
        const QStringList stepsTexts = svgTexts(stepsSvg);
        QCOMPARE(stepsTexts.count(label), 2);
        FigureHit fhit;
        fhit.panel = 2;
        fhit.row = 0;
        fhit.col = 6;
        QVERIFY(steps.describeCell(fhit).contains(QStringLiteral("mask: ") + label));

        // Compare: both weight panels.
        CompareRenderer compare;
        compare.setResults(r, r);
        const QString compareSvg = m_dir.filePath(QStringLiteral("compare.svg"));
        QVERIFY2(compare.saveSvg(compareSvg, QSize(1900, 800), &error), qPrintable(error));
        const QStringList compareTexts = svgTexts(compareSvg);
        QVERIFY2(compareTexts.count(label) >= 2, qPrintable(compareTexts.join(QLatin1Char('|'))));

        // Data export: CSV mask column and JSON mask_state bits.
        const QString csv = m_dir.filePath(QStringLiteral("data.csv"));
        QVERIFY2(exportData(*r, csv, DataFormat::Csv, nullptr, &error), qPrintable(error));
        QFile csvFile(csv);
        QVERIFY(csvFile.open(QIODevice::ReadOnly | QIODevice::Text));
        const QStringList lines = QString::fromUtf8(csvFile.readAll()).split(QLatin1Char('\n'));
        // head 0, query 1, key 4 is line 1 + 1·7 + 4.
        QVERIFY2(lines[1 + 7 + 4].endsWith(QLatin1Char(',') + field), qPrintable(lines[12]));
        QVERIFY(lines[1 + 7 + 1].endsWith(QLatin1String(",allowed")));
        const QString json = m_dir.filePath(QStringLiteral("data.json"));
        QVERIFY2(exportData(*r, json, DataFormat::Json, nullptr, &error), qPrintable(error));
        QFile jsonFile(json);
        QVERIFY(jsonFile.open(QIODevice::ReadOnly));
        const QJsonArray state = QJsonDocument::fromJson(jsonFile.readAll())
                                     .object()
                                     .value(QStringLiteral("mask_state"))
                                     .toArray();
        QCOMPARE(state[1].toArray()[4].toInt(), int(upper));
    }
}

// The weights panel of Steps (and Compare's A and B) states min, max and mean over the unmasked
// cells and the worst |row sum − 1|, here for a hand-made 2 × 3 result: weights
// [[0.5, 0.5, ·], [0.25, 0.25, 0.5]] with cell (0, 2) causal-masked (weight 0).
void TestCustomMask::weightPanelStatistics()
{
    MatrixB state = MatrixB::Zero(2, 3);
    state(0, 2) = MaskCausal;
    const double w[2][3] = {{0.5, 0.5, 0.0}, {0.25, 0.25, 0.5}};
    const auto r = attn::test::makeResult(
        1, 2, 3, [&](int, int i, int j) { return w[i][j]; }, state);
    const QStringList expected
        = {QStringLiteral("min 0.25"), QStringLiteral("max 0.5"),
           // (0.5 + 0.5 + 0.25 + 0.25 + 0.5) / 5
           QStringLiteral("mean 0.4"), QStringLiteral("worst |row sum \u2212 1| 0")};
    StepsRenderer steps;
    steps.setResult(r);
    QCOMPARE(steps.panelCount(), 3);
    QCOMPARE(steps.panel(2).statistics, expected);
    QVERIFY(steps.panel(0).statistics.isEmpty()); // score panels mark their data range instead
    QString error;
    const QString svg = m_dir.filePath(QStringLiteral("steps_stats.svg"));
    QVERIFY2(steps.saveSvg(svg, QSize(1500, 600), &error), qPrintable(error));
    const QStringList texts = svgTexts(svg);
    for (const QString &line : expected)
        QVERIFY2(texts.contains(line), qPrintable(line + QStringLiteral(" in ") + texts.join('|')));

    // B with raw weights of one row summing to 0.75: its panel's error is 0.25.
    const double wb[2][3] = {{0.5, 0.25, 0.0}, {0.25, 0.25, 0.5}};
    const auto b = attn::test::makeResult(
        1, 2, 3, [&](int, int i, int j) { return wb[i][j]; }, state);
    CompareRenderer compare;
    compare.setResults(r, b);
    QVERIFY(compare.panelCount() >= 2);
    QCOMPARE(compare.panel(0).statistics, expected);
    QCOMPARE(compare.panel(1).statistics,
             (QStringList {QStringLiteral("min 0.25"), QStringLiteral("max 0.5"),
                           QStringLiteral("mean 0.35"), // (0.5 + 0.25 + 0.25 + 0.25 + 0.5) / 5
                           QStringLiteral("worst |row sum \u2212 1| 0.25")}));
}

void TestCustomMask::stepsTitleNamesTheMaskOnlyWhenOn()
{
    const auto open = attn::test::makeResult(1, 3, 3, [](int, int, int) { return 1.0 / 3.0; });
    StepsRenderer steps;
    steps.setResult(open);
    QCOMPARE(steps.panel(1).title, QStringLiteral("2 \u00b7 scaled Q K\u1d40\u00b7scale"));
    QVERIFY(!steps.captionLines().first().contains(QStringLiteral("mask")));

    MatrixB state = MatrixB::Zero(3, 3);
    state(0, 1) = state(0, 2) = state(1, 2) = MaskCausal;
    state(2, 0) = MaskWindow;
    const auto masked = attn::test::makeResult(
        1, 3, 3, [](int, int, int) { return 0.5; }, state);
    steps.setResult(masked);
    QCOMPARE(steps.panel(1).title,
             QStringLiteral("2 \u00b7 scaled + masked Q K\u1d40\u00b7scale + M"));
    QVERIFY2(steps.captionLines().first().endsWith(QStringLiteral("; mask M: causal + window")),
             qPrintable(steps.captionLines().first()));
}

QTEST_MAIN(TestCustomMask)
#include "tst_custommask.moc"
