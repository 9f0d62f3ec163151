#include "ui/document/sessionfile.h"

#include "ui/session/playsettings.h"
#include "ui/session/tensorsource.h"
#include "ui/session/trainingsettings.h"

#include <QDir>
#include <QFile>
#include <QFileInfo>
#include <QJsonArray>
#include <QJsonDocument>
#include <QJsonParseError>
#include <QSaveFile>

#include <algorithm>
#include <cmath>
#include <limits>

namespace attn {

namespace {

QString quotedPath(const QString &path)
{
    return QStringLiteral("\u201c%1\u201d").arg(QDir::toNativeSeparators(path));
}

/// The session file's name of a head order ("index", "entropy", "max_weight").
const char *headSortId(HeadOrderKey key)
{
    switch (key) {
    case HeadOrderKey::Index:
        return "index";
    case HeadOrderKey::Entropy:
        return "entropy";
    case HeadOrderKey::MaxWeight:
        return "max_weight";
    }
    return "index";
}

QString quantityId(HeatmapQuantity q)
{
    switch (q) {
    case HeatmapQuantity::Weights:
        return QStringLiteral("weights");
    case HeatmapQuantity::Scores:
        return QStringLiteral("scores");
    case HeatmapQuantity::ScaledScores:
        return QStringLiteral("scaled_scores");
    }
    return {};
}

} // namespace

std::shared_ptr<const TensorSource> loadSessionTensors(const QJsonObject &tensors, QString *error)
{
    if (error)
        error->clear();
    const QString path = tensors.value(QLatin1String("file")).toString();
    if (path.isEmpty())
        return nullptr;
    const MaskConvention convention
        = tensors.value(QLatin1String("mask_convention")).toString() == QLatin1String("allowed")
        ? MaskConvention::Allowed
        : MaskConvention::Masked;
    std::shared_ptr<const TensorSource> source;
    try {
        const TensorFile file = readTensorFile(path);
        source
            = makeTensorSource(file, tensors.value(QLatin1String("array")).toString(), convention,
                               error, tensors.value(QLatin1String("batch")).toInt(0));
    } catch (const NpyError &e) {
        if (error)
            *error = QString::fromUtf8(e.what());
        return nullptr;
    }
    const int layer = tensors.value(QLatin1String("layer")).toInt(0);
    if (source && layer > 0)
        source = source->withLayer(layer);
    return source;
}

QJsonObject heatmapViewToJson(const HeatmapOptions &options)
{
    QJsonObject o;
    o.insert(QStringLiteral("view"),
             options.view == HeatmapView::SingleHead ? QStringLiteral("head")
                                                     : QStringLiteral("grid"));
    o.insert(QStringLiteral("head"), options.head);
    o.insert(QStringLiteral("quantity"), quantityId(options.quantity));
    o.insert(QStringLiteral("colormap"), Colormap(options.colormap).name());
    o.insert(QStringLiteral("scale"),
             options.scale == ColorScale::Log ? QStringLiteral("log") : QStringLiteral("linear"));
    o.insert(QStringLiteral("range"),
             options.autoRange            ? QStringLiteral("auto")
                 : options.maxWeightRange ? QStringLiteral("max_weight")
                                          : QStringLiteral("fixed"));
    o.insert(QStringLiteral("pooling"),
             options.pooling == HeatmapPooling::Mean ? QStringLiteral("mean")
                                                     : QStringLiteral("max"));
    o.insert(QStringLiteral("show_mean"), options.showMean);
    o.insert(QStringLiteral("stretch"), options.stretch);
    o.insert(QStringLiteral("fit_all"), options.fitAll);
    o.insert(QStringLiteral("heads_per_row"), options.headsPerRow);
    o.insert(QStringLiteral("sort_heads"), QLatin1String(headSortId(options.headSort)));
    o.insert(QStringLiteral("sort_descending"), options.headSortDescending);
    if (options.pinnedQuery >= 0)
        o.insert(QStringLiteral("pin_query"), options.pinnedQuery);
    if (!options.window.isNull()) {
        const QRect w = options.window;
        o.insert(QStringLiteral("window"), QJsonArray {w.x(), w.y(), w.width(), w.height()});
    }
    return o;
}

HeatmapOptions heatmapViewFromJson(const QJsonObject &o, HeatmapOptions base)
{
    const QString view = o.value(QLatin1String("view")).toString();
    if (view == QLatin1String("grid"))
        base.view = HeatmapView::Grid;
    else if (view == QLatin1String("head"))
        base.view = HeatmapView::SingleHead;
    const QJsonValue head = o.value(QLatin1String("head"));
    if (head.isDouble() && head.toDouble() >= 0 && head.toDouble() <= SessionParameters::maxDModel
        && head.toDouble() == std::floor(head.toDouble()))
        base.head = head.toInt();
    const QString quantity = o.value(QLatin1String("quantity")).toString();
    for (HeatmapQuantity q :
         {HeatmapQuantity::Weights, HeatmapQuantity::Scores, HeatmapQuantity::ScaledScores}) {
        if (quantity == quantityId(q))
            base.quantity = q;
    }
    if (const auto map = Colormap::fromName(o.value(QLatin1String("colormap")).toString()))
        base.colormap = *map;
    const QString scale = o.value(QLatin1String("scale")).toString();
    if (scale == QLatin1String("log"))
        base.scale = ColorScale::Log;
    else if (scale == QLatin1String("linear"))
        base.scale = ColorScale::Linear;
    const QString range = o.value(QLatin1String("range")).toString();
    if (range == QLatin1String("auto") || range == QLatin1String("fixed")
        || range == QLatin1String("max_weight")) {
        base.autoRange = range == QLatin1String("auto");
        base.maxWeightRange = range == QLatin1String("max_weight");
    }
    const QString pooling = o.value(QLatin1String("pooling")).toString();
    if (pooling == QLatin1String("mean"))
        base.pooling = HeatmapPooling::Mean;
    else if (pooling == QLatin1String("max"))
        base.pooling = HeatmapPooling::Max;
    const QJsonValue mean = o.value(QLatin1String("show_mean"));
    if (mean.isBool())
        base.showMean = mean.toBool();
    const QJsonValue stretch = o.value(QLatin1String("stretch"));
    if (stretch.isBool())
        base.stretch = stretch.toBool();
    const QJsonValue fitAll = o.value(QLatin1String("fit_all"));
    if (fitAll.isBool())
        base.fitAll = fitAll.toBool();
    const QJsonValue perRow = o.value(QLatin1String("heads_per_row"));
    if (perRow.isDouble() && perRow.toDouble() >= 0
        && perRow.toDouble() <= HeatmapOptions::maxHeadsPerRow
        && perRow.toDouble() == std::floor(perRow.toDouble()))
        base.headsPerRow = perRow.toInt();
    const QString sort = o.value(QLatin1String("sort_heads")).toString();
    for (HeadOrderKey key : {HeadOrderKey::Index, HeadOrderKey::Entropy, HeadOrderKey::MaxWeight})
        if (sort == QLatin1String(headSortId(key)))
            base.headSort = key;
    const QJsonValue descending = o.value(QLatin1String("sort_descending"));
    if (descending.isBool())
        base.headSortDescending = descending.toBool();
    const QJsonValue pin = o.value(QLatin1String("pin_query"));
    if (pin.isDouble() && pin.toDouble() >= -1 && pin.toDouble() < SessionParameters::maxSequence
        && pin.toDouble() == std::floor(pin.toDouble()))
        base.pinnedQuery = pin.toInt();
    const QJsonArray window = o.value(QLatin1String("window")).toArray();
    if (window.size() == 4) {
        int v[4];
        bool ok = true;
        for (int i = 0; i < 4 && ok; ++i) {
            // Range first: int(d) of a double outside int's range is undefined.
            const double d = window.at(i).toDouble(-1);
            ok = d >= 0 && d <= SessionParameters::maxSequence && d == std::floor(d);
            v[i] = ok ? int(d) : 0;
        }
        if (ok && v[2] > 0 && v[3] > 0)
            base.window = QRect(v[0], v[1], v[2], v[3]);
    }
    return base;
}

QJsonObject viewTransformToJson(const ViewTransform &transform)
{
    QJsonArray keys;
    for (int k : transform.hiddenKeys)
        keys.append(k);
    return QJsonObject {{QStringLiteral("trim_padding"), transform.trimPadding},
                        {QStringLiteral("hidden_keys"), keys},
                        {QStringLiteral("renormalize"), transform.renormalize}};
}

ViewTransform viewTransformFromJson(const QJsonObject &o, ViewTransform base)
{
    const QJsonValue trim = o.value(QLatin1String("trim_padding"));
    if (trim.isBool())
        base.trimPadding = trim.toBool();
    const QJsonValue renormalize = o.value(QLatin1String("renormalize"));
    if (renormalize.isBool())
        base.renormalize = renormalize.toBool();
    const QJsonValue keys = o.value(QLatin1String("hidden_keys"));
    if (keys.isArray()) {
        QList<int> hidden;
        for (const QJsonValue &k : keys.toArray()) {
            const double d = k.toDouble(-1);
            if (d >= 0 && d < SessionParameters::maxSequence && d == std::floor(d))
                hidden.append(int(d));
        }
        base.hiddenKeys = hidden;
    }
    return base;
}

namespace {

struct CompareMaskId
{
    CompareVariant::Mask mask;
    const char *id;
};
constexpr CompareMaskId compareMaskIds[] = {
    {CompareVariant::Mask::None, "none"},
    {CompareVariant::Mask::Causal, "causal"},
    {CompareVariant::Mask::Padding, "padding"},
    {CompareVariant::Mask::CausalPadding, "causal_padding"},
};

} // namespace

QJsonObject compareViewToJson(const CompareVariant &variant, int head)
{
    QJsonObject o;
    o.insert(QStringLiteral("alpha"), variant.scaleExponent);
    o.insert(QStringLiteral("temperature"), variant.temperature);
    for (const CompareMaskId &m : compareMaskIds)
        if (m.mask == variant.mask)
            o.insert(QStringLiteral("mask"), QLatin1String(m.id));
    o.insert(QStringLiteral("d_k"), variant.dK);
    o.insert(QStringLiteral("head"), head);
    return o;
}

CompareVariant compareViewFromJson(const QJsonObject &o, CompareVariant base, int *head)
{
    const QJsonValue alpha = o.value(QLatin1String("alpha"));
    if (alpha.isDouble() && alpha.toDouble() >= 0.0 && alpha.toDouble() <= 1.0)
        base.scaleExponent = alpha.toDouble();
    const QJsonValue tau = o.value(QLatin1String("temperature"));
    if (tau.isDouble() && tau.toDouble() >= CompareVariant::minTemperature
        && tau.toDouble() <= CompareVariant::maxTemperature)
        base.temperature = tau.toDouble();
    const QString mask = o.value(QLatin1String("mask")).toString();
    for (const CompareMaskId &m : compareMaskIds)
        if (mask == QLatin1String(m.id))
            base.mask = m.mask;
    auto wholeIn = [](const QJsonValue &v, int low, int high) {
        return v.isDouble() && v.toDouble() >= low && v.toDouble() <= high
            && v.toDouble() == std::floor(v.toDouble());
    };
    const QJsonValue dK = o.value(QLatin1String("d_k"));
    if (wholeIn(dK, 1, SessionParameters::maxDModel))
        base.dK = dK.toInt();
    const QJsonValue h = o.value(QLatin1String("head"));
    if (head && wholeIn(h, 0, SessionParameters::maxDModel))
        *head = h.toInt();
    return base;
}

QJsonObject tokenViewToJson(const TokenViewOptions &options)
{
    QJsonObject o;
    o.insert(QStringLiteral("view"),
             options.view == TokenView::Heads ? QStringLiteral("heads") : QStringLiteral("text"));
    QList<int> hidden = options.hiddenHeads;
    std::sort(hidden.begin(), hidden.end());
    QJsonArray heads;
    for (const int k : hidden)
        heads.append(k);
    o.insert(QStringLiteral("hidden_heads"), heads);
    o.insert(QStringLiteral("mean"), options.showMean);
    o.insert(QStringLiteral("head"), options.textHead);
    o.insert(QStringLiteral("query"), options.query);
    o.insert(QStringLiteral("range"),
             options.rowRange ? QStringLiteral("row") : QStringLiteral("fixed"));
    return o;
}

TokenViewOptions tokenViewFromJson(const QJsonObject &o, TokenViewOptions base)
{
    auto wholeIn = [](const QJsonValue &v, int low, int high) {
        return v.isDouble() && v.toDouble() >= low && v.toDouble() <= high
            && v.toDouble() == std::floor(v.toDouble());
    };
    const QString view = o.value(QLatin1String("view")).toString();
    if (view == QLatin1String("heads"))
        base.view = TokenView::Heads;
    else if (view == QLatin1String("text"))
        base.view = TokenView::Text;
    const QJsonValue hidden = o.value(QLatin1String("hidden_heads"));
    if (hidden.isArray()) {
        QList<int> heads;
        bool valid = true;
        for (const QJsonValue &v : hidden.toArray()) {
            valid = valid && wholeIn(v, 0, SessionParameters::maxDModel);
            if (valid && !heads.contains(v.toInt()))
                heads.append(v.toInt());
        }
        if (valid) {
            std::sort(heads.begin(), heads.end());
            base.hiddenHeads = heads;
        }
    }
    if (o.value(QLatin1String("mean")).isBool())
        base.showMean = o.value(QLatin1String("mean")).toBool();
    const QJsonValue head = o.value(QLatin1String("head"));
    if (wholeIn(head, 0, SessionParameters::maxDModel))
        base.textHead = head.toInt();
    const QJsonValue query = o.value(QLatin1String("query"));
    if (wholeIn(query, -1, SessionParameters::maxLongSequence))
        base.query = query.toInt();
    const QString range = o.value(QLatin1String("range")).toString();
    if (range == QLatin1String("row") || range == QLatin1String("fixed"))
        base.rowRange = range == QLatin1String("row");
    return base;
}

namespace {

/// A JSON value as it was written, for messages ("1e+300", "\"x\"", "[1,2]").
QString jsonText(const QJsonValue &v)
{
    if (v.isDouble())
        return QString::number(v.toDouble(), 'g', QLocale::FloatingPointShortest);
    const QByteArray wrapped = QJsonDocument(QJsonArray {v}).toJson(QJsonDocument::Compact);
    return QString::fromUtf8(wrapped.mid(1, wrapped.size() - 2));
}

/// Checks that `v` (named `name` in messages), when present, is an integer in [low, high].
bool checkWhole(const QJsonValue &v, const QString &name, double low, double high, QString *error)
{
    const double d = v.toDouble(std::nan(""));
    if (v.isUndefined() || (v.isDouble() && d >= low && d <= high && d == std::floor(d)))
        return true;
    *error = QStringLiteral("%1 must be an integer in [%2, %3], got %4")
                 .arg(name)
                 .arg(low, 0, 'f', 0)
                 .arg(high, 0, 'f', 0)
                 .arg(jsonText(v));
    return false;
}

/// Checks that `v`, when present, is a number in [low, high].
bool checkNumber(const QJsonValue &v, const QString &name, double low, double high, QString *error)
{
    if (v.isUndefined() || (v.isDouble() && v.toDouble() >= low && v.toDouble() <= high))
        return true;
    *error = QStringLiteral("%1 must be a number in [%2, %3], got %4")
                 .arg(name)
                 .arg(low)
                 .arg(high)
                 .arg(jsonText(v));
    return false;
}

/// Checks that `v` (named `name` in messages), when present, is one of the strings `choices`.
bool checkChoice(const QJsonValue &v, const QString &name, const QStringList &choices,
                 QString *error)
{
    if (v.isUndefined() || (v.isString() && choices.contains(v.toString())))
        return true;
    QStringList quoted;
    for (const QString &c : choices)
        quoted << QLatin1Char('"') + c + QLatin1Char('"');
    const QString last = quoted.takeLast();
    *error = QStringLiteral("%1 must be %2 or %3, got %4")
                 .arg(name, quoted.join(QStringLiteral(", ")), last, jsonText(v));
    return false;
}

/// The Tokens view's block (tokenViewFromJson's keys): each present key of the right kind and in
/// range for a session of `heads` heads and `n` queries.
QString checkTokensView(const QJsonObject &tokens, int heads, int n)
{
    const QString t = QStringLiteral("\"view\": \"tokens\": ");
    QString error;
    if (!checkChoice(tokens.value(QLatin1String("view")), t + QStringLiteral("\"view\""),
                     {QStringLiteral("heads"), QStringLiteral("text")}, &error)
        || !checkChoice(tokens.value(QLatin1String("range")), t + QStringLiteral("\"range\""),
                        {QStringLiteral("row"), QStringLiteral("fixed")}, &error)
        || !checkWhole(tokens.value(QLatin1String("head")), t + QStringLiteral("\"head\""), 0,
                       heads - 1, &error)
        || !checkWhole(tokens.value(QLatin1String("query")), t + QStringLiteral("\"query\""), -1,
                       n - 1, &error))
        return error;
    const QJsonValue mean = tokens.value(QLatin1String("mean"));
    if (!mean.isUndefined() && !mean.isBool())
        return t + QStringLiteral("\"mean\" must be true or false, got ") + jsonText(mean);
    const QJsonValue hidden = tokens.value(QLatin1String("hidden_heads"));
    if (!hidden.isUndefined() && !hidden.isArray())
        return t + QStringLiteral("\"hidden_heads\" must be a list of heads, got ")
            + jsonText(hidden);
    const QJsonArray list = hidden.toArray();
    for (qsizetype i = 0; i < list.size(); ++i)
        if (!checkWhole(list.at(i), t + QStringLiteral("\"hidden_heads\"[%1]").arg(i), 0, heads - 1,
                        &error))
            return error;
    return {};
}

/// The numbers of the view state (see sessionfile.h) in range, before anything converts them:
/// a session is refused, naming the key, rather than shown with some values silently dropped.
/// `heads` and `n` are the session's heads and queries (a pinned query, the Long tab's and the
/// Tokens view's head must be among them).
QString checkView(const QJsonObject &view, int heads, int n)
{
    // The blocks, each of the type MainWindow::viewState writes.
    for (const char *key :
         {"heatmap", "transform", "compare", "tokens", "long_map", "steps", "training", "play"}) {
        const QJsonValue v = view.value(QLatin1String(key));
        if (!v.isUndefined() && !v.isObject())
            return QStringLiteral("\"view\": \"%1\" must be an object, got %2")
                .arg(QLatin1String(key), jsonText(v));
    }
    if (const QJsonValue tabs = view.value(QLatin1String("tabs"));
        !tabs.isUndefined() && !tabs.isArray())
        return QStringLiteral("\"view\": \"tabs\" must be an array of tab names, got %1")
            .arg(jsonText(tabs));
    if (const QJsonValue strip = view.value(QLatin1String("row_strip"));
        !strip.isUndefined() && !strip.isBool())
        return QStringLiteral("\"view\": \"row_strip\" must be true or false, got %1")
            .arg(jsonText(strip));
    QString error;
    const int maxN = SessionParameters::maxSequence, maxD = SessionParameters::maxDModel;
    const QJsonObject heatmap = view.value(QLatin1String("heatmap")).toObject();
    const QString h = QStringLiteral("\"view\": \"heatmap\": ");
    if (!checkWhole(heatmap.value(QLatin1String("head")), h + QStringLiteral("\"head\""), 0, maxD,
                    &error))
        return error;
    if (!checkWhole(heatmap.value(QLatin1String("pin_query")), h + QStringLiteral("\"pin_query\""),
                    -1, std::min(n, maxN) - 1, &error))
        return error;
    if (!checkWhole(heatmap.value(QLatin1String("heads_per_row")),
                    h + QStringLiteral("\"heads_per_row\""), 0, HeatmapOptions::maxHeadsPerRow,
                    &error))
        return error;
    if (const QJsonValue fitAll = heatmap.value(QLatin1String("fit_all"));
        !fitAll.isUndefined() && !fitAll.isBool())
        return h + QStringLiteral("\"fit_all\" must be true or false, got ") + jsonText(fitAll);
    if (!checkChoice(
            heatmap.value(QLatin1String("sort_heads")), h + QStringLiteral("\"sort_heads\""),
            {QStringLiteral("index"), QStringLiteral("entropy"), QStringLiteral("max_weight")},
            &error))
        return error;
    const QJsonValue window = heatmap.value(QLatin1String("window"));
    if (!window.isUndefined()) {
        if (!window.isArray() || window.toArray().size() != 4)
            return h + QStringLiteral("\"window\" must be [key0, query0, keys, queries], got ")
                + jsonText(window);
        for (int i = 0; i < 4; ++i) {
            if (!checkWhole(window.toArray().at(i), h + QStringLiteral("\"window\"[%1]").arg(i),
                            i < 2 ? 0 : 1, maxN, &error))
                return error;
        }
    }
    const QJsonValue keys
        = view.value(QLatin1String("transform")).toObject().value(QLatin1String("hidden_keys"));
    const QString t = QStringLiteral("\"view\": \"transform\": \"hidden_keys\"");
    if (!keys.isUndefined() && !keys.isArray())
        return t + QStringLiteral(" must be a list of key indices, got ") + jsonText(keys);
    const QJsonArray list = keys.toArray();
    for (qsizetype i = 0; i < list.size(); ++i) {
        if (!checkWhole(list.at(i), t + QStringLiteral("[%1]").arg(i), 0, maxN - 1, &error))
            return error;
    }
    const QJsonObject compare = view.value(QLatin1String("compare")).toObject();
    const QString c = QStringLiteral("\"view\": \"compare\": ");
    if (!checkNumber(compare.value(QLatin1String("alpha")), c + QStringLiteral("\"alpha\""), 0.0,
                     1.0, &error)
        || !checkNumber(compare.value(QLatin1String("temperature")),
                        c + QStringLiteral("\"temperature\""), CompareVariant::minTemperature,
                        CompareVariant::maxTemperature, &error)
        || !checkWhole(compare.value(QLatin1String("d_k")), c + QStringLiteral("\"d_k\""), 1, maxD,
                       &error)
        || !checkWhole(compare.value(QLatin1String("head")), c + QStringLiteral("\"head\""), 0,
                       maxD, &error))
        return error;
    const QJsonObject longMap = view.value(QLatin1String("long_map")).toObject();
    const QString l = QStringLiteral("\"view\": \"long_map\": ");
    if (!checkWhole(longMap.value(QLatin1String("n")), l + QStringLiteral("\"n\""), 2,
                    SessionParameters::maxLongSequence, &error)
        || !checkWhole(longMap.value(QLatin1String("head")), l + QStringLiteral("\"head\""), -1,
                       heads - 1, &error))
        return error;
    if (!checkChoice(longMap.value(QLatin1String("pooling")), l + QStringLiteral("\"pooling\""),
                     {QStringLiteral("max"), QStringLiteral("mean")}, &error)
        || !checkChoice(
            longMap.value(QLatin1String("scale")), l + QStringLiteral("\"scale\""),
            {QStringLiteral("max_weight"), QStringLiteral("unit"), QStringLiteral("log")}, &error))
        return error;
    const QJsonObject steps = view.value(QLatin1String("steps")).toObject();
    const QString st = QStringLiteral("\"view\": \"steps\": ");
    if (!checkWhole(steps.value(QLatin1String("head")), st + QStringLiteral("\"head\""), 0,
                    heads - 1, &error))
        return error;
    for (const char *flag : {"vectors", "same_score_range"}) {
        const QJsonValue v = steps.value(QLatin1String(flag));
        if (!v.isUndefined() && !v.isBool())
            return st
                + QStringLiteral("\"%1\" must be true or false, got %2")
                      .arg(QLatin1String(flag), jsonText(v));
    }
    if (const QString tokens
        = checkTokensView(view.value(QLatin1String("tokens")).toObject(), heads, n);
        !tokens.isEmpty())
        return tokens;
    QString problem;
    if (const QJsonValue play = view.value(QLatin1String("play")); play.isObject())
        PlaySettings::fromJson(play.toObject(), PlaySettings(), &problem);
    if (!problem.isEmpty())
        return QStringLiteral("\"view\": ") + problem;
    if (const QJsonValue training = view.value(QLatin1String("training")); training.isObject())
        TrainingSettings::fromJson(training.toObject(), TrainingSettings(), &problem);
    if (!problem.isEmpty())
        return QStringLiteral("\"view\": ") + problem;
    return {};
}

/// Appends to `unknown` the keys of `o` not in `known`, each as its path: `block` (the
/// block's own path, "\"parameters\": ", or empty at the top level) and the key.
void collectUnknownKeys(const QJsonObject &o, const QStringList &known, const QString &block,
                        QStringList *unknown)
{
    for (auto it = o.begin(); it != o.end(); ++it)
        if (!known.contains(it.key()))
            unknown->append(QStringLiteral("%1\"%2\"").arg(block, it.key()));
}

} // namespace

QByteArray SessionFile::toJson(const SessionDocument &document)
{
    QJsonObject o = document.extra;
    o.insert(QStringLiteral("format"), QLatin1String(formatName));
    o.insert(QStringLiteral("version"), formatVersion);
    QJsonObject parameters = document.parametersExtra;
    const QJsonObject known = document.parameters.toJson();
    for (auto it = known.begin(); it != known.end(); ++it)
        parameters.insert(it.key(), it.value());
    o.insert(QStringLiteral("parameters"), parameters);
    o.insert(QStringLiteral("view"), document.view);
    o.insert(QStringLiteral("tensors"), document.tensors);
    if (!document.model.isEmpty())
        o.insert(QStringLiteral("model"), document.model);
    if (document.randomInputs)
        o.insert(QStringLiteral("random_inputs"), document.randomInputs->toJson());
    return QJsonDocument(o).toJson(QJsonDocument::Indented);
}

std::optional<SessionDocument> SessionFile::fromJson(const QByteArray &data, QString *error)
{
    auto fail = [error](const QString &message) -> std::optional<SessionDocument> {
        if (error)
            *error = message;
        return std::nullopt;
    };
    QJsonParseError parseError;
    const QJsonDocument json = QJsonDocument::fromJson(data, &parseError);
    if (parseError.error != QJsonParseError::NoError)
        return fail(QStringLiteral("not valid JSON (%1 at byte %2)")
                        .arg(parseError.errorString())
                        .arg(parseError.offset));
    if (!json.isObject())
        return fail(QStringLiteral("not an Attention Lab session (the JSON is not an object)"));
    const QJsonObject o = json.object();
    if (o.value(QLatin1String("format")).toString() != QLatin1String(formatName))
        return fail(QStringLiteral("not an Attention Lab session (\"format\" must be \"%1\")")
                        .arg(QLatin1String(formatName)));
    const QJsonValue versionValue = o.value(QLatin1String("version"));
    const double version = versionValue.toDouble(std::nan(""));
    if (!versionValue.isDouble() || version != std::floor(version) || version < 1)
        return fail(QStringLiteral("\"version\" must be a positive integer"));
    if (version > formatVersion)
        return fail(QStringLiteral("written by a newer Attention Lab (session format version %1; "
                                   "this version reads up to %2)")
                        .arg(version, 0, 'f', 0)
                        .arg(formatVersion));

    SessionDocument document;
    const QJsonValue parameters = o.value(QLatin1String("parameters"));
    if (!parameters.isObject())
        return fail(QStringLiteral("\"parameters\" is missing or not an object"));
    QString message;
    const auto p = SessionParameters::fromJson(parameters.toObject(), &message);
    if (!p)
        return fail(QStringLiteral("invalid parameters: %1").arg(message));
    document.parameters = *p;
    const QJsonObject knownParameters = p->toJson();
    const QJsonObject allParameters = parameters.toObject();
    for (auto it = allParameters.begin(); it != allParameters.end(); ++it) {
        if (!knownParameters.contains(it.key()))
            document.parametersExtra.insert(it.key(), it.value());
    }

    const QJsonValue view = o.value(QLatin1String("view"));
    if (view.isObject())
        document.view = view.toObject();
    else if (!view.isUndefined() && !view.isNull())
        return fail(QStringLiteral("\"view\" must be an object"));
    if (const QString invalid = checkView(document.view, p->heads, int(p->queryCount()));
        !invalid.isEmpty())
        return fail(QStringLiteral("invalid view state: %1").arg(invalid));

    const QJsonValue tensors = o.value(QLatin1String("tensors"));
    if (tensors.isObject()) {
        document.tensors = tensors.toObject();
        const QJsonValue file = document.tensors.value(QLatin1String("file"));
        if (!file.isUndefined() && (!file.isString() || file.toString().isEmpty()))
            return fail(QStringLiteral("\"tensors\": \"file\" must be a file path"));
        QString invalid;
        if (!checkWhole(document.tensors.value(QLatin1String("layer")),
                        QStringLiteral("\"tensors\": \"layer\""), 0,
                        std::numeric_limits<int>::max(), &invalid))
            return fail(invalid);
        if (!checkWhole(document.tensors.value(QLatin1String("batch")),
                        QStringLiteral("\"tensors\": \"batch\""), 0,
                        std::numeric_limits<int>::max(), &invalid))
            return fail(invalid);
    } else if (!tensors.isUndefined() && !tensors.isNull()) {
        return fail(QStringLiteral("\"tensors\" must be an object"));
    }

    const QJsonValue model = o.value(QLatin1String("model"));
    if (model.isObject()) {
        document.model = model.toObject();
        const QJsonValue folder = document.model.value(QLatin1String("folder"));
        if (!folder.isString() || folder.toString().isEmpty())
            return fail(QStringLiteral("\"model\": \"folder\" must be a folder path"));
        const QJsonValue text = document.model.value(QLatin1String("text"));
        if (!text.isUndefined() && !text.isString())
            return fail(QStringLiteral("\"model\": \"text\" must be a string"));
        QString invalid;
        if (!checkWhole(document.model.value(QLatin1String("layer")),
                        QStringLiteral("\"model\": \"layer\""), 0, std::numeric_limits<int>::max(),
                        &invalid))
            return fail(invalid);
    } else if (!model.isUndefined() && !model.isNull()) {
        return fail(QStringLiteral("\"model\" must be an object"));
    }

    const QJsonValue randomInputs = o.value(QLatin1String("random_inputs"));
    if (randomInputs.isObject()) {
        const auto r = SessionParameters::fromJson(randomInputs.toObject(), &message);
        if (!r)
            return fail(QStringLiteral("invalid \"random_inputs\": %1").arg(message));
        document.randomInputs = *r;
    } else if (!randomInputs.isUndefined() && !randomInputs.isNull()) {
        return fail(QStringLiteral("\"random_inputs\" must be an object"));
    }

    static const QStringList known
        = {QStringLiteral("format"),       QStringLiteral("version"), QStringLiteral("parameters"),
           QStringLiteral("view"),         QStringLiteral("tensors"), QStringLiteral("model"),
           QStringLiteral("random_inputs")};
    for (auto it = o.begin(); it != o.end(); ++it) {
        if (!known.contains(it.key()))
            document.extra.insert(it.key(), it.value());
    }
    // Keys of a newer version, or misspelt ones: read all the same, and named for the window to
    // report (a typo would otherwise look like a value that did not apply).
    static const QStringList viewKeys
        = {QStringLiteral("mode"),      QStringLiteral("tabs"),      QStringLiteral("heatmap"),
           QStringLiteral("transform"), QStringLiteral("row_strip"), QStringLiteral("compare"),
           QStringLiteral("tokens"),    QStringLiteral("long_map"),  QStringLiteral("steps"),
           QStringLiteral("training"),  QStringLiteral("play")};
    static const QStringList tensorsKeys
        = {QStringLiteral("file"), QStringLiteral("array"), QStringLiteral("mask_convention"),
           QStringLiteral("layer"), QStringLiteral("batch")};
    static const QStringList modelKeys
        = {QStringLiteral("folder"), QStringLiteral("text"), QStringLiteral("ids"),
           QStringLiteral("shown"), QStringLiteral("layer")};
    collectUnknownKeys(o, known, QString(), &document.unknownKeys);
    collectUnknownKeys(parameters.toObject(), SessionParameters::jsonKeys(),
                       QStringLiteral("\"parameters\": "), &document.unknownKeys);
    collectUnknownKeys(document.view, viewKeys, QStringLiteral("\"view\": "),
                       &document.unknownKeys);
    collectUnknownKeys(document.tensors, tensorsKeys, QStringLiteral("\"tensors\": "),
                       &document.unknownKeys);
    collectUnknownKeys(document.model, modelKeys, QStringLiteral("\"model\": "),
                       &document.unknownKeys);
    collectUnknownKeys(randomInputs.toObject(), SessionParameters::jsonKeys(),
                       QStringLiteral("\"random_inputs\": "), &document.unknownKeys);
    return document;
}

std::optional<SessionDocument> SessionFile::load(const QString &path, QString *error)
{
    auto fail = [&](const QString &message) -> std::optional<SessionDocument> {
        if (error)
            *error = QStringLiteral("%1: %2").arg(quotedPath(path), message);
        return std::nullopt;
    };
    const QFileInfo info(path);
    if (!info.exists())
        return fail(QStringLiteral("no such file"));
    if (info.isDir())
        return fail(QStringLiteral("is a folder, not a session file"));
    // A FIFO, socket or device would block the read or never end: only regular files are read.
    if (!info.isFile())
        return fail(QStringLiteral("is not a regular file (a pipe, socket or device), not a "
                                   "session file"));
    if (info.size() > maxFileBytes)
        return fail(QStringLiteral("too large for a session file (%1 bytes; at most %2)")
                        .arg(info.size())
                        .arg(maxFileBytes));
    QFile file(path);
    if (!file.open(QIODevice::ReadOnly))
        return fail(QStringLiteral("cannot be read (%1)").arg(file.errorString()));
    const QByteArray data = file.read(maxFileBytes + 1);
    if (file.error() != QFileDevice::NoError)
        return fail(QStringLiteral("cannot be read (%1)").arg(file.errorString()));
    QString message;
    auto document = fromJson(data, &message);
    if (!document)
        return fail(message);
    const QString tensorFile = document->tensors.value(QLatin1String("file")).toString();
    if (!tensorFile.isEmpty() && QFileInfo(tensorFile).isRelative())
        document->tensors.insert(QStringLiteral("file"),
                                 QDir::cleanPath(info.absoluteDir().filePath(tensorFile)));
    const QString modelFolder = document->model.value(QLatin1String("folder")).toString();
    if (!modelFolder.isEmpty() && QFileInfo(modelFolder).isRelative())
        document->model.insert(QStringLiteral("folder"),
                               QDir::cleanPath(info.absoluteDir().filePath(modelFolder)));
    return document;
}

bool SessionFile::save(const QString &path, const SessionDocument &document, QString *error)
{
    return writeAtomically(path, toJson(document), error);
}

bool SessionFile::writeAtomically(const QString &path, const QByteArray &data, QString *error,
                                  qint64 failAfterBytes)
{
    auto fail = [&](const QString &message) {
        if (error)
            *error = QStringLiteral("%1: %2").arg(quotedPath(path), message);
        return false;
    };
    if (path.isEmpty())
        return fail(QStringLiteral("no file name"));
    const QFileInfo info(path);
    if (!info.absoluteDir().exists())
        return fail(
            QStringLiteral("the folder %1 does not exist").arg(quotedPath(info.absolutePath())));
    if (info.isDir())
        return fail(QStringLiteral("is a folder"));
    QSaveFile file(path);
    // Never fall back to writing the target in place: that is what leaves half-written files.
    file.setDirectWriteFallback(false);
    if (!file.open(QIODevice::WriteOnly))
        return fail(QStringLiteral("cannot be written (%1)").arg(file.errorString()));
    if (failAfterBytes >= 0 && failAfterBytes < data.size()) {
        file.write(data.constData(), failAfterBytes);
        file.cancelWriting(); // what a crash or a full disk amounts to: commit() is refused
        file.commit();
        return fail(QStringLiteral("write failed after %1 of %2 bytes (simulated)")
                        .arg(failAfterBytes)
                        .arg(data.size()));
    }
    if (file.write(data) != data.size()) {
        const QString reason = file.errorString();
        file.cancelWriting();
        file.commit();
        return fail(QStringLiteral("write failed (%1)").arg(reason));
    }
    if (!file.commit())
        return fail(QStringLiteral("cannot be saved (%1)").arg(file.errorString()));
    return true;
}

QString SessionFile::withSuffix(const QString &path)
{
    if (path.isEmpty() || path.endsWith(QLatin1String(".json"), Qt::CaseInsensitive))
        return path;
    return path + QLatin1String(suffix);
}

} // namespace attn
