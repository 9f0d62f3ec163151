#!/usr/bin/python3
"""The main view's computation in plain NumPy, for tests/ui/session/tst_session.cpp.

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
  and keys giving A₂; weights A₁ − λA₂ (scores are A₁'s), λ per head with
  differential_head_lambdas;
  then with latent_attention (DeepSeek-V2 §2.1.2–2.1.3, Eq. 9–19) W_DKV (d × d_c), W_UK (d_c ×
  h·d_k), W_UV (d_c × h·d_k), W_KR (d × d_r), W_Q (d × h·d_k), W_QR (d × h·d_r), each
  rng.standard_normal((rows, cols)) / √rows; c = x W_DKV, k^R = RoPE(x W_KR), q^C_u = x W_Q,u,
  q^R_u = RoPE(x W_QR,u) (interleaved pairs, θ_i = base^(−2i/d_r), positions 0…n−1), scores_u =
  [q^C_u, q^R_u]·[c W_UK,u, k^R]ᵀ (the layer's own W_Q, W_K unused), scale (d_k + d_r)^(−α)/τ;
  then with output_gate (Qiu et al. 2025, a head-wise gate) w_θ = rng.standard_normal((d, h)) / √d
  and weights σ(x_i·w_θ[:, u] + gate_bias)·w_ij (x: the query-side input with its positions).
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
    dict(name="differential per-head lambda", n=6, n_k=10, d_model=12, heads=3, seed=17,
         kind="decoder", mask="none", padding=2, scale_exponent=0.5, temperature=1.0,
         positional=False, differential=True, differential_lambda=0.5,
         differential_head_lambdas=[0.2, -0.4, 1.5]),
    dict(name="gate causal", n=7, n_k=10, d_model=12, heads=3, seed=4, kind="encoder",
         mask="causal", padding=2, scale_exponent=0.5, temperature=1.0, positional=True,
         output_gate=True, gate_bias=-0.75),
    dict(name="gate learned sink cross", n=5, n_k=6, d_model=8, heads=2, seed=9, kind="cross",
         mask="padding", padding=2, scale_exponent=0.5, temperature=1.0, positional=False,
         learned_sink=True, sink_logit=0.5, output_gate=True, gate_bias=1.5),
    dict(name="gate differential", n=6, n_k=10, d_model=8, heads=2, seed=31, kind="encoder",
         mask="none", padding=2, scale_exponent=0.5, temperature=1.0, positional=False,
         differential=True, differential_lambda=0.4, output_gate=True, gate_bias=0.0),
    dict(name="latent decompressed causal", n=9, n_k=10, d_model=16, heads=4, seed=6,
         kind="decoder", mask="none", padding=2, scale_exponent=0.5, temperature=1.0,
         positional=False, latent_attention=True, latent_dim=6, latent_rope_dim=4),
    dict(name="latent absorbed window", n=10, n_k=10, d_model=12, heads=3, seed=12,
         kind="encoder", mask="padding", padding=3, scale_exponent=0.5, temperature=1.5,
         positional=True, window=4, latent_attention=True, latent_dim=5, latent_rope_dim=6,
         latent_absorbed=True, rope_base=500.0),
    dict(name="latent gate sink", n=6, n_k=10, d_model=8, heads=2, seed=2, kind="encoder",
         mask="none", padding=2, scale_exponent=0.5, temperature=1.0, positional=False,
         latent_attention=True, latent_dim=3, latent_rope_dim=2, learned_sink=True,
         sink_logit=-0.5, output_gate=True, gate_bias=0.25),
]


def sinusoid(n, d):
    pe = np.zeros((n, d))
    pos = np.arange(n)[:, None]
    for c in range(d):
        i = c // 2
        angle = pos[:, 0] / 10000.0 ** (2 * i / d)
        pe[:, c] = np.sin(angle) if c % 2 == 0 else np.cos(angle)
    return pe


def later_draws(case):
    """What is drawn after the inputs: differential attention's second in_proj_weight, the
    gate's w_θ and MLA's projections (None where the case has no such part)."""
    n, d, h = case["n"], case["d_model"], case["heads"]
    dk = d // h
    cross = case["kind"] == "cross"
    nk = case["n_k"] if cross else n
    rng = np.random.default_rng(case["seed"])
    rng.random((3 * d, d))
    rng.random((d, d))
    rng.standard_normal((n, d))
    if cross:
        rng.standard_normal((nk, d))
    second = gate = latent = None
    if case.get("differential"):
        second = math.sqrt(6.0 / (d + 3 * d)) * (2.0 * rng.random((3 * d, d)) - 1.0)
        rng.random((d, d))

    def draw(rows, cols):
        return rng.standard_normal((rows, cols)) / math.sqrt(rows)

    if case.get("latent_attention"):
        dc, dr = case["latent_dim"], case["latent_rope_dim"]
        latent = dict(w_dkv=draw(d, dc), w_uk=draw(dc, h * dk), w_uv=draw(dc, h * dk),
                      w_kr=draw(d, dr), w_q=draw(d, h * dk), w_qr=draw(d, h * dr))
    if case.get("output_gate"):
        gate = draw(d, h)
    return second, gate, latent


def rope_interleaved(x, base):
    """RoFormer's rotation of the pairs (2i, 2i+1) of each row t by t·base^(−2i/d)."""
    n, d = x.shape
    out = x.copy()
    for i in range(d // 2):
        angle = np.arange(n) * base ** (-2.0 * i / d)
        c, s = np.cos(angle), np.sin(angle)
        out[:, 2 * i] = x[:, 2 * i] * c - x[:, 2 * i + 1] * s
        out[:, 2 * i + 1] = x[:, 2 * i] * s + x[:, 2 * i + 1] * c
    return out


def latent_scores(case, x, w):
    """DeepSeek-V2's decompressed scores of every head, before the scale."""
    h, dk, dr = case["heads"], case["d_model"] // case["heads"], case["latent_rope_dim"]
    base = case.get("rope_base", 10000.0)
    c = x @ w["w_dkv"]
    k_rope = rope_interleaved(x @ w["w_kr"], base)
    out = []
    for u in range(h):
        q = np.hstack([x @ w["w_q"][:, u * dk:(u + 1) * dk],
                       rope_interleaved(x @ w["w_qr"][:, u * dr:(u + 1) * dr], base)])
        k = np.hstack([c @ w["w_uk"][:, u * dk:(u + 1) * dk], k_rope])
        out.append(q @ k.T)
    return out


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
    if case["kind"] == "decoder" or case["mask"] == "causal" or case.get("window", 0) > 0:
        masked |= np.triu(np.ones((n, nk), dtype=bool), k=1)
    if case.get("window", 0) > 0:  # query i sees i − w < j ≤ i
        masked |= np.tril(np.ones((n, nk), dtype=bool), k=-case["window"])
    if case["mask"] == "padding":
        masked[:, nk - case["padding"]:] = True
    width = d // h + (case["latent_rope_dim"] if case.get("latent_attention") else 0)
    scale = width ** (-case["scale_exponent"]) / case["temperature"]
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
    w_in2, gate_w, latent = later_draws(case)
    if w_in2 is not None:
        q2_all = x @ w_in2[0:d].T
        k2_all = kv @ w_in2[d:2 * d].T
    lambdas = case.get("differential_head_lambdas", [case.get("differential_lambda")] * h)
    mla = latent_scores(case, x, latent) if latent is not None else None
    weights, scores = [], []
    for i in range(h):
        q = q_all[:, i * dk:(i + 1) * dk]
        k = k_all[:, i * dk:(i + 1) * dk]
        s = mla[i] if mla is not None else q @ k.T
        t = np.where(masked, -np.inf, s * scale)
        if "sink_logit" in case:
            w = sink_rows(t, case["sink_logit"])
        else:
            w = softmax_rows(t, masked)
        if "differential_lambda" in case:
            s2 = q2_all[:, i * dk:(i + 1) * dk] @ k2_all[:, i * dk:(i + 1) * dk].T
            w = w - lambdas[i] * softmax_rows(np.where(masked, -np.inf, s2 * scale), masked)
        if gate_w is not None:
            gate = 1.0 / (1.0 + np.exp(-(x @ gate_w[:, i] + case["gate_bias"])))
            w = gate[:, None] * w
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
