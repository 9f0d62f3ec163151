#pragma once
// What the loaded-tensor tests (tst_opentensors.cpp: files, weights, tokens and exports;
// tst_tensorwindow.cpp: the Model tab and the window with loaded tensors) share: fixture paths,
// arrays built here, an answer to the next message box, and a session with its heatmap and
// tensor controller.

#include "testutil.h"
#include "ui/windowtest.h"

#include "core/analysis/metrics.h"
#include "core/io/npy.h"
#include "ui/charts/scalingchart.h"
#include "ui/export/weightsexport.h"
#include "ui/panels/controlpanel.h"
#include "ui/panels/tensorpanel.h"
#include "ui/render/modelrenderer.h"
#include "ui/session/attentionsession.h"
#include "ui/session/sessioncompute.h"
#include "ui/session/tensorsource.h"
#include "ui/views/attentionviews.h"
#include "ui/views/heatmapwidget.h"
#include "ui/views/modelview.h"
#include "ui/window/mainwindow.h"
#include "ui/window/sessioncontroller.h"
#include "ui/window/tensorcontroller.h"

#include <QAction>
#include <QApplication>
#include <QComboBox>
#include <QDockWidget>
#include <QFile>
#include <QImage>
#include <QLabel>
#include <QLineEdit>
#include <QMenu>
#include <QMenuBar>
#include <QMessageBox>
#include <QPainter>
#include <QPushButton>
#include <QRegularExpression>
#include <QSignalSpy>
#include <QSlider>
#include <QSpinBox>
#include <QTemporaryDir>
#include <QTest>
#include <QTimer>
#include <QUndoStack>

#include <cmath>
#include <functional>
#include <limits>
#include <memory>

using namespace attn;

namespace opentensorstest {

using ResultPtr = std::shared_ptr<const SessionResult>;

inline QString fixturePath(const QString &name)
{
    return QStringLiteral(ATTN_FIXTURE_DIR "/torch/%1.npz").arg(name);
}

inline NpyArray member(const QString &path, const char *name)
{
    return readNpzMember(path.toStdString(), name);
}

/// Array of the given shape with C-order element k equal to value(k).
inline NpyArray arrayOf(std::vector<std::int64_t> shape,
                        const std::function<double(std::size_t)> &value)
{
    NpyArray a;
    a.shape = std::move(shape);
    a.type = NpyType::Float64;
    a.values.resize(std::size_t(a.size()));
    for (std::size_t k = 0; k < a.values.size(); ++k)
        a.values[k] = value(k);
    return a;
}

/// Softmax-like rows: each row of n_k entries is positive and sums to 1 (up to rounding).
inline NpyArray probabilityRows(std::vector<std::int64_t> shape)
{
    const std::size_t nK = std::size_t(shape.back());
    NpyArray a = arrayOf(shape, [](std::size_t k) { return 1.0 + double((k * 7919) % 13); });
    for (std::size_t start = 0; start < a.values.size(); start += nK) {
        double sum = 0;
        for (std::size_t j = 0; j < nK; ++j)
            sum += a.values[start + j];
        for (std::size_t j = 0; j < nK; ++j)
            a.values[start + j] /= sum;
    }
    return a;
}

using windowtest::answerNextMessageBox;
using windowtest::MessageBoxAnswer;

/// A session, a heatmap and the controller, without the rest of the window.
struct Bench
{
    AttentionSession session;
    HeatmapWidget heatmap;
    TensorController controller {&session, &heatmap, nullptr};

    Bench()
    {
        QObject::connect(&session, &AttentionSession::resultChanged, &heatmap,
                         &HeatmapWidget::setResult);
    }
    /// Waits until the session has computed what was asked last; returns its result.
    ResultPtr settle()
    {
        if (!QTest::qWaitFor([this] { return !session.isBusy(); }, attn::test::kWorkTimeoutMs))
            return nullptr;
        return session.result();
    }
    ResultPtr start()
    {
        session.recompute();
        return settle();
    }
};

} // namespace opentensorstest
