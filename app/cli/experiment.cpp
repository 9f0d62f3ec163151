#include "common.h"

namespace attn::cli {
// Placeholder until the 'experiment' command lands.
int runExperiment(const QStringList &arguments)
{
    return failure(arguments.value(0), QStringLiteral("not implemented yet"));
}
} // namespace attn::cli
