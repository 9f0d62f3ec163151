#!/usr/bin/python3
"""Head-atlas numbers of real (tiny) checkpoints, for tests/core/tst_headcontributions.cpp and
tests/cli/tst_cli_heads.cpp: prefix matching, rank collapse, value-weighted norms, attention
rollout and head ablation, computed with the plain PyTorch forward passes of
make_model_fixtures.py (float64 on the checkpoints' stored float32 weights) and NumPy, never
from the C++ code.

Run with Debian's python3 (python3-torch 1.13, python3-numpy) after make_model_fixtures.py:

    /usr/bin/python3 tests/reference/make_head_contribution_fixtures.py

Reads fixtures/models/<case>/{config.json, model.safetensors, expected.npz} (not rewritten) and
writes fixtures/heads_models/<case>.npz:

    ids              n                       the expected.npz ids the forward runs on
    attention        L × h × n × n           softmax weights A
    values           L × g × n × d_k         v = x W_V + b_V per key/value head
    out_proj         L × h × d_k × d_model   W_O^h: the rows of W_O (as x·W_O applies it) that
                                             head h's outputs multiply
    value_norms      L × h × n × n           N_ij = ‖A_ij v_j W_O^h‖₂ (Kobayashi et al. 2020);
                                             query head h reads value head ⌊h·g/h_total⌋
    value_norm_sink  L × h                   mean_i N_i0 / Σ_j N_ij
    value_norm_mass  L × h                   mean_i Σ_j N_ij
    rollout          n × n                   Â_L ⋯ Â_1, Â_l = rows-normalised 0.5·mean_h A + 0.5·I
                                             (Abnar & Zuidema 2020)
    rank_collapse    L                       ‖X − 1 x̄ᵀ‖_F / ‖X‖_F of each layer's output X
                                             (Dong et al. 2021)
    prefix_ids       D × 2N                  the random sequences repeated twice:
                                             numpy.random.default_rng(PREFIX_SEED), N draws of
                                             integers(0, vocab) per sequence, one at a time
    prefix_matching  L × h                   mean over draws and second-half queries i of
                                             A[i, i − N + 1] (Olsson et al. 2022); no BOS (these
                                             folders have no tokenizer)
    top1             ()                      argmax of the last position's logits
    ablation_kl      L × h                   KL(p ‖ q) of the last position's next-token
                                             distribution, q with head (l, h)'s output zeroed
                                             before W_O
    ablation_top1    L × h                   argmax of q
    mean_ablation_kl L × h                   as ablation_kl, q with each of head (l, h)'s output
                                             rows replaced by their mean over the n positions
    mean_ablation_top1  L × h                argmax of that q
"""
import json
import os
import struct

import numpy as np
import torch

from make_model_fixtures import OUT as MODELS, gpt2_forward, llama_forward, t
from make_torch_fixtures import write_npz

HERE = os.path.dirname(os.path.abspath(__file__))
OUT = os.path.join(HERE, "fixtures", "heads_models")
CASES = ["gpt2", "llama_gqa"]
PREFIX_TOKENS, PREFIX_DRAWS, PREFIX_SEED = 5, 2, 7


def read_safetensors(path):
    """{name: float64 tensor} of an F32 file (huggingface/safetensors README, "Format")."""
    with open(path, "rb") as f:
        size = struct.unpack("<Q", f.read(8))[0]
        header = json.loads(f.read(size))
        data = f.read()
    out = {}
    for name, info in header.items():
        if name == "__metadata__":
            continue
        assert info["dtype"] == "F32"
        begin, end = info["data_offsets"]
        a = np.frombuffer(data[begin:end], dtype="<f4").reshape(info["shape"])
        out[name] = t(a.astype(np.float64))
    return out


def run(W, cfg, ids, ablate=None):
    tid = torch.tensor(ids)
    if cfg["model_type"] == "gpt2":
        return gpt2_forward(W, cfg, tid, ablate=ablate)
    return llama_forward(W, cfg, tid, ablate=ablate)


def head_out_proj(W, cfg, layer, heads, d):
    """W_O^h for every head: h × d_k × d_model."""
    if cfg["model_type"] == "gpt2":
        w = W[f"h.{layer}.attn.c_proj.weight"]  # Conv1D [in, out]
    else:
        w = W[f"model.layers.{layer}.self_attn.o_proj.weight"].T  # nn.Linear [out, in]
    return torch.stack([w[i * d:(i + 1) * d] for i in range(heads)])


def softmax_log(z):
    z = z - z.max()
    return z - np.log(np.exp(z).sum())


def make_case(name):
    folder = os.path.join(MODELS, name)
    with open(os.path.join(folder, "config.json")) as f:
        cfg = json.load(f)
    W = read_safetensors(os.path.join(folder, "model.safetensors"))
    ids = np.load(os.path.join(folder, "expected.npz"))["ids"]
    vocab = cfg["vocab_size"]
    rec, _, logits = run(W, cfg, ids)
    A = torch.stack(rec["attention"]).numpy()  # L × h × n × n
    L, heads, n, _ = A.shape
    values = torch.stack(rec["values"]).numpy()  # L × g × n × d
    g, d = values.shape[1], values.shape[3]
    out_proj = torch.stack([head_out_proj(W, cfg, l, heads, d) for l in range(L)]).numpy()

    norms = np.zeros_like(A)
    for l in range(L):
        for h in range(heads):
            f = values[l, h * g // heads] @ out_proj[l, h]  # n × d_model: v_j W_O^h
            norms[l, h] = np.linalg.norm(A[l, h][:, :, None] * f[None, :, :], axis=-1)
    totals = norms.sum(-1)
    sink = (norms[..., 0] / totals).mean(-1)
    mass = totals.mean(-1)

    rollout = np.eye(n)
    for l in range(L):
        mixed = 0.5 * A[l].mean(0) + 0.5 * np.eye(n)
        mixed = mixed / mixed.sum(-1, keepdims=True)
        rollout = mixed @ rollout

    collapse = []
    for x in rec["residual"]:
        x = x.numpy()
        collapse.append(np.linalg.norm(x - x.mean(0, keepdims=True)) / np.linalg.norm(x))

    rng = np.random.default_rng(PREFIX_SEED)
    N = PREFIX_TOKENS
    prefix_ids, prefix = [], np.zeros((L, heads))
    for _ in range(PREFIX_DRAWS):
        r = [int(rng.integers(0, vocab)) for _ in range(N)]
        seq = np.array(r + r, dtype=np.int64)
        prefix_ids.append(seq)
        P = torch.stack(run(W, cfg, seq)[0]["attention"]).numpy()
        rows = np.arange(N, 2 * N)
        prefix += P[:, :, rows, rows - N + 1].mean(-1)
    prefix /= PREFIX_DRAWS

    p_log = softmax_log(logits[-1].numpy())
    kl = {"zero": np.zeros((L, heads)), "mean": np.zeros((L, heads))}
    top1_after = {k: np.zeros((L, heads), dtype=np.int64) for k in kl}
    for how in kl:
        for l in range(L):
            for h in range(heads):
                q_logits = run(W, cfg, ids, ablate=(l, h, how))[2][-1].numpy()
                q_log = softmax_log(q_logits)
                kl[how][l, h] = (np.exp(p_log) * (p_log - q_log)).sum()
                top1_after[how][l, h] = int(np.argmax(q_logits))

    write_npz(os.path.join(OUT, name + ".npz"), {
        "ids": ids,
        "attention": A,
        "values": values,
        "out_proj": out_proj,
        "value_norms": norms,
        "value_norm_sink": sink,
        "value_norm_mass": mass,
        "rollout": rollout,
        "rank_collapse": np.array(collapse),
        "prefix_ids": np.stack(prefix_ids),
        "prefix_matching": prefix,
        "top1": np.array(int(np.argmax(logits[-1].numpy())), dtype=np.int64),
        "ablation_kl": kl["zero"],
        "ablation_top1": top1_after["zero"],
        "mean_ablation_kl": kl["mean"],
        "mean_ablation_top1": top1_after["mean"],
    })


def main():
    torch.set_grad_enabled(False)
    for name in CASES:
        make_case(name)
    print(f"wrote {len(CASES)} cases to {OUT}")


if __name__ == "__main__":
    main()
