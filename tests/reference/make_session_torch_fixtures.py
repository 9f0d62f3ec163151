#!/usr/bin/python3
"""The main view with generator "torch", computed by PyTorch itself, for
tests/ui/session/tst_session.cpp.

Called by make_fixtures.py as main(fixture_dir) (group "session_torch"); writes
fixtures/session/session_torch.json: for each case its parameters (as SessionParameters::toJson
writes them) and the per-head weights (h × n_q × n_k) and raw scores q_i k_iᵀ, from

  torch.manual_seed(seed)
  mha = nn.MultiheadAttention(d, h, batch_first=True, dtype=dtype)   # its default init
  X = torch.randn(1, n, d, dtype=dtype); E = torch.randn(1, n_k, d, dtype=dtype) (cross only)
  (+ sinusoidal positions, Vaswani et al. 2017 §3.5, when positional)
  _, weights = mha(X, E or X, E or X, attn_mask=causal, key_padding_mask=padding,
                   average_attn_weights=False)

with the default scale 1/√d_k (α = 0.5, τ = 1) that nn.MultiheadAttention uses. Floats are
written with repr(). Deterministic on a given CPU capability (float32 randn, see
make_torch_random_fixtures.py).
"""
import json
import math
import os
import sys

import torch
import torch.nn as nn

CASES = [
    dict(name="encoder none", n=5, n_k=10, d_model=8, heads=2, seed=0, kind="encoder",
         mask="none", padding=2, positional=False),
    dict(name="encoder causal PE", n=6, n_k=10, d_model=12, heads=3, seed=3, kind="encoder",
         mask="causal", padding=2, positional=True),
    dict(name="decoder padding", n=7, n_k=10, d_model=16, heads=4, seed=11, kind="decoder",
         mask="padding", padding=2, positional=False),
    dict(name="cross padding", n=4, n_k=7, d_model=12, heads=3, seed=5, kind="cross",
         mask="padding", padding=2, positional=True),
    dict(name="encoder 20 tokens", n=20, n_k=10, d_model=16, heads=4, seed=0, kind="encoder",
         mask="none", padding=2, positional=False),
]


def sinusoid(n, d, dtype):
    pe = torch.zeros(n, d, dtype=torch.float64)
    for c in range(d):
        i = c // 2
        angle = torch.arange(n, dtype=torch.float64) / 10000.0 ** (2 * i / d)
        pe[:, c] = torch.sin(angle) if c % 2 == 0 else torch.cos(angle)
    return pe.to(dtype)


def compute(case, dtype):
    n, d, h = case["n"], case["d_model"], case["heads"]
    cross = case["kind"] == "cross"
    nk = case["n_k"] if cross else n
    dk = d // h
    torch.manual_seed(case["seed"])
    mha = nn.MultiheadAttention(d, h, batch_first=True, dtype=dtype)
    x = torch.randn(1, n, d, dtype=dtype)
    e = torch.randn(1, nk, d, dtype=dtype) if cross else None
    if case["positional"]:
        x = x + sinusoid(n, d, dtype)
        if cross:
            e = e + sinusoid(nk, d, dtype)
    kv = e if cross else x
    causal = None
    if case["kind"] == "decoder" or case["mask"] == "causal":
        causal = torch.triu(torch.ones(n, nk, dtype=torch.bool), diagonal=1)
    padding = None
    if case["mask"] == "padding":
        padding = torch.zeros(1, nk, dtype=torch.bool)
        padding[:, nk - case["padding"]:] = True
    with torch.no_grad():
        _, w = mha(x, kv, kv, attn_mask=causal, key_padding_mask=padding,
                   average_attn_weights=False)
        q_all = x[0] @ mha.in_proj_weight[0:d].T + mha.in_proj_bias[0:d]
        k_all = kv[0] @ mha.in_proj_weight[d:2 * d].T + mha.in_proj_bias[d:2 * d]
        scores = [(q_all[:, i * dk:(i + 1) * dk] @ k_all[:, i * dk:(i + 1) * dk].T)
                  .double().tolist() for i in range(h)]
    return w[0].double().tolist(), scores


def main(fixture_dir):
    out = []
    for case in CASES:
        for dtype, tag in ((torch.float64, "float64"), (torch.float32, "float32")):
            weights, scores = compute(case, dtype)
            params = {k: v for k, v in case.items() if k != "name"}
            params.update(seed=str(params["seed"]), dtype=tag, generator="torch",
                          scale_exponent=0.5, temperature=1.0)
            out.append({"name": f"{case['name']} {tag}", "params": params, "weights": weights,
                        "scores": scores})
    target = os.path.join(fixture_dir, "session")
    os.makedirs(target, exist_ok=True)
    with open(os.path.join(target, "session_torch.json"), "w", newline="\n") as f:
        json.dump({"torch_version": torch.__version__, "cases": out}, f)
        f.write("\n")


if __name__ == "__main__":
    main(sys.argv[1] if len(sys.argv) > 1 else os.path.join(os.path.dirname(__file__), "fixtures"))
