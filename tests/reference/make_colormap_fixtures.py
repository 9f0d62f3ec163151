#!/usr/bin/python3
"""matplotlib colormap values for tests/ui/render/tst_colormap.cpp and
tests/ui/render/tst_heatmaprenderer.cpp.

Called by make_fixtures.py as main(fixture_dir); writes fixtures/colormaps/colormaps.json:
  maps[name].table    the 256 entries as 8-bit [r, g, b] (Colormap(..., bytes=True))
  maps[name].samples  [x, [r, g, b]] for normalised values x (including out-of-range ones)
  log                 [name, vmin, vmax, value, [r, g, b]] through matplotlib.colors.LogNorm
  linear              [name, vmin, vmax, value, [r, g, b]] through matplotlib.colors.Normalize
Needs Debian's python3-matplotlib (3.6) and python3-numpy. Deterministic output.
"""
import json
import os
import sys

import numpy as np
import matplotlib
from matplotlib import colors

MAPS = ["viridis", "magma", "cividis", "gray", "RdBu_r"]
SAMPLES = [-0.5, 0.0, 1.0 / 512, 127.5 / 256, 0.25, 0.5, 0.75, 1.0 - 1e-9, 1.0, 1.5]
LOG_CASES = [(1e-4, 1.0, v) for v in (1e-4, 2e-4, 1e-3, 0.01, 0.05, 0.3, 0.5, 0.999, 1.0)] + [
    (1e-3, 0.5, v) for v in (1e-3, 0.0123, 0.25, 0.5)
]
LINEAR_CASES = [(0.0, 1.0, v) for v in (0.0, 0.1, 0.5, 0.9, 1.0)] + [
    (-2.0, 2.0, v) for v in (-2.0, -0.7, 0.0, 0.3, 2.0)
]


def rgb(cmap, x):
    return [int(c) for c in cmap(np.float64(x), bytes=True)[:3]]


def main(fixture_dir):
    out = {"matplotlib": matplotlib.__version__, "maps": {}, "log": [], "linear": []}
    for name in MAPS:
        cmap = matplotlib.colormaps[name]
        assert cmap.N == 256
        table = cmap(np.arange(256), bytes=True)[:, :3].astype(int).tolist()
        out["maps"][name] = {
            "table": table,
            "samples": [[x, rgb(cmap, x)] for x in SAMPLES],
        }
    for name in ("viridis", "magma"):
        cmap = matplotlib.colormaps[name]
        for vmin, vmax, v in LOG_CASES:
            t = colors.LogNorm(vmin=vmin, vmax=vmax)(v)
            out["log"].append([name, vmin, vmax, v, rgb(cmap, float(t))])
    for name in ("viridis", "RdBu_r"):
        cmap = matplotlib.colormaps[name]
        for vmin, vmax, v in LINEAR_CASES:
            t = colors.Normalize(vmin=vmin, vmax=vmax)(v)
            out["linear"].append([name, vmin, vmax, v, rgb(cmap, float(t))])
    target = os.path.join(fixture_dir, "colormaps")
    os.makedirs(target, exist_ok=True)
    # One JSON value per line: readable diffs, small file.
    lines = ["{", f' "matplotlib": {json.dumps(out["matplotlib"])},', ' "maps": {']
    for k, name in enumerate(MAPS):
        m = out["maps"][name]
        comma = "," if k + 1 < len(MAPS) else ""
        lines.append(f'  {json.dumps(name)}: {{')
        lines.append(f'   "samples": {json.dumps(m["samples"])},')
        lines.append('   "table": [')
        lines += [f"    {json.dumps(e)}" + ("," if i < 255 else "") for i, e in enumerate(m["table"])]
        lines.append("   ]")
        lines.append("  }" + comma)
    lines.append(" },")
    for key in ("log", "linear"):
        lines.append(f' {json.dumps(key)}: [')
        rows = out[key]
        lines += [f"  {json.dumps(r)}" + ("," if i + 1 < len(rows) else "") for i, r in enumerate(rows)]
        lines.append(" ]" + ("," if key == "log" else ""))
    lines.append("}")
    text = "\n".join(lines) + "\n"
    json.loads(text)  # well-formed
    with open(os.path.join(target, "colormaps.json"), "w") as f:
        f.write(text)


if __name__ == "__main__":
    main(sys.argv[1] if len(sys.argv) > 1 else os.path.join(os.path.dirname(__file__), "fixtures"))
