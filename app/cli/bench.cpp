#include "common.h"

namespace attn::cli {
// Placeholder until the 'bench' command lands.
int runBench(const QStringList &arguments)
{
    return failure(arguments.value(0), QStringLiteral("not implemented yet"));
}
} // namespace attn::cli
