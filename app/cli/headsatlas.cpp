#include "headsatlas.h"

#include "ui/render/colormap.h"
#include "ui/render/figurefile.h"

#include <QFontMetricsF>
#include <QPainter>

#include <algorithm>
#include <cmath>

namespace attn::cli {
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
    return {QStringLiteral("previous_token"), QStringLiteral("duplicate_token"),
            QStringLiteral("induction"),      QStringLiteral("sink"),
            QStringLiteral("entropy"),        QStringLiteral("effective_terms"),
            QStringLiteral("distance")};
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

bool writeHeadAtlas(const QString &path, const MatrixD &values, const QString &name,
                    const QStringList &caption, QString *error)
{
    const Index L = values.rows(), H = values.cols();
    const Colormap map(ColormapId::Viridis);
    const auto [lo, hi] = atlasRange(name, values);
    const ColorNorm norm = ColorNorm::linear(lo, hi);
    const bool anyNaN = values.array().isNaN().any();
    const QString title = QStringLiteral("%1 by layer and head").arg(name);
    const QString note = QStringLiteral("%1, linear [%2, %3]%4")
                             .arg(map.name(), figure::formatTick(lo), figure::formatTick(hi),
                                  anyNaN ? QStringLiteral("; grey: no value (0/0)") : QString());
    const FigurePainter paint = [&](QPainter *p, const QRectF &bounds, bool) {
        const qreal c = cellSide(L, H);
        const qreal top = bounds.top() + kMargin;
        p->setPen(Qt::black);
        p->setFont(figure::makeFont(14, true));
        p->drawText(QRectF(bounds.left() + kMargin, top, bounds.width() - 2 * kMargin, kTitle),
                    Qt::AlignLeft | Qt::AlignVCenter, title);
        p->setFont(figure::makeFont(11));
        for (qsizetype k = 0; k < caption.size(); ++k)
            p->drawText(QRectF(bounds.left() + kMargin, top + kTitle + qreal(k) * kCaption,
                               bounds.width() - 2 * kMargin, kCaption),
                        Qt::AlignLeft | Qt::AlignVCenter, caption[k]);
        // grid: L × H cells of side c, layer l in row l
        const QRectF grid(bounds.left() + kMargin + kRowLabels,
                          top + kTitle + qreal(caption.size()) * kCaption + kColumnLabels,
                          qreal(H) * c, qreal(L) * c);
        p->setPen(Qt::NoPen);
        for (Index l = 0; l < L; ++l) {
            for (Index h = 0; h < H; ++h) {
                const double v = values(l, h);
                p->setBrush(std::isnan(v) ? kNoValue : QColor(map.map(norm(v))));
                p->drawRect(QRectF(grid.left() + qreal(h) * c, grid.top() + qreal(l) * c, c, c));
            }
        }
        p->setPen(Qt::black);
        paintLabels(p, grid, c, L, H);
        const QRectF bar(grid.right() + kBarGap, grid.top(), kBarWidth,
                         std::max(grid.height(), kMinBar));
        paintColorbar(p, bar, map, norm);
        p->setFont(figure::makeFont(11));
        p->drawText(
            QRectF(bounds.left() + kMargin, bar.bottom() + 2, bounds.width() - 2 * kMargin, kNote),
            Qt::AlignLeft | Qt::AlignVCenter, note);
    };
    const QSize size
        = figureSize(L, H, QStringList {title} + caption + QStringList {note}, int(caption.size()));
    return writeFigure(path, size, 1.0, Qt::white, title,
                       (caption + QStringList {note}).join(QLatin1Char('\n')), paint, error);
}

} // namespace attn::cli
