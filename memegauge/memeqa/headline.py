"""MemeQA's intervals and headline rows (see `memegauge.report.intervals`, `memegauge.report.headline`).

`intervals(records, types)` gives the report's `intervals` section over the scored questions:
`accuracy.{type}` and `micro` (Wilson, clustered by meme picture: the questions of one meme share
it), `macro` (the mean of per-type accuracies; see `macro`) and `parse_failure_rate`. A type
asked 4–5 times gets the wide interval it has (4 of 5 right: 80% [37.6, 96.4]).
"""

from __future__ import annotations

from typing import Any
from collections.abc import Iterable

import numpy as np

from memegauge.report import intervals as ci
from memegauge.report.headline import Headline, row

SEED = 0  # bootstrap seed: the report is the same every time it is built
MIN_MEMES = 10  # below this many memes a bootstrap over memes has too few distinct resamples (3 memes: 10)


def macro(correct: list[float], types: list[str], memes: list[str]) -> ci.Figure:
    """The macro accuracy (unweighted mean of the per-type accuracies) with its 95% interval: a cluster
    bootstrap over memes (`intervals.macro_rate`, method `bootstrap`) from MIN_MEMES memes on; with fewer, whose
    resamples are too few to vary (3 memes give 10 distinct resamples and a too narrow, even zero-width, range),
    the Wilson interval of the macro value on the pooled questions' effective sample size, the clustered Wilson
    that the micro accuracy uses (questions / Kish design effect over the memes), method `wilson-pooled`; where the
    design effect cannot be estimated (every answer alike) `macro_rate`'s Wilson on the memes stands (method
    `wilson-clustered`). Never a zero-width interval."""
    found = ci.macro_rate(correct, types, memes, seed=SEED)
    k = len(set(memes))
    width = None if found["ci95"] is None else found["ci95"][1] - found["ci95"][0]
    if found["value"] is None or len(correct) < 2 or k < 2 or (width and (k >= MIN_MEMES
                                                                         or found["method"] != "bootstrap")):
        return found  # too few to say (noted), a bootstrap over enough memes, or already Wilson's on the memes
    x = np.asarray(correct, dtype=float)
    _, index = np.unique(np.asarray(memes, dtype=object), return_inverse=True)
    deff = ci.design_effect(x, index.reshape(-1), k) if k < x.size else 1.0
    effective = k if deff is None else x.size / deff
    lo, hi = ci.wilson(found["value"] * effective, effective)
    return ci.figure(found["value"], (float(lo), float(hi)), x.size, k, "wilson-pooled")


def intervals(records: list[dict[str, Any]], types: Iterable[str]) -> dict[str, Any]:
    """The `intervals` section (see the module docstring); types without a scored question are left out."""
    scored = [r for r in records if r["correct"] is not None]
    correct = [float(bool(r["correct"])) for r in scored]
    memes = [r["img"] for r in scored]

    def of_type(t: str) -> ci.Figure:
        mine = [r for r in scored if r["type"] == t]
        return ci.rate([float(bool(r["correct"])) for r in mine], [r["img"] for r in mine])

    return {"accuracy": {t: of_type(t) for t in types if any(r["type"] == t for r in scored)},
            "macro": macro(correct, [r["type"] for r in scored], memes),
            "micro": ci.rate(correct, memes),
            "parse_failure_rate": ci.rate([float(bool(r["parse_failed"])) for r in scored], memes)}


def headline(report: dict[str, Any]) -> list[Headline]:
    """Per question type: accuracy; and the macro and micro accuracy (groups `overall (macro)` and
    `overall (micro)`), so that a model's leaderboard is one accuracy column. Build and fine-tuning
    runs have no leaderboard rows."""
    found = report.get("intervals")
    if not found:
        return []
    run = report["run"]
    # a run stopped before its results has no `model` figure yet: its config names the model
    model = str(report.get("model") or (run.get("config") or {}).get("model"))
    rows = [row(run, model, t, "accuracy", fig, "rate") for t, fig in found["accuracy"].items()]
    return [row(run, model, f"overall ({name})", "accuracy", found[name], "rate") for name in ("macro", "micro")] + rows
