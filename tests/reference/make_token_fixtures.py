#!/usr/bin/python3
"""Typed tokens in plain NumPy, for tests/ui/views/tst_heatmapfeatures.cpp.

Called by make_fixtures.py as main(fixture_dir); writes fixtures/tokens/tokens.json with
1. token vectors: for each (token, seed, d_model) the vector documented in ui/session/sessioncompute.h,
     h = FNV-1a 64-bit hash of the token's UTF-8 bytes
     numpy.random.default_rng(seed + 2**64 * h).standard_normal(d_model)
2. sessions with typed tokens: the main view's weights when row i of X is the vector of token i
   (draw order of make_session_fixtures.py: parameters, then X, whose rows are then replaced),
   with and without sinusoidal positions (Vaswani et al. 2017, §3.5).
Floats are written with repr() (17 significant digits, round-trips exactly). Deterministic.
"""
import json
import math
import os
import sys

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from make_session_fixtures import sinusoid  # noqa: E402

FNV_OFFSET = 14695981039346656037
FNV_PRIME = 1099511628211

VECTOR_CASES = [
    ("the", 0, 8), ("cat", 0, 8), ("sat", 0, 8), (",", 0, 8), ("the", 7, 8),
    ("na\u00efve", 3, 5), ("\u6771\u4eac", 2**40 + 3, 6), ("\U0001F600", 1, 4), ("", 0, 3),
    ("The", 0, 8),
]

SESSION_CASES = [
    dict(name="the cat sat PE off", tokens=["the", "cat", "sat", "on", "the", "mat"],
         d_model=8, heads=2, seed=0, positional=False),
    dict(name="the cat sat PE on", tokens=["the", "cat", "sat", "on", "the", "mat"],
         d_model=8, heads=2, seed=0, positional=True),
    dict(name="mat the on sat cat the PE on", tokens=["mat", "the", "on", "sat", "cat", "the"],
         d_model=8, heads=2, seed=0, positional=True),
    dict(name="punctuation causal seed 5", tokens=["Hello", ",", "world", "!"],
         d_model=12, heads=3, seed=5, positional=False, mask="causal"),
]


def fnv1a64(text):
    h = FNV_OFFSET
    for byte in text.encode("utf-8"):
        h ^= byte
        h = (h * FNV_PRIME) % 2**64
    return h


def token_vector(token, seed, d):
    return np.random.default_rng(seed + 2**64 * fnv1a64(token)).standard_normal(d)


def session_weights(case):
    tokens = case["tokens"]
    n, d, h = len(tokens), case["d_model"], case["heads"]
    dk = d // h
    rng = np.random.default_rng(case["seed"])
    w_in = math.sqrt(6.0 / (d + 3 * d)) * (2.0 * rng.random((3 * d, d)) - 1.0)
    _w_out = (1.0 / math.sqrt(d)) * (2.0 * rng.random((d, d)) - 1.0)  # drawn, unused here
    x = rng.standard_normal((n, d))  # drawn, then every row replaced by its token's vector
    for i, t in enumerate(tokens):
        x[i] = token_vector(t, case["seed"], d)
    if case["positional"]:
        x = x + sinusoid(n, d)
    q_all = x @ w_in[0:d].T
    k_all = x @ w_in[d:2 * d].T
    masked = np.zeros((n, n), dtype=bool)
    if case.get("mask") == "causal":
        masked |= np.triu(np.ones((n, n), dtype=bool), k=1)
    weights = []
    for i in range(h):
        q = q_all[:, i * dk:(i + 1) * dk]
        k = k_all[:, i * dk:(i + 1) * dk]
        t = np.where(masked, -np.inf, (q @ k.T) * dk ** -0.5)
        w = np.exp(t - t.max(axis=1, keepdims=True))
        weights.append((w / w.sum(axis=1, keepdims=True)).tolist())
    return weights


def main(fixture_dir):
    vectors = [{"token": t, "seed": str(s), "d_model": d, "hash": str(fnv1a64(t)),
                "vector": token_vector(t, s, d).tolist()} for t, s, d in VECTOR_CASES]
    sessions = []
    for case in SESSION_CASES:
        params = {"n": len(case["tokens"]), "d_model": case["d_model"], "heads": case["heads"],
                  "seed": str(case["seed"]), "kind": "encoder", "mask": case.get("mask", "none"),
                  "scale_exponent": 0.5, "temperature": 1.0, "positional": case["positional"],
                  "dtype": "float64", "tokens": case["tokens"]}
        sessions.append({"name": case["name"], "params": params,
                         "weights": session_weights(case)})
    target = os.path.join(fixture_dir, "tokens")
    os.makedirs(target, exist_ok=True)
    with open(os.path.join(target, "tokens.json"), "w", encoding="utf-8") as f:
        json.dump({"vectors": vectors, "sessions": sessions}, f, indent=1, ensure_ascii=True)
        f.write("\n")


if __name__ == "__main__":
    main(sys.argv[1] if len(sys.argv) > 1 else os.path.join(os.path.dirname(__file__), "fixtures"))
