#include "timingchart.h"

#include "chartstyle.h"

#include <experiments/experiments.h>

#include <QChart>
#include <QChartView>
#include <QCheckBox>
#include <QComboBox>
#include <QCursor>
#include <QHBoxLayout>
#include <QLabel>
#include <QLineSeries>
#include <QLogValueAxis>
#include <QProgressBar>
#include <QPushButton>
#include <QSpinBox>
#include <QToolTip>
#include <QVBoxLayout>
#include <QtConcurrent/QtConcurrentRun>

#include <algorithm>
#include <cmath>
#include <exception>

namespace attn {

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
    for (int n : {512, 1024, 2048, 4096})
        m_maxNCombo->addItem(QString::number(n), n);
    m_maxNCombo->setCurrentIndex(2);
    m_maxNCombo->setToolTip(tr("Largest sequence length measured; n doubles from 128 up to it. "
                               "n = 4096 in float32 needs a 64 MiB score matrix."));
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
    bar->addWidget(m_float32Check);

    auto *repeatsLabel = new QLabel(tr("&Runs:"), this);
    m_repeatsSpin = new QSpinBox(this);
    m_repeatsSpin->setObjectName(QStringLiteral("timingRepeatsSpin"));
    m_repeatsSpin->setRange(1, 20);
    m_repeatsSpin->setValue(3);
    m_repeatsSpin->setToolTip(tr("Timed runs per n; the plot shows their mean."));
    repeatsLabel->setBuddy(m_repeatsSpin);
    bar->addWidget(repeatsLabel);
    bar->addWidget(m_repeatsSpin);
    bar->addStretch(1);
    layout->addLayout(bar);

    auto *runBar = new QHBoxLayout;
    runBar->setContentsMargins(6, 0, 6, 0);
    m_runButton = new QPushButton(tr("Run timing"), this);
    m_runButton->setObjectName(QStringLiteral("timingRunButton"));
    m_runButton->setToolTip(tr("Measure materialized attention for each n in a background thread "
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

    m_status = new QLabel(tr("Press Run to measure time vs n (nothing is hard-coded)."), this);
    m_status->setObjectName(QStringLiteral("timingStatus"));
    m_status->setWordWrap(true);
    m_status->setContentsMargins(6, 0, 6, 0);
    m_status->setTextInteractionFlags(Qt::TextSelectableByMouse);
    layout->addWidget(m_status);

    m_view = new QChartView(this);
    m_view->setRenderHint(QPainter::Antialiasing);
    m_view->setMinimumSize(260, 180);
    m_view->setWhatsThis(tr("Time of materialized attention (scores, softmax, W·V) against n on "
                            "log–log axes. The slope is the exponent: ≈ 2 because the score "
                            "matrix has n² cells (Vaswani et al. 2017, Table 1; EXPERIMENTS.md "
                            "E8). The dashed curve is the score matrix's size in MiB."));
    layout->addWidget(m_view, 1);

    auto *chart = new QChart;
    chart->legend()->setAlignment(Qt::AlignBottom);
    m_view->setChart(chart);
    chartstyle::applyTheme(chart, this);
    m_time = new QLineSeries(chart);
    m_time->setName(tr("mean time (s)"));
    m_time->setPointsVisible(true);
    m_fit = new QLineSeries(chart);
    m_fit->setName(tr("fitted power law"));
    m_mib = new QLineSeries(chart);
    m_mib->setName(tr("score matrix (MiB)"));
    m_mib->setPointsVisible(true);
    chart->addSeries(m_time);
    chart->addSeries(m_fit);
    chart->addSeries(m_mib);
    m_time->setPen(chartstyle::seriesPen(chartstyle::scaledColor()));
    m_time->setColor(chartstyle::scaledColor());
    m_fit->setPen(chartstyle::seriesPen(chartstyle::markerColor(this), 1.2, Qt::DashLine));
    m_mib->setPen(chartstyle::seriesPen(chartstyle::thirdColor(), 1.5, Qt::DotLine));
    m_mib->setColor(chartstyle::thirdColor());

    m_xAxis = new QLogValueAxis(chart);
    m_xAxis->setBase(2);
    m_xAxis->setLabelFormat(QStringLiteral("%g"));
    m_xAxis->setTitleText(tr("n (log₂ axis)"));
    m_xAxis->setRange(100, 5000);
    m_timeAxis = new QLogValueAxis(chart);
    m_timeAxis->setBase(10);
    m_timeAxis->setLabelFormat(QStringLiteral("%g"));
    m_timeAxis->setTitleText(tr("time (s)"));
    m_timeAxis->setRange(1e-5, 1);
    m_mibAxis = new QLogValueAxis(chart);
    m_mibAxis->setBase(10);
    m_mibAxis->setLabelFormat(QStringLiteral("%g"));
    m_mibAxis->setTitleText(tr("MiB"));
    m_mibAxis->setRange(0.01, 100);
    m_mibAxis->setLabelsColor(chartstyle::thirdColor());
    m_mibAxis->setTitleBrush(chartstyle::thirdColor());
    chart->addAxis(m_xAxis, Qt::AlignBottom);
    chart->addAxis(m_timeAxis, Qt::AlignLeft);
    chart->addAxis(m_mibAxis, Qt::AlignRight);
    for (QLineSeries *s : {m_time, m_fit, m_mib})
        s->attachAxis(m_xAxis);
    m_time->attachAxis(m_timeAxis);
    m_fit->attachAxis(m_timeAxis);
    m_mib->attachAxis(m_mibAxis);
    chart->setTitle(tr("<b>Time vs n</b> (not measured yet)"));

    connect(m_time, &QXYSeries::hovered, this, [this](const QPointF &p, bool state) {
        if (state)
            QToolTip::showText(QCursor::pos(), tr("n = %1: %2 s").arg(p.x()).arg(p.y(), 0, 'g', 3),
                               m_view);
        else
            QToolTip::hideText();
    });
    connect(m_mib, &QXYSeries::hovered, this, [this](const QPointF &p, bool state) {
        if (state)
            QToolTip::showText(QCursor::pos(),
                               tr("n = %1: %2 MiB").arg(p.x()).arg(p.y(), 0, 'g', 4), m_view);
        else
            QToolTip::hideText();
    });

    connect(m_runButton, &QPushButton::clicked, this, &TimingChart::run);
    connect(m_cancelButton, &QPushButton::clicked, this, &TimingChart::cancel);
    connect(&m_watcher, &QFutureWatcher<Outcome>::finished, this, &TimingChart::onFinished);
}

TimingChart::~TimingChart()
{
    if (m_cancel)
        m_cancel->store(true);
    m_watcher.disconnect(this);
    m_watcher.waitForFinished();
}

std::vector<int> TimingChart::sequenceLengths() const
{
    std::vector<int> ns;
    const int maxN = m_maxNCombo->currentData().toInt();
    for (int n = 128; n <= maxN; n *= 2)
        ns.push_back(n);
    return ns;
}

void TimingChart::run()
{
    if (m_running)
        return;
    const std::vector<int> ns = sequenceLengths();
    const int d = m_dSpin->value();
    const bool float32 = m_float32Check->isChecked();
    const int repeats = m_repeatsSpin->value();
    m_cancel = std::make_shared<std::atomic<bool>>(false);
    auto cancelFlag = m_cancel;
    // Progress is reported from the worker and reaches the bar by a queued call. The destructor
    // waits for the worker, and calls queued to a deleted object are dropped.
    m_progress->setValue(0);
    setRunning(true);
    m_status->setText(tr("Measuring n = %1 … %2 (d = %3, %4, %5 runs each)…")
                          .arg(ns.front())
                          .arg(ns.back())
                          .arg(d)
                          .arg(float32 ? QStringLiteral("float32") : QStringLiteral("float64"))
                          .arg(repeats));
    m_watcher.setFuture(QtConcurrent::run([this, ns, d, float32, repeats, cancelFlag]() -> Outcome {
        Outcome out;
        try {
            RunContext context;
            context.cancel = cancelFlag.get();
            context.progress = [this](double fraction) {
                QMetaObject::invokeMethod(
                    this,
                    [this, fraction] { m_progress->setValue(int(std::lround(fraction * 1000))); },
                    Qt::QueuedConnection);
            };
            const std::vector<Index> nIndex(ns.begin(), ns.end());
            double exponent = 0;
            const Table table
                = timingSweep(nIndex, d, float32, "materialized", repeats, 0, &exponent, context);
            auto data = std::make_shared<TimingData>();
            data->exponent = exponent;
            data->d = d;
            data->float32 = float32;
            data->repeats = repeats;
            for (std::size_t row = 0; row < table.rowCount(); ++row) {
                data->n.push_back(table.number(row, "n"));
                data->seconds.push_back(table.number(row, "seconds_mean"));
                data->mib.push_back(table.number(row, "mib"));
            }
            out.data = std::move(data);
        } catch (const Cancelled &) {
            out.cancelled = true;
        } catch (const std::exception &e) {
            out.error = QString::fromUtf8(e.what());
        }
        return out;
    }));
}

void TimingChart::cancel()
{
    if (m_cancel)
        m_cancel->store(true);
    if (m_running)
        m_status->setText(tr("Cancelling…"));
}

void TimingChart::setRunning(bool running)
{
    if (running == m_running)
        return;
    m_running = running;
    m_runButton->setEnabled(!running);
    m_cancelButton->setEnabled(running);
    m_maxNCombo->setEnabled(!running);
    m_dSpin->setEnabled(!running);
    m_float32Check->setEnabled(!running);
    m_repeatsSpin->setEnabled(!running);
    emit runningChanged(running);
}

void TimingChart::onFinished()
{
    const Outcome out = m_watcher.result();
    setRunning(false);
    if (out.cancelled) {
        m_progress->setValue(0);
        m_status->setText(tr("Cancelled. The previous measurement (if any) is still shown."));
        return;
    }
    if (!out.error.isEmpty()) {
        m_progress->setValue(0);
        m_status->setText(tr("Timing failed: %1").arg(out.error));
        m_status->setToolTip(out.error);
        return;
    }
    m_progress->setValue(m_progress->maximum());
    m_data = out.data;
    plot();
    emit finished(m_data);
}

void TimingChart::plot()
{
    if (!m_data || m_data->n.empty())
        return;
    const TimingData &d = *m_data;
    QList<QPointF> time, fit, mib;
    double tMin = 1e300, tMax = 0, mMin = 1e300, mMax = 0;
    for (std::size_t i = 0; i < d.n.size(); ++i) {
        if (d.seconds[i] > 0) {
            time.append(QPointF(d.n[i], d.seconds[i]));
            tMin = std::min(tMin, d.seconds[i]);
            tMax = std::max(tMax, d.seconds[i]);
        }
        if (d.mib[i] > 0) {
            mib.append(QPointF(d.n[i], d.mib[i]));
            mMin = std::min(mMin, d.mib[i]);
            mMax = std::max(mMax, d.mib[i]);
        }
    }
    // Fitted line through the geometric mean of the points with the fitted slope.
    if (time.size() >= 2) {
        double lx = 0, ly = 0;
        for (const QPointF &p : time) {
            lx += std::log(p.x());
            ly += std::log(p.y());
        }
        lx /= time.size();
        ly /= time.size();
        for (const QPointF &p : {time.front(), time.back()})
            fit.append(QPointF(p.x(), std::exp(ly + d.exponent * (std::log(p.x()) - lx))));
    }
    m_time->replace(time);
    m_fit->replace(fit);
    m_mib->replace(mib);
    m_fit->setName(tr("fit: time ∝ n^%1").arg(d.exponent, 0, 'f', 2));
    m_xAxis->setRange(d.n.front() / 1.3, d.n.back() * 1.3);
    if (tMax > 0)
        m_timeAxis->setRange(std::pow(10, std::floor(std::log10(tMin))),
                             std::pow(10, std::ceil(std::log10(tMax))));
    if (mMax > 0)
        m_mibAxis->setRange(std::pow(10, std::floor(std::log10(mMin))),
                            std::pow(10, std::ceil(std::log10(mMax))));
    const QString dtype = d.float32 ? QStringLiteral("float32") : QStringLiteral("float64");
    m_view->chart()->setTitle(
        tr("<b>Time vs n: fitted exponent %1</b>").arg(d.exponent, 0, 'f', 2));
    QStringList cells;
    for (std::size_t i = 0; i < d.n.size(); ++i)
        cells << tr("n = %1: %2 s, %3 MiB")
                     .arg(d.n[i])
                     .arg(d.seconds[i], 0, 'g', 3)
                     .arg(d.mib[i], 0, 'g', 4);
    m_status->setText(tr("d = %1, %2, mean of %3 runs · n = %4: %5 s, %6 MiB of scores")
                          .arg(d.d)
                          .arg(dtype)
                          .arg(d.repeats)
                          .arg(d.n.back())
                          .arg(d.seconds.back(), 0, 'g', 3)
                          .arg(d.mib.back(), 0, 'g', 4));
    m_status->setToolTip(tr("Fitted exponent %1 (2 means time ∝ n²).\n%2")
                             .arg(d.exponent, 0, 'f', 2)
                             .arg(cells.join(QLatin1Char('\n'))));
}

} // namespace attn
