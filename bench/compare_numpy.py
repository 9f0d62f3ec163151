#!/usr/bin/python3
"""Compare Attention Lab's kernels with the E8 NumPy code, in the same run, alternating.

For each n, in --rounds rounds, it times the NumPy version of E8 (float32, d = 64:
scores = Q @ K.T / sqrt(d), max-subtracted softmax, weights @ V; median of --repeat runs) and
then `attnlab bench` for the same n (median of --repeat runs), so both see the same machine
state. It prints the median over rounds of each and the ratio NumPy / attnlab per n and kernel.

    /usr/bin/python3 bench/compare_numpy.py --attnlab build/release/app/attnlab \
        --n 512,1024,2048,4096 --kernel materialized,streaming

Needs Debian's python3-numpy; `bash scripts/setup-bench.sh` installs it with OpenBLAS (NumPy uses
the BLAS Debian's alternatives select: OpenBLAS when installed, else the slow reference BLAS).
The BLAS library NumPy loaded is printed first.
"""
import argparse
import json
import os
import statistics
import subprocess
import time

import numpy as np


def numpy_attention(q, k, v):
    d = q.shape[1]
    scores = q @ k.T / np.float32(np.sqrt(d))
    scores -= scores.max(axis=-1, keepdims=True)
    weights = np.exp(scores)
    weights /= weights.sum(axis=-1, keepdims=True)
    return weights @ v


def time_numpy(n, d, repeat, rng):
    q, k, v = (rng.standard_normal((n, d), dtype=np.float32) for _ in range(3))
    numpy_attention(q, k, v)  # warm-up, like attnlab bench
    times = []
    for _ in range(repeat):
        start = time.perf_counter()
        numpy_attention(q, k, v)
        times.append(time.perf_counter() - start)
    return statistics.median(times)


def blas_library():
    """The BLAS shared library NumPy loaded (Debian picks it through update-alternatives)."""
    np.ones((2, 2)) @ np.ones((2, 2))
    real = set()
    with open("/proc/self/maps") as maps:
        for line in maps:
            path = line.split()[-1]
            if "blas" in path and ".so" in path:
                real.add(os.path.realpath(path))
    return ", ".join(sorted(real)) or "unknown"


def time_attnlab(exe, n, d, kernel, repeat):
    out = subprocess.run(
        [exe, "bench", "--n", str(n), "--d", str(d), "--dtype", "float32", "--kernel", kernel,
         "--repeat", str(repeat), "--format", "json"],
        check=True, capture_output=True, text=True).stdout
    row = json.loads(out)["rows"][0]
    return row["seconds_median"], row.get("instruction_set", "?")


def main():
    parser = argparse.ArgumentParser(description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--attnlab", default="build/release/app/attnlab")
    parser.add_argument("--n", default="512,1024,2048,4096")
    parser.add_argument("--d", type=int, default=64)
    parser.add_argument("--kernel", default="materialized,streaming")
    parser.add_argument("--repeat", type=int, default=5)
    parser.add_argument("--rounds", type=int, default=3)
    args = parser.parse_args()
    ns = [int(x) for x in args.n.split(",")]
    kernels = args.kernel.split(",")
    rng = np.random.default_rng(0)
    print(f"numpy {np.__version__}; d = {args.d}, float32, median of {args.repeat} runs, "
          f"{args.rounds} alternating rounds")
    blas = blas_library()
    print(f"numpy BLAS: {blas}")
    if "openblas" not in blas:
        print("note: NumPy runs on the reference BLAS; `bash scripts/setup-bench.sh` installs "
              "OpenBLAS, the BLAS the README's NumPy figures were measured with")
    print(f"{'n':>6} {'kernel':>13} {'numpy_ms':>10} {'attnlab_ms':>11} {'ratio':>7}  code")
    for n in ns:
        for kernel in kernels:
            np_times, our_times = [], []
            isa = "?"
            for _ in range(args.rounds):
                np_times.append(time_numpy(n, args.d, args.repeat, rng))
                # OpenBLAS's idle threads spin for a while after a call (up to ~0.1 s) and
                # would take the cores from attnlab bench: let them go to sleep first.
                time.sleep(0.5)
                seconds, isa = time_attnlab(args.attnlab, n, args.d, kernel, args.repeat)
                our_times.append(seconds)
            t_np = statistics.median(np_times)
            t_us = statistics.median(our_times)
            print(f"{n:>6} {kernel:>13} {t_np * 1e3:>10.2f} {t_us * 1e3:>11.2f} "
                  f"{t_np / t_us:>6.2f}x  {isa}")


if __name__ == "__main__":
    main()
