#!/usr/bin/env bash
# What bench/compare_numpy.py needs besides the build: Debian's NumPy and OpenBLAS (the BLAS
# docs/performance.md's NumPy reference figures were taken with; without it Debian's NumPy
# falls back to the much slower reference BLAS). Installs only what is missing, then builds like
# setup.sh.
#   bash scripts/setup-bench.sh [preset]      (preset: release (default), native)
set -euo pipefail
ATTN_ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
bench_packages=(python3-numpy libopenblas0-pthread)
missing=()
for p in "${bench_packages[@]}"; do
    if ! dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed"; then
        missing+=("$p")
    fi
done
if ((${#missing[@]} > 0)); then
    echo "attnlab bench setup: installing ${missing[*]}"
    sudo=()
    if [[ $(id -u) -ne 0 ]]; then
        sudo=(sudo)
    fi
    "${sudo[@]}" apt-get update -q
    "${sudo[@]}" env DEBIAN_FRONTEND=noninteractive apt-get install -y -q --no-install-recommends \
        "${missing[@]}"
fi
source "$ATTN_ROOT/scripts/setup.sh" "${1:-release}"
