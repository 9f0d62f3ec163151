#include "ui/panels/playpanel.h"

#include "ui/render/playframes.h"
#include "ui/session/jobrunner.h"
#include "ui/views/figureexport.h"
#include "ui/views/numberspinbox.h"

#include <QCheckBox>
#include <QComboBox>
#include <QDoubleSpinBox>
#include <QFileDialog>
#include <QFormLayout>
#include <QHBoxLayout>
#include <QLabel>
#include <QPushButton>
#include <QSignalBlocker>
#include <QSpinBox>
#include <QTimer>
#include <QVBoxLayout>

#include <algorithm>
#include <cmath>
#include <tuple>

namespace attn {

namespace {

/// The From and To a parameter shows the first time it is chosen.
std::pair<double, double> usualRange(PlayParameter parameter, int heads)
{
    switch (parameter) {
    case PlayParameter::HeadWidth:
        return {4.0, double(std::min<Index>(256, SessionParameters::maxDModel / heads))};
    case PlayParameter::ScaleExponent:
        return {0.0, 1.0};
    case PlayParameter::Temperature:
        return {0.25, 4.0};
    }
    return {0.0, 1.0};
}

} // namespace

PlayPanel::PlayPanel(QWidget *parent)
    : QWidget(parent)
    , m_timer(new QTimer(this))
    , m_jobs(new JobRunner(this, 1))
{
    auto *layout = new QVBoxLayout(this);
    auto *form = new QFormLayout;
    form->setFieldGrowthPolicy(QFormLayout::AllNonFixedFieldsGrow);
    m_parameterCombo = new QComboBox;
    m_parameterCombo->setObjectName(QStringLiteral("playParameterCombo"));
    m_parameterCombo->addItem(tr("d_k (head width)"), int(PlayParameter::HeadWidth));
    m_parameterCombo->addItem(tr("α (scale exponent)"), int(PlayParameter::ScaleExponent));
    m_parameterCombo->addItem(tr("τ (temperature)"), int(PlayParameter::Temperature));
    m_parameterCombo->setToolTip(tr("The parameter Play animates; the others stay as the "
                                    "Controls set them (d_k keeps h: d_model = d_k · h)"));
    form->addRow(tr("&Animate:"), m_parameterCombo);
    // Fields that keep every keystroke ("1e-9" is not turned into 19) and refuse a number
    // outside the parameter's range by name, under the fields.
    m_fromSpin = new NumberSpinBox;
    m_toSpin = new NumberSpinBox;
    m_rangeNote = new QLabel;
    m_rangeNote->setObjectName(QStringLiteral("playRangeNote"));
    m_rangeNote->setWordWrap(true);
    m_fromSpin->setMessageLabel(m_rangeNote);
    m_toSpin->setMessageLabel(m_rangeNote);
    m_fromSpin->setObjectName(QStringLiteral("playFromSpin"));
    m_toSpin->setObjectName(QStringLiteral("playToSpin"));
    m_toSpin->setToolTip(tr("The last frame's value; smaller than the first plays backwards"));
    auto *range = new QHBoxLayout;
    range->addWidget(m_fromSpin, 1);
    range->addWidget(new QLabel(tr("to")));
    range->addWidget(m_toSpin, 1);
    auto *fromLabel = new QLabel(tr("&From:"));
    fromLabel->setBuddy(m_fromSpin);
    form->addRow(fromLabel, range);
    m_framesSpin = new WholeSpinBox;
    m_framesSpin->setQuantityName(tr("Frames"));
    m_framesSpin->setMessageLabel(m_rangeNote);
    m_framesSpin->setObjectName(QStringLiteral("playFramesSpin"));
    m_framesSpin->setRange(1, int(kMaxPlayFrames));
    m_framesSpin->setToolTip(tr("Frames from the first value to the last: α in equal steps, d_k "
                                "and τ in equal ratios (d_k rounded to whole numbers)"));
    form->addRow(tr("F&rames:"), m_framesSpin);
    m_fpsSpin = new NumberSpinBox;
    m_fpsSpin->setQuantityName(tr("The speed"));
    m_fpsSpin->setMessageLabel(m_rangeNote);
    m_fpsSpin->setObjectName(QStringLiteral("playFpsSpin"));
    m_fpsSpin->setRange(0.25, 60.0);
    m_fpsSpin->setToolTip(tr("Speed. When the computation is slower, frames are skipped (never "
                             "queued): the animation keeps its time"));
    form->addRow(tr("&Speed (frames/s):"), m_fpsSpin);
    m_loopCheck = new QCheckBox(tr("&Loop"));
    m_loopCheck->setObjectName(QStringLiteral("playLoopCheck"));
    m_loopCheck->setToolTip(tr("Start again from the first frame after the last"));
    m_playButton = new QPushButton(tr("&Play"));
    m_playButton->setObjectName(QStringLiteral("playButton"));
    m_playButton->setCheckable(true);
    m_playButton->setToolTip(tr("Play / Pause. The whole animation is one step of Edit → Undo; "
                                "editing a control pauses it"));
    auto *buttons = new QHBoxLayout;
    buttons->addWidget(m_loopCheck);
    buttons->addStretch(1);
    buttons->addWidget(m_playButton);
    form->addRow(buttons);
    // Below the Play button: a refusal shown does not move the button under the pointer.
    form->addRow(m_rangeNote);
    layout->addLayout(form);
    m_status = new QLabel;
    m_status->setObjectName(QStringLiteral("playStatus"));
    m_status->setWordWrap(true);
    layout->addWidget(m_status);

    auto *exportForm = new QFormLayout;
    m_widthSpin = new WholeSpinBox;
    m_widthSpin->setQuantityName(tr("The frame width"));
    m_widthSpin->setObjectName(QStringLiteral("playWidthSpin"));
    m_widthSpin->setRange(64, 8192);
    m_widthSpin->setValue(1200);
    m_heightSpin = new WholeSpinBox;
    m_heightSpin->setQuantityName(tr("The frame height"));
    m_heightSpin->setObjectName(QStringLiteral("playHeightSpin"));
    m_heightSpin->setRange(64, 8192);
    m_heightSpin->setValue(800);
    m_widthSpin->setToolTip(tr("Width of each exported frame, in pixels"));
    m_heightSpin->setToolTip(tr("Height of each exported frame, in pixels"));
    auto *size = new QHBoxLayout;
    size->addWidget(m_widthSpin, 1);
    size->addWidget(new QLabel(QStringLiteral("\u00d7")));
    size->addWidget(m_heightSpin, 1);
    auto *sizeLabel = new QLabel(tr("Frame si&ze:"));
    sizeLabel->setBuddy(m_widthSpin);
    sizeLabel->setToolTip(tr("Width × height of each exported frame, in pixels"));
    exportForm->addRow(sizeLabel, size);
    m_exportButton = new QPushButton(tr("Export &Frames…"));
    m_exportButton->setObjectName(QStringLiteral("playExportButton"));
    m_exportButton->setToolTip(tr("Write frame_000.png … (the heads grid of every frame, its "
                                  "caption naming the value) and frames.csv into a folder"));
    exportForm->addRow(m_exportButton);
    layout->addLayout(exportForm);
    m_exportStatus = new QLabel;
    m_exportStatus->setObjectName(QStringLiteral("playExportStatus"));
    m_exportStatus->setWordWrap(true);
    layout->addWidget(m_exportStatus);
    layout->addStretch(1);

    m_timer->setTimerType(Qt::PreciseTimer);
    connect(m_timer, &QTimer::timeout, this, &PlayPanel::tick);
    connect(m_playButton, &QPushButton::clicked, this, &PlayPanel::togglePlay);
    connect(m_exportButton, &QPushButton::clicked, this, &PlayPanel::exportFramesInteractive);
    connect(m_parameterCombo, &QComboBox::currentIndexChanged, this, [this] {
        pause();
        // The fields held the previous parameter's From and To: kept for it, and the new one
        // shows its own (its usual range the first time).
        m_ranges.insert(int(m_rangeParameter), {m_fromSpin->value(), m_toSpin->value()});
        m_rangeParameter = parameter();
        updateRanges();
        const auto kept = m_ranges.constFind(int(m_rangeParameter));
        const std::pair<double, double> values
            = kept != m_ranges.cend() ? *kept : usualRange(m_rangeParameter, m_heads);
        setRangeValues(values.first, values.second);
        updateStatus();
    });
    for (NumberSpinBox *spin : {m_fromSpin, m_toSpin, m_fpsSpin})
        connect(spin, &QDoubleSpinBox::valueChanged, this, [this] {
            updateStatus();
            emit settingsChanged();
        });
    connect(m_framesSpin, &QSpinBox::valueChanged, this, [this] {
        updateStatus();
        emit settingsChanged();
    });
    connect(m_loopCheck, &QCheckBox::toggled, this, &PlayPanel::settingsChanged);
    connect(m_parameterCombo, &QComboBox::currentIndexChanged, this, &PlayPanel::settingsChanged);
    connect(m_jobs, &JobRunner::progressChanged, this, [this](double fraction) {
        m_exportStatus->setText(tr("Writing frames… %1 %").arg(int(std::lround(fraction * 100))));
    });
    connect(m_jobs, &JobRunner::failed, this, [this](const QString &why) {
        m_exportStatus->setText(tr("Frames not written: %1").arg(why));
        m_exportButton->setEnabled(true);
    });
    setSettings(PlaySettings());
}

PlayPanel::~PlayPanel() = default;

void PlayPanel::setDriver(Driver driver)
{
    m_driver = std::move(driver);
    if (m_driver.parameters)
        setHeads(int(m_driver.parameters().heads));
}

void PlayPanel::setHeads(int heads)
{
    heads = std::max(1, heads);
    if (heads == m_heads)
        return;
    m_heads = heads;
    const double from = m_fromSpin->value(), to = m_toSpin->value();
    updateRanges();
    if (parameter() == PlayParameter::HeadWidth)
        setRangeValues(from, to);
    updateStatus();
}

void PlayPanel::setRangeValues(double from, double to)
{
    QStringList changed;
    for (const auto &[spin, value, end] :
         {std::tuple {m_fromSpin, from, tr("from")}, std::tuple {m_toSpin, to, tr("to")}}) {
        spin->setValue(value);
        if (spin->value() == value)
            continue;
        const QString range = QStringLiteral("%1 … %2").arg(spin->minimum()).arg(spin->maximum());
        changed << (parameter() == PlayParameter::HeadWidth
                        ? tr("d_k (%1) %2 is above the range %3 that h = %4 allows (d_model = "
                             "d_k · h ≤ %5): set to %6")
                              .arg(end)
                              .arg(value)
                              .arg(range)
                              .arg(m_heads)
                              .arg(SessionParameters::maxDModel)
                              .arg(spin->value())
                        : tr("%1 (%2) %3 is outside %4: set to %5")
                              .arg(QString::fromStdString(playParameterSymbol(parameter())), end)
                              .arg(value)
                              .arg(range)
                              .arg(spin->value()));
    }
    if (!changed.isEmpty()) {
        m_rangeNote->setText(changed.join(QStringLiteral("; ")) + QLatin1Char('.'));
        m_rangeNote->setVisible(true);
    }
}

PlayParameter PlayPanel::parameter() const
{
    return PlayParameter(m_parameterCombo->currentData().toInt());
}

void PlayPanel::updateRanges()
{
    m_fromSpin->setToolTip(tr("The first frame's value (d_k: 1 … %1, that is %2 / h with h = %3; "
                              "α: 0 … 1; τ: 0.01 … 100)")
                               .arg(SessionParameters::maxDModel / m_heads)
                               .arg(SessionParameters::maxDModel)
                               .arg(m_heads));
    for (NumberSpinBox *spin : {m_fromSpin, m_toSpin}) {
        const QSignalBlocker block(spin);
        const bool from = spin == m_fromSpin;
        spin->setQuantityName(
            parameter() == PlayParameter::HeadWidth
                ? (from ? tr("d_k (from) with h = %1") : tr("d_k (to) with h = %1")).arg(m_heads)
                : (parameter() == PlayParameter::ScaleExponent ? tr("α") : tr("τ"))
                    + (from ? tr(" (from)") : tr(" (to)")));
        switch (parameter()) {
        case PlayParameter::HeadWidth:
            // d_model = d_k · h is at most maxDModel.
            spin->setRange(1, SessionParameters::maxDModel / m_heads);
            spin->setSingleStep(1);
            break;
        case PlayParameter::ScaleExponent:
            spin->setRange(0, 1);
            spin->setSingleStep(0.05);
            break;
        case PlayParameter::Temperature:
            spin->setRange(0.01, 100);
            spin->setSingleStep(0.1);
            break;
        }
    }
}

PlaySettings PlayPanel::settings() const
{
    PlaySettings s;
    s.parameter = parameter();
    s.from = m_fromSpin->value();
    s.to = m_toSpin->value();
    s.frames = m_framesSpin->value();
    s.framesPerSecond = m_fpsSpin->value();
    s.loop = m_loopCheck->isChecked();
    return s;
}

void PlayPanel::setSettings(const PlaySettings &s)
{
    pause();
    if (s.parameter != m_rangeParameter) // the fields' values stay the old parameter's
        m_ranges.insert(int(m_rangeParameter), {m_fromSpin->value(), m_toSpin->value()});
    {
        const QSignalBlocker block(m_parameterCombo);
        m_parameterCombo->setCurrentIndex(
            std::max(0, m_parameterCombo->findData(int(s.parameter))));
    }
    m_rangeParameter = parameter();
    updateRanges();
    m_framesSpin->setValue(s.frames);
    m_fpsSpin->setValue(s.framesPerSecond);
    m_loopCheck->setChecked(s.loop);
    // Last: a field's accepted value clears the note that a value set to its range's end shows.
    setRangeValues(s.from, s.to);
    updateStatus();
    emit settingsChanged(); // Animate was set without its signal
}

QSize PlayPanel::frameSize() const
{
    return QSize(m_widthSpin->value(), m_heightSpin->value());
}

void PlayPanel::setFrameSize(QSize size)
{
    m_widthSpin->setValue(size.width());
    m_heightSpin->setValue(size.height());
}

void PlayPanel::updateStatus()
{
    if (m_playing && m_frame >= 0) {
        m_status->setText(
            tr("Frame %1/%2: %3%4")
                .arg(m_frame + 1)
                .arg(m_schedule.size())
                .arg(playValueText(m_playingSettings.parameter, m_schedule[std::size_t(m_frame)]))
                .arg(m_skipped > 0 ? tr(" (%n frame(s) skipped: the computation is slower than "
                                        "the speed)",
                                        nullptr, m_skipped)
                                   : QString()));
        return;
    }
    try {
        const PlaySettings s = settings();
        const int heads = m_driver.parameters ? m_driver.parameters().heads : 1;
        const std::vector<double> v = s.schedule(heads);
        m_status->setText(
            tr("%1 frames, %2 → %3, %4 s%5")
                .arg(v.size())
                .arg(playValueText(s.parameter, v.front()), playValueText(s.parameter, v.back()))
                .arg(double(v.size()) / s.framesPerSecond, 0, 'g', 3)
                .arg(m_frame >= 0 ? tr("; paused at frame %1").arg(m_frame + 1) : QString()));
    } catch (const InvalidArgument &e) {
        m_status->setText(QString::fromStdString(e.what()));
    }
}

void PlayPanel::setPlaying(bool playing)
{
    if (playing == m_playing)
        return;
    m_playing = playing;
    {
        const QSignalBlocker block(m_playButton);
        m_playButton->setChecked(playing);
        m_playButton->setText(playing ? tr("&Pause") : tr("&Play"));
    }
    emit playingChanged(playing);
}

void PlayPanel::play()
{
    if (m_playing)
        return;
    if (!m_driver.apply || !m_driver.parameters) {
        setPlaying(false);
        return;
    }
    const PlaySettings s = settings();
    std::vector<double> schedule;
    try {
        schedule = s.schedule(m_driver.parameters().heads);
    } catch (const InvalidArgument &e) {
        const QString why = tr("Play refused: %1").arg(QString::fromStdString(e.what()));
        m_status->setText(why);
        emit message(why);
        const QSignalBlocker block(m_playButton);
        m_playButton->setChecked(false);
        return;
    }
    // Resume where a pause left the same schedule; otherwise start from the first frame.
    const bool resume = s == m_playingSettings && schedule == m_schedule && m_frame >= 0
        && m_frame + 1 < int(schedule.size());
    m_schedule = std::move(schedule);
    m_playingSettings = s;
    if (!resume) {
        m_frame = -1;
        m_skipped = 0;
        m_applied.clear();
    }
    m_startFrame = resume ? m_frame + 1 : 0;
    setPlaying(true);
    m_clock.start();
    // Ticks at twice the speed (at most every 5 ms): a frame is due within half its time.
    m_timer->start(std::max(5, int(500.0 / s.framesPerSecond)));
    tick();
}

void PlayPanel::pause()
{
    m_timer->stop();
    setPlaying(false);
    updateStatus();
}

void PlayPanel::togglePlay()
{
    if (m_playing)
        pause();
    else
        play();
}

void PlayPanel::showFrame(int frame)
{
    const double value = m_schedule[std::size_t(frame)];
    const SessionParameters now = m_driver.parameters();
    const SessionParameters next = applyPlayValue(now, m_playingSettings.parameter, value);
    m_frame = frame;
    m_applied.push_back(value);
    if (!(next == now))
        m_driver.apply(next);
    updateStatus();
}

void PlayPanel::tick()
{
    if (!m_playing)
        return;
    const int frames = int(m_schedule.size());
    const double fps = m_playingSettings.framesPerSecond;
    const double elapsed = double(m_clock.nsecsElapsed()) * 1e-9 + m_startFrame / fps;
    const std::optional<Index> due = playFrameAt(elapsed, fps, frames, m_playingSettings.loop);
    // The session still computes the frame before: nothing is sent (the frames due meanwhile
    // are skipped when a later one is shown), and the last frame waits for it.
    const bool busy = m_driver.busy && m_driver.busy();
    const int frame = due ? int(*due) : frames - 1;
    if (frame != m_frame) {
        if (busy)
            return;
        const int step = m_frame < 0 ? frame + 1 : (frame - m_frame + frames) % frames;
        m_skipped += std::max(0, step - 1);
        showFrame(frame);
    }
    if (!due) // the last frame's time is over
        pause();
}

bool PlayPanel::isExporting() const
{
    return m_jobs->isBusy();
}

bool PlayPanel::exportFrames(const QString &folder, const std::function<void(bool, QString)> &done)
{
    if (m_jobs->isBusy() || !m_driver.parameters)
        return false;
    SessionParameters base = m_driver.parameters();
    const PlaySettings s = settings();
    HeatmapOptions options = m_frameOptions ? m_frameOptions() : HeatmapOptions();
    options.background = Qt::white;
    options.foreground = Qt::black;
    options.fontPixelSize = 0;
    const QSize size = frameSize();
    m_exportButton->setEnabled(false);
    m_exportStatus->setText(tr("Writing frames…"));
    struct Outcome
    {
        bool ok = false;
        QString message;
    };
    m_jobs->run(
        [base, s, options, folder, size](const JobContext &context) {
            Outcome o;
            QString error;
            o.ok = writePlayFrames(
                base, options, s, folder, size, 1.0, &error, nullptr,
                [&context](int k, int n) { context.report(double(k) / n); }, context.cancel);
            o.message = o.ok
                ? QStringLiteral("%1 frames and frames.csv written to %2").arg(s.frames).arg(folder)
                : error;
            return o;
        },
        [this, done](Outcome o) {
            m_exportButton->setEnabled(true);
            m_exportStatus->setText(o.ok ? o.message : tr("Frames not written: %1").arg(o.message));
            emit message(m_exportStatus->text());
            if (done)
                done(o.ok, o.message);
        });
    return true;
}

void PlayPanel::exportFramesInteractive()
{
    const QString folder
        = QFileDialog::getExistingDirectory(this, tr("Export Play Frames to"), exportFolder());
    if (folder.isEmpty())
        return;
    rememberExportFolder(folder);
    exportFrames(folder);
}

} // namespace attn
