#!/usr/bin/python3
"""The vectors of the main view's attention layer, step by step, in plain NumPy, for
tests/core/tst_pipeline.cpp.

Called by make_fixtures.py as main(fixture_dir); writes fixtures/session/pipeline.npz. For each
case of make_session_fixtures.CASES (prefix "c<k>_", k its index) it follows the documented
draw order of core/engine/sessioninputs.h, independently of the C++ code:

  rng = numpy.random.default_rng(seed)
  in_proj_weight  = b_in  * (2 * rng.random((3d, d)) - 1),  b_in  = sqrt(6 / (d + 3d))
  out_proj_weight = b_out * (2 * rng.random((d, d)) - 1),   b_out = 1 / sqrt(d)   (biases 0)
  X = rng.standard_normal((n, d));  E = rng.standard_normal((n_k, d)) for cross-attention
  (+ sinusoidal positions, Vaswani et al. 2017 §3.5, when positional)

and Vaswani et al. 2017 §3.2.2: head i's q = X W_Q,iᵀ, k = S W_K,iᵀ, v = S W_V,iᵀ (S = E or X),
weights = softmax(q kᵀ · d_k^(−α) / τ with masked cells −inf; all-zero rows when every key is
masked), head_i = weights · v, concat = [head_0 … head_{h−1}], output = concat W_Oᵀ.

Arrays: case (the parameters: n, n_k, d_model, heads, seed, kind 0 encoder / 1 decoder /
2 cross, mask 0 none / 1 causal / 2 padding, padding, scale_exponent, temperature, positional
0/1), embeddings (n × d, X before positions), positions (n × d, zeros without), source
(n_k × d), queries (h × n × d_k), keys, values (h × n_k × d_k), weights (h × n × n_k),
head_outputs (h × n × d_k), concatenated and output (n × d). Deterministic.
"""
import os
import sys

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from make_session_fixtures import CASES, layer_and_inputs, softmax_rows  # noqa: E402


def pipeline(case):
    d, h = case["d_model"], case["heads"]
    dk = d // h
    w_in, w_out, embeddings, positions, source, masked, scale = layer_and_inputs(case)
    x = embeddings + positions
    q_all = x @ w_in[0:d].T
    k_all = source @ w_in[d:2 * d].T
    v_all = source @ w_in[2 * d:3 * d].T
    out = dict(embeddings=embeddings, positions=positions, source=source)
    queries, keys, values, weights, heads = [], [], [], [], []
    for i in range(h):
        q = q_all[:, i * dk:(i + 1) * dk]
        k = k_all[:, i * dk:(i + 1) * dk]
        v = v_all[:, i * dk:(i + 1) * dk]
        w = softmax_rows(np.where(masked, -np.inf, (q @ k.T) * scale), masked)
        queries.append(q)
        keys.append(k)
        values.append(v)
        weights.append(w)
        heads.append(w @ v)
    concatenated = np.concatenate(heads, axis=1)
    out.update(queries=np.array(queries), keys=np.array(keys), values=np.array(values),
               weights=np.array(weights), head_outputs=np.array(heads),
               concatenated=concatenated, output=concatenated @ w_out.T)
    return out


def main(fixture_dir):
    arrays = {}
    kinds = {"encoder": 0, "decoder": 1, "cross": 2}
    masks = {"none": 0, "causal": 1, "padding": 2}
    for index, case in enumerate(CASES):
        arrays["c%d_case" % index] = np.array([
            case["n"], case["n_k"], case["d_model"], case["heads"], case["seed"],
            kinds[case["kind"]], masks[case["mask"]], case["padding"], case["scale_exponent"],
            case["temperature"], 1.0 if case["positional"] else 0.0], dtype=np.float64)
        for name, value in pipeline(case).items():
            arrays["c%d_%s" % (index, name)] = value
    target = os.path.join(fixture_dir, "session")
    os.makedirs(target, exist_ok=True)
    np.savez(os.path.join(target, "pipeline.npz"), **arrays)


if __name__ == "__main__":
    main(sys.argv[1] if len(sys.argv) > 1 else os.path.join(os.path.dirname(__file__), "fixtures"))
