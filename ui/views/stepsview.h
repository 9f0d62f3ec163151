#pragma once
// StepsView: the attention pipeline of the selected head as three linked heatmaps — raw scores
// Q Kᵀ → scaled and masked scores Q Kᵀ·scale + M → weights (StepsRenderer) — with a head
// selector and an Export button (PNG, SVG, PDF through the same paint code). Hovering a cell
// outlines it in all three panels and shows head, query i, key j, tokens, raw score, scaled
// score, mask state, weight and the row's entropy and effective terms.

#include "stepsrenderer.h"

#include <QWidget>

#include <memory>

class QCheckBox;
class QComboBox;
class QLabel;
class QPushButton;

namespace attn {

class FigureCanvas;

class StepsView : public QWidget
{
    Q_OBJECT
public:
    explicit StepsView(QWidget *parent = nullptr);

    void setResult(std::shared_ptr<const SessionResult> result);
    std::shared_ptr<const SessionResult> result() const { return m_renderer.result(); }
    /// Head 0 … h−1 (values beyond h−1 show head h−1; the head selector follows).
    void setHead(int head);
    int head() const { return m_renderer.head(); }
    /// Colormap of the weights panel: the Heads tab's choice (AttentionViews keeps them in step;
    /// the diverging RdBu_r falls back to viridis, weights are sequential).
    void setWeightsColormap(ColormapId id);

    const StepsRenderer &renderer() const { return m_renderer; }
    FigureCanvas *canvas() const { return m_canvas; }
    QComboBox *headSelector() const { return m_headCombo; }
    QPushButton *exportButton() const { return m_exportButton; }

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

private:
    void syncHeads();

    StepsRenderer m_renderer;
    QCheckBox *m_sharedRange = nullptr;
    FigureCanvas *m_canvas = nullptr;
    QComboBox *m_headCombo = nullptr;
    QLabel *m_hint = nullptr;
    QPushButton *m_exportButton = nullptr;
    int m_requestedHead = 0;
};

} // namespace attn
