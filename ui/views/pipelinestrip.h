#pragma once
// PipelineStrip: the vectors of one head's attention, from the token embeddings to the layer's
// output, as small heatmaps a student follows left to right (after Transformer Explainer):
//   embeddings X → + positions PE → input X + PE → q = X W_Q → k → v → weights (the Steps
//   panels' result) → head output weights · v → the heads side by side → output · W_O
// Rows are the positions (tokens), columns the vector's components; every panel has the same
// cell width and height, so widths compare (d_model against d_k); the panels wrap onto as many
// lines as make the cells largest. Vectors use a diverging scale centred on
// 0, symmetric over ±max|·| of each panel; the weights [0, 1]. The numbers are core's
// (attentionPipeline, core/engine/pipeline.h), computed on a worker with the one-pixel-a-cell
// images; painting only scales them. Seeded random inputs only (loaded tensors have no
// embeddings to show: the strip says so), up to maxPositions positions and maxWidth d_model.

#include "ui/session/sessionresult.h"

#include <QImage>
#include <QWidget>

#include <memory>

namespace attn {

class JobRunner;

class PipelineStrip : public QWidget
{
    Q_OBJECT
public:
    static constexpr Index maxPositions = 256; ///< n_q and n_k shown (larger: a message)
    static constexpr Index maxWidth = 1024; ///< d_model shown (larger: a message)

    /// One step of the strip: its title, shape and image (one pixel a cell).
    struct Panel
    {
        QString title; ///< e.g. "q = X W_Q"
        QString shortTitle; ///< written where the title does not fit, e.g. "q" (empty: none)
        QString shape; ///< e.g. "8 × 16"
        QImage image;
        double limit = 1; ///< the colour scale spans ±limit (weights: [0, 1])
        /// The columns are positions (the weights' keys): drawn as wide as a row is tall.
        bool positionColumns = false;
        MatrixD values; ///< rows × cols, what the image shows (for tooltips)
    };

    explicit PipelineStrip(QWidget *parent = nullptr);
    ~PipelineStrip() override;

    /// Shows head `head`'s vectors of `result` (recomputed on a worker).
    void setResult(std::shared_ptr<const SessionResult> result, int head);
    /// The panels shown (empty while computing or when there is a message).
    const std::vector<Panel> &panels() const { return m_panels; }
    /// Why nothing is shown (empty when panels are).
    QString message() const { return m_message; }
    /// Waits (processing events) until the newest computation has been delivered; false after
    /// `timeoutMs`.
    bool waitForPanels(int timeoutMs);
    /// Where panel k's cells are drawn for the widget's current size (empty rect when absent).
    QRectF panelRect(int k) const;
    /// Where panel k's two title lines go (its title and shape; empty for k out of range).
    QRectF titleRect(int k) const;
    /// The title written in `width` pixels: the title where it fits, else the short title.
    QString titleFor(const Panel &p, qreal width) const;
    /// Every how many rows a query label is drawn: 1 while rows are a line of the font tall,
    /// more when they are shorter (a larger font, as in presentation mode), so that no label
    /// runs into the next. 0 without labels (no panels, or rows too thin for any).
    int rowLabelStride() const;
    /// The rows' labels ("6:because"), one per position.
    const QStringList &rowLabels() const { return m_labels; }
    /// The width the query labels are written in (0 without labels).
    qreal rowLabelWidth() const;

    /// The least height that shows the panels at `width` with their titles whole and rows
    /// labelled one by one, and the height that gives them rows of a line and a bit.
    int minimumHeightFor(int width) const;
    int preferredHeightFor(int width) const;

    QSize sizeHint() const override;

signals:
    /// New panels (or a message) are shown.
    void panelsChanged();

protected:
    void paintEvent(QPaintEvent *event) override;
    bool event(QEvent *event) override;

private:
    struct Layout
    {
        std::vector<QRectF> maps;
        std::vector<QRectF> titles; ///< two lines above each map: the title and the shape
        std::vector<QRectF> labels; ///< left of each line of panels: the query labels (or none)
        qreal cellWidth = 0, cellHeight = 0;
    };
    Layout layout() const;
    /// The width of the query labels' column (the widest label, whole).
    qreal labelColumnWidth() const;
    /// Per panel: the width its title and shape need beyond its map's share of a gap.
    std::vector<qreal> textWidths() const;
    /// The panels, in order, on the fewest lines that write every title and shape whole in
    /// `width` (one panel a line at the least).
    std::vector<std::vector<std::size_t>> textLines(qreal width) const;
    /// The strip's height at `width` for rows `rowHeight` pixels tall.
    int heightFor(int width, qreal rowHeight) const;
    void deliver(std::vector<Panel> panels, const QString &message);

    JobRunner *m_jobs;
    std::vector<Panel> m_panels;
    QStringList m_labels; ///< the rows' labels ("3:the")
    QString m_message;
    bool m_pending = false;
};

} // namespace attn
