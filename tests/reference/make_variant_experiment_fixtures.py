#!/usr/bin/python3
"""Experiments E18-E20 (docs/experiments.md) in NumPy from the papers' formulas, for
tests/core/tst_variant_experiments.cpp: the same draws as the app (numpy.random.default_rng(seed),
in the order each experiment documents) and every number of the result tables, never from the
C++ code.

    /usr/bin/python3 tests/reference/make_variant_experiment_fixtures.py

Writes fixtures/variants/variant_experiments.npz (float64), for the default parameters:

    e18_<column>        one value per row (spread-major, then b): the learned sink
                        w_ij = e^{s_ij} / (e^b + Σ_k e^{s_ik}) over keys 1 … n_k and the first-token
                        head, softmax over keys 0 … n_k with b added to key 0's scores
                        (s = σ q kᵀ / √d_k; key 0 is the sink token)
    e18_learned, e18_first      8 × 16: the heatmaps at b = 2, σ = 2 (learned: column 0 = sink mass)
    e19_<column>        one value per λ = 0, 0.1, …, 1: A₁ − λA₂ (Ye et al. 2025, Eq. 1) with
                        A₁ = softmax(S₁), A₂ = softmax(S₂) built from the planted scores
    e19_a1, e19_a2, e19_differential   16 × 64 at λ = 0.8
    e19_lambda_common   mean over rows of (1 − A₁[i, r_i]) / (1 − A₂[i, r_i])
    e20_<column>        one value per d_r = 4, 8, 16, 32: multi-head latent attention decompressed
                        (DeepSeek-V2 Eq. 9-19, interleaved RoPE), with and without the RoPE part
    e20_head_maps       8 × 24 × 24: the heads' causal weights at d_r = 32
    e20_weight_by_offset   5 × 24: mean weight by offset, no RoPE part then each d_r
"""
import math
import os

import numpy as np

from make_torch_fixtures import write_npz

HERE = os.path.dirname(os.path.abspath(__file__))


def softmax(s):
    e = np.exp(s - s.max(axis=1, keepdims=True))
    return e / e.sum(axis=1, keepdims=True)


def entropy(p):
    p = p[p > 0]
    return float(-(p * np.log(p)).sum())


def e18(out, seed=18, n_q=8, n_k=15, d_k=16, logits=(-4, -2, 0, 2, 4, 6, 8), spreads=(0, 1, 2, 4),
        figure=(2, 2)):
    rng = np.random.default_rng(seed)
    q = rng.standard_normal((n_q, d_k))
    k = rng.standard_normal((n_k + 1, d_k))
    v = rng.standard_normal((n_k + 1, d_k))

    def heads(b, spread):
        s = spread * q @ k.T / math.sqrt(d_k)  # column 0: the sink token
        content = s[:, 1:]
        denom = np.exp(b) + np.exp(content).sum(axis=1)
        learned = np.exp(content) / denom[:, None]
        mass = np.exp(b) / denom
        first = softmax(np.concatenate([s[:, :1] + b, content], axis=1))
        return learned, mass, first, softmax(content)

    cols = {c: [] for c in ("sink_logit", "spread", "sink_mass_mean", "first_token_mass_mean",
                            "remaining_entropy_mean", "relative_weights_max_diff",
                            "key0_output_norm_mean", "output_norm_learned_mean",
                            "output_norm_first_token_mean")}
    for spread in spreads:
        for b in logits:
            learned, mass, first, plain = heads(b, spread)
            rest = learned / learned.sum(axis=1, keepdims=True)
            rest_first = first[:, 1:] / first[:, 1:].sum(axis=1, keepdims=True)
            cols["sink_logit"].append(b)
            cols["spread"].append(spread)
            cols["sink_mass_mean"].append(mass.mean())
            cols["first_token_mass_mean"].append(first[:, 0].mean())
            cols["remaining_entropy_mean"].append(np.mean([entropy(r) for r in rest]))
            cols["relative_weights_max_diff"].append(
                max(np.abs(rest - plain).max(), np.abs(rest_first - plain).max()))
            cols["key0_output_norm_mean"].append((first[:, 0] * np.linalg.norm(v[0])).mean())
            cols["output_norm_learned_mean"].append(
                np.linalg.norm(learned @ v[1:], axis=1).mean())
            cols["output_norm_first_token_mean"].append(np.linalg.norm(first @ v, axis=1).mean())
    for c, values in cols.items():
        out["e18_" + c] = np.array(values, dtype=np.float64)
    learned, mass, first, _ = heads(*figure)
    out["e18_learned"] = np.concatenate([mass[:, None], learned], axis=1)
    out["e18_first"] = first


def e19(out, seed=19, n_q=16, n_k=64, d_n=16, common=2.0, own=0.5, signal=3.0, steps=11,
        figure_lambda=0.8):
    rng = np.random.default_rng(seed)
    r = np.array([int(rng.integers(0, n_k)) for _ in range(n_q)])
    zqc, zkc = rng.standard_normal((n_q, d_n)), rng.standard_normal((n_k, d_n))
    zq1, zk1 = rng.standard_normal((n_q, d_n)), rng.standard_normal((n_k, d_n))
    zq2, zk2 = rng.standard_normal((n_q, d_n)), rng.standard_normal((n_k, d_n))
    rng.standard_normal((n_k, d_n))  # V: the weights do not depend on it
    planted = np.zeros((n_q, n_k))
    planted[np.arange(n_q), r] = signal
    s_common = common * zqc @ zkc.T / math.sqrt(d_n)
    a1 = softmax(s_common + own * zq1 @ zk1.T / math.sqrt(d_n) + planted)
    a2 = softmax(s_common + own * zq2 @ zk2.T / math.sqrt(d_n))
    others = np.ones((n_q, n_k), dtype=bool)
    others[np.arange(n_q), r] = False
    cols = {c: [] for c in ("lambda", "relevant_weight_mean", "distractor_abs_mean", "snr",
                            "abs_entropy_mean", "negative_mass_mean", "row_sum_mean")}
    for step in range(steps):
        lam = 1.0 * step / (steps - 1)
        a = a1 - lam * a2
        relevant = a[np.arange(n_q), r].mean()
        distractor = np.abs(a[others]).mean()
        p = np.abs(a) / np.abs(a).sum(axis=1, keepdims=True)
        cols["lambda"].append(lam)
        cols["relevant_weight_mean"].append(relevant)
        cols["distractor_abs_mean"].append(distractor)
        cols["snr"].append(relevant / distractor)
        cols["abs_entropy_mean"].append(np.mean([entropy(row) for row in p]))
        cols["negative_mass_mean"].append(np.minimum(a, 0).sum(axis=1).mean())
        cols["row_sum_mean"].append(a.sum(axis=1).mean())
    for c, values in cols.items():
        out["e19_" + c] = np.array(values, dtype=np.float64)
    out["e19_a1"], out["e19_a2"] = a1, a2
    out["e19_differential"] = a1 - figure_lambda * a2
    out["e19_lambda_common"] = np.array(
        ((1 - a1[np.arange(n_q), r]) / (1 - a2[np.arange(n_q), r])).mean())


def rope_interleaved(x, base=10000.0):
    """RoFormer's rotation of the pairs (2i, 2i + 1) of each row, row r at position r."""
    n, d = x.shape
    theta = base ** (-np.arange(0, d, 2, dtype=np.float64) / d)
    angle = np.arange(n, dtype=np.float64)[:, None] * theta[None, :]
    a, b = x[:, 0::2], x[:, 1::2]
    o = np.empty_like(x)
    o[:, 0::2] = a * np.cos(angle) - b * np.sin(angle)
    o[:, 1::2] = a * np.sin(angle) + b * np.cos(angle)
    return o


def mla_maps(x, w_dkv, w_uk, w_q, w_kr, w_qr, h, d_h, d_r):
    """Each head's causal weights: softmax([q^C_i, q^R_i][k^C_i, k^R]ᵀ / √(d_h + d_r))."""
    n = x.shape[0]
    c = x @ w_dkv
    k_r = rope_interleaved(x @ w_kr)
    causal = np.tril(np.ones((n, n), dtype=bool))
    maps = []
    for i in range(h):
        s = (x @ w_q[:, i * d_h:(i + 1) * d_h]) @ (c @ w_uk[:, i * d_h:(i + 1) * d_h]).T
        s = s + rope_interleaved(x @ w_qr[:, i * d_r:(i + 1) * d_r]) @ k_r.T
        maps.append(softmax(np.where(causal, s / math.sqrt(d_h + d_r), -np.inf)))
    return maps


def head_correlation(maps):
    n = maps[0].shape[0]
    rows, cols = np.tril_indices(n)
    vs = [m[rows, cols] - 1.0 / (rows + 1) for m in maps]
    cc = np.corrcoef(np.array(vs))
    return cc[np.triu_indices(len(maps), 1)].mean()


def weight_by_offset(maps):
    n = maps[0].shape[0]
    return np.array([np.mean([np.mean(np.diagonal(m, -o)) for m in maps]) for o in range(n)])


def e20(out, seed=20, n=24, d_model=64, h=8, d_c=32, d_h=16, rope_dims=(4, 8, 16, 32), share=0.0,
        groups=2):
    rng = np.random.default_rng(seed)
    x = rng.standard_normal((n, d_model))

    def draw(rows, cols):
        return rng.standard_normal((rows, cols)) / math.sqrt(rows)

    w_dkv, w_uk, w_uv = draw(d_model, d_c), draw(d_c, h * d_h), draw(d_c, h * d_h)
    w_q = draw(d_model, h * d_h)
    d_max = max(rope_dims)
    w_kr, w_qr_shared, w_qr_own = draw(d_model, d_max), draw(d_model, d_max), draw(d_model, h * d_max)
    cols = {c: [] for c in ("rope_dim", "mla_cache_values", "mha_cache_values", "gqa_cache_values",
                            "head_correlation_rope", "head_correlation_no_rope",
                            "mean_abs_weight_change")}
    offsets = []
    for d_r in rope_dims:
        w_qr = np.concatenate([share * w_qr_shared[:, :d_r]
                               + math.sqrt(1 - share * share) * w_qr_own[:, i * d_max:i * d_max + d_r]
                               for i in range(h)], axis=1)
        maps = mla_maps(x, w_dkv, w_uk, w_q, w_kr[:, :d_r], w_qr, h, d_h, d_r)
        plain = mla_maps(x, w_dkv, w_uk, w_q, w_kr[:, :d_r], np.zeros_like(w_qr), h, d_h, d_r)
        cols["rope_dim"].append(d_r)
        cols["mla_cache_values"].append(d_c + d_r)
        cols["mha_cache_values"].append(2 * h * d_h)
        cols["gqa_cache_values"].append(2 * groups * d_h)
        cols["head_correlation_rope"].append(head_correlation(maps))
        cols["head_correlation_no_rope"].append(head_correlation(plain))
        cols["mean_abs_weight_change"].append(
            sum(np.abs(a - b).sum() for a, b in zip(maps, plain)) / (h * n * (n + 1) / 2))
        offsets.append(weight_by_offset(maps))
        if d_r == d_max:
            out["e20_head_maps"] = np.array(maps)
            no_rope_offsets = weight_by_offset(plain)
    for c, values in cols.items():
        out["e20_" + c] = np.array(values, dtype=np.float64)
    out["e20_weight_by_offset"] = np.array([no_rope_offsets] + offsets)


def main(fixture_dir=os.path.join(HERE, "fixtures")):
    out = {}
    e18(out)
    e19(out)
    e20(out)
    path = os.path.join(fixture_dir, "variants", "variant_experiments.npz")
    write_npz(path, out)
    print(f"wrote {len(out)} arrays to {path}")


if __name__ == "__main__":
    main()
