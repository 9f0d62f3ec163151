#include "ui/render/modelrenderer.h"

#include "ui/render/tileimage.h"

#include <QFontMetricsF>
#include <QPainter>

#include <algorithm>
#include <cmath>

namespace attn {

namespace {

constexpr qreal kMargin = 12;
constexpr qreal kGap = 4;
constexpr qreal kFont = 12; ///< caption and labels, pixels
constexpr qreal kLine = 17; ///< caption line height
constexpr qreal kRowLabels = 56; ///< width of the "layer l" column
constexpr qreal kColumnLabels = 18; ///< height of the "head h" row
/// The colourbar: a horizontal strip under the caption (always in view when the grid scrolls
/// sideways), "weight" to its left, tick labels under it.
constexpr qreal kBarTitle = 56, kBarLength = 240, kBarHeight = 12, kBarLabels = 16;
constexpr qreal kBarBlock = 6 + kBarHeight + kBarLabels + 6;

} // namespace

QRectF ModelViewLayout::thumbnailRect(int layer, int head) const
{
    const int row = layer - firstLayer;
    if (row < 0 || row >= layerCount || head < 0 || head >= headCount)
        return {};
    return {grid.left() + head * (thumbnail + gap), grid.top() + row * (thumbnail + gap), thumbnail,
            thumbnail};
}

void ModelRenderer::setStack(std::shared_ptr<const WeightStack> stack, const QString &caption)
{
    m_stack = std::move(stack);
    m_caption = caption;
    m_thumbnails.clear();
}

void ModelRenderer::setOptions(const ModelViewOptions &options)
{
    if (options.colormap != m_options.colormap || options.layer != m_options.layer)
        m_thumbnails.clear();
    m_options = options;
}

void ModelRenderer::setNotes(const QStringList &notes)
{
    m_notes = notes;
}

bool ModelRenderer::thumbnailsReady() const
{
    return m_stack && m_thumbnails.size() == layerCount() * int(m_stack->heads);
}

int ModelRenderer::firstLayer() const
{
    if (!m_stack || m_options.layer < 0)
        return 0;
    return std::clamp(m_options.layer, 0, int(m_stack->layers) - 1);
}

int ModelRenderer::layerCount() const
{
    if (!m_stack)
        return 0;
    return m_options.layer < 0 ? int(m_stack->layers) : 1;
}

ColorNorm ModelRenderer::norm() const
{
    if (!m_stack)
        return ColorNorm::linear(0, 1);
    const auto [lo, hi] = finiteWeightRange(*m_stack);
    const qint64 keys = m_sequenceKeys > 0 ? m_sequenceKeys : qint64(m_stack->keys);
    if (keys >= kLogScaleKeys && hi > 0)
        return ColorNorm::upToLargestWeight(ColorScale::Log, hi);
    const double bottom = std::min(0.0, lo);
    return hi > bottom ? ColorNorm::linear(bottom, hi) : ColorNorm::linear(0, 1);
}

QVector<QImage> ModelRenderer::buildThumbnails(const WeightStack &stack, int firstLayer,
                                               int layerCount, ColorNorm norm, ColormapId colormap)
{
    QVector<QImage> images;
    const QSize blocks = tilePoolingBlocks(QSize(int(stack.keys), int(stack.queries)),
                                           QSize(kMaxThumbnailCells, kMaxThumbnailCells));
    for (int l = firstLayer; l < firstLayer + layerCount; ++l) {
        for (int h = 0; h < int(stack.heads); ++h) {
            TileImageRequest request;
            request.values = &stack.at(l, h);
            request.colormap = colormap;
            request.norm = norm;
            request.colBlock = blocks.width();
            request.rowBlock = blocks.height();
            images.append(buildTileImage(request));
        }
    }
    return images;
}

void ModelRenderer::setThumbnails(QVector<QImage> thumbnails)
{
    m_thumbnails = std::move(thumbnails);
}

QStringList ModelRenderer::captionLines() const
{
    QStringList lines;
    if (!m_caption.isEmpty())
        lines << m_caption;
    if (!m_stack)
        return lines;
    const WeightStack &s = *m_stack;
    const QString n = !m_sizeText.isEmpty() ? m_sizeText
        : s.queries == s.keys               ? QStringLiteral("n = %1").arg(s.queries)
                              : QStringLiteral("n_q = %1, n_k = %2").arg(s.queries).arg(s.keys);
    const QString rows = m_options.layer < 0
        ? QStringLiteral("%1 layers \u00d7 %2 heads").arg(s.layers).arg(s.heads)
        : QStringLiteral("layer %1 of %2, %3 heads").arg(firstLayer()).arg(s.layers).arg(s.heads);
    const ColorNorm c = norm();
    lines << QStringLiteral("%1, %2; one colour scale: %3, %4 [%5, %6]")
                 .arg(rows, n, Colormap(m_options.colormap).name(), c.scaleName(),
                      figure::formatTick(c.vmin), figure::formatTick(c.vmax));
    lines += m_notes;
    return lines;
}

QSize ModelRenderer::naturalSize() const
{
    if (!m_stack)
        return {480, 200};
    const qreal t = std::max(8, m_options.thumbnail);
    const int columns = int(m_stack->heads), rows = layerCount();
    const qreal width = std::max(2 * kMargin + kRowLabels + columns * t + (columns - 1) * kGap,
                                 2 * kMargin + kBarTitle + kBarLength + 24);
    const qreal height = 2 * kMargin + kLine * captionLines().size() + kBarBlock + kColumnLabels
        + rows * t + (rows - 1) * kGap;
    // As wide as the longest caption line too (the first in bold): nothing is elided.
    qreal captionWidth = 0;
    const QStringList caption = captionLines();
    for (int k = 0; k < caption.size(); ++k)
        captionWidth = std::max(
            captionWidth,
            QFontMetricsF(figure::makeFont(kFont, k == 0)).horizontalAdvance(caption[k]) + 4);
    return QSizeF(std::max(width, 2 * kMargin + captionWidth), height).toSize();
}

ModelViewLayout ModelRenderer::layout(const QRectF &bounds) const
{
    ModelViewLayout lay;
    if (!m_stack)
        return lay;
    lay.firstLayer = firstLayer();
    lay.layerCount = layerCount();
    lay.headCount = int(m_stack->heads);
    lay.gap = kGap;
    const qreal captionHeight = kLine * captionLines().size();
    lay.caption = QRectF(bounds.left() + kMargin, bounds.top() + kMargin,
                         bounds.width() - 2 * kMargin, captionHeight);
    lay.colorbar
        = QRectF(lay.caption.left() + kBarTitle, lay.caption.bottom() + 6, kBarLength, kBarHeight);
    const qreal top = lay.caption.bottom() + kBarBlock + kColumnLabels;
    const qreal left = bounds.left() + kMargin + kRowLabels;
    const qreal width = bounds.right() - kMargin - left;
    const qreal height = bounds.bottom() - kMargin - top;
    const qreal byWidth = (width - (lay.headCount - 1) * kGap) / lay.headCount;
    const qreal byHeight = (height - (lay.layerCount - 1) * kGap) / lay.layerCount;
    // Whole pixels a thumbnail, at most the natural size (a larger page leaves room around).
    lay.thumbnail
        = std::floor(std::min({byWidth, byHeight, qreal(std::max(8, m_options.thumbnail))}));
    lay.grid = QRectF(left, top, lay.headCount * lay.thumbnail + (lay.headCount - 1) * kGap,
                      lay.layerCount * lay.thumbnail + (lay.layerCount - 1) * kGap);
    return lay;
}

std::optional<std::pair<int, int>> ModelRenderer::thumbnailAt(const QRectF &bounds,
                                                              const QPointF &pos) const
{
    const ModelViewLayout lay = layout(bounds);
    if (!lay.fits())
        return std::nullopt;
    const qreal step = lay.thumbnail + lay.gap;
    const int column = int(std::floor((pos.x() - lay.grid.left()) / step));
    const int row = int(std::floor((pos.y() - lay.grid.top()) / step));
    const QRectF r = lay.thumbnailRect(lay.firstLayer + row, column);
    if (r.isEmpty() || !r.contains(pos))
        return std::nullopt;
    return std::pair {lay.firstLayer + row, column};
}

void ModelRenderer::paint(QPainter *painter, const QRectF &bounds, bool /*vectorOutput*/,
                          const QColor &text) const
{
    painter->save();
    painter->setRenderHint(QPainter::SmoothPixmapTransform, false);
    const QFont font = figure::makeFont(kFont);
    const QFont bold = figure::makeFont(kFont, true);
    painter->setPen(text);
    const QStringList caption = captionLines();
    if (!m_stack) {
        painter->setFont(font);
        painter->drawText(bounds.adjusted(kMargin, kMargin, -kMargin, -kMargin),
                          Qt::AlignCenter | Qt::TextWordWrap,
                          QStringLiteral("No model run and no stack of attention weights: File "
                                         "\u2192 Open Model\u2026 and Run, or File \u2192 Open "
                                         "Tensors\u2026 an .npz with 'attentions' (layers, heads, "
                                         "n_q, n_k)"));
        painter->restore();
        return;
    }
    const ModelViewLayout lay = layout(bounds);
    for (int k = 0; k < caption.size(); ++k) {
        painter->setFont(k == 0 ? bold : font);
        const QRectF line(lay.caption.left(), lay.caption.top() + k * kLine, lay.caption.width(),
                          kLine);
        painter->drawText(
            line, Qt::AlignLeft | Qt::AlignVCenter,
            QFontMetricsF(painter->font()).elidedText(caption[k], Qt::ElideRight, line.width()));
    }
    if (!lay.fits()) {
        painter->setFont(font);
        painter->drawText(bounds, Qt::AlignCenter, QStringLiteral("Too small to draw the maps"));
        painter->restore();
        return;
    }
    if (m_thumbnails.size() != lay.layerCount * lay.headCount)
        m_thumbnails
            = buildThumbnails(*m_stack, lay.firstLayer, lay.layerCount, norm(), m_options.colormap);

    // Column labels "head h" (the number alone when the maps are narrow), row labels "layer l".
    painter->setFont(font);
    const QFontMetricsF fm(font);
    const bool longHead = fm.horizontalAdvance(QStringLiteral("head 00")) + 4 <= lay.thumbnail;
    for (int h = 0; h < lay.headCount; ++h) {
        const QRectF r = lay.thumbnailRect(lay.firstLayer, h);
        const QRectF label(r.left() - lay.gap / 2, lay.grid.top() - kColumnLabels,
                           r.width() + lay.gap, kColumnLabels - 2);
        painter->drawText(label, Qt::AlignHCenter | Qt::AlignBottom,
                          longHead ? QStringLiteral("head %1").arg(h) : QString::number(h));
    }
    for (int row = 0; row < lay.layerCount; ++row) {
        const int l = lay.firstLayer + row;
        const QRectF r = lay.thumbnailRect(l, 0);
        const QRectF label(bounds.left() + kMargin, r.top(), kRowLabels - 8, r.height());
        painter->drawText(label, Qt::AlignRight | Qt::AlignVCenter,
                          QStringLiteral("layer %1").arg(l));
    }
    const QColor frame(128, 128, 128);
    for (int row = 0; row < lay.layerCount; ++row) {
        for (int h = 0; h < lay.headCount; ++h) {
            const QRectF r = lay.thumbnailRect(lay.firstLayer + row, h);
            const QImage &image = m_thumbnails[row * lay.headCount + h];
            painter->drawImage(r, image);
            painter->setPen(QPen(frame, 0));
            painter->setBrush(Qt::NoBrush);
            painter->drawRect(r.adjusted(-0.5, -0.5, 0.5, 0.5));
        }
    }

    // The colourbar: the whole map low (bottom) → high (top) with ticks of the shared scale.
    const Colormap map(m_options.colormap);
    const ColorNorm c = norm();
    painter->drawImage(lay.colorbar, map.strip(256, Qt::Horizontal));
    painter->setPen(QPen(text, 0));
    painter->drawRect(lay.colorbar);
    const QVector<double> ticks = figure::colorBarTicks(c, 5);
    for (const double v : ticks) {
        const qreal t = std::clamp(c(v), 0.0, 1.0);
        const qreal x = lay.colorbar.left() + t * lay.colorbar.width();
        painter->drawLine(QPointF(x, lay.colorbar.bottom()), QPointF(x, lay.colorbar.bottom() + 3));
        painter->drawText(QRectF(x - 30, lay.colorbar.bottom() + 2, 60, kBarLabels),
                          Qt::AlignHCenter | Qt::AlignTop, figure::formatTick(v));
    }
    painter->drawText(
        QRectF(lay.caption.left(), lay.colorbar.top() - 3, kBarTitle - 6, kBarHeight + 6),
        Qt::AlignLeft | Qt::AlignVCenter, QStringLiteral("weight"));
    painter->restore();
}

bool ModelRenderer::save(const QString &path, QSize size, qreal dpr, QString *error) const
{
    if (!m_stack) {
        if (error)
            *error = QStringLiteral("no stack of attention weights to export");
        return false;
    }
    if (size.isEmpty())
        size = naturalSize();
    const QStringList caption = captionLines();
    return writeFigure(
        path, size, dpr, Qt::white, QStringLiteral("Attention model view"),
        caption.join(QLatin1Char('\n')),
        [this](QPainter *p, const QRectF &bounds, bool vector) { paint(p, bounds, vector); },
        error);
}

} // namespace attn
