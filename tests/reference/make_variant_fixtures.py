#!/usr/bin/python3
"""Attention variants of 2025 models, for tests/core/tst_variants.cpp: learned sinks, gated
attention, differential attention (NumPy, from the papers' formulas) and multi-head latent
attention (a PyTorch module written from DeepSeek-V2's equations), never from the C++ code.

Run with Debian's python3 (python3-numpy, python3-torch 1.13):

    /usr/bin/python3 tests/reference/make_variant_fixtures.py

Writes fixtures/variants/variants.npz (float64; seeded draws):

    sink_q, sink_k, sink_v     5 × 4, 7 × 4, 7 × 3       already-projected head, no mask
    sink_logit                 ()                        b
    sink_weights, sink_mass, sink_output                 w_ij = e^{s_ij} / (e^b + Σ_k e^{s_ik}),
                                                         s = q kᵀ / √d; mass = e^b / (…); w v
    sinkc_q, sinkc_k, sinkc_v  6 × 4, 6 × 4, 6 × 3       the same with a causal mask
    sinkc_logit, sinkc_weights, sinkc_mass, sinkc_output
    gate_output, gate_logits   5 × 6                     an attention output and gate logits
    gate_result                5 × 6                     σ(g) ⊙ O (Qiu et al. 2025, G1)
    diff_q1, diff_k1, diff_q2, diff_k2   6 × 4           two queries and keys per head
    diff_v                     6 × 5
    diff_lambda                ()
    diff_a1, diff_a2           6 × 6                     softmax(Q_i K_iᵀ / √4 + causal)
    diff_weights, diff_output  6 × 6, 6 × 5              A₁ − λA₂ and (A₁ − λA₂) V (Ye et al.
                                                         2025, Eq. 1)
    diff_lq1, diff_lk1, diff_lq2, diff_lk2   4           λ's reparameterisation vectors
    diff_layer, diff_lambda_init, diff_lambda_reparam    layer 3: λ_init = 0.8 − 0.6 e^{−0.3·2},
                                                         λ = e^{lq1·lk1} − e^{lq2·lk2} + λ_init
    mla_x                      7 × 16                    layer input, d_model 16
    mla_w_dkv, mla_w_uk, mla_w_uv, mla_w_kr, mla_w_q, mla_w_qr
                               16 × 6, 6 × 8, 6 × 10, 16 × 4, 16 × 8, 16 × 8
                                                         h = 2, d_c 6, d_h 4, d_v 5, d_r 4
    mla_weights                2 × 7 × 7                 per head, causal
    mla_output                 7 × 10                    heads' outputs side by side
    mla_latent, mla_rope_keys  7 × 6, 7 × 4              the cache: c and RoPE(x W_KR)
"""
import math
import os

import numpy as np
import torch

from make_torch_fixtures import write_npz

HERE = os.path.dirname(os.path.abspath(__file__))


def sink_attention(q, k, v, b, causal):
    s = q @ k.T / math.sqrt(q.shape[1])
    if causal:
        s = np.where(np.tril(np.ones(s.shape, dtype=bool)), s, -np.inf)
    m = np.maximum(s.max(axis=1, keepdims=True), b)
    e = np.exp(s - m)
    denom = np.exp(b - m) + e.sum(axis=1, keepdims=True)
    w = e / denom
    mass = (np.exp(b - m) / denom)[:, 0]
    return w, mass, w @ v


def softmax_causal(s):
    s = np.where(np.tril(np.ones(s.shape, dtype=bool)), s, -np.inf)
    e = np.exp(s - s.max(axis=1, keepdims=True))
    return e / e.sum(axis=1, keepdims=True)


def rope_interleaved(x, base=10000.0):
    """RoFormer's rotation of the pairs (2i, 2i + 1) of each row, row r at position r."""
    n, d = x.shape
    theta = base ** (-torch.arange(0, d, 2, dtype=torch.float64) / d)
    angle = torch.arange(n, dtype=torch.float64)[:, None] * theta[None, :]
    cos, sin = torch.cos(angle), torch.sin(angle)
    a, b = x[:, 0::2], x[:, 1::2]
    out = torch.empty_like(x)
    out[:, 0::2] = a * cos - b * sin
    out[:, 1::2] = a * sin + b * cos
    return out


class LatentAttention(torch.nn.Module):
    """DeepSeek-V2 §2.1.2–2.1.3 (Eq. 9–19) with queries x W_Q, decompressed: c = x W_DKV,
    k^C = c W_UK, v = c W_UV, k^R = RoPE(x W_KR) shared by the heads, q^C = x W_Q,
    q^R = RoPE(x W_QR), scores [q^C, q^R][k^C, k^R]ᵀ / √(d_h + d_r), causal."""

    def __init__(self, w, heads):
        super().__init__()
        self.w = {name: torch.from_numpy(a) for name, a in w.items()}
        self.h = heads

    def forward(self, x):
        w, h = self.w, self.h
        n = x.shape[0]
        d_h = w["uk"].shape[1] // h
        d_v = w["uv"].shape[1] // h
        d_r = w["kr"].shape[1]
        c = x @ w["dkv"]
        k_r = rope_interleaved(x @ w["kr"])
        q_c = x @ w["q"]
        q_r_all = x @ w["qr"]
        mask = torch.tril(torch.ones(n, n, dtype=torch.bool))
        weights, outputs = [], []
        for i in range(h):
            k = torch.cat([c @ w["uk"][:, i * d_h:(i + 1) * d_h], k_r], dim=1)
            v = c @ w["uv"][:, i * d_v:(i + 1) * d_v]
            q = torch.cat([q_c[:, i * d_h:(i + 1) * d_h],
                           rope_interleaved(q_r_all[:, i * d_r:(i + 1) * d_r])], dim=1)
            s = (q @ k.T) / math.sqrt(d_h + d_r)
            a = torch.softmax(s.masked_fill(~mask, float("-inf")), dim=-1)
            weights.append(a)
            outputs.append(a @ v)
        return torch.stack(weights), torch.cat(outputs, dim=1), c, k_r


def main(fixture_dir=os.path.join(HERE, "fixtures")):
    rng = np.random.default_rng(2025)
    out = {}

    q, k, v = rng.normal(size=(5, 4)), rng.normal(size=(7, 4)), rng.normal(size=(7, 3))
    b = 0.7
    w, mass, o = sink_attention(q, k, v, b, causal=False)
    out.update(sink_q=q, sink_k=k, sink_v=v, sink_logit=np.array(b), sink_weights=w,
               sink_mass=mass, sink_output=o)
    q, k, v = rng.normal(size=(6, 4)) * 2, rng.normal(size=(6, 4)), rng.normal(size=(6, 3))
    b = -1.3
    w, mass, o = sink_attention(q, k, v, b, causal=True)
    out.update(sinkc_q=q, sinkc_k=k, sinkc_v=v, sinkc_logit=np.array(b), sinkc_weights=w,
               sinkc_mass=mass, sinkc_output=o)

    o, g = rng.normal(size=(5, 6)), rng.normal(size=(5, 6)) * 3
    out.update(gate_output=o, gate_logits=g, gate_result=o / (1 + np.exp(-g)))

    q1, k1, q2, k2 = (rng.normal(size=(6, 4)) for _ in range(4))
    v = rng.normal(size=(6, 5))
    lam = 0.35
    a1 = softmax_causal(q1 @ k1.T / 2.0)
    a2 = softmax_causal(q2 @ k2.T / 2.0)
    out.update(diff_q1=q1, diff_k1=k1, diff_q2=q2, diff_k2=k2, diff_v=v,
               diff_lambda=np.array(lam), diff_a1=a1, diff_a2=a2,
               diff_weights=a1 - lam * a2, diff_output=(a1 - lam * a2) @ v)
    lq1, lk1, lq2, lk2 = (rng.normal(size=4) * 0.1 for _ in range(4))
    layer = 3
    init = 0.8 - 0.6 * math.exp(-0.3 * (layer - 1))
    out.update(diff_lq1=lq1, diff_lk1=lk1, diff_lq2=lq2, diff_lk2=lk2,
               diff_layer=np.array(layer, dtype=np.int64), diff_lambda_init=np.array(init),
               diff_lambda_reparam=np.array(math.exp(lq1 @ lk1) - math.exp(lq2 @ lk2) + init))

    heads, d_model, d_c, d_h, d_v, d_r, n = 2, 16, 6, 4, 5, 4, 7
    x = rng.normal(size=(n, d_model))
    w = {"dkv": rng.normal(size=(d_model, d_c)) / 4, "uk": rng.normal(size=(d_c, heads * d_h)),
         "uv": rng.normal(size=(d_c, heads * d_v)), "kr": rng.normal(size=(d_model, d_r)) / 4,
         "q": rng.normal(size=(d_model, heads * d_h)) / 4,
         "qr": rng.normal(size=(d_model, heads * d_r)) / 4}
    with torch.no_grad():
        weights, output, c, k_r = LatentAttention(w, heads)(torch.from_numpy(x))
    out.update(mla_x=x, mla_w_dkv=w["dkv"], mla_w_uk=w["uk"], mla_w_uv=w["uv"],
               mla_w_kr=w["kr"], mla_w_q=w["q"], mla_w_qr=w["qr"],
               mla_weights=weights.numpy(), mla_output=output.numpy(), mla_latent=c.numpy(),
               mla_rope_keys=k_r.numpy())
    path = os.path.join(fixture_dir, "variants", "variants.npz")
    write_npz(path, out)
    print(f"wrote {len(out)} arrays to {path}")


if __name__ == "__main__":
    main()
