#include "ui/panels/inductionpanel.h"

#include "ui/panels/spinboxes.h"

#include "ui/charts/chartstyle.h"
#include "ui/panels/wheelguard.h"
#include "ui/render/colormap.h"
#include "ui/session/inductionrunner.h"

#include <QChart>
#include <QChartView>
#include <QComboBox>
#include <QDoubleSpinBox>
#include <QFormLayout>
#include <QGroupBox>
#include <QHBoxLayout>
#include <QLabel>
#include <QLineSeries>
#include <QPainter>
#include <QPushButton>
#include <QScrollArea>
#include <QScrollBar>
#include <QSpinBox>
#include <QSplitter>
#include <QTimer>
#include <QVBoxLayout>
#include <QValueAxis>

#include <algorithm>
#include <cmath>

namespace attn {

using namespace training;

// ---- AttentionMapView ----

AttentionMapView::AttentionMapView(Pattern pattern, QWidget *parent)
    : QWidget(parent)
    , m_pattern(pattern)
{
    setSizePolicy(QSizePolicy::Expanding, QSizePolicy::Expanding);
}

void AttentionMapView::setMatrix(const MatrixD &weights, const QString &title)
{
    m_weights = weights;
    m_title = title;
    update();
}

void AttentionMapView::setTokens(const std::vector<std::int64_t> &tokens)
{
    m_tokens = tokens;
    update();
}

void AttentionMapView::paintEvent(QPaintEvent *)
{
    QPainter p(this);
    p.fillRect(rect(), palette().window());
    const QFontMetrics fm(font());
    p.setPen(palette().windowText().color());
    const QRect titleRect(0, 0, width(), fm.height() + 4);
    p.drawText(titleRect, Qt::AlignCenter, m_title);
    const Index n = m_weights.rows();
    if (n == 0 || m_weights.cols() != n)
        return;
    // The square of cells, with room for the token labels on the left and the top and for the
    // axis names.
    QFont small = font();
    small.setPointSizeF(std::max(6.0, font().pointSizeF() * 0.75));
    const QFontMetrics sm(small);
    // Room for the token labels only when the cells are tall enough to carry them.
    const int labelWidth = sm.horizontalAdvance(QStringLiteral("000")) + 4;
    const int roughSide = std::min(width() - labelWidth - sm.height() - 12,
                                   height() - titleRect.bottom() - sm.height() - labelWidth - 8);
    const bool labels = Index(m_tokens.size()) == n && roughSide >= sm.height() * 0.9 * double(n);
    const int labelRoom = labels ? labelWidth : 4;
    const int top = titleRect.bottom() + sm.height() + labelRoom;
    const int margin = labelRoom + sm.height() + 4;
    const int side = std::max(0, std::min(width() - margin - 8, height() - top - 8));
    const int left = margin + std::max(0, (width() - margin - 8 - side) / 2); // centred
    const double cell = double(side) / double(n);
    if (cell <= 0)
        return;
    const Colormap colors(ColormapId::Viridis);
    QImage cells {int(n), int(n), QImage::Format_RGB32};
    for (Index i = 0; i < n; ++i)
        for (Index j = 0; j < n; ++j)
            cells.setPixel(int(j), int(i), colors.map(std::clamp(m_weights(i, j), 0.0, 1.0)));
    const QRectF square(left, top, side, side);
    p.drawImage(square, cells);
    // The cells a perfect head of this kind fills.
    p.setPen(QPen(QColor(255, 255, 255, 200), 1.0));
    p.setBrush(Qt::NoBrush);
    const Index N = n / 2;
    for (Index i = 0; i < n; ++i) {
        Index j = -1;
        if (m_pattern == Pattern::PreviousToken && i >= 1)
            j = i - 1;
        if (m_pattern == Pattern::Induction && i >= N)
            j = i - N + 1;
        if (j >= 0)
            p.drawRect(QRectF(left + double(j) * cell, top + double(i) * cell, cell, cell));
    }
    // Token ids along both sides when there is room for them.
    p.setFont(small);
    p.setPen(palette().windowText().color());
    if (labels) {
        for (Index i = 0; i < n; ++i) {
            const QString t = QString::number(m_tokens[std::size_t(i)]);
            p.drawText(QRectF(left - labelRoom, top + double(i) * cell, labelRoom - 3, cell),
                       Qt::AlignRight | Qt::AlignVCenter, t);
            p.save();
            p.translate(left + double(i) * cell, top - 3);
            p.rotate(-90);
            p.drawText(QRectF(0, 0, labelRoom - 3, cell), Qt::AlignLeft | Qt::AlignVCenter, t);
            p.restore();
        }
    }
    p.drawText(QRectF(left, titleRect.bottom(), side, sm.height()), Qt::AlignCenter,
               tr("key j (token ids)"));
    p.save();
    p.translate(std::max(0, left - labelRoom - sm.height() - 2), top + side);
    p.rotate(-90);
    p.drawText(QRectF(0, 0, side, sm.height()), Qt::AlignCenter, tr("query i"));
    p.restore();
}

// ---- InductionPanel ----

namespace {

QLineSeries *series(const QString &name, const QColor &color, Qt::PenStyle style = Qt::SolidLine)
{
    auto *s = new QLineSeries;
    s->setName(name);
    s->setPen(chartstyle::seriesPen(color, 2.0, style));
    return s;
}

} // namespace

InductionPanel::InductionPanel(QWidget *parent)
    : QWidget(parent)
    , m_runner(new InductionRunner(this))
    , m_frameTimer(new QTimer(this))
{
    m_runner->setObjectName(QStringLiteral("inductionRunner"));
    m_frameTimer->setSingleShot(true);
    connect(m_frameTimer, &QTimer::timeout, this, &InductionPanel::refresh);

    // The curves: losses on the left axis (nats), the scores and the accuracy on the right.
    m_chart = new QChart;
    m_chart->setTitle(tr("Loss on the repeated half (left), the best heads' scores and the "
                         "accuracy (right)"));
    m_loss = series(tr("held-out loss"), chartstyle::scaledColor());
    m_trainLoss = series(tr("training loss"), QColor(127, 127, 127), Qt::DashLine);
    m_accuracy = series(tr("accuracy"), QColor(230, 159, 0));
    m_induction = series(tr("induction (layer 1)"), chartstyle::unscaledColor());
    m_previous = series(tr("previous token (layer 0)"), chartstyle::thirdColor());
    m_stepAxis = new QValueAxis;
    m_stepAxis->setTitleText(tr("step"));
    m_stepAxis->setLabelFormat(QStringLiteral("%d"));
    m_lossAxis = new QValueAxis;
    m_lossAxis->setTitleText(tr("nats"));
    m_scoreAxis = new QValueAxis;
    m_scoreAxis->setTitleText(tr("score"));
    m_scoreAxis->setRange(0, 1);
    m_chart->addAxis(m_stepAxis, Qt::AlignBottom);
    m_chart->addAxis(m_lossAxis, Qt::AlignLeft);
    m_chart->addAxis(m_scoreAxis, Qt::AlignRight);
    for (QLineSeries *s : {m_loss, m_trainLoss}) {
        m_chart->addSeries(s);
        s->attachAxis(m_stepAxis);
        s->attachAxis(m_lossAxis);
    }
    for (QLineSeries *s : {m_induction, m_previous, m_accuracy}) {
        m_chart->addSeries(s);
        s->attachAxis(m_stepAxis);
        s->attachAxis(m_scoreAxis);
    }
    m_chart->legend()->setAlignment(Qt::AlignBottom);
    m_chartView = new QChartView(m_chart);
    m_chartView->setObjectName(QStringLiteral("inductionChart"));
    m_chartView->setRenderHint(QPainter::Antialiasing);
    m_chartView->setMinimumSize(300, 260);
    chartstyle::applyTheme(m_chart, this);

    m_previousMap = new AttentionMapView(AttentionMapView::Pattern::PreviousToken);
    m_previousMap->setObjectName(QStringLiteral("inductionPreviousTokenMap"));
    m_previousMap->setToolTip(tr("The layer-0 head with the highest previous-token score, on "
                                 "the first held-out sequence; outlined: key i − 1"));
    m_inductionMap = new AttentionMapView(AttentionMapView::Pattern::Induction);
    m_inductionMap->setObjectName(QStringLiteral("inductionHeadMap"));
    m_inductionMap->setToolTip(tr("The layer-1 head with the highest induction score, on the "
                                  "first held-out sequence; outlined: key i − N + 1, the token "
                                  "after the first occurrence of the query's token"));

    QWidget *controls = buildControls();
    auto *maps = new QWidget;
    auto *mapsLayout = new QHBoxLayout(maps);
    mapsLayout->setContentsMargins(0, 0, 0, 0);
    mapsLayout->addWidget(m_previousMap, 1);
    mapsLayout->addWidget(m_inductionMap, 1);
    auto *split = new QSplitter(Qt::Vertical);
    split->setObjectName(QStringLiteral("inductionSplitter"));
    split->addWidget(m_chartView);
    split->addWidget(maps);
    split->setStretchFactor(0, 1);
    split->setStretchFactor(1, 1);
    split->setChildrenCollapsible(false);
    auto *transport = new QHBoxLayout;
    transport->addWidget(m_play);
    transport->addWidget(m_reset);
    transport->addWidget(m_status, 1);
    auto *right = new QVBoxLayout;
    right->addLayout(transport);
    right->addWidget(split, 1);

    auto *scroll = new QScrollArea;
    scroll->setWidget(controls);
    scroll->setWidgetResizable(true);
    scroll->setFrameShape(QFrame::NoFrame);
    scroll->setHorizontalScrollBarPolicy(Qt::ScrollBarAlwaysOff);
    scroll->setFixedWidth(scroll->widget()->sizeHint().width()
                          + scroll->verticalScrollBar()->sizeHint().width());
    auto *layout = new QHBoxLayout(this);
    layout->addWidget(scroll);
    layout->addLayout(right, 1);

    connect(m_runner, &InductionRunner::progressed, this, &InductionPanel::scheduleRefresh);
    connect(m_runner, &InductionRunner::restarted, this, [this] {
        m_shownPoints = 0;
        for (QLineSeries *s : {m_loss, m_trainLoss, m_accuracy, m_induction, m_previous})
            s->clear();
        m_previousMap->setTokens(m_runner->firstHeldOutSequence());
        m_inductionMap->setTokens(m_runner->firstHeldOutSequence());
        m_previousMap->setMatrix({}, tr("Layer 0: previous-token head"));
        m_inductionMap->setMatrix({}, tr("Layer 1: induction head"));
        scheduleRefresh();
    });
    connect(m_runner, &InductionRunner::playingChanged, this, &InductionPanel::updateEnabled);
    connect(m_runner, &InductionRunner::stopped, this, [this](const QString &reason) {
        emit message(tr("Induction head: %1").arg(reason));
        scheduleRefresh();
    });
    setMinimumSize(360, 300);
    showConfig(m_runner->config());
    m_runner->setStepLimit(m_steps->value());
    m_previousMap->setTokens(m_runner->firstHeldOutSequence());
    m_inductionMap->setTokens(m_runner->firstHeldOutSequence());
    m_previousMap->setMatrix({}, tr("Layer 0: previous-token head"));
    m_inductionMap->setMatrix({}, tr("Layer 1: induction head"));
    m_sinceFrame.start();
    refresh();
}

InductionPanel::~InductionPanel() = default;

QWidget *InductionPanel::buildControls()
{
    auto *box = new QWidget;
    auto *column = new QVBoxLayout(box);
    auto *intro = new QLabel(
        tr("Experiment E17 live: a two-layer attention-only transformer learns to continue "
           "random tokens repeated twice. Watch the loss stay flat, then fall as a layer-0 "
           "head starts attending to the previous token and a layer-1 head to the token after "
           "the current token's first occurrence (Olsson et al. 2022)."));
    intro->setWordWrap(true);
    column->addWidget(intro);

    auto *model = new QGroupBox(tr("Model and data"));
    auto *form = new QFormLayout(model);
    m_seed = intBox(0, 1000000,
                    tr("Initial weights from default_rng(seed), batches from seed "
                       "+ 1, held-out sequences from seed + 2"));
    m_vocab = intBox(2, 4096, tr("Vocabulary size V (chance loss ln V)"));
    m_dModel = intBox(4, 256, tr("Model width d_model"));
    m_heads = intBox(1, 16, tr("Heads per layer (must divide d_model)"));
    m_repeat = intBox(2, 256,
                      tr("N: the held-out sequences' half, and the longest training "
                         "half"));
    m_minRepeat = intBox(2, 256,
                         tr("The shortest training half: N varies per batch so that "
                            "only the tokens, not the positions, say where the repeat "
                            "is"));
    m_batch = intBox(1, 1024, tr("Training sequences per step"));
    form->addRow(tr("Seed"), m_seed);
    form->addRow(tr("Vocabulary V"), m_vocab);
    form->addRow(tr("d_model"), m_dModel);
    form->addRow(tr("Heads per layer"), m_heads);
    form->addRow(tr("Repeat N"), m_repeat);
    form->addRow(tr("Shortest N"), m_minRepeat);
    form->addRow(tr("Batch"), m_batch);
    column->addWidget(model);

    auto *opt = new QGroupBox(tr("Training (Adam)"));
    auto *optForm = new QFormLayout(opt);
    m_lr = realBox(1e-5, 1.0, 0.001, 5, tr("Adam's learning rate"));
    m_initStd = realBox(0.0, 10.0, 0.01, 3,
                        tr("Standard deviation of the normal initial "
                           "weights (biases zero)"));
    m_dtype = new QComboBox;
    m_dtype->addItem(QStringLiteral("float32"));
    m_dtype->addItem(QStringLiteral("float64"));
    m_dtype->setToolTip(tr("Training precision"));
    m_steps = intBox(1, 1000000, tr("Play stops after this many steps"));
    optForm->addRow(tr("Learning rate"), m_lr);
    optForm->addRow(tr("Initial std"), m_initStd);
    optForm->addRow(tr("Precision"), m_dtype);
    optForm->addRow(tr("Steps"), m_steps);
    column->addWidget(opt);

    // The text wraps at the settings' width instead of widening the column.
    intro->setFixedWidth(std::max(model->sizeHint().width(), opt->sizeHint().width()));
    m_error = new QLabel;
    m_error->setWordWrap(true);
    m_error->setStyleSheet(QStringLiteral("color: #d60000"));
    m_error->hide();
    column->addWidget(m_error);
    column->addStretch(1);

    for (QSpinBox *b : {m_seed, m_vocab, m_dModel, m_heads, m_repeat, m_minRepeat, m_batch})
        connect(b, &QSpinBox::valueChanged, this, &InductionPanel::applyControls);
    for (QDoubleSpinBox *b : {m_lr, m_initStd})
        connect(b, &QDoubleSpinBox::valueChanged, this, &InductionPanel::applyControls);
    connect(m_dtype, &QComboBox::currentIndexChanged, this, &InductionPanel::applyControls);
    connect(m_steps, &QSpinBox::valueChanged, this, [this](int steps) {
        m_runner->setStepLimit(steps);
        updateEnabled();
    });
    WheelGuard::install(box);

    m_play = new QPushButton(tr("Play"));
    m_play->setObjectName(QStringLiteral("inductionPlay"));
    m_play->setToolTip(tr("Train on a worker thread; the curves and the heads' maps update as "
                          "it goes"));
    m_reset = new QPushButton(tr("Reset"));
    m_reset->setToolTip(tr("Back to step 0 with the same settings"));
    m_status = new QLabel;
    connect(m_play, &QPushButton::clicked, this, [this] {
        if (m_runner->playing())
            m_runner->pause();
        else
            m_runner->play();
    });
    connect(m_reset, &QPushButton::clicked, m_runner, &InductionRunner::reset);
    return box;
}

InductionRunConfig InductionPanel::config() const
{
    InductionRunConfig c;
    c.seed = std::uint64_t(m_seed->value());
    c.vocab = m_vocab->value();
    c.dModel = m_dModel->value();
    c.heads = m_heads->value();
    c.repeat = m_repeat->value();
    c.minRepeat = m_minRepeat->value();
    c.batch = m_batch->value();
    c.learningRate = m_lr->value();
    c.initStd = m_initStd->value();
    c.float32 = m_dtype->currentIndex() == 0;
    return c;
}

void InductionPanel::showConfig(const InductionRunConfig &c)
{
    m_showing = true;
    m_seed->setValue(int(c.seed));
    m_vocab->setValue(int(c.vocab));
    m_dModel->setValue(int(c.dModel));
    m_heads->setValue(int(c.heads));
    m_repeat->setValue(int(c.repeat));
    m_minRepeat->setValue(int(c.minRepeat));
    m_batch->setValue(int(c.batch));
    m_lr->setValue(c.learningRate);
    m_initStd->setValue(c.initStd);
    m_dtype->setCurrentIndex(c.float32 ? 0 : 1);
    m_steps->setValue(int(m_runner->stepLimit()));
    m_showing = false;
}

void InductionPanel::applyControls()
{
    if (m_showing)
        return;
    QString error;
    if (!m_runner->setConfig(config(), &error)) {
        m_error->setText(error);
        m_error->show();
        return;
    }
    m_error->hide();
}

void InductionPanel::updateEnabled()
{
    m_play->setText(m_runner->playing() ? tr("Pause") : tr("Play"));
    refresh();
}

void InductionPanel::scheduleRefresh()
{
    if (m_frameTimer->isActive())
        return;
    const qint64 wait = std::max<qint64>(0, frameInterval - m_sinceFrame.elapsed());
    m_frameTimer->start(int(wait));
}

void InductionPanel::refresh()
{
    m_sinceFrame.restart();
    const std::vector<InductionRunner::Point> &points = m_runner->points();
    for (std::size_t i = m_shownPoints; i < points.size(); ++i) {
        const InductionRunner::Point &p = points[i];
        const double x = double(p.step);
        m_loss->append(x, p.loss);
        m_trainLoss->append(x, p.trainLoss);
        m_accuracy->append(x, p.accuracy);
        m_induction->append(x, p.inductionScore);
        m_previous->append(x, p.previousTokenScore);
    }
    m_shownPoints = points.size();
    const InductionRunConfig &c = m_runner->config();
    m_stepAxis->setRange(0, double(std::max<std::int64_t>(m_runner->stepLimit(), 1)));
    double top = std::log(double(c.vocab));
    for (const InductionRunner::Point &p : points)
        top = std::max({top, p.loss, p.trainLoss});
    const double ceiling = std::ceil(top * 1.02);
    m_lossAxis->setRange(0, ceiling);
    m_lossAxis->setTickCount(int(ceiling) + 1 <= 11 ? int(ceiling) + 1 : 6);

    const InductionEvaluation &e = m_runner->latest();
    if (!e.firstSequenceWeights.empty()) {
        const Index h = c.heads, L = c.layers;
        m_previousMap->setMatrix(e.firstSequenceWeights[std::size_t(e.previousTokenHead)],
                                 tr("Layer 0, head %1: previous-token score %2")
                                     .arg(e.previousTokenHead)
                                     .arg(e.previousTokenScore, 0, 'f', 3));
        m_inductionMap->setMatrix(
            e.firstSequenceWeights[std::size_t((L - 1) * h + e.inductionHead)],
            tr("Layer 1, head %1: induction score %2")
                .arg(e.inductionHead)
                .arg(e.inductionScore, 0, 'f', 3));
    }
    QString status = tr("step %1 of %2").arg(m_runner->stepCount()).arg(m_runner->stepLimit());
    if (!points.empty()) {
        const InductionRunner::Point &p = points.back();
        status += tr(" — loss %1 nats (chance %2), accuracy %3")
                      .arg(p.loss, 0, 'f', 3)
                      .arg(std::log(double(c.vocab)), 0, 'f', 3)
                      .arg(p.accuracy, 0, 'f', 3);
    }
    m_status->setText(status);
}

} // namespace attn
