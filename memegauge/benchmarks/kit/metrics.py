"""A benchmark task's figures, each with its 95% interval and n: pure, vectorised, seeded functions; no I/O.

Answers arrive as indicator matrices, items × classes: `gold` (each item's gold class, or classes) and `pred`
(what the model said; an unreadable answer is a row of zeros, so it misses its gold class and is credited to no
class). Per class, precision and recall are rates (Wilson: `memegauge.report.intervals.rate`); F1, macro-F1 and
AUROC come with a seeded percentile bootstrap over items (`BOOTSTRAP_ROUNDS` resamples, drawn in chunks so memory
stays small on 10,000 items). Point values equal scikit-learn's (`f1_score(..., zero_division=0)`,
`roc_auc_score`); tests/test_benchmarks.py holds them against it.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np
from scipy.stats import rankdata

from memegauge.registry import DuplicatePlugin, Registry, code_source
from memegauge.report.intervals import BOOTSTRAP_ROUNDS, NO_SPREAD, TOO_FEW, Figure, figure, rate

CHUNK = 100  # bootstrap rounds drawn at once


def _f1(tp: np.ndarray, fp: np.ndarray, fn: np.ndarray) -> np.ndarray:
    """F1 per class (last axis); 0 where a class was neither gold nor predicted (scikit-learn's zero_division=0)."""
    denominator = 2 * tp + fp + fn
    with np.errstate(invalid="ignore", divide="ignore"):
        return np.where(denominator > 0, 2 * tp / np.where(denominator > 0, denominator, 1), 0.0)


def _counts(gold: np.ndarray, pred: np.ndarray, weights: np.ndarray | None = None) -> tuple[np.ndarray, ...]:
    """(tp, fp, fn) per class; with `weights` (rounds × items, resample counts) one row per round."""
    parts = (gold & pred, ~gold & pred, gold & ~pred)
    return tuple(p.sum(axis=0).astype(float) if weights is None else weights @ p.astype(float) for p in parts)


def _resample_weights(n: int, seed: int, rounds: int) -> Any:
    """Chunks of bootstrap weights (how often each item is drawn), rounds × n in all."""
    rng = np.random.default_rng(seed)
    for start in range(0, rounds, CHUNK):
        size = min(CHUNK, rounds - start)
        draws = rng.integers(0, n, size=(size, n))
        yield np.apply_along_axis(np.bincount, 1, draws, minlength=n).astype(float)


def _interval(value: float | None, draws: np.ndarray, n: int) -> Figure:
    finite = draws[np.isfinite(draws)]
    if value is None or n < 2 or finite.size < draws.size // 2:
        return figure(value, None, n, n, "bootstrap", TOO_FEW)
    lo, hi = np.percentile(finite, [2.5, 97.5])
    if lo == hi:
        return figure(value, None, n, n, "bootstrap", NO_SPREAD if np.ptp(finite) == 0 else TOO_FEW)
    return figure(value, (lo, hi), n, n, "bootstrap")


def f1_figures(gold: np.ndarray, pred: np.ndarray, seed: int,
               rounds: int = BOOTSTRAP_ROUNDS) -> tuple[Figure, list[Figure]]:
    """Macro-F1 and each class's F1, with their bootstrap intervals."""
    n, classes = gold.shape
    if n == 0:
        empty = figure(None, None, 0, 0, "bootstrap", TOO_FEW)
        return empty, [empty] * classes
    per_class = _f1(*_counts(gold, pred))
    rows = [_f1(*_counts(gold, pred, w)) for w in _resample_weights(n, seed, rounds)]
    draws = np.concatenate(rows) if rows else np.zeros((0, classes))
    macro = _interval(float(per_class.mean()), draws.mean(axis=1), n)
    return macro, [_interval(float(per_class[c]), draws[:, c], n) for c in range(classes)]


def auroc(positive: np.ndarray, scores: np.ndarray, seed: int, rounds: int = BOOTSTRAP_ROUNDS) -> Figure:
    """The area under the ROC curve of `scores` (P(positive)) against `positive`, by the Mann–Whitney U
    statistic (ties count half), with a bootstrap interval; None when one class is missing."""
    n = positive.size
    if n < 2 or positive.all() or not positive.any():
        return figure(None, None, n, n, "bootstrap", TOO_FEW)
    value = float(_auc(positive[None, :], scores[None, :])[0])
    rng = np.random.default_rng(seed)
    chunks = []
    for start in range(0, rounds, CHUNK):
        draws = rng.integers(0, n, size=(min(CHUNK, rounds - start), n))
        chunks.append(_auc(positive[draws], scores[draws]))
    return _interval(value, np.concatenate(chunks), n)


def _auc(positive: np.ndarray, scores: np.ndarray) -> np.ndarray:
    """AUROC of each row (rows × items); nan for a row with one class only."""
    ranks = rankdata(scores, axis=1)
    n1 = positive.sum(axis=1).astype(float)
    n0 = positive.shape[1] - n1
    with np.errstate(invalid="ignore", divide="ignore"):
        return ((ranks * positive).sum(axis=1) - n1 * (n1 + 1) / 2) / (n1 * n0)


def per_class(gold: np.ndarray, pred: np.ndarray, classes: list[str], f1: list[Figure]) -> list[dict[str, Any]]:
    """Each class's precision (of the items said to be it), recall (of the items that are it) and F1."""
    return [{"class": name, "support": int(gold[:, c].sum()),
             "precision": rate(gold[pred[:, c], c].astype(float)),
             "recall": rate(pred[gold[:, c], c].astype(float)), "f1": f1[c]}
            for c, name in enumerate(classes)]


def task_figures(gold: np.ndarray, pred: np.ndarray, correct: np.ndarray, classes: list[str], metrics: list[str],
                 seed: int) -> dict[str, Any]:
    """Accuracy (a rate), macro-F1, per-class P/R/F1 and every other registered metric the task names, of one
    task's scored items."""
    out: dict[str, Any] = {"accuracy": rate(correct.astype(float))}
    if "macro_f1" in metrics or "per_class" in metrics:
        macro, f1 = f1_figures(gold, pred, seed)
        if "macro_f1" in metrics:
            out["macro_f1"] = macro
        if "per_class" in metrics:
            out["per_class"] = per_class(gold, pred, classes, f1)
    for name in metrics:
        if name not in KIT_METRICS:
            out[name] = metric(name)(gold, pred, seed)
    return out


MetricFunction = Callable[[np.ndarray, np.ndarray, int], Figure]
"""A registered metric: (gold, pred indicator matrices, items × classes; seed) → one figure with its interval and n."""
KIT_METRICS = ("accuracy", "macro_f1", "per_class", "auroc")
"""Figures the kit computes itself (`task_figures`, and AUROC from the stored probabilities)."""
METRICS: Registry[MetricFunction] = Registry("metric", "memegauge.metrics", Callable, name_of=None)
"""Every other metric by name (`memegauge.registry`: a function, one per name): `type_weighted_f1` below, any a
benchmark's module registers (`register_metric`), and any an installed package declares as an entry point of
group ``memegauge.metrics`` named after it (loaded when a task names it)."""


def register_metric(name: str, function: MetricFunction) -> MetricFunction:
    """Register a metric (a benchmark's module may bring its own); a second one of one name, or one named as a
    figure the kit computes itself, is refused (`DuplicatePlugin`)."""
    if name in KIT_METRICS:
        raise DuplicatePlugin(f"metric {name!r} is registered twice: by the benchmark kit and by "
                              f"{code_source(function)}; rename yours")
    return METRICS.register(function, code_source(function), name)


def metric(name: str) -> MetricFunction:
    """The registered metric `name`; an unknown one is one `InputError` naming every metric a task may name."""
    return METRICS.require(name, "metrics", "or register it in the benchmark's module: metrics.register_metric",
                           also=KIT_METRICS)


def metric_names() -> list[str]:
    return [*KIT_METRICS, *METRICS]


def _type_weighted(gold: np.ndarray, pred: np.ndarray, weights: np.ndarray | None = None) -> np.ndarray:
    """Σ_c support_c · macroF1_c / Σ_c support_c, where macroF1_c is the mean F1 of "is c" and "is not c" over
    the items and support_c the items whose gold includes c; nan where no item has any class."""
    tp, fp, fn = _counts(gold, pred, weights)
    tn = (~gold & ~pred).sum(axis=0).astype(float) if weights is None else weights @ (~gold & ~pred).astype(float)
    binary = (_f1(tp, fp, fn) + _f1(tn, fn, fp)) / 2
    support = tp + fn
    with np.errstate(invalid="ignore", divide="ignore"):
        return (binary * support).sum(axis=-1) / support.sum(axis=-1)


def type_weighted_f1(gold: np.ndarray, pred: np.ndarray, seed: int, rounds: int = BOOTSTRAP_ROUNDS) -> Figure:
    """A multi-label task scored as SemEval-2022 Task 5 scores sub-task B: each class's binary macro-F1 (the mean
    of the F1 of "is it" and of "is it not"), weighted by the class's gold positives (`compute_scoreB` in
    MIND-Lab/SemEval2022-Task-5-Multimedia-Automatic-Misogyny-Identification-MAMI-, Evaluation/evaluation.py),
    with a bootstrap interval."""
    n = gold.shape[0]
    if n == 0 or not gold.any():
        return figure(None, None, n, n, "bootstrap", TOO_FEW)
    value = float(_type_weighted(gold, pred))
    draws = np.concatenate([_type_weighted(gold, pred, w) for w in _resample_weights(n, seed, rounds)])
    return _interval(value, draws, n)


register_metric("type_weighted_f1", type_weighted_f1)


def indicators(values: list[Any], classes: list[str]) -> np.ndarray:
    """Items × classes booleans of answers (a class, a list of classes, or None for unreadable)."""
    out = np.zeros((len(values), len(classes)), dtype=bool)
    index = {c: i for i, c in enumerate(classes)}
    for row, value in enumerate(values):
        for found in ([] if value is None else value if isinstance(value, list) else [value]):
            if found in index:
                out[row, index[found]] = True
    return out
