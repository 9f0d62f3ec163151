#include "ui/render/panelfigure.h"

#include "ui/render/figurefile.h"
#include "ui/render/heatmaprenderer.h"
#include "ui/render/tileimage.h"

#include "core/analysis/metrics.h"
#include "core/attention/mask.h"

#include <QFileInfo>
#include <QFont>
#include <QFontMetricsF>
#include <QPageSize>
#include <QPainter>
#include <QPainterPath>
#include <QPdfWriter>
#include <QSaveFile>
#include <QSvgGenerator>

#include <algorithm>
#include <array>
#include <bit>
#include <cmath>
#include <limits>

namespace attn {

namespace {

using figure::formatTick;
using figure::linearTicks;
using figure::logTicks;
using figure::makeFont;
using figure::minusSign;
using figure::niceStep;
using figure::textStyle;

// Which mask states and special values a panel holds (for its legend): bit s (1 ≤ s ≤ 15) for
// cells whose MaskStateBits are s.
enum PanelFlags : int {
    HasMaskStates = 0xfffe,
    HasFullyMasked = 1 << 16,
    HasNaN = 1 << 17,
};

// Legend rows the flags ask for: one per mask state, fully masked rows and NaN.
int legendSwatches(int flags)
{
    return std::popcount(unsigned(flags & (HasMaskStates | HasFullyMasked | HasNaN)));
}

// Lines `text` takes word-wrapped at `width` (at least 1).
int wrappedLines(const QFontMetricsF &fm, const QString &text, qreal width)
{
    if (fm.horizontalAdvance(text) <= width)
        return 1;
    const qreal h
        = fm.boundingRect(QRectF(0, 0, std::max(width, 1.0), 1e6), Qt::TextWordWrap, text).height();
    return std::max(1, int(std::lround(h / fm.lineSpacing())));
}

// Height of caption line `text` word-wrapped at `width`.
qreal captionLineHeight(const QFontMetricsF &fm, const QString &text, qreal width)
{
    const qreal wrapped
        = fm.boundingRect(QRectF(0, 0, std::max(width, 1.0), 1e6), Qt::TextWordWrap, text).height();
    return std::max(fm.height(), wrapped) + 0.15 * fm.height();
}

// Whether any of the n values is NaN. Chunks of 2048 are OR-reduced without branches (the
// compiler vectorises them; Eigen's isNaN().any() runs a scalar loop, ~7× slower at 1024²),
// stopping after the first chunk holding a NaN.
bool anyNaN(const double *values, Index n)
{
    constexpr Index chunk = 2048;
    for (Index begin = 0; begin < n; begin += chunk) {
        bool any = false;
        for (Index k = begin, end = std::min(n, begin + chunk); k < end; ++k)
            any |= std::isnan(values[k]);
        if (any)
            return true;
    }
    return false;
}

int panelFlags(const FigurePanel &p)
{
    int flags = 0;
    if (p.maskState) {
        const MatrixB &m = *p.maskState;
        const std::uint8_t *states = m.data();
        constexpr Index chunk = 4096;
        for (Index begin = 0; begin < m.size(); begin += chunk) {
            const Index end = std::min(m.size(), begin + chunk);
            std::uint8_t any = 0; // a chunk of unmasked cells is passed over in one OR-reduction
            for (Index k = begin; k < end; ++k)
                any |= states[k];
            if (!any)
                continue;
            for (Index k = begin; k < end; ++k)
                flags |= (1 << (states[k] & 15)) & HasMaskStates;
        }
    }
    if (p.fullyMasked
        && std::any_of(p.fullyMasked->begin(), p.fullyMasked->end(), [](auto v) { return v; }))
        flags |= HasFullyMasked;
    if (p.values && anyNaN(p.values->data(), p.values->size()))
        flags |= HasNaN;
    return flags;
}

} // namespace

FigureAxes FigureAxes::of(const SessionResult &result)
{
    FigureAxes axes;
    const SessionParameters &p = result.params;
    for (int i = 0; i < int(result.queryCount()); ++i)
        axes.queries << result.indexedQueryLabel(i);
    for (int j = 0; j < int(result.keyCount()); ++j)
        axes.keys << result.indexedKeyLabel(j);
    axes.queryTokens = !p.tokens.empty();
    axes.keyTokens = p.kind == AttentionKind::EncoderDecoder ? Index(p.tokens.size()) > p.n
                                                             : !p.tokens.empty();
    return axes;
}

qint64 PanelFigure::cellCount() const
{
    qint64 cells = 0;
    for (const FigurePanel &panel : m_panels)
        if (panel.values)
            cells += qint64(panel.values->rows()) * qint64(panel.values->cols());
    return cells;
}

PanelFigure::PanelFigure() = default;
PanelFigure::~PanelFigure() = default;

void PanelFigure::setStyle(const FigureStyle &style)
{
    if (style == m_style)
        return;
    const bool imagesChange = style.maxImageSide != m_style.maxImageSide;
    m_style = style;
    m_layoutValid = false;
    if (imagesChange)
        m_images.clear();
}

void PanelFigure::setContent(const QStringList &caption, const QVector<FigurePanel> &panels,
                             const FigureAxes &axes, const FigureTable &table,
                             const QStringList &notes)
{
    m_caption = caption;
    m_panels = panels;
    m_axes = axes;
    m_table = table;
    m_notes = notes;
    m_message = panels.isEmpty() ? QStringLiteral("Nothing to show") : QString();
    m_flags.clear();
    for (const FigurePanel &panel : m_panels)
        m_flags.append(panelFlags(panel));
    m_images.clear();
    m_layoutValid = false;
}

void PanelFigure::setMessage(const QStringList &caption, const QString &message)
{
    m_caption = caption;
    m_panels.clear();
    m_table = {};
    m_notes.clear();
    m_message = message;
    m_flags.clear();
    m_images.clear();
    m_layoutValid = false;
}

QString PanelFigure::documentTitle() const
{
    return QStringLiteral("Attention Lab figure");
}

int PanelFigure::queryCount() const
{
    return m_panels.isEmpty() || !m_panels.front().values ? 0
                                                          : int(m_panels.front().values->rows());
}

int PanelFigure::keyCount() const
{
    return m_panels.isEmpty() || !m_panels.front().values ? 0
                                                          : int(m_panels.front().values->cols());
}

QRgb PanelFigure::maskedColor(ColormapId id, std::uint8_t state)
{
    return maskColor(id, state);
}

QString PanelFigure::formatValue(double v)
{
    if (std::isnan(v))
        return QStringLiteral("NaN");
    if (std::isinf(v))
        return v < 0 ? QStringLiteral("\u2212\u221e") : QStringLiteral("+\u221e");
    return minusSign(QString::number(v, 'g', 6));
}

void PanelFigure::makeDiverging(FigurePanel &panel)
{
    double lo = std::numeric_limits<double>::infinity();
    double hi = -lo;
    if (panel.values) {
        const MatrixD &m = *panel.values;
        const MatrixB *mask = panel.maskState && panel.maskState->rows() == m.rows()
                && panel.maskState->cols() == m.cols()
            ? panel.maskState
            : nullptr;
        for (Index k = 0; k < m.size(); ++k) {
            const double v = m.data()[k];
            if (!std::isfinite(v) || (mask && mask->data()[k]))
                continue;
            lo = std::min(lo, v);
            hi = std::max(hi, v);
        }
    }
    panel.colormap = ColormapId::RdBu;
    if (!(lo <= hi)) {
        lo = hi = 0.0;
    }
    // All-zero (or empty) data: a default range of ±1 with readable ticks, never a degenerate
    // ±1e-300 scale whose ticks read "1e-300".
    const double largest = std::max(std::abs(lo), std::abs(hi));
    const bool allZero = !(largest > 0.0);
    const double m = allZero ? 1.0 : largest;
    panel.norm = ColorNorm::symmetric(m);
    panel.rangeNote = allZero ? QStringLiteral("all 0 (scale \u00b11)")
                              : QStringLiteral("centred on 0: \u00b1%1").arg(formatTick(m));
    panel.markDataRange = true;
    panel.dataMin = lo;
    panel.dataMax = hi;
    panel.poolMax = false;
}

void PanelFigure::setWeightStatistics(FigurePanel &panel)
{
    panel.statistics.clear();
    if (!panel.values)
        return;
    const MatrixD &w = *panel.values;
    const bool hasMask = panel.maskState && panel.maskState->rows() == w.rows()
        && panel.maskState->cols() == w.cols();
    const bool hasFlags = panel.fullyMasked && Index(panel.fullyMasked->size()) == w.rows();
    const WeightStatistics s = weightStatistics(
        w, hasMask ? *panel.maskState : MatrixB(),
        hasFlags ? *panel.fullyMasked : std::vector<std::uint8_t>(), panel.expectedRowSum);
    auto number = [](double v) {
        return std::isnan(v) ? QStringLiteral("\u2013") : minusSign(QString::number(v, 'g', 4));
    };
    panel.statistics
        << QStringLiteral("min %1").arg(number(s.min))
        << QStringLiteral("max %1").arg(number(s.max))
        << QStringLiteral("mean %1").arg(number(s.mean))
        << (panel.expectedRowSum != 1.0
                ? QStringLiteral("worst |row sum \u2212 %1| %2")
                      .arg(number(panel.expectedRowSum), number(s.worstRowSumError))
                : std::isnan(panel.wholeRowSumError)
                ? QStringLiteral("worst |row sum \u2212 1| %1").arg(number(s.worstRowSumError))
                : QStringLiteral("worst |row sum \u2212 1| %1 (whole rows)")
                      .arg(number(panel.wholeRowSumError)));
}

double PanelFigure::wholeRowSumError(const SessionResult &r, int head)
{
    if (r.keyCount() >= r.params.keyCount() || r.metrics.empty())
        return std::numeric_limits<double>::quiet_NaN();
    if (head >= 0 && std::size_t(head) < r.metrics.size()) {
        const VectorD &e = r.metrics[std::size_t(head)].rowSumError;
        return e.size() > 0 ? e.maxCoeff() : 0.0;
    }
    // The mean over heads: its row sums are the mean of the heads' and err no more than the
    // worst of them.
    return r.worstRowSumError;
}

QString PanelFigure::describeCell(const FigureHit &) const
{
    return {};
}

QImage PanelFigure::panelImage(int index) const
{
    const int nQ = queryCount(), nK = keyCount();
    const int side = std::max(1, m_style.maxImageSide);
    return panelImage(index, (nQ + side - 1) / side, (nK + side - 1) / side);
}

QImage PanelFigure::panelImage(int index, int rowBlock, int colBlock) const
{
    if (index < 0 || index >= m_panels.size() || !m_panels[index].values)
        return {};
    rowBlock = std::max(rowBlock, 1);
    colBlock = std::max(colBlock, 1);
    if (m_images.size() != m_panels.size()) {
        m_images = QVector<QImage>(m_panels.size());
        m_imageBlocks = QVector<QPoint>(m_panels.size());
    }
    if (!m_images[index].isNull() && m_imageBlocks[index] == QPoint(colBlock, rowBlock))
        return m_images[index];

    const FigurePanel &p = m_panels[index];
    TileImageRequest request;
    request.values = p.values;
    request.maskState = p.maskState;
    request.colormap = p.colormap;
    request.norm = p.norm;
    request.pooling = p.poolMax ? HeatmapPooling::Max : HeatmapPooling::Mean;
    request.rowBlock = rowBlock;
    request.colBlock = colBlock;
    const QImage image = buildTileImage(request);
    m_images[index] = image;
    m_imageBlocks[index] = QPoint(colBlock, rowBlock);
    return image;
}

QStringList PanelFigure::legendLines(const FigurePanel &panel) const
{
    QStringList lines;
    lines << QStringLiteral("%1, %2").arg(Colormap(panel.colormap).name(), panel.norm.scaleName());
    if (!panel.rangeNote.isEmpty())
        lines << panel.rangeNote;
    if (panel.markDataRange)
        lines << QStringLiteral("\u25b8 data min %1").arg(formatTick(panel.dataMin))
              << QStringLiteral("\u25b8 data max %1").arg(formatTick(panel.dataMax));
    lines << panel.statistics;
    return lines;
}

PanelFigureLayout PanelFigure::layout(const QRectF &bounds) const
{
    if (!m_layoutValid || bounds != m_layoutBounds) {
        m_layout = computeLayout(bounds);
        m_layoutBounds = bounds;
        m_layoutValid = true;
    }
    return m_layout;
}

PanelFigureLayout PanelFigure::computeLayout(const QRectF &bounds) const
{
    PanelFigureLayout lay;
    const int count = panelCount();
    const qreal f = m_style.fontPixelSize > 0
        ? m_style.fontPixelSize
        : std::clamp(
            std::min(bounds.width() / (30.0 * std::max(count, 1) + 10.0), bounds.height() / 45.0),
            9.0, 16.0);
    lay.fontPixelSize = f;
    const QFontMetricsF fm(makeFont(f));
    const QFontMetricsF fmBold(makeFont(f, true));
    const qreal lineH = fm.height();
    const qreal pad = 0.6 * f;
    QRectF r = bounds.adjusted(pad, pad, -pad, -pad);
    if (!m_caption.isEmpty()) {
        // Caption lines wrap at the width (a narrow view shows every parameter, never "…").
        qreal h = 0;
        for (int l = 0; l < m_caption.size(); ++l)
            h += captionLineHeight(l == 0 ? fmBold : fm, m_caption[l], r.width());
        lay.caption = QRectF(r.left(), r.top(), r.width(), h);
        r.setTop(r.top() + h + 0.4 * f);
    }
    qreal footerH = 0;
    if (!m_table.isEmpty())
        footerH += (m_table.rows.size() + 1) * lineH * 1.25 + 0.3 * f;
    for (const QString &note : m_notes)
        footerH
            += fm.boundingRect(QRectF(0, 0, std::max(r.width(), 1.0), 1e6), Qt::TextWordWrap, note)
                   .height()
            + 0.2 * f;
    if (footerH > 0) {
        lay.footer = QRectF(r.left(), r.bottom() - footerH, r.width(), footerH);
        r.setBottom(r.bottom() - footerH - 0.6 * f);
    }
    const int nQ = queryCount(), nK = keyCount();
    if (count == 0 || nQ == 0 || nK == 0 || r.width() <= 0 || r.height() <= 0)
        return lay;

    // Legend column of each panel: the widest legend text of any panel.
    qreal textW = 0;
    int legendRows = 0;
    for (int k = 0; k < count; ++k) {
        const FigurePanel &p = m_panels[k];
        const QStringList lines = legendLines(p);
        for (const QString &t : lines)
            textW = std::max(textW, fm.horizontalAdvance(t));
        textW = std::max(textW, fmBold.horizontalAdvance(p.quantity));
        const int flags = m_flags.value(k);
        const int swatches = legendSwatches(flags);
        legendRows = std::max(legendRows, int(lines.size()) + swatches);
        for (int state = 1; state < 16; ++state) // the mask entries, after their swatch
            if (flags & (1 << state))
                textW = std::max(
                    textW,
                    fm.horizontalAdvance(QString::fromStdString(maskStateText(std::uint8_t(state))))
                        + 1.5 * f);
    }
    for (const char *t : {"causal + padding-masked", "padding-masked", "fully masked row"})
        textW = std::max(textW, fm.horizontalAdvance(QLatin1String(t)) + 1.5 * f);
    textW = std::max(textW, 1.8 * f + fm.horizontalAdvance(QStringLiteral("\u22120.0001")));

    // Label sizes.
    const qreal elideW = 7.0 * f;
    qreal yLabelW = fm.horizontalAdvance(QString::number(std::max(nQ - 1, 0)));
    const bool keyTokens = m_axes.keyTokens;
    for (int i = 0; i < nQ && i < m_axes.queries.size(); ++i)
        yLabelW = std::max(yLabelW, std::min(elideW, fm.horizontalAdvance(m_axes.queries[i])));
    qreal xLabelW = fm.horizontalAdvance(QString::number(std::max(nK - 1, 0)));
    lay.rotateKeyLabels = keyTokens;
    for (int j = 0; j < nK && j < m_axes.keys.size(); ++j)
        xLabelW = std::max(xLabelW, std::min(elideW, fm.horizontalAdvance(m_axes.keys[j])));
    const qreal tick = 0.3 * f;
    const qreal marker = 0.55 * f; // fully-masked-row marker strip
    const qreal left = lineH + 0.3 * f + yLabelW + tick + marker;
    // Left of a map whose row labels are the first panel's (FigureStyle::shareQueryLabels).
    const qreal leftShared = m_style.shareQueryLabels ? tick + marker : left;
    // Above the map: the panel title and the colourbar's quantity on one line, or, when a title
    // is wider than its map, the title on a line of its own across the panel and the quantity
    // under it (decided below, once the cell size is known).
    qreal top = lineH * 1.5;
    qreal titleW = 0;
    for (const FigurePanel &p : m_panels)
        titleW = std::max(titleW, fmBold.horizontalAdvance(p.title));
    const qreal bottom = tick + (lay.rotateKeyLabels ? xLabelW : lineH) + 0.1 * f + lineH + 0.5 * f;
    const qreal gap = 0.9 * f; // map → legend
    const qreal between = 1.0 * f; // least space between panels

    qreal legendLinesH = (legendRows + 0.8) * lineH * 1.15;
    const qreal rowGap = 0.8 * f; // between rows of panels

    // Arrangement: the columns × rows of panels that give the biggest cells (side by side in a
    // wide area, stacked in a tall one). Ties go to more columns (the pipeline reads left to
    // right).
    // Under the map: its labels, or the legend lines under the colourbar when they reach lower.
    qreal below = std::max(bottom, 0.6 * f + legendLinesH);
    // The legend column beside the map: when a row has room for the whole legend (a colourbar
    // of at least minBar and the lines under it) beside the map and its labels, the map takes
    // the row's whole height and the colourbar gives the lines their room (see barH below);
    // otherwise the lines run below the map's labels, under a colourbar as tall as the map.
    const qreal minBar = 3.0 * f;
    const auto mapRoom = [&](qreal rowH) {
        return rowH - top >= minBar + 0.6 * f + legendLinesH ? rowH - top - bottom
                                                             : rowH - top - below;
    };
    int cols = count;
    qreal cell = -1, legendW = 0;
    auto arrange = [&] {
        cols = count;
        cell = -1;
        legendW = 0;
        for (int c = count; c >= 1; --c) {
            const int rows = (count + c - 1) / c;
            const qreal colW = r.width() / c;
            const qreal lw = std::min(textW + 0.4 * f, colW * 0.42);
            const qreal rowH = (r.height() - (rows - 1) * rowGap) / rows;
            const qreal lefts = left + (c - 1) * leftShared;
            const qreal size = std::min((r.width() - lefts - c * (between + gap + lw)) / (c * nK),
                                        mapRoom(rowH) / nQ);
            if (size > cell * 1.05) {
                cell = size;
                cols = c;
                legendW = lw;
            }
        }
    };
    arrange();
    // Legend lines wider than the chosen legend column wrap (never elided: "±0…" hid the
    // range); with more lines the legend reaches lower, so arrange again for their height.
    {
        int wrappedRows = 0;
        for (int k = 0; k < count; ++k) {
            int rowsK = 0;
            for (const QString &t : legendLines(m_panels[k]))
                rowsK += wrappedLines(fm, t, legendW);
            const int flags = m_flags.value(k);
            rowsK += legendSwatches(flags & ~HasMaskStates);
            for (int state = 1; state < 16; ++state) // mask labels wrap beside their swatch
                if (flags & (1 << state))
                    rowsK += wrappedLines(
                        fm, QString::fromStdString(maskStateText(std::uint8_t(state))),
                        legendW - 1.5 * f);
            wrappedRows = std::max(wrappedRows, rowsK);
        }
        if (wrappedRows > legendRows) {
            legendRows = wrappedRows;
            legendLinesH = (legendRows + 0.8) * lineH * 1.15;
            below = std::max(bottom, 0.6 * f + legendLinesH);
            arrange();
        }
    }
    lay.legendWidth = legendW;
    lay.titleOwnLine = false;
    {
        const qreal c = cell >= 4.0 ? std::floor(cell) : std::max(cell, 0.0);
        if (titleW > nK * c + 0.8 * f) {
            top = lineH * 2.6;
            lay.titleOwnLine = true;
            arrange();
        }
    }
    const int rows = (count + cols - 1) / cols;
    cell = std::max(cell, 0.0);
    if (cell >= 4.0)
        cell = std::floor(cell); // whole pixels: every cell the same size
    lay.cellSize = cell;
    lay.columns = cols;

    const qreal mapW = nK * cell, mapH = nQ * cell;
    const qreal panelW = left + mapW + gap + legendW;
    const qreal rowH = (r.height() - (rows - 1) * rowGap) / rows;
    qreal barH = mapH;
    if (barH < 8.0 * f)
        barH = std::min(8.0 * f, std::max(4.0 * f, rowH - top - legendLinesH));
    // A map as tall as its row: the colourbar shortens so the lines under it end in the row.
    const qreal barRoom = std::max(mapH + bottom, rowH - top) - 0.6 * f - legendLinesH;
    if (barH > barRoom)
        barH = std::max(minBar, barRoom);
    const qreal blockH = top + std::max(mapH + bottom, barH + 0.6 * f + legendLinesH);
    const qreal spacing
        = std::max(0.0, (r.width() - cols * panelW + (cols - 1) * (left - leftShared)) / cols);
    const qreal x0 = r.left() + spacing / 2;
    const qreal totalH = rows * blockH + (rows - 1) * rowGap;
    // Panels start under the caption and the table follows them: spare height (the panels
    // are limited by the width) goes below everything instead of into two empty bands.
    const qreal y0 = r.top();
    if (!lay.footer.isNull() && totalH < r.height())
        lay.footer.moveTop(y0 + totalH + 0.6 * f);
    for (int k = 0; k < count; ++k) {
        const qreal top0 = y0 + (k / cols) * (blockH + rowGap);
        const int column = k % cols;
        const qreal leftK = column > 0 ? leftShared : left;
        const qreal frameX = x0 + column * (panelW + spacing)
            - (column > 0 ? column - 1 : 0) * (left - leftShared);
        const QRectF frame(frameX, top0, leftK + mapW + gap + legendW, blockH);
        const QRectF map(frame.left() + leftK, top0 + top, mapW, mapH);
        const QRectF legend(map.right() + gap, top0, legendW, blockH);
        lay.frames.append(frame);
        lay.maps.append(map);
        lay.legends.append(legend);
        lay.colorbars.append(QRectF(legend.left() + 0.2 * f, map.top(), 1.1 * f, barH));
    }

    // Tick steps: labels must not overlap.
    const qreal rowNeed = lineH * 1.05;
    const qreal colNeed = lay.rotateKeyLabels ? lineH * 1.05 : xLabelW + 0.6 * f;
    lay.tickStepRows = cell > 0 ? niceStep(rowNeed / cell) : 1;
    lay.tickStepCols = cell > 0 ? niceStep(colNeed / cell) : 1;
    return lay;
}

void PanelFigure::paint(QPainter *painter, const QRectF &bounds) const
{
    paintImpl(painter, bounds, false);
}

void PanelFigure::paintImpl(QPainter *painter, const QRectF &bounds, bool vectorOutput) const
{
    painter->save();
    painter->fillRect(bounds, m_style.background);
    const PanelFigureLayout lay = layout(bounds);
    const qreal f = lay.fontPixelSize;
    const figure::TextStyle style = textStyle(f, m_style.foreground);
    const QFont &font = style.font, &bold = style.bold;
    const QFontMetricsF &fm = style.fm;
    const QColor &fg = style.fg, &muted = style.muted;
    painter->setFont(font);
    painter->setPen(fg);

    // Caption: the first line in bold.
    {
        qreal y = lay.caption.top();
        for (int l = 0; l < m_caption.size(); ++l) {
            painter->setFont(l == 0 ? bold : font);
            const QFontMetricsF lfm(l == 0 ? bold : font);
            const qreal h = captionLineHeight(lfm, m_caption[l], lay.caption.width());
            painter->drawText(QRectF(lay.caption.left(), y, lay.caption.width(), h),
                              Qt::AlignLeft | Qt::AlignTop | Qt::TextWordWrap, m_caption[l]);
            y += h;
        }
    }
    painter->setFont(font);

    if (m_panels.isEmpty() || lay.maps.isEmpty() || lay.cellSize <= 0) {
        const QString text = !m_message.isEmpty() ? m_message
            : m_panels.isEmpty()                  ? QStringLiteral("Nothing to show")
                                                  : QStringLiteral("Too small to draw the panels");
        painter->drawText(bounds, Qt::AlignCenter | Qt::TextWordWrap, text);
        painter->restore();
        return;
    }

    const int nQ = queryCount();
    const int nK = keyCount();
    const qreal cell = lay.cellSize;
    const qreal tick = 0.3 * f;

    // Device pixels per logical pixel, to build hatched images at the resolution they show at.
    qreal devScale = painter->device()->devicePixelRatioF() * std::abs(painter->transform().m11());
    if (vectorOutput)
        devScale = std::max<qreal>(devScale, 2.0);
    devScale = std::max<qreal>(devScale, 1.0);

    for (int k = 0; k < m_panels.size(); ++k) {
        const FigurePanel &panel = m_panels[k];
        const QRectF &map = lay.maps[k];
        const QRectF &frame = lay.frames[k];
        const QRectF &legend = lay.legends[k];
        const int flags = m_flags.value(k);

        // Title centred over the map when it fits (else from the panel's left edge, elided),
        // the quantity over the colourbar.
        painter->setFont(bold);
        painter->setPen(fg);
        {
            const QFontMetricsF fmBold(bold);
            const qreal titleH = map.top() - frame.top() - 0.2 * f;
            const qreal centredW = map.width() + 0.8 * f;
            const qreal titleW = fmBold.horizontalAdvance(panel.title);
            if (lay.titleOwnLine) {
                // A line of its own across the whole panel (map and legend), above the
                // quantity line.
                const qreal room = frame.width();
                painter->drawText(QRectF(frame.left(), frame.top(), room, fmBold.height()),
                                  Qt::AlignLeft | Qt::AlignVCenter,
                                  fmBold.elidedText(panel.title, Qt::ElideRight, room));
            } else if (titleW <= centredW) {
                painter->drawText(
                    QRectF(map.center().x() - centredW / 2, frame.top(), centredW, titleH),
                    Qt::AlignHCenter | Qt::AlignBottom, panel.title);
            } else {
                const qreal room = map.right() + 0.4 * f - frame.left();
                painter->drawText(QRectF(frame.left(), frame.top(), room, titleH),
                                  Qt::AlignLeft | Qt::AlignBottom,
                                  fmBold.elidedText(panel.title, Qt::ElideRight, room));
            }
        }
        painter->drawText(
            QRectF(legend.left(), frame.top(), legend.width(), map.top() - frame.top() - 0.2 * f),
            Qt::AlignLeft | Qt::AlignBottom,
            QFontMetricsF(bold).elidedText(panel.quantity, Qt::ElideRight, legend.width()));
        painter->setFont(font);

        // Heatmap: one pixel per cell scaled without smoothing; enlarged to the device size and
        // hatched when cells are big.
        // More cells than device pixels: pool blocks of cells to about one pixel each (max for
        // weights, mean for scores), so no cell is skipped by the scaling.
        const QSizeF devSize = map.size() * devScale;
        const int side = std::max(1, m_style.maxImageSide);
        const int rowBlock = std::max((nQ + side - 1) / side,
                                      int(std::ceil(nQ / std::max(devSize.height(), 1.0) - 1e-9)));
        const int colBlock = std::max((nK + side - 1) / side,
                                      int(std::ceil(nK / std::max(devSize.width(), 1.0) - 1e-9)));
        QImage image = panelImage(k, rowBlock, colBlock);
        const bool anyMasked = flags & HasMaskStates;
        image = enlargedTileImage(std::move(image), devSize, cell * devScale, vectorOutput,
                                  anyMasked ? panel.maskState : nullptr, QRect(), panel.colormap,
                                  f * devScale);
        painter->setRenderHint(QPainter::SmoothPixmapTransform, false);
        painter->drawImage(map, image);
        painter->setPen(QPen(muted, 0));
        painter->setBrush(Qt::NoBrush);
        painter->drawRect(map);

        // Fully masked rows: a red strip left of the row (runs merged).
        if ((flags & HasFullyMasked) && panel.fullyMasked) {
            const std::vector<std::uint8_t> &rows = *panel.fullyMasked;
            for (int i = 0; i < nQ && i < int(rows.size());) {
                if (!rows[std::size_t(i)]) {
                    ++i;
                    continue;
                }
                int end = i;
                while (end < nQ && end < int(rows.size()) && rows[std::size_t(end)])
                    ++end;
                painter->fillRect(QRectF(map.left() - 0.5 * f, map.top() + i * cell, 0.4 * f,
                                         std::max((end - i) * cell, 1.0)),
                                  HeatmapRenderer::fullyMaskedMarkerColor());
                i = end;
            }
        }

        // Ticks and labels: query i on the left (rows), key j at the bottom (columns).
        painter->setPen(QPen(fg, 0));
        const qreal labelRight = map.left() - 0.55 * f - tick;
        // Shared query labels: only the row's first panel writes them.
        const bool queryLabels = !m_style.shareQueryLabels || k % std::max(lay.columns, 1) == 0;
        for (int i = 0; i < nQ && queryLabels; i += lay.tickStepRows) {
            const qreal y = map.top() + (i + 0.5) * cell;
            painter->drawLine(QPointF(labelRight, y), QPointF(map.left() - 0.55 * f, y));
            const QString label = fm.elidedText(m_axes.queries.value(i, QString::number(i)),
                                                Qt::ElideRight, 7.0 * f);
            painter->drawText(
                QRectF(labelRight - 8.0 * f - 0.15 * f, y - fm.height() / 2, 8.0 * f, fm.height()),
                Qt::AlignRight | Qt::AlignVCenter, label);
        }
        qreal labelsBottom = map.bottom() + tick;
        for (int j = 0; j < nK; j += lay.tickStepCols) {
            const qreal x = map.left() + (j + 0.5) * cell;
            painter->drawLine(QPointF(x, map.bottom()), QPointF(x, map.bottom() + tick));
            const QString label
                = fm.elidedText(m_axes.keys.value(j, QString::number(j)), Qt::ElideRight, 7.0 * f);
            if (lay.rotateKeyLabels) {
                painter->save();
                painter->translate(x, map.bottom() + tick + 0.1 * f);
                painter->rotate(-90);
                const qreal w = fm.horizontalAdvance(label);
                painter->drawText(QRectF(-w, -fm.height() / 2, w, fm.height()),
                                  Qt::AlignRight | Qt::AlignVCenter, label);
                painter->restore();
                labelsBottom = std::max(labelsBottom, map.bottom() + tick + 0.1 * f + w);
            } else {
                painter->drawText(QRectF(x - 4.0 * f, map.bottom() + tick, 8.0 * f, fm.height()),
                                  Qt::AlignHCenter | Qt::AlignTop, label);
                labelsBottom = std::max(labelsBottom, map.bottom() + tick + fm.height());
            }
        }
        // Axis titles.
        painter->setPen(muted);
        painter->drawText(
            QRectF(map.left() - 2 * f, labelsBottom + 0.1 * f, map.width() + 4 * f, fm.height()),
            Qt::AlignHCenter | Qt::AlignTop | Qt::TextDontClip, QStringLiteral("key j (column)"));
        if (queryLabels) {
            painter->save();
            painter->translate(frame.left() + fm.height() / 2, map.center().y());
            painter->rotate(-90);
            painter->drawText(QRectF(-map.height() / 2 - 2 * f, -fm.height() / 2,
                                     map.height() + 4 * f, fm.height()),
                              Qt::AlignCenter | Qt::TextDontClip, QStringLiteral("query i (row)"));
            painter->restore();
        }

        // Colourbar with ticks, the data's true min and max marked, and the legend lines.
        const Colormap cmap(panel.colormap);
        const ColorNorm &cn = panel.norm;
        const QRectF bar = lay.colorbars[k];
        QImage strip = cmap.strip(Colormap::size, Qt::Vertical);
        if (vectorOutput || bar.height() * devScale > strip.height())
            strip = strip.scaled(std::max(1, qRound(bar.width() * devScale)),
                                 std::max(1, qRound(bar.height() * devScale)),
                                 Qt::IgnoreAspectRatio, Qt::FastTransformation);
        painter->drawImage(bar, strip);
        painter->setPen(QPen(muted, 0));
        painter->drawRect(bar);
        painter->setPen(QPen(fg, 0));
        const QVector<double> ticks = figure::colorBarTicks(cn, 4);
        for (double v : ticks) {
            const double t = cn(v);
            if (!(t >= -1e-9 && t <= 1 + 1e-9))
                continue;
            const qreal y = bar.bottom() - t * bar.height();
            painter->drawLine(QPointF(bar.right(), y), QPointF(bar.right() + 0.3 * f, y));
            painter->drawText(QRectF(bar.right() + 0.45 * f, y - fm.height() / 2,
                                     legend.right() - bar.right(), fm.height()),
                              Qt::AlignLeft | Qt::AlignVCenter, formatTick(v));
        }
        if (panel.markDataRange) {
            // A small triangle left of the bar pointing at the true min and at the true max.
            painter->setRenderHint(QPainter::Antialiasing);
            for (double v : {panel.dataMin, panel.dataMax}) {
                const double t = std::clamp(cn(v), 0.0, 1.0);
                if (std::isnan(t))
                    continue;
                const qreal y = bar.bottom() - t * bar.height();
                QPolygonF tri;
                tri << QPointF(bar.left() - 0.05 * f, y)
                    << QPointF(bar.left() - 0.5 * f, y - 0.3 * f)
                    << QPointF(bar.left() - 0.5 * f, y + 0.3 * f);
                painter->setBrush(fg);
                painter->setPen(Qt::NoPen);
                painter->drawPolygon(tri);
                painter->setPen(QPen(fg, 0));
                painter->drawLine(QPointF(bar.left(), y), QPointF(bar.right(), y));
            }
            painter->setBrush(Qt::NoBrush);
            painter->setRenderHint(QPainter::Antialiasing, false);
        }
        qreal y = bar.bottom() + 0.6 * f;
        painter->setPen(fg);
        for (const QString &text : legendLines(panel)) {
            const int lines = wrappedLines(fm, text, legend.width());
            const qreal h = lines * fm.height() * 1.15;
            painter->drawText(QRectF(legend.left(), y, legend.width(), h),
                              Qt::AlignLeft | Qt::AlignTop | Qt::TextWordWrap, text);
            y += h;
        }
        y += 0.3 * f;
        auto swatch = [&](QRgb base, int hatch, const QString &text) {
            const QRectF box(legend.left(), y + 0.1 * fm.height(), 1.1 * f, 0.8 * fm.height());
            figure::drawLegendSwatch(painter, box, base, hatch, f, devScale, muted);
            painter->setPen(fg);
            // A label wider than the column wraps (as the legend lines do), never elided.
            const qreal textW = legend.right() - box.right() - 0.4 * f;
            const int lines = wrappedLines(fm, text, textW);
            if (lines > 1) {
                painter->drawText(
                    QRectF(box.right() + 0.4 * f, y, textW, lines * fm.height() * 1.15),
                    Qt::AlignLeft | Qt::AlignTop | Qt::TextWordWrap, text);
            } else {
                painter->drawText(QRectF(box.right() + 0.4 * f, y, textW, fm.height()),
                                  Qt::AlignLeft | Qt::AlignVCenter, text);
            }
            y += lines * fm.height() * 1.15;
        };
        // One entry per mask state present, hatched as its cells and named as their tooltips.
        for (int state = 1; state < 16; ++state) {
            if (flags & (1 << state))
                swatch(maskedColor(panel.colormap, std::uint8_t(state)), state,
                       QString::fromStdString(maskStateText(std::uint8_t(state))));
        }
        if (flags & HasFullyMasked) {
            const QRectF box(legend.left() + 0.35 * f, y + 0.1 * fm.height(), 0.4 * f,
                             0.8 * fm.height());
            painter->fillRect(box, HeatmapRenderer::fullyMaskedMarkerColor());
            painter->drawText(
                QRectF(legend.left() + 1.5 * f, y, legend.width() - 1.5 * f, fm.height()),
                Qt::AlignLeft | Qt::AlignVCenter,
                fm.elidedText(QStringLiteral("fully masked row"), Qt::ElideRight,
                              legend.width() - 1.5 * f));
            y += fm.height() * 1.15;
        }
        if (flags & HasNaN)
            swatch(Colormap::badColor(), 0, QStringLiteral("NaN"));
    }

    // Footer: the table (first column left-aligned, numbers right-aligned), then the notes.
    if (!lay.footer.isEmpty()) {
        qreal y = lay.footer.top();
        if (!m_table.isEmpty()) {
            const int columns = int(m_table.header.size());
            QVector<qreal> widths(columns, 0.0);
            const QFontMetricsF fmBold(bold);
            for (int c = 0; c < columns; ++c) {
                widths[c] = fmBold.horizontalAdvance(m_table.header[c]);
                for (const QStringList &row : m_table.rows)
                    if (c < row.size())
                        widths[c] = std::max(widths[c], fm.horizontalAdvance(row[c]));
            }
            // Narrower than the table: the first column (the row names) gives way, elided.
            {
                qreal total = 0;
                for (qreal w : widths)
                    total += w + 2.0 * f;
                total -= 2.0 * f;
                if (total > lay.footer.width() && columns > 1)
                    widths[0] = std::max(4.0 * f, widths[0] - (total - lay.footer.width()));
            }
            qreal x = lay.footer.left();
            const qreal rowH = fm.height() * 1.25;
            auto drawRow = [&](const QStringList &cells, bool header) {
                painter->setFont(header ? bold : font);
                qreal cx = x;
                for (int c = 0; c < columns && c < cells.size(); ++c) {
                    const Qt::Alignment align
                        = (c == 0 ? Qt::AlignLeft : Qt::AlignRight) | Qt::AlignVCenter;
                    const QFontMetricsF cellFm(header ? bold : font);
                    painter->drawText(
                        QRectF(cx, y, widths[c], rowH), align,
                        c == 0 ? cellFm.elidedText(cells[c], Qt::ElideRight, widths[c]) : cells[c]);
                    cx += widths[c] + 2.0 * f;
                }
                y += rowH;
            };
            painter->setPen(fg);
            drawRow(m_table.header, true);
            qreal total = 0;
            for (qreal w : widths)
                total += w + 2.0 * f;
            painter->setPen(QPen(muted, 0));
            painter->drawLine(QPointF(x, y - 0.1 * f), QPointF(x + total - 2.0 * f, y - 0.1 * f));
            painter->setPen(fg);
            for (const QStringList &row : m_table.rows)
                drawRow(row, false);
            painter->setFont(font);
            y += 0.3 * f;
        }
        painter->setPen(muted);
        for (const QString &note : m_notes) {
            const QRectF box = fm.boundingRect(
                QRectF(lay.footer.left(), y, lay.footer.width(), 1e6), Qt::TextWordWrap, note);
            painter->drawText(QRectF(lay.footer.left(), y, lay.footer.width(), box.height()),
                              Qt::AlignLeft | Qt::AlignTop | Qt::TextWordWrap, note);
            y += box.height() + 0.2 * f;
        }
    }
    painter->restore();
}

FigureHit PanelFigure::cellAt(const QRectF &bounds, const QPointF &pos) const
{
    FigureHit hit;
    const PanelFigureLayout lay = layout(bounds);
    const int nQ = queryCount(), nK = keyCount();
    if (lay.cellSize <= 0)
        return hit;
    for (int k = 0; k < lay.maps.size(); ++k) {
        const QRectF &map = lay.maps[k];
        if (!map.contains(pos))
            continue;
        hit.panel = k;
        hit.row = std::clamp(int(std::floor((pos.y() - map.top()) / lay.cellSize)), 0, nQ - 1);
        hit.col = std::clamp(int(std::floor((pos.x() - map.left()) / lay.cellSize)), 0, nK - 1);
        return hit;
    }
    return hit;
}

QVector<QRectF> PanelFigure::cellRects(const QRectF &bounds, int row, int col) const
{
    QVector<QRectF> rects;
    if (row < 0 || col < 0 || row >= queryCount() || col >= keyCount())
        return rects;
    const PanelFigureLayout lay = layout(bounds);
    for (const QRectF &map : lay.maps)
        rects.append(QRectF(map.left() + col * lay.cellSize, map.top() + row * lay.cellSize,
                            lay.cellSize, lay.cellSize));
    return rects;
}

QImage PanelFigure::render(QSize size, qreal dpr) const
{
    return renderFigure(size, dpr, m_style.background, painter());
}

FigurePainter PanelFigure::painter() const
{
    return [this](QPainter *p, const QRectF &bounds, bool vector) { paintImpl(p, bounds, vector); };
}

bool PanelFigure::savePng(const QString &path, QSize size, qreal dpr, QString *error) const
{
    return writeFigurePng(path, size, dpr, m_style.background, painter(), error);
}

bool PanelFigure::saveSvg(const QString &path, QSize size, QString *error) const
{
    return writeFigureSvg(path, size, documentTitle(), m_caption.join(QLatin1Char('\n')), painter(),
                          error);
}

bool PanelFigure::savePdf(const QString &path, QSize size, QString *error) const
{
    return writeFigurePdf(path, size, documentTitle(), painter(), error);
}

bool PanelFigure::save(const QString &path, QSize size, qreal dpr, QString *error) const
{
    return writeFigure(path, size, dpr, m_style.background, documentTitle(),
                       m_caption.join(QLatin1Char('\n')), painter(), error);
}

} // namespace attn
