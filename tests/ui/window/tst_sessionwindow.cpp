// The window and its session: the title marks unsaved changes (of the parameters and of the view
// state sessions keep) and quitting asks only when there are some; Open Session asks once,
// Cancel by default; QSettings restores the last session and the Play dock's frame size; the
// recent files list.

#include "ui/sessiontest.h"

#include "ui/panels/playpanel.h"
#include "ui/views/longmapview.h"

#include <QCheckBox>
#include <QComboBox>

using namespace sessiontest;

class TestSessionWindow : public QObject
{
    Q_OBJECT

private slots:
    void initTestCase();
    void init();
    void cleanup();

    void titleMarksUnsavedChanges();
    void quitPromptsOnlyWhenModified();
    void openSessionPromptsOnce_data();
    void openSessionPromptsOnce();
    void settingsRestoreLastSession();
    void recentFiles();
    void viewEditsMarkModified();
    void playFrameSizeSurvivesRestart();

private:
    QTemporaryDir m_dir;
    std::unique_ptr<MainWindow> m_window;
};

void TestSessionWindow::initTestCase()
{
    QVERIFY(m_dir.isValid());
    QStandardPaths::setTestModeEnabled(true); // never touch the user's QSettings
}

void TestSessionWindow::init()
{
    m_window = newWindow();
    QVERIFY(m_window);
}

void TestSessionWindow::cleanup()
{
    closeWindow(m_window);
}

void TestSessionWindow::titleMarksUnsavedChanges()
{
    SessionController *c = m_window->sessionController();
    QVERIFY(m_window->windowTitle().contains(QStringLiteral("[*]")));
    QVERIFY(!m_window->isWindowModified());
    QSignalSpy modified(c, &SessionController::modifiedChanged);
    m_window->controlPanel()->findChild<QSpinBox *>(QStringLiteral("seedSpin"))->setValue(17);
    QVERIFY(m_window->isWindowModified());
    QCOMPARE(modified.count(), 1);
    c->undoAction()->trigger(); // back to the saved state: clean again
    QVERIFY(!m_window->isWindowModified());
    c->redoAction()->trigger();
    QVERIFY(m_window->isWindowModified());

    const QString path = m_dir.filePath(QStringLiteral("titled.attnlab.json"));
    QString error;
    QVERIFY2(c->saveFile(path, &error), qPrintable(error));
    QVERIFY(!m_window->isWindowModified());
    QCOMPARE(m_window->windowTitle(), QStringLiteral("titled.attnlab.json[*]"));
}

void TestSessionWindow::quitPromptsOnlyWhenModified()
{
    // Unmodified: closes without asking.
    {
        auto w = newWindow();
        QVERIFY(w);
        QVERIFY(w->close());
        QVERIFY(!w->isVisible());
        QVERIFY(!QApplication::activeModalWidget());
    }
    // Modified: asks; Cancel keeps the window open, Discard closes it.
    auto w = newWindow();
    QVERIFY(w);
    w->sessionController()->editParameters(makeParameters(2));
    QVERIFY(w->sessionController()->isModified());
    auto answer = answerNextMessageBox(QMessageBox::Cancel);
    QVERIFY(!w->close());
    QVERIFY(answer->seen);
    QVERIFY2(answer->text.contains(QStringLiteral("Untitled")), qPrintable(answer->text));
    QVERIFY(w->isVisible());
    answer = answerNextMessageBox(QMessageBox::Discard);
    QVERIFY(w->close());
    QVERIFY(answer->seen);
    QVERIFY(!w->isVisible());
}

void TestSessionWindow::openSessionPromptsOnce_data()
{
    QTest::addColumn<int>("answer"); // QMessageBox::StandardButton given to the prompt
    QTest::addColumn<bool>("opens");
    QTest::newRow("discard, then open") << int(QMessageBox::Discard) << true;
    QTest::newRow("cancel: no file dialog") << int(QMessageBox::Cancel) << false;
}

void TestSessionWindow::openSessionPromptsOnce()
{
    // File → Open Session with unsaved changes: one "Save the changes?" prompt, before the file
    // dialog, whose default button (Enter) and Escape are Cancel, never Save (which would
    // overwrite the old session).
    QFETCH(int, answer);
    QFETCH(bool, opens);
    SessionController *c = m_window->sessionController();
    const QString other = m_dir.filePath(QStringLiteral("to-open.attnlab.json"));
    QString error;
    QVERIFY2(c->saveFile(other, &error), qPrintable(error));
    c->editParameters(makeParameters(2));
    const QString saved = m_dir.filePath(QStringLiteral("kept.attnlab.json"));
    QVERIFY2(c->saveFile(saved, &error), qPrintable(error));
    const QByteArray savedBytes = [&] {
        QFile f(saved);
        return f.open(QIODevice::ReadOnly) ? f.readAll() : QByteArray();
    }();
    c->editParameters(makeParameters(3));
    QVERIFY(c->isModified());

    int prompts = 0;
    int fileDialogs = 0;
    bool cancelIsDefault = false;
    bool cancelIsEscape = false;
    auto poll = std::make_shared<std::function<void()>>();
    *poll = [&, poll] {
        if (!*poll)
            return; // the test is over
        QWidget *modal = QApplication::activeModalWidget();
        if (auto *box = qobject_cast<QMessageBox *>(modal)) {
            ++prompts;
            if (box->objectName() == QStringLiteral("unsavedChangesPrompt")) {
                cancelIsDefault = box->defaultButton() == box->button(QMessageBox::Cancel);
                cancelIsEscape = box->escapeButton() == box->button(QMessageBox::Cancel);
            }
            box->done(answer);
        } else if (auto *dialog = qobject_cast<QFileDialog *>(modal)) {
            ++fileDialogs;
            dialog->setDirectory(m_dir.path());
            if (auto *name = dialog->findChild<QLineEdit *>(QStringLiteral("fileNameEdit")))
                name->setText(QFileInfo(other).fileName());
            QMetaObject::invokeMethod(dialog, "accept", Qt::QueuedConnection);
        }
        QTimer::singleShot(20, *poll);
    };
    QTimer::singleShot(20, *poll);
    c->openAction()->trigger();
    QTest::qWait(100); // a second prompt after the file dialog would come now
    *poll = nullptr;

    QCOMPARE(prompts, 1);
    QVERIFY(cancelIsDefault);
    QVERIFY(cancelIsEscape);
    QCOMPARE(fileDialogs, opens ? 1 : 0);
    QCOMPARE(c->filePath(), QFileInfo(opens ? other : saved).absoluteFilePath());
    QCOMPARE(c->isModified(), !opens);
    QFile f(saved);
    QVERIFY(f.open(QIODevice::ReadOnly));
    QCOMPARE(f.readAll(), savedBytes); // the old session was not overwritten
}

void TestSessionWindow::settingsRestoreLastSession()
{
    const QString ini = m_dir.filePath(QStringLiteral("settings.ini"));
    QFile::remove(ini);
    const SessionParameters p = makeParameters(1);
    m_window->sessionController()->editParameters(p);
    QJsonObject view;
    view.insert(QStringLiteral("heatmap"), heatmapViewToJson(makeOptions(1)));
    m_window->setViewState(view);
    m_window->resize(m_window->size() + QSize(37, 23)); // not the default size
    const QSize size = m_window->size();
    QVERIFY(size != m_window->sizeHint());
    const QString saved = m_dir.filePath(QStringLiteral("recent.attnlab.json"));
    QString error;
    QVERIFY2(m_window->sessionController()->saveFile(saved, &error), qPrintable(error));
    {
        QSettings settings(ini, QSettings::IniFormat);
        m_window->saveSettings(settings);
    }

    auto other = std::make_unique<MainWindow>();
    {
        QSettings settings(ini, QSettings::IniFormat);
        other->restoreSettings(settings);
    }
    other->show();
    QVERIFY(QTest::qWaitForWindowExposed(other.get()));
    QCOMPARE(other->session()->parameters(), p);
    QCOMPARE(other->controlPanel()->parameters(), p);
    QCOMPARE(other->viewState(), m_window->viewState());
    QCOMPARE(other->size(), size);
    QVERIFY(!other->sessionController()->isModified());
    QVERIFY(other->sessionController()->filePath().isEmpty());
    QCOMPARE(other->sessionController()->recentFiles()->files(),
             QStringList {QFileInfo(saved).absoluteFilePath()});
    QVERIFY(waitForResult(other.get(), p));
}
void TestSessionWindow::recentFiles()
{
    RecentFiles recent;
    QSignalSpy requests(&recent, &RecentFiles::openRequested);
    QStringList paths;
    for (int i = 0; i < RecentFiles::maxCount + 2; ++i) {
        paths.append(m_dir.filePath(QStringLiteral("r%1.attnlab.json").arg(i)));
        QVERIFY(writeAll(paths.last(), "{}"));
        recent.add(paths.last());
    }
    QCOMPARE(recent.files().size(), RecentFiles::maxCount);
    QCOMPARE(recent.files().first(), paths.last()); // newest first
    recent.add(paths.at(5)); // again: moves to the top, no duplicate
    QCOMPARE(recent.files().first(), paths.at(5));
    QCOMPARE(recent.files().count(paths.at(5)), 1);

    // The menu: one action per file (numbered), then Clear.
    QList<QAction *> fileActions;
    for (QAction *a : recent.menu()->actions()) {
        if (!a->data().toString().isEmpty())
            fileActions.append(a);
    }
    QCOMPARE(fileActions.size(), RecentFiles::maxCount);
    QVERIFY(fileActions.first()->text().startsWith(QStringLiteral("&1 ")));
    fileActions.at(1)->trigger();
    QCOMPARE(requests.count(), 1);
    QCOMPARE(requests.at(0).at(0).toString(), recent.files().at(1));

    // Settings: entries whose file is gone are dropped when read back.
    const QString ini = m_dir.filePath(QStringLiteral("recent.ini"));
    QFile::remove(ini);
    {
        QSettings settings(ini, QSettings::IniFormat);
        recent.save(settings);
    }
    QVERIFY(QFile::remove(paths.at(5)));
    RecentFiles back;
    QSettings settings(ini, QSettings::IniFormat);
    back.load(settings);
    QStringList expected = recent.files();
    expected.removeAll(paths.at(5));
    QCOMPARE(back.files(), expected);
}

// What sessions keep of the view marks the session modified as the parameters do: Fit all
// (clean again when switched back), heads per row, Compare B's d_k, the Long tab's pooling, the
// Play settings; Quit then asks; saving makes it clean.
void TestSessionWindow::viewEditsMarkModified()
{
    SessionController *c = m_window->sessionController();
    QVERIFY(!m_window->isWindowModified());
    auto *fitAll = m_window->findChild<QCheckBox *>(QStringLiteral("fitAllCheck"));
    auto *perRow = m_window->findChild<QComboBox *>(QStringLiteral("headsPerRowCombo"));
    QVERIFY(fitAll && perRow);
    QSignalSpy modified(c, &SessionController::modifiedChanged);
    fitAll->click();
    QTRY_VERIFY(m_window->isWindowModified());
    QVERIFY(c->isModified());
    QCOMPARE(modified.count(), 1);
    fitAll->click(); // back as saved
    QTRY_VERIFY(!m_window->isWindowModified());
    QCOMPARE(modified.count(), 2);

    perRow->setCurrentIndex(perRow->findData(1));
    QTRY_VERIFY(m_window->isWindowModified());
    auto answer = answerNextMessageBox(QMessageBox::Cancel);
    QVERIFY(!m_window->close());
    QVERIFY(answer->seen);
    QVERIFY(m_window->isVisible());
    const QString path = m_dir.filePath(QStringLiteral("view.attnlab.json"));
    QString error;
    QVERIFY2(c->saveFile(path, &error), qPrintable(error));
    QVERIFY(!m_window->isWindowModified());

    CompareView *compare = m_window->attentionViews()->compareView();
    CompareVariant v = compare->variant();
    v.dK = v.dK == 8 ? 4 : 8;
    compare->setVariant(v);
    QTRY_VERIFY(m_window->isWindowModified());
    QVERIFY2(c->saveFile(path, &error), qPrintable(error));
    QVERIFY(!m_window->isWindowModified());

    LongMapView *longMap = m_window->attentionViews()->longMapView();
    longMap->setPooling(longMap->pooling() == TilePooling::Max ? TilePooling::Mean
                                                               : TilePooling::Max);
    QTRY_VERIFY(m_window->isWindowModified());
    QVERIFY2(c->saveFile(path, &error), qPrintable(error));
    QVERIFY(!m_window->isWindowModified());

    PlaySettings play = m_window->playPanel()->settings();
    play.frames += 1;
    m_window->playPanel()->setSettings(play);
    QTRY_VERIFY(m_window->isWindowModified());
    // The saved file has the view as it is now: opened again, nothing is modified.
    QVERIFY2(c->saveFile(path, &error), qPrintable(error));
    auto other = newWindow();
    QVERIFY(other);
    QVERIFY2(other->sessionController()->openFile(path, &error), qPrintable(error));
    QVERIFY(waitForResult(other.get(), m_window->session()->parameters()));
    QTest::qWait(100);
    QVERIFY(!other->isWindowModified());
    QCOMPARE(other->playPanel()->settings(), play);
    closeWindow(other);
}

// The Play dock's frame size (Export Frames…) is kept in QSettings: a window restored from them
// shows it; a size the dock refuses is ignored.
void TestSessionWindow::playFrameSizeSurvivesRestart()
{
    const QString ini = m_dir.filePath(QStringLiteral("frames.ini"));
    QFile::remove(ini);
    m_window->playPanel()->setFrameSize(QSize(640, 360));
    {
        QSettings settings(ini, QSettings::IniFormat);
        m_window->saveSettings(settings);
    }
    auto other = std::make_unique<MainWindow>();
    QCOMPARE(other->playPanel()->frameSize(), QSize(1200, 800));
    {
        QSettings settings(ini, QSettings::IniFormat);
        other->restoreSettings(settings);
    }
    QCOMPARE(other->playPanel()->frameSize(), QSize(640, 360));
    {
        QSettings settings(ini, QSettings::IniFormat);
        settings.setValue(QStringLiteral("play/frameSize"), QSize(20, 360));
    }
    auto third = std::make_unique<MainWindow>();
    {
        QSettings settings(ini, QSettings::IniFormat);
        third->restoreSettings(settings);
    }
    QCOMPARE(third->playPanel()->frameSize(), QSize(1200, 800));
    closeWindow(other);
    closeWindow(third);
}

QTEST_MAIN(TestSessionWindow)
#include "tst_sessionwindow.moc"
