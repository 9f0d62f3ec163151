#!/usr/bin/python3
"""nn.MultiheadAttention reference cases for tests/core/tst_multihead_torch.cpp and
tests/cli/tst_cli_compute.cpp (the multi-head layer and `attnlab compute`).

Every case is one .npz under fixtures/torch/ and doubles as an input of `attnlab compute`:

    query, key, value             n_q × d_model, n_k × d_model, n_k × d_model
    in_proj_weight                3·d_model × d_model   ([W_Q; W_K; W_V], PyTorch's layout)
    in_proj_bias                  3·d_model             (absent when bias=False)
    out_proj_weight               d_model × d_model
    out_proj_bias                 d_model               (absent when bias=False)
    num_heads                     0-d int64
    attn_mask                     n_q × n_k, bool (True = masked out) or float (additive); optional
    key_padding_mask              n_k bool (True = padding); optional
    expected_output               n_q × d_model         what PyTorch returned
    expected_weights              h × n_q × n_k         need_weights=True, average_attn_weights=False

"plain_*" cases hold no parameters (plain scaled dot-product attention, one head, d_k = d_model);
their expected arrays come from nn.MultiheadAttention with identity projections and zero biases,
and in plain_allowed the boolean attn_mask means "may attend" (F.scaled_dot_product_attention's
convention, `attnlab compute --mask-convention allowed`); PyTorch got its negation.

Inputs and parameters are drawn with numpy.random.default_rng (fixed seeds) and copied into the
module, so the files do not depend on torch's initialisation. Module computations run in float64
(float32 for the *_float32 cases) on the CPU. Files are written with a fixed zip timestamp so that
running the script again reproduces them byte for byte.

Where a row is fully masked PyTorch 1.13 returns NaN in that row of weights and output; the NaN is
stored as is (the C++ test checks that it is there and asserts our documented zeros instead).
"""
import io
import os
import zipfile

import numpy as np
import torch

ZIP_DATE = (1980, 1, 1, 0, 0, 0)


def write_npz(path, arrays):
    """np.savez without timestamps: stored members '<name>.npy' in the given order."""
    os.makedirs(os.path.dirname(path), exist_ok=True)
    tmp = path + ".tmp"
    with zipfile.ZipFile(tmp, "w", compression=zipfile.ZIP_STORED) as zf:
        for name, array in arrays.items():
            buf = io.BytesIO()
            np.lib.format.write_array(buf, np.asarray(array), allow_pickle=False)
            info = zipfile.ZipInfo(name + ".npy", date_time=ZIP_DATE)
            info.compress_type = zipfile.ZIP_STORED
            info.external_attr = 0o644 << 16
            zf.writestr(info, buf.getvalue())
    os.replace(tmp, path)


def run_mha(arrays, num_heads, bias, dtype, attn_mask=None, key_padding_mask=None):
    """Runs nn.MultiheadAttention(batch_first=True) on one batch element."""
    tdtype = torch.float64 if dtype == np.float64 else torch.float32
    d_model = arrays["query"].shape[1]
    mha = torch.nn.MultiheadAttention(d_model, num_heads, bias=bias, batch_first=True,
                                      dtype=tdtype)
    mha.eval()
    with torch.no_grad():
        mha.in_proj_weight.copy_(torch.from_numpy(arrays["in_proj_weight"]))
        mha.out_proj.weight.copy_(torch.from_numpy(arrays["out_proj_weight"]))
        if bias:
            mha.in_proj_bias.copy_(torch.from_numpy(arrays["in_proj_bias"]))
            mha.out_proj.bias.copy_(torch.from_numpy(arrays["out_proj_bias"]))
        q = torch.from_numpy(arrays["query"])[None]
        k = torch.from_numpy(arrays["key"])[None]
        v = torch.from_numpy(arrays["value"])[None]
        kwargs = {}
        if attn_mask is not None:
            kwargs["attn_mask"] = torch.from_numpy(attn_mask)
        if key_padding_mask is not None:
            kwargs["key_padding_mask"] = torch.from_numpy(key_padding_mask)[None]
        out, weights = mha(q, k, v, need_weights=True, average_attn_weights=False, **kwargs)
    return out[0].numpy().copy(), weights[0].numpy().copy()


def mha_case(seed, d_model, num_heads, n_q, n_k=None, self_attention=True, bias=True,
             dtype=np.float64, attn_mask=None, key_padding_mask=None):
    rng = np.random.default_rng(seed)
    n_k = n_q if n_k is None else n_k
    a = {}
    # Draw order: query, key, value, in_proj_weight, in_proj_bias, out_proj_weight, out_proj_bias.
    a["query"] = rng.standard_normal((n_q, d_model))
    if self_attention:
        a["key"] = a["query"].copy()
        a["value"] = a["query"].copy()
    else:
        a["key"] = rng.standard_normal((n_k, d_model))
        a["value"] = rng.standard_normal((n_k, d_model))
    bound = np.sqrt(6.0 / (4 * d_model))  # xavier_uniform_ on 3d × d
    a["in_proj_weight"] = rng.uniform(-bound, bound, (3 * d_model, d_model))
    if bias:
        a["in_proj_bias"] = rng.normal(0.0, 0.1, 3 * d_model)
    a["out_proj_weight"] = rng.uniform(-1 / np.sqrt(d_model), 1 / np.sqrt(d_model),
                                       (d_model, d_model))
    if bias:
        a["out_proj_bias"] = rng.normal(0.0, 0.1, d_model)
    for name in list(a):
        a[name] = np.ascontiguousarray(a[name], dtype=dtype)
    a["num_heads"] = np.array(num_heads, dtype=np.int64)
    if attn_mask is not None:
        a["attn_mask"] = attn_mask if attn_mask.dtype == np.bool_ else attn_mask.astype(dtype)
    if key_padding_mask is not None:
        a["key_padding_mask"] = key_padding_mask
    out, w = run_mha(a, num_heads, bias, dtype, a.get("attn_mask"), a.get("key_padding_mask"))
    a["expected_output"] = out
    a["expected_weights"] = w
    return a


def plain_case(seed, d_model, n_q, n_k, attn_mask_allowed=None):
    """Plain attention (no parameters): PyTorch with identity projections, h = 1."""
    rng = np.random.default_rng(seed)
    a = {
        "query": rng.standard_normal((n_q, d_model)),
        "key": rng.standard_normal((n_k, d_model)),
        "value": rng.standard_normal((n_k, d_model)),
    }
    params = dict(a)
    params["in_proj_weight"] = np.vstack([np.eye(d_model)] * 3)
    params["out_proj_weight"] = np.eye(d_model)
    masked = None
    if attn_mask_allowed is not None:
        a["attn_mask"] = attn_mask_allowed
        masked = ~attn_mask_allowed
    out, w = run_mha(params, 1, False, np.float64, masked)
    a["expected_output"] = out
    a["expected_weights"] = w
    return a


def hand_case():
    """The 1-head, d_model = 2 hand-checked case (weights ≈ [[0.1070, 0.8930], [0.1956, 0.8044]])."""
    x = np.array([[1.0, 1.0], [2.0, 0.0]])
    a = {
        "query": x,
        "key": x.copy(),
        "value": x.copy(),
        "in_proj_weight": np.array([[1, 2], [0, 1], [1, 0], [1, 1], [2, 1], [2, 0]], dtype=np.float64),
        "out_proj_weight": np.eye(2),
        "num_heads": np.array(1, dtype=np.int64),
    }
    out, w = run_mha(a, 1, False, np.float64)
    a["expected_output"] = out
    a["expected_weights"] = w
    return a


def cases():
    causal7 = np.triu(np.ones((7, 7), dtype=np.bool_), k=1)
    padding6 = np.array([False, False, False, False, True, True])
    # Cross-attention, n_q = 5, n_k = 8: top-left causal plus the last two keys as padding.
    causal_cross = np.triu(np.ones((5, 8), dtype=np.bool_), k=1)
    padding8 = np.array([False] * 6 + [True] * 2)
    additive = np.random.default_rng(606).normal(0.0, 1.0, (6, 6))
    additive[1, 3] = -np.inf
    additive[4, 0] = -np.inf
    fully = np.zeros((5, 5), dtype=np.bool_)
    fully[2, :] = True  # query 2 sees no key → NaN in PyTorch 1.13
    fully[0, 4] = True
    # A finite fill (the E11 lesson): −1e9 above the diagonal; PyTorch's weights there are 0.0.
    fill = np.where(np.triu(np.ones((6, 6), dtype=np.bool_), k=1), -1e9, 0.0)
    allowed = np.tril(np.ones((6, 6), dtype=np.bool_))  # True = may attend
    allowed[5, 0] = False
    return {
        "self_attn": mha_case(101, 16, 4, 6),
        "causal": mha_case(102, 16, 4, 7, attn_mask=causal7),
        "key_padding": mha_case(103, 16, 4, 6, key_padding_mask=padding6),
        "cross": mha_case(104, 12, 3, 4, 9, self_attention=False),
        "cross_causal_padding": mha_case(105, 12, 2, 5, 8, self_attention=False,
                                         attn_mask=causal_cross, key_padding_mask=padding8),
        "no_bias": mha_case(106, 8, 2, 5, bias=False),
        "h1": mha_case(107, 8, 1, 5),
        "h8": mha_case(108, 32, 8, 10),
        "additive_mask": mha_case(109, 8, 2, 6, attn_mask=additive),
        "fill_1e9": mha_case(115, 8, 2, 6, attn_mask=fill),
        "fully_masked_row": mha_case(110, 8, 2, 5, attn_mask=fully),
        "self_attn_float32": mha_case(111, 16, 4, 6, dtype=np.float32),
        "causal_float32": mha_case(112, 16, 4, 7, self_attention=False, dtype=np.float32,
                                   attn_mask=causal7),
        "hand_d2": hand_case(),
        "plain": plain_case(113, 6, 4, 7),
        "plain_allowed": plain_case(114, 6, 6, 6, attn_mask_allowed=allowed),
    }


def main(fixture_dir):
    torch.manual_seed(0)
    np.random.seed(0)
    torch.set_num_threads(1)  # same reduction order on every run
    out_dir = os.path.join(fixture_dir, "torch")
    for name, arrays in cases().items():
        write_npz(os.path.join(out_dir, name + ".npz"), arrays)


if __name__ == "__main__":
    main(os.path.join(os.path.dirname(os.path.abspath(__file__)), "fixtures"))
