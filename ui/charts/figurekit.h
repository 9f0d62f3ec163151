#pragma once
// The figure kit of the experiment figures (experimentfigure.h): what every experiment's recipe
// draws with. Colours (matplotlib's maps for heatmaps, Okabe–Ito series), table access (columns
// and matrices picked by name, defensively), the heatmap panel (HeatmapView, figureheatmap.cpp),
// line and bar charts (Qt Charts, each series fed in one replace()) and the figure frame (a
// white frame with a header, a grid of panels and a footer). The recipes, one per experiment,
// are declared in figurerecipes.h.

#include "core/experiments/experiments.h"

#include <QColor>
#include <QImage>
#include <QSize>
#include <QString>
#include <QStringList>
#include <QWidget>

#include <initializer_list>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

class QChartView;
class QGridLayout;
class QLabel;

namespace attn {

struct ExperimentHeatmap;

namespace expfig {

// ---- colours ----

/// Heatmap colours from ui/render/colormap.h (matplotlib's tables): viridis for weights, RdBu_r
/// for signed differences (t = 0.5 is zero). NaN / ±Inf cells are drawn red instead.
QColor viridis(double t);
QColor diverging(double t);

inline const QColor kNanColor(214, 0, 0); // NaN / ±Inf cells and labels
// Series colours: Okabe–Ito (readable for colour-blind viewers), as the main view's charts.
inline const QColor kUnscaledColor(213, 94,
                                   0); // vermillion: without 1/√d_k, without mask, pitfall …
inline const QColor kScaledColor(0, 114, 178); // blue: with 1/√d_k, with mask, correct …
inline const QColor kThirdColor(0, 158, 115); // bluish green
inline const QColor kFourthColor(230, 159, 0); // orange
inline const QColor kReferenceColor(127, 127, 127);

/// The i-th series colour (cycling through six).
QColor seriesColor(int i);

/// "NaN", "inf", "-inf" or the number with `precision` significant digits.
QString formatValue(double v, int precision = 3);
/// "10⁻¹⁶" for −16.
QString powerOfTen(int e);

/// Qt Charts' value axes cannot label ranges near rounding level (~1e-16); such data is drawn
/// in units of 10^e and the axis title says so.
struct AxisUnit
{
    double factor = 1;
    QString suffix;
};

/// The unit for data whose largest magnitude is `maxAbs` (none at 1e-5 and above).
AxisUnit unitFor(double maxAbs);

/// Thrown by a figure builder when the result lacks what the figure needs.
class FigureUnavailable : public std::runtime_error
{
public:
    using std::runtime_error::runtime_error;
};

// ---- table access: columns picked by name, defensively ----

QString q(const std::string &s);
/// Index of the first column whose name equals one of `names` (case-insensitive), −1 if none.
int findColumn(const Table &t, std::initializer_list<const char *> names);
/// Index of the first column (not in `exclude`) whose name contains every part, −1 if none.
int findColumnContaining(const Table &t, std::initializer_list<const char *> parts,
                         const std::vector<int> &exclude = {});
/// findColumn(), or FigureUnavailable naming the first name.
int requireColumn(const Table &t, std::initializer_list<const char *> names);
bool isNumericColumn(const Table &t, int col);
/// Numbers of a column (NaN for text cells).
std::vector<double> values(const Table &t, int col);
QString cellText(const Table &t, std::size_t row, int col);
QStringList columnTexts(const Table &t, int col);
/// Column name made readable: "change_no_mask" → "change no mask".
QString pretty(const std::string &column);
/// The first matrix named one of `names` (case-insensitive), nullptr if none.
const NamedMatrix *findMatrix(const ExperimentResult &r, std::initializer_list<const char *> names);
/// A matrix's caption without the leading experiment id ("E10 right convention" → "right
/// convention"): the figure's header already names the experiment.
QString panelTitle(const NamedMatrix &m);
/// The x column for per-position / per-index tables: a named one, else the first numeric one.
int indexColumn(const Table &t, std::initializer_list<const char *> names);

// ---- HeatmapView: one matrix as coloured cells with a colour bar (NaN cells red, "NaN") ----

class HeatmapView : public QWidget
{
public:
    struct Style
    {
        double lo = 0, hi = 1; ///< colour range (values outside are clamped)
        bool divergent = false; ///< blue–white–red around 0 instead of viridis
        QString rowTitle = QStringLiteral("query i");
        QString columnTitle = QStringLiteral("key j");
    };

    HeatmapView(const NamedMatrix &m, const Style &style, QWidget *parent = nullptr);

    /// Finite range of a set of matrices (0…1 when none is finite).
    static std::pair<double, double> range(const std::vector<const MatrixD *> &ms);

    QSize sizeHint() const override { return {340, 300}; }

    /// What the heatmap plots (experimentHeatmaps()).
    ExperimentHeatmap content() const;

protected:
    void paintEvent(QPaintEvent *) override;

private:
    QString cellLabel(double v) const;

    MatrixD m_values;
    QString m_title;
    Style m_style;
    QImage m_cells; ///< one pixel per cell
};

// ---- charts ----

enum class Scale { Linear, Log2, Log10 };

struct Curve
{
    QString name;
    std::vector<double> x, y;
    QColor color;
    Qt::PenStyle style = Qt::SolidLine;
    bool markers = true;
};

struct BarGroup
{
    QString name;
    std::vector<double> values;
    QColor color;
};

/// A line chart; points with non-finite values (or ≤ 0 on a log axis) are left out.
QChartView *lineChart(const QString &title, const QString &xTitle, Scale xs, const QString &yTitle,
                      Scale ys, const std::vector<Curve> &curves);
/// Grouped bars; NaN/Inf values are drawn as 0 and named in red under the chart's title.
QChartView *barChart(const QString &title, const QStringList &categories, const QString &xTitle,
                     const QString &yTitle, const std::vector<BarGroup> &groups,
                     bool labels = false);

// ---- the figure: a white frame with a header, a grid of panels and a footer ----

class FigureFrame : public QWidget
{
public:
    explicit FigureFrame(const ExperimentResult &result, QWidget *parent = nullptr);

    /// Adds a panel to the grid; rows and columns share the space evenly unless
    /// setRowStretch() says otherwise.
    void add(QWidget *panel, int row, int col, int rowSpan = 1, int colSpan = 1);
    void setRowStretch(int row, int stretch);
    int panelCount() const { return m_panels; }
    /// Adds a line (rich text) above the parameters in the footer.
    void addFooterLine(const QString &html);

private:
    void updateFooter();

    QLabel *m_header = nullptr;
    QLabel *m_footer = nullptr;
    QGridLayout *m_grid = nullptr;
    QString m_params;
    QStringList m_lines;
    int m_panels = 0;
};

// ---- helpers shared by the recipes ----

/// Heatmaps of the given matrices in a row (or a near-square grid when many), sharing the
/// colour range unless `ownRange`; matrices whose name contains "diff" use the signed map.
void addHeatmaps(FigureFrame &f, const std::vector<const NamedMatrix *> &ms, int firstRow,
                 bool ownRange = false);
/// Every matrix of the result, in order.
std::vector<const NamedMatrix *> allMatrices(const ExperimentResult &r);
/// The result's scalars as a footer line (non-finite ones in red).
void addScalarsFooter(FigureFrame &f, const ExperimentResult &r);

} // namespace expfig
} // namespace attn
