#include "ui/charts/experimentfigure.h"

#include "ui/render/colormap.h"
#include "ui/render/figurefile.h"
#include "ui/render/tileimage.h"

#include <QApplication>
#include <QBarCategoryAxis>
#include <QBarSeries>
#include <QBarSet>
#include <QBuffer>
#include <QChart>
#include <QChartView>
#include <QFileInfo>
#include <QGridLayout>
#include <QImage>
#include <QLabel>
#include <QLegendMarker>
#include <QLineSeries>
#include <QLogValueAxis>
#include <QPaintEvent>
#include <QPainter>
#include <QRegularExpression>
#include <QSvgGenerator>
#include <QVBoxLayout>
#include <QValueAxis>

#include <algorithm>
#include <cmath>
#include <functional>
#include <limits>
#include <map>
#include <memory>
#include <set>
#include <stdexcept>

namespace attn {
namespace {

// ---------------------------------------------------------------------------------------------
// Colours
// ---------------------------------------------------------------------------------------------

// Heatmap colours from ui/render/colormap.h (matplotlib's tables): viridis for weights, RdBu_r for
// signed differences (t = 0.5 is zero). NaN / ±Inf cells are drawn red instead.
QColor viridis(double t)
{
    static const Colormap map(ColormapId::Viridis);
    return QColor(map.map(std::isnan(t) ? 0.0 : t));
}

QColor diverging(double t)
{
    static const Colormap map(ColormapId::RdBu);
    return QColor(map.map(std::isnan(t) ? 0.5 : t));
}

const QColor kNanColor(214, 0, 0); // NaN / ±Inf cells and labels
// Series colours: Okabe–Ito (readable for colour-blind viewers), as the main view's charts.
const QColor kUnscaledColor(213, 94, 0); // vermillion: without 1/√d_k, without mask, pitfall …
const QColor kScaledColor(0, 114, 178); // blue: with 1/√d_k, with mask, correct …
const QColor kThirdColor(0, 158, 115); // bluish green
const QColor kFourthColor(230, 159, 0); // orange
const QColor kReferenceColor(127, 127, 127);

QColor seriesColor(int i)
{
    static const QColor colors[] = {kScaledColor, kUnscaledColor,       kThirdColor,
                                    kFourthColor, QColor(86, 180, 233), QColor(204, 121, 167)};
    return colors[std::size_t(i) % std::size(colors)];
}

QString formatValue(double v, int precision = 3)
{
    if (std::isnan(v))
        return QStringLiteral("NaN");
    if (std::isinf(v))
        return v > 0 ? QStringLiteral("inf") : QStringLiteral("-inf");
    return QString::number(v, 'g', precision);
}

/// "10⁻¹⁶" for −16.
QString powerOfTen(int e)
{
    static const QChar digits[] = {u'\u2070', u'\u00b9', u'\u00b2', u'\u00b3', u'\u2074',
                                   u'\u2075', u'\u2076', u'\u2077', u'\u2078', u'\u2079'};
    QString sup;
    for (const QChar c : QString::number(std::abs(e)))
        sup += digits[c.digitValue()];
    return QStringLiteral("10") + (e < 0 ? QStringLiteral("\u207b") : QString()) + sup;
}

/// Qt Charts' value axes cannot label ranges near rounding level (~1e-16); such data is drawn
/// in units of 10^e and the axis title says so.
struct AxisUnit
{
    double factor = 1;
    QString suffix;
};

AxisUnit unitFor(double maxAbs)
{
    if (!(maxAbs > 0) || maxAbs >= 1e-5 || !std::isfinite(maxAbs))
        return {};
    const int e = int(std::floor(std::log10(maxAbs)));
    return {std::pow(10.0, -e), QStringLiteral(" (\u00d7%1)").arg(powerOfTen(e))};
}

/// Thrown by a figure builder when the result lacks what the figure needs.
class FigureUnavailable : public std::runtime_error
{
public:
    using std::runtime_error::runtime_error;
};

// ---------------------------------------------------------------------------------------------
// Table access: columns picked by name, defensively
// ---------------------------------------------------------------------------------------------

QString q(const std::string &s)
{
    return QString::fromStdString(s);
}

/// Index of the first column whose name equals one of `names` (case-insensitive), −1 if none.
int findColumn(const Table &t, std::initializer_list<const char *> names)
{
    for (const char *name : names)
        for (std::size_t c = 0; c < t.columnCount(); ++c)
            if (q(t.columns()[c]).compare(QLatin1String(name), Qt::CaseInsensitive) == 0)
                return int(c);
    return -1;
}

/// Index of the first column (not in `exclude`) whose name contains every part, −1 if none.
int findColumnContaining(const Table &t, std::initializer_list<const char *> parts,
                         const std::vector<int> &exclude = {})
{
    for (std::size_t c = 0; c < t.columnCount(); ++c) {
        if (std::find(exclude.begin(), exclude.end(), int(c)) != exclude.end())
            continue;
        const QString name = q(t.columns()[c]);
        bool all = true;
        for (const char *part : parts)
            all = all && name.contains(QLatin1String(part), Qt::CaseInsensitive);
        if (all)
            return int(c);
    }
    return -1;
}

int requireColumn(const Table &t, std::initializer_list<const char *> names)
{
    const int c = findColumn(t, names);
    if (c < 0)
        throw FigureUnavailable("the table has no column " + std::string(*names.begin()));
    return c;
}

bool isNumericColumn(const Table &t, int col)
{
    if (col < 0 || t.rowCount() == 0)
        return false;
    for (std::size_t r = 0; r < t.rowCount(); ++r)
        if (std::holds_alternative<std::string>(t.cell(r, std::size_t(col))))
            return false;
    return true;
}

/// Numbers of a column (NaN for text cells).
std::vector<double> values(const Table &t, int col)
{
    std::vector<double> v(t.rowCount(), std::numeric_limits<double>::quiet_NaN());
    for (std::size_t r = 0; r < t.rowCount(); ++r) {
        const Table::Cell &cell = t.cell(r, std::size_t(col));
        if (const double *d = std::get_if<double>(&cell))
            v[r] = *d;
        else if (const std::int64_t *i = std::get_if<std::int64_t>(&cell))
            v[r] = double(*i);
    }
    return v;
}

QString cellText(const Table &t, std::size_t row, int col)
{
    const Table::Cell &cell = t.cell(row, std::size_t(col));
    if (const double *d = std::get_if<double>(&cell))
        return formatValue(*d, 6);
    return q(Table::formatCell(cell));
}

QStringList columnTexts(const Table &t, int col)
{
    QStringList s;
    for (std::size_t r = 0; r < t.rowCount(); ++r)
        s << cellText(t, r, col);
    return s;
}

/// Column name made readable: "change_no_mask" → "change no mask".
QString pretty(const std::string &column)
{
    return q(column).replace(QLatin1Char('_'), QLatin1Char(' '));
}

const NamedMatrix *findMatrix(const ExperimentResult &r, std::initializer_list<const char *> names)
{
    for (const char *name : names)
        for (const NamedMatrix &m : r.matrices)
            if (q(m.name).compare(QLatin1String(name), Qt::CaseInsensitive) == 0)
                return &m;
    return nullptr;
}

/// A matrix's caption without the leading experiment id ("E10 right convention" → "right
/// convention"): the figure's header already names the experiment.
QString panelTitle(const NamedMatrix &m)
{
    QString title = q(m.title.empty() ? m.name : m.title);
    static const QRegularExpression idPrefix(QStringLiteral("^E\\d+\\s+"));
    title.remove(idPrefix);
    if (!title.isEmpty())
        title[0] = title[0].toUpper();
    return title;
}

// ---------------------------------------------------------------------------------------------
// HeatmapView: one matrix as coloured cells with a colour bar (NaN cells red, labelled "NaN")
// ---------------------------------------------------------------------------------------------

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

    HeatmapView(const NamedMatrix &m, const Style &style, QWidget *parent = nullptr)
        : QWidget(parent)
        , m_values(m.values)
        , m_title(panelTitle(m))
        , m_style(style)
    {
        if (!(m_style.hi > m_style.lo))
            m_style.hi = m_style.lo + 1;
        // The cells, one pixel each, from the one tile-image builder (drawn scaled, unsmoothed).
        TileImageRequest request;
        request.values = &m_values;
        request.colormap = m_style.divergent ? ColormapId::RdBu : ColormapId::Viridis;
        request.norm = ColorNorm::linear(m_style.lo, m_style.hi);
        request.nonFiniteColor = kNanColor.rgb();
        m_cells = buildTileImage(request);
        setMinimumSize(160, 140);
        setSizePolicy(QSizePolicy::Expanding, QSizePolicy::Expanding);
    }

    /// Finite range of a set of matrices (0…1 when none is finite).
    static std::pair<double, double> range(const std::vector<const MatrixD *> &ms)
    {
        double lo = std::numeric_limits<double>::infinity(), hi = -lo;
        for (const MatrixD *m : ms)
            for (Index i = 0; i < m->size(); ++i) {
                const double v = m->data()[i];
                if (std::isfinite(v)) {
                    lo = std::min(lo, v);
                    hi = std::max(hi, v);
                }
            }
        if (!(hi >= lo))
            return {0.0, 1.0};
        return {lo, hi};
    }

    QSize sizeHint() const override { return {340, 300}; }

protected:
    void paintEvent(QPaintEvent *) override
    {
        QPainter p(this);
        p.setRenderHint(QPainter::Antialiasing, false);
        p.setPen(Qt::black);
        QFont titleFont = font();
        titleFont.setBold(true);
        const QFontMetrics fm(font());
        const QFontMetrics tfm(titleFont);
        QRect r = rect().adjusted(4, 4, -4, -4);

        const QRect full = r;
        r.setTop(r.top() + tfm.height() + 4); // the title goes just above the cells

        const Index rows = m_values.rows(), cols = m_values.cols();
        if (rows == 0 || cols == 0) {
            p.drawText(r, Qt::AlignCenter, QStringLiteral("(empty)"));
            return;
        }

        // Colour bar on the right: strip + labels.
        const QString hiText = formatValue(m_style.hi), loText = formatValue(m_style.lo);
        const int labelW = std::max(fm.horizontalAdvance(hiText), fm.horizontalAdvance(loText));
        const int barW = 12;
        const int barBlock = barW + 4 + labelW + 6;
        // Axis titles and tick labels on the left and bottom.
        const int tickW = fm.horizontalAdvance(QString::number(rows - 1)) + 4;
        const int leftBlock = fm.height() + 2 + tickW;
        const int bottomBlock = fm.height() * 2 + 4;

        const QRect area(r.left() + leftBlock, r.top(), r.width() - leftBlock - barBlock,
                         r.height() - bottomBlock);
        if (area.width() < 10 || area.height() < 10)
            return;
        const double cell
            = std::min(double(area.width()) / double(cols), double(area.height()) / double(rows));
        const double gridW = cell * double(cols), gridH = cell * double(rows);
        const double x0 = area.left() + (area.width() - gridW) / 2;
        const double y0 = area.top() + std::max(0.0, (area.height() - gridH) / 2 - tfm.height());
        p.setFont(titleFont);
        QString title = m_title;
        if (!m_values.allFinite() && !title.contains(QLatin1String("NaN")))
            title += QStringLiteral(" (red: NaN)");
        p.drawText(QRectF(full.left(), y0 - tfm.height() - 4, full.width(), tfm.height()),
                   Qt::AlignHCenter | Qt::AlignVCenter,
                   tfm.elidedText(title, Qt::ElideRight, full.width()));
        p.setFont(font());

        const bool annotate = cell >= std::max(26, fm.horizontalAdvance(QStringLiteral("0.00")) + 4)
            && rows * cols <= 400;
        p.setRenderHint(QPainter::SmoothPixmapTransform, false);
        p.drawImage(QRectF(x0, y0, gridW, gridH), m_cells);
        const bool nanLabels = cell >= fm.horizontalAdvance(QStringLiteral("NaN"));
        for (Index i = 0; (annotate || nanLabels) && i < rows; ++i)
            for (Index j = 0; j < cols; ++j) {
                const double v = m_values(i, j);
                const bool bad = !std::isfinite(v);
                if (!annotate && !bad)
                    continue;
                const QRectF c(x0 + double(j) * cell, y0 + double(i) * cell, cell, cell);
                const QColor color = QColor(m_cells.pixel(int(j), int(i)));
                p.setPen(bad || color.lightnessF() < 0.55 ? Qt::white : Qt::black);
                p.drawText(c, Qt::AlignCenter, bad ? formatValue(v) : cellLabel(v));
            }
        p.setPen(QPen(QColor(60, 60, 60), 0));
        p.drawRect(QRectF(x0, y0, gridW, gridH));

        // Tick labels at a round step (1, 2, 5, 10, 20, …) wide enough that they do not overlap,
        // each centred on its cell in a box of the label's own size (a cell can be narrower
        // than its label).
        p.setPen(Qt::black);
        const Index rowStep = figure::niceStep(1.1 * fm.height() / cell);
        for (Index i = 0; i < rows; i += rowStep)
            p.drawText(QRectF(x0 - tickW - 2, y0 + (double(i) + 0.5) * cell - fm.height() / 2.0,
                              tickW, fm.height()),
                       Qt::AlignRight | Qt::AlignVCenter, QString::number(i));
        const double colLabelW = fm.horizontalAdvance(QString::number(cols - 1)) + 4;
        const Index colStep = figure::niceStep(colLabelW / cell);
        for (Index j = 0; j < cols; j += colStep)
            p.drawText(QRectF(x0 + (double(j) + 0.5) * cell - colLabelW / 2.0, y0 + gridH + 1,
                              colLabelW, fm.height()),
                       Qt::AlignHCenter | Qt::AlignTop, QString::number(j));
        p.drawText(QRectF(x0, y0 + gridH + fm.height() + 2, gridW, fm.height()),
                   Qt::AlignHCenter | Qt::AlignTop, m_style.columnTitle);
        p.save();
        p.translate(x0 - tickW - 4 - fm.height(), y0 + gridH / 2);
        p.rotate(-90);
        p.drawText(QRectF(-gridH / 2, 0, gridH, fm.height()), Qt::AlignCenter, m_style.rowTitle);
        p.restore();

        // Colour bar.
        const double bx = x0 + gridW + 8;
        const int steps = 64;
        for (int s = 0; s < steps; ++s) {
            const double t = 1.0 - (s + 0.5) / steps;
            const QColor color = m_style.divergent ? diverging(t) : viridis(t);
            p.fillRect(QRectF(bx, y0 + gridH * s / steps, barW, gridH / steps + 0.5), color);
        }
        p.setPen(QPen(QColor(60, 60, 60), 0));
        p.drawRect(QRectF(bx, y0, barW, gridH));
        p.setPen(Qt::black);
        p.drawText(QRectF(bx + barW + 3, y0, labelW + 4, fm.height()), Qt::AlignLeft, hiText);
        p.drawText(QRectF(bx + barW + 3, y0 + gridH - fm.height(), labelW + 4, fm.height()),
                   Qt::AlignLeft, loText);
    }

public:
    /// What the heatmap plots (experimentHeatmaps()).
    ExperimentHeatmap content() const
    {
        return {m_title,           m_values,         m_style.lo,          m_style.hi,
                m_style.divergent, m_style.rowTitle, m_style.columnTitle, m_cells};
    }

private:
    QString cellLabel(double v) const
    {
        if (std::max(std::abs(m_style.lo), std::abs(m_style.hi)) <= 1)
            return QString::number(v, 'f', 2);
        return QString::number(v, 'g', 3);
    }

    MatrixD m_values;
    QString m_title;
    Style m_style;
    QImage m_cells; ///< one pixel per cell
};

// ---------------------------------------------------------------------------------------------
// Charts (Qt Charts), each series fed in one replace()
// ---------------------------------------------------------------------------------------------

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

QFont chartTitleFont()
{
    QFont f = QApplication::font();
    f.setBold(true);
    return f;
}

QChart *newChart(const QString &title)
{
    auto *chart = new QChart;
    chart->setTitle(title);
    chart->setTitleFont(chartTitleFont());
    chart->setAnimationOptions(QChart::NoAnimation);
    chart->setBackgroundRoundness(0);
    chart->setMargins(QMargins(2, 2, 2, 2));
    chart->legend()->setAlignment(Qt::AlignBottom);
    return chart;
}

QChartView *newView(QChart *chart)
{
    auto *view = new QChartView(chart); // takes ownership of the chart
    view->setRenderHint(QPainter::Antialiasing);
    view->setMinimumSize(220, 200);
    view->setFrameShape(QFrame::NoFrame);
    return view;
}

QAbstractAxis *makeAxis(Scale scale, const QString &title, double lo, double hi)
{
    if (scale == Scale::Linear) {
        auto *axis = new QValueAxis;
        if (!(hi > lo)) {
            const double pad = lo == 0 ? 1 : std::abs(lo) * 0.1;
            lo -= pad;
            hi += pad;
        }
        axis->setRange(lo, hi + 0.03 * (hi - lo)); // headroom: markers at the maximum stay whole
        axis->applyNiceNumbers();
        const double mag = std::max(std::abs(axis->min()), std::abs(axis->max()));
        axis->setLabelFormat(mag != 0 && (mag < 1e-3 || mag >= 1e5) ? QStringLiteral("%.1e")
                                                                    : QStringLiteral("%g"));
        axis->setTitleText(title);
        return axis;
    }
    auto *axis = new QLogValueAxis;
    double base = scale == Scale::Log2 ? 2.0 : 10.0;
    if (!(lo > 0))
        lo = hi > 0 ? hi / base : 1;
    if (!(hi > lo))
        hi = lo * base;
    if (base == 2.0 && lo < 1)
        base = 10.0; // powers of two below 1 make unreadable labels (0.00390625)
    // At most about six labelled powers: base 2 may become 4, 8, 16 …
    const double decades = std::log(hi / lo) / std::log(base);
    base = std::pow(base, std::max(1.0, std::ceil(decades / 6.0 - 1e-9)));
    axis->setBase(base);
    // Whole powers of the base around the data, so that tick labels are round numbers, widened
    // a little so that markers on the first and last power are not cut.
    const double lg = std::log(base);
    const double pad = std::pow(base, 0.1);
    axis->setRange(std::pow(base, std::floor(std::log(lo) / lg + 1e-9)) / pad,
                   std::pow(base, std::ceil(std::log(hi) / lg - 1e-9)) * pad);
    const double span = std::log(axis->max() / axis->min()) / lg;
    if (base == 10.0 && span < 2.5)
        axis->setMinorTickCount(8);
    axis->setLabelFormat(QStringLiteral("%g"));
    axis->setTitleText(title);
    return axis;
}

/// A line chart; points with non-finite values (or ≤ 0 on a log axis) are left out.
QChartView *lineChart(const QString &title, const QString &xTitle, Scale xs, const QString &yTitle,
                      Scale ys, const std::vector<Curve> &curves)
{
    QChart *chart = newChart(title);
    double xlo = std::numeric_limits<double>::infinity(), xhi = -xlo, ylo = xlo, yhi = -xlo;
    AxisUnit unit;
    if (ys == Scale::Linear) {
        double maxAbs = 0;
        for (const Curve &c : curves)
            for (const double y : c.y)
                if (std::isfinite(y))
                    maxAbs = std::max(maxAbs, std::abs(y));
        unit = unitFor(maxAbs);
    }
    std::vector<QLineSeries *> series;
    for (const Curve &c : curves) {
        QList<QPointF> points;
        for (std::size_t i = 0; i < std::min(c.x.size(), c.y.size()); ++i) {
            const double x = c.x[i], y = c.y[i] * unit.factor;
            if (!std::isfinite(x) || !std::isfinite(y) || (xs != Scale::Linear && x <= 0)
                || (ys != Scale::Linear && y <= 0))
                continue;
            points.append({x, y});
            xlo = std::min(xlo, x);
            xhi = std::max(xhi, x);
            ylo = std::min(ylo, y);
            yhi = std::max(yhi, y);
        }
        auto *s = new QLineSeries;
        s->setName(c.name);
        QPen pen(c.color, 2, c.style);
        s->setPen(pen);
        s->setColor(c.color);
        s->setPointsVisible(c.markers);
        s->setMarkerSize(6);
        s->replace(points);
        chart->addSeries(s);
        series.push_back(s);
    }
    if (!(xhi >= xlo)) {
        xlo = 0;
        xhi = 1;
        ylo = 0;
        yhi = 1;
    }
    if (ys == Scale::Linear && ylo > 0 && ylo < 0.35 * yhi)
        ylo = 0; // start at zero when that costs little room
    QAbstractAxis *ax = makeAxis(xs, xTitle, xlo, xhi);
    QAbstractAxis *ay = makeAxis(ys, yTitle + unit.suffix, ylo, yhi);
    chart->addAxis(ax, Qt::AlignBottom);
    chart->addAxis(ay, Qt::AlignLeft);
    for (QLineSeries *s : series) {
        s->attachAxis(ax);
        s->attachAxis(ay);
    }
    chart->legend()->setVisible(curves.size() > 1);
    return newView(chart);
}

/// Grouped bars; NaN/Inf values are drawn as 0 and named in red under the chart's title.
QChartView *barChart(const QString &title, const QStringList &categories, const QString &xTitle,
                     const QString &yTitle, const std::vector<BarGroup> &groups,
                     bool labels = false)
{
    QChart *chart = newChart(title);
    auto *series = new QBarSeries;
    double lo = 0, hi = 0, maxAbs = 0;
    for (const BarGroup &g : groups)
        for (const double v : g.values)
            if (std::isfinite(v))
                maxAbs = std::max(maxAbs, std::abs(v));
    const AxisUnit unit = unitFor(maxAbs);
    QStringList nonFinite;
    for (const BarGroup &g : groups) {
        auto *set = new QBarSet(g.name);
        set->setColor(g.color);
        set->setBorderColor(g.color.darker(120));
        set->setLabelColor(Qt::black);
        QList<qreal> vals;
        for (std::size_t i = 0; i < g.values.size(); ++i) {
            const double v = g.values[i];
            if (!std::isfinite(v)) {
                nonFinite << QStringLiteral("%1 at %2 = %3")
                                 .arg(g.name, categories.value(int(i)), formatValue(v));
                vals << 0.0;
                continue;
            }
            vals << v * unit.factor;
            lo = std::min(lo, v * unit.factor);
            hi = std::max(hi, v * unit.factor);
        }
        set->append(vals);
        series->append(set);
    }
    series->setBarWidth(0.8);
    if (labels) {
        series->setLabelsVisible(true);
        series->setLabelsPosition(QAbstractBarSeries::LabelsOutsideEnd);
        series->setLabelsPrecision(3);
        series->setLabelsFormat(QStringLiteral("@value"));
    }
    chart->addSeries(series);
    auto *ax = new QBarCategoryAxis;
    ax->append(categories);
    ax->setTitleText(xTitle);
    QAbstractAxis *ay = makeAxis(Scale::Linear, yTitle + unit.suffix, lo,
                                 hi > lo ? hi * (labels ? 1.12 : 1.0) : lo + 1);
    chart->addAxis(ax, Qt::AlignBottom);
    chart->addAxis(ay, Qt::AlignLeft);
    series->attachAxis(ax);
    series->attachAxis(ay);
    chart->legend()->setVisible(groups.size() > 1);
    if (!nonFinite.isEmpty()) {
        chart->setTitle(QStringLiteral("%1<br><span style=\"color:#d60000\">%2</span>")
                            .arg(title.toHtmlEscaped(), nonFinite.join(QStringLiteral("; "))));
    }
    return newView(chart);
}

// ---------------------------------------------------------------------------------------------
// The figure: a white frame with a header, a grid of panels and a footer
// ---------------------------------------------------------------------------------------------

class FigureFrame : public QWidget
{
public:
    explicit FigureFrame(const ExperimentResult &result, QWidget *parent = nullptr)
        : QWidget(parent)
    {
        setObjectName(QStringLiteral("experimentFigure"));
        QPalette pal = palette();
        pal.setColor(QPalette::Window, Qt::white);
        pal.setColor(QPalette::Base, Qt::white);
        pal.setColor(QPalette::WindowText, Qt::black);
        pal.setColor(QPalette::Text, Qt::black);
        setPalette(pal);
        setAutoFillBackground(true);

        auto *layout = new QVBoxLayout(this);
        layout->setContentsMargins(8, 6, 8, 6);
        layout->setSpacing(4);
        QString header = q(result.id);
        QString section;
        std::set<std::string> unused; // parameters that change nothing are not listed
        try {
            const ExperimentInfo &info = experimentInfo(result.id);
            header += QStringLiteral(" \u2014 ") + q(info.title);
            section = q(info.paperSection);
            for (const ParamSpec &spec : info.params)
                if (spec.unused)
                    unused.insert(spec.name);
        } catch (const std::exception &) { }
        m_header = new QLabel(this);
        m_header->setTextFormat(Qt::RichText);
        m_header->setText(
            QStringLiteral("<b>%1</b>%2")
                .arg(header.toHtmlEscaped(),
                     section.isEmpty()
                         ? QString()
                         : QStringLiteral(" &nbsp;<i>(%1)</i>").arg(section.toHtmlEscaped())));
        m_header->setAlignment(Qt::AlignCenter);
        layout->addWidget(m_header);
        m_grid = new QGridLayout;
        m_grid->setSpacing(6);
        layout->addLayout(m_grid, 1);

        QStringList params;
        for (const auto &[name, value] : result.params)
            if (!unused.count(name))
                params << QStringLiteral("%1=%2").arg(q(name), q(value));
        m_footer = new QLabel(this);
        m_footer->setWordWrap(true);
        m_footer->setTextFormat(Qt::RichText);
        QPalette fp = m_footer->palette();
        fp.setColor(QPalette::WindowText, QColor(90, 90, 90));
        m_footer->setPalette(fp);
        m_params = params.join(QStringLiteral(", "));
        layout->addWidget(m_footer);
        updateFooter();
    }

    /// Adds a panel to the grid; rows and columns share the space evenly unless
    /// setRowStretch() says otherwise.
    void add(QWidget *panel, int row, int col, int rowSpan = 1, int colSpan = 1)
    {
        panel->setParent(this);
        m_grid->addWidget(panel, row, col, rowSpan, colSpan);
        for (int r = row; r < row + rowSpan; ++r)
            if (m_grid->rowStretch(r) == 0)
                m_grid->setRowStretch(r, 1);
        for (int c = col; c < col + colSpan; ++c)
            if (m_grid->columnStretch(c) == 0)
                m_grid->setColumnStretch(c, 1);
        m_panels++;
    }
    void setRowStretch(int row, int stretch) { m_grid->setRowStretch(row, stretch); }
    int panelCount() const { return m_panels; }
    /// Adds a line (rich text) above the parameters in the footer.
    void addFooterLine(const QString &html)
    {
        m_lines << html;
        updateFooter();
    }

private:
    void updateFooter()
    {
        QStringList lines = m_lines;
        if (!m_params.isEmpty())
            lines << QStringLiteral("parameters: ") + m_params.toHtmlEscaped();
        m_footer->setText(lines.join(QStringLiteral("<br>")));
    }

    QLabel *m_header = nullptr;
    QLabel *m_footer = nullptr;
    QGridLayout *m_grid = nullptr;
    QString m_params;
    QStringList m_lines;
    int m_panels = 0;
};

// ---- helpers shared by the builders ----

/// Heatmaps of the given matrices in a row (or a near-square grid when many), sharing the
/// colour range unless `ownRange`; matrices whose name contains "diff" use the signed map.
void addHeatmaps(FigureFrame &f, const std::vector<const NamedMatrix *> &ms, int firstRow,
                 bool ownRange = false)
{
    std::vector<const MatrixD *> shared;
    for (const NamedMatrix *m : ms)
        if (!q(m->name).contains(QLatin1String("diff"), Qt::CaseInsensitive))
            shared.push_back(&m->values);
    const auto [lo, hi] = HeatmapView::range(shared);
    const int n = int(ms.size());
    const int perRow = n <= 4 ? n : int(std::ceil(std::sqrt(double(n))));
    for (int i = 0; i < n; ++i) {
        const NamedMatrix &m = *ms[std::size_t(i)];
        HeatmapView::Style style;
        if (q(m.name).contains(QLatin1String("diff"), Qt::CaseInsensitive)) {
            const auto [dlo, dhi] = HeatmapView::range({&m.values});
            const double a = std::max({std::abs(dlo), std::abs(dhi), 1e-300});
            style.lo = -a;
            style.hi = a;
            style.divergent = true;
        } else if (ownRange) {
            std::tie(style.lo, style.hi) = HeatmapView::range({&m.values});
        } else {
            style.lo = lo;
            style.hi = hi;
        }
        if (style.lo >= 0 && style.hi <= 1 && !style.divergent && !ownRange)
            style.lo = 0; // weights: a common 0 … max scale
        f.add(new HeatmapView(m, style), firstRow + i / perRow, i % perRow);
    }
}

std::vector<const NamedMatrix *> allMatrices(const ExperimentResult &r)
{
    std::vector<const NamedMatrix *> ms;
    for (const NamedMatrix &m : r.matrices)
        ms.push_back(&m);
    return ms;
}

void addScalarsFooter(FigureFrame &f, const ExperimentResult &r)
{
    QStringList s;
    for (const auto &[name, value] : r.scalars) {
        // E8's exponent needs two different n: with one it is not a NaN result but no result.
        if (name == "fitted_exponent" && std::isnan(value)) {
            s << QStringLiteral("%1 = n/a (needs \u2265 2 different n)")
                     .arg(pretty(name).toHtmlEscaped());
            continue;
        }
        s << QStringLiteral("%1 = %2").arg(pretty(name).toHtmlEscaped(),
                                           std::isfinite(value)
                                               ? formatValue(value, 6)
                                               : QStringLiteral("<span style=\"color:#d60000\">"
                                                                "%1</span>")
                                                     .arg(formatValue(value)));
    }
    if (!s.isEmpty())
        f.addFooterLine(s.join(QStringLiteral(", ")));
}

/// The x column for per-position / per-index tables: a named one, else the first numeric one.
int indexColumn(const Table &t, std::initializer_list<const char *> names)
{
    int c = findColumn(t, names);
    if (c < 0)
        for (std::size_t i = 0; i < t.columnCount(); ++i)
            if (isNumericColumn(t, int(i)))
                return int(i);
    return c;
}

// ---------------------------------------------------------------------------------------------
// One builder per experiment
// ---------------------------------------------------------------------------------------------

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

void buildE8(const ExperimentResult &r, FigureFrame &f)
{
    const Table &t = r.table;
    const int nCol = requireColumn(t, {"n"});
    // The exponent is fitted to the fastest of the repeats (E8's note): plot the same column.
    int secCol = findColumn(t, {"seconds_min"});
    const bool fastest = secCol >= 0;
    if (!fastest)
        secCol = requireColumn(t, {"seconds_mean"});
    const int mibCol = requireColumn(t, {"mib"});
    const int kernelCol = findColumn(t, {"kernel"});
    // One curve per kernel (rows in table order).
    std::map<QString, std::vector<std::size_t>> byKernel;
    std::vector<QString> order;
    for (std::size_t i = 0; i < t.rowCount(); ++i) {
        const QString k = kernelCol >= 0 ? cellText(t, i, kernelCol) : QStringLiteral("time");
        if (!byKernel.count(k))
            order.push_back(k);
        byKernel[k].push_back(i);
    }
    const auto n = values(t, nCol), sec = values(t, secCol), mib = values(t, mibCol);
    std::vector<Curve> timeCurves, mibCurves;
    QStringList exponents;
    for (const QString &k : order) {
        Curve c {k, {}, {}, seriesColor(int(timeCurves.size()))};
        Curve m {k, {}, {}, seriesColor(int(mibCurves.size()))};
        for (std::size_t i : byKernel[k]) {
            c.x.push_back(n[i]);
            c.y.push_back(sec[i]);
            m.x.push_back(n[i]);
            m.y.push_back(mib[i]);
        }
        if (c.x.size() >= 2) {
            try {
                const double e = fitPowerLawExponent(c.x, c.y);
                if (order.size() > 1)
                    c.name += QStringLiteral(" (n\u2009^\u2009%1)").arg(e, 0, 'f', 2);
                exponents << QString::number(e, 'f', 2);
            } catch (const std::exception &) { }
        }
        timeCurves.push_back(std::move(c));
        mibCurves.push_back(std::move(m));
    }
    QString title
        = fastest ? QStringLiteral("Fastest time vs n") : QStringLiteral("Mean time vs n");
    const auto fitted = r.scalars.find("fitted_exponent");
    if (fitted != r.scalars.end() && std::isfinite(fitted->second))
        title += QStringLiteral(": time \u221d n<sup>%1</sup>").arg(fitted->second, 0, 'f', 2);
    else if (exponents.size() == 1)
        title += QStringLiteral(": time \u221d n<sup>%1</sup>").arg(exponents.front());
    const QString xTitle = QStringLiteral("n (log\u2082)");
    f.add(lineChart(title, xTitle, Scale::Log2, QStringLiteral("seconds (log)"), Scale::Log10,
                    timeCurves),
          0, 0);
    // The score matrix size is the same for every kernel: one curve, plus what the kernel
    // itself allocates beyond Q, K, V and the output (kernel_extra_mib) when the table has it.
    std::vector<Curve> memory;
    if (!mibCurves.empty()) {
        mibCurves.front().name = QStringLiteral("n \u00d7 n score matrix");
        memory.push_back(mibCurves.front());
    }
    const int extraCol = findColumn(t, {"kernel_extra_mib"});
    if (extraCol >= 0 && order.size() == 1 && isNumericColumn(t, extraCol)) {
        const auto extra = values(t, extraCol);
        if (extra != mib)
            memory.push_back({QStringLiteral("%1 kernel's own buffers").arg(order.front()), n,
                              extra, kUnscaledColor, Qt::DashLine});
    }
    f.add(lineChart(QStringLiteral("Memory vs n (n\u00b2: \u00d74 per doubling)"), xTitle,
                    Scale::Log2, QStringLiteral("MiB (log)"), Scale::Log2, memory),
          0, 1);
    addScalarsFooter(f, r);
}

void buildE9(const ExperimentResult &r, FigureFrame &f)
{
    const Table &t = r.table;
    // One row per method (text column + seconds column), or one row with a column per method.
    int textCol = findColumn(t, {"method"});
    for (std::size_t c = 0; textCol < 0 && c < t.columnCount(); ++c)
        if (!isNumericColumn(t, int(c)) && t.rowCount() > 0)
            textCol = int(c);
    // time_ratio is a ratio of the fastest runs (E9's note): the bars show the same column.
    int secCol = findColumn(t, {"seconds_min", "seconds_mean", "seconds", "time"});
    if (secCol < 0)
        secCol = findColumnContaining(t, {"second"});
    const QString timeWord = secCol >= 0 && t.columns()[std::size_t(secCol)] == "seconds_min"
        ? QStringLiteral("Fastest time")
        : QStringLiteral("Mean time");
    QString title = QStringLiteral("%1: one query row at a time vs matrix products").arg(timeWord);
    const auto ratio = r.scalars.find("time_ratio");
    if (ratio != r.scalars.end() && std::isfinite(ratio->second) && ratio->second > 0) {
        const double x = ratio->second >= 1 ? ratio->second : 1 / ratio->second;
        title = (ratio->second >= 1
                     ? QStringLiteral("%1: the loop takes %2\u00d7 as long as matrix "
                                      "products")
                     : QStringLiteral("%1: matrix products take %2\u00d7 as long as the "
                                      "loop here"))
                    .arg(timeWord)
                    .arg(x, 0, 'f', x < 10 ? 2 : 1);
    }
    if (textCol >= 0 && secCol >= 0 && isNumericColumn(t, secCol) && t.rowCount() >= 2) {
        f.add(
            barChart(title, columnTexts(t, textCol), QString(), QStringLiteral("seconds"),
                     {{pretty(t.columns()[std::size_t(secCol)]), values(t, secCol), kScaledColor}},
                     true),
            0, 0);
    } else {
        QStringList categories;
        std::vector<double> secs;
        for (std::size_t c = 0; c < t.columnCount(); ++c) {
            const QString name = q(t.columns()[c]);
            if (isNumericColumn(t, int(c))
                && (name.contains(QLatin1String("second")) || name.contains(QLatin1String("time")))
                && t.rowCount() >= 1) {
                categories << pretty(t.columns()[c]);
                secs.push_back(values(t, int(c)).front());
            }
        }
        if (categories.size() < 2)
            throw FigureUnavailable("the table has no loop / matrix time columns");
        f.add(barChart(title, categories, QString(), QStringLiteral("seconds"),
                       {{QStringLiteral("time"), secs, kScaledColor}}, true),
              0, 0);
    }
    addScalarsFooter(f, r);
}

void buildE10(const ExperimentResult &r, FigureFrame &f)
{
    std::vector<const NamedMatrix *> ms;
    for (const char *name : {"right_convention", "reversed_convention", "difference"})
        if (const NamedMatrix *m = findMatrix(r, {name}))
            ms.push_back(m);
    if (ms.size() < 2)
        ms = allMatrices(r);
    if (ms.empty())
        throw FigureUnavailable("the result has no weight matrices");
    addHeatmaps(f, ms, 0);
    addScalarsFooter(f, r);
}

void buildE11(const ExperimentResult &r, FigureFrame &f)
{
    const Table &t = r.table;
    const int fillCol = findColumn(t, {"fill"});
    const int dtypeCol = findColumn(t, {"dtype"});
    int weightCol = findColumn(t, {"masked_weight_textbook", "masked_weight"});
    if (weightCol < 0)
        weightCol = findColumnContaining(t, {"masked", "weight"});
    if (fillCol < 0 || dtypeCol < 0 || weightCol < 0 || !isNumericColumn(t, weightCol))
        throw FigureUnavailable("the table lacks dtype, fill or masked_weight_textbook");
    QStringList fills, dtypes;
    for (std::size_t i = 0; i < t.rowCount(); ++i) {
        const QString fl = cellText(t, i, fillCol), dt = cellText(t, i, dtypeCol);
        if (!fills.contains(fl))
            fills << fl;
        if (!dtypes.contains(dt))
            dtypes << dt;
    }
    std::vector<BarGroup> groups;
    const auto w = values(t, weightCol);
    for (const QString &dt : dtypes) {
        BarGroup g {dt,
                    std::vector<double>(std::size_t(fills.size()),
                                        std::numeric_limits<double>::quiet_NaN()),
                    seriesColor(int(groups.size()))};
        for (std::size_t i = 0; i < t.rowCount(); ++i)
            if (cellText(t, i, dtypeCol) == dt)
                g.values[std::size_t(fills.indexOf(cellText(t, i, fillCol)))] = w[i];
        groups.push_back(std::move(g));
    }
    const int columns = std::max(1, int(fills.size()));
    f.add(barChart(QStringLiteral("Largest weight left on masked keys (textbook softmax)"), fills,
                   QStringLiteral("fill value for masked scores"), QStringLiteral("weight"), groups,
                   true),
          0, 0, 1, columns);
    f.setRowStretch(0, 3);
    // The textbook weights per dtype and fill: the fully masked row is NaN (red) with −inf.
    int row = 1;
    for (const QString &dt : dtypes) {
        std::vector<const NamedMatrix *> ms;
        for (const NamedMatrix &m : r.matrices)
            if (q(m.name).startsWith(QStringLiteral("textbook_") + dt + QLatin1Char('_')))
                ms.push_back(&m);
        if (ms.empty())
            continue;
        for (std::size_t i = 0; i < ms.size(); ++i) {
            HeatmapView::Style style;
            style.lo = 0;
            style.hi = 1;
            f.add(new HeatmapView(*ms[i], style), row, int(i) % columns);
        }
        f.setRowStretch(row, 2);
        ++row;
    }
    QStringList zeroFills;
    for (int i = 0; i < fills.size(); ++i) {
        bool zero = true;
        for (const BarGroup &g : groups)
            zero = zero && g.values[std::size_t(i)] == 0.0;
        if (zero)
            zeroFills << fills[i];
    }
    if (!zeroFills.isEmpty())
        f.addFooterLine(QStringLiteral("the weight on masked keys is exactly 0.0 with fill %1 "
                                       "(every dtype)")
                            .arg(zeroFills.join(QStringLiteral(", ")).toHtmlEscaped()));
    const int fullRowCol = findColumn(t, {"full_row_textbook"});
    if (fullRowCol >= 0) {
        QStringList lines;
        for (std::size_t i = 0; i < t.rowCount(); ++i)
            lines << QStringLiteral("%1 fill %2 \u2192 %3")
                         .arg(cellText(t, i, dtypeCol), cellText(t, i, fillCol),
                              cellText(t, i, fullRowCol))
                         .toHtmlEscaped();
        f.addFooterLine(QStringLiteral("fully masked row (textbook): ")
                        + lines.join(QStringLiteral("; ")));
    }
    addScalarsFooter(f, r);
}

void buildE12(const ExperimentResult &r, FigureFrame &f)
{
    const Table &t = r.table;
    const NamedMatrix *naive = findMatrix(r, {"naive_float32"});
    const NamedMatrix *stable = findMatrix(r, {"stable_float32"});
    if (!naive || !stable)
        throw FigureUnavailable("the result lacks the naive_float32 / stable_float32 matrices");
    addHeatmaps(f, {naive, stable}, 0);
    // Wrong-axis row sums next to the right ones (rows of part "wrong_axis").
    const int partCol = findColumn(t, {"part"});
    const int rowCol = findColumn(t, {"row"});
    const int wrongCol = findColumn(t, {"row_sum_pitfall"});
    const int rightCol = findColumn(t, {"row_sum_correct"});
    if (partCol >= 0 && rowCol >= 0 && wrongCol >= 0 && rightCol >= 0) {
        QStringList rows;
        std::vector<double> wrong, right;
        const auto ws = values(t, wrongCol), rs = values(t, rightCol);
        for (std::size_t i = 0; i < t.rowCount(); ++i)
            if (cellText(t, i, partCol) == QLatin1String("wrong_axis")) {
                rows << cellText(t, i, rowCol);
                wrong.push_back(ws[i]);
                right.push_back(rs[i]);
            }
        if (!rows.isEmpty())
            f.add(barChart(QStringLiteral("Row sums: softmax over the wrong axis vs over the "
                                          "keys"),
                           rows, QStringLiteral("query row"), QStringLiteral("row sum"),
                           {{QStringLiteral("wrong axis (over queries)"), wrong, kUnscaledColor},
                            {QStringLiteral("right axis (over keys)"), right, kScaledColor}},
                           true),
                  1, 0, 1, 2);
    }
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

/// Builds the figure into a new frame; throws FigureUnavailable.
std::unique_ptr<FigureFrame> buildFigure(const ExperimentResult &r)
{
    static const std::map<QString, void (*)(const ExperimentResult &, FigureFrame &)> builders = {
        {QStringLiteral("E1"), buildE1},   {QStringLiteral("E2"), buildE2},
        {QStringLiteral("E3"), buildE3},   {QStringLiteral("E4"), buildE4},
        {QStringLiteral("E5"), buildE5},   {QStringLiteral("E6"), buildE6},
        {QStringLiteral("E7"), buildE7},   {QStringLiteral("E8"), buildE8},
        {QStringLiteral("E9"), buildE9},   {QStringLiteral("E10"), buildE10},
        {QStringLiteral("E11"), buildE11}, {QStringLiteral("E12"), buildE12},
        {QStringLiteral("E13"), buildE13}, {QStringLiteral("E14"), buildE14},
        {QStringLiteral("E15"), buildE15}, {QStringLiteral("E16"), buildE16},
    };
    auto frame = std::make_unique<FigureFrame>(r);
    const auto it = builders.find(q(r.id).toUpper());
    if (it == builders.end()) {
        if (r.matrices.empty())
            throw FigureUnavailable("no figure is defined for experiment '" + r.id + "'");
        addHeatmaps(*frame, allMatrices(r), 0, true);
        return frame;
    }
    it->second(r, *frame);
    if (frame->panelCount() == 0)
        throw FigureUnavailable("nothing to draw");
    return frame;
}

} // namespace

bool experimentHasFigure(const ExperimentResult &result, QString *reason)
{
    try {
        buildFigure(result);
        return true;
    } catch (const std::exception &e) {
        if (reason)
            *reason = QString::fromUtf8(e.what());
        return false;
    }
}

QSize defaultExperimentFigureSize(const ExperimentResult &result)
{
    const QString id = q(result.id).toUpper();
    if (id == QLatin1String("E2") || id == QLatin1String("E10"))
        return {1500, 520};
    if (id == QLatin1String("E3") || id == QLatin1String("E8"))
        return {1200, 520};
    if (id == QLatin1String("E1"))
        return {640, 600};
    if (id == QLatin1String("E4")) {
        int n = 0;
        for (const NamedMatrix &m : result.matrices)
            n += q(m.name).contains(QLatin1String("head"), Qt::CaseInsensitive) ? 1 : 0;
        if (n == 0)
            n = int(result.matrices.size());
        if (n <= 4)
            return {std::max(1, n) * 380, 460};
        const int perRow = int(std::ceil(std::sqrt(double(n))));
        const int rows = (n + perRow - 1) / perRow;
        return {perRow * 300, rows * 280 + 80};
    }
    if (id == QLatin1String("E11") || id == QLatin1String("E12"))
        return {1000, 760};
    if (id == QLatin1String("E13"))
        return {1800, 1500};
    if (id == QLatin1String("E14"))
        return {1500, 520};
    if (id == QLatin1String("E15") || id == QLatin1String("E16"))
        return {1300, 900};
    return {1000, 600};
}

QVector<ExperimentHeatmap> experimentHeatmaps(const QWidget *figure)
{
    QVector<ExperimentHeatmap> out;
    if (!figure)
        return out;
    for (const QWidget *w : figure->findChildren<const QWidget *>())
        if (const auto *view = dynamic_cast<const HeatmapView *>(w))
            out.append(view->content());
    return out;
}

QWidget *createExperimentFigure(const ExperimentResult &result, QWidget *parent)
{
    try {
        std::unique_ptr<FigureFrame> frame = buildFigure(result);
        frame->setParent(parent);
        return frame.release();
    } catch (const std::exception &e) {
        auto *label = new QLabel(parent);
        label->setObjectName(QStringLiteral("experimentFigureUnavailable"));
        label->setWordWrap(true);
        label->setAlignment(Qt::AlignCenter);
        label->setText(QObject::tr("No figure for %1: %2. The table shows the result.")
                           .arg(q(result.id), QString::fromUtf8(e.what())));
        return label;
    }
}

bool exportExperimentFigure(const ExperimentResult &result, const QString &path, QSize size,
                            QString *error)
{
    auto fail = [&](const QString &message) {
        if (error)
            *error = message;
        return false;
    };
    const QString suffix = QFileInfo(path).suffix().toLower();
    if (suffix != QLatin1String("png") && suffix != QLatin1String("svg"))
        return fail(QObject::tr("%1: unknown figure format '%2' (use .png or .svg)")
                        .arg(path, suffix.isEmpty() ? QStringLiteral("(none)") : suffix));
    if (!qobject_cast<QApplication *>(QCoreApplication::instance()))
        return fail(QObject::tr("%1: drawing a figure needs a QApplication").arg(path));
    if (size.isEmpty())
        size = defaultExperimentFigureSize(result);
    if (size.width() > 20000 || size.height() > 20000)
        return fail(QObject::tr("%1: figure size %2\u00d7%3 is too large (at most 20000 pixels a "
                                "side)")
                        .arg(path)
                        .arg(size.width())
                        .arg(size.height()));

    std::unique_ptr<FigureFrame> frame;
    try {
        frame = buildFigure(result);
    } catch (const std::exception &e) {
        return fail(QObject::tr("%1: no figure for %2: %3")
                        .arg(path, q(result.id), QString::fromUtf8(e.what())));
    }
    // Lay the widget out at the requested size without showing it on screen: the same widget
    // tree the panel shows, painted by QWidget::render into an image or an SVG generator.
    frame->setAttribute(Qt::WA_DontShowOnScreen);
    frame->setMinimumSize(0, 0);
    frame->resize(size);
    frame->layout()->activate();
    QCoreApplication::sendPostedEvents();

    QByteArray bytes;
    QBuffer buffer(&bytes);
    buffer.open(QIODevice::WriteOnly);
    if (suffix == QLatin1String("png")) {
        QImage image(size, QImage::Format_ARGB32_Premultiplied);
        image.fill(Qt::white);
        QPainter painter(&image);
        frame->render(&painter);
        painter.end();
        if (!image.save(&buffer, "PNG"))
            return fail(QObject::tr("%1: could not encode the PNG image").arg(path));
    } else {
        QSvgGenerator generator;
        generator.setOutputDevice(&buffer);
        generator.setSize(size);
        generator.setViewBox(QRect(QPoint(0, 0), size));
        generator.setTitle(QStringLiteral("Attention Lab %1").arg(q(result.id)));
        generator.setDescription(
            QStringLiteral("Figure of experiment %1 exported by attnlab").arg(q(result.id)));
        QPainter painter;
        if (!painter.begin(&generator))
            return fail(QObject::tr("%1: could not start the SVG generator").arg(path));
        painter.fillRect(QRect(QPoint(0, 0), size), Qt::white);
        frame->render(&painter);
        painter.end();
    }
    buffer.close();

    QString why;
    if (!writeFileBytes(path, bytes, &why))
        return fail(why);
    return true;
}

} // namespace attn
