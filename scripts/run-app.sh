#!/usr/bin/env bash
# Installs what is missing, builds (Release) and launches Attention Lab.
set -euo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/setup.sh" release
exec "$ATTN_ROOT/build/release/app/attnlab" "$@"
