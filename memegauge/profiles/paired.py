"""Paired differences of two models on the same items: pure, vectorised, seeded; no I/O.

`paired(a, b, memes)` takes two boolean arrays (right/wrong on one item list) and the items' memes, and gives the
difference of the shares right with a 95% interval from a paired cluster bootstrap (memes are resampled with all
of their items, both models' outcomes together, so the pairing and the clustering are both kept), and the exact
McNemar p-value: a two-sided binomial test of the discordant items (A right and B wrong vs the reverse) at 1/2,
exact at every n (for large n it agrees with the chi-square form). Where the bootstrap cannot bound the
difference (fewer than 2 memes, or every resample alike: both models agree on every item), Newcombe's paired
square-and-add interval with meme-clustered Wilson margins (`memegauge.report.intervals.paired_difference`) is
given instead, never a zero-width range; `method` says which.
"""

from __future__ import annotations

from typing import Any
from collections.abc import Sequence

import numpy as np
from scipy import stats

from memegauge.report import intervals as ci_

ROUNDS = 2000
SEED = 0
BOOTSTRAP = f"paired cluster bootstrap (memes resampled, {ROUNDS} rounds, seed {SEED}); exact McNemar p"
NEWCOMBE = "Newcombe paired interval (meme-clustered Wilson margins); exact McNemar p"


def mcnemar_exact(a_only: int, b_only: int) -> float | None:
    """Two-sided exact McNemar p-value of `a_only` vs `b_only` discordant items; None when there are none."""
    total = a_only + b_only
    if total == 0:
        return None
    return float(stats.binomtest(a_only, total, 0.5, alternative="two-sided").pvalue)


def cluster_bootstrap(diff: np.ndarray, memes: Sequence[Any], rounds: int = ROUNDS,
                      seed: int = SEED) -> tuple[float, float] | None:
    """Percentile 95% interval of the mean of per-item differences, resampling memes; None when fewer than 2
    memes or every resample gives one value."""
    _, index = np.unique(np.asarray([str(m) for m in memes], dtype=object), return_inverse=True)
    index = index.reshape(-1)
    k = int(index.max() + 1) if index.size else 0
    if k < 2:
        return None
    sums = np.bincount(index, weights=diff, minlength=k)
    sizes = np.bincount(index, minlength=k).astype(float)
    draws = np.random.default_rng(seed).integers(0, k, size=(rounds, k))
    means = sums[draws].sum(axis=1) / sizes[draws].sum(axis=1)
    lo, hi = np.percentile(means, [2.5, 97.5])
    return None if lo == hi else (float(lo), float(hi))


def paired(a: Sequence[bool], b: Sequence[bool], memes: Sequence[Any]) -> dict[str, Any]:
    """{n, memes, a_rate, b_rate, difference, ci95 (or None), method, note, a_only, b_only, mcnemar_p} of A − B."""
    x = np.asarray(a, dtype=bool)
    y = np.asarray(b, dtype=bool)
    n = int(x.size)
    clusters = len(set(map(str, memes)))
    if n == 0:
        return {"n": 0, "memes": 0, "a_rate": 0.0, "b_rate": 0.0, "difference": 0.0, "ci95": None,
                "method": BOOTSTRAP, "note": ci_.TOO_FEW, "a_only": 0, "b_only": 0, "mcnemar_p": None}
    diff = x.astype(float) - y.astype(float)
    a_only, b_only = int((x & ~y).sum()), int((~x & y).sum())
    interval, method, note = cluster_bootstrap(diff, memes), BOOTSTRAP, None
    if interval is None:
        found = ci_.paired_difference(x.astype(float), y.astype(float), ci_.rate(x.astype(float), list(memes)),
                                      ci_.rate(y.astype(float), list(memes)))
        interval, method, note = found["ci95"], NEWCOMBE, found["note"]
    return {"n": n, "memes": clusters, "a_rate": float(x.mean()), "b_rate": float(y.mean()),
            "difference": float(diff.mean()), "ci95": None if interval is None else tuple(interval),
            "method": method, "note": note, "a_only": a_only, "b_only": b_only,
            "mcnemar_p": mcnemar_exact(a_only, b_only)}
