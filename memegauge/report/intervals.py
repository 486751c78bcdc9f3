"""95% intervals for every rate and mean a report shows: pure, vectorised, seeded functions; no I/O.

Every figure with an interval has one shape, `Figure` (a dict, so it is stored in the report JSON as is):

    {"value": 0.25, "ci95": [0.10, 0.49], "n": 20, "clusters": 12, "method": "wilson", "note": None}

* ``value``    the figure on all items (a rate as a fraction, a mean in the figure's unit).
* ``ci95``     the 95% interval ``[lo, hi]``, or None when the items cannot support one; ``note`` then
               says why ("too few items": no item; for a mean, fewer than 2 items or memes, or so few memes that every
               bootstrap resample gives the same value; "no spread": every item has the same value).
               A zero-width range, which would claim a certainty the items do not have, is never given.
* ``n``        the items behind the figure; ``clusters`` the distinct memes among them.
* ``method``   how the interval was made:
  - ``wilson`` — a rate whose items each come from a different meme: the Wilson score interval
    (Wilson 1927; Agresti & Coull 1998), which stays inside [0, 1] and is not zero-width at 0% or 100%.
  - ``wilson-clustered`` — a rate whose items share memes (AdamMeme's refinement steps of one seed,
    Arena battles of one meme, MemeQA questions of one picture): the Wilson interval on the effective
    sample size n / deff, with Kish's design effect deff = var_cluster / var_srs ≥ 1 estimated from the
    per-meme totals (ratio-estimator variance). When every item agrees (p = 0 or 1) deff cannot be
    estimated and the number of memes is used as the effective size (its most conservative value).
  - ``bootstrap`` — a mean (a score, a macro average): a seeded percentile bootstrap that resamples
    memes, not items (a cluster bootstrap; with one item per meme it is the ordinary bootstrap). A macro
    rate the bootstrap cannot bound (0 of n, or resamples that cannot differ) takes ``wilson-clustered``
    with the number of memes as its effective size (`macro_rate`).
"""

from __future__ import annotations

from typing import Any
from collections.abc import Sequence

import numpy as np

# scipy.stats.norm.ppf(0.975) to the last bit (tests/test_intervals.py checks it): importing scipy.stats for
# this one constant cost every reporting command ~1.4 s of CPU (bench/cpu_per_call.py)
Z95 = 1.959963984540054
BOOTSTRAP_ROUNDS = 2000
TOO_FEW = "too few items"
NO_SPREAD = "no spread"

Figure = dict[str, Any]


def figure(value: float | None, ci95: Sequence[float] | None, n: int, clusters: int, method: str,
           note: str | None = None) -> Figure:
    """One figure in the shape the module docstring describes."""
    return {"value": value, "ci95": None if ci95 is None else [float(ci95[0]), float(ci95[1])], "n": int(n),
            "clusters": int(clusters), "method": method, "note": note}


def wilson(successes: Any, n: Any, z: float = Z95) -> tuple[np.ndarray, np.ndarray]:
    """Wilson score interval of `successes` out of `n` (arrays or scalars; n may be fractional, an
    effective sample size): (p + z²/2n ± z·sqrt(p(1−p)/n + z²/4n²)) / (1 + z²/n)."""
    k, size = np.asarray(successes, dtype=float), np.asarray(n, dtype=float)
    with np.errstate(divide="ignore", invalid="ignore"):
        p = k / size
        centre = (p + z * z / (2 * size)) / (1 + z * z / size)
        half = z * np.sqrt(p * (1 - p) / size + z * z / (4 * size * size)) / (1 + z * z / size)
    # exactly 0 at k = 0 and 1 at k = n (the formula's value there, without rounding error)
    low = np.where(k <= 0, 0.0, np.clip(centre - half, 0.0, 1.0))
    high = np.where(k >= size, 1.0, np.clip(centre + half, 0.0, 1.0))
    return low, high


def _cluster_index(count: int, clusters: Sequence[Any] | None) -> tuple[np.ndarray, int]:
    """Each item's cluster number (0 … k−1) and k; without clusters every item is its own."""
    if clusters is None:
        return np.arange(count), count
    _, index = np.unique(np.asarray([str(c) for c in clusters], dtype=object), return_inverse=True)
    return index.reshape(-1), int(index.max() + 1) if count else 0


def design_effect(outcomes: np.ndarray, index: np.ndarray, k: int) -> float | None:
    """Kish's design effect of a clustered rate: the ratio-estimator variance over the simple random
    sampling variance p(1−p)/n, at least 1; None when p is 0 or 1 (no variance to compare)."""
    n = outcomes.size
    p = outcomes.mean()
    if p in (0.0, 1.0) or k < 2:
        return None
    totals = np.bincount(index, weights=outcomes, minlength=k)
    sizes = np.bincount(index, minlength=k).astype(float)
    var_cluster = k / (k - 1) * np.sum((totals - p * sizes) ** 2) / n ** 2
    return max(1.0, float(var_cluster / (p * (1 - p) / n)))


def rate(outcomes: Sequence[float], clusters: Sequence[Any] | None = None) -> Figure:
    """A rate (share of 1s among 0/1 outcomes) with its Wilson interval, clustered by `clusters`."""
    x = np.asarray(outcomes, dtype=float)
    index, k = _cluster_index(x.size, clusters)
    value = float(x.mean()) if x.size else None
    if x.size == 0:
        return figure(value, None, 0, 0, "wilson", TOO_FEW)
    if k == 1 and x.size > 1:  # every item from one meme: Wilson on one effective item (the memes), still a range
        lo, hi = wilson(value, 1)
        return figure(value, (lo, hi), x.size, k, "wilson-clustered")
    if k == x.size:  # Wilson's interval holds at n = 1 too: 1 of 1 is [20.7%, 100%]
        lo, hi = wilson(x.sum(), x.size)
        return figure(value, (lo, hi), x.size, k, "wilson")
    deff = design_effect(x, index, k)
    effective = k if deff is None else x.size / deff
    lo, hi = wilson(value * effective, effective)
    return figure(value, (lo, hi), x.size, k, "wilson-clustered")


def resampled_ratios(sums: np.ndarray, counts: np.ndarray, seed: int,
                     rounds: int = BOOTSTRAP_ROUNDS) -> np.ndarray:
    """Cluster bootstrap of ratios: `sums` and `counts` are clusters × columns (a column's total and
    its items in each cluster); returns rounds × columns of sum(totals)/sum(items) over resampled
    clusters (nan where a resample has no item of that column)."""
    k = sums.shape[0]
    draws = np.random.default_rng(seed).integers(0, k, size=(rounds, k))
    with np.errstate(divide="ignore", invalid="ignore"):
        return sums[draws].sum(axis=1) / counts[draws].sum(axis=1)


def _percentiles(values: np.ndarray) -> tuple[float, float] | None:
    """The 2.5th and 97.5th percentiles of the resampled values; None when most resamples had no
    value or every resample gave the same one (a few memes whose resamples cannot differ)."""
    finite = values[np.isfinite(values)]
    if finite.size < values.size // 2:
        return None
    lo, hi = np.percentile(finite, [2.5, 97.5])
    return None if lo == hi else (float(lo), float(hi))


def _bootstrapped(value: float, values: np.ndarray, n: int, k: int) -> Figure:
    found = _percentiles(values)
    return figure(value, found, n, k, "bootstrap", None if found else TOO_FEW)


def mean(values: Sequence[float], clusters: Sequence[Any] | None = None, seed: int = 0,
         rounds: int = BOOTSTRAP_ROUNDS) -> Figure:
    """A mean with its percentile cluster-bootstrap interval (memes resampled)."""
    x = np.asarray(values, dtype=float)
    index, k = _cluster_index(x.size, clusters)
    value = float(x.mean()) if x.size else None
    if x.size < 2 or k < 2:
        return figure(value, None, x.size, k, "bootstrap", TOO_FEW)
    if np.ptp(x) == 0:
        return figure(value, None, x.size, k, "bootstrap", NO_SPREAD)
    sums = np.bincount(index, weights=x, minlength=k)[:, None]
    counts = np.bincount(index, minlength=k).astype(float)[:, None]
    return _bootstrapped(value, resampled_ratios(sums, counts, seed, rounds)[:, 0], x.size, k)


def macro_rate(outcomes: Sequence[float], groups: Sequence[Any], clusters: Sequence[Any] | None = None,
               seed: int = 0, rounds: int = BOOTSTRAP_ROUNDS) -> Figure:
    """The unweighted mean over groups of each group's rate (MemeQA's macro accuracy over question
    types) with its cluster-bootstrap interval; a resample that lacks a group averages the others.
    Where the bootstrap is degenerate (every item alike, e.g. 0 of n; or memes whose resamples all give
    one value) the interval is Wilson's on the memes (`_macro_on_memes`), never none."""
    x = np.asarray(outcomes, dtype=float)
    index, k = _cluster_index(x.size, clusters)
    names, group = np.unique(np.asarray([str(g) for g in groups], dtype=object), return_inverse=True)
    if x.size == 0:
        return figure(None, None, 0, 0, "bootstrap", TOO_FEW)
    sums = np.zeros((k, names.size))
    counts = np.zeros((k, names.size))
    np.add.at(sums, (index, group), x)
    np.add.at(counts, (index, group), 1.0)
    value = float(np.mean(sums.sum(axis=0) / counts.sum(axis=0)))
    if x.size < 2 or k < 2:  # one item or one meme: no bootstrap, but Wilson on the memes (`_macro_on_memes`)
        return _macro_on_memes(value, x.size, k)
    with np.errstate(invalid="ignore"):
        draws = np.nanmean(resampled_ratios(sums, counts, seed, rounds), axis=1)
    found = _percentiles(draws) if np.ptp(x) > 0 else None
    if found is None:  # every item alike (0 of n), or memes whose resamples cannot differ
        return _macro_on_memes(value, x.size, k)
    return figure(value, found, x.size, k, "bootstrap")


def _macro_on_memes(value: float, n: int, k: int) -> Figure:
    """A macro rate the bootstrap cannot bound: the Wilson interval with the number of memes as the
    effective sample size, as `rate` gives a clustered rate whose design effect cannot be estimated
    (its most conservative value). At 0 of n (every item 0) the macro is the micro rate of the same items
    and gets the same interval: 0 of 22 on 2 memes is [0, 65.8%], Wilson(0, 2)."""
    lo, hi = wilson(value * k, k)
    return figure(value, (float(lo), float(hi)), n, k, "wilson-clustered")


def shown(fig: Figure | None, percent: bool = False, digits: int = 2) -> str:
    """A figure as text: "25.0% [10.3, 49.4]" / "6.20 [5.81, 6.55]", or the value with its note
    ("6.20 (too few items, n=1)"); "–" when there is no value. A rate always has its interval (Wilson's holds
    at n = 1: "100.0% [20.7, 100.0]")."""
    if not fig or fig.get("value") is None:
        return "–"
    scale, unit, places = (100.0, "%", 1) if percent else (1.0, "", digits)
    value = f"{scale * fig['value']:.{places}f}{unit}"
    if fig.get("ci95") is None:
        memes = fig.get("clusters") or 0
        among = f", {memes} meme{'s' if memes != 1 else ''}" if 0 < memes < (fig.get("n") or 0) else ""
        return f"{value} ({fig.get('note') or TOO_FEW}, n={fig.get('n')}{among})"
    lo, hi = fig["ci95"]
    return f"{value} [{scale * lo:.{places}f}, {scale * hi:.{places}f}]"


def columns(fig: Figure | None, prefix: str = "") -> dict[str, Any]:
    """A figure's interval and n as plain numeric columns (`<prefix>ci95_lo`, `<prefix>ci95_hi`,
    `<prefix>n`) for a flat table (`Result.to_pandas`): None where there is no interval."""
    ci = (fig or {}).get("ci95")
    return {f"{prefix}ci95_lo": None if ci is None else float(ci[0]),
            f"{prefix}ci95_hi": None if ci is None else float(ci[1]), f"{prefix}n": int((fig or {}).get("n") or 0)}


def paired_difference(first: Sequence[float], second: Sequence[float], first_fig: Figure | None = None,
                      second_fig: Figure | None = None) -> Figure:
    """The difference of two rates measured on the same items (0/1 outcomes, item i in both) with
    Newcombe's (1998) square-and-add interval for paired data (his method 10): the Wilson limits of
    each rate combined with the phi correlation of the pairs (continuity-corrected as in his method 11
    when the pairs agree more than chance). It stays inside [−1, 1] and is not zero-width when every
    pair agrees, where a bootstrap over the pairs would be. `first_fig` and
    `second_fig` (each rate's own figure, e.g. a meme-clustered Wilson) supply the marginal limits."""
    x, y = np.asarray(first, dtype=float), np.asarray(second, dtype=float)
    n = x.size
    if n < 2:
        return figure(float(x.mean() - y.mean()) if n else None, None, n, n, "newcombe-paired", TOO_FEW)
    one, two = first_fig or rate(x), second_fig or rate(y)
    p1, p2 = float(x.mean()), float(y.mean())
    if one.get("ci95") is None or two.get("ci95") is None:
        return figure(p1 - p2, None, n, one.get("clusters", n), "newcombe-paired", TOO_FEW)
    (l1, u1), (l2, u2) = one["ci95"], two["ci95"]
    a, b = float(np.sum(x * y)), float(np.sum(x * (1 - y)))
    c, d = float(np.sum((1 - x) * y)), float(np.sum((1 - x) * (1 - y)))
    margins = (a + b) * (c + d) * (a + c) * (b + d)
    # phi as in his method 11 where the pairs agree more than chance (ad > bc): without that correction
    # pairs that all agree (b = c = 0) give phi = 1 and, at p = 0.5, a zero-width interval
    agreement = max(a * d - b * c - n / 2, 0.0) if a * d > b * c else a * d - b * c
    phi = agreement / np.sqrt(margins) if margins > 0 else 0.0
    below = np.sqrt(max(0.0, (p1 - l1) ** 2 - 2 * phi * (p1 - l1) * (u2 - p2) + (u2 - p2) ** 2))
    above = np.sqrt(max(0.0, (u1 - p1) ** 2 - 2 * phi * (u1 - p1) * (p2 - l2) + (p2 - l2) ** 2))
    diff = p1 - p2
    return figure(diff, (max(-1.0, diff - below), min(1.0, diff + above)), n, one.get("clusters", n),
                  "newcombe-paired")
