#pragma once
// What the session file tests (tst_sessionfile.cpp: files, round trips, refusals, tensors and
// the command line; tst_sessionwindow.cpp: the window's unsaved changes, prompts, last session
// and recent files) share: parameters, views and transforms to save, a rendered document,
// files read and written, a window that has computed, and an answer to the next message box.

#include "windowtest.h"

#include "ui/document/sessionfile.h"
#include "ui/panels/controlpanel.h"
#include "ui/render/heatmaprenderer.h"
#include "ui/session/attentionsession.h"
#include "ui/session/sessioncompute.h"
#include "ui/session/tensorsource.h"
#include "ui/views/attentionviews.h"
#include "ui/views/compareview.h"
#include "ui/views/heatmapwidget.h"
#include "ui/views/stepsview.h"
#include "ui/window/mainwindow.h"
#include "ui/window/recentfiles.h"
#include "ui/window/sessioncontroller.h"
#include "ui/window/tensorcontroller.h"

#include "core/io/npy.h"

#include <QApplication>
#include <QDir>
#include <QFile>
#include <QFileDialog>
#include <QFileInfo>
#include <QJsonArray>
#include <QJsonDocument>
#include <QJsonObject>
#include <QLineEdit>
#include <QMenu>
#include <QMessageBox>
#include <QProcess>
#include <QPushButton>
#include <QSettings>
#include <QSignalSpy>
#include <QSpinBox>
#include <QStandardPaths>
#include <QTemporaryDir>
#include <QTest>
#include <QTimer>
#include <QUndoStack>

#include <memory>

using namespace attn;

namespace sessiontest {

using ResultPtr = std::shared_ptr<const SessionResult>;

inline SessionParameters makeParameters(int variant)
{
    SessionParameters p;
    switch (variant) {
    case 0: // defaults
        break;
    case 1: // decoder, float32, positional encoding, tokens
        p.kind = AttentionKind::DecoderCausal;
        p.n = 6;
        p.dModel = 48;
        p.heads = 3;
        p.dtype = DType::Float32;
        p.positional = true;
        p.setTokens({QStringLiteral("the"), QStringLiteral("cat"), QStringLiteral("sat"),
                     QStringLiteral("on"), QStringLiteral("the"), QStringLiteral("mat")});
        p.seed = 7;
        break;
    case 2: // cross-attention with key padding, unusual scale and temperature
        p.kind = AttentionKind::EncoderDecoder;
        p.n = 5;
        p.nK = 9;
        p.mask = MaskChoice::KeyPadding;
        p.paddingCount = 3;
        p.scaleExponent = 0.3;
        p.temperature = 2.5;
        p.dModel = 32;
        p.heads = 2;
        p.seed = 123456789;
        break;
    case 3: // a seed above 2^53 (JSON numbers would round it), unscaled, causal
        p.seed = 18446744073709551557ull;
        p.scaleExponent = 0.0;
        p.mask = MaskChoice::Causal;
        p.n = 11;
        p.dModel = 16;
        p.heads = 1;
        break;
    }
    return p;
}

inline HeatmapOptions makeOptions(int variant)
{
    HeatmapOptions o;
    if (variant == 1) {
        o.view = HeatmapView::SingleHead;
        o.head = 2;
        o.colormap = ColormapId::Magma;
        o.scale = ColorScale::Log;
        o.window = QRect(1, 2, 4, 3); // zoomed: keys 1 … 4, queries 2 … 4
        o.pinnedQuery = 3; // inside the window
        o.headSort = HeadOrderKey::MaxWeight; // saved, though one head shows
    } else if (variant == 2) {
        o.colormap = ColormapId::Cividis;
        o.autoRange = true;
        o.showMean = false;
        o.headSort = HeadOrderKey::Entropy;
        o.headSortDescending = true;
        o.pinnedQuery = 1;
        o.fitAll = true; // every head in sight, two per row
        o.headsPerRow = 2;
    } else if (variant == 3) {
        o.view = HeatmapView::SingleHead;
        o.head = 0;
        o.colormap = ColormapId::Grayscale;
        o.pooling = HeatmapPooling::Mean;
    }
    return o;
}

inline ViewTransform makeTransform(int variant)
{
    ViewTransform t;
    if (variant == 1)
        t.hiddenKeys = {0}; // a BOS-like first token, rows renormalised
    else if (variant == 2)
        t.trimPadding = true;
    else if (variant == 3) {
        t.hiddenKeys = {0, 3};
        t.renormalize = false;
    }
    return t;
}

/// The view state of a variant: heatmap options and the trim/hide-keys transform.
inline QJsonObject makeView(int variant)
{
    return QJsonObject {{QStringLiteral("heatmap"), heatmapViewToJson(makeOptions(variant))},
                        {QStringLiteral("transform"), viewTransformToJson(makeTransform(variant))},
                        {QStringLiteral("row_strip"), variant != 2}};
}

inline QImage renderDocument(const SessionParameters &p, const HeatmapOptions &options,
                             const ViewTransform &transform)
{
    auto result = std::make_shared<SessionResult>(computeSession(p));
    if (!result->ok())
        return {};
    const auto shown = applyViewTransform(result, transform);
    if (!shown || !shown->ok())
        return {};
    HeatmapRenderer renderer;
    renderer.setOptions(options);
    renderer.setResult(shown);
    return renderer.render(QSize(900, 560), 1.0);
}

inline QByteArray readAll(const QString &path)
{
    QFile f(path);
    return f.open(QIODevice::ReadOnly) ? f.readAll() : QByteArray();
}

inline bool writeAll(const QString &path, const QByteArray &data)
{
    QFile f(path);
    return f.open(QIODevice::WriteOnly | QIODevice::Truncate) && f.write(data) == data.size();
}

/// Waits until the window's session shows a result for exactly `p`.
inline bool waitForResult(MainWindow *w, const SessionParameters &p)
{
    return QTest::qWaitFor(
        [&] {
            const auto r = w->session()->result();
            return r && r->params == p && !w->session()->isBusy()
                && w->heatmapWidget()->sessionResult() == r
                && !w->heatmapWidget()->isTransforming();
        },
        20000);
}

/// A shown window whose first (random) result is in; null when the window is never exposed.
inline std::unique_ptr<MainWindow> newWindow()
{
    auto w = std::make_unique<MainWindow>();
    w->show();
    if (!QTest::qWaitForWindowExposed(w.get()))
        return nullptr;
    waitForResult(w.get(), w->session()->parameters());
    return w;
}

/// Closes `window` as saved, so that no quit prompt appears.
inline void closeWindow(std::unique_ptr<MainWindow> &window)
{
    if (window)
        window->sessionController()->undoStack()->setClean();
    window.reset();
}

using windowtest::answerNextMessageBox;
using windowtest::MessageBoxAnswer;

} // namespace sessiontest
