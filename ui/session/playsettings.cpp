#include "ui/session/playsettings.h"

#include <QJsonValue>

#include <algorithm>
#include <cmath>

namespace attn {

std::vector<double> PlaySettings::schedule(int heads) const
{
    return playSchedule(parameter, from, to, frames,
                        Index(SessionParameters::maxDModel / std::max(1, heads)));
}

QJsonObject PlaySettings::toJson() const
{
    QJsonObject o;
    o.insert(QStringLiteral("parameter"), QString::fromStdString(playParameterName(parameter)));
    o.insert(QStringLiteral("from"), from);
    o.insert(QStringLiteral("to"), to);
    o.insert(QStringLiteral("frames"), frames);
    o.insert(QStringLiteral("fps"), framesPerSecond);
    o.insert(QStringLiteral("loop"), loop);
    return o;
}

PlaySettings PlaySettings::fromJson(const QJsonObject &o, const PlaySettings &base, QString *error)
{
    PlaySettings s = base;
    QString problem;
    const auto fail = [&problem](const QString &what) {
        if (problem.isEmpty())
            problem = what;
    };
    const QJsonValue parameter = o.value(QLatin1String("parameter"));
    if (!parameter.isUndefined()) {
        try {
            s.parameter = parsePlayParameter(parameter.toString().toStdString());
        } catch (const InvalidArgument &) {
            fail(QStringLiteral("'parameter' must be dk, alpha or tau"));
        }
    }
    const auto real = [&](const char *key, double *out) {
        const QJsonValue v = o.value(QLatin1String(key));
        if (v.isUndefined())
            return;
        if (!v.isDouble() || !std::isfinite(v.toDouble()))
            fail(QStringLiteral("'%1' must be a finite number").arg(QLatin1String(key)));
        else
            *out = v.toDouble();
    };
    real("from", &s.from);
    real("to", &s.to);
    double frames = s.frames;
    real("frames", &frames);
    if (frames != std::floor(frames) || frames < 1 || frames > double(kMaxPlayFrames))
        fail(QStringLiteral("'frames' must be an integer in [1, %1]").arg(kMaxPlayFrames));
    else
        s.frames = int(frames);
    real("fps", &s.framesPerSecond);
    if (!(s.framesPerSecond >= 0.25 && s.framesPerSecond <= 60.0))
        fail(QStringLiteral("'fps' must be in [0.25, 60]"));
    const QJsonValue loop = o.value(QLatin1String("loop"));
    if (!loop.isUndefined()) {
        if (!loop.isBool())
            fail(QStringLiteral("'loop' must be true or false"));
        else
            s.loop = loop.toBool();
    }
    if (problem.isEmpty()) {
        try {
            s.schedule(1);
        } catch (const InvalidArgument &e) {
            fail(QString::fromStdString(e.what()));
        }
    }
    if (!problem.isEmpty()) {
        if (error)
            *error = QStringLiteral("play: %1").arg(problem);
        return base;
    }
    return s;
}

SessionParameters applyPlayValue(SessionParameters p, PlayParameter parameter, double value)
{
    switch (parameter) {
    case PlayParameter::HeadWidth: {
        const int heads = int(std::max<Index>(1, p.heads));
        const int dK
            = std::clamp(int(std::lround(value)), 1, int(SessionParameters::maxDModel / heads));
        p.dModel = dK * heads;
        break;
    }
    case PlayParameter::ScaleExponent:
        p.scaleExponent = value;
        break;
    case PlayParameter::Temperature:
        p.temperature = value;
        break;
    }
    return p;
}

QString playValueText(PlayParameter parameter, double value)
{
    return QStringLiteral("%1 = %2")
        .arg(QString::fromStdString(playParameterSymbol(parameter)))
        .arg(parameter == PlayParameter::HeadWidth ? QString::number(std::lround(value))
                                                   : QString::number(value, 'g', 6));
}

} // namespace attn
