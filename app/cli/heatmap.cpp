// attnlab heatmap: computes the main view (the same computeSession as the window) and writes
// the heatmap grid or one head with HeatmapRenderer (the window's painter), the steps view
// (StepsRenderer), the A/B comparison (CompareRenderer, the window's Compare view) or the
// positional encoding (PositionsRenderer, the Positions tab) to PNG, SVG or PDF.
// attnlab animate: the same options, and one of d_k, α, τ animated over a range: a PNG per frame
// of the Play schedule (writePlayFrames, what the window's Play → Export Frames writes).
// Both parse into a HeatmapRequest (parseHeatmapRequest, heatmapparse.cpp); heatmap then plans
// the outputs, the engine (full matrices or tiles) and the memory (planHeatmap → HeatmapPlan,
// heatmapplan.cpp) and runs the plan (runHeatmapPlan, heatmaprun.cpp); animate writes its
// frames (runAnimation, here).

#include "common.h"
#include "heatmaprequest.h"
#include "stagedfiles.h"

#include "ui/render/playframes.h"

#include <QDir>
#include <QFileInfo>
#include <QTextStream>

namespace attn::cli {

namespace {

/// animate: checks the frames' folder and values, then writes every frame and frames.csv.
int runAnimation(const QCommandLineParser &parser, HeatmapRequest &req)
{
    QString error;
    const QString outDir = parser.value(QStringLiteral("out-dir"));
    if (QFileInfo(outDir).exists() && !QFileInfo(outDir).isDir())
        return usageError(req.command,
                          QStringLiteral("--out-dir '%1' is not a folder").arg(outDir));
    if (!QDir().mkpath(outDir))
        return usageError(req.command,
                          QStringLiteral("--out-dir '%1' cannot be created").arg(outDir));
    if (req.p.queryCount() > SessionParameters::maxSequence
        || req.p.keyCount() > SessionParameters::maxSequence)
        return usageError(
            req.command,
            QStringLiteral("animate takes n and n_k up to %1").arg(SessionParameters::maxSequence));
    for (double v : {req.schedule.front(), req.schedule.back()}) {
        const QString bad = applyPlayValue(req.p, req.play.parameter, v).validate();
        if (!bad.isEmpty())
            return usageError(req.command,
                              QStringLiteral("--param %1 = %2: %3")
                                  .arg(parser.value(QStringLiteral("param")))
                                  .arg(v)
                                  .arg(bad));
    }
    // All or nothing: the frames and frames.csv are written into a staging folder beside them
    // and renamed into --out-dir once every one is complete, so a failure (a full disk) leaves
    // neither a partial frame nor a frames.csv of frames that are not there.
    StagedFiles staged;
    const QString staging = staged.folderFor(outDir, &error);
    if (staging.isEmpty())
        return failure(req.command, error);
    // The heads' frames draw differential attention's signed weights (the weights view).
    if (req.p.differential && req.options.quantity == HeatmapQuantity::Weights)
        noteSignedColourOptions(req);
    std::vector<PlayFrame> frames;
    if (!writePlayFrames(req.p, req.options, req.play, staging,
                         QSize(int(*req.width), int(*req.height)), *req.dpr, &error, &frames))
        return failure(req.command, error.replace(staging, outDir));
    if (!staged.commit(&error))
        return failure(req.command, error);
    // Frames of an earlier, longer run in the same folder are left as they were: say so.
    {
        QStringList stale = QDir(outDir).entryList({QStringLiteral("frame_*.png")}, QDir::Files);
        for (const PlayFrame &f : frames)
            stale.removeAll(f.file);
        if (!stale.isEmpty())
            QTextStream(stderr) << "attnlab animate: note: " << stale.size()
                                << " older frame file(s) in the folder are not of this run ("
                                << stale.front() << (stale.size() > 1 ? " ..." : "")
                                << "); frames.csv lists this run's\n";
    }
    if (frames.size() == 1)
        QTextStream(stdout) << "attnlab animate: wrote 1 frame (" << frames.front().file
                            << ") and frames.csv to " << QDir(outDir).absolutePath() << "\n";
    else
        QTextStream(stdout) << "attnlab animate: wrote " << frames.size() << " frames ("
                            << frames.front().file << " ... " << frames.back().file
                            << ") and frames.csv to " << QDir(outDir).absolutePath() << "\n";
    return ExitOk;
}

/// heatmap, or (`animate`) animate: the same model and view options; animate adds --param,
/// --from, --to, --frames and --out-dir and writes PNG frames instead of --out.
int runHeatmapOrAnimate(const QStringList &arguments, bool animate)
{
    HeatmapRequest req;
    req.command = animate ? QStringLiteral("animate") : QStringLiteral("heatmap");
    req.animate = animate;
    req.arguments = arguments;
    QCommandLineParser parser;
    if (const auto done = parseHeatmapRequest(parser, req))
        return *done;
    if (animate)
        return runAnimation(parser, req);
    HeatmapPlan plan;
    if (const auto done = planHeatmap(parser, req, plan))
        return *done;
    return runHeatmapPlan(parser, req, plan);
}

} // namespace

int runHeatmap(const QStringList &arguments)
{
    return runHeatmapOrAnimate(arguments, false);
}

int runAnimate(const QStringList &arguments)
{
    return runHeatmapOrAnimate(arguments, true);
}

} // namespace attn::cli
