#!/usr/bin/python3
"""NumPy .npy/.npz fixtures for tests/core/tst_npy.cpp and tst_npy_write.cpp, and a check of
files written by attncore.

    make_fixtures.py npy                      # (re)writes tests/reference/fixtures/npy/
    make_npy_fixtures.py --verify DIR         # checks the files tst_npy_write wrote into DIR
                                              # (run tst_npy_write with ATTN_NPY_WRITE_DIR=DIR first)

Every accepted file comes with its expected contents in manifest.json, taken from np.load of
that very file (so hand-made headers are checked by NumPy too): the dtype NumPy reports, the
shape, and the values in C order as float.hex() strings of their float64 conversion. Files that
must be refused are written here when NumPy can produce them (object, structured, string
dtypes, broken archives); the test builds the byte-level malformed headers itself.

Output is deterministic: np.save is, np.savez stamps members 1980-01-01 00:00, and the
hand-made zips use the same fixed timestamp.
"""
import io
import json
import os
import struct
import sys
import warnings
import zipfile

import numpy as np

SUBDIR = "npy"
FIXED_DATE = (1980, 1, 1, 0, 0, 0)

# attncore's names for the accepted dtypes (NpyType), keyed by NumPy's dtype.str
OUR_TYPE = {
    "<f4": "float32", ">f4": "float32",
    "<f8": "float64", ">f8": "float64",
    "|b1": "bool",
    "<i4": "int32", ">i4": "int32",
    "<i8": "int64", ">i8": "int64",
    "|u1": "uint8",
}
CANONICAL = {"<f4", "<f8", "|b1", "<i4", "<i8", "|u1"}


def hex_values(arr):
    """C-order values of arr as float.hex() of their float64 conversion."""
    flat = np.ascontiguousarray(arr).reshape(-1)
    return [float(x).hex() for x in flat.astype(np.float64)]


def raw_npy(header, data=b"", version=(1, 0), pad=True):
    """A .npy image with a literal header text (no checks, for hand-made variants)."""
    body = header.encode("utf-8" if version == (3, 0) else "latin1")
    fmt = "<H" if version == (1, 0) else "<I"
    if pad:
        body += b"\n"
        total = 8 + struct.calcsize(fmt) + len(body)
        body = body[:-1] + b" " * ((64 - total % 64) % 64) + b"\n"
    return b"\x93NUMPY" + bytes(version) + struct.pack(fmt, len(body)) + body + data


class Writer:
    def __init__(self, out):
        self.out = out
        self.manifest = {"npy": [], "npz": []}

    def path(self, name):
        return os.path.join(self.out, name)

    def write_bytes(self, name, data):
        with open(self.path(name), "wb") as f:
            f.write(data)

    def expect_npy(self, row, name, canonical=None):
        """Records what np.load reads from the file `name`."""
        raw = open(self.path(name), "rb").read()
        arr = np.load(self.path(name), allow_pickle=False)
        descr = arr.dtype.str
        fortran = b"'fortran_order': True" in raw[:4096]
        if canonical is None:
            # byte-identical round trip expected when np.save wrote a C-order standard dtype
            canonical = descr in CANONICAL and not fortran and raw == _np_save_bytes(arr)
        self.manifest["npy"].append({
            "name": row,
            "file": name,
            "dtype": OUR_TYPE[descr],
            "shape": list(arr.shape),
            "fortran": bool(fortran),
            "canonical": bool(canonical),
            "values": hex_values(arr),
        })

    def save(self, row, name, arr, **kw):
        np.save(self.path(name), arr, **kw)
        self.expect_npy(row, name)

    def expect_npz(self, row, name):
        with np.load(self.path(name), allow_pickle=False) as z:
            for member, stored in zip(z.files, zipfile.ZipFile(self.path(name)).namelist()):
                arr = z[member]
                self.manifest["npz"].append({
                    "name": f"{row}/{member}",
                    "file": name,
                    "member": member,
                    "stored": stored,
                    "dtype": OUR_TYPE[arr.dtype.str],
                    "shape": list(arr.shape),
                    "values": hex_values(arr),
                })


def _np_save_bytes(arr):
    buf = io.BytesIO()
    np.save(buf, arr, allow_pickle=False)
    return buf.getvalue()


def make_npy(w):
    rng = np.random.default_rng(20240611)
    normal = lambda *shape: rng.standard_normal(shape)

    # Shapes 0-d to 4-d and zero-length, float64, C order
    w.save("f8 0-d", "f8_0d.npy", np.array(3.25))
    w.save("f8 (3,)", "f8_1d.npy", normal(3))
    w.save("f8 (3, 4)", "f8_2d.npy", normal(3, 4))
    w.save("f8 (2, 3, 4)", "f8_3d.npy", normal(2, 3, 4))
    w.save("f8 (2, 3, 2, 5)", "f8_4d.npy", normal(2, 3, 2, 5))
    w.save("f8 (0,)", "f8_empty.npy", np.zeros(0))
    w.save("f8 (2, 0)", "f8_2x0.npy", np.zeros((2, 0)))
    w.save("f8 (0, 3) fortran", "f8_0x3_fortran.npy", np.asfortranarray(np.zeros((0, 3))))

    # Every accepted dtype
    w.save("f4 (3, 4)", "f4_2d.npy", normal(3, 4).astype(np.float32))
    w.save(">f8 (3, 4)", "f8_big_2d.npy", normal(3, 4).astype(">f8"))
    w.save(">f4 (5,)", "f4_big_1d.npy", normal(5).astype(">f4"))
    w.save("b1 (3, 3)", "b1_2d.npy", np.tril(np.ones((3, 3), dtype=bool)))
    w.save("b1 0-d", "b1_0d.npy", np.array(True))
    w.save("i4 (2, 3)", "i4_2d.npy",
           np.array([[-2147483648, -1, 0], [1, 7, 2147483647]], dtype="<i4"))
    w.save(">i4 (4,)", "i4_big_1d.npy", np.array([-5, 0, 65536, 123456789], dtype=">i4"))
    w.save("i8 (5,)", "i8_1d.npy",
           np.array([-(2**53), -1, 0, 2**40 + 3, 2**53], dtype="<i8"))
    w.save("i8 0-d (num_heads)", "i8_0d.npy", np.array(8))
    w.save("u1 (2, 4)", "u1_2d.npy", np.array([[0, 1, 2, 127], [128, 200, 254, 255]], np.uint8))
    w.save("f8 specials", "f8_specials.npy",
           np.array([np.nan, np.inf, -np.inf, -0.0, 5e-324, 1.7976931348623157e308, 1e-310]))
    w.save("f4 specials", "f4_specials.npy",
           np.array([np.nan, np.inf, -np.inf, -0.0, 1e-45, 3.4028235e38], dtype=np.float32))

    # Fortran order: the reader must reorder into C order, never transpose silently
    a = normal(3, 4)
    w.save("f8 fortran (3, 4)", "f8_fortran_2d.npy", np.asfortranarray(a))
    w.save("f8 transposed (4, 3)", "f8_transposed.npy", normal(3, 4).T)
    w.save("f4 fortran (2, 3, 4)", "f4_fortran_3d.npy",
           np.asfortranarray(normal(2, 3, 4).astype(np.float32)))
    w.save("i8 fortran (2, 3, 2, 2)", "i8_fortran_4d.npy",
           np.asfortranarray(np.arange(24, dtype=np.int64).reshape(2, 3, 2, 2) * 3 - 30))
    w.save(">f8 fortran (3, 2)", "f8_big_fortran.npy", np.asfortranarray(normal(3, 2)).astype(">f8"))

    # Format versions 2.0 and 3.0 (as numpy writes them when asked)
    for version in [(2, 0), (3, 0)]:
        name = f"f8_v{version[0]}.npy"
        with open(w.path(name), "wb") as f:
            np.lib.format.write_array(f, normal(2, 3), version=version)
        w.expect_npy(f"f8 version {version[0]}.0", name, canonical=False)

    # Hand-made headers that NumPy accepts: '=' byte order, '<b1'/'<u1' spellings, keys in
    # another order, odd spacing, double quotes, trailing commas, unpadded header, python-2 'L'
    # suffixes, a hand-made v3.0 header, oversized padding, trailing bytes after the data.
    d = normal(2, 3)
    hand = [
        ("=f8", "eq_f8.npy",
         raw_npy("{'descr': '=f8', 'fortran_order': False, 'shape': (2, 3), }", d.tobytes())),
        ("=f4", "eq_f4.npy",
         raw_npy("{'descr': '=f4', 'fortran_order': False, 'shape': (2, 3), }",
                 d.astype("<f4").tobytes())),
        ("<b1", "lt_b1.npy",
         raw_npy("{'descr': '<b1', 'fortran_order': False, 'shape': (4,), }",
                 bytes([0, 1, 1, 0]))),
        ("<u1", "lt_u1.npy",
         raw_npy("{'descr': '<u1', 'fortran_order': False, 'shape': (3,), }", bytes([9, 0, 255]))),
        ("keys reordered, odd spacing", "header_spacing.npy",
         raw_npy("{ \"shape\" :( 2 ,3 , ) ,\t'fortran_order':False ,'descr' :\"<f8\",}",
                 d.tobytes())),
        ("unpadded header", "header_unpadded.npy",
         raw_npy("{'shape': (2, 3), 'descr': '<f8', 'fortran_order': False}", d.tobytes(),
                 pad=False)),
        ("long padding", "header_long_padding.npy",
         raw_npy("{'descr': '<f8', 'fortran_order': False, 'shape': (2, 3)}" + " " * 300,
                 d.tobytes())),
        ("python 2 L suffix", "header_long_suffix.npy",
         raw_npy("{'descr': '<f8', 'fortran_order': False, 'shape': (2L, 3L), }", d.tobytes())),
        ("v3 hand-made, keys reordered", "header_v3.npy",
         raw_npy("{'shape': (2, 3), 'fortran_order': False, 'descr': '<f8'}", d.tobytes(),
                 version=(3, 0))),
        ("fortran, keys reordered", "header_fortran_reordered.npy",
         raw_npy("{'fortran_order': True, 'shape': (2, 3), 'descr': '<f8'}",
                 np.asfortranarray(d).tobytes(order="F"))),
        ("trailing bytes ignored", "trailing_bytes.npy",
         raw_npy("{'descr': '<f8', 'fortran_order': False, 'shape': (2, 3), }",
                 d.tobytes() + b"extra")),
    ]
    for row, name, data in hand:
        w.write_bytes(name, data)
        w.expect_npy(row, name, canonical=False)

    # Refused (the test names the expected problem)
    np.save(w.path("bad_object.npy"), np.array([{"a": 1}, None], dtype=object), allow_pickle=True)
    np.save(w.path("bad_structured.npy"),
            np.zeros(3, dtype=[("x", "<f8"), ("y", "<i4")]))
    np.save(w.path("bad_unicode.npy"), np.array(["abc", "de"]))
    np.save(w.path("bad_bytes.npy"), np.array([b"abc", b"de"]))
    np.save(w.path("bad_complex.npy"), np.array([1 + 2j]))
    np.save(w.path("bad_f2.npy"), np.array([1.5], dtype=np.float16))
    np.save(w.path("bad_i2.npy"), np.array([1], dtype=np.int16))
    full = open(w.path("f8_2d.npy"), "rb").read()
    w.write_bytes("bad_truncated.npy", full[:-5])
    w.write_bytes("bad_header_only.npy", full[:128])


def members(rng):
    return dict(
        query=rng.standard_normal((4, 8)),
        key=rng.standard_normal((5, 8)),
        value=rng.standard_normal((5, 8)),
        num_heads=np.array(2),
        key_padding_mask=np.array([False, False, False, True, False]),
        weights=rng.random((2, 4, 5)).astype(np.float32),
        fortran=np.asfortranarray(rng.standard_normal((3, 2))),
    )


def make_npz(w):
    rng = np.random.default_rng(7)
    np.savez(w.path("savez.npz"), **members(rng))
    w.expect_npz("savez", "savez.npz")
    np.savez_compressed(w.path("savez_compressed.npz"), **members(rng))
    w.expect_npz("savez_compressed", "savez_compressed.npz")

    # An explicit ZIP64 archive (zip64 extra fields in local and central headers), mixed
    # compression, member names with and without ".npy".
    path = w.path("zip64.npz")
    with zipfile.ZipFile(path, "w", allowZip64=True) as zf:
        for i, (name, method) in enumerate([("a.npy", zipfile.ZIP_DEFLATED),
                                            ("b", zipfile.ZIP_STORED),
                                            ("c.npy", zipfile.ZIP_STORED)]):
            info = zipfile.ZipInfo(name, date_time=FIXED_DATE)
            info.compress_type = method
            with zf.open(info, "w", force_zip64=True) as f:
                f.write(_np_save_bytes(rng.standard_normal((2, i + 2))))
    assert b"\x01\x00\x10\x00" in open(path, "rb").read()  # zip64 extra field header
    w.expect_npz("zip64", "zip64.npz")

    # Refused: an object member next to a good one, a corrupted CRC, not a zip, truncated zip
    np.savez(w.path("bad_member.npz"), good=np.arange(3.0),
             obj=np.array([{"x": 1}], dtype=object))
    raw = bytearray(open(w.path("savez.npz"), "rb").read())
    first = zipfile.ZipFile(io.BytesIO(bytes(raw))).infolist()[0]
    # last data byte of the first (stored) member
    name_len, extra_len = struct.unpack("<HH", raw[first.header_offset + 26:
                                                   first.header_offset + 30])
    data_end = first.header_offset + 30 + name_len + extra_len + first.compress_size
    raw[data_end - 1] ^= 0x55
    w.write_bytes("bad_crc.npz", bytes(raw))
    w.write_bytes("bad_notzip.npz", b"this is not a zip archive\n" * 4)

    # A small "zip bomb": a (2,) array followed by 8 MiB of zeros, deflated to a few kB. The
    # reader must stop decompressing soon after the 16 bytes the header describes.
    path = w.path("bad_bomb.npz")
    with zipfile.ZipFile(path, "w", allowZip64=True) as zf:
        info = zipfile.ZipInfo("x.npy", date_time=FIXED_DATE)
        info.compress_type = zipfile.ZIP_DEFLATED
        zf.writestr(info, _np_save_bytes(np.arange(2.0)) + bytes(8 << 20))

    # A member whose zip64 directory entry claims 2**40 uncompressed bytes (the data is tiny):
    # zipfile writes the central directory from the ZipInfo, so the claim is set before closing.
    buf = io.BytesIO()
    with zipfile.ZipFile(buf, "w", allowZip64=True) as zf:
        info = zipfile.ZipInfo("x.npy", date_time=FIXED_DATE)
        info.compress_type = zipfile.ZIP_DEFLATED
        zf.writestr(info, _np_save_bytes(np.arange(2.0)))
        zf.filelist[0].file_size = 2**40
    raw = buf.getvalue()
    assert zipfile.ZipFile(io.BytesIO(raw)).infolist()[0].file_size == 2**40
    w.write_bytes("bad_claims_1tib.npz", bytes(raw))
    full = open(w.path("savez.npz"), "rb").read()
    w.write_bytes("bad_truncated.npz", full[: len(full) // 2])

    # Two members named query.npy (zipfile warns, then writes both): numpy.load takes the last,
    # so the archive is ambiguous and refused.
    buf = io.BytesIO()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        with zipfile.ZipFile(buf, "w") as zf:
            for value in (1.0, 2.0):
                info = zipfile.ZipInfo("query.npy", date_time=FIXED_DATE)
                zf.writestr(info, _np_save_bytes(np.full((2, 2), value)))
    assert np.load(io.BytesIO(buf.getvalue()))["query"][0, 0] == 2.0
    w.write_bytes("bad_duplicate.npz", buf.getvalue())


def main(fixture_dir):
    out = os.path.join(fixture_dir, SUBDIR)
    os.makedirs(out, exist_ok=True)
    for name in os.listdir(out):
        if name.endswith((".npy", ".npz")) or name == "manifest.json":
            os.remove(os.path.join(out, name))
    w = Writer(out)
    make_npy(w)
    make_npz(w)
    with open(w.path("manifest.json"), "w") as f:
        json.dump(w.manifest, f, indent=1, sort_keys=True)
        f.write("\n")


def verify_written(directory):
    """Loads every file tst_npy_write wrote (listed in DIR/written.json) with NumPy and compares
    dtype, shape and values bit for bit; .npy files must also equal np.save's bytes."""
    with open(os.path.join(directory, "written.json")) as f:
        entries = json.load(f)["written"]
    failures = 0
    for e in entries:
        path = os.path.join(directory, e["file"])
        label = e["file"] + (f"[{e['member']}]" if "member" in e else "")
        try:
            if e.get("empty"):
                with np.load(path, allow_pickle=False) as z:
                    problems = [] if z.files == [] else [f"holds {z.files}, expected nothing"]
                print(f"{label}: " + ("ok" if not problems else "FAIL: " + problems[0]))
                failures += bool(problems)
                continue
            if "member" in e:
                with np.load(path, allow_pickle=False) as z:
                    arr = z[e["member"]]
            else:
                arr = np.load(path, allow_pickle=False)
            expected = np.array([float.fromhex(v) for v in e["values"]], dtype=np.float64)
            problems = []
            if arr.dtype.str != e["descr"]:
                problems.append(f"dtype {arr.dtype.str} != {e['descr']}")
            if list(arr.shape) != e["shape"]:
                problems.append(f"shape {arr.shape} != {tuple(e['shape'])}")
            got = np.ascontiguousarray(arr).reshape(-1).astype(np.float64)
            if got.shape != expected.shape or not (
                    np.array_equal(got, expected, equal_nan=True)
                    and np.array_equal(np.signbit(got), np.signbit(expected))):
                problems.append("values differ")
            if "member" not in e and open(path, "rb").read() != _np_save_bytes(arr):
                problems.append("bytes differ from np.save of the same array")
        except Exception as exc:  # report every file, not just the first
            problems = [f"{type(exc).__name__}: {exc}"]
        status = "ok" if not problems else "FAIL: " + "; ".join(problems)
        failures += bool(problems)
        print(f"{label}: {status}")
    print(f"{len(entries) - failures}/{len(entries)} written arrays read back exactly by NumPy "
          f"{np.__version__}")
    return failures == 0


if __name__ == "__main__":
    if len(sys.argv) == 3 and sys.argv[1] == "--verify":
        sys.exit(0 if verify_written(sys.argv[2]) else 1)
    if len(sys.argv) == 1:
        main(os.path.join(os.path.dirname(os.path.abspath(__file__)), "fixtures"))
        sys.exit(0)
    sys.exit(__doc__)
