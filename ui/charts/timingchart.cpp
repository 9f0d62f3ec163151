#include "ui/charts/timingchart.h"

#include "ui/charts/chartstyle.h"

#include "core/experiments/experiments.h"
#include "core/kernels/kernels.h"

#include <QApplication>
#include <QChart>
#include <QChartView>
#include <QCheckBox>
#include <QComboBox>
#include <QCursor>
#include <QFontMetricsF>
#include <QGraphicsLayout>
#include <QHBoxLayout>
#include <QLabel>
#include <QLegendMarker>
#include <QLineSeries>
#include <QLogValueAxis>
#include <QProgressBar>
#include <QPushButton>
#include <QScatterSeries>
#include <QSpinBox>
#include <QTabWidget>
#include <QToolTip>
#include <QVBoxLayout>

#include <algorithm>
#include <cmath>
#include <exception>
#include <limits>

namespace attn {

namespace {

constexpr double kMiB = 1024.0 * 1024.0;

struct KernelStyle
{
    const char *name;
    QColor color;
    double costFactor; ///< rough time per flop relative to the materialized kernel (progress)
};

const std::vector<KernelStyle> &kernelStyles()
{
    static const std::vector<KernelStyle> styles = {
        {"materialized", chartstyle::scaledColor(), 1.0},
        {"streaming", chartstyle::thirdColor(), 1.0},
        {"loop", chartstyle::unscaledColor(), 8.0},
    };
    return styles;
}

QString mibText(double mib)
{
    if (mib >= 1024.0)
        return QObject::tr("%1 GiB").arg(mib / 1024.0, 0, 'g', 3);
    if (mib >= 10.0)
        return QObject::tr("%1 MiB").arg(std::ceil(mib), 0, 'f', 0);
    return QObject::tr("%1 MiB").arg(mib, 0, 'g', 2);
}

QString secondsText(double s)
{
    if (s < 1e-3)
        return QObject::tr("%1 µs").arg(s * 1e6, 0, 'g', 3);
    if (s < 1.0)
        return QObject::tr("%1 ms").arg(s * 1e3, 0, 'g', 3);
    return QObject::tr("%1 s").arg(s, 0, 'g', 3);
}

QLogValueAxis *makeLogAxis(QChart *chart, int base, const QString &title)
{
    auto *axis = new QLogValueAxis(chart);
    axis->setBase(base);
    axis->setLabelFormat(QStringLiteral("%g"));
    axis->setTitleText(title);
    return axis;
}

/// Range of a log axis covering [lo, hi] with whole powers of 10 (a little room for base 2).
/// A base-10 axis labels every decade, or every k-th one when more than `maxLabels` labels
/// would show (base 10^k, the range widened to whole multiples of k decades).
void setLogRange(QLogValueAxis *axis, double lo, double hi, int maxLabels = 6)
{
    if (!(lo > 0) || !(hi >= lo))
        return;
    if (axis->base() >= 10) {
        const double a = std::floor(std::log10(lo)), b = std::ceil(std::log10(hi * 1.0001));
        double k = 1;
        while (std::ceil(b / k) - std::floor(a / k) + 1 > std::max(maxLabels, 2) && k < 12)
            ++k;
        axis->setBase(std::pow(10.0, k));
        axis->setRange(std::pow(10, k * std::floor(a / k)), std::pow(10, k * std::ceil(b / k)));
    } else
        axis->setRange(lo / 1.3, hi * 1.3);
}

/// How many labels a vertical axis can show in a plot `height` pixels tall without Qt eliding
/// them: Qt gives each label the plot's height over their count, less its padding, and cuts a
/// label taller than that to "…". Two at least, six at most.
int labelsThatFit(const QLogValueAxis *axis, qreal height)
{
    if (!(height > 0))
        return 6;
    const qreal perLabel = QFontMetricsF(axis->labelsFont()).height() + 8;
    return std::clamp(int(height / perLabel), 2, 6);
}

void hideFromLegend(QChart *chart, QAbstractSeries *series)
{
    for (QLegendMarker *m : chart->legend()->markers(series))
        m->setVisible(false);
}

} // namespace

TimingChart::TimingChart(QWidget *parent)
    : QWidget(parent)
{
    setObjectName(QStringLiteral("timingChart"));
    auto *layout = new QVBoxLayout(this);
    layout->setContentsMargins(0, 0, 0, 0);
    layout->setSpacing(2);

    auto *bar = new QHBoxLayout;
    bar->setContentsMargins(6, 2, 6, 0);
    auto *maxLabel = new QLabel(tr("n &up to:"), this);
    m_maxNCombo = new QComboBox(this);
    m_maxNCombo->setObjectName(QStringLiteral("timingMaxNCombo"));
    for (int n : {512, 1024, 2048, 4096, 8192, 16384})
        m_maxNCombo->addItem(QString::number(n), n);
    m_maxNCombo->setCurrentIndex(m_maxNCombo->count() - 1);
    m_maxNCombo->setToolTip(
        tr("Largest sequence length measured; n doubles from 128 up to it. The materialized "
           "kernel needs an n × n score matrix (1 GiB in float32 at n = 16384) and is not run "
           "where that exceeds the memory budget; the streaming kernel needs a few MiB at any "
           "n; the per-row loop stops at n = %1.")
            .arg(loopMaxN));
    maxLabel->setBuddy(m_maxNCombo);
    bar->addWidget(maxLabel);
    bar->addWidget(m_maxNCombo);

    auto *dLabel = new QLabel(tr("d:"), this);
    m_dSpin = new QSpinBox(this);
    m_dSpin->setObjectName(QStringLiteral("timingDSpin"));
    m_dSpin->setRange(1, 1024);
    m_dSpin->setValue(64);
    m_dSpin->setToolTip(tr("Width d of Q, K and V (E8 uses 64). Cost grows as n²·d."));
    dLabel->setBuddy(m_dSpin);
    bar->addWidget(dLabel);
    bar->addWidget(m_dSpin);

    m_float32Check = new QCheckBox(tr("float&32"), this);
    m_float32Check->setObjectName(QStringLiteral("timingFloat32Check"));
    m_float32Check->setChecked(true);
    m_float32Check->setToolTip(tr("Measure in float32 (checked) or float64."));

    auto *repeatsLabel = new QLabel(tr("&Runs:"), this);
    m_repeatsSpin = new QSpinBox(this);
    m_repeatsSpin->setObjectName(QStringLiteral("timingRepeatsSpin"));
    m_repeatsSpin->setRange(1, 20);
    m_repeatsSpin->setValue(3);
    m_repeatsSpin->setToolTip(tr("Timed runs per n (after one untimed warm-up); the plot shows "
                                 "the fastest of them, which load from other programs disturbs "
                                 "least."));
    repeatsLabel->setBuddy(m_repeatsSpin);
    bar->addWidget(repeatsLabel);
    bar->addWidget(m_repeatsSpin);
    bar->addStretch(1);
    layout->addLayout(bar);
    // Precision and the memory budget on a row of their own: the dock keeps the width of the
    // right column at 1280 × 800 without scrolling sideways.
    auto *budgetBar = new QHBoxLayout;
    budgetBar->setContentsMargins(6, 0, 6, 0);
    budgetBar->addWidget(m_float32Check);
    budgetBar->addSpacing(8);

    auto *kernelBar = new QHBoxLayout;
    kernelBar->setContentsMargins(6, 0, 6, 0);
    const QStringList kernelTips = {
        tr("Materialized: one GEMM for the n × n scores, a row softmax, one GEMM with V. Its "
           "memory grows as n²."),
        tr("Streaming (online softmax, FlashAttention-style): K and V in tiles with a running "
           "max and sum per row; no n × n matrix, memory independent of n."),
        tr("Per-row loop: one query row at a time, the slow obvious reference (E9). Not run "
           "beyond n = %1.")
            .arg(loopMaxN),
    };
    const QStringList kernelLabels = {tr("&materialized"), tr("&streaming"), tr("&loop")};
    for (int k = 0; k < int(kernelStyles().size()); ++k) {
        auto *check = new QCheckBox(kernelLabels[k], this);
        check->setObjectName(QStringLiteral("timingKernel_%1")
                                 .arg(QLatin1String(kernelStyles()[std::size_t(k)].name)));
        check->setChecked(true);
        check->setToolTip(kernelTips[k]);
        kernelBar->addWidget(check);
        m_kernelChecks.append(check);
    }
    auto *budgetLabel = new QLabel(tr("&budget:"), this);
    m_budgetCombo = new QComboBox(this);
    m_budgetCombo->setObjectName(QStringLiteral("timingBudgetCombo"));
    for (int mib : {256, 512, 1024, 2048})
        m_budgetCombo->addItem(mibText(mib), mib);
    m_budgetCombo->setCurrentIndex(2);
    m_budgetCombo->setToolTip(tr("Memory one kernel run may use (its buffers plus Q, K, V and "
                                 "the output). A kernel is not run at an n that needs more; the "
                                 "status line and the memory plot show what it would need."));
    budgetLabel->setBuddy(m_budgetCombo);
    budgetBar->addWidget(budgetLabel);
    budgetBar->addWidget(m_budgetCombo);
    budgetBar->addStretch(1);
    layout->addLayout(budgetBar);
    kernelBar->addStretch(1);
    layout->addLayout(kernelBar);

    auto *runBar = new QHBoxLayout;
    runBar->setContentsMargins(6, 0, 6, 0);
    m_runButton = new QPushButton(tr("Run timing"), this);
    m_runButton->setObjectName(QStringLiteral("timingRunButton"));
    m_runButton->setToolTip(tr("Measure the checked kernels for each n in a background thread "
                               "(Ctrl+T). The window stays responsive."));
    m_cancelButton = new QPushButton(tr("Cancel"), this);
    m_cancelButton->setObjectName(QStringLiteral("timingCancelButton"));
    m_cancelButton->setToolTip(tr("Stop the measurement (it stops between runs)."));
    m_cancelButton->setEnabled(false);
    m_progress = new QProgressBar(this);
    m_progress->setObjectName(QStringLiteral("timingProgress"));
    m_progress->setRange(0, 1000);
    m_progress->setValue(0);
    m_progress->setTextVisible(false);
    m_progress->setToolTip(tr("Progress of the timing run."));
    runBar->addWidget(m_runButton);
    runBar->addWidget(m_cancelButton);
    runBar->addWidget(m_progress, 1);
    layout->addLayout(runBar);

    m_status = new QLabel(this);
    m_status->setObjectName(QStringLiteral("timingStatus"));
    m_status->setWordWrap(true);
    m_status->setTextFormat(Qt::RichText);
    setStatus(tr("Press Run to measure time and memory vs n (nothing is hard-coded)."));
    m_status->setContentsMargins(6, 0, 6, 0);
    m_status->setTextInteractionFlags(Qt::TextSelectableByMouse);
    layout->addWidget(m_status);

    // Time and memory, both log–log, sharing the kernels' colours, as two tabs so each plot
    // keeps the dock's height.
    m_plotTabs = new QTabWidget(this);
    m_plotTabs->setObjectName(QStringLiteral("timingPlotTabs"));
    m_plotTabs->setDocumentMode(true);
    m_plotTabs->setTabPosition(QTabWidget::South);
    m_timeView = new QChartView(m_plotTabs);
    m_timeView->setObjectName(QStringLiteral("timingTimeView"));
    m_timeView->setRenderHint(QPainter::Antialiasing);
    m_timeView->setMinimumSize(260, 100); // fits the dock under a headline of four lines
    m_timeView->setWhatsThis(
        tr("Time of each attention kernel against n on log–log axes. The slope is the "
           "exponent: ≈ 2 because every kernel does 4·n²·d flops (Vaswani et al. 2017, Table 1; "
           "docs/experiments.md E8). Dashed: the power law fitted to the largest n, where n² "
           "dominates the fixed costs."));
    m_memoryView = new QChartView(m_plotTabs);
    m_memoryView->setObjectName(QStringLiteral("timingMemoryView"));
    m_memoryView->setRenderHint(QPainter::Antialiasing);
    m_memoryView->setMinimumSize(260, 100); // fits the dock under a headline of four lines
    m_memoryView->setWhatsThis(
        tr("Memory each kernel allocates beyond Q, K, V and the output, against n on log–log "
           "axes: the materialized kernel's n × n matrix grows as n², the streaming kernel's "
           "tiles do not grow. Hollow points: runs refused because they would need more than "
           "the budget (dashed line)."));
    m_plotTabs->addTab(m_timeView, tr("Time"));
    m_plotTabs->addTab(m_memoryView, tr("Memory"));
    m_plotTabs->setTabToolTip(0, tr("Fastest run vs n, log–log, with fitted exponents"));
    m_plotTabs->setTabToolTip(1,
                              tr("Extra memory per kernel vs n, log–log; dashed: the memory "
                                 "budget; hollow circles: runs refused over the budget (the "
                                 "memory they would need)"));
    // The plots take the height the dock has, never their size hint: the word-wrapped headline
    // makes the dock's scroll area size this widget by its preferred height for the width,
    // which with the charts' hints pushed the plot out of the dock.
    m_plotTabs->setSizePolicy(QSizePolicy::Expanding, QSizePolicy::Ignored);
    m_plotTabs->setMinimumHeight(130);
    layout->addWidget(m_plotTabs, 1);

    auto *timeChart = new QChart;
    timeChart->legend()->hide(); // the status line names the kernels in their colours
    m_timeView->setChart(timeChart);
    chartstyle::applyTheme(timeChart, this);
    // The memory chart shares the time chart's colours; its title names the budget line and
    // the refused points instead of a legend, so the plot keeps its height in a small dock.
    auto *memoryChart = new QChart;
    memoryChart->legend()->hide();
    m_memoryView->setChart(memoryChart);
    chartstyle::applyTheme(memoryChart, this);
    for (QChart *chart : {timeChart, memoryChart}) {
        chart->setMargins(QMargins(2, 2, 2, 2));
        chart->layout()->setContentsMargins(0, 0, 0, 0);
    }

    m_timeX = makeLogAxis(timeChart, 2, tr("n (log₂ axis)"));
    m_timeX->setRange(100, 20000);
    m_timeY = makeLogAxis(timeChart, 10, tr("s per run"));
    m_timeY->setRange(1e-5, 10);
    timeChart->addAxis(m_timeX, Qt::AlignBottom);
    // n labels thinned to what fits the plot's width (never elided).
    // Time and MiB labels every decade, or every second, third … one in a short plot, so none
    // is elided to "…".
    connect(timeChart, &QChart::plotAreaChanged, this, [this](const QRectF &area) {
        chartstyle::fitLogAxisLabels(m_timeX, area.width());
        setLogRange(m_timeY, m_timeRange.first, m_timeRange.second,
                    labelsThatFit(m_timeY, area.height()));
    });
    connect(memoryChart, &QChart::plotAreaChanged, this, [this](const QRectF &area) {
        chartstyle::fitLogAxisLabels(m_memoryX, area.width());
        setLogRange(m_memoryY, m_memoryRange.first, m_memoryRange.second,
                    labelsThatFit(m_memoryY, area.height()));
    });
    timeChart->addAxis(m_timeY, Qt::AlignLeft);
    m_memoryX = makeLogAxis(memoryChart, 2, tr("n (log₂ axis)"));
    m_memoryX->setRange(100, 20000);
    m_memoryY = makeLogAxis(memoryChart, 10, tr("MiB"));
    m_memoryY->setRange(0.01, 10000);
    memoryChart->addAxis(m_memoryX, Qt::AlignBottom);
    memoryChart->addAxis(m_memoryY, Qt::AlignLeft);

    for (const KernelStyle &k : kernelStyles()) {
        const QString name = QString::fromLatin1(k.name);
        auto *time = new QLineSeries(timeChart);
        time->setName(name);
        time->setPointsVisible(true);
        time->setPen(chartstyle::seriesPen(k.color));
        time->setColor(k.color);
        auto *fit = new QLineSeries(timeChart);
        fit->setName(tr("%1 fit").arg(name));
        fit->setPen(chartstyle::seriesPen(k.color, 1.2, Qt::DashLine));
        auto *memory = new QLineSeries(memoryChart);
        memory->setName(name);
        memory->setPointsVisible(true);
        memory->setPen(chartstyle::seriesPen(k.color, 1.5));
        memory->setColor(k.color);
        timeChart->addSeries(time);
        timeChart->addSeries(fit);
        memoryChart->addSeries(memory);
        for (QLineSeries *s : {time, fit}) {
            s->attachAxis(m_timeX);
            s->attachAxis(m_timeY);
        }
        memory->attachAxis(m_memoryX);
        memory->attachAxis(m_memoryY);
        hideFromLegend(timeChart, fit);
        m_time.append(time);
        m_fit.append(fit);
        m_memory.append(memory);

        connect(time, &QXYSeries::hovered, this, [this, name](const QPointF &p, bool state) {
            if (state)
                QToolTip::showText(
                    QCursor::pos(),
                    tr("%1, n = %2: %3").arg(name).arg(p.x()).arg(secondsText(p.y())), m_timeView);
            else
                QToolTip::hideText();
        });
        connect(memory, &QXYSeries::hovered, this, [this, name](const QPointF &p, bool state) {
            if (state)
                QToolTip::showText(QCursor::pos(),
                                   tr("%1, n = %2: %3").arg(name).arg(p.x()).arg(mibText(p.y())),
                                   m_memoryView);
            else
                QToolTip::hideText();
        });
    }
    m_budgetLine = new QLineSeries(memoryChart);
    m_budgetLine->setName(tr("budget"));
    m_budgetLine->setPen(chartstyle::seriesPen(chartstyle::markerColor(this), 1.2, Qt::DashLine));
    m_refused = new QScatterSeries(memoryChart);
    m_refused->setName(tr("refused (would need)"));
    m_refused->setMarkerShape(QScatterSeries::MarkerShapeCircle);
    m_refused->setMarkerSize(9);
    m_refused->setColor(Qt::transparent);
    m_refused->setBorderColor(chartstyle::unscaledColor());
    memoryChart->addSeries(m_budgetLine);
    memoryChart->addSeries(m_refused);
    for (QXYSeries *s : std::initializer_list<QXYSeries *> {m_budgetLine, m_refused}) {
        s->attachAxis(m_memoryX);
        s->attachAxis(m_memoryY);
    }
    connect(m_refused, &QXYSeries::hovered, this, [this](const QPointF &p, bool state) {
        if (state)
            QToolTip::showText(
                QCursor::pos(),
                tr("n = %1 not run: would need %2, over the budget").arg(p.x()).arg(mibText(p.y())),
                m_memoryView);
        else
            QToolTip::hideText();
    });

    connect(m_runButton, &QPushButton::clicked, this, &TimingChart::run);
    connect(m_cancelButton, &QPushButton::clicked, this, &TimingChart::cancel);
    // Progress is reported from the worker and reaches the bar through the runner.
    connect(&m_jobs, &JobRunner::progressChanged, this,
            [this](double overall) { m_progress->setValue(int(std::lround(overall * 1000))); });
}

TimingChart::~TimingChart() = default; // m_jobs cancels and waits

std::vector<int> TimingChart::sequenceLengths() const
{
    std::vector<int> ns;
    const int maxN = m_maxNCombo->currentData().toInt();
    for (int n = 128; n <= maxN; n *= 2)
        ns.push_back(n);
    return ns;
}

std::size_t TimingChart::memoryBudget() const
{
    return std::size_t(m_budgetCombo->currentData().toInt()) << 20;
}

std::size_t TimingChart::runBytes(const QString &kernel, int n, int d, bool float32)
{
    const std::size_t element = float32 ? sizeof(float) : sizeof(double);
    const KernelKind kind = kernelFromName(kernel.toStdString());
    return kernelExtraBytes(kind, n, n, d, element) + 4 * std::size_t(n) * std::size_t(d) * element;
}

QStringList TimingChart::checkedKernels() const
{
    QStringList kernels;
    for (int k = 0; k < m_kernelChecks.size(); ++k)
        if (m_kernelChecks[k]->isChecked())
            kernels << QString::fromLatin1(kernelStyles()[std::size_t(k)].name);
    return kernels;
}

void TimingChart::run()
{
    if (m_running)
        return;
    const std::vector<int> ns = sequenceLengths();
    const int d = m_dSpin->value();
    const bool float32 = m_float32Check->isChecked();
    const int repeats = m_repeatsSpin->value();
    const std::size_t budget = memoryBudget();
    const QStringList kernels = checkedKernels();
    if (kernels.isEmpty()) {
        setStatus(tr("Check at least one kernel to measure."));
        return;
    }
    const QString dtype = float32 ? QStringLiteral("float32") : QStringLiteral("float64");
    const double elementBytes = float32 ? 4.0 : 8.0;

    // Plan in the GUI thread: which n each kernel runs, which it refuses and why.
    std::vector<TimingPlan> plans;
    double totalWeight = 0;
    for (const QString &kernel : kernels) {
        TimingPlan plan;
        plan.series.kernel = kernel;
        QStringList reasons;
        double factor = 1.0;
        for (const KernelStyle &k : kernelStyles())
            if (kernel == QLatin1String(k.name))
                factor = k.costFactor;
        for (int n : ns) {
            const double needMib = double(runBytes(kernel, n, d, float32)) / kMiB;
            if (runBytes(kernel, n, d, float32) > budget) {
                plan.series.refusedN.push_back(n);
                plan.series.refusedMib.push_back(needMib);
                const double matrixMib = double(n) * double(n) * elementBytes / kMiB;
                QString why = tr("n = %1: needs %2").arg(n).arg(mibText(needMib));
                if (kernel == QLatin1String("materialized"))
                    why += tr(" (its n × n %1 score matrix: %2)")
                               .arg(dtype)
                               .arg(mibText(matrixMib));
                reasons << why;
            } else if (kernel == QLatin1String("loop") && n > loopMaxN) {
                plan.series.refusedN.push_back(n);
                plan.series.refusedMib.push_back(needMib);
            } else {
                plan.ns.push_back(n);
                plan.weight += double(n) * double(n) * factor;
            }
        }
        if (!reasons.isEmpty())
            plan.series.note = tr("%1 refused at %2 > %3 budget; streaming needs %4 at n = %5.")
                                   .arg(kernel, reasons.join(QStringLiteral("; ")),
                                        mibText(double(budget) / kMiB),
                                        mibText(double(runBytes(QStringLiteral("streaming"),
                                                                ns.back(), d, float32))
                                                / kMiB))
                                   .arg(ns.back());
        else if (!plan.series.refusedN.empty())
            plan.series.note
                = tr("loop stops at n = %1 (one run beyond takes tens of seconds).").arg(loopMaxN);
        totalWeight += plan.weight;
        plans.push_back(std::move(plan));
    }

    m_progress->setValue(0);
    setRunning(true);
    setStatus(tr("Measuring %1 for n = %2 … %3 (d = %4, %5, %6 runs each)…")
                  .arg(kernels.join(QStringLiteral(", ")))
                  .arg(ns.front())
                  .arg(ns.back())
                  .arg(d)
                  .arg(dtype)
                  .arg(repeats));
    TimingRequest request {std::move(plans), d, float32, repeats, budget, totalWeight};
    m_jobs.run([request](const JobContext &job) { return measureTiming(request, job); },
               [this](TimingOutcome out) { onFinished(out); });
}

void TimingChart::cancel()
{
    m_jobs.requestStop(); // the points measured so far still arrive
    if (m_running)
        setStatus(tr("Cancelling… (the run in progress finishes first)"));
}

void TimingChart::setRunning(bool running)
{
    if (running == m_running)
        return;
    m_running = running;
    // Disabling the widget that has the focus would pass it to the next focusable widget, which
    // the dock's scroll area then scrolls into view (the plots, below): Run, Cancel and the
    // progress bar would scroll away. So the focus goes to Cancel while running and back to Run
    // after, each enabled before the other is disabled.
    QList<QWidget *> settings {m_runButton,    m_maxNCombo,   m_dSpin,
                               m_float32Check, m_repeatsSpin, m_budgetCombo};
    for (QCheckBox *check : std::as_const(m_kernelChecks))
        settings.append(check);
    QWidget *focus = QApplication::focusWidget();
    const bool focusInSettings = focus && settings.contains(focus);
    const bool focusOnCancel = focus == m_cancelButton;
    if (running)
        m_cancelButton->setEnabled(true);
    else
        m_runButton->setEnabled(true);
    if (running && focusInSettings)
        m_cancelButton->setFocus(Qt::OtherFocusReason);
    else if (!running && focusOnCancel)
        m_runButton->setFocus(Qt::OtherFocusReason);
    for (QWidget *w : std::as_const(settings))
        w->setEnabled(!running);
    m_cancelButton->setEnabled(running);
    emit runningChanged(running);
}

void TimingChart::onFinished(const TimingOutcome &out)
{
    setRunning(false);
    if (out.cancelled && !out.data) {
        m_progress->setValue(0);
        setStatus(tr("Cancelled. The previous measurement (if any) is still shown."));
        return;
    }
    if (out.cancelled) {
        // The points measured before the cancel replace the previous measurement.
        m_progress->setValue(0);
        m_data = out.data;
        plot();
        const QString prefix = tr("Cancelled — the points measured before it: ");
        setStatus(prefix + m_statusPlain, prefix.toHtmlEscaped() + m_status->text());
        return;
    }
    if (!out.error.isEmpty()) {
        m_progress->setValue(0);
        setStatus(tr("Timing failed: %1").arg(out.error));
        m_status->setToolTip(out.error);
        return;
    }
    m_progress->setValue(m_progress->maximum());
    m_data = out.data;
    plot();
    emit finished(m_data);
}

QString TimingChart::statusText() const
{
    return m_statusPlain;
}

void TimingChart::setStatus(const QString &plain, const QString &html)
{
    m_statusPlain = plain;
    m_status->setText(html.isEmpty() ? plain.toHtmlEscaped() : html);
}

void TimingChart::plot()
{
    if (!m_data)
        return;
    const TimingData &data = *m_data;
    double nMin = 1e300, nMax = 0, tMin = 1e300, tMax = 0, mMin = 1e300, mMax = 0;
    QStringList parts, partsHtml, notes, cells;
    int noisy = 0; // kernels whose large-n fit is flagged
    double fitFrom = 0, fitTo = 0; // the n the fits cover
    QList<QPointF> refused;
    for (int k = 0; k < int(kernelStyles().size()); ++k) {
        const QString name = QString::fromLatin1(kernelStyles()[std::size_t(k)].name);
        const TimingSeries *s = data.series(name);
        QList<QPointF> time, fit, memory;
        if (s) {
            for (std::size_t i = 0; i < s->n.size(); ++i) {
                nMin = std::min(nMin, s->n[i]);
                nMax = std::max(nMax, s->n[i]);
                if (s->seconds[i] > 0) {
                    time.append(QPointF(s->n[i], s->seconds[i]));
                    tMin = std::min(tMin, s->seconds[i]);
                    tMax = std::max(tMax, s->seconds[i]);
                }
                if (s->extraMib[i] > 0) {
                    memory.append(QPointF(s->n[i], s->extraMib[i]));
                    mMin = std::min(mMin, s->extraMib[i]);
                    mMax = std::max(mMax, s->extraMib[i]);
                }
                cells << tr("%1, n = %2: %3, %4 extra")
                             .arg(name)
                             .arg(s->n[i])
                             .arg(secondsText(s->seconds[i]))
                             .arg(mibText(s->extraMib[i]));
            }
            for (std::size_t i = 0; i < s->refusedN.size(); ++i) {
                if (s->refusedMib[i] * kMiB <= double(data.budgetBytes))
                    continue; // skipped for time (the loop), not for memory
                refused.append(QPointF(s->refusedN[i], s->refusedMib[i]));
                nMax = std::max(nMax, s->refusedN[i]);
                mMax = std::max(mMax, s->refusedMib[i]);
            }
            // Fitted power law through the fitted points' geometric mean with the fitted slope.
            QList<QPointF> fitted;
            for (const QPointF &p : std::as_const(time))
                if (p.x() >= s->fitFromN)
                    fitted.append(p);
            if (fitted.size() >= 2 && std::isfinite(s->exponent)) {
                double lx = 0, ly = 0;
                for (const QPointF &p : std::as_const(fitted)) {
                    lx += std::log(p.x());
                    ly += std::log(p.y());
                }
                lx /= fitted.size();
                ly /= fitted.size();
                for (const QPointF &p : {fitted.front(), fitted.back()})
                    fit.append(QPointF(p.x(), std::exp(ly + s->exponent * (std::log(p.x()) - lx))));
            }
            if (!s->n.empty()) {
                QString part;
                if (std::isfinite(s->exponent)) {
                    part += tr(" ∝ n^%1").arg(s->exponent, 0, 'f', 2);
                    if (s->noisyFit) {
                        part += std::isfinite(s->rSquared) && s->rSquared < 0.98
                            ? tr(" ⚠ noisy fit (R² = %1)").arg(s->rSquared, 0, 'f', 2)
                            : tr(" ⚠ noisy fit");
                        ++noisy;
                    }
                    fitFrom = std::max(fitFrom, s->fitFromN);
                    fitTo = std::max(fitTo, s->n.back());
                }
                if (!s->refusedN.empty() && s->refusedMib.back() * kMiB <= double(data.budgetBytes))
                    part += tr(" (to n = %1)").arg(s->n.back()); // the loop's limit
                parts << name + part;
                // The status line doubles as the legend: each kernel's name in its colour.
                partsHtml << QStringLiteral("<span style=\"color:%1\">■ %2</span>%3")
                                 .arg(kernelStyles()[std::size_t(k)].color.name(), name,
                                      part.toHtmlEscaped());
                cells << tr("%1: time ∝ n^%2 for n ≥ %3, n^%4 over every n")
                             .arg(name)
                             .arg(s->exponent, 0, 'f', 2)
                             .arg(s->fitFromN)
                             .arg(s->exponentAll, 0, 'f', 2);
            }
            if (!s->note.isEmpty())
                (s->refusedMib.back() * kMiB > double(data.budgetBytes) ? notes : cells) << s->note;
        }
        m_time[k]->replace(time);
        m_fit[k]->replace(fit);
        m_memory[k]->replace(memory);
        m_time[k]->setName(s && std::isfinite(s->exponent) && time.size() >= 2
                               ? tr("%1 ∝ n^%2").arg(name).arg(s->exponent, 0, 'f', 2)
                               : name);
        for (QLegendMarker *m : m_timeView->chart()->legend()->markers(m_time[k]))
            m->setVisible(s != nullptr);
    }
    m_refused->replace(refused);
    const double budgetMib = double(data.budgetBytes) / kMiB;
    if (nMax > 0 && nMin <= nMax) {
        m_budgetLine->replace({QPointF(nMin / 1.3, budgetMib), QPointF(nMax * 1.3, budgetMib)});
        setLogRange(m_timeX, nMin, nMax);
        setLogRange(m_memoryX, nMin, nMax);
        chartstyle::fitLogAxisLabels(m_timeX, m_timeView->chart()->plotArea().width());
        chartstyle::fitLogAxisLabels(m_memoryX, m_memoryView->chart()->plotArea().width());
    }
    if (tMax > 0) {
        m_timeRange = {tMin, tMax};
        setLogRange(m_timeY, tMin, tMax,
                    labelsThatFit(m_timeY, m_timeView->chart()->plotArea().height()));
    }
    if (mMax > 0) {
        m_memoryRange = {std::min(mMin, budgetMib), std::max(mMax, budgetMib)};
        setLogRange(m_memoryY, m_memoryRange.first, m_memoryRange.second,
                    labelsThatFit(m_memoryY, m_memoryView->chart()->plotArea().height()));
    }

    const QString dtype = data.float32 ? QStringLiteral("float32") : QStringLiteral("float64");
    m_memoryY->setTitleText(tr("MiB"));
    QString text = parts.join(QStringLiteral(" · "));
    QString html = partsHtml.join(QStringLiteral(" · "));
    // Where the exponents come from, and whether to trust them.
    QString where;
    if (fitTo > 0)
        where = fitFrom >= nSquaredFromN
            ? tr("Fitted over n = %1 … %2, where the n² work dominates.").arg(fitFrom).arg(fitTo)
            : tr("Fitted over n = %1 … %2: below n = %3 fixed costs still count, run to larger n "
                 "for the n² slope.")
                  .arg(fitFrom)
                  .arg(fitTo)
                  .arg(nSquaredFromN);
    if (noisy > 0)
        where += tr(" A noisy fit (⚠) does not follow one power law — other programs were busy: "
                    "run again with more runs per n.");
    if (!where.isEmpty()) {
        text += QLatin1Char('\n') + where.trimmed();
        html += QStringLiteral("<br>") + where.trimmed().toHtmlEscaped();
    }
    if (!notes.isEmpty()) {
        text += QLatin1Char('\n') + notes.join(QLatin1Char('\n'));
        html += QStringLiteral("<br>") + notes.join(QStringLiteral("<br>")).toHtmlEscaped();
    }
    setStatus(text, html);
    m_status->setToolTip(tr("%1, d = %2, fastest of %3 runs after a warm-up. Exponents fitted to "
                            "each kernel's largest n (n ≥ n_max / 8), where the n² work "
                            "dominates the fixed costs; 2 means time ∝ n².\n%4")
                             .arg(dtype)
                             .arg(data.d)
                             .arg(data.repeats)
                             .arg(cells.join(QLatin1Char('\n'))));
}

} // namespace attn
