"""The report's "People vs judges" section: the human ratings of a run (`memegauge.rating.votes`)
against each other and against the run's LLM judges. The frame (who rated how much) is the kit's; the
figures are the run's method's (`RatingPart.section`, which says which coefficient answers which of
its paper's tables; `memegauge.rating.stats` holds them). Every figure is {value, ci95, n}: a seeded
95% bootstrap interval over the items and the number of items behind it; an accuracy (a rate) is a
Wilson interval instead, clustered by meme where items share one (`memegauge.report.intervals.rate`):
a bootstrap over 4 items all wrong can only draw 0, "0.0% [0.0%, 0.0%]", where Wilson at 0 of 4 is
[0, 49.0%].
"""

from __future__ import annotations

from collections import defaultdict
from typing import Any

import numpy as np

from memegauge.engine.store import Store
from memegauge.rating import stats
from memegauge.rating.items import rating_part
from memegauge.rating.part import ByRater
from memegauge.rating.votes import run_ratings


def people_vs_judges(store: Store, run: dict[str, Any]) -> dict[str, Any] | None:
    """The section for a run with human ratings; None without any (or when its method rates nothing)."""
    part = rating_part(run)
    if part is None:
        return None
    ratings = run_ratings(store, run, part)
    if not ratings:
        return None
    seed = int(run.get("seed") or 0)
    by_task: dict[str, ByRater] = defaultdict(lambda: defaultdict(dict))
    for r in ratings:
        by_task[r.task][r.rater][r.source] = r
    section: dict[str, Any] = {"raters": {
        rater: {"rated": sum(len(t.get(rater, {})) for t in by_task.values()),
                "origin": "csv" if all(r.origin == "csv" for r in ratings if r.rater == rater) else "page"}
        for rater in sorted({r.rater for r in ratings})}}
    return {**section, **part.section(store, run, by_task, seed)}


def common(per_rater: dict[str, dict[str, Any]]) -> tuple[list[str], list[str]]:
    """(raters, sources rated by every rater): the complete table ICC and Fleiss' κ need."""
    raters = sorted(per_rater)
    return raters, sorted(set.intersection(*(set(per_rater[r]) for r in raters))) if raters else []


def complete(per_rater: dict[str, dict[str, Any]], value) -> tuple[list[str], list[str], np.ndarray]:
    """(raters, sources rated by every rater, sources × raters matrix of `value(rating)`)."""
    raters, shared = common(per_rater)
    matrix = np.array([[value(per_rater[r][s]) for r in raters] for s in shared], dtype=object)
    return raters, shared, matrix.reshape(len(shared), len(raters))


def alpha(per_rater: dict[str, dict[str, Any]], value, level: str, seed: int) -> dict[str, Any]:
    """Krippendorff's α over every item rated by at least one person (raters × items, nan = unrated)."""
    raters = sorted(per_rater)
    sources = sorted(set().union(*(per_rater[r] for r in raters)))
    x = np.array([[value(per_rater[r][s]) if s in per_rater[r] else np.nan for s in sources] for r in raters],
                 dtype=float).reshape(len(raters), len(sources))
    return stats.interval(lambda idx: stats.krippendorff_alpha(x[:, idx], level), len(sources), seed)
