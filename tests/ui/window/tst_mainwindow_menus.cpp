// Tests of the main window's menus, shortcuts, undo and files: shortcuts are unique, the View
// menu lists the tab and mode actions, the window's shortcuts win over a focused editor while
// Ctrl+Z stays the editor's until the focus leaves it, Play is one undo step, a session file
// dropped on the window opens, File → Open Recent holds tensor files, and opening a file shows
// every cell.

#include "mainwindowtest.h"

#include "core/io/npy.h"
#include "ui/panels/playpanel.h"
#include "ui/views/attentionviews.h"
#include "ui/views/heatmapwidget.h"
#include "ui/window/recentfiles.h"
#include "ui/window/sessioncontroller.h"
#include "ui/window/shortcuts.h"
#include "ui/window/tensorcontroller.h"

#include <QAction>
#include <QApplication>
#include <QDir>
#include <QDragEnterEvent>
#include <QDropEvent>
#include <QFile>
#include <QLineEdit>
#include <QMenu>
#include <QMenuBar>
#include <QMimeData>
#include <QSet>
#include <QSignalSpy>
#include <QSlider>
#include <QSpinBox>
#include <QTemporaryDir>
#include <QTest>
#include <QUndoStack>
#include <QUrl>

using namespace attn;
using mainwindowtest::ResultPtr;

class TestMainWindowMenus : public mainwindowtest::MainWindowTest
{
    Q_OBJECT

private slots:
    void init() { openWindow(); }
    void cleanup() { closeWindow(); }

    void shortcutsAreUnique();
    void viewMenuListsTabActions();
    void windowShortcutsWinOverEditors_data();
    void windowShortcutsWinOverEditors();
    void undoIsTheEditorsUntilFocusLeaves();
    void droppedFilesOpen();
    void playIsOneUndoStep();
    void openingAFileShowsEveryCell();
    void openRecentHoldsTensorFiles();
};

void TestMainWindowMenus::shortcutsAreUnique()
{
    const QList<QAction *> actions = m_window->shortcuts()->actions();
    QVERIFY(actions.size() >= 12);
    QSet<QString> seen;
    for (QAction *a : actions) {
        const QString key = a->shortcut().toString(QKeySequence::PortableText);
        QVERIFY2(!seen.contains(key), qPrintable(QStringLiteral("duplicate shortcut %1").arg(key)));
        seen.insert(key);
    }
    QVERIFY(seen.contains(QStringLiteral("Ctrl+E")));
    QVERIFY(seen.contains(QStringLiteral("F1")));
}

void TestMainWindowMenus::viewMenuListsTabActions()
{
    AttentionViews *views = m_window->attentionViews();
    const QList<QAction *> tabActions = views->tabActions();
    QCOMPARE(tabActions.size(), 8);
    QMenu *viewMenu = nullptr;
    for (QAction *a : m_window->menuBar()->actions()) {
        if (a->menu() && a->text().remove(QLatin1Char('&')) == QLatin1String("View"))
            viewMenu = a->menu();
    }
    QVERIFY(viewMenu);
    const QList<QAction *> shortcuts
        = m_window->shortcuts()->actions(); // Help → Keyboard shortcuts
    for (int tab = 0; tab < tabActions.size(); ++tab) {
        QAction *a = tabActions[tab];
        QVERIFY2(viewMenu->actions().contains(a), qPrintable(a->text()));
        QVERIFY(shortcuts.contains(a));
        QCOMPARE(a->shortcut(), QKeySequence(QStringLiteral("Ctrl+Alt+%1").arg(tab + 1)));
    }
    // The mode actions (Attention / Experiments) are there too.
    int modes = 0;
    for (QAction *a : viewMenu->actions())
        modes += a->shortcut() == QKeySequence(QStringLiteral("Ctrl+1"))
            || a->shortcut() == QKeySequence(QStringLiteral("Ctrl+2"));
    QCOMPARE(modes, 2);
    // From the experiments, a tab action brings the attention mode back on that tab.
    m_window->modeTabs()->setCurrentIndex(1);
    tabActions[AttentionViews::CompareTab]->trigger();
    QCOMPARE(m_window->modeTabs()->currentIndex(), 0);
    QCOMPARE(views->currentIndex(), int(AttentionViews::CompareTab));
    tabActions[AttentionViews::StepsTab]->trigger();
    QCOMPARE(views->currentIndex(), int(AttentionViews::StepsTab));
}

// Play drives the session's α through the controls' path: the heatmaps' result ends at the last
// frame's value, the whole animation is one undo step (undo returns to α before Play), and an
// edit of a control while playing pauses it and is a step of its own.
void TestMainWindowMenus::playIsOneUndoStep()
{
    QVERIFY(waitForFirstResult());
    AttentionSession *session = m_window->session();
    QUndoStack *undo = m_window->sessionController()->undoStack();
    const int before = undo->count();
    const double alphaBefore = session->parameters().scaleExponent;
    PlayPanel *play = m_window->playPanel();
    PlaySettings s;
    s.parameter = PlayParameter::ScaleExponent;
    s.from = 0;
    s.to = 0.8;
    s.frames = 5;
    s.framesPerSecond = 20;
    play->setSettings(s);
    play->play();
    QTRY_VERIFY_WITH_TIMEOUT(!play->isPlaying(), attn::test::kWorkTimeoutMs);
    QTRY_VERIFY_WITH_TIMEOUT(!session->isBusy(), attn::test::kWorkTimeoutMs);
    QCOMPARE(session->parameters().scaleExponent, 0.8);
    QTRY_COMPARE(session->result()->params.scaleExponent, 0.8);
    QCOMPARE(undo->count(), before + 1);
    undo->undo();
    QCOMPARE(session->parameters().scaleExponent, alphaBefore);

    // A control edit while playing: Play pauses, the edit is its own step.
    s.framesPerSecond = 1;
    s.loop = true;
    play->setSettings(s);
    play->play();
    QVERIFY(play->isPlaying());
    QTRY_COMPARE(session->parameters().scaleExponent, 0.0); // the first frame, once not busy
    const int during = undo->count();
    control<QSlider>("alphaSlider")->setValue(30);
    QVERIFY(!play->isPlaying());
    QCOMPARE(session->parameters().scaleExponent, 0.3);
    QCOMPARE(undo->count(), during + 1);
    QTest::qWait(1200); // a paused Play sends nothing more
    QCOMPARE(session->parameters().scaleExponent, 0.3);
}

namespace {

QAction *actionWithShortcut(const MainWindow &window, const QKeySequence &key)
{
    for (QAction *a : window.shortcuts()->actions())
        if (a->shortcuts().contains(key))
            return a;
    return nullptr;
}

QWidget *editorNamed(const MainWindow &window, const QString &name)
{
    return window.findChild<QWidget *>(name);
}

} // namespace

// Ctrl+E, F5, Ctrl+K … while a line edit or spin box has the focus: the window's action fires
// (QLineEdit would take Ctrl+E as end of line, Ctrl+K as delete to end of line).
void TestMainWindowMenus::windowShortcutsWinOverEditors_data()
{
    QTest::addColumn<QString>("editor");
    QTest::addColumn<QKeySequence>("key");
    const QList<QKeySequence> keys = {
        QKeySequence(Qt::CTRL | Qt::Key_E),
        QKeySequence(Qt::CTRL | Qt::SHIFT | Qt::Key_E),
        QKeySequence(Qt::Key_F5),
        QKeySequence(Qt::CTRL | Qt::Key_K),
        QKeySequence(Qt::CTRL | Qt::Key_PageDown),
        QKeySequence(Qt::CTRL | Qt::Key_PageUp),
        QKeySequence(Qt::CTRL | Qt::ALT | Qt::Key_2),
    };
    for (const char *editor : {"nSpin", "tokensEdit", "temperatureSpin", "hideKeysEdit"}) {
        for (const QKeySequence &key : keys)
            QTest::addRow("%s %s", editor, qPrintable(key.toString()))
                << QString::fromLatin1(editor) << key;
    }
}

void TestMainWindowMenus::windowShortcutsWinOverEditors()
{
    QFETCH(QString, editor);
    QFETCH(QKeySequence, key);
    QVERIFY(waitForFirstResult());
    QAction *action = actionWithShortcut(*m_window, key);
    QVERIFY2(action, qPrintable(key.toString()));
    QVERIFY(m_window->shortcuts()->isWindowShortcut(key));
    // Only whether it fires: no file dialog, no recompute.
    QObject::disconnect(action, &QAction::triggered, nullptr, nullptr);
    QSignalSpy triggered(action, &QAction::triggered);

    m_window->activateWindow();
    QVERIFY(QTest::qWaitForWindowActive(m_window.get()));
    QWidget *w = editorNamed(*m_window, editor);
    QVERIFY2(w, qPrintable(editor));
    w->setFocus(Qt::OtherFocusReason);
    QTRY_VERIFY(w->hasFocus());
    const QString before = w->property("text").toString();
    QTest::keyClick(w, key[0].key(), key[0].keyboardModifiers());
    QCOMPARE(triggered.count(), 1);
    QCOMPARE(w->property("text").toString(), before); // not edited by the key
}

// Ctrl+Z in a focused spin box is the box's own (standard); once the focus leaves it, Ctrl+Z
// undoes the parameter change.
void TestMainWindowMenus::undoIsTheEditorsUntilFocusLeaves()
{
    QVERIFY(waitForFirstResult());
    QVERIFY(!m_window->shortcuts()->isWindowShortcut(QKeySequence::Undo));
    QVERIFY(!m_window->shortcuts()->isWindowShortcut(QKeySequence(Qt::CTRL | Qt::Key_C)));
    QVERIFY(!m_window->shortcuts()->isWindowShortcut(QKeySequence(Qt::Key_E))); // typing
    QAction *undo = actionWithShortcut(*m_window, QKeySequence(Qt::CTRL | Qt::Key_Z));
    QVERIFY(undo);
    QSignalSpy undone(undo, &QAction::triggered);

    m_window->activateWindow();
    QVERIFY(QTest::qWaitForWindowActive(m_window.get()));
    auto *n = control<QSpinBox>("nSpin");
    const int start = m_window->session()->parameters().n;
    const int wanted = start == 12 ? 13 : 12;
    n->setFocus(Qt::OtherFocusReason);
    QTRY_VERIFY(n->hasFocus());
    n->selectAll();
    QTest::keyClicks(n, QString::number(wanted));
    QTest::keyClick(n, Qt::Key_Return);
    QCOMPARE(m_window->session()->parameters().n, wanted);
    QTest::keyClick(n, Qt::Key_Z, Qt::ControlModifier);
    QCOMPARE(undone.count(), 0); // the spin box's own undo

    m_window->heatmapWidget()->setFocus(Qt::OtherFocusReason);
    QTRY_VERIFY(!n->hasFocus());
    QTest::keyClick(m_window->heatmapWidget(), Qt::Key_Z, Qt::ControlModifier);
    QCOMPARE(undone.count(), 1);
    QCOMPARE(m_window->session()->parameters().n, start);
    QCOMPARE(n->value(), start);
}

// A session file dropped on the window opens as File → Open Session does; a text drag or a file
// of another kind is not taken (the widgets keep their own drops).
void TestMainWindowMenus::droppedFilesOpen()
{
    QVERIFY(waitForFirstResult());
    QTemporaryDir dir;
    const QString path = dir.filePath(QStringLiteral("dropped.attnlab.json"));
    QFile file(path);
    QVERIFY(file.open(QIODevice::WriteOnly));
    file.write(R"({"format":"attnlab-session","version":1,
 "parameters":{"version":1,"n":9,"n_k":9,"d_model":24,"heads":3,"seed":"5","kind":"encoder",
 "mask":"causal","padding":2,"scale_exponent":0.5,"temperature":1,"positional":false,
 "dtype":"float64"}})");
    file.close();
    const QPoint centre = m_window->rect().center();
    const auto dragAccepted = [&](QMimeData &mime) {
        QDragEnterEvent enter(centre, Qt::CopyAction, &mime, Qt::LeftButton, Qt::NoModifier);
        QApplication::sendEvent(m_window.get(), &enter);
        return enter.isAccepted();
    };
    QMimeData text;
    text.setText(QStringLiteral("the cat sat"));
    QVERIFY(!dragAccepted(text));
    QMimeData other;
    other.setUrls({QUrl::fromLocalFile(dir.filePath(QStringLiteral("notes.txt")))});
    QVERIFY(!dragAccepted(other));

    QMimeData mime;
    mime.setUrls({QUrl::fromLocalFile(dir.filePath(QStringLiteral("notes.txt"))),
                  QUrl::fromLocalFile(path)});
    QVERIFY(dragAccepted(mime));
    QDropEvent drop(QPointF(centre), Qt::CopyAction, &mime, Qt::LeftButton, Qt::NoModifier);
    QApplication::sendEvent(m_window.get(), &drop);
    QVERIFY(drop.isAccepted());
    QTRY_COMPARE_WITH_TIMEOUT(m_window->session()->parameters().n, 9, attn::test::kWorkTimeoutMs);
    const SessionParameters p = m_window->session()->parameters();
    QCOMPARE(p.dModel, 24);
    QCOMPARE(p.heads, 3);
    QCOMPARE(p.mask, MaskChoice::Causal);
    QCOMPARE(m_window->sessionController()->filePath(), path);
}

void TestMainWindowMenus::openingAFileShowsEveryCell()
{
    // A zoom into one file's cells does not carry over to the next file of the same shape, nor
    // to a session that names no zoom.
    QVERIFY(waitForFirstResult());
    QTemporaryDir dir;
    QVERIFY(dir.isValid());
    const auto weightsFile = [&dir](const QString &name, int shift) {
        NpyArray a;
        a.shape = {2, 32, 32};
        a.type = NpyType::Float64;
        a.values.resize(std::size_t(a.size()));
        for (std::size_t row = 0; row < a.values.size() / 32; ++row) {
            double sum = 0;
            for (std::size_t j = 0; j < 32; ++j)
                sum += a.values[row * 32 + j] = 1.0 + double((row * 7 + j * 3 + shift) % 11);
            for (std::size_t j = 0; j < 32; ++j)
                a.values[row * 32 + j] /= sum;
        }
        const QString path = dir.filePath(name);
        writeNpy(path.toStdString(), a);
        return path;
    };
    const QString first = weightsFile(QStringLiteral("first.npy"), 0);
    const QString second = weightsFile(QStringLiteral("second.npy"), 5);
    HeatmapWidget *heatmap = m_window->heatmapWidget();
    AttentionSession *session = m_window->session();
    const auto settle = [session] {
        return QTest::qWaitFor([session] { return !session->isBusy(); },
                               attn::test::kWorkTimeoutMs);
    };
    QString error;
    QVERIFY2(m_window->tensorController()->openFile(first, &error), qPrintable(error));
    QVERIFY(settle());
    QTRY_COMPARE(heatmap->result()->keyCount(), 32);
    heatmap->zoomBy(4.0);
    QVERIFY(heatmap->isZoomed());

    QVERIFY2(m_window->tensorController()->openFile(second, &error), qPrintable(error));
    QVERIFY(settle());
    QTest::qWait(50);
    QCOMPARE(heatmap->result()->keyCount(), 32);
    QVERIFY(!heatmap->isZoomed());
    QCOMPARE(heatmap->visibleCells(), QRect(0, 0, 32, 32));

    // A session saved unzoomed opens unzoomed.
    const QString sessionPath = dir.filePath(QStringLiteral("unzoomed.attnlab.json"));
    QVERIFY2(m_window->sessionController()->saveFile(sessionPath, &error), qPrintable(error));
    heatmap->zoomBy(4.0);
    QVERIFY(heatmap->isZoomed());
    QVERIFY2(m_window->sessionController()->openFile(sessionPath, &error), qPrintable(error));
    QVERIFY(settle());
    QTest::qWait(50);
    QVERIFY(!heatmap->isZoomed());
}

void TestMainWindowMenus::openRecentHoldsTensorFiles()
{
    // A tensor file opened joins File → Open Recent beside the sessions, and opens from there.
    QVERIFY(waitForFirstResult());
    RecentFiles *recent = m_window->sessionController()->recentFiles();
    recent->clear();
    QTemporaryDir dir;
    QVERIFY(dir.isValid());
    NpyArray a;
    a.shape = {1, 8, 8};
    a.type = NpyType::Float64;
    a.values.assign(64, 1.0 / 8);
    const QString tensors = QDir(dir.path()).absoluteFilePath(QStringLiteral("weights.npy"));
    writeNpy(tensors.toStdString(), a);
    QVERIFY(m_window->tensorController()->open(tensors));
    QCOMPARE(recent->files(), QStringList {tensors});
    const QList<QAction *> entries = recent->menu()->actions();
    QVERIFY(!entries.isEmpty());
    QVERIFY2(entries.constFirst()->text().contains(QLatin1String("weights.npy")),
             qPrintable(entries.constFirst()->text()));

    // Back to random inputs, then the recent entry loads the file again.
    m_window->tensorController()->backToRandomInputs();
    QTRY_VERIFY(!m_window->session()->parameters().tensors);
    entries.constFirst()->trigger();
    QTRY_VERIFY(m_window->session()->parameters().tensors);
    QCOMPARE(m_window->tensorController()->loadedPath(), tensors);
}

QTEST_MAIN(TestMainWindowMenus)
#include "tst_mainwindow_menus.moc"
