// The figures of E1 (one head), E2 (why divide by √d_k), E3 (softmax collapse) and E13
// (does the scale matter for learning).

#include "ui/charts/figurerecipes.h"

#include <QChartView>

#include <algorithm>
#include <cmath>
#include <vector>

namespace attn::expfig {

void buildE1(const ExperimentResult &r, FigureFrame &f)
{
    const NamedMatrix *w = findMatrix(r, {"weights", "W"});
    if (!w && !r.matrices.empty())
        w = &r.matrices.front();
    if (!w)
        throw FigureUnavailable("the result has no weight matrix");
    HeatmapView::Style style;
    style.lo = 0;
    style.hi = std::max(HeatmapView::range({&w->values}).second, 1e-12);
    f.add(new HeatmapView(*w, style), 0, 0);
    addScalarsFooter(f, r);
}

void buildE2(const ExperimentResult &r, FigureFrame &f)
{
    const Table &t = r.table;
    const auto dk = values(t, requireColumn(t, {"d_k"}));
    const auto mwU = values(t, requireColumn(t, {"max_weight_unscaled"}));
    const auto mwS = values(t, requireColumn(t, {"max_weight_scaled"}));
    const auto jU = values(t, requireColumn(t, {"jacobian_norm_unscaled"}));
    const auto jS = values(t, requireColumn(t, {"jacobian_norm_scaled"}));
    const auto sd = values(t, requireColumn(t, {"score_std"}));
    const auto sq = values(t, requireColumn(t, {"sqrt_dk"}));
    const QString xTitle = QStringLiteral("d_k (log\u2082)");
    f.add(lineChart(QStringLiteral("Mean max softmax weight"), xTitle, Scale::Log2,
                    QStringLiteral("max weight"), Scale::Linear,
                    {{QStringLiteral("unscaled q\u00b7k"), dk, mwU, kUnscaledColor},
                     {QStringLiteral("scaled q\u00b7k/\u221ad_k"), dk, mwS, kScaledColor}}),
          0, 0);
    f.add(lineChart(QStringLiteral("Mean softmax Jacobian norm \u2016J\u2016<sub>F</sub>"), xTitle,
                    Scale::Log2, QStringLiteral("\u2016J\u2016<sub>F</sub>"), Scale::Linear,
                    {{QStringLiteral("unscaled"), dk, jU, kUnscaledColor},
                     {QStringLiteral("scaled"), dk, jS, kScaledColor}}),
          0, 1);
    f.add(lineChart(
              QStringLiteral("Raw score std tracks \u221ad_k"), QStringLiteral("\u221ad_k"),
              Scale::Linear, QStringLiteral("std of q\u00b7k"), Scale::Linear,
              {{QStringLiteral("measured std"), sq, sd, kScaledColor},
               {QStringLiteral("y = \u221ad_k"), sq, sq, kReferenceColor, Qt::DashLine, false}}),
          0, 2);
    addScalarsFooter(f, r);
}

void buildE3(const ExperimentResult &r, FigureFrame &f)
{
    const Table &t = r.table;
    const auto dk = values(t, requireColumn(t, {"d_k"}));
    const auto etU = values(t, requireColumn(t, {"effective_terms_unscaled"}));
    const auto etS = values(t, requireColumn(t, {"effective_terms_scaled"}));
    const auto mwU = values(t, requireColumn(t, {"max_weight_unscaled"}));
    const auto mwS = values(t, requireColumn(t, {"max_weight_scaled"}));
    const QString xTitle = QStringLiteral("d_k (log\u2082)");
    f.add(lineChart(QStringLiteral("Effective terms 1/\u03a3w\u00b2"), xTitle, Scale::Log2,
                    QStringLiteral("keys attended (log)"), Scale::Log10,
                    {{QStringLiteral("unscaled"), dk, etU, kUnscaledColor},
                     {QStringLiteral("scaled by 1/\u221ad_k"), dk, etS, kScaledColor}}),
          0, 0);
    f.add(lineChart(QStringLiteral("Max softmax weight"), xTitle, Scale::Log2,
                    QStringLiteral("max weight"), Scale::Linear,
                    {{QStringLiteral("unscaled"), dk, mwU, kUnscaledColor},
                     {QStringLiteral("scaled by 1/\u221ad_k"), dk, mwS, kScaledColor}}),
          0, 1);
    addScalarsFooter(f, r);
}

void buildE13(const ExperimentResult &r, FigureFrame &f)
{
    const Table &t = r.table;
    const int initCol = requireColumn(t, {"init"});
    const int dkCol = requireColumn(t, {"d_k"});
    const int scaleCol = requireColumn(t, {"scale"});
    const NamedMatrix *loss = findMatrix(r, {"relative_loss"});
    const NamedMatrix *grad = findMatrix(r, {"grad_norm_qk"});
    if (!loss || !grad || loss->values.rows() != Eigen::Index(t.rowCount()))
        throw FigureUnavailable("the result lacks the per-step relative_loss / grad_norm_qk");
    // One column of panels per d_k: the training loss (10-step running mean, relative to the
    // constant prediction) on top, the gradient norm reaching W_Q and W_K below. Colour = scale,
    // solid = xavier, dashed = unit-variance q and k.
    QStringList dks;
    for (std::size_t i = 0; i < t.rowCount(); ++i)
        if (!dks.contains(cellText(t, i, dkCol)))
            dks << cellText(t, i, dkCol);
    const QStringList scales
        = {QStringLiteral("1/sqrt(d_k)"), QStringLiteral("none"), QStringLiteral("1/d_k")};
    const QColor colors[] = {kScaledColor, kUnscaledColor, kThirdColor};
    // 10-step running mean of one row; `floor` keeps log axes away from 0.
    const auto smoothed = [](const MatrixD &m, Eigen::Index row, double floor) {
        std::vector<double> y;
        double window = 0;
        for (Eigen::Index s = 0; s < m.cols(); ++s) {
            window += m(row, s);
            if (s >= 10)
                window -= m(row, s - 10);
            y.push_back(std::max(floor, window / double(std::min<Eigen::Index>(s + 1, 10))));
        }
        return y;
    };
    // Rows: loss and gradient norm for xavier, then for unit-variance q and k; one column per
    // d_k; one curve per scale choice.
    const QStringList inits = {QStringLiteral("xavier"), QStringLiteral("unit_qk")};
    const QString scaleNames[] = {QStringLiteral("1/\u221ad<sub>k</sub>"), QStringLiteral("none"),
                                  QStringLiteral("1/d<sub>k</sub>")};
    for (int in = 0; in < inits.size(); ++in) {
        const QString initName
            = in == 0 ? QStringLiteral("xavier init") : QStringLiteral("unit-variance q, k");
        for (int c = 0; c < dks.size(); ++c) {
            std::vector<Curve> lossCurves, gradCurves;
            for (std::size_t i = 0; i < t.rowCount(); ++i) {
                if (cellText(t, i, dkCol) != dks[c] || cellText(t, i, initCol) != inits[in])
                    continue;
                const int k = std::max(0, int(scales.indexOf(cellText(t, i, scaleCol))));
                std::vector<double> x(std::size_t(loss->values.cols()));
                for (std::size_t s = 0; s < x.size(); ++s)
                    x[s] = double(s + 1);
                lossCurves.push_back({scaleNames[k], x,
                                      smoothed(loss->values, Eigen::Index(i), 1e-6), colors[k],
                                      Qt::SolidLine, false});
                gradCurves.push_back({scaleNames[k], x,
                                      smoothed(grad->values, Eigen::Index(i), 1e-12), colors[k],
                                      Qt::SolidLine, false});
            }
            if (lossCurves.empty())
                continue;
            f.add(lineChart(
                      QStringLiteral("%1, d<sub>k</sub> = %2: loss ratio").arg(initName, dks[c]),
                      QStringLiteral("step"), Scale::Linear, QStringLiteral("loss ratio"),
                      Scale::Log10, lossCurves),
                  2 * in, c);
            f.add(lineChart(
                      QStringLiteral("%1, d<sub>k</sub> = %2: \u2016\u2202L/\u2202(W<sub>Q</sub>, "
                                     "W<sub>K</sub>)\u2016")
                          .arg(initName, dks[c]),
                      QStringLiteral("step"), Scale::Linear, QStringLiteral("norm"), Scale::Log10,
                      gradCurves),
                  2 * in + 1, c);
        }
    }
    addScalarsFooter(f, r);
}

} // namespace attn::expfig
