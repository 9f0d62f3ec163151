#!/usr/bin/python3
"""Inputs saved with their leading batch axis, as docs/formats.md's PyTorch snippet saves them, for
tests/core/tst_tensorcase.cpp, tests/cli/tst_cli_compute.cpp and
tests/ui/window/tst_opentensors.cpp: fixtures/batch/mha_batch.npz holds

    query, key, value             B × n × E (B = 3, n = 6, E = 16; self-attention: the same x)
    in_proj_weight, in_proj_bias  3E × E, 3E   (mha.state_dict() names, "." → "_")
    out_proj_weight, out_proj_bias E × E, E
    num_heads                     0-d int64 (h = 4)
    key_padding_mask              B × n bool (True = padding: item 1 pads its last 2 keys)
    expected_output               B × n × E   what nn.MultiheadAttention returned
    expected_weights              B × h × n × n (average_attn_weights=False)

The lines between the markers below are docs/formats.md's snippet (run here, so the snippet is what
the tests read). float64 on the CPU with one thread; the zip members carry a fixed timestamp, so
running the script again reproduces the file byte for byte.
"""
import os

import numpy as np
import torch

from make_torch_fixtures import write_npz


def main(fixture_dir):
    torch.set_num_threads(1)
    torch.manual_seed(0)
    # --- docs/formats.md snippet ---
    mha = torch.nn.MultiheadAttention(16, 4, batch_first=True, dtype=torch.float64).eval()
    x = torch.randn(3, 6, 16, dtype=torch.float64)  # (B, n, E): a batch of 3 sequences
    pad = torch.zeros(3, 6, dtype=torch.bool)
    pad[1, 4:] = True  # key_padding_mask (B, n): True = padding
    out, w = mha(x, x, x, key_padding_mask=pad, average_attn_weights=False)
    sd = {k.replace(".", "_"): v.detach().numpy() for k, v in mha.state_dict().items()}
    arrays = dict(query=x.numpy(), key=x.numpy(), value=x.numpy(), num_heads=np.array(4),
                  key_padding_mask=pad.numpy(), **sd)  # np.savez("mine.npz", **arrays)
    # --- end of the docs/formats.md snippet ---
    assert sorted(sd) == ["in_proj_bias", "in_proj_weight", "out_proj_bias", "out_proj_weight"]
    arrays["expected_output"] = out.detach().numpy()
    arrays["expected_weights"] = w.detach().numpy()
    order = ["query", "key", "value", "in_proj_weight", "in_proj_bias", "out_proj_weight",
             "out_proj_bias", "num_heads", "key_padding_mask", "expected_output",
             "expected_weights"]
    write_npz(os.path.join(fixture_dir, "batch", "mha_batch.npz"),
              {name: np.asarray(arrays[name]) for name in order})


if __name__ == "__main__":
    main(os.path.join(os.path.dirname(os.path.abspath(__file__)), "fixtures"))
