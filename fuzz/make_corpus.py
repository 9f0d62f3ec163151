#!/usr/bin/env python3
"""Makes the seed corpora of the libFuzzer targets, fuzz/corpus/<target>/, from committed test
fixtures (tests/reference/fixtures). Run from anywhere: python3 fuzz/make_corpus.py. The seeds
are small (a few KiB each); libFuzzer mutates them, so each target starts from valid inputs:

  npy         every .npy fixture (valid, malformed, the inputs the fuzzer found)
  npz         small .npz fixtures, training cases (`attnlab train --in`) and the fuzz findings'
              archives
  tensorcase  tensor files in fuzz_tensorcase's record format: [name index][length LE16][.npy],
              PyTorch layouts and already-projected heads (query, key, value, num_heads,
              num_kv_heads), and a batched (B, n, E) case
  sessionfile session files (the demo session, the session fixture, the fuzz findings, and the
              demo with each newer key: generator, rope, alibi, kv_heads, window, sinks, and the
              Training tab's settings)
  tokenizer   sentences with punctuation, special tokens, several scripts, and the token
              fixture's tokens
  modelfolder [config length LE16][config.json][model.safetensors] of small model fixtures
  tokenizerfiles  [format byte][files]: a small GPT-2 vocab.json NUL merges.txt, and BERT
              vocab.txt files
"""
import json
import pathlib
import shutil
import struct
import zipfile

ROOT = pathlib.Path(__file__).resolve().parent.parent
FIXTURES = ROOT / "tests" / "reference" / "fixtures"
CORPUS = ROOT / "fuzz" / "corpus"

# The order of kNames in fuzz_tensorcase.cpp; index len(NAMES) toggles the mask convention.
NAMES = ["query", "key", "value", "in_proj_weight", "in_proj_bias", "out_proj_weight",
         "out_proj_bias", "num_heads", "attn_mask", "key_padding_mask", "weights",
         "q_proj_weight", "k_proj_weight", "v_proj_weight", "num_kv_heads"]


def fresh(name):
    d = CORPUS / name
    if d.exists():
        shutil.rmtree(d)
    d.mkdir(parents=True)
    return d


def copy(files, dest):
    for f in files:
        if f.stat().st_size <= 16384:
            shutil.copy(f, dest / f.name)


def tensorcase_seed(npz, allowed=False):
    out = bytearray()
    if allowed:
        out += struct.pack("<BH", len(NAMES), 0)
    with zipfile.ZipFile(npz) as z:
        for info in z.infolist():
            name = info.filename[:-4] if info.filename.endswith(".npy") else info.filename
            if name not in NAMES:
                continue
            data = z.read(info.filename)
            if len(data) > 0xFFFF:
                continue
            out += struct.pack("<BH", NAMES.index(name), len(data)) + data
    return bytes(out)


def modelfolder_corpus():
    dest = fresh("modelfolder")
    for case in ("gpt2", "llama_gqa", "qwen3", "bert", "qwen2_window"):
        folder = FIXTURES / "models" / case
        config = (folder / "config.json").read_bytes()
        weights = (folder / "model.safetensors").read_bytes()
        (dest / f"{case}.bin").write_bytes(struct.pack("<H", len(config)) + config + weights)


def tokenizerfiles_corpus():
    dest = fresh("tokenizerfiles")
    # GPT-2's byte-level alphabet for printable ASCII is the characters themselves; "Ġ" is the
    # space.
    vocab = {c: i for i, c in enumerate("!\",.:'0123456789HWabcdehilnorstwĠ")}
    merges = ["h e", "l l", "Ġ w", "o r", "he ll", "Ġw or"]
    for a, b in (m.split() for m in merges):
        vocab[a + b] = len(vocab)
    (dest / "gpt2.bin").write_bytes(b"\0" + json.dumps(vocab).encode() + b"\0"
                                    + ("#version: 0.2\n" + "\n".join(merges)).encode())
    words = ["[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]", "hello", "world", ",", "!", "it",
             "'", "s", "##s", "na", "##ive", "cafe", "東", "京"]
    (dest / "bert-cased.bin").write_bytes(b"\1" + "\n".join(words).encode())
    (dest / "bert-lower.bin").write_bytes(b"\5" + "\n".join(words).encode())
    text = "Hello, world! It's naïve café 東京 [CLS] x\t\r\n".encode() + b"\xff"
    (dest / "wordpiece-text.bin").write_bytes(b"\2" + text)
    (dest / "wordpiece-text-lower.bin").write_bytes(b"\3" + text)


def main():
    npy = fresh("npy")
    copy(sorted((FIXTURES / "npy").glob("*.npy")), npy)
    copy(sorted((FIXTURES / "fuzz").glob("*.npy")), npy)

    npz = fresh("npz")
    copy(sorted((FIXTURES / "npy").glob("*.npz")), npz)
    copy([FIXTURES / "torch" / f for f in ("hand_d2.npz", "plain.npz", "h1.npz")], npz)
    copy([FIXTURES / "fuzz" / f for f in ("cli-fortran-stride-overflow.npz",
                                          "cli-mh-dmodel0-hugeheads.npz")], npz)
    # Training cases (inputs, targets and a layer in PyTorch's layout).
    copy([FIXTURES / "training" / f for f in ("cli_sgd_torch_module.npz", "grad_causal_float32.npz",
                                              "grad_cross_entropy.npz")], npz)
    # A model's attention stack (layers, heads, n_q, n_k) and (layers, B, …) with string tokens.
    copy([FIXTURES / "modelstack" / f for f in ("stack.npz", "stack_batch.npz")], npz)

    tc = fresh("tensorcase")
    for f in ("hand_d2", "plain", "plain_allowed", "key_padding", "no_bias", "additive_mask",
              "fully_masked_row", "h1", "fill_1e9", "self_attn_float32"):
        seed = tensorcase_seed(FIXTURES / "torch" / (f + ".npz"), allowed=f == "plain_allowed")
        (tc / (f + ".bin")).write_bytes(seed)
    for f in ("cli-mh-zero-keys", "cli-mh-zero-queries", "cli-mh-dmodel0-hugeheads"):
        (tc / (f + ".bin")).write_bytes(tensorcase_seed(FIXTURES / "fuzz" / (f + ".npz")))
    # Already-projected heads: grouped-query (g = 2, 3), multi-query (g = 1), cross-attention.
    for f in ("gqa_h4_g2_float32", "gqa_h6_g3_cross_float64", "mqa_h4_g1_causal_float64"):
        (tc / (f + ".bin")).write_bytes(tensorcase_seed(FIXTURES / "modern" / (f + ".npz")))
    # PyTorch's batch axis (B, n, E) with a per-item key padding mask.
    (tc / "mha_batch.bin").write_bytes(tensorcase_seed(FIXTURES / "batch" / "mha_batch.npz"))

    sessions = fresh("sessionfile")
    copy([ROOT / "docs" / "demo.attnlab.json", FIXTURES / "session" / "session.json"], sessions)
    copy(sorted((FIXTURES / "fuzz").glob("*.json")), sessions)
    demo = json.loads((ROOT / "docs" / "demo.attnlab.json").read_text())
    variants = {
        "torch-generator": {"generator": "torch"},
        "rope-interleaved": {"rope": True, "positional": False, "rope_convention": "interleaved",
                             "rope_base": 500.0},
        "alibi-kv-heads": {"alibi": True, "positional": False, "kv_heads": 2},
        "window-sinks": {"window": 4, "sinks": 2},
        "window-no-sinks-cross": {"window": 3, "kind": "cross", "tokens": []},
    }
    for name, keys in variants.items():
        session = json.loads(json.dumps(demo))
        session["parameters"].update(keys)
        (sessions / (name + ".attnlab.json")).write_text(json.dumps(session), encoding="utf-8")
    # The Training tab's settings in the view state.
    session = json.loads(json.dumps(demo))
    session.setdefault("view", {})["training"] = {
        "task": "copy", "n": 8, "d_model": 16, "heads": 2, "batch": 4, "noise": 0.1, "offset": 1,
        "classes": 4, "seed": "7", "steps": 50, "optimizer": "sgd", "dtype": "float64",
        "init": "unit_qk", "loss_threshold": {"on": True, "value": 0.002, "runs": "either"},
        "a": {"alpha": 0.5, "lr": 0.01}, "b": {"alpha": 0.0, "lr": 0.02}}
    (sessions / "training.attnlab.json").write_text(json.dumps(session), encoding="utf-8")
    # The heads view's state: a stretched single head, log colour scale.
    session = json.loads(json.dumps(demo))
    session.setdefault("view", {})["heatmap"] = {
        "view": "head", "head": 1, "stretch": True, "colormap": "magma", "scale": "log",
        "range": "auto", "pooling": "mean", "window": [1, 2, 5, 6]}
    (sessions / "heatmap-stretch.attnlab.json").write_text(json.dumps(session), encoding="utf-8")
    # A pinned query and sorted heads, the Tokens tab (coloured text) and the Play dock.
    session = json.loads(json.dumps(demo))
    view = session.setdefault("view", {})
    view["heatmap"] = {"view": "grid", "pin_query": 3, "sort_heads": "entropy",
                       "sort_descending": True}
    view["tokens"] = {"view": "text", "hidden_heads": [1], "mean": True, "head": 0, "query": 2,
                      "range": "fixed"}
    view["play"] = {"parameter": "dk", "from": 4, "to": 64, "frames": 9, "fps": 12, "loop": True}
    (sessions / "pin-tokens-play.attnlab.json").write_text(json.dumps(session), encoding="utf-8")
    # The Long tab shown, with its own n, the mean over heads, mean pooling and the log scale.
    session = json.loads(json.dumps(demo))
    view = session.setdefault("view", {})
    view["tabs"] = ["attentionViews", "longMapView"]
    view["long_map"] = {"n": 16384, "head": -1, "pooling": "mean", "scale": "log"}
    (sessions / "long-map.attnlab.json").write_text(json.dumps(session), encoding="utf-8")

    tokens = fresh("tokenizer")
    sentences = ["The cat, sat.", "don't U.S. a--b", "na\u00efve \u0395\u03bb\u03bb\u03ac\u03b4\u03b1 \u6771\u4eac",
                 "<s> hello </s> <|endoftext|> [CLS] x [SEP]", "a < b [ c", "\U0001F600 emoji\u200b zero-width",
                 "tab\tnew\nline\u00a0nbsp"]
    fixture = json.loads((FIXTURES / "tokens" / "tokens.json").read_text())
    sentences.append(" ".join(v["token"] for v in fixture["vectors"]))
    for i, s in enumerate(sentences):
        (tokens / ("sentence-%02d.txt" % i)).write_text(s, encoding="utf-8")


    modelfolder_corpus()
    tokenizerfiles_corpus()


if __name__ == "__main__":
    main()
