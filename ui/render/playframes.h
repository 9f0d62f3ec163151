#pragma once
// A Play's frames as files: for every value of the schedule (core/engine/playschedule.h) the
// session's parameters with that value (applyPlayValue), computed (computeSession) and drawn by the
// heads view's renderer (HeatmapRenderer) into frame_000.png, frame_001.png, … with the frame and
// the value first in each caption, plus frames.csv naming every frame's parameters. Safe on any
// thread (no widgets): the window runs it on a JobRunner, `attnlab animate` directly.

#include "ui/render/heatmaprenderer.h"
#include "ui/session/playsettings.h"

#include "core/base/cancel.h"

#include <QSize>
#include <QString>

#include <functional>
#include <vector>

namespace attn {

/// What one written frame shows.
struct PlayFrame
{
    int index = 0; ///< 0 … frames−1
    double value = 0; ///< the schedule's value
    SessionParameters parameters; ///< the parameters computed and drawn
    QString file; ///< the PNG's file name in the folder ("frame_003.png")
    QString caption; ///< the caption's first part ("frame 4/21: α = 0.15")
};

/// "frame_000.png" … : three digits (four from 1000 frames on).
QString playFrameFileName(int index, int frames);

/// Writes the frames of `settings` over `base` into `folder` (created if missing) as PNG images
/// of `size` logical pixels at `dpr`, drawn with `options` (the view, colormap, range of the
/// heads view), and frames.csv: `frame,file,parameter,value,d_model,heads,d_k,alpha,tau`.
/// `progress(done, total)` after each frame. Returns false with `error` naming the frame and
/// the problem (a schedule core refuses, parameters that cannot be computed, a write failure);
/// frames written before stay. Throws Cancelled when `cancel` says so between frames.
/// `written` (optional) receives every frame written, in order.
bool writePlayFrames(const SessionParameters &base, const HeatmapOptions &options,
                     const PlaySettings &settings, const QString &folder, QSize size, qreal dpr,
                     QString *error, std::vector<PlayFrame> *written = nullptr,
                     const std::function<void(int, int)> &progress = {},
                     const CancelToken &cancel = {});

} // namespace attn
