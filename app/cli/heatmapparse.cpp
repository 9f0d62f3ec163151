// attnlab heatmap and animate: the command line, with a --session's values in front of it,
// parsed and checked into a HeatmapRequest. Every refusal names the option (exit status 2).

#include "common.h"
#include "heatmaprequest.h"

#include "ui/document/sessionfile.h"
#include "ui/render/playframes.h"
#include "ui/session/tokenizer.h"

#include <QJsonArray>
#include <QJsonObject>
#include <QRegularExpression>
#include <QSet>
#include <QTextStream>

#include <algorithm>
#include <cmath>

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
    if (p.learnedSink)
        a << QStringLiteral("--sink-logit") << QString::number(p.sinkLogit, 'g', 17);
    if (p.differential)
        a << QStringLiteral("--differential-lambda")
          << (p.headLambdas.empty() ? QString::number(p.lambda, 'g', 17)
                                    : headLambdasText(p.headLambdas).remove(QLatin1Char(' ')));
    if (p.outputGate)
        a << QStringLiteral("--gate-bias") << QString::number(p.gateBias, 'g', 17);
    if (p.latent) {
        a << QStringLiteral("--latent-dim") << QString::number(p.latentDim)
          << QStringLiteral("--latent-rope-dim") << QString::number(p.latentRopeDim);
        if (p.latentAbsorbed)
            a << QStringLiteral("--latent-absorbed");
    }
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

/// Sets the memory budget files are read within, then merges --session FILE into the command line.
std::optional<int> loadHeatmapSession(QCommandLineParser &parser, HeatmapRequest &req)
{
    // Files are read within the memory budget: what an .npz declares decides before any of its
    // members is decompressed (readTensorFile reads through sessionMemoryBudget()).
    {
        QString budgetError;
        const auto budget = memoryBudgetBytes(parser, &budgetError);
        if (!budget)
            return usageError(req.command, budgetError);
        setSessionMemoryBudget(std::size_t(*budget));
    }
    // --session FILE: the session's values go in front of the command line, so options given
    // explicitly win (the parser keeps an option's last value); its tokens count unless --tokens
    // or --n is given, its tensors are loaded as File → Open Tensors… does.
    if (parser.isSet(QStringLiteral("session"))) {
        QString loadError;
        const auto session = SessionFile::load(parser.value(QStringLiteral("session")), &loadError);
        if (!session)
            return usageError(req.command, loadError);
        if (!session->unknownKeys.isEmpty())
            QTextStream(stderr) << "attnlab " << req.command
                                << ": note: " << parser.value(QStringLiteral("session"))
                                << " has keys this version does not know, so they change "
                                   "nothing: "
                                << session->unknownKeys.join(QStringLiteral(", ")) << "\n";
        // The session's parameters under a model run are the model's shape, not its weights:
        // drawing them would show random attention under the model's tokens.
        if (!session->model.isEmpty())
            return usageError(
                req.command,
                QStringLiteral("%1 holds a run of the model in %2, which %3 does not compute: "
                               "run it with attnlab model --model %2 --text \"…\" --out FILE "
                               "(or attnlab heads for its atlas)")
                    .arg(parser.value(QStringLiteral("session")),
                         session->model.value(QLatin1String("folder")).toString(), req.command));
        if (!parser.isSet(QStringLiteral("tokens")) && !parser.isSet(QStringLiteral("n")))
            req.sessionTokens = session->parameters.tokenList();
        req.sessionTensors = loadSessionTensors(session->tensors, &loadError);
        if (!req.sessionTensors && !loadError.isEmpty())
            return usageError(req.command, loadError);
        req.sessionOptions
            = heatmapViewFromJson(session->view.value(QLatin1String("heatmap")).toObject(), {});
        req.sessionTokenView
            = tokenViewFromJson(session->view.value(QLatin1String("tokens")).toObject(), {});
        // A session saved on the Long tab: that map has a length of its own, which the command
        // line draws only when asked.
        const QJsonObject longMap = session->view.value(QLatin1String("long_map")).toObject();
        if (!req.given(QStringLiteral("n"))
            && session->view.value(QLatin1String("tabs"))
                   .toArray()
                   .contains(QStringLiteral("longMapView"))
            && longMap.value(QLatin1String("n")).isDouble()) {
            const int head = longMap.value(QLatin1String("head")).toInt(-1);
            QTextStream(stderr)
                << "attnlab " << req.command << ": note: the session shows the Long tab (n = "
                << longMap.value(QLatin1String("n")).toInt() << "); this draws the Heads view "
                << "of its parameters: add --n " << longMap.value(QLatin1String("n")).toInt()
                << " --view head --head "
                << (head < 0 ? QStringLiteral("mean") : QString::number(head)) << " --pooling "
                << longMap.value(QLatin1String("pooling")).toString(QStringLiteral("max"))
                << " for the Long tab's map\n";
        }
        QStringList expanded = sessionArguments(*session);
        expanded.prepend(req.arguments.constFirst());
        expanded += req.arguments.mid(1);
        // The session's options come first on purpose (the command line's win): no repeat check.
        if (const auto done = parseArguments(parser, req.command, expanded, false, false))
            return *done;
    }
    return std::nullopt;
}

/// animate: what is animated, checked before anything else (exit 2 with the option's name).
std::optional<int> parseAnimation(const QCommandLineParser &parser, HeatmapRequest &req)
{
    QString error;
    for (const char *name : {"out", "batch-dir", "data", "format", "dpi", "compare"}) {
        if (req.given(QLatin1String(name)))
            return usageError(req.command,
                              QStringLiteral("--%1 does not go with animate (frames are PNG "
                                             "files in --out-dir)")
                                  .arg(QLatin1String(name)));
    }
    for (const char *name : {"in", "array", "layer", "query"}) {
        if (req.given(QLatin1String(name)))
            return usageError(req.command,
                              QStringLiteral("--%1 does not go with animate (it animates the "
                                             "seeded inputs the model options describe, "
                                             "drawn as grid or head)")
                                  .arg(QLatin1String(name)));
    }
    for (const char *name : {"param", "from", "to", "out-dir"}) {
        if (!parser.isSet(QLatin1String(name)))
            return usageError(req.command,
                              QStringLiteral("--%1 is required").arg(QLatin1String(name)));
    }
    try {
        req.play.parameter
            = parsePlayParameter(parser.value(QStringLiteral("param")).toStdString());
    } catch (const InvalidArgument &) {
        return usageError(req.command,
                          QStringLiteral("--param must be one of dk, alpha, tau, "
                                         "got '%1'")
                              .arg(parser.value(QStringLiteral("param"))));
    }
    for (const auto &[name, out] : {std::pair {QStringLiteral("from"), &req.play.from},
                                    std::pair {QStringLiteral("to"), &req.play.to}}) {
        bool ok = false;
        *out = parser.value(name).toDouble(&ok);
        if (!ok || !std::isfinite(*out))
            return usageError(
                req.command,
                QStringLiteral("--%1 must be a number, got '%2'").arg(name, parser.value(name)));
    }
    const auto frames = intOption(parser, QStringLiteral("frames"), 1, kMaxPlayFrames, &error);
    if (!frames)
        return usageError(req.command, error);
    req.play.frames = int(*frames);
    // The animated parameter's own option would be overridden by every frame.
    const QString own = req.play.parameter == PlayParameter::HeadWidth ? QStringLiteral("d-model")
        : req.play.parameter == PlayParameter::ScaleExponent           ? QStringLiteral("alpha")
                                                             : QStringLiteral("temperature");
    if (req.given(own))
        return usageError(req.command,
                          QStringLiteral("--%1 is set by every frame of --param %2; leave it "
                                         "out%3")
                              .arg(own, parser.value(QStringLiteral("param")),
                                   req.play.parameter == PlayParameter::HeadWidth
                                       ? QStringLiteral(" (d_model = d_k x h)")
                                       : QString()));
    const QString view = parser.value(QStringLiteral("view"));
    if (view != QLatin1String("grid") && view != QLatin1String("head"))
        return usageError(
            req.command,
            QStringLiteral("--view must be grid or head for animate, got '%1'").arg(view));
    return std::nullopt;
}

std::optional<int> parseModelInputs(const QCommandLineParser &parser, HeatmapRequest &req);

/// The named choices of the model's options (--kind, --mask, --dtype, --generator, --view,
/// --scale, --range, --compute); false with the message in *error for a value not among them.
bool checkModelChoices(const QCommandLineParser &parser, QString *error)
{
    return checkChoice(
               parser, QStringLiteral("kind"),
               {QStringLiteral("encoder"), QStringLiteral("decoder"), QStringLiteral("cross")},
               error)
        && checkChoice(
               parser, QStringLiteral("mask"),
               {QStringLiteral("none"), QStringLiteral("causal"), QStringLiteral("padding")}, error)
        && checkChoice(parser, QStringLiteral("dtype"),
                       {QStringLiteral("float32"), QStringLiteral("float64")}, error)
        && checkChoice(parser, QStringLiteral("generator"),
                       {QStringLiteral("numpy"), QStringLiteral("torch")}, error)
        && checkChoice(parser, QStringLiteral("view"),
                       {QStringLiteral("grid"), QStringLiteral("head"), QStringLiteral("steps"),
                        QStringLiteral("compare"), QStringLiteral("model"),
                        QStringLiteral("positions"), QStringLiteral("tokens"),
                        QStringLiteral("text")},
                       error)
        && checkChoice(parser, QStringLiteral("scale"),
                       {QStringLiteral("linear"), QStringLiteral("log")}, error)
        && checkChoice(parser, QStringLiteral("range"),
                       {QStringLiteral("fixed"), QStringLiteral("auto")}, error)
        && checkChoice(parser, QStringLiteral("compute"),
                       {QStringLiteral("auto"), QStringLiteral("full"), QStringLiteral("tiles")},
                       error);
}

/// The 2025 variants' options: --sink-logit, --differential-lambda (one λ or h of them),
/// --gate-bias and --latent-dim with --latent-rope-dim and --latent-absorbed.
std::optional<int> parseVariantParameters(const QCommandLineParser &parser, HeatmapRequest &req)
{
    QString error;
    if (parser.isSet(QStringLiteral("sink-logit"))) {
        const auto b = doubleOption(parser, QStringLiteral("sink-logit"),
                                    -SessionParameters::maxVariantLogit,
                                    SessionParameters::maxVariantLogit, &error);
        if (!b)
            return usageError(req.command, error);
        req.p.learnedSink = true;
        req.p.sinkLogit = *b;
    }
    if (parser.isSet(QStringLiteral("differential-lambda"))) {
        const QString text = parser.value(QStringLiteral("differential-lambda"));
        req.p.differential = true;
        if (text.trimmed().contains(QRegularExpression(QStringLiteral("[,\\s]")))) {
            // One λ per head: h values.
            const auto lambdas = parseHeadLambdas(text, req.p.heads, &error);
            // A --session's list (its differential_head_lambdas) is named as the session's, not
            // as an option the command line did not give.
            if (!lambdas && !req.given(QStringLiteral("differential-lambda")))
                return usageError(
                    req.command,
                    QStringLiteral("the session '%1' sets differential_head_lambdas (%2): %3; "
                                   "give --differential-lambda with one \u03bb for every head "
                                   "or %4 values")
                        .arg(parser.value(QStringLiteral("session")), text, error)
                        .arg(req.p.heads));
            if (!lambdas)
                return usageError(req.command, QStringLiteral("--differential-lambda: ") + error);
            req.p.headLambdas = *lambdas;
        } else {
            const auto lambda
                = doubleOption(parser, QStringLiteral("differential-lambda"), -1.0, 2.0, &error);
            if (!lambda)
                return usageError(req.command, error);
            req.p.lambda = *lambda;
        }
    }
    if (parser.isSet(QStringLiteral("gate-bias"))) {
        const auto b
            = doubleOption(parser, QStringLiteral("gate-bias"), -SessionParameters::maxVariantLogit,
                           SessionParameters::maxVariantLogit, &error);
        if (!b)
            return usageError(req.command, error);
        req.p.outputGate = true;
        req.p.gateBias = *b;
    }
    if (parser.isSet(QStringLiteral("latent-dim"))) {
        const auto dC = intOption(parser, QStringLiteral("latent-dim"), 1,
                                  SessionParameters::maxDModel, &error);
        if (!dC)
            return usageError(req.command, error);
        const auto dR = intOption(parser, QStringLiteral("latent-rope-dim"), 2,
                                  SessionParameters::maxLatentRopeDim, &error);
        if (!dR)
            return usageError(req.command, error);
        req.p.latent = true;
        req.p.latentDim = Index(*dC);
        req.p.latentRopeDim = Index(*dR);
        req.p.latentAbsorbed = parser.isSet(QStringLiteral("latent-absorbed"));
    } else if (parser.isSet(QStringLiteral("latent-rope-dim"))
               || parser.isSet(QStringLiteral("latent-absorbed"))) {
        return usageError(req.command,
                          QStringLiteral("--latent-rope-dim and --latent-absorbed need "
                                         "--latent-dim (multi-head latent attention)"));
    }
    if (req.p.learnedSink && req.p.differential)
        return usageError(req.command,
                          QStringLiteral("--sink-logit and --differential-lambda do not combine "
                                         "(no published model uses both): choose one"));
    return std::nullopt;
}

/// The model's parameters: sizes, seed, kind, mask, scale, positions, tokens and tensors.
std::optional<int> parseModelParameters(const QCommandLineParser &parser, HeatmapRequest &req)
{
    QString error;
    const auto n
        = intOption(parser, QStringLiteral("n"), 1, SessionParameters::maxLongSequence, &error);
    if (!n)
        return usageError(req.command, error);
    const auto dModel
        = intOption(parser, QStringLiteral("d-model"), 1, SessionParameters::maxDModel, &error);
    if (!dModel)
        return usageError(req.command, error);
    const bool animateHeadWidth = req.animate && req.play.parameter == PlayParameter::HeadWidth;
    const auto heads = intOption(
        parser, QStringLiteral("heads"), 1,
        animateHeadWidth ? std::int64_t(SessionParameters::maxDModel) : *dModel, &error);
    if (!heads)
        return usageError(req.command, error);
    if (req.animate) {
        try {
            req.schedule = req.play.schedule(int(*heads));
        } catch (const InvalidArgument &e) {
            return usageError(
                req.command,
                QStringLiteral("--param %1: %2")
                    .arg(parser.value(QStringLiteral("param")), QString::fromStdString(e.what())));
        }
    }
    if (!animateHeadWidth && *dModel % *heads != 0)
        return usageError(
            req.command,
            QStringLiteral("--heads %1 does not divide --d-model %2").arg(*heads).arg(*dModel));
    const auto seed = seedOption(parser, QStringLiteral("seed"), &error);
    if (!seed)
        return usageError(req.command, error);
    if (!checkModelChoices(parser, &error))
        return usageError(req.command, error);
    const auto nK
        = intOption(parser, QStringLiteral("n-k"), 1, SessionParameters::maxLongSequence, &error);
    if (!nK)
        return usageError(req.command, error);
    req.p.n = int(*n);
    if (parser.isSet(QStringLiteral("tokens"))) {
        // n follows the typed tokens (ui/session/tokenizer.h).
        req.p.setTokens(splitTokens(parser.value(QStringLiteral("tokens"))));
        if (req.p.tokens.empty())
            return usageError(req.command, QStringLiteral("--tokens gave no tokens"));
        const Index count = Index(req.p.tokens.size());
        if (count > SessionParameters::maxSequence)
            return usageError(req.command,
                              QStringLiteral("--tokens gave %1 tokens, at most %2 fit")
                                  .arg(count)
                                  .arg(SessionParameters::maxSequence));
        if (parser.isSet(QStringLiteral("n")) && *n != count)
            return usageError(req.command,
                              QStringLiteral("--n %1 does not match the %2 tokens of --tokens "
                                             "(leave --n out: n follows the tokens)")
                                  .arg(*n)
                                  .arg(count));
        req.p.n = count;
    }
    req.p.nK = int(*nK);
    req.p.dModel = animateHeadWidth ? int(req.schedule.front()) * int(*heads) : int(*dModel);
    req.p.heads = int(*heads);
    req.p.seed = quint64(*seed);
    req.p.generator = parseRandomSource(parser.value(QStringLiteral("generator")).toStdString());
    req.p.kind = *parseAttentionKind(parser.value(QStringLiteral("kind")));
    req.p.mask = *parseMaskChoice(parser.value(QStringLiteral("mask")));
    req.p.dtype = *parseDType(parser.value(QStringLiteral("dtype")));
    req.position = positionSettings(parser, &error);
    if (!req.position)
        return usageError(req.command, error);
    req.p.positional = req.position->scheme == PositionalScheme::Sinusoidal;
    req.p.rope = req.position->scheme == PositionalScheme::Rope;
    req.p.alibi = req.position->scheme == PositionalScheme::Alibi;
    req.p.ropeConvention = req.position->ropeConvention;
    req.p.ropeBase = req.position->ropeBase;
    req.p.kvHeads = req.position->kvHeads ? int(*req.position->kvHeads) : 0;
    req.p.window = int(req.position->window);
    req.p.sinks = int(req.position->sinks);
    // Padding's range is [0, n_k] (the window's and the session's too), checked when the count
    // is used: an explicit --padding with --mask padding. Otherwise (the default 2, or a count
    // without the padding mask) it is kept within [0, n_k] as the window keeps it, so --n 1
    // works without --padding 0.
    const bool paddingUsed
        = req.p.mask == MaskChoice::KeyPadding && parser.isSet(QStringLiteral("padding"));
    const auto padding = intOption(parser, QStringLiteral("padding"), 0,
                                   paddingUsed ? std::int64_t(req.p.keyCount())
                                               : std::int64_t(SessionParameters::maxSequence),
                                   &error);
    if (!padding)
        return usageError(req.command, error);
    req.p.paddingCount = std::min<Index>(*padding, req.p.keyCount());
    if (req.given(QStringLiteral("padding")) && req.p.mask != MaskChoice::KeyPadding)
        return usageError(req.command,
                          QStringLiteral("--padding %1 has no effect without --mask "
                                         "padding (the last keys are padding only then)")
                              .arg(*padding));
    const auto alpha = doubleOption(parser, QStringLiteral("alpha"), 0.0, 1.0, &error);
    if (!alpha)
        return usageError(req.command, error);
    req.p.scaleExponent = *alpha;
    const auto temperature
        = doubleOption(parser, QStringLiteral("temperature"), SessionParameters::minTemperature,
                       SessionParameters::maxTemperature, &error);
    if (!temperature)
        return usageError(req.command, error);
    req.p.temperature = *temperature;
    if (const auto exit = parseVariantParameters(parser, req))
        return exit;
    return parseModelInputs(parser, req);
}

/// The model's tokens and tensors (a --session's, or --in FILE's with --batch and --layer), then
/// the parameters' own check.
std::optional<int> parseModelInputs(const QCommandLineParser &parser, HeatmapRequest &req)
{
    QString error;
    if (!req.sessionTokens.isEmpty())
        req.p.setTokens(req.sessionTokens);
    if (parser.isSet(QStringLiteral("in"))) {
        // --in FILE: the tensors File > Open Tensors shows; they fix n, n_k, d_model and h.
        if (parser.isSet(QStringLiteral("session")))
            return usageError(req.command,
                              QStringLiteral("--in and --session cannot be combined (a "
                                             "session names its own tensors)"));
        if (req.p.learnedSink || req.p.differential || req.p.outputGate || req.p.latent)
            return usageError(req.command,
                              QStringLiteral("--sink-logit, --differential-lambda, --gate-bias "
                                             "and --latent-dim act on random inputs; a tensor "
                                             "file brings its own (sink_logits, query2, key2 "
                                             "and lambda, gate_logits)"));
        const auto batch = intOption(parser, QStringLiteral("batch"), 0, 1 << 30, &error);
        if (!batch)
            return usageError(req.command, error);
        std::shared_ptr<const TensorSource> source;
        try {
            source = makeTensorSource(readTensorFile(parser.value(QStringLiteral("in"))),
                                      parser.value(QStringLiteral("array")), MaskConvention::Masked,
                                      &error, int(*batch));
        } catch (const NpyError &e) {
            error = QString::fromUtf8(e.what());
        }
        if (!source)
            return usageError(req.command, error);
        req.sessionTensors = source;
    } else if (parser.isSet(QStringLiteral("batch"))) {
        return usageError(req.command, QStringLiteral("--batch goes with --in"));
    } else if (parser.isSet(QStringLiteral("array"))) {
        return usageError(req.command, QStringLiteral("--array goes with --in"));
    }
    if (parser.isSet(QStringLiteral("layer"))) {
        if (!req.sessionTensors || !req.sessionTensors->isWeights())
            return usageError(req.command,
                              QStringLiteral("--layer goes with loaded weights (--in "
                                             "FILE holding attention weights)"));
        const auto layer = intOption(parser, QStringLiteral("layer"), 0,
                                     req.sessionTensors->layerCount() - 1, &error);
        if (!layer)
            return usageError(req.command,
                              error
                                  + QStringLiteral(" (the weights have %1 layers)")
                                        .arg(req.sessionTensors->layerCount()));
        req.sessionTensors = req.sessionTensors->withLayer(int(*layer));
    }
    req.p.tensors = req.sessionTensors;
    if (parser.isSet(QStringLiteral("in")))
        req.p = req.sessionTensors->parametersFor(req.p, req.sessionTensors);
    const QString invalid = req.p.validate(SessionParameters::maxLongSequence);
    if (!invalid.isEmpty())
        return usageError(req.command, invalid);
    return std::nullopt;
}

/// The view drawn (--view, --compare, --query) and its head.
std::optional<int> parseViewChoice(const QCommandLineParser &parser, HeatmapRequest &req)
{
    QString error;
    req.options = req.sessionOptions;
    req.steps = parser.value(QStringLiteral("view")) == QLatin1String("steps");
    req.compare = parser.value(QStringLiteral("view")) == QLatin1String("compare");
    req.tokenHeads = parser.value(QStringLiteral("view")) == QLatin1String("tokens");
    req.tokenText = parser.value(QStringLiteral("view")) == QLatin1String("text");
    req.tokenView = req.tokenHeads || req.tokenText;
    if (parser.isSet(QStringLiteral("compare")) && !req.compare)
        return usageError(req.command, QStringLiteral("--compare goes with --view compare"));
    if (parser.isSet(QStringLiteral("query")) && !req.tokenText)
        return usageError(req.command, QStringLiteral("--query goes with --view text"));
    {
        // Options of the heads grid only: refused where they would change nothing.
        const QString shownView = parser.value(QStringLiteral("view"));
        if (shownView != QLatin1String("grid") && shownView != QLatin1String("head"))
            for (const char *name : {"pin-query", "sort-heads", "sort-descending"})
                if (parser.isSet(QLatin1String(name)))
                    return usageError(req.command,
                                      QStringLiteral("--%1 goes with --view grid or "
                                                     "head, not --view %2")
                                          .arg(QLatin1String(name), shownView));
    }
    req.tokenOptions = req.sessionTokenView;
    req.tokenOptions.view = req.tokenText ? TokenView::Text : TokenView::Heads;
    if (req.tokenView
        && (req.p.queryCount() > maxTokenViewTokens || req.p.keyCount() > maxTokenViewTokens))
        return usageError(req.command,
                          QStringLiteral("--view %1 draws at most %2 queries and keys (n_q = %3, "
                                         "n_k = %4): use --view grid or head")
                              .arg(parser.value(QStringLiteral("view")))
                              .arg(maxTokenViewTokens)
                              .arg(req.p.queryCount())
                              .arg(req.p.keyCount()));
    if (req.compare
        && (req.p.queryCount() > SessionParameters::maxSequence
            || req.p.keyCount() > SessionParameters::maxSequence))
        return usageError(req.command,
                          QStringLiteral("--view compare needs every head's full n_q x n_k "
                                         "matrices of A and B, n and n_k up to %1 (got n_q = %2, "
                                         "n_k = %3)")
                              .arg(SessionParameters::maxSequence)
                              .arg(req.p.queryCount())
                              .arg(req.p.keyCount()));
    if (req.compare) {
        const auto variant = parseCompare(parser.value(QStringLiteral("compare")), req.p, &error);
        if (!variant)
            return usageError(req.command, error);
        req.pb = variant->apply(req.p);
        const QString invalidB = req.pb->validate();
        if (!invalidB.isEmpty())
            return usageError(req.command,
                              QStringLiteral("--compare: B cannot be computed: %1").arg(invalidB));
    }
    if (req.steps) {
        const auto index = intOption(parser, QStringLiteral("head"), 0, req.p.heads - 1, &error);
        if (!index)
            return usageError(req.command, error);
        req.options.head = int(*index);
    } else if (req.tokenView) {
        if (req.tokenText || req.given(QStringLiteral("head"))) {
            const QString head = parser.value(QStringLiteral("head"));
            int chosen = req.p.heads; // the mean
            if (head != QLatin1String("mean")) {
                const auto index
                    = intOption(parser, QStringLiteral("head"), 0, req.p.heads - 1, &error);
                if (!index)
                    return usageError(req.command, error + QStringLiteral(" (or 'mean')"));
                chosen = int(*index);
            }
            req.tokenOptions.textHead = chosen;
            if (req.tokenHeads) { // that head's (or the mean's) lines alone
                req.tokenOptions.hiddenHeads.clear();
                for (int k = 0; k < req.p.heads; ++k)
                    if (k != chosen)
                        req.tokenOptions.hiddenHeads.append(k);
                req.tokenOptions.showMean = chosen == req.p.heads;
            }
        }
    } else if (req.compare || parser.value(QStringLiteral("view")) == QLatin1String("head")) {
        if (!req.compare)
            req.options.view = HeatmapView::SingleHead;
        const QString head = parser.value(QStringLiteral("head"));
        if (head == QLatin1String("mean")) {
            req.options.head = req.p.heads;
        } else {
            const auto index
                = intOption(parser, QStringLiteral("head"), 0, req.p.heads - 1, &error);
            if (!index)
                return usageError(req.command, error + QStringLiteral(" (or 'mean')"));
            req.options.head = int(*index);
        }
    }
    return std::nullopt;
}

/// How the view is drawn: colours, pooling, head order, pinned query, hidden keys and size.
std::optional<int> parseDrawingOptions(const QCommandLineParser &parser, HeatmapRequest &req)
{
    QString error;
    const auto colormap = Colormap::fromName(parser.value(QStringLiteral("colormap")));
    if (!colormap)
        return usageError(req.command,
                          QStringLiteral("--colormap must be one of viridis, magma, "
                                         "cividis, gray, RdBu_r, got '%1'")
                              .arg(parser.value(QStringLiteral("colormap"))));
    req.options.colormap = *colormap;
    req.options.scale = parser.value(QStringLiteral("scale")) == QLatin1String("log")
        ? ColorScale::Log
        : ColorScale::Linear;
    req.options.autoRange = parser.value(QStringLiteral("range")) == QLatin1String("auto");
    if (!checkChoice(parser, QStringLiteral("pooling"),
                     {QStringLiteral("max"), QStringLiteral("mean")}, &error))
        return usageError(req.command, error);
    req.options.pooling = parser.value(QStringLiteral("pooling")) == QLatin1String("mean")
        ? HeatmapPooling::Mean
        : HeatmapPooling::Max;
    if (!checkChoice(
            parser, QStringLiteral("sort-heads"),
            {QStringLiteral("index"), QStringLiteral("entropy"), QStringLiteral("max-weight")},
            &error))
        return usageError(req.command, error);
    if (req.given(QStringLiteral("sort-heads")) || req.given(QStringLiteral("sort-descending"))) {
        const QString sort = parser.value(QStringLiteral("sort-heads"));
        req.options.headSort = sort == QLatin1String("entropy") ? HeadOrderKey::Entropy
            : sort == QLatin1String("max-weight")               ? HeadOrderKey::MaxWeight
                                                                : HeadOrderKey::Index;
        req.options.headSortDescending = parser.isSet(QStringLiteral("sort-descending"));
        if (req.options.headSortDescending && req.options.headSort == HeadOrderKey::Index)
            return usageError(req.command,
                              QStringLiteral("--sort-descending goes with --sort-heads entropy "
                                             "or max-weight"));
    }
    if (parser.isSet(QStringLiteral("pin-query"))) {
        // n_q of the parameters; loaded tensors are checked again once their n_q is known.
        const int maxQuery
            = int(req.p.tensors ? SessionParameters::maxLongSequence - 1 : req.p.queryCount() - 1);
        const auto pin = intOption(parser, QStringLiteral("pin-query"), 0, maxQuery, &error);
        if (!pin)
            return usageError(req.command,
                              req.p.tensors
                                  ? error
                                  : error + QStringLiteral(" (n_q = %1)").arg(req.p.queryCount()));
        req.options.pinnedQuery = int(*pin);
    }
    req.transform.trimPadding = parser.isSet(QStringLiteral("trim-padding"));
    req.transform.renormalize = !parser.isSet(QStringLiteral("raw"));
    if (parser.isSet(QStringLiteral("raw")) && !parser.isSet(QStringLiteral("hide-keys")))
        return usageError(req.command,
                          QStringLiteral("--raw has no effect without --hide-keys (it keeps the "
                                         "weights of the shown keys as computed)"));
    if (!parseKeyList(parser.value(QStringLiteral("hide-keys")), &req.transform.hiddenKeys, &error))
        return usageError(req.command, QStringLiteral("--hide-keys: ") + error);
    if (parser.isSet(QStringLiteral("dpi"))) {
        req.dpi = doubleOption(parser, QStringLiteral("dpi"), 24.0, 2400.0, &error);
        if (!req.dpi)
            return usageError(req.command, error);
    }

    req.width = intOption(parser, QStringLiteral("width"), 64, 16384, &error);
    if (!req.width)
        return usageError(req.command, error);
    req.height = intOption(parser, QStringLiteral("height"), 64, 16384, &error);
    if (!req.height)
        return usageError(req.command, error);
    req.dpr = doubleOption(parser, QStringLiteral("dpr"), 0.25, 8.0, &error);
    if (!req.dpr)
        return usageError(req.command, error);
    // A PNG has at most 32768 pixels a side (the renderers' limit): decidable here.
    if (!req.dpi
        && (double(*req.width) * *req.dpr > 32768.0 || double(*req.height) * *req.dpr > 32768.0))
        return usageError(req.command,
                          QStringLiteral("--width %1 x --height %2 at --dpr %3 is %4 x %5 pixels; "
                                         "a PNG may have at most 32768 a side")
                              .arg(*req.width)
                              .arg(*req.height)
                              .arg(*req.dpr)
                              .arg(double(*req.width) * *req.dpr, 0, 'f', 0)
                              .arg(double(*req.height) * *req.dpr, 0, 'f', 0));
    return std::nullopt;
}

} // namespace

/// Builds the parser (heatmap's options, and animate's), parses the command line with a
/// --session merged in front of it, and fills `req`. Returns the exit code when done.
std::optional<int> parseHeatmapRequest(QCommandLineParser &parser, HeatmapRequest &req)
{
    parser.setApplicationDescription(
        req.animate
            ? QStringLiteral("Animate d_k, alpha or tau over a range (the window's Play) and "
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
    if (req.animate)
        optionList += animateOptions();
    addOptionsWithDefaults(parser, optionList);
    if (const std::optional<int> done = parseCommandLine(parser, req.command, req.arguments))
        return done;
    if (const auto done = loadHeatmapSession(parser, req))
        return done;
    if (req.animate) {
        if (const auto done = parseAnimation(parser, req))
            return done;
    }
    if (const auto done = parseModelParameters(parser, req))
        return done;
    if (const auto done = parseViewChoice(parser, req))
        return done;
    return parseDrawingOptions(parser, req);
}

} // namespace attn::cli
