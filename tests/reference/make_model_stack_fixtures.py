#!/usr/bin/python3
"""A model's attention stack as docs/formats.md's Hugging Face snippet saves it, made here with two
stacked torch.nn.MultiheadAttention layers (average_attn_weights=False gives the per-head weights
a transformers model returns in outputs.attentions), for tests/ui/window/tst_tensorwindow.cpp and
tests/cli/tst_cli_heatmap.cpp:

fixtures/modelstack/stack.npz        attentions (L, H, n, n) = (2, 4, 6, 6) float64 of batch
                                     item 0; tokens: 6 strings (numpy dtype '<U5', one with an
                                     accent, so the UTF-32 items are read as such)
fixtures/modelstack/stack_batch.npz  attentions (L, B, H, n, n) = (2, 2, 4, 6, 6): both items
                                     (numpy.stack of the per-layer (B, H, n, n) tensors, as
                                     numpy.stack(outputs.attentions) gives); the same tokens
fixtures/modelstack/expected.npz     w_l{l}_b{b} (H, n, n): each layer's weights as PyTorch
                                     returned them, one array per layer and item (what the app
                                     must show, 1e-12)

Layer 2 reads layer 1's output plus the residual x, as a transformer block does (no layer
norm: the weights are all that is checked). float64, one thread, fixed seed; the zip members
carry a fixed timestamp, so running the script again reproduces the files byte for byte.
"""
import os

import numpy as np
import torch

from make_torch_fixtures import write_npz

TOKENS = ["the", "café", "sat", "on", "a", "mat"]


def main(fixture_dir):
    torch.set_num_threads(1)
    torch.manual_seed(0)
    n, e, h, b = len(TOKENS), 16, 4, 2
    layers = [torch.nn.MultiheadAttention(e, h, batch_first=True, dtype=torch.float64).eval()
              for _ in range(2)]
    x = torch.randn(b, n, e, dtype=torch.float64)
    attentions = []  # one (B, H, n, n) per layer, as outputs.attentions
    with torch.no_grad():
        for mha in layers:
            out, w = mha(x, x, x, average_attn_weights=False)
            attentions.append(w.numpy())
            x = x + out
    stack = np.stack(attentions)  # (L, B, H, n, n)
    tokens = np.array(TOKENS)
    assert tokens.dtype == np.dtype("<U4"), tokens.dtype
    out_dir = os.path.join(fixture_dir, "modelstack")
    write_npz(os.path.join(out_dir, "stack.npz"), {"attentions": stack[:, 0], "tokens": tokens})
    write_npz(os.path.join(out_dir, "stack_batch.npz"), {"attentions": stack, "tokens": tokens})
    expected = {f"w_l{l}_b{i}": attentions[l][i] for l in range(2) for i in range(b)}
    write_npz(os.path.join(out_dir, "expected.npz"), expected)
    rows = stack.sum(axis=-1)
    print("largest |row sum - 1|:", np.abs(rows - 1).max(), "largest weight:", stack.max())


if __name__ == "__main__":
    main(os.path.join(os.path.dirname(os.path.abspath(__file__)), "fixtures"))
