// attnlab heatmap's plan, made before anything is computed: the files written and their format
// (each checked as a new file), full matrices or the tile engine, and the memory the view needs
// against --memory-budget-mib.

#include "common.h"
#include "heatmaprequest.h"

#include "ui/export/dataexport.h"
#include "ui/session/pooledsession.h"
#include "ui/session/sessioncompute.h"

#include <QDir>
#include <QFileInfo>

namespace attn::cli {

namespace {

/// --compute auto uses the tile engine when the full matrices (sessionResultBytes) exceed this.
constexpr double kTilesAboveBytes = double(std::size_t(256) << 20);

/// The files written (--out, --batch-dir, --data) and their format, checked before anything is
/// computed.
std::optional<int> planOutputs(const QCommandLineParser &parser, HeatmapRequest &req,
                               HeatmapPlan &plan)
{
    QString error;
    plan.out = parser.value(QStringLiteral("out"));
    plan.batchDir = parser.value(QStringLiteral("batch-dir"));
    plan.dataPath = parser.value(QStringLiteral("data"));
    if (plan.out.isEmpty() && plan.batchDir.isEmpty() && plan.dataPath.isEmpty())
        return usageError(req.command,
                          QStringLiteral("--out is required (a .png, .svg or .pdf file), "
                                         "unless --batch-dir or --data is given"));
    if (!plan.dataPath.isEmpty() && !dataFormatForPath(plan.dataPath))
        return usageError(req.command,
                          QStringLiteral("--data '%1' must end in .npz, .npy, .json or "
                                         ".csv")
                              .arg(plan.dataPath));
    const auto resolved = outputFormat(
        parser.isSet(QStringLiteral("format")) ? parser.value(QStringLiteral("format")) : QString(),
        plan.out, {QStringLiteral("png"), QStringLiteral("svg"), QStringLiteral("pdf")},
        QStringLiteral("png"), QStringLiteral("--format"), QStringLiteral("--out"), &error);
    if (!resolved)
        return usageError(req.command, error);
    plan.format = *resolved;

    plan.viewName = parser.value(QStringLiteral("view"));
    if ((req.steps || req.compare || req.tokenView) && plan.out.isEmpty())
        return usageError(req.command, QStringLiteral("--view %1 needs --out").arg(plan.viewName));
    plan.positions = plan.viewName == QLatin1String("positions");
    if (plan.positions && (!plan.batchDir.isEmpty() || !plan.dataPath.isEmpty()))
        return usageError(req.command,
                          QStringLiteral("--batch-dir and --data go with --view grid or "
                                         "head, not --view positions"));
    if (plan.positions && req.p.n > SessionParameters::maxSequence)
        return usageError(req.command,
                          QStringLiteral("--view positions takes n up to %1 (PE PE^T is n x n), "
                                         "got %2")
                              .arg(SessionParameters::maxSequence)
                              .arg(req.p.n));
    if ((req.steps || req.compare || req.tokenView)
        && (!plan.batchDir.isEmpty() || !plan.dataPath.isEmpty()))
        return usageError(req.command,
                          QStringLiteral("--batch-dir and --data go with --view grid or "
                                         "head, not --view %1")
                              .arg(plan.viewName));

    // Every file written, checked before anything is computed (exit 2): no device, FIFO, link,
    // folder or read-only file is replaced, no two outputs are one file.
    std::vector<OutputPath> outputs = {{QStringLiteral("--out"), plan.out}};
    if (!plan.batchDir.isEmpty())
        outputs.push_back({QStringLiteral("--batch-dir"),
                           plan.batchDir,
                           true,
                           {QStringLiteral("head-*.") + plan.format}});
    if (!plan.dataPath.isEmpty()) {
        // .csv writes <stem>_metrics.csv too; .npy writes only <stem>_<array>.npy files.
        const QFileInfo data(plan.dataPath);
        const QString stem = data.completeBaseName();
        if (*dataFormatForPath(plan.dataPath) == DataFormat::Npy)
            outputs.push_back({QStringLiteral("--data"),
                               data.dir().filePath(stem + QStringLiteral("_weights.npy")),
                               false,
                               {stem + QStringLiteral("_*.npy")}});
        else
            outputs.push_back({QStringLiteral("--data"), plan.dataPath, false,
                               dataFormatForPath(plan.dataPath) == DataFormat::Csv
                                   ? QStringList {stem + QStringLiteral("_metrics.csv")}
                                   : QStringList {}});
    }
    if (const auto refused = checkOutputPaths(
            req.command, outputs,
            {{QStringLiteral("--session"), parser.value(QStringLiteral("session"))}}))
        return *refused;
    return std::nullopt;
}

/// Full matrices or the tile engine, and the memory the view needs against --memory-budget-mib.
std::optional<int> planEngine(const QCommandLineParser &parser, HeatmapRequest &req,
                              HeatmapPlan &plan)
{
    QString error;
    if (!req.p.tensors) {
        const QString hidden
            = hiddenKeysError(req.p, req.p.queryCount(), req.p.keyCount(), req.transform);
        if (!hidden.isEmpty())
            return usageError(req.command, hidden);
    }

    // The tile engine (ui/pooledsession.h) for long sequences: what it cannot show (scores,
    // steps, compare, hidden keys, data export, loaded tensors) needs the full matrices.
    plan.transformed = req.transform.trimPadding || !req.transform.hiddenKeys.isEmpty();
    const QString computeMode = parser.value(QStringLiteral("compute"));
    QString tilesUnavailable;
    if (req.steps || req.compare || req.tokenView)
        tilesUnavailable = QStringLiteral("--view %1").arg(plan.viewName);
    else if (plan.transformed)
        tilesUnavailable = req.transform.trimPadding ? QStringLiteral("--trim-padding")
                                                     : QStringLiteral("--hide-keys");
    else if (req.p.tensors)
        tilesUnavailable = QStringLiteral("a session's loaded tensors");
    else if (req.options.quantity != HeatmapQuantity::Weights)
        tilesUnavailable = QStringLiteral("a session showing scores");
    else if (req.options.headSort != HeadOrderKey::Index && req.given(QStringLiteral("sort-heads")))
        tilesUnavailable = QStringLiteral("--sort-heads (by the heads' per-row metrics)");
    const bool longSequence = req.p.queryCount() > SessionParameters::maxSequence
        || req.p.keyCount() > SessionParameters::maxSequence;
    // --data asks for numbers: every cell's while the full matrices can be held (auto), the
    // pooled pixels' beyond maxSequence or with --compute tiles.
    plan.tiles = computeMode == QLatin1String("tiles")
        || (computeMode == QLatin1String("auto") && tilesUnavailable.isEmpty()
            && (longSequence
                || (plan.dataPath.isEmpty()
                    && double(sessionResultBytes(req.p)) > kTilesAboveBytes)));
    if (computeMode == QLatin1String("full") && longSequence)
        return usageError(req.command,
                          QStringLiteral("--compute full takes n and n_k up to %1 (got n_q = %2, "
                                         "n_k = %3); longer sequences need --compute tiles")
                              .arg(SessionParameters::maxSequence)
                              .arg(req.p.queryCount())
                              .arg(req.p.keyCount()));
    // Over thousands of keys most weights are near 1/n_k, black on the fixed [0, 1] scale: unless
    // --range (or the session) says otherwise, the tile engine's view is coloured as the window's
    // Long tab colours it, up to the largest weight shown (log over the five decades below it,
    // or linear from 0 with --scale linear).
    // A session's saved range and scale are the Heads view's; the window's Long tab colours its
    // map its own way, and so does this view unless the command line itself says otherwise.
    plan.longTabColours = plan.tiles && !req.given(QStringLiteral("range"));
    if (plan.longTabColours && !req.given(QStringLiteral("scale")))
        req.options.scale = ColorScale::Log;
    if ((plan.tiles || longSequence) && !tilesUnavailable.isEmpty())
        return usageError(req.command,
                          QStringLiteral("%1 needs every head's full n_q x n_k matrices: it does "
                                         "not go with the tile engine's pooled view (--compute "
                                         "tiles%2)")
                              .arg(tilesUnavailable,
                                   longSequence ? QStringLiteral(", needed beyond n = %1")
                                                      .arg(SessionParameters::maxSequence)
                                                : QString()));

    // Memory: decided from the arguments, so refused here (exit 2) before anything is allocated.
    const auto budget = memoryBudgetBytes(parser, &error);
    if (!budget)
        return usageError(req.command, error);
    const PooledSessionBytes pooledBytes = pooledSessionBytes(req.p, req.options.maxImageSide);
    double need = plan.tiles ? pooledBytes.total()
                             : double(sessionResultBytes(req.p)) * (plan.transformed ? 2.0 : 1.0);
    if (req.pb) // B's result and the difference B - A (n_q x n_k float64 and a mask byte)
        need += double(sessionResultBytes(*req.pb))
            + double(req.p.queryCount()) * req.p.keyCount() * 9.0;
    // --data: what the export holds beside the result.
    const double dataBytes = plan.dataPath.isEmpty()
        ? 0.0
        : dataExportBytes(*dataFormatForPath(plan.dataPath), int(req.p.heads),
                          plan.tiles ? Index(req.options.maxImageSide) : Index(req.p.queryCount()),
                          plan.tiles ? Index(req.options.maxImageSide) : Index(req.p.keyCount()));
    need += dataBytes;
    // The PNG image (4 bytes a pixel) is drawn in memory too.
    const double imageBytes = plan.format == QLatin1String("png")
        ? (req.dpi ? double(*req.width) * double(*req.height)
                   : double(*req.width) * *req.dpr * double(*req.height) * *req.dpr)
            * 4.0
        : 0.0;
    if (imageBytes > *budget)
        return usageError(
            req.command,
            QStringLiteral("--width %1 x --height %2 (--dpr %3) needs %4 for the "
                           "image, over --memory-budget-mib %5")
                .arg(*req.width)
                .arg(*req.height)
                .arg(req.dpi ? 1.0 : *req.dpr)
                .arg(mibText(imageBytes), parser.value(QStringLiteral("memory-budget-mib"))));
    need += imageBytes;
    // Both refusals below start with the sizes asked for.
    const QString sizes
        = QStringLiteral("--n %1 (n_k = %2)").arg(req.p.queryCount()).arg(req.p.keyCount());
    if (plan.tiles && need > *budget)
        return usageError(
            req.command,
            QStringLiteral("%1 with --d-model %2 and --heads %3 needs about %4 "
                           "for the tile engine's view: the larger of %5 while projecting the "
                           "inputs and %6 for the queries, keys and row blocks plus %7 for %8, "
                           "and %9 for the picture; over --memory-budget-mib %10: "
                           "lower --n, --n-k or --d-model, or raise --memory-budget-mib")
                .arg(sizes)
                .arg(req.p.dModel)
                .arg(req.p.heads)
                .arg(mibText(need), mibText(pooledBytes.inputs), mibText(pooledBytes.engine),
                     mibText(pooledBytes.images))
                .arg(req.p.heads > 1 ? QStringLiteral("%1 pooled images").arg(req.p.heads + 1)
                                     : QStringLiteral("the pooled image"))
                .arg(mibText(imageBytes), parser.value(QStringLiteral("memory-budget-mib"))));
    if (need > *budget)
        return usageError(
            req.command,
            QStringLiteral("%1 with --heads %2 needs about %3 for the weights and "
                           "raw and scaled scores of every head (n_q x n_k float64 each%4)%5, over "
                           "--memory-budget-mib %6: lower --n, --n-k or --heads, %7or raise "
                           "--memory-budget-mib")
                .arg(sizes)
                .arg(req.p.heads)
                .arg(mibText(need), req.pb ? QStringLiteral(", for A and B") : QString(),
                     dataBytes > 0
                         ? QStringLiteral(" and %1 for writing --data").arg(mibText(dataBytes))
                         : QString(),
                     parser.value(QStringLiteral("memory-budget-mib")),
                     dataBytes > 0 ? QStringLiteral("write --data as .json or .csv, ")
                                   : QString()));
    // computeSession's own guard (a quarter of the machine's memory) follows the budget given.
    setSessionMemoryBudget(std::size_t(*budget));
    return std::nullopt;
}

} // namespace

/// The usage error for --hide-keys / --trim-padding that leave nothing valid to show for
/// n_q × n_k: a hidden key index outside [0, n_k), or every key hidden or padding. Empty when the
/// transform is fine.
QString hiddenKeysError(const SessionParameters &p, Index nQ, Index nK,
                        const ViewTransform &transform)
{
    for (int k : transform.hiddenKeys) {
        if (k >= nK)
            return QStringLiteral("--hide-keys: key %1 does not exist: the keys are 0 to %2 "
                                  "(n_k = %3)")
                .arg(k)
                .arg(nK - 1)
                .arg(nK);
    }
    if (transform.isIdentity())
        return {};
    const ViewSelection sel = viewSelection(p, nQ, nK, transform);
    if (sel.keys.empty())
        return transform.hiddenKeys.isEmpty()
            ? QStringLiteral("--trim-padding: every key is padding, nothing is left to show")
            : QStringLiteral("--hide-keys %1%2 hides every one of the n_k = %3 keys: nothing is "
                             "left to show")
                  .arg(rangesText(transform.hiddenKeys),
                       transform.trimPadding ? QStringLiteral(" with --trim-padding") : QString())
                  .arg(nK);
    if (sel.queries.empty())
        return QStringLiteral("--trim-padding: every query is padding, nothing is left to show");
    return {};
}

/// heatmap's plan: the outputs, then (for the views computed from the model) the engine and the
/// memory. Returns the exit code when the command line is refused.
std::optional<int> planHeatmap(const QCommandLineParser &parser, HeatmapRequest &req,
                               HeatmapPlan &plan)
{
    if (const auto done = planOutputs(parser, req, plan))
        return done;
    if (plan.viewName == QLatin1String("model") || plan.positions)
        return std::nullopt;
    return planEngine(parser, req, plan);
}

} // namespace attn::cli
