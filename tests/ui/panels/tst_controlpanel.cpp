// ControlPanel: regressions of the new-user trial. Typing a number into a spin box recomputes
// once, for the finished number (keyboard tracking off), not for every prefix; the key-padding
// count the user chose survives n shrinking below it (the parameters carry it clamped, with a
// visible note) and comes back when n grows; the tokens field is disabled, with a tooltip
// saying why, while tensors are loaded; the mouse wheel over an unfocused control scrolls the
// dock instead of changing the control, and the wheel notches that scroll the dock past a
// focused control (a slider after a drag) leave it unchanged too.

#include "testutil.h"
#include "ui/panels/controlpanel.h"
#include "ui/panels/playpanel.h"
#include "ui/render/heatmaprenderer.h"
#include "ui/render/playframes.h"
#include "ui/session/tensorsource.h"
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

namespace {

QList<int> editedN(const QSignalSpy &spy)
{
    QList<int> ns;
    for (const QList<QVariant> &args : spy)
        ns << args.at(0).value<SessionParameters>().n;
    return ns;
}

// The note under the mask (the only word-wrapped label of the mask group that can show text).
// What a combo box, spin box or slider shows, as text.
QString shownValue(const QWidget *w)
{
    if (auto *combo = qobject_cast<const QComboBox *>(w))
        return combo->currentText();
    if (auto *spin = qobject_cast<const QAbstractSpinBox *>(w))
        return spin->text();
    if (auto *slider = qobject_cast<const QAbstractSlider *>(w))
        return QString::number(slider->value());
    return {};
}

// One notch of the mouse wheel, scrolling down, over the middle of `w`.
void wheelDown(QWidget *w)
{
    const QPointF pos = QRectF(w->rect()).center();
    QWheelEvent event(pos, w->mapToGlobal(pos), QPoint(), QPoint(0, -120), Qt::NoButton,
                      Qt::NoModifier, Qt::NoScrollPhase, false);
    QApplication::sendEvent(w, &event);
}

QString maskNote(const ControlPanel &panel)
{
    for (QLabel *label : panel.findChildren<QLabel *>())
        if (label->wordWrap() && label->text().contains(QStringLiteral("Padding")))
            return label->text();
    return {};
}

} // namespace

class TestControlPanel : public QObject
{
    Q_OBJECT

private slots:
    void initTestCase() { qRegisterMetaType<SessionParameters>(); }

    void spinBoxesWaitForTheFinishedNumber_data()
    {
        QTest::addColumn<QString>("name");
        for (const char *name : {"nSpin", "nKSpin", "seedSpin", "dModelSpin", "temperatureSpin",
                                 "paddingSpin", "ropeBaseSpin", "windowSpin", "sinksSpin"})
            QTest::newRow(name) << QString::fromLatin1(name);
    }

    void spinBoxesWaitForTheFinishedNumber()
    {
        QFETCH(QString, name);
        ControlPanel panel;
        auto *spin = panel.findChild<QAbstractSpinBox *>(name);
        QVERIFY2(spin, qPrintable(name));
        QVERIFY(!spin->keyboardTracking());
    }

    // The position scheme, key/value heads, window and sinks: each control sets its field, the
    // scheme names RoPE's convention, and the heads box shows the parameters and KV cache.
    void modernControls()
    {
        ControlPanel panel;
        SessionParameters p;
        p.dModel = 64;
        p.heads = 8;
        panel.setParameters(p);
        auto *scheme = panel.findChild<QComboBox *>(QStringLiteral("positionSchemeCombo"));
        auto *kv = panel.findChild<QComboBox *>(QStringLiteral("kvHeadsCombo"));
        auto *window = panel.findChild<QSpinBox *>(QStringLiteral("windowSpin"));
        auto *sinks = panel.findChild<QSpinBox *>(QStringLiteral("sinksSpin"));
        auto *info = panel.findChild<QLabel *>(QStringLiteral("headsInfoLabel"));
        QVERIFY(scheme && kv && window && sinks && info);
        // The items' short names; each tooltip the whole name.
        QVERIFY(scheme->itemText(1).contains(QLatin1String("pairs")));
        QVERIFY(
            scheme->itemData(1, Qt::ToolTipRole).toString().contains(QLatin1String("interleaved")));
        QVERIFY(scheme->itemText(2).contains(QLatin1String("halves")));
        QVERIFY(
            scheme->itemData(2, Qt::ToolTipRole).toString().contains(QLatin1String("rotate_half")));
        scheme->setCurrentIndex(2);
        QVERIFY(panel.parameters().rope);
        QCOMPARE(panel.parameters().ropeConvention, RopeConvention::Half);
        scheme->setCurrentIndex(1);
        QCOMPARE(panel.parameters().ropeConvention, RopeConvention::Interleaved);
        scheme->setCurrentIndex(3);
        QVERIFY(panel.parameters().alibi);
        QVERIFY(!panel.parameters().rope);
        // g = 8, 4, 2, 1 listed; 2 kv heads: 2·64² + 2·2·8·64 + biases (64 + 2·16 + 64).
        QCOMPARE(kv->count(), 4);
        kv->setCurrentIndex(kv->findData(2));
        QCOMPARE(panel.parameters().kvHeads, 2);
        QVERIFY2(info->text().contains(QLocale().toString(8192 + 2048 + 160)),
                 qPrintable(info->text()));
        QVERIFY2(info->text().contains(QLatin1String("256 B/token")), qPrintable(info->text()));
        QVERIFY(!sinks->isEnabled());
        window->setValue(6);
        QCOMPARE(panel.parameters().window, 6);
        QVERIFY(sinks->isEnabled());
        sinks->setValue(2);
        QCOMPARE(panel.parameters().sinks, 2);
        QVERIFY(panel.parameters().validate().isEmpty());
    }

    // The 2025 box: MLA turns RoPE and g < h off and shows its cache; the per-head λ list is
    // refused with a note when its length is not h; the gate has its own check and bias.
    void variantControls()
    {
        ControlPanel panel;
        SessionParameters p;
        p.dModel = 64;
        p.heads = 8;
        p.rope = true;
        p.kvHeads = 2;
        panel.setParameters(p);
        auto *variant = panel.findChild<QComboBox *>(QStringLiteral("variantCombo"));
        auto *dC = panel.findChild<QSpinBox *>(QStringLiteral("latentDimSpin"));
        auto *dR = panel.findChild<QSpinBox *>(QStringLiteral("latentRopeDimSpin"));
        auto *absorbed = panel.findChild<QCheckBox *>(QStringLiteral("absorbedCheck"));
        auto *lambdas = panel.findChild<QLineEdit *>(QStringLiteral("headLambdasEdit"));
        auto *note = panel.findChild<QLabel *>(QStringLiteral("variantNote"));
        auto *gate = panel.findChild<QCheckBox *>(QStringLiteral("gateCheck"));
        auto *bias = panel.findChild<QDoubleSpinBox *>(QStringLiteral("gateBiasSpin"));
        auto *info = panel.findChild<QLabel *>(QStringLiteral("headsInfoLabel"));
        QVERIFY(variant && dC && dR && absorbed && lambdas && note && gate && bias && info);
        QVERIFY(!dC->isEnabled() && !bias->isEnabled() && !lambdas->isEnabled());
        variant->setCurrentIndex(variant->findData(3));
        QVERIFY(panel.parameters().latent);
        QVERIFY(!panel.parameters().rope);
        QCOMPARE(panel.parameters().kvHeads, 0);
        QVERIFY(panel.parameters().validate().isEmpty());
        QVERIFY(dC->isEnabled() && dR->isEnabled() && absorbed->isEnabled());
        dC->setValue(32);
        dR->setValue(16);
        absorbed->setChecked(true);
        QCOMPARE(panel.parameters().latentDim, 32);
        QCOMPARE(panel.parameters().latentRopeDim, 16);
        QVERIFY(panel.parameters().latentAbsorbed);
        // (32 + 16) float64 numbers per token.
        QVERIFY2(info->text().contains(QLatin1String("384 B/token")), qPrintable(info->text()));

        variant->setCurrentIndex(variant->findData(2)); // differential
        QVERIFY(!panel.parameters().latent && panel.parameters().differential);
        QVERIFY(lambdas->isEnabled());
        lambdas->setText(QStringLiteral("0.1, 0.2"));
        emit lambdas->editingFinished();
        QVERIFY(panel.parameters().headLambdas.empty());
        QVERIFY(note->isVisibleTo(&panel));
        QVERIFY2(note->text().contains(QLatin1String("2 numbers for h=8 heads")),
                 qPrintable(note->text()));
        // Once the field shows the λ in use again (another parameter changed), the note on the
        // refused list goes with it.
        SessionParameters moved = panel.parameters();
        moved.n += 1;
        panel.setParameters(moved);
        QCOMPARE(lambdas->text(), QString());
        QVERIFY(!note->isVisibleTo(&panel));
        lambdas->setText(QStringLiteral("0.1 0.2 0.3 0.4 0.5 0.6 0.7 -0.8"));
        emit lambdas->editingFinished();
        QCOMPARE(panel.parameters().headLambdas,
                 (std::vector<double> {0.1, 0.2, 0.3, 0.4, 0.5, 0.6, 0.7, -0.8}));
        QVERIFY(!note->isVisibleTo(&panel));
        QVERIFY(panel.parameters().validate().isEmpty());

        gate->setChecked(true);
        QVERIFY(panel.parameters().outputGate);
        QVERIFY(bias->isEnabled());
        bias->setValue(-2.5);
        QCOMPARE(panel.parameters().gateBias, -2.5);
    }

    // The Mask list names the mask that is applied: under decoder self-attention or a sliding
    // window the causal mask is on whatever is chosen, so no item reads "None" then.
    void maskListNamesTheAppliedMask()
    {
        ControlPanel panel;
        auto *mask = panel.findChild<QComboBox *>(QStringLiteral("maskCombo"));
        QVERIFY(mask);
        SessionParameters p;
        p.mask = MaskChoice::None;
        panel.setParameters(p);
        QCOMPARE(mask->currentText(), QStringLiteral("None"));
        p.kind = AttentionKind::DecoderCausal;
        panel.setParameters(p);
        QCOMPARE(mask->currentText(), QStringLiteral("Causal (decoder)"));
        QCOMPARE(mask->itemText(2), QStringLiteral("Causal (decoder) + key padding"));
        QCOMPARE(panel.parameters().mask, MaskChoice::None); // relabelled, not changed
        p.kind = AttentionKind::EncoderSelf;
        p.window = 4;
        panel.setParameters(p);
        QCOMPARE(mask->currentText(), QStringLiteral("Causal (sliding window)"));
        p.window = 0;
        panel.setParameters(p);
        QCOMPARE(mask->currentText(), QStringLiteral("None"));
        QCOMPARE(mask->itemText(1), QStringLiteral("Causal (no look-ahead)"));
    }

    // Typing "1024" into n: one recompute, for n = 1024 (not n = 1, 10, 102, 1024).
    void typingNEmitsOnce()
    {
        ControlPanel panel;
        SessionParameters p;
        p.n = 8;
        panel.setParameters(p);
        panel.show();
        QVERIFY(QTest::qWaitForWindowExposed(&panel));
        auto *spin = panel.findChild<QSpinBox *>(QStringLiteral("nSpin"));
        QSignalSpy edited(&panel, &ControlPanel::parametersEdited);
        spin->setFocus();
        spin->selectAll();
        QTest::keyClicks(spin, QStringLiteral("1024"));
        QCOMPARE(edited.count(), 0);
        QTest::keyClick(spin, Qt::Key_Return);
        QCOMPARE(editedN(edited), QList<int> {1024});
        QCOMPARE(panel.parameters().n, 1024);
        // The arrows still step at once.
        QTest::keyClick(spin, Qt::Key_Down);
        QCOMPARE(editedN(edited), (QList<int> {1024, 1023}));
    }

    // τ takes what the command line takes, scientific notation included, and keeps it as
    // typed; a number out of range is refused with the range named beside the field, and the
    // parameters keep their τ.
    void temperatureTakesTheCommandLinesNumbers_data()
    {
        QTest::addColumn<QString>("typed");
        QTest::addColumn<double>("expected");
        QTest::newRow("1e-9") << QStringLiteral("1e-9") << 1e-9;
        QTest::newRow("0.001") << QStringLiteral("0.001") << 0.001;
        QTest::newRow("2.5E3") << QStringLiteral("2.5E3") << 2500.0;
        QTest::newRow("0.123456") << QStringLiteral("0.123456") << 0.123456;
    }

    void temperatureTakesTheCommandLinesNumbers()
    {
        QFETCH(QString, typed);
        QFETCH(double, expected);
        ControlPanel panel;
        panel.setParameters(SessionParameters {});
        panel.show();
        QVERIFY(QTest::qWaitForWindowExposed(&panel));
        auto *spin = panel.findChild<QAbstractSpinBox *>(QStringLiteral("temperatureSpin"));
        QVERIFY(spin);
        spin->setFocus();
        spin->selectAll();
        QTest::keyClicks(spin, typed);
        QCOMPARE(spin->text(), typed);
        QTest::keyClick(spin, Qt::Key_Return);
        QCOMPARE(panel.parameters().temperature, expected);
        auto *message = panel.findChild<QLabel *>(QStringLiteral("temperatureMessage"));
        QVERIFY(message);
        QVERIFY(message->isHidden());
    }

    void temperatureOutOfRangeIsRefused_data()
    {
        QTest::addColumn<QString>("typed");
        QTest::newRow("0") << QStringLiteral("0");
        QTest::newRow("-1") << QStringLiteral("-1");
        QTest::newRow("1e301") << QStringLiteral("1e301");
    }

    void temperatureOutOfRangeIsRefused()
    {
        QFETCH(QString, typed);
        ControlPanel panel;
        SessionParameters p;
        p.temperature = 2.0;
        panel.setParameters(p);
        panel.show();
        QVERIFY(QTest::qWaitForWindowExposed(&panel));
        auto *spin = panel.findChild<QAbstractSpinBox *>(QStringLiteral("temperatureSpin"));
        QVERIFY(spin);
        QSignalSpy edited(&panel, &ControlPanel::parametersEdited);
        spin->setFocus();
        spin->selectAll();
        QTest::keyClicks(spin, typed);
        QTest::keyClick(spin, Qt::Key_Return);
        QCOMPARE(edited.count(), 0);
        QCOMPARE(panel.parameters().temperature, 2.0);
        auto *message = panel.findChild<QLabel *>(QStringLiteral("temperatureMessage"));
        QVERIFY(message);
        QVERIFY(message->isVisible());
        QVERIFY2(message->text().contains(QStringLiteral("1e-300"))
                     && message->text().contains(QStringLiteral("1e+300")),
                 qPrintable(message->text()));
        QVERIFY2(message->text().contains(typed), qPrintable(message->text()));
        // The next number accepted clears the message.
        spin->selectAll();
        QTest::keyClicks(spin, QStringLiteral("0.5"));
        QTest::keyClick(spin, Qt::Key_Return);
        QCOMPARE(panel.parameters().temperature, 0.5);
        QVERIFY(message->isHidden());
    }

    // Whole-number fields keep every digit typed: a number past the maximum is refused naming
    // the quantity and its range (QSpinBox dropped the last keystroke: 5000 became 500), and the
    // window's "off" still reads as 0.
    void wholeNumberOutOfRangeIsRefused_data()
    {
        QTest::addColumn<QString>("field");
        QTest::addColumn<QString>("typed");
        QTest::addColumn<QString>("named");
        QTest::newRow("d_model 5000") << "dModelSpin"
                                      << "5000"
                                      << "d_model must be between 1 and";
        QTest::newRow("n 99999") << "nSpin"
                                 << "99999"
                                 << "n must be between 1 and";
        QTest::newRow("window -3") << "windowSpin"
                                   << "-3"
                                   << "The window w must be between 0";
    }

    void wholeNumberOutOfRangeIsRefused()
    {
        QFETCH(QString, field);
        QFETCH(QString, typed);
        QFETCH(QString, named);
        ControlPanel panel;
        SessionParameters p;
        p.n = 8;
        p.dModel = 64;
        panel.setParameters(p);
        panel.show();
        QVERIFY(QTest::qWaitForWindowExposed(&panel));
        auto *spin = panel.findChild<QSpinBox *>(field);
        QVERIFY(spin);
        const int before = spin->value();
        QSignalSpy edited(&panel, &ControlPanel::parametersEdited);
        QSignalSpy notes(&panel, &ControlPanel::noteShown);
        spin->setFocus();
        spin->selectAll();
        QTest::keyClicks(spin, typed);
        QCOMPARE(spin->text(), typed); // every keystroke kept
        QTest::keyClick(spin, Qt::Key_Return);
        QCOMPARE(edited.count(), 0);
        QCOMPARE(spin->value(), before);
        QCOMPARE(panel.parameters(), p);
        QVERIFY(!notes.isEmpty());
        const QString note = notes.last().at(0).toString();
        QVERIFY2(note.contains(named) && note.contains(typed + QStringLiteral(" refused")),
                 qPrintable(note));
    }

    // The disabled n_k field of self-attention shows its key count n (it kept the encoder's
    // length, 10, whatever n was); cross-attention shows and edits its own n_k.
    void selfAttentionShowsKeysEqualToN()
    {
        ControlPanel panel;
        SessionParameters p;
        p.n = 37;
        p.nK = 10;
        panel.setParameters(p);
        auto *spin = panel.findChild<QSpinBox *>(QStringLiteral("nKSpin"));
        QVERIFY(spin);
        QVERIFY(!spin->isEnabled());
        QCOMPARE(spin->value(), 37);
        QCOMPARE(panel.parameters().nK, Index(10)); // the stored encoder length is kept
        p.kind = AttentionKind::EncoderDecoder;
        panel.setParameters(p);
        QVERIFY(spin->isEnabled());
        QCOMPARE(spin->value(), 10);
    }

    void windowOffStillReads()
    {
        ControlPanel panel;
        panel.setParameters(SessionParameters {});
        auto *spin = panel.findChild<WholeSpinBox *>(QStringLiteral("windowSpin"));
        QVERIFY(spin);
        QCOMPARE(spin->value(), 0);
        QCOMPARE(spin->text(), QStringLiteral("off"));
        QString text = spin->text();
        int pos = 0;
        QCOMPARE(spin->validate(text, pos), QValidator::Acceptable);
        QCOMPARE(spin->valueFromText(QStringLiteral("off")), 0);
        QCOMPARE(spin->valueFromText(QStringLiteral("12")), 12);
    }

    // The generator choice: the combo edits the parameters, and an opened session (or undo)
    // shows its generator without an edit; loaded tensors disable it (no seeded draws then).
    void generatorCombo()
    {
        ControlPanel panel;
        panel.setParameters(SessionParameters());
        auto *combo = panel.findChild<QComboBox *>(QStringLiteral("generatorCombo"));
        QVERIFY(combo);
        QCOMPARE(combo->currentData().toInt(), int(RandomSource::NumPy));
        QSignalSpy edited(&panel, &ControlPanel::parametersEdited);
        combo->setCurrentIndex(combo->findData(int(RandomSource::Torch)));
        QCOMPARE(edited.count(), 1);
        QCOMPARE(edited.last().at(0).value<SessionParameters>().generator, RandomSource::Torch);
        QCOMPARE(panel.parameters().generator, RandomSource::Torch);

        SessionParameters outside;
        outside.generator = RandomSource::NumPy;
        panel.setParameters(outside);
        QCOMPARE(edited.count(), 1);
        QCOMPARE(combo->currentData().toInt(), int(RandomSource::NumPy));
        outside.generator = RandomSource::Torch;
        panel.setParameters(outside);
        QCOMPARE(edited.count(), 1);
        QCOMPARE(combo->currentData().toInt(), int(RandomSource::Torch));
        QVERIFY(combo->isEnabled());
    }

    // Key padding 6 of 8 keys; n → 4 sends padding 4 (all keys) with a note; n → 10 restores 6.
    void paddingSurvivesSmallerN()
    {
        ControlPanel panel;
        SessionParameters p;
        p.n = 8;
        p.mask = MaskChoice::KeyPadding;
        p.paddingCount = 2;
        panel.setParameters(p);
        auto *padding = panel.findChild<QSpinBox *>(QStringLiteral("paddingSpin"));
        auto *n = panel.findChild<QSpinBox *>(QStringLiteral("nSpin"));
        QSignalSpy edited(&panel, &ControlPanel::parametersEdited);
        padding->setValue(6);
        QCOMPARE(panel.parameters().paddingCount, 6);
        QVERIFY(maskNote(panel).isEmpty());

        n->setValue(4);
        QCOMPARE(panel.parameters().n, 4);
        QCOMPARE(panel.parameters().paddingCount, 4); // what the session gets: ≤ the keys
        QCOMPARE(padding->value(), 4);
        QVERIFY2(maskNote(panel).contains(QStringLiteral("Padding 6 keys asked, only 4 keys")),
                 qPrintable(maskNote(panel)));
        // The session hands the (clamped) parameters back: the wish stays.
        panel.setParameters(edited.last().at(0).value<SessionParameters>());

        n->setValue(10);
        QCOMPARE(panel.parameters().paddingCount, 6);
        QCOMPARE(padding->value(), 6);
        QVERIFY(maskNote(panel).isEmpty());

        // An outside change (an opened session, undo) sets the count itself.
        SessionParameters outside = panel.parameters();
        outside.paddingCount = 1;
        panel.setParameters(outside);
        n->setValue(12);
        QCOMPARE(panel.parameters().paddingCount, 1);
    }

    // Scrolling the Controls dock (a scroll area) with the wheel: an unfocused control under
    // the pointer keeps its value and the dock scrolls; a focused one takes the wheel.
    void wheelChangesOnlyFocusedControl_data()
    {
        QTest::addColumn<QString>("name");
        for (const char *name : {"kindCombo", "nSpin", "dModelSpin", "headsCombo", "dkSlider",
                                 "alphaSlider", "temperatureSpin", "maskCombo", "generatorCombo"})
            QTest::newRow(name) << QString::fromLatin1(name);
    }

    void wheelChangesOnlyFocusedControl()
    {
        QFETCH(QString, name);
        QScrollArea area;
        auto *panel = new ControlPanel;
        area.setWidget(panel);
        area.setWidgetResizable(true);
        area.resize(360, 200); // the controls are taller: the area scrolls
        area.show();
        area.activateWindow();
        QVERIFY(QTest::qWaitForWindowActive(&area));
        auto *control = panel->findChild<QWidget *>(name);
        QVERIFY2(control, qPrintable(name));
        QCOMPARE(control->focusPolicy(), Qt::StrongFocus); // the wheel does not take the focus
        QScrollBar *bar = area.verticalScrollBar();
        QVERIFY(bar->maximum() > 0);
        bar->setValue(0);
        const QString before = shownValue(control);
        QSignalSpy edited(panel, &ControlPanel::parametersEdited);

        control->clearFocus(); // the first control gets the focus when the window is shown
        QVERIFY(!control->hasFocus());
        wheelDown(control);
        QCOMPARE(shownValue(control), before);
        QCOMPARE(edited.count(), 0);
        QVERIFY2(bar->value() > 0, "the wheel scrolls the dock");

        control->setFocus(Qt::OtherFocusReason);
        QTRY_VERIFY(control->hasFocus());
        const int scrolled = bar->value();
        wheelDown(control);
        QVERIFY2(shownValue(control) != before, qPrintable(shownValue(control)));
        QVERIFY(edited.count() >= 1);
        QCOMPARE(bar->value(), scrolled); // setFocus may scroll it into view; the wheel did not
    }

    // The user drags a slider (or types into a spin box), then scrolls the Controls dock with
    // the pointer above it: the wheel notches that scroll the control past the pointer scroll
    // the dock and leave every parameter unchanged, although the control keeps the focus.
    void wheelScrollingPastFocusedControlKeepsIt_data()
    {
        QTest::addColumn<QString>("name");
        for (const char *name : {"kindCombo", "nSlider", "nSpin", "dModelSpin", "headsCombo",
                                 "dkSlider", "alphaSlider", "temperatureSpin", "maskCombo"})
            QTest::newRow(name) << QString::fromLatin1(name);
    }

    void wheelScrollingPastFocusedControlKeepsIt()
    {
        QFETCH(QString, name);
        QScrollArea area;
        auto *panel = new ControlPanel;
        area.setWidget(panel);
        area.setWidgetResizable(true);
        area.resize(360, 200); // the controls are taller: the area scrolls
        area.show();
        area.activateWindow();
        QVERIFY(QTest::qWaitForWindowActive(&area));
        auto *control = panel->findChild<QWidget *>(name);
        QVERIFY2(control, qPrintable(name));
        QScrollBar *bar = area.verticalScrollBar();
        // Scroll so that the control sits 60 px below the top of the visible part, or higher
        // when the dock could not scroll it past the pointer from there.
        const int top = control->mapTo(panel, QPoint(0, 0)).y();
        bar->setValue(std::clamp(top - 60, 0, bar->maximum() - control->height() - 40));
        const SessionParameters before = panel->parameters();
        QSignalSpy edited(panel, &ControlPanel::parametersEdited);

        // The user operated the control: it has the focus (clicking a slider gives it too).
        control->setFocus(Qt::MouseFocusReason);
        QTRY_VERIFY(control->hasFocus());

        // The pointer rests 30 px above the control, in its column; each event goes where the
        // pointer is now, as the window system would deliver it.
        QWidget *viewport = area.viewport();
        const QPoint at = control->mapTo(viewport, control->rect().center());
        const QPoint pointer = viewport->mapToGlobal(
            QPoint(at.x(), std::max(2, at.y() - control->height() / 2 - 30)));
        bool passedUnder = false;
        for (int notch = 0; notch < 100 && bar->value() < bar->maximum(); ++notch) {
            QWidget *target = viewport->childAt(viewport->mapFromGlobal(pointer));
            if (!target)
                target = viewport;
            passedUnder = passedUnder || target == control || control->isAncestorOf(target);
            const QPointF local = target->mapFromGlobal(QPointF(pointer));
            QWheelEvent event(local, QPointF(pointer), QPoint(), QPoint(0, -40), Qt::NoButton,
                              Qt::NoModifier, Qt::NoScrollPhase, false);
            // Spontaneous, like the window system's: an ignored wheel event propagates to the
            // parents (Qt propagates only those; sendEvent would clear the flag).
            QSpontaneKeyEvent::setSpontaneous(&event);
            qApp->notify(target, &event);
        }
        QVERIFY2(passedUnder, "the control passed under the pointer");
        QCOMPARE(bar->value(), bar->maximum()); // the wheel scrolled the dock to its end
        QVERIFY(control->hasFocus());
        QCOMPARE(edited.count(), 0);
        QVERIFY(panel->parameters() == before);
    }

    // Typing a d_model that h does not divide moves h to the nearest divisor, and says so.
    void headsChangeIsExplained()
    {
        ControlPanel panel;
        QSignalSpy edited(&panel, &ControlPanel::parametersEdited);
        auto *dModel = panel.findChild<QSpinBox *>(QStringLiteral("dModelSpin"));
        auto *note = panel.findChild<QLabel *>(QStringLiteral("headsNote"));
        QVERIFY(dModel && note);
        QCOMPARE(panel.parameters().heads, 4);
        QVERIFY(note->text().isEmpty());
        dModel->setValue(65);
        QCOMPARE(panel.parameters().dModel, 65);
        QCOMPARE(panel.parameters().heads, 5);
        QCOMPARE(edited.count(), 1);
        QCOMPARE(note->text(),
                 QStringLiteral("h = 4 does not divide d_model = 65: h is now 5, the "
                                "nearest divisor."));
        QVERIFY(!note->isHidden());
        dModel->setValue(80); // 5 divides 80: nothing to explain
        QCOMPARE(panel.parameters().heads, 5);
        QVERIFY(note->text().isEmpty());
        QVERIFY(note->isHidden());
    }

    // Loaded tensors: the typed sentence would change nothing, so the field is disabled and
    // says why; without tensors it is enabled with its usual tooltip.
    // A model's attention stack has no layer weights, no d_k and no scores: the Controls show
    // them as not available, and the heatmap's cell text names the layer, without NaN scores.
    void storedWeightsShowNothingInvented()
    {
        QString error;
        const auto source = makeTensorSource(
            readTensorFile(QStringLiteral(ATTN_FIXTURE_DIR "/modelstack/stack.npz")), QString(),
            MaskConvention::Masked, &error);
        QVERIFY2(source && source->isWeights(), qPrintable(error));
        const auto layer1 = source->withLayer(1);
        const SessionParameters p = layer1->parametersFor(SessionParameters {}, layer1);

        ControlPanel panel;
        panel.setParameters(p);
        auto *info = panel.findChild<QLabel *>(QStringLiteral("headsInfoLabel"));
        auto *dk = panel.findChild<QLabel *>(QStringLiteral("dkLabel"));
        auto *scale = panel.findChild<QLabel *>(QStringLiteral("scaleLabel"));
        QVERIFY(info && dk && scale);
        QVERIFY2(info->text().contains(QLatin1String("n/a (stored weights)")),
                 qPrintable(info->text()));
        QVERIFY2(!info->text().contains(QLatin1String("B/token")), qPrintable(info->text()));
        QCOMPARE(dk->text(), QStringLiteral("n/a"));
        QVERIFY2(scale->text().contains(QLatin1String("n/a")), qPrintable(scale->text()));
        // Nor a d_model, kind, mask or kv heads: n/a, not the parameters' placeholders.
        QCOMPARE(panel.findChild<QSpinBox *>(QStringLiteral("dModelSpin"))->text(),
                 QStringLiteral("n/a"));
        for (const char *name : {"kindCombo", "maskCombo", "kvHeadsCombo"}) {
            const auto *combo = panel.findChild<QComboBox *>(QLatin1String(name));
            QVERIFY(combo);
            QCOMPARE(combo->currentIndex(), -1);
            QCOMPARE(combo->placeholderText(), QStringLiteral("n/a"));
        }
        // A window would not apply to them either.
        QVERIFY(!panel.findChild<QSpinBox *>(QStringLiteral("windowSpin"))->isEnabled());
        QVERIFY(!panel.findChild<QSpinBox *>(QStringLiteral("sinksSpin"))->isEnabled());

        HeatmapRenderer renderer;
        renderer.setResult(std::make_shared<SessionResult>(computeTensorSession(p)));
        HeatmapHit hit;
        hit.tile = 0;
        hit.head = 2;
        hit.row = 3;
        hit.col = 1;
        const QString cell = renderer.describeCell(hit);
        QVERIFY2(cell.contains(QLatin1String("layer 1 of 2")), qPrintable(cell));
        QVERIFY2(cell.contains(QLatin1String("raw score n/a (stored weights)")), qPrintable(cell));
        QVERIFY2(!cell.contains(QLatin1String("nan"), Qt::CaseInsensitive), qPrintable(cell));
    }

    void tokensDisabledWithTensors()
    {
        QTemporaryDir dir;
        QVERIFY(dir.isValid());
        MatrixD rows(2, 2);
        rows << 0.25, 0.75, 0.5, 0.5;
        const QString file = dir.filePath(QStringLiteral("weights.npy"));
        writeNpy(file.toStdString(), NpyArray::fromMatrix(rows));
        QString error;
        const auto source
            = makeTensorSource(readTensorFile(file), QString(), MaskConvention::Masked, &error);
        QVERIFY2(source, qPrintable(error));

        ControlPanel panel;
        auto *tokens = panel.findChild<QLineEdit *>(QStringLiteral("tokensEdit"));
        QVERIFY(tokens->isEnabled());
        const QString usual = tokens->toolTip();
        QVERIFY(usual.contains(QStringLiteral("sentence")));

        panel.setParameters(source->parametersFor(SessionParameters {}, source));
        QVERIFY(!tokens->isEnabled());
        // The loaded tensors are the inputs: no generator draws them.
        QVERIFY(!panel.findChild<QComboBox *>(QStringLiteral("generatorCombo"))->isEnabled());
        QVERIFY2(tokens->toolTip().contains(QStringLiteral("tensors are loaded")),
                 qPrintable(tokens->toolTip()));
        QVERIFY(tokens->toolTip().contains(QStringLiteral("Tensors dock")));

        panel.setParameters(SessionParameters {});
        QVERIFY(tokens->isEnabled());
        QCOMPARE(tokens->toolTip(), usual);
    }
    // Tokens with spaces or punctuation in them (a session's, or a file's labels) show escaped in
    // the Tokens field, so editing the field keeps each whole: appending a word adds one token.
    void tokensWithSpacesSurviveEditing()
    {
        ControlPanel panel;
        auto *field = panel.findChild<QLineEdit *>(QStringLiteral("tokensEdit"));
        QVERIFY(field);
        SessionParameters p;
        const QStringList tokens {QStringLiteral("New York"), QStringLiteral("don't"),
                                  QStringLiteral("a\\b"),     QStringLiteral("<s>"),
                                  QStringLiteral("x<s>"),     QStringLiteral("."),
                                  QStringLiteral("[a b]")};
        p.setTokens(tokens);
        p.n = Index(tokens.size());
        panel.setParameters(p);
        QCOMPARE(field->text(),
                 QStringLiteral("New\\ York don\\'t a\\\\b <s> x\\<s\\> . \\[a\\ b\\]"));
        QSignalSpy edited(&panel, &ControlPanel::parametersEdited);
        field->end(false);
        QTest::keyClicks(field, QStringLiteral(" end"));
        QVERIFY(!edited.isEmpty());
        const auto last = edited.constLast().at(0).value<SessionParameters>();
        QCOMPARE(last.tokenList(), tokens + QStringList {QStringLiteral("end")});
        QCOMPARE(last.n, Index(tokens.size() + 1));
    }
};

QTEST_MAIN(TestControlPanel)
#include "tst_controlpanel.moc"
