#pragma once
// Play: one parameter of the session animated over a range, frame by frame. The schedule is the
// sequence of values the frames show; playFrameAt says which frame a wall clock has reached, so a
// player that falls behind skips frames instead of queueing them.

#include "core/base/types.h"

#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace attn {

/// The parameter a Play animates.
enum class PlayParameter {
    HeadWidth, ///< d_k, an integer (d_model = d_k · h, h kept)
    ScaleExponent, ///< α in the scale d_k^(−α)/τ, in [0, 1]
    Temperature, ///< τ in the scale d_k^(−α)/τ, in [0.01, 100] (the Play dock's range)
};

/// "dk", "alpha", "tau" (the command line's and the session file's names).
std::string playParameterName(PlayParameter parameter);
/// The field's symbol: "d_k", "α", "τ" (UTF-8).
std::string playParameterSymbol(PlayParameter parameter);
/// Inverse of playParameterName ("d_k" and "temperature" also accepted). Throws InvalidArgument
/// listing the accepted names.
PlayParameter parsePlayParameter(std::string_view name);

/// Most frames a Play or a frame export takes.
inline constexpr Index kMaxPlayFrames = 1000;

/// The value of every frame, from `from` to `to`, k = 0 … frames−1 (frames = 1: just `from`;
/// from > to plays backwards): α in equal steps, v_k = from + (to − from)·k/(frames − 1); d_k and
/// τ, whose axes are logarithmic, in equal ratios, v_k = from·(to/from)^(k/(frames − 1)) (d_k
/// 4 → 4096 in 11 frames: 4, 8, 16, …; not 4, 413, 822, …). For d_k each value is rounded to
/// the nearest integer, halves away from 0 (consecutive frames may repeat a width: the timing
/// stays even).
/// Throws InvalidArgument naming the problem for frames outside [1, kMaxPlayFrames], a `from` or
/// `to` that is not finite or outside the parameter's range (α: [0, 1]; τ: [0.01, 100]; d_k:
/// [1, maxHeadWidth] once rounded).
std::vector<double> playSchedule(PlayParameter parameter, double from, double to, Index frames,
                                 Index maxHeadWidth = 4096);

/// The frame shown `elapsedSeconds` after Play started at `framesPerSecond` (> 0):
/// k = ⌊elapsed · fps⌋ while k < frames; with `loop` it starts again (k mod frames), without it
/// nullopt once the last frame's time is over (the Play ends). nullopt for frames < 1, a negative
/// or non-finite time or fps ≤ 0.
std::optional<Index> playFrameAt(double elapsedSeconds, double framesPerSecond, Index frames,
                                 bool loop);

} // namespace attn
