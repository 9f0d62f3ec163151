#include "ui/views/pipelinestrip.h"

#include "core/engine/pipeline.h"
#include "ui/render/colormap.h"
#include "ui/render/tileimage.h"
#include "ui/session/jobrunner.h"

#include <QCoreApplication>
#include <QElapsedTimer>
#include <QFontMetricsF>
#include <QHelpEvent>
#include <QPainter>
#include <QToolTip>

#include <algorithm>
#include <cmath>

namespace attn {

namespace {

constexpr qreal kGap = 18; // between panels: room for the arrow
constexpr qreal kMargin = 6;
constexpr qreal kLeastRow = 6; // pixels: the rows' least height, labelled one by one

// One pixel a cell by the heatmaps' one tile builder: vectors in the diverging RdBu_r over
// ±their largest |value|, weights in the sequential map over [0, 1] with masked cells in the
// masks' colours — signed weights (differential attention's A₁ − λA₂) in RdBu_r over ±their
// largest |w|, as the heatmaps draw them.
PipelineStrip::Panel makePanel(const QString &title, const MatrixD &m, bool weights,
                               const MatrixB *maskState = nullptr, bool signedWeights = false)
{
    PipelineStrip::Panel p;
    p.title = title;
    p.shape = QStringLiteral("%1 \u00d7 %2").arg(m.rows()).arg(m.cols());
    p.values = m;
    double limit = 1;
    if (signedWeights)
        weights = false; // drawn as the vectors are, centred on 0
    if (!weights) {
        limit = m.size() > 0 ? m.cwiseAbs().maxCoeff() : 0.0;
        if (!(limit > 0) || !std::isfinite(limit))
            limit = 1;
    }
    p.limit = limit;
    TileImageRequest request;
    request.values = &p.values;
    request.maskState = maskState;
    request.colormap = weights ? ColormapId::Viridis : ColormapId::RdBu;
    request.norm = weights ? ColorNorm::linear(0, 1) : ColorNorm::symmetric(limit);
    p.image = buildTileImage(request);
    return p;
}

} // namespace

PipelineStrip::PipelineStrip(QWidget *parent)
    : QWidget(parent)
    , m_jobs(new JobRunner(this, 1))
{
    setObjectName(QStringLiteral("pipelineStrip"));
    setMinimumHeight(120);
    setMouseTracking(true);
    setToolTip(tr("The vectors of the head, from the token embeddings to the layer's output: rows "
                  "are positions, columns components. Blue negative, red positive (each panel "
                  "over ±its largest |value|); the weights 0 … 1."));
    connect(m_jobs, &JobRunner::failed, this,
            [this](const QString &message) { deliver({}, message); });
}

PipelineStrip::~PipelineStrip() = default;

void PipelineStrip::setResult(std::shared_ptr<const SessionResult> result, int head)
{
    QString why;
    if (!result || !result->ok())
        why = tr("No result yet.");
    else if (result->params.tensors)
        why = tr("The vectors are shown for the seeded random inputs (loaded tensors have no "
                 "embeddings here).");
    else if (!result->queryIndex.empty() || !result->keyIndex.empty() || result->renormalized)
        why = tr("The vectors are shown for every position: show all rows and keys.");
    else if (result->params.queryCount() > maxPositions || result->params.keyCount() > maxPositions)
        why = tr("The vectors are shown up to n = %1 positions.").arg(maxPositions);
    else if (result->params.dModel > maxWidth)
        why = tr("The vectors are shown up to d_model = %1.").arg(maxWidth);
    else if (head < 0 || head >= result->headCount())
        why = tr("No head.");
    if (!why.isEmpty()) {
        m_jobs->cancel();
        m_pending = false;
        deliver({}, why);
        return;
    }
    m_pending = true;
    m_labels.clear();
    for (Index i = 0; i < result->queryCount(); ++i)
        m_labels << result->indexedQueryLabel(int(i));
    const EngineParameters p = result->params;
    m_jobs->run(
        [p, result, head](const JobContext &context) {
            const AttentionPipeline pipe = attentionPipeline(p, result->weights);
            context.cancel.throwIfCancelled();
            const auto h = std::size_t(head);
            std::vector<Panel> panels;
            const bool cross = p.kind == AttentionKind::EncoderDecoder;
            const Index g = p.kvHeads > 0 ? p.kvHeads : p.heads;
            const QString side = cross ? QStringLiteral("S") : QStringLiteral("X");
            const auto rotated = [&](const QString &projection) {
                return p.rope ? QStringLiteral("RoPE(%1)").arg(projection) : projection;
            };
            panels.push_back(makePanel(QStringLiteral("embeddings X"), pipe.embeddings, false));
            panels.back().shortTitle = QStringLiteral("X");
            if (p.positional) {
                panels.push_back(
                    makePanel(QStringLiteral("+ positions PE"), pipe.positions, false));
                panels.back().shortTitle = QStringLiteral("+ PE");
                panels.push_back(makePanel(QStringLiteral("= input X + PE"), pipe.input, false));
                panels.back().shortTitle = QStringLiteral("= X + PE");
            }
            if (cross) { // keys and values come from the encoder's positions
                panels.push_back(makePanel(QStringLiteral("encoder input S"), pipe.source, false));
                panels.back().shortTitle = QStringLiteral("S");
                panels.back().shape += QStringLiteral(", encoder positions");
            }
            panels.push_back(makePanel(
                QStringLiteral("q = %1 (head %2)").arg(rotated(QStringLiteral("X W_Q"))).arg(head),
                pipe.queries[h], false));
            panels.back().shortTitle = QStringLiteral("q");
            const QString kvHead = g < p.heads
                ? QStringLiteral(" (kv head %1)").arg(Index(head) * g / p.heads)
                : QString();
            panels.push_back(makePanel(
                QStringLiteral("k = %1%2").arg(rotated(side + QStringLiteral(" W_K")), kvHead),
                pipe.keys[h], false));
            panels.back().shortTitle = QStringLiteral("k");
            panels.push_back(
                makePanel(QStringLiteral("v = %1 W_V%2").arg(side, kvHead), pipe.values[h], false));
            panels.back().shortTitle = QStringLiteral("v");
            if (cross)
                for (std::size_t k = panels.size() - 2; k < panels.size(); ++k)
                    panels[k].shape += QStringLiteral(", encoder positions");
            const bool masks = result->maskState.rows() == result->weights[h].rows()
                && result->maskState.cols() == result->weights[h].cols();
            panels.push_back(makePanel(QStringLiteral("weights"), result->weights[h], true,
                                       masks ? &result->maskState : nullptr,
                                       result->signedWeights));
            panels.back().positionColumns = true;
            panels.push_back(makePanel(QStringLiteral("head output weights \u00b7 v"),
                                       pipe.headOutputs[h], false));
            panels.back().shortTitle = QStringLiteral("w \u00b7 v");
            panels.push_back(
                makePanel(QStringLiteral("heads side by side"), pipe.concatenated, false));
            panels.back().shortTitle = QStringLiteral("heads");
            panels.push_back(makePanel(QStringLiteral("output \u00b7 W_O"), pipe.output, false));
            panels.back().shortTitle = QStringLiteral("\u00b7 W_O");
            return panels;
        },
        [this](std::vector<Panel> panels) {
            m_pending = false;
            deliver(std::move(panels), QString());
        });
}

void PipelineStrip::deliver(std::vector<Panel> panels, const QString &message)
{
    m_pending = false;
    m_panels = std::move(panels);
    m_message = message;
    // A note alone takes two lines, not the panels' share of the tab.
    setMaximumHeight(m_panels.empty() ? 3 * fontMetrics().height() + 12 : QWIDGETSIZE_MAX);
    setMinimumHeight(m_panels.empty() ? 0 : 120);
    update();
    emit panelsChanged();
}

bool PipelineStrip::waitForPanels(int timeoutMs)
{
    QElapsedTimer timer;
    timer.start();
    while (m_pending && timer.elapsed() < timeoutMs)
        QCoreApplication::processEvents(QEventLoop::AllEvents, 20);
    return !m_pending;
}

QSize PipelineStrip::sizeHint() const
{
    return {600, 220};
}

qreal PipelineStrip::labelColumnWidth() const
{
    // Whole labels ("6:because"), never elided, as wide as the widest in the strip's font.
    const QFontMetricsF metrics(font());
    qreal widest = 0;
    for (const QString &label : m_labels)
        widest = std::max(widest, metrics.horizontalAdvance(label));
    return std::ceil(widest) + 8;
}

std::vector<qreal> PipelineStrip::textWidths() const
{
    // The room each panel's title (or its short title, "q") and shape ("11 × 16", without
    // what follows a comma) need, beside the map's own width, less the gap it may run into.
    const QFontMetricsF metrics(font());
    std::vector<qreal> widths;
    for (const Panel &p : m_panels)
        widths.push_back(
            std::max(metrics.horizontalAdvance(p.shortTitle.isEmpty() ? p.title : p.shortTitle),
                     metrics.horizontalAdvance(p.shape.section(QLatin1Char(','), 0, 0)))
            + 2 - kGap + 4);
    return widths;
}

std::vector<std::vector<std::size_t>> PipelineStrip::textLines(qreal width) const
{
    // The fewest lines of panels, in order, whose titles, shapes, position columns (at their
    // least rows) and the labels fit the width: each line filled as far as it goes.
    const std::vector<qreal> texts = textWidths();
    // (The last panel's title runs into no gap: room for it at the line's end.)
    const qreal labels = labelColumnWidth() + kGap - 4;
    std::vector<std::vector<std::size_t>> lines(1);
    qreal used = labels;
    for (std::size_t k = 0; k < m_panels.size(); ++k) {
        const Panel &p = m_panels[k];
        const qreal least = p.positionColumns ? p.image.width() * kLeastRow : 0;
        const qreal slot = std::max(texts[k], least) + (lines.back().empty() ? 0 : kGap);
        if (!lines.back().empty() && used + slot > width) {
            lines.emplace_back();
            used = labels;
            lines.back().push_back(k);
            used += std::max(texts[k], least);
            continue;
        }
        lines.back().push_back(k);
        used += slot;
    }
    return lines;
}

int PipelineStrip::heightFor(int width, qreal rowHeight) const
{
    if (m_panels.empty())
        return 0;
    const qreal titles = 2 * QFontMetricsF(font()).height() + 2;
    qreal rows = 1;
    for (const Panel &p : m_panels)
        rows = std::max<qreal>(rows, p.image.height());
    const qreal n = qreal(textLines(width - 2 * kMargin).size());
    return int(std::ceil(2 * kMargin + n * (titles + rows * rowHeight) + (n - 1) * kGap));
}

int PipelineStrip::minimumHeightFor(int width) const
{
    return heightFor(width, kLeastRow);
}

int PipelineStrip::preferredHeightFor(int width) const
{
    return heightFor(width, std::max<qreal>(18, QFontMetricsF(font()).height() + 2));
}

PipelineStrip::Layout PipelineStrip::layout() const
{
    Layout best;
    if (m_panels.empty())
        return best;
    const QFontMetricsF metrics(font());
    const qreal line = metrics.height();
    const qreal titles = 2 * line + 2;
    // With a larger font (presentation mode) the rows and the labels' column grow with it:
    // rows of at most 18 px or a line and a bit (shorter rows label every few, rowLabelStride).
    const qreal maxCell = std::max<qreal>(18, line + 2);
    const qreal labelsFrom = 4;
    const qreal labelWidth = labelColumnWidth();
    const qreal width = this->width() - 2 * kMargin, height = this->height() - 2 * kMargin;
    qreal rows = 1;
    for (const Panel &p : m_panels)
        rows = std::max<qreal>(rows, p.image.height());
    const std::vector<qreal> textWidths = this->textWidths();
    // The panels on as few lines as write every title and shape whole (textLines); rows as
    // tall as the lines leave room for (at most maxCell, and the labels only from labelsFrom),
    // components as wide as the widest line allows (at most square).
    const std::vector<std::vector<std::size_t>> groups = textLines(width);
    const qreal n = qreal(groups.size());
    const qreal cellHeight
        = std::min<qreal>((height - n * titles - (n - 1) * kGap) / (n * rows), maxCell);
    if (cellHeight <= 0.5)
        return best;
    const qreal labels = cellHeight >= labelsFrom ? labelWidth : 0;
    // A panel narrower than its title and shape takes their width (its map drawn at its own
    // width, left-aligned): each line's widest component c with Σ max(map width(c), text
    // width) within the width, by bisection (the sum grows with c). A line whose texts alone
    // do not fit (a very narrow strip) elides them instead.
    std::vector<char> textWide(m_panels.size(), 0);
    qreal cellWidth = cellHeight;
    for (const auto &g : groups) {
        const qreal fixed = labels + kGap * qreal(g.size() - 1);
        const auto need = [&](qreal c, bool texts) {
            qreal sum = fixed + (texts ? kGap - 4 : 0); // the last title's end
            for (std::size_t k : g) {
                const Panel &p = m_panels[k];
                const qreal w = p.image.width() * (p.positionColumns ? cellHeight : c);
                sum += texts ? std::max(w, textWidths[k]) : w;
            }
            return sum;
        };
        const bool texts = need(0, true) <= width;
        if (need(cellWidth, texts) > width) {
            qreal lo = 0, hi = cellWidth;
            for (int it = 0; it < 40; ++it) {
                const qreal mid = (lo + hi) / 2;
                (need(mid, texts) <= width ? lo : hi) = mid;
            }
            cellWidth = lo;
        }
        for (std::size_t k : g)
            textWide[k] = texts ? 1 : 0;
    }
    if (cellWidth <= 0)
        return best;
    best.cellWidth = cellWidth;
    best.cellHeight = cellHeight;
    qreal y = kMargin;
    for (const auto &g : groups) {
        if (labels > 0)
            best.labels.emplace_back(kMargin, y + titles, labels - 6, rows * cellHeight);
        qreal x = kMargin + labels;
        for (std::size_t k : g) {
            const Panel &p = m_panels[k];
            const qreal w = p.image.width() * (p.positionColumns ? cellHeight : cellWidth);
            const qreal slot = textWide[k] ? std::max(w, textWidths[k]) : w;
            best.titles.emplace_back(x, y, slot + kGap - 4, titles);
            best.maps.emplace_back(x, y + titles, w, p.image.height() * cellHeight);
            x += slot + kGap;
        }
        y += titles + rows * cellHeight + kGap;
    }
    return best;
}

QString PipelineStrip::titleFor(const Panel &p, qreal width) const
{
    const QFontMetricsF metrics(font());
    return metrics.horizontalAdvance(p.title) <= width || p.shortTitle.isEmpty() ? p.title
                                                                                 : p.shortTitle;
}

QRectF PipelineStrip::titleRect(int k) const
{
    const Layout l = layout();
    return k >= 0 && k < int(l.titles.size()) ? l.titles[std::size_t(k)] : QRectF();
}

QRectF PipelineStrip::panelRect(int k) const
{
    const Layout l = layout();
    return k >= 0 && k < int(l.maps.size()) ? l.maps[std::size_t(k)] : QRectF();
}

int PipelineStrip::rowLabelStride() const
{
    const Layout l = layout();
    if (l.labels.empty() || l.cellHeight <= 0)
        return 0;
    return std::max(1, int(std::ceil(fontMetrics().height() / l.cellHeight - 1e-9)));
}

qreal PipelineStrip::rowLabelWidth() const
{
    const Layout l = layout();
    return l.labels.empty() ? 0 : l.labels.front().width();
}

void PipelineStrip::paintEvent(QPaintEvent *)
{
    QPainter painter(this);
    painter.fillRect(rect(), palette().window());
    painter.setPen(palette().color(QPalette::WindowText));
    if (m_panels.empty()) {
        painter.drawText(rect().adjusted(8, 8, -8, -8),
                         Qt::AlignLeft | Qt::AlignTop | Qt::TextWordWrap,
                         m_pending ? tr("Computing the vectors\u2026") : m_message);
        return;
    }
    const Layout l = layout();
    if (l.maps.size() != m_panels.size())
        return;
    const qreal line = fontMetrics().height();
    // The rows' labels left of each line of panels: every stride-th row's, a line apart.
    const int stride = std::max(1, rowLabelStride());
    for (const QRectF &labels : l.labels) {
        for (int i = 0; i < m_labels.size(); i += stride) {
            const QRectF row(labels.left(), labels.top() + i * l.cellHeight, labels.width(),
                             l.cellHeight);
            painter.drawText(
                row, Qt::AlignRight | Qt::AlignVCenter | Qt::TextDontClip,
                QFontMetricsF(font()).elidedText(m_labels[i], Qt::ElideRight, labels.width()));
        }
    }
    for (std::size_t k = 0; k < m_panels.size(); ++k) {
        const Panel &p = m_panels[k];
        const QRectF map = l.maps[k], title = l.titles[k];
        painter.drawText(QRectF(title.left(), title.top(), title.width(), line),
                         Qt::AlignLeft | Qt::AlignVCenter,
                         fontMetrics().elidedText(titleFor(p, title.width()), Qt::ElideRight,
                                                  int(title.width())));
        painter.setPen(palette().color(QPalette::PlaceholderText));
        painter.drawText(QRectF(title.left(), title.top() + line, title.width(), line),
                         Qt::AlignLeft | Qt::AlignVCenter,
                         fontMetrics().elidedText(p.shape, Qt::ElideRight, int(title.width())));
        painter.setPen(palette().color(QPalette::WindowText));
        painter.setRenderHint(QPainter::SmoothPixmapTransform, false);
        painter.drawImage(map, p.image);
        // An arrow to the next panel when it follows on the same line.
        if (k + 1 < m_panels.size() && l.maps[k + 1].left() > map.right()) {
            const qreal y = map.top() + std::min<qreal>(map.height() / 2, 3 * line);
            const qreal x0 = map.right() + 3, x1 = l.maps[k + 1].left() - 3;
            painter.drawLine(QPointF(x0, y), QPointF(x1, y));
            painter.drawLine(QPointF(x1, y), QPointF(x1 - 4, y - 3));
            painter.drawLine(QPointF(x1, y), QPointF(x1 - 4, y + 3));
        }
    }
}

bool PipelineStrip::event(QEvent *event)
{
    if (event->type() == QEvent::ToolTip) {
        const auto *help = static_cast<QHelpEvent *>(event);
        const Layout l = layout();
        for (std::size_t k = 0; k < l.maps.size(); ++k) {
            const QRectF map = l.maps[k];
            if (!map.contains(help->pos()) || l.cellWidth <= 0 || l.cellHeight <= 0)
                continue;
            const Panel &p = m_panels[k];
            const Index row = std::min<Index>(Index((help->pos().y() - map.top()) / l.cellHeight),
                                              p.values.rows() - 1);
            const qreal columnWidth = p.positionColumns ? l.cellHeight : l.cellWidth;
            const Index col = std::min<Index>(Index((help->pos().x() - map.left()) / columnWidth),
                                              p.values.cols() - 1);
            QToolTip::showText(help->globalPos(),
                               tr("%1 [%2 × %3]\nrow %4 (position), column %5: %6")
                                   .arg(p.title, QString::number(p.values.rows()),
                                        QString::number(p.values.cols()), QString::number(row),
                                        QString::number(col))
                                   .arg(p.values(row, col), 0, 'g', 6),
                               this);
            return true;
        }
    }
    return QWidget::event(event);
}

} // namespace attn
