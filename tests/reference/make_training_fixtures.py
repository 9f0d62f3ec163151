#!/usr/bin/python3
"""PyTorch autograd references for the training engine (core/training/) and `attnlab train`:
tests/tst_training.cpp and tests/tst_cli_train.cpp.

Each case is one .npz under fixtures/training/ holding
    in_proj_weight 3E × E, in_proj_bias 3E, out_proj_weight E × E, out_proj_bias E, num_heads
    inputs B × n × E, targets B × n × E, attn_mask n × n bool (True = masked out; optional)
    row_weights B × n (rows scored by the loss; optional, all 1 when absent)
    scale_exponent, temperature (0-d float64), causal, position_width, cross_entropy (0-d int)
and the results of PyTorch
    grad cases:      expected_output B × n × E, expected_loss (0-d), grad_<parameter> (4 arrays)
    optimizer cases: optimizer (0 = SGD, 1 = Adam), lr, momentum, steps, expected_losses
                     (steps + 1: before each step, then after the last), final_<parameter>

The forward is written out explicitly with scale s = d_k^(−α) / τ, so that α = 0, 0.5 and 1 are
covered; the script asserts that at α = 0.5, τ = 1 it equals torch.nn.MultiheadAttention
(batch_first=True, query = key = value) to 1e-13. Sinusoidal positions (Vaswani et al. 2017,
§3.5; PE[pos, 2i] = sin(pos / 10000^(2i/p)), PE[pos, 2i+1] = cos(…)) are added to the last
position_width features. Losses: torch.nn.functional.mse_loss (mean over the elements of the
scored rows) and cross_entropy with probability targets (mean over scored rows). Optimizers:
torch.optim.SGD(momentum=μ) and torch.optim.Adam (defaults betas (0.9, 0.999), eps 1e-8).

The cli_* cases are inputs of `attnlab train --in` (plain SGD θ ← θ − lr·∇θ, MSE over every
element); cli_sgd_torch_module's reference is computed with torch.nn.MultiheadAttention itself.

Inputs and parameters come from numpy.random.default_rng with fixed seeds; torch runs on the CPU
with one thread. Written with a fixed zip timestamp: running again reproduces the files.
"""
import math
import os

import numpy as np
import torch

from make_torch_fixtures import write_npz

PARAMS = ["in_proj_weight", "in_proj_bias", "out_proj_weight", "out_proj_bias"]


def sinusoid(n, d):
    pe = np.zeros((n, d))
    for c in range(d):
        denominator = 10000.0 ** ((2 * (c // 2)) / d)
        for p in range(n):
            angle = p / denominator
            pe[p, c] = math.sin(angle) if c % 2 == 0 else math.cos(angle)
    return pe


def draw_case(seed, B, n, E, h, dtype, mask=None, row_weights=False, probabilities=False):
    rng = np.random.default_rng(seed)
    a = {}
    bound = np.sqrt(6.0 / (4 * E))
    a["in_proj_weight"] = rng.uniform(-bound, bound, (3 * E, E))
    a["in_proj_bias"] = rng.normal(0.0, 0.1, 3 * E)
    a["out_proj_weight"] = rng.uniform(-1 / np.sqrt(E), 1 / np.sqrt(E), (E, E))
    a["out_proj_bias"] = rng.normal(0.0, 0.1, E)
    a["inputs"] = rng.standard_normal((B, n, E))
    if probabilities:
        logits = rng.standard_normal((B, n, E))
        t = np.exp(logits)
        a["targets"] = t / t.sum(axis=-1, keepdims=True)
    else:
        a["targets"] = rng.standard_normal((B, n, E))
    if row_weights:
        w = (rng.random((B, n)) < 0.6).astype(np.float64)
        w[0, 0] = 1.0
        a["row_weights"] = w
    for name in list(a):
        a[name] = np.ascontiguousarray(a[name], dtype=dtype)
    a["num_heads"] = np.array(h, dtype=np.int64)
    if mask is not None:
        a["attn_mask"] = mask
    return a


def forward(params, x, h, alpha, tau, causal, position_width, mask):
    """Explicit multi-head self-attention, x: B × n × E tensors."""
    B, n, E = x.shape
    dk = E // h
    if position_width:
        pe = torch.from_numpy(sinusoid(n, position_width)).to(x.dtype)
        x = torch.cat([x[..., :E - position_width], x[..., E - position_width:] + pe], dim=-1)
    qkv = x @ params["in_proj_weight"].T + params["in_proj_bias"]  # B × n × 3E
    q, k, v = qkv[..., :E], qkv[..., E:2 * E], qkv[..., 2 * E:]
    split = lambda t: t.reshape(B, n, h, dk).transpose(1, 2)  # B × h × n × d_k
    q, k, v = split(q), split(k), split(v)
    s = (q @ k.transpose(-1, -2)) * (dk ** (-alpha) / tau)  # B × h × n × n
    masked = torch.zeros((n, n), dtype=torch.bool)
    if mask is not None:
        masked |= torch.from_numpy(mask)
    if causal:
        masked |= torch.triu(torch.ones((n, n), dtype=torch.bool), diagonal=1)
    s = s.masked_fill(masked, float("-inf"))
    w = torch.softmax(s, dim=-1)
    c = (w @ v).transpose(1, 2).reshape(B, n, E)
    return c @ params["out_proj_weight"].T + params["out_proj_bias"]


def loss_fn(y, targets, row_weights, cross_entropy):
    B, n, E = y.shape
    y2, t2 = y.reshape(B * n, E), targets.reshape(B * n, E)
    w = torch.ones(B * n, dtype=y.dtype) if row_weights is None else row_weights.reshape(B * n)
    if cross_entropy:
        per_row = torch.nn.functional.cross_entropy(y2, t2, reduction="none")
    else:
        per_row = torch.nn.functional.mse_loss(y2, t2, reduction="none").mean(dim=1)
    return (per_row * w).sum() / w.sum()


def tensors(a, tdtype):
    params = {p: torch.tensor(a[p], dtype=tdtype, requires_grad=True) for p in PARAMS}
    x = torch.from_numpy(a["inputs"]).to(tdtype)
    t = torch.from_numpy(a["targets"]).to(tdtype)
    rw = torch.from_numpy(a["row_weights"]).to(tdtype) if "row_weights" in a else None
    return params, x, t, rw


def settings(a, alpha, tau, causal, position_width, cross_entropy):
    a["scale_exponent"] = np.array(alpha, dtype=np.float64)
    a["temperature"] = np.array(tau, dtype=np.float64)
    a["causal"] = np.array(int(causal), dtype=np.int64)
    a["position_width"] = np.array(position_width, dtype=np.int64)
    a["cross_entropy"] = np.array(int(cross_entropy), dtype=np.int64)


def grad_case(seed, B, n, E, h, alpha, tau=1.0, causal=False, position_width=0, mask=None,
              row_weights=False, cross_entropy=False, dtype=np.float64):
    a = draw_case(seed, B, n, E, h, dtype, mask, row_weights, cross_entropy)
    tdtype = torch.float64 if dtype == np.float64 else torch.float32
    params, x, t, rw = tensors(a, tdtype)
    y = forward(params, x, h, alpha, tau, causal, position_width, a.get("attn_mask"))
    loss = loss_fn(y, t, rw, cross_entropy)
    loss.backward()
    settings(a, alpha, tau, causal, position_width, cross_entropy)
    a["expected_output"] = y.detach().numpy().copy()
    a["expected_loss"] = np.array(loss.item(), dtype=np.float64)
    for p in PARAMS:
        a["grad_" + p] = params[p].grad.numpy().copy()
    return a


def optimizer_case(seed, B, n, E, h, alpha, optimizer, lr, steps, momentum=0.0, causal=False,
                   cross_entropy=False, dtype=np.float64):
    a = draw_case(seed, B, n, E, h, dtype, None, False, cross_entropy)
    tdtype = torch.float64 if dtype == np.float64 else torch.float32
    params, x, t, rw = tensors(a, tdtype)
    if optimizer == "sgd":
        opt = torch.optim.SGD(list(params.values()), lr=lr, momentum=momentum)
    else:
        opt = torch.optim.Adam(list(params.values()), lr=lr)
    losses = []
    for _ in range(steps):
        opt.zero_grad()
        loss = loss_fn(forward(params, x, h, alpha, 1.0, causal, 0, None), t, rw, cross_entropy)
        losses.append(loss.item())
        loss.backward()
        opt.step()
    with torch.no_grad():
        losses.append(loss_fn(forward(params, x, h, alpha, 1.0, causal, 0, None), t, rw,
                              cross_entropy).item())
    settings(a, alpha, 1.0, causal, 0, cross_entropy)
    a["optimizer"] = np.array(0 if optimizer == "sgd" else 1, dtype=np.int64)
    a["lr"] = np.array(lr, dtype=np.float64)
    a["momentum"] = np.array(momentum, dtype=np.float64)
    a["steps"] = np.array(steps, dtype=np.int64)
    a["expected_losses"] = np.array(losses, dtype=np.float64)
    for p in PARAMS:
        a["final_" + p] = params[p].detach().numpy().copy()
    return a


def cli_module_case(seed, B, n, E, h, lr, steps, mask=None):
    """`attnlab train --in` input; reference from torch.nn.MultiheadAttention, plain SGD, MSE."""
    a = draw_case(seed, B, n, E, h, np.float64, mask)
    mha = torch.nn.MultiheadAttention(E, h, batch_first=True, dtype=torch.float64)
    with torch.no_grad():
        mha.in_proj_weight.copy_(torch.from_numpy(a["in_proj_weight"]))
        mha.in_proj_bias.copy_(torch.from_numpy(a["in_proj_bias"]))
        mha.out_proj.weight.copy_(torch.from_numpy(a["out_proj_weight"]))
        mha.out_proj.bias.copy_(torch.from_numpy(a["out_proj_bias"]))
    x = torch.from_numpy(a["inputs"])
    t = torch.from_numpy(a["targets"])
    kwargs = {"attn_mask": torch.from_numpy(mask)} if mask is not None else {}
    opt = torch.optim.SGD(mha.parameters(), lr=lr)
    losses = []
    for _ in range(steps):
        opt.zero_grad()
        loss = torch.nn.functional.mse_loss(mha(x, x, x, need_weights=False, **kwargs)[0], t)
        losses.append(loss.item())
        loss.backward()
        opt.step()
    with torch.no_grad():
        losses.append(torch.nn.functional.mse_loss(
            mha(x, x, x, need_weights=False, **kwargs)[0], t).item())
    a["lr"] = np.array(lr, dtype=np.float64)
    a["steps"] = np.array(steps, dtype=np.int64)
    a["expected_losses"] = np.array(losses, dtype=np.float64)
    a["final_in_proj_weight"] = mha.in_proj_weight.detach().numpy().copy()
    a["final_in_proj_bias"] = mha.in_proj_bias.detach().numpy().copy()
    a["final_out_proj_weight"] = mha.out_proj.weight.detach().numpy().copy()
    a["final_out_proj_bias"] = mha.out_proj.bias.detach().numpy().copy()
    return a


def check_against_module():
    """The explicit forward equals nn.MultiheadAttention at α = 0.5 (and with a causal mask)."""
    a = draw_case(900, 2, 5, 8, 2, np.float64)
    params, x, _, _ = tensors(a, torch.float64)
    mha = torch.nn.MultiheadAttention(8, 2, batch_first=True, dtype=torch.float64)
    with torch.no_grad():
        mha.in_proj_weight.copy_(params["in_proj_weight"])
        mha.in_proj_bias.copy_(params["in_proj_bias"])
        mha.out_proj.weight.copy_(params["out_proj_weight"])
        mha.out_proj.bias.copy_(params["out_proj_bias"])
        causal = torch.triu(torch.ones((5, 5), dtype=torch.bool), diagonal=1)
        for c in (False, True):
            ref = mha(x, x, x, need_weights=False, attn_mask=causal if c else None)[0]
            ours = forward(params, x, 2, 0.5, 1.0, c, 0, None)
            assert torch.max(torch.abs(ref - ours)).item() < 1e-13


def cases():
    diag = np.eye(6, dtype=np.bool_)  # no token attends to itself (the recall task's mask)
    return {
        "grad_scaled": grad_case(201, 3, 5, 8, 2, 0.5),
        "grad_unscaled": grad_case(202, 3, 5, 8, 2, 0.0),
        "grad_alpha1": grad_case(203, 3, 5, 8, 2, 1.0),
        "grad_causal": grad_case(204, 2, 6, 12, 3, 0.5, causal=True),
        "grad_temperature": grad_case(205, 2, 4, 8, 4, 0.5, tau=1.7),
        "grad_positions": grad_case(206, 2, 7, 8, 2, 0.5, causal=True, position_width=4),
        "grad_mask_rows": grad_case(207, 3, 6, 8, 2, 0.5, mask=diag, row_weights=True),
        "grad_cross_entropy": grad_case(208, 2, 5, 8, 2, 0.5, cross_entropy=True),
        "grad_h1_d16": grad_case(209, 2, 5, 16, 1, 0.5),
        "grad_scaled_float32": grad_case(211, 3, 5, 8, 2, 0.5, dtype=np.float32),
        "grad_unscaled_float32": grad_case(212, 3, 5, 8, 2, 0.0, dtype=np.float32),
        "grad_causal_float32": grad_case(213, 2, 6, 12, 3, 1.0, causal=True, dtype=np.float32),
        # n = 19: rows of two whole 8-float vectors and a tail of 3 (the AVX2 row passes)
        "grad_long_causal_float32": grad_case(214, 2, 19, 16, 2, 0.5, causal=True,
                                              dtype=np.float32),
        "grad_long_mask_float32": grad_case(215, 2, 19, 16, 4, 0.5,
                                            mask=np.eye(19, dtype=np.bool_), row_weights=True,
                                            dtype=np.float32),
        "opt_sgd": optimizer_case(221, 3, 5, 8, 2, 0.5, "sgd", 0.1, 4),
        "opt_sgd_momentum": optimizer_case(222, 3, 5, 8, 2, 0.0, "sgd", 0.05, 5, momentum=0.9),
        "opt_adam": optimizer_case(223, 3, 5, 8, 2, 0.5, "adam", 0.01, 5),
        "opt_adam_causal_ce": optimizer_case(224, 2, 6, 8, 2, 1.0, "adam", 0.02, 4, causal=True,
                                             cross_entropy=True),
        "opt_adam_float32": optimizer_case(225, 3, 5, 8, 2, 0.5, "adam", 0.01, 5,
                                           dtype=np.float32),
        "cli_sgd_torch_module": cli_module_case(231, 4, 6, 8, 2, 0.2, 5),
        "cli_sgd_causal_mask": cli_module_case(
            232, 3, 5, 12, 3, 0.1, 4, mask=np.triu(np.ones((5, 5), dtype=np.bool_), k=1)),
    }


def main(fixture_dir):
    torch.manual_seed(0)
    torch.set_num_threads(1)
    check_against_module()
    out_dir = os.path.join(fixture_dir, "training")
    for name, arrays in cases().items():
        write_npz(os.path.join(out_dir, name + ".npz"), arrays)


if __name__ == "__main__":
    main(os.path.join(os.path.dirname(os.path.abspath(__file__)), "fixtures"))
