#include "core/engine/playschedule.h"

#include <cmath>
#include <sstream>

namespace attn {

std::string playParameterName(PlayParameter parameter)
{
    switch (parameter) {
    case PlayParameter::HeadWidth:
        return "dk";
    case PlayParameter::ScaleExponent:
        return "alpha";
    case PlayParameter::Temperature:
        return "tau";
    }
    return "dk";
}

std::string playParameterSymbol(PlayParameter parameter)
{
    switch (parameter) {
    case PlayParameter::HeadWidth:
        return "d_k";
    case PlayParameter::ScaleExponent:
        return "\u03b1";
    case PlayParameter::Temperature:
        return "\u03c4";
    }
    return "d_k";
}

PlayParameter parsePlayParameter(std::string_view name)
{
    if (name == "dk" || name == "d_k")
        return PlayParameter::HeadWidth;
    if (name == "alpha")
        return PlayParameter::ScaleExponent;
    if (name == "tau" || name == "temperature")
        return PlayParameter::Temperature;
    throw InvalidArgument("unknown Play parameter '" + std::string(name)
                          + "' (expected dk, alpha or tau)");
}

namespace {

std::string number(double v)
{
    std::ostringstream s;
    s.precision(6);
    s << v;
    return s.str();
}

void checkEnd(PlayParameter parameter, const char *which, double v, Index maxHeadWidth)
{
    const std::string name = std::string(which) + " = " + number(v);
    if (!std::isfinite(v))
        throw InvalidArgument(std::string(which) + " must be a finite number");
    switch (parameter) {
    case PlayParameter::HeadWidth: {
        const double rounded = std::round(v);
        if (rounded < 1 || rounded > double(maxHeadWidth))
            throw InvalidArgument(name + " is outside d_k's range [1, "
                                  + std::to_string(maxHeadWidth) + "]");
        break;
    }
    case PlayParameter::ScaleExponent:
        if (v < 0.0 || v > 1.0)
            throw InvalidArgument(name + " is outside alpha's range [0, 1]");
        break;
    case PlayParameter::Temperature:
        if (v < 0.01 || v > 100.0)
            throw InvalidArgument(name + " is outside tau's range [0.01, 100]");
        break;
    }
}

} // namespace

std::vector<double> playSchedule(PlayParameter parameter, double from, double to, Index frames,
                                 Index maxHeadWidth)
{
    if (frames < 1 || frames > kMaxPlayFrames)
        throw InvalidArgument("the frame count must be in [1, " + std::to_string(kMaxPlayFrames)
                              + "], got " + std::to_string(frames));
    checkEnd(parameter, "from", from, maxHeadWidth);
    checkEnd(parameter, "to", to, maxHeadWidth);
    std::vector<double> values(static_cast<std::size_t>(frames));
    // d_k and τ are drawn on log axes (the charts' d_k, the scale d_k^(−α)/τ): equal ratios.
    const bool geometric = parameter != PlayParameter::ScaleExponent;
    for (Index k = 0; k < frames; ++k) {
        const double t = frames == 1 ? 0.0 : double(k) / double(frames - 1);
        // (to − from)·k first, then / (frames − 1): exact for steps such as 1/4 or −1.5/3.
        const double v = frames == 1 ? from
            : geometric              ? from * std::pow(to / from, t)
                                     : from + (to - from) * double(k) / double(frames - 1);
        values[std::size_t(k)] = parameter == PlayParameter::HeadWidth ? std::round(v) : v;
    }
    values.back() = parameter == PlayParameter::HeadWidth ? std::round(frames == 1 ? from : to)
                                                          : (frames == 1 ? from : to);
    return values;
}

std::optional<Index> playFrameAt(double elapsedSeconds, double framesPerSecond, Index frames,
                                 bool loop)
{
    if (frames < 1 || !(elapsedSeconds >= 0.0) || !std::isfinite(elapsedSeconds)
        || !(framesPerSecond > 0.0) || !std::isfinite(framesPerSecond))
        return std::nullopt;
    const double k = std::floor(elapsedSeconds * framesPerSecond);
    if (k < double(frames))
        return Index(k);
    if (!loop)
        return std::nullopt;
    return Index(std::fmod(k, double(frames)));
}

} // namespace attn
