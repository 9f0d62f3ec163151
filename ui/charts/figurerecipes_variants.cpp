// The figures of E18 (a learned sink against the first-token sink), E19 (differential attention
// cancels common-mode noise) and E20 (multi-head latent attention).

#include "ui/charts/figurerecipes.h"

#include <QChartView>

#include <algorithm>
#include <cmath>
#include <vector>

namespace attn::expfig {

namespace {

/// One curve per value of `groupColumn` (in the table's order): x = xColumn, y = yColumn of the
/// rows holding that value, named "<prefix> <value>".
std::vector<Curve> curvesByGroup(const Table &t, int groupColumn, int xColumn, int yColumn,
                                 const QString &prefix, Qt::PenStyle style, int firstColor = 0)
{
    const std::vector<double> g = values(t, groupColumn), x = values(t, xColumn),
                              y = values(t, yColumn);
    std::vector<double> order;
    for (const double v : g)
        if (std::find(order.begin(), order.end(), v) == order.end())
            order.push_back(v);
    std::vector<Curve> curves;
    for (std::size_t k = 0; k < order.size(); ++k) {
        Curve c;
        c.name = QStringLiteral("%1 %2").arg(prefix, formatValue(order[k], 4));
        c.color = seriesColor(firstColor + int(k));
        c.style = style;
        for (std::size_t r = 0; r < g.size(); ++r)
            if (g[r] == order[k]) {
                c.x.push_back(x[r]);
                c.y.push_back(y[r]);
            }
        curves.push_back(std::move(c));
    }
    return curves;
}

} // namespace

void buildE18(const ExperimentResult &r, FigureFrame &f)
{
    const Table &t = r.table;
    const int b = requireColumn(t, {"sink_logit"});
    const int spread = requireColumn(t, {"spread"});
    const QString sigma = QStringLiteral("\u03c3 =");
    // One curve per spread σ in each chart, the same colour for the same σ.
    f.add(lineChart(QStringLiteral("Learned sink: mass to no key"), QStringLiteral("sink logit b"),
                    Scale::Linear, QStringLiteral("mean sink mass per row"), Scale::Linear,
                    curvesByGroup(t, spread, b, requireColumn(t, {"sink_mass_mean"}), sigma,
                                  Qt::SolidLine)),
          0, 0, 1, 2);
    f.add(lineChart(QStringLiteral("First-token sink: weight on key 0"),
                    QStringLiteral("sink logit b (added to key 0's scores)"), Scale::Linear,
                    QStringLiteral("mean weight on key 0"), Scale::Linear,
                    curvesByGroup(t, spread, b, requireColumn(t, {"first_token_mass_mean"}), sigma,
                                  Qt::DashLine)),
          0, 2, 1, 2);
    f.add(lineChart(QStringLiteral("Key 0's value in the output (learned sink: 0)"),
                    QStringLiteral("sink logit b"), Scale::Linear,
                    QStringLiteral("mean |w\u1d62\u2080 v\u2080|"), Scale::Linear,
                    curvesByGroup(t, spread, b, requireColumn(t, {"key0_output_norm_mean"}), sigma,
                                  Qt::DashLine)),
          0, 4, 1, 2);
    const NamedMatrix *learned = findMatrix(r, {"learned_sink_weights"});
    const NamedMatrix *first = findMatrix(r, {"first_token_weights"});
    if (!learned || !first)
        throw FigureUnavailable("the result lacks learned_sink_weights or first_token_weights");
    // The two heads' weights on one colour range, each over half the width.
    const auto [lo, hi] = HeatmapView::range({&learned->values, &first->values});
    HeatmapView::Style style;
    style.lo = std::min(0.0, lo);
    style.hi = hi;
    style.columnTitle = QStringLiteral("column 0 = sink, then key j");
    f.add(new HeatmapView(*learned, style), 1, 0, 1, 3);
    f.add(new HeatmapView(*first, style), 1, 3, 1, 3);
    addScalarsFooter(f, r);
}

void buildE19(const ExperimentResult &r, FigureFrame &f)
{
    const Table &t = r.table;
    const std::vector<double> lambda = values(t, requireColumn(t, {"lambda"}));
    const auto curve = [&](const char *column, const QString &name, const QColor &color) {
        return Curve {name, lambda, values(t, requireColumn(t, {column})), color};
    };
    f.add(lineChart(QStringLiteral("Relevant key against distractors"), QStringLiteral("\u03bb"),
                    Scale::Linear, QStringLiteral("signal-to-noise ratio"), Scale::Linear,
                    {curve("snr", QStringLiteral("weight on the planted key / mean |distractor|"),
                           kScaledColor)}),
          0, 0);
    // Log scale: the distractors' mean |weight| halves while the planted key's barely moves.
    f.add(lineChart(
              QStringLiteral("Weights of A\u2081 \u2212 \u03bbA\u2082"), QStringLiteral("\u03bb"),
              Scale::Linear, QStringLiteral("mean per row"), Scale::Log10,
              {curve("relevant_weight_mean", QStringLiteral("planted key"), kScaledColor),
               curve("distractor_abs_mean", QStringLiteral("mean |distractor|"), kUnscaledColor)}),
          0, 1);
    f.add(lineChart(QStringLiteral("Entropy of |A| / \u03a3|A|"), QStringLiteral("\u03bb"),
                    Scale::Linear, QStringLiteral("nats"), Scale::Linear,
                    {curve("abs_entropy_mean", QStringLiteral("A\u2081 \u2212 \u03bbA\u2082"),
                           kFourthColor)}),
          0, 2);
    const NamedMatrix *a1 = findMatrix(r, {"a1"});
    const NamedMatrix *a2 = findMatrix(r, {"a2"});
    const NamedMatrix *diff = findMatrix(r, {"differential"});
    if (!a1 || !a2 || !diff)
        throw FigureUnavailable("the result lacks the matrices a1, a2 or differential");
    // A₁ and A₂ share the weights' scale; A₁ − λA₂ is signed and passed as it is.
    addHeatmaps(f, {a1, a2, diff}, 1);
    // The maps are wide (n_q × n_k) and keep square cells: the charts take the spare height.
    f.setRowStretch(0, 2);
    f.setRowStretch(1, 1);
    addScalarsFooter(f, r);
}

void buildE20(const ExperimentResult &r, FigureFrame &f)
{
    const Table &t = r.table;
    const int rope = requireColumn(t, {"rope_dim"});
    const QStringList dims = columnTexts(t, rope);
    const QString groups = r.params.count("gqa_groups")
        ? QStringLiteral("GQA, g = %1").arg(q(r.params.at("gqa_groups")))
        : QStringLiteral("GQA");
    f.add(barChart(QStringLiteral("Cached numbers per token and layer"), dims,
                   QStringLiteral("RoPE width d_r"), QStringLiteral("numbers"),
                   {{QStringLiteral("MLA"), values(t, requireColumn(t, {"mla_cache_values"})),
                     kScaledColor},
                    {groups, values(t, requireColumn(t, {"gqa_cache_values"})), kThirdColor},
                    {QStringLiteral("MHA"), values(t, requireColumn(t, {"mha_cache_values"})),
                     kReferenceColor}}),
          0, 0);
    f.add(barChart(QStringLiteral("Heads alike: mean correlation"), dims,
                   QStringLiteral("RoPE width d_r"), QStringLiteral("correlation"),
                   {{QStringLiteral("with RoPE part"),
                     values(t, requireColumn(t, {"head_correlation_rope"})), kScaledColor},
                    {QStringLiteral("without"),
                     values(t, requireColumn(t, {"head_correlation_no_rope"})), kReferenceColor}}),
          0, 1);
    const NamedMatrix *offsets = findMatrix(r, {"weight_by_offset"});
    if (!offsets)
        throw FigureUnavailable("the result has no weight_by_offset matrix");
    const std::vector<double> d = values(t, rope);
    std::vector<Curve> curves;
    for (Index row = 0; row < offsets->values.rows(); ++row) {
        Curve c;
        c.name = row == 0
            ? QStringLiteral("no RoPE part")
            : QStringLiteral("d_r = %1")
                  .arg(std::size_t(row - 1) < d.size() ? formatValue(d[row - 1]) : QString());
        c.color = row == 0 ? kReferenceColor : seriesColor(int(row - 1));
        c.style = row == 0 ? Qt::DashLine : Qt::SolidLine;
        c.markers = false;
        for (Index o = 0; o < offsets->values.cols(); ++o) {
            c.x.push_back(double(o));
            c.y.push_back(offsets->values(row, o));
        }
        curves.push_back(std::move(c));
    }
    f.add(lineChart(QStringLiteral("Mean weight by offset"), QStringLiteral("offset i \u2212 j"),
                    Scale::Linear, QStringLiteral("mean weight"), Scale::Linear, curves),
          0, 2, 1, 2);
    std::vector<const NamedMatrix *> heads;
    for (const NamedMatrix &m : r.matrices)
        if (q(m.name).startsWith(QLatin1String("head")))
            heads.push_back(&m);
    if (heads.empty())
        throw FigureUnavailable("the result has no per-head weight matrices");
    // Heads with the RoPE part in one row, the same heads without it below, one colour range.
    const auto [lo, hi] = HeatmapView::range([&] {
        std::vector<const MatrixD *> ms;
        for (const NamedMatrix *m : heads)
            ms.push_back(&m->values);
        return ms;
    }());
    HeatmapView::Style style;
    style.lo = std::min(0.0, lo);
    style.hi = hi;
    const int perRow = int(std::max<std::size_t>(4, (heads.size() + 1) / 2));
    for (std::size_t i = 0; i < heads.size(); ++i)
        f.add(new HeatmapView(*heads[i], style), 1 + int(i) / perRow, int(i) % perRow);
    f.setRowStretch(0, 1);
    f.setRowStretch(1, 1);
    f.setRowStretch(2, 1);
    addScalarsFooter(f, r);
}

} // namespace attn::expfig
