#include "common.h"

namespace attn::cli {
// Placeholder until the 'compute' command lands.
int runCompute(const QStringList &arguments)
{
    return failure(arguments.value(0), QStringLiteral("not implemented yet"));
}
} // namespace attn::cli
