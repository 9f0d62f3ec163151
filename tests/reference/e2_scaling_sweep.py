#!/usr/bin/python3
"""E2 — why divide by √d_k (docs/experiments.md), in plain NumPy.

seed 1, 16 keys per query, 4000 trials; for each d_k in 4, 16, 64, 256, 1024 (in that order,
one generator): draw q (trials × 1 × d_k), then k (trials × 16 × d_k); raw scores s = q·k per
key. Prints per d_k the std of all raw scores next to √d_k, and the mean over trials of the
largest softmax weight and of the softmax Jacobian's Frobenius norm, without and with the
1/√d_k scale, as CSV (repr() digits): the columns of `attnlab sweep --format csv`.

q·k is an explicit product-and-sum (NumPy's fixed pairwise order; `@` would go to BLAS).
‖J‖ for J = diag(p) − p pᵀ uses the cancellation-free form of core/analysis/metrics.cpp (same partial
sums in the same order): ‖J‖² = Σ_i p_i² ((Σ_{j≠i} p_j)² + Σ_{j≠i} p_j²) with Σ_{j≠i} from
running sums to the left and to the right of i. The textbook Σp² − 2Σp³ + (Σp²)² cancels to
0 or below on near-one-hot rows (unscaled, d_k ≥ 64).
"""
import numpy as np

SEED, TRIALS, KEYS, D_KS = 1, 4000, 16, (4, 16, 64, 256, 1024)


def softmax(x):
    """Softmax over the last axis with the maximum subtracted (Vaswani et al. 2017, §3.2.1)."""
    z = x - x.max(axis=-1, keepdims=True)
    e = np.exp(z)
    return e / e.sum(axis=-1, keepdims=True)


def jacobian_norm(p):
    """‖diag(p) − p pᵀ‖_F for every row of p (rows × keys), without cancellation."""
    p2 = p * p
    zero = np.zeros(p.shape[:-1] + (1,))
    # Σ_{j<i} and Σ_{j>i} as running sums (cumsum adds left to right).
    before1 = np.concatenate([zero, np.cumsum(p, axis=-1)[..., :-1]], axis=-1)
    before2 = np.concatenate([zero, np.cumsum(p2, axis=-1)[..., :-1]], axis=-1)
    after1 = np.concatenate([np.cumsum(p[..., ::-1], axis=-1)[..., ::-1][..., 1:], zero], axis=-1)
    after2 = np.concatenate([np.cumsum(p2[..., ::-1], axis=-1)[..., ::-1][..., 1:], zero], axis=-1)
    others1 = before1 + after1  # Σ_{j≠i} p_j = 1 − p_i, never rounded away
    others2 = before2 + after2  # Σ_{j≠i} p_j²
    terms = p2 * (others1 * others1 + others2)
    return np.sqrt(np.cumsum(terms, axis=-1)[..., -1])  # Σ_i left to right


def main():
    rng = np.random.default_rng(SEED)
    print("d_k,score_std,sqrt_dk,max_weight_unscaled,jacobian_norm_unscaled,"
          "max_weight_scaled,jacobian_norm_scaled")
    for d_k in D_KS:
        q = rng.standard_normal((TRIALS, 1, d_k))
        k = rng.standard_normal((TRIALS, KEYS, d_k))
        s = (q * k).sum(axis=-1)  # trials × keys raw scores
        row = [str(d_k), repr(float(s.std())), repr(float(np.sqrt(d_k)))]
        for x in (s, s / np.sqrt(d_k)):  # unscaled, then scaled by 1/√d_k
            p = softmax(x)
            row += [repr(float(p.max(axis=-1).mean())), repr(float(jacobian_norm(p).mean()))]
        print(",".join(row))


if __name__ == "__main__":
    main()
