#include "ui/render/playframes.h"

#include "ui/render/figurefile.h"
#include "ui/session/sessioncompute.h"

#include <QDir>

#include <memory>

namespace attn {

QString playFrameFileName(int index, int frames)
{
    return QStringLiteral("frame_%1.png").arg(index, frames > 1000 ? 4 : 3, 10, QLatin1Char('0'));
}

bool writePlayFrames(const SessionParameters &base, const HeatmapOptions &options,
                     const PlaySettings &settings, const QString &folder, QSize size, qreal dpr,
                     QString *error, std::vector<PlayFrame> *written,
                     const std::function<void(int, int)> &progress, const CancelToken &cancel)
{
    std::vector<double> values;
    try {
        values = settings.schedule(base.heads);
    } catch (const InvalidArgument &e) {
        *error = QString::fromStdString(e.what());
        return false;
    }
    if (!QDir().mkpath(folder)) {
        *error = QStringLiteral("cannot create the folder '%1'").arg(folder);
        return false;
    }
    const QDir dir(folder);
    const int frames = int(values.size());
    const QString name = QString::fromStdString(playParameterName(settings.parameter));
    QByteArray csv = "frame,file,parameter,value,d_model,heads,d_k,alpha,tau\n";
    for (int k = 0; k < frames; ++k) {
        cancel.throwIfCancelled();
        PlayFrame frame;
        frame.index = k;
        frame.value = values[std::size_t(k)];
        frame.parameters = applyPlayValue(base, settings.parameter, frame.value);
        frame.file = playFrameFileName(k, frames);
        frame.caption = QStringLiteral("frame %1/%2: %3")
                            .arg(k + 1)
                            .arg(frames)
                            .arg(playValueText(settings.parameter, frame.value));
        const QString invalid = frame.parameters.validate();
        if (!invalid.isEmpty()) {
            *error = QStringLiteral("frame %1 (%2): %3").arg(k).arg(frame.caption, invalid);
            return false;
        }
        auto result = std::make_shared<SessionResult>(computeSession(frame.parameters, cancel));
        if (!result->ok()) {
            *error = QStringLiteral("frame %1 (%2): %3").arg(k).arg(frame.caption, result->error);
            return false;
        }
        HeatmapRenderer renderer;
        renderer.setResult(result);
        HeatmapOptions o = options;
        o.captionPrefix = frame.caption;
        o.scrollable = false;
        o.window = QRect();
        renderer.setOptions(o);
        if (!renderer.savePng(dir.filePath(frame.file), size, dpr, error))
            return false;
        const SessionParameters &p = frame.parameters;
        csv += QStringLiteral("%1,%2,%3,%4,%5,%6,%7,%8,%9\n")
                   .arg(k)
                   .arg(frame.file, name, QString::number(frame.value, 'g', 17))
                   .arg(p.dModel)
                   .arg(p.heads)
                   .arg(p.dK())
                   .arg(QString::number(p.scaleExponent, 'g', 17),
                        QString::number(p.temperature, 'g', 17))
                   .toUtf8();
        if (written)
            written->push_back(frame);
        if (progress)
            progress(k + 1, frames);
    }
    return writeFileBytes(dir.filePath(QStringLiteral("frames.csv")), csv, error);
}

} // namespace attn
