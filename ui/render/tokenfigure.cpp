#include "ui/render/tokenfigure.h"

#include "ui/render/figurefile.h"
#include "ui/render/tileimage.h"

#include "core/attention/mask.h"

#include <QFontMetricsF>
#include <QPainter>

#include <algorithm>
#include <array>
#include <cmath>

namespace attn {

namespace {

constexpr std::array<QRgb, 20> kHeadPalette = {
    // tab10
    0x1f77b4, 0xff7f0e, 0x2ca02c, 0xd62728, 0x9467bd, 0x8c564b, 0xe377c2, 0x7f7f7f, 0xbcbd22,
    0x17becf,
    // tab20's light shades
    0xaec7e8, 0xffbb78, 0x98df8a, 0xff9896, 0xc5b0d5, 0xc49c94, 0xf7b6d2, 0xc7c7c7, 0xdbdb8d,
    0x9edae5};

bool usable(const SessionResult *result)
{
    return tokenViewProblem(result).isEmpty();
}

QString captionOf(const SessionResult &result)
{
    QString caption = result.params.caption();
    if (!result.viewNote.isEmpty())
        caption += QStringLiteral(" \u00b7 ") + result.viewNote;
    return caption;
}

// Height of `text` wrapped at `width` in `font`.
qreal wrappedHeight(const QFont &font, qreal width, const QString &text)
{
    return QFontMetricsF(font)
        .boundingRect(QRectF(0, 0, std::max<qreal>(width, 1), 1e6), Qt::TextWordWrap, text)
        .height();
}

// Boxes of the given widths and `height` laid out left to right from `origin`, wrapping at
// `right`; `bottom` receives the lowest edge.
QVector<QRectF> flowBoxes(const QVector<qreal> &widths, qreal height, const QPointF &origin,
                          qreal right, qreal hGap, qreal vGap, qreal *bottom)
{
    QVector<QRectF> boxes;
    boxes.reserve(widths.size());
    qreal x = origin.x(), y = origin.y();
    for (const qreal w : widths) {
        if (x > origin.x() && x + w > right) {
            x = origin.x();
            y += height + vGap;
        }
        boxes.append(QRectF(x, y, w, height));
        x += w + hGap;
    }
    *bottom = boxes.isEmpty() ? origin.y() : y + height;
    return boxes;
}

QColor withAlpha(QColor c, qreal alpha)
{
    c.setAlphaF(float(std::clamp<qreal>(alpha, 0, 1)));
    return c;
}

const MatrixD &seriesWeights(const SessionResult &result, int series)
{
    return series >= result.headCount() ? result.weightsMean : result.weights[std::size_t(series)];
}

QString seriesName(const SessionResult &result, int series)
{
    return series >= result.headCount() ? QStringLiteral("mean")
                                        : QStringLiteral("head %1").arg(series);
}

QColor seriesColor(const SessionResult &result, const TokenViewOptions &options, int series)
{
    return series >= result.headCount() ? options.foreground : tokenHeadColor(series);
}

// Hatch segments inside `r`: "/" (x + y = c) when `rising`, else "\" (x − y = c), `step` apart.
// Computed inside the box rather than clipped: SVG output ignores clipping.
QVector<QLineF> hatchSegments(const QRectF &r, qreal step, bool rising)
{
    QVector<QLineF> lines;
    const qreal l = r.left(), t = r.top(), w = r.width(), h = r.height();
    for (qreal c = step; c < w + h; c += step) {
        // In box coordinates (u, v), v down: "/" joins (c − v, v) for the v that fit.
        const qreal v0 = std::max<qreal>(0, c - w), v1 = std::min(h, c);
        if (v1 <= v0)
            continue;
        if (rising)
            lines.append(QLineF(l + c - v0, t + v0, l + c - v1, t + v1));
        else
            lines.append(QLineF(l + w - (c - v0), t + v0, l + w - (c - v1), t + v1));
    }
    return lines;
}

void drawMaskedBox(QPainter *p, const QRectF &box, std::uint8_t state, ColormapId colormap)
{
    const QRgb base = maskColor(colormap, state);
    p->fillRect(box, QColor(base));
    p->setPen(QPen(figure::hatchColor(base), 1));
    p->drawLines(hatchSegments(box, std::max<qreal>(4, box.height() / 3), state & MaskCausal));
}

QRgb readableTextColor(QRgb fill)
{
    const double luma = 0.299 * qRed(fill) + 0.587 * qGreen(fill) + 0.114 * qBlue(fill);
    return luma < 140 ? qRgb(255, 255, 255) : qRgb(0, 0, 0);
}

void paintMessage(QPainter *p, const QRectF &bounds, const TokenViewOptions &o, const QString &text)
{
    p->setFont(figure::makeFont(o.fontPixelSize));
    p->setPen(o.foreground);
    p->drawText(bounds.adjusted(12, 12, -12, -12), Qt::AlignCenter | Qt::TextWordWrap, text);
}

// The caption's rectangle at the top of `bounds` (empty without one); `y` moves below it.
QRectF layoutCaption(const SessionResult &result, const TokenViewOptions &o, const QRectF &bounds,
                     qreal margin, qreal *y)
{
    if (!o.showCaption)
        return {};
    const QFont font = figure::makeFont(o.fontPixelSize * 0.9);
    const qreal w = bounds.width() - 2 * margin;
    const QRectF r(bounds.left() + margin, *y, w, wrappedHeight(font, w, captionOf(result)));
    *y = r.bottom() + margin * 0.6;
    return r;
}

void paintCaption(QPainter *p, const SessionResult &result, const TokenViewOptions &o,
                  const QRectF &r)
{
    if (r.isEmpty())
        return;
    p->setFont(figure::makeFont(o.fontPixelSize * 0.9));
    p->setPen(o.foreground);
    p->drawText(r, Qt::AlignLeft | Qt::AlignTop | Qt::TextWordWrap, captionOf(result));
}

struct LegendItem
{
    QColor color;
    QString text;
};

// The head view's legend: one swatch per series, then the line rule.
QVector<LegendItem> headLegend(const SessionResult &result, const TokenViewOptions &o)
{
    QVector<LegendItem> items;
    for (const int s : tokenShownSeries(result, o))
        items.append({seriesColor(result, o, s), seriesName(result, s)});
    // The rule in parts, so the flow wraps them in a narrow figure instead of clipping one.
    const double largest = tokenLargestShownWeight(result, o);
    if (items.isEmpty())
        items.append({QColor(), QStringLiteral("no head shown")});
    if (result.signedWeights) {
        items.append({QColor(),
                      QStringLiteral("line opacity = |weight| / %1 (the largest shown)")
                          .arg(figure::formatTick(largest))});
        items.append({QColor(), QStringLiteral("dashed: negative weight")});
        if (o.threshold > 0)
            items.append(
                {QColor(),
                 QStringLiteral("|w| < %1 not drawn").arg(figure::formatTick(o.threshold))});
    } else {
        items.append({QColor(),
                      QStringLiteral("line opacity = weight / %1 (the largest shown)")
                          .arg(figure::formatTick(largest))});
        if (o.threshold > 0)
            items.append({QColor(),
                          QStringLiteral("w < %1 not drawn").arg(figure::formatTick(o.threshold))});
    }
    items.append({QColor(), QStringLiteral("masked: no line")});
    return items;
}

QVector<qreal> legendWidths(const QVector<LegendItem> &items, const QFontMetricsF &fm, qreal swatch)
{
    QVector<qreal> widths;
    for (const LegendItem &item : items)
        widths.append(fm.horizontalAdvance(item.text) + (item.color.isValid() ? swatch * 1.5 : 0));
    return widths;
}

} // namespace

QColor tokenHeadColor(int head)
{
    const int n = int(kHeadPalette.size());
    return QColor(QRgb(kHeadPalette[std::size_t(((head % n) + n) % n)]));
}

double tokenLineOpacity(double weight, double largest)
{
    if (!(weight > 0) || !(largest > 0))
        return 0.0;
    return std::min(weight / largest, 1.0);
}

double tokenLargestShownWeight(const SessionResult &result, const TokenViewOptions &o)
{
    if (!usable(&result))
        return 0.0;
    const MatrixB &mask = result.maskState;
    const bool hasMask = mask.rows() == result.queryCount() && mask.cols() == result.keyCount();
    double largest = 0;
    for (const int s : tokenShownSeries(result, o)) {
        const MatrixD &w = seriesWeights(result, s);
        for (Index i = 0; i < w.rows(); ++i)
            for (Index j = 0; j < w.cols(); ++j)
                if (!(hasMask && mask(i, j)) && std::isfinite(w(i, j)))
                    largest = std::max(largest, result.signedWeights ? std::abs(w(i, j)) : w(i, j));
    }
    return largest;
}

QString tokenViewProblem(const SessionResult *result)
{
    if (!result)
        return QStringLiteral("No result yet.");
    if (!result->ok())
        return QStringLiteral("Cannot compute: ") + result->error;
    if (result->headCount() == 0 || result->queryCount() == 0 || result->keyCount() == 0)
        return QStringLiteral("This result holds no attention weights to draw as tokens.");
    if (result->queryCount() > maxTokenViewTokens || result->keyCount() > maxTokenViewTokens)
        return QStringLiteral("The token views draw at most %1 queries and keys; this result has "
                              "n_q = %2, n_k = %3. The Heads tab shows it.")
            .arg(maxTokenViewTokens)
            .arg(result->queryCount())
            .arg(result->keyCount());
    return {};
}

// ---- head view ----

qreal TokenHeadLayout::seriesSpacing(int seriesCount) const
{
    if (seriesCount <= 1 || queryBoxes.isEmpty() || keyBoxes.isEmpty())
        return 0;
    const qreal row = std::min(queryBoxes[0].height(), keyBoxes[0].height());
    return std::min(row * 0.6 / seriesCount, fontPixelSize * 0.3);
}

QPointF TokenHeadLayout::queryAnchor(int i, int slot, int seriesCount) const
{
    const QRectF &b = queryBoxes[i];
    return {b.right(),
            b.center().y() + (slot - (seriesCount - 1) / 2.0) * seriesSpacing(seriesCount)};
}

QPointF TokenHeadLayout::keyAnchor(int j, int slot, int seriesCount) const
{
    const QRectF &b = keyBoxes[j];
    return {b.left(),
            b.center().y() + (slot - (seriesCount - 1) / 2.0) * seriesSpacing(seriesCount)};
}

TokenHeadLayout tokenHeadLayout(const SessionResult &result, const TokenViewOptions &o,
                                const QRectF &bounds)
{
    TokenHeadLayout layout;
    layout.fontPixelSize = o.fontPixelSize;
    if (!usable(&result))
        return layout;
    const qreal f = o.fontPixelSize;
    const qreal margin = f * 0.8;
    qreal y = bounds.top() + margin;
    layout.caption = layoutCaption(result, o, bounds, margin, &y);

    const QFont font = figure::makeFont(f);
    const QFontMetricsF fm(font);
    const qreal lineH = f * 1.5;
    {
        const QVector<LegendItem> items = headLegend(result, o);
        qreal bottom = y;
        flowBoxes(legendWidths(items, fm, f), lineH, QPointF(bounds.left() + margin, y),
                  bounds.right() - margin, f * 1.2, 0, &bottom);
        layout.legend = QRectF(bounds.left() + margin, y, bounds.width() - 2 * margin, bottom - y);
        y = bottom + margin * 0.5;
    }

    const int nQ = int(result.queryCount()), nK = int(result.keyCount());
    const qreal pad = f * 0.5;
    const qreal widthCap = std::max<qreal>(f * 4, bounds.width() * 0.28);
    // The rows under the column titles; rows too thin for text label every k-th token.
    const qreal areaTop = y + lineH + f * 0.3;
    const qreal areaH = std::max<qreal>(1, bounds.bottom() - margin - areaTop);
    const auto rowHeight = [&](int n) { return std::min(areaH / n, f * 2.6); };
    const auto labelStep = [&](int n) {
        const qreal row = rowHeight(n);
        return row >= f * 1.15 ? 1 : figure::niceStep(f * 1.15 / row);
    };
    layout.labelStepQueries = labelStep(nQ);
    layout.labelStepKeys = labelStep(nK);
    // Widths in the bold font: a hovered token is written bold.
    const QFont bold = figure::makeFont(f, true);
    const QFontMetricsF boldMetrics(bold);
    qreal wQ = 0, wK = 0;
    for (int i = 0; i < nQ; ++i)
        wQ = std::max(wQ,
                      boldMetrics.horizontalAdvance(
                          tokenHeadLabel(result, i, true, layout.labelStepQueries)));
    for (int j = 0; j < nK; ++j)
        wK = std::max(
            wK,
            boldMetrics.horizontalAdvance(tokenHeadLabel(result, j, false, layout.labelStepKeys)));
    const qreal titleW = QFontMetricsF(bold).horizontalAdvance(QStringLiteral("queries"));
    wQ = std::min(std::max(wQ, titleW) + 2 * pad, widthCap);
    wK = std::min(std::max(wK, titleW) + 2 * pad, widthCap);
    const qreal available = bounds.width() - 2 * margin - wQ - wK;
    const qreal gap = std::max<qreal>(
        f * 3, std::min(available, std::clamp<qreal>(bounds.width() * 0.4, f * 10, f * 40)));
    const qreal left = bounds.center().x() - (wQ + gap + wK) / 2;

    layout.queryTitle = QRectF(left, y, wQ, lineH);
    layout.keyTitle = QRectF(left + wQ + gap, y, wK, lineH);
    auto column = [&](int n, qreal x, qreal w, QVector<QRectF> *boxes) {
        const qreal row = rowHeight(n);
        const qreal top = areaTop + (areaH - row * n) / 2;
        for (int i = 0; i < n; ++i)
            boxes->append(QRectF(x, top + row * i, w, row));
    };
    column(nQ, left, wQ, &layout.queryBoxes);
    column(nK, left + wQ + gap, wK, &layout.keyBoxes);
    return layout;
}

QString tokenHeadLabel(const SessionResult &result, int index, bool query, int step)
{
    if (step > 1)
        return query ? result.indexedQueryLabel(index) : result.indexedKeyLabel(index);
    return query ? result.queryLabel(index) : result.keyLabel(index);
}

std::vector<int> tokenShownSeries(const SessionResult &result, const TokenViewOptions &o)
{
    std::vector<int> series;
    for (int k = 0; k < result.headCount(); ++k)
        if (!o.hiddenHeads.contains(k))
            series.push_back(k);
    if (o.showMean)
        series.push_back(result.headCount());
    return series;
}

std::vector<TokenLine> tokenHeadLines(const SessionResult &result, const TokenViewOptions &o,
                                      const TokenHeadLayout &layout)
{
    std::vector<TokenLine> lines;
    if (!usable(&result))
        return lines;
    const int nQ = int(result.queryCount()), nK = int(result.keyCount());
    if (layout.queryBoxes.size() != nQ || layout.keyBoxes.size() != nK)
        return lines;
    const bool byQuery = o.hoverQuery >= 0 && o.hoverQuery < nQ;
    const bool byKey = !byQuery && o.hoverKey >= 0 && o.hoverKey < nK;
    const MatrixB &mask = result.maskState;
    const bool hasMask = mask.rows() == nQ && mask.cols() == nK;
    const std::vector<int> series = tokenShownSeries(result, o);
    const int seriesCount = int(series.size());
    const double largest = tokenLargestShownWeight(result, o);
    for (int slot = 0; slot < seriesCount; ++slot) {
        const int s = series[std::size_t(slot)];
        const MatrixD &w = seriesWeights(result, s);
        for (int i = byQuery ? o.hoverQuery : 0; i < (byQuery ? o.hoverQuery + 1 : nQ); ++i) {
            for (int j = byKey ? o.hoverKey : 0; j < (byKey ? o.hoverKey + 1 : nK); ++j) {
                const double v = w(i, j);
                // Signed weights (differential attention): a line for |w|, dashed when negative.
                const double size = result.signedWeights ? std::abs(v) : v;
                if ((hasMask && mask(i, j) != 0) || !std::isfinite(v) || size < o.threshold
                    || !(size > 0))
                    continue;
                lines.push_back({s, i, j, v, tokenLineOpacity(size, largest),
                                 QLineF(layout.queryAnchor(i, slot, seriesCount),
                                        layout.keyAnchor(j, slot, seriesCount))});
            }
        }
    }
    return lines;
}

TokenHit tokenHeadHit(const TokenHeadLayout &layout, const QPointF &pos)
{
    for (int i = 0; i < layout.queryBoxes.size(); ++i)
        if (layout.queryBoxes[i].contains(pos))
            return {0, i};
    for (int j = 0; j < layout.keyBoxes.size(); ++j)
        if (layout.keyBoxes[j].contains(pos))
            return {1, j};
    return {};
}

namespace {

void paintHeadView(QPainter *p, const QRectF &bounds, const SessionResult &result,
                   const TokenViewOptions &o)
{
    const TokenHeadLayout layout = tokenHeadLayout(result, o, bounds);
    const qreal f = layout.fontPixelSize;
    paintCaption(p, result, o, layout.caption);

    // Legend: swatches (rectangles) and names, then the line rule.
    const QFont font = figure::makeFont(f);
    const QFontMetricsF fm(font);
    p->setFont(font);
    const QVector<LegendItem> items = headLegend(result, o);
    qreal bottom = 0;
    const QVector<QRectF> cells
        = flowBoxes(legendWidths(items, fm, f), f * 1.5, layout.legend.topLeft(),
                    layout.legend.right(), f * 1.2, 0, &bottom);
    for (int k = 0; k < items.size(); ++k) {
        QRectF text = cells[k];
        if (items[k].color.isValid()) {
            const QRectF swatch(text.left(), text.center().y() - f * 0.4, f, f * 0.8);
            p->fillRect(swatch, items[k].color);
            text.setLeft(text.left() + f * 1.5);
        }
        p->setPen(o.foreground);
        p->drawText(text, Qt::AlignLeft | Qt::AlignVCenter, items[k].text);
    }

    const QFont bold = figure::makeFont(f, true);
    p->setFont(bold);
    p->setPen(o.foreground);
    p->drawText(layout.queryTitle, Qt::AlignRight | Qt::AlignVCenter, QStringLiteral("queries"));
    p->drawText(layout.keyTitle, Qt::AlignLeft | Qt::AlignVCenter, QStringLiteral("keys"));

    const int nQ = int(layout.queryBoxes.size()), nK = int(layout.keyBoxes.size());
    const bool byQuery = o.hoverQuery >= 0 && o.hoverQuery < nQ;
    const bool byKey = !byQuery && o.hoverKey >= 0 && o.hoverKey < nK;
    const QColor highlight = withAlpha(o.foreground, 0.12);
    if (byQuery)
        p->fillRect(layout.queryBoxes[o.hoverQuery], highlight);
    if (byKey)
        p->fillRect(layout.keyBoxes[o.hoverKey], highlight);

    // The lines: one drawLine each (one SVG <polyline>), coloured by series, opacity ∝ weight.
    p->setRenderHint(QPainter::Antialiasing, true);
    const std::vector<TokenLine> lines = tokenHeadLines(result, o, layout);
    const qreal lineWidth = std::clamp<qreal>(f * 0.16, 1.2, 3.0);
    for (const TokenLine &line : lines) {
        QPen pen(withAlpha(seriesColor(result, o, line.series), line.opacity), lineWidth);
        pen.setCapStyle(Qt::FlatCap);
        if (line.weight < 0)
            pen.setStyle(Qt::DashLine);
        p->setPen(pen);
        p->drawLine(line.line);
    }
    p->setRenderHint(QPainter::Antialiasing, false);

    // Token labels (every k-th when rows are too thin for text); the hovered one bold.
    const qreal pad = f * 0.5;
    auto labels = [&](const QVector<QRectF> &boxes, int step, int hovered, bool queries) {
        for (int i = 0; i < boxes.size(); ++i) {
            if (i % step != 0 && i != hovered)
                continue;
            const QString text = tokenHeadLabel(result, i, queries, step);
            const QRectF r = boxes[i].adjusted(pad, 0, -pad, 0);
            p->setFont(i == hovered ? bold : font);
            p->setPen(o.foreground);
            const QString shown
                = QFontMetricsF(p->font()).elidedText(text, Qt::ElideRight, r.width());
            p->drawText(QRectF(r.left(), r.center().y() - f, r.width(), 2 * f),
                        (queries ? Qt::AlignRight : Qt::AlignLeft) | Qt::AlignVCenter, shown);
        }
    };
    labels(layout.queryBoxes, layout.labelStepQueries, byQuery ? o.hoverQuery : -1, true);
    labels(layout.keyBoxes, layout.labelStepKeys, byKey ? o.hoverKey : -1, false);
}

} // namespace

// ---- coloured text ----

int tokenTextQuery(const SessionResult &result, const TokenViewOptions &o)
{
    const int nQ = int(result.queryCount());
    if (nQ <= 0)
        return -1;
    return o.query >= 0 && o.query < nQ ? o.query : nQ - 1;
}

int tokenTextHead(const SessionResult &result, const TokenViewOptions &o)
{
    return std::clamp(o.textHead, 0, std::max(result.headCount(), 0));
}

bool tokenTextSharedFlow(const SessionResult &result)
{
    return result.params.kind != AttentionKind::EncoderDecoder
        && result.queryCount() == result.keyCount() && result.keyIndex == result.queryIndex;
}

ColorNorm tokenTextNorm(const SessionResult &result, const TokenViewOptions &o)
{
    // Signed weights (differential attention) are centred on 0: [−1, 1] or the row's largest |w|.
    const bool signedWeights = usable(&result) && result.signedWeights;
    if (!o.rowRange || !usable(&result))
        return signedWeights ? ColorNorm::symmetric(1.0) : ColorNorm::linear(0, 1);
    const int i = tokenTextQuery(result, o);
    const MatrixD &w = seriesWeights(result, tokenTextHead(result, o));
    const MatrixB &mask = result.maskState;
    const bool hasMask = mask.rows() == w.rows() && mask.cols() == w.cols();
    double top = 0;
    for (Index j = 0; j < w.cols(); ++j)
        if (!(hasMask && mask(i, j)) && std::isfinite(w(i, j)))
            top = std::max(top, signedWeights ? std::abs(w(i, j)) : w(i, j));
    if (!(top > 0))
        top = 1.0;
    return signedWeights ? ColorNorm::symmetric(top) : ColorNorm::linear(0, top);
}

std::vector<TokenTextCell> tokenTextCells(const SessionResult &result, const TokenViewOptions &o)
{
    std::vector<TokenTextCell> cells;
    if (!usable(&result))
        return cells;
    const int i = tokenTextQuery(result, o);
    const MatrixD &w = seriesWeights(result, tokenTextHead(result, o));
    const int nK = int(result.keyCount());
    const MatrixB &mask = result.maskState;
    const bool hasMask = mask.rows() == result.queryCount() && mask.cols() == nK;
    const Colormap colormap(result.signedWeights ? ColormapId::RdBu : o.colormap);
    const ColorNorm norm = tokenTextNorm(result, o);
    cells.reserve(std::size_t(nK));
    for (int j = 0; j < nK; ++j) {
        TokenTextCell cell;
        cell.maskState = hasMask ? mask(i, j) : 0;
        cell.weight = cell.maskState ? 0.0 : w(i, j);
        cell.color = cell.maskState ? maskColor(o.colormap, cell.maskState)
                                    : colormap.map(norm(cell.weight));
        cell.textColor = readableTextColor(cell.color);
        cells.push_back(cell);
    }
    return cells;
}

TokenTextLayout tokenTextLayout(const SessionResult &result, const TokenViewOptions &o,
                                const QRectF &bounds)
{
    TokenTextLayout layout;
    if (!usable(&result))
        return layout;
    const bool shared = tokenTextSharedFlow(result);
    const int nQ = int(result.queryCount()), nK = int(result.keyCount());
    // A long text in a small figure: the font shrinks until the flows fit (down to 6 px).
    // Tokens are larger than the caption's text, as in CircuitsVis's view.
    for (qreal f = o.fontPixelSize * 1.25;; f *= 0.85) {
        layout = TokenTextLayout();
        layout.fontPixelSize = f;
        TokenViewOptions captionOptions = o; // the caption no larger than the other figures'
        captionOptions.fontPixelSize = std::min(f, o.fontPixelSize);
        const qreal margin = f * 0.8;
        qreal y = bounds.top() + margin;
        layout.caption = layoutCaption(result, captionOptions, bounds, margin, &y);
        const QFontMetricsF fm(figure::makeFont(f));
        const qreal left = bounds.left() + margin, right = bounds.right() - margin;
        const qreal lineH = f * 1.5;
        layout.title = QRectF(left, y, right - left, lineH);
        y += lineH + f * 0.4;
        const qreal pad = f * 0.45, boxH = f * 1.8;
        auto widths = [&](int n, bool queries) {
            QVector<qreal> w;
            for (int k = 0; k < n; ++k)
                w.append(std::max(
                    f * 1.6,
                    fm.horizontalAdvance(queries ? result.queryLabel(k) : result.keyLabel(k))
                        + 2 * pad));
            return w;
        };
        qreal bottom = y;
        if (!shared) {
            layout.queryHeading = QRectF(left, y, right - left, lineH);
            y += lineH;
            layout.queryBoxes = flowBoxes(widths(nQ, true), boxH, QPointF(left, y), right, f * 0.35,
                                          f * 0.5, &bottom);
            y = bottom + f * 0.8;
            layout.keyHeading = QRectF(left, y, right - left, lineH);
            y += lineH;
        }
        layout.keyBoxes = flowBoxes(widths(nK, false), boxH, QPointF(left, y), right, f * 0.35,
                                    f * 0.5, &bottom);
        y = bottom + f * 1.2;
        layout.colorbar = QRectF(left, y, std::min<qreal>(right - left, f * 26), f * 1.0);
        y = layout.colorbar.bottom() + f * 0.2;
        layout.legend = QRectF(left, y, right - left, lineH * 3);
        if (layout.legend.bottom() <= bounds.bottom() || f * 0.85 < 6)
            break;
    }
    return layout;
}

TokenHit tokenTextHit(const TokenTextLayout &layout, const QPointF &pos)
{
    const bool shared = layout.queryBoxes.isEmpty();
    for (int i = 0; i < layout.queryBoxes.size(); ++i)
        if (layout.queryBoxes[i].contains(pos))
            return {0, i};
    for (int j = 0; j < layout.keyBoxes.size(); ++j)
        if (layout.keyBoxes[j].contains(pos))
            return {shared ? 0 : 1, j};
    return {};
}

namespace {

void paintTextView(QPainter *p, const QRectF &bounds, const SessionResult &result,
                   const TokenViewOptions &o)
{
    const TokenTextLayout layout = tokenTextLayout(result, o, bounds);
    const qreal f = layout.fontPixelSize;
    TokenViewOptions captionOptions = o;
    captionOptions.fontPixelSize = std::min(f, o.fontPixelSize);
    paintCaption(p, result, captionOptions, layout.caption);
    const QFont font = figure::makeFont(f), bold = figure::makeFont(f, true);
    const int query = tokenTextQuery(result, o), head = tokenTextHead(result, o);
    const bool shared = layout.queryBoxes.isEmpty();
    const QString headName = head >= result.headCount() ? QStringLiteral("mean over heads")
                                                        : QStringLiteral("head %1").arg(head);

    p->setFont(bold);
    p->setPen(o.foreground);
    // The token in quotes after the position, unless the label is the position itself.
    const QString position = QString::number(result.originalQuery(query));
    const QString label = result.queryLabel(query);
    const QString named
        = label == position ? position : QStringLiteral("%1 \u201c%2\u201d").arg(position, label);
    p->drawText(layout.title, Qt::AlignLeft | Qt::AlignVCenter,
                QStringLiteral("Attention of query %1 over the keys, %2").arg(named, headName));
    p->setFont(font);
    if (!shared) {
        p->drawText(layout.queryHeading, Qt::AlignLeft | Qt::AlignVCenter,
                    QStringLiteral("queries (the outlined one is shown):"));
        p->drawText(layout.keyHeading, Qt::AlignLeft | Qt::AlignVCenter, QStringLiteral("keys:"));
    }

    const QColor border = withAlpha(o.foreground, 0.3);
    for (int i = 0; i < layout.queryBoxes.size(); ++i) {
        const QRectF &box = layout.queryBoxes[i];
        if (i == query)
            p->fillRect(box, withAlpha(o.foreground, 0.12));
        p->setPen(QPen(border, 1));
        p->drawRect(box);
        p->setPen(o.foreground);
        p->drawText(box, Qt::AlignCenter, result.queryLabel(i));
    }
    const std::vector<TokenTextCell> cells = tokenTextCells(result, o);
    bool anyMasked = false;
    for (int j = 0; j < layout.keyBoxes.size(); ++j) {
        const QRectF &box = layout.keyBoxes[j];
        const TokenTextCell &cell = cells[std::size_t(j)];
        if (cell.maskState) {
            anyMasked = true;
            drawMaskedBox(p, box, cell.maskState, o.colormap);
        } else {
            p->fillRect(box, QColor(cell.color));
        }
        p->setPen(QPen(border, 1));
        p->drawRect(box);
        p->setPen(cell.maskState ? QColor(Qt::black) : QColor(cell.textColor));
        p->drawText(box, Qt::AlignCenter, result.keyLabel(j));
    }
    // The query outlined: in a shared flow its own key box, else its query box.
    const QVector<QRectF> &queryBoxes = shared ? layout.keyBoxes : layout.queryBoxes;
    if (query >= 0 && query < queryBoxes.size()) {
        QPen pen(o.foreground, std::max<qreal>(2, f * 0.18));
        pen.setJoinStyle(Qt::MiterJoin);
        p->setPen(pen);
        p->setBrush(Qt::NoBrush);
        const qreal inset = pen.widthF() / 2;
        p->drawRect(queryBoxes[query].adjusted(-inset - 1, -inset - 1, inset + 1, inset + 1));
    }

    // Colour bar with its range, and the masked swatch.
    const ColorNorm norm = tokenTextNorm(result, o);
    const Colormap colormap(result.signedWeights ? ColormapId::RdBu : o.colormap);
    p->drawImage(layout.colorbar, colormap.strip(256, Qt::Horizontal));
    p->setPen(QPen(border, 1));
    p->drawRect(layout.colorbar);
    p->setPen(o.foreground);
    const qreal lineH = f * 1.5;
    QRectF ticks(layout.legend.left(), layout.legend.top(), layout.colorbar.width(), lineH);
    p->drawText(ticks, Qt::AlignLeft | Qt::AlignVCenter, figure::formatTick(norm.vmin));
    p->drawText(ticks, Qt::AlignRight | Qt::AlignVCenter, figure::formatTick(norm.vmax));
    const QString range = result.signedWeights
        ? QStringLiteral("signed weight \u00b7 %1 \u00b7 %2 \u00b7 range %3, centred on 0")
              .arg(colormap.name(), headName,
                   o.rowRange ? QStringLiteral("[\u2212row max |w|, row max |w|]")
                              : QStringLiteral("[\u22121, 1]"))
        : QStringLiteral("weight \u00b7 %1 \u00b7 %2 \u00b7 range %3")
              .arg(colormap.name(), headName,
                   o.rowRange ? QStringLiteral("[0, row max]") : QStringLiteral("[0, 1]"));
    const QRectF note(layout.legend.left(), ticks.bottom(), layout.legend.width(), lineH);
    p->drawText(note, Qt::AlignLeft | Qt::AlignVCenter,
                QFontMetricsF(font).elidedText(range, Qt::ElideRight, note.width()));
    // The mask swatches on the line below (beside the range they ran off a narrow figure).
    const QRectF maskLine(note.left(), note.bottom(), note.width(), lineH);
    qreal x = maskLine.left();
    if (anyMasked) {
        // One swatch per mask state present, named as the heatmaps' legends name them.
        std::vector<std::uint8_t> states;
        for (const TokenTextCell &cell : cells)
            if (cell.maskState
                && std::find(states.begin(), states.end(), cell.maskState) == states.end())
                states.push_back(cell.maskState);
        for (const std::uint8_t state : states) {
            const QRectF swatch(x, maskLine.center().y() - f * 0.55, f * 2.2, f * 1.1);
            drawMaskedBox(p, swatch, state, o.colormap);
            p->setPen(o.foreground);
            const QString text = QString::fromStdString(maskStateText(state));
            p->drawText(QRectF(swatch.right() + f * 0.4, maskLine.top(), 1e4, lineH),
                        Qt::AlignLeft | Qt::AlignVCenter, text);
            x = swatch.right() + f * 1.6 + QFontMetricsF(font).horizontalAdvance(text);
        }
    }
}

} // namespace

void paintTokenFigure(QPainter *painter, const QRectF &bounds, const SessionResult *result,
                      const TokenViewOptions &options)
{
    painter->save();
    painter->fillRect(bounds, options.background);
    painter->setRenderHint(QPainter::TextAntialiasing);
    const QString problem = tokenViewProblem(result);
    if (!problem.isEmpty())
        paintMessage(painter, bounds, options, problem);
    else if (options.view == TokenView::Heads)
        paintHeadView(painter, bounds, *result, options);
    else
        paintTextView(painter, bounds, *result, options);
    painter->restore();
}

bool saveTokenFigure(const QString &path, QSize size, qreal dpr, const SessionResult *result,
                     const TokenViewOptions &options, QString *error, const QString &format)
{
    const QString problem = tokenViewProblem(result);
    if (!problem.isEmpty()) {
        if (error)
            *error = QStringLiteral("cannot write '%1': %2").arg(path, problem);
        return false;
    }
    const QString title = options.view == TokenView::Heads
        ? QStringLiteral("Attention Lab \u2014 token head view")
        : QStringLiteral("Attention Lab \u2014 coloured tokens");
    const FigurePainter paint = [&](QPainter *p, const QRectF &bounds, bool) {
        paintTokenFigure(p, bounds, result, options);
    };
    if (format == QLatin1String("png"))
        return writeFigurePng(path, size, dpr, options.background, paint, error);
    if (format == QLatin1String("svg"))
        return writeFigureSvg(path, size, title, captionOf(*result), paint, error);
    if (format == QLatin1String("pdf"))
        return writeFigurePdf(path, size, title, paint, error);
    return writeFigure(path, size, dpr, options.background, title, captionOf(*result), paint,
                       error);
}

QString tokenToolTip(const SessionResult &result, const TokenViewOptions &o, const QRectF &bounds,
                     const QPointF &pos)
{
    if (!usable(&result))
        return {};
    auto quoted = [](const QString &s) { return QStringLiteral("\u201c%1\u201d").arg(s); };
    if (o.view == TokenView::Heads) {
        const TokenHit hit = tokenHeadHit(tokenHeadLayout(result, o, bounds), pos);
        if (!hit.valid())
            return {};
        QStringList lines;
        const bool query = hit.side == 0;
        lines << (query ? QStringLiteral("query %1 %2: its weights over the keys")
                              .arg(result.originalQuery(hit.index))
                              .arg(quoted(result.queryLabel(hit.index)))
                        : QStringLiteral("key %1 %2: the weights every query gives it")
                              .arg(result.originalKey(hit.index))
                              .arg(quoted(result.keyLabel(hit.index))));
        // Per shown series: the largest weight of the row (query) or column (key).
        for (const int s : tokenShownSeries(result, o)) {
            const MatrixD &w = seriesWeights(result, s);
            Index best = 0;
            const double v
                = query ? w.row(hit.index).maxCoeff(&best) : w.col(hit.index).maxCoeff(&best);
            lines << QStringLiteral("%1: largest %2 %3 %4")
                         .arg(seriesName(result, s))
                         .arg(v, 0, 'f', 3)
                         .arg(query ? QStringLiteral("\u2192 key") : QStringLiteral("from query"))
                         .arg(quoted(query ? result.keyLabel(int(best))
                                           : result.queryLabel(int(best))));
        }
        return lines.join(QLatin1Char('\n'));
    }
    const TokenTextLayout layout = tokenTextLayout(result, o, bounds);
    const TokenHit hit = tokenTextHit(layout, pos);
    if (!hit.valid())
        return {};
    const bool shared = layout.queryBoxes.isEmpty();
    QStringList lines;
    if (hit.side == 1 || shared) {
        const std::vector<TokenTextCell> cells = tokenTextCells(result, o);
        const TokenTextCell &cell = cells[std::size_t(hit.index)];
        const int i = tokenTextQuery(result, o);
        lines << QStringLiteral("key %1 %2: %3")
                     .arg(result.originalKey(hit.index))
                     .arg(quoted(result.keyLabel(hit.index)))
                     .arg(cell.maskState ? QString::fromStdString(maskStateText(cell.maskState))
                                         : QStringLiteral("weight %1 from query %2 %3")
                                               .arg(cell.weight, 0, 'f', 4)
                                               .arg(result.originalQuery(i))
                                               .arg(quoted(result.queryLabel(i))));
    }
    if (hit.side == 0)
        lines << QStringLiteral("click: colour the keys by the attention of query %1 %2")
                     .arg(result.originalQuery(hit.index))
                     .arg(quoted(result.queryLabel(hit.index)));
    return lines.join(QLatin1Char('\n'));
}

} // namespace attn
