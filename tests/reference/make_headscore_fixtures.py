#!/usr/bin/python3
"""Head scores (core/analysis/headscores.h) computed independently in NumPy, for
tests/core/tst_headscores.cpp and tests/cli/tst_cli_heads.cpp. Run with Debian's python3 and
NumPy (no PyTorch needed):

    /usr/bin/python3 tests/reference/make_headscore_fixtures.py

Definitions (TransformerLens transformer_lens/head_detector.py, error measure "mul"): with A one
head's n x n weights, P a 0/1 detection pattern and A' = A with column 0 (exclude_bos) and/or
the diagonal (exclude_current_token) set to 0, score = sum(A' * P) / sum(A'), NaN when
sum(A') = 0. Patterns, built here as whole matrices:
    previous token   P[i, i-1] = 1
    duplicate token  P[i, j] = 1 for j < i and token[j] == token[i]
    induction        the duplicate pattern rolled one key to the right, column 0 cleared, lower
                     triangle kept: P[i, j] = 1 for 1 <= j <= i and token[j-1] == token[i], j-1 < i
Row statistics are means over the rows that are not all zero (NaN when every row is):
    sink             A[i, 0] (Gu et al. 2025, alpha_0; flagged when > 0.3)
    entropy          -sum_j A[i,j] ln A[i,j] (0 ln 0 = 0), nats
    effective terms  1 / sum_j A[i,j]^2
    distance         sum_j A[i,j] |i - j|
Prefix matching (Olsson et al. 2022): r_0..r_{N-1} repeated twice after b BOS tokens (b = 0 or
1), mean over queries i = b+N .. b+2N-1 of A[i, i-N+1].
Rank-collapse residual (Dong et al. 2021): ||X - 1 mean(X)^T||_F / ||X||_F.

Files in fixtures/headscores/ (every score array indexed [option, layer, head] for the pattern
scores, option = exclude_bos + 2 * exclude_current_token, and [layer, head] otherwise):
    random_f64.npz  attentions (2, 3, 9, 9) float64 causal random rows, ids (9,) int64 (a BOS
                    then 4 tokens, one repeated, written twice: repeat_n = 4, bos = 1)
    random_f32.npz  attentions (1, 2, 6, 6) float32 full (not causal) rows, ids (6,); the
                    reference is computed from the float32 values converted to float64
    masked.npz      attentions (1, 3, 6, 6): head 0 with two all-zero rows, head 1 all zero,
                    head 2 the identity (its pattern scores are 0/0 with exclude_current_token)
    strings.npz     weights (2, 7, 7) float64 (3-d: heads, n, n, as `attnlab compute` writes)
                    and tokens (7,) '<U…' strings with duplicates
    planted.npz     attentions (1, 4, 11, 11), ids (11,): BOS then 5 distinct tokens twice.
                    Head 0 one-hot on the previous token (row 0 on itself), head 1 uniform
                    causal, head 2 a planted induction head (second copy on key i-N+1, the
                    other rows on the BOS), head 3 a planted duplicate head (second copy on
                    key i-N). exact_* hold the scores of these heads computed in exact rational
                    arithmetic (fractions.Fraction), then rounded once to float64.
    rank_collapse.npz  x0 (7, 5) random, x1 (6, 4) with equal rows, x2 (5, 3) near collapse,
                    x3 (4, 3) float32; expected (4,) residuals

float64 throughout; fixed seed; the zip members carry a fixed timestamp, so running the script
again reproduces the files byte for byte.
"""
import os
from fractions import Fraction

import numpy as np

from make_torch_fixtures import write_npz

OPTIONS = [(False, False), (True, False), (False, True), (True, True)]  # (bos, current)


# ---- detection patterns, as whole n x n matrices ----

def previous_pattern(n):
    return np.eye(n, k=-1)


def duplicate_pattern(ids):
    ids = np.asarray(ids)
    same = (ids[:, None] == ids[None, :]).astype(float)
    return np.tril(same, k=-1)


def induction_pattern(ids):
    rolled = np.roll(duplicate_pattern(ids), 1, axis=1)
    rolled[:, 0] = 0
    return np.tril(rolled)


def pattern_score(a, pattern, bos, current):
    kept = a.copy()
    if bos:
        kept[:, 0] = 0
    if current:
        np.fill_diagonal(kept, 0)
    total = kept.sum()
    if total == 0:
        return np.nan
    return (kept * pattern).sum() / total


def row_stats(a):
    """sink, entropy, effective terms, distance (means over rows not all zero), zero rows."""
    n = a.shape[0]
    live = ~np.all(a == 0, axis=1)
    if not live.any():
        return np.nan, np.nan, np.nan, np.nan, n
    safe = np.where(a > 0, a, 1.0)
    entropy = -np.where(a > 0, a * np.log(safe), 0.0).sum(axis=1)
    squares = (a * a).sum(axis=1)
    effective = np.where(squares > 0, 1.0 / np.where(squares > 0, squares, 1.0), 0.0)
    i, j = np.indices(a.shape)
    distance = (a * np.abs(i - j)).sum(axis=1)
    return (a[live, 0].mean(), entropy[live].mean(), effective[live].mean(),
            distance[live].mean(), int(n - live.sum()))


def reference(stack, ids, epsilon=0.3):
    """Every score of a (L, H, n, n) stack; ids None for no tokens."""
    L, H, n, _ = stack.shape
    a64 = stack.astype(np.float64)
    out = {k: np.full((4, L, H), np.nan) for k in ("previous_token", "duplicate_token",
                                                   "induction")}
    for k in ("sink", "entropy", "effective_terms", "distance"):
        out[k] = np.full((L, H), np.nan)
    out["zero_rows"] = np.zeros((L, H), dtype=np.int64)
    for l in range(L):
        for h in range(H):
            a = a64[l, h]
            for o, (bos, cur) in enumerate(OPTIONS):
                out["previous_token"][o, l, h] = pattern_score(a, previous_pattern(n), bos, cur)
                if ids is not None:
                    out["duplicate_token"][o, l, h] = pattern_score(a, duplicate_pattern(ids),
                                                                    bos, cur)
                    out["induction"][o, l, h] = pattern_score(a, induction_pattern(ids), bos, cur)
            (out["sink"][l, h], out["entropy"][l, h], out["effective_terms"][l, h],
             out["distance"][l, h], out["zero_rows"][l, h]) = row_stats(a)
    with np.errstate(invalid="ignore"):
        out["sink_flag"] = (out["sink"] > epsilon).astype(np.uint8)
    return out


def prefix_matching(stack, repeat_n, bos):
    b = 1 if bos else 0
    L, H, n, _ = stack.shape
    assert n == b + 2 * repeat_n
    q = np.arange(b + repeat_n, b + 2 * repeat_n)
    return stack.astype(np.float64)[:, :, q, q - repeat_n + 1].mean(axis=-1)


def random_rows(rng, n, causal):
    logits = rng.standard_normal((n, n)) * 2.0
    if causal:
        logits = np.where(np.tril(np.ones((n, n))) > 0, logits, -np.inf)
    e = np.exp(logits - logits.max(axis=1, keepdims=True))
    return e / e.sum(axis=1, keepdims=True)


# ---- exact scores of the planted heads ----

def exact_pattern_score(a, pattern, bos, current):
    n = len(a)
    num = den = Fraction(0)
    for i in range(n):
        for j in range(n):
            if (bos and j == 0) or (current and i == j):
                continue
            den += a[i][j]
            if pattern[i][j]:
                num += a[i][j]
    return float(num / den) if den != 0 else np.nan


def planted_heads(tokens, repeat_n):
    """Four n x n heads as lists of Fractions (see the module docstring)."""
    n = len(tokens)
    zero = lambda: [[Fraction(0)] * n for _ in range(n)]
    prev, uniform, induction, duplicate = zero(), zero(), zero(), zero()
    for i in range(n):
        prev[i][max(i - 1, 0)] = Fraction(1)
        for j in range(i + 1):
            uniform[i][j] = Fraction(1, i + 1)
        second = i >= 1 + repeat_n
        induction[i][i - repeat_n + 1 if second else 0] = Fraction(1)
        duplicate[i][i - repeat_n if second else 0] = Fraction(1)
    return [prev, uniform, induction, duplicate]


def planted(out_dir):
    repeat_n = 5
    ids = [0] + [7, 3, 9, 4, 8] * 2
    n = len(ids)
    heads = planted_heads(ids, repeat_n)
    stack = np.array([[[[float(x) for x in row] for row in h] for h in heads]])
    arrays = {"attentions": stack, "ids": np.array(ids, dtype=np.int64),
              "repeat_n": np.array(repeat_n, dtype=np.int64), "bos": np.array(1, dtype=np.int64)}
    ref = reference(stack, ids)
    ref["prefix_matching"] = prefix_matching(stack, repeat_n, True)
    patterns = {"previous_token": previous_pattern(n), "duplicate_token": duplicate_pattern(ids),
                "induction": induction_pattern(ids)}
    for name, pattern in patterns.items():
        exact = np.zeros((4, 1, len(heads)))
        for o, (bos, cur) in enumerate(OPTIONS):
            for h, a in enumerate(heads):
                exact[o, 0, h] = exact_pattern_score(a, pattern, bos, cur)
        arrays["exact_" + name] = exact
    arrays.update(ref)
    write_npz(os.path.join(out_dir, "planted.npz"), arrays)
    print("planted: previous (none, bos, current, both) of head 0:",
          arrays["exact_previous_token"][:, 0, 0], "induction of head 2:",
          arrays["exact_induction"][:, 0, 2], "prefix:", ref["prefix_matching"][0])


def random_cases(rng, out_dir):
    ids = np.array([0, 2, 5, 2, 3, 2, 5, 2, 3], dtype=np.int64)  # BOS, then 4 tokens twice
    stack = np.stack([np.stack([random_rows(rng, 9, True) for _ in range(3)]) for _ in range(2)])
    ref = reference(stack, ids)
    ref["prefix_matching"] = prefix_matching(stack, 4, True)
    write_npz(os.path.join(out_dir, "random_f64.npz"),
              {"attentions": stack, "ids": ids, "repeat_n": np.array(4, dtype=np.int64),
               "bos": np.array(1, dtype=np.int64), **ref})

    ids = np.array([4, 1, 4, 4, 0, 1], dtype=np.int64)
    stack = np.stack([np.stack([random_rows(rng, 6, False) for _ in range(2)])]).astype(np.float32)
    write_npz(os.path.join(out_dir, "random_f32.npz"),
              {"attentions": stack, "ids": ids, **reference(stack, ids)})

    ids = np.array([1, 2, 1, 3, 2, 1], dtype=np.int64)
    head0 = random_rows(rng, 6, True)
    head0[[2, 5]] = 0
    stack = np.stack([np.stack([head0, np.zeros((6, 6)), np.eye(6)])])
    write_npz(os.path.join(out_dir, "masked.npz"),
              {"attentions": stack, "ids": ids, **reference(stack, ids)})

    tokens = np.array(["the", "cat", "the", "mat", "cat", "the", "dog"])
    ids = np.unique(tokens, return_inverse=True)[1]
    weights = np.stack([random_rows(rng, 7, True) for _ in range(2)])
    write_npz(os.path.join(out_dir, "strings.npz"),
              {"weights": weights, "tokens": tokens, **reference(weights[None], ids)})


def rank_collapse(rng, out_dir):
    x0 = rng.standard_normal((7, 5))
    x1 = np.tile(rng.standard_normal((1, 4)), (6, 1))
    x2 = np.tile(rng.standard_normal((1, 3)), (5, 1)) + 1e-6 * rng.standard_normal((5, 3))
    x3 = rng.standard_normal((4, 3)).astype(np.float32)
    xs = [x0, x1, x2, x3]
    expected = []
    for x in xs:
        x = x.astype(np.float64)
        expected.append(np.linalg.norm(x - x.mean(axis=0, keepdims=True)) / np.linalg.norm(x))
    write_npz(os.path.join(out_dir, "rank_collapse.npz"),
              {"x0": x0, "x1": x1, "x2": x2, "x3": x3, "expected": np.array(expected)})
    print("rank collapse residuals:", expected)


def main(fixture_dir):
    out_dir = os.path.join(fixture_dir, "headscores")
    rng = np.random.default_rng(20250)
    planted(out_dir)
    random_cases(rng, out_dir)
    rank_collapse(rng, out_dir)


if __name__ == "__main__":
    main(os.path.join(os.path.dirname(os.path.abspath(__file__)), "fixtures"))
