// The Play dock (ui/panels/playpanel.h): the schedule of values for from/to/frames (d_k
// rounded) and the frame a clock has reached (loop or not) against hand values; the settings'
// session JSON; the dock driving the parameters through its driver, skipping frames (never queueing
// them) while the session is busy and stopping on Pause; the frame export writing one file per
// frame of the schedule, with the parameters and caption of each (read back from the frames and
// frames.csv). Its From, To, Frames and Speed fields keep what is typed and refuse out-of-range
// numbers.

#include "testutil.h"
#include "ui/panels/playpanel.h"
#include "ui/render/heatmaprenderer.h"
#include "ui/render/playframes.h"
#include "ui/views/numberspinbox.h"

#include "core/io/npy.h"

#include <QCheckBox>
#include <QComboBox>
#include <QDoubleSpinBox>
#include <QElapsedTimer>
#include <QFile>
#include <QImage>
#include <QJsonObject>
#include <QLabel>
#include <QLineEdit>
#include <QLocale>
#include <QPushButton>
#include <QScrollArea>
#include <QScrollBar>
#include <QSignalSpy>
#include <QSlider>
#include <QSpinBox>
#include <QSpontaneKeyEvent>
#include <QTemporaryDir>
#include <QTest>

#include <cmath>
#include <optional>
#include <vector>

using namespace attn;

class TestPlayPanel : public QObject
{
    Q_OBJECT

private slots:
    void initTestCase() { qRegisterMetaType<SessionParameters>(); }

    void playScheduleHandValues()
    {
        using V = std::vector<double>;
        // α from 0 to 1 in 5 frames: steps of 1/4.
        QCOMPARE(playSchedule(PlayParameter::ScaleExponent, 0, 1, 5), (V {0, 0.25, 0.5, 0.75, 1}));
        // τ backwards, 2 → 0.5 in 3 frames: ratios of 1/2 (τ's axis is logarithmic).
        QCOMPARE(playSchedule(PlayParameter::Temperature, 2, 0.5, 3), (V {2, 1, 0.5}));
        // d_k in equal ratios: 4 → 4096 in 11 frames doubles; 1 → 4 in 3: 1, 2, 4;
        // 3 → 4 in 5: 3·(4/3)^(k/4) = 3, 3.22, 3.46, 3.72, 4 → 3, 3, 3, 4, 4 (a width may repeat).
        QCOMPARE(playSchedule(PlayParameter::HeadWidth, 4, 4096, 11),
                 (V {4, 8, 16, 32, 64, 128, 256, 512, 1024, 2048, 4096}));
        QCOMPARE(playSchedule(PlayParameter::HeadWidth, 1, 4, 3), (V {1, 2, 4}));
        QCOMPARE(playSchedule(PlayParameter::HeadWidth, 3, 4, 5), (V {3, 3, 3, 4, 4}));
        // One frame: the first value.
        QCOMPARE(playSchedule(PlayParameter::ScaleExponent, 0.3, 0.9, 1), (V {0.3}));
        // Refused, naming the problem.
        QVERIFY_THROWS_EXCEPTION(InvalidArgument,
                                 playSchedule(PlayParameter::ScaleExponent, 0, 1, 0));
        QVERIFY_THROWS_EXCEPTION(InvalidArgument,
                                 playSchedule(PlayParameter::ScaleExponent, 0, 1, 1001));
        QVERIFY_THROWS_EXCEPTION(InvalidArgument,
                                 playSchedule(PlayParameter::ScaleExponent, 0, 1.5, 3));
        QVERIFY_THROWS_EXCEPTION(InvalidArgument,
                                 playSchedule(PlayParameter::Temperature, 0, 1, 3));
        QVERIFY_THROWS_EXCEPTION(InvalidArgument,
                                 playSchedule(PlayParameter::HeadWidth, 0.4, 8, 3));
        QVERIFY_THROWS_EXCEPTION(InvalidArgument,
                                 playSchedule(PlayParameter::HeadWidth, 1, 1025, 3, 1024));
        QVERIFY_THROWS_EXCEPTION(InvalidArgument,
                                 playSchedule(PlayParameter::ScaleExponent, std::nan(""), 1, 3));
        try {
            playSchedule(PlayParameter::ScaleExponent, 0, 2, 3);
            QFAIL("no exception");
        } catch (const InvalidArgument &e) {
            QCOMPARE(QString::fromStdString(e.what()),
                     QStringLiteral("to = 2 is outside alpha's range [0, 1]"));
        }
        QCOMPARE(parsePlayParameter("tau"), PlayParameter::Temperature);
        QVERIFY_THROWS_EXCEPTION(InvalidArgument, parsePlayParameter("beta"));
    }

    void playFrameAtHandValues()
    {
        // 4 frames/s, 5 frames: frame k from k/4 s to (k+1)/4 s.
        QCOMPARE(playFrameAt(0.0, 4, 5, false), std::optional<Index>(0));
        QCOMPARE(playFrameAt(0.249, 4, 5, false), std::optional<Index>(0));
        QCOMPARE(playFrameAt(0.25, 4, 5, false), std::optional<Index>(1));
        QCOMPARE(playFrameAt(1.2, 4, 5, false), std::optional<Index>(4));
        QCOMPARE(playFrameAt(1.25, 4, 5, false), std::nullopt); // over: the Play ends
        // Looping: ⌊t·4⌋ mod 5.
        QCOMPARE(playFrameAt(1.25, 4, 5, true), std::optional<Index>(0));
        QCOMPARE(playFrameAt(2.9, 4, 5, true), std::optional<Index>(1)); // ⌊11.6⌋ = 11
        QCOMPARE(playFrameAt(-0.1, 4, 5, true), std::nullopt);
        QCOMPARE(playFrameAt(1.0, 0, 5, true), std::nullopt);
        QCOMPARE(playFrameAt(1.0, 4, 0, true), std::nullopt);
    }

    void playSettingsJsonAndValues()
    {
        PlaySettings s;
        s.parameter = PlayParameter::Temperature;
        s.from = 0.5;
        s.to = 4;
        s.frames = 9;
        s.framesPerSecond = 12;
        s.loop = true;
        QCOMPARE(PlaySettings::fromJson(s.toJson(), PlaySettings()), s);
        QCOMPARE(s.toJson().value(QLatin1String("parameter")).toString(), QStringLiteral("tau"));
        // A bad value keeps the base entirely and names the key.
        QJsonObject bad = s.toJson();
        bad.insert(QStringLiteral("frames"), 0);
        QString error;
        QCOMPARE(PlaySettings::fromJson(bad, PlaySettings(), &error), PlaySettings());
        QVERIFY2(error.contains(QStringLiteral("'frames'")), qPrintable(error));
        bad = s.toJson();
        bad.insert(QStringLiteral("to"), 1000); // outside τ's range
        error.clear();
        QCOMPARE(PlaySettings::fromJson(bad, PlaySettings(), &error), PlaySettings());
        QVERIFY2(error.contains(QStringLiteral("tau's range")), qPrintable(error));

        // d_k keeps h: d_model = d_k · h; α and τ are set as given.
        SessionParameters p;
        p.heads = 4;
        p.dModel = 64;
        QCOMPARE(applyPlayValue(p, PlayParameter::HeadWidth, 12).dModel, 48);
        QCOMPARE(applyPlayValue(p, PlayParameter::HeadWidth, 12).heads, 4);
        QCOMPARE(applyPlayValue(p, PlayParameter::ScaleExponent, 0.25).scaleExponent, 0.25);
        QCOMPARE(applyPlayValue(p, PlayParameter::Temperature, 3).temperature, 3.0);
        QCOMPARE(playValueText(PlayParameter::ScaleExponent, 0.25), QStringLiteral("α = 0.25"));
        QCOMPARE(playValueText(PlayParameter::HeadWidth, 16), QStringLiteral("d_k = 16"));
    }

    // The dock drives the parameters through its driver: every frame of the schedule when the
    // session keeps up, in order; while it is busy the frames due are skipped (never queued) and
    // the last frame still comes; Pause stops it.
    void playDrivesParameters()
    {
        SessionParameters session;
        session.heads = 2;
        session.dModel = 32;
        std::vector<SessionParameters> applied;
        bool busy = false;
        PlayPanel panel;
        panel.setDriver({[&] { return session; },
                         [&](const SessionParameters &p) {
                             session = p;
                             applied.push_back(p);
                         },
                         [&] { return busy; }});
        PlaySettings s;
        s.parameter = PlayParameter::HeadWidth;
        s.from = 2;
        s.to = 8;
        s.frames = 4; // d_k 2, 4, 6, 8
        s.framesPerSecond = 20;
        panel.setSettings(s);
        QSignalSpy playing(&panel, &PlayPanel::playingChanged);
        panel.play();
        QVERIFY(panel.isPlaying());
        QTRY_VERIFY_WITH_TIMEOUT(!panel.isPlaying(), 5000);
        QCOMPARE(playing.count(), 2);
        // Each value shown was applied once, in schedule order, and ends at the last.
        QList<int> widths;
        for (const SessionParameters &p : applied) {
            QCOMPARE(p.heads, 2);
            widths << p.dK();
        }
        QCOMPARE(widths.constLast(), 8);
        QCOMPARE(session.dModel, 16);
        QCOMPARE(int(widths.size()) + panel.skippedFrames(), 4);
        for (int i = 1; i < widths.size(); ++i)
            QVERIFY(widths[i] > widths[i - 1]);

        // Busy for the first 300 ms of a 1-second Play at 10 frames/s: the frames due meanwhile
        // are skipped, not queued: fewer applied than frames, none repeated, the last one there.
        applied.clear();
        s.parameter = PlayParameter::ScaleExponent;
        s.from = 0;
        s.to = 0.9;
        s.frames = 10;
        s.framesPerSecond = 10;
        panel.setSettings(s);
        busy = true;
        QElapsedTimer clock;
        clock.start();
        panel.play();
        QTest::qWait(300);
        QVERIFY(applied.empty());
        busy = false;
        QTRY_VERIFY_WITH_TIMEOUT(!panel.isPlaying(), 5000);
        QVERIFY(panel.skippedFrames() >= 2);
        QCOMPARE(int(applied.size()) + panel.skippedFrames(), 10);
        QCOMPARE(applied.back().scaleExponent, 0.9);
        for (std::size_t i = 1; i < applied.size(); ++i)
            QVERIFY(applied[i].scaleExponent > applied[i - 1].scaleExponent);

        // Pause returns control: nothing is applied afterwards.
        applied.clear();
        s.framesPerSecond = 2;
        panel.setSettings(s);
        panel.play();
        QCOMPARE(applied.size(), std::size_t(1)); // the first frame at once
        panel.pause();
        QTest::qWait(700);
        QCOMPARE(applied.size(), std::size_t(1));
        QVERIFY(!panel.isPlaying());
        QCOMPARE(panel.playButton()->text(), QStringLiteral("&Play"));
    }

    // writePlayFrames: one PNG per value of the schedule, named frame_000.png …, of the size
    // asked, each computed with that value's parameters (read back per frame and from
    // frames.csv) and captioned with it; the dock's export runs the same on a worker.
    void frameExportFollowsSchedule()
    {
        QTemporaryDir dir;
        QVERIFY(dir.isValid());
        SessionParameters base;
        base.n = 5;
        base.heads = 2;
        base.dModel = 8;
        PlaySettings s;
        s.parameter = PlayParameter::HeadWidth;
        s.from = 2;
        s.to = 8;
        s.frames = 4;
        std::vector<PlayFrame> frames;
        QString error;
        QVERIFY2(writePlayFrames(base, HeatmapOptions(), s, dir.filePath(QStringLiteral("dk")),
                                 QSize(320, 240), 1.0, &error, &frames),
                 qPrintable(error));
        QCOMPARE(int(frames.size()), 4);
        const int widths[] = {2, 3, 5, 8}; // 2·4^(k/3) = 2, 3.17, 5.04, 8
        for (int k = 0; k < 4; ++k) {
            const PlayFrame &f = frames[std::size_t(k)];
            QCOMPARE(f.file, QStringLiteral("frame_%1.png").arg(k, 3, 10, QLatin1Char('0')));
            QCOMPARE(f.parameters.dK(), widths[k]);
            QCOMPARE(f.parameters.dModel, 2 * widths[k]);
            QCOMPARE(f.parameters.n, 5);
            QCOMPARE(f.caption, QStringLiteral("frame %1/4: d_k = %2").arg(k + 1).arg(widths[k]));
            const QImage image(dir.filePath(QStringLiteral("dk/") + f.file));
            QCOMPARE(image.size(), QSize(320, 240));
        }
        QVERIFY(!QFile::exists(dir.filePath(QStringLiteral("dk/frame_004.png"))));
        QFile csv(dir.filePath(QStringLiteral("dk/frames.csv")));
        QVERIFY(csv.open(QIODevice::ReadOnly));
        const QStringList lines
            = QString::fromUtf8(csv.readAll()).trimmed().split(QLatin1Char('\n'));
        QCOMPARE(lines.size(), 5);
        QCOMPARE(lines[0],
                 QStringLiteral("frame,file,parameter,value,d_model,heads,d_k,alpha,tau"));
        QCOMPARE(lines[3], QStringLiteral("2,frame_002.png,dk,5,10,2,5,0.5,1"));

        // The dock: α over the session's parameters, on its worker.
        SessionParameters session = base;
        PlayPanel panel;
        panel.setDriver(
            {[&] { return session; }, [&](const SessionParameters &) {}, [] { return false; }});
        s.parameter = PlayParameter::ScaleExponent;
        s.from = 0;
        s.to = 1;
        s.frames = 3;
        panel.setSettings(s);
        panel.setFrameSize(QSize(200, 150));
        bool finished = false, ok = false;
        QVERIFY(panel.exportFrames(dir.filePath(QStringLiteral("alpha")),
                                   [&](bool success, const QString &) {
                                       finished = true;
                                       ok = success;
                                   }));
        QTRY_VERIFY_WITH_TIMEOUT(finished, attn::test::kWorkTimeoutMs);
        QVERIFY(ok);
        QFile alphaCsv(dir.filePath(QStringLiteral("alpha/frames.csv")));
        QVERIFY(alphaCsv.open(QIODevice::ReadOnly));
        const QStringList rows
            = QString::fromUtf8(alphaCsv.readAll()).trimmed().split(QLatin1Char('\n'));
        QCOMPARE(rows.size(), 4);
        QCOMPARE(rows[1], QStringLiteral("0,frame_000.png,alpha,0,8,2,4,0,1"));
        QCOMPARE(rows[2], QStringLiteral("1,frame_001.png,alpha,0.5,8,2,4,0.5,1"));
        QCOMPARE(rows[3], QStringLiteral("2,frame_002.png,alpha,1,8,2,4,1,1"));
        QCOMPARE(QImage(dir.filePath(QStringLiteral("alpha/frame_002.png"))).size(),
                 QSize(200, 150));
    }

    // d_k's From and To take 1 … 4096 / h: the fields' limits, the refusal of a typed value and
    // the tooltip name the range h allows, and a value above it when h grows is lowered to it
    // with a note; the summary then plays the schedule instead of refusing it.
    void dkRangeFollowsHeads()
    {
        SessionParameters session;
        session.heads = 8;
        session.dModel = 64;
        PlayPanel panel;
        panel.setDriver(
            {[&] { return session; }, [&](const SessionParameters &) {}, [] { return false; }});
        QCOMPARE(panel.heads(), 8);
        PlaySettings s;
        s.parameter = PlayParameter::HeadWidth;
        s.from = 4;
        s.to = 256;
        s.frames = 7;
        panel.setSettings(s);
        panel.show();
        QVERIFY(QTest::qWaitForWindowExposed(&panel));
        auto *from = panel.findChild<QDoubleSpinBox *>(QStringLiteral("playFromSpin"));
        auto *to = panel.findChild<QDoubleSpinBox *>(QStringLiteral("playToSpin"));
        auto *note = panel.findChild<QLabel *>(QStringLiteral("playRangeNote"));
        auto *status = panel.findChild<QLabel *>(QStringLiteral("playStatus"));
        QVERIFY(from && to && note && status);
        QCOMPARE(from->maximum(), 512.0);
        QCOMPARE(to->maximum(), 512.0);
        QVERIFY2(
            from->toolTip().contains(QStringLiteral("d_k: 1 … 512, that is 4096 / h with h = 8")),
            qPrintable(from->toolTip()));
        to->setFocus();
        to->selectAll();
        QTest::keyClicks(to, QStringLiteral("1024"));
        QTest::keyClick(to, Qt::Key_Return);
        QCOMPARE(panel.settings().to, 256.0);
        QVERIFY2(
            note->text().contains(QStringLiteral("d_k (to) with h = 8 must be between 1 and 512")),
            qPrintable(note->text()));
        QVERIFY2(status->text().startsWith(QStringLiteral("7 frames, d_k = 4 → d_k = 256")),
                 qPrintable(status->text()));

        // h = 32 allows d_k up to 128: To is lowered to it, and the note says so.
        session.heads = 32;
        session.dModel = 128;
        panel.setHeads(32);
        QCOMPARE(to->maximum(), 128.0);
        QCOMPARE(panel.settings().to, 128.0);
        QCOMPARE(panel.settings().from, 4.0);
        QVERIFY(!note->isHidden());
        QVERIFY2(note->text().contains(
                     QStringLiteral("d_k (to) 256 is above the range 1 … 128 that h = 32 allows")),
                 qPrintable(note->text()));
        QVERIFY2(status->text().startsWith(QStringLiteral("7 frames, d_k = 4 → d_k = 128")),
                 qPrintable(status->text()));
        // Fewer heads widen it again.
        panel.setHeads(1);
        QCOMPARE(to->maximum(), 4096.0);
        QCOMPARE(panel.settings().to, 128.0);
    }

    // Each parameter keeps its own From and To: Animate switched away and back shows them again
    // (it showed the parameter's usual range).
    void animateKeepsEachParametersRange()
    {
        PlayPanel panel;
        PlaySettings s;
        s.parameter = PlayParameter::ScaleExponent;
        s.from = 0.2;
        s.to = 0.7;
        panel.setSettings(s);
        QComboBox *combo = panel.parameterCombo();
        const auto choose = [&](PlayParameter p) {
            combo->setCurrentIndex(combo->findData(int(p)));
            QCOMPARE(panel.settings().parameter, p);
        };
        auto *from = panel.findChild<QDoubleSpinBox *>(QStringLiteral("playFromSpin"));
        auto *to = panel.findChild<QDoubleSpinBox *>(QStringLiteral("playToSpin"));
        QVERIFY(from && to);
        choose(PlayParameter::Temperature);
        // The first time: τ's usual range.
        QCOMPARE(panel.settings().from, 0.25);
        QCOMPARE(panel.settings().to, 4.0);
        from->setValue(0.5);
        to->setValue(8);
        choose(PlayParameter::HeadWidth);
        QCOMPARE(panel.settings().from, 4.0);
        QCOMPARE(panel.settings().to, 256.0);
        to->setValue(64);
        choose(PlayParameter::ScaleExponent);
        QCOMPARE(panel.settings().from, 0.2);
        QCOMPARE(panel.settings().to, 0.7);
        choose(PlayParameter::Temperature);
        QCOMPARE(panel.settings().from, 0.5);
        QCOMPARE(panel.settings().to, 8.0);
        choose(PlayParameter::HeadWidth);
        QCOMPARE(panel.settings().from, 4.0);
        QCOMPARE(panel.settings().to, 64.0);
    }

    // The Play dock's From, To, Frames and Speed keep every keystroke and the number as typed
    // (QDoubleSpinBox dropped the "e" and "-" of 1e-9, leaving 19, and rounded 0.333 to 0.33);
    // a number outside the parameter's range is refused under the fields, naming it.
    void playFieldsKeepTypedNumbers()
    {
        PlayPanel panel;
        PlaySettings s;
        s.parameter = PlayParameter::Temperature;
        s.from = 0.5;
        s.to = 2;
        panel.setSettings(s);
        panel.show();
        QVERIFY(QTest::qWaitForWindowExposed(&panel));
        auto *from = panel.findChild<QDoubleSpinBox *>(QStringLiteral("playFromSpin"));
        auto *to = panel.findChild<QDoubleSpinBox *>(QStringLiteral("playToSpin"));
        auto *frames = panel.findChild<QSpinBox *>(QStringLiteral("playFramesSpin"));
        auto *note = panel.findChild<QLabel *>(QStringLiteral("playRangeNote"));
        QVERIFY(from && to && frames && note);
        const auto type = [](QAbstractSpinBox *spin, const QString &text) {
            spin->setFocus();
            spin->selectAll();
            QTest::keyClicks(spin, text);
            QTest::keyClick(spin, Qt::Key_Return);
        };
        type(from, QStringLiteral("0.333"));
        QCOMPARE(panel.settings().from, 0.333);
        type(to, QStringLiteral("2.5e1"));
        QCOMPARE(panel.settings().to, 25.0);
        QVERIFY(note->isHidden());

        type(to, QStringLiteral("1e-9"));
        QCOMPARE(panel.settings().to, 25.0);
        QVERIFY(!note->isHidden());
        QVERIFY2(note->text().contains(QStringLiteral("τ (to) must be between 0.01 and 100"))
                     && note->text().contains(QStringLiteral("1e-9 refused")),
                 qPrintable(note->text()));
        // Below the smallest double: a number out of range, not "not a number".
        type(from, QStringLiteral("1e-400"));
        QCOMPARE(panel.settings().from, 0.333);
        QVERIFY2(note->text().contains(QStringLiteral("τ (from)"))
                     && note->text().contains(QStringLiteral("1e-400 refused")),
                 qPrintable(note->text()));
        type(frames, QStringLiteral("99999"));
        QCOMPARE(panel.settings().frames, s.frames);
        QVERIFY2(note->text().contains(QStringLiteral("Frames must be between 1 and"))
                     && note->text().contains(QStringLiteral("99999 refused")),
                 qPrintable(note->text()));
        type(frames, QStringLiteral("7"));
        QCOMPARE(panel.settings().frames, 7);
        QVERIFY(note->isHidden());

        // Frames in scientific notation: its value when whole (its "." and "e" were dropped:
        // 2.5e1 became 251), refused when not.
        type(frames, QStringLiteral("2.5e1"));
        QCOMPARE(panel.settings().frames, 25);
        QVERIFY(note->isHidden());
        type(frames, QStringLiteral("2.5"));
        QCOMPARE(panel.settings().frames, 25);
        QVERIFY2(note->text().contains(QStringLiteral("2.5 refused")), qPrintable(note->text()));
        // Speed takes what is typed (every number was refused as "not a number" when the field
        // carried its unit).
        auto *speed = panel.findChild<QDoubleSpinBox *>(QStringLiteral("playFpsSpin"));
        QVERIFY(speed);
        type(speed, QStringLiteral("10"));
        QCOMPARE(panel.settings().framesPerSecond, 10.0);
        QVERIFY(note->isHidden());
        type(speed, QStringLiteral("1e-2"));
        QCOMPARE(panel.settings().framesPerSecond, 10.0);
        QVERIFY2(note->text().contains(QStringLiteral("The speed must be between 0.25 and 60"))
                     && note->text().contains(QStringLiteral("1e-2 refused")),
                 qPrintable(note->text()));
        // The refusal shows below the Play button: the button does not move.
        auto *play = panel.findChild<QPushButton *>(QStringLiteral("playButton"));
        QVERIFY(play);
        QVERIFY(note->geometry().top() > play->geometry().bottom()
                || note->parentWidget() != play->parentWidget());
        QVERIFY(play->mapTo(&panel, QPoint(0, 0)).y() < note->mapTo(&panel, QPoint(0, 0)).y());

        // α's fields take their own range and name.
        s.parameter = PlayParameter::ScaleExponent;
        s.from = 0;
        s.to = 1;
        panel.setSettings(s);
        type(to, QStringLiteral("1.5"));
        QCOMPARE(panel.settings().to, 1.0);
        QVERIFY2(note->text().contains(QStringLiteral("α (to) must be between 0 and 1")),
                 qPrintable(note->text()));
    }
};

QTEST_MAIN(TestPlayPanel)
#include "tst_playpanel.moc"
