#include "common.h"

namespace attn::cli {
// Placeholder until the 'sweep' command lands.
int runSweep(const QStringList &arguments)
{
    return failure(arguments.value(0), QStringLiteral("not implemented yet"));
}
} // namespace attn::cli
