#!/usr/bin/python3
"""Fixtures for the three attention kernels (core/kernels, tests/core/tst_kernels.cpp torchReference).

Shapes chosen to reach every branch of the fast code: d_v a multiple of 16 (the AVX-512
micro-kernels take those), n beyond the streaming tile (128) and not a multiple of the row
blocks (8, 6, 24), odd d_k, cross-attention, causal and key-padding masks.
The reference is PyTorch's own arithmetic, torch.softmax(Q Kᵀ · scale + mask) @ V, evaluated in
float64 from the stored inputs (float32 cases store float32 inputs; the kernels must agree within
1e-5 in float32 and 1e-12 in float64). Members: query (n_q × d_k), key (n_k × d_k), value
(n_k × d_v), scale (), causal () bool (top-left), padding () int64 (last keys masked),
expected_output (n_q × d_v, float64).

    /usr/bin/python3 tests/reference/make_fixtures.py kernels
"""
import os

import numpy as np
import torch

from make_torch_fixtures import write_npz


def case(seed, n_q, n_k, d_k, d_v, dtype, causal=False, padding=0):
    rng = np.random.default_rng(seed)
    q = rng.standard_normal((n_q, d_k)).astype(dtype)
    k = rng.standard_normal((n_k, d_k)).astype(dtype)
    v = rng.standard_normal((n_k, d_v)).astype(dtype)
    scale = 1.0 / np.sqrt(d_k)
    scores = torch.from_numpy(q.astype(np.float64)) @ torch.from_numpy(k.astype(np.float64)).T
    scores = scores * scale
    masked = torch.zeros((n_q, n_k), dtype=torch.bool)
    if causal:
        masked |= torch.triu(torch.ones((n_q, n_k), dtype=torch.bool), diagonal=1)
    if padding:
        masked[:, n_k - padding:] = True
    scores = scores.masked_fill(masked, float("-inf"))
    weights = torch.softmax(scores, dim=-1)
    out = weights @ torch.from_numpy(v.astype(np.float64))
    return {
        "query": q,
        "key": k,
        "value": v,
        "scale": np.array(scale, dtype=np.float64),
        "causal": np.array(causal),
        "padding": np.array(padding, dtype=np.int64),
        "expected_output": out.numpy().copy(),
    }


def cases():
    return {
        "plain_float64": case(201, 160, 160, 64, 64, np.float64),
        "plain_float32": case(202, 160, 160, 64, 64, np.float32),
        "causal_float32": case(203, 160, 160, 64, 64, np.float32, causal=True),
        "cross_padding_float32": case(204, 70, 150, 33, 48, np.float32, padding=20),
        "cross_causal_float64": case(205, 150, 70, 33, 48, np.float64, causal=True),
    }


def main(fixture_dir):
    torch.set_num_threads(1)  # same reduction order on every run
    out_dir = os.path.join(fixture_dir, "kernels")
    for name, arrays in cases().items():
        write_npz(os.path.join(out_dir, name + ".npz"), arrays)


if __name__ == "__main__":
    main(os.path.join(os.path.dirname(os.path.abspath(__file__)), "fixtures"))
