#include "ui/charts/figurekit.h"

#include "ui/render/colormap.h"

#include <QApplication>
#include <QBarCategoryAxis>
#include <QBarSeries>
#include <QBarSet>
#include <QChart>
#include <QChartView>
#include <QGridLayout>
#include <QLabel>
#include <QLegendMarker>
#include <QLineSeries>
#include <QLogValueAxis>
#include <QRegularExpression>
#include <QVBoxLayout>
#include <QValueAxis>

#include <algorithm>
#include <cmath>
#include <limits>
#include <set>

namespace attn::expfig {

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

QColor seriesColor(int i)
{
    static const QColor colors[] = {kScaledColor, kUnscaledColor,       kThirdColor,
                                    kFourthColor, QColor(86, 180, 233), QColor(204, 121, 167)};
    return colors[std::size_t(i) % std::size(colors)];
}

QString formatValue(double v, int precision)
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

AxisUnit unitFor(double maxAbs)
{
    if (!(maxAbs > 0) || maxAbs >= 1e-5 || !std::isfinite(maxAbs))
        return {};
    const int e = int(std::floor(std::log10(maxAbs)));
    return {std::pow(10.0, -e), QStringLiteral(" (\u00d7%1)").arg(powerOfTen(e))};
}

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
                         const std::vector<int> &exclude)
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

int indexColumn(const Table &t, std::initializer_list<const char *> names)
{
    int c = findColumn(t, names);
    if (c < 0)
        for (std::size_t i = 0; i < t.columnCount(); ++i)
            if (isNumericColumn(t, int(i)))
                return int(i);
    return c;
}

// ---- charts ----

namespace {

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

} // namespace

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
                     const QString &yTitle, const std::vector<BarGroup> &groups, bool labels)
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

// ---- the figure frame ----

FigureFrame::FigureFrame(const ExperimentResult &result, QWidget *parent)
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

void FigureFrame::add(QWidget *panel, int row, int col, int rowSpan, int colSpan)
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

void FigureFrame::setRowStretch(int row, int stretch)
{
    m_grid->setRowStretch(row, stretch);
}

void FigureFrame::addFooterLine(const QString &html)
{
    m_lines << html;
    updateFooter();
}

void FigureFrame::updateFooter()
{
    QStringList lines = m_lines;
    if (!m_params.isEmpty())
        lines << QStringLiteral("parameters: ") + m_params.toHtmlEscaped();
    m_footer->setText(lines.join(QStringLiteral("<br>")));
}

// ---- helpers shared by the recipes ----

/// Heatmaps of the given matrices in a row (or a near-square grid when many), sharing the
/// colour range unless `ownRange`; matrices whose name contains "diff" use the signed map.
void addHeatmaps(FigureFrame &f, const std::vector<const NamedMatrix *> &ms, int firstRow,
                 bool ownRange)
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

} // namespace attn::expfig
