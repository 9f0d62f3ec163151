// `attnlab heatmap` through QProcess: PNG/SVG/PDF files of the requested size, and bad
// arguments rejected with exit status 2 and a message naming the argument. `--view positions`
// (the positional encoding and PE·PEᵀ). The tile engine and the data export are in
// tst_cli_heatmap_engine.cpp, `attnlab animate` in tst_cli_animate.cpp.

#include <QFile>
#include <QImage>
#include <QImageReader>
#include <QJsonArray>
#include <QJsonDocument>
#include <QJsonObject>
#include <QProcess>
#include <QRegularExpression>
#include <QTemporaryDir>
#include <QTest>

#include "cli/heatmapcli.h"
#include "core/io/npy.h"

#include <algorithm>
#include <cmath>
#include <tuple>
#include <utility>
#include <vector>

class TestCliHeatmap : public attn::test::HeatmapCliTest
{
    Q_OBJECT

private slots:
    void initTestCase() { QVERIFY(m_dir.isValid()); }

    // --view model: every layer and head of a stack as 64-pixel thumbnails. The natural size,
    // by hand: 12 margin + 56 row labels + 4 maps × 64 + 3 gaps × 4 + 12 margin = 348 wide;
    // 12 + 3 caption lines × 17 + 40 colourbar + 18 column labels + 2 rows × 64 + 1 gap × 4 +
    // 12 = 265 high (one row, --layer: 197); wider when the caption needs it, which is then
    // written whole (no "…" in the SVG's text).
    void modelView_data()
    {
        QTest::addColumn<QStringList>("args");
        QTest::addColumn<QSize>("size");
        const QString stack = QStringLiteral(ATTN_FIXTURE_DIR "/modelstack/stack.npz");
        const QString batch = QStringLiteral(ATTN_FIXTURE_DIR "/modelstack/stack_batch.npz");
        QTest::newRow("every layer")
            << QStringList {QStringLiteral("--in"), stack} << QSize(348, 265);
        QTest::newRow("layer 1, batch item 1")
            << QStringList {QStringLiteral("--in"),    batch,
                            QStringLiteral("--batch"), QStringLiteral("1"),
                            QStringLiteral("--layer"), QStringLiteral("1")}
            << QSize(348, 197);
        QTest::newRow("given size, dpr 2")
            << QStringList {QStringLiteral("--in"),     stack,
                            QStringLiteral("--width"),  QStringLiteral("600"),
                            QStringLiteral("--height"), QStringLiteral("300"),
                            QStringLiteral("--dpr"),    QStringLiteral("2")}
            << QSize(1200, 600);
    }
    void modelView()
    {
        QFETCH(QStringList, args);
        QFETCH(QSize, size);
        const QString path
            = m_dir.filePath(QStringLiteral("model-%1.png").arg(QTest::currentDataTag()));
        const Run r = run(args
                          + QStringList {QStringLiteral("--view"), QStringLiteral("model"),
                                         QStringLiteral("--out"), path});
        QVERIFY2(r.exitCode == 0, qPrintable(r.err));
        const QSize written = QImage(path).size();
        if (args.contains(QStringLiteral("--width"))) {
            QCOMPARE(written, size);
            return;
        }
        QCOMPARE(written.height(), size.height());
        QVERIFY2(written.width() >= size.width(), qPrintable(QString::number(written.width())));
        const QString svg
            = m_dir.filePath(QStringLiteral("model-%1.svg").arg(QTest::currentDataTag()));
        const Run s = run(args
                          + QStringList {QStringLiteral("--view"), QStringLiteral("model"),
                                         QStringLiteral("--out"), svg});
        QVERIFY2(s.exitCode == 0, qPrintable(s.err));
        QFile file(svg);
        QVERIFY(file.open(QIODevice::ReadOnly));
        const QString text = QString::fromUtf8(file.readAll());
        QVERIFY(text.contains(QStringLiteral("rows sum to 1"))
                || text.contains(QStringLiteral("do not sum")));
        QVERIFY2(!text.contains(QChar(0x2026)), qPrintable(text.left(3000)));
    }
    void modelViewRefusals_data()
    {
        QTest::addColumn<QStringList>("args");
        QTest::addColumn<QString>("expected");
        const QString stack = QStringLiteral(ATTN_FIXTURE_DIR "/modelstack/stack.npz");
        QTest::newRow("no weights")
            << QStringList {QStringLiteral("--view"), QStringLiteral("model")}
            << "--view model needs attention weights";
        QTest::newRow("layer out of range")
            << QStringList {QStringLiteral("--in"),    stack,
                            QStringLiteral("--layer"), QStringLiteral("2"),
                            QStringLiteral("--view"),  QStringLiteral("model")}
            << "the weights have 2 layers";
        QTest::newRow("layer without weights")
            << QStringList {QStringLiteral("--layer"), QStringLiteral("0")}
            << "--layer goes with loaded weights";
        QTest::newRow("batch item out of range")
            << QStringList {QStringLiteral("--in"),
                            QStringLiteral(ATTN_FIXTURE_DIR "/modelstack/stack_batch.npz"),
                            QStringLiteral("--batch"),
                            QStringLiteral("2"),
                            QStringLiteral("--view"),
                            QStringLiteral("model")}
            << "B = 2 items (0 … 1)";
    }
    void modelViewRefusals()
    {
        QFETCH(QStringList, args);
        QFETCH(QString, expected);
        const QString path = m_dir.filePath(QStringLiteral("refused.png"));
        const Run r = run(args + QStringList {QStringLiteral("--out"), path});
        QCOMPARE(r.exitCode, 2);
        QVERIFY2(r.err.contains(expected), qPrintable(r.err));
        QVERIFY(!QFile::exists(path));
    }

    void writesPng_data()
    {
        QTest::addColumn<QStringList>("args");
        QTest::addColumn<QSize>("size");
        QTest::newRow("defaults, causal")
            << QStringList {QStringLiteral("--mask"), QStringLiteral("causal")}
            << QSize(1600, 1000);
        QTest::newRow("size and dpr")
            << QStringList {QStringLiteral("--width"),  QStringLiteral("700"),
                            QStringLiteral("--height"), QStringLiteral("400"),
                            QStringLiteral("--dpr"),    QStringLiteral("2")}
            << QSize(1400, 800);
        QTest::newRow("cross, padding, float32, one head")
            << QStringList {QStringLiteral("--kind"),    QStringLiteral("cross"),
                            QStringLiteral("--n-k"),     QStringLiteral("12"),
                            QStringLiteral("--mask"),    QStringLiteral("padding"),
                            QStringLiteral("--padding"), QStringLiteral("3"),
                            QStringLiteral("--dtype"),   QStringLiteral("float32"),
                            QStringLiteral("--view"),    QStringLiteral("head"),
                            QStringLiteral("--head"),    QStringLiteral("2"),
                            QStringLiteral("--width"),   QStringLiteral("640"),
                            QStringLiteral("--height"),  QStringLiteral("480")}
            << QSize(640, 480);
        QTest::newRow("decoder, mean, magma log, positional")
            << QStringList {QStringLiteral("--kind"),       QStringLiteral("decoder"),
                            QStringLiteral("--view"),       QStringLiteral("head"),
                            QStringLiteral("--head"),       QStringLiteral("mean"),
                            QStringLiteral("--colormap"),   QStringLiteral("magma"),
                            QStringLiteral("--scale"),      QStringLiteral("log"),
                            QStringLiteral("--positional"), QStringLiteral("sinusoidal"),
                            QStringLiteral("--width"),      QStringLiteral("500"),
                            QStringLiteral("--height"),     QStringLiteral("500")}
            << QSize(500, 500);
        QTest::newRow("compare view, default B (scale toggled)")
            << QStringList {QStringLiteral("--view"),   QStringLiteral("compare"),
                            QStringLiteral("--width"),  QStringLiteral("900"),
                            QStringLiteral("--height"), QStringLiteral("600")}
            << QSize(900, 600);
        QTest::newRow("compare view, B causal with d_k 8, mean, dpr 2")
            << QStringList {QStringLiteral("--view"),    QStringLiteral("compare"),
                            QStringLiteral("--compare"), QStringLiteral("mask=causal,dk=8,tau=2"),
                            QStringLiteral("--head"),    QStringLiteral("mean"),
                            QStringLiteral("--width"),   QStringLiteral("800"),
                            QStringLiteral("--height"),  QStringLiteral("500"),
                            QStringLiteral("--dpr"),     QStringLiteral("2")}
            << QSize(1600, 1000);
        QTest::newRow("compare view, cross attention, B padding")
            << QStringList {QStringLiteral("--view"),    QStringLiteral("compare"),
                            QStringLiteral("--kind"),    QStringLiteral("cross"),
                            QStringLiteral("--compare"), QStringLiteral("mask=padding,scale=on"),
                            QStringLiteral("--width"),   QStringLiteral("700"),
                            QStringLiteral("--height"),  QStringLiteral("700")}
            << QSize(700, 700);
        QTest::newRow("steps view, head 2, causal + padding")
            << QStringList {QStringLiteral("--view"),   QStringLiteral("steps"),
                            QStringLiteral("--head"),   QStringLiteral("2"),
                            QStringLiteral("--kind"),   QStringLiteral("decoder"),
                            QStringLiteral("--mask"),   QStringLiteral("padding"),
                            QStringLiteral("--width"),  QStringLiteral("1200"),
                            QStringLiteral("--height"), QStringLiteral("500")}
            << QSize(1200, 500);
    }
    void writesPng()
    {
        QFETCH(QStringList, args);
        QFETCH(QSize, size);
        const QString path = m_dir.filePath(QStringLiteral("%1.png")
                                                .arg(QTest::currentDataTag())
                                                .replace(QLatin1Char(' '), QLatin1Char('_'))
                                                .replace(QLatin1Char(','), QLatin1Char('_')));
        const Run r = run(args + QStringList {QStringLiteral("--out"), path});
        QVERIFY2(r.exitCode == 0, qPrintable(r.err));
        QImageReader reader(path);
        QCOMPARE(reader.format(), QByteArray("png"));
        const QImage image = reader.read();
        QCOMPARE(image.size(), size);
        // Not blank: the heatmap and text put many colours in the picture.
        QSet<QRgb> colors;
        for (int y = 0; y < image.height(); y += 7)
            for (int x = 0; x < image.width(); x += 7)
                colors.insert(image.pixel(x, y));
        QVERIFY(colors.size() > 10);
    }

    void writesSvgAndPdf()
    {
        const QString svg = m_dir.filePath(QStringLiteral("heads.svg"));
        Run r = run({QStringLiteral("--heads"), QStringLiteral("2"), QStringLiteral("--out"), svg});
        QVERIFY2(r.exitCode == 0, qPrintable(r.err));
        QFile svgFile(svg);
        QVERIFY(svgFile.open(QIODevice::ReadOnly));
        const QByteArray svgData = svgFile.readAll();
        QVERIFY(svgData.contains("<svg"));
        QVERIFY(svgData.contains(">head 1<"));
        QVERIFY(svgData.contains(">mean over heads<"));

        const QString pdf = m_dir.filePath(QStringLiteral("out.bin"));
        r = run({QStringLiteral("--format"), QStringLiteral("pdf"), QStringLiteral("--out"), pdf});
        QVERIFY2(r.exitCode == 0, qPrintable(r.err));
        QFile pdfFile(pdf);
        QVERIFY(pdfFile.open(QIODevice::ReadOnly));
        QVERIFY(pdfFile.readAll().startsWith("%PDF"));

        // The steps view as SVG: three panels, each with its axis titles and legend.
        const QString steps = m_dir.filePath(QStringLiteral("steps.svg"));
        r = run({QStringLiteral("--view"), QStringLiteral("steps"), QStringLiteral("--mask"),
                 QStringLiteral("causal"), QStringLiteral("--out"), steps});
        QVERIFY2(r.exitCode == 0, qPrintable(r.err));
        QFile stepsFile(steps);
        QVERIFY(stepsFile.open(QIODevice::ReadOnly));
        const QByteArray stepsData = stepsFile.readAll();
        QCOMPARE(stepsData.count(">query i (row)<"), 3);
        QVERIFY(stepsData.contains(">raw score<"));
        QVERIFY(stepsData.contains(">scaled score<"));
        QVERIFY(stepsData.contains(">causal-masked<"));

        // The compare view as SVG: A, B and B - A, with what B changes.
        const QString compare = m_dir.filePath(QStringLiteral("compare.svg"));
        r = run({QStringLiteral("--view"), QStringLiteral("compare"), QStringLiteral("--compare"),
                 QStringLiteral("mask=causal"), QStringLiteral("--out"), compare});
        QVERIFY2(r.exitCode == 0, qPrintable(r.err));
        QFile compareFile(compare);
        QVERIFY(compareFile.open(QIODevice::ReadOnly));
        const QString compareData = QString::fromUtf8(compareFile.readAll());
        QVERIFY(compareData.contains(QStringLiteral(">B \u2212 A (weights)<")));
        QVERIFY(compareData.contains(QStringLiteral("A/B comparison")));
    }

    // The Tokens tab's figures: the head view of one token (each head's only weight is 1) draws
    // one line per head, one with --head 1, the legend naming the heads drawn; the coloured text
    // of query 0 under the causal mask marks the later keys masked.
    void tokenViews()
    {
        const QString tokens = m_dir.filePath(QStringLiteral("tokens.svg"));
        const QStringList oneToken
            = {QStringLiteral("--view"), QStringLiteral("tokens"),  QStringLiteral("--n"),
               QStringLiteral("1"),      QStringLiteral("--heads"), QStringLiteral("2")};
        QByteArray svg = exported(oneToken, tokens);
        QCOMPARE(int(svg.count("<polyline")), 2);
        QVERIFY(svg.contains(">head 0<"));
        QVERIFY(svg.contains(">head 1<"));
        svg = exported(oneToken + QStringList {QStringLiteral("--head"), QStringLiteral("1")},
                       tokens);
        QCOMPARE(int(svg.count("<polyline")), 1);
        QVERIFY(!svg.contains(">head 0<"));

        const QString text = QString::fromUtf8(
            exported({QStringLiteral("--view"), QStringLiteral("text"), QStringLiteral("--tokens"),
                      QStringLiteral("the cat sat"), QStringLiteral("--kind"),
                      QStringLiteral("decoder"), QStringLiteral("--query"), QStringLiteral("0")},
                     m_dir.filePath(QStringLiteral("text.svg"))));
        QVERIFY(text.contains(QStringLiteral(">causal-masked<")));
        QVERIFY(text.contains(QStringLiteral("query 0 \u201cthe\u201d")));
    }

    // heatmap_format_out_disagree (new-user trial): --format png --out a.svg wrote a PNG named
    // .svg. The format comes from the suffix; --format may only restate it (or name the format
    // of a suffix that is none of png/svg/pdf).
    void formatAndSuffix_data()
    {
        QTest::addColumn<QString>("format"); // empty: not given
        QTest::addColumn<QString>("file");
        QTest::addColumn<int>("exitCode");
        QTest::addColumn<QByteArray>("magic"); // start of the file written (exit 0)
        QTest::newRow("png vs .svg")
            << QStringLiteral("png") << QStringLiteral("a.svg") << 2 << QByteArray();
        QTest::newRow("svg vs .pdf")
            << QStringLiteral("svg") << QStringLiteral("b.pdf") << 2 << QByteArray();
        QTest::newRow("PNG restates .png")
            << QStringLiteral("PNG") << QStringLiteral("c.png") << 0 << QByteArray("\x89PNG");
        QTest::newRow("suffix alone")
            << QString() << QStringLiteral("d.svg") << 0 << QByteArray("<?xml");
        QTest::newRow("format names an unknown suffix")
            << QStringLiteral("pdf") << QStringLiteral("e.bin") << 0 << QByteArray("%PDF");
        QTest::newRow("upper-case suffix")
            << QStringLiteral("png") << QStringLiteral("f.PNG") << 0 << QByteArray("\x89PNG");
    }
    void formatAndSuffix()
    {
        QFETCH(QString, format);
        QFETCH(QString, file);
        QFETCH(int, exitCode);
        QFETCH(QByteArray, magic);
        const QString path = m_dir.filePath(file);
        QStringList args {QStringLiteral("--width"),  QStringLiteral("300"),
                          QStringLiteral("--height"), QStringLiteral("200"),
                          QStringLiteral("--out"),    path};
        if (!format.isEmpty())
            args << QStringLiteral("--format") << format;
        const Run r = run(args);
        QCOMPARE(r.exitCode, exitCode);
        if (exitCode != 0) {
            QVERIFY2(r.err.contains(QStringLiteral("--format ") + format), qPrintable(r.err));
            QVERIFY2(r.err.contains(QStringLiteral("--out '%1'").arg(path)), qPrintable(r.err));
            QVERIFY(!QFile::exists(path));
            return;
        }
        QFile f(path);
        QVERIFY(f.open(QIODevice::ReadOnly));
        QVERIFY2(f.read(magic.size()) == magic, qPrintable(file));
    }

    void badArguments_data()
    {
        QTest::addColumn<QStringList>("args");
        QTest::addColumn<QString>("named");
        const QString out = QStringLiteral("--out");
        const QString png = QStringLiteral("/tmp/never-written.png");
        // Scores scaled past float32's range are the options' fault (exit 2), named with what
        // to change; in the full matrices and in the tile engine alike.
        QTest::newRow("float32 scores overflow")
            << QStringList {QStringLiteral("--dtype"),
                            QStringLiteral("float32"),
                            QStringLiteral("--temperature"),
                            QStringLiteral("1e-40"),
                            out,
                            png}
            << QStringLiteral("(float32 holds |x| <= 3.4e38: use a larger --temperature");
        QTest::newRow("float32 scores overflow, tile engine")
            << QStringList {QStringLiteral("--dtype"),
                            QStringLiteral("float32"),
                            QStringLiteral("--temperature"),
                            QStringLiteral("1e-40"),
                            QStringLiteral("--compute"),
                            QStringLiteral("tiles"),
                            out,
                            png}
            << QStringLiteral("use a larger --temperature");
        // A figure with no room for a map is refused, not written as a page saying so.
        const auto words = [&](const char *text) {
            return QString::fromLatin1(text).split(QLatin1Char(' ')) + QStringList {out, png};
        };
        QTest::newRow("figure too small for the maps")
            << words("--width 64 --height 64")
            << QStringLiteral("--width 64 --height 64 is too small to draw the maps");
        QTest::newRow("figure too small at --dpi")
            << words("--dpi 300 --width 600 --height 400")
            << QStringLiteral("at --dpi 300 (192 × 128 logical pixels) is too small");
        QTest::newRow("heads do not divide d_model")
            << QStringList {QStringLiteral("--heads"), QStringLiteral("3"), out, png}
            << QStringLiteral("--heads");
        QTest::newRow("bad generator")
            << QStringList {QStringLiteral("--generator"), QStringLiteral("mt"), out, png}
            << QStringLiteral("--generator");
        QTest::newRow("n zero") << QStringList {QStringLiteral("--n"), QStringLiteral("0"), out,
                                                png}
                                << QStringLiteral("--n");
        QTest::newRow("n not a number")
            << QStringList {QStringLiteral("--n"), QStringLiteral("many"), out, png}
            << QStringLiteral("--n");
        QTest::newRow("unknown mask")
            << QStringList {QStringLiteral("--mask"), QStringLiteral("diagonal"), out, png}
            << QStringLiteral("--mask");
        QTest::newRow("unknown kind")
            << QStringList {QStringLiteral("--kind"), QStringLiteral("sideways"), out, png}
            << QStringLiteral("--kind");
        QTest::newRow("dtype float16")
            << QStringList {QStringLiteral("--dtype"), QStringLiteral("float16"), out, png}
            << QStringLiteral("--dtype");
        QTest::newRow("padding beyond n") << QStringList {QStringLiteral("--mask"),
                                                          QStringLiteral("padding"),
                                                          QStringLiteral("--padding"),
                                                          QStringLiteral("9"),
                                                          out,
                                                          png}
                                          << QStringLiteral("--padding");
        QTest::newRow("alpha above 1")
            << QStringList {QStringLiteral("--alpha"), QStringLiteral("1.5"), out, png}
            << QStringLiteral("--alpha");
        QTest::newRow("temperature 0")
            << QStringList {QStringLiteral("--temperature"), QStringLiteral("0"), out, png}
            << QStringLiteral("--temperature");
        QTest::newRow("sink logit 60")
            << QStringList {QStringLiteral("--sink-logit"), QStringLiteral("60"), out, png}
            << QStringLiteral("--sink-logit");
        QTest::newRow("sink and differential")
            << QStringList {QStringLiteral("--sink-logit"),
                            QStringLiteral("1"),
                            QStringLiteral("--differential-lambda"),
                            QStringLiteral("0.5"),
                            out,
                            png}
            << QStringLiteral("do not combine");
        QTest::newRow("lambda count") << QStringList {QStringLiteral("--differential-lambda"),
                                                      QStringLiteral("0.1,0.2"), out, png}
                                      << QStringLiteral("2 numbers for h=4 heads");
        QTest::newRow("empty lambda entry")
            << QStringList {QStringLiteral("--differential-lambda"), QStringLiteral("0.2,,0.8,0.3"),
                            out, png}
            << QStringLiteral("'' is not a number");
        QTest::newRow("lambda out of range")
            << QStringList {QStringLiteral("--differential-lambda"),
                            QStringLiteral("0.2,3,0.8,0.3"), out, png}
            << QStringLiteral("3 is outside [-1, 2]");
        QTest::newRow("gate bias 80")
            << QStringList {QStringLiteral("--gate-bias"), QStringLiteral("80"), out, png}
            << QStringLiteral("--gate-bias");
        QTest::newRow("latent with RoPE") << QStringList {QStringLiteral("--latent-dim"),
                                                          QStringLiteral("4"),
                                                          QStringLiteral("--positional"),
                                                          QStringLiteral("rope"),
                                                          out,
                                                          png}
                                          << QStringLiteral("turn RoPE off");
        QTest::newRow("odd latent RoPE key") << QStringList {QStringLiteral("--latent-dim"),
                                                             QStringLiteral("4"),
                                                             QStringLiteral("--latent-rope-dim"),
                                                             QStringLiteral("3"),
                                                             out,
                                                             png}
                                             << QStringLiteral("d_r=3 must be even");
        QTest::newRow("absorbed without latent")
            << QStringList {QStringLiteral("--latent-absorbed"), out, png}
            << QStringLiteral("need --latent-dim");
        QTest::newRow("sink logit with a tensor file")
            << QStringList {QStringLiteral("--sink-logit"),
                            QStringLiteral("1"),
                            QStringLiteral("--in"),
                            QStringLiteral(ATTN_FIXTURE_DIR "/torch/self_attn.npz"),
                            out,
                            png}
            << QStringLiteral("a tensor file brings its own");
        QTest::newRow("head out of range") << QStringList {QStringLiteral("--view"),
                                                           QStringLiteral("head"),
                                                           QStringLiteral("--head"),
                                                           QStringLiteral("4"),
                                                           out,
                                                           png}
                                           << QStringLiteral("--head");
        QTest::newRow("steps view without a mean") << QStringList {QStringLiteral("--view"),
                                                                   QStringLiteral("steps"),
                                                                   QStringLiteral("--head"),
                                                                   QStringLiteral("mean"),
                                                                   out,
                                                                   png}
                                                   << QStringLiteral("--head");
        QTest::newRow("unknown view")
            << QStringList {QStringLiteral("--view"), QStringLiteral("steps3d"), out, png}
            << QStringLiteral("--view");
        QTest::newRow("unknown colormap")
            << QStringList {QStringLiteral("--colormap"), QStringLiteral("jet"), out, png}
            << QStringLiteral("--colormap");
        QTest::newRow("missing --out") << QStringList {} << QStringLiteral("--out");
        QTest::newRow("unknown suffix")
            << QStringList {out, QStringLiteral("/tmp/heads.bmp")} << QStringLiteral("--out");
        QTest::newRow("unknown format")
            << QStringList {QStringLiteral("--format"), QStringLiteral("gif"), out, png}
            << QStringLiteral("--format");
        QTest::newRow("width too small")
            << QStringList {QStringLiteral("--width"), QStringLiteral("3"), out, png}
            << QStringLiteral("--width");
        QTest::newRow("unknown option") << QStringList {QStringLiteral("--frobnicate"), out, png}
                                        << QStringLiteral("frobnicate");
        QTest::newRow("stray argument")
            << QStringList {QStringLiteral("extra"), out, png} << QStringLiteral("extra");
        // heatmap_huge_sizes_exit_1 (new-user trial): sizes that cannot fit exited 1 after
        // trying; decidable from the arguments, so now exit 2 before computing.
        QTest::newRow("n 4096, h 4096 over the memory budget")
            << QStringList {QStringLiteral("--n"),
                            QStringLiteral("4096"),
                            QStringLiteral("--d-model"),
                            QStringLiteral("4096"),
                            QStringLiteral("--heads"),
                            QStringLiteral("4096"),
                            out,
                            png}
            << QStringLiteral("--heads 4096");
        QTest::newRow("compute unknown")
            << QStringList {QStringLiteral("--compute"), QStringLiteral("gpu"), out, png}
            << QStringLiteral("--compute");
        QTest::newRow("n beyond 65536")
            << QStringList {QStringLiteral("--n"), QStringLiteral("65537"), out, png}
            << QStringLiteral("--n");
        QTest::newRow("compute full beyond n 4096")
            << QStringList {QStringLiteral("--n"),
                            QStringLiteral("5000"),
                            QStringLiteral("--compute"),
                            QStringLiteral("full"),
                            out,
                            png}
            << QStringLiteral("--compute full takes n and n_k up to 4096");
        QTest::newRow("tiles with the steps view") << QStringList {QStringLiteral("--compute"),
                                                                   QStringLiteral("tiles"),
                                                                   QStringLiteral("--view"),
                                                                   QStringLiteral("steps"),
                                                                   out,
                                                                   png}
                                                   << QStringLiteral("--view steps");
        QTest::newRow("n 8192 with the compare view (needs the full matrices)")
            << QStringList {QStringLiteral("--n"),
                            QStringLiteral("8192"),
                            QStringLiteral("--view"),
                            QStringLiteral("compare"),
                            out,
                            png}
            << QStringLiteral("--view compare needs every head's full n_q x n_k matrices of A "
                              "and B, n and n_k up to 4096 (got n_q = 8192, n_k = 8192)");
        QTest::newRow("tile engine over the memory budget")
            << QStringList {QStringLiteral("--n"),
                            QStringLiteral("65536"),
                            QStringLiteral("--d-model"),
                            QStringLiteral("4096"),
                            QStringLiteral("--heads"),
                            QStringLiteral("64"),
                            QStringLiteral("--memory-budget-mib"),
                            QStringLiteral("500"),
                            out,
                            png}
            << QStringLiteral("for the tile engine's view");
        QTest::newRow("sort heads beyond n = 4096")
            << QStringList {QStringLiteral("--n"),
                            QStringLiteral("5000"),
                            QStringLiteral("--sort-heads"),
                            QStringLiteral("entropy"),
                            out,
                            png}
            << QStringLiteral("--sort-heads (by the heads' per-row metrics) needs every head's "
                              "full n_q x n_k matrices");
        // .npz holds every array as doubles, its .npy image and the archive (about 58 MiB
        // here, the result itself 12.5 MiB).
        QTest::newRow("npz data over the budget")
            << QStringList {QStringLiteral("--n"),
                            QStringLiteral("512"),
                            QStringLiteral("--heads"),
                            QStringLiteral("2"),
                            QStringLiteral("--data"),
                            QStringLiteral("/tmp/never-written.npz"),
                            QStringLiteral("--memory-budget-mib"),
                            QStringLiteral("50"),
                            out,
                            png}
            << QStringLiteral("for writing --data, over --memory-budget-mib 50");
        QTest::newRow("budget named") << QStringList {QStringLiteral("--n"),
                                                      QStringLiteral("512"),
                                                      QStringLiteral("--memory-budget-mib"),
                                                      QStringLiteral("1"),
                                                      out,
                                                      png}
                                      << QStringLiteral("over --memory-budget-mib 1");
        QTest::newRow("PNG over 32768 pixels a side") << QStringList {QStringLiteral("--width"),
                                                                      QStringLiteral("16384"),
                                                                      QStringLiteral("--dpr"),
                                                                      QStringLiteral("4"),
                                                                      out,
                                                                      png}
                                                      << QStringLiteral("--dpr 4");
        QTest::newRow("PNG image over the memory budget")
            << QStringList {QStringLiteral("--width"),
                            QStringLiteral("12000"),
                            QStringLiteral("--height"),
                            QStringLiteral("12000"),
                            QStringLiteral("--dpr"),
                            QStringLiteral("2"),
                            out,
                            png}
            << QStringLiteral(
                   "--width 12000 x --height 12000 (--dpr 2) needs 2198 MiB for the image");
        QTest::newRow("budget not a number")
            << QStringList {QStringLiteral("--memory-budget-mib"), QStringLiteral("lots"), out, png}
            << QStringLiteral("--memory-budget-mib");
        QTest::newRow("compare counts B too")
            << QStringList {QStringLiteral("--n"),
                            QStringLiteral("256"),
                            QStringLiteral("--view"),
                            QStringLiteral("compare"),
                            QStringLiteral("--memory-budget-mib"),
                            QStringLiteral("10"), // A alone needs 6.6 MiB, A and B 13.8
                            out,
                            png}
            << QStringLiteral("for A and B");
        // --view compare: B's overrides.
        const QString view = QStringLiteral("--view");
        const QString compare = QStringLiteral("compare");
        const QString changes = QStringLiteral("--compare");
        QTest::newRow("compare unknown key")
            << QStringList {view, compare, changes, QStringLiteral("heads=2"), out, png}
            << QStringLiteral("--compare: unknown key 'heads'");
        QTest::newRow("compare not key=value")
            << QStringList {view, compare, changes, QStringLiteral("causal"), out, png}
            << QStringLiteral("--compare: expected key=value");
        QTest::newRow("compare alpha above 1")
            << QStringList {view, compare, changes, QStringLiteral("alpha=2"), out, png}
            << QStringLiteral("alpha must be a number in [0, 1]");
        QTest::newRow("compare tau 0")
            << QStringList {view, compare, changes, QStringLiteral("tau=0"), out, png}
            << QStringLiteral("tau must be a number > 0");
        QTest::newRow("compare unknown mask")
            << QStringList {view, compare, changes, QStringLiteral("mask=diagonal"), out, png}
            << QStringLiteral("--compare: mask must be");
        QTest::newRow("compare causal+padding with cross")
            << QStringList {QStringLiteral("--kind"),
                            QStringLiteral("cross"),
                            view,
                            compare,
                            changes,
                            QStringLiteral("mask=causal+padding"),
                            out,
                            png}
            << QStringLiteral("for --kind cross");
        QTest::newRow("compare dk 0")
            << QStringList {view, compare, changes, QStringLiteral("dk=0"), out, png}
            << QStringLiteral("dk must be an integer in [1, 1024]");
        QTest::newRow("compare dk too wide for h")
            << QStringList {view, compare, changes, QStringLiteral("dk=2000"), out, png}
            << QStringLiteral("dk must be an integer in [1, 1024]");
        QTest::newRow("compare without --view compare")
            << QStringList {changes, QStringLiteral("scale=off"), out, png}
            << QStringLiteral("--compare goes with --view compare");
        QTest::newRow("pin query with --view tokens") << QStringList {
            view, QStringLiteral("tokens"), QStringLiteral("--pin-query"), QStringLiteral("1"), out,
            png} << QStringLiteral("--pin-query goes with --view grid or head, not --view tokens");
        QTest::newRow("sort heads with --view steps")
            << QStringList {view,
                            QStringLiteral("steps"),
                            QStringLiteral("--sort-heads"),
                            QStringLiteral("entropy"),
                            out,
                            png}
            << QStringLiteral("--sort-heads goes with --view grid or head, not --view steps");
        QTest::newRow("query without --view text")
            << QStringList {QStringLiteral("--query"), QStringLiteral("1"), out, png}
            << QStringLiteral("--query goes with --view text");
        QTest::newRow("query out of range") << QStringList {view,
                                                            QStringLiteral("text"),
                                                            QStringLiteral("--n"),
                                                            QStringLiteral("4"),
                                                            QStringLiteral("--query"),
                                                            QStringLiteral("4"),
                                                            out,
                                                            png}
                                            << QStringLiteral("--query");
        QTest::newRow("tokens view too long") << QStringList {view,
                                                              QStringLiteral("tokens"),
                                                              QStringLiteral("--n"),
                                                              QStringLiteral("300"),
                                                              out,
                                                              png}
                                              << QStringLiteral("at most 256");
        QTest::newRow("pin query past n_q") << QStringList {QStringLiteral("--n"),
                                                            QStringLiteral("8"),
                                                            QStringLiteral("--pin-query"),
                                                            QStringLiteral("8"),
                                                            out,
                                                            png}
                                            << QStringLiteral("(n_q = 8)");
        QTest::newRow("pin query negative")
            << QStringList {QStringLiteral("--pin-query"), QStringLiteral("-1"), out, png}
            << QStringLiteral("--pin-query");
        QTest::newRow("pin query past cross n_q") << QStringList {QStringLiteral("--kind"),
                                                                  QStringLiteral("cross"),
                                                                  QStringLiteral("--n"),
                                                                  QStringLiteral("5"),
                                                                  QStringLiteral("--n-k"),
                                                                  QStringLiteral("9"),
                                                                  QStringLiteral("--pin-query"),
                                                                  QStringLiteral("6"),
                                                                  out,
                                                                  png}
                                                  << QStringLiteral("(n_q = 5)");
        QTest::newRow("sort heads unknown")
            << QStringList {QStringLiteral("--sort-heads"), QStringLiteral("variance"), out, png}
            << QStringLiteral("--sort-heads");
        QTest::newRow("sort descending by index")
            << QStringList {QStringLiteral("--sort-descending"), out, png}
            << QStringLiteral("--sort-descending goes with --sort-heads entropy or max-weight");
        QTest::newRow("compare with --batch-dir") << QStringList {
            view, compare, QStringLiteral("--batch-dir"), QStringLiteral("/tmp/never-written-dir"),
            out,  png} << QStringLiteral("--batch-dir");
    }
    void badArguments()
    {
        QFETCH(QStringList, args);
        QFETCH(QString, named);
        const Run r = run(args);
        QCOMPARE(r.exitCode, 2);
        QVERIFY2(r.err.contains(named), qPrintable(r.err));
        QVERIFY(!QFile::exists(QStringLiteral("/tmp/never-written.png")));
    }

    void hiddenKeysOutOfRange_data()
    {
        QTest::addColumn<QStringList>("args");
        QTest::addColumn<QString>("message");
        QTest::newRow("key 9 of n = 8")
            << QStringList {QStringLiteral("--hide-keys"), QStringLiteral("9")}
            << QStringLiteral("--hide-keys: key 9 does not exist: the keys are 0 to 7 (n_k = 8)");
        QTest::newRow("key 8 of n = 8")
            << QStringList {QStringLiteral("--hide-keys"), QStringLiteral("2,8")}
            << QStringLiteral("--hide-keys: key 8 does not exist: the keys are 0 to 7 (n_k = 8)");
        QTest::newRow("cross, key 10 of n_k = 10")
            << QStringList {QStringLiteral("--kind"),      QStringLiteral("cross"),
                            QStringLiteral("--n-k"),       QStringLiteral("10"),
                            QStringLiteral("--hide-keys"), QStringLiteral("10")}
            << QStringLiteral("--hide-keys: key 10 does not exist: the keys are 0 to 9 (n_k = 10)");
        QTest::newRow("every key")
            << QStringList {QStringLiteral("--hide-keys"), QStringLiteral("0-7")}
            << QStringLiteral("--hide-keys 0\u20137 hides every one of the n_k = 8 keys: nothing "
                              "is left to show");
        QTest::newRow("every key with the padding trimmed")
            << QStringList {QStringLiteral("--mask"),
                            QStringLiteral("padding"),
                            QStringLiteral("--padding"),
                            QStringLiteral("2"),
                            QStringLiteral("--trim-padding"),
                            QStringLiteral("--hide-keys"),
                            QStringLiteral("0-5")}
            << QStringLiteral("--hide-keys 0\u20135 with --trim-padding hides every one of the "
                              "n_k = 8 keys: nothing is left to show");
    }

    // --hide-keys 9 with n = 8 was silently ignored, and hiding every key exited 1 after
    // computing: both are usage errors (exit 2) naming the index, n_k, or the keys hidden.
    void hiddenKeysOutOfRange()
    {
        QFETCH(QStringList, args);
        QFETCH(QString, message);
        const QString out = m_dir.filePath(QStringLiteral("hidden.png"));
        QFile::remove(out); // the previous row's valid run wrote it
        const Run r = run(args
                          + QStringList {QStringLiteral("--n"), QStringLiteral("8"),
                                         QStringLiteral("--out"), out});
        QCOMPARE(r.exitCode, 2);
        QCOMPARE(r.err.section(QLatin1Char('\n'), 0, 0),
                 QStringLiteral("attnlab heatmap: ") + message);
        QVERIFY(!QFile::exists(out));
        // The last valid key still works.
        const Run ok
            = run({QStringLiteral("--n"), QStringLiteral("8"), QStringLiteral("--hide-keys"),
                   QStringLiteral("7"), QStringLiteral("--out"), out});
        QVERIFY2(ok.exitCode == 0, qPrintable(ok.err));
    }

    void windowRange_data()
    {
        QTest::addColumn<QStringList>("args");
        QTest::addColumn<int>("exitCode");
        QTest::addColumn<QString>("message"); // first line of stderr ("" for none)
        QTest::newRow("w 0")
            << QStringList {QStringLiteral("--window"), QStringLiteral("0")} << 2
            << QStringLiteral(
                   "attnlab heatmap: --window must be an integer in [1, 65536], got '0'");
        QTest::newRow("w 2^40") << QStringList {QStringLiteral("--window"),
                                                QStringLiteral("1099511627776")}
                                << 2
                                << QStringLiteral("attnlab heatmap: --window must be an integer in "
                                                  "[1, 65536], got '1099511627776'");
        QTest::newRow("sinks 2^40")
            << QStringList {QStringLiteral("--window"), QStringLiteral("3"),
                            QStringLiteral("--sinks"), QStringLiteral("1099511627776")}
            << 2
            << QStringLiteral("attnlab heatmap: --sinks must be an integer in [0, 65536], got "
                              "'1099511627776'");
        QTest::newRow("sinks -1")
            << QStringList {QStringLiteral("--window"), QStringLiteral("3"),
                            QStringLiteral("--sinks"), QStringLiteral("-1")}
            << 2
            << QStringLiteral(
                   "attnlab heatmap: --sinks must be an integer in [0, 65536], got '-1'");
        QTest::newRow("w 20 > n 8: a note")
            << QStringList {QStringLiteral("--window"), QStringLiteral("20")} << 0
            << QStringLiteral(
                   "attnlab heatmap: note: --window 20 is not shorter than the sequence "
                   "(n = 8): the sliding window masks no key, only the causal mask applies");
        QTest::newRow("w 8 = n 8: a note")
            << QStringList {QStringLiteral("--window"), QStringLiteral("8")} << 0
            << QStringLiteral(
                   "attnlab heatmap: note: --window 8 is not shorter than the sequence "
                   "(n = 8): the sliding window masks no key, only the causal mask applies");
        QTest::newRow("w 6, 2 sinks, n 8: a note")
            << QStringList {QStringLiteral("--window"), QStringLiteral("6"),
                            QStringLiteral("--sinks"), QStringLiteral("2")}
            << 0
            << QStringLiteral(
                   "attnlab heatmap: note: --window 6 with --sinks 2 masks no key (n = 8): "
                   "every key before a window is a sink, only the causal mask applies");
        // Query 7 sees keys 2..7 with w = 6; key 1 is masked unless it is a sink.
        QTest::newRow("w 6, 1 sink, n 8: masks key 1 of query 7")
            << QStringList {QStringLiteral("--window"), QStringLiteral("6"),
                            QStringLiteral("--sinks"), QStringLiteral("1")}
            << 0 << QString();
        QTest::newRow("w 7, n 8: masks key 0 of query 7")
            << QStringList {QStringLiteral("--window"), QStringLiteral("7")} << 0 << QString();
        QTest::newRow("w 4 with --mask none: the window stays causal")
            << QStringList {QStringLiteral("--window"), QStringLiteral("4"),
                            QStringLiteral("--mask"), QStringLiteral("none")}
            << 0
            << QStringLiteral("attnlab heatmap: note: the sliding window is causal (query i sees "
                              "the keys i - w < j <= i): with --window, --mask none still masks "
                              "the future");
    }

    // --window took 2^40 and w > n silently: the range is the longest sequence's, [1, 65536]
    // (sinks [0, 65536]); a window that masks nothing says so on stderr.
    void windowRange()
    {
        QFETCH(QStringList, args);
        QFETCH(int, exitCode);
        QFETCH(QString, message);
        const QString out = m_dir.filePath(QStringLiteral("window.png"));
        const Run r = run(args
                          + QStringList {QStringLiteral("--n"), QStringLiteral("8"),
                                         QStringLiteral("--out"), out});
        QCOMPARE(r.exitCode, exitCode);
        QCOMPARE(r.err.section(QLatin1Char('\n'), 0, 0), message);
    }

    // A file of two weight arrays: refused naming both and --array; --array picks either (the
    // caption names it); --array without --in and an unknown name are refused.
    void arrayChoosesTheWeights()
    {
        const QString file = m_dir.filePath(QStringLiteral("two.npz"));
        const attn::MatrixD a = attn::MatrixD::Constant(4, 4, 0.25),
                            b = attn::MatrixD::Identity(4, 4);
        attn::writeNpz(file.toStdString(),
                       {{"foo", attn::NpyArray::fromMatrix<double>(a)},
                        {"bar", attn::NpyArray::fromMatrix<double>(b)}});
        const QString out = m_dir.filePath(QStringLiteral("two.png"));
        const Run refused = run({QStringLiteral("--in"), file, QStringLiteral("--out"), out});
        QCOMPARE(refused.exitCode, 2);
        QVERIFY2(refused.err.contains(QLatin1String("foo"))
                     && refused.err.contains(QLatin1String("bar"))
                     && refused.err.contains(QLatin1String("--array NAME")),
                 qPrintable(refused.err));
        const QString data = m_dir.filePath(QStringLiteral("two.csv"));
        for (const char *name : {"foo", "bar"}) {
            const Run r = run({QStringLiteral("--in"), file, QStringLiteral("--array"),
                               QString::fromLatin1(name), QStringLiteral("--out"), out,
                               QStringLiteral("--data"), data});
            QVERIFY2(r.exitCode == 0, qPrintable(r.err));
            QFile csv(data);
            QVERIFY(csv.open(QIODevice::ReadOnly));
            const QByteArray text = csv.readAll();
            // foo is uniform (0.25 everywhere), bar the identity (a 1 on the diagonal).
            QVERIFY2(text.contains(name == std::string("foo") ? "0.25" : ",1"), text.constData());
        }
        const Run unknown = run({QStringLiteral("--in"), file, QStringLiteral("--array"),
                                 QStringLiteral("baz"), QStringLiteral("--out"), out});
        QCOMPARE(unknown.exitCode, 2);
        QVERIFY2(unknown.err.contains(QLatin1String("no array 'baz'")), qPrintable(unknown.err));
        const Run alone
            = run({QStringLiteral("--array"), QStringLiteral("foo"), QStringLiteral("--out"), out});
        QCOMPARE(alone.exitCode, 2);
        QVERIFY2(alone.err.contains(QLatin1String("--array goes with --in")),
                 qPrintable(alone.err));
    }

    // Signed weights (differential attention) are drawn on RdBu_r centred on 0 over [-m, m]:
    // --range fixed and another --colormap are named as not applied; --scale log (a symmetric
    // log), --range auto (what the signed scale does) and the same options on unsigned weights
    // say nothing.
    void signedWeightsNameIgnoredColourOptions()
    {
        const QString png = m_dir.filePath(QStringLiteral("signed-options.png"));
        const QStringList model {QStringLiteral("--n"),       QStringLiteral("4"),
                                 QStringLiteral("--heads"),   QStringLiteral("2"),
                                 QStringLiteral("--d-model"), QStringLiteral("8"),
                                 QStringLiteral("--out"),     png};
        const QStringList differential {QStringLiteral("--differential-lambda"),
                                        QStringLiteral("0.5")};
        const Run r = run(model + differential
                          + QStringList {QStringLiteral("--scale"), QStringLiteral("log"),
                                         QStringLiteral("--range"), QStringLiteral("fixed"),
                                         QStringLiteral("--colormap"), QStringLiteral("magma")});
        QVERIFY2(r.exitCode == 0, qPrintable(r.err));
        for (const char *option : {"--range fixed", "--colormap magma"})
            QVERIFY2(r.err.contains(QStringLiteral("attnlab heatmap: note: %1 does not apply to "
                                                   "signed weights (A1 - lambda A2): they are "
                                                   "drawn on RdBu_r centred on 0 over [-m, m] "
                                                   "with m the largest |w| drawn (linear, or a "
                                                   "symmetric log with --scale log)")
                                        .arg(QLatin1String(option))),
                     qPrintable(r.err + " lacks " + QLatin1String(option)));
        QVERIFY2(!r.err.contains(QLatin1String("--scale log does not apply")), qPrintable(r.err));
        QVERIFY(QFile::exists(png));

        const Run honoured
            = run(model + differential
                  + QStringList {QStringLiteral("--range"), QStringLiteral("auto"),
                                 QStringLiteral("--colormap"), QStringLiteral("RdBu_r")});
        QVERIFY2(honoured.exitCode == 0, qPrintable(honoured.err));
        QVERIFY2(!honoured.err.contains(QLatin1String("does not apply")), qPrintable(honoured.err));

        const Run plain
            = run(model
                  + QStringList {QStringLiteral("--scale"), QStringLiteral("log"),
                                 QStringLiteral("--colormap"), QStringLiteral("magma")});
        QVERIFY2(plain.exitCode == 0, qPrintable(plain.err));
        QVERIFY2(!plain.err.contains(QLatin1String("does not apply")), qPrintable(plain.err));
    }

    // A session's λ per head (differential_head_lambdas) that no longer fits an h given by
    // --heads: the refusal names the session and its key, not an option nobody typed.
    void sessionHeadLambdasNamedAsTheSession()
    {
        const QString session = m_dir.filePath(QStringLiteral("lambdas.attnlab.json"));
        QFile s(session);
        QVERIFY(s.open(QIODevice::WriteOnly));
        const QJsonObject params {
            {"version", 1},         {"n", 4},
            {"d_model", 8},         {"heads", 4},
            {"differential", true}, {"differential_head_lambdas", QJsonArray {0.2, 0.5, 0.3, 0.1}}};
        s.write(
            QJsonDocument(
                QJsonObject {{"format", "attnlab-session"}, {"version", 1}, {"parameters", params}})
                .toJson());
        s.close();
        const QString png = m_dir.filePath(QStringLiteral("lambdas.png"));
        const Run ok = run({QStringLiteral("--session"), session, QStringLiteral("--out"), png});
        QVERIFY2(ok.exitCode == 0, qPrintable(ok.err));

        const Run r = run({QStringLiteral("--session"), session, QStringLiteral("--heads"),
                           QStringLiteral("2"), QStringLiteral("--out"), png});
        QCOMPARE(r.exitCode, 2);
        QVERIFY2(r.err.contains(QStringLiteral("the session '%1' sets differential_head_lambdas "
                                               "(0.2,0.5,0.3,0.1): \u03bb per head: 4 numbers "
                                               "for h=2 heads")
                                    .arg(session)),
                 qPrintable(r.err));
        QVERIFY2(!r.err.contains(QLatin1String("--differential-lambda:")), qPrintable(r.err));
    }

    void help()
    {
        const Run r = run({QStringLiteral("--help")});
        QCOMPARE(r.exitCode, 0);
        for (const char *option : {"--n", "--d-model", "--heads", "--mask", "--kind", "--out",
                                   "--view", "--dtype", "--positional"})
            QVERIFY2(r.out.contains(QLatin1String(option)), option);
    }

    void unwritableOutputFails()
    {
        // Refused before computing (exit 2, checkOutputPaths), naming the missing folder.
        const Run r = run({QStringLiteral("--out"), QStringLiteral("/nonexistent-dir/heads.png")});
        QCOMPARE(r.exitCode, 2);
        QVERIFY2(r.err.contains(QStringLiteral("does not exist")), qPrintable(r.err));
        QVERIFY2(r.err.contains(QStringLiteral("/nonexistent-dir/heads.png")), qPrintable(r.err));
    }
    void positionsView()
    {
        const QString png = m_dir.filePath(QStringLiteral("positions.png"));
        const Run a
            = run({QStringLiteral("--view"), QStringLiteral("positions"), QStringLiteral("--n"),
                   QStringLiteral("24"), QStringLiteral("--d-model"), QStringLiteral("32"),
                   QStringLiteral("--width"), QStringLiteral("900"), QStringLiteral("--height"),
                   QStringLiteral("500"), QStringLiteral("--out"), png});
        QVERIFY2(a.exitCode == 0, qPrintable(a.err));
        QCOMPARE(QImage(png).size(), QSize(900, 500));
        // The SVG's description is the caption: sizes and the diagonal d_model/2 = 16.
        const QString svg = m_dir.filePath(QStringLiteral("positions.svg"));
        const Run b = run({QStringLiteral("--view"), QStringLiteral("positions"),
                           QStringLiteral("--n"), QStringLiteral("24"), QStringLiteral("--d-model"),
                           QStringLiteral("32"), QStringLiteral("--out"), svg});
        QVERIFY2(b.exitCode == 0, qPrintable(b.err));
        QFile f(svg);
        QVERIFY(f.open(QIODevice::ReadOnly));
        const QString text = QString::fromUtf8(f.readAll());
        QVERIFY(text.contains(QStringLiteral("n = 24 positions \u00d7 d_model = 32")));
        QVERIFY(text.contains(QStringLiteral("largest on the diagonal (16)")));
        QVERIFY(text.contains(QStringLiteral("depends only on the offset")));
        // Without --out, or beyond n = 4096: refused.
        const Run c = run({QStringLiteral("--view"), QStringLiteral("positions")});
        QCOMPARE(c.exitCode, 2);
        QVERIFY2(c.err.contains(QStringLiteral("--out is required")), qPrintable(c.err));
        const Run d
            = run({QStringLiteral("--view"), QStringLiteral("positions"), QStringLiteral("--n"),
                   QStringLiteral("5000"), QStringLiteral("--out"), png});
        QCOMPARE(d.exitCode, 2);
        QVERIFY2(d.err.contains(QStringLiteral("up to 4096")), qPrintable(d.err));
    }
};

QTEST_GUILESS_MAIN(TestCliHeatmap)
#include "tst_cli_heatmap.moc"
