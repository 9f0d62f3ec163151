#!/usr/bin/env bash
# Installs what is missing, builds (Release) and runs the whole test suite with CTest, checks
# formatting, runs the tests of the worker threads under ThreadSanitizer (the `tsan` preset,
# label tsan: it links the Release build's core), then builds the `fuzz` preset (clang, ASan +
# UBSan, the libFuzzer targets of fuzz/) and runs the whole suite again under those sanitizers
# and each fuzz target for ATTN_FUZZ_SECONDS (default 5) on its seed corpus.
# ATTN_SANITIZE_TESTS=0 stops after the Release suite and the format check.
set -euo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/setup.sh" release
cd "$ATTN_ROOT"
ctest --preset release --parallel "$(nproc)"
bash "$ATTN_ROOT/scripts/check-format.sh"
if [[ "${ATTN_SANITIZE_TESTS:-1}" != 0 ]]; then
    ATTN_PRESET=tsan attn_build
    ctest --preset tsan --parallel "$(nproc)"
    attn_install_packages "${ATTN_FUZZ_PACKAGES[@]}"
    ATTN_PRESET=fuzz attn_build
    # Any sanitizer report fails the test it happens in (and every command the test runs: the
    # attnlab children are built with the sanitizers too). Leaks are reported except for Qt's
    # own process-lifetime allocations (scripts/lsan-suppressions.txt, each justified there).
    export ASAN_OPTIONS="detect_leaks=1:abort_on_error=0:detect_stack_use_after_return=0"
    export LSAN_OPTIONS="suppressions=$ATTN_ROOT/scripts/lsan-suppressions.txt:print_suppressions=0"
    export UBSAN_OPTIONS="print_stacktrace=1:halt_on_error=1"
    ctest --preset fuzz --parallel "$(nproc)"
    bash "$ATTN_ROOT/scripts/run-fuzzers.sh" "${ATTN_FUZZ_SECONDS:-5}"
fi
