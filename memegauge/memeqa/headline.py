"""MemeQA's intervals and headline rows (see `memegauge.report.intervals`, `memegauge.report.headline`).

`intervals(records, types)` gives the report's `intervals` section over the scored questions:
`accuracy.{type}` and `micro` (Wilson, clustered by meme picture: the questions of one meme share
it), `macro` (cluster bootstrap of the mean of per-type accuracies) and `parse_failure_rate`. A type
asked 4–5 times gets the wide interval it has (4 of 5 right: 80% [37.6, 96.4]).
"""

from __future__ import annotations

from typing import Any
from collections.abc import Iterable

from memegauge.report import intervals as ci
from memegauge.report.headline import Headline, row

SEED = 0  # bootstrap seed: the report is the same every time it is built


def intervals(records: list[dict[str, Any]], types: Iterable[str]) -> dict[str, Any]:
    """The `intervals` section (see the module docstring); types without a scored question are left out."""
    scored = [r for r in records if r["correct"] is not None]
    correct = [float(bool(r["correct"])) for r in scored]
    memes = [r["img"] for r in scored]

    def of_type(t: str) -> ci.Figure:
        mine = [r for r in scored if r["type"] == t]
        return ci.rate([float(bool(r["correct"])) for r in mine], [r["img"] for r in mine])

    return {"accuracy": {t: of_type(t) for t in types if any(r["type"] == t for r in scored)},
            "macro": ci.macro_rate(correct, [r["type"] for r in scored], memes, seed=SEED),
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
