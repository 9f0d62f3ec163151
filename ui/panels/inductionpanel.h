#pragma once
// InductionPanel: the Training tab's "Induction head" page. Experiment E17 trained live: a
// two-layer attention-only transformer on random tokens repeated twice
// (core/training/induction.h). Left, its settings (seed, steps, vocabulary, d_model, heads,
// repeat lengths, batch, learning rate, initial scale, precision) with Play/Pause and Reset.
// Right, the curves against steps — held-out and training loss (nats, left axis), the
// repeated half's accuracy, the best layer-1 head's induction (prefix-matching) score and the
// best layer-0 head's previous-token score (right axis, 0 … 1) — and the two heads' attention
// weights on the first held-out sequence, updating as the run goes. The InductionRunner trains
// on its worker; this page only shows, at most every frameInterval milliseconds.

#include "core/training/induction.h"

#include <QElapsedTimer>
#include <QWidget>

class QChart;
class QChartView;
class QComboBox;
class QDoubleSpinBox;
class QLabel;
class QLineSeries;
class QPushButton;
class QSpinBox;
class QTimer;
class QValueAxis;

namespace attn {

class InductionRunner;

/// One head's n × n attention weights as coloured cells (viridis, 0 … 1), with a title, the
/// held-out tokens along both sides and the cells a perfect head of its kind would fill
/// outlined (the previous token, or the token after the current token's first occurrence).
class AttentionMapView : public QWidget
{
    Q_OBJECT
public:
    enum class Pattern { PreviousToken, Induction };
    explicit AttentionMapView(Pattern pattern, QWidget *parent = nullptr);
    void setMatrix(const MatrixD &weights, const QString &title);
    void setTokens(const std::vector<std::int64_t> &tokens);
    const MatrixD &matrix() const { return m_weights; }
    QSize sizeHint() const override { return {320, 320}; }
    QSize minimumSizeHint() const override { return {160, 160}; }

protected:
    void paintEvent(QPaintEvent *event) override;

private:
    Pattern m_pattern;
    MatrixD m_weights;
    QString m_title;
    std::vector<std::int64_t> m_tokens;
};

class InductionPanel : public QWidget
{
    Q_OBJECT
public:
    /// Redraws are at least this far apart (milliseconds).
    static constexpr int frameInterval = 50;

    explicit InductionPanel(QWidget *parent = nullptr);
    ~InductionPanel() override;

    InductionRunner *runner() const { return m_runner; }
    QChartView *chart() const { return m_chartView; }
    AttentionMapView *previousTokenMap() const { return m_previousMap; }
    AttentionMapView *inductionMap() const { return m_inductionMap; }
    QPushButton *playButton() const { return m_play; }

    /// The settings shown in the controls.
    training::InductionRunConfig config() const;

signals:
    void message(const QString &text);

private:
    QWidget *buildControls();
    void applyControls();
    void showConfig(const training::InductionRunConfig &config);
    void updateEnabled();
    void scheduleRefresh();
    void refresh();

    InductionRunner *m_runner;
    QSpinBox *m_seed;
    QSpinBox *m_steps;
    QSpinBox *m_vocab;
    QSpinBox *m_dModel;
    QSpinBox *m_heads;
    QSpinBox *m_repeat;
    QSpinBox *m_minRepeat;
    QSpinBox *m_batch;
    QDoubleSpinBox *m_lr;
    QDoubleSpinBox *m_initStd;
    QComboBox *m_dtype;
    QPushButton *m_play;
    QPushButton *m_reset;
    QLabel *m_status;
    QLabel *m_error;
    QChart *m_chart;
    QChartView *m_chartView;
    QValueAxis *m_stepAxis;
    QValueAxis *m_lossAxis;
    QValueAxis *m_scoreAxis;
    QLineSeries *m_loss;
    QLineSeries *m_trainLoss;
    QLineSeries *m_accuracy;
    QLineSeries *m_induction;
    QLineSeries *m_previous;
    AttentionMapView *m_previousMap;
    AttentionMapView *m_inductionMap;
    QTimer *m_frameTimer;
    QElapsedTimer m_sinceFrame;
    std::size_t m_shownPoints = 0;
    bool m_showing = false;
};

} // namespace attn
