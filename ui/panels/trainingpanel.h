#pragma once
// TrainingPanel: the window's Training tab, two pages. The first ("Scale: runs A and B"): left,
// the settings: task (core/training/tasks.h), model (d_model, h, hence d_k), initial weights
// (PyTorch's xavier or unit-variance q and k), optimizer, precision, step limit, an optional
// loss threshold and runs A and B (α and learning rate each; by default 1/√d_k against
// unscaled), with Play/Pause, Step and Reset.
// Right, the probe sequence's attention weights of A and B side by side (HeatmapWidget: one
// tile per head and their mean), the curves of both runs (TrainingChart) and a scrubber over
// the recorded snapshots. The TrainingRunner trains on its worker; this panel only shows, at
// most every frameInterval milliseconds however often the runner reports.
//
// A change of α, a learning rate or a stop criterion applies from the next chunk of steps
// (mid-run); any other change starts both runs again from step 0.
//
// The second page ("Induction head (E17)", InductionPanel) trains experiment E17's two-layer
// attention-only transformer live on its own worker.

#include "ui/session/trainingsettings.h"

#include <QElapsedTimer>
#include <QWidget>

#include <memory>

class QCheckBox;
class QComboBox;
class QDoubleSpinBox;
class QLabel;
class QPushButton;
class QSlider;
class QSpinBox;
class QTabWidget;
class QTimer;

namespace attn {

class HeatmapWidget;
class InductionPanel;
class TrainingChart;
class TrainingRunner;

class TrainingPanel : public QWidget
{
    Q_OBJECT
public:
    /// Redraws are at least this far apart (milliseconds): at most 33 frames per second.
    static constexpr int frameInterval = 30;

    explicit TrainingPanel(QWidget *parent = nullptr);
    ~TrainingPanel() override;

    TrainingRunner *runner() const { return m_runner; }
    TrainingChart *chart() const { return m_chart; }
    HeatmapWidget *heatmapA() const { return m_heatmapA; }
    HeatmapWidget *heatmapB() const { return m_heatmapB; }
    QSlider *scrubber() const { return m_scrubber; }
    /// The pages: 0 the A/B runs, 1 the induction head (E17).
    QTabWidget *pages() const { return m_pages; }
    InductionPanel *inductionPanel() const { return m_induction; }

    TrainingSettings settings() const;
    /// Shows `settings` in the controls and hands them to the runner (see the class comment);
    /// invalid settings are refused with `error` set.
    bool setSettings(const TrainingSettings &settings, QString *error = nullptr);

    /// The step the heatmaps show: the scrubbed snapshot's, or the latest while following.
    std::int64_t shownStep() const;
    /// Shows the last snapshot at or before `step` (−1: follow the latest step).
    void scrubTo(std::int64_t step);

    /// Whether the Induction head page is the one shown (exports then write that page's).
    bool inductionShown() const;
    /// File → Export on this tab: "chart" when the chart has the focus, else "heatmaps".
    bool chartFocused() const;
    /// The heatmaps of A and B side by side as the tab shows them (the shown step), with
    /// their colourbars and captions, PNG/SVG/PDF by suffix; `size` in logical pixels. On the
    /// Induction head page: that page as shown (its curves and the two heads' maps).
    bool exportHeatmaps(const QString &path, QSize size, qreal dpr, QString *error) const;
    /// The chart as shown (exportWidget; on the Induction head page, its chart).
    bool exportChart(const QString &path, QSize size, qreal dpr, QString *error) const;
    /// The curves of both runs, one row per step (core's historyTable).
    bool exportCurvesCsv(const QString &path, QString *error) const;
    /// The run's data as .npz (TrainingRunner::writeNpz: curves, probe weights, parameters).
    bool exportDataNpz(const QString &path, QString *error);
    /// Default export size of the heatmaps: their on-screen size, at least 1000 × 450.
    QSize heatmapsExportSize() const;

signals:
    /// A message for the status bar (export written, stop reason).
    void message(const QString &text);
    /// The user changed a setting in the tab and it was applied (not sent by setSettings).
    void settingsEdited(const attn::TrainingSettings &before, const attn::TrainingSettings &after);

private:
    QWidget *buildControls();
    /// The scrubbed snapshot, or the latest weights while following.
    const training::ProbeSnapshot &shownSnapshot() const;
    void applyEditedSettings();
    void showSettings(const TrainingSettings &settings);
    void updateEnabled();
    void scheduleRefresh();
    void refresh();
    void onRestarted();

    TrainingRunner *m_runner;
    QTabWidget *m_pages = nullptr;
    InductionPanel *m_induction = nullptr;
    QComboBox *m_task;
    QSpinBox *m_n;
    QSpinBox *m_batch;
    QDoubleSpinBox *m_noise;
    QSpinBox *m_offset;
    QSpinBox *m_classes;
    QSpinBox *m_seed;
    QSpinBox *m_dModel;
    QSpinBox *m_heads;
    QLabel *m_dK;
    QComboBox *m_optimizer;
    QComboBox *m_dtype;
    QComboBox *m_init;
    QSpinBox *m_steps;
    QCheckBox *m_stopAtLoss;
    QDoubleSpinBox *m_threshold;
    QComboBox *m_thresholdRuns;
    QDoubleSpinBox *m_alphaA;
    QDoubleSpinBox *m_lrA;
    QLabel *m_scaleA;
    QDoubleSpinBox *m_alphaB;
    QDoubleSpinBox *m_lrB;
    QLabel *m_scaleB;
    QPushButton *m_play;
    QPushButton *m_step;
    QPushButton *m_reset;
    QLabel *m_status;
    QLabel *m_error;
    QLabel *m_titleA;
    QLabel *m_titleB;
    HeatmapWidget *m_heatmapA;
    HeatmapWidget *m_heatmapB;
    TrainingChart *m_chart;
    QSlider *m_scrubber;
    QLabel *m_scrubLabel;
    QCheckBox *m_follow;
    QTimer *m_frameTimer;
    QElapsedTimer m_sinceFrame;
    bool m_showing = false; ///< showSettings is filling the controls
    std::int64_t m_scrubStep = -1; ///< −1: follow the latest step
    std::int64_t m_shownStep = -1; ///< step of the snapshot on the heatmaps (−1: none yet)
};

} // namespace attn
