#!/usr/bin/env bash
# Runs each libFuzzer target of the `fuzz` preset (fuzz/, built by `cmake --build --preset fuzz`)
# for SECONDS on its seed corpus, as many at once as there are cores, and fails if any finds
# something.
#   scripts/run-fuzzers.sh [SECONDS] [TARGET...]     (default 20 s; targets: npy npz tensorcase
#                                                     sessionfile tokenizer safetensors
#                                                     modelconfig modelfolder bpe tokenizerjson
#                                                     tokenizerfiles cliargs)
# The committed seeds (fuzz/corpus/<target>/) are only read; what a run adds goes to
# build/fuzz/corpus/<target>/, so a longer run starts from the inputs of the last one. A finding
# is written to build/fuzz/findings/<target>-crash-… (reproduce: build/fuzz/fuzz/fuzz_<target>
# FILE). Prints the executions of each target.
set -euo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
SECONDS_EACH="${1:-20}"
shift || true
TARGETS=("$@")
if ((${#TARGETS[@]} == 0)); then
    TARGETS=(npy npz tensorcase sessionfile tokenizer safetensors modelconfig modelfolder bpe cliargs
        tokenizerjson tokenizerfiles)
fi
BUILD="$ROOT/build/fuzz"
# LeakSanitizer stays on; Qt's own allocations that live until exit are suppressed (see the file).
export ASAN_OPTIONS="${ASAN_OPTIONS:-detect_leaks=1:abort_on_error=0}"
export LSAN_OPTIONS="suppressions=$ROOT/scripts/lsan-suppressions.txt:print_suppressions=0"
export UBSAN_OPTIONS="print_stacktrace=1:halt_on_error=1"
export QT_QPA_PLATFORM=offscreen
mkdir -p "$BUILD/findings"
for t in "${TARGETS[@]}"; do
    if [[ ! -x "$BUILD/fuzz/fuzz_$t" ]]; then
        echo "run-fuzzers: $BUILD/fuzz/fuzz_$t is missing: cmake --preset fuzz && cmake --build --preset fuzz" >&2
        exit 2
    fi
done

# Runs one target; its exit status is the fuzzer's.
fuzz_one() {
    local t="$1"
    mkdir -p "$BUILD/corpus/$t"
    # -timeout: one input taking over 30 s is a finding (a hang; inputs take milliseconds, the
    # margin is for a busy machine); -rss_limit_mb: so is using 2 GiB.
    "$BUILD/fuzz/fuzz_$t" "$BUILD/corpus/$t" "$ROOT/fuzz/corpus/$t" \
        -max_total_time="$SECONDS_EACH" -timeout=30 -rss_limit_mb=2048 -max_len=65536 \
        -print_final_stats=1 -artifact_prefix="$BUILD/findings/$t-" \
        >"$BUILD/findings/$t.log" 2>&1
}

jobs_max="$(nproc)"
declare -A pid_of
for t in "${TARGETS[@]}"; do
    while (($(jobs -rp | wc -l) >= jobs_max)); do
        wait -n || true
    done
    fuzz_one "$t" &
    pid_of[$t]=$!
done

status=0
for t in "${TARGETS[@]}"; do
    log="$BUILD/findings/$t.log"
    if wait "${pid_of[$t]}"; then
        runs=$(sed -n 's/^stat::number_of_executed_units: *//p' "$log" | tail -1)
        echo "fuzz_$t: ${runs:-?} executions in ${SECONDS_EACH} s, no finding"
    else
        echo "fuzz_$t: FINDING (log: $log)" >&2
        grep -E "ERROR|runtime error|SUMMARY|Test unit written" "$log" | head -20 >&2 || true
        status=1
    fi
done
exit "$status"
