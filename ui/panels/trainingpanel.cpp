#include "ui/panels/trainingpanel.h"

#include "ui/panels/spinboxes.h"

#include "ui/charts/trainingchart.h"
#include "ui/panels/inductionpanel.h"
#include "ui/panels/wheelguard.h"
#include "ui/render/figurefile.h"
#include "ui/render/heatmaprenderer.h"
#include "ui/session/sessionparameters.h"
#include "ui/session/trainingrunner.h"
#include "ui/views/figureexport.h"
#include "ui/views/heatmapwidget.h"

#include <QApplication>
#include <QChartView>
#include <QCheckBox>
#include <QComboBox>
#include <QDoubleSpinBox>
#include <QFileDialog>
#include <QFormLayout>
#include <QGridLayout>
#include <QGroupBox>
#include <QHBoxLayout>
#include <QLabel>
#include <QMessageBox>
#include <QPainter>
#include <QPushButton>
#include <QScrollArea>
#include <QScrollBar>
#include <QSlider>
#include <QSpinBox>
#include <QSplitter>
#include <QTabWidget>
#include <QTimer>
#include <QVBoxLayout>

#include <algorithm>
#include <tuple>

namespace attn {

using namespace training;

namespace {

QString runTitle(const QString &name, const RunChoice &run, int dK)
{
    return QStringLiteral("%1: scale %2, lr %3")
        .arg(name, scaleFormula(run.scaleExponent, 1.0, dK), QString::number(run.learningRate));
}

} // namespace

TrainingPanel::TrainingPanel(QWidget *parent)
    : QWidget(parent)
    , m_runner(new TrainingRunner(this))
    , m_frameTimer(new QTimer(this))
{
    m_runner->setObjectName(QStringLiteral("trainingRunner"));
    m_frameTimer->setSingleShot(true);
    m_frameTimer->setTimerType(Qt::PreciseTimer);
    connect(m_frameTimer, &QTimer::timeout, this, &TrainingPanel::refresh);

    m_heatmapA = new HeatmapWidget;
    m_heatmapA->setObjectName(QStringLiteral("trainingHeatmapA"));
    m_heatmapB = new HeatmapWidget;
    m_heatmapB->setObjectName(QStringLiteral("trainingHeatmapB"));
    for (HeatmapWidget *w : {m_heatmapA, m_heatmapB}) {
        HeatmapOptions o = w->options();
        o.showCaption = false; // the run's title is above; exports carry the caption
        o.background = HeatmapOptions().background;
        o.foreground = HeatmapOptions().foreground;
        w->setOptions(o);
        w->setRowStripVisible(false); // the chart needs the height; tooltips show a cell
        w->setMinimumSize(240, 180);
    }
    m_titleA = new QLabel;
    m_titleB = new QLabel;
    for (QLabel *l : {m_titleA, m_titleB}) {
        QFont f = l->font();
        f.setBold(true);
        l->setFont(f);
    }
    m_chart = new TrainingChart;
    m_chart->setObjectName(QStringLiteral("trainingChart"));
    m_chart->setHistory(&m_runner->history());

    m_scrubber = new QSlider(Qt::Horizontal);
    m_scrubber->setObjectName(QStringLiteral("trainingScrubber"));
    m_scrubber->setToolTip(tr("Look back at a recorded step (the probe's weights are recorded "
                              "every few steps; older ones are thinned out to bound memory)"));
    m_scrubLabel = new QLabel;
    m_scrubLabel->setMinimumWidth(fontMetrics().horizontalAdvance(QStringLiteral("step 0000000 ")));
    m_follow = new QCheckBox(tr("Follow"));
    m_follow->setObjectName(QStringLiteral("trainingFollow"));
    m_follow->setToolTip(tr("Show the latest step while training"));
    m_follow->setChecked(true);
    connect(m_scrubber, &QSlider::valueChanged, this, [this](int value) {
        if (m_showing)
            return;
        const auto &snaps = m_runner->history().snapshots();
        if (value >= int(snaps.size()))
            scrubTo(-1);
        else
            scrubTo(snaps[std::size_t(std::max(0, value))].step);
    });
    connect(m_follow, &QCheckBox::toggled, this, [this](bool on) {
        if (m_showing)
            return;
        if (on)
            scrubTo(-1);
        else
            scrubTo(m_runner->stepCount());
    });

    QWidget *controls = buildControls(); // also the transport buttons and the status line
    // Right: A | B heatmaps over the chart, the scrubber below.
    auto *pair = new QWidget;
    auto *pairLayout = new QHBoxLayout(pair);
    pairLayout->setContentsMargins(0, 0, 0, 0);
    for (const auto &[title, map] :
         {std::pair {m_titleA, m_heatmapA}, std::pair {m_titleB, m_heatmapB}}) {
        auto *column = new QVBoxLayout;
        column->addWidget(title);
        column->addWidget(map, 1);
        pairLayout->addLayout(column, 1);
    }
    auto *split = new QSplitter(Qt::Vertical);
    split->setObjectName(QStringLiteral("trainingSplitter"));
    split->addWidget(pair);
    split->addWidget(m_chart);
    split->setStretchFactor(0, 3);
    split->setStretchFactor(1, 2);
    split->setChildrenCollapsible(false);
    auto *scrubRow = new QHBoxLayout;
    scrubRow->addWidget(new QLabel(tr("Recorded steps:")));
    scrubRow->addWidget(m_scrubber, 1);
    scrubRow->addWidget(m_scrubLabel);
    scrubRow->addWidget(m_follow);
    // Above them: Play/Pause, Step, Reset and how far the runs are.
    auto *transport = new QHBoxLayout;
    transport->addWidget(m_play);
    transport->addWidget(m_step);
    transport->addWidget(m_reset);
    transport->addWidget(m_status, 1);
    auto *right = new QVBoxLayout;
    right->addLayout(transport);
    right->addWidget(split, 1);
    right->addLayout(scrubRow);

    auto *scroll = new QScrollArea;
    scroll->setObjectName(QStringLiteral("trainingControlsScroll"));
    scroll->setWidget(controls);
    scroll->setWidgetResizable(true);
    scroll->setFrameShape(QFrame::NoFrame);
    scroll->setHorizontalScrollBarPolicy(Qt::ScrollBarAlwaysOff);
    scroll->setFixedWidth(scroll->widget()->sizeHint().width()
                          + scroll->verticalScrollBar()->sizeHint().width());
    auto *abPage = new QWidget;
    abPage->setObjectName(QStringLiteral("trainingScalePage"));
    auto *abLayout = new QHBoxLayout(abPage);
    abLayout->addWidget(scroll);
    abLayout->addLayout(right, 1);
    // The second page: E17's two-layer attention-only model, trained live on its own worker.
    m_induction = new InductionPanel;
    m_induction->setObjectName(QStringLiteral("inductionPanel"));
    connect(m_induction, &InductionPanel::message, this, &TrainingPanel::message);
    m_pages = new QTabWidget;
    m_pages->setObjectName(QStringLiteral("trainingPages"));
    m_pages->setDocumentMode(true);
    m_pages->addTab(abPage, tr("Scale: runs A and B"));
    m_pages->addTab(m_induction, tr("Induction head (E17)"));
    m_pages->setTabToolTip(0,
                           tr("One attention layer trained twice, A beside B (e.g. scaled "
                              "and unscaled)"));
    m_pages->setTabToolTip(1,
                           tr("A two-layer attention-only transformer learning to continue "
                              "repeated tokens: the phase change as an induction head forms"));
    auto *layout = new QVBoxLayout(this);
    layout->setContentsMargins(0, 0, 0, 0);
    layout->addWidget(m_pages);

    connect(m_runner, &TrainingRunner::progressed, this, &TrainingPanel::scheduleRefresh);
    connect(m_runner, &TrainingRunner::restarted, this, &TrainingPanel::onRestarted);
    connect(m_runner, &TrainingRunner::playingChanged, this, &TrainingPanel::updateEnabled);
    connect(m_runner, &TrainingRunner::stopped, this, [this](const QString &reason) {
        emit message(tr("Training: %1").arg(reason));
        scheduleRefresh();
    });
    // Its minimum must not widen the window or squeeze the attention mode's docks (the page is
    // one of the centre's tabs): below it, the page is cut rather than the window grown.
    setMinimumSize(360, 300);
    showSettings(m_runner->settings());
    onRestarted();
    m_sinceFrame.start();
}

TrainingPanel::~TrainingPanel() = default;

QWidget *TrainingPanel::buildControls()
{
    auto *box = new QWidget;
    auto *column = new QVBoxLayout(box);
    column->setContentsMargins(0, 0, 0, 0);

    auto *task = new QGroupBox(tr("Task"));
    auto *taskForm = new QFormLayout(task);
    m_task = new QComboBox;
    m_task->setObjectName(QStringLiteral("trainingTask"));
    m_task->addItem(tr("associative recall"), int(TaskKind::Recall));
    m_task->addItem(tr("copy k back (causal)"), int(TaskKind::Copy));
    m_task->addItem(tr("average (control)"), int(TaskKind::Average));
    m_task->setToolTip(tr("recall: n key/value pairs and a noisy query key; the target is its "
                          "value.\ncopy: the token k positions back, causal mask, sinusoidal "
                          "positions.\naverage: every target is the mean token (uniform weights "
                          "solve it)."));
    m_n = intBox(1, 256, tr("Pairs (recall) or tokens (copy, average) per sequence"));
    m_batch = intBox(1, 1024, tr("Sequences per batch B (a fresh batch every step)"));
    m_noise = realBox(0, 10, 0.05, 3, tr("Standard deviation of the Gaussian noise"));
    m_offset = intBox(1, 255, tr("Copy: the token k positions back"));
    m_classes = intBox(1, 256, tr("Recall: value classes V (at most d_model / 2)"));
    m_seed = intBox(0, 1000000, tr("Initial weights: seed; batches: seed + 1; probe: seed + 2"));
    taskForm->addRow(tr("Task"), m_task);
    taskForm->addRow(tr("n"), m_n);
    taskForm->addRow(tr("Batch B"), m_batch);
    taskForm->addRow(tr("Noise"), m_noise);
    taskForm->addRow(tr("Offset k"), m_offset);
    taskForm->addRow(tr("Classes V"), m_classes);
    taskForm->addRow(tr("Seed"), m_seed);
    column->addWidget(task);

    auto *model = new QGroupBox(tr("Model"));
    auto *modelForm = new QFormLayout(model);
    m_dModel = intBox(2, 512, tr("d_model (even for recall and copy)"));
    m_dModel->setSingleStep(2);
    m_heads = intBox(1, 64, tr("Heads h (must divide d_model)"));
    m_dK = new QLabel;
    m_optimizer = new QComboBox;
    m_optimizer->addItem(tr("Adam"), int(OptimizerKind::Adam));
    m_optimizer->addItem(tr("SGD"), int(OptimizerKind::Sgd));
    m_dtype = new QComboBox;
    m_dtype->addItem(QStringLiteral("float32"), true);
    m_dtype->addItem(QStringLiteral("float64"), false);
    m_init = new QComboBox;
    m_init->setObjectName(QStringLiteral("trainingInit"));
    m_init->addItem(tr("PyTorch default (xavier)"), int(Initialization::Xavier));
    m_init->addItem(tr("unit-variance q and k"), int(Initialization::UnitVarianceQk));
    m_init->setToolTip(tr("The initial weights A and B share: torch.nn.MultiheadAttention's "
                          "xavier_uniform_, or the same with W_Q and W_K rescaled so that q and "
                          "k have unit-variance components on the first batch (the paper's "
                          "footnote 4 assumption)"));
    m_steps = intBox(1, TrainingSettings::maxSteps, tr("Training stops after this many steps"));
    m_steps->setSingleStep(500);
    m_stopAtLoss = new QCheckBox;
    m_stopAtLoss->setObjectName(QStringLiteral("trainingStopAtLoss"));
    m_stopAtLoss->setToolTip(tr("Pause when the loss falls below the threshold"));
    m_threshold = realBox(0.000001, 10, 0.001, 6,
                          tr("Loss threshold (mean squared error before a step's update)"));
    m_threshold->setObjectName(QStringLiteral("trainingThreshold"));
    auto *thresholdRow = new QHBoxLayout;
    thresholdRow->addWidget(m_stopAtLoss);
    thresholdRow->addWidget(m_threshold, 1);
    m_thresholdRuns = new QComboBox;
    m_thresholdRuns->addItem(tr("both runs below"), false);
    m_thresholdRuns->addItem(tr("either run below"), true);
    m_thresholdRuns->setToolTip(tr("Pause when both A and B have gone below the threshold, or "
                                   "at the first of them"));
    modelForm->addRow(tr("d_model"), m_dModel);
    modelForm->addRow(tr("Heads h"), m_heads);
    modelForm->addRow(tr("d_k"), m_dK);
    modelForm->addRow(tr("Initial weights"), m_init);
    modelForm->addRow(tr("Optimizer"), m_optimizer);
    modelForm->addRow(tr("Precision"), m_dtype);
    modelForm->addRow(tr("Step limit"), m_steps);
    modelForm->addRow(tr("Stop at loss"), thresholdRow);
    modelForm->addRow(tr("Stop when"), m_thresholdRuns);
    column->addWidget(model);

    // Runs A and B side by side: α, the scale it gives, the learning rate.
    auto *runs = new QGroupBox(tr("Runs (same weights, same batches)"));
    auto *grid = new QGridLayout(runs);
    const auto header = [](const QString &text) {
        auto *l = new QLabel(text);
        QFont f = l->font();
        f.setBold(true);
        l->setFont(f);
        return l;
    };
    grid->addWidget(header(tr("A")), 0, 1);
    grid->addWidget(header(tr("B")), 0, 2);
    grid->addWidget(new QLabel(tr("α")), 1, 0);
    grid->addWidget(new QLabel(tr("Scale")), 2, 0);
    grid->addWidget(new QLabel(tr("lr")), 3, 0);
    int col = 1;
    for (auto [alpha, lr, scale] :
         {std::tuple {&m_alphaA, &m_lrA, &m_scaleA}, std::tuple {&m_alphaB, &m_lrB, &m_scaleB}}) {
        *alpha = realBox(0, 2, 0.25, 3,
                         tr("Scale exponent α: scores × d_k^−α (0.5 = 1/√d_k, 0 = unscaled, "
                            "1 = 1/d_k); changes apply mid-run"));
        *lr = realBox(0.00001, 10, 0.001, 5, tr("Learning rate; changes apply mid-run"));
        *scale = new QLabel;
        grid->addWidget(*alpha, 1, col);
        grid->addWidget(*scale, 2, col);
        grid->addWidget(*lr, 3, col);
        ++col;
    }
    grid->setColumnStretch(1, 1);
    grid->setColumnStretch(2, 1);
    column->addWidget(runs);
    m_alphaA->setObjectName(QStringLiteral("trainingAlphaA"));
    m_alphaB->setObjectName(QStringLiteral("trainingAlphaB"));

    m_play = new QPushButton(tr("Play"));
    m_play->setObjectName(QStringLiteral("trainingPlay"));
    m_play->setToolTip(tr("Train both runs on the worker (Pause stops after the current step)"));
    m_step = new QPushButton(tr("Step"));
    m_step->setObjectName(QStringLiteral("trainingStep"));
    m_step->setToolTip(tr("One step of both runs on the same batch"));
    m_reset = new QPushButton(tr("Reset"));
    m_reset->setObjectName(QStringLiteral("trainingReset"));
    m_reset->setToolTip(tr("Back to the initial weights, step 0"));
    connect(m_play, &QPushButton::clicked, this, [this] {
        if (m_runner->playing())
            m_runner->pause();
        else
            m_runner->play();
    });
    connect(m_step, &QPushButton::clicked, m_runner, &TrainingRunner::step);
    connect(m_reset, &QPushButton::clicked, m_runner, &TrainingRunner::reset);

    auto *save = new QHBoxLayout;
    const auto saveButton
        = [this, save](const QString &text, const QString &name, const QString &file, auto write) {
              auto *b = new QPushButton(text);
              b->setToolTip(tr("Save %1").arg(file));
              save->addWidget(b);
              connect(b, &QPushButton::clicked, this, [this, text, name, write] {
                  const QString path = exportFigureInteractive(this, text, name, write);
                  if (!path.isEmpty())
                      emit message(tr("Saved %1").arg(path));
              });
          };
    saveButton(tr("Chart…"), QStringLiteral("training-chart.png"), tr("the chart as PNG or SVG"),
               [this](const QString &path, QString *error) {
                   return exportChart(path, QSize(), 2.0, error);
               });
    saveButton(tr("Heatmaps…"), QStringLiteral("training-heatmaps.png"),
               tr("the heatmaps of A and B as PNG or SVG"),
               [this](const QString &path, QString *error) {
                   return exportHeatmaps(path, heatmapsExportSize(), 2.0, error);
               });
    // The data files: a file dialog, then the writer; its error in a message box.
    const auto dataButton
        = [this, save](const QString &text, const QString &toolTip, const QString &title,
                       const QString &name, const QString &filter, auto write) {
              auto *b = new QPushButton(text);
              b->setToolTip(toolTip);
              save->addWidget(b);
              connect(b, &QPushButton::clicked, this, [this, title, name, filter, write] {
                  const QString path
                      = QFileDialog::getSaveFileName(this, title, exportStartPath(name), filter);
                  if (path.isEmpty())
                      return;
                  QString error;
                  if (!write(path, &error)) {
                      QMessageBox::warning(this, title, error);
                  } else {
                      rememberExportFolder(path);
                      emit message(tr("Saved %1").arg(path));
                  }
              });
          };
    dataButton(
        tr("CSV…"), tr("Save the curves of both runs as CSV, one row per step"),
        tr("Save Training Curves"), QStringLiteral("training-curves.csv"), tr("CSV table (*.csv)"),
        [this](const QString &path, QString *error) { return exportCurvesCsv(path, error); });
    dataButton(tr("NPZ…"),
               tr("Save the run as NumPy .npz: the curves of both runs, the probe's weights per "
                  "head and the parameters under PyTorch's names"),
               tr("Save Training Data"), QStringLiteral("training-run.npz"),
               tr("NumPy archive (*.npz)"),
               [this](const QString &path, QString *error) { return exportDataNpz(path, error); });
    column->addLayout(save);

    m_status = new QLabel;
    m_status->setObjectName(QStringLiteral("trainingStatus"));
    m_status->setWordWrap(true);
    m_status->setTextInteractionFlags(Qt::TextSelectableByMouse);
    m_error = new QLabel;
    m_error->setWordWrap(true);
    m_error->setStyleSheet(QStringLiteral("color: #c0392b"));
    m_error->setVisible(false);
    column->addWidget(m_error);
    column->addStretch(1);

    for (QSpinBox *b : {m_n, m_batch, m_offset, m_classes, m_seed, m_dModel, m_heads, m_steps})
        connect(b, &QSpinBox::valueChanged, this, &TrainingPanel::applyEditedSettings);
    for (QDoubleSpinBox *b : {m_noise, m_alphaA, m_lrA, m_alphaB, m_lrB, m_threshold})
        connect(b, &QDoubleSpinBox::valueChanged, this, &TrainingPanel::applyEditedSettings);
    connect(m_stopAtLoss, &QCheckBox::toggled, this, &TrainingPanel::applyEditedSettings);
    for (QComboBox *b : {m_task, m_optimizer, m_dtype, m_init, m_thresholdRuns})
        connect(b, &QComboBox::currentIndexChanged, this, &TrainingPanel::applyEditedSettings);
    WheelGuard::install(box);
    return box;
}

TrainingSettings TrainingPanel::settings() const
{
    TrainingSettings s = m_runner->settings();
    s.task = TaskKind(m_task->currentData().toInt());
    s.n = m_n->value();
    s.batch = m_batch->value();
    s.noise = m_noise->value();
    s.offset = m_offset->value();
    s.classes = m_classes->value();
    s.seed = quint64(m_seed->value());
    s.dModel = m_dModel->value();
    s.heads = m_heads->value();
    s.optimizer = OptimizerKind(m_optimizer->currentData().toInt());
    s.float32 = m_dtype->currentData().toBool();
    s.init = Initialization(m_init->currentData().toInt());
    s.steps = m_steps->value();
    s.stopAtLoss = m_stopAtLoss->isChecked();
    s.lossThreshold = m_threshold->value();
    s.thresholdEither = m_thresholdRuns->currentData().toBool();
    s.a = {m_alphaA->value(), m_lrA->value()};
    s.b = {m_alphaB->value(), m_lrB->value()};
    return s;
}

bool TrainingPanel::setSettings(const TrainingSettings &settings, QString *error)
{
    if (!m_runner->setSettings(settings, error))
        return false;
    showSettings(settings);
    m_error->setVisible(false);
    scheduleRefresh();
    return true;
}

void TrainingPanel::showSettings(const TrainingSettings &s)
{
    m_showing = true;
    m_task->setCurrentIndex(m_task->findData(int(s.task)));
    m_n->setValue(s.n);
    m_batch->setValue(s.batch);
    m_noise->setValue(s.noise);
    m_offset->setValue(s.offset);
    m_classes->setValue(s.classes);
    m_seed->setValue(int(std::min<quint64>(s.seed, quint64(m_seed->maximum()))));
    m_dModel->setValue(s.dModel);
    m_heads->setValue(s.heads);
    m_optimizer->setCurrentIndex(m_optimizer->findData(int(s.optimizer)));
    m_dtype->setCurrentIndex(s.float32 ? 0 : 1);
    m_init->setCurrentIndex(m_init->findData(int(s.init)));
    m_steps->setValue(s.steps);
    m_stopAtLoss->setChecked(s.stopAtLoss);
    m_threshold->setValue(s.lossThreshold);
    m_thresholdRuns->setCurrentIndex(s.thresholdEither ? 1 : 0);
    m_alphaA->setValue(s.a.scaleExponent);
    m_lrA->setValue(s.a.learningRate);
    m_alphaB->setValue(s.b.scaleExponent);
    m_lrB->setValue(s.b.learningRate);
    m_showing = false;
    updateEnabled();
}

void TrainingPanel::applyEditedSettings()
{
    if (m_showing)
        return;
    QString error;
    const TrainingSettings before = m_runner->settings();
    const TrainingSettings after = settings();
    if (!m_runner->setSettings(after, &error)) {
        m_error->setText(tr("Not applied: %1").arg(error));
        m_error->setVisible(true);
        updateEnabled();
        return;
    }
    m_error->setVisible(false);
    updateEnabled();
    scheduleRefresh();
    if (!(before == after))
        emit settingsEdited(before, after);
}

void TrainingPanel::updateEnabled()
{
    const TrainingSettings s = m_runner->settings();
    m_offset->setEnabled(s.task == TaskKind::Copy);
    m_classes->setEnabled(s.task == TaskKind::Recall);
    m_threshold->setEnabled(s.stopAtLoss);
    m_thresholdRuns->setEnabled(s.stopAtLoss);
    m_dK->setText(s.dModel % s.heads == 0 ? QString::number(s.dK()) : tr("h must divide d_model"));
    m_scaleA->setText(scaleFormula(s.a.scaleExponent, 1.0, s.dK()));
    m_scaleB->setText(scaleFormula(s.b.scaleExponent, 1.0, s.dK()));
    m_titleA->setText(runTitle(tr("A"), s.a, s.dK()));
    m_titleB->setText(runTitle(tr("B"), s.b, s.dK()));
    m_chart->setRunNames(runTitle(tr("A"), s.a, s.dK()), runTitle(tr("B"), s.b, s.dK()));
    const bool playing = m_runner->playing();
    m_play->setText(playing ? tr("Pause") : tr("Play"));
    m_step->setEnabled(!playing);
}

void TrainingPanel::onRestarted()
{
    m_scrubStep = -1;
    m_shownStep = -1;
    m_showing = true;
    m_follow->setChecked(true);
    m_showing = false;
    m_chart->setHistory(&m_runner->history()); // a new history object
    scheduleRefresh();
}

void TrainingPanel::scheduleRefresh()
{
    const qint64 since = m_sinceFrame.isValid() ? m_sinceFrame.elapsed() : frameInterval;
    if (since >= frameInterval && !m_frameTimer->isActive()) {
        refresh();
        return;
    }
    if (!m_frameTimer->isActive())
        m_frameTimer->start(int(std::max<qint64>(1, frameInterval - since)));
}

const ProbeSnapshot &TrainingPanel::shownSnapshot() const
{
    if (m_scrubStep >= 0) {
        const int i = m_runner->history().snapshotIndexAt(m_scrubStep);
        if (i >= 0)
            return m_runner->history().snapshots()[std::size_t(i)];
    }
    return m_runner->latest();
}

std::int64_t TrainingPanel::shownStep() const
{
    return shownSnapshot().step;
}

void TrainingPanel::scrubTo(std::int64_t step)
{
    m_scrubStep = step;
    m_showing = true;
    m_follow->setChecked(step < 0);
    m_showing = false;
    refresh();
}

void TrainingPanel::refresh()
{
    m_frameTimer->stop();
    m_sinceFrame.start();
    const TrainingHistory &history = m_runner->history();
    const auto &snaps = history.snapshots();
    const ProbeSnapshot *shown = &m_runner->latest();
    int index = int(snaps.size());
    if (m_scrubStep >= 0) {
        const int i = history.snapshotIndexAt(m_scrubStep);
        if (i >= 0) {
            shown = &snaps[std::size_t(i)];
            index = i;
        }
    }
    if (shown->step != m_shownStep) {
        m_heatmapA->setResult(m_runner->probeResult(*shown, false));
        m_heatmapB->setResult(m_runner->probeResult(*shown, true));
        m_shownStep = shown->step;
    }
    m_showing = true;
    m_scrubber->setRange(0, int(snaps.size()));
    m_scrubber->setValue(index);
    m_showing = false;
    m_scrubLabel->setText(tr("step %1").arg(shown->step));

    const TrainingSettings s = m_runner->settings();
    QStringList lines;
    lines << tr("step %1 of %2").arg(history.steps()).arg(s.steps);
    if (m_runner->playing() || m_runner->stepsPerSecond() > 0)
        lines << tr("%1 steps/s (A and B each)").arg(m_runner->stepsPerSecond(), 0, 'f', 0);
    if (history.steps() > 0)
        lines << tr("loss A %1 · B %2")
                     .arg(history.a().back().loss, 0, 'g', 4)
                     .arg(history.b().back().loss, 0, 'g', 4);
    // The threshold's progress, unless the stop reason already says it.
    const QString threshold = m_runner->thresholdStatus();
    if (!threshold.isEmpty() && !m_runner->stopReason().contains(threshold))
        lines << threshold;
    lines << tr("%1 snapshots, every %2 steps, %3 KiB")
                 .arg(snaps.size())
                 .arg(history.interval())
                 .arg(double(history.snapshotBytes()) / 1024.0, 0, 'f', 0);
    if (!m_runner->stopReason().isEmpty())
        lines << m_runner->stopReason();
    m_status->setText(lines.join(QStringLiteral("  ·  ")));
    m_chart->setMarker(m_scrubStep >= 0 ? shown->step : -1); // and redraws the curves
}

bool TrainingPanel::inductionShown() const
{
    return m_pages->currentWidget() == m_induction;
}

bool TrainingPanel::chartFocused() const
{
    const QWidget *focus = QApplication::focusWidget();
    const QWidget *chart = inductionShown() ? static_cast<QWidget *>(m_induction->chart())
                                            : static_cast<QWidget *>(m_chart);
    return focus && (focus == chart || chart->isAncestorOf(focus));
}

QSize TrainingPanel::heatmapsExportSize() const
{
    if (inductionShown())
        return m_induction->size().expandedTo(QSize(1000, 450));
    const QSize s(m_heatmapA->width() + m_heatmapB->width(), m_heatmapA->height());
    return QSize(std::max(1000, s.width()), std::max(450, s.height()));
}

bool TrainingPanel::exportHeatmaps(const QString &path, QSize size, qreal dpr, QString *error) const
{
    if (inductionShown()) // the page as shown: settings, curves and the two heads' maps
        return exportWidget(m_induction, path, size, dpr, error);
    // The shown snapshot (also when a redraw is still pending).
    const ProbeSnapshot &snapshot = shownSnapshot();
    const auto a = m_runner->probeResult(snapshot, false),
               b = m_runner->probeResult(snapshot, true);
    if (!a->ok() || !b->ok()) {
        if (error)
            *error = tr("There are no training heatmaps to export yet.");
        return false;
    }
    // Each run through the one heatmap renderer, with its caption, side by side.
    auto renderers = std::make_shared<std::pair<HeatmapRenderer, HeatmapRenderer>>();
    for (const auto &[renderer, result] :
         {std::pair {&renderers->first, a}, std::pair {&renderers->second, b}}) {
        HeatmapOptions o;
        o.showCaption = true;
        renderer->setOptions(o);
        renderer->setResult(result);
    }
    const FigurePainter paint = [renderers](QPainter *painter, const QRectF &bounds, bool) {
        const qreal half = bounds.width() / 2;
        renderers->first.paint(painter, QRectF(bounds.left(), bounds.top(), half, bounds.height()));
        renderers->second.paint(painter,
                                QRectF(bounds.left() + half, bounds.top(), half, bounds.height()));
    };
    return writeFigure(path, size, dpr, Qt::white, tr("Training: runs A and B"),
                       renderers->first.captionText() + QLatin1Char('\n')
                           + renderers->second.captionText(),
                       paint, error);
}

bool TrainingPanel::exportChart(const QString &path, QSize size, qreal dpr, QString *error) const
{
    if (inductionShown())
        return exportWidget(m_induction->chart(), path, size, dpr, error);
    return exportWidget(m_chart->view(), path, size, dpr, error);
}

bool TrainingPanel::exportDataNpz(const QString &path, QString *error)
{
    return m_runner->writeNpz(path, error);
}

bool TrainingPanel::exportCurvesCsv(const QString &path, QString *error) const
{
    const std::string csv = historyTable(m_runner->history()).toCsv();
    return writeFileBytes(path, QByteArray::fromStdString(csv), error);
}

} // namespace attn
