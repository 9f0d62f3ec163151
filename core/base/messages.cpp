#include "core/base/messages.h"

namespace attn {

std::string shortList(const std::vector<std::string> &items, std::size_t shown)
{
    std::string out;
    const std::size_t count = items.size() <= shown + 1 ? items.size() : shown;
    for (std::size_t i = 0; i < count; ++i)
        out += (i ? ", " : "") + items[i];
    if (count < items.size())
        out += " and " + std::to_string(items.size() - count) + " more";
    return out;
}

} // namespace attn
