#include "ui/render/tileimage.h"

#include "ui/render/figurefile.h"

#include "core/attention/mask.h"
#include "core/base/threads.h"

#include <QPainter>
#include <QPainterPath>
#include <QPen>

#include <algorithm>
#include <array>
#include <cmath>
#include <limits>
#include <vector>

namespace attn {

namespace {

/// Work per cell of pooling (compare, accumulate, mask test: ~20 flops), for the core's thread
/// policy threadsForFlops (core/base/threads.h).
constexpr double kFlopsPerCell = 20;

} // namespace

QSize tilePoolingBlocks(QSize cells, QSize maxPixels)
{
    const int w = std::max(1, maxPixels.width()), h = std::max(1, maxPixels.height());
    return QSize(std::max(1, (cells.width() + w - 1) / w),
                 std::max(1, (cells.height() + h - 1) / h));
}

QRgb maskColor(ColormapId colormap, std::uint8_t state)
{
    // Per colormap, four colours at least 40 from every entry of the map, so a masked cell
    // never reads as a value: greys for viridis and magma (no greys in them) with a light blue
    // for cells outside the sliding window, darker greys and a light green for RdBu_r (its
    // middle is near-white, its ends red and blue), tints for cividis (its middle is grey) and
    // for gray (every grey is a value). Cells too small to hatch still tell the window's cells
    // from the causal ones by colour.
    struct Palette
    {
        QRgb causal, padding, both, window;
    };
    Palette palette;
    switch (colormap) {
    case ColormapId::Cividis:
        palette
            = {qRgb(240, 214, 222), qRgb(210, 180, 200), qRgb(222, 196, 214), qRgb(170, 215, 180)};
        break;
    case ColormapId::Grayscale:
        palette
            = {qRgb(244, 196, 140), qRgb(160, 176, 244), qRgb(214, 160, 214), qRgb(150, 220, 170)};
        break;
    case ColormapId::RdBu:
        palette
            = {qRgb(175, 175, 175), qRgb(128, 128, 128), qRgb(150, 150, 150), qRgb(170, 210, 170)};
        break;
    default:
        palette
            = {qRgb(216, 216, 216), qRgb(168, 168, 168), qRgb(190, 190, 190), qRgb(180, 205, 235)};
        break;
    }
    const bool causal = state & MaskCausal;
    const bool padding = state & (MaskPadding | MaskCustom);
    if (causal && padding)
        return palette.both;
    if (!causal && !padding && (state & MaskWindow))
        return palette.window;
    return padding ? palette.padding : palette.causal;
}

QImage buildTileImage(const TileImageRequest &request)
{
    if (!request.values || request.values->size() == 0)
        return {};
    const MatrixD &m = *request.values;
    const MatrixB *state = request.maskState && request.maskState->rows() == m.rows()
            && request.maskState->cols() == m.cols()
        ? request.maskState
        : nullptr;
    const QRect win
        = request.window.isEmpty() ? QRect(0, 0, int(m.cols()), int(m.rows())) : request.window;
    const Index nK = m.cols();
    const Index r0 = win.y(), c0 = win.x(), rows = win.height(), cols = win.width();
    const Index bq = std::max(1, request.rowBlock), bk = std::max(1, request.colBlock);
    const int height = int((rows + bq - 1) / bq);
    const int width = int((cols + bk - 1) / bk);
    const Colormap cmap(request.colormap);
    const ColorNorm &cn = request.norm;
    std::array<QRgb, 16> palette {}; // mask colour per state (4 bits)
    for (int s = 1; s < 16; ++s)
        palette[std::size_t(s)] = maskColor(request.colormap, std::uint8_t(s));
    const auto masked = [&palette](std::uint8_t s) { return palette[std::size_t(s & 15)]; };
    const bool nonFinite = request.nonFiniteColor.has_value();
    const QRgb badColor = request.nonFiniteColor.value_or(Colormap::badColor());
    const auto isBad
        = [nonFinite](double v) { return nonFinite ? !std::isfinite(v) : std::isnan(v); };

    QImage image(width, height, QImage::Format_RGB32);
    uchar *bits = image.bits(); // detached once here, written row by row below
    const qsizetype bytesPerLine = image.bytesPerLine();
    if (bq == 1 && bk == 1) { // one pixel per cell (the common case): a plain row loop
        for (int y = 0; y < height; ++y) {
            QRgb *line = reinterpret_cast<QRgb *>(bits + y * bytesPerLine);
            const double *row = m.data() + (r0 + y) * nK + c0;
            const std::uint8_t *states = state ? state->data() + (r0 + y) * nK + c0 : nullptr;
            for (int x = 0; x < width; ++x) {
                if (states && states[x])
                    line[x] = masked(states[x]);
                else if (nonFinite && !std::isfinite(row[x]))
                    line[x] = badColor;
                else
                    line[x] = cmap.map(cn(row[x]));
            }
        }
        return image;
    }
    // Pooled: accumulate each image row's blocks over its bq source rows, cells in row-major
    // order (rows in parallel for long sequences: n = 4096 has 16 M cells per tile).
    const bool max = request.pooling == HeatmapPooling::Max;
    [[maybe_unused]] const bool parallel
        = threadsForFlops(double(rows) * double(cols) * kFlopsPerCell) > 1;
#pragma omp parallel for schedule(dynamic, 8) if (parallel)
    for (int y = 0; y < height; ++y) {
        std::vector<double> acc(static_cast<std::size_t>(width),
                                max ? -std::numeric_limits<double>::infinity() : 0.0);
        std::vector<Index> count(static_cast<std::size_t>(width), 0);
        std::vector<std::uint8_t> maskedState(static_cast<std::size_t>(width), 0);
        std::vector<std::uint8_t> bad(static_cast<std::size_t>(width), 0);
        const Index iEnd = std::min(r0 + rows, r0 + (y + 1) * bq);
        for (Index i = r0 + y * bq; i < iEnd; ++i) {
            const double *row = m.data() + i * nK;
            const std::uint8_t *states = state ? state->data() + i * nK : nullptr;
            for (int x = 0; x < width; ++x) {
                const Index jBegin = c0 + x * bk, jEnd = std::min(c0 + cols, jBegin + bk);
                double a = acc[std::size_t(x)];
                Index c = 0;
                for (Index j = jBegin; j < jEnd; ++j) {
                    if (states && states[j]) {
                        maskedState[std::size_t(x)] |= states[j];
                        continue;
                    }
                    const double v = row[j];
                    if (isBad(v)) {
                        bad[std::size_t(x)] = 1;
                        continue;
                    }
                    a = max ? std::max(a, v) : a + v;
                    ++c;
                }
                acc[std::size_t(x)] = a;
                count[std::size_t(x)] += c;
            }
        }
        QRgb *line = reinterpret_cast<QRgb *>(bits + y * bytesPerLine);
        for (int x = 0; x < width; ++x) {
            const std::size_t k = std::size_t(x);
            if (bad[k])
                line[x] = badColor;
            else if (count[k] == 0)
                line[x] = masked(maskedState[k]);
            else
                line[x] = cmap.map(cn(max ? acc[k] : acc[k] / double(count[k])));
        }
    }
    return image;
}

void hatchMaskedCells(QImage &image, const MatrixB &maskState, QRect window, ColormapId colormap,
                      qreal spacing, bool windowLines)
{
    if (window.isEmpty())
        window = QRect(0, 0, int(maskState.cols()), int(maskState.rows()));
    const int r0 = window.y(), c0 = window.x(), nQ = window.height(), nK = window.width();
    const qreal sx = qreal(image.width()) / nK, sy = qreal(image.height()) / nQ;
    const auto hasBit
        = [&maskState](std::uint8_t bit, int i, int j) { return (maskState(i, j) & bit) != 0; };
    QPainter ip(&image);
    ip.setRenderHint(QPainter::Antialiasing);
    for (std::uint8_t bit : {std::uint8_t(MaskCausal), std::uint8_t(MaskPadding),
                             std::uint8_t(MaskCustom), std::uint8_t(MaskWindow)}) {
        if (bit == MaskWindow && !windowLines)
            continue;
        QPainterPath region;
        for (int i = r0; i < r0 + nQ; ++i) {
            int j = c0;
            while (j < c0 + nK) {
                if (!hasBit(bit, i, j)) {
                    ++j;
                    continue;
                }
                int end = j;
                while (end < c0 + nK && hasBit(bit, i, end))
                    ++end;
                region.addRect(QRectF((j - c0) * sx, (i - r0) * sy, (end - j) * sx, sy));
                j = end;
            }
        }
        if (region.isEmpty())
            continue;
        ip.save();
        ip.setClipPath(region);
        ip.setPen(QPen(figure::hatchColor(maskColor(colormap, bit)), std::max(1.0, spacing / 5.0)));
        const qreal w = image.width(), h = image.height();
        if (bit == MaskWindow) {
            for (qreal c = spacing / 2; c < h; c += spacing)
                ip.drawLine(QPointF(0, c), QPointF(w, c));
        }
        if (bit == MaskCustom) {
            for (qreal c = spacing / 2; c < w; c += spacing)
                ip.drawLine(QPointF(c, 0), QPointF(c, h));
        }
        const bool diagonal = bit == MaskCausal || bit == MaskPadding;
        for (qreal c = -h; diagonal && c < w + h; c += spacing) {
            if (bit == MaskCausal) // "/" lines
                ip.drawLine(QPointF(c, h), QPointF(c + h, 0));
            else // "\" lines
                ip.drawLine(QPointF(c, 0), QPointF(c + h, h));
        }
        ip.restore();
    }
}

QImage enlargedTileImage(QImage image, QSizeF devSize, qreal devCell, bool vectorOutput,
                         const MatrixB *maskState, QRect window, ColormapId colormap,
                         qreal fontDevicePixels)
{
    const bool enlarge = image.width() < devSize.width() && devSize.width() <= 8192
        && devSize.height() <= 8192 && (vectorOutput || devCell >= hatchMinCellPixels);
    if (!enlarge)
        return image;
    image
        = image.scaled(std::max(1, qRound(devSize.width())), std::max(1, qRound(devSize.height())),
                       Qt::IgnoreAspectRatio, Qt::FastTransformation);
    if (maskState && tileMasksHatched(devSize, devCell))
        hatchMaskedCells(image, *maskState, window, colormap,
                         std::clamp(devCell / 3.0, 5.0, std::max(5.0, 0.6 * fontDevicePixels)),
                         true);
    return image;
}

} // namespace attn
