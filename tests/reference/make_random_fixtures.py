#!/usr/bin/python3
"""NumPy Generator streams for tests/core/tst_random.cpp (bitwise comparison).

Called by make_fixtures.py as main(fixture_dir); writes fixtures/random/:
  index.txt       one fixture per line, `key=value` fields (kind, seed, file, count, ...)
  *.bin           raw little-endian arrays: float64 / float32 bit patterns, int64, uint64
  sequence_*.txt  a mixed call sequence, one `<call> <value>` per line (floats as float.hex)

Everything is drawn from numpy.random.default_rng(seed) (SeedSequence -> PCG64 -> Generator)
of Debian's python3-numpy. The output is deterministic: running this again rewrites the same
bytes.

    /usr/bin/python3 tests/reference/make_random_fixtures.py --ziggurat-tables
prints the ziggurat tables that core/random/random.cpp embeds (see ziggurat_tables()).
"""
import math
import os
import sys

import numpy as np

SEEDS = [0, 1, 7, 42, 20261012, 2**63 + 5, 2**100 + 3]
STREAM_COUNT = 100_000
INTEGER_BOUNDS = [
    (0, 10),
    (-5, 5),
    (0, 1),  # a single value: NumPy draws nothing
    (0, 2**32),  # range 2**32 - 1: the plain 32-bit draw
    (0, 2**32 + 7),  # just above 32 bits: 64-bit Lemire
    (0, 2**62),
    (-(2**63), 2**63 - 1),  # widest int64 range without the full-64-bit special case
    (-(2**63), -(2**63) + 3),
]
INTEGER_SEEDS = [0, 42, 2**100 + 3]
INTEGER_COUNT = 2000
PERMUTATION_SIZES = [1, 2, 10, 1000]
PERMUTATION_SEEDS = [0, 42, 2**63 + 5]
FLOAT32_SEEDS = [0, 42]
FLOAT32_COUNT = 20_000
RAW_COUNT = 1000


def _write(path, array, dtype):
    data = np.ascontiguousarray(array, dtype=dtype).tobytes()
    with open(path, "wb") as f:
        f.write(data)


def _seed_tag(seed):
    return str(seed)


def _sequence(seed):
    """A mixed call sequence: checks the shared state between methods, in particular the
    buffered 32-bit half that PCG64.next_uint32 keeps between integers() calls."""
    rng = np.random.default_rng(seed)
    lines = []
    for step in range(400):
        k = step % 9
        if k == 0:
            lines.append(f"integers:0:10 {int(rng.integers(0, 10))}")
        elif k == 1:
            lines.append(f"random {float(rng.random()).hex()}")
        elif k == 2:
            lines.append(f"integers:-5:5 {int(rng.integers(-5, 5))}")
        elif k == 3:
            lines.append(f"standard_normal {float(rng.standard_normal()).hex()}")
        elif k == 4:
            lines.append(f"integers:0:4294967303 {int(rng.integers(0, 2**32 + 7))}")
        elif k == 5:
            perm = rng.permutation(7)
            lines.append("permutation:7 " + ",".join(str(int(v)) for v in perm))
        elif k == 6:
            lines.append(f"normal:1.5:2.25 {float(rng.normal(1.5, 2.25)).hex()}")
        elif k == 7:
            lines.append(f"integers:3:4 {int(rng.integers(3, 4))}")
        else:
            value = rng.standard_normal(dtype=np.float32)
            lines.append(f"standard_normal_f32 {float(value).hex()}")
    return "\n".join(lines) + "\n"


def main(fixture_dir):
    out = os.path.join(fixture_dir, "random")
    os.makedirs(out, exist_ok=True)
    index = [
        "# NumPy " + np.__version__ + " Generator fixtures, written by make_random_fixtures.py",
        "# kind=... seed=<decimal> file=<name> count=<n> [low= high= | n= | rows= cols= loc= scale=]",
    ]

    for seed in SEEDS:
        tag = _seed_tag(seed)
        ss = np.random.SeedSequence(seed)
        state = ss.generate_state(8, np.uint32)
        index.append(f"kind=state seed={seed} words=" + ",".join(str(int(w)) for w in state))

        raw = np.random.PCG64(seed).random_raw(RAW_COUNT)
        name = f"raw_{tag}.bin"
        _write(os.path.join(out, name), raw, "<u8")
        index.append(f"kind=raw seed={seed} file={name} count={RAW_COUNT}")

        normals = np.random.default_rng(seed).standard_normal(STREAM_COUNT)
        name = f"normal_{tag}.bin"
        _write(os.path.join(out, name), normals, "<f8")
        index.append(f"kind=standard_normal seed={seed} file={name} count={STREAM_COUNT}")

        uniforms = np.random.default_rng(seed).random(STREAM_COUNT)
        name = f"uniform_{tag}.bin"
        _write(os.path.join(out, name), uniforms, "<f8")
        index.append(f"kind=random seed={seed} file={name} count={STREAM_COUNT}")

    # A matrix through normal(loc, scale, size): C order, loc + scale * z.
    for seed, rows, cols, loc, scale in [(7, 37, 23, 1.5, 2.25), (42, 64, 16, -0.75, 0.125)]:
        m = np.random.default_rng(seed).normal(loc, scale, size=(rows, cols))
        name = f"normal_matrix_{seed}_{rows}x{cols}.bin"
        _write(os.path.join(out, name), m, "<f8")
        index.append(
            f"kind=normal seed={seed} file={name} count={rows * cols} rows={rows} cols={cols} "
            f"loc={float(loc).hex()} scale={float(scale).hex()}"
        )

    for seed in FLOAT32_SEEDS:
        values = np.random.default_rng(seed).standard_normal(FLOAT32_COUNT, dtype=np.float32)
        name = f"normal_f32_{seed}.bin"
        _write(os.path.join(out, name), values, "<f4")
        index.append(f"kind=standard_normal_f32 seed={seed} file={name} count={FLOAT32_COUNT}")

    for seed in INTEGER_SEEDS:
        for low, high in INTEGER_BOUNDS:
            values = np.random.default_rng(seed).integers(low, high, size=INTEGER_COUNT,
                                                          dtype=np.int64)
            name = f"integers_{seed}_{low}_{high}.bin".replace("-", "m")
            _write(os.path.join(out, name), values, "<i8")
            index.append(
                f"kind=integers seed={seed} file={name} count={INTEGER_COUNT} low={low} high={high}"
            )

    for seed in PERMUTATION_SEEDS:
        for n in PERMUTATION_SIZES:
            rng = np.random.default_rng(seed)
            # Two permutations in a row: the second starts from the state the first left.
            values = np.concatenate([rng.permutation(n), rng.permutation(n)])
            name = f"permutation_{seed}_{n}.bin"
            _write(os.path.join(out, name), values, "<i8")
            index.append(f"kind=permutation seed={seed} file={name} count={2 * n} n={n}")

    for seed in [42, 2**100 + 3]:
        name = f"sequence_{seed}.txt"
        with open(os.path.join(out, name), "w", newline="\n") as f:
            f.write(_sequence(seed))
        index.append(f"kind=sequence seed={seed} file={name}")

    with open(os.path.join(out, "index.txt"), "w", newline="\n") as f:
        f.write("\n".join(index) + "\n")


# ---- ziggurat tables -------------------------------------------------------------------------
#
# NumPy's 256-layer normal ziggurat (numpy/random/src/distributions/ziggurat_constants.h) was
# built in double precision from r = 3.6541528853610087963519472518 and the layer area
# v = 0.0049286732339746519 by the Marsaglia-Tsang recurrence x_{i+1} = f^{-1}(v / x_i + f(x_i)),
# f(x) = exp(-x^2 / 2), with layer edges x_0 = 0 < x_1 < ... < x_255 = r. The recurrence is
# ill-conditioned, so recomputing it with another libm differs in the last digits of the small
# x_i. We therefore recover the edges w_i = x_i / 2^52 from NumPy's own output stream (every
# fast-path draw returns exactly rabs * w_idx, so each w_idx is pinned down by a few draws) and
# derive the other tables from them with correctly rounded operations:
#   ki[i] = round(2^52 x_{i-1} / x_i) (i >= 1), ki[0] = round(2^52 r f(r) / v),
#   wi[0] = v / f(r) / 2^52, fi[i] = f(x_i); float tables with 2^23 instead of 2^52.

ZIG_R = 3.6541528853610087963519472518
ZIG_V = 0.0049286732339746519


def _pdf(x):
    return math.exp(-0.5 * x * x)


def _approximate_edges():
    edges = [ZIG_R]
    for _ in range(254):
        last = edges[-1]
        edges.append(math.sqrt(-2.0 * math.log(_pdf(last) + ZIG_V / last)))
    return [0.0] + edges[::-1]


def _derive_tables(x):
    ki = [0] * 256
    for i in range(1, 256):
        ki[i] = round(x[i - 1] / x[i] * 2.0**52)
    ki[0] = round(ZIG_R * _pdf(ZIG_R) / ZIG_V * 2.0**52)
    wi = [t / 2.0**52 for t in x]
    wi[0] = ZIG_V / _pdf(ZIG_R) / 2.0**52
    fi = [_pdf(t) for t in x]
    return ki, wi, fi


def _recover_wi():
    """Recovers the 256 doubles wi_double[i] from numpy's standard_normal stream."""
    ki_a, wi_a, fi_a = _derive_tables(_approximate_edges())
    samples = [[] for _ in range(256)]
    for seed in range(4):
        normals = np.random.default_rng(seed).standard_normal(200_000)
        raw = np.random.PCG64(seed).random_raw(450_000)
        pos = 0

        def next_double():
            nonlocal pos
            value = int(raw[pos])
            pos += 1
            return (value >> 11) * 2.0**-53

        for z in normals:
            while True:  # replay random_standard_normal on the raw stream
                r = int(raw[pos])
                pos += 1
                idx = r & 0xFF
                r >>= 8
                rabs = (r >> 1) & 0x000FFFFFFFFFFFFF
                x = rabs * wi_a[idx]
                if rabs < ki_a[idx]:
                    samples[idx].append((rabs, abs(float(z))))
                    break
                if idx == 0:
                    while True:
                        xx = -(1.0 / ZIG_R) * math.log1p(-next_double())
                        yy = -math.log1p(-next_double())
                        if yy + yy > xx * xx:
                            break
                    break
                if (fi_a[idx - 1] - fi_a[idx]) * next_double() + fi_a[idx] < math.exp(-0.5 * x * x):
                    samples[idx].append((rabs, abs(float(z))))
                    break
    wi = []
    for idx, s in enumerate(samples):
        rabs0, z0 = s[0]
        guess = z0 / rabs0
        candidates = []
        w = guess
        for _ in range(8):
            w = math.nextafter(w, 0.0)
        for _ in range(17):
            if all(float(rabs) * w == z for rabs, z in s):
                candidates.append(w)
            w = math.nextafter(w, math.inf)
        if len(candidates) != 1:
            sys.exit(f"ziggurat layer {idx}: {len(candidates)} candidates from {len(s)} draws")
        wi.append(candidates[0])
    return wi


def ziggurat_tables():
    wi = _recover_wi()
    x = [w * 2.0**52 for w in wi]
    x[0] = 0.0
    ki, wi_d, fi = _derive_tables(x)
    assert wi_d[1:] == wi[1:] and wi_d[0] == wi[0], "wi[0] does not follow from v and r"
    ki_f = [0] * 256
    for i in range(1, 256):
        ki_f[i] = round(x[i - 1] / x[i] * 2.0**23)
    ki_f[0] = round(ZIG_R * _pdf(ZIG_R) / ZIG_V * 2.0**23)
    wi_f = [float(np.float32(w * 2.0**29)) for w in wi]
    fi_f = [float(np.float32(f)) for f in fi]

    def hexfloat(v):
        mantissa, exponent = v.hex().split("p")
        return mantissa.rstrip("0").rstrip(".") + "p" + exponent

    def block(values, fmt, per_line):
        lines = []
        for i in range(0, len(values), per_line):
            lines.append("    " + " ".join(fmt(v) + "," for v in values[i : i + per_line]))
        return "\n".join(lines)

    out = ["// Generated by tests/reference/make_random_fixtures.py --ziggurat-tables"]
    out.append("constexpr std::uint64_t kiDouble[256] = {")
    out.append(block(ki, lambda v: f"0x{v:016X}ULL", 3) + "\n};")
    out.append("constexpr double wiDouble[256] = {")
    out.append(block(wi, hexfloat, 3) + "\n};")
    out.append("constexpr double fiDouble[256] = {")
    out.append(block(fi, hexfloat, 3) + "\n};")
    out.append("constexpr std::uint32_t kiFloat[256] = {")
    out.append(block(ki_f, lambda v: f"0x{v:08X}U", 5) + "\n};")
    out.append("constexpr float wiFloat[256] = {")
    out.append(block(wi_f, lambda v: hexfloat(v) + "f", 4) + "\n};")
    out.append("constexpr float fiFloat[256] = {")
    out.append(block(fi_f, lambda v: hexfloat(v) + "f", 4) + "\n};")
    return "\n".join(out) + "\n"


if __name__ == "__main__":
    if sys.argv[1:] == ["--ziggurat-tables"]:
        sys.stdout.write(ziggurat_tables())
    else:
        here = os.path.dirname(os.path.abspath(__file__))
        main(sys.argv[1] if len(sys.argv) > 1 else os.path.join(here, "fixtures"))
