#!/usr/bin/python3
"""Tiny random Hugging Face checkpoints and their expected forward pass, for
tests/core/tst_models.cpp (core/models: safetensors, config.json, the float32 forward).

Run with Debian's python3 (python3-torch 1.13, python3-numpy):

    /usr/bin/python3 tests/reference/make_model_fixtures.py

Every case is a directory fixtures/models/<case>/ holding

    config.json                    as Hugging Face transformers writes it for the family
    model.safetensors              written by write_safetensors() below from the format's
                                   specification (huggingface/safetensors README, "Format"): u64
                                   little-endian header length N, N bytes of JSON, the data
                                   buffer; tensors in C order, little-endian, tiling the buffer
      (or model.safetensors.index.json + two shards for the sharded case)
    expected.npz                   ids          n                         int64
                                   attention    layers × heads × n × n    float64
                                   queries      layers × heads × n × d_k  float64 (post-RoPE)
                                   keys         layers × kv_heads × n × d_k
                                   hidden       n × hidden                after the final norm
                                   logits       n × vocab

The expected numbers come from the plain PyTorch forward passes below (float64), written from
the architectures' definitions (Hugging Face transformers modeling_gpt2.py, modeling_llama.py,
modeling_qwen2.py, modeling_qwen3.py, modeling_bert.py; RoPE scaling from
modeling_rope_utils.py), never from the C++ code. Weights are drawn with
numpy.random.default_rng (fixed seeds); for BF16/F16 files the forward runs on the stored values
widened back to float64, so the C++ reader's widening is what the comparison checks.

Files are written deterministically: running the script again reproduces them byte for byte.
"""
import json
import math
import os
import shutil
import struct

import numpy as np

from make_torch_fixtures import write_npz
import torch

HERE = os.path.dirname(os.path.abspath(__file__))
OUT = os.path.join(HERE, "fixtures", "models")
DT = torch.float64

# ---------------------------------------------------------------------------------------------
# Files


def to_bf16_bits(a):
    """float32 → bfloat16 bits, round to nearest even (as torch's .to(torch.bfloat16))."""
    bits = np.ascontiguousarray(a, dtype=np.float32).view(np.uint32).astype(np.uint64)
    rounded = (bits + 0x7FFF + ((bits >> 16) & 1)) >> 16
    return rounded.astype(np.uint16)


def stored(a, dtype):
    """(bytes as stored, the values they hold as float64) for dtype F32, F16 or BF16."""
    a = np.ascontiguousarray(a, dtype=np.float32)
    if dtype == "F32":
        return a.astype("<f4").tobytes(), a.astype(np.float64)
    if dtype == "F16":
        h = a.astype("<f2")
        return h.tobytes(), h.astype(np.float64)
    if dtype == "BF16":
        bits = to_bf16_bits(a)
        widened = (bits.astype(np.uint32) << 16).view(np.float32)
        return bits.astype("<u2").tobytes(), widened.astype(np.float64)
    raise ValueError(dtype)


def write_safetensors(path, tensors, dtype, odd_header=False):
    """tensors: list of (name, float32 array). Writes the file, returns {name: stored values}.

    The header is padded with spaces (allowed by the format) to a multiple of 8 bytes, or to an
    odd length with odd_header so that the data buffer, and every tensor in it, starts at an odd
    byte of the file."""
    header = {"__metadata__": {"format": "pt"}}
    blobs, values, offset = [], {}, 0
    for name, a in tensors:
        raw, widened = stored(a, dtype)
        header[name] = {"dtype": dtype, "shape": list(a.shape),
                        "data_offsets": [offset, offset + len(raw)]}
        blobs.append(raw)
        values[name] = widened
        offset += len(raw)
    text = json.dumps(header, separators=(",", ":")).encode("utf-8")
    if odd_header:
        if len(text) % 2 == 0:
            text += b" "
    else:
        text += b" " * ((8 - len(text) % 8) % 8)
    with open(path, "wb") as f:
        f.write(struct.pack("<Q", len(text)))
        f.write(text)
        for b in blobs:
            f.write(b)
    return values


# ---------------------------------------------------------------------------------------------
# Building blocks (float64)


def t(a):
    return torch.tensor(a, dtype=DT)


def layer_norm(x, w, b, eps):
    mean = x.mean(-1, keepdim=True)
    var = ((x - mean) ** 2).mean(-1, keepdim=True)
    return (x - mean) / torch.sqrt(var + eps) * w + b


def rms_norm(x, w, eps):
    return x * torch.rsqrt((x * x).mean(-1, keepdim=True) + eps) * w


def gelu_tanh(x):
    return 0.5 * x * (1.0 + torch.tanh(math.sqrt(2.0 / math.pi) * (x + 0.044715 * x ** 3)))


def gelu_erf(x):
    return 0.5 * x * (1.0 + torch.erf(x / math.sqrt(2.0)))


def silu(x):
    return x * torch.sigmoid(x)


def rotate_half(x):
    half = x.shape[-1] // 2
    return torch.cat([-x[..., half:], x[..., :half]], dim=-1)


def inv_frequencies(head_dim, theta, scaling):
    """RoPE's inverse frequencies with Hugging Face's scaling rules (modeling_rope_utils.py)."""
    inv = 1.0 / (theta ** (torch.arange(0, head_dim, 2, dtype=DT) / head_dim))
    kind = scaling.get("rope_type", scaling.get("type", "default")) if scaling else "default"
    if kind == "linear":
        inv = inv / scaling["factor"]
    elif kind == "llama3":
        factor, low, high = scaling["factor"], scaling["low_freq_factor"], scaling["high_freq_factor"]
        old = scaling["original_max_position_embeddings"]
        low_wavelen, high_wavelen = old / low, old / high
        wavelen = 2 * math.pi / inv
        scaled = torch.where(wavelen > low_wavelen, inv / factor, inv)
        smooth = (old / wavelen - low) / (high - low)
        smoothed = (1 - smooth) * scaled / factor + smooth * scaled
        medium = ~(wavelen < high_wavelen) & ~(wavelen > low_wavelen)
        inv = torch.where(medium, smoothed, scaled)
    return inv


def apply_rope(x, inv):
    """x: heads × n × d, rotate_half layout."""
    n = x.shape[1]
    freqs = torch.outer(torch.arange(n, dtype=DT), inv)  # n × d/2
    emb = torch.cat([freqs, freqs], dim=-1)
    return x * emb.cos() + rotate_half(x) * emb.sin()


def attend(q, k, v, mask):
    """q: h × n × d, k/v: h × n × d (already repeated), mask: n × n bool (True = allowed)."""
    d = q.shape[-1]
    scores = q @ k.transpose(-1, -2) / math.sqrt(d)
    if mask is not None:
        scores = scores.masked_fill(~mask, float("-inf"))
    weights = torch.softmax(scores, dim=-1)
    return weights, weights @ v


def causal_mask(n, window=None):
    i = torch.arange(n)[:, None]
    j = torch.arange(n)[None, :]
    allowed = j <= i
    if window is not None:
        allowed = allowed & (j > i - window)
    return allowed


def split_heads(x, heads):
    n, width = x.shape
    return x.view(n, heads, width // heads).transpose(0, 1)


def merge_heads(x):
    h, n, d = x.shape
    return x.transpose(0, 1).reshape(n, h * d)


# ---------------------------------------------------------------------------------------------
# Forward passes


def ablated(o, ablate):
    """o (heads × n × d_k) with head ablate[1]'s rows zeroed, or with ablate[2] == "mean" each
    replaced by the mean of its n rows."""
    o = o.clone()
    if len(ablate) > 2 and ablate[2] == "mean":
        o[ablate[1]] = o[ablate[1]].mean(0, keepdim=True)
    else:
        o[ablate[1]] = 0
    return o


def gpt2_forward(W, cfg, ids, p="", ablate=None):
    """ablate: (layer, head) whose output is zeroed before c_proj (head ablation), or
    (layer, head, "mean") whose output rows all become their mean over the positions; or None.
    rec also holds each layer's values (heads × n × d_k) and output (residual, n × hidden)."""
    H, heads = cfg["n_embd"], cfg["n_head"]
    eps = cfg["layer_norm_epsilon"]
    n = len(ids)
    x = W[p + "wte.weight"][ids] + W[p + "wpe.weight"][:n]
    rec = {"attention": [], "queries": [], "keys": [], "values": [], "residual": []}
    for i in range(cfg["n_layer"]):
        q_ = f"{p}h.{i}."
        h = layer_norm(x, W[q_ + "ln_1.weight"], W[q_ + "ln_1.bias"], eps)
        qkv = h @ W[q_ + "attn.c_attn.weight"] + W[q_ + "attn.c_attn.bias"]
        q, k, v = (split_heads(z, heads) for z in qkv.split(H, dim=1))
        w, o = attend(q, k, v, causal_mask(n))
        rec["attention"].append(w)
        rec["queries"].append(q)
        rec["keys"].append(k)
        rec["values"].append(v)
        if ablate is not None and ablate[0] == i:
            o = ablated(o, ablate)
        x = x + merge_heads(o) @ W[q_ + "attn.c_proj.weight"] + W[q_ + "attn.c_proj.bias"]
        h = layer_norm(x, W[q_ + "ln_2.weight"], W[q_ + "ln_2.bias"], eps)
        m = gelu_tanh(h @ W[q_ + "mlp.c_fc.weight"] + W[q_ + "mlp.c_fc.bias"])
        x = x + m @ W[q_ + "mlp.c_proj.weight"] + W[q_ + "mlp.c_proj.bias"]
        rec["residual"].append(x)
    x = layer_norm(x, W[p + "ln_f.weight"], W[p + "ln_f.bias"], eps)
    logits = x @ W[p + "wte.weight"].T
    return rec, x, logits


def rope_settings(cfg):
    if "rope_parameters" in cfg:
        rp = cfg["rope_parameters"]
        return rp.get("rope_theta", 10000.0), rp
    return cfg.get("rope_theta", 10000.0), cfg.get("rope_scaling")


def llama_forward(W, cfg, ids, p="model.", ablate=None):
    """Llama, Qwen2 (q/k/v biases, sliding window) and Qwen3 (q_norm/k_norm). ablate and the
    record's values and residual as in gpt2_forward."""
    heads, kv = cfg["num_attention_heads"], cfg["num_key_value_heads"]
    d = cfg.get("head_dim") or cfg["hidden_size"] // heads
    eps = cfg["rms_norm_eps"]
    kind = cfg["model_type"]
    theta, scaling = rope_settings(cfg)
    inv = inv_frequencies(d, theta, scaling)
    n = len(ids)

    def lin(x, name, bias):
        y = x @ W[name + ".weight"].T
        return y + W[name + ".bias"] if bias else y

    x = W[p + "embed_tokens.weight"][ids]
    rec = {"attention": [], "queries": [], "keys": [], "values": [], "residual": []}
    for i in range(cfg["num_hidden_layers"]):
        q_ = f"{p}layers.{i}."
        bias = kind == "qwen2"
        h = rms_norm(x, W[q_ + "input_layernorm.weight"], eps)
        q = split_heads(lin(h, q_ + "self_attn.q_proj", bias), heads)
        k = split_heads(lin(h, q_ + "self_attn.k_proj", bias), kv)
        v = split_heads(lin(h, q_ + "self_attn.v_proj", bias), kv)
        if kind == "qwen3":
            q = rms_norm(q, W[q_ + "self_attn.q_norm.weight"], eps)
            k = rms_norm(k, W[q_ + "self_attn.k_norm.weight"], eps)
        q, k = apply_rope(q, inv), apply_rope(k, inv)
        rec["queries"].append(q)
        rec["keys"].append(k)
        window = None
        if cfg.get("use_sliding_window") and i >= cfg["max_window_layers"]:
            window = cfg["sliding_window"]
        rep = heads // kv
        w, o = attend(q, k.repeat_interleave(rep, dim=0), v.repeat_interleave(rep, dim=0),
                      causal_mask(n, window))
        rec["attention"].append(w)
        rec["values"].append(v)
        if ablate is not None and ablate[0] == i:
            o = ablated(o, ablate)
        x = x + lin(merge_heads(o), q_ + "self_attn.o_proj", False)
        h = rms_norm(x, W[q_ + "post_attention_layernorm.weight"], eps)
        m = silu(lin(h, q_ + "mlp.gate_proj", False)) * lin(h, q_ + "mlp.up_proj", False)
        x = x + lin(m, q_ + "mlp.down_proj", False)
        rec["residual"].append(x)
    x = rms_norm(x, W[p + "norm.weight"], eps)
    head = W[p + "embed_tokens.weight"] if cfg["tie_word_embeddings"] else W["lm_head.weight"]
    return rec, x, x @ head.T


def bert_forward(W, cfg, ids, p="bert.", ln="gamma"):
    heads, eps = cfg["num_attention_heads"], cfg["layer_norm_eps"]
    n = len(ids)
    wn, bn = ("gamma", "beta") if ln == "gamma" else ("weight", "bias")

    def norm(x, name):
        return layer_norm(x, W[name + "." + wn], W[name + "." + bn], eps)

    def lin(x, name):
        return x @ W[name + ".weight"].T + W[name + ".bias"]

    e = p + "embeddings."
    x = (W[e + "word_embeddings.weight"][ids] + W[e + "position_embeddings.weight"][:n]
         + W[e + "token_type_embeddings.weight"][0])
    x = norm(x, e + "LayerNorm")
    rec = {"attention": [], "queries": [], "keys": []}
    for i in range(cfg["num_hidden_layers"]):
        q_ = f"{p}encoder.layer.{i}."
        q = split_heads(lin(x, q_ + "attention.self.query"), heads)
        k = split_heads(lin(x, q_ + "attention.self.key"), heads)
        v = split_heads(lin(x, q_ + "attention.self.value"), heads)
        w, o = attend(q, k, v, None)
        rec["attention"].append(w)
        rec["queries"].append(q)
        rec["keys"].append(k)
        x = norm(x + lin(merge_heads(o), q_ + "attention.output.dense"),
                 q_ + "attention.output.LayerNorm")
        m = gelu_erf(lin(x, q_ + "intermediate.dense"))
        x = norm(x + lin(m, q_ + "output.dense"), q_ + "output.LayerNorm")
    t_ = gelu_erf(lin(x, "cls.predictions.transform.dense"))
    t_ = norm(t_, "cls.predictions.transform.LayerNorm")
    logits = t_ @ W[e + "word_embeddings.weight"].T + W["cls.predictions.bias"]
    return rec, x, logits


# ---------------------------------------------------------------------------------------------
# Parameters


def gpt2_params(cfg, rng):
    H, I, V, P = cfg["n_embd"], cfg["n_inner"] or 4 * cfg["n_embd"], cfg["vocab_size"], cfg["n_positions"]
    out = [("wte.weight", (V, H)), ("wpe.weight", (P, H))]
    for i in range(cfg["n_layer"]):
        q = f"h.{i}."
        out += [(q + "ln_1.weight", (H,)), (q + "ln_1.bias", (H,)),
                (q + "attn.c_attn.weight", (H, 3 * H)), (q + "attn.c_attn.bias", (3 * H,)),
                (q + "attn.c_proj.weight", (H, H)), (q + "attn.c_proj.bias", (H,)),
                (q + "ln_2.weight", (H,)), (q + "ln_2.bias", (H,)),
                (q + "mlp.c_fc.weight", (H, I)), (q + "mlp.c_fc.bias", (I,)),
                (q + "mlp.c_proj.weight", (I, H)), (q + "mlp.c_proj.bias", (H,))]
    out += [("ln_f.weight", (H,)), ("ln_f.bias", (H,))]
    return draw(out, rng)


def llama_params(cfg, rng):
    H, I, V = cfg["hidden_size"], cfg["intermediate_size"], cfg["vocab_size"]
    heads, kv = cfg["num_attention_heads"], cfg["num_key_value_heads"]
    d = cfg.get("head_dim") or H // heads
    kind = cfg["model_type"]
    out = [("model.embed_tokens.weight", (V, H))]
    for i in range(cfg["num_hidden_layers"]):
        q = f"model.layers.{i}."
        out += [(q + "input_layernorm.weight", (H,)),
                (q + "self_attn.q_proj.weight", (heads * d, H)),
                (q + "self_attn.k_proj.weight", (kv * d, H)),
                (q + "self_attn.v_proj.weight", (kv * d, H)),
                (q + "self_attn.o_proj.weight", (H, heads * d))]
        if kind == "qwen2":
            out += [(q + "self_attn.q_proj.bias", (heads * d,)),
                    (q + "self_attn.k_proj.bias", (kv * d,)),
                    (q + "self_attn.v_proj.bias", (kv * d,))]
        if kind == "qwen3":
            out += [(q + "self_attn.q_norm.weight", (d,)), (q + "self_attn.k_norm.weight", (d,))]
        out += [(q + "post_attention_layernorm.weight", (H,)),
                (q + "mlp.gate_proj.weight", (I, H)), (q + "mlp.up_proj.weight", (I, H)),
                (q + "mlp.down_proj.weight", (H, I))]
    out += [("model.norm.weight", (H,))]
    if not cfg["tie_word_embeddings"]:
        out += [("lm_head.weight", (V, H))]
    return draw(out, rng)


def bert_params(cfg, rng):
    H, I, V = cfg["hidden_size"], cfg["intermediate_size"], cfg["vocab_size"]
    P, T = cfg["max_position_embeddings"], cfg["type_vocab_size"]
    e = "bert.embeddings."
    out = [(e + "word_embeddings.weight", (V, H)), (e + "position_embeddings.weight", (P, H)),
           (e + "token_type_embeddings.weight", (T, H)),
           (e + "LayerNorm.gamma", (H,)), (e + "LayerNorm.beta", (H,))]
    for i in range(cfg["num_hidden_layers"]):
        q = f"bert.encoder.layer.{i}."
        for name in ("query", "key", "value"):
            out += [(q + f"attention.self.{name}.weight", (H, H)),
                    (q + f"attention.self.{name}.bias", (H,))]
        out += [(q + "attention.output.dense.weight", (H, H)),
                (q + "attention.output.dense.bias", (H,)),
                (q + "attention.output.LayerNorm.gamma", (H,)),
                (q + "attention.output.LayerNorm.beta", (H,)),
                (q + "intermediate.dense.weight", (I, H)), (q + "intermediate.dense.bias", (I,)),
                (q + "output.dense.weight", (H, I)), (q + "output.dense.bias", (H,)),
                (q + "output.LayerNorm.gamma", (H,)), (q + "output.LayerNorm.beta", (H,))]
    out += [("cls.predictions.transform.dense.weight", (H, H)),
            ("cls.predictions.transform.dense.bias", (H,)),
            ("cls.predictions.transform.LayerNorm.gamma", (H,)),
            ("cls.predictions.transform.LayerNorm.beta", (H,)),
            ("cls.predictions.bias", (V,))]
    return draw(out, rng)


def draw(specs, rng):
    """Norm weights near 1, everything else N(0, 0.3²) (large enough that attention is far from
    uniform in these tiny models)."""
    out = []
    for name, shape in specs:
        if name.endswith(("norm.weight", "ln_1.weight", "ln_2.weight", "ln_f.weight", ".gamma",
                          "LayerNorm.weight")):
            a = 1.0 + 0.1 * rng.standard_normal(shape)
        elif name.endswith(("embeddings.weight", "wte.weight", "wpe.weight", "embed_tokens.weight")):
            a = rng.standard_normal(shape)
        else:
            a = 0.3 * rng.standard_normal(shape)
        out.append((name, a.astype(np.float32)))
    return out


# ---------------------------------------------------------------------------------------------
# Cases

GPT2 = {"model_type": "gpt2", "architectures": ["GPT2LMHeadModel"], "vocab_size": 48,
        "n_embd": 16, "n_head": 4, "n_layer": 2, "n_positions": 16, "n_inner": None,
        "layer_norm_epsilon": 1e-5, "activation_function": "gelu_new"}

LLAMA = {"model_type": "llama", "architectures": ["LlamaForCausalLM"], "vocab_size": 48,
         "hidden_size": 16, "intermediate_size": 24, "num_attention_heads": 4,
         "num_key_value_heads": 2, "num_hidden_layers": 2, "rms_norm_eps": 1e-6,
         "rope_theta": 10000.0, "rope_scaling": None, "max_position_embeddings": 64,
         "hidden_act": "silu", "tie_word_embeddings": False, "attention_bias": False}


def variant(base, **changes):
    c = dict(base)
    c.update(changes)
    return c


CASES = [
    # name, config, dtype, n, options
    ("gpt2", GPT2, "F32", 10, {}),
    ("gpt2_prefix", GPT2, "F32", 9, {"prefix": "transformer."}),
    ("llama_gqa", LLAMA, "F32", 10, {}),
    ("llama_bf16", LLAMA, "BF16", 10, {}),
    ("llama_f16", LLAMA, "F16", 10, {}),
    ("llama3_scaling", variant(LLAMA, num_attention_heads=2, num_key_value_heads=1,
                               rope_theta=100.0, tie_word_embeddings=True,
                               rope_scaling={"rope_type": "llama3", "factor": 8.0,
                                             "low_freq_factor": 1.0, "high_freq_factor": 4.0,
                                             "original_max_position_embeddings": 32}),
     "F32", 40, {}),
    ("llama_linear", variant(LLAMA, num_attention_heads=2, num_key_value_heads=2,
                             rope_scaling={"type": "linear", "factor": 2.0}), "F32", 12, {}),
    ("llama_v5_rope", variant({k: v for k, v in LLAMA.items()
                               if k not in ("rope_theta", "rope_scaling")},
                              num_attention_heads=2, num_key_value_heads=1,
                              rope_parameters={"rope_type": "linear", "rope_theta": 500.0,
                                               "factor": 3.0}), "F32", 12, {}),
    ("qwen2", variant(LLAMA, model_type="qwen2", architectures=["Qwen2ForCausalLM"],
                      tie_word_embeddings=True, use_sliding_window=False, sliding_window=4096,
                      max_window_layers=28), "F32", 10, {}),
    ("qwen2_window", variant(LLAMA, model_type="qwen2", architectures=["Qwen2ForCausalLM"],
                             use_sliding_window=True, sliding_window=4, max_window_layers=1),
     "F32", 12, {}),
    ("qwen3", variant(LLAMA, model_type="qwen3", architectures=["Qwen3ForCausalLM"],
                      head_dim=8, tie_word_embeddings=True), "F32", 10, {}),
    ("bert", {"model_type": "bert", "architectures": ["BertForMaskedLM"], "vocab_size": 48,
              "hidden_size": 16, "num_attention_heads": 4, "num_hidden_layers": 2,
              "intermediate_size": 32, "max_position_embeddings": 16, "type_vocab_size": 2,
              "layer_norm_eps": 1e-12, "hidden_act": "gelu"}, "F32", 9, {}),
    ("sharded", LLAMA, "F32", 8, {"shards": 2}),
    ("odd_header", LLAMA, "BF16", 8, {"odd_header": True}),
    # Over 1 024 tokens: the forward's MLP runs in blocks of rows. Only the ids, hidden states
    # and logits are written (the attention would be 2 × 4 × 1100² values).
    ("long_rows", LLAMA, "F32", 1100, {"hidden_only": True}),
]


def make_case(index, name, cfg, dtype, n, opts):
    rng = np.random.default_rng(1000 + index)
    kind = cfg["model_type"]
    params = {"gpt2": gpt2_params, "bert": bert_params}.get(kind, llama_params)(cfg, rng)
    prefix = opts.get("prefix", "")
    if kind == "gpt2":
        params = [(prefix + k, v) for k, v in params]
    ids = rng.integers(0, cfg["vocab_size"], size=n).astype(np.int64)

    folder = os.path.join(OUT, name)
    os.makedirs(folder)
    with open(os.path.join(folder, "config.json"), "w") as f:
        json.dump(cfg, f, indent=2, sort_keys=True)
        f.write("\n")
    values = {}
    if opts.get("shards"):
        half = len(params) // 2
        parts = [params[:half], params[half:]]
        weight_map = {}
        for s, part in enumerate(parts):
            fname = f"model-{s + 1:05d}-of-{len(parts):05d}.safetensors"
            values.update(write_safetensors(os.path.join(folder, fname), part, dtype))
            weight_map.update({k: fname for k, _ in part})
        with open(os.path.join(folder, "model.safetensors.index.json"), "w") as f:
            json.dump({"metadata": {"total_size": 0}, "weight_map": weight_map}, f, indent=2,
                      sort_keys=True)
            f.write("\n")
    else:
        values = write_safetensors(os.path.join(folder, "model.safetensors"), params, dtype,
                                   odd_header=opts.get("odd_header", False))
        if opts.get("odd_header"):
            with open(os.path.join(folder, "model.safetensors"), "rb") as f:
                assert (8 + struct.unpack("<Q", f.read(8))[0]) % 2 == 1

    W = {k: t(v) for k, v in values.items()}
    tid = torch.tensor(ids)
    if kind == "gpt2":
        rec, hidden, logits = gpt2_forward(W, cfg, tid, prefix)
    elif kind == "bert":
        rec, hidden, logits = bert_forward(W, cfg, tid)
    else:
        rec, hidden, logits = llama_forward(W, cfg, tid)
    if opts.get("hidden_only"):
        write_npz(os.path.join(folder, "expected.npz"),
                  {"ids": ids, "hidden": hidden.numpy(), "logits": logits.numpy()})
        return
    write_npz(os.path.join(folder, "expected.npz"), {
        "ids": ids,
        "attention": torch.stack(rec["attention"]).numpy(),
        "queries": torch.stack(rec["queries"]).numpy(),
        "keys": torch.stack(rec["keys"]).numpy(),
        "hidden": hidden.numpy(),
        "logits": logits.numpy(),
    })


def main():
    torch.set_grad_enabled(False)
    if os.path.isdir(OUT):
        shutil.rmtree(OUT)
    os.makedirs(OUT)
    for index, (name, cfg, dtype, n, opts) in enumerate(CASES):
        make_case(index, name, cfg, dtype, n, opts)
    total = sum(os.path.getsize(os.path.join(d, f)) for d, _, fs in os.walk(OUT) for f in fs)
    print(f"wrote {len(CASES)} cases to {OUT} ({total} bytes)")


if __name__ == "__main__":
    main()
