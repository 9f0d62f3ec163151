// HeatmapRenderer's files (heatmaprenderer.h): the figure as an image, PNG (at a device pixel
// ratio or a print resolution), SVG and PDF, and one file per head (exportEachHead).

#include "ui/render/heatmaprenderer.h"

#include "ui/render/figurefile.h"

#include <QDir>
#include <QFileInfo>
#include <QImage>
#include <QPainter>
#include <QSaveFile>

#include <algorithm>
#include <cmath>

namespace attn {

QImage HeatmapRenderer::render(QSize size, qreal dpr) const
{
    return renderFigure(size, dpr, m_options.background, painter());
}

FigurePainter HeatmapRenderer::painter() const
{
    return [this](QPainter *p, const QRectF &bounds, bool vector) { paintImpl(p, bounds, vector); };
}

bool HeatmapRenderer::savePng(const QString &path, QSize size, qreal dpr, QString *error) const
{
    return writeFigurePng(path, size, dpr, m_options.background, painter(), error);
}

bool HeatmapRenderer::savePngAtDpi(const QString &path, QSize pixels, double dpi,
                                   QString *error) const
{
    if (!(dpi >= 24.0 && dpi <= 2400.0) || pixels.width() < 1 || pixels.height() < 1
        || pixels.width() > 32768 || pixels.height() > 32768) {
        if (error)
            *error = QStringLiteral("cannot write '%1': %2\u00d7%3 pixels at %4 dpi is out of "
                                    "range (1\u201332768 pixels, 24\u20132400 dpi)")
                         .arg(path)
                         .arg(pixels.width())
                         .arg(pixels.height())
                         .arg(dpi);
        return false;
    }
    const qreal dpr = dpi / 96.0;
    const QSizeF logical = QSizeF(pixels) / dpr;
    QImage image(pixels, QImage::Format_ARGB32_Premultiplied);
    image.setDevicePixelRatio(dpr);
    image.fill(m_options.background);
    {
        QPainter painter(&image);
        painter.setRenderHint(QPainter::TextAntialiasing);
        paintImpl(&painter, QRectF(QPointF(0, 0), logical), false);
    }
    const int dotsPerMeter = qRound(dpi / 0.0254);
    image.setDotsPerMeterX(dotsPerMeter);
    image.setDotsPerMeterY(dotsPerMeter);
    return writeImagePng(path, image, error);
}

QString HeatmapRenderer::documentDescription() const
{
    return m_result ? m_result->params.caption() : QString();
}

bool HeatmapRenderer::saveSvg(const QString &path, QSize size, QString *error) const
{
    return writeFigureSvg(path, size, QStringLiteral("Attention Lab heatmap"),
                          documentDescription(), painter(), error);
}

bool HeatmapRenderer::savePdf(const QString &path, QSize size, QString *error) const
{
    return writeFigurePdf(path, size, QStringLiteral("Attention Lab heatmap"), painter(), error);
}

bool HeatmapRenderer::save(const QString &path, QSize size, qreal dpr, QString *error) const
{
    return writeFigure(path, size, dpr, m_options.background,
                       QStringLiteral("Attention Lab heatmap"), documentDescription(), painter(),
                       error);
}

bool exportEachHead(const HeatmapRenderer &renderer, const QString &directory,
                    const QString &prefix, const QString &format, QSize size, double dpi,
                    QStringList *written, QString *error)
{
    const auto result = renderer.result();
    if (!result || !result->ok() || result->headCount() == 0) {
        if (error)
            *error = QStringLiteral("there is no computed heatmap to export");
        return false;
    }
    const QString fmt = format.toLower();
    if (fmt != QLatin1String("png") && fmt != QLatin1String("svg") && fmt != QLatin1String("pdf")) {
        if (error)
            *error = QStringLiteral("unknown format '%1' (expected png, svg or pdf)").arg(format);
        return false;
    }
    if (!QDir().mkpath(directory)) {
        if (error)
            *error = QStringLiteral("cannot create the folder '%1'").arg(directory);
        return false;
    }
    const int h = result->headCount();
    const bool mean = h > 1 && renderer.options().quantity == HeatmapQuantity::Weights;
    HeatmapRenderer one;
    one.setResult(result);
    for (int head = 0; head < h + (mean ? 1 : 0); ++head) {
        HeatmapOptions options = renderer.options();
        options.view = HeatmapView::SingleHead;
        options.head = head;
        one.setOptions(options);
        const QString name = head == h ? QStringLiteral("%1-mean.%2").arg(prefix, fmt)
                                       : QStringLiteral("%1-%2.%3").arg(prefix).arg(head).arg(fmt);
        const QString path = QDir(directory).filePath(name);
        bool ok = false;
        if (fmt == QLatin1String("png"))
            ok = one.savePngAtDpi(path, size, dpi, error);
        else if (fmt == QLatin1String("svg"))
            ok = one.saveSvg(path, size, error);
        else
            ok = one.savePdf(path, size, error);
        if (!ok)
            return false;
        if (written)
            written->append(path);
    }
    return true;
}

} // namespace attn
