#include "ui/session/sessionparameters.h"

#include "ui/session/tensorsource.h"

#include <QJsonArray>
#include <QJsonValue>
#include <QLocale>
#include <QRegularExpression>

#include <algorithm>
#include <cmath>
#include <string>
#include <type_traits>
#include <utility>

namespace attn {

namespace {

constexpr int jsonVersion = 1;

QString numberText(double v)
{
    return QString::number(v, 'g', 6);
}

} // namespace

QString scaleFormula(double scaleExponent, double temperature, Index dK)
{
    const QString symbol = dK > 0 ? QString::number(dK) : QStringLiteral("d_k");
    QString formula;
    if (scaleExponent == 0.5)
        formula = QStringLiteral("1/\u221a") + symbol;
    else if (scaleExponent == 0.0)
        formula = QStringLiteral("1 (unscaled)");
    else
        formula = QStringLiteral("%1^\u2212%2").arg(symbol, numberText(scaleExponent));
    if (temperature != 1.0)
        formula += QStringLiteral(" / \u03c4 (\u03c4=%1)").arg(numberText(temperature));
    return formula;
}

std::optional<std::vector<double>> parseHeadLambdas(const QString &text, Index heads,
                                                    QString *error)
{
    // Commas or spaces separate the numbers; an empty entry between two commas is refused.
    static const QRegularExpression separators(QStringLiteral("\\s*,\\s*|\\s+"));
    const QString trimmed = text.trimmed();
    const QStringList parts
        = trimmed.isEmpty() ? QStringList() : trimmed.split(separators, Qt::KeepEmptyParts);
    std::vector<double> lambdas;
    for (const QString &part : parts) {
        bool ok = false;
        const double l = part.toDouble(&ok);
        if (!ok || !std::isfinite(l)) {
            if (error)
                *error = QStringLiteral("\u03bb per head: '%1' is not a number").arg(part);
            return std::nullopt;
        }
        if (l < -1.0 || l > 2.0) {
            if (error)
                *error = QStringLiteral("\u03bb per head: %1 is outside [-1, 2]").arg(part);
            return std::nullopt;
        }
        lambdas.push_back(l);
    }
    if (!lambdas.empty() && Index(lambdas.size()) != heads) {
        if (error)
            *error = QStringLiteral("\u03bb per head: %1 numbers for h=%2 heads")
                         .arg(lambdas.size())
                         .arg(heads);
        return std::nullopt;
    }
    if (error)
        error->clear();
    return lambdas;
}

QString headLambdasText(const std::vector<double> &lambdas)
{
    QStringList parts;
    for (const double l : lambdas)
        parts << QString::number(l, 'g', QLocale::FloatingPointShortest);
    return parts.join(QStringLiteral(", "));
}

QString attentionKindName(AttentionKind k)
{
    switch (k) {
    case AttentionKind::EncoderSelf:
        return QStringLiteral("encoder self-attention");
    case AttentionKind::DecoderCausal:
        return QStringLiteral("decoder causal self-attention");
    case AttentionKind::EncoderDecoder:
        return QStringLiteral("encoder\u2013decoder cross-attention");
    }
    return {};
}

QString maskChoiceName(MaskChoice m)
{
    switch (m) {
    case MaskChoice::None:
        return QStringLiteral("none");
    case MaskChoice::Causal:
        return QStringLiteral("causal");
    case MaskChoice::KeyPadding:
        return QStringLiteral("key padding");
    }
    return {};
}

QString attentionKindId(AttentionKind k)
{
    switch (k) {
    case AttentionKind::EncoderSelf:
        return QStringLiteral("encoder");
    case AttentionKind::DecoderCausal:
        return QStringLiteral("decoder");
    case AttentionKind::EncoderDecoder:
        return QStringLiteral("cross");
    }
    return {};
}

QString maskChoiceId(MaskChoice m)
{
    switch (m) {
    case MaskChoice::None:
        return QStringLiteral("none");
    case MaskChoice::Causal:
        return QStringLiteral("causal");
    case MaskChoice::KeyPadding:
        return QStringLiteral("padding");
    }
    return {};
}

QString dtypeId(DType t)
{
    return t == DType::Float32 ? QStringLiteral("float32") : QStringLiteral("float64");
}

std::optional<AttentionKind> parseAttentionKind(const QString &id)
{
    for (AttentionKind k : {AttentionKind::EncoderSelf, AttentionKind::DecoderCausal,
                            AttentionKind::EncoderDecoder}) {
        if (id == attentionKindId(k))
            return k;
    }
    return std::nullopt;
}

std::optional<MaskChoice> parseMaskChoice(const QString &id)
{
    for (MaskChoice m : {MaskChoice::None, MaskChoice::Causal, MaskChoice::KeyPadding}) {
        if (id == maskChoiceId(m))
            return m;
    }
    return std::nullopt;
}

std::optional<DType> parseDType(const QString &id)
{
    for (DType t : {DType::Float32, DType::Float64}) {
        if (id == dtypeId(t))
            return t;
    }
    return std::nullopt;
}

QStringList SessionParameters::tokenList() const
{
    QStringList list;
    list.reserve(qsizetype(tokens.size()));
    for (const std::string &token : tokens)
        list << QString::fromStdString(token); // UTF-8
    return list;
}

void SessionParameters::setTokens(const QStringList &list)
{
    tokens.clear();
    tokens.reserve(std::size_t(list.size()));
    for (const QString &token : list)
        tokens.push_back(token.toStdString()); // UTF-8
}

namespace {

/// Token `index` as a Qt string, or empty when there is none.
QString tokenAt(const std::vector<std::string> &tokens, Index index)
{
    return index >= 0 && std::size_t(index) < tokens.size()
        ? QString::fromStdString(tokens[std::size_t(index)])
        : QString();
}

} // namespace

QString SessionParameters::queryLabel(Index i) const
{
    if (i >= 0 && std::size_t(i) < tokens.size() && i < n)
        return tokenAt(tokens, i);
    return QString::number(i);
}

QString SessionParameters::keyLabel(Index j) const
{
    if (kind == AttentionKind::EncoderDecoder) {
        if (j >= 0 && std::size_t(n + j) < tokens.size())
            return tokenAt(tokens, n + j);
        return QString::number(j);
    }
    return queryLabel(j);
}

QString SessionParameters::indexedQueryLabel(Index i) const
{
    const bool typed = i >= 0 && std::size_t(i) < tokens.size() && i < n;
    return typed ? QStringLiteral("%1:%2").arg(i).arg(tokenAt(tokens, i)) : QString::number(i);
}

QString SessionParameters::indexedKeyLabel(Index j) const
{
    const Index token = kind == AttentionKind::EncoderDecoder ? n + j : j;
    const bool typed = kind == AttentionKind::EncoderDecoder
        ? j >= 0 && std::size_t(token) < tokens.size()
        : j >= 0 && std::size_t(j) < tokens.size() && j < n;
    return typed ? QStringLiteral("%1:%2").arg(j).arg(tokenAt(tokens, token)) : QString::number(j);
}

QString SessionParameters::validate(Index maxN) const
{
    // A long model run is shown by the Long tab (tiles) and the Model tab (thumbnails) only.
    if (tensors && tensors->longOnly())
        maxN = std::max<Index>(maxN, maxLongSequence);
    if (const std::string e = EngineParameters::validate(maxN); !e.empty())
        return QString::fromStdString(e);
    if (tensors && (rope || alibi || kvHeads != 0))
        return QStringLiteral("RoPE, ALiBi and key/value heads apply to the seeded inputs; "
                              "opened tensors are computed as they are");
    if (tensors)
        return tensors->checkParameters(*this);
    return {};
}

QJsonObject SessionParameters::toJson() const
{
    QJsonObject o;
    o.insert(QStringLiteral("version"), jsonVersion);
    o.insert(QStringLiteral("n"), qint64(n));
    o.insert(QStringLiteral("n_k"), qint64(nK));
    o.insert(QStringLiteral("d_model"), qint64(dModel));
    o.insert(QStringLiteral("heads"), qint64(heads));
    o.insert(QStringLiteral("seed"), QString::number(seed));
    o.insert(QStringLiteral("generator"), QString::fromLatin1(randomSourceName(generator)));
    o.insert(QStringLiteral("kind"), attentionKindId(kind));
    o.insert(QStringLiteral("mask"), maskChoiceId(mask));
    o.insert(QStringLiteral("padding"), qint64(paddingCount));
    o.insert(QStringLiteral("scale_exponent"), scaleExponent);
    o.insert(QStringLiteral("temperature"), temperature);
    o.insert(QStringLiteral("positional"), positional);
    o.insert(QStringLiteral("dtype"), dtypeId(dtype));
    o.insert(QStringLiteral("tokens"), QJsonArray::fromStringList(tokenList()));
    // Written only when set, so files without them read and write back unchanged.
    const SessionParameters defaults;
    if (rope)
        o.insert(QStringLiteral("rope"), true);
    if (rope || ropeConvention != defaults.ropeConvention)
        o.insert(QStringLiteral("rope_convention"),
                 QString::fromStdString(ropeConventionName(ropeConvention)));
    if (ropeBase != defaults.ropeBase)
        o.insert(QStringLiteral("rope_base"), ropeBase);
    if (alibi)
        o.insert(QStringLiteral("alibi"), true);
    if (kvHeads != 0)
        o.insert(QStringLiteral("kv_heads"), qint64(kvHeads));
    if (window != 0)
        o.insert(QStringLiteral("window"), qint64(window));
    if (sinks != 0)
        o.insert(QStringLiteral("sinks"), qint64(sinks));
    if (learnedSink)
        o.insert(QStringLiteral("learned_sink"), true);
    if (sinkLogit != defaults.sinkLogit)
        o.insert(QStringLiteral("sink_logit"), sinkLogit);
    if (differential)
        o.insert(QStringLiteral("differential"), true);
    if (lambda != defaults.lambda)
        o.insert(QStringLiteral("differential_lambda"), lambda);
    if (!headLambdas.empty()) {
        QJsonArray list;
        for (const double l : headLambdas)
            list.append(l);
        o.insert(QStringLiteral("differential_head_lambdas"), list);
    }
    if (outputGate)
        o.insert(QStringLiteral("output_gate"), true);
    if (gateBias != defaults.gateBias)
        o.insert(QStringLiteral("gate_bias"), gateBias);
    if (latent)
        o.insert(QStringLiteral("latent_attention"), true);
    if (latentDim != defaults.latentDim)
        o.insert(QStringLiteral("latent_dim"), qint64(latentDim));
    if (latentRopeDim != defaults.latentRopeDim)
        o.insert(QStringLiteral("latent_rope_dim"), qint64(latentRopeDim));
    if (latentAbsorbed)
        o.insert(QStringLiteral("latent_absorbed"), true);
    return o;
}

const QStringList &SessionParameters::jsonKeys()
{
    static const QStringList keys = {QStringLiteral("version"),
                                     QStringLiteral("n"),
                                     QStringLiteral("n_k"),
                                     QStringLiteral("d_model"),
                                     QStringLiteral("heads"),
                                     QStringLiteral("seed"),
                                     QStringLiteral("generator"),
                                     QStringLiteral("kind"),
                                     QStringLiteral("mask"),
                                     QStringLiteral("padding"),
                                     QStringLiteral("scale_exponent"),
                                     QStringLiteral("temperature"),
                                     QStringLiteral("positional"),
                                     QStringLiteral("dtype"),
                                     QStringLiteral("tokens"),
                                     QStringLiteral("rope"),
                                     QStringLiteral("rope_convention"),
                                     QStringLiteral("rope_base"),
                                     QStringLiteral("alibi"),
                                     QStringLiteral("kv_heads"),
                                     QStringLiteral("window"),
                                     QStringLiteral("sinks"),
                                     QStringLiteral("learned_sink"),
                                     QStringLiteral("sink_logit"),
                                     QStringLiteral("differential"),
                                     QStringLiteral("differential_lambda"),
                                     QStringLiteral("differential_head_lambdas"),
                                     QStringLiteral("output_gate"),
                                     QStringLiteral("gate_bias"),
                                     QStringLiteral("latent_attention"),
                                     QStringLiteral("latent_dim"),
                                     QStringLiteral("latent_rope_dim"),
                                     QStringLiteral("latent_absorbed")};
    return keys;
}

std::optional<SessionParameters> SessionParameters::fromJson(const QJsonObject &o, QString *error)
{
    SessionParameters p;
    QString message;
    auto fail = [&](const QString &m) {
        if (error)
            *error = m;
        return std::nullopt;
    };
    auto readInt = [&](const char *key, auto &out) -> bool {
        const QJsonValue v = o.value(QLatin1String(key));
        if (v.isUndefined())
            return true;
        const double d = v.toDouble(std::nan(""));
        if (!v.isDouble() || d != std::floor(d)) {
            message = QStringLiteral("'%1' must be an integer").arg(QLatin1String(key));
            return false;
        }
        if (std::abs(d) > 1e9) { // validate() names each key's own range; this keeps the cast safe
            message = QStringLiteral("'%1' = %2 is out of range")
                          .arg(QLatin1String(key))
                          .arg(d, 0, 'g', 17);
            return false;
        }
        out = std::remove_reference_t<decltype(out)>(d);
        return true;
    };
    auto readDouble = [&](const char *key, double &out) -> bool {
        const QJsonValue v = o.value(QLatin1String(key));
        if (v.isUndefined())
            return true;
        if (!v.isDouble()) {
            message = QStringLiteral("'%1' must be a number").arg(QLatin1String(key));
            return false;
        }
        out = v.toDouble();
        return true;
    };
    auto readText = [&](const char *key, QString &out) -> bool {
        const QJsonValue v = o.value(QLatin1String(key));
        if (v.isUndefined())
            return true;
        if (!v.isString()) {
            message = QStringLiteral("'%1' must be a string").arg(QLatin1String(key));
            return false;
        }
        out = v.toString();
        return true;
    };

    int version = jsonVersion;
    if (!readInt("version", version))
        return fail(message);
    if (version > jsonVersion)
        return fail(QStringLiteral("parameters were written by a newer Attention Lab (version %1; "
                                   "this one reads up to %2)")
                        .arg(version)
                        .arg(jsonVersion));
    if (!readInt("n", p.n) || !readInt("n_k", p.nK) || !readInt("d_model", p.dModel)
        || !readInt("heads", p.heads) || !readInt("padding", p.paddingCount)
        || !readDouble("scale_exponent", p.scaleExponent)
        || !readDouble("temperature", p.temperature) || !readInt("kv_heads", p.kvHeads)
        || !readInt("window", p.window) || !readInt("sinks", p.sinks)
        || !readDouble("rope_base", p.ropeBase))
        return fail(message);
    if (!readDouble("sink_logit", p.sinkLogit) || !readDouble("differential_lambda", p.lambda)
        || !readDouble("gate_bias", p.gateBias) || !readInt("latent_dim", p.latentDim)
        || !readInt("latent_rope_dim", p.latentRopeDim))
        return fail(message);
    if (const QJsonValue v = o.value(QLatin1String("differential_head_lambdas"));
        !v.isUndefined()) {
        if (!v.isArray())
            return fail(QStringLiteral("'differential_head_lambdas' must be a list of numbers"));
        for (const QJsonValue &x : v.toArray()) {
            if (!x.isDouble())
                return fail(
                    QStringLiteral("'differential_head_lambdas' must be a list of numbers"));
            p.headLambdas.push_back(x.toDouble());
        }
    }

    const QJsonValue seed = o.value(QLatin1String("seed"));
    if (seed.isString()) {
        bool ok = false;
        p.seed = seed.toString().toULongLong(&ok);
        if (!ok)
            return fail(QStringLiteral("'seed' must be a non-negative integer below 2^64, got '%1'")
                            .arg(seed.toString()));
    } else if (seed.isDouble()) {
        const double d = seed.toDouble();
        if (d < 0 || d != std::floor(d) || d > 9007199254740992.0)
            return fail(QStringLiteral("'seed' must be a non-negative integer"));
        p.seed = quint64(d);
    } else if (!seed.isUndefined()) {
        return fail(QStringLiteral("'seed' must be an integer or a decimal string"));
    }

    QString text;
    if (!readText("kind", text))
        return fail(message);
    if (!text.isEmpty()) {
        const auto k = parseAttentionKind(text);
        if (!k)
            return fail(
                QStringLiteral("'kind' must be encoder, decoder or cross, got '%1'").arg(text));
        p.kind = *k;
    }
    text.clear();
    if (!readText("mask", text))
        return fail(message);
    if (!text.isEmpty()) {
        const auto m = parseMaskChoice(text);
        if (!m)
            return fail(
                QStringLiteral("'mask' must be none, causal or padding, got '%1'").arg(text));
        p.mask = *m;
    }
    text.clear();
    if (!readText("generator", text))
        return fail(message);
    if (!text.isEmpty()) {
        if (text != QLatin1String("numpy") && text != QLatin1String("torch"))
            return fail(QStringLiteral("'generator' must be numpy or torch, got '%1'").arg(text));
        p.generator = parseRandomSource(text.toStdString());
    }
    text.clear();
    if (!readText("dtype", text))
        return fail(message);
    if (!text.isEmpty()) {
        const auto t = parseDType(text);
        if (!t)
            return fail(QStringLiteral("'dtype' must be float32 or float64, got '%1'").arg(text));
        p.dtype = *t;
    }

    const QJsonValue positional = o.value(QLatin1String("positional"));
    if (positional.isBool())
        p.positional = positional.toBool();
    else if (!positional.isUndefined())
        return fail(QStringLiteral("'positional' must be true or false (sinusoidal positions; "
                                   "RoPE and ALiBi are \"rope\": true and \"alibi\": true)"));

    for (const auto &[key, flag] :
         {std::pair<const char *, bool *> {"rope", &p.rope},
          std::pair<const char *, bool *> {"alibi", &p.alibi},
          std::pair<const char *, bool *> {"learned_sink", &p.learnedSink},
          std::pair<const char *, bool *> {"differential", &p.differential},
          std::pair<const char *, bool *> {"output_gate", &p.outputGate},
          std::pair<const char *, bool *> {"latent_attention", &p.latent},
          std::pair<const char *, bool *> {"latent_absorbed", &p.latentAbsorbed}}) {
        const QJsonValue v = o.value(QLatin1String(key));
        if (v.isBool())
            *flag = v.toBool();
        else if (!v.isUndefined())
            return fail(QStringLiteral("'%1' must be true or false").arg(QLatin1String(key)));
    }
    text.clear();
    if (!readText("rope_convention", text))
        return fail(message);
    if (!text.isEmpty()) {
        if (text == QLatin1String("interleaved"))
            p.ropeConvention = RopeConvention::Interleaved;
        else if (text == QLatin1String("half"))
            p.ropeConvention = RopeConvention::Half;
        else
            return fail(QStringLiteral("'rope_convention' must be interleaved or half, got '%1'")
                            .arg(text));
    }

    const QJsonValue tokens = o.value(QLatin1String("tokens"));
    if (tokens.isArray()) {
        for (const QJsonValue &t : tokens.toArray()) {
            if (!t.isString())
                return fail(QStringLiteral("'tokens' must be an array of strings"));
            p.tokens.push_back(t.toString().toStdString());
        }
    } else if (!tokens.isUndefined()) {
        return fail(QStringLiteral("'tokens' must be an array of strings"));
    }
    // The tokens label (and make) the inputs: one per query, for encoder–decoder attention one
    // per query and then per key. A count that fits neither is refused, naming both numbers,
    // rather than shown with positions standing in for the missing labels.
    const Index count = Index(p.tokens.size());
    if (count > 0 && count != p.n
        && !(p.kind == AttentionKind::EncoderDecoder && count == p.n + p.nK)) {
        return fail(p.kind == AttentionKind::EncoderDecoder
                        ? QStringLiteral("'tokens' holds %1 tokens but n = %2 and n_k = %3: "
                                         "encoder-decoder attention takes n (the queries) or "
                                         "n + n_k = %4 (the queries, then the keys)")
                              .arg(count)
                              .arg(p.n)
                              .arg(p.nK)
                              .arg(p.n + p.nK)
                        : QStringLiteral("'tokens' holds %1 tokens but n = %2: there must be "
                                         "one token per position (n follows the tokens)")
                              .arg(count)
                              .arg(p.n));
    }

    const QString invalid = p.validate();
    if (!invalid.isEmpty())
        return fail(invalid);
    return p;
}

QString SessionParameters::caption() const
{
    if (tensors)
        return tensors->caption(*this); // "loaded: case.npz, …"
    QStringList parts;
    if (kind == AttentionKind::DecoderCausal)
        parts << QStringLiteral("decoder");
    if (kind == AttentionKind::EncoderDecoder)
        parts << QStringLiteral("encoder\u2013decoder") << QStringLiteral("n_q=%1").arg(n)
              << QStringLiteral("n_k=%1").arg(nK);
    else
        parts << QStringLiteral("n=%1").arg(n);
    parts << QStringLiteral("d_model=%1").arg(dModel) << QStringLiteral("h=%1").arg(heads)
          << QStringLiteral("d_k=%1").arg(dK());

    // MLA's queries and keys are d_k + d_r wide: the scale names that width.
    parts << QStringLiteral("scale=")
            + scaleFormula(scaleExponent, temperature, latent ? scoreDim() : 0);

    QStringList masks;
    if (causalMasked())
        masks << QStringLiteral("causal");
    if (mask == MaskChoice::KeyPadding)
        masks << QStringLiteral("padding(%1)").arg(paddingCount);
    parts << QStringLiteral("mask=")
            + (masks.isEmpty() ? QStringLiteral("none") : masks.join(QLatin1Char('+')));
    if (rope)
        parts << QStringLiteral("RoPE %1 base %2")
                     .arg(QString::fromStdString(ropeConventionName(ropeConvention)),
                          numberText(ropeBase));
    else if (alibi)
        parts << QStringLiteral("ALiBi");
    else
        parts << (positional ? QStringLiteral("PE=on") : QStringLiteral("PE=off"));
    if (keyValueHeads() != heads)
        parts << QStringLiteral("g=%1 kv heads").arg(keyValueHeads());
    if (window > 0)
        parts << QStringLiteral("window=%1").arg(window)
                + (sinks == 1      ? QStringLiteral("+1 sink")
                       : sinks > 1 ? QStringLiteral("+%1 sinks").arg(sinks)
                                   : QString());
    if (learnedSink)
        parts << QStringLiteral("learned sink b=%1").arg(numberText(sinkLogit));
    if (differential) {
        QStringList lambdas;
        for (const double l : lambdaPerHead())
            lambdas << numberText(l);
        lambdas.removeDuplicates();
        parts << QStringLiteral("differential \u03bb=%1").arg(lambdas.join(QLatin1Char('/')));
    }
    if (outputGate)
        parts << QStringLiteral("head gate bias=%1").arg(numberText(gateBias));
    if (latent)
        parts << QStringLiteral("MLA d_c=%1 d_r=%2 %3")
                     .arg(latentDim)
                     .arg(latentRopeDim)
                     .arg(latentAbsorbed ? QStringLiteral("absorbed")
                                         : QStringLiteral("decompressed"));
    parts << dtypeId(dtype);
    parts << QStringLiteral("seed=%1").arg(seed);
    if (generator == RandomSource::Torch)
        parts << QStringLiteral("torch");
    return parts.join(QStringLiteral(", "));
}

} // namespace attn
