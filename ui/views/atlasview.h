#pragma once
// The Atlas tab: what every head of an attention stack does, measured. For a loaded attention
// stack (`attentions`, layers × heads × n × n) or a model run, every layer × head is scored
// (core/analysis/headscores.h: previous-token, duplicate-token, induction, sink, entropy,
// effective terms, distance; tokens: a model run's ids or the stack's `tokens`), drawn as a
// layers × heads grid on one colour scale with the heads at or above a threshold outlined
// (ui/render/headatlas.h), beside a table of the heads ranked by the score (sortable by any
// column). The scores are computed on a worker a head at a time (a run on demand computes each
// head's weights from its queries and keys). A click on a cell or a row opens that head
// (headActivated: the Heads, Steps and Tokens views, or the Long tab). For a model run,
// "Score the model" adds what only the model gives (core/analysis/headreport.h, on a worker):
// prefix matching on random tokens repeated twice, value-weighted norms and head ablation
// (zero or mean, 1 + layers·heads more forwards). Exports the figure (PNG, SVG, PDF) and the
// table (CSV and JSON, the writers of `attnlab heads`).

#include "ui/render/headatlas.h"
#include "ui/session/sessionparameters.h"

#include "core/analysis/headreport.h"
#include "core/analysis/headscores.h"

#include <QWidget>

#include <memory>
#include <optional>

class QComboBox;
class QDoubleSpinBox;
class QLabel;
class QPushButton;
class QScrollArea;
class QTableWidget;

namespace attn {

class JobRunner;
class TensorSource;
struct ModelRun;

class AtlasView : public QWidget
{
    Q_OBJECT
public:
    explicit AtlasView(QWidget *parent = nullptr);
    ~AtlasView() override;

    /// Follows the session: scores the stack of `p.tensors` when it is an attention stack or a
    /// model run (anew only when the stack changes, not its layer shown); otherwise the tab says
    /// what it needs.
    void setParameters(const SessionParameters &p);
    /// The model run last shown by the window (nullptr: none): its source is the stack the
    /// atlas scores when that run is shown, and "Score the model" runs its model on its ids.
    void setModelRun(std::shared_ptr<const ModelRun> run);
    /// Starts the model's scores (see the file's comment) on a worker; ignored unless the stack
    /// shown is the model run's. `how`: what an ablated head's output becomes.
    void scoreModel(models::Ablation how);
    /// The model's scores for the stack shown; nullopt before "Score the model" or while busy.
    const std::optional<ModelHeadReport> &modelReport() const { return m_report; }
    /// Waits (processing events) until the model's scores are in or failed.
    void waitForModelScores();

    /// The score shown (a name of atlasScoreNames()); an unknown name is ignored.
    void setScore(const QString &name);
    QString score() const;
    /// The outline threshold (cells ≥ it are outlined; ≤ 0: none). The default follows the
    /// score: 0.3 for sink (Gu et al. 2025's ε), 0.4 for the pattern scores, none otherwise.
    void setThreshold(double threshold);

    /// The scores of the stack shown; nullopt while computing or without a stack.
    const std::optional<HeadScores> &scores() const { return m_scores; }
    /// The figure drawn (its values: the score shown, layers × heads).
    const HeadAtlasFigure &figure() const { return m_figure; }
    /// What the tab says instead of (or about) the atlas: why nothing is shown, progress.
    QString message() const;
    bool isComputing() const;
    /// Waits (processing events) until the scores are in or failed.
    void waitForScores();

    QWidget *canvas() const;
    QTableWidget *table() const { return m_table; }
    /// The cell of (layer, head) in canvas coordinates (empty without scores).
    QRect cellRect(int layer, int head) const;

    /// Writes the figure (.png, .svg, .pdf) or the table (.csv: one row per head with every
    /// score, headReportTable; .json: headReportJson, null for no value) with the model's
    /// scores when they are in. False with `error` naming the path or the problem.
    bool exportTo(const QString &path, QString *error) const;

signals:
    /// A cell or a table row was clicked.
    void headActivated(int layer, int head);

private:
    class Canvas;
    void compute();
    void showScores();
    void fillTable();
    void exportInteractive();
    double defaultThreshold(const QString &name) const;
    bool showsModelRun() const;
    void updateModelControls();
    const ModelHeadReport *report() const { return m_report ? &*m_report : nullptr; }

    QComboBox *m_scoreCombo;
    QDoubleSpinBox *m_thresholdSpin;
    QPushButton *m_exportButton;
    QPushButton *m_modelButton;
    QComboBox *m_ablationCombo;
    QLabel *m_message;
    QScrollArea *m_scroll;
    Canvas *m_canvas;
    QTableWidget *m_table;
    JobRunner *m_jobs;
    JobRunner *m_modelJobs;
    std::shared_ptr<const ModelRun> m_modelRun;
    std::optional<ModelHeadReport> m_report;
    std::shared_ptr<const TensorSource> m_source; ///< the stack scored (its layer 0)
    std::optional<HeadScores> m_scores;
    HeadAtlasFigure m_figure;
    QString m_status;
    QString m_lastFolder;
};

} // namespace attn
