#!/usr/bin/python3
"""E3 — softmax collapse over many keys (docs/experiments.md), in plain NumPy.

For each d_k in 16, 64, 512, a fresh numpy.random.default_rng(7): draw q (d_k), then
k (2000 × d_k); dots = k·q. Prints per d_k the std of the dots, the largest softmax weight and
the effective number of terms 1/Σw² (how many keys the row really attends to), without and
with the 1/√d_k scale, as CSV (repr() digits): the columns of `attnlab experiment E3`.

k·q is an explicit product-and-sum (NumPy's fixed pairwise order; `@` would go to BLAS).
"""
import numpy as np

SEED, KEYS, D_KS = 7, 2000, (16, 64, 512)


def softmax(x):
    """Softmax over the last axis with the maximum subtracted (Vaswani et al. 2017, §3.2.1)."""
    z = x - x.max(axis=-1, keepdims=True)
    e = np.exp(z)
    return e / e.sum(axis=-1, keepdims=True)


def main():
    print("d_k,dot_std,max_weight_unscaled,max_weight_scaled,effective_terms_unscaled,"
          "effective_terms_scaled")
    for d_k in D_KS:
        rng = np.random.default_rng(SEED)
        q = rng.standard_normal(d_k)
        k = rng.standard_normal((KEYS, d_k))
        dots = (k * q).sum(axis=1)  # 2000 raw scores
        w_unscaled = softmax(dots)
        w_scaled = softmax(dots / np.sqrt(d_k))
        row = [d_k, dots.std(), w_unscaled.max(), w_scaled.max(),
               1.0 / (w_unscaled ** 2).sum(), 1.0 / (w_scaled ** 2).sum()]
        print(",".join([str(d_k)] + [repr(float(v)) for v in row[1:]]))


if __name__ == "__main__":
    main()
