#pragma once
// Compares a rendered image with a reference image pixel by pixel, within a tolerance, and
// keeps both (and a map of where they differ) for looking at when they do not match. Used by
// the figure tests against the committed golden figures (tests/ui/golden) and
// by the command-line tests against the library's export of the same figure.

#include <QDir>
#include <QImage>
#include <QString>
#include <QtGlobal>

#include <algorithm>
#include <cstdlib>

namespace attn::test {

/// How far two images are apart: the pixels whose largest channel difference (R, G, B or alpha)
/// exceeds the tolerance, out of all pixels, and the largest channel difference anywhere.
struct ImageDifference
{
    bool sameSize = false;
    qint64 differing = 0;
    qint64 total = 0;
    int largest = 0;
    QImage map; ///< the expected image faded, differing pixels red (empty when the sizes differ)
};

inline ImageDifference compareImages(const QImage &actualImage, const QImage &expectedImage,
                                     int channelTolerance)
{
    ImageDifference d;
    d.sameSize = actualImage.size() == expectedImage.size();
    if (!d.sameSize)
        return d;
    const QImage actual = actualImage.convertToFormat(QImage::Format_ARGB32);
    const QImage expected = expectedImage.convertToFormat(QImage::Format_ARGB32);
    d.map = QImage(actual.size(), QImage::Format_RGB32);
    d.total = qint64(actual.width()) * actual.height();
    for (int y = 0; y < actual.height(); ++y) {
        const auto *a = reinterpret_cast<const QRgb *>(actual.constScanLine(y));
        const auto *e = reinterpret_cast<const QRgb *>(expected.constScanLine(y));
        auto *m = reinterpret_cast<QRgb *>(d.map.scanLine(y));
        for (int x = 0; x < actual.width(); ++x) {
            const int diff = std::max(
                {std::abs(qRed(a[x]) - qRed(e[x])), std::abs(qGreen(a[x]) - qGreen(e[x])),
                 std::abs(qBlue(a[x]) - qBlue(e[x])), std::abs(qAlpha(a[x]) - qAlpha(e[x]))});
            d.largest = std::max(d.largest, diff);
            if (diff > channelTolerance) {
                ++d.differing;
                m[x] = qRgb(255, 0, 0);
            } else {
                const int grey = 192 + qGray(e[x]) / 4;
                m[x] = qRgb(grey, grey, grey);
            }
        }
    }
    return d;
}

/// Saves the actual image, the expected one and the difference map in `dir` as
/// <name>_actual.png, <name>_expected.png and <name>_diff.png, and returns a sentence naming
/// them (for a failure message).
inline QString keepImages(const QString &dir, const QString &name, const QImage &actual,
                          const QImage &expected, const ImageDifference &d)
{
    QDir().mkpath(dir);
    const QString actualPath = QDir(dir).filePath(name + QStringLiteral("_actual.png"));
    const QString expectedPath = QDir(dir).filePath(name + QStringLiteral("_expected.png"));
    const QString diffPath = QDir(dir).filePath(name + QStringLiteral("_diff.png"));
    actual.save(actualPath);
    expected.save(expectedPath);
    QString text = QStringLiteral("actual image: %1, expected: %2").arg(actualPath, expectedPath);
    if (!d.map.isNull() && d.map.save(diffPath))
        text += QStringLiteral(", differing pixels in red: %1").arg(diffPath);
    return text;
}

} // namespace attn::test
