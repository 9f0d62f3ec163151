#pragma once
// StepsView: the attention pipeline of the selected head as three linked heatmaps — raw scores
// Q Kᵀ → scaled and masked scores Q Kᵀ·scale + M → weights (StepsRenderer) — with a head
// selector and an Export button (PNG, SVG, PDF through the same paint code); "Vectors" adds
// the head's vectors from the embeddings to the output under them (PipelineStrip). Hovering a cell
// outlines it in all three panels and shows head, query i, key j, tokens, raw score, scaled
// score, mask state, weight and the row's entropy and effective terms.
//
// While the view is hidden (another tab in front), a new result is only remembered: the three
// panels (two n_q × n_k scans for the score ranges, the image cache) are rebuilt when the view is
// shown or when something reads them (renderer(), exportFigure), so a hidden Steps tab
// costs nothing per slider step and still always shows and exports the newest result.

#include "ui/render/stepsrenderer.h"

#include <QJsonObject>
#include <QWidget>

#include <memory>

class QCheckBox;
class QComboBox;
class QLabel;
class QPushButton;

namespace attn {

class FigureCanvas;
class PipelineStrip;
class FigureScrollArea;

class StepsView : public QWidget
{
    Q_OBJECT
public:
    explicit StepsView(QWidget *parent = nullptr);

    /// Shows `result` (rebuilt at once when visible, else when shown or first read).
    void setResult(std::shared_ptr<const SessionResult> result);
    /// The newest result set (also while its panels wait for the view to be shown).
    std::shared_ptr<const SessionResult> result() const
    {
        return m_stale ? m_pending : m_renderer.result();
    }
    /// Head 0 … h−1 (values beyond h−1 show head h−1; the head selector follows).
    void setHead(int head);
    /// The head shown: the requested one clamped to the newest result's heads (−1 without one).
    int head() const;
    /// Colormap of the weights panel: the Heads tab's choice (AttentionViews keeps them in step;
    /// the diverging RdBu_r falls back to viridis, weights are sequential).
    void setWeightsColormap(ColormapId id);

    /// The figure, brought up to date with the newest result first.
    const StepsRenderer &renderer() const
    {
        ensureCurrent();
        return m_renderer;
    }
    FigureCanvas *canvas() const { return m_canvas; }
    QComboBox *headSelector() const { return m_headCombo; }
    QPushButton *exportButton() const { return m_exportButton; }
    /// The vectors of the shown head, embeddings to output, under the panels (PipelineStrip).
    PipelineStrip *pipelineStrip() const { return m_pipeline; }
    /// Shows or hides the vectors (the "Vectors" check box).
    void setVectorsShown(bool shown);
    /// The session's "steps" view state: {"head", "vectors", "same_score_range"}.
    QJsonObject state() const;
    /// Applies the keys present in `state` (SessionFile checked their values).
    void setState(const QJsonObject &state);

    /// Writes the view (with the parameter caption) to `path`: PNG, SVG or PDF by suffix, dark
    /// text on white whatever the palette; `size` in logical pixels (PDF: points), PNG at `dpr`.
    /// Returns false with `error` naming the problem.
    bool exportFigure(const QString &path, QSize size, qreal dpr, QString *error) const;
    /// The canvas's size (at least 1200 × 520).
    QSize defaultExportSize() const;

public slots:
    /// Asks for a file name and exports.
    void exportInteractive();

signals:
    void headChanged(int head);
    /// "Vectors" or "Same score range" was switched (state() changed).
    void stateChanged();

protected:
    void showEvent(QShowEvent *event) override;
    void resizeEvent(QResizeEvent *event) override;
    void changeEvent(QEvent *event) override;

private:
    void syncHeads();
    /// Hands the newest result and head to the vectors strip when it is shown.
    void syncVectors();
    /// Shares the height between the panels and the vectors strip (see fitVectors in the .cpp).
    void fitVectors();
    /// Applies a result set while hidden to the renderer and repaints (no-op when current).
    /// Const because reading the figure needs it: the renderer is a cache of the newest result.
    void ensureCurrent() const;

    // The renderer and the result waiting for it are a lazily updated cache (see above).
    mutable StepsRenderer m_renderer;
    mutable std::shared_ptr<const SessionResult> m_pending;
    mutable bool m_stale = false;
    QCheckBox *m_sharedRange = nullptr;
    QCheckBox *m_vectors = nullptr;
    PipelineStrip *m_pipeline = nullptr;
    FigureCanvas *m_canvas = nullptr;
    FigureScrollArea *m_scroll = nullptr;
    QComboBox *m_headCombo = nullptr;
    QLabel *m_hint = nullptr;
    QPushButton *m_exportButton = nullptr;
    int m_requestedHead = 0;
};

} // namespace attn
