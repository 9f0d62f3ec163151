// `attnlab heatmap --in` with stored attention weights that are not probability rows: rows
// that do not sum to 1 and NaN/Inf weights in a 2-d or 3-d array are drawn as stored and
// reported (exit status 0, a note on standard error naming the file, and the same note in the
// figure's caption), as the window's Tensors panel reports them; an `attentions` stack holding
// NaN is refused (exit status 2, naming the layer, head, query and key).

#include <QFile>
#include <QRegularExpression>
#include <QTest>

#include "cli/heatmapcli.h"
#include "core/io/npy.h"

#include <limits>

class TestCliHeatmapWeights : public attn::test::HeatmapCliTest
{
    Q_OBJECT

    /// Writes `w` as <name>.npy in the test folder; returns its path.
    QString writeWeights(const QString &name, const attn::MatrixD &w)
    {
        const QString file = m_dir.filePath(name + QStringLiteral(".npy"));
        attn::writeNpy(file.toStdString(), attn::NpyArray::fromMatrix<double>(w));
        return file;
    }

    /// The words of an SVG's text (the caption wraps over several <text> elements).
    static QString svgWords(const QString &path)
    {
        QFile file(path);
        if (!file.open(QIODevice::ReadOnly))
            return {};
        return QString::fromUtf8(file.readAll())
            .remove(QRegularExpression(QStringLiteral("<[^>]*>")))
            .simplified();
    }

private slots:
    void initTestCase() { QVERIFY(m_dir.isValid()); }

    // Row 1 of 0.5s sums to 2: named with its |Σw − 1| = 1, on standard error and in the
    // caption, while the file is drawn (exit 0).
    void rowsNotSummingToOneAreReported()
    {
        attn::MatrixD w = attn::MatrixD::Constant(4, 4, 0.25);
        w.row(1).setConstant(0.5);
        const QString file = writeWeights(QStringLiteral("w_badrow"), w);
        const QString svg = m_dir.filePath(QStringLiteral("badrow.svg"));
        const Run r = run({QStringLiteral("--in"), file, QStringLiteral("--out"), svg});
        QVERIFY2(r.exitCode == 0, qPrintable(r.err));
        const QString note = QStringLiteral("w_badrow.npy: 1 of 4 rows do not sum to 1 (worst "
                                            "|\u03a3w \u2212 1| = 1 at head 0, row 1; tolerance "
                                            "1e-06)");
        QVERIFY2(r.err.contains(QStringLiteral("attnlab heatmap: note: ") + note),
                 qPrintable(r.err));
        // Glyphs of a fallback font (Σ) start text runs of their own: compared without spaces.
        const QString words = svgWords(svg).remove(QLatin1Char(' '));
        QVERIFY2(words.contains(QString(note).remove(QLatin1Char(' '))), qPrintable(words));
    }

    // An all-NaN 3 × 3 file: every row holds NaN, nine cells, the first at (0, 0); and one NaN
    // in a 3-d array names its head, row and key. Reported, drawn (exit 0).
    void nanWeightsAreReported()
    {
        const double nan = std::numeric_limits<double>::quiet_NaN();
        const QString file
            = writeWeights(QStringLiteral("w_allnan"), attn::MatrixD::Constant(3, 3, nan));
        const QString svg = m_dir.filePath(QStringLiteral("allnan.svg"));
        const Run r = run({QStringLiteral("--in"), file, QStringLiteral("--out"), svg});
        QVERIFY2(r.exitCode == 0, qPrintable(r.err));
        const QString note = QStringLiteral("w_allnan.npy: 3 rows hold NaN/Inf: 9 NaN and 0 Inf "
                                            "cells, the first at head 0, row 0, key 0");
        QVERIFY2(r.err.contains(QStringLiteral("attnlab heatmap: note: ") + note),
                 qPrintable(r.err));
        QVERIFY2(r.err.contains(QLatin1String("NaN/Inf cells in magenta")), qPrintable(r.err));
        QVERIFY2(svgWords(svg).contains(note), qPrintable(svgWords(svg).left(600)));

        attn::NpyArray heads;
        heads.type = attn::NpyType::Float32;
        heads.shape = {2, 3, 3};
        heads.values.assign(18, 1.0 / 3.0);
        heads.values[9 + 2 * 3 + 1] = std::numeric_limits<double>::infinity(); // head 1, (2, 1)
        const QString heads3d = m_dir.filePath(QStringLiteral("w_heads.npy"));
        attn::writeNpy(heads3d.toStdString(), heads);
        const QString png = m_dir.filePath(QStringLiteral("heads.png"));
        const Run h = run({QStringLiteral("--in"), heads3d, QStringLiteral("--out"), png});
        QVERIFY2(h.exitCode == 0, qPrintable(h.err));
        QVERIFY2(h.err.contains(QLatin1String("w_heads.npy: 1 row holds NaN/Inf: 0 NaN and 1 Inf "
                                              "cells, the first at head 1, row 2, key 1")),
                 qPrintable(h.err));
    }

    // Probability rows say nothing.
    void goodWeightsSayNothing()
    {
        const QString file
            = writeWeights(QStringLiteral("w_good"), attn::MatrixD::Constant(4, 4, 0.25));
        const QString png = m_dir.filePath(QStringLiteral("good.png"));
        const Run r = run({QStringLiteral("--in"), file, QStringLiteral("--out"), png});
        QVERIFY2(r.exitCode == 0, qPrintable(r.err));
        QVERIFY2(!r.err.contains(QLatin1String("note")), qPrintable(r.err));
    }

    // A model's `attentions` stack is a softmax's output read for the Model view, the Atlas and
    // `attnlab heads`, which score distributions: a NaN in it is refused when read, naming where.
    void nanInAttentionStackIsRefused()
    {
        attn::NpyArray stack;
        stack.type = attn::NpyType::Float64;
        stack.shape = {2, 1, 3, 3};
        stack.values.assign(18, 1.0 / 3.0);
        stack.values[9 + 1 * 3 + 2] = std::numeric_limits<double>::quiet_NaN();
        const QString file = m_dir.filePath(QStringLiteral("stack.npz"));
        attn::writeNpz(file.toStdString(), {{"attentions", stack}});
        const QString png = m_dir.filePath(QStringLiteral("stack.png"));
        const Run r = run({QStringLiteral("--in"), file, QStringLiteral("--out"), png});
        QCOMPARE(r.exitCode, 2);
        QVERIFY2(r.err.contains(QLatin1String("layer 1, head 0, query 1, key 2")),
                 qPrintable(r.err));
    }
};

QTEST_GUILESS_MAIN(TestCliHeatmapWeights)
#include "tst_cli_heatmap_weights.moc"
