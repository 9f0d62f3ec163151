#!/usr/bin/env python3
"""Regenerates every committed reference fixture under tests/reference/fixtures/.

Uses Debian's python3-numpy and python3-torch, and python3-matplotlib for the colormaps group
(apt-get install python3-numpy python3-torch python3-matplotlib).
CI never runs this: the fixtures are committed, and running it again must reproduce them
byte for byte (check with `git status` after running).

    python3 tests/reference/make_fixtures.py            # all fixture groups
    python3 tests/reference/make_fixtures.py random npy # some groups
"""
import importlib
import os
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
GROUPS = {
    "random": "make_random_fixtures",       # NumPy Generator streams (bitwise)
    "torchrandom": "make_torch_random_fixtures",  # PyTorch CPU generator streams (bitwise)
    "npy": "make_npy_fixtures",             # .npy/.npz files in every accepted flavour
    "torch": "make_torch_fixtures",         # nn.MultiheadAttention cases
    "experiments": "make_experiment_fixtures",  # E1-E3 printed by NumPy
    "colormaps": "make_colormap_fixtures",  # matplotlib colormap tables and norms
    "session": "make_session_fixtures",     # the main view's multi-head weights in NumPy
    "pipeline": "make_pipeline_fixtures",   # the main view's vectors, embeddings to output
    "session_torch": "make_session_torch_fixtures",  # the main view with generator torch
    "tokens": "make_token_fixtures",        # typed tokens' input vectors and sessions
    "kernels": "make_kernel_fixtures",      # the three kernels vs torch.softmax arithmetic
    "torchlistings": "torch_listings",      # E2/E4/E5/E7 --generator torch as PyTorch prints them
    "modern": "make_modern_fixtures",       # GQA, RoPE, ALiBi, sliding window and sinks
    "training": "make_training_fixtures",   # autograd gradients and optimizer steps
    "induction": "make_induction_fixtures",  # the attention-only transformer and its Adam
    "projections": "make_projection_fixtures",  # nn.MultiheadAttention(kdim, vdim)
    "batch": "make_batch_fixtures",         # inputs with their batch axis (docs/formats.md)
    "variants": "make_variant_fixtures",   # learned sinks, gates, differential, MLA (PyTorch)
    "variant_compute": "make_variant_compute_fixtures",  # the variants' tensor files in NumPy
    "variant_experiments": "make_variant_experiment_fixtures",  # E18-E20 in NumPy
}


def main(argv):
    wanted = argv[1:] or list(GROUPS)
    sys.path.insert(0, HERE)
    for name in wanted:
        if name not in GROUPS:
            sys.exit(f"unknown fixture group '{name}', expected one of {', '.join(GROUPS)}")
        module = importlib.import_module(GROUPS[name])
        module.main(os.path.join(HERE, "fixtures"))
        print(f"fixtures: {name} done")


if __name__ == "__main__":
    main(sys.argv)
