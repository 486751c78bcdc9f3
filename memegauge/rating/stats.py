"""Agreement statistics for the "People vs judges" section: pure, vectorised, seeded; no I/O.

Which coefficient answers which paper's question:

* AdamMeme Table 3 — "intra-class agreement" of the Scorer and people on the 1–10 score, and on the
  FR list (score ≥ threshold as 0/1): ICC(2,1), two-way random effects, absolute agreement, single
  rater (Shrout & Fleiss 1979), `icc_2_1`.
* AdamMeme Table 8 — accuracy of each person against the Miners' majority vote (a meme counts when the
  chosen category set equals the vote), and "the average Cohen's Kappa between any two expert
  annotators": `mean_pairwise_kappa` over every (meme, category) yes/no decision.
* MemeArena App. C, Table 5 — accuracy of each judge (and the joint vote) against the people's vote,
  three classes (A, B, tie); the inter-annotator agreement as Fleiss' κ (`fleiss_kappa`).
* MemeQA Tables 2–3 — the "Hum" row: a person's accuracy per question type.

Krippendorff's α (the `krippendorff` package: it handles missing ratings and every level of
measurement, which a person who skips an item produces) is given beside each, interval for scores and
nominal for labels and votes. Intervals are percentile bootstraps over items (`bootstrap`), seeded.
"""

from __future__ import annotations

from itertools import combinations
from typing import Any
from collections.abc import Callable, Sequence

import numpy as np

__all__ = ["bootstrap", "cohen_kappa", "fleiss_kappa", "icc_2_1", "krippendorff_alpha", "mean_pairwise_kappa",
           "category_counts", "interval"]

BOOTSTRAP_ROUNDS = 1000


def icc_2_1(ratings: np.ndarray) -> float | None:
    """ICC(2,1) of an n×k matrix (n targets rated by k raters); None when undefined."""
    x = np.asarray(ratings, dtype=float)
    n, k = x.shape
    if n < 2 or k < 2:
        return None
    grand = x.mean()
    ms_rows = k * ((x.mean(axis=1) - grand) ** 2).sum() / (n - 1)
    ms_cols = n * ((x.mean(axis=0) - grand) ** 2).sum() / (k - 1)
    resid = x - x.mean(axis=1, keepdims=True) - x.mean(axis=0, keepdims=True) + grand
    ms_err = (resid ** 2).sum() / ((n - 1) * (k - 1))
    denom = ms_rows + (k - 1) * ms_err + k * (ms_cols - ms_err) / n
    return float((ms_rows - ms_err) / denom) if denom > 0 else None


def cohen_kappa(a: Sequence[Any], b: Sequence[Any]) -> float | None:
    """Cohen's κ of two raters' labels; None when chance agreement is total."""
    a, b = np.asarray(a), np.asarray(b)
    if a.size == 0:
        return None
    labels = np.union1d(a, b)
    observed = float((a == b).mean())
    expected = float(sum((a == v).mean() * (b == v).mean() for v in labels))
    return None if expected >= 1 else (observed - expected) / (1 - expected)


def fleiss_kappa(counts: np.ndarray) -> float | None:
    """Fleiss' κ (Fleiss 1971) of an items × categories table of how many raters chose each category;
    every item needs the same number of raters (≥ 2). None when chance agreement is total."""
    x = np.asarray(counts, dtype=float)
    if x.ndim != 2 or x.shape[0] == 0:
        return None
    raters = x.sum(axis=1)
    if raters.min() < 2 or not np.allclose(raters, raters[0]):
        return None
    m = raters[0]
    p_item = ((x * (x - 1)).sum(axis=1)) / (m * (m - 1))
    p_cat = x.sum(axis=0) / x.sum()
    expected = float((p_cat ** 2).sum())
    return None if expected >= 1 else (float(p_item.mean()) - expected) / (1 - expected)


def category_counts(labels: np.ndarray, categories: Sequence[Any]) -> np.ndarray:
    """items × categories counts from an items × raters label matrix (the input of `fleiss_kappa`)."""
    labels = np.asarray(labels, dtype=object)
    return np.stack([(labels == c).sum(axis=1) for c in categories], axis=1)


def krippendorff_alpha(ratings: np.ndarray, level: str) -> float | None:
    """Krippendorff's α of a raters × items matrix (np.nan = not rated); `level` is 'nominal',
    'ordinal', 'interval' or 'ratio'. None when fewer than two values are pairable or all are equal."""
    import krippendorff

    x = np.asarray(ratings, dtype=float)
    if x.ndim != 2 or x.shape[0] < 2 or (~np.isnan(x)).sum(axis=0).max(initial=0) < 2:
        return None
    if np.unique(x[~np.isnan(x)]).size < 2:
        return None
    return float(krippendorff.alpha(reliability_data=x, level_of_measurement=level))


def mean_pairwise_kappa(labels: np.ndarray) -> float | None:
    """The mean of Cohen's κ over every pair of raters (columns of an items × raters matrix), as
    AdamMeme Table 8 reports "the average Cohen's Kappa between any two expert annotators"."""
    x = np.asarray(labels, dtype=object)
    kappas = [k for i, j in combinations(range(x.shape[1]), 2)
              if (k := cohen_kappa(list(x[:, i]), list(x[:, j]))) is not None]
    return float(np.mean(kappas)) if kappas else None


def bootstrap(statistic: Callable[[np.ndarray], float | None], n: int, seed: int,
              rounds: int = BOOTSTRAP_ROUNDS) -> tuple[float, float] | None:
    """95% percentile interval of `statistic(indices)` over `rounds` resamples (with replacement) of
    the n items; resamples where the statistic is undefined are left out. None under 2 items, and None
    where every resample gave the same value (a zero-width range would claim a certainty it lacks)."""
    if n < 2:
        return None
    draws = np.random.default_rng(seed).integers(0, n, size=(rounds, n))
    values = np.array([v for row in draws if (v := statistic(row)) is not None and np.isfinite(v)])
    if values.size < rounds // 2:
        return None
    low, high = np.percentile(values, [2.5, 97.5])
    return None if low == high else (float(low), float(high))  # resamples that cannot differ: no interval


def interval(statistic: Callable[[np.ndarray], float | None], n: int, seed: int) -> dict[str, Any]:
    """{value, ci95, n}: the statistic on all n items and its bootstrap interval."""
    value = statistic(np.arange(n)) if n else None
    return {"value": value, "ci95": bootstrap(statistic, n, seed) if value is not None else None, "n": n}
