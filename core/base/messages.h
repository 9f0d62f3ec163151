#pragma once
// Helpers for error messages that name what a file holds.

#include <cstddef>
#include <string>
#include <vector>

namespace attn {

/// The items joined by ", ", at most `shown` of them; the rest counted: "a, b, c and 65 532
/// more". An archive with 65 535 members is named in one short line, not 1.3 MB.
std::string shortList(const std::vector<std::string> &items, std::size_t shown = 8);

} // namespace attn
