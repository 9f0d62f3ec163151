#!/usr/bin/python3
"""Fixtures for grouped-query attention with RoPE, ALiBi, sliding windows and attention sinks
(core/attention/groupedattention.h, tests/tst_groupedattention.cpp).

Everything is written out here from the formulas, in PyTorch float64, independently of the C++:
  - RoPE (Su et al. 2021, arXiv:2104.09864) with theta_i = base^(-2i/d_k) at positions 0..n-1,
    in both conventions: interleaved pairs (x[2i], x[2i+1]) (RoFormer, GPT-J) and half,
    x*cos + rotate_half(x)*sin with rotate_half(x) = [-x2, x1] and each angle used twice
    (GPT-NeoX, Llama in Hugging Face). The script checks that both are the same rotation up to
    the fixed permutation [0, d/2, 1, d/2+1, ...] of the dimensions.
  - ALiBi (Press et al. 2021, arXiv:2108.12409): the slopes by the reference code's get_slopes
    (github.com/ofirpress/attention_with_linear_biases), bias -m_h*(i - j) with a causal mask,
    -m_h*|i - j| without.
  - Grouped-query attention: k and v of g heads repeated with torch.repeat_interleave(h // g)
    along the head axis, then softmax(q k^T * scale + bias + mask) v per head.
  - Masks: causal (top-left), sliding window w (query i sees i - w < j <= i), the first s keys
    exempt from the window (attention sinks), the last p keys padding.
Members: query (n_q x h*d_k), key (n_k x g*d_k), value (n_k x g*d_v), num_heads, num_kv_heads,
positional (0 none, 2 rope, 3 alibi), rope_convention (0 interleaved, 1 half), rope_base,
causal (bool), window (0 = none), sinks, padding, scale, alibi_slopes (h),
expected_weights (h x n_q x n_k, float64), expected_output (n_q x h*d_v, float64).
float32 cases store float32 inputs; the reference is evaluated in float64 from them.

    /usr/bin/python3 tests/reference/make_fixtures.py modern
"""
import math
import os

import numpy as np
import torch

from make_torch_fixtures import write_npz

POSITIONAL = {"none": 0, "rope": 2, "alibi": 3}
CONVENTION = {"interleaved": 0, "half": 1}


def rope_angles(n, d, base):
    """n x d/2 angles pos * theta_i, theta_i = base^(-2i/d)."""
    i = torch.arange(d // 2, dtype=torch.float64)
    theta = base ** (-2.0 * i / d)
    pos = torch.arange(n, dtype=torch.float64)
    return pos[:, None] * theta[None, :]


def rope_interleaved(x, base):
    """x: heads x n x d. Pairs (x[2i], x[2i+1]) rotated by pos * theta_i (RoFormer, GPT-J)."""
    n, d = x.shape[-2], x.shape[-1]
    a = rope_angles(n, d, base)
    cos, sin = torch.cos(a), torch.sin(a)
    x0, x1 = x[..., 0::2], x[..., 1::2]
    out = torch.empty_like(x)
    out[..., 0::2] = x0 * cos - x1 * sin
    out[..., 1::2] = x1 * cos + x0 * sin
    return out


def rotate_half(x):
    x1, x2 = x[..., : x.shape[-1] // 2], x[..., x.shape[-1] // 2:]
    return torch.cat((-x2, x1), dim=-1)


def rope_half(x, base):
    """x: heads x n x d. x*cos + rotate_half(x)*sin, each angle used twice (GPT-NeoX, Llama)."""
    n, d = x.shape[-2], x.shape[-1]
    a = rope_angles(n, d, base)
    emb = torch.cat((a, a), dim=-1)  # n x d
    return x * torch.cos(emb) + rotate_half(x) * torch.sin(emb)


def check_conventions_agree():
    """rope_half(x)[:, perm] == rope_interleaved(x[:, perm]) with perm = [0, d/2, 1, d/2+1, ...]:
    the same rotation of the same planes, the dimensions listed in another order."""
    g = torch.Generator().manual_seed(7)
    for d in (2, 8, 16, 64):
        x = torch.randn(3, 37, d, generator=g, dtype=torch.float64)
        perm = torch.stack([torch.arange(d // 2), torch.arange(d // 2) + d // 2], dim=1).reshape(-1)
        for base in (10000.0, 500.0):
            diff = (rope_half(x, base)[..., perm] - rope_interleaved(x[..., perm], base)).abs().max()
            assert diff <= 1e-12, f"RoPE conventions disagree by {diff} at d = {d}"
            # A rotation keeps norms, and the two conventions are different maps on the same x.
            assert torch.allclose(rope_half(x, base).norm(dim=-1), x.norm(dim=-1), atol=1e-12)
        if d > 2:
            assert (rope_half(x, 10000.0) - rope_interleaved(x, 10000.0)).abs().max() > 1e-3


def get_slopes(n):
    """The reference code's rule (ofirpress/attention_with_linear_biases, fairseq
    models/transformer.py)."""
    def get_slopes_power_of_2(n):
        start = 2 ** (-2 ** -(math.log2(n) - 3))
        ratio = start
        return [start * ratio ** i for i in range(n)]

    if math.log2(n).is_integer():
        return get_slopes_power_of_2(n)
    closest_power_of_2 = 2 ** math.floor(math.log2(n))
    return (get_slopes_power_of_2(closest_power_of_2)
            + get_slopes(2 * closest_power_of_2)[0::2][: n - closest_power_of_2])


def case(seed, n_q, n_k, h, g, d_k, d_v, dtype, positional="none", convention="half",
         base=10000.0, causal=False, window=0, sinks=0, padding=0):
    rng = np.random.default_rng(seed)
    query = rng.standard_normal((n_q, h * d_k)).astype(dtype)
    key = rng.standard_normal((n_k, g * d_k)).astype(dtype)
    value = rng.standard_normal((n_k, g * d_v)).astype(dtype)
    scale = 1.0 / math.sqrt(d_k)

    # heads x n x d (head i = columns i*d .. (i+1)*d - 1)
    q = torch.from_numpy(query.astype(np.float64)).reshape(n_q, h, d_k).transpose(0, 1)
    k = torch.from_numpy(key.astype(np.float64)).reshape(n_k, g, d_k).transpose(0, 1)
    v = torch.from_numpy(value.astype(np.float64)).reshape(n_k, g, d_v).transpose(0, 1)
    if positional == "rope":
        rope = rope_interleaved if convention == "interleaved" else rope_half
        q, k = rope(q, base), rope(k, base)
    k = torch.repeat_interleave(k, h // g, dim=0)  # h x n_k x d_k
    v = torch.repeat_interleave(v, h // g, dim=0)  # h x n_k x d_v

    scores = (q @ k.transpose(-1, -2)) * scale  # h x n_q x n_k
    slopes = torch.tensor(get_slopes(h), dtype=torch.float64)
    i = torch.arange(n_q, dtype=torch.float64)[:, None]
    j = torch.arange(n_k, dtype=torch.float64)[None, :]
    if positional == "alibi":
        distance = (i - j) if causal else (i - j).abs()
        scores = scores - slopes[:, None, None] * distance[None, :, :]
    masked = torch.zeros((n_q, n_k), dtype=torch.bool)
    if causal:
        masked |= j > i
    if window:
        masked |= (j <= i - window) & (j >= sinks)
    if padding:
        masked[:, n_k - padding:] = True
    scores = scores.masked_fill(masked, float("-inf"))
    weights = torch.softmax(scores, dim=-1)
    assert not torch.isnan(weights).any(), "a fixture row is fully masked"
    out = (weights @ v).transpose(0, 1).reshape(n_q, h * d_v)
    return {
        "query": query,
        "key": key,
        "value": value,
        "num_heads": np.array(h, dtype=np.int64),
        "num_kv_heads": np.array(g, dtype=np.int64),
        "positional": np.array(POSITIONAL[positional], dtype=np.int64),
        "rope_convention": np.array(CONVENTION[convention], dtype=np.int64),
        "rope_base": np.array(base, dtype=np.float64),
        "causal": np.array(causal),
        "window": np.array(window, dtype=np.int64),
        "sinks": np.array(sinks, dtype=np.int64),
        "padding": np.array(padding, dtype=np.int64),
        "scale": np.array(scale, dtype=np.float64),
        "alibi_slopes": slopes.numpy().copy(),
        "expected_weights": weights.numpy().copy(),
        "expected_output": out.numpy().copy(),
    }


def cases():
    f64, f32 = np.float64, np.float32
    return {
        "gqa_h8_g2_float64": case(301, 12, 12, 8, 2, 8, 6, f64),
        "gqa_h6_g3_cross_float64": case(302, 7, 11, 6, 3, 4, 5, f64, padding=2),
        "mqa_h4_g1_causal_float64": case(303, 10, 10, 4, 1, 6, 6, f64, causal=True),
        "gqa_h4_g2_float32": case(304, 9, 9, 4, 2, 8, 8, f32, causal=True),
        "rope_interleaved_float64": case(311, 16, 16, 2, 2, 8, 8, f64, "rope", "interleaved",
                                         causal=True),
        "rope_half_float64": case(312, 16, 16, 2, 2, 8, 8, f64, "rope", "half", causal=True),
        "rope_half_gqa_base500_float64": case(313, 13, 13, 4, 2, 16, 8, f64, "rope", "half",
                                              base=500.0),
        "rope_interleaved_float32": case(314, 16, 16, 2, 1, 8, 8, f32, "rope", "interleaved"),
        "alibi_h8_causal_float64": case(321, 14, 14, 8, 8, 4, 4, f64, "alibi", causal=True),
        "alibi_h12_bidirectional_float64": case(322, 9, 9, 12, 4, 4, 4, f64, "alibi"),
        "alibi_h6_float32": case(323, 10, 10, 6, 6, 4, 4, f32, "alibi", causal=True),
        "window4_float64": case(331, 20, 20, 2, 2, 8, 8, f64, causal=True, window=4),
        "window4_sinks2_float64": case(332, 20, 20, 2, 2, 8, 8, f64, causal=True, window=4,
                                       sinks=2),
        "window3_sinks1_padding_alibi_float64": case(333, 15, 15, 4, 2, 4, 4, f64, "alibi",
                                                     causal=True, window=3, sinks=1, padding=1),
        "window5_sinks3_rope_gqa_float32": case(334, 24, 24, 4, 2, 8, 8, f32, "rope", "half",
                                                causal=True, window=5, sinks=3),
    }


def main(fixture_dir):
    torch.set_num_threads(1)  # same reduction order on every run
    check_conventions_agree()
    out_dir = os.path.join(fixture_dir, "modern")
    for name, arrays in cases().items():
        write_npz(os.path.join(out_dir, name + ".npz"), arrays)


if __name__ == "__main__":
    main(os.path.join(os.path.dirname(os.path.abspath(__file__)), "fixtures"))
