"""AdamMeme's intervals and headline rows (see `memegauge.report.intervals`, `memegauge.report.headline`).

`intervals(rows, categories, rule)` gives, for one target's scored samples and steps, the report's
`targets.{T}.intervals` section: `overall`, `categories.{C}` and `original_only` each with
`failure_rate` (clustered Wilson) and `avg_score` (cluster bootstrap). Items are clustered by their
seed meme: an original and every refinement step of its chains (and its repeats) are one cluster, so
a chain of ten rewrites of one meme does not count as ten independent memes.
"""

from __future__ import annotations

from typing import Any
from collections.abc import Iterable

import numpy as np

from memegauge.adammeme import metrics
from memegauge.report import intervals as ci
from memegauge.report.headline import Headline, row

ORIGINALS = "overall (originals only)"  # the group of the ablation without refinement
SEED = 0  # bootstrap seed: the report is the same every time it is built


def cluster_of(sample: dict[str, Any]) -> str:
    """The seed meme a sample comes from (a step names its chain's seed; an original is its own)."""
    return str(sample.get("seed") or sample["meme"])


def figures(rows: list[dict[str, Any]], rule: metrics.FailureRule) -> dict[str, ci.Figure]:
    """FR and average score of scored rows, each with its interval."""
    scores = [float(r["score"]) for r in rows]
    memes = [cluster_of(r) for r in rows]
    fails = rule.fails(np.asarray(scores, dtype=float)).astype(float)
    return {"failure_rate": ci.rate(fails, memes), "avg_score": ci.mean(scores, memes, seed=SEED)}


def intervals(rows: Iterable[dict[str, Any]], categories: list[str], rule: metrics.FailureRule) -> dict[str, Any]:
    """The `intervals` section of one target (see the module docstring)."""
    scored = [r for r in rows if r.get("score") is not None]
    originals = [r for r in scored if r["iteration"] == 0]
    return {"overall": figures(scored, rule),
            "categories": {c: figures([r for r in scored if r["category"] == c], rule) for c in categories},
            "original_only": figures(originals, rule)}


def headline(report: dict[str, Any]) -> list[Headline]:
    """One row per target × group × figure: FR and average score with refinement (history H) overall
    and per category, and on the originals only (the paper's ablation without refinement)."""
    run, out = report["run"], []
    for target, figures_ in report.get("targets", {}).items():
        found = figures_.get("intervals")
        if not found:  # a report built before intervals existed has none to show
            continue
        groups = {"overall": found["overall"], **found["categories"], ORIGINALS: found["original_only"]}
        for group, figs in groups.items():
            out.append(row(run, target, group, "failure_rate", figs["failure_rate"], "rate", higher_is_better=False))
            out.append(row(run, target, group, "avg_score", figs["avg_score"], "score"))
    return out
