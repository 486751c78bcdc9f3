"""Report of the engine demo's screening stage: answers and agreement with the sample labels."""

from __future__ import annotations

from typing import Any

from memegauge.engine.store import Store
from memegauge.records import read_checked
from memegauge.report.intervals import rate
from memegauge.screen.records import ScreenRecord


def build(store: Store, run: dict[str, Any]) -> dict[str, Any]:
    """`screen`: memes, answered, `agreement_with_labels` (share of answered memes whose harmful flag
    matches the sample labels) and `agreement_ci95`, that share with its Wilson 95% interval and n
    (one answer per meme: `memegauge.report.intervals.rate`); `details`: every answer."""
    rows = read_checked(store, run["id"], ScreenRecord)
    answered = [r for r in rows if r["ok"]]
    agree = [float(bool(r["answer"].get("harmful")) == ("harmful" in r["labels"])) for r in answered]
    return {"screen": {"memes": len(rows), "answered": len(answered),
                       "agreement_with_labels": sum(agree) / len(answered) if answered else None,
                       "agreement_ci95": rate(agree)},
            "details": rows}


def tables(report: dict[str, Any]) -> dict[str, list[dict[str, Any]]]:
    return {"screen": report["details"]}


def models(config: dict[str, Any]) -> dict[str, list[str]]:
    """The screen's one model (the demo's model), shown as the run's target."""
    return {"targets": [config["model"]] if config.get("model") else []}
