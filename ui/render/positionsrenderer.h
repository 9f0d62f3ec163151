#pragma once
// PositionsRenderer: the sinusoidal positional encoding of the session (Vaswani et al. 2017,
// §3.5) as two heatmaps on the diverging RdBu_r scale — PE itself (n positions × d_model
// dimensions, values in [−1, 1]) and its dot-product similarity PE·PEᵀ (n × n, ±d_model/2) —
// each with axis titles, ticks and a colourbar, under a caption that says what is seen (nearby
// positions are more similar; the similarity depends only on the offset). With RoPE or ALiBi
// chosen instead, a note names the scheme and its per-plane rotation frequencies θ_i or its
// per-head slopes m_h. The numbers are core's (sinusoidalEncoding, sinusoidalSimilarity,
// ropeFrequency, alibiSlopes); computePositionsFigure makes the images and is safe on any
// thread, so the window builds them on a worker; painting only draws them. Used by the
// Positions tab, its export and `attnlab heatmap --view positions`.

#include "ui/render/figurefile.h"
#include "ui/session/sessionparameters.h"

#include <QImage>
#include <QRectF>
#include <QSize>
#include <QString>
#include <QStringList>

namespace attn {

/// What the figure shows, computed once per n and d_model (and position scheme).
struct PositionsFigure
{
    int n = 0; ///< positions 0 … n−1 (the session's n, the query count)
    int dModel = 0; ///< PE's width
    QImage encoding; ///< PE, n × d_model cells (pooled by mean beyond maxImageSide)
    QImage similarity; ///< PE·PEᵀ, n × n cells (pooled likewise)
    double encodingMin = 0, encodingMax = 0; ///< PE's true range
    double similarityMin = 0, similarityMax = 0; ///< PE·PEᵀ's true range (max = d_model/2)
    double similarityRange = 1; ///< the colour scale is ±this (max |PE·PEᵀ|)
    QStringList caption; ///< what is shown and what to see in it
    QString schemeNote; ///< what the session's position scheme does (RoPE, ALiBi, off)
    bool valid() const { return n > 0 && dModel > 0; }
};

/// The figure of `p`'s n and d_model: PE and PE·PEᵀ as images of at most `maxImageSide` pixels
/// a side (mean-pooled), the caption and the scheme note. A null figure (valid() false) with
/// an empty caption for n < 1 or d_model < 1.
PositionsFigure computePositionsFigure(const SessionParameters &p, int maxImageSide = 1024);

class PositionsRenderer
{
public:
    void setFigure(PositionsFigure figure) { m_figure = std::move(figure); }
    const PositionsFigure &figure() const { return m_figure; }
    /// Text colours and font (the window's palette); exports use black on white.
    void setColors(const QColor &background, const QColor &foreground);
    /// Text size in logical pixels; 0 derives it from the paint size.
    void setFontPixelSize(qreal size) { m_fontPixelSize = size; }

    /// Rectangles of the two maps for a paint into `bounds` (for hover and tests).
    QRectF encodingRect(const QRectF &bounds) const;
    QRectF similarityRect(const QRectF &bounds) const;

    void paint(QPainter *painter, const QRectF &bounds, bool vectorOutput = false) const;
    FigurePainter painter() const;
    /// PNG, SVG or PDF by the suffix of `path`; `size` logical pixels (PDF: points), PNG at
    /// `dpr`. Black on white whatever setColors said. False with `error` naming the problem
    /// (no figure, an unknown suffix, a failed write).
    bool save(const QString &path, QSize size, qreal dpr, QString *error) const;

private:
    struct Layout
    {
        QRectF caption, encoding, similarity, encodingBar, similarityBar;
        qreal font = 12;
        bool stacked = false; ///< PE above PE·PEᵀ (else side by side)
    };
    Layout layout(const QRectF &bounds) const;

    PositionsFigure m_figure;
    QColor m_background = Qt::white;
    QColor m_foreground = Qt::black;
    qreal m_fontPixelSize = 0;
};

} // namespace attn
