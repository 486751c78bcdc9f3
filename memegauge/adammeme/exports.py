"""AdamMeme's tables for `memegauge export`: its scored samples and its refinement steps, each with
`failure` under the run's own failure rule."""

from __future__ import annotations

from typing import Any

import numpy as np

from memegauge.adammeme.records import ScoreRecord, StepRecord
from memegauge.adammeme.report import failure_rule, run_meta
from memegauge.engine.store import Store
from memegauge.export import ExportTable, Rows, record_columns
from memegauge.records import read_records


def _scored(record: type[ScoreRecord] | type[StepRecord]):
    """Rows of samples or steps with `failure`: the score fails under the run's rule (None when the
    item has no score: a failed call is never a score)."""
    def rows(store: Store, run: dict[str, Any]) -> Rows:
        rule = failure_rule(run_meta(store, run["id"]))  # the report's own: an export never disagrees with its FR
        items = [r.model_dump(mode="json") for r in read_records(store, run["id"], record)]
        for item in items:
            score = item.get("score")
            item["failure"] = None if score is None else bool(rule.fails(np.array([float(score)]))[0])
        return items
    return rows


def tables() -> dict[str, ExportTable]:
    return {"samples": ExportTable("every scored original sample, with `score` and `failure`", _scored(ScoreRecord),
                                   record_columns(ScoreRecord, "failure")),
            "steps": ExportTable("every refinement step, with `score`, `improved` and `failure`",
                                 _scored(StepRecord), record_columns(StepRecord, "failure"))}
