#pragma once
// attnlab heatmap and attnlab animate: what they take from the command line (HeatmapRequest),
// what heatmap decides from it (HeatmapPlan), and the steps between them, one file each:
// heatmapoptions.cpp (the option table), heatmapparse.cpp (command line and --session →
// HeatmapRequest), heatmapplan.cpp (outputs, engine and memory → HeatmapPlan), heatmaprun.cpp
// (compute, draw and write the plan) and heatmap.cpp (the two commands, animate's frames).

#include "positionoptions.h"

#include "ui/render/heatmaprenderer.h"
#include "ui/render/tokenfigure.h"
#include "ui/session/playsettings.h"
#include "ui/session/resultview.h"
#include "ui/session/sessionparameters.h"
#include "ui/session/tensorsource.h"

#include <QCommandLineOption>
#include <QCommandLineParser>
#include <QList>
#include <QString>
#include <QStringList>

#include <cstdint>
#include <memory>
#include <optional>
#include <vector>

namespace attn::cli {

/// Everything heatmap and animate take from the command line and a --session: the model's
/// parameters, the view and how it is drawn. parseHeatmapRequest() fills it.
struct HeatmapRequest
{
    QString command; ///< "heatmap" or "animate"
    bool animate = false;
    QStringList arguments; ///< the command line as given (without a session's options)

    QStringList sessionTokens; ///< a --session's tokens, when --tokens and --n leave them
    std::shared_ptr<const TensorSource> sessionTensors; ///< --session's or --in's tensors
    HeatmapOptions sessionOptions; ///< what the options do not set (mean tile, quantity)
    TokenViewOptions sessionTokenView; ///< the Tokens tab's hidden heads, mean, query and range

    PlaySettings play; ///< animate: the parameter animated and its range
    std::vector<double> schedule; ///< animate: every frame's value

    SessionParameters p; ///< the model (A for --view compare)
    std::optional<PositionSettings> position;
    std::optional<SessionParameters> pb; ///< --view compare: B

    HeatmapOptions options;
    TokenViewOptions tokenOptions;
    bool steps = false;
    bool compare = false;
    bool tokenHeads = false;
    bool tokenText = false;
    bool tokenView = false; ///< tokenHeads or tokenText
    ViewTransform transform;
    std::optional<double> dpi;
    std::optional<std::int64_t> width;
    std::optional<std::int64_t> height;
    std::optional<double> dpr;

    /// Whether the command line itself (not a --session's values in front of it) gives --name
    /// (or, for a one-letter name, its short form -n).
    bool given(const QString &name) const
    {
        const QString option = QStringLiteral("--") + name;
        const QString shortOption = name.size() == 1 ? QStringLiteral("-") + name : QString();
        for (const QString &a : arguments.mid(1))
            if (a == option || a.startsWith(option + QLatin1Char('='))
                || (!shortOption.isEmpty()
                    && (a == shortOption || a.startsWith(shortOption + QLatin1Char('=')))))
                return true;
        return false;
    }
};

/// What heatmap writes and how it computes it: planHeatmap() decides, runHeatmapPlan() does.
struct HeatmapPlan
{
    QString out; ///< --out, "" when not given
    QString batchDir; ///< --batch-dir
    QString dataPath; ///< --data
    QString format; ///< png, svg or pdf
    QString viewName; ///< --view
    bool positions = false; ///< --view positions
    bool tiles = false; ///< the tile engine's pooled view, not the full matrices
    bool longTabColours = false; ///< tiles coloured up to the largest weight (the Long tab)
    bool transformed = false; ///< --trim-padding or --hide-keys
};

/// The model and input options of heatmap and animate.
QList<QCommandLineOption> heatmapModelOptions();
/// The view and output options of heatmap and animate.
QList<QCommandLineOption> heatmapViewOptions();
/// The options animate adds: what is animated, over which range, and where the frames go.
QList<QCommandLineOption> animateOptions();

/// Builds the parser (heatmap's options, and animate's), parses the command line with a
/// --session merged in front of it, and fills `req`. Returns the exit code when done.
std::optional<int> parseHeatmapRequest(QCommandLineParser &parser, HeatmapRequest &req);

/// heatmap's plan: the outputs, then (for the views computed from the model) the engine and the
/// memory. Returns the exit code when the command line is refused.
std::optional<int> planHeatmap(const QCommandLineParser &parser, HeatmapRequest &req,
                               HeatmapPlan &plan);

/// The usage error for --hide-keys / --trim-padding that leave nothing valid to show for
/// n_q × n_k: a hidden key index outside [0, n_k), or every key hidden or padding. Empty when the
/// transform is fine.
QString hiddenKeysError(const SessionParameters &p, Index nQ, Index nK,
                        const ViewTransform &transform);

/// Notes on standard error for the colour options the command line gives that signed weights
/// (differential attention's A₁ − λA₂) do not take: they are drawn on RdBu_r centred on 0,
/// linear over [−m, m] with m the largest |w| drawn, so --scale log, --range fixed and a
/// --colormap other than RdBu_r are named as not applied. Call when signed weights are drawn.
void noteSignedColourOptions(const HeatmapRequest &req);

/// Computes, draws and writes what `plan` says.
int runHeatmapPlan(const QCommandLineParser &parser, HeatmapRequest &req, HeatmapPlan &plan);

} // namespace attn::cli
