"""MemeArena ranking (paper §2.4): online Elo and Bradley–Terry over battles.

Pure, vectorised, seeded functions in the style of FastChat's `rating_systems.py`. The input is a
battles table in Chatbot Arena format — one record per pairwise judgment::

    {"model_a": "gpt-4o", "model_b": "llava-next-8b", "winner": "model_a",
     "judge": "qwen2.5-vl-32b", "dimension": "Correctness"}          # judge, dimension optional

``winner`` is one of ``"model_a"``, ``"model_b"``, ``"tie"`` (both strong) or ``"tie (bothbad)"``
(both weak). The two tie kinds are kept apart in the table but every rating here treats them alike:
a tie is half a win for each side (paper §2.4, eq. 5 and the text after it). The reported `win_rate`
counts a tie as a non-win, as the paper's Tables 1 and 8 do (their win-rate columns average 48.74% and
46.52%: not 50%); `score` is the tie-½ figure beside it.

Rating scale (both methods): P(i beats j) = 1 / (1 + base ** ((R_j − R_i) / scale)), with
scale = 400 (the paper's α) and base = 10.

* `compute_online_elo` — the classic sequential update R' = R + K·(S − P), order-sensitive.
* `compute_bt` — Bradley–Terry by maximum likelihood. Battles are first aggregated into a pairwise
  win matrix W (W[i, j] = wins of i over j + ½·ties between them), so the cost of a fit depends on
  the number of models, not of battles. The likelihood only sees rating differences; the ratings
  are anchored so that their **mean is `init`** (1000 by default). No regularisation is used when
  the maximum-likelihood estimate exists (the directed "beat or tied" graph is strongly
  connected); when it does not (e.g. a model that never lost nor tied), the default `reg=None`
  falls back to a small L2 penalty (`FALLBACK_REG`), see `compute_bt`.
* `bootstrap_bt` — percentile bootstrap of the BT ratings. Resampling draws multinomial counts over
  the aggregated (pair, outcome) cells — the same distribution as resampling battle rows — and all
  rounds are fitted in one vectorised L-BFGS problem.
* `rank_table` / `rank_by_dimension` — the report rows ``{model, elo, bt, bt_ci: [lo, hi], win_rate,
  score, battles}``; `mean_ci` — a figure's mean over repeated runs with its t-interval.

The battles table itself is `memegauge.arena.battles`; reading battle files and the `arena rank`
command's output are `memegauge.arena.battle_file`. This module does no I/O.
"""

from __future__ import annotations

import math
import re
from collections.abc import Iterable, Mapping, Sequence
from typing import Any

import numpy as np
from scipy.optimize import minimize
from scipy.sparse import csr_matrix
from scipy.sparse.csgraph import connected_components
from scipy.special import expit

from memegauge.arena.battles import Battles, as_battles

__all__ = [
    "FALLBACK_REG",
    "compute_online_elo",
    "compute_bt",
    "bootstrap_bt",
    "bootstrap_bt_samples",
    "pairwise_wins",
    "win_rates",
    "scores",
    "battle_counts",
    "predicted_win_matrix",
    "rank_table",
    "rank_by",
    "rank_by_dimension",
    "mean_ci",
    "STYLE_FEATURES",
    "style_counts",
    "style_features",
    "style_control",
    "style_ranking",
]

#: L2 strength used by ``reg=None`` when no finite maximum-likelihood estimate exists. It is a
#: Gaussian prior on the ratings with standard deviation scale/√reg = 4,000 rating points at the
#: default scale, added to the *summed* (not averaged) log-likelihood: negligible against real data,
#: but it keeps an undefeated model's rating finite (1 win over an opponent: +920 above it;
#: 10 wins: about +1,220; 1,000 wins: about +1,990).
FALLBACK_REG = 0.01

_GTOL = 1e-7  # L-BFGS projected-gradient tolerance on the per-battle (averaged) objective
_NEWTON_STEPS = 8  # Newton polish steps after L-BFGS (2–3 are used in practice)
_NEWTON_GTOL = 1e-13  # gradient at which a problem counts as solved
_CHUNK_CELLS = 4_000_000  # max rounds·n² doubles held at once by the batched fit


# --------------------------------------------------------------------------------------------------


def compute_online_elo(
    battles: Battles | Iterable[Mapping[str, Any]],
    k: float = 4.0,
    scale: float = 400,
    base: float = 10,
    init: float = 1000,
) -> dict[str, float]:
    """Sequential Elo in table order: for each battle, E = 1/(1 + base^((R_b − R_a)/scale)),
    R_a += k·(S − E), R_b −= k·(S − E), with S = 1 / 0 / ½ (either tie) for model_a.

    Order-sensitive by design (paper §2.4); every model starts at `init`.
    """
    battles = as_battles(battles)
    ratings = [float(init)] * len(battles.models)
    log_base = math.log(base)
    rows = zip(battles.model_a.tolist(), battles.model_b.tolist(), battles.score_a.tolist(), strict=True)
    for a, b, s in rows:
        expected = 1.0 / (1.0 + math.exp(log_base * (ratings[b] - ratings[a]) / scale))
        delta = k * (s - expected)
        ratings[a] += delta
        ratings[b] -= delta
    return dict(zip(battles.models, ratings, strict=True))


# --------------------------------------------------------------------------------------------------
# Bradley–Terry
# --------------------------------------------------------------------------------------------------


def pairwise_wins(battles: Battles | Iterable[Mapping[str, Any]]) -> np.ndarray:
    """The aggregated win matrix W (n × n, rows/cols in `battles.models` order):
    W[i, j] = battles i won against j + ½ · ties between i and j (either tie kind)."""
    battles = as_battles(battles)
    n = len(battles.models)
    s = battles.score_a
    flat = np.bincount(battles.model_a * n + battles.model_b, weights=s, minlength=n * n)
    flat += np.bincount(battles.model_b * n + battles.model_a, weights=1.0 - s, minlength=n * n)
    return flat.reshape(n, n)


def _mle_exists(wins: np.ndarray) -> bool:
    """Finite BT maximum-likelihood ratings exist iff the directed graph i→j (W[i, j] > 0) is
    strongly connected (Zermelo 1929; Ford 1957)."""
    n = wins.shape[0]
    if n <= 1:
        return True
    count, _ = connected_components(csr_matrix(wins > 0), directed=True, connection="strong")
    return count == 1


def _no_mle_message(wins: np.ndarray, models: Sequence[str]) -> str:
    _, labels = connected_components(csr_matrix(wins > 0), directed=True, connection="strong")
    for label in np.unique(labels):
        inside = labels == label
        if not wins[np.ix_(~inside, inside)].any():  # nobody outside ever beat or tied them
            group = ", ".join(repr(models[i]) for i in np.flatnonzero(inside))
            return (
                "no finite maximum-likelihood Bradley–Terry ratings: "
                f"[{group}] never lost to (nor tied with) any other model, or were never compared "
                "with them; pass reg > 0 (or reg=None for the automatic fallback)"
            )
    return "no finite maximum-likelihood Bradley–Terry ratings; pass reg > 0"  # pragma: no cover


def _bt_parts(
    theta: np.ndarray, wins: np.ndarray, reg: np.ndarray, alpha: float, hessian: bool = False
):
    """Per-problem BT objective, gradient and (optionally) Hessian for R independent problems.

    theta: (R, n) natural-scale ratings; wins: (R, n, n) averaged win matrices (each sums to 1);
    reg: (R,) L2 strengths on the same averaged scale. Per problem::

        f(θ) = −Σ_ij W_ij log σ(α(θ_i − θ_j)) + ½·reg·Σθ² + ½·(Σθ)²

    The last term fixes the additive gauge (the likelihood is shift-invariant) and is 0 at the
    optimum, so it changes no rating difference. Returns f (R,), gradient (R, n), Hessian (R, n, n).
    """
    z = alpha * (theta[:, :, None] - theta[:, None, :])
    total = theta.sum(axis=1)
    f = (
        (wins * np.logaddexp(0.0, -z)).sum(axis=(1, 2))
        + 0.5 * reg * (theta * theta).sum(axis=1)
        + 0.5 * total * total
    )
    p_lose = expit(-z)
    g = wins * p_lose
    grad = -alpha * (g.sum(axis=2) - g.sum(axis=1)) + reg[:, None] * theta + total[:, None]
    if not hessian:
        return f, grad, None
    n = theta.shape[1]
    curvature = alpha * alpha * (wins + wins.transpose(0, 2, 1)) * p_lose * (1.0 - p_lose)
    hess = -curvature + 1.0  # off-diagonal: −c_ij, plus the gauge term's 1·1ᵀ
    diagonal = curvature.sum(axis=2) - np.einsum("rii->ri", curvature) + reg[:, None] + 1.0
    hess[:, np.arange(n), np.arange(n)] = diagonal
    return f, grad, hess


def _bt_objective(x: np.ndarray, wins: np.ndarray, reg: np.ndarray, alpha: float):
    """Sum of the R problems' objectives and the flat gradient, for scipy (they share no variable,
    so the joint minimum is every problem's minimum)."""
    theta = x.reshape(wins.shape[0], wins.shape[1])
    f, grad, _ = _bt_parts(theta, wins, reg, alpha)
    return float(f.sum()), grad.ravel()


def _fit_bt_batch(wins: np.ndarray, reg: np.ndarray, alpha: float) -> np.ndarray:
    """Fit R BT problems at once; returns (R, n) natural-scale ratings with mean 0.

    `wins` are raw win matrices; each is divided by its total so the objective is a per-battle
    average (well-scaled for the tolerances) and `reg` is divided likewise. One joint L-BFGS-B
    (scipy) run brings every problem close (gradient ≤ 1e-7), then a few vectorised Newton steps
    with exact Hessians (guarded: a step is kept only where it does not raise f) polish each to a
    gradient of ~1e-13, i.e. ratings exact to far below 0.001 points. Problems with no battles get
    all-zero ratings.
    """
    r, n = wins.shape[0], wins.shape[1]
    totals = wins.sum(axis=(1, 2))
    safe = np.where(totals > 0, totals, 1.0)
    averaged = wins / safe[:, None, None]
    strength = np.asarray(reg, dtype=float) / safe
    result = minimize(
        _bt_objective,
        np.zeros(r * n),
        args=(averaged, strength, alpha),
        jac=True,
        method="L-BFGS-B",
        options={"maxiter": 10_000, "maxfun": 20_000, "gtol": _GTOL, "ftol": 1e-13},
    )
    theta = result.x.reshape(r, n)
    for _ in range(_NEWTON_STEPS):
        f, grad, hess = _bt_parts(theta, averaged, strength, alpha, hessian=True)
        active = np.abs(grad).max(axis=1) > _NEWTON_GTOL
        if not active.any():
            break
        step = np.linalg.solve(hess[active], grad[active][:, :, None])[:, :, 0]
        candidate = theta[active] - step
        f_new, _, _ = _bt_parts(candidate, averaged[active], strength[active], alpha)
        keep = np.isfinite(f_new) & (f_new <= f[active] + 1e-14 * (1.0 + np.abs(f[active])))
        if not keep.any():
            break
        rows = np.flatnonzero(active)[keep]
        theta[rows] = candidate[keep]
    return theta - theta.mean(axis=1, keepdims=True)


def _resolve_reg(wins: np.ndarray, reg: float | None, models: Sequence[str]) -> float:
    if reg is None:
        return 0.0 if _mle_exists(wins) else FALLBACK_REG
    if reg < 0:
        raise ValueError(f"reg must be >= 0, got {reg}")
    if reg == 0 and not _mle_exists(wins):
        raise ValueError(_no_mle_message(wins, models))
    return float(reg)


def compute_bt(
    battles: Battles | Iterable[Mapping[str, Any]],
    scale: float = 400,
    base: float = 10,
    init: float = 1000,
    reg: float | None = None,
) -> dict[str, float]:
    """Bradley–Terry ratings by maximum likelihood, ties counted as half a win each way.

    Maximises Σ_{i≠j} W_ij · log P(i beats j) (paper eq. 5) over the aggregated win matrix
    (`pairwise_wins`) with L-BFGS (scipy), P(i beats j) = 1/(1 + base^((R_j − R_i)/scale)).

    Anchor: the likelihood fixes only differences; the ratings returned have **mean exactly `init`**
    (the average model sits at `init`, whatever the set of models).

    Regularisation: `reg` is the coefficient of ½·reg·Σθ² (θ = (R − init)/scale) added to the summed
    negative log-likelihood. ``reg=None`` (default) means none when the MLE exists and
    `FALLBACK_REG` when it does not (a model or group never lost nor tied against the rest, or
    groups never compared); ``reg=0`` forces the pure MLE and raises ValueError when it does not
    exist.
    """
    battles = as_battles(battles)
    if not len(battles):
        return {}
    wins = pairwise_wins(battles)
    strength = _resolve_reg(wins, reg, battles.models)
    theta = _fit_bt_batch(wins[None], np.array([strength]), math.log(base))[0]
    return {m: float(scale * t + init) for m, t in zip(battles.models, theta, strict=True)}


def _bootstrap_win_matrices(battles: Battles, rounds: int, rng: np.random.Generator) -> np.ndarray:
    """(rounds, n, n) win matrices of bootstrap resamples, drawn as multinomial counts over the
    aggregated (model_a, model_b, outcome) cells — distributionally identical to resampling rows."""
    n = len(battles.models)
    total = len(battles)
    outcome3 = np.minimum(battles.outcome, 2).astype(np.int64)  # merge the two tie kinds
    cell_ids = (battles.model_a * n + battles.model_b) * 3 + outcome3
    counts = np.bincount(cell_ids, minlength=n * n * 3)
    cells = np.flatnonzero(counts)
    draws = rng.multinomial(total, counts[cells] / total, size=rounds).astype(np.float64)
    pair, outcome = np.divmod(cells, 3)
    a, b = np.divmod(pair, n)
    s = np.array([1.0, 0.0, 0.5])[outcome]
    # Each cell adds s·count to W[a, b] and (1 − s)·count to W[b, a]: a sparse (cells × n²) map.
    rows = np.concatenate([np.arange(cells.size), np.arange(cells.size)])
    cols = np.concatenate([a * n + b, b * n + a])
    vals = np.concatenate([s, 1.0 - s])
    keep = vals != 0
    mapping = csr_matrix((vals[keep], (rows[keep], cols[keep])), shape=(cells.size, n * n))
    flat = np.asarray((mapping.T @ draws.T).T)
    return flat.reshape(rounds, n, n)


def bootstrap_bt_samples(
    battles: Battles | Iterable[Mapping[str, Any]],
    rounds: int = 1000,
    seed: int = 0,
    scale: float = 400,
    base: float = 10,
    init: float = 1000,
    reg: float | None = None,
) -> np.ndarray:
    """BT ratings of `rounds` bootstrap resamples: a (rounds, n) array, columns in
    `battles.models` order, each row anchored to mean `init`. Seeded (`numpy.random.default_rng`).

    `reg` as in `compute_bt`, decided per resample (``None``: fallback only where that resample
    has no finite MLE; ``0``: ValueError if any resample has none).
    """
    battles = as_battles(battles)
    if rounds < 1:
        raise ValueError(f"rounds must be >= 1, got {rounds}")
    n = len(battles.models)
    if not len(battles):
        return np.zeros((rounds, 0))
    rng = np.random.default_rng(seed)
    wins = _bootstrap_win_matrices(battles, rounds, rng)
    strengths = np.array([_resolve_reg(w, reg, battles.models) for w in wins])
    chunk = max(1, _CHUNK_CELLS // (n * n))
    theta = np.concatenate(
        [
            _fit_bt_batch(wins[i : i + chunk], strengths[i : i + chunk], math.log(base))
            for i in range(0, rounds, chunk)
        ]
    )
    return scale * theta + init


def bootstrap_bt(
    battles: Battles | Iterable[Mapping[str, Any]],
    rounds: int = 1000,
    seed: int = 0,
    scale: float = 400,
    base: float = 10,
    init: float = 1000,
    reg: float | None = None,
    level: float = 0.95,
) -> tuple[dict[str, float], dict[str, tuple[float, float]]]:
    """Percentile bootstrap of the BT ratings: (median rating per model, {model: (lo, hi)}) where
    (lo, hi) are the (1 − level)/2 and (1 + level)/2 quantiles over `rounds` resamples (95% by
    default). Reproducible: the same `seed` gives the same numbers."""
    if not 0 < level < 1:
        raise ValueError(f"level must be in (0, 1), got {level}")
    battles = as_battles(battles)
    samples = bootstrap_bt_samples(battles, rounds, seed, scale, base, init, reg)
    median = np.median(samples, axis=0)
    lo, hi = np.quantile(samples, [(1 - level) / 2, (1 + level) / 2], axis=0)
    return (
        {m: float(v) for m, v in zip(battles.models, median, strict=True)},
        {m: (float(x), float(y)) for m, x, y in zip(battles.models, lo, hi, strict=True)},
    )


# --------------------------------------------------------------------------------------------------
# Descriptive statistics
# --------------------------------------------------------------------------------------------------


def battle_counts(battles: Battles | Iterable[Mapping[str, Any]]) -> dict[str, int]:
    """Number of battles each model took part in (as model_a or model_b)."""
    battles = as_battles(battles)
    n = len(battles.models)
    counts = np.bincount(battles.model_a, minlength=n) + np.bincount(battles.model_b, minlength=n)
    return {m: int(c) for m, c in zip(battles.models, counts, strict=True)}


def _points(battles: Battles, points_a: np.ndarray, points_b: np.ndarray) -> dict[str, float]:
    """Per model: the points it earned over its battles (as model_a or model_b) / its battles."""
    n = len(battles.models)
    points = np.bincount(battles.model_a, weights=points_a, minlength=n) + np.bincount(
        battles.model_b, weights=points_b, minlength=n
    )
    counts = np.bincount(battles.model_a, minlength=n) + np.bincount(battles.model_b, minlength=n)
    return {m: float(p / c) for m, p, c in zip(battles.models, points, counts, strict=True)}


def win_rates(battles: Battles | Iterable[Mapping[str, Any]]) -> dict[str, float]:
    """wins / battles for each model, a tie of either kind a non-win for both (the paper's Tables 1
    and 8, whose win-rate columns average under 50%, and Chatbot Arena's win fraction)."""
    battles = as_battles(battles)
    return _points(battles, (battles.score_a == 1.0).astype(float), (battles.score_a == 0.0).astype(float))


def scores(battles: Battles | Iterable[Mapping[str, Any]]) -> dict[str, float]:
    """(wins + ½·ties) / battles for each model, ties of either kind counting half (the Elo/BT
    view of a tie; its battle-weighted mean over models is 50% by construction)."""
    battles = as_battles(battles)
    return _points(battles, battles.score_a, 1.0 - battles.score_a)


def predicted_win_matrix(
    ratings: Mapping[str, float], scale: float = 400, base: float = 10
) -> dict[str, dict[str, float]]:
    """P(row beats column) = 1/(1 + base^((R_col − R_row)/scale)) for every pair of rated models
    (0.5 on the diagonal, as the formula gives)."""
    names = list(ratings)
    values = np.array([ratings[m] for m in names], dtype=float)
    probs = expit(math.log(base) * (values[:, None] - values[None, :]) / scale)
    return {a: {b: float(probs[i, j]) for j, b in enumerate(names)} for i, a in enumerate(names)}


# --------------------------------------------------------------------------------------------------
# Report rows
# --------------------------------------------------------------------------------------------------


def rank_table(
    battles: Battles | Iterable[Mapping[str, Any]],
    k: float = 4.0,
    bootstrap_rounds: int = 1000,
    seed: int = 0,
    scale: float = 400,
    base: float = 10,
    init: float = 1000,
) -> list[dict[str, Any]]:
    """One row per model, ``{model, elo, bt, bt_ci: [lo, hi], win_rate, score, battles}``, sorted by `bt`
    descending (name ascending on equal ratings).

    `elo` is the online Elo in table order (K = `k`); `bt` is the maximum-likelihood BT rating (not
    the bootstrap median); `bt_ci` is the 95% percentile-bootstrap interval over `bootstrap_rounds`
    resamples, or None when `bootstrap_rounds` is 0. `win_rate` counts a tie as a non-win (the
    paper's); `score` counts it as half a win.
    """
    battles = as_battles(battles)
    if not len(battles):
        return []
    elo = compute_online_elo(battles, k=k, scale=scale, base=base, init=init)
    bt = compute_bt(battles, scale=scale, base=base, init=init)
    ci: dict[str, tuple[float, float]] | None = None
    if bootstrap_rounds:
        _, ci = bootstrap_bt(battles, bootstrap_rounds, seed, scale=scale, base=base, init=init)
    rates, half_ties = win_rates(battles), scores(battles)
    counts = battle_counts(battles)
    rows = [
        {
            "model": m,
            "elo": elo[m],
            "bt": bt[m],
            "bt_ci": None if ci is None else [ci[m][0], ci[m][1]],
            "win_rate": rates[m],
            "score": half_ties[m],
            "battles": counts[m],
        }
        for m in battles.models
    ]
    rows.sort(key=lambda row: (-row["bt"], row["model"]))
    return rows


def rank_by(
    battles: Battles | Iterable[Mapping[str, Any]],
    field: str,
    k: float = 4.0,
    bootstrap_rounds: int = 1000,
    seed: int = 0,
    **kwargs: Any,
) -> dict[str, list[dict[str, Any]]]:
    """`rank_table` of each group of battles sharing a value of `field` ("dimension" or "judge"),
    in order of first appearance. Battles without a value are left out."""
    battles = as_battles(battles)
    if field not in ("dimension", "judge"):
        raise ValueError(f"field must be 'dimension' or 'judge', got {field!r}")
    column = getattr(battles, field)
    if column is None:
        return {}
    keys = list(dict.fromkeys(v for v in column.tolist() if v is not None))
    return {
        key: rank_table(battles.select(column == key), k, bootstrap_rounds, seed, **kwargs)
        for key in keys
    }


def rank_by_dimension(
    battles: Battles | Iterable[Mapping[str, Any]],
    k: float = 4.0,
    bootstrap_rounds: int = 1000,
    seed: int = 0,
    **kwargs: Any,
) -> dict[str, list[dict[str, Any]]]:
    """`rank_table` per ``dimension`` value (battles without one are left out)."""
    return rank_by(battles, "dimension", k, bootstrap_rounds, seed, **kwargs)


# --------------------------------------------------------------------------------------------------
# Battle files


def mean_ci(values: Sequence[float | None], level: float = 0.95) -> dict[str, Any]:
    """Mean of a figure over repeated runs and its `level` t-interval (Student's t, n − 1 degrees of
    freedom); None values are left out; one value gives a zero-width interval, none gives Nones."""
    present = np.asarray([v for v in values if v is not None], dtype=float)
    if present.size == 0:
        return {"mean": None, "ci": [None, None], "n": 0}
    mean = float(present.mean())
    if present.size == 1:
        return {"mean": mean, "ci": [mean, mean], "n": 1}
    from scipy import stats

    half = float(stats.t.ppf(0.5 + level / 2, present.size - 1) * present.std(ddof=1) / np.sqrt(present.size))
    return {"mean": mean, "ci": [mean - half, mean + half], "n": int(present.size)}


# --------------------------------------------------------------------------------------------------
# Style control (LMSYS, "Does style matter?", 2024; FastChat `rating_systems.py`)
# --------------------------------------------------------------------------------------------------
#
# The BT logit of a battle gains a term per style feature: P(a beats b) = σ(α(θ_a − θ_b) + Σ_k β_k·x_k),
# x_k the battle's normalised difference in feature k. Features and normalisation as FastChat's
# `preprocess_for_style` (V1): answer length and the counts of markdown headers, list items and bold
# spans (`add_markdown_info.count_markdown_elements`, code blocks removed first); for each feature the
# ratio (a − b) / (a + b + 1), then z-scored over the battles (population sd). A feature constant over
# the battles (sd 0: e.g. no answer has a header) carries no information and is left out of the fit
# (FastChat would divide by zero). The fit is FastChat's `fit_contextual_bt`: L2 penalty ½·reg·‖params‖²
# on ratings and coefficients together (reg = 0.5), ties half a win each way; ratings have mean `init`
# (the penalty's gradient and the likelihood's both sum to zero over models). Length is counted in
# words (FastChat counts tiktoken tokens; the ratio makes the unit nearly irrelevant).

STYLE_FEATURES = ("length", "headers", "lists", "bold")
STYLE_REG = 0.5

_CODE = re.compile(r"```([^`]*)```")
_STYLE_PATTERNS = {
    "headers": re.compile(r"^#{1,6}\s", re.MULTILINE),
    "lists": re.compile(r"^\s*(?:\d+\.|[-*+])\s", re.MULTILINE),
    "bold": re.compile(r"\*\*[^*\n]+\*\*|__[^_\n]+__"),
}


def style_counts(text: str | None) -> list[int]:
    """[words, markdown headers, list items, bold spans] of an answer, code blocks removed first (the
    counts of FastChat's `count_markdown_elements`; h1..h6, ordered and unordered items, ** and __)."""
    body = _CODE.sub("", text or "")
    return [len(body.split()), *(len(_STYLE_PATTERNS[k].findall(body)) for k in STYLE_FEATURES[1:])]


def style_features(counts_a: np.ndarray, counts_b: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """(battles × kept features, kept mask over `STYLE_FEATURES`): (a − b)/(a + b + 1) per feature,
    z-scored over the battles; features with zero spread are dropped (mask False)."""
    a, b = np.asarray(counts_a, dtype=float), np.asarray(counts_b, dtype=float)
    ratio = (a - b) / (a + b + 1.0)
    spread = ratio.std(axis=0)
    kept = spread > 1e-12
    return (ratio[:, kept] - ratio[:, kept].mean(axis=0)) / spread[kept], kept


def _style_loss(params: np.ndarray, design: np.ndarray, outcomes: np.ndarray, weights: np.ndarray,
                reg: float) -> np.ndarray:
    """FastChat's contextual-BT loss of R problems at once (`fit_contextual_bt`): Σ w·logloss + ½·reg·‖p‖²
    per problem. `design` (battles × params) holds α·(±1) for model_a / model_b and the features."""
    logits = params @ design.T
    return (weights * (np.logaddexp(0.0, logits) - outcomes * logits)).sum(axis=1) + \
        0.5 * reg * (params * params).sum(axis=1)


def _fit_style(design: np.ndarray, outcomes: np.ndarray, weights: np.ndarray, reg: float) -> np.ndarray:
    """Minimise `_style_loss` of each of the R problems (rows of `weights`) by vectorised Newton steps
    with exact Hessians, halving a problem's step while it raises its loss. The loss is strictly convex
    (reg > 0), so this reaches FastChat's L-BFGS optimum, to a gradient of 1e-9 instead of its 1e-6."""
    r, p = weights.shape[0], design.shape[1]
    params = np.zeros((r, p))
    loss = _style_loss(params, design, outcomes, weights, reg)
    eye = reg * np.eye(p)
    for _ in range(100):
        prob = expit(params @ design.T)
        grad = -(weights * (outcomes - prob)) @ design + reg * params
        active = np.abs(grad).max(axis=1) > 1e-9
        if not active.any():
            break
        curvature = weights[active] * prob[active] * (1.0 - prob[active])
        hess = (design.T[None] * curvature[:, None, :]) @ design + eye  # batched Jᵀ·diag(w·p(1−p))·J
        step = np.linalg.solve(hess, grad[active][:, :, None])[:, :, 0]
        rows = np.flatnonzero(active)
        for _ in range(30):
            candidate = params[rows] - step
            new = _style_loss(candidate, design, outcomes, weights[rows], reg)
            better = new <= loss[rows] + 1e-12 * (1.0 + np.abs(loss[rows]))
            params[rows[better]], loss[rows[better]] = candidate[better], new[better]
            if better.all():
                break
            rows, step = rows[~better], step[~better] / 2
    return params


def style_control(
    battles: Battles | Iterable[Mapping[str, Any]],
    counts_a: np.ndarray,
    counts_b: np.ndarray,
    bootstrap_rounds: int = 1000,
    seed: int = 0,
    scale: float = 400,
    base: float = 10,
    init: float = 1000,
    reg: float = STYLE_REG,
    level: float = 0.95,
) -> dict[str, Any]:
    """Bradley–Terry with style covariates (see above). `counts_a`/`counts_b`: battles × 4
    `style_counts` of each battle's model_a and model_b answer, in the table's order.

    Returns {ratings: {model: rating}, ratings_ci: {model: [lo, hi]} | None, coefficients: {feature:
    {value, ci95, n}} (None for a dropped feature), battles, reg}: coefficients on the logit scale per
    standard deviation of the normalised feature (positive: the judges prefer more of it). Intervals:
    percentile bootstrap over battles (multinomial counts per battle), all rounds fitted as one problem.
    """
    battles = as_battles(battles)
    n = len(battles)
    if n == 0:
        return {"ratings": {}, "ratings_ci": None, "coefficients": {}, "battles": 0, "reg": reg}
    features, kept = style_features(counts_a, counts_b)
    models = len(battles.models)
    design = np.zeros((n, models))
    design[np.arange(n), battles.model_a] = math.log(base)
    design[np.arange(n), battles.model_b] = -math.log(base)
    design = np.concatenate([design, features], axis=1)
    outcomes = battles.score_a
    point = _fit_style(design, outcomes, np.ones((1, n)), reg)[0]
    draws = None
    if bootstrap_rounds:
        counts = np.random.default_rng(seed).multinomial(n, np.full(n, 1.0 / n), size=bootstrap_rounds)
        chunk = max(1, _CHUNK_CELLS // max(n * design.shape[1], 1))
        draws = np.concatenate([_fit_style(design, outcomes, counts[i:i + chunk].astype(float), reg)
                                for i in range(0, bootstrap_rounds, chunk)])
    lo_q, hi_q = (1 - level) / 2, (1 + level) / 2
    ratings = {m: float(scale * point[i] + init) for i, m in enumerate(battles.models)}
    ratings_ci = None
    if draws is not None:
        lo, hi = np.quantile(scale * draws[:, :models] + init, [lo_q, hi_q], axis=0)
        ratings_ci = {m: [float(lo[i]), float(hi[i])] for i, m in enumerate(battles.models)}
    coefficients: dict[str, Any] = {}
    column = models
    for name, keep in zip(STYLE_FEATURES, kept, strict=True):
        if not keep:
            coefficients[name] = None
            continue
        ci = None
        if draws is not None:
            low, high = np.quantile(draws[:, column], [lo_q, hi_q])
            ci = [float(low), float(high)]
        coefficients[name] = {"value": float(point[column]), "ci95": ci, "n": n}
        column += 1
    return {"ratings": ratings, "ratings_ci": ratings_ci, "coefficients": coefficients, "battles": n, "reg": reg}


def style_ranking(control: Mapping[str, Any]) -> list[str]:
    """Models best first by style-controlled rating (name order on equal ratings)."""
    ratings = control["ratings"]
    return sorted(ratings, key=lambda m: (-ratings[m], m))
