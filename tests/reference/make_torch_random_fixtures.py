#!/usr/bin/python3
"""PyTorch CPU random streams for tests/tst_torchrandom.cpp (bitwise comparison).

Called by make_fixtures.py as main(fixture_dir); writes fixtures/torchrandom/:
  index.txt  one fixture per line: `name=... seed=... capability=... file=... calls=...`
  *.bin      the values the calls returned, in order, one little-endian 8-byte word each:
             float64 for float calls (float32 values widened exactly), int64 for integer calls

Every line is one fresh generator: torch.manual_seed(seed) (or, with generator=separate,
torch.Generator().manual_seed(seed)), then the comma-separated calls in order:
  state                    get_rng_state(): the 624 mt19937 words, `left`, `next` (626 ints)
  int32:N / int64:N        torch.empty(N, dtype).random_()  (random() % 2^31, random64() % 2^63)
  rand:f64:N / rand:f32:N  torch.rand(N, dtype)
  randn:f64:AxBxC          torch.randn(A, B, C, dtype) (any number of axes)
  uniform:f64:N:LO:HI      torch.empty(N, dtype).uniform_(LO, HI), LO and HI as float.hex
  randperm:N               torch.randperm(N, generator=...) (int64)
  mha:f64:D:H[:nobias]     nn.MultiheadAttention(D, H, bias=...) in that dtype: in_proj_weight,
                           in_proj_bias, out_proj.weight, out_proj.bias, flattened in C order
`capability` is the CPU kernel set torch ran with (torch_capability as torch names it;
`capability` as tests/tst_torchrandom.cpp emulates it: avx2 for AVX2 and AVX512, default).
The capability-dependent fixtures (float32 randn of 16+ elements, uniform_, the MHA init) are
written twice: natively, and in a child process with ATEN_CPU_CAPABILITY=default. The output is
deterministic on a given CPU capability: running this again rewrites the same bytes.
"""
import os
import subprocess
import sys

import numpy as np

SEEDS = [0, 1, 3, 42, 2**32 - 1, 2**32 + 5, 123456789012345]
RANDN_SEEDS = [0, 3, 42]
RANDN_SIZES = list(range(1, 41)) + [47, 64, 100, 129]
SHAPES = ["1x8x16", "1x3x16", "2x3", "4x4", "1x7x16", "3x5x7"]
MIXED = ["randn:f64:3", "randn:f32:20", "randn:f32:1", "randn:f64:5", "randn:f64:2",
         "randn:f64:33", "randn:f32:7", "randn:f32:17", "randn:f64:1", "rand:f64:2"]
MHA = ["16:1", "16:4", "16:16", "10:2", "12:3", "12:3:nobias"]
UNIFORM_RANGES = [(-0.25, 0.25), (-0.35355, 0.35355), (-3.0, 7.5),
                  (-0.3061862178478973, 0.3061862178478973)]
RANDPERM_SEEDS = [0, 1, 3, 17]
RANDPERM_SIZES = [0, 1, 2, 3, 5, 7, 10, 16, 24, 100, 1000]


def torch_capability(torch):
    backends_cpu = getattr(torch.backends, "cpu", None)
    if backends_cpu is not None and hasattr(backends_cpu, "get_cpu_capability"):
        return backends_cpu.get_cpu_capability()
    for line in torch.__config__.show().splitlines():  # torch 1.13 has no get_cpu_capability
        if "CPU capability usage:" in line:
            return line.split(":", 1)[1].strip()
    raise RuntimeError("cannot tell torch's CPU capability")


def emulated(capability):
    """torch 2 names the kernel sets DEFAULT/AVX2/AVX512, torch 1.13's config NO AVX/AVX2/AVX512."""
    return "default" if capability.upper() in ("DEFAULT", "NO AVX") else "avx2"


def run_calls(torch, calls, generator):
    """Runs the calls on `generator` (None: the default generator) and returns 8-byte words."""
    dtypes = {"f64": torch.float64, "f32": torch.float32}
    words = []

    def floats(t):
        words.append(t.detach().reshape(-1).to(torch.float64).numpy().view("<i8").copy())

    for call in calls:
        parts = call.split(":")
        kind = parts[0]
        if kind == "state":
            state = (generator.get_state() if generator is not None
                     else torch.get_rng_state()).numpy().tobytes()
            head = np.frombuffer(state[:8 * 627], dtype="<u8")
            left = np.frombuffer(state[8:12], dtype="<i4")[0]
            words.append(np.concatenate([head[3:627].astype("<i8"),
                                         np.array([left, head[2]], dtype="<i8")]))
        elif kind in ("int32", "int64"):
            t = torch.empty(int(parts[1]), dtype=getattr(torch, kind))
            t.random_(generator=generator)
            words.append(t.to(torch.int64).numpy().astype("<i8"))
        elif kind == "rand":
            floats(torch.rand(int(parts[2]), dtype=dtypes[parts[1]], generator=generator))
        elif kind == "randn":
            shape = [int(v) for v in parts[2].split("x")]
            floats(torch.randn(*shape, dtype=dtypes[parts[1]], generator=generator))
        elif kind == "uniform":
            t = torch.empty(int(parts[2]), dtype=dtypes[parts[1]])
            t.uniform_(float.fromhex(parts[3]), float.fromhex(parts[4]), generator=generator)
            floats(t)
        elif kind == "randperm":
            words.append(torch.randperm(int(parts[1]), generator=generator).numpy().astype("<i8"))
        elif kind == "mha":
            assert generator is None, "nn.MultiheadAttention draws from the default generator"
            bias = not (len(parts) > 4 and parts[4] == "nobias")
            m = torch.nn.MultiheadAttention(int(parts[2]), int(parts[3]), bias=bias,
                                            batch_first=True, dtype=dtypes[parts[1]])
            floats(m.in_proj_weight)
            if bias:
                floats(m.in_proj_bias)
            floats(m.out_proj.weight)
            if bias:
                floats(m.out_proj.bias)
        else:
            raise ValueError(call)
    return np.concatenate(words) if words else np.zeros(0, dtype="<i8")


def dependent_fixtures():
    """Fixtures whose values depend on torch's CPU capability: (name, seed, separate, calls)."""
    out = []
    for seed in RANDN_SEEDS:
        out.append((f"randn_f32_{seed}", seed, False, [f"randn:f32:{n}" for n in RANDN_SIZES]))
    out.append(("shapes_f32", 0, False, [f"randn:f32:{s}" for s in SHAPES]))
    # Enough float32 normals that every fused multiply-add of the AVX2 kernel shows.
    out.append(("randn_f32_large", 5, False, ["randn:f32:12000"]))
    out.append(("mixed_0", 0, False, MIXED))
    out.append(("mixed_42", 42, False, MIXED))
    for dt in ("f64", "f32"):
        for spec in MHA:
            tag = spec.replace(":", "_")
            out.append((f"mha_{dt}_{tag}", 0, False, [f"mha:{dt}:{spec}", f"rand:{dt}:4"]))
        calls = [f"uniform:{dt}:1000:{lo.hex()}:{hi.hex()}" for lo, hi in UNIFORM_RANGES]
        out.append((f"uniform_{dt}", 7, False, calls))
    return out


def independent_fixtures():
    out = []
    for seed in SEEDS:
        calls = ["state", "int32:700", "int64:700", "rand:f64:300", "rand:f32:300", "state",
                 "int32:1300", "state"]
        out.append((f"stream_{seed}", seed, False, calls))
    for seed in RANDN_SEEDS:
        out.append((f"randn_f64_{seed}", seed, False, [f"randn:f64:{n}" for n in RANDN_SIZES]))
    out.append(("shapes_f64", 0, False, [f"randn:f64:{s}" for s in SHAPES]))
    for seed in RANDPERM_SEEDS:
        for n in RANDPERM_SIZES:
            out.append((f"randperm_{seed}_{n}", seed, True, [f"randperm:{n}"]))
    out.append(("randperm_default_0", 0, False, ["randperm:7", "randperm:10"]))
    return out


def write_fixtures(out_dir, fixtures, suffix):
    """Runs each fixture in this process's torch and returns its index lines."""
    import torch

    torch_cap = torch_capability(torch)
    lines = []
    for name, seed, separate, calls in fixtures:
        if separate:
            generator = torch.Generator()
            generator.manual_seed(seed)
        else:
            torch.manual_seed(seed)
            generator = None
        words = run_calls(torch, calls, generator)
        file = f"{name}{suffix}.bin"
        with open(os.path.join(out_dir, file), "wb") as f:
            f.write(np.ascontiguousarray(words, dtype="<i8").tobytes())
        lines.append(f"name={name}{suffix} seed={seed} "
                     f"generator={'separate' if separate else 'default'} "
                     f"capability={emulated(torch_cap)} torch_capability={torch_cap} "
                     f"file={file} count={len(words)} calls={','.join(calls)}")
    return lines


def main(fixture_dir):
    import torch

    out = os.path.join(fixture_dir, "torchrandom")
    os.makedirs(out, exist_ok=True)
    native = torch_capability(torch)
    index = [
        f"# PyTorch {torch.__version__} CPU generator fixtures (native CPU capability {native}), "
        "written by make_torch_random_fixtures.py",
        "# name=... seed=... generator=default|separate capability=avx2|default "
        "torch_capability=... file=... count=<8-byte words> calls=<call,...>",
    ]
    index += write_fixtures(out, independent_fixtures(), "")
    index += write_fixtures(out, dependent_fixtures(), "_" + emulated(native))
    if emulated(native) != "default":
        env = dict(os.environ, ATEN_CPU_CAPABILITY="default")
        child = subprocess.run([sys.executable, os.path.abspath(__file__), "--default-part", out],
                               env=env, check=True, capture_output=True, text=True)
        index += child.stdout.splitlines()
    with open(os.path.join(out, "index.txt"), "w", newline="\n") as f:
        f.write("\n".join(index) + "\n")


if __name__ == "__main__":
    if len(sys.argv) == 3 and sys.argv[1] == "--default-part":
        for line in write_fixtures(sys.argv[2], dependent_fixtures(), "_default"):
            print(line)
    else:
        main(os.path.join(os.path.dirname(os.path.abspath(__file__)), "fixtures"))
