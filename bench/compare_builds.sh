#!/usr/bin/env bash
# Two builds side by side on the figures docs/performance.md keeps: the kernels (materialized and
# streaming, float32, n = 1 024 and 4 096), the GUI's slider step (p95 at n = 64, 256, 1 024) and
# the Training tab's steps per second (with and without its view). Smaller is better for the
# times, larger for steps/s. The two builds' benchmarks run alternately, ROUNDS times,
# so both see the same load; prints each figure's median per build and the ratio new / old.
#   bash bench/compare_builds.sh OLD_BUILD_DIR NEW_BUILD_DIR [ROUNDS]
# e.g. an older commit built in a worktree:
#   git worktree add /tmp/old 19c653c && (cd /tmp/old && cmake --preset release &&
#     cmake --build --preset release --target attn_bench_kernels attn_bench_gui \
#       attn_bench_training_gui)
#   bash bench/compare_builds.sh /tmp/old/build/release build/release 3
set -euo pipefail
old="$1"
new="$2"
rounds="${3:-3}"
for b in "$old" "$new"; do
    for t in attn_bench_kernels attn_bench_gui attn_bench_training_gui; do
        [[ -x "$b/bench/$t" ]] || { echo "compare_builds: $b/bench/$t is missing" >&2; exit 2; }
    done
done
out="$(mktemp -d)"
trap 'rm -rf "$out"' EXIT
filter='(Materialized|Streaming)_f32/n:(1024|4096)/d:64/'
for ((r = 0; r < rounds; ++r)); do
    for side in old new; do
        b="$old"
        [[ $side == new ]] && b="$new"
        "$b/bench/attn_bench_kernels" --benchmark_filter="$filter" --benchmark_repetitions=3 \
            --benchmark_report_aggregates_only=true --benchmark_format=json \
            >"$out/kernels_${side}_$r.json" 2>/dev/null
        QT_QPA_PLATFORM=offscreen "$b/bench/attn_bench_gui" --changes 60 --format json \
            >"$out/gui_${side}_$r.json" 2>/dev/null
        QT_QPA_PLATFORM=offscreen "$b/bench/attn_bench_training_gui" --seconds 4 --format json \
            >"$out/training_${side}_$r.json" 2>/dev/null
    done
done
/usr/bin/python3 - "$out" "$rounds" <<'EOF'
import json, statistics, sys
out, rounds = sys.argv[1], int(sys.argv[2])
def load(kind, side):
    return [json.load(open(f"{out}/{kind}_{side}_{r}.json")) for r in range(rounds)]
def kernels(side):
    figures = {}
    for run in load("kernels", side):
        for b in run["benchmarks"]:
            if b.get("aggregate_name") == "median":
                figures.setdefault(b["run_name"] + " ms", []).append(b["real_time"] / 1e6
                    if b["time_unit"] == "ns" else b["real_time"] / 1e3
                    if b["time_unit"] == "us" else b["real_time"])
    return figures
def gui(side):
    figures = {}
    for run in load("gui", side):
        for row in run["latency"]:
            figures.setdefault(f"slider step p95 n={row['n']} ms", []).append(row["p95_ms"])
    return figures
def training(side):
    figures = {}
    for run in load("training", side):
        figures.setdefault("training steps/s, view updating", []).append(
            run["steps_per_second_view"])
        figures.setdefault("training steps/s, no view", []).append(run["steps_per_second_no_view"])
    return figures
print(f"{'figure':44} {'old':>10} {'new':>10} {'new/old':>8}")
for collect in (kernels, gui, training):
    o, n = collect("old"), collect("new")
    for name in o:
        mo, mn = statistics.median(o[name]), statistics.median(n.get(name, [float("nan")]))
        print(f"{name:44} {mo:10.3f} {mn:10.3f} {mn / mo:8.3f}")
EOF
