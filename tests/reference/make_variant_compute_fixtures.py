#!/usr/bin/python3
"""Tensor files with the 2025 variants' arrays for `attnlab compute` (tests/cli/tst_cli_compute.cpp)
and the window's File → Open Tensors, with the results written out from the papers' formulas in
NumPy (never from the C++ code):

- learned sinks (gpt-oss; llama.cpp ggml_soft_max_add_sinks): w_ij = e^{s_ij} / (e^{b_h} +
  Σ_k e^{s_ik}), sink mass e^{b_h} / (…);
- differential attention (Ye et al. 2025, Eq. 1): A₁ − λ_h A₂ with A_i = softmax(Q_i K_iᵀ/√d + M);
- gated attention (Qiu et al. 2025, G1): each head's output times σ(g).

Heads are already projected: query n_q × h·d_k, key n_k × g·d_k, value n_k × g·d_v, query head i
reading key/value head ⌊i·g/h⌋ (torch.repeat_interleave); RoPE by make_modern_fixtures.py's
rotations at positions 0 … n − 1; the sliding window of width w keeps keys i − w < j ≤ i.

Run with Debian's python3 (python3-numpy, python3-torch 1.13):

    /usr/bin/python3 tests/reference/make_variant_compute_fixtures.py

Writes fixtures/variants/compute_<case>.npz, each holding the input arrays (query, key, value,
num_heads, num_kv_heads, sink_logits, query2, key2, lambda, gate_logits, attn_mask,
key_padding_mask as the case has them) and expected_weights (h × n_q × n_k), expected_output
(n_q × h·d_v), expected_row_sum (h × n_q), and per variant expected_sink_mass (h × n_q),
expected_first / expected_second (A₁, A₂, h × n_q × n_k), expected_gate (σ(g)). The options
each case runs with are in the test beside it (RoPE, the window).
"""
import math
import os

import numpy as np
import torch

from make_modern_fixtures import rope_half, rope_interleaved
from make_torch_fixtures import write_npz

HERE = os.path.dirname(os.path.abspath(__file__))


def heads_of(x, count, width):
    """n × count·width → count × n × width."""
    return x.reshape(x.shape[0], count, width).transpose(1, 0, 2)


def rope(x, convention):
    """count × n × d rotated at positions 0 … n − 1 (NumPy in, NumPy out)."""
    if convention is None:
        return x
    t = torch.from_numpy(np.ascontiguousarray(x, dtype=np.float64))
    f = rope_half if convention == "half" else rope_interleaved
    return f(t, 10000.0).numpy()


def scaled_scores(q, k, h, g, d_k, masked, convention):
    """h × n_q × n_k scores q_i k_{⌊i·g/h⌋}ᵀ / √d_k with −inf where masked."""
    qh = rope(heads_of(q, h, d_k), convention)
    kh = rope(heads_of(k, g, d_k), convention)
    s = np.stack([qh[i] @ kh[i * g // h].T for i in range(h)]) / math.sqrt(d_k)
    return np.where(masked[None], -np.inf, s)


def softmax(s):
    """Row softmax; a fully masked row gives zeros."""
    m = s.max(axis=-1, keepdims=True)
    m = np.where(np.isfinite(m), m, 0.0)
    e = np.exp(s - m)
    total = e.sum(axis=-1, keepdims=True)
    return np.divide(e, total, out=np.zeros_like(e), where=total > 0)


def sink_softmax(s, b):
    """Rows of e^{s_ij} / (e^{b_h} + Σ_k e^{s_ik}) and the sink mass, s: h × n_q × n_k."""
    b = np.asarray(b, dtype=np.float64)[:, None, None]
    m = np.maximum(s.max(axis=-1, keepdims=True), b)
    e = np.exp(s - m)
    sink = np.exp(b - m)
    denominator = sink + e.sum(axis=-1, keepdims=True)
    return e / denominator, (sink / denominator)[..., 0]


def head_outputs(weights, v, h, g, d_v):
    vh = heads_of(v, g, d_v)
    return np.concatenate([weights[i] @ vh[i * g // h] for i in range(h)], axis=1)


def sigmoid(x):
    return 1.0 / (1.0 + np.exp(-x))


def causal(n_q, n_k, window=0):
    i = np.arange(n_q)[:, None]
    j = np.arange(n_k)[None, :]
    masked = j > i
    if window:
        masked |= j <= i - window
    return masked


def sinks_gqa_rope_window(rng):
    """Learned sinks per head (one −inf: plain softmax), GQA h 4 / g 2, RoPE (half), window 4."""
    n, h, g, d_k, d_v = 12, 4, 2, 8, 6
    q = rng.normal(size=(n, h * d_k)) * 1.5
    k = rng.normal(size=(n, g * d_k))
    v = rng.normal(size=(n, g * d_v))
    b = np.array([0.5, -np.inf, 2.0, -1.0])
    s = scaled_scores(q, k, h, g, d_k, causal(n, n, window=4), "half")
    w, mass = sink_softmax(s, b)
    out = dict(query=q, key=k, value=v, num_heads=np.array(h), num_kv_heads=np.array(g),
               sink_logits=b)
    out.update(expected_weights=w, expected_output=head_outputs(w, v, h, g, d_v),
               expected_row_sum=w.sum(axis=-1), expected_sink_mass=mass)
    return out


def differential_gated(rng):
    """Differential attention, λ per head, multi-query (g 1), cross-attention with padded keys,
    and an output gate."""
    n_q, n_k, h, g, d_k, d_v = 7, 9, 2, 1, 4, 5
    q1, q2 = rng.normal(size=(n_q, h * d_k)), rng.normal(size=(n_q, h * d_k))
    k1, k2 = rng.normal(size=(n_k, g * d_k)), rng.normal(size=(n_k, g * d_k))
    v = rng.normal(size=(n_k, g * d_v))
    lam = np.array([0.3, 0.8])
    gate = rng.normal(size=(n_q, h * d_v)) * 2
    padding = np.zeros(n_k, dtype=bool)
    padding[-2:] = True
    masked = np.broadcast_to(padding[None, :], (n_q, n_k))
    a1 = softmax(scaled_scores(q1, k1, h, g, d_k, masked, None))
    a2 = softmax(scaled_scores(q2, k2, h, g, d_k, masked, None))
    w = a1 - lam[:, None, None] * a2
    out = dict(query=q1, key=k1, value=v, num_heads=np.array(h), num_kv_heads=np.array(g),
               query2=q2, key2=k2, **{"lambda": lam}, gate_logits=gate, key_padding_mask=padding)
    out.update(expected_weights=w,
               expected_output=head_outputs(w, v, h, g, d_v) * sigmoid(gate),
               expected_row_sum=w.sum(axis=-1), expected_first=a1, expected_second=a2,
               expected_gate=sigmoid(gate))
    return out


def differential_rope_causal(rng):
    """Differential attention, one λ for both heads, RoPE (interleaved) on both softmaxes,
    causal attn_mask."""
    n, h, d_k, d_v = 10, 2, 8, 4
    q1, q2 = rng.normal(size=(n, h * d_k)), rng.normal(size=(n, h * d_k))
    k1, k2 = rng.normal(size=(n, h * d_k)), rng.normal(size=(n, h * d_k))
    v = rng.normal(size=(n, h * d_v))
    lam = 0.5
    masked = causal(n, n)
    a1 = softmax(scaled_scores(q1, k1, h, h, d_k, masked, "interleaved"))
    a2 = softmax(scaled_scores(q2, k2, h, h, d_k, masked, "interleaved"))
    w = a1 - lam * a2
    out = dict(query=q1, key=k1, value=v, num_heads=np.array(h), query2=q2, key2=k2,
               **{"lambda": np.array(lam)}, attn_mask=masked)
    out.update(expected_weights=w, expected_output=head_outputs(w, v, h, h, d_v),
               expected_row_sum=w.sum(axis=-1), expected_first=a1, expected_second=a2)
    return out


def sink_plain_float32(rng):
    """Plain attention (one head, no num_heads) with one sink logit and a causal mask, float32
    inputs; the expected values in float64 from the float32 numbers."""
    n, d, d_v = 6, 8, 4
    q = rng.normal(size=(n, d)).astype(np.float32)
    k = rng.normal(size=(n, d)).astype(np.float32)
    v = rng.normal(size=(n, d_v)).astype(np.float32)
    b = np.array(1.5)
    masked = causal(n, n)
    s = scaled_scores(q.astype(np.float64), k.astype(np.float64), 1, 1, d, masked, None)
    w, mass = sink_softmax(s, [b])
    out = dict(query=q, key=k, value=v, sink_logits=b, attn_mask=masked)
    out.update(expected_weights=w,
               expected_output=head_outputs(w, v.astype(np.float64), 1, 1, d_v),
               expected_row_sum=w.sum(axis=-1), expected_sink_mass=mass)
    return out


def main(fixture_dir=os.path.join(HERE, "fixtures")):
    rng = np.random.default_rng(2026)
    cases = {
        "sinks_gqa_rope_window": sinks_gqa_rope_window(rng),
        "differential_gated": differential_gated(rng),
        "differential_rope_causal": differential_rope_causal(rng),
        "sink_plain_float32": sink_plain_float32(rng),
    }
    for name, arrays in cases.items():
        w = arrays["expected_weights"]
        if "expected_sink_mass" in arrays:
            assert np.abs(w.sum(axis=-1) + arrays["expected_sink_mass"] - 1).max() < 1e-12
        if "lambda" in arrays:
            lam = np.broadcast_to(np.asarray(arrays["lambda"]), (w.shape[0],))
            rows = w.sum(axis=-1)
            live = arrays["expected_first"].sum(axis=-1) > 0
            assert np.abs((rows - (1 - lam[:, None]))[live]).max() < 1e-12
        write_npz(os.path.join(fixture_dir, "variants", "compute_" + name + ".npz"), arrays)


if __name__ == "__main__":
    main()
