#!/usr/bin/env bash
# Installs what is missing, builds (Release) and launches Attention Lab.
set -euo pipefail
# Only the app (not the tests and benchmarks): the window is up sooner on a first build.
ATTN_TARGETS="${ATTN_TARGETS:-attnlab}"
source "$(dirname "${BASH_SOURCE[0]}")/setup.sh" release
exec "$ATTN_ROOT/build/release/app/attnlab" "$@"
