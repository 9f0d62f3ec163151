// The figures of E5 (order is ignored until positions are added), E6 (a shift is a rotation),
// E7 (the causal mask blocks the future) and E14 (RoPE sees offsets only).

#include "ui/charts/figurerecipes.h"

#include <QChartView>

#include <algorithm>
#include <cmath>
#include <vector>

namespace attn::expfig {

void buildE5(const ExperimentResult &r, FigureFrame &f)
{
    const Table &t = r.table;
    const int x = indexColumn(t, {"position", "pos"});
    int without = findColumn(t, {"diff_no_positions"});
    if (without < 0)
        without = findColumnContaining(t, {"diff", "no"});
    int with = findColumn(t, {"diff_with_positions"});
    if (with < 0)
        with = findColumnContaining(t, {"diff", "with"}, {without});
    if (x < 0 || without < 0 || with < 0)
        throw FigureUnavailable("the table lacks position, diff_no_positions or "
                                "diff_with_positions");
    // Two charts with their own scales: rounding level (~1e-16) next to order one.
    const QStringList positions = columnTexts(t, x);
    f.add(barChart(QStringLiteral("Without positions: f(Px) \u2212 Pf(x) is rounding"), positions,
                   QStringLiteral("position"), QStringLiteral("max |difference|"),
                   {{QStringLiteral("no positional encoding"), values(t, without), kScaledColor}}),
          0, 0);
    f.add(barChart(QStringLiteral("With sinusoidal positions added: order matters"), positions,
                   QStringLiteral("position"), QStringLiteral("max |difference|"),
                   {{QStringLiteral("sinusoidal encoding"), values(t, with), kUnscaledColor}}),
          0, 1);
    addScalarsFooter(f, r);
}

void buildE6(const ExperimentResult &r, FigureFrame &f)
{
    const Table &t = r.table;
    const int x = indexColumn(t, {"pair", "i", "frequency_index", "index"});
    int err = findColumn(t, {"max_error"});
    if (err < 0)
        err = findColumnContaining(t, {"err"}, {x});
    if (x < 0 || err < 0 || !isNumericColumn(t, err))
        throw FigureUnavailable("the table lacks pair or max_error");
    const auto e = values(t, err);
    QString k;
    auto offset = r.params.find("offset");
    if (offset == r.params.end())
        offset = r.params.find("k");
    if (offset != r.params.end())
        k = QStringLiteral(" (offset k = %1)").arg(q(offset->second));
    f.add(lineChart(QStringLiteral("Rotation error per frequency \u03c9<sub>i</sub> = "
                                   "10000<sup>\u22122i/d</sup>%1")
                        .arg(k),
                    QStringLiteral("frequency pair i"), Scale::Linear,
                    QStringLiteral("max |R(\u03c9\u1d62k)\u00b7PE[pos] \u2212 PE[pos+k]|"),
                    Scale::Linear,
                    {{QStringLiteral("max error over positions"), values(t, x), e, kScaledColor}}),
          0, 0);
    addScalarsFooter(f, r);
}

void buildE7(const ExperimentResult &r, FigureFrame &f)
{
    const Table &t = r.table;
    const int x = requireColumn(t, {"position"});
    const auto noMask = values(t, requireColumn(t, {"change_no_mask"}));
    const auto causal = values(t, requireColumn(t, {"change_causal"}));
    f.add(barChart(QStringLiteral("Largest output change per position after replacing the last "
                                  "inputs"),
                   columnTexts(t, x), QStringLiteral("position"),
                   QStringLiteral("max |\u0394 output|"),
                   {{QStringLiteral("no mask"), noMask, kUnscaledColor},
                    {QStringLiteral("causal mask"), causal, kScaledColor}}),
          0, 0);
    QStringList exactZero;
    for (std::size_t i = 0; i < causal.size(); ++i)
        if (causal[i] == 0.0)
            exactZero << cellText(t, i, x);
    if (!exactZero.isEmpty())
        f.addFooterLine(QStringLiteral("with the causal mask the change is exactly 0.0 at "
                                       "positions %1")
                            .arg(exactZero.join(QStringLiteral(", "))));
    addScalarsFooter(f, r);
}

void buildE14(const ExperimentResult &r, FigureFrame &f)
{
    const Table &t = r.table;
    const QStringList shifts = columnTexts(t, requireColumn(t, {"shift"}));
    f.add(barChart(QStringLiteral("RoPE: worst |score(m, n) \u2212 score(m+t, n+t)|"), shifts,
                   QStringLiteral("shift t"), QStringLiteral("worst |difference|"),
                   {{QStringLiteral("RoPE"), values(t, requireColumn(t, {"rope_worst_diff"})),
                     kScaledColor}}),
          0, 0);
    f.add(barChart(QStringLiteral("Sinusoidal added to q, k: the score moves"), shifts,
                   QStringLiteral("shift t"), QStringLiteral("worst |difference|"),
                   {{QStringLiteral("sinusoidal"),
                     values(t, requireColumn(t, {"sinusoidal_worst_diff"})), kUnscaledColor}}),
          0, 1);
    const NamedMatrix *decay = findMatrix(r, {"score_decay"});
    if (!decay)
        throw FigureUnavailable("the result has no score_decay matrix");
    QStringList bases
        = q(r.params.count("bases") ? r.params.at("bases") : std::string()).split(QLatin1Char(','));
    std::vector<Curve> curves;
    for (Index b = 0; b < decay->values.rows(); ++b) {
        Curve c;
        c.name = QStringLiteral("base %1").arg(b < bases.size() ? bases[int(b)] : QString());
        for (Index d = 0; d < decay->values.cols(); ++d) {
            c.x.push_back(double(d));
            c.y.push_back(decay->values(b, d));
        }
        c.color = seriesColor(int(b));
        c.markers = false;
        curves.push_back(std::move(c));
    }
    f.add(lineChart(QStringLiteral("Score of q = k = 1 against distance"),
                    QStringLiteral("distance n \u2212 m"), Scale::Linear,
                    QStringLiteral("score(0, \u0394) / score(0, 0)"), Scale::Linear, curves),
          0, 2);
    addScalarsFooter(f, r);
}

} // namespace attn::expfig
