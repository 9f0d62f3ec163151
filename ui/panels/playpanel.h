#pragma once
// PlayPanel: the Play dock — animates d_k, α or τ over a range (from, to, frames, frames per
// second, loop) with Play/Pause, and exports the animation's frames as a PNG sequence.
//
// Playing drives the session through the window's own path for a control change (the driver's
// `apply`: SessionController::editParameters, so the worker recomputes as for a slider step, and
// the heatmaps and charts follow). A QTimer on the GUI thread only decides which frame the wall
// clock has reached (playFrameAt) and never waits: while the session is still computing the
// previous frame (the driver's `busy`), the frames due meanwhile are skipped, not queued.
// Pause (or any edit of the controls, which the window routes to pause()) stops at the frame
// shown and returns control to the user; Play again goes on from there.
//
// Export Frames… writes frame_000.png … of the whole schedule into a chosen folder at the chosen
// size (writePlayFrames, on a JobRunner: the GUI stays responsive), each caption naming the frame
// and the value, plus frames.csv.

#include "ui/render/heatmaprenderer.h"
#include "ui/session/playsettings.h"

#include <QElapsedTimer>
#include <QHash>
#include <QWidget>

#include <functional>
#include <utility>
#include <vector>

class QCheckBox;
class QComboBox;
class QDoubleSpinBox;
class QLabel;
class QPushButton;
class QSpinBox;
class QTimer;

namespace attn {

class JobRunner;
class NumberSpinBox;
class WholeSpinBox;

class PlayPanel : public QWidget
{
    Q_OBJECT
public:
    /// How Play reaches the session (the window's wiring; tests give their own).
    struct Driver
    {
        std::function<SessionParameters()> parameters; ///< the session's parameters now
        std::function<void(const SessionParameters &)> apply; ///< a control's change
        std::function<bool()> busy; ///< true while the last change is being computed
    };

    explicit PlayPanel(QWidget *parent = nullptr);
    ~PlayPanel() override;

    /// Sets the driver; its parameters' h sets the d_k range (setHeads).
    void setDriver(Driver driver);
    /// The session's h: d_k's From and To take 1 … maxDModel / h (d_model = d_k · h). A value
    /// above the new limit is lowered to it, and the note under the fields says so.
    void setHeads(int heads);
    int heads() const { return m_heads; }
    /// How exported frames are drawn (the heads view's options); default HeatmapOptions.
    void setFrameOptions(std::function<HeatmapOptions()> options)
    {
        m_frameOptions = std::move(options);
    }

    PlaySettings settings() const;
    /// Shows `settings` in the controls (pauses a Play in progress). Each parameter keeps its
    /// own From and To while the panel lives: choosing another in Animate and coming back shows
    /// the values last set for it (its usual range the first time).
    void setSettings(const PlaySettings &settings);

    bool isPlaying() const { return m_playing; }
    /// The frame last handed to the session (−1: none since Play).
    int currentFrame() const { return m_frame; }
    /// Frames skipped since Play because the session was still computing.
    int skippedFrames() const { return m_skipped; }
    /// The values handed to the session since Play, in order (one per frame shown).
    const std::vector<double> &appliedValues() const { return m_applied; }

    /// Size (logical pixels) of exported frames.
    QSize frameSize() const;
    void setFrameSize(QSize size);
    /// Writes every frame of the current settings over the session's parameters into `folder`
    /// on a worker; `done(ok, message)` on the GUI thread when finished. False (and nothing
    /// started) when an export is already running.
    bool exportFrames(const QString &folder, const std::function<void(bool, QString)> &done = {});
    bool isExporting() const;

    QPushButton *playButton() const { return m_playButton; }
    QComboBox *parameterCombo() const { return m_parameterCombo; }

public slots:
    /// Starts (or resumes) the animation; refused with message() for settings core refuses.
    void play();
    /// Stops at the frame shown.
    void pause();
    void togglePlay();
    /// Asks for a folder, then exportFrames.
    void exportFramesInteractive();

signals:
    void playingChanged(bool playing);
    /// settings() changed (a field, Animate, Loop, or setSettings).
    void settingsChanged();
    /// A note for the status bar (refused settings, export written or failed).
    void message(const QString &text);

private:
    void tick();
    void showFrame(int frame);
    void setPlaying(bool playing);
    void updateRanges();
    /// Puts `from` and `to` into the fields; a value outside the range is set to its nearer end
    /// and the note under the fields names it, the range and why.
    void setRangeValues(double from, double to);
    void updateStatus();
    PlayParameter parameter() const;

    Driver m_driver;
    std::function<HeatmapOptions()> m_frameOptions;
    QComboBox *m_parameterCombo = nullptr;
    NumberSpinBox *m_fromSpin = nullptr;
    NumberSpinBox *m_toSpin = nullptr;
    WholeSpinBox *m_framesSpin = nullptr;
    NumberSpinBox *m_fpsSpin = nullptr;
    QCheckBox *m_loopCheck = nullptr;
    QPushButton *m_playButton = nullptr;
    QLabel *m_status = nullptr;
    QLabel *m_rangeNote = nullptr; ///< a refused From, To, Frames or Speed, named with its range
    WholeSpinBox *m_widthSpin = nullptr;
    WholeSpinBox *m_heightSpin = nullptr;
    QPushButton *m_exportButton = nullptr;
    QLabel *m_exportStatus = nullptr;
    QTimer *m_timer = nullptr;
    JobRunner *m_jobs = nullptr;

    int m_heads = 1;
    /// The parameter whose From and To the fields show, and the From and To last shown for
    /// each parameter (by PlayParameter).
    PlayParameter m_rangeParameter = PlayParameter::ScaleExponent;
    QHash<int, std::pair<double, double>> m_ranges;

    bool m_playing = false;
    std::vector<double> m_schedule;
    PlaySettings m_playingSettings; ///< the settings m_schedule was made from
    QElapsedTimer m_clock;
    double m_startFrame = 0; ///< the frame the clock started at (resume after a pause)
    int m_frame = -1;
    int m_skipped = 0;
    std::vector<double> m_applied;
};

} // namespace attn
