#!/usr/bin/env bash
# Installs the Debian 12 packages Attention Lab needs (only those missing), then configures and
# builds it with CMake. Sourced by run-app.sh and run-tests.sh; usable alone:
#   scripts/setup.sh [preset]      (preset: release (default), dev, native, fuzz)
set -euo pipefail

ATTN_ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
ATTN_PRESET="${1:-${ATTN_PRESET:-release}}"

# Build tools, Qt 6 (Widgets, Charts, Svg, Test), Eigen, OpenBLAS (OpenMP build: the matrix
# products, core/base/blas.h), libzip (.npz), Google Benchmark, the tokenizers' PCRE2, utf8proc,
# nlohmann/json and SentencePiece (core/text/), Node.js and npm for the tokenizer references
# (tests/reference/tokenizers/),
# (Qt Charts needs Qt OpenGL and xkbcommon headers at configure time), the xcb platform plugin to show the window, fonts for offscreen rendering, clang-format for
# the format check.
ATTN_PACKAGES=(
    build-essential cmake ninja-build pkg-config
    qt6-base-dev qt6-charts-dev qt6-svg-dev qt6-qpa-plugins libgl-dev libqt6opengl6-dev
    libxkbcommon-dev
    libeigen3-dev libzip-dev zlib1g-dev libbenchmark-dev libopenblas-openmp-dev
    nlohmann-json3-dev
    fonts-dejavu-core clang-format
    libpcre2-dev libutf8proc-dev libsentencepiece-dev nodejs
)

# The sanitizer and fuzzing build (preset fuzz, scripts/run-tests.sh): clang with its
# sanitizer and libFuzzer runtimes, and LLVM's OpenMP runtime for clang's -fopenmp.
ATTN_FUZZ_PACKAGES=(clang libclang-rt-14-dev libomp-dev)

# attn_install_packages [package...]: installs those of the packages (default: ATTN_PACKAGES)
# that are missing.
attn_install_packages() {
    local wanted=("$@")
    if ((${#wanted[@]} == 0)); then
        wanted=("${ATTN_PACKAGES[@]}")
    fi
    local missing=()
    for p in "${wanted[@]}"; do
        if ! dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed"; then
            missing+=("$p")
        fi
    done
    if ((${#missing[@]} == 0)); then
        return 0
    fi
    echo "attnlab setup: installing ${missing[*]}"
    local sudo=()
    if [[ $(id -u) -ne 0 ]]; then
        sudo=(sudo)
    fi
    # The package lists once per run (run-tests.sh installs in three steps).
    if [[ -z "${ATTN_APT_UPDATED:-}" ]]; then
        "${sudo[@]}" apt-get update -q
        ATTN_APT_UPDATED=1
    fi
    "${sudo[@]}" env DEBIAN_FRONTEND=noninteractive apt-get install -y -q --no-install-recommends \
        "${missing[@]}"
}

attn_build() {
    cd "$ATTN_ROOT"
    cmake --preset "$ATTN_PRESET" >/dev/null
    # ATTN_TARGETS (space-separated) limits the build, e.g. to the app alone for run-app.sh.
    local targets=()
    if [[ -n "${ATTN_TARGETS:-}" ]]; then
        read -r -a names <<<"$ATTN_TARGETS"
        targets=(--target "${names[@]}")
    fi
    cmake --build --preset "$ATTN_PRESET" --parallel "$(nproc)" "${targets[@]}"
}

attn_install_packages
# npm: part of NodeSource's nodejs package, a package of its own in Debian's.
if ! command -v npm >/dev/null; then
    attn_install_packages npm
fi
if [[ "$ATTN_PRESET" == fuzz ]]; then
    attn_install_packages "${ATTN_FUZZ_PACKAGES[@]}"
fi
attn_build
