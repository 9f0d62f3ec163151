#include "common.h"

namespace attn::cli {
// Placeholder until the 'heatmap' command lands.
int runHeatmap(const QStringList &arguments)
{
    return failure(arguments.value(0), QStringLiteral("not implemented yet"));
}
} // namespace attn::cli
