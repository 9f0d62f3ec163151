#!/usr/bin/env bash
# Installs what is missing, builds (Release) and runs the whole test suite with CTest,
# then checks formatting. Set ATTN_SANITIZE_TESTS=1 to also run the suite under ASan/UBSan.
set -euo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/setup.sh" release
cd "$ATTN_ROOT"
ctest --preset release --parallel "$(nproc)"
bash "$ATTN_ROOT/scripts/check-format.sh"
if [[ "${ATTN_SANITIZE_TESTS:-0}" == 1 ]]; then
    ATTN_PRESET=dev attn_build
    ctest --preset dev --parallel "$(nproc)"
fi
