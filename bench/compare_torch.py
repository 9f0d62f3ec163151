#!/usr/bin/python3
"""Time one training step of Attention Lab's core/training beside the same step in PyTorch.

The step: MSE loss of torch.nn.MultiheadAttention(batch_first=True) self-attention on B × n ×
d_model float32 inputs against random targets, loss.backward(), optimizer.step() (SGD by
default), i.e. forward + backward + update. Attention Lab's side is bench/attn_bench_training
(the Trainer of core/training: the same layer, loss and update). For every configuration and
thread count it alternates --rounds rounds of PyTorch and attn_bench_training, each the median
of --repeat blocks of --steps steps after a warm-up block, and prints the median per step of
both, the ratio PyTorch / Attention Lab (> 1: Attention Lab is faster) and steps per second.

    /usr/bin/python3 bench/compare_torch.py --bench build/release/bench/attn_bench_training

Needs Debian's python3-torch (1.13). Threads: torch.set_num_threads(t) and OMP_NUM_THREADS=t.
"""
import argparse
import json
import os
import statistics
import subprocess
import time

import torch


def time_torch(B, n, E, h, optimizer, steps, repeat, threads):
    torch.set_num_threads(threads)
    torch.manual_seed(0)
    mha = torch.nn.MultiheadAttention(E, h, batch_first=True)
    x = torch.randn(B, n, E)
    t = torch.randn(B, n, E)
    opt = (torch.optim.SGD(mha.parameters(), lr=1e-3) if optimizer == "sgd"
           else torch.optim.Adam(mha.parameters(), lr=1e-3))

    def step():
        opt.zero_grad()
        loss = torch.nn.functional.mse_loss(mha(x, x, x, need_weights=False)[0], t)
        loss.backward()
        opt.step()

    per_step = []
    for r in range(repeat + 1):
        start = time.perf_counter()
        for _ in range(steps):
            step()
        if r > 0:
            per_step.append((time.perf_counter() - start) / steps)
    return statistics.median(per_step)


def time_ours(exe, B, n, E, h, optimizer, steps, repeat, threads):
    env = dict(os.environ, OMP_NUM_THREADS=str(threads))
    out = subprocess.run([exe, "--batch", str(B), "--n", str(n), "--d-model", str(E), "--heads",
                          str(h), "--dtype", "float32", "--optimizer", optimizer, "--steps",
                          str(steps), "--repeat", str(repeat)],
                         check=True, capture_output=True, text=True, env=env).stdout
    return json.loads(out)["seconds_per_step_median"]


def main():
    parser = argparse.ArgumentParser(description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--bench", default="build/release/bench/attn_bench_training")
    parser.add_argument("--configs", default="32x64x128x4,32x32x64x4",
                        help="comma-separated BxNxDxH")
    parser.add_argument("--threads", default="1,2")
    parser.add_argument("--optimizer", default="sgd", choices=["sgd", "adam"])
    parser.add_argument("--steps", type=int, default=10)
    parser.add_argument("--repeat", type=int, default=5)
    parser.add_argument("--rounds", type=int, default=3)
    args = parser.parse_args()
    print(f"torch {torch.__version__}, float32, {args.optimizer}; median of {args.repeat} blocks "
          f"of {args.steps} steps, {args.rounds} alternating rounds; load average "
          f"{os.getloadavg()[0]:.1f} on {os.cpu_count()} CPUs")
    print(f"{'B':>3} {'n':>4} {'d_model':>7} {'h':>2} {'threads':>7} {'torch_ms':>9} "
          f"{'attnlab_ms':>10} {'ratio':>6} {'torch_steps/s':>13} {'attnlab_steps/s':>15}")
    for config in args.configs.split(","):
        B, n, E, h = (int(v) for v in config.split("x"))
        for threads in (int(t) for t in args.threads.split(",")):
            theirs, ours = [], []
            for _ in range(args.rounds):
                theirs.append(time_torch(B, n, E, h, args.optimizer, args.steps, args.repeat,
                                         threads))
                ours.append(time_ours(args.bench, B, n, E, h, args.optimizer, args.steps,
                                      args.repeat, threads))
            t_torch, t_ours = statistics.median(theirs), statistics.median(ours)
            print(f"{B:>3} {n:>4} {E:>7} {h:>2} {threads:>7} {t_torch * 1e3:>9.2f} "
                  f"{t_ours * 1e3:>10.2f} {t_torch / t_ours:>5.2f}x {1 / t_torch:>13.1f} "
                  f"{1 / t_ours:>15.1f}")


if __name__ == "__main__":
    main()
