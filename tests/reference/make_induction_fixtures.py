#!/usr/bin/python3
"""PyTorch autograd references for the attention-only transformer (core/training/attentiononly.h)
and the generic Adam over its parameter list: tests/core/tst_attentiononly.cpp.

The model, written here from its definition (Elhage et al. 2021, "A Mathematical Framework for
Transformer Circuits", attention-only transformers) with PyTorch modules, float64:
    x = embedding[tokens] + positions[:n]                      (B, n, E)
    for each layer: x = x + torch.nn.MultiheadAttention(E, h, batch_first=True)(
                            x, x, x, attn_mask=strict upper triangle (True = masked))
    logits = x @ unembedding                                   (B, n, V)
    loss = cross_entropy(logits[:, q0:n-1], tokens[:, q0+1:n]) (mean over those queries)

Each case is one .npz under fixtures/induction/ holding
    embedding V × E, positions maxLength × E, unembedding E × V,
    layer<l>_in_proj_weight 3E × E, layer<l>_in_proj_bias 3E, layer<l>_out_proj_weight E × E,
    layer<l>_out_proj_bias E (l = 0 … L-1), num_heads, num_layers, first_scored_query (0-d int)
and
    grad cases: tokens B × n (int64), expected_logits B × n × V, expected_loss (0-d),
                grad_<each array above>
    adam cases: tokens steps × B × n, lr, steps, expected_losses (steps: before each update),
                final_<each array above> (torch.optim.Adam, default betas and eps)

Parameters come from numpy.random.default_rng with fixed seeds (the biases too, so that their
gradients are checked); torch runs on the CPU with one thread. Written with a fixed zip
timestamp: running again reproduces the files.
"""
import os

import numpy as np
import torch

from make_torch_fixtures import write_npz

LAYER_PARAMS = ["in_proj_weight", "in_proj_bias", "out_proj_weight", "out_proj_bias"]


def names(layers):
    out = ["embedding", "positions"]
    for l in range(layers):
        out += [f"layer{l}_{p}" for p in LAYER_PARAMS]
    return out + ["unembedding"]


def draw_parameters(rng, V, E, layers, max_length):
    a = {
        "embedding": rng.normal(0.0, 1.0, (V, E)),
        "positions": rng.normal(0.0, 1.0, (max_length, E)),
    }
    for l in range(layers):
        a[f"layer{l}_in_proj_weight"] = rng.normal(0.0, 0.3, (3 * E, E))
        a[f"layer{l}_in_proj_bias"] = rng.normal(0.0, 0.1, 3 * E)
        a[f"layer{l}_out_proj_weight"] = rng.normal(0.0, 0.3, (E, E))
        a[f"layer{l}_out_proj_bias"] = rng.normal(0.0, 0.1, E)
    a["unembedding"] = rng.normal(0.0, 0.3, (E, V))
    return a


class AttentionOnly(torch.nn.Module):
    def __init__(self, a, heads, layers):
        super().__init__()
        V, E = a["embedding"].shape
        self.embedding = torch.nn.Parameter(torch.from_numpy(a["embedding"].copy()))
        self.positions = torch.nn.Parameter(torch.from_numpy(a["positions"].copy()))
        self.attn = torch.nn.ModuleList()
        for l in range(layers):
            mha = torch.nn.MultiheadAttention(E, heads, batch_first=True, dtype=torch.float64)
            with torch.no_grad():
                mha.in_proj_weight.copy_(torch.from_numpy(a[f"layer{l}_in_proj_weight"]))
                mha.in_proj_bias.copy_(torch.from_numpy(a[f"layer{l}_in_proj_bias"]))
                mha.out_proj.weight.copy_(torch.from_numpy(a[f"layer{l}_out_proj_weight"]))
                mha.out_proj.bias.copy_(torch.from_numpy(a[f"layer{l}_out_proj_bias"]))
            self.attn.append(mha)
        self.unembedding = torch.nn.Parameter(torch.from_numpy(a["unembedding"].copy()))

    def named_arrays(self):
        out = {"embedding": self.embedding, "positions": self.positions}
        for l, mha in enumerate(self.attn):
            out[f"layer{l}_in_proj_weight"] = mha.in_proj_weight
            out[f"layer{l}_in_proj_bias"] = mha.in_proj_bias
            out[f"layer{l}_out_proj_weight"] = mha.out_proj.weight
            out[f"layer{l}_out_proj_bias"] = mha.out_proj.bias
        out["unembedding"] = self.unembedding
        return out

    def forward(self, tokens):
        n = tokens.shape[1]
        x = self.embedding[tokens] + self.positions[:n]
        causal = torch.triu(torch.ones(n, n, dtype=torch.bool), diagonal=1)
        for mha in self.attn:
            y, _ = mha(x, x, x, attn_mask=causal, need_weights=False)
            x = x + y
        return x @ self.unembedding


def loss_of(logits, tokens, first):
    V = logits.shape[-1]
    return torch.nn.functional.cross_entropy(logits[:, first:-1].reshape(-1, V),
                                             tokens[:, first + 1:].reshape(-1))


def settings(a, heads, layers, first):
    a["num_heads"] = np.array(heads, dtype=np.int64)
    a["num_layers"] = np.array(layers, dtype=np.int64)
    a["first_scored_query"] = np.array(first, dtype=np.int64)


def grad_case(seed, V, E, heads, layers, max_length, B, n, first, repeated):
    rng = np.random.default_rng(seed)
    a = draw_parameters(rng, V, E, layers, max_length)
    if repeated:
        half = rng.integers(0, V, (B, n // 2))
        tokens = np.concatenate([half, half], axis=1)
    else:
        tokens = rng.integers(0, V, (B, n))
    model = AttentionOnly(a, heads, layers)
    t = torch.from_numpy(tokens)
    logits = model(t)
    loss = loss_of(logits, t, first)
    loss.backward()
    settings(a, heads, layers, first)
    a["tokens"] = tokens.astype(np.int64)
    a["expected_logits"] = logits.detach().numpy().copy()
    a["expected_loss"] = np.array(loss.item(), dtype=np.float64)
    for name, p in model.named_arrays().items():
        a["grad_" + name] = p.grad.numpy().copy()
    return a


def adam_case(seed, V, E, heads, layers, max_length, B, N, lr, steps):
    rng = np.random.default_rng(seed)
    a = draw_parameters(rng, V, E, layers, max_length)
    half = rng.integers(0, V, (steps, B, N))
    tokens = np.concatenate([half, half], axis=2)
    model = AttentionOnly(a, heads, layers)
    arrays = model.named_arrays()
    opt = torch.optim.Adam(list(arrays.values()), lr=lr)
    losses = []
    for s in range(steps):
        t = torch.from_numpy(tokens[s])
        opt.zero_grad()
        loss = loss_of(model(t), t, N)
        losses.append(loss.item())
        loss.backward()
        opt.step()
    settings(a, heads, layers, N)
    a["tokens"] = tokens.astype(np.int64)
    a["lr"] = np.array(lr, dtype=np.float64)
    a["steps"] = np.array(steps, dtype=np.int64)
    a["expected_losses"] = np.array(losses, dtype=np.float64)
    for name, p in arrays.items():
        a["final_" + name] = p.detach().numpy().copy()
    return a


def cases():
    return {
        # repeated tokens, the repeated half scored; n = 6 < maxLength = 8 (two rows of W_pos
        # get no gradient)
        "grad_repeated": grad_case(301, 7, 8, 2, 2, 8, 3, 6, 3, True),
        # every query scored, random tokens, three layers of four heads
        "grad_all_queries": grad_case(302, 5, 8, 4, 3, 5, 2, 5, 0, False),
        # one head, one layer, d_k = E = 4
        "grad_one_layer": grad_case(303, 6, 4, 1, 1, 7, 2, 7, 2, False),
        "adam_three_steps": adam_case(311, 7, 8, 2, 2, 8, 3, 4, 0.01, 3),
    }


def main(fixture_dir):
    torch.manual_seed(0)
    torch.set_num_threads(1)
    out_dir = os.path.join(fixture_dir, "induction")
    for name, arrays in cases().items():
        write_npz(os.path.join(out_dir, name + ".npz"), arrays)


if __name__ == "__main__":
    main(os.path.join(os.path.dirname(os.path.abspath(__file__)), "fixtures"))
