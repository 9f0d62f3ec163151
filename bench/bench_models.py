#!/usr/bin/python3
"""Time Attention Lab's float32 forward pass of a GPT-2-small-shaped checkpoint beside the same
forward in PyTorch, and measure the peak memory of ours for an F32 and a BF16 file.

The checkpoint (12 layers, d_model 768, 12 heads, vocabulary 50 257, 1024 positions; random
weights of GPT-2's initialisation scale from a fixed seed) is written into a temporary folder,
as F32 and as a BF16 copy, by the safetensors writer of tests/reference/make_model_fixtures.py.
For every n (random token ids) it alternates --rounds rounds of

  ours     bench/attn_bench_models: the model loaded once, one warm-up forward, the median of
           --repeat forwards keeping all layers × heads attention weights (n × n each);
  PyTorch  gpt2_forward of make_model_fixtures.py on the same float32 weights: eager attention,
           softmax(QKᵀ/√d + causal mask) materialised and returned for every head (as Hugging
           Face's output_attentions=True), the median of --repeat forwards after a warm-up;

and prints the medians over the rounds and the median of the per-round ratios ours / PyTorch
(> 1: ours is slower). Both use --threads threads: torch.set_num_threads and OMP_NUM_THREADS
(OpenMP and OpenBLAS's OpenMP build in attncore). Before timing, the logits of both forwards are
compared (max |difference| ≤ 1e-3), so that the two do the same work. Then the peak resident
set of attn_bench_models (VmHWM) on the F32 and the BF16 file, against the file size.

    /usr/bin/python3 bench/bench_models.py --bench build/release/bench/attn_bench_models

--long N instead writes a 12-layer Llama-shaped BF16 checkpoint (d_model 768, 12 heads of 64,
vocabulary 32 000, max_position_embeddings N) and runs attn_bench_models on N random ids as the
window does for a long text: no weights kept (every head streams), every layer's queries and
keys kept, only the last position's logits, then two heads drawn whole as the Long tab's first
map (1024 × 1024 pixels, max pooling). It prints the peak resident set beyond the file, against
1 GiB.

    /usr/bin/python3 bench/bench_models.py --long 8192

Needs Debian's python3-torch (1.13) and python3-numpy. Writes ~750 MB into the temporary folder.
"""
import argparse
import ctypes
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time

import numpy as np
import torch

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "tests", "reference"))
import make_model_fixtures as mmf  # noqa: E402

CONFIG = mmf.variant(mmf.GPT2, vocab_size=50257, n_embd=768, n_head=12, n_layer=12,
                     n_positions=1024)
TOLERANCE = 1e-3


def gpt2_small_params(cfg, seed):
    """make_model_fixtures' GPT-2 parameters rescaled to GPT-2's initialisation: embeddings and
    weights N(0, 0.02²) (positions 0.01), biases N(0, 0.02²), norm weights near 1."""
    params = mmf.gpt2_params(cfg, np.random.default_rng(seed))
    out = []
    for name, a in params:
        if name.endswith(("ln_1.weight", "ln_2.weight", "ln_f.weight")):
            pass
        elif name.endswith("wpe.weight"):
            a *= np.float32(0.01)
        elif name.endswith("wte.weight"):
            a *= np.float32(0.02)
        else:  # drawn N(0, 0.3²)
            a *= np.float32(0.02 / 0.3)
        out.append((name, a))
    return out


def write_checkpoint(folder, cfg, params, dtype):
    os.makedirs(folder)
    with open(os.path.join(folder, "config.json"), "w") as f:
        json.dump(cfg, f, indent=2, sort_keys=True)
    return mmf.write_safetensors(os.path.join(folder, "model.safetensors"), params, dtype)


def torch_blas_core():
    """The kernels of the OpenBLAS that Debian's torch calls through libblas.so.3, or "?"."""
    try:
        name = ctypes.CDLL("libblas.so.3").openblas_get_corename
        name.restype = ctypes.c_char_p
        return name().decode()
    except (OSError, AttributeError):
        return "?"


def run_ours(exe, folder, ids, repeat, threads, keep="all", logits_out=None):
    env = dict(os.environ, OMP_NUM_THREADS=str(threads))
    cmd = [exe, "--model", folder, "--ids", ",".join(str(int(i)) for i in ids), "--repeat",
           str(repeat), "--keep-weights", keep]
    if logits_out:
        cmd += ["--logits-out", logits_out]
    out = subprocess.run(cmd, check=True, capture_output=True, text=True, env=env).stdout
    return json.loads(out)


def time_torch(W, cfg, ids, repeat):
    tid = torch.tensor(ids)
    mmf.gpt2_forward(W, cfg, tid)  # warm-up
    seconds = []
    for _ in range(repeat):
        start = time.perf_counter()
        rec, _, _ = mmf.gpt2_forward(W, cfg, tid)
        seconds.append(time.perf_counter() - start)
        del rec
    return statistics.median(seconds)


def activation_bytes(cfg, n):
    """What the forward returns, float32: every head's weights, queries and keys, hidden, logits."""
    L, h, D, V = cfg["n_layer"], cfg["n_head"], cfg["n_embd"], cfg["vocab_size"]
    return 4 * (L * h * n * n + 2 * L * n * D + n * D + n * V)


LONG_CONFIG = mmf.variant(mmf.LLAMA, vocab_size=32000, hidden_size=768, intermediate_size=2048,
                          num_attention_heads=12, num_key_value_heads=12, num_hidden_layers=12)


def long_checkpoint(folder, n, seed):
    """Writes the long-text run's 12-layer Llama-shaped BF16 checkpoint to `folder`."""
    cfg = mmf.variant(LONG_CONFIG, max_position_embeddings=n)
    params = []
    for name, a in mmf.llama_params(cfg, np.random.default_rng(seed)):
        if not name.endswith("norm.weight"):
            a *= np.float32(0.02 / 0.3)  # drawn N(0, 0.3²); GPT-2's initialisation scale
        params.append((name, a))
    write_checkpoint(folder, cfg, params, "BF16")
    return cfg


def write_long_folder(folder, n, seed):
    """The long-text checkpoint and n random ids (ids.txt, comma-separated) for the window:
    attnlab --model FOLDER --text "$(cat FOLDER/ids.txt)"."""
    long_checkpoint(folder, n, seed)
    ids = np.random.default_rng(seed + 1).integers(0, LONG_CONFIG["vocab_size"], n)
    with open(os.path.join(folder, "ids.txt"), "w") as f:
        f.write(",".join(str(int(i)) for i in ids))
    print(f"wrote {folder} ({n} ids in ids.txt)")


def long_run(exe, n, args):
    """The window's long-text path on a 12-layer model: peak memory beyond the weights."""
    with tempfile.TemporaryDirectory(prefix="attn_bench_models_", dir=args.tmp) as tmp:
        folder = os.path.join(tmp, "bf16")
        cfg = long_checkpoint(folder, n, args.seed)
        size = os.path.getsize(os.path.join(folder, "model.safetensors"))
        env = dict(os.environ, OMP_NUM_THREADS=str(args.threads))
        cmd = [exe, "--model", folder, "--n", str(n), "--seed", str(args.seed), "--repeat", "1",
               "--keep-weights", "none", "--last-logits", "--long-view"]
        r = json.loads(subprocess.run(cmd, check=True, capture_output=True, text=True,
                                      env=env).stdout)
    beyond = r["peak_rss_bytes"] - size
    print(f"long text: {cfg['num_hidden_layers']} layers x {cfg['num_attention_heads']} heads, "
          f"d_model {cfg['hidden_size']}, vocab {cfg['vocab_size']}, BF16 file "
          f"{size / 2**20:.0f} MiB, n = {n}, {args.threads} threads; load average "
          f"{os.getloadavg()[0]:.1f}")
    print(f"forward (no weights kept, queries and keys kept: "
          f"{r['kept_qk_bytes'] / 2**20:.0f} MiB): {r['seconds_median']:.1f} s")
    print(f"one head's whole map, 1024 x 1024 max-pooled: {r['view_seconds']:.2f} s")
    print(f"peak RSS {r['peak_rss_bytes'] / 2**20:.0f} MiB = file + {beyond / 2**20:.0f} MiB "
          f"(limit: file + 1024 MiB) {'ok' if beyond <= 2**30 else 'OVER'}")


def main():
    parser = argparse.ArgumentParser(description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--bench", default="build/release/bench/attn_bench_models")
    parser.add_argument("--ns", default="128,1024")
    parser.add_argument("--threads", type=int, default=os.cpu_count())
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--tmp", default=None,
                        help="folder for the temporary checkpoints (default: TMPDIR or /tmp)")
    parser.add_argument("--long", type=int, default=0,
                        help="n of the long-text run (a 12-layer Llama-shaped BF16 model)")
    parser.add_argument("--long-folder", default=None,
                        help="with --long N: only write the checkpoint and N ids (ids.txt) to "
                             "this folder, for the window")
    parser.add_argument("--memory-n", type=int, default=128,
                        help="n of the peak-memory runs (F32 and BF16)")
    args = parser.parse_args()
    exe = os.path.abspath(args.bench)
    if args.long and args.long_folder:
        return write_long_folder(args.long_folder, args.long, args.seed)
    if args.long:
        return long_run(exe, args.long, args)
    cfg = CONFIG
    tiny = run_ours(exe, os.path.join(HERE, "..", "tests", "reference", "fixtures", "models",
                                      "gpt2"), [0, 1], 1, args.threads)
    if tiny["blas_core"] != torch_blas_core() and "OPENBLAS_CORETYPE" not in os.environ:
        # attn_bench_models chose better OpenBLAS kernels (core/base/blas.h): give PyTorch the
        # same ones (OpenBLAS reads the variable when it is loaded).
        os.environ["OPENBLAS_CORETYPE"] = tiny["blas_core"]
        os.execv(sys.executable, [sys.executable] + sys.argv)
    torch.set_grad_enabled(False)
    torch.set_num_threads(args.threads)
    rng = np.random.default_rng(args.seed + 1)

    with tempfile.TemporaryDirectory(prefix="attn_bench_models_", dir=args.tmp) as tmp:
        params = gpt2_small_params(cfg, args.seed)
        f32_dir, bf16_dir = os.path.join(tmp, "f32"), os.path.join(tmp, "bf16")
        write_checkpoint(f32_dir, cfg, params, "F32")
        write_checkpoint(bf16_dir, cfg, params, "BF16")
        W = {name: torch.from_numpy(a) for name, a in params}  # the F32 file's values
        del params
        sizes = {d: os.path.getsize(os.path.join(folder, "model.safetensors"))
                 for d, folder in (("F32", f32_dir), ("BF16", bf16_dir))}

        print(f"torch {torch.__version__}; GPT-2-small shape: {cfg['n_layer']} layers, d_model "
              f"{cfg['n_embd']}, {cfg['n_head']} heads, vocab {cfg['vocab_size']}; float32; "
              f"{args.threads} threads (torch.set_num_threads, OMP_NUM_THREADS); median of "
              f"{args.repeat} forwards, {args.rounds} alternating rounds; load average "
              f"{os.getloadavg()[0]:.1f} on {os.cpu_count()} CPUs", flush=True)
        print(f"OpenBLAS kernels: ours {tiny['blas_core']}, PyTorch {torch_blas_core()}; threads "
              f"of attn_bench_models (omp_get_max_threads): {tiny['threads']}, of PyTorch: "
              f"{torch.get_num_threads()}")
        print(f"{'n':>5} {'ours_ms':>9} {'torch_ms':>9} {'ratio':>6} {'(range)':>13} "
              f"{'max|dlogits|':>12}", flush=True)
        for n in (int(v) for v in args.ns.split(",")):
            ids = rng.integers(0, cfg["vocab_size"], size=n).astype(np.int64)
            # Same numbers first: the logits of both forwards.
            path = os.path.join(tmp, f"logits_{n}.npy")
            run_ours(exe, f32_dir, ids, 1, args.threads, logits_out=path)
            _, _, theirs = mmf.gpt2_forward(W, cfg, torch.tensor(ids))
            diff = float(np.max(np.abs(np.load(path) - theirs.numpy())))
            os.remove(path)
            if not diff <= TOLERANCE:
                sys.exit(f"n = {n}: logits differ by {diff:.3g} > {TOLERANCE}")
            ours, torchs, ratios = [], [], []
            for _ in range(args.rounds):
                o = run_ours(exe, f32_dir, ids, args.repeat, args.threads)["seconds_median"]
                t = time_torch(W, cfg, ids, args.repeat)
                ours.append(o)
                torchs.append(t)
                ratios.append(o / t)
            o, t = statistics.median(ours), statistics.median(torchs)
            r, lo, hi = statistics.median(ratios), min(ratios), max(ratios)
            print(f"{n:>5} {o * 1e3:>9.1f} {t * 1e3:>9.1f} {r:>6.2f} {f'{lo:.2f}–{hi:.2f}':>13} "
                  f"{diff:>12.2e}", flush=True)
        print("ratio = ours / PyTorch, median of the per-round ratios (> 1: ours is slower)")

        n = args.memory_n
        act = activation_bytes(cfg, n)
        print(f"\npeak RSS of attn_bench_models, n = {n}, all weights kept (activations returned: "
              f"{act / 2**20:.0f} MiB)")
        print(f"{'file':>5} {'file_MiB':>9} {'peak_MiB':>9} {'peak/file':>9} "
              f"{'limit_MiB':>9} {'ok':>3}")
        mem_ids = rng.integers(0, cfg["vocab_size"], size=n).astype(np.int64)
        for dtype, folder in (("F32", f32_dir), ("BF16", bf16_dir)):
            peak = run_ours(exe, folder, mem_ids, 1, args.threads)["peak_rss_bytes"]
            limit = 1.25 * sizes[dtype] + act
            print(f"{dtype:>5} {sizes[dtype] / 2**20:>9.0f} {peak / 2**20:>9.0f} "
                  f"{peak / sizes[dtype]:>9.2f} {limit / 2**20:>9.0f} "
                  f"{'yes' if peak <= limit else 'no':>3}")
        print("limit = 1.25 × file + activations returned")


if __name__ == "__main__":
    main()
