#!/usr/bin/env bash
# Fails when a C++ file differs from what clang-format (the root .clang-format) would write.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
mapfile -t files < <(git ls-files '*.cpp' '*.h' 2>/dev/null || find core ui app tests bench -name '*.cpp' -o -name '*.h')
bad=0
for f in "${files[@]}"; do
    [[ -f "$f" ]] || continue
    if ! clang-format --dry-run --Werror "$f" >/dev/null 2>&1; then
        echo "format: $f differs from clang-format (run: clang-format -i $f)"
        bad=1
    fi
done
if ((bad)); then
    exit 1
fi
echo "format: ${#files[@]} files clean"
