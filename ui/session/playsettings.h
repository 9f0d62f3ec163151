#pragma once
// What the Play controls set (saved in session files under "view" → "play"): the parameter
// animated (d_k, α or τ), its range and frame count, the speed and whether it loops. The
// schedule of values is core's (core/engine/playschedule.h); applyPlayValue puts one value into the
// session's parameters the way the matching control does.

#include "core/engine/playschedule.h"
#include "ui/session/sessionparameters.h"

#include <QJsonObject>
#include <QString>

#include <vector>

namespace attn {

struct PlaySettings
{
    PlayParameter parameter = PlayParameter::ScaleExponent;
    double from = 0.0;
    double to = 1.0;
    int frames = 21; ///< 1 … kMaxPlayFrames
    double framesPerSecond = 4.0; ///< 0.25 … 60
    bool loop = false;

    bool operator==(const PlaySettings &) const = default;

    /// playSchedule of these settings for d_k up to maxDModel / heads. Throws InvalidArgument
    /// naming the problem.
    std::vector<double> schedule(int heads) const;

    /// {"parameter": "dk" | "alpha" | "tau", "from", "to", "frames", "fps", "loop"}.
    QJsonObject toJson() const;
    /// `base` with the keys present in `o`; a bad value (unknown parameter, a number out of
    /// range, a schedule core refuses) keeps `base` entirely and sets `error` naming the key.
    static PlaySettings fromJson(const QJsonObject &o, const PlaySettings &base,
                                 QString *error = nullptr);
};

/// `p` with the animated parameter set to `value`, as the Controls set it: d_k keeps h
/// (d_model = d_k · h, at most SessionParameters::maxDModel), α and τ as they are.
SessionParameters applyPlayValue(SessionParameters p, PlayParameter parameter, double value);

/// The value as a caption names it: "d_k = 16", "α = 0.25", "τ = 2" (6 significant digits).
QString playValueText(PlayParameter parameter, double value);

} // namespace attn
