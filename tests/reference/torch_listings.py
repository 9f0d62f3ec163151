#!/usr/bin/python3
"""The PyTorch listings that `attnlab experiment E4/E5/E7 --generator torch` and
`attnlab sweep --generator torch` reproduce, run in PyTorch (Debian's python3-torch, 1.13).

Each listing seeds torch's default generator, builds nn.MultiheadAttention(d, h,
batch_first=True) (its default initialisation draws first), then draws the tokens with
torch.randn(1, n, d), in float64 (torch.set_default_dtype(torch.float64)):
  causal listing (E7): d = 16, h = 4, n = 8, seed 0; positions 5..7 replaced by
      torch.randn(1, 3, 16) drawn next; per position the largest |output change| without a
      mask and with the causal mask (True above the diagonal = not allowed). Prints
      ['2.3e-01', '3.4e-01', '3.3e-01', '2.9e-01', '2.5e-01', '3.4e-01', '2.8e-01', '2.8e-01']
      ['0.0e+00', '0.0e+00', '0.0e+00', '0.0e+00', '0.0e+00', '4.1e-01', '2.0e-01', '2.8e-01']
  position listing (E5): d = 16, h = 4, n = 7, seed 0; P from
      torch.randperm(7, generator=torch.Generator().manual_seed(3)); f(Px + PE) against
      P f(x + PE) with sinusoidal PE (Vaswani et al. 2017, §3.5). Prints "error 2.1e-01"
      (and about 1e-16 without positions: rounding noise that varies between BLAS builds).
  heads listing (E4): d = 16, n = 6, seed 0, h in 1, 4, 16: mean over heads and queries of
      the largest weight and of the entropy (nats) of each weight row.
  scaling sweep (E2): seed 1, q = torch.randn(trials, 1, d_k), k = torch.randn(trials, keys,
      d_k) per d_k; std of q·k, mean largest softmax weight and mean ‖diag(p) − ppᵀ‖_F.

    /usr/bin/python3 tests/reference/torch_listings.py      # prints the listings' lines

As fixture group "torchlistings" of make_fixtures.py it writes
fixtures/experiments/torch_listings.json: the full-precision values (repr) and the printed
lines, checked against the app by tests/tst_cli_experiment.cpp.
"""
import json
import math
import os

import torch
import torch.nn as nn

SWEEP = {"seed": 1, "trials": 200, "keys": 16, "d_k": [4, 16, 64, 256, 1024]}


def sinusoidal(n, d):
    """PE(pos, 2i) = sin(pos / 10000^(2i/d)), PE(pos, 2i+1) = cos(...) (Vaswani et al. §3.5)."""
    pos = torch.arange(n, dtype=torch.float64).unsqueeze(1)
    freq = torch.exp(torch.arange(0, d, 2, dtype=torch.float64) * (-math.log(10000.0) / d))
    pe = torch.zeros(n, d, dtype=torch.float64)
    pe[:, 0::2] = torch.sin(pos * freq)
    pe[:, 1::2] = torch.cos(pos * freq)
    return pe


def causal_listing(seed=0, d=16, h=4, n=8, changed_from=5):
    torch.manual_seed(seed)
    mha = nn.MultiheadAttention(d, h, batch_first=True)
    x = torch.randn(1, n, d)
    x2 = x.clone()
    x2[:, changed_from:] = torch.randn(1, n - changed_from, d)
    causal = torch.triu(torch.ones(n, n, dtype=torch.bool), diagonal=1)
    out = {}
    with torch.no_grad():
        for name, mask in (("no_mask", None), ("causal", causal)):
            before = mha(x, x, x, attn_mask=mask)[0]
            after = mha(x2, x2, x2, attn_mask=mask)[0]
            out[name] = (after - before)[0].abs().amax(-1).tolist()
    return out


def position_listing(seed=0, d=16, h=4, n=7):
    torch.manual_seed(seed)
    mha = nn.MultiheadAttention(d, h, batch_first=True)
    x = torch.randn(1, n, d)
    perm = torch.randperm(n, generator=torch.Generator().manual_seed(3))
    pe = sinusoidal(n, d)
    with torch.no_grad():
        def f(t):
            return mha(t, t, t)[0]
        no_positions = (f(x[:, perm]) - f(x)[:, perm]).abs().max().item()
        with_positions = (f(x[:, perm] + pe) - f(x + pe)[:, perm]).abs().max().item()
    return {"permutation": perm.tolist(), "error_no_positions": no_positions,
            "error": with_positions}


def heads_listing(seed=0, d=16, n=6, heads=(1, 4, 16)):
    rows = []
    for h in heads:
        torch.manual_seed(seed)
        mha = nn.MultiheadAttention(d, h, batch_first=True)
        x = torch.randn(1, n, d)
        with torch.no_grad():
            _, w = mha(x, x, x, average_attn_weights=False)  # 1 × h × n × n
        w = w[0]
        entropy = -(w * torch.log(torch.where(w > 0, w, torch.ones_like(w)))).sum(-1)
        rows.append({"h": h, "mean_max_weight": w.amax(-1).mean().item(),
                     "mean_entropy_nats": entropy.mean().item()})
    return rows


def scaling_sweep(seed, trials, keys, d_k):
    torch.manual_seed(seed)
    rows = []
    for dk in d_k:
        q = torch.randn(trials, 1, dk)
        k = torch.randn(trials, keys, dk)
        s = (q * k).sum(-1)  # trials × keys
        row = {"d_k": dk, "score_std": s.std(unbiased=False).item()}
        for tag, scores in (("unscaled", s), ("scaled", s / math.sqrt(dk))):
            p = torch.softmax(scores, -1)
            jac = torch.diag_embed(p) - p.unsqueeze(-1) * p.unsqueeze(-2)
            row["max_weight_" + tag] = p.amax(-1).mean().item()
            row["jacobian_norm_" + tag] = torch.linalg.matrix_norm(jac).mean().item()
        rows.append(row)
    return rows


def listings():
    torch.set_default_dtype(torch.float64)
    causal = causal_listing()
    position = position_listing()
    return {
        "torch_version": torch.__version__,
        "E7": {"seed": 0, "d_model": 16, "heads": 4, "n": 8, "changed_from": 5,
               "change_no_mask": causal["no_mask"], "change_causal": causal["causal"],
               "printed_no_mask": [f"{v:.1e}" for v in causal["no_mask"]],
               "printed_causal": [f"{v:.1e}" for v in causal["causal"]]},
        "E5": {"seed": 0, "d_model": 16, "heads": 4, "n": 7, **position,
               "printed": f"error {position['error']:.1e}"},
        "E4": {"seed": 0, "d_model": 16, "n": 6, "rows": heads_listing()},
        "E2": {**SWEEP, "rows": scaling_sweep(**SWEEP)},
    }


def main(fixture_dir):
    out = os.path.join(fixture_dir, "experiments")
    os.makedirs(out, exist_ok=True)
    with open(os.path.join(out, "torch_listings.json"), "w", newline="\n") as f:
        json.dump(listings(), f, indent=1)
        f.write("\n")


if __name__ == "__main__":
    result = listings()
    print(result["E7"]["printed_no_mask"])
    print(result["E7"]["printed_causal"])
    print(result["E5"]["printed"])
