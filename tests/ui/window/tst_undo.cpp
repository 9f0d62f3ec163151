// Desktop habits of the main window: undo/redo of parameter changes (QUndoStack; a slider drag
// is one command; undo restores the controls and the heatmap), keyboard shortcuts for the common
// actions and a Help → Keyboard Shortcuts list generated from them, next/previous head, tooltips
// on every control, and the heatmap following the palette (dark and light).
// Set ATTN_FIGURE_DIR to keep pictures of the window, the menus and the shortcut list.

#include "ui/document/parameterundo.h"
#include "ui/panels/controlpanel.h"
#include "ui/session/attentionsession.h"
#include "ui/views/heatmapwidget.h"
#include "ui/window/mainwindow.h"
#include "ui/window/sessioncontroller.h"
#include "ui/window/shortcuts.h"
#include "ui/window/windowmenus.h"

#include <QAbstractButton>
#include <QAbstractSlider>
#include <QAbstractSpinBox>
#include <QAction>
#include <QApplication>
#include <QCheckBox>
#include <QComboBox>
#include <QDialog>
#include <QDir>
#include <QDockWidget>
#include <QDoubleSpinBox>
#include <QLabel>
#include <QLineEdit>
#include <QMenu>
#include <QMenuBar>
#include <QScrollBar>
#include <QSignalSpy>
#include <QSlider>
#include <QSpinBox>
#include <QStandardPaths>
#include <QStyle>
#include <QStyleOptionSlider>
#include <QTabBar>
#include <QTest>
#include <QTimer>
#include <QTreeWidget>
#include <QUndoStack>

#include <functional>
#include <memory>

using namespace attn;

namespace {

bool waitForResult(MainWindow *w, const SessionParameters &p)
{
    return QTest::qWaitFor(
        [&] {
            const auto r = w->session()->result();
            return r && r->params == p && !w->session()->isBusy()
                && w->heatmapWidget()->result() == r;
        },
        20000);
}

/// Drags `slider`'s handle by `dx` pixels in `steps` mouse moves (a real drag: press, moves,
/// release), waiting a little between moves so results arrive while dragging.
void dragSlider(QSlider *slider, int dx, int steps)
{
    QStyleOptionSlider option;
    option.initFrom(slider);
    option.orientation = slider->orientation();
    option.minimum = slider->minimum();
    option.maximum = slider->maximum();
    option.sliderPosition = slider->sliderPosition();
    option.sliderValue = slider->value();
    const QPoint start
        = slider->style()
              ->subControlRect(QStyle::CC_Slider, &option, QStyle::SC_SliderHandle, slider)
              .center();
    QTest::mousePress(slider, Qt::LeftButton, Qt::NoModifier, start);
    QPoint pos = start;
    for (int i = 1; i <= steps; ++i) {
        pos.setX(start.x() + dx * i / steps);
        QMouseEvent move(QEvent::MouseMove, QPointF(pos), slider->mapToGlobal(QPointF(pos)),
                         Qt::NoButton, Qt::LeftButton, Qt::NoModifier);
        QApplication::sendEvent(slider, &move);
        QTest::qWait(15);
    }
    QTest::mouseRelease(slider, Qt::LeftButton, Qt::NoModifier, pos);
}

QString keepDir()
{
    const QString dir = qEnvironmentVariable("ATTN_FIGURE_DIR");
    if (!dir.isEmpty())
        QDir().mkpath(dir);
    return dir;
}

} // namespace

class TestUndo : public QObject
{
    Q_OBJECT

private slots:
    void initTestCase();
    void init();
    void cleanup();

    void changeUndoRedo_data();
    void changeUndoRedo();
    void undoRestoresHeatmap();
    void sliderDragIsOneCommand();
    void undoTextNamesTheDkDrag();
    void mergeRules();
    void rejectedEditNotRecorded();
    void undoTextNamesTheChange();
    void commonActionsHaveShortcuts_data();
    void commonActionsHaveShortcuts();
    void shortcutsDialogListsEveryAction();
    void nextPreviousHead();
    void everyControlHasToolTip();
    void heatmapFollowsPalette_data();
    void heatmapFollowsPalette();
    void heatmapCrispAtHighDpi();
    void aboutShowsVersion();

private:
    template<typename T> T *control(const char *name) const
    {
        return m_window->controlPanel()->findChild<T *>(QLatin1String(name));
    }
    std::unique_ptr<MainWindow> m_window;
};

void TestUndo::initTestCase()
{
    QStandardPaths::setTestModeEnabled(true);
    QApplication::setApplicationVersion(QStringLiteral("9.8.7-test"));
}

void TestUndo::init()
{
    m_window = std::make_unique<MainWindow>();
    m_window->show();
    QVERIFY(QTest::qWaitForWindowExposed(m_window.get()));
    QVERIFY(waitForResult(m_window.get(), m_window->session()->parameters()));
}

void TestUndo::cleanup()
{
    m_window.reset();
}

void TestUndo::changeUndoRedo_data()
{
    QTest::addColumn<QString>("control");
    QTest::addColumn<double>("value"); // spin value, combo index, slider position or 0/1

    QTest::newRow("n spin box") << "nSpin" << 13.0;
    QTest::newRow("d_model spin box") << "dModelSpin" << 96.0;
    QTest::newRow("heads combo") << "headsCombo" << 0.0;
    QTest::newRow("seed") << "seedSpin" << 42.0;
    QTest::newRow("mask combo: key padding") << "maskCombo" << 2.0;
    QTest::newRow("kind: encoder-decoder") << "kindCombo" << 2.0;
    QTest::newRow("alpha slider") << "alphaSlider" << 20.0;
    QTest::newRow("1/sqrt(d_k) checkbox") << "sqrtCheck" << 0.0;
    QTest::newRow("positional encoding") << "positionalCheck" << 1.0;
    QTest::newRow("precision: float32") << "dtypeCombo" << 1.0;
    QTest::newRow("temperature") << "temperatureSpin" << 2.5;
}

void TestUndo::changeUndoRedo()
{
    QFETCH(QString, control);
    QFETCH(double, value);
    SessionController *c = m_window->sessionController();
    QWidget *w = m_window->controlPanel()->findChild<QWidget *>(control);
    QVERIFY(w);
    auto widgetValue = [w]() -> double {
        if (auto *s = qobject_cast<QSpinBox *>(w))
            return s->value();
        if (auto *d = qobject_cast<QDoubleSpinBox *>(w))
            return d->value();
        if (auto *b = qobject_cast<QComboBox *>(w))
            return b->currentIndex();
        if (auto *s = qobject_cast<QAbstractSlider *>(w))
            return s->value();
        if (auto *b = qobject_cast<QAbstractButton *>(w))
            return b->isChecked() ? 1 : 0;
        return -1;
    };
    const SessionParameters before = m_window->session()->parameters();
    const double widgetBefore = widgetValue();
    QVERIFY(widgetBefore != value);
    const int count = c->undoStack()->count();

    if (auto *s = qobject_cast<QSpinBox *>(w))
        s->setValue(int(value));
    else if (auto *d = qobject_cast<QDoubleSpinBox *>(w))
        d->setValue(value);
    else if (auto *b = qobject_cast<QComboBox *>(w))
        b->setCurrentIndex(int(value));
    else if (auto *s = qobject_cast<QAbstractSlider *>(w))
        s->setValue(int(value));
    else if (auto *b = qobject_cast<QAbstractButton *>(w))
        b->setChecked(value != 0);
    const SessionParameters after = m_window->session()->parameters();
    QVERIFY(!(after == before));
    QCOMPARE(c->undoStack()->count(), count + 1);
    QVERIFY(c->undoAction()->isEnabled());

    c->undoAction()->trigger();
    QCOMPARE(m_window->session()->parameters(), before);
    QCOMPARE(m_window->controlPanel()->parameters(), before);
    QCOMPARE(widgetValue(), widgetBefore); // the control shows the old value again
    QVERIFY(waitForResult(m_window.get(), before));
    QVERIFY(!c->isModified());

    QVERIFY(c->redoAction()->isEnabled());
    c->redoAction()->trigger();
    QCOMPARE(m_window->session()->parameters(), after);
    QCOMPARE(m_window->controlPanel()->parameters(), after);
    QCOMPARE(widgetValue(), value);
    QVERIFY(waitForResult(m_window.get(), after));
    QVERIFY(c->isModified());
}

void TestUndo::undoRestoresHeatmap()
{
    // The picture after undo equals the picture before the change, pixel for pixel.
    const QImage before = m_window->heatmapWidget()->renderer().render(QSize(800, 500));
    const SessionParameters p0 = m_window->session()->parameters();
    control<QComboBox>("maskCombo")->setCurrentIndex(1);
    control<QSpinBox>("seedSpin")->setValue(5);
    QVERIFY(waitForResult(m_window.get(), m_window->session()->parameters()));
    const QImage changed = m_window->heatmapWidget()->renderer().render(QSize(800, 500));
    QVERIFY(changed != before);
    QUndoStack *stack = m_window->sessionController()->undoStack();
    QCOMPARE(stack->count(), 2);
    stack->undo();
    stack->undo();
    QVERIFY(waitForResult(m_window.get(), p0));
    QCOMPARE(m_window->heatmapWidget()->renderer().render(QSize(800, 500)), before);
    stack->redo();
    stack->redo();
    QVERIFY(waitForResult(m_window.get(), m_window->session()->parameters()));
    QCOMPARE(m_window->heatmapWidget()->renderer().render(QSize(800, 500)), changed);
}

void TestUndo::sliderDragIsOneCommand()
{
    // A real mouse drag of the α slider changes the parameters many times (the view follows the
    // drag) but leaves one undo command; one undo returns to where the drag started.
    auto *slider = control<QSlider>("alphaSlider");
    QVERIFY(slider && slider->isVisible());
    QUndoStack *stack = m_window->sessionController()->undoStack();
    const SessionParameters start = m_window->session()->parameters();
    QSignalSpy changes(m_window->session(), &AttentionSession::parametersChanged);

    // Distances relative to the slider: a narrow Controls dock (a small screen) has a short one.
    dragSlider(slider, slider->width() / 4, 10);
    QVERIFY2(changes.count() >= 3, qPrintable(QString::number(changes.count())));
    QCOMPARE(stack->count(), 1);
    const SessionParameters afterFirst = m_window->session()->parameters();
    QVERIFY(afterFirst.scaleExponent > start.scaleExponent);

    // A second drag is a second command.
    dragSlider(slider, slider->width() / 6, 6);
    QCOMPARE(stack->count(), 2);
    const SessionParameters afterSecond = m_window->session()->parameters();
    QVERIFY(afterSecond.scaleExponent > afterFirst.scaleExponent);

    stack->undo();
    QCOMPARE(m_window->session()->parameters(), afterFirst);
    QCOMPARE(slider->value(), int(std::lround(afterFirst.scaleExponent * 100)));
    stack->undo();
    QCOMPARE(m_window->session()->parameters(), start);
    QCOMPARE(slider->value(), int(std::lround(start.scaleExponent * 100)));
    QVERIFY(waitForResult(m_window.get(), start));

    // Keyboard steps on the slider are separate commands.
    slider->setFocus();
    QTest::keyClick(slider, Qt::Key_Right);
    QTest::keyClick(slider, Qt::Key_Right);
    QCOMPARE(stack->count(), 2);
    QCOMPARE(stack->index(), 2);
}

void TestUndo::mergeRules()
{
    // SetParametersCommand on its own: same key merges, another key does not, and a merge that
    // returns to the start makes the command obsolete (dropped from the stack).
    AttentionSession session;
    QUndoStack stack;
    SessionParameters p = session.parameters();
    auto step = [&](int n, const QString &key) {
        SessionParameters next = session.parameters();
        next.n = n;
        stack.push(new SetParametersCommand(&session, session.parameters(), next, key));
    };
    step(9, QStringLiteral("nSlider#1"));
    step(10, QStringLiteral("nSlider#1"));
    step(11, QStringLiteral("nSlider#1"));
    QCOMPARE(stack.count(), 1);
    QCOMPARE(session.parameters().n, 11);
    step(12, QStringLiteral("nSlider#2"));
    QCOMPARE(stack.count(), 2);
    step(13, QString()); // no key: never merges
    step(14, QString());
    QCOMPARE(stack.count(), 4);
    stack.undo();
    stack.undo();
    stack.undo();
    QCOMPARE(session.parameters().n, 11);
    stack.undo();
    QCOMPARE(session.parameters(), p);

    QUndoStack back;
    SessionParameters q = session.parameters();
    q.n = 20;
    back.push(new SetParametersCommand(&session, session.parameters(), q, QStringLiteral("k#1")));
    back.push(new SetParametersCommand(&session, q, p, QStringLiteral("k#1"))); // back to start
    QCOMPARE(back.count(), 0);
    QCOMPARE(session.parameters(), p);
}

void TestUndo::rejectedEditNotRecorded()
{
    SessionController *c = m_window->sessionController();
    SessionParameters bad = m_window->session()->parameters();
    bad.heads = 3; // does not divide d_model = 64
    QSignalSpy failed(m_window->session(), &AttentionSession::computeFailed);
    c->editParameters(bad);
    QCOMPARE(failed.count(), 1);
    QCOMPARE(c->undoStack()->count(), 0);
    QVERIFY(!c->isModified());
    QVERIFY(!c->undoAction()->isEnabled());
}

void TestUndo::undoTextNamesTheChange()
{
    control<QSpinBox>("nSpin")->setValue(32);
    QAction *undo = m_window->sessionController()->undoAction();
    QVERIFY2(undo->text().contains(QStringLiteral("n = 32")), qPrintable(undo->text()));
    control<QComboBox>("maskCombo")->setCurrentIndex(1);
    QVERIFY2(undo->text().contains(QStringLiteral("mask = causal")), qPrintable(undo->text()));
    SessionParameters a, b;
    b.dModel = 128;
    b.heads = 8;
    QCOMPARE(SetParametersCommand::describeChange(a, b), QStringLiteral("d_model = 128, h = 8"));
    control<QComboBox>("generatorCombo")->setCurrentIndex(1);
    QVERIFY2(undo->text().contains(QStringLiteral("generator = torch")), qPrintable(undo->text()));
    undo->trigger();
    QCOMPARE(m_window->session()->parameters().generator, RandomSource::NumPy);
    // The same h: the d_k that comes with d_model is named too.
    SessionParameters c = a;
    c.dModel = 48;
    QCOMPARE(SetParametersCommand::describeChange(a, c), QStringLiteral("d_model = 48 (d_k = 12)"));
}

void TestUndo::undoTextNamesTheDkDrag()
{
    // Dragging the d_k slider: Undo names d_k, what the user moved, not d_model.
    auto *slider = control<QSlider>("dkSlider");
    QVERIFY(slider && slider->isVisible());
    const SessionParameters start = m_window->session()->parameters();
    dragSlider(slider, -slider->width() / 4, 5);
    const SessionParameters after = m_window->session()->parameters();
    QVERIFY(after.dK() != start.dK());
    QCOMPARE(after.heads, start.heads);
    QAction *undo = m_window->sessionController()->undoAction();
    QVERIFY2(undo->text().contains(QStringLiteral("d_k = %1").arg(after.dK())),
             qPrintable(undo->text()));
    QVERIFY2(!undo->text().contains(QStringLiteral("d_model")), qPrintable(undo->text()));
}

void TestUndo::commonActionsHaveShortcuts_data()
{
    QTest::addColumn<QString>("name"); // the action's text without '&' and '…'
    QTest::addColumn<QString>("shortcut"); // PortableText; empty: any
    QTest::newRow("open") << "Open Session"
                          << "Ctrl+O";
    QTest::newRow("save") << "Save Session"
                          << "Ctrl+S";
    QTest::newRow("save as") << "Save Session As"
                             << "Ctrl+Shift+S";
    QTest::newRow("export") << "Export Heatmap Grid"
                            << "Ctrl+E";
    QTest::newRow("undo") << "Undo"
                          << "Ctrl+Z";
    QTest::newRow("redo") << "Redo"
                          << "Ctrl+Shift+Z";
    QTest::newRow("quit") << "Quit"
                          << "Ctrl+Q";
    QTest::newRow("run (recompute)") << "Recompute"
                                     << "F5";
    QTest::newRow("toggle scale") << "Toggle 1/√d_k Scale"
                                  << "Ctrl+K";
    QTest::newRow("next head") << "Next Head"
                               << "Ctrl+PgDown";
    QTest::newRow("previous head") << "Previous Head"
                                   << "Ctrl+PgUp";
    QTest::newRow("zoom in") << "Zoom In"
                             << "";
    QTest::newRow("zoom out") << "Zoom Out"
                              << "";
    QTest::newRow("keyboard shortcuts") << "Keyboard Shortcuts"
                                        << "F1";
}

void TestUndo::commonActionsHaveShortcuts()
{
    QFETCH(QString, name);
    QFETCH(QString, shortcut);
    QAction *found = nullptr;
    for (QAction *a : m_window->shortcuts()->actions()) {
        QString text = a->text();
        text.remove(QLatin1Char('&'));
        text.remove(QStringLiteral("…"));
        // Undo/Redo carry the change they undo ("Undo n = 32"): compare their first word.
        if (text == name || (text.startsWith(name + QLatin1Char(' ')) && name.size() <= 4))
            found = a;
    }
    if (!found && name.startsWith(QLatin1String("Zoom"))
        && !m_window->findChild<QAction *>(QStringLiteral("zoomInAction"))) {
        bool anyZoom = false;
        for (QAction *a : m_window->findChildren<QAction *>())
            anyZoom
                = anyZoom || a->text().remove(QLatin1Char('&')).startsWith(QLatin1String("Zoom"));
        if (!anyZoom)
            QSKIP("this build has no zoom actions");
    }
    QVERIFY2(found, qPrintable(QStringLiteral("no menu action '%1' with a shortcut").arg(name)));
    QVERIFY(!found->shortcut().isEmpty());
    if (!shortcut.isEmpty())
        QCOMPARE(found->shortcut().toString(QKeySequence::PortableText), shortcut);
}

void TestUndo::shortcutsDialogListsEveryAction()
{
    // Help → Keyboard Shortcuts is built from the menus' actions: every action with a shortcut
    // appears with its key, so the list cannot drift from the menus.
    QStringList rows;
    bool seen = false;
    QTimer::singleShot(100, this, [&] {
        auto *dialog = qobject_cast<QDialog *>(QApplication::activeModalWidget());
        if (!dialog)
            return;
        seen = true;
        auto *tree = dialog->findChild<QTreeWidget *>();
        if (tree) {
            for (QTreeWidgetItemIterator it(tree); *it; ++it)
                rows << (*it)->text(0) + QLatin1Char('\t') + (*it)->text(1);
        }
        if (const QString keep = keepDir(); !keep.isEmpty())
            dialog->grab().save(QDir(keep).filePath(QStringLiteral("habits_shortcuts.png")));
        dialog->reject();
    });
    m_window->shortcuts()->showDialog();
    QVERIFY(seen);
    const QList<QAction *> actions = m_window->shortcuts()->actions();
    QVERIFY(actions.size() >= 20);
    for (QAction *a : actions) {
        QString name = a->text();
        name.remove(QLatin1Char('&'));
        const QString row
            = name + QLatin1Char('\t') + a->shortcut().toString(QKeySequence::NativeText);
        QVERIFY2(rows.contains(row), qPrintable(QStringLiteral("missing row '%1'").arg(row)));
    }
}

void TestUndo::nextPreviousHead()
{
    HeatmapWidget *heatmap = m_window->heatmapWidget();
    const int h = m_window->session()->parameters().heads;
    QCOMPARE(h, 4);
    QVERIFY(!heatmap->isSingleHead());
    QStringList seen;
    auto where = [heatmap] {
        return heatmap->isSingleHead() ? QString::number(heatmap->options().head)
                                       : QStringLiteral("grid");
    };
    for (int i = 0; i < h + 2; ++i) {
        m_window->stepHead(1);
        seen << where();
    }
    // Heads 0 … h−1, then the mean (h), then back to the grid.
    QCOMPARE(seen, (QStringList {"0", "1", "2", "3", "4", "grid"}));
    m_window->stepHead(-1);
    QCOMPARE(where(), QStringLiteral("4"));
    m_window->stepHead(-1);
    QCOMPARE(where(), QStringLiteral("3"));

    // Through the keyboard shortcut.
    m_window->activateWindow();
    QTest::keyClick(m_window.get(), Qt::Key_PageDown, Qt::ControlModifier);
    QCOMPARE(where(), QStringLiteral("4"));
}

void TestUndo::everyControlHasToolTip()
{
    // Every widget of the control panel that takes input (and every such widget in the docks)
    // explains itself in a tooltip.
    QList<QWidget *> roots {m_window->controlPanel()};
    for (QDockWidget *dock : m_window->findChildren<QDockWidget *>())
        roots << dock->widget();
    int checked = 0;
    QStringList missing;
    for (QWidget *root : roots) {
        for (QWidget *w : root->findChildren<QWidget *>()) {
            const bool input = qobject_cast<QAbstractSpinBox *>(w) || qobject_cast<QComboBox *>(w)
                || qobject_cast<QAbstractSlider *>(w) || qobject_cast<QAbstractButton *>(w)
                || qobject_cast<QLineEdit *>(w);
            if (!input || qobject_cast<QScrollBar *>(w))
                continue; // scroll bars belong to views
            if (qobject_cast<QAbstractSpinBox *>(w->parentWidget())
                || qobject_cast<QComboBox *>(w->parentWidget())
                || qobject_cast<QLineEdit *>(w->parentWidget())
                || qobject_cast<QTabBar *>(w->parentWidget()))
                continue; // inner parts: a spin box's line edit, clear and tab-scroll buttons
            ++checked;
            if (w->toolTip().trimmed().isEmpty())
                missing << QStringLiteral("%1 (%2)").arg(w->objectName(),
                                                         w->metaObject()->className());
        }
    }
    QVERIFY2(missing.isEmpty(), qPrintable(QStringLiteral("no tooltip: ") + missing.join(", ")));
    QVERIFY(checked >= 15);
}

void TestUndo::heatmapFollowsPalette_data()
{
    QTest::addColumn<QColor>("base");
    QTest::addColumn<QColor>("text");
    QTest::newRow("dark") << QColor(30, 30, 34) << QColor(230, 230, 230);
    QTest::newRow("light") << QColor(255, 255, 255) << QColor(0, 0, 0);
}

void TestUndo::heatmapFollowsPalette()
{
    // The heatmap's background is the palette's Base colour (no hard-coded white), also after a
    // palette change at run time.
    QFETCH(QColor, base);
    QFETCH(QColor, text);
    HeatmapWidget *heatmap = m_window->heatmapWidget();
    QPalette palette = heatmap->palette();
    palette.setColor(QPalette::Base, base);
    palette.setColor(QPalette::Window, base);
    palette.setColor(QPalette::Text, text);
    palette.setColor(QPalette::WindowText, text);
    heatmap->setPalette(palette);
    QCOMPARE(heatmap->options().background, base);
    QCOMPARE(heatmap->options().foreground, text);
    const QImage shot = heatmap->grab().toImage();
    QCOMPARE(QColor(shot.pixel(2, shot.height() - 3)), base);
    if (const QString keep = keepDir(); !keep.isEmpty())
        shot.save(QDir(keep).filePath(QStringLiteral("habits_palette_%1.png")
                                          .arg(QString::fromLatin1(QTest::currentDataTag()))));
}

void TestUndo::heatmapCrispAtHighDpi()
{
    // At a device pixel ratio of 2 the widget paints at twice the pixels (not an upscaled
    // 1× picture): the grab is 2× and carries thin one-device-pixel detail.
    HeatmapWidget *heatmap = m_window->heatmapWidget();
    if (heatmap->devicePixelRatioF() == 1.0) {
        // Offscreen at 1×: check the renderer path the widget uses (render at dpr 2).
        const QImage one = heatmap->renderer().render(QSize(600, 400), 1.0);
        const QImage two = heatmap->renderer().render(QSize(600, 400), 2.0);
        QCOMPARE(two.size(), QSize(1200, 800));
        QCOMPARE(two.devicePixelRatio(), 2.0);
        // Not a pixel-doubled copy of the 1× picture: text and lines are drawn at 2×.
        const QImage doubled
            = one.scaled(one.size() * 2, Qt::IgnoreAspectRatio, Qt::FastTransformation);
        QImage twoPlain = two;
        twoPlain.setDevicePixelRatio(1.0);
        QVERIFY(twoPlain.convertToFormat(QImage::Format_RGB32)
                != doubled.convertToFormat(QImage::Format_RGB32));
    }
    const QPixmap grab = heatmap->grab();
    QCOMPARE(grab.devicePixelRatio(), heatmap->devicePixelRatioF());
    QCOMPARE(grab.size(), heatmap->size() * heatmap->devicePixelRatioF());
}

void TestUndo::aboutShowsVersion()
{
    QString text;
    QTimer::singleShot(100, this, [&] {
        if (QWidget *box = QApplication::activeModalWidget()) {
            for (QLabel *label : box->findChildren<QLabel *>())
                text += label->text();
            box->close();
        }
    });
    m_window->findChild<WindowMenus *>()->showAbout();
    QVERIFY2(text.contains(QStringLiteral("9.8.7-test")), qPrintable(text));
    if (const QString keep = keepDir(); !keep.isEmpty()) {
        m_window->grab().save(QDir(keep).filePath(QStringLiteral("habits_window.png")));
    }
}

QTEST_MAIN(TestUndo)
#include "tst_undo.moc"
