#include "ui/render/positionsrenderer.h"

#include "ui/render/colormap.h"
#include "ui/render/heatmaprenderer.h"
#include "ui/render/tileimage.h"

#include "core/attention/positional.h"

#include <QFontMetricsF>
#include <QPainter>

#include <algorithm>
#include <cmath>

namespace attn {

namespace {

QString number(double v)
{
    return figure::minusSign(QString::number(v, 'g', 3));
}

/// The image of `values` (rows × cols) on RdBu_r over [−range, range], mean-pooled to at most
/// maxSide pixels a side.
QImage divergingImage(const MatrixD &values, double range, int maxSide)
{
    TileImageRequest r;
    r.values = &values;
    r.colormap = ColormapId::RdBu;
    r.norm = ColorNorm::symmetric(range);
    r.pooling = HeatmapPooling::Mean;
    const QSize blocks
        = tilePoolingBlocks(QSize(int(values.cols()), int(values.rows())), QSize(maxSide, maxSide));
    r.colBlock = blocks.width();
    r.rowBlock = blocks.height();
    return buildTileImage(r);
}

QString schemeNote(const SessionParameters &p)
{
    switch (p.positionalScheme()) {
    case PositionalScheme::Sinusoidal:
        return QStringLiteral("This session adds this PE to its inputs (Controls \u2192 Positional "
                              "encoding).");
    case PositionalScheme::None:
        return QStringLiteral("Positional encoding is off in this session: these are the vectors "
                              "it would add to the inputs (without them attention cannot tell the "
                              "order, E5).");
    case PositionalScheme::Rope: {
        const int dK = p.dK();
        if (dK < 2 || dK % 2 != 0)
            return QStringLiteral("This session uses RoPE inside attention instead (no PE is "
                                  "added); it needs an even d_k.");
        QStringList thetas;
        const int planes = dK / 2;
        for (int i = 0; i < planes; ++i) {
            if (planes > 6 && i == 3) {
                thetas << QStringLiteral("\u2026");
                i = planes - 3;
            }
            thetas << QStringLiteral("\u03b8_%1 = %2")
                          .arg(i)
                          .arg(number(ropeFrequency(i, dK, p.ropeBase)));
        }
        return QStringLiteral("This session uses RoPE inside attention instead (no PE is added to "
                              "the inputs): each head's plane i of q and k turns by the angle "
                              "position \u00b7 \u03b8_i, \u03b8_i = base^(\u22122i/d_k) "
                              "(base %1, d_k = %2, %3 planes): %4. Like PE, the scores then "
                              "depend on the offset (E14).")
            .arg(QString::number(p.ropeBase, 'g', 6))
            .arg(dK)
            .arg(planes)
            .arg(thetas.join(QStringLiteral(", ")));
    }
    case PositionalScheme::Alibi: {
        const std::vector<double> slopes = alibiSlopes(std::max<Index>(1, p.heads));
        QStringList m;
        for (std::size_t h = 0; h < slopes.size(); ++h) {
            if (slopes.size() > 6 && h == 3) {
                m << QStringLiteral("\u2026");
                h = slopes.size() - 2;
            }
            m << number(slopes[h]);
        }
        return QStringLiteral("This session uses ALiBi instead (no PE is added to the inputs): "
                              "head h adds \u2212m_h\u00b7(i \u2212 j) to its scores, m = %1 "
                              "(E15).")
            .arg(m.join(QStringLiteral(", ")));
    }
    }
    return {};
}

} // namespace

PositionsFigure computePositionsFigure(const SessionParameters &p, int maxImageSide)
{
    PositionsFigure f;
    if (p.n < 1 || p.dModel < 1)
        return f;
    f.n = p.n;
    f.dModel = p.dModel;
    const MatrixD pe = sinusoidalEncoding(p.n, p.dModel);
    f.encodingMin = pe.minCoeff();
    f.encodingMax = pe.maxCoeff();
    f.encoding = divergingImage(pe, 1.0, maxImageSide);
    const MatrixD s = sinusoidalSimilarity(p.n, p.dModel);
    f.similarityMin = s.minCoeff();
    f.similarityMax = s.maxCoeff();
    f.similarityRange = std::max({std::abs(f.similarityMin), std::abs(f.similarityMax), 1e-12});
    f.similarity = divergingImage(s, f.similarityRange, maxImageSide);
    f.caption << QStringLiteral("Sinusoidal positional encoding PE (n = %1 positions \u00d7 "
                                "d_model = %2) and its dot-product similarity PE\u00b7PE\u1d40 "
                                "(%1 \u00d7 %1)")
                     .arg(p.n)
                     .arg(p.dModel);
    f.caption << QStringLiteral(
        "PE: row p is the vector added at position p; columns 2i, 2i+1 are "
        "sin, cos of p\u00b7\u03c9_i, \u03c9_i = 10000^(\u22122i/d_model): the "
        "first columns change fast, the last slowly.")
              << QStringLiteral(
                     "PE\u00b7PE\u1d40: PE_p\u00b7PE_q = \u03a3_i cos((p \u2212 q)\u00b7\u03c9_i)"
                     "%1 is largest on the diagonal (%2) and falls off with distance: "
                     "nearby positions are more similar, and every diagonal has one "
                     "colour \u2014 the similarity depends only on the offset p \u2212 "
                     "q (a shift is a rotation, E6).")
                     .arg(p.dModel % 2 ? QStringLiteral(" (+ the last sin column's product)")
                                       : QString())
                     .arg(number(f.similarityMax));
    f.schemeNote = schemeNote(p);
    return f;
}

void PositionsRenderer::setColors(const QColor &background, const QColor &foreground)
{
    m_background = background;
    m_foreground = foreground;
}

PositionsRenderer::Layout PositionsRenderer::layout(const QRectF &bounds) const
{
    Layout l;
    const qreal f = m_fontPixelSize > 0
        ? m_fontPixelSize
        : std::clamp(std::min(bounds.width() / 90.0, bounds.height() / 45.0), 9.0, 16.0);
    l.font = f;
    const QFontMetricsF fm(figure::makeFont(f));
    const QRectF inner = bounds.adjusted(f, 0.6 * f, -f, -0.6 * f);
    QStringList lines = m_figure.caption;
    if (!m_figure.schemeNote.isEmpty())
        lines << m_figure.schemeNote;
    const qreal captionH = fm.boundingRect(QRectF(0, 0, inner.width(), 1e6), Qt::TextWordWrap,
                                           lines.join(QLatin1Char('\n')))
                               .height();
    l.caption = QRectF(inner.left(), inner.top(), inner.width(), captionH);
    // Below the caption: two panels, each a title line, the map with ticks on the left and
    // below, an axis title under them, and a colourbar column on the right.
    // Below the caption: two panels, each a title line, the map with ticks on the left and
    // below, an axis title under them, and a colourbar column on the right — side by side, or
    // PE above PE·PEᵀ when that gives the similarity map the larger side (a narrow view).
    const qreal titleH = 1.2 * f + 1.4 * f; // gap, panel title
    const qreal axisH = 3.2 * f; // tick labels and axis title
    const qreal top = l.caption.bottom() + titleH;
    const qreal leftMargin = fm.horizontalAdvance(QStringLiteral("0000")) + 2.2 * f;
    const qreal barW = 1.0 * f + fm.horizontalAdvance(QStringLiteral("\u221200.0")) + 0.6 * f;
    const qreal rows = m_figure.valid() ? m_figure.n : 1;
    const qreal cols = m_figure.valid() ? m_figure.dModel : 1;
    const qreal sideW = std::max<qreal>(inner.width() / 2.0 - leftMargin - barW - f, 8);
    const qreal sideH = std::max<qreal>(inner.bottom() - axisH - top, 8);
    const qreal sideSimilarity = std::min(sideW, sideH);
    const qreal stackW = std::max<qreal>(inner.width() - leftMargin - barW - f, 8);
    const qreal stackH = std::max<qreal>(inner.bottom() - top - 2 * axisH - titleH, 16);
    const qreal stackSimilarity = std::min(stackW, 0.6 * stackH);
    l.stacked = stackSimilarity > 1.15 * sideSimilarity;
    if (l.stacked) {
        // PE takes what the similarity leaves, its cells at most 4 : 1 tall or wide.
        const qreal peH
            = std::clamp(stackH - stackSimilarity, 8.0, std::max(8.0, stackW * 4.0 * rows / cols));
        l.encoding = QRectF(inner.left() + leftMargin, top, stackW, peH);
        const qreal top2 = l.encoding.bottom() + axisH + titleH;
        const qreal side = std::min(stackW, std::max<qreal>(inner.bottom() - axisH - top2, 8));
        l.similarity = QRectF(inner.left() + leftMargin, top2, side, side);
    } else {
        l.encoding = QRectF(inner.left() + leftMargin, top, sideW,
                            std::min(sideH, sideW * 4.0 * rows / cols));
        l.similarity = QRectF(inner.left() + inner.width() / 2.0 + leftMargin, top, sideSimilarity,
                              sideSimilarity);
    }
    l.encodingBar
        = QRectF(l.encoding.right() + 0.8 * f, l.encoding.top(), 0.9 * f, l.encoding.height());
    l.similarityBar = QRectF(l.similarity.right() + 0.8 * f, l.similarity.top(), 0.9 * f,
                             l.similarity.height());
    return l;
}

QRectF PositionsRenderer::encodingRect(const QRectF &bounds) const
{
    return layout(bounds).encoding;
}

QRectF PositionsRenderer::similarityRect(const QRectF &bounds) const
{
    return layout(bounds).similarity;
}

void PositionsRenderer::paint(QPainter *painter, const QRectF &bounds, bool vectorOutput) const
{
    painter->save();
    painter->fillRect(bounds, m_background);
    const Layout l = layout(bounds);
    const qreal f = l.font;
    const QFont font = figure::makeFont(f);
    const QFontMetricsF fm(font);
    painter->setFont(font);
    painter->setPen(m_foreground);
    if (!m_figure.valid()) {
        painter->drawText(bounds, Qt::AlignCenter,
                          QStringLiteral("No positions (n or d_model is 0)"));
        painter->restore();
        return;
    }
    QStringList lines = m_figure.caption;
    if (!m_figure.schemeNote.isEmpty())
        lines << m_figure.schemeNote;
    painter->drawText(l.caption, Qt::TextWordWrap | Qt::AlignLeft | Qt::AlignTop,
                      lines.join(QLatin1Char('\n')));

    const Colormap rdbu(ColormapId::RdBu);
    const auto panel = [&](const QRectF &map, const QRectF &bar, const QImage &image,
                           const QString &title, int rows, int cols, const QString &rowTitle,
                           const QString &colTitle, double range, double lo, double hi) {
        painter->setPen(m_foreground);
        painter->setFont(figure::makeFont(f, true));
        painter->drawText(QRectF(map.left(), map.top() - 1.6 * f, map.width() + 6 * f, 1.4 * f),
                          Qt::AlignLeft | Qt::AlignVCenter, title);
        painter->setFont(font);
        painter->setRenderHint(QPainter::SmoothPixmapTransform, false);
        painter->drawImage(map, image);
        painter->setPen(QPen(m_foreground, 0));
        painter->setBrush(Qt::NoBrush);
        painter->drawRect(map);
        // Ticks: first, last and round steps between (axisTicks, the heads view's rule).
        const qreal rowCell = map.height() / rows;
        const qreal colCell = map.width() / cols;
        const qreal need = fm.horizontalAdvance(QStringLiteral("0000")) + 0.4 * f;
        for (int r : axisTicks(0, rows, rowCell, 1.3 * f)) {
            const qreal y = map.top() + (r + 0.5) * rowCell;
            painter->drawLine(QPointF(map.left() - 0.3 * f, y), QPointF(map.left(), y));
            painter->drawText(QRectF(map.left() - 5 * f, y - f, 4.5 * f, 2 * f),
                              Qt::AlignRight | Qt::AlignVCenter, QString::number(r));
        }
        for (int c : axisTicks(0, cols, colCell, need)) {
            const qreal x = map.left() + (c + 0.5) * colCell;
            painter->drawLine(QPointF(x, map.bottom()), QPointF(x, map.bottom() + 0.3 * f));
            // Centred under its column, but never past the map's right edge (the colourbar's
            // labels are there).
            QRectF label(x - 3 * f, map.bottom() + 0.3 * f, 6 * f, 1.3 * f);
            Qt::Alignment align = Qt::AlignHCenter;
            if (x + fm.horizontalAdvance(QString::number(c)) / 2 > map.right() + 0.2 * f) {
                label.moveRight(map.right() + 0.2 * f);
                align = Qt::AlignRight;
            }
            painter->drawText(label, align | Qt::AlignTop, QString::number(c));
        }
        painter->drawText(QRectF(map.left(), map.bottom() + 1.6 * f, map.width(), 1.4 * f),
                          Qt::AlignHCenter | Qt::AlignTop, colTitle);
        painter->save();
        painter->translate(map.left() - 2.0 * fm.horizontalAdvance(QStringLiteral("000")) - 1.2 * f,
                           map.center().y());
        painter->rotate(-90);
        painter->drawText(QRectF(-map.height() / 2, -0.7 * f, map.height(), 1.4 * f),
                          Qt::AlignCenter, rowTitle);
        painter->restore();
        // Colourbar ±range, ticks at −range, 0, range and the data's min and max marked.
        painter->drawImage(bar, rdbu.strip(256, Qt::Vertical));
        painter->drawRect(bar);
        const ColorNorm norm = ColorNorm::symmetric(range);
        const auto yOf = [&](double v) { return bar.bottom() - norm(v) * bar.height(); };
        for (double v : {-range, 0.0, range}) {
            const qreal y = yOf(v);
            painter->drawLine(QPointF(bar.right(), y), QPointF(bar.right() + 0.3 * f, y));
            painter->drawText(QRectF(bar.right() + 0.4 * f, y - f, 6 * f, 2 * f),
                              Qt::AlignLeft | Qt::AlignVCenter, number(v));
        }
        painter->drawText(QRectF(bar.left(), bar.bottom() + 1.1 * f, 8 * f, 2.8 * f),
                          Qt::AlignLeft | Qt::AlignTop,
                          QStringLiteral("min %1\nmax %2").arg(number(lo), number(hi)));
        Q_UNUSED(vectorOutput);
    };
    panel(l.encoding, l.encodingBar, m_figure.encoding, QStringLiteral("PE (RdBu_r, \u00b11)"),
          m_figure.n, m_figure.dModel, QStringLiteral("position p"),
          QStringLiteral("dimension (column of PE, 0 \u2026 d_model \u2212 1)"), 1.0,
          m_figure.encodingMin, m_figure.encodingMax);
    panel(
        l.similarity, l.similarityBar, m_figure.similarity,
        QStringLiteral("PE\u00b7PE\u1d40 (RdBu_r, \u00b1%1)").arg(number(m_figure.similarityRange)),
        m_figure.n, m_figure.n, QStringLiteral("position p"), QStringLiteral("position q"),
        m_figure.similarityRange, m_figure.similarityMin, m_figure.similarityMax);
    painter->restore();
}

FigurePainter PositionsRenderer::painter() const
{
    PositionsRenderer copy = *this;
    copy.setColors(Qt::white, Qt::black);
    return [copy](QPainter *p, const QRectF &bounds, bool vectorOutput) {
        copy.paint(p, bounds, vectorOutput);
    };
}

bool PositionsRenderer::save(const QString &path, QSize size, qreal dpr, QString *error) const
{
    if (!m_figure.valid()) {
        *error = QStringLiteral("no positions to export yet");
        return false;
    }
    const QString description = m_figure.caption.join(QLatin1Char(' '));
    return writeFigure(path, size, dpr, Qt::white,
                       QStringLiteral("Attention Lab: positional encoding"), description, painter(),
                       error);
}

} // namespace attn
