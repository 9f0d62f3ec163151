// `attnlab heatmap` through QProcess: PNG/SVG/PDF files of the requested size, and bad
// arguments rejected with exit status 2 and a message naming the argument. `--view positions`
// (the positional encoding and PE·PEᵀ) and `attnlab animate` (one PNG per frame of the Play
// schedule, frames.csv naming each frame's parameters; bad ranges and clashing options exit 2).

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

#include "core/io/npy.h"

#include "ui/svgtext.h"

#include <algorithm>
#include <cmath>
#include <tuple>
#include <utility>
#include <vector>

using attn::listNpz;
using attn::NpyArray;
using attn::readNpzMember;

class TestCliHeatmap : public QObject
{
    Q_OBJECT

private:
    struct Run
    {
        int exitCode = -1;
        QString out, err;
    };
    Run run(const QStringList &args)
    {
        QProcess process;
        process.setProgram(QStringLiteral(ATTNLAB_EXE));
        process.setArguments(QStringList {QStringLiteral("heatmap")} + args);
        process.start();
        Run r;
        if (!process.waitForFinished(120000))
            return r;
        r.exitCode = process.exitStatus() == QProcess::NormalExit ? process.exitCode() : -2;
        r.out = QString::fromUtf8(process.readAllStandardOutput());
        r.err = QString::fromUtf8(process.readAllStandardError());
        return r;
    }

    /// `heatmap <args> --compute <mode> <option> <path>`.
    Run runComputed(const QStringList &args, const char *mode, const char *option,
                    const QString &path)
    {
        return run(args
                   + QStringList {QStringLiteral("--compute"), QLatin1String(mode),
                                  QLatin1String(option), path});
    }

    /// The file `heatmap <args> --out <path>` writes (empty when it fails: exit status ≠ 0).
    QByteArray exported(const QStringList &args, const QString &path)
    {
        const Run r = run(args + QStringList {QStringLiteral("--out"), path});
        if (r.exitCode != 0) {
            qWarning("%s", qPrintable(r.err));
            return {};
        }
        QFile file(path);
        return file.open(QIODevice::ReadOnly) ? file.readAll() : QByteArray();
    }

    QTemporaryDir m_dir;

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
        // What the tile engine does not apply is refused there, never dropped in silence.
        for (const auto &[option, value, named] :
             {std::tuple {"--positional", "rope", "RoPE needs every head's full"},
              std::tuple {"--positional", "alibi", "ALiBi needs every head's full"},
              std::tuple {"--kv-heads", "1", "shared key/value heads (g = 1) needs every"}})
            QTest::newRow(
                qPrintable(QStringLiteral("%1 %2 with the tile engine").arg(option, value)))
                << QStringList {QStringLiteral("--n"),
                                QStringLiteral("32"),
                                QStringLiteral("--d-model"),
                                QStringLiteral("32"),
                                QStringLiteral("--heads"),
                                QStringLiteral("2"),
                                QString::fromLatin1(option),
                                QString::fromLatin1(value),
                                QStringLiteral("--compute"),
                                QStringLiteral("tiles"),
                                out,
                                png}
                << QString::fromLatin1(named);
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

    // Beyond n = 4096 the heatmap is the tile engine's pooled view, whose rows are pixels of
    // several queries: --pin-query names a query of the sequence, and the caption the first query
    // of the pixel row that holds it (n = 8192 on 1024 rows: 8 queries a row, 1000 starts one).
    void pinQueryInPooledView_data()
    {
        QTest::addColumn<QString>("pin");
        QTest::addColumn<QString>("caption");
        QTest::newRow("first query of a pixel row")
            << QStringLiteral("1000") << QStringLiteral("pinned query 1000");
        QTest::newRow("inside a pixel row")
            << QStringLiteral("1027") << QStringLiteral("pinned query 1024");
        QTest::newRow("last query")
            << QStringLiteral("8191") << QStringLiteral("pinned query 8184");
    }
    void pinQueryInPooledView()
    {
        QFETCH(QString, pin);
        QFETCH(QString, caption);
        const QString svg = m_dir.filePath(QStringLiteral("pooled-pin.svg"));
        const Run r
            = run({QStringLiteral("--n"), QStringLiteral("8192"), QStringLiteral("--d-model"),
                   QStringLiteral("8"), QStringLiteral("--heads"), QStringLiteral("1"),
                   QStringLiteral("--pin-query"), pin, QStringLiteral("--out"), svg});
        QVERIFY2(r.exitCode == 0, qPrintable(r.err));
        QFile file(svg);
        QVERIFY(file.open(QIODevice::ReadOnly));
        const QString words = QString::fromUtf8(file.readAll())
                                  .remove(QRegularExpression(QStringLiteral("<[^>]*>")))
                                  .simplified();
        const QRegularExpressionMatch pinned
            = QRegularExpression(QStringLiteral("pinned query \\d+")).match(words);
        QVERIFY2(pinned.hasMatch(), qPrintable(words.left(400)));
        QCOMPARE(pinned.captured(0), caption);
    }

    // --pin-query and --sort-heads reach the export: the caption names the pinned query (its
    // token) and the order, and the tile titles follow the order of the mean row entropies,
    // which the --data export of the same run states per row.
    void pinAndSortInExport()
    {
        const QString svg = m_dir.filePath(QStringLiteral("pin-sort.svg"));
        const QString json = m_dir.filePath(QStringLiteral("pin-sort.json"));
        const Run r
            = run({QStringLiteral("--tokens"), QStringLiteral("the cat sat on the mat"),
                   QStringLiteral("--d-model"), QStringLiteral("16"), QStringLiteral("--heads"),
                   QStringLiteral("4"), QStringLiteral("--pin-query"), QStringLiteral("2"),
                   QStringLiteral("--sort-heads"), QStringLiteral("entropy"),
                   QStringLiteral("--sort-descending"), QStringLiteral("--width"),
                   QStringLiteral("900"), QStringLiteral("--height"), QStringLiteral("600"),
                   QStringLiteral("--out"), svg, QStringLiteral("--data"), json});
        QCOMPARE(r.exitCode, 0);
        QFile file(svg);
        QVERIFY(file.open(QIODevice::ReadOnly));
        const QString text = QString::fromUtf8(file.readAll());
        // The caption wraps over several <text> elements: their words, one space apart.
        const QString words
            = QString(text).remove(QRegularExpression(QStringLiteral("<[^>]*>"))).simplified();
        QVERIFY2(words.contains(QStringLiteral("pinned query 2:sat")), qPrintable(words.left(400)));
        QVERIFY(words.contains(QStringLiteral("heads by mean entropy, descending")));
        // The mean row entropy of each head from the data export (no masks: every row counts).
        QFile data(json);
        QVERIFY(data.open(QIODevice::ReadOnly));
        const QJsonArray heads = QJsonDocument::fromJson(data.readAll())
                                     .object()
                                     .value(QStringLiteral("heads"))
                                     .toArray();
        QCOMPARE(heads.size(), 4);
        std::vector<std::pair<double, int>> means;
        for (const QJsonValue &head : heads) {
            const QJsonArray e = head.toObject()
                                     .value(QStringLiteral("metrics"))
                                     .toObject()
                                     .value(QStringLiteral("entropy"))
                                     .toArray();
            double sum = 0;
            for (const QJsonValue &v : e)
                sum += v.toDouble();
            means.emplace_back(-sum / e.size(),
                               head.toObject().value(QStringLiteral("head")).toInt());
        }
        std::sort(means.begin(), means.end()); // highest mean first
        // Tile titles in document order: "head k" (or a shorter form) then "mean over heads".
        std::vector<int> titled;
        const QRegularExpression title(QStringLiteral(">\\s*(?:head |h)(\\d)\\s*<"));
        for (auto it = title.globalMatch(text); it.hasNext();)
            titled.push_back(it.next().captured(1).toInt());
        QCOMPARE(int(titled.size()), 4);
        for (int k = 0; k < 4; ++k)
            QCOMPARE(titled[std::size_t(k)], means[std::size_t(k)].second);
    }

    // The tile engine's view (--compute tiles) draws the same picture as the full matrices
    // where every cell has its own pixel: only the caption says how it was computed.
    void tileEngineMatchesFullView()
    {
        const QString full = m_dir.filePath(QStringLiteral("full.png"));
        const QString tiles = m_dir.filePath(QStringLiteral("tiles.png"));
        const QStringList common {
            QStringLiteral("--n"),     QStringLiteral("300"),     QStringLiteral("--d-model"),
            QStringLiteral("64"),      QStringLiteral("--heads"), QStringLiteral("4"),
            QStringLiteral("--mask"),  QStringLiteral("causal"),  QStringLiteral("--dtype"),
            QStringLiteral("float32"), QStringLiteral("--range"), QStringLiteral("fixed")};
        const Run a = runComputed(common, "full", "--out", full);
        QVERIFY2(a.exitCode == 0, qPrintable(a.err));
        const Run b = runComputed(common, "tiles", "--out", tiles);
        QVERIFY2(b.exitCode == 0, qPrintable(b.err));
        const QImage ia(full), ib(tiles);
        QCOMPARE(ia.size(), ib.size());
        // Below the caption (one line at this width): every pixel equal.
        int differing = 0, compared = 0;
        for (int y = 40; y < ia.height(); ++y)
            for (int x = 0; x < ia.width(); ++x, ++compared)
                differing += ia.pixel(x, y) != ib.pixel(x, y);
        QVERIFY2(differing == 0,
                 qPrintable(QStringLiteral("%1 of %2 pixels differ").arg(differing).arg(compared)));
        QVERIFY(ia != ib); // the captions differ

        // Without --range the tile engine's view is coloured as the Long tab colours it and says
        // so; with --range, and for the full matrices, nothing is said.
        const QString autoTiles = m_dir.filePath(QStringLiteral("tiles-auto.png"));
        const Run c = runComputed(common.mid(0, common.size() - 2), "tiles", "--out", autoTiles);
        QVERIFY2(c.exitCode == 0, qPrintable(c.err));
        QVERIFY2(c.err.contains(QLatin1String("coloured log10 over the five decades below its "
                                              "largest weight")),
                 qPrintable(c.err));
        QVERIFY(!a.err.contains(QLatin1String("coloured")));
        QVERIFY(!b.err.contains(QLatin1String("coloured")));
    }

    // The window notes of a pooled view name the sequence's length, not its pixels'; the same
    // budget takes the data as .json, written as it goes.
    void tileEngineNotesNameTheSequence()
    {
        const QString png = m_dir.filePath(QStringLiteral("note.png"));
        const Run a = run(
            {QStringLiteral("--n"), QStringLiteral("5000"), QStringLiteral("--d-model"),
             QStringLiteral("8"), QStringLiteral("--heads"), QStringLiteral("1"),
             QStringLiteral("--window"), QStringLiteral("6000"), QStringLiteral("--out"), png});
        QVERIFY2(a.exitCode == 0, qPrintable(a.err));
        QVERIFY2(a.err.contains(QLatin1String("--window 6000 is not shorter than the sequence "
                                              "(n = 5000)")),
                 qPrintable(a.err));
        const QString json = m_dir.filePath(QStringLiteral("budget.json"));
        const Run b = run({QStringLiteral("--n"), QStringLiteral("512"), QStringLiteral("--heads"),
                           QStringLiteral("2"), QStringLiteral("--data"), json,
                           QStringLiteral("--memory-budget-mib"), QStringLiteral("50")});
        QVERIFY2(b.exitCode == 0, qPrintable(b.err));
    }

    // The axes of a pooled view end on the last position, as the full matrices' do: 4095 at
    // n = 4096 (4 cells a pixel), not the last pixel's first query, 4092.
    void pooledAxesEndOnTheLastPosition()
    {
        for (const char *mode : {"full", "tiles"}) {
            const QString svg = m_dir.filePath(QStringLiteral("axes-%1.svg").arg(mode));
            const Run r = runComputed({QStringLiteral("--n"), QStringLiteral("4096"),
                                       QStringLiteral("--d-model"), QStringLiteral("8"),
                                       QStringLiteral("--heads"), QStringLiteral("1"),
                                       QStringLiteral("--range"), QStringLiteral("fixed")},
                                      mode, "--out", svg);
            QVERIFY2(r.exitCode == 0, qPrintable(r.err));
            const attn::test::SvgTexts texts = attn::test::readSvgTextsFile(svg);
            QVERIFY2(texts.error.isEmpty(), qPrintable(texts.error));
            QVERIFY2(texts.texts.count(QStringLiteral("4095")) == 2, mode); // both axes
            QVERIFY2(!texts.texts.contains(QStringLiteral("4092")), mode);
        }
    }

    // --data with the tile engine writes its pooled view. Where every cell has its own pixel
    // (n = 300 < 1024) the weights and mask states are those of the full matrices; a sliding
    // window longer than 4096 keys applies to a long sequence.
    void tileEngineData()
    {
        const QString full = m_dir.filePath(QStringLiteral("data-full.npz"));
        const QString tiles = m_dir.filePath(QStringLiteral("data-tiles.npz"));
        const QStringList common {QStringLiteral("--n"),       QStringLiteral("300"),
                                  QStringLiteral("--d-model"), QStringLiteral("16"),
                                  QStringLiteral("--heads"),   QStringLiteral("2"),
                                  QStringLiteral("--window"),  QStringLiteral("40"),
                                  QStringLiteral("--sinks"),   QStringLiteral("2")};
        const Run a = runComputed(common, "full", "--data", full);
        QVERIFY2(a.exitCode == 0, qPrintable(a.err));
        const Run b = runComputed(common, "tiles", "--data", tiles);
        QVERIFY2(b.exitCode == 0, qPrintable(b.err));
        QVERIFY2(b.err.contains(QLatin1String("--data writes the tile engine's pooled view, 300 x "
                                              "300 pixels a head")),
                 qPrintable(b.err));
        for (const char *name : {"weights", "weights_mean", "mask_state"}) {
            const NpyArray x = readNpzMember(full.toStdString(), name);
            const NpyArray y = readNpzMember(tiles.toStdString(), name);
            QCOMPARE(x.shape, y.shape);
            double worst = 0;
            for (std::size_t k = 0; k < x.values.size(); ++k)
                worst = std::max(worst, std::abs(x.values[k] - y.values[k]));
            QVERIFY2(worst <= 1e-12, qPrintable(QStringLiteral("%1: %2").arg(name).arg(worst)));
        }
        // The full matrices' own arrays (scores, per-row metrics) are not in the pooled view.
        const std::vector<std::string> members = listNpz(tiles.toStdString());
        QVERIFY(std::find(members.begin(), members.end(), "scores") == members.end());
        QVERIFY(std::find(members.begin(), members.end(), "weights") != members.end());
        // Nor are their CSV columns.
        const QString csvPath = m_dir.filePath(QStringLiteral("data-tiles.csv"));
        const Run csvRun = runComputed({QStringLiteral("--n"), QStringLiteral("40")}, "tiles",
                                       "--data", csvPath);
        QVERIFY2(csvRun.exitCode == 0, qPrintable(csvRun.err));
        QFile csv(csvPath);
        QVERIFY(csv.open(QIODevice::ReadOnly | QIODevice::Text));
        QCOMPARE(csv.readLine().trimmed(),
                 QByteArray("head,query,key,query_label,key_label,weight,mask"));

        // n = 5000 > 4096 with a window of 4500 keys: pooled 5 x 5 cells a pixel. The last
        // pixel row holds queries 4995 … 4999, which see keys 496 … 4999 at the widest: its
        // pixels of keys 0 … 494 are masked, and from keys 495 … 499 on they are not.
        const QString longData = m_dir.filePath(QStringLiteral("data-long.npz"));
        const Run c
            = run({QStringLiteral("--n"), QStringLiteral("5000"), QStringLiteral("--d-model"),
                   QStringLiteral("8"), QStringLiteral("--heads"), QStringLiteral("1"),
                   QStringLiteral("--window"), QStringLiteral("4500"), QStringLiteral("--data"),
                   longData});
        QVERIFY2(c.exitCode == 0, qPrintable(c.err));
        QVERIFY2(!c.err.contains(QLatin1String("masks no key")), qPrintable(c.err));
        const NpyArray w = readNpzMember(longData.toStdString(), "weights");
        QCOMPARE(w.shape, (std::vector<std::int64_t> {1, 1000, 1000}));
        const NpyArray q = readNpzMember(longData.toStdString(), "query_index");
        QCOMPARE(q.values[1], 5.0);
        const NpyArray m = readNpzMember(longData.toStdString(), "mask_state");
        const std::size_t last = std::size_t(999) * 1000;
        QVERIFY(m.values[last + 0] != 0 && m.values[last + 98] != 0);
        QVERIFY(m.values[last + 99] == 0 && m.values[last + 999] == 0);
    }

    // --compute auto: the tile engine once the full matrices would exceed 256 MiB, and the
    // caption says which pooling the pixels show.
    void autoComputeSwitchesToTiles_data()
    {
        QTest::addColumn<int>("n");
        QTest::addColumn<QString>("pooling");
        QTest::addColumn<QString>("note");
        QTest::newRow("n 300: full") << 300 << QStringLiteral("max") << QString();
        QTest::newRow("n 1600: tiles, max")
            << 1600 << QStringLiteral("max")
            << QStringLiteral("tile engine: max of 2 \u00d7 2 cells per pixel");
        QTest::newRow("n 5000: tiles, mean")
            << 5000 << QStringLiteral("mean")
            << QStringLiteral("tile engine: mean of 5 \u00d7 5 cells per pixel");
    }
    void autoComputeSwitchesToTiles()
    {
        QFETCH(int, n);
        QFETCH(QString, pooling);
        QFETCH(QString, note);
        const QString svg = m_dir.filePath(QStringLiteral("auto-%1.svg").arg(n));
        const Run r = run({QStringLiteral("--n"), QString::number(n), QStringLiteral("--d-model"),
                           QStringLiteral("16"), QStringLiteral("--heads"), QStringLiteral("4"),
                           QStringLiteral("--pooling"), pooling, QStringLiteral("--out"), svg});
        QVERIFY2(r.exitCode == 0, qPrintable(r.err));
        QFile f(svg);
        QVERIFY(f.open(QIODevice::ReadOnly));
        const QString text = QString::fromUtf8(f.readAll());
        const QString &expected = note;
        if (note.isEmpty())
            QVERIFY(!text.contains(QLatin1String("tile engine")));
        else
            QVERIFY2(text.contains(expected), qPrintable(expected));
    }

    void generatorTorch()
    {
        // --generator torch (and a session saying "generator": "torch") gives the weights
        // torch.nn.MultiheadAttention returns (tests/reference/make_session_torch_fixtures.py).
        QFile fixture(QStringLiteral(ATTN_FIXTURE_DIR "/session/session_torch.json"));
        QVERIFY(fixture.open(QIODevice::ReadOnly));
        const QJsonArray cases
            = QJsonDocument::fromJson(fixture.readAll()).object().value("cases").toArray();
        QJsonObject c;
        for (const QJsonValue &v : cases)
            if (v.toObject().value("name").toString() == QLatin1String("decoder padding float64"))
                c = v.toObject();
        QVERIFY(!c.isEmpty());
        const QJsonObject p = c.value("params").toObject();
        const QString data = m_dir.filePath(QStringLiteral("torch.json"));
        const Run r = run({"--n", QString::number(p.value("n").toInt()), "--d-model",
                           QString::number(p.value("d_model").toInt()), "--heads",
                           QString::number(p.value("heads").toInt()), "--seed",
                           p.value("seed").toString(), "--kind", "decoder", "--mask", "padding",
                           "--padding", "2", "--generator", "torch", "--data", data});
        QVERIFY2(r.exitCode == 0, qPrintable(r.err));
        QFile out(data);
        QVERIFY(out.open(QIODevice::ReadOnly));
        const QJsonObject json = QJsonDocument::fromJson(out.readAll()).object();
        QCOMPARE(json.value("parameters").toObject().value("generator").toString(),
                 QStringLiteral("torch"));
        const QJsonArray heads = json.value("heads").toArray();
        const QJsonArray want = c.value("weights").toArray();
        QCOMPARE(heads.size(), want.size());
        double worst = 0;
        for (qsizetype h = 0; h < heads.size(); ++h) {
            const QJsonArray got = heads[h].toObject().value("weights").toArray();
            const QJsonArray rows = want[h].toArray();
            QCOMPARE(got.size(), rows.size());
            for (qsizetype i = 0; i < rows.size(); ++i)
                for (qsizetype j = 0; j < rows[i].toArray().size(); ++j)
                    worst = std::max(
                        worst,
                        std::abs(got[i].toArray()[j].toDouble() - rows[i].toArray()[j].toDouble()));
        }
        QVERIFY2(worst <= 1e-12, qPrintable(QString::number(worst)));

        // The same through a saved session: the generator is part of the parameters.
        const QString session = m_dir.filePath(QStringLiteral("torch.attnlab.json"));
        QFile s(session);
        QVERIFY(s.open(QIODevice::WriteOnly));
        QJsonObject params = p;
        params.insert("version", 1);
        s.write(
            QJsonDocument(
                QJsonObject {{"format", "attnlab-session"}, {"version", 1}, {"parameters", params}})
                .toJson());
        s.close();
        const QString data2 = m_dir.filePath(QStringLiteral("torch2.json"));
        const Run r2 = run({"--session", session, "--data", data2});
        QVERIFY2(r2.exitCode == 0, qPrintable(r2.err));
        QFile out2(data2);
        QVERIFY(out2.open(QIODevice::ReadOnly));
        QCOMPARE(QJsonDocument::fromJson(out2.readAll()).object().value("heads").toArray(), heads);
    }

    // A session saved on the Long tab: the command line draws the session's own n and says how
    // to draw the Long tab's map; with --n given it says nothing.
    void sessionOnTheLongTabSaysSo()
    {
        const QString session = m_dir.filePath(QStringLiteral("long.attnlab.json"));
        QFile s(session);
        QVERIFY(s.open(QIODevice::WriteOnly));
        const QJsonObject params {{"version", 1}, {"n", 6}, {"d_model", 8}, {"heads", 2}};
        const QJsonObject view {
            {"tabs", QJsonArray {"longMapView"}},
            {"long_map", QJsonObject {{"n", 5000}, {"head", -1}, {"pooling", "mean"}}}};
        s.write(QJsonDocument(QJsonObject {{"format", "attnlab-session"},
                                           {"version", 1},
                                           {"parameters", params},
                                           {"view", view}})
                    .toJson());
        s.close();
        const QString png = m_dir.filePath(QStringLiteral("long-session.png"));
        const Run a = run({"--session", session, "--out", png});
        QVERIFY2(a.exitCode == 0, qPrintable(a.err));
        QCOMPARE(a.err.section(QLatin1Char('\n'), 0, 0),
                 QStringLiteral("attnlab heatmap: note: the session shows the Long tab (n = 5000); "
                                "this draws the Heads view of its parameters: add --n 5000 --view "
                                "head --head mean --pooling mean for the Long tab's map"));
        const QString svg = m_dir.filePath(QStringLiteral("long-session.svg"));
        const Run b = run({"--session", session, "--n", "5000", "--view", "head", "--head", "mean",
                           "--pooling", "mean", "--out", svg});
        QVERIFY2(b.exitCode == 0, qPrintable(b.err));
        QVERIFY2(!b.err.contains(QLatin1String("Long tab")), qPrintable(b.err));
        QFile f(svg);
        QVERIFY(f.open(QIODevice::ReadOnly));
        QVERIFY(QString::fromUtf8(f.readAll())
                    .contains(QStringLiteral("tile engine: mean of 5 \u00d7 5 cells per pixel")));
    }

    void dataExportNamesWindowMaskedCells_data()
    {
        QTest::addColumn<int>("window");
        QTest::addColumn<int>("sinks");
        QTest::addColumn<int>("padding"); // last keys padding (0: no padding mask)
        QTest::newRow("w 3") << 3 << 0 << 0;
        QTest::newRow("w 2, 1 sink") << 2 << 1 << 0;
        QTest::newRow("w 3, padding 2") << 3 << 0 << 2;
    }

    // A cell outside the sliding window was exported "allowed" while the heatmap hatched it:
    // the CSV's mask column and the JSON's mask_state give every cell's state, by the window's
    // definition (query i sees the w keys i - w < j <= i, plus the sinks j < s; keys j > i are
    // causal-masked; the last m keys padding).
    void dataExportNamesWindowMaskedCells()
    {
        QFETCH(int, window);
        QFETCH(int, sinks);
        QFETCH(int, padding);
        const int n = 7;
        const QString stem
            = m_dir.filePath(QStringLiteral("window_%1_%2_%3").arg(window).arg(sinks).arg(padding));
        QStringList args {QStringLiteral("--n"),       QString::number(n),
                          QStringLiteral("--d-model"), QStringLiteral("8"),
                          QStringLiteral("--heads"),   QStringLiteral("1"),
                          QStringLiteral("--window"),  QString::number(window)};
        if (sinks > 0)
            args << QStringLiteral("--sinks") << QString::number(sinks);
        if (padding > 0)
            args << QStringLiteral("--mask") << QStringLiteral("padding")
                 << QStringLiteral("--padding") << QString::number(padding);
        for (const QString &suffix : {QStringLiteral(".csv"), QStringLiteral(".json")}) {
            const Run r = run(args + QStringList {QStringLiteral("--data"), stem + suffix});
            QVERIFY2(r.exitCode == 0, qPrintable(r.err));
        }
        auto expected = [&](int i, int j, QString *field) {
            int bits = 0;
            QStringList parts;
            if (j > i) {
                bits |= 1;
                parts << QStringLiteral("causal");
            }
            if (j >= n - padding) {
                bits |= 2;
                parts << QStringLiteral("padding");
            }
            if (j <= i - window && j >= sinks) {
                bits |= 8;
                parts << QStringLiteral("window");
            }
            *field = parts.isEmpty() ? QStringLiteral("allowed") : parts.join(QLatin1Char('+'));
            return bits;
        };
        QFile csv(stem + QStringLiteral(".csv"));
        QVERIFY(csv.open(QIODevice::ReadOnly | QIODevice::Text));
        const QStringList lines
            = QString::fromUtf8(csv.readAll()).split(QLatin1Char('\n'), Qt::SkipEmptyParts);
        QCOMPARE(lines.size(), 1 + n * n);
        QVERIFY(lines.front().endsWith(QLatin1String(",mask")));
        int windowCells = 0;
        for (int i = 0; i < n; ++i) {
            for (int j = 0; j < n; ++j) {
                const QStringList fields = lines[1 + i * n + j].split(QLatin1Char(','));
                QCOMPARE(fields[1].toInt(), i);
                QCOMPARE(fields[2].toInt(), j);
                QString field;
                windowCells += (expected(i, j, &field) & 8) ? 1 : 0;
                QCOMPARE(fields.back(), field);
            }
        }
        QVERIFY(windowCells > 0);
        QFile json(stem + QStringLiteral(".json"));
        QVERIFY(json.open(QIODevice::ReadOnly));
        const QJsonArray state = QJsonDocument::fromJson(json.readAll())
                                     .object()
                                     .value(QStringLiteral("mask_state"))
                                     .toArray();
        QCOMPARE(state.size(), n);
        for (int i = 0; i < n; ++i) {
            for (int j = 0; j < n; ++j) {
                QString field;
                QCOMPARE(state[i].toArray()[j].toInt(), expected(i, j, &field));
            }
        }
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

    void animateWritesFrames()
    {
        const QString dir = m_dir.filePath(QStringLiteral("frames-dk"));
        QProcess process;
        process.start(QStringLiteral(ATTNLAB_EXE),
                      {QStringLiteral("animate"), QStringLiteral("--param"), QStringLiteral("dk"),
                       QStringLiteral("--from"), QStringLiteral("2"), QStringLiteral("--to"),
                       QStringLiteral("5"), QStringLiteral("--frames"), QStringLiteral("3"),
                       QStringLiteral("--n"), QStringLiteral("6"), QStringLiteral("--heads"),
                       QStringLiteral("3"), QStringLiteral("--width"), QStringLiteral("320"),
                       QStringLiteral("--height"), QStringLiteral("200"),
                       QStringLiteral("--out-dir"), dir});
        QVERIFY(process.waitForFinished(60000));
        QVERIFY2(process.exitCode() == 0, process.readAllStandardError().constData());
        QVERIFY(process.readAllStandardOutput().contains("wrote 3 frames"));
        // d_k 2, 3.5 → 4, 5 with h = 3: d_model 6, 12, 15.
        QFile csv(dir + QStringLiteral("/frames.csv"));
        QVERIFY(csv.open(QIODevice::ReadOnly));
        const QStringList lines
            = QString::fromUtf8(csv.readAll()).trimmed().split(QLatin1Char('\n'));
        QCOMPARE(lines.size(), 4);
        QCOMPARE(lines[1], QStringLiteral("0,frame_000.png,dk,2,6,3,2,0.5,1"));
        QCOMPARE(lines[2], QStringLiteral("1,frame_001.png,dk,4,12,3,4,0.5,1"));
        QCOMPARE(lines[3], QStringLiteral("2,frame_002.png,dk,5,15,3,5,0.5,1"));
        for (int k = 0; k < 3; ++k)
            QCOMPARE(QImage(dir + QStringLiteral("/frame_00%1.png").arg(k)).size(),
                     QSize(320, 200));
        QVERIFY(!QFile::exists(dir + QStringLiteral("/frame_003.png")));

        // Again into the same folder with 2 frames: frame_002.png of the first run is left, and
        // the run says so.
        QProcess again;
        again.start(QStringLiteral(ATTNLAB_EXE),
                    {QStringLiteral("animate"), QStringLiteral("--param"), QStringLiteral("alpha"),
                     QStringLiteral("--from"), QStringLiteral("0"), QStringLiteral("--to"),
                     QStringLiteral("1"), QStringLiteral("--frames"), QStringLiteral("2"),
                     QStringLiteral("--n"), QStringLiteral("4"), QStringLiteral("--width"),
                     QStringLiteral("320"), QStringLiteral("--height"), QStringLiteral("200"),
                     QStringLiteral("--out-dir"), dir});
        QVERIFY(again.waitForFinished(60000));
        QCOMPARE(again.exitCode(), 0);
        const QString note = QString::fromUtf8(again.readAllStandardError());
        QVERIFY2(note.contains(QStringLiteral("1 older frame file(s) in the folder are not of this "
                                              "run (frame_002.png)")),
                 qPrintable(note));
    }

    void animateBadArguments_data()
    {
        QTest::addColumn<QStringList>("args");
        QTest::addColumn<QString>("named");
        const QString dir = QStringLiteral("/tmp/never-written-frames");
        const auto base = [&](QStringList extra) {
            return QStringList {QStringLiteral("--out-dir"), dir} + extra;
        };
        QTest::newRow("no --param") << base({QStringLiteral("--from"), QStringLiteral("0"),
                                             QStringLiteral("--to"), QStringLiteral("1")})
                                    << QStringLiteral("--param is required");
        QTest::newRow("unknown --param")
            << base({QStringLiteral("--param"), QStringLiteral("beta"), QStringLiteral("--from"),
                     QStringLiteral("0"), QStringLiteral("--to"), QStringLiteral("1")})
            << QStringLiteral("--param must be one of dk, alpha, tau");
        QTest::newRow("alpha out of range")
            << base({QStringLiteral("--param"), QStringLiteral("alpha"), QStringLiteral("--from"),
                     QStringLiteral("0"), QStringLiteral("--to"), QStringLiteral("2")})
            << QStringLiteral("to = 2 is outside alpha's range [0, 1]");
        QTest::newRow("tau 0") << base({QStringLiteral("--param"), QStringLiteral("tau"),
                                        QStringLiteral("--from"), QStringLiteral("0"),
                                        QStringLiteral("--to"), QStringLiteral("1")})
                               << QStringLiteral("outside tau's range");
        QTest::newRow("dk beyond d_model 4096")
            << base({QStringLiteral("--param"), QStringLiteral("dk"), QStringLiteral("--from"),
                     QStringLiteral("1"), QStringLiteral("--to"), QStringLiteral("2048"),
                     QStringLiteral("--heads"), QStringLiteral("4")})
            << QStringLiteral("outside d_k's range [1, 1024]");
        QTest::newRow("frames 0") << base({QStringLiteral("--param"), QStringLiteral("alpha"),
                                           QStringLiteral("--from"), QStringLiteral("0"),
                                           QStringLiteral("--to"), QStringLiteral("1"),
                                           QStringLiteral("--frames"), QStringLiteral("0")})
                                  << QStringLiteral("--frames");
        QTest::newRow("from not a number")
            << base({QStringLiteral("--param"), QStringLiteral("alpha"), QStringLiteral("--from"),
                     QStringLiteral("x"), QStringLiteral("--to"), QStringLiteral("1")})
            << QStringLiteral("--from must be a number");
        QTest::newRow("--alpha with --param alpha")
            << base({QStringLiteral("--param"), QStringLiteral("alpha"), QStringLiteral("--from"),
                     QStringLiteral("0"), QStringLiteral("--to"), QStringLiteral("1"),
                     QStringLiteral("--alpha"), QStringLiteral("0.5")})
            << QStringLiteral("--alpha is set by every frame");
        QTest::newRow("--d-model with --param dk")
            << base({QStringLiteral("--param"), QStringLiteral("dk"), QStringLiteral("--from"),
                     QStringLiteral("2"), QStringLiteral("--to"), QStringLiteral("8"),
                     QStringLiteral("--d-model"), QStringLiteral("32")})
            << QStringLiteral("--d-model is set by every frame");
        QTest::newRow("--out") << base(
            {QStringLiteral("--param"), QStringLiteral("alpha"), QStringLiteral("--from"),
             QStringLiteral("0"), QStringLiteral("--to"), QStringLiteral("1"),
             QStringLiteral("--out"), QStringLiteral("/tmp/never-written.png")})
                               << QStringLiteral("--out does not go with animate");
        QTest::newRow("--out-dir not creatable")
            << QStringList {QStringLiteral("--param"),   QStringLiteral("alpha"),
                            QStringLiteral("--from"),    QStringLiteral("0"),
                            QStringLiteral("--to"),      QStringLiteral("1"),
                            QStringLiteral("--out-dir"), QStringLiteral("/proc/attnlab-frames")}
            << QStringLiteral("--out-dir '/proc/attnlab-frames' cannot be created");
        QTest::newRow("--in") << base(
            {QStringLiteral("--param"), QStringLiteral("alpha"), QStringLiteral("--from"),
             QStringLiteral("0"), QStringLiteral("--to"), QStringLiteral("1"),
             QStringLiteral("--in"), QStringLiteral("/tmp/never-read.npz")})
                              << QStringLiteral("--in does not go with animate");
        QTest::newRow("--view steps")
            << base({QStringLiteral("--param"), QStringLiteral("alpha"), QStringLiteral("--from"),
                     QStringLiteral("0"), QStringLiteral("--to"), QStringLiteral("1"),
                     QStringLiteral("--view"), QStringLiteral("steps")})
            << QStringLiteral("--view must be grid or head");
        QTest::newRow("no --out-dir")
            << QStringList {QStringLiteral("--param"), QStringLiteral("alpha"),
                            QStringLiteral("--from"),  QStringLiteral("0"),
                            QStringLiteral("--to"),    QStringLiteral("1")}
            << QStringLiteral("--out-dir is required");
    }
    void animateBadArguments()
    {
        QFETCH(QStringList, args);
        QFETCH(QString, named);
        QProcess process;
        process.start(QStringLiteral(ATTNLAB_EXE), QStringList {QStringLiteral("animate")} + args);
        QVERIFY(process.waitForFinished(60000));
        const QString err = QString::fromUtf8(process.readAllStandardError());
        QCOMPARE(process.exitCode(), 2);
        QVERIFY2(err.contains(named), qPrintable(err));
        QVERIFY(!QFile::exists(QStringLiteral("/tmp/never-written-frames")));
    }
};

QTEST_GUILESS_MAIN(TestCliHeatmap)
#include "tst_cli_heatmap.moc"
