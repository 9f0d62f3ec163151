#pragma once
// ModelRenderer: the model view of a stack of attention weights (as BertViz's "model view"): a
// layers × heads grid of thumbnails, each one (layer, head)'s n_q × n_k weights, all on one
// colour scale — linear from min(0, smallest weight) to the largest weight of the whole stack
// (core finiteWeightRange) — with row labels "layer l", column labels "head h", a colourbar and a
// caption. The same paint function serves the window (ui/views/modelview.h), File → Export and
// `attnlab heatmap --view model` (PNG, SVG, PDF through render/figurefile.h). The thumbnails are
// tile images (render/tileimage.h, one pixel per cell, max-pooled beyond kMaxThumbnailCells a
// side) built by buildThumbnails, a pure function safe on any thread.

#include "ui/render/colormap.h"
#include "ui/render/figurefile.h"

#include "core/io/tensorcase.h"

#include <QImage>
#include <QPointF>
#include <QRectF>
#include <QSize>
#include <QString>
#include <QVector>

#include <memory>
#include <optional>

class QPainter;

namespace attn {

/// What the model view shows.
struct ModelViewOptions
{
    ColormapId colormap = ColormapId::Viridis;
    /// −1: every layer; 0 … layers − 1: only that layer's heads (one row).
    int layer = -1;
    /// Side of a thumbnail's map in logical pixels for naturalSize().
    int thumbnail = 64;
};

/// Where each part of the figure lies within the bounds it is painted in.
struct ModelViewLayout
{
    QRectF grid; ///< the thumbnails' area
    qreal thumbnail = 0; ///< side of a thumbnail's map
    qreal gap = 0; ///< between thumbnails
    QRectF colorbar; ///< the colour strip
    QRectF caption; ///< the caption's lines
    int firstLayer = 0, layerCount = 0, headCount = 0; ///< the rows and columns shown
    bool fits() const { return thumbnail >= 2; }
    /// The map of (layer, head) (layer counted in the stack); empty when not shown.
    QRectF thumbnailRect(int layer, int head) const;
};

class ModelRenderer
{
public:
    static constexpr int kMaxThumbnailCells = 256; ///< pixels a side of a thumbnail image

    /// The stack shown (nullptr: nothing); `caption` is its first caption line (e.g. the file).
    void setStack(std::shared_ptr<const WeightStack> stack, const QString &caption = {});
    const WeightStack *stack() const { return m_stack.get(); }
    void setOptions(const ModelViewOptions &options);
    const ModelViewOptions &options() const { return m_options; }
    /// Extra caption lines (e.g. the row-sum check).
    void setNotes(const QStringList &notes);
    /// The caption's size ("n = 2048") when the stack's matrices are not the sequence's (pooled
    /// thumbnails of a longer one); empty: the stack's n.
    void setSizeText(const QString &text) { m_sizeText = text; }
    /// The number of keys of the sequence the stack shows (its n_k, or the n_k of the pooled
    /// sequence); 0: the stack's own.
    void setSequenceKeys(qint64 keys) { m_sequenceKeys = keys; }

    /// The sequence length from which the one colour scale is logarithmic: weights of ≈ 1/n
    /// would leave a linear scale dark but for a few cells.
    static constexpr qint64 kLogScaleKeys = 1024;
    /// The one colour scale of the whole stack (every layer, also when one layer is shown):
    /// linear [min(0, smallest), largest]; from kLogScaleKeys keys on, logarithmic over
    /// ColorNorm::largestWeightDecades decades below the largest (ColorNorm::upToLargestWeight).
    /// [0, 1] without a stack or when every weight is equal.
    ColorNorm norm() const;
    /// The thumbnails of layers `firstLayer` … `firstLayer + layerCount − 1`, row-major by layer
    /// then head, on `norm` (see the top of this file). Safe on any thread.
    static QVector<QImage> buildThumbnails(const WeightStack &stack, int firstLayer, int layerCount,
                                           ColorNorm norm, ColormapId colormap);
    /// Thumbnails built elsewhere (a worker) for the current stack and options; paint() builds
    /// them itself otherwise.
    void setThumbnails(QVector<QImage> thumbnails);
    /// The thumbnails the current stack and options need are there (set or built).
    bool thumbnailsReady() const;
    /// Rows shown: the first layer and their count.
    int firstLayer() const;
    int layerCount() const;

    /// The figure at options().thumbnail pixels a thumbnail.
    QSize naturalSize() const;
    ModelViewLayout layout(const QRectF &bounds) const;
    /// The (layer, head) under `pos` in a figure painted in `bounds`.
    std::optional<std::pair<int, int>> thumbnailAt(const QRectF &bounds, const QPointF &pos) const;
    /// The caption lines: the stack's first line, "L layers × H heads, n = …", the scale.
    QStringList captionLines() const;

    /// Paints the figure in `bounds` (text in `text`, background left to the caller).
    void paint(QPainter *painter, const QRectF &bounds, bool vectorOutput,
               const QColor &text = Qt::black) const;
    /// Writes the figure (PNG at `dpr`, SVG, PDF by suffix) on white; an empty `size` takes
    /// naturalSize(). False with `error` (no stack, unknown suffix, write failure).
    bool save(const QString &path, QSize size, qreal dpr, QString *error) const;

private:
    std::shared_ptr<const WeightStack> m_stack;
    QString m_caption;
    QStringList m_notes;
    QString m_sizeText;
    qint64 m_sequenceKeys = 0;
    ModelViewOptions m_options;
    mutable QVector<QImage> m_thumbnails;
};

} // namespace attn
