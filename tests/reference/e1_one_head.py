#!/usr/bin/python3
"""E1 — one head, checked (docs/experiments.md), in plain NumPy.

n = 5, d_k = 8, d_v = 4, seed 0; draw Q (n × d_k), K (n × d_k), V (n × d_v) from one
numpy.random.default_rng(seed); W = softmax(Q Kᵀ / √d_k) row-wise. Prints W with every row sum
as CSV (repr() digits): the columns of `attnlab experiment E1 --format csv`.

Q Kᵀ is written as an explicit product-and-sum: NumPy then sums each row of d_k products in its
own fixed (pairwise) order, whereas `Q @ K.T` goes to BLAS, whose summation order depends on
the BLAS library and CPU. np.exp is the C library's exp except on AVX-512 CPUs, where NumPy
uses its own vectorised exp (last-bit differences); make_experiment_fixtures.py turns that off.
"""
import numpy as np

N, D_K, D_V, SEED = 5, 8, 4, 0


def softmax(x):
    """Row-wise softmax with the row maximum subtracted (Vaswani et al. 2017, §3.2.1)."""
    z = x - x.max(axis=-1, keepdims=True)
    e = np.exp(z)
    return e / e.sum(axis=-1, keepdims=True)


def main():
    rng = np.random.default_rng(SEED)
    Q = rng.standard_normal((N, D_K))
    K = rng.standard_normal((N, D_K))
    V = rng.standard_normal((N, D_V))  # drawn so the stream matches; O = W V is not printed
    S = (Q[:, None, :] * K[None, :, :]).sum(axis=-1) / np.sqrt(D_K)  # n × n scaled scores
    W = softmax(S)
    row_sums = W.sum(axis=1)
    print(",".join(["query"] + [f"key_{j}" for j in range(N)] + ["row_sum", "row_sum_error"]))
    for i in range(N):
        cells = [str(i)] + [repr(float(w)) for w in W[i]]
        cells += [repr(float(row_sums[i])), repr(float(abs(row_sums[i] - 1.0)))]
        print(",".join(cells))
    assert V.shape == (N, D_V)


if __name__ == "__main__":
    main()
