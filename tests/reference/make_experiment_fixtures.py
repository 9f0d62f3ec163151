"""Fixtures for tests/core/tst_experiments.cpp, tst_table.cpp and tst_cli_experiment.cpp.

Writes tests/reference/fixtures/experiments/:
  e1_one_head.csv, e2_scaling_sweep.csv, e3_softmax_collapse.csv
      the standard output of the plain NumPy scripts e1_one_head.py, e2_scaling_sweep.py and
      e3_softmax_collapse.py (docs/experiments.md E1–E3 with its default parameters). The app's
      `--format csv` output must equal them byte for byte, i.e. every printed digit.
  float_repr.csv
      bits,repr pairs: IEEE-754 doubles (hex bit pattern) and Python's repr() of them, to check
      that attn::Table::formatNumber prints the same digits as Python.

Called by make_fixtures.py (group "experiments"); needs Debian's python3-numpy.

About np.exp: on CPUs with AVX-512F, NumPy ≥ 1.20 computes float64 exp with its own vectorised
routine, which differs from the C library's exp in the last bit for about a quarter of inputs.
Everywhere else NumPy calls the C library's exp, as the app does (std::exp). The scripts run
here with NumPy's AVX-512 dispatch turned off (NPY_DISABLE_CPU_FEATURES) so the fixtures are the
same on every machine; run by hand on an AVX-512 CPU the scripts can differ in a last digit.
"""
import os
import random
import struct
import subprocess
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
SCRIPTS = ("e1_one_head", "e2_scaling_sweep", "e3_softmax_collapse")


def numpy_environment():
    """os.environ plus NPY_DISABLE_CPU_FEATURES naming NumPy's dispatched AVX-512 targets."""
    try:
        from numpy._core import _multiarray_umath as umath  # NumPy ≥ 2
    except ImportError:
        from numpy.core import _multiarray_umath as umath
    present = [name for name, on in umath.__cpu_features__.items() if on]
    avx512 = [name for name in umath.__cpu_dispatch__
              if name.startswith("AVX512") and name in present]
    env = dict(os.environ)
    if avx512:
        env["NPY_DISABLE_CPU_FEATURES"] = " ".join(avx512)
    return env


def float_repr_values():
    """Doubles covering every layout of repr(): fixed, scientific, integers, subnormals."""
    rng = random.Random(20240601)
    values = [0.0, -0.0, 1.0, -1.0, 0.1, 0.5, 2.0, 10.0, 100.0, 1e15, 1e16, 1e17,
              1234567890123456.0, 12345678901234567.0, 0.001, 0.0001, 0.00001, 1.5e-05, 1e-4, 9.999999999999999e-05,
              1e22, 1e23, 5e-324, 2.2250738585072014e-308, 1.7976931348623157e308, 1 / 3, 2 / 3,
              0.30000000000000004, 123.456, -987.654321e-10, 1.1102230246251565e-16,
              0.9999999999999999, 1.0000000000000002, 4.35, 0.3, 2.0 ** 53, 2.0 ** 53 + 2.0,
              float("inf"), float("-inf"), float("nan")]
    for exponent in range(-30, 31):
        for _ in range(20):
            values.append(rng.gauss(0.0, 1.0) * 10.0 ** exponent)
    for _ in range(2000):  # random bit patterns (any finite double)
        bits = rng.getrandbits(64)
        v = struct.unpack("<d", struct.pack("<Q", bits))[0]
        if v == v and v not in (float("inf"), float("-inf")):
            values.append(v)
    for _ in range(500):  # short decimals, where shortest round-trip matters most
        values.append(float(f"{rng.randint(1, 99999)}e{rng.randint(-20, 20)}"))
    return values


def write_float_repr(path):
    with open(path, "w", newline="\n") as f:
        f.write("bits,repr\n")
        for v in float_repr_values():
            bits = struct.unpack("<Q", struct.pack("<d", v))[0]
            f.write(f"{bits:016x},{v!r}\n")


def main(fixture_dir):
    out_dir = os.path.join(fixture_dir, "experiments")
    os.makedirs(out_dir, exist_ok=True)
    env = numpy_environment()
    for name in SCRIPTS:
        result = subprocess.run([sys.executable, os.path.join(HERE, name + ".py")], env=env,
                                check=True, capture_output=True, text=True)
        with open(os.path.join(out_dir, name + ".csv"), "w", newline="\n") as f:
            f.write(result.stdout)
    write_float_repr(os.path.join(out_dir, "float_repr.csv"))


if __name__ == "__main__":
    main(os.path.join(HERE, "fixtures"))
