#!/usr/bin/env bash
# Fails when a C++ file differs from what clang-format (the root .clang-format) would write.
# The files go to clang-format in batches, as many batches at once as there are cores.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
mapfile -t files < <(git ls-files '*.cpp' '*.h' 2>/dev/null || find core ui app tests bench -name '*.cpp' -o -name '*.h')
present=()
for f in "${files[@]}"; do
    [[ -f "$f" ]] && present+=("$f")
done
status=0
out=$(printf '%s\0' "${present[@]}" \
    | xargs -0 -n 32 -P "$(nproc)" clang-format --dry-run --Werror 2>&1 >/dev/null) || status=$?
# clang-format names each file that differs: "FILE:LINE:COL: error: code should be
# clang-formatted [-Wclang-format-violations]".
mapfile -t bad < <(sed -n 's/^\(.*\):[0-9]*:[0-9]*: error: code should be clang-formatted.*/\1/p' \
    <<<"$out" | sort -u)
for f in "${bad[@]}"; do
    [[ -n "$f" ]] && echo "format: $f differs from clang-format (run: clang-format -i $f)"
done
if ((status != 0)); then
    if ((${#bad[@]} == 0)) || [[ -z "${bad[0]}" ]]; then
        echo "format: clang-format failed:" >&2
        echo "$out" | head -20 >&2
    fi
    exit 1
fi
echo "format: ${#present[@]} files clean"
