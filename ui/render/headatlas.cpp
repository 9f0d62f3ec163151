#include "ui/render/headatlas.h"

#include "ui/render/colormap.h"
#include "ui/render/figurefile.h"

#include <QFontMetricsF>
#include <QPainter>

#include <algorithm>
#include <cmath>

namespace attn {
namespace {

// Layout, logical pixels.
constexpr qreal kMargin = 16;
constexpr qreal kTitle = 22; ///< title line
constexpr qreal kCaption = 18; ///< caption line
constexpr qreal kColumnLabels = 34; ///< "head" and the head numbers above the grid
constexpr qreal kRowLabels = 64; ///< "layer l" left of the grid
constexpr qreal kBarGap = 24, kBarWidth = 16, kBarLabels = 56; ///< the colourbar column
constexpr qreal kNote = 20; ///< the scale's line under the grid
constexpr qreal kMinBar = 160; ///< shortest colourbar

const QColor kNoValue(208, 208, 208); ///< a cell whose score is NaN (0/0)

/// Side of a cell: the grid about 480 pixels across, each cell 14 to 48 pixels.
qreal cellSide(Index layers, Index heads)
{
    return std::clamp(480.0 / double(std::max(layers, heads)), 14.0, 48.0);
}

/// The figure's size: the grid and colourbar, `lines` caption lines, and wide enough for every
/// line of `text` (title first, then caption and note).
QSize figureSize(Index layers, Index heads, const QStringList &text, int lines)
{
    const qreal c = cellSide(layers, heads);
    qreal width = 2 * kMargin + kRowLabels + qreal(heads) * c + kBarGap + kBarWidth + kBarLabels;
    const QFontMetricsF title(figure::makeFont(14, true)), body(figure::makeFont(11));
    for (qsizetype k = 0; k < text.size(); ++k)
        width = std::max(width, 2 * kMargin + (k ? body : title).horizontalAdvance(text[k]) + 4);
    const qreal height = 2 * kMargin + kTitle + qreal(lines) * kCaption + kColumnLabels
        + std::max(qreal(layers) * c, kMinBar) + kNote;
    return {int(std::ceil(width)), int(std::ceil(height))};
}

void paintLabels(QPainter *p, const QRectF &grid, qreal c, Index layers, Index heads)
{
    p->setFont(figure::makeFont(11));
    for (Index h = 0; h < heads; ++h)
        p->drawText(QRectF(grid.left() + qreal(h) * c, grid.top() - 16, c, 14), Qt::AlignCenter,
                    QString::number(h));
    p->drawText(QRectF(grid.left(), grid.top() - kColumnLabels, grid.width(), 16), Qt::AlignCenter,
                QStringLiteral("head"));
    for (Index l = 0; l < layers; ++l)
        p->drawText(QRectF(grid.left() - kRowLabels, grid.top() + qreal(l) * c, kRowLabels - 6, c),
                    Qt::AlignRight | Qt::AlignVCenter, QStringLiteral("layer %1").arg(l));
}

void paintColorbar(QPainter *p, const QRectF &bar, const Colormap &map, ColorNorm norm)
{
    p->drawImage(bar, map.strip(Colormap::size, Qt::Vertical));
    p->setPen(Qt::black);
    p->setBrush(Qt::NoBrush);
    p->drawRect(bar);
    p->setFont(figure::makeFont(11));
    for (double v : figure::linearTicks(norm.vmin, norm.vmax, 5)) {
        const qreal y = bar.bottom() - norm(v) * bar.height();
        p->drawLine(QPointF(bar.right(), y), QPointF(bar.right() + 4, y));
        p->drawText(QRectF(bar.right() + 6, y - 8, kBarLabels - 6, 16),
                    Qt::AlignLeft | Qt::AlignVCenter, figure::formatTick(v));
    }
}

} // namespace

QStringList atlasScoreNames()
{
    QStringList names;
    for (const auto &column : headScoreColumns(HeadScores()))
        names << QString::fromLatin1(column.first);
    return names;
}

std::pair<double, double> atlasRange(const QString &name, const MatrixD &values)
{
    static const QStringList fractions
        = {QStringLiteral("previous_token"),  QStringLiteral("duplicate_token"),
           QStringLiteral("induction"),       QStringLiteral("sink"),
           QStringLiteral("prefix_matching"), QStringLiteral("value_norm_sink")};
    if (fractions.contains(name))
        return {0.0, 1.0}; // fractions of a head's weight (or norm mass)
    double largest = 0;
    for (Index k = 0; k < values.size(); ++k) {
        if (std::isfinite(values.data()[k]))
            largest = std::max(largest, values.data()[k]);
    }
    return {0.0, largest > 0 ? largest : 1.0};
}

namespace {

/// The colours of the figure: viridis over atlasRange, or — when a score is negative (the head
/// scores of signed weights, such as a stored stack of differential attention) — RdBu_r centred
/// on 0 over the largest |score|.
std::pair<Colormap, ColorNorm> atlasColours(const HeadAtlasFigure &f)
{
    double lowest = 0, largest = 0;
    for (Index k = 0; k < f.values.size(); ++k)
        if (std::isfinite(f.values.data()[k])) {
            lowest = std::min(lowest, f.values.data()[k]);
            largest = std::max(largest, std::abs(f.values.data()[k]));
        }
    if (lowest < 0)
        return {Colormap(ColormapId::RdBu), ColorNorm::symmetric(largest)};
    const auto [lo, hi] = atlasRange(f.name, f.values);
    return {Colormap(ColormapId::Viridis), ColorNorm::linear(lo, hi)};
}

QString noteText(const HeadAtlasFigure &f, ColorNorm norm, const Colormap &map)
{
    const bool anyNaN = f.values.array().isNaN().any();
    return QStringLiteral("%1, %2[%3, %4]%5%6")
        .arg(map.name(),
             map.isDiverging() ? QStringLiteral("negative scores: centred on 0, ")
                               : QStringLiteral("linear "),
             figure::formatTick(norm.vmin), figure::formatTick(norm.vmax),
             anyNaN ? QStringLiteral("; grey: no value (0/0)") : QString(),
             f.threshold
                 ? QStringLiteral("; outlined: \u2265 %1").arg(figure::formatTick(*f.threshold))
                 : QString());
}

QString titleText(const HeadAtlasFigure &f)
{
    return QStringLiteral("%1 by layer and head").arg(f.name);
}

} // namespace

QSize HeadAtlasFigure::naturalSize() const
{
    const auto [map, norm] = atlasColours(*this);
    const QString note = noteText(*this, norm, map);
    return figureSize(values.rows(), values.cols(),
                      QStringList {titleText(*this)} + caption + QStringList {note},
                      int(caption.size()));
}

QRectF HeadAtlasFigure::grid(const QRectF &bounds) const
{
    const Index L = values.rows(), H = values.cols();
    const qreal c = cellSide(L, H);
    const qreal top = bounds.top() + kMargin;
    return QRectF(bounds.left() + kMargin + kRowLabels,
                  top + kTitle + qreal(caption.size()) * kCaption + kColumnLabels, qreal(H) * c,
                  qreal(L) * c);
}

std::optional<std::pair<Index, Index>> HeadAtlasFigure::cellAt(const QRectF &bounds,
                                                               QPointF pos) const
{
    const QRectF g = grid(bounds);
    if (values.size() == 0 || !g.contains(pos))
        return std::nullopt;
    const qreal c = g.width() / qreal(values.cols());
    const Index l = std::min(values.rows() - 1, Index((pos.y() - g.top()) / c));
    const Index h = std::min(values.cols() - 1, Index((pos.x() - g.left()) / c));
    return std::pair<Index, Index>(l, h);
}

void HeadAtlasFigure::paint(QPainter *p, const QRectF &bounds) const
{
    const Index L = values.rows(), H = values.cols();
    const auto [map, norm] = atlasColours(*this);
    const qreal top = bounds.top() + kMargin;
    p->save();
    p->setPen(Qt::black);
    p->setFont(figure::makeFont(14, true));
    p->drawText(QRectF(bounds.left() + kMargin, top, bounds.width() - 2 * kMargin, kTitle),
                Qt::AlignLeft | Qt::AlignVCenter, titleText(*this));
    p->setFont(figure::makeFont(11));
    for (qsizetype k = 0; k < caption.size(); ++k)
        p->drawText(QRectF(bounds.left() + kMargin, top + kTitle + qreal(k) * kCaption,
                           bounds.width() - 2 * kMargin, kCaption),
                    Qt::AlignLeft | Qt::AlignVCenter, caption[k]);
    const QRectF g = grid(bounds);
    const qreal c = L > 0 && H > 0 ? g.width() / qreal(H) : 0;
    p->setPen(Qt::NoPen);
    for (Index l = 0; l < L; ++l) {
        for (Index h = 0; h < H; ++h) {
            const double v = values(l, h);
            p->setBrush(std::isnan(v) ? kNoValue : QColor(map.map(norm(v))));
            p->drawRect(QRectF(g.left() + qreal(h) * c, g.top() + qreal(l) * c, c, c));
        }
    }
    if (threshold) {
        // The heads at or above the threshold: a frame inside the cell, white on dark cells and
        // black on bright ones.
        p->setBrush(Qt::NoBrush);
        for (Index l = 0; l < L; ++l) {
            for (Index h = 0; h < H; ++h) {
                const double v = values(l, h);
                if (!(v >= *threshold))
                    continue;
                p->setPen(QPen(norm(v) > 0.6 ? Qt::black : Qt::white, 2));
                p->drawRect(QRectF(g.left() + qreal(h) * c, g.top() + qreal(l) * c, c, c)
                                .adjusted(2, 2, -2, -2));
            }
        }
    }
    p->setPen(Qt::black);
    paintLabels(p, g, c, L, H);
    const QRectF bar(g.right() + kBarGap, g.top(), kBarWidth, std::max(g.height(), kMinBar));
    paintColorbar(p, bar, map, norm);
    p->setFont(figure::makeFont(11));
    p->drawText(
        QRectF(bounds.left() + kMargin, bar.bottom() + 2, bounds.width() - 2 * kMargin, kNote),
        Qt::AlignLeft | Qt::AlignVCenter, noteText(*this, norm, map));
    p->restore();
}

bool HeadAtlasFigure::write(const QString &path, QString *error) const
{
    const auto [map, norm] = atlasColours(*this);
    const QString note = noteText(*this, norm, map);
    const FigurePainter painter
        = [this](QPainter *p, const QRectF &bounds, bool) { paint(p, bounds); };
    return writeFigure(path, naturalSize(), 1.0, Qt::white, titleText(*this),
                       (caption + QStringList {note}).join(QLatin1Char('\n')), painter, error);
}

bool writeHeadAtlas(const QString &path, const MatrixD &values, const QString &name,
                    const QStringList &caption, QString *error)
{
    HeadAtlasFigure f;
    f.values = values;
    f.name = name;
    f.caption = caption;
    return f.write(path, error);
}

} // namespace attn
