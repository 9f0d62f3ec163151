// attnlab heatmap: computes the main view (the same computeSession as the window) and writes
// the heatmap grid or one head with HeatmapRenderer (the window's painter), the steps view
// (StepsRenderer), the A/B comparison (CompareRenderer, the window's Compare view) or the
// positional encoding (PositionsRenderer, the Positions tab) to PNG, SVG or PDF.
// attnlab animate: the same options, and one of d_k, α, τ animated over a range: a PNG per frame
// of the Play schedule (writePlayFrames, what the window's Play → Export Frames writes).
// Both parse into a HeatmapRequest (parseHeatmapRequest); heatmap then plans the outputs, the
// engine (full matrices or tiles) and the memory (planHeatmap → HeatmapPlan) and runs the plan
// (runHeatmapPlan); animate writes its frames (runAnimation).

#include "common.h"
#include "positionoptions.h"

#include "ui/document/sessionfile.h"
#include "ui/export/dataexport.h"
#include "ui/render/comparerenderer.h"
#include "ui/render/heatmaprenderer.h"
#include "ui/render/modelrenderer.h"
#include "ui/render/playframes.h"
#include "ui/render/positionsrenderer.h"
#include "ui/render/stepsrenderer.h"
#include "ui/render/tokenfigure.h"
#include "ui/session/pooledsession.h"
#include "ui/session/resultview.h"
#include "ui/session/sessioncompute.h"
#include "ui/session/sessionparameters.h"
#include "ui/session/tensorsource.h"
#include "ui/session/tokenizer.h"

#include <QDir>
#include <QFileInfo>
#include <QJsonArray>
#include <QJsonObject>
#include <QSet>
#include <QTemporaryDir>

#include <algorithm>
#include <cerrno>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <limits>
#include <map>
#include <memory>

namespace attn::cli {

namespace {

/// --compute auto uses the tile engine when the full matrices (sessionResultBytes) exceed this.
constexpr double kTilesAboveBytes = double(std::size_t(256) << 20);

/// A set of files written all or nothing: each file is first written into a hidden staging
/// folder in its target's folder (so the final rename stays on one file system), and commit()
/// renames them into place only once every file of the set is complete. Without commit(), or
/// when a staging folder cannot be made, the staging folders are removed with whatever they
/// hold and the targets are untouched (folders created for them removed again if empty).
class StagedFiles
{
public:
    StagedFiles() = default;
    StagedFiles(const StagedFiles &) = delete;
    StagedFiles &operator=(const StagedFiles &) = delete;
    ~StagedFiles()
    {
        m_staging.clear();
        if (!m_committed) {
            for (auto it = m_created.rbegin(); it != m_created.rend(); ++it)
                QDir().rmdir(*it);
        }
    }

    /// The staging folder for files whose target folder is `directory` (created if missing);
    /// empty with `error` set when it cannot be made.
    QString folderFor(const QString &directory, QString *error)
    {
        const QString target
            = QDir(directory.isEmpty() ? QStringLiteral(".") : directory).absolutePath();
        auto it = m_staging.find(target);
        if (it != m_staging.end())
            return it->second->path();
        if (!QFileInfo(target).isDir()) {
            // Record the folders made on the way, so a failed set leaves none behind.
            QStringList missing;
            for (QString d = target; !QFileInfo::exists(d); d = QFileInfo(d).absolutePath())
                missing.prepend(d);
            if (!QDir().mkpath(target)) {
                *error = QStringLiteral("cannot create the folder '%1'").arg(target);
                return {};
            }
            m_created += missing;
        }
        auto dir
            = std::make_unique<QTemporaryDir>(target + QStringLiteral("/.attnlab-export-XXXXXX"));
        if (!dir->isValid()) {
            *error = QStringLiteral("cannot create a staging folder in '%1': %2")
                         .arg(target, dir->errorString());
            return {};
        }
        const QString path = dir->path();
        m_staging.emplace(target, std::move(dir));
        return path;
    }

    /// `target`'s path inside its staging folder; empty with `error` set on failure.
    QString pathFor(const QString &target, QString *error)
    {
        const QFileInfo info(target);
        const QString folder = folderFor(info.path(), error);
        return folder.isEmpty() ? QString() : folder + QLatin1Char('/') + info.fileName();
    }

    /// Renames every staged file into its target folder (each rename is atomic and replaces
    /// a file of that name). Returns false with `error` naming the file that could not be moved
    /// and the files of the set already in place (a rename failing after a complete write is
    /// rare: the folder became unwritable meanwhile).
    bool commit(QString *error)
    {
        QStringList done;
        for (const auto &[target, dir] : m_staging) {
            const QStringList files
                = QDir(dir->path())
                      .entryList(QDir::Files | QDir::Hidden | QDir::NoDotAndDotDot, QDir::Name);
            for (const QString &f : files) {
                const QString from = dir->path() + QLatin1Char('/') + f;
                const QString to = target + QLatin1Char('/') + f;
                if (std::rename(QFile::encodeName(from).constData(),
                                QFile::encodeName(to).constData())
                    != 0) {
                    const QString why = QString::fromLocal8Bit(std::strerror(errno));
                    *error
                        = QStringLiteral("cannot move '%1' into place (%2); %3")
                              .arg(to, why,
                                   done.isEmpty() ? QStringLiteral("no file of the set was written")
                                                  : QStringLiteral("already written: %1")
                                                        .arg(done.join(QStringLiteral(", "))));
                    return false;
                }
                done << to;
            }
        }
        m_committed = true;
        return true;
    }

private:
    std::map<QString, std::unique_ptr<QTemporaryDir>> m_staging; ///< target folder → staging
    QStringList m_created; ///< target folders this set created, outermost first
    bool m_committed = false;
};

// Checks that option `name` holds one of `values`; else sets `error` naming the option.
bool checkChoice(const QCommandLineParser &parser, const QString &name, const QStringList &values,
                 QString *error)
{
    const QString v = parser.value(name);
    if (values.contains(v))
        return true;
    *error = QStringLiteral("--%1 must be one of %2, got '%3'")
                 .arg(name, values.join(QStringLiteral(", ")), v);
    return false;
}

// A session's parameters and heatmap view as command-line options (tokens and tensors aside).
QStringList sessionArguments(const SessionDocument &session)
{
    const SessionParameters &p = session.parameters;
    QStringList a {QStringLiteral("--n"),           QString::number(p.n),
                   QStringLiteral("--n-k"),         QString::number(p.nK),
                   QStringLiteral("--d-model"),     QString::number(p.dModel),
                   QStringLiteral("--heads"),       QString::number(p.heads),
                   QStringLiteral("--seed"),        QString::number(p.seed),
                   QStringLiteral("--kind"),        attentionKindId(p.kind),
                   QStringLiteral("--mask"),        maskChoiceId(p.mask),
                   QStringLiteral("--alpha"),       QString::number(p.scaleExponent, 'g', 17),
                   QStringLiteral("--temperature"), QString::number(p.temperature, 'g', 17),
                   QStringLiteral("--dtype"),       dtypeId(p.dtype)};
    if (p.mask == MaskChoice::KeyPadding) // --padding without the padding mask is refused
        a << QStringLiteral("--padding") << QString::number(p.paddingCount);
    a << QStringLiteral("--generator") << QString::fromLatin1(randomSourceName(p.generator));
    if (p.positionalScheme() != PositionalScheme::None)
        a << QStringLiteral("--positional")
          << QString::fromStdString(positionalSchemeName(p.positionalScheme()));
    if (p.rope)
        a << QStringLiteral("--rope-convention")
          << QString::fromStdString(ropeConventionName(p.ropeConvention))
          << QStringLiteral("--rope-base") << QString::number(p.ropeBase, 'g', 17);
    if (p.kvHeads > 0)
        a << QStringLiteral("--kv-heads") << QString::number(p.kvHeads);
    if (p.window > 0)
        a << QStringLiteral("--window") << QString::number(p.window);
    if (p.sinks > 0)
        a << QStringLiteral("--sinks") << QString::number(p.sinks);
    const HeatmapOptions o
        = heatmapViewFromJson(session.view.value(QLatin1String("heatmap")).toObject(), {});
    if (o.view == HeatmapView::SingleHead) {
        a << QStringLiteral("--view") << QStringLiteral("head") << QStringLiteral("--head")
          << (o.head >= p.heads ? QStringLiteral("mean") : QString::number(o.head));
    }
    a << QStringLiteral("--colormap") << Colormap(o.colormap).name() << QStringLiteral("--scale")
      << (o.scale == ColorScale::Log ? QStringLiteral("log") : QStringLiteral("linear"))
      << QStringLiteral("--range")
      << (o.autoRange ? QStringLiteral("auto") : QStringLiteral("fixed"))
      << QStringLiteral("--pooling")
      << (o.pooling == HeatmapPooling::Mean ? QStringLiteral("mean") : QStringLiteral("max"));
    const ViewTransform t
        = viewTransformFromJson(session.view.value(QLatin1String("transform")).toObject(), {});
    if (t.trimPadding)
        a << QStringLiteral("--trim-padding");
    if (!t.hiddenKeys.isEmpty()) {
        QStringList keys;
        for (int k : t.hiddenKeys)
            keys << QString::number(k);
        a << QStringLiteral("--hide-keys") << keys.join(QLatin1Char(','));
        if (!t.renormalize)
            a << QStringLiteral("--raw");
    }
    return a;
}

/// Configuration B of --view compare: the window's first B (A with the 1/sqrt(d_k) scale
/// toggled) changed by `text`, a comma-separated key=value list: alpha (or scale=on|off), tau,
/// mask (none, causal, padding, causal+padding), dk. Sets *error naming --compare and the key.
std::optional<CompareVariant> parseCompare(const QString &text, const SessionParameters &a,
                                           QString *error)
{
    CompareVariant v = CompareVariant::from(a);
    v.scaleExponent = a.scaleExponent == 0.5 ? 0.0 : 0.5;
    const QString keys = QStringLiteral("alpha, scale, tau, mask, dk");
    QSet<QString> seen;
    for (const QString &item : text.split(QLatin1Char(','), Qt::SkipEmptyParts)) {
        const qsizetype eq = item.indexOf(QLatin1Char('='));
        const QString key = item.left(eq).trimmed().toLower();
        const QString value = eq < 0 ? QString() : item.mid(eq + 1).trimmed();
        const auto bad = [&](const QString &what) {
            *error = QStringLiteral("--compare: %1 in '%2'").arg(what, item.trimmed());
            return std::nullopt;
        };
        if (eq < 0 || value.isEmpty())
            return bad(QStringLiteral("expected key=value with key one of %1").arg(keys));
        // One value per quantity: alpha and scale both set the exponent, tau and temperature
        // the temperature, dk / d_k / d-k the head width.
        const QString quantity = key == QLatin1String("scale")           ? QStringLiteral("alpha")
            : key == QLatin1String("temperature")                        ? QStringLiteral("tau")
            : key == QLatin1String("d_k") || key == QLatin1String("d-k") ? QStringLiteral("dk")
                                                                         : key;
        if (seen.contains(quantity))
            return bad(QStringLiteral("%1 is given twice (B takes one value of each)")
                           .arg(quantity == QLatin1String("alpha") ? QStringLiteral("the scale "
                                                                                    "(alpha)")
                                                                   : quantity));
        seen.insert(quantity);
        bool ok = false;
        if (key == QLatin1String("alpha")) {
            const double alpha = value.toDouble(&ok);
            if (!ok || !(alpha >= 0.0 && alpha <= 1.0))
                return bad(QStringLiteral("alpha must be a number in [0, 1]"));
            v.scaleExponent = alpha;
        } else if (key == QLatin1String("scale")) {
            if (value != QLatin1String("on") && value != QLatin1String("off"))
                return bad(QStringLiteral("scale must be on (alpha 0.5) or off (alpha 0)"));
            v.scaleExponent = value == QLatin1String("on") ? 0.5 : 0.0;
        } else if (key == QLatin1String("tau") || key == QLatin1String("temperature")) {
            const double tau = value.toDouble(&ok);
            if (!ok
                || !(tau >= CompareVariant::minTemperature
                     && tau <= CompareVariant::maxTemperature))
                return bad(QStringLiteral("tau must be a number > 0"));
            v.temperature = tau;
        } else if (key == QLatin1String("mask")) {
            const QString m = value.toLower();
            if (m == QLatin1String("none"))
                v.mask = CompareVariant::Mask::None;
            else if (m == QLatin1String("causal"))
                v.mask = CompareVariant::Mask::Causal;
            else if (m == QLatin1String("padding"))
                v.mask = CompareVariant::Mask::Padding;
            else if (m == QLatin1String("causal+padding")
                     && a.kind != AttentionKind::EncoderDecoder)
                v.mask = CompareVariant::Mask::CausalPadding;
            else
                return bad(a.kind == AttentionKind::EncoderDecoder
                               ? QStringLiteral("mask must be none, causal or padding for "
                                                "--kind cross")
                               : QStringLiteral("mask must be none, causal, padding or "
                                                "causal+padding"));
        } else if (key == QLatin1String("dk") || key == QLatin1String("d_k")
                   || key == QLatin1String("d-k")) {
            const int maxDk = int(SessionParameters::maxDModel / std::max<Index>(a.heads, 1));
            const int dk = value.toInt(&ok);
            if (!ok || dk < 1 || dk > maxDk)
                return bad(QStringLiteral("dk must be an integer in [1, %1] (d_model of B = dk "
                                          "x h = %2 heads, at most %3)")
                               .arg(maxDk)
                               .arg(a.heads)
                               .arg(SessionParameters::maxDModel));
            v.dK = dk;
        } else {
            return bad(QStringLiteral("unknown key '%1' (keys: %2)").arg(key, keys));
        }
    }
    return v;
}

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

} // namespace

namespace {

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

    /// Whether the command line itself (not a --session's values in front of it) gives --name.
    bool given(const QString &name) const
    {
        const QString option = QStringLiteral("--") + name;
        for (const QString &a : arguments.mid(1))
            if (a == option || a.startsWith(option + QLatin1Char('=')))
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
QList<QCommandLineOption> heatmapModelOptions()
{
    return {
        {QStringLiteral("n"),
         QStringLiteral("Query count n (1-65536; beyond 4096 the view comes from the tile "
                        "engine, see --compute)."),
         QStringLiteral("n"), QStringLiteral("8")},
        {QStringLiteral("d-model"), QStringLiteral("Model width d_model (1-4096)."),
         QStringLiteral("d"), QStringLiteral("16")},
        {QStringLiteral("heads"), QStringLiteral("Head count h, a divisor of d_model."),
         QStringLiteral("h"), QStringLiteral("4")},
        {QStringLiteral("seed"),
         QStringLiteral("Seed of numpy.random.default_rng (or of torch.manual_seed)."),
         QStringLiteral("seed"), QStringLiteral("0")},
        {QStringLiteral("generator"),
         QStringLiteral("Random streams of the layer and inputs: numpy (numpy.random.default_rng: "
                        "xavier init, then standard_normal) or torch (torch.manual_seed: "
                        "nn.MultiheadAttention's default init, then torch.randn(1, n, d) in "
                        "--dtype)."),
         QStringLiteral("numpy|torch"), QStringLiteral("numpy")},
        {QStringLiteral("kind"),
         QStringLiteral("encoder (self-attention), decoder (causal self-attention) or cross "
                        "(encoder-decoder attention, n_q = n queries over --n-k keys)."),
         QStringLiteral("kind"), QStringLiteral("encoder")},
        {QStringLiteral("n-k"), QStringLiteral("Key count for --kind cross (1-65536, as --n)."),
         QStringLiteral("n_k"), QStringLiteral("10")},
        {QStringLiteral("compute"),
         QStringLiteral(
             "full (every head's n_q x n_k weights and scores in float64, as the "
             "window), tiles (the tile engine: each head and the mean pooled to at "
             "most 1024 x 1024 pixels straight from the queries and keys, exact max "
             "or mean of each pixel's unmasked cells, without the n_q x n_k matrices; --view "
             "grid or head only) or auto (tiles when the full matrices would take "
             "more than 256 MiB or n > 4096)."),
         QStringLiteral("mode"), QStringLiteral("auto")},
        {QStringLiteral("mask"),
         QStringLiteral("none, causal or padding (the last --padding keys)."),
         QStringLiteral("mask"), QStringLiteral("none")},
        {QStringLiteral("padding"),
         QStringLiteral("Padding key count for --mask padding, 0 to n_k (the default is kept "
                        "within n_k)."),
         QStringLiteral("m"), QStringLiteral("2")},
        {QStringLiteral("alpha"),
         QStringLiteral("Scale exponent: scale = d_k^-alpha / temperature (0.5 = 1/sqrt(d_k), "
                        "0 = unscaled)."),
         QStringLiteral("alpha"), QStringLiteral("0.5")},
        {QStringLiteral("temperature"), QStringLiteral("Softmax temperature (> 0)."),
         QStringLiteral("tau"), QStringLiteral("1")},
        {QStringLiteral("dtype"), QStringLiteral("float32 or float64."), QStringLiteral("dtype"),
         QStringLiteral("float64")},
        {QStringLiteral("view"),
         QStringLiteral("grid (every head and the mean), head (one), model (with --in: every "
                        "layer and head of a stack of weights as thumbnails on one colour scale), "
                        "steps (one head's raw scores, scaled and masked scores and weights side "
                        "by side), compare (the window's A/B view: A, a configuration B set by "
                        "--compare, B - A and a table of metric deltas), tokens (the Tokens tab's "
                        "head view: queries left, keys right, a line per head from query i to key "
                        "j with opacity in proportion to w_ij, the largest opaque), text (the "
                        "keys coloured by the weights of one query, --query) or positions (the "
                        "sinusoidal positional encoding PE, n x d_model, and its similarity PE "
                        "PE^T, n x n, as the Positions tab; n up to 4096). animate: grid or "
                        "head."),
         QStringLiteral("view"), QStringLiteral("grid")},
        {QStringLiteral("head"),
         QStringLiteral("Head for --view head, compare and text: 0 ... h-1, or 'mean'; for "
                        "--view steps: 0 ... h-1; for --view tokens: the one head (or 'mean') "
                        "whose lines are drawn (default there: every head)."),
         QStringLiteral("i"), QStringLiteral("0")},
        {QStringLiteral("query"),
         QStringLiteral("With --view text: the query (shown row, 0 ... n_q-1) whose weights "
                        "colour the keys. Default: the last query."),
         QStringLiteral("i")},
        {QStringLiteral("compare"),
         QStringLiteral("With --view compare: how B differs from A (the other options), as "
                        "key=value pairs separated by commas: alpha=<0-1> or scale=on|off, "
                        "tau=<t>, mask=none|causal|padding|causal+padding, dk=<d_k of B>. B "
                        "starts as the window's first B: A with the 1/sqrt(d_k) scale toggled. "
                        "Example: --compare mask=causal,dk=64."),
         QStringLiteral("changes")},
    };
}

/// The view and output options of heatmap and animate.
QList<QCommandLineOption> heatmapViewOptions()
{
    return {
        {QStringLiteral("colormap"), QStringLiteral("viridis, magma, cividis, gray or RdBu_r."),
         QStringLiteral("name"), QStringLiteral("viridis")},
        {QStringLiteral("scale"), QStringLiteral("Colour scale: linear or log."),
         QStringLiteral("scale"), QStringLiteral("linear")},
        {QStringLiteral("range"),
         QStringLiteral("Colour range: fixed ([0, 1] for weights) or auto (data min ... max)."),
         QStringLiteral("range"), QStringLiteral("fixed")},
        {QStringLiteral("width"), QStringLiteral("Image width in pixels (PDF: points)."),
         QStringLiteral("px"), QStringLiteral("1600")},
        {QStringLiteral("height"), QStringLiteral("Image height in pixels (PDF: points)."),
         QStringLiteral("px"), QStringLiteral("1000")},
        {QStringLiteral("dpr"),
         QStringLiteral("Device pixel ratio for PNG (2 doubles the pixels, same layout)."),
         QStringLiteral("ratio"), QStringLiteral("1")},
        {QStringLiteral("format"),
         QStringLiteral("png, svg or pdf. Default: from the --out suffix; when both are given "
                        "they must agree (--format names the format of an --out without a "
                        ".png/.svg/.pdf suffix); png for --batch-dir alone."),
         QStringLiteral("format")},
        {QStringLiteral("out"),
         QStringLiteral("Output file (.png, .svg or .pdf); may be left out with --batch-dir or "
                        "--data."),
         QStringLiteral("file")},
        {QStringLiteral("tokens"),
         QStringLiteral("A sentence, split into tokens at spaces and punctuation: they label the "
                        "axes and set n. Each distinct token gets its own seeded input vector, "
                        "whatever its position (reordering words with PE off permutes the "
                        "heatmap)."),
         QStringLiteral("text")},
        {QStringLiteral("pooling"),
         QStringLiteral("When a tile has more cells than pixels: max or mean of each pixel's "
                        "unmasked cells (a pixel of masked cells only shows as masked)."),
         QStringLiteral("pooling"), QStringLiteral("max")},
        {QStringLiteral("sort-heads"),
         QStringLiteral("Order of the head tiles in --view grid: index, entropy or max-weight "
                        "(the head's mean over rows), low first unless --sort-descending. Titles "
                        "keep the head numbers; the mean tile stays last."),
         QStringLiteral("key"), QStringLiteral("index")},
        {QStringLiteral("sort-descending"),
         QStringLiteral("With --sort-heads entropy or max-weight: high first.")},
        {QStringLiteral("pin-query"),
         QStringLiteral("Outline query row I (0 ... n_q-1) in every head and name it in the "
                        "caption."),
         QStringLiteral("I")},
        {QStringLiteral("trim-padding"),
         QStringLiteral("With --mask padding: leave out the padded keys (and, for self-attention, "
                        "the padded queries).")},
        {QStringLiteral("hide-keys"),
         QStringLiteral("Keys not to show, e.g. 0 (a BOS token), 0,3 or 5-7; each row is "
                        "renormalised over the shown keys unless --raw."),
         QStringLiteral("list")},
        {QStringLiteral("raw"),
         QStringLiteral("With --hide-keys: keep the raw weights (rows then sum to less than 1).")},
        {QStringLiteral("dpi"),
         QStringLiteral("PNG print resolution (24-2400): --width x --height are then the PNG's "
                        "pixels, with text sized for this resolution (written in the file); "
                        "replaces --dpr."),
         QStringLiteral("dpi")},
        {QStringLiteral("batch-dir"),
         QStringLiteral("Write one file per head into this folder (created if missing): "
                        "head-0.<format> ... head-<h-1>.<format>, and head-mean.<format> when "
                        "h > 1; the format is --format (default png)."),
         QStringLiteral("dir")},
        {QStringLiteral("in"),
         QStringLiteral("Show the tensors of this .npz or .npy, as File > Open Tensors reads them: "
                        "query/key/value (+ PyTorch-named parameters) or attention weights, e.g. "
                        "'attentions' (layers, heads, n_q, n_k) with 'tokens' (strings) as saved "
                        "from a model's output_attentions. The file fixes n, n_k, d_model and h."),
         QStringLiteral("file")},
        {QStringLiteral("layer"),
         QStringLiteral("With weights of several layers: the layer whose heads are drawn (0 = "
                        "first); with --view model, only that layer's row."),
         QStringLiteral("l")},
        {QStringLiteral("batch"),
         QStringLiteral("With --in: the batch item (0 ... B-1) of inputs shaped (B, n, E) or of "
                        "attentions shaped (layers, B, heads, n_q, n_k)."),
         QStringLiteral("i"), QStringLiteral("0")},
        {QStringLiteral("session"),
         QStringLiteral("Take the parameters, tokens, tensors and heatmap view (head, colormap, "
                        "scale, range, pooling) from a saved session (.attnlab.json); options "
                        "given explicitly override them."),
         QStringLiteral("file")},
        {QStringLiteral("data"),
         QStringLiteral("Write the numbers shown (weights, scores, per-row metric series) to "
                        "this .npz, .npy, .json or .csv file (.npy and .csv write several files "
                        "next to it)."),
         QStringLiteral("file")},
        memoryBudgetOption(QStringLiteral("sizes whose weights and scores (every head, float64 "
                                          "for display; twice for --view compare; with the tile "
                                          "engine its inputs, queries, keys, row blocks and "
                                          "pooled images) and PNG image need")),
    };
}

/// The options animate adds: what is animated, over which range, and where the frames go.
QList<QCommandLineOption> animateOptions()
{
    return {
        {QStringLiteral("param"),
         QStringLiteral("The parameter animated: dk (d_k; d_model = d_k x h, so leave "
                        "--d-model out), alpha (the scale exponent, 0-1) or tau (the "
                        "temperature, 0.01-100)."),
         QStringLiteral("dk|alpha|tau")},
        {QStringLiteral("from"), QStringLiteral("The first frame's value."), QStringLiteral("A")},
        {QStringLiteral("to"), QStringLiteral("The last frame's value."), QStringLiteral("B")},
        {QStringLiteral("frames"),
         QStringLiteral("Frame count (1-%1): equal steps from --from to --to (dk rounded to "
                        "integers).")
             .arg(kMaxPlayFrames),
         QStringLiteral("N"), QStringLiteral("21")},
        {QStringLiteral("out-dir"),
         QStringLiteral("Folder of the frames (created if missing): frame_000.png ... and "
                        "frames.csv (frame, file, parameter, value, d_model, heads, d_k, "
                        "alpha, tau)."),
         QStringLiteral("dir")},
    };
}

/// Sets the memory budget files are read within, then merges --session FILE into the command line.
std::optional<int> loadHeatmapSession(QCommandLineParser &parser, HeatmapRequest &req)
{
    const QString &command = req.command;
    const QStringList &arguments = req.arguments;
    auto &sessionTokens = req.sessionTokens;
    auto &sessionTensors = req.sessionTensors;
    auto &sessionOptions = req.sessionOptions;
    auto &sessionTokenView = req.sessionTokenView;
    const auto givenOnCommandLine = [&req](const QString &name) { return req.given(name); };
    // Files are read within the memory budget: what an .npz declares decides before any of its
    // members is decompressed (readTensorFile reads through sessionMemoryBudget()).
    {
        QString budgetError;
        const auto budget = memoryBudgetBytes(parser, &budgetError);
        if (!budget)
            return usageError(command, budgetError);
        setSessionMemoryBudget(std::size_t(*budget));
    }
    // --session FILE: the session's values go in front of the command line, so options given
    // explicitly win (the parser keeps an option's last value); its tokens count unless --tokens
    // or --n is given, its tensors are loaded as File → Open Tensors… does.
    if (parser.isSet(QStringLiteral("session"))) {
        QString loadError;
        const auto session = SessionFile::load(parser.value(QStringLiteral("session")), &loadError);
        if (!session)
            return usageError(command, loadError);
        if (!parser.isSet(QStringLiteral("tokens")) && !parser.isSet(QStringLiteral("n")))
            sessionTokens = session->parameters.tokenList();
        sessionTensors = loadSessionTensors(session->tensors, &loadError);
        if (!sessionTensors && !loadError.isEmpty())
            return usageError(command, loadError);
        sessionOptions
            = heatmapViewFromJson(session->view.value(QLatin1String("heatmap")).toObject(), {});
        sessionTokenView
            = tokenViewFromJson(session->view.value(QLatin1String("tokens")).toObject(), {});
        // A session saved on the Long tab: that map has a length of its own, which the command
        // line draws only when asked.
        const QJsonObject longMap = session->view.value(QLatin1String("long_map")).toObject();
        if (!givenOnCommandLine(QStringLiteral("n"))
            && session->view.value(QLatin1String("tabs"))
                   .toArray()
                   .contains(QStringLiteral("longMapView"))
            && longMap.value(QLatin1String("n")).isDouble()) {
            const int head = longMap.value(QLatin1String("head")).toInt(-1);
            QTextStream(stderr)
                << "attnlab " << command << ": note: the session shows the Long tab (n = "
                << longMap.value(QLatin1String("n")).toInt() << "); this draws the Heads view "
                << "of its parameters: add --n " << longMap.value(QLatin1String("n")).toInt()
                << " --view head --head "
                << (head < 0 ? QStringLiteral("mean") : QString::number(head)) << " --pooling "
                << longMap.value(QLatin1String("pooling")).toString(QStringLiteral("max"))
                << " for the Long tab's map\n";
        }
        QStringList expanded = sessionArguments(*session);
        expanded.prepend(arguments.constFirst());
        expanded += arguments.mid(1);
        // The session's options come first on purpose (the command line's win): no repeat check.
        if (const auto done = parseArguments(parser, command, expanded, false, false))
            return *done;
    }
    return std::nullopt;
}

/// animate: what is animated, checked before anything else (exit 2 with the option's name).
std::optional<int> parseAnimation(const QCommandLineParser &parser, HeatmapRequest &req)
{
    const QString &command = req.command;
    auto &play = req.play;
    const auto givenOnCommandLine = [&req](const QString &name) { return req.given(name); };
    QString error;
    for (const char *name : {"out", "batch-dir", "data", "format", "dpi", "compare"}) {
        if (givenOnCommandLine(QLatin1String(name)))
            return usageError(command,
                              QStringLiteral("--%1 does not go with animate (frames are PNG "
                                             "files in --out-dir)")
                                  .arg(QLatin1String(name)));
    }
    for (const char *name : {"in", "layer", "query"}) {
        if (givenOnCommandLine(QLatin1String(name)))
            return usageError(command,
                              QStringLiteral("--%1 does not go with animate (it animates the "
                                             "seeded inputs the model options describe, "
                                             "drawn as grid or head)")
                                  .arg(QLatin1String(name)));
    }
    for (const char *name : {"param", "from", "to", "out-dir"}) {
        if (!parser.isSet(QLatin1String(name)))
            return usageError(command, QStringLiteral("--%1 is required").arg(QLatin1String(name)));
    }
    try {
        play.parameter = parsePlayParameter(parser.value(QStringLiteral("param")).toStdString());
    } catch (const InvalidArgument &) {
        return usageError(command,
                          QStringLiteral("--param must be one of dk, alpha, tau, "
                                         "got '%1'")
                              .arg(parser.value(QStringLiteral("param"))));
    }
    for (const auto &[name, out] : {std::pair {QStringLiteral("from"), &play.from},
                                    std::pair {QStringLiteral("to"), &play.to}}) {
        bool ok = false;
        *out = parser.value(name).toDouble(&ok);
        if (!ok || !std::isfinite(*out))
            return usageError(
                command,
                QStringLiteral("--%1 must be a number, got '%2'").arg(name, parser.value(name)));
    }
    const auto frames = intOption(parser, QStringLiteral("frames"), 1, kMaxPlayFrames, &error);
    if (!frames)
        return usageError(command, error);
    play.frames = int(*frames);
    // The animated parameter's own option would be overridden by every frame.
    const QString own = play.parameter == PlayParameter::HeadWidth ? QStringLiteral("d-model")
        : play.parameter == PlayParameter::ScaleExponent           ? QStringLiteral("alpha")
                                                                   : QStringLiteral("temperature");
    if (givenOnCommandLine(own))
        return usageError(command,
                          QStringLiteral("--%1 is set by every frame of --param %2; leave it "
                                         "out%3")
                              .arg(own, parser.value(QStringLiteral("param")),
                                   play.parameter == PlayParameter::HeadWidth
                                       ? QStringLiteral(" (d_model = d_k x h)")
                                       : QString()));
    const QString view = parser.value(QStringLiteral("view"));
    if (view != QLatin1String("grid") && view != QLatin1String("head"))
        return usageError(
            command, QStringLiteral("--view must be grid or head for animate, got '%1'").arg(view));
    return std::nullopt;
}

std::optional<int> parseModelInputs(const QCommandLineParser &parser, HeatmapRequest &req);

/// The model's parameters: sizes, seed, kind, mask, scale, positions, tokens and tensors.
std::optional<int> parseModelParameters(const QCommandLineParser &parser, HeatmapRequest &req)
{
    const QString &command = req.command;
    const bool animate = req.animate;
    auto &play = req.play;
    auto &schedule = req.schedule;
    auto &p = req.p;
    auto &position = req.position;
    const auto givenOnCommandLine = [&req](const QString &name) { return req.given(name); };
    QString error;
    const auto n
        = intOption(parser, QStringLiteral("n"), 1, SessionParameters::maxLongSequence, &error);
    if (!n)
        return usageError(command, error);
    const auto dModel
        = intOption(parser, QStringLiteral("d-model"), 1, SessionParameters::maxDModel, &error);
    if (!dModel)
        return usageError(command, error);
    const bool animateHeadWidth = animate && play.parameter == PlayParameter::HeadWidth;
    const auto heads = intOption(
        parser, QStringLiteral("heads"), 1,
        animateHeadWidth ? std::int64_t(SessionParameters::maxDModel) : *dModel, &error);
    if (!heads)
        return usageError(command, error);
    if (animate) {
        try {
            schedule = play.schedule(int(*heads));
        } catch (const InvalidArgument &e) {
            return usageError(
                command,
                QStringLiteral("--param %1: %2")
                    .arg(parser.value(QStringLiteral("param")), QString::fromStdString(e.what())));
        }
    }
    if (!animateHeadWidth && *dModel % *heads != 0)
        return usageError(
            command,
            QStringLiteral("--heads %1 does not divide --d-model %2").arg(*heads).arg(*dModel));
    const auto seed = seedOption(parser, QStringLiteral("seed"), &error);
    if (!seed)
        return usageError(command, error);
    if (!checkChoice(
            parser, QStringLiteral("kind"),
            {QStringLiteral("encoder"), QStringLiteral("decoder"), QStringLiteral("cross")}, &error)
        || !checkChoice(
            parser, QStringLiteral("mask"),
            {QStringLiteral("none"), QStringLiteral("causal"), QStringLiteral("padding")}, &error)
        || !checkChoice(parser, QStringLiteral("dtype"),
                        {QStringLiteral("float32"), QStringLiteral("float64")}, &error)
        || !checkChoice(parser, QStringLiteral("generator"),
                        {QStringLiteral("numpy"), QStringLiteral("torch")}, &error)
        || !checkChoice(parser, QStringLiteral("view"),
                        {QStringLiteral("grid"), QStringLiteral("head"), QStringLiteral("steps"),
                         QStringLiteral("compare"), QStringLiteral("model"),
                         QStringLiteral("positions"), QStringLiteral("tokens"),
                         QStringLiteral("text")},
                        &error)
        || !checkChoice(parser, QStringLiteral("scale"),
                        {QStringLiteral("linear"), QStringLiteral("log")}, &error)
        || !checkChoice(parser, QStringLiteral("range"),
                        {QStringLiteral("fixed"), QStringLiteral("auto")}, &error)
        || !checkChoice(parser, QStringLiteral("compute"),
                        {QStringLiteral("auto"), QStringLiteral("full"), QStringLiteral("tiles")},
                        &error))
        return usageError(command, error);
    const auto nK
        = intOption(parser, QStringLiteral("n-k"), 1, SessionParameters::maxLongSequence, &error);
    if (!nK)
        return usageError(command, error);
    p.n = int(*n);
    if (parser.isSet(QStringLiteral("tokens"))) {
        // n follows the typed tokens (ui/session/tokenizer.h).
        p.setTokens(splitTokens(parser.value(QStringLiteral("tokens"))));
        if (p.tokens.empty())
            return usageError(command, QStringLiteral("--tokens gave no tokens"));
        const Index count = Index(p.tokens.size());
        if (count > SessionParameters::maxSequence)
            return usageError(command,
                              QStringLiteral("--tokens gave %1 tokens, at most %2 fit")
                                  .arg(count)
                                  .arg(SessionParameters::maxSequence));
        if (parser.isSet(QStringLiteral("n")) && *n != count)
            return usageError(command,
                              QStringLiteral("--n %1 does not match the %2 tokens of --tokens "
                                             "(leave --n out: n follows the tokens)")
                                  .arg(*n)
                                  .arg(count));
        p.n = count;
    }
    p.nK = int(*nK);
    p.dModel = animateHeadWidth ? int(schedule.front()) * int(*heads) : int(*dModel);
    p.heads = int(*heads);
    p.seed = quint64(*seed);
    p.generator = parseRandomSource(parser.value(QStringLiteral("generator")).toStdString());
    p.kind = *parseAttentionKind(parser.value(QStringLiteral("kind")));
    p.mask = *parseMaskChoice(parser.value(QStringLiteral("mask")));
    p.dtype = *parseDType(parser.value(QStringLiteral("dtype")));
    position = positionSettings(parser, &error);
    if (!position)
        return usageError(command, error);
    p.positional = position->scheme == PositionalScheme::Sinusoidal;
    p.rope = position->scheme == PositionalScheme::Rope;
    p.alibi = position->scheme == PositionalScheme::Alibi;
    p.ropeConvention = position->ropeConvention;
    p.ropeBase = position->ropeBase;
    p.kvHeads = position->kvHeads ? int(*position->kvHeads) : 0;
    p.window = int(position->window);
    p.sinks = int(position->sinks);
    // Padding's range is [0, n_k] (the window's and the session's too), checked when the count
    // is used: an explicit --padding with --mask padding. Otherwise (the default 2, or a count
    // without the padding mask) it is kept within [0, n_k] as the window keeps it, so --n 1
    // works without --padding 0.
    const bool paddingUsed
        = p.mask == MaskChoice::KeyPadding && parser.isSet(QStringLiteral("padding"));
    const auto padding = intOption(parser, QStringLiteral("padding"), 0,
                                   paddingUsed ? std::int64_t(p.keyCount())
                                               : std::int64_t(SessionParameters::maxSequence),
                                   &error);
    if (!padding)
        return usageError(command, error);
    p.paddingCount = std::min<Index>(*padding, p.keyCount());
    if (givenOnCommandLine(QStringLiteral("padding")) && p.mask != MaskChoice::KeyPadding)
        return usageError(command,
                          QStringLiteral("--padding %1 has no effect without --mask "
                                         "padding (the last keys are padding only then)")
                              .arg(*padding));
    const auto alpha = doubleOption(parser, QStringLiteral("alpha"), 0.0, 1.0, &error);
    if (!alpha)
        return usageError(command, error);
    p.scaleExponent = *alpha;
    const auto temperature
        = doubleOption(parser, QStringLiteral("temperature"), SessionParameters::minTemperature,
                       SessionParameters::maxTemperature, &error);
    if (!temperature)
        return usageError(command, error);
    p.temperature = *temperature;
    return parseModelInputs(parser, req);
}

/// The model's tokens and tensors (a --session's, or --in FILE's with --batch and --layer), then
/// the parameters' own check.
std::optional<int> parseModelInputs(const QCommandLineParser &parser, HeatmapRequest &req)
{
    const QString &command = req.command;
    auto &sessionTensors = req.sessionTensors;
    auto &p = req.p;
    QString error;
    if (!req.sessionTokens.isEmpty())
        p.setTokens(req.sessionTokens);
    if (parser.isSet(QStringLiteral("in"))) {
        // --in FILE: the tensors File > Open Tensors shows; they fix n, n_k, d_model and h.
        if (parser.isSet(QStringLiteral("session")))
            return usageError(command,
                              QStringLiteral("--in and --session cannot be combined (a "
                                             "session names its own tensors)"));
        const auto batch = intOption(parser, QStringLiteral("batch"), 0, 1 << 30, &error);
        if (!batch)
            return usageError(command, error);
        std::shared_ptr<const TensorSource> source;
        try {
            source = makeTensorSource(readTensorFile(parser.value(QStringLiteral("in"))), {},
                                      MaskConvention::Masked, &error, int(*batch));
        } catch (const NpyError &e) {
            error = QString::fromUtf8(e.what());
        }
        if (!source)
            return usageError(command, error);
        sessionTensors = source;
    } else if (parser.isSet(QStringLiteral("batch"))) {
        return usageError(command, QStringLiteral("--batch goes with --in"));
    }
    if (parser.isSet(QStringLiteral("layer"))) {
        if (!sessionTensors || !sessionTensors->isWeights())
            return usageError(command,
                              QStringLiteral("--layer goes with loaded weights (--in "
                                             "FILE holding attention weights)"));
        const auto layer = intOption(parser, QStringLiteral("layer"), 0,
                                     sessionTensors->layerCount() - 1, &error);
        if (!layer)
            return usageError(command,
                              error
                                  + QStringLiteral(" (the weights have %1 layers)")
                                        .arg(sessionTensors->layerCount()));
        sessionTensors = sessionTensors->withLayer(int(*layer));
    }
    p.tensors = sessionTensors;
    if (parser.isSet(QStringLiteral("in")))
        p = sessionTensors->parametersFor(p, sessionTensors);
    const QString invalid = p.validate(SessionParameters::maxLongSequence);
    if (!invalid.isEmpty())
        return usageError(command, invalid);
    return std::nullopt;
}

/// The view drawn (--view, --compare, --query) and its head.
std::optional<int> parseViewChoice(const QCommandLineParser &parser, HeatmapRequest &req)
{
    const QString &command = req.command;
    auto &sessionOptions = req.sessionOptions;
    auto &sessionTokenView = req.sessionTokenView;
    auto &p = req.p;
    auto &options = req.options;
    auto &tokenOptions = req.tokenOptions;
    auto &pb = req.pb;
    auto &steps = req.steps;
    auto &compare = req.compare;
    auto &tokenHeads = req.tokenHeads;
    auto &tokenText = req.tokenText;
    auto &tokenView = req.tokenView;
    const auto givenOnCommandLine = [&req](const QString &name) { return req.given(name); };
    QString error;
    options = sessionOptions;
    steps = parser.value(QStringLiteral("view")) == QLatin1String("steps");
    compare = parser.value(QStringLiteral("view")) == QLatin1String("compare");
    tokenHeads = parser.value(QStringLiteral("view")) == QLatin1String("tokens");
    tokenText = parser.value(QStringLiteral("view")) == QLatin1String("text");
    tokenView = tokenHeads || tokenText;
    if (parser.isSet(QStringLiteral("compare")) && !compare)
        return usageError(command, QStringLiteral("--compare goes with --view compare"));
    if (parser.isSet(QStringLiteral("query")) && !tokenText)
        return usageError(command, QStringLiteral("--query goes with --view text"));
    {
        // Options of the heads grid only: refused where they would change nothing.
        const QString shownView = parser.value(QStringLiteral("view"));
        if (shownView != QLatin1String("grid") && shownView != QLatin1String("head"))
            for (const char *name : {"pin-query", "sort-heads", "sort-descending"})
                if (parser.isSet(QLatin1String(name)))
                    return usageError(command,
                                      QStringLiteral("--%1 goes with --view grid or "
                                                     "head, not --view %2")
                                          .arg(QLatin1String(name), shownView));
    }
    tokenOptions = sessionTokenView;
    tokenOptions.view = tokenText ? TokenView::Text : TokenView::Heads;
    if (tokenView && (p.queryCount() > maxTokenViewTokens || p.keyCount() > maxTokenViewTokens))
        return usageError(command,
                          QStringLiteral("--view %1 draws at most %2 queries and keys (n_q = %3, "
                                         "n_k = %4): use --view grid or head")
                              .arg(parser.value(QStringLiteral("view")))
                              .arg(maxTokenViewTokens)
                              .arg(p.queryCount())
                              .arg(p.keyCount()));
    if (compare
        && (p.queryCount() > SessionParameters::maxSequence
            || p.keyCount() > SessionParameters::maxSequence))
        return usageError(command,
                          QStringLiteral("--view compare needs every head's full n_q x n_k "
                                         "matrices of A and B, n and n_k up to %1 (got n_q = %2, "
                                         "n_k = %3)")
                              .arg(SessionParameters::maxSequence)
                              .arg(p.queryCount())
                              .arg(p.keyCount()));
    if (compare) {
        const auto variant = parseCompare(parser.value(QStringLiteral("compare")), p, &error);
        if (!variant)
            return usageError(command, error);
        pb = variant->apply(p);
        const QString invalidB = pb->validate();
        if (!invalidB.isEmpty())
            return usageError(command,
                              QStringLiteral("--compare: B cannot be computed: %1").arg(invalidB));
    }
    if (steps) {
        const auto index = intOption(parser, QStringLiteral("head"), 0, p.heads - 1, &error);
        if (!index)
            return usageError(command, error);
        options.head = int(*index);
    } else if (tokenView) {
        if (tokenText || givenOnCommandLine(QStringLiteral("head"))) {
            const QString head = parser.value(QStringLiteral("head"));
            int chosen = p.heads; // the mean
            if (head != QLatin1String("mean")) {
                const auto index
                    = intOption(parser, QStringLiteral("head"), 0, p.heads - 1, &error);
                if (!index)
                    return usageError(command, error + QStringLiteral(" (or 'mean')"));
                chosen = int(*index);
            }
            tokenOptions.textHead = chosen;
            if (tokenHeads) { // that head's (or the mean's) lines alone
                tokenOptions.hiddenHeads.clear();
                for (int k = 0; k < p.heads; ++k)
                    if (k != chosen)
                        tokenOptions.hiddenHeads.append(k);
                tokenOptions.showMean = chosen == p.heads;
            }
        }
    } else if (compare || parser.value(QStringLiteral("view")) == QLatin1String("head")) {
        if (!compare)
            options.view = HeatmapView::SingleHead;
        const QString head = parser.value(QStringLiteral("head"));
        if (head == QLatin1String("mean")) {
            options.head = p.heads;
        } else {
            const auto index = intOption(parser, QStringLiteral("head"), 0, p.heads - 1, &error);
            if (!index)
                return usageError(command, error + QStringLiteral(" (or 'mean')"));
            options.head = int(*index);
        }
    }
    return std::nullopt;
}

/// How the view is drawn: colours, pooling, head order, pinned query, hidden keys and size.
std::optional<int> parseDrawingOptions(const QCommandLineParser &parser, HeatmapRequest &req)
{
    const QString &command = req.command;
    auto &p = req.p;
    auto &options = req.options;
    auto &transform = req.transform;
    auto &dpi = req.dpi;
    auto &width = req.width;
    auto &height = req.height;
    auto &dpr = req.dpr;
    const auto givenOnCommandLine = [&req](const QString &name) { return req.given(name); };
    QString error;
    const auto colormap = Colormap::fromName(parser.value(QStringLiteral("colormap")));
    if (!colormap)
        return usageError(command,
                          QStringLiteral("--colormap must be one of viridis, magma, "
                                         "cividis, gray, RdBu_r, got '%1'")
                              .arg(parser.value(QStringLiteral("colormap"))));
    options.colormap = *colormap;
    options.scale = parser.value(QStringLiteral("scale")) == QLatin1String("log")
        ? ColorScale::Log
        : ColorScale::Linear;
    options.autoRange = parser.value(QStringLiteral("range")) == QLatin1String("auto");
    if (!checkChoice(parser, QStringLiteral("pooling"),
                     {QStringLiteral("max"), QStringLiteral("mean")}, &error))
        return usageError(command, error);
    options.pooling = parser.value(QStringLiteral("pooling")) == QLatin1String("mean")
        ? HeatmapPooling::Mean
        : HeatmapPooling::Max;
    if (!checkChoice(
            parser, QStringLiteral("sort-heads"),
            {QStringLiteral("index"), QStringLiteral("entropy"), QStringLiteral("max-weight")},
            &error))
        return usageError(command, error);
    if (givenOnCommandLine(QStringLiteral("sort-heads"))
        || givenOnCommandLine(QStringLiteral("sort-descending"))) {
        const QString sort = parser.value(QStringLiteral("sort-heads"));
        options.headSort = sort == QLatin1String("entropy") ? HeadOrderKey::Entropy
            : sort == QLatin1String("max-weight")           ? HeadOrderKey::MaxWeight
                                                            : HeadOrderKey::Index;
        options.headSortDescending = parser.isSet(QStringLiteral("sort-descending"));
        if (options.headSortDescending && options.headSort == HeadOrderKey::Index)
            return usageError(command,
                              QStringLiteral("--sort-descending goes with --sort-heads entropy "
                                             "or max-weight"));
    }
    if (parser.isSet(QStringLiteral("pin-query"))) {
        // n_q of the parameters; loaded tensors are checked again once their n_q is known.
        const int maxQuery
            = int(p.tensors ? SessionParameters::maxLongSequence - 1 : p.queryCount() - 1);
        const auto pin = intOption(parser, QStringLiteral("pin-query"), 0, maxQuery, &error);
        if (!pin)
            return usageError(
                command,
                p.tensors ? error : error + QStringLiteral(" (n_q = %1)").arg(p.queryCount()));
        options.pinnedQuery = int(*pin);
    }
    transform.trimPadding = parser.isSet(QStringLiteral("trim-padding"));
    transform.renormalize = !parser.isSet(QStringLiteral("raw"));
    if (parser.isSet(QStringLiteral("raw")) && !parser.isSet(QStringLiteral("hide-keys")))
        return usageError(command,
                          QStringLiteral("--raw has no effect without --hide-keys (it keeps the "
                                         "weights of the shown keys as computed)"));
    if (!parseKeyList(parser.value(QStringLiteral("hide-keys")), &transform.hiddenKeys, &error))
        return usageError(command, QStringLiteral("--hide-keys: ") + error);
    if (parser.isSet(QStringLiteral("dpi"))) {
        dpi = doubleOption(parser, QStringLiteral("dpi"), 24.0, 2400.0, &error);
        if (!dpi)
            return usageError(command, error);
    }

    width = intOption(parser, QStringLiteral("width"), 64, 16384, &error);
    if (!width)
        return usageError(command, error);
    height = intOption(parser, QStringLiteral("height"), 64, 16384, &error);
    if (!height)
        return usageError(command, error);
    dpr = doubleOption(parser, QStringLiteral("dpr"), 0.25, 8.0, &error);
    if (!dpr)
        return usageError(command, error);
    // A PNG has at most 32768 pixels a side (the renderers' limit): decidable here.
    if (!dpi && (double(*width) * *dpr > 32768.0 || double(*height) * *dpr > 32768.0))
        return usageError(command,
                          QStringLiteral("--width %1 x --height %2 at --dpr %3 is %4 x %5 pixels; "
                                         "a PNG may have at most 32768 a side")
                              .arg(*width)
                              .arg(*height)
                              .arg(*dpr)
                              .arg(double(*width) * *dpr, 0, 'f', 0)
                              .arg(double(*height) * *dpr, 0, 'f', 0));
    return std::nullopt;
}

/// animate: checks the frames' folder and values, then writes every frame and frames.csv.
int runAnimation(const QCommandLineParser &parser, HeatmapRequest &req)
{
    const QString &command = req.command;
    auto &play = req.play;
    auto &schedule = req.schedule;
    auto &p = req.p;
    auto &options = req.options;
    auto &width = req.width;
    auto &height = req.height;
    auto &dpr = req.dpr;
    QString error;
    const QString outDir = parser.value(QStringLiteral("out-dir"));
    if (QFileInfo(outDir).exists() && !QFileInfo(outDir).isDir())
        return usageError(command, QStringLiteral("--out-dir '%1' is not a folder").arg(outDir));
    if (!QDir().mkpath(outDir))
        return usageError(command, QStringLiteral("--out-dir '%1' cannot be created").arg(outDir));
    if (p.queryCount() > SessionParameters::maxSequence
        || p.keyCount() > SessionParameters::maxSequence)
        return usageError(
            command,
            QStringLiteral("animate takes n and n_k up to %1").arg(SessionParameters::maxSequence));
    for (double v : {schedule.front(), schedule.back()}) {
        const QString bad = applyPlayValue(p, play.parameter, v).validate();
        if (!bad.isEmpty())
            return usageError(command,
                              QStringLiteral("--param %1 = %2: %3")
                                  .arg(parser.value(QStringLiteral("param")))
                                  .arg(v)
                                  .arg(bad));
    }
    std::vector<PlayFrame> frames;
    if (!writePlayFrames(p, options, play, outDir, QSize(int(*width), int(*height)), *dpr, &error,
                         &frames))
        return failure(command, error);
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

/// The files written (--out, --batch-dir, --data) and their format, checked before anything is
/// computed.
std::optional<int> planOutputs(const QCommandLineParser &parser, HeatmapRequest &req,
                               HeatmapPlan &plan)
{
    const QString &command = req.command;
    auto &p = req.p;
    auto &steps = req.steps;
    auto &compare = req.compare;
    auto &tokenView = req.tokenView;
    auto &out = plan.out;
    auto &batchDir = plan.batchDir;
    auto &dataPath = plan.dataPath;
    auto &format = plan.format;
    auto &viewName = plan.viewName;
    auto &positions = plan.positions;
    QString error;
    out = parser.value(QStringLiteral("out"));
    batchDir = parser.value(QStringLiteral("batch-dir"));
    dataPath = parser.value(QStringLiteral("data"));
    if (out.isEmpty() && batchDir.isEmpty() && dataPath.isEmpty())
        return usageError(command,
                          QStringLiteral("--out is required (a .png, .svg or .pdf file), "
                                         "unless --batch-dir or --data is given"));
    if (!dataPath.isEmpty() && !dataFormatForPath(dataPath))
        return usageError(command,
                          QStringLiteral("--data '%1' must end in .npz, .npy, .json or "
                                         ".csv")
                              .arg(dataPath));
    const auto resolved = outputFormat(
        parser.isSet(QStringLiteral("format")) ? parser.value(QStringLiteral("format")) : QString(),
        out, {QStringLiteral("png"), QStringLiteral("svg"), QStringLiteral("pdf")},
        QStringLiteral("png"), QStringLiteral("--format"), QStringLiteral("--out"), &error);
    if (!resolved)
        return usageError(command, error);
    format = *resolved;

    viewName = parser.value(QStringLiteral("view"));
    if ((steps || compare || tokenView) && out.isEmpty())
        return usageError(command, QStringLiteral("--view %1 needs --out").arg(viewName));
    positions = viewName == QLatin1String("positions");
    if (positions && (!batchDir.isEmpty() || !dataPath.isEmpty()))
        return usageError(command,
                          QStringLiteral("--batch-dir and --data go with --view grid or "
                                         "head, not --view positions"));
    if (positions && p.n > SessionParameters::maxSequence)
        return usageError(command,
                          QStringLiteral("--view positions takes n up to %1 (PE PE^T is n x n), "
                                         "got %2")
                              .arg(SessionParameters::maxSequence)
                              .arg(p.n));
    if ((steps || compare || tokenView) && (!batchDir.isEmpty() || !dataPath.isEmpty()))
        return usageError(command,
                          QStringLiteral("--batch-dir and --data go with --view grid or "
                                         "head, not --view %1")
                              .arg(viewName));

    // Every file written, checked before anything is computed (exit 2): no device, FIFO, link,
    // folder or read-only file is replaced, no two outputs are one file.
    std::vector<OutputPath> outputs = {{QStringLiteral("--out"), out}};
    if (!batchDir.isEmpty())
        outputs.push_back(
            {QStringLiteral("--batch-dir"), batchDir, true, {QStringLiteral("head-*.") + format}});
    if (!dataPath.isEmpty()) {
        // .csv writes <stem>_metrics.csv too; .npy writes only <stem>_<array>.npy files.
        const QFileInfo data(dataPath);
        const QString stem = data.completeBaseName();
        if (*dataFormatForPath(dataPath) == DataFormat::Npy)
            outputs.push_back({QStringLiteral("--data"),
                               data.dir().filePath(stem + QStringLiteral("_weights.npy")),
                               false,
                               {stem + QStringLiteral("_*.npy")}});
        else
            outputs.push_back({QStringLiteral("--data"), dataPath, false,
                               dataFormatForPath(dataPath) == DataFormat::Csv
                                   ? QStringList {stem + QStringLiteral("_metrics.csv")}
                                   : QStringList {}});
    }
    if (const auto refused = checkOutputPaths(
            command, outputs,
            {{QStringLiteral("--session"), parser.value(QStringLiteral("session"))}}))
        return *refused;
    return std::nullopt;
}

/// --view model: every layer (or --layer's) of the loaded weights, one colour scale.
int writeModelView(const QCommandLineParser &parser, HeatmapRequest &req, const HeatmapPlan &plan)
{
    const QString &command = req.command;
    auto &p = req.p;
    auto &options = req.options;
    auto &width = req.width;
    auto &height = req.height;
    auto &dpr = req.dpr;
    auto &out = plan.out;
    auto &batchDir = plan.batchDir;
    auto &dataPath = plan.dataPath;
    auto &format = plan.format;
    const auto givenOnCommandLine = [&req](const QString &name) { return req.given(name); };
    QString error;
    // The model view: every layer (or --layer's) of the loaded weights, one colour scale.
    if (!p.tensors || !p.tensors->isWeights())
        return usageError(command,
                          QStringLiteral("--view model needs attention weights: --in "
                                         "FILE with 'attentions' (layers, heads, "
                                         "n_q, n_k)"));
    if (out.isEmpty() || !batchDir.isEmpty() || !dataPath.isEmpty())
        return usageError(command, QStringLiteral("--view model writes --out only"));
    const auto source = p.tensors;
    ModelRenderer model;
    model.setStack(std::shared_ptr<const WeightStack>(source, source->weightStack()),
                   QStringLiteral("loaded: %1 [%2 %3]")
                       .arg(source->fileName(), source->arrayName(), source->description()));
    if (source->isAttentionStack())
        model.setNotes({QString::fromStdString(source->rowSumCheck().text())});
    ModelViewOptions modelOptions;
    modelOptions.colormap = options.colormap;
    modelOptions.layer = parser.isSet(QStringLiteral("layer")) ? source->layer() : -1;
    model.setOptions(modelOptions);
    // The natural size (64-pixel maps) unless --width or --height is given.
    QSize modelSize = model.naturalSize();
    if (givenOnCommandLine(QStringLiteral("width")))
        modelSize.setWidth(int(*width));
    if (givenOnCommandLine(QStringLiteral("height")))
        modelSize.setHeight(int(*height));
    if (!model.save(out, modelSize, format == QLatin1String("png") ? *dpr : 1.0, &error))
        return failure(command, error);
    return ExitOk;
}

/// --view positions: the Positions tab's painter (ui/render/positionsrenderer.h).
int writePositionsView(HeatmapRequest &req, const HeatmapPlan &plan)
{
    const QString &command = req.command;
    auto &p = req.p;
    auto &width = req.width;
    auto &height = req.height;
    auto &dpr = req.dpr;
    auto &out = plan.out;
    auto &format = plan.format;
    QString error;
    PositionsRenderer positionsRenderer;
    positionsRenderer.setFigure(computePositionsFigure(p));
    const FigurePainter paint = positionsRenderer.painter();
    const QSize figureSize {int(*width), int(*height)};
    const QString title = QStringLiteral("Attention Lab: positional encoding");
    const bool ok = format == QLatin1String("png")
        ? writeFigurePng(out, figureSize, *dpr, Qt::white, paint, &error)
        : format == QLatin1String("svg")
        ? writeFigureSvg(out, figureSize, title,
                         positionsRenderer.figure().caption.join(QLatin1Char(' ')), paint, &error)
        : writeFigurePdf(out, figureSize, title, paint, &error);
    return ok ? ExitOk : failure(command, error);
}

/// Full matrices or the tile engine, and the memory the view needs against --memory-budget-mib.
std::optional<int> planEngine(const QCommandLineParser &parser, HeatmapRequest &req,
                              HeatmapPlan &plan)
{
    const QString &command = req.command;
    auto &p = req.p;
    auto &options = req.options;
    auto &pb = req.pb;
    auto &steps = req.steps;
    auto &compare = req.compare;
    auto &tokenView = req.tokenView;
    auto &transform = req.transform;
    auto &dpi = req.dpi;
    auto &width = req.width;
    auto &height = req.height;
    auto &dpr = req.dpr;
    auto &dataPath = plan.dataPath;
    auto &format = plan.format;
    auto &viewName = plan.viewName;
    auto &tiles = plan.tiles;
    auto &longTabColours = plan.longTabColours;
    auto &transformed = plan.transformed;
    const auto givenOnCommandLine = [&req](const QString &name) { return req.given(name); };
    QString error;
    if (!p.tensors) {
        const QString hidden = hiddenKeysError(p, p.queryCount(), p.keyCount(), transform);
        if (!hidden.isEmpty())
            return usageError(command, hidden);
    }

    // The tile engine (ui/pooledsession.h) for long sequences: what it cannot show (scores,
    // steps, compare, hidden keys, data export, loaded tensors) needs the full matrices.
    transformed = transform.trimPadding || !transform.hiddenKeys.isEmpty();
    const QString computeMode = parser.value(QStringLiteral("compute"));
    QString tilesUnavailable;
    if (steps || compare || tokenView)
        tilesUnavailable = QStringLiteral("--view %1").arg(viewName);
    else if (transformed)
        tilesUnavailable = transform.trimPadding ? QStringLiteral("--trim-padding")
                                                 : QStringLiteral("--hide-keys");
    else if (p.tensors)
        tilesUnavailable = QStringLiteral("a session's loaded tensors");
    else if (options.quantity != HeatmapQuantity::Weights)
        tilesUnavailable = QStringLiteral("a session showing scores");
    else if (p.rope || p.alibi || p.keyValueHeads() != p.heads)
        tilesUnavailable = pooledSessionUnsupported(p);
    else if (options.headSort != HeadOrderKey::Index
             && givenOnCommandLine(QStringLiteral("sort-heads")))
        tilesUnavailable = QStringLiteral("--sort-heads (by the heads' per-row metrics)");
    const bool longSequence = p.queryCount() > SessionParameters::maxSequence
        || p.keyCount() > SessionParameters::maxSequence;
    // --data asks for numbers: every cell's while the full matrices can be held (auto), the
    // pooled pixels' beyond maxSequence or with --compute tiles.
    tiles = computeMode == QLatin1String("tiles")
        || (computeMode == QLatin1String("auto") && tilesUnavailable.isEmpty()
            && (longSequence
                || (dataPath.isEmpty() && double(sessionResultBytes(p)) > kTilesAboveBytes)));
    if (computeMode == QLatin1String("full") && longSequence)
        return usageError(command,
                          QStringLiteral("--compute full takes n and n_k up to %1 (got n_q = %2, "
                                         "n_k = %3); longer sequences need --compute tiles")
                              .arg(SessionParameters::maxSequence)
                              .arg(p.queryCount())
                              .arg(p.keyCount()));
    // Over thousands of keys most weights are near 1/n_k, black on the fixed [0, 1] scale: unless
    // --range (or the session) says otherwise, the tile engine's view is coloured as the window's
    // Long tab colours it, up to the largest weight shown (log over the five decades below it,
    // or linear from 0 with --scale linear).
    longTabColours = tiles && !parser.isSet(QStringLiteral("range"));
    if (longTabColours && !parser.isSet(QStringLiteral("scale")))
        options.scale = ColorScale::Log;
    if ((tiles || longSequence) && !tilesUnavailable.isEmpty())
        return usageError(command,
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
        return usageError(command, error);
    const PooledSessionBytes pooledBytes = pooledSessionBytes(p, options.maxImageSide);
    double need
        = tiles ? pooledBytes.total() : double(sessionResultBytes(p)) * (transformed ? 2.0 : 1.0);
    if (pb) // B's result and the difference B - A (n_q x n_k float64 and a mask byte)
        need += double(sessionResultBytes(*pb)) + double(p.queryCount()) * p.keyCount() * 9.0;
    // --data: what the export holds beside the result.
    const double dataBytes = dataPath.isEmpty()
        ? 0.0
        : dataExportBytes(*dataFormatForPath(dataPath), int(p.heads),
                          tiles ? Index(options.maxImageSide) : Index(p.queryCount()),
                          tiles ? Index(options.maxImageSide) : Index(p.keyCount()));
    need += dataBytes;
    // The PNG image (4 bytes a pixel) is drawn in memory too.
    const double imageBytes = format == QLatin1String("png")
        ? (dpi ? double(*width) * double(*height) : double(*width) * *dpr * double(*height) * *dpr)
            * 4.0
        : 0.0;
    if (imageBytes > *budget)
        return usageError(
            command,
            QStringLiteral("--width %1 x --height %2 (--dpr %3) needs %4 for the "
                           "image, over --memory-budget-mib %5")
                .arg(*width)
                .arg(*height)
                .arg(dpi ? 1.0 : *dpr)
                .arg(mibText(imageBytes), parser.value(QStringLiteral("memory-budget-mib"))));
    need += imageBytes;
    if (tiles && need > *budget)
        return usageError(
            command,
            QStringLiteral("--n %1 (n_k = %2) with --d-model %3 and --heads %4 needs about %5 "
                           "for the tile engine's view: the larger of %6 while projecting the "
                           "inputs and %7 for the queries, keys and row blocks plus %8 for %9, "
                           "and %10 for the picture; over --memory-budget-mib %11: "
                           "lower --n, --n-k or --d-model, or raise --memory-budget-mib")
                .arg(p.queryCount())
                .arg(p.keyCount())
                .arg(p.dModel)
                .arg(p.heads)
                .arg(mibText(need), mibText(pooledBytes.inputs), mibText(pooledBytes.engine),
                     mibText(pooledBytes.images))
                .arg(p.heads > 1 ? QStringLiteral("%1 pooled images").arg(p.heads + 1)
                                 : QStringLiteral("the pooled image"))
                .arg(mibText(imageBytes), parser.value(QStringLiteral("memory-budget-mib"))));
    if (need > *budget)
        return usageError(
            command,
            QStringLiteral("--n %1 (n_k = %2) with --heads %3 needs about %4 for the weights and "
                           "raw and scaled scores of every head (n_q x n_k float64 each%5)%6, over "
                           "--memory-budget-mib %7: lower --n, --n-k or --heads, %8or raise "
                           "--memory-budget-mib")
                .arg(p.queryCount())
                .arg(p.keyCount())
                .arg(p.heads)
                .arg(mibText(need), pb ? QStringLiteral(", for A and B") : QString(),
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

/// Computes the view (full or tiles) and prints the notes on what is drawn.
std::optional<int> computeHeatmap(HeatmapRequest &req, const HeatmapPlan &plan,
                                  std::shared_ptr<SessionResult> &result)
{
    const QString &command = req.command;
    auto &p = req.p;
    auto &position = req.position;
    auto &options = req.options;
    auto &transform = req.transform;
    auto &out = plan.out;
    auto &batchDir = plan.batchDir;
    auto &dataPath = plan.dataPath;
    auto &tiles = plan.tiles;
    auto &longTabColours = plan.longTabColours;
    const auto givenOnCommandLine = [&req](const QString &name) { return req.given(name); };
    QString error;
    result = std::make_shared<SessionResult>(
        tiles ? computePooledSession(p, options.maxImageSide,
                                     options.pooling == HeatmapPooling::Mean ? TilePooling::Mean
                                                                             : TilePooling::Max)
              : computeSession(p));
    if (!result->ok() && result->inputError) {
        // The arguments' fault (exit 2, as compute's for a file): scores scaled past the dtype's
        // range name the options that set the scale.
        QString message = result->error;
        if (message.contains(QLatin1String("overflowed")))
            message += p.dtype == DType::Float32
                ? QStringLiteral(" (float32 holds |x| <= 3.4e38: use a larger --temperature, a "
                                 "larger --alpha or --dtype float64)")
                : QStringLiteral(" (use a larger --temperature or --alpha)");
        return inputError(command, message);
    }
    if (!result->ok())
        return failure(command, result->error);
    // The sequence's lengths (a pooled view's result has pixels, not positions).
    const QString note = windowNote(*position, p.queryCount(), p.keyCount());
    if (!note.isEmpty())
        QTextStream(stderr) << "attnlab " << command << ": " << note << "\n";
    if (longTabColours) {
        // The largest pooled weight of what is drawn: one head, the mean, or every head.
        const auto largest = [](const MatrixD &w) { return w.size() ? w.maxCoeff() : 0.0; };
        double top = 0;
        if (options.view == HeatmapView::SingleHead && options.head >= result->headCount())
            top = largest(result->weightsMean);
        else if (options.view == HeatmapView::SingleHead)
            top = largest(result->weights[std::size_t(options.head)]);
        else
            for (const MatrixD &w : result->weights)
                top = std::max(top, largest(w));
        options.useFixedNorm(ColorNorm::upToLargestWeight(options.scale, top));
        if (!(top > 0) && (!out.isEmpty() || !batchDir.isEmpty()))
            QTextStream(stderr) << "attnlab " << command
                                << ": note: every weight drawn is 0 (every cell masked): the "
                                   "colours span [0, 1]\n";
        else if (!out.isEmpty() || !batchDir.isEmpty())
            QTextStream(stderr)
                << "attnlab " << command << ": note: the tile engine's view is coloured "
                << (options.scale == ColorScale::Log
                        ? QStringLiteral("log10 over the five decades below its largest weight, "
                                         "%1 (as the Long tab)")
                        : QStringLiteral("linear from 0 to its largest weight, %1 (as the Long "
                                         "tab)"))
                       .arg(options.fixedTop, 0, 'g', 4)
                << "; --range fixed gives [0, 1], --range auto the data's range\n";
    }
    if (tiles && !dataPath.isEmpty())
        QTextStream(stderr) << "attnlab " << command
                            << ": note: --data writes the tile engine's pooled view, "
                            << result->queryCount() << " x " << result->keyCount()
                            << " pixels a head (" << result->viewNote
                            << "; query_index / key_index give each pixel's first query / key), "
                               "not the n_q x n_k cells\n";
    if (p.window > 0 && p.mask == MaskChoice::None && givenOnCommandLine(QStringLiteral("mask")))
        QTextStream(stderr) << "attnlab " << command
                            << ": note: the sliding window is causal (query i sees the keys i - w "
                               "< j <= i): with --window, --mask none still masks the future\n";
    if (p.tensors) { // the loaded tensors' n_q × n_k are known now
        const QString hidden
            = hiddenKeysError(p, result->queryCount(), result->keyCount(), transform);
        if (!hidden.isEmpty())
            return usageError(command, hidden);
    }
    return std::nullopt;
}

/// --view compare and --view steps: their painters write --out.
std::optional<int> writeCompareOrSteps(HeatmapRequest &req, const HeatmapPlan &plan,
                                       const std::shared_ptr<SessionResult> &result)
{
    const QString &command = req.command;
    auto &options = req.options;
    auto &pb = req.pb;
    auto &steps = req.steps;
    auto &compare = req.compare;
    auto &width = req.width;
    auto &height = req.height;
    auto &dpr = req.dpr;
    auto &out = plan.out;
    auto &format = plan.format;
    QString error;
    const QSize size {int(*width), int(*height)};
    bool ok = false;
    if (compare) { // the Compare view's painter (ui/render/comparerenderer.h)
        auto resultB = std::make_shared<SessionResult>(computeSession(*pb));
        if (!resultB->ok())
            return failure(command, QStringLiteral("B: ") + resultB->error);
        CompareRenderer compareRenderer;
        compareRenderer.setResults(result, resultB);
        compareRenderer.setHead(options.head);
        compareRenderer.setWeightsColormap(options.colormap);
        ok = format == QLatin1String("png")  ? compareRenderer.savePng(out, size, *dpr, &error)
            : format == QLatin1String("svg") ? compareRenderer.saveSvg(out, size, &error)
                                             : compareRenderer.savePdf(out, size, &error);
        return ok ? ExitOk : failure(command, error);
    }
    if (steps) { // the steps view's painter (ui/render/stepsrenderer.h)
        StepsRenderer stepsRenderer;
        stepsRenderer.setResult(result);
        stepsRenderer.setHead(options.head);
        stepsRenderer.setWeightsColormap(options.colormap);
        ok = format == QLatin1String("png")  ? stepsRenderer.savePng(out, size, *dpr, &error)
            : format == QLatin1String("svg") ? stepsRenderer.saveSvg(out, size, &error)
                                             : stepsRenderer.savePdf(out, size, &error);
        return ok ? ExitOk : failure(command, error);
    }
    return std::nullopt;
}

/// The tokens view, or the heads grid or one head written to --out, --batch-dir and --data.
int writeShownView(const QCommandLineParser &parser, HeatmapRequest &req, HeatmapPlan &plan,
                   const std::shared_ptr<SessionResult> &result)
{
    const QString &command = req.command;
    auto &options = req.options;
    auto &tokenOptions = req.tokenOptions;
    auto &tokenText = req.tokenText;
    auto &tokenView = req.tokenView;
    auto &transform = req.transform;
    auto &dpi = req.dpi;
    auto &width = req.width;
    auto &height = req.height;
    auto &dpr = req.dpr;
    auto &out = plan.out;
    auto &batchDir = plan.batchDir;
    auto &dataPath = plan.dataPath;
    auto &format = plan.format;
    auto &tiles = plan.tiles;
    const auto givenOnCommandLine = [&req](const QString &name) { return req.given(name); };
    QString error;
    const QSize size {int(*width), int(*height)};
    bool ok = false;
    // What the window shows: the result after trimming padding / hiding keys
    // (ui/session/resultview.h); the tile engine's view has no transform.
    const auto shown = tiles ? std::shared_ptr<const SessionResult>(result)
                             : applyViewTransform(result, transform);
    if (!shown->ok())
        return failure(command, shown->error);
    if (tokenView) { // the Tokens tab's painter (ui/render/tokenfigure.h), what the heads show
        if (tokenText && parser.isSet(QStringLiteral("query"))) {
            const auto query
                = intOption(parser, QStringLiteral("query"), 0, shown->queryCount() - 1, &error);
            if (!query)
                return usageError(command, error);
            tokenOptions.query = int(*query);
        }
        tokenOptions.colormap = StepsRenderer::effectiveWeightsColormap(options.colormap);
        const QString problem = tokenViewProblem(shown.get());
        if (!problem.isEmpty())
            return failure(command, problem);
        ok = saveTokenFigure(out, size, *dpr, shown.get(), tokenOptions, &error, format);
        return ok ? ExitOk : failure(command, error);
    }
    if (tiles && options.pinnedQuery >= 0) {
        // The pooled view's rows are pixels (queryIndex: each one's first query): the pinned
        // query's row is the pixel that holds it.
        const std::vector<int> &first = shown->queryIndex;
        const auto past = std::upper_bound(first.begin(), first.end(), options.pinnedQuery);
        options.pinnedQuery = past == first.begin() ? -1 : int(past - first.begin()) - 1;
    }
    if (options.pinnedQuery >= shown->queryCount()) {
        if (!givenOnCommandLine(QStringLiteral("pin-query")))
            options.pinnedQuery = -1; // a session's pin past these rows: none
        else
            return usageError(command,
                              QStringLiteral("--pin-query %1 is beyond n_q = %2 (queries 0-%3)")
                                  .arg(options.pinnedQuery)
                                  .arg(shown->queryCount())
                                  .arg(shown->queryCount() - 1));
    }
    HeatmapRenderer renderer;
    renderer.setResult(shown);
    renderer.setOptions(options);
    // PNG: --width x --height logical pixels at --dpr, or exactly that many pixels at --dpi.
    const double pngDpi = dpi ? *dpi : 96.0 * *dpr;
    const QSize pngPixels = dpi ? size : (QSizeF(size) * *dpr).toSize();
    // --out, --batch-dir and --data are one set, written all or nothing (StagedFiles); the
    // messages name the files the user asked for, not the staging folder.
    StagedFiles staged;
    auto unstaged = [](QString message, const QString &stagedName, const QString &target) {
        return message.replace(stagedName, target);
    };
    if (!out.isEmpty()) {
        const QString file = staged.pathFor(out, &error);
        if (file.isEmpty())
            return failure(command, error);
        if (format == QLatin1String("png"))
            ok = dpi ? renderer.savePngAtDpi(file, size, *dpi, &error)
                     : renderer.savePng(file, size, *dpr, &error);
        else if (format == QLatin1String("svg"))
            ok = renderer.saveSvg(file, size, &error);
        else
            ok = renderer.savePdf(file, size, &error);
        if (!ok)
            return failure(command, unstaged(error, file, out));
    }
    if (!batchDir.isEmpty()) {
        const QString folder = staged.folderFor(batchDir, &error);
        if (folder.isEmpty()
            || !exportEachHead(renderer, folder, QStringLiteral("head"), format,
                               format == QLatin1String("png") ? pngPixels : size, pngDpi, nullptr,
                               &error))
            return failure(command, unstaged(error, folder, batchDir));
    }
    if (!dataPath.isEmpty()) {
        const QString file = staged.pathFor(dataPath, &error);
        if (file.isEmpty() || !exportData(*shown, file, nullptr, &error))
            return failure(command,
                           unstaged(error, QFileInfo(file).path(), QFileInfo(dataPath).path()));
    }
    if (!staged.commit(&error))
        return failure(command, error);
    return ExitOk;
}

/// Builds the parser (heatmap's options, and animate's), parses the command line with a
/// --session merged in front of it, and fills `req`. Returns the exit code when done.
std::optional<int> parseHeatmapRequest(QCommandLineParser &parser, HeatmapRequest &req)
{
    const bool animate = req.animate;
    parser.setApplicationDescription(
        animate ? QStringLiteral("Animate d_k, alpha or tau over a range (the window's Play) and "
                                 "write the heatmap grid (or one head) of every frame as "
                                 "frame_000.png ... into --out-dir, each caption naming the frame "
                                 "and the value, plus frames.csv listing every frame's "
                                 "parameters. The other options are those of attnlab heatmap.")
                : QStringLiteral("Render multi-head attention weights on seeded random input (the "
                                 "window's main view) to PNG, SVG or PDF: a tile per head plus "
                                 "the mean over heads, or one head, with a colourbar, axis ticks "
                                 "and a caption."));
    QList<QCommandLineOption> optionList = heatmapModelOptions() + heatmapViewOptions();
    optionList += positionOptions();
    if (animate)
        optionList += animateOptions();
    addOptionsWithDefaults(parser, optionList);
    if (const std::optional<int> done = parseCommandLine(parser, req.command, req.arguments))
        return done;
    if (const auto done = loadHeatmapSession(parser, req))
        return done;
    if (animate) {
        if (const auto done = parseAnimation(parser, req))
            return done;
    }
    if (const auto done = parseModelParameters(parser, req))
        return done;
    if (const auto done = parseViewChoice(parser, req))
        return done;
    return parseDrawingOptions(parser, req);
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

/// Computes, draws and writes what `plan` says.
int runHeatmapPlan(const QCommandLineParser &parser, HeatmapRequest &req, HeatmapPlan &plan)
{
    if (plan.viewName == QLatin1String("model"))
        return writeModelView(parser, req, plan);
    if (plan.positions)
        return writePositionsView(req, plan);
    std::shared_ptr<SessionResult> result;
    if (const auto done = computeHeatmap(req, plan, result))
        return *done;
    if (const auto done = writeCompareOrSteps(req, plan, result))
        return *done;
    return writeShownView(parser, req, plan, result);
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
