// The figures of E4 (heads split the dimension), E15 (what each head can see), E16 (heads
// that share keys) and E17 (an induction head forms).

#include "ui/charts/figurerecipes.h"

#include <QChartView>

#include <algorithm>
#include <cmath>
#include <vector>

namespace attn::expfig {

void buildE4(const ExperimentResult &r, FigureFrame &f)
{
    std::vector<const NamedMatrix *> heads;
    for (const NamedMatrix &m : r.matrices)
        if (q(m.name).contains(QLatin1String("head"), Qt::CaseInsensitive))
            heads.push_back(&m);
    if (heads.empty())
        heads = allMatrices(r);
    if (heads.empty())
        throw FigureUnavailable("the result has no per-head weight matrices");
    addHeatmaps(f, heads, 0);
    addScalarsFooter(f, r);
}

void buildE15(const ExperimentResult &r, FigureFrame &f)
{
    const Table &t = r.table;
    QStringList heads, slopeTexts;
    const auto slopes = values(t, requireColumn(t, {"alibi_slope"}));
    for (std::size_t i = 0; i < t.rowCount(); ++i) {
        heads << QString::number(i);
        slopeTexts << QStringLiteral("m<sub>%1</sub> = %2").arg(i).arg(formatValue(slopes[i], 3));
    }
    f.addFooterLine(QStringLiteral("ALiBi slopes: ") + slopeTexts.join(QStringLiteral(", ")));
    f.add(
        barChart(
            QStringLiteral("Reach: distance holding %1 of the weight")
                .arg(r.params.count("fraction") ? q(r.params.at("fraction")) + QStringLiteral(" ")
                                                : QString()),
            heads, QStringLiteral("head (ALiBi slope)"), QStringLiteral("distance"),
            {{QStringLiteral("ALiBi"), values(t, requireColumn(t, {"reach_alibi"})), kScaledColor},
             {QStringLiteral("no positions"), values(t, requireColumn(t, {"reach_no_positions"})),
              kReferenceColor}}),
        0, 0, 1, 2);
    f.add(barChart(QStringLiteral("Weight on the sink keys, rows past the window"), heads,
                   QStringLiteral("head"), QStringLiteral("weight mass"),
                   {{QStringLiteral("causal"), values(t, requireColumn(t, {"sink_mass_causal"})),
                     kReferenceColor},
                    {QStringLiteral("window"), values(t, requireColumn(t, {"sink_mass_window"})),
                     kUnscaledColor},
                    {QStringLiteral("window + sinks"),
                     values(t, requireColumn(t, {"sink_mass_window_sinks"})), kScaledColor}}),
          0, 2, 1, 2);
    addHeatmaps(f, allMatrices(r), 1);
    addScalarsFooter(f, r);
}

void buildE16(const ExperimentResult &r, FigureFrame &f)
{
    const Table &t = r.table;
    QStringList g;
    for (const QString &v : columnTexts(t, requireColumn(t, {"kv_heads"})))
        g << QStringLiteral("g = %1").arg(v);
    f.add(barChart(QStringLiteral("Parameters (no biases)"), g, QStringLiteral("kv heads"),
                   QStringLiteral("parameters"),
                   {{QStringLiteral("parameters"), values(t, requireColumn(t, {"parameters"})),
                     kScaledColor}},
                   true),
          0, 0);
    f.add(barChart(
              QStringLiteral("KV cache at %1 tokens")
                  .arg(r.params.count("cache_tokens") ? q(r.params.at("cache_tokens")) : QString()),
              g, QStringLiteral("kv heads"), QStringLiteral("MiB"),
              {{QStringLiteral("KV cache"), values(t, requireColumn(t, {"kv_cache_mib"})),
                kThirdColor}},
              true),
          0, 1);
    f.add(barChart(QStringLiteral("How far the weights move: mean |\u0394W|"), g,
                   QStringLiteral("kv heads"), QStringLiteral("mean |\u0394W| vs g = h"),
                   {{QStringLiteral("mean |\u0394W|"), values(t, requireColumn(t, {"mean_abs_dw"})),
                     kUnscaledColor}},
                   true),
          0, 2);
    addHeatmaps(f, allMatrices(r), 1);
    addScalarsFooter(f, r);
}

void buildE17(const ExperimentResult &r, FigureFrame &f)
{
    const Table &t = r.table;
    const std::vector<double> steps = values(t, requireColumn(t, {"step"}));
    const auto curve = [&](const char *column, const QString &name, const QColor &color) {
        return Curve {name,  steps,         values(t, requireColumn(t, {column})),
                      color, Qt::SolidLine, false};
    };
    // The loss on the held-out repeated half and the training loss; the two heads' scores and
    // the accuracy on one 0…1 axis: the phase change is where they move together.
    f.add(lineChart(QStringLiteral("Loss on the repeated half (nats)"), QStringLiteral("step"),
                    Scale::Linear, QStringLiteral("cross-entropy"), Scale::Linear,
                    {curve("loss", QStringLiteral("held-out"), kScaledColor),
                     curve("train_loss", QStringLiteral("training"), kReferenceColor)}),
          0, 0);
    f.add(lineChart(QStringLiteral("Best layer-1 induction head, best layer-0 previous-token "
                                   "head, accuracy"),
                    QStringLiteral("step"), Scale::Linear, QStringLiteral("score"), Scale::Linear,
                    {curve("induction_score", QStringLiteral("induction"), kUnscaledColor),
                     curve("previous_token_score", QStringLiteral("previous token"), kThirdColor),
                     curve("accuracy", QStringLiteral("accuracy"), kFourthColor)}),
          0, 1);
    const NamedMatrix *previous = findMatrix(r, {"previous_token_head_weights"});
    const NamedMatrix *induction = findMatrix(r, {"induction_head_weights"});
    if (previous && induction)
        addHeatmaps(f, {previous, induction}, 1);
    addScalarsFooter(f, r);
}

} // namespace attn::expfig
