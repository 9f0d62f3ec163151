#!/usr/bin/python3
"""nn.MultiheadAttention with separate projections (kdim, vdim ≠ embed_dim) for
tests/tst_projections.cpp: one .npz per case under fixtures/projections/, each also an input of
`attnlab compute`:

    query, key, value             n_q × E, n_k × kdim, n_k × vdim
    q_proj_weight                 E × E       (PyTorch's parameter names when kdim or vdim ≠ E:
    k_proj_weight                 E × kdim     _qkv_same_embed_dim is False, in_proj_weight
    v_proj_weight                 E × vdim     is None)
    in_proj_bias                  3·E         (absent when bias=False)
    out_proj_weight, out_proj_bias E × E, E
    num_heads                     0-d int64
    attn_mask, key_padding_mask   optional (True = masked out / padding)
    expected_output               n_q × E     what PyTorch 1.13 returned
    expected_weights              h × n_q × n_k (need_weights=True, average_attn_weights=False)

Inputs and parameters come from numpy.random.default_rng (fixed seeds) and are copied into the
module; the module runs in float64 (float32 for *_float32) on the CPU with one thread. Files
carry a fixed zip timestamp: running the script again reproduces them byte for byte.
"""
import math
import os

import numpy as np
import torch

from make_modern_fixtures import get_slopes, rope_half
from make_torch_fixtures import write_npz


def kvdim_case(seed, embed, num_heads, kdim, vdim, n_q, n_k, bias=True, dtype=np.float64,
               attn_mask=None, key_padding_mask=None):
    rng = np.random.default_rng(seed)
    a = {}
    # Draw order: query, key, value, q/k/v_proj_weight, in_proj_bias, out_proj_weight, bias.
    a["query"] = rng.standard_normal((n_q, embed))
    a["key"] = rng.standard_normal((n_k, kdim))
    a["value"] = rng.standard_normal((n_k, vdim))
    a["q_proj_weight"] = rng.uniform(-0.4, 0.4, (embed, embed))
    a["k_proj_weight"] = rng.uniform(-0.4, 0.4, (embed, kdim))
    a["v_proj_weight"] = rng.uniform(-0.4, 0.4, (embed, vdim))
    if bias:
        a["in_proj_bias"] = rng.normal(0.0, 0.1, 3 * embed)
    a["out_proj_weight"] = rng.uniform(-1 / np.sqrt(embed), 1 / np.sqrt(embed), (embed, embed))
    if bias:
        a["out_proj_bias"] = rng.normal(0.0, 0.1, embed)
    for name in list(a):
        a[name] = np.ascontiguousarray(a[name], dtype=dtype)
    a["num_heads"] = np.array(num_heads, dtype=np.int64)
    if attn_mask is not None:
        a["attn_mask"] = attn_mask
    if key_padding_mask is not None:
        a["key_padding_mask"] = key_padding_mask

    tdtype = torch.float64 if dtype == np.float64 else torch.float32
    mha = torch.nn.MultiheadAttention(embed, num_heads, bias=bias, batch_first=True, kdim=kdim,
                                      vdim=vdim, dtype=tdtype)
    assert not mha._qkv_same_embed_dim and mha.in_proj_weight is None
    mha.eval()
    with torch.no_grad():
        for name in ("q_proj_weight", "k_proj_weight", "v_proj_weight"):
            getattr(mha, name).copy_(torch.from_numpy(a[name]))
        mha.out_proj.weight.copy_(torch.from_numpy(a["out_proj_weight"]))
        if bias:
            mha.in_proj_bias.copy_(torch.from_numpy(a["in_proj_bias"]))
            mha.out_proj.bias.copy_(torch.from_numpy(a["out_proj_bias"]))
        kwargs = {}
        if attn_mask is not None:
            kwargs["attn_mask"] = torch.from_numpy(attn_mask)
        if key_padding_mask is not None:
            kwargs["key_padding_mask"] = torch.from_numpy(key_padding_mask)[None]
        out, weights = mha(torch.from_numpy(a["query"])[None], torch.from_numpy(a["key"])[None],
                           torch.from_numpy(a["value"])[None], need_weights=True,
                           average_attn_weights=False, **kwargs)
    a["expected_output"] = out[0].numpy().copy()
    a["expected_weights"] = weights[0].numpy().copy()
    return a


def positioned_case(seed, embed, num_heads, kdim, vdim, n, positional="none", window=0, sinks=0):
    """Separate projections (kdim, vdim) with RoPE (half convention, base 10000) or ALiBi on the
    projected heads, or a causal sliding window of width w with s sinks (query i sees
    i - w < j <= i, and keys j < s always), as `attnlab compute --positional rope|alibi
    --window w --sinks s` asks. nn.MultiheadAttention has no positions, so the layer is written
    out: q = query W_q^T + b_q (likewise k, v), heads split, positions applied, softmax(q k^T /
    sqrt(d_k) + bias, masked), heads concatenated, out_proj. expected_* as in kvdim_case."""
    a = kvdim_case(seed, embed, num_heads, kdim, vdim, n, n)
    a.pop("expected_output")
    a.pop("expected_weights")
    t = {k: torch.from_numpy(v) for k, v in a.items()}
    b = t["in_proj_bias"]
    q = t["query"] @ t["q_proj_weight"].T + b[:embed]
    k = t["key"] @ t["k_proj_weight"].T + b[embed:2 * embed]
    v = t["value"] @ t["v_proj_weight"].T + b[2 * embed:]
    d_k = embed // num_heads
    q = q.reshape(n, num_heads, d_k).transpose(0, 1)  # h x n x d_k
    k = k.reshape(n, num_heads, d_k).transpose(0, 1)
    v = v.reshape(n, num_heads, d_k).transpose(0, 1)
    if positional == "rope":
        q, k = rope_half(q, 10000.0), rope_half(k, 10000.0)
    scores = (q @ k.transpose(-1, -2)) / math.sqrt(d_k)
    i = torch.arange(n, dtype=torch.float64)[:, None]
    j = torch.arange(n, dtype=torch.float64)[None, :]
    if positional == "alibi":  # no causal mask here: -m_h |i - j|
        slopes = torch.tensor(get_slopes(num_heads), dtype=torch.float64)
        scores = scores - slopes[:, None, None] * (i - j).abs()[None]
    if window:
        masked = (j > i) | ((j <= i - window) & (j >= sinks))
        scores = scores.masked_fill(masked, float("-inf"))
    weights = torch.softmax(scores, dim=-1)
    concat = (weights @ v).transpose(0, 1).reshape(n, embed)
    out = concat @ t["out_proj_weight"].T + t["out_proj_bias"]
    a["expected_output"] = out.numpy().copy()
    a["expected_weights"] = weights.numpy().copy()
    return a


def cases():
    causal = np.triu(np.ones((5, 7), dtype=np.bool_), k=1)
    padding = np.array([False] * 5 + [True] * 2)
    return {
        "kvdim": kvdim_case(201, 16, 4, 10, 6, 5, 7),
        "kvdim_h1": kvdim_case(202, 8, 1, 3, 12, 4, 6),
        "kdim_only": kvdim_case(203, 12, 3, 20, 12, 6, 6),
        "vdim_only": kvdim_case(204, 12, 2, 12, 5, 3, 9),
        "kvdim_no_bias": kvdim_case(205, 8, 2, 5, 7, 4, 5, bias=False),
        "kvdim_masks": kvdim_case(206, 16, 4, 10, 6, 5, 7, attn_mask=causal,
                                  key_padding_mask=padding),
        "kvdim_float32": kvdim_case(207, 16, 4, 10, 6, 5, 7, dtype=np.float32),
        # `attnlab compute --positional rope`, `--positional alibi`, `--window 2 --sinks 1`
        "kvdim_rope": positioned_case(208, 16, 4, 10, 6, 6, positional="rope"),
        "kvdim_alibi": positioned_case(209, 16, 4, 10, 6, 6, positional="alibi"),
        "kvdim_window2_sinks1": positioned_case(210, 16, 4, 10, 6, 6, window=2, sinks=1),
    }


def main(fixture_dir):
    torch.manual_seed(0)
    torch.set_num_threads(1)  # same reduction order on every run
    out_dir = os.path.join(fixture_dir, "projections")
    for name, arrays in cases().items():
        write_npz(os.path.join(out_dir, name + ".npz"), arrays)


if __name__ == "__main__":
    main(os.path.join(os.path.dirname(os.path.abspath(__file__)), "fixtures"))
