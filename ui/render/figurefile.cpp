#include "ui/render/figurefile.h"

#include "core/attention/mask.h"

#include <QBuffer>
#include <QFileInfo>
#include <QMarginsF>
#include <QPageSize>
#include <QPainter>
#include <QPdfWriter>
#include <QSaveFile>
#include <QSvgGenerator>

#include <algorithm>
#include <cmath>

namespace attn {

namespace {

bool fail(QString *error, const QString &message)
{
    if (error)
        *error = message;
    return false;
}

QString cannotWrite(const QString &path, const QString &why)
{
    return QStringLiteral("cannot write '%1': %2").arg(path, why);
}

// Output files are opened unbuffered: with QIODevice's buffer, the error of the last flush
// (inside commit()) is not seen by QSaveFile, which then renames a truncated file into place.
// Unbuffered, a failed write (a full disk) sets error() at once and commit() refuses.
constexpr QIODevice::OpenMode kWriteMode = QIODevice::WriteOnly | QIODevice::Unbuffered;

// The reason a write to `file` failed ("No space left on device"), never "Unknown error".
QString writeError(const QSaveFile &file)
{
    if (file.error() != QFileDevice::NoError && !file.errorString().isEmpty()
        && file.errorString() != QLatin1String("Unknown error"))
        return file.errorString();
    return QStringLiteral("write failed (disk full?)");
}

// Forwards writes to a QSaveFile, retrying a short write: a disk that fills up takes part of a
// block without an error (only the next write fails), and QTextStream (under QSvgGenerator)
// and the PDF engine ignore short writes; retried, the failure reaches QSaveFile's error state
// and commit() refuses.
class WholeWrites : public QIODevice
{
public:
    explicit WholeWrites(QSaveFile *file)
        : m_file(file)
    {
        open(QIODevice::WriteOnly | QIODevice::Unbuffered);
    }
    bool failed() const { return m_failed; }

protected:
    qint64 readData(char *, qint64) override { return -1; }
    qint64 writeData(const char *data, qint64 length) override
    {
        qint64 done = 0;
        while (done < length) {
            const qint64 n = m_file->write(data + done, length - done);
            if (n <= 0) {
                m_failed = true;
                setErrorString(m_file->errorString());
                return -1;
            }
            done += n;
        }
        return length;
    }

private:
    QSaveFile *m_file;
    bool m_failed = false;
};

// Commits `file` unless a write failed (`written` false or an error set); on failure the
// temporary file is removed and an existing file at the path is left as it was.
bool commitOrCancel(QSaveFile &file, bool written, const QString &path, QString *error)
{
    if (!written || file.error() != QFileDevice::NoError) {
        const QString why = writeError(file);
        file.cancelWriting();
        return fail(error, cannotWrite(path, why));
    }
    if (!file.commit())
        return fail(error, cannotWrite(path, writeError(file)));
    return true;
}

} // namespace

QImage renderFigure(QSize size, qreal dpr, const QColor &background, const FigurePainter &paint)
{
    dpr = dpr > 0 ? dpr : 1.0;
    QImage image(QSize(qRound(size.width() * dpr), qRound(size.height() * dpr)),
                 QImage::Format_ARGB32_Premultiplied);
    image.setDevicePixelRatio(dpr);
    image.fill(background);
    QPainter painter(&image);
    painter.setRenderHint(QPainter::TextAntialiasing);
    paint(&painter, QRectF(QPointF(0, 0), QSizeF(size)), false);
    painter.end();
    return image;
}

bool writeImagePng(const QString &path, const QImage &image, QString *error)
{
    // Encoded in memory first: an encoding failure is told apart from a write failure, and a
    // write failure does not go through libpng (which would print "libpng error: Write Error").
    QByteArray bytes;
    {
        QBuffer buffer(&bytes);
        if (!buffer.open(QIODevice::WriteOnly) || !image.save(&buffer, "PNG"))
            return fail(error,
                        cannotWrite(path,
                                    QStringLiteral("could not encode the %1\u00d7%2 PNG image")
                                        .arg(image.width())
                                        .arg(image.height())));
    }
    return writeFileBytes(path, bytes, error);
}

bool writeFileBytes(const QString &path, const QByteArray &bytes, QString *error)
{
    QSaveFile file(path);
    if (!file.open(kWriteMode))
        return fail(error, cannotWrite(path, file.errorString()));
    WholeWrites device(&file);
    return commitOrCancel(file, device.write(bytes) == bytes.size(), path, error);
}

bool writeFigurePng(const QString &path, QSize size, qreal dpr, const QColor &background,
                    const FigurePainter &paint, QString *error)
{
    if (size.width() < 1 || size.height() < 1 || !(dpr > 0) || size.width() * dpr > 32768
        || size.height() * dpr > 32768)
        return fail(error,
                    cannotWrite(path,
                                QStringLiteral("image size %1\u00d7%2 at %3\u00d7 "
                                               "is out of range")
                                    .arg(size.width())
                                    .arg(size.height())
                                    .arg(dpr)));
    return writeImagePng(path, renderFigure(size, dpr, background, paint), error);
}

bool writeFigureSvg(const QString &path, QSize size, const QString &title,
                    const QString &description, const FigurePainter &paint, QString *error)
{
    QSaveFile file(path);
    if (!file.open(kWriteMode))
        return fail(error, cannotWrite(path, file.errorString()));
    WholeWrites device(&file);
    {
        QSvgGenerator generator;
        generator.setOutputDevice(&device);
        generator.setSize(size);
        generator.setViewBox(QRect(QPoint(0, 0), size));
        generator.setTitle(title);
        generator.setDescription(description);
        QPainter painter;
        if (!painter.begin(&generator))
            return fail(error, cannotWrite(path, QStringLiteral("SVG painter failed")));
        paint(&painter, QRectF(QPointF(0, 0), QSizeF(size)), true);
        painter.end();
    }
    return commitOrCancel(file, !device.failed(), path, error);
}

bool writeFigurePdf(const QString &path, QSize size, const QString &title,
                    const FigurePainter &paint, QString *error)
{
    QSaveFile file(path);
    if (!file.open(kWriteMode))
        return fail(error, cannotWrite(path, file.errorString()));
    WholeWrites device(&file);
    {
        QPdfWriter writer(&device);
        writer.setResolution(72); // one logical pixel = one point
        writer.setPageSize(
            QPageSize(QSizeF(size), QPageSize::Point, QString(), QPageSize::ExactMatch));
        writer.setPageMargins(QMarginsF(0, 0, 0, 0));
        writer.setTitle(title);
        writer.setCreator(QStringLiteral("Attention Lab"));
        QPainter painter;
        if (!painter.begin(&writer))
            return fail(error, cannotWrite(path, QStringLiteral("PDF painter failed")));
        // Images (heatmap tiles, colourbars) stored losslessly: Qt's PDF writer would otherwise
        // choose JPEG for them, whose colours differ from the colormap's.
        painter.setRenderHint(QPainter::LosslessImageRendering);
        paint(&painter, QRectF(QPointF(0, 0), QSizeF(size)), true);
        painter.end();
    }
    return commitOrCancel(file, !device.failed(), path, error);
}

bool writeFigure(const QString &path, QSize size, qreal dpr, const QColor &background,
                 const QString &title, const QString &description, const FigurePainter &paint,
                 QString *error)
{
    const QString suffix = QFileInfo(path).suffix().toLower();
    if (suffix == QLatin1String("png"))
        return writeFigurePng(path, size, dpr, background, paint, error);
    if (suffix == QLatin1String("svg"))
        return writeFigureSvg(path, size, title, description, paint, error);
    if (suffix == QLatin1String("pdf"))
        return writeFigurePdf(path, size, title, paint, error);
    return fail(error,
                cannotWrite(path,
                            QStringLiteral("unknown format '%1' (expected .png, .svg "
                                           "or .pdf)")
                                .arg(suffix)));
}

namespace figure {

QFont makeFont(qreal pixelSize, bool bold)
{
    QFont font;
    font.setFamily(QStringLiteral("DejaVu Sans"));
    font.setStyleHint(QFont::SansSerif);
    font.setPixelSize(std::max(1, qRound(pixelSize)));
    font.setBold(bold);
    return font;
}

TextStyle textStyle(qreal pixelSize, const QColor &foreground)
{
    const QFont font = makeFont(pixelSize);
    QColor muted = foreground;
    muted.setAlphaF(0.75);
    return {font, makeFont(pixelSize, true), QFontMetricsF(font), foreground, muted};
}

QString minusSign(QString s)
{
    if (s.startsWith(QLatin1Char('-')))
        s.replace(0, 1, QChar(0x2212));
    return s;
}

QString formatTick(double v)
{
    if (std::abs(v) < 1e-300)
        return QStringLiteral("0");
    return minusSign(QString::number(v, 'g', 3));
}

int niceStep(double minimum)
{
    if (!(minimum > 1.0))
        return 1;
    double base = 1.0;
    while (base <= 1e9) {
        for (double m : {1.0, 2.0, 5.0}) {
            if (base * m >= minimum)
                return int(base * m);
        }
        base *= 10.0;
    }
    return int(1e9);
}

QVector<double> linearTicks(double lo, double hi, int count)
{
    QVector<double> ticks;
    if (!(hi > lo))
        return {lo};
    const double raw = (hi - lo) / std::max(count, 1);
    const double mag = std::pow(10.0, std::floor(std::log10(raw)));
    double step = mag;
    for (double m : {1.0, 2.0, 2.5, 5.0, 10.0}) {
        if (mag * m >= raw) {
            step = mag * m;
            break;
        }
    }
    const double first = std::ceil(lo / step - 1e-9) * step;
    for (double v = first; v <= hi + step * 1e-9; v += step)
        ticks.append(std::abs(v) < step * 1e-9 ? 0.0 : v);
    return ticks;
}

QVector<double> logTicks(double lo, double hi)
{
    QVector<double> ticks;
    for (int e = int(std::ceil(std::log10(lo) - 1e-9)); e <= int(std::floor(std::log10(hi) + 1e-9));
         ++e)
        ticks.append(std::pow(10.0, e));
    if (ticks.size() < 2)
        ticks = {lo, hi};
    return ticks;
}

QVector<double> symLogTicks(double top, double linthresh)
{
    top = std::abs(top);
    if (!(top > 0) || !std::isfinite(top))
        return {0.0};
    QVector<double> positive;
    const int first = int(std::floor(std::log10(top) + 1e-9));
    for (int e = first; positive.size() < 3; e -= 2) {
        const double v = std::pow(10.0, e);
        if (v < linthresh * (1 - 1e-9))
            break;
        positive.append(v);
    }
    // positive is descending: −10^first … −smallest, 0, smallest … 10^first.
    QVector<double> ticks;
    for (double v : positive)
        ticks.append(-v);
    ticks.append(0.0);
    for (auto it = positive.crbegin(); it != positive.crend(); ++it)
        ticks.append(*it);
    return ticks;
}

QVector<double> colorBarTicks(const ColorNorm &norm, int linearCount)
{
    switch (norm.scale) {
    case ColorScale::Log:
        return logTicks(norm.vmin, norm.vmax);
    case ColorScale::SymLog:
        return symLogTicks(std::max(std::abs(norm.vmin), std::abs(norm.vmax)), norm.linthresh);
    case ColorScale::Linear:
        break;
    }
    return linearTicks(norm.vmin, norm.vmax, linearCount);
}

QColor hatchColor(QRgb base)
{
    return QColor(base).darker(150);
}

void drawLegendSwatch(QPainter *painter, const QRectF &box, QRgb base, int hatch, qreal em,
                      qreal devScale, const QColor &border)
{
    QImage sample(std::max(1, qRound(box.width() * devScale)),
                  std::max(1, qRound(box.height() * devScale)), QImage::Format_RGB32);
    sample.fill(QColor(base));
    if (hatch) {
        QPainter sp(&sample);
        sp.setRenderHint(QPainter::Antialiasing);
        sp.setPen(QPen(hatchColor(base), std::max(1.0, 0.08 * em * devScale)));
        const qreal w = sample.width(), h = sample.height();
        const qreal step = 0.3 * em * devScale;
        for (qreal c = -h; c < w + h; c += step) {
            if (hatch & MaskCausal)
                sp.drawLine(QPointF(c, h), QPointF(c + h, 0));
            if (hatch & MaskPadding)
                sp.drawLine(QPointF(c, 0), QPointF(c + h, h));
        }
        for (qreal c = step / 2; (hatch & MaskWindow) && c < h; c += step)
            sp.drawLine(QPointF(0, c), QPointF(w, c));
        for (qreal c = step / 2; (hatch & MaskCustom) && c < w; c += step)
            sp.drawLine(QPointF(c, 0), QPointF(c, h));
    }
    painter->drawImage(box, sample);
    painter->setPen(QPen(border, 0));
    painter->drawRect(box);
}

} // namespace figure

} // namespace attn
