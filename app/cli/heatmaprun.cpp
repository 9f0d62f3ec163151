// attnlab heatmap's run: computes the view (full matrices or the tile engine's pooled view),
// then draws it with the window's painters (HeatmapRenderer, StepsRenderer, CompareRenderer,
// ModelRenderer, PositionsRenderer, the Tokens tab's figure) and writes --out, --batch-dir and
// --data as one set.

#include "common.h"
#include "heatmaprequest.h"
#include "stagedfiles.h"

#include "ui/export/dataexport.h"
#include "ui/render/comparerenderer.h"
#include "ui/render/modelrenderer.h"
#include "ui/render/positionsrenderer.h"
#include "ui/render/stepsrenderer.h"
#include "ui/session/pooledsession.h"
#include "ui/session/sessioncompute.h"

#include <QFileInfo>
#include <QTextStream>

#include <algorithm>

namespace attn::cli {

namespace {

/// --view model: every layer (or --layer's) of the loaded weights, one colour scale.
int writeModelView(const QCommandLineParser &parser, HeatmapRequest &req, const HeatmapPlan &plan)
{
    QString error;
    // The model view: every layer (or --layer's) of the loaded weights, one colour scale.
    if (!req.p.tensors || !req.p.tensors->isWeights())
        return usageError(req.command,
                          QStringLiteral("--view model needs attention weights: --in "
                                         "FILE with 'attentions' (layers, heads, "
                                         "n_q, n_k)"));
    if (plan.out.isEmpty() || !plan.batchDir.isEmpty() || !plan.dataPath.isEmpty())
        return usageError(req.command, QStringLiteral("--view model writes --out only"));
    const auto source = req.p.tensors;
    ModelRenderer model;
    model.setStack(std::shared_ptr<const WeightStack>(source, source->weightStack()),
                   QStringLiteral("loaded: %1 [%2 %3]")
                       .arg(source->fileName(), source->arrayName(), source->description()));
    if (source->isAttentionStack())
        model.setNotes({QString::fromStdString(source->rowSumCheck().text())});
    ModelViewOptions modelOptions;
    modelOptions.colormap = req.options.colormap;
    modelOptions.layer = parser.isSet(QStringLiteral("layer")) ? source->layer() : -1;
    model.setOptions(modelOptions);
    // The natural size (64-pixel maps) unless --width or --height is given.
    QSize modelSize = model.naturalSize();
    if (req.given(QStringLiteral("width")))
        modelSize.setWidth(int(*req.width));
    if (req.given(QStringLiteral("height")))
        modelSize.setHeight(int(*req.height));
    if (!model.save(plan.out, modelSize, plan.format == QLatin1String("png") ? *req.dpr : 1.0,
                    &error))
        return failure(req.command, error);
    return ExitOk;
}

/// --view positions: the Positions tab's painter (ui/render/positionsrenderer.h).
int writePositionsView(HeatmapRequest &req, const HeatmapPlan &plan)
{
    QString error;
    PositionsRenderer positionsRenderer;
    positionsRenderer.setFigure(computePositionsFigure(req.p));
    const FigurePainter paint = positionsRenderer.painter();
    const QSize figureSize {int(*req.width), int(*req.height)};
    const QString title = QStringLiteral("Attention Lab: positional encoding");
    const bool ok = plan.format == QLatin1String("png")
        ? writeFigurePng(plan.out, figureSize, *req.dpr, Qt::white, paint, &error)
        : plan.format == QLatin1String("svg")
        ? writeFigureSvg(plan.out, figureSize, title,
                         positionsRenderer.figure().caption.join(QLatin1Char(' ')), paint, &error)
        : writeFigurePdf(plan.out, figureSize, title, paint, &error);
    return ok ? ExitOk : failure(req.command, error);
}

/// Computes the view (full or tiles) and prints the notes on what is drawn.
std::optional<int> computeHeatmap(HeatmapRequest &req, const HeatmapPlan &plan,
                                  std::shared_ptr<SessionResult> &result)
{
    QString error;
    result = std::make_shared<SessionResult>(
        plan.tiles ? computePooledSession(
            req.p, req.options.maxImageSide,
            req.options.pooling == HeatmapPooling::Mean ? TilePooling::Mean : TilePooling::Max)
                   : computeSession(req.p));
    if (!result->ok() && result->inputError) {
        // The arguments' fault (exit 2, as compute's for a file): scores scaled past the dtype's
        // range name the options that set the scale.
        QString message = result->error;
        if (message.contains(QLatin1String("overflowed")))
            message += req.p.dtype == DType::Float32
                ? QStringLiteral(" (float32 holds |x| <= 3.4e38: use a larger --temperature, a "
                                 "larger --alpha or --dtype float64)")
                : QStringLiteral(" (use a larger --temperature or --alpha)");
        return inputError(req.command, message);
    }
    if (!result->ok())
        return failure(req.command, result->error);
    // The sequence's lengths (a pooled view's result has pixels, not positions).
    const QString note = windowNote(*req.position, req.p.queryCount(), req.p.keyCount());
    if (!note.isEmpty())
        QTextStream(stderr) << "attnlab " << req.command << ": " << note << "\n";
    if (plan.longTabColours && result->signedWeights) {
        // Signed weights keep the renderer's diverging scale, centred on 0.
        if (!plan.out.isEmpty() || !plan.batchDir.isEmpty())
            QTextStream(stderr) << "attnlab " << req.command
                                << ": note: the tile engine's view of signed weights (A1 - "
                                   "lambda A2) is coloured RdBu_r over +-its largest |w| (0 = "
                                   "white), "
                                << (req.options.scale == ColorScale::Log
                                        ? "on a symmetric log scale (linear within 1e-5 of it; "
                                          "--scale linear for a linear one)"
                                        : "linear")
                                << "; each pixel shows its cells' value of largest magnitude "
                                   "with --pooling max\n";
    } else if (plan.longTabColours) {
        // The largest pooled weight of what is drawn: one head, the mean, or every head.
        const auto largest = [](const MatrixD &w) { return w.size() ? w.maxCoeff() : 0.0; };
        double top = 0;
        if (req.options.view == HeatmapView::SingleHead && req.options.head >= result->headCount())
            top = largest(result->weightsMean);
        else if (req.options.view == HeatmapView::SingleHead)
            top = largest(result->weights[std::size_t(req.options.head)]);
        else
            for (const MatrixD &w : result->weights)
                top = std::max(top, largest(w));
        req.options.useFixedNorm(ColorNorm::upToLargestWeight(req.options.scale, top));
        if (!(top > 0) && (!plan.out.isEmpty() || !plan.batchDir.isEmpty()))
            QTextStream(stderr) << "attnlab " << req.command
                                << ": note: every weight drawn is 0 (every cell masked): the "
                                   "colours span [0, 1]\n";
        else if (!plan.out.isEmpty() || !plan.batchDir.isEmpty())
            QTextStream(stderr)
                << "attnlab " << req.command << ": note: the tile engine's view is coloured "
                << (req.options.scale == ColorScale::Log
                        ? QStringLiteral("log10 over the five decades below its largest weight, "
                                         "%1 (as the Long tab)")
                        : QStringLiteral("linear from 0 to its largest weight, %1 (as the Long "
                                         "tab)"))
                       .arg(req.options.fixedTop, 0, 'g', 4)
                << "; --range fixed gives [0, 1], --range auto the data's range\n";
    }
    if (plan.tiles && !plan.dataPath.isEmpty())
        QTextStream(stderr) << "attnlab " << req.command
                            << ": note: --data writes the tile engine's pooled view, "
                            << result->queryCount() << " x " << result->keyCount()
                            << " pixels a head (" << result->viewNote
                            << "; query_index / key_index give each pixel's first query / key), "
                               "not the n_q x n_k cells\n";
    if (req.p.window > 0 && req.p.mask == MaskChoice::None && req.given(QStringLiteral("mask")))
        QTextStream(stderr) << "attnlab " << req.command
                            << ": note: the sliding window is causal (query i sees the keys i - w "
                               "< j <= i): with --window, --mask none still masks the future\n";
    if (req.p.tensors) { // the loaded tensors' n_q × n_k are known now
        const QString hidden
            = hiddenKeysError(req.p, result->queryCount(), result->keyCount(), req.transform);
        if (!hidden.isEmpty())
            return usageError(req.command, hidden);
    }
    return std::nullopt;
}

/// --view compare and --view steps: their painters write --out.
std::optional<int> writeCompareOrSteps(HeatmapRequest &req, const HeatmapPlan &plan,
                                       const std::shared_ptr<SessionResult> &result)
{
    QString error;
    const QSize size {int(*req.width), int(*req.height)};
    bool ok = false;
    if (req.compare) { // the Compare view's painter (ui/render/comparerenderer.h)
        auto resultB = std::make_shared<SessionResult>(computeSession(*req.pb));
        if (!resultB->ok())
            return failure(req.command, QStringLiteral("B: ") + resultB->error);
        CompareRenderer compareRenderer;
        compareRenderer.setResults(result, resultB);
        compareRenderer.setHead(req.options.head);
        compareRenderer.setWeightsColormap(req.options.colormap);
        ok = plan.format == QLatin1String("png")
            ? compareRenderer.savePng(plan.out, size, *req.dpr, &error)
            : plan.format == QLatin1String("svg") ? compareRenderer.saveSvg(plan.out, size, &error)
                                                  : compareRenderer.savePdf(plan.out, size, &error);
        return ok ? ExitOk : failure(req.command, error);
    }
    if (req.steps) { // the steps view's painter (ui/render/stepsrenderer.h)
        StepsRenderer stepsRenderer;
        stepsRenderer.setResult(result);
        stepsRenderer.setHead(req.options.head);
        stepsRenderer.setWeightsColormap(req.options.colormap);
        ok = plan.format == QLatin1String("png")
            ? stepsRenderer.savePng(plan.out, size, *req.dpr, &error)
            : plan.format == QLatin1String("svg") ? stepsRenderer.saveSvg(plan.out, size, &error)
                                                  : stepsRenderer.savePdf(plan.out, size, &error);
        return ok ? ExitOk : failure(req.command, error);
    }
    return std::nullopt;
}

/// The tokens view, or the heads grid or one head written to --out, --batch-dir and --data.
int writeShownView(const QCommandLineParser &parser, HeatmapRequest &req, HeatmapPlan &plan,
                   const std::shared_ptr<SessionResult> &result)
{
    QString error;
    const QSize size {int(*req.width), int(*req.height)};
    bool ok = false;
    // What the window shows: the result after trimming padding / hiding keys
    // (ui/session/resultview.h); the tile engine's view has no transform.
    const auto shown = plan.tiles ? std::shared_ptr<const SessionResult>(result)
                                  : applyViewTransform(result, req.transform);
    if (!shown->ok())
        return failure(req.command, shown->error);
    if (req.tokenView) { // the Tokens tab's painter (ui/render/tokenfigure.h), what the heads show
        if (req.tokenText && parser.isSet(QStringLiteral("query"))) {
            const auto query
                = intOption(parser, QStringLiteral("query"), 0, shown->queryCount() - 1, &error);
            if (!query)
                return usageError(req.command, error);
            req.tokenOptions.query = int(*query);
        }
        req.tokenOptions.colormap = StepsRenderer::effectiveWeightsColormap(req.options.colormap);
        const QString problem = tokenViewProblem(shown.get());
        if (!problem.isEmpty())
            return failure(req.command, problem);
        ok = saveTokenFigure(plan.out, size, *req.dpr, shown.get(), req.tokenOptions, &error,
                             plan.format);
        return ok ? ExitOk : failure(req.command, error);
    }
    if (plan.tiles && req.options.pinnedQuery >= 0) {
        // The pooled view's rows are pixels (queryIndex: each one's first query): the pinned
        // query's row is the pixel that holds it.
        const std::vector<int> &first = shown->queryIndex;
        const auto past = std::upper_bound(first.begin(), first.end(), req.options.pinnedQuery);
        req.options.pinnedQuery = past == first.begin() ? -1 : int(past - first.begin()) - 1;
    }
    if (req.options.pinnedQuery >= shown->queryCount()) {
        if (!req.given(QStringLiteral("pin-query")))
            req.options.pinnedQuery = -1; // a session's pin past these rows: none
        else
            return usageError(req.command,
                              QStringLiteral("--pin-query %1 is beyond n_q = %2 (queries 0-%3)")
                                  .arg(req.options.pinnedQuery)
                                  .arg(shown->queryCount())
                                  .arg(shown->queryCount() - 1));
    }
    if (shown->signedWeights && req.options.quantity == HeatmapQuantity::Weights)
        noteSignedColourOptions(req);
    HeatmapRenderer renderer;
    renderer.setResult(shown);
    renderer.setOptions(req.options);
    // PNG: --width x --height logical pixels at --dpr, or exactly that many pixels at --dpi.
    const double pngDpi = req.dpi ? *req.dpi : 96.0 * *req.dpr;
    const QSize pngPixels = req.dpi ? size : (QSizeF(size) * *req.dpr).toSize();
    // A figure too small for any map would be written as a page saying so: refused instead.
    const QSizeF logical = req.dpi && plan.format == QLatin1String("png")
        ? QSizeF(size) / (*req.dpi / 96.0)
        : QSizeF(size);
    if (const HeatmapLayout lay = renderer.layout(QRectF(QPointF(0, 0), logical));
        (!plan.out.isEmpty() || !plan.batchDir.isEmpty())
        && (lay.tiles.isEmpty() || lay.cellSize <= 0))
        return usageError(
            req.command,
            QStringLiteral("--width %1 --height %2%3 is too small to draw the maps (%4 × %5 "
                           "cells, %6): give a larger --width and --height%7")
                .arg(size.width())
                .arg(size.height())
                .arg(req.dpi && plan.format == QLatin1String("png")
                         ? QStringLiteral(" at --dpi %1 (%2 × %3 logical pixels)")
                               .arg(*req.dpi)
                               .arg(qRound(logical.width()))
                               .arg(qRound(logical.height()))
                         : QString())
                .arg(shown->queryCount())
                .arg(shown->keyCount())
                .arg(req.options.view == HeatmapView::SingleHead
                         ? QStringLiteral("one map")
                         : QStringLiteral("%1 maps").arg(shown->headCount() + 1))
                .arg(req.options.view == HeatmapView::SingleHead
                         ? QString()
                         : QStringLiteral(", or draw one head with --view head")));
    // --out, --batch-dir and --data are one set, written all or nothing (StagedFiles); the
    // messages name the files the user asked for, not the staging folder.
    StagedFiles staged;
    auto unstaged = [](QString message, const QString &stagedName, const QString &target) {
        return message.replace(stagedName, target);
    };
    if (!plan.out.isEmpty()) {
        const QString file = staged.pathFor(plan.out, &error);
        if (file.isEmpty())
            return failure(req.command, error);
        if (plan.format == QLatin1String("png"))
            ok = req.dpi ? renderer.savePngAtDpi(file, size, *req.dpi, &error)
                         : renderer.savePng(file, size, *req.dpr, &error);
        else if (plan.format == QLatin1String("svg"))
            ok = renderer.saveSvg(file, size, &error);
        else
            ok = renderer.savePdf(file, size, &error);
        if (!ok)
            return failure(req.command, unstaged(error, file, plan.out));
    }
    if (!plan.batchDir.isEmpty()) {
        const QString folder = staged.folderFor(plan.batchDir, &error);
        if (folder.isEmpty()
            || !exportEachHead(renderer, folder, QStringLiteral("head"), plan.format,
                               plan.format == QLatin1String("png") ? pngPixels : size, pngDpi,
                               nullptr, &error))
            return failure(req.command, unstaged(error, folder, plan.batchDir));
    }
    if (!plan.dataPath.isEmpty()) {
        const QString file = staged.pathFor(plan.dataPath, &error);
        if (file.isEmpty() || !exportData(*shown, file, nullptr, &error))
            return failure(
                req.command,
                unstaged(error, QFileInfo(file).path(), QFileInfo(plan.dataPath).path()));
    }
    if (!staged.commit(&error))
        return failure(req.command, error);
    return ExitOk;
}

/// Loaded weights are shown as stored, and what the window's Tensors panel and status bar
/// report about them is said here too: rows that do not sum to 1 (how many, the worst |Σw − 1|
/// with its head and row), rows holding NaN/Inf (how many cells, the first one's head, row and
/// key) and rows with negative weights, for the layer drawn. The note goes to standard error
/// and into the caption of the heads grid or head drawn; the exit status stays 0 (reported,
/// not refused: an `attentions` stack holding NaN/Inf is refused when read, see tensorcase.h).
void noteLoadedWeights(HeatmapRequest &req)
{
    const TensorSource *source = req.p.tensors.get();
    if (!source || !source->isWeights() || source->weightsOnDemand() || !source->weightStack())
        return;
    const WeightStack &stack = *source->weightStack();
    const WeightCheck check
        = checkWeights(&stack.at(source->layer(), 0), int(stack.heads), stack.type);
    if (check.ok())
        return;
    const QString where = stack.layers > 1 ? QStringLiteral("%1, layer %2 of %3")
                                                 .arg(source->fileName())
                                                 .arg(source->layer())
                                                 .arg(stack.layers)
                                           : source->fileName();
    const QString note = QStringLiteral("%1: %2").arg(where, check.text());
    QTextStream(stderr) << "attnlab " << req.command << ": note: " << note << " (drawn as stored"
                        << (check.nonFiniteRows > 0 ? ", NaN/Inf cells in magenta" : "") << ")\n";
    req.options.captionNote = note;
}

} // namespace

void noteSignedColourOptions(const HeatmapRequest &req)
{
    QStringList ignored;
    if (req.given(QStringLiteral("range")) && !req.options.autoRange)
        ignored << QStringLiteral("--range fixed");
    if (req.given(QStringLiteral("colormap")) && req.options.colormap != ColormapId::RdBu)
        ignored << QStringLiteral("--colormap ") + Colormap(req.options.colormap).name();
    for (const QString &option : ignored)
        QTextStream(stderr) << "attnlab " << req.command << ": note: " << option
                            << " does not apply to signed weights (A1 - lambda A2): they are "
                               "drawn on RdBu_r centred on 0 over [-m, m] with m the largest "
                               "|w| drawn (linear, or a symmetric log with --scale log)\n";
}

/// Computes, draws and writes what `plan` says.
int runHeatmapPlan(const QCommandLineParser &parser, HeatmapRequest &req, HeatmapPlan &plan)
{
    if (plan.viewName == QLatin1String("model"))
        return writeModelView(parser, req, plan);
    if (plan.positions)
        return writePositionsView(req, plan);
    noteLoadedWeights(req);
    std::shared_ptr<SessionResult> result;
    if (const auto done = computeHeatmap(req, plan, result))
        return *done;
    if (const auto done = writeCompareOrSteps(req, plan, result))
        return *done;
    return writeShownView(parser, req, plan, result);
}

} // namespace attn::cli
