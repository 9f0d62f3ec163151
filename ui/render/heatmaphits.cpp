// HeatmapRenderer's hit-testing (heatmaprenderer.h): the cell or query label under a point,
// a cell's rectangle, the tooltip describing a cell, and the text copied for a cell or a row.

#include "ui/render/heatmaprenderer.h"

#include "ui/session/tensorsource.h"

#include "core/attention/mask.h"

#include <algorithm>
#include <cmath>
#include <limits>

namespace attn {

namespace {

QString formatValue(double v)
{
    if (std::isnan(v))
        return QStringLiteral("NaN");
    if (std::isinf(v))
        return v < 0 ? QStringLiteral("\u2212\u221e") : QStringLiteral("+\u221e");
    QString s = QString::number(v, 'g', 6);
    if (s.startsWith(QLatin1Char('-')))
        s.replace(0, 1, QChar(0x2212));
    return s;
}

/// A number for the clipboard: 17 significant digits (the double read back exactly).
/// A value for the clipboard; empty for NaN, which stands for "not available" (the scores of
/// stored weights), so a spreadsheet gets an empty cell rather than the text "nan".
QString copyNumber(double v)
{
    return std::isnan(v) ? QString() : QString::number(v, 'g', 17);
}

/// The parts of head h's weight w at (i, j) under the 2025 variants, where the result has them:
/// differential attention's A₁, A₂ and λ, the output gate's σ(g) of row i, the learned sink's
/// mass of row i. Matrices and rows of another size (a pooled view) give no line.
QStringList variantLines(const SessionResult &res, std::size_t h, Index i, Index j, double w)
{
    QStringList lines;
    const auto whole = [&](const std::vector<MatrixD> &m) {
        return h < m.size() && m[h].rows() == res.queryCount() && m[h].cols() == res.keyCount();
    };
    const auto ofRow = [&](const std::vector<VectorD> &v) {
        return h < v.size() && v[h].size() == res.queryCount();
    };
    const bool gated = ofRow(res.gate);
    if (whole(res.firstWeights) && whole(res.secondWeights)) {
        const double lambda
            = h < res.lambda.size() ? res.lambda[h] : std::numeric_limits<double>::quiet_NaN();
        const double a1 = res.firstWeights[h](i, j), a2 = res.secondWeights[h](i, j);
        lines << QStringLiteral(
                     "A\u2081 %1, A\u2082 %2, \u03bb %3: A\u2081 \u2212 \u03bbA\u2082 = %4")
                     .arg(formatValue(a1), formatValue(a2), formatValue(lambda),
                          formatValue(a1 - lambda * a2));
    }
    if (gated) {
        const double g = res.gate[h](i);
        lines << (g > 0 ? QStringLiteral("gate \u03c3(g) %1 (row i): weight = \u03c3(g) \u00d7 %2")
                              .arg(formatValue(g), formatValue(w / g))
                        : QStringLiteral("gate \u03c3(g) %1 (row i)").arg(formatValue(g)));
    }
    if (ofRow(res.learnedSinkMass))
        lines << QStringLiteral("learned sink mass of row i %1 (row + sink = 1)")
                     .arg(formatValue(res.learnedSinkMass[h](i)));
    return lines;
}

} // namespace

int HeatmapRenderer::queryLabelAt(const QRectF &bounds, const QPointF &pos) const
{
    const HeatmapLayout lay = layout(bounds);
    if (!m_result || lay.cellHeight <= 0)
        return -1;
    for (const HeatmapLayout::Tile &tile : lay.tiles) {
        const QRectF band(tile.frame.left(), tile.map.top(), tile.map.left() - tile.frame.left(),
                          tile.map.height());
        if (band.contains(pos))
            return lay.cells.y()
                + std::clamp(int(std::floor((pos.y() - tile.map.top()) / lay.cellHeight)), 0,
                             lay.cells.height() - 1);
    }
    return -1;
}

QString HeatmapRenderer::titleToolTipAt(const QRectF &bounds, const QPointF &pos) const
{
    const HeatmapLayout lay = layout(bounds);
    if (!m_result || !m_result->ok() || lay.cellSize <= 0)
        return {};
    for (const HeatmapLayout::Tile &tile : lay.tiles) {
        const QRectF band(tile.frame.left(), tile.frame.top(), tile.frame.width(),
                          tile.map.top() - tile.frame.top());
        if (!band.contains(pos))
            continue;
        QStringList lines {tile.title};
        if (tile.title.contains(QStringLiteral("(m = ")))
            lines << QStringLiteral("m: the head's ALiBi slope (its bias is −m·(i − j))");
        if (tile.title.contains(QStringLiteral("sinks ")))
            lines << QStringLiteral("sinks: the weight the head's rows put on the %1 sink key(s) "
                                    "together\n(the first keys every query keeps seeing beside "
                                    "its sliding window),\naveraged over the rows whose window "
                                    "has moved past them")
                         .arg(m_result->params.sinks);
        if (tile.title.contains(QStringLiteral("\u03a3w ")))
            lines << QStringLiteral(
                "Σw: the head's mean row sum (1 − the learned sink's mass;\n1 − "
                "λ for differential attention; the mean gate with an output "
                "gate)");
        return lines.join(QLatin1Char('\n'));
    }
    return {};
}

QString HeatmapRenderer::cellCopyText(const HeatmapHit &hit) const
{
    if (!hit.valid() || !m_result || !m_result->ok())
        return {};
    const SessionResult &res = *m_result;
    if (hit.row >= res.queryCount() || hit.col >= res.keyCount())
        return {};
    const bool tokens = !res.params.tokens.empty();
    const std::size_t h = std::size_t(hit.head);
    const bool scores = !hit.mean && h < res.scores.size() && h < res.scaledScores.size();
    const double weight
        = hit.mean ? res.weightsMean(hit.row, hit.col) : res.weights[h](hit.row, hit.col);
    const std::uint8_t state
        = res.maskState.rows() == res.queryCount() && res.maskState.cols() == res.keyCount()
        ? res.maskState(hit.row, hit.col)
        : std::uint8_t(0);
    const QStringList header {
        QStringLiteral("head"),         QStringLiteral("query i"),   QStringLiteral("key j"),
        QStringLiteral("query token"),  QStringLiteral("key token"), QStringLiteral("raw score"),
        QStringLiteral("scaled score"), QStringLiteral("weight"),    QStringLiteral("mask")};
    const QStringList values {hit.mean ? QStringLiteral("mean") : QString::number(hit.head),
                              QString::number(res.originalQuery(hit.row)),
                              QString::number(res.originalKey(hit.col)),
                              tokens ? res.queryLabel(hit.row) : QString(),
                              tokens ? res.keyLabel(hit.col) : QString(),
                              scores ? copyNumber(res.scores[h](hit.row, hit.col)) : QString(),
                              scores ? copyNumber(res.scaledScores[h](hit.row, hit.col))
                                     : QString(),
                              copyNumber(weight),
                              QString::fromStdString(maskStateText(state))};
    return header.join(QLatin1Char('\t')) + QLatin1Char('\n') + values.join(QLatin1Char('\t'))
        + QLatin1Char('\n');
}

QString HeatmapRenderer::rowCopyText(const HeatmapHit &hit) const
{
    if (!hit.valid() || !m_result || !m_result->ok())
        return {};
    const QVector<TileSpec> specs = tileSpecs();
    if (hit.tile < 0 || hit.tile >= specs.size())
        return {};
    const MatrixD &m = *tileMatrix(specs[hit.tile]);
    if (hit.row >= m.rows())
        return {};
    QStringList header {QStringLiteral("key j")}, values {queryAxisLabel(hit.row)};
    for (int j = 0; j < int(m.cols()); ++j) {
        header << keyAxisLabel(j);
        values << copyNumber(m(hit.row, j));
    }
    return header.join(QLatin1Char('\t')) + QLatin1Char('\n') + values.join(QLatin1Char('\t'))
        + QLatin1Char('\n');
}

HeatmapHit HeatmapRenderer::cellAt(const QRectF &bounds, const QPointF &pos) const
{
    HeatmapHit hit;
    const HeatmapLayout lay = layout(bounds);
    if (!m_result || lay.cellSize <= 0)
        return hit;
    // Exact cells, also when the tile image is pooled: the window's cell under the point.
    const QRect win = lay.cells;
    for (int t = 0; t < lay.tiles.size(); ++t) {
        const HeatmapLayout::Tile &tile = lay.tiles[t];
        if (!tile.map.contains(pos))
            continue;
        hit.tile = t;
        hit.head = tile.head;
        hit.mean = tile.mean;
        hit.row = win.y()
            + std::clamp(int(std::floor((pos.y() - tile.map.top()) / lay.cellHeight)), 0,
                         win.height() - 1);
        hit.col = win.x()
            + std::clamp(int(std::floor((pos.x() - tile.map.left()) / lay.cellWidth)), 0,
                         win.width() - 1);
        return hit;
    }
    return hit;
}

QRectF HeatmapRenderer::cellRect(const QRectF &bounds, const HeatmapHit &hit) const
{
    if (!hit.valid())
        return {};
    const HeatmapLayout lay = layout(bounds);
    if (hit.tile >= lay.tiles.size())
        return {};
    if (!lay.cells.contains(hit.col, hit.row))
        return {};
    const QRectF &map = lay.tiles[hit.tile].map;
    return QRectF(map.left() + (hit.col - lay.cells.x()) * lay.cellWidth,
                  map.top() + (hit.row - lay.cells.y()) * lay.cellHeight, lay.cellWidth,
                  lay.cellHeight);
}

QString HeatmapRenderer::queryAxisLabel(int r) const
{
    if (!m_result)
        return {};
    // A pooled view's last pixel row ends on the last query shown: label that, as the full
    // matrices' axis does.
    if (m_result->pooledQueryEnd > 0 && r > 0 && r == m_result->queryCount() - 1)
        return m_result->params.indexedQueryLabel(m_result->pooledQueryEnd - 1);
    return m_result->indexedQueryLabel(r);
}

QString HeatmapRenderer::keyAxisLabel(int c) const
{
    if (!m_result)
        return {};
    if (m_result->pooledKeyEnd > 0 && c > 0 && c == m_result->keyCount() - 1)
        return m_result->params.indexedKeyLabel(m_result->pooledKeyEnd - 1);
    return m_result->indexedKeyLabel(c);
}

QString HeatmapRenderer::describeCell(const HeatmapHit &hit) const
{
    if (!hit.valid() || !m_result || !m_result->ok())
        return {};
    const SessionResult &res = *m_result;
    const SessionParameters &p = res.params;
    const Index i = hit.row, j = hit.col;
    if (i >= res.queryCount() || j >= res.keyCount())
        return {};
    // Stored weights have a layer and no scores: the layer is named, the scores are not
    // available (the session holds NaN placeholders for them).
    const bool stored = p.tensors && p.tensors->isWeights();
    QStringList lines;
    const QString head = hit.mean ? QStringLiteral("mean over %1 heads").arg(res.headCount())
                                  : QStringLiteral("head %1").arg(hit.head);
    lines << (stored ? QStringLiteral("layer %1 of %2, %3")
                           .arg(p.tensors->layer())
                           .arg(p.tensors->layerCount())
                           .arg(head)
                     : head);
    // Positions of the computation (a trimmed or key-hiding view shows a subset).
    QString where = QStringLiteral("query i = %1 (row), key j = %2 (column)")
                        .arg(res.originalQuery(int(i)))
                        .arg(res.originalKey(int(j)));
    if (!p.tokens.empty())
        where += QStringLiteral(": \u201c%1\u201d \u2192 \u201c%2\u201d")
                     .arg(res.queryLabel(int(i)), res.keyLabel(int(j)));
    lines << where;
    const QString weightName = res.renormalized          ? QStringLiteral("weight (renormalised)")
        : res.viewNote.contains(QLatin1String("hidden")) ? QStringLiteral("weight (raw)")
                                                         : QStringLiteral("weight");
    const std::uint8_t state
        = res.maskState.rows() == res.queryCount() && res.maskState.cols() == res.keyCount()
        ? res.maskState(i, j)
        : std::uint8_t(0);
    if (hit.mean) {
        lines << QStringLiteral("%1 %2").arg(weightName, formatValue(res.weightsMean(i, j)));
    } else {
        const std::size_t h = std::size_t(hit.head);
        const double weight = res.weights[h](i, j);
        lines << QStringLiteral("%1 %2").arg(weightName, formatValue(weight));
        lines << variantLines(res, h, i, j, weight);
        if (stored) {
            lines << QStringLiteral("raw score n/a (stored weights)");
            lines << QStringLiteral("scaled score n/a (stored weights)");
        } else if (h < res.scores.size() && h < res.scaledScores.size()) { // pooled: none
            lines << QStringLiteral("raw score %1").arg(formatValue(res.scores[h](i, j)));
            lines << QStringLiteral("scaled score %1").arg(formatValue(res.scaledScores[h](i, j)));
        }
    }
    lines << QStringLiteral("mask: %1").arg(QString::fromStdString(maskStateText(state)));
    const std::size_t h = hit.mean ? 0 : std::size_t(hit.head);
    const bool rowFullyMasked = h < res.fullyMasked.size()
        && std::size_t(i) < res.fullyMasked[h].size() && res.fullyMasked[h][std::size_t(i)];
    if (rowFullyMasked)
        lines << QStringLiteral("fully masked row: all weights 0");
    else if (!hit.mean && h < res.metrics.size())
        lines << QStringLiteral("row entropy %1 nats, effective terms %2")
                     .arg(QString::number(res.metrics[h].entropy(i), 'g', 4),
                          QString::number(res.metrics[h].effectiveTerms(i), 'g', 4));
    return lines.join(QLatin1Char('\n'));
}

} // namespace attn
