#!/usr/bin/python3
"""The main view's computation in plain NumPy, for tests/ui/tst_session.cpp.

Called by make_fixtures.py as main(fixture_dir); writes fixtures/session/session.json: for each
case its parameters (as SessionParameters::toJson writes them) and the per-head weights
(h × n_q × n_k) and raw scores computed here, independently of the C++ code, following the
documented draw order of ui/session/sessioncompute.h:

  rng = numpy.random.default_rng(seed)
  in_proj_weight  = b_in  * (2 * rng.random((3d, d)) - 1),  b_in  = sqrt(6 / (d + 3d))
  out_proj_weight = b_out * (2 * rng.random((d, d)) - 1),   b_out = 1 / sqrt(d)   (biases 0)
  X = rng.standard_normal((n, d));  E = rng.standard_normal((n_k, d)) for cross-attention
  (+ sinusoidal positions, Vaswani et al. 2017 §3.5, when positional)
  head i: q = X W_Q[i·d_k:(i+1)·d_k]ᵀ, k, v likewise from E (or X); scores = q kᵀ;
  scaled = scores · d_k^(−α) / τ; masked (causal top-left j > i, last m keys padding) = −inf;
  weights = softmax rows (all-zero rows when every key is masked);
  with sink_logit b (a learned sink, gpt-oss): w_ij = e^{s_ij} / (e^b + Σ_k e^{s_ik});
  with differential_lambda λ (Ye et al. 2025, Eq. 1): a second layer drawn after the inputs,
  in_proj_weight₂ = b_in · (2·rng.random((3d, d)) − 1), out_proj_weight₂ likewise, its queries
  and keys giving A₂; weights A₁ − λA₂ (scores are A₁'s).
Floats are written with repr() (17 significant digits, round-trips exactly). Deterministic.
"""
import json
import math
import os
import sys

import numpy as np

CASES = [
    dict(name="encoder none", n=5, n_k=10, d_model=8, heads=2, seed=0, kind="encoder",
         mask="none", padding=2, scale_exponent=0.5, temperature=1.0, positional=False),
    dict(name="encoder causal PE", n=6, n_k=10, d_model=12, heads=3, seed=3, kind="encoder",
         mask="causal", padding=2, scale_exponent=0.5, temperature=1.0, positional=True),
    dict(name="decoder padding", n=7, n_k=10, d_model=16, heads=4, seed=11, kind="decoder",
         mask="padding", padding=2, scale_exponent=0.5, temperature=1.0, positional=False),
    dict(name="cross padding alpha tau", n=4, n_k=7, d_model=12, heads=3, seed=5, kind="cross",
         mask="padding", padding=2, scale_exponent=0.3, temperature=2.0, positional=True),
    dict(name="cross causal unscaled", n=6, n_k=4, d_model=8, heads=1, seed=42, kind="cross",
         mask="causal", padding=2, scale_exponent=0.0, temperature=1.0, positional=False),
    dict(name="learned sink causal", n=7, n_k=10, d_model=12, heads=3, seed=8, kind="encoder",
         mask="causal", padding=2, scale_exponent=0.5, temperature=1.0, positional=False,
         learned_sink=True, sink_logit=1.25),
    dict(name="differential padding", n=6, n_k=10, d_model=8, heads=2, seed=13, kind="encoder",
         mask="padding", padding=2, scale_exponent=0.5, temperature=1.0, positional=True,
         differential=True, differential_lambda=0.65),
    dict(name="differential cross", n=5, n_k=7, d_model=8, heads=2, seed=21, kind="cross",
         mask="none", padding=2, scale_exponent=0.5, temperature=1.0, positional=False,
         differential=True, differential_lambda=0.3),
]


def sinusoid(n, d):
    pe = np.zeros((n, d))
    pos = np.arange(n)[:, None]
    for c in range(d):
        i = c // 2
        angle = pos[:, 0] / 10000.0 ** (2 * i / d)
        pe[:, c] = np.sin(angle) if c % 2 == 0 else np.cos(angle)
    return pe


def second_layer(case):
    """Differential attention's second in_proj_weight: drawn after the inputs."""
    n, d = case["n"], case["d_model"]
    cross = case["kind"] == "cross"
    nk = case["n_k"] if cross else n
    rng = np.random.default_rng(case["seed"])
    rng.random((3 * d, d))
    rng.random((d, d))
    rng.standard_normal((n, d))
    if cross:
        rng.standard_normal((nk, d))
    return math.sqrt(6.0 / (d + 3 * d)) * (2.0 * rng.random((3 * d, d)) - 1.0)


def sink_rows(t, b):
    """Rows of e^{t_ij} / (e^b + Σ_k e^{t_ik}) (masked cells −inf)."""
    m = np.maximum(t.max(axis=1, keepdims=True), b)
    e = np.exp(t - m)
    return e / (np.exp(b - m) + e.sum(axis=1, keepdims=True))


def layer_and_inputs(case):
    """The documented draws: (w_in, w_out, X before positions, PE, S the key/value side's input
    with its positions), the mask (True = masked) and the scale."""
    n, d, h = case["n"], case["d_model"], case["heads"]
    cross = case["kind"] == "cross"
    nk = case["n_k"] if cross else n
    rng = np.random.default_rng(case["seed"])
    w_in = math.sqrt(6.0 / (d + 3 * d)) * (2.0 * rng.random((3 * d, d)) - 1.0)
    w_out = (1.0 / math.sqrt(d)) * (2.0 * rng.random((d, d)) - 1.0)
    embeddings = rng.standard_normal((n, d))
    e = rng.standard_normal((nk, d)) if cross else None
    positions = sinusoid(n, d) if case["positional"] else np.zeros((n, d))
    if cross and case["positional"]:
        e = e + sinusoid(nk, d)
    source = e if cross else embeddings + positions
    masked = np.zeros((n, nk), dtype=bool)
    if case["kind"] == "decoder" or case["mask"] == "causal":
        masked |= np.triu(np.ones((n, nk), dtype=bool), k=1)
    if case["mask"] == "padding":
        masked[:, nk - case["padding"]:] = True
    scale = (d // h) ** (-case["scale_exponent"]) / case["temperature"]
    return w_in, w_out, embeddings, positions, source, masked, scale


def softmax_rows(t, masked):
    """Row softmax of t (masked cells −inf); all-zero rows when every key is masked."""
    w = np.zeros_like(t)
    for r in range(t.shape[0]):
        if masked[r].all():
            continue
        row = np.exp(t[r] - t[r].max())
        w[r] = row / row.sum()
    return w


def compute(case):
    n, d, h = case["n"], case["d_model"], case["heads"]
    dk = d // h
    w_in, _w_out, embeddings, positions, kv, masked, scale = layer_and_inputs(case)
    x = embeddings + positions
    q_all = x @ w_in[0:d].T
    k_all = kv @ w_in[d:2 * d].T
    if "differential_lambda" in case:
        w_in2 = second_layer(case)
        q2_all = x @ w_in2[0:d].T
        k2_all = kv @ w_in2[d:2 * d].T
    weights, scores = [], []
    for i in range(h):
        q = q_all[:, i * dk:(i + 1) * dk]
        k = k_all[:, i * dk:(i + 1) * dk]
        s = q @ k.T
        t = np.where(masked, -np.inf, s * scale)
        if "sink_logit" in case:
            w = sink_rows(t, case["sink_logit"])
        else:
            w = softmax_rows(t, masked)
        if "differential_lambda" in case:
            s2 = q2_all[:, i * dk:(i + 1) * dk] @ k2_all[:, i * dk:(i + 1) * dk].T
            w = w - case["differential_lambda"] * softmax_rows(
                np.where(masked, -np.inf, s2 * scale), masked)
        weights.append(w.tolist())
        scores.append(s.tolist())
    return weights, scores


def main(fixture_dir):
    out = []
    for case in CASES:
        weights, scores = compute(case)
        params = {k: v for k, v in case.items() if k != "name"}
        params["seed"] = str(params["seed"])
        params["dtype"] = "float64"
        out.append({"name": case["name"], "params": params, "weights": weights, "scores": scores})
    target = os.path.join(fixture_dir, "session")
    os.makedirs(target, exist_ok=True)
    with open(os.path.join(target, "session.json"), "w") as f:
        json.dump({"cases": out}, f, indent=1)
        f.write("\n")


if __name__ == "__main__":
    main(sys.argv[1] if len(sys.argv) > 1 else os.path.join(os.path.dirname(__file__), "fixtures"))
