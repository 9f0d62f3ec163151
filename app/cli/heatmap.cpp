// attnlab heatmap: computes the main view (the same computeSession as the window) and writes
// the heatmap grid or one head with HeatmapRenderer (the window's painter) to PNG, SVG or PDF.

#include "common.h"

#include <heatmaprenderer.h>
#include <sessioncompute.h>
#include <sessionparameters.h>
#include <stepsrenderer.h>

#include <QFileInfo>

#include <limits>
#include <memory>

namespace attn::cli {

namespace {

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

} // namespace

int runHeatmap(const QStringList &arguments)
{
    const QString command = QStringLiteral("heatmap");
    QCommandLineParser parser;
    parser.setApplicationDescription(
        QStringLiteral("Render multi-head attention weights on seeded random input (the window's "
                       "main view) to PNG, SVG or PDF: a tile per head plus the mean over heads, "
                       "or one head, with a colourbar, axis ticks and a caption."));
    parser.addOptions({
        {QStringLiteral("n"), QStringLiteral("Query count n (1-4096)."), QStringLiteral("n"),
         QStringLiteral("8")},
        {QStringLiteral("d-model"), QStringLiteral("Model width d_model (1-4096)."),
         QStringLiteral("d"), QStringLiteral("16")},
        {QStringLiteral("heads"), QStringLiteral("Head count h, a divisor of d_model."),
         QStringLiteral("h"), QStringLiteral("4")},
        {QStringLiteral("seed"), QStringLiteral("Seed of numpy.random.default_rng."),
         QStringLiteral("seed"), QStringLiteral("0")},
        {QStringLiteral("kind"),
         QStringLiteral("encoder (self-attention), decoder (causal self-attention) or cross "
                        "(encoder-decoder attention, n_q = n queries over --n-k keys)."),
         QStringLiteral("kind"), QStringLiteral("encoder")},
        {QStringLiteral("n-k"), QStringLiteral("Key count for --kind cross (1-4096)."),
         QStringLiteral("n_k"), QStringLiteral("10")},
        {QStringLiteral("mask"),
         QStringLiteral("none, causal or padding (the last --padding keys)."),
         QStringLiteral("mask"), QStringLiteral("none")},
        {QStringLiteral("padding"), QStringLiteral("Padding key count for --mask padding."),
         QStringLiteral("m"), QStringLiteral("2")},
        {QStringLiteral("alpha"),
         QStringLiteral("Scale exponent: scale = d_k^-alpha / temperature (0.5 = 1/sqrt(d_k), "
                        "0 = unscaled)."),
         QStringLiteral("alpha"), QStringLiteral("0.5")},
        {QStringLiteral("temperature"), QStringLiteral("Softmax temperature (> 0)."),
         QStringLiteral("tau"), QStringLiteral("1")},
        {QStringLiteral("positional"),
         QStringLiteral("Add sinusoidal positional encoding to the inputs.")},
        {QStringLiteral("dtype"), QStringLiteral("float32 or float64."), QStringLiteral("dtype"),
         QStringLiteral("float64")},
        {QStringLiteral("view"),
         QStringLiteral("grid (every head and the mean), head (one) or steps (one head's raw "
                        "scores, scaled and masked scores and weights side by side)."),
         QStringLiteral("view"), QStringLiteral("grid")},
        {QStringLiteral("head"),
         QStringLiteral("Head for --view head: 0 ... h-1, or 'mean'; for --view steps: 0 ... "
                        "h-1."),
         QStringLiteral("i"), QStringLiteral("0")},
        {QStringLiteral("colormap"),
         QStringLiteral("viridis, magma, cividis or gray (RdBu_r for scores)."),
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
         QStringLiteral("png, svg or pdf (default: from the --out suffix)."),
         QStringLiteral("format")},
        {QStringLiteral("out"), QStringLiteral("Output file (.png, .svg or .pdf)."),
         QStringLiteral("file")},
    });
    if (const auto done = parseArguments(parser, command, arguments))
        return *done;
    if (!parser.positionalArguments().isEmpty())
        return usageError(
            command,
            QStringLiteral("unexpected argument '%1'").arg(parser.positionalArguments().first()));

    QString error;
    SessionParameters p;
    const auto n
        = intOption(parser, QStringLiteral("n"), 1, SessionParameters::maxSequence, &error);
    if (!n)
        return usageError(command, error);
    const auto dModel
        = intOption(parser, QStringLiteral("d-model"), 1, SessionParameters::maxDModel, &error);
    if (!dModel)
        return usageError(command, error);
    const auto heads = intOption(parser, QStringLiteral("heads"), 1, *dModel, &error);
    if (!heads)
        return usageError(command, error);
    if (*dModel % *heads != 0)
        return usageError(
            command,
            QStringLiteral("--heads %1 does not divide --d-model %2").arg(*heads).arg(*dModel));
    const auto seed = intOption(parser, QStringLiteral("seed"), 0,
                                std::numeric_limits<std::int64_t>::max(), &error);
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
        || !checkChoice(parser, QStringLiteral("view"),
                        {QStringLiteral("grid"), QStringLiteral("head"), QStringLiteral("steps")},
                        &error)
        || !checkChoice(parser, QStringLiteral("scale"),
                        {QStringLiteral("linear"), QStringLiteral("log")}, &error)
        || !checkChoice(parser, QStringLiteral("range"),
                        {QStringLiteral("fixed"), QStringLiteral("auto")}, &error))
        return usageError(command, error);
    const auto nK
        = intOption(parser, QStringLiteral("n-k"), 1, SessionParameters::maxSequence, &error);
    if (!nK)
        return usageError(command, error);
    p.n = int(*n);
    p.nK = int(*nK);
    p.dModel = int(*dModel);
    p.heads = int(*heads);
    p.seed = quint64(*seed);
    p.kind = *parseAttentionKind(parser.value(QStringLiteral("kind")));
    p.mask = *parseMaskChoice(parser.value(QStringLiteral("mask")));
    p.dtype = *parseDType(parser.value(QStringLiteral("dtype")));
    p.positional = parser.isSet(QStringLiteral("positional"));
    const auto padding = intOption(parser, QStringLiteral("padding"), 0, p.keyCount(), &error);
    if (!padding)
        return usageError(command, error);
    p.paddingCount = int(*padding);
    const auto alpha = doubleOption(parser, QStringLiteral("alpha"), 0.0, 1.0, &error);
    if (!alpha)
        return usageError(command, error);
    p.scaleExponent = *alpha;
    const auto temperature
        = doubleOption(parser, QStringLiteral("temperature"), 1e-300, 1e300, &error);
    if (!temperature)
        return usageError(command, error);
    p.temperature = *temperature;
    const QString invalid = p.validate();
    if (!invalid.isEmpty())
        return usageError(command, invalid);

    HeatmapOptions options;
    const bool steps = parser.value(QStringLiteral("view")) == QLatin1String("steps");
    if (steps) {
        const auto index = intOption(parser, QStringLiteral("head"), 0, p.heads - 1, &error);
        if (!index)
            return usageError(command, error);
        options.head = int(*index);
    } else if (parser.value(QStringLiteral("view")) == QLatin1String("head")) {
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

    const auto width = intOption(parser, QStringLiteral("width"), 64, 16384, &error);
    if (!width)
        return usageError(command, error);
    const auto height = intOption(parser, QStringLiteral("height"), 64, 16384, &error);
    if (!height)
        return usageError(command, error);
    const auto dpr = doubleOption(parser, QStringLiteral("dpr"), 0.25, 8.0, &error);
    if (!dpr)
        return usageError(command, error);

    const QString out = parser.value(QStringLiteral("out"));
    if (out.isEmpty())
        return usageError(command, QStringLiteral("--out is required (a .png, .svg or .pdf file)"));
    QString format = parser.value(QStringLiteral("format")).toLower();
    if (format.isEmpty())
        format = QFileInfo(out).suffix().toLower();
    if (format != QLatin1String("png") && format != QLatin1String("svg")
        && format != QLatin1String("pdf"))
        return usageError(command,
                          parser.isSet(QStringLiteral("format"))
                              ? QStringLiteral("--format must be one of png, svg, pdf, got '%1'")
                                    .arg(parser.value(QStringLiteral("format")))
                              : QStringLiteral("--out '%1' must end in .png, .svg or .pdf (or give "
                                               "--format)")
                                    .arg(out));

    auto result = std::make_shared<SessionResult>(computeSession(p));
    if (!result->ok())
        return failure(command, result->error);

    const QSize size {int(*width), int(*height)};
    bool ok = false;
    if (steps) { // the steps view's painter (ui/stepsrenderer.h)
        StepsRenderer stepsRenderer;
        stepsRenderer.setResult(result);
        stepsRenderer.setHead(options.head);
        stepsRenderer.setWeightsColormap(options.colormap);
        ok = format == QLatin1String("png")  ? stepsRenderer.savePng(out, size, *dpr, &error)
            : format == QLatin1String("svg") ? stepsRenderer.saveSvg(out, size, &error)
                                             : stepsRenderer.savePdf(out, size, &error);
        return ok ? ExitOk : failure(command, error);
    }
    HeatmapRenderer renderer;
    renderer.setResult(result);
    renderer.setOptions(options);
    if (format == QLatin1String("png"))
        ok = renderer.savePng(out, size, *dpr, &error);
    else if (format == QLatin1String("svg"))
        ok = renderer.saveSvg(out, size, &error);
    else
        ok = renderer.savePdf(out, size, &error);
    if (!ok)
        return failure(command, error);
    return ExitOk;
}

} // namespace attn::cli
