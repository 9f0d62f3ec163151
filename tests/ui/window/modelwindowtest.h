#pragma once
// What the model window tests share (tst_modelwindow_run.cpp: a run in the Model, Heads, Long and
// Atlas tabs and the next-token readout; tst_modelwindow_files.cpp: the cache scan, broken folders,
// sessions, Cancel and the token strip): the committed fixture checkpoints of
// tests/reference/fixtures/models/ with their expected arrays and ids, and a shown window that
// opens and runs a model.

#include "testutil.h"

#include "core/io/npy.h"
#include "ui/session/attentionsession.h"
#include "ui/session/modelrun.h"
#include "ui/window/mainwindow.h"
#include "ui/window/modelcontroller.h"

#include <QString>
#include <QStringList>
#include <QTest>

namespace modelwindowtest {

using namespace attn;

/// The folder of the fixture checkpoint `name` (tests/reference/fixtures/models/<name>).
inline QString fixtureFolder(const QString &name)
{
    return QStringLiteral(ATTN_FIXTURE_DIR "/models/%1").arg(name);
}

/// The array `member` of the fixture's expected.npz (PyTorch's reference).
inline NpyArray expected(const QString &name, const char *member)
{
    return readNpzMember((fixtureFolder(name) + QStringLiteral("/expected.npz")).toStdString(),
                         member);
}

/// The fixture's ids as the text the panel takes ("3, 17, 5").
inline QString idsText(const QString &name)
{
    QStringList parts;
    for (const double v : expected(name, "ids").values)
        parts << QString::number(qint64(v));
    return parts.join(QStringLiteral(", "));
}

/// A shown window whose first (random) result is in.
struct Window
{
    MainWindow window;
    bool start()
    {
        window.resize(1280, 800);
        window.show();
        if (!QTest::qWaitForWindowExposed(&window))
            return false;
        AttentionSession *s = window.session();
        return QTest::qWaitFor([&] { return s->result() && !s->isBusy(); },
                               attn::test::kWorkTimeoutMs);
    }
    ModelController *models() const { return window.modelController(); }
    /// Opens `folder`, types `text` (ids when `ids`) and waits for the run to be shown.
    bool run(const QString &folder, const QString &text, bool ids, QString *error)
    {
        if (!models()->openFolder(folder, error))
            return false;
        models()->setText(text, ids);
        if (!models()->run(error))
            return false;
        models()->waitForRun();
        AttentionSession *s = window.session();
        return QTest::qWaitFor(
            [&] {
                return models()->lastRun() && s->result() && !s->isBusy()
                    && s->parameters().tensors == models()->lastRun()->source;
            },
            attn::test::kWorkTimeoutMs);
    }
    /// start(), then run() on the gpt2 fixture's reference ids.
    bool startWithGpt2(QString *error)
    {
        if (!start()) {
            *error = QStringLiteral("the window shows no first result");
            return false;
        }
        return run(fixtureFolder(QStringLiteral("gpt2")), idsText(QStringLiteral("gpt2")), true,
                   error);
    }
};

} // namespace modelwindowtest
