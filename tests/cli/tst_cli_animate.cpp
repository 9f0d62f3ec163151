// `attnlab animate` through QProcess: one PNG per frame of the Play schedule, frames.csv naming
// each frame's parameters; bad ranges and clashing options exit 2.

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

#include <algorithm>
#include <cmath>
#include <tuple>
#include <utility>
#include <vector>

class TestCliAnimate : public attn::test::HeatmapCliTest
{
    Q_OBJECT

private slots:
    void initTestCase() { QVERIFY(m_dir.isValid()); }

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
        // d_k 2, 2·2.5^(1/2) = 3.16 → 3, 5 (equal ratios) with h = 3: d_model 6, 9, 15.
        QFile csv(dir + QStringLiteral("/frames.csv"));
        QVERIFY(csv.open(QIODevice::ReadOnly));
        const QStringList lines
            = QString::fromUtf8(csv.readAll()).trimmed().split(QLatin1Char('\n'));
        QCOMPARE(lines.size(), 4);
        QCOMPARE(lines[1], QStringLiteral("0,frame_000.png,dk,2,6,3,2,0.5,1"));
        QCOMPARE(lines[2], QStringLiteral("1,frame_001.png,dk,3,9,3,3,0.5,1"));
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

    // Differential attention's frames draw signed weights on RdBu_r centred on 0: another
    // --colormap is named as not applied, --scale log (a symmetric log) is not.
    void animateSignedWeightsNoteScale()
    {
        const QString dir = m_dir.filePath(QStringLiteral("frames-signed"));
        QProcess process;
        process.start(QStringLiteral(ATTNLAB_EXE),
                      {QStringLiteral("animate"),
                       QStringLiteral("--param"),
                       QStringLiteral("alpha"),
                       QStringLiteral("--from"),
                       QStringLiteral("0"),
                       QStringLiteral("--to"),
                       QStringLiteral("1"),
                       QStringLiteral("--frames"),
                       QStringLiteral("2"),
                       QStringLiteral("--n"),
                       QStringLiteral("4"),
                       QStringLiteral("--differential-lambda"),
                       QStringLiteral("0.5"),
                       QStringLiteral("--scale"),
                       QStringLiteral("log"),
                       QStringLiteral("--colormap"),
                       QStringLiteral("magma"),
                       QStringLiteral("--width"),
                       QStringLiteral("320"),
                       QStringLiteral("--height"),
                       QStringLiteral("200"),
                       QStringLiteral("--out-dir"),
                       dir});
        QVERIFY(process.waitForFinished(60000));
        const QString err = QString::fromUtf8(process.readAllStandardError());
        QVERIFY2(process.exitCode() == 0, qPrintable(err));
        QVERIFY2(err.contains(QStringLiteral("attnlab animate: note: --colormap magma does not "
                                             "apply to signed weights (A1 - lambda A2)")),
                 qPrintable(err));
        QVERIFY2(!err.contains(QLatin1String("--scale log does not apply")), qPrintable(err));
        QVERIFY(QFile::exists(dir + QStringLiteral("/frame_001.png")));
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

QTEST_GUILESS_MAIN(TestCliAnimate)
#include "tst_cli_animate.moc"
