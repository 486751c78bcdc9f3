"""MemeQA's table for `memegauge export`: every question asked, with the model that answered it and
`correct`."""

from __future__ import annotations

from typing import Any

from memegauge.engine.store import Store
from memegauge.export import ExportTable, Rows, record_columns, record_rows
from memegauge.memeqa.records import EvalInfo, QuestionRecord
from memegauge.records import read_record


def tables() -> dict[str, ExportTable]:
    return {"questions": ExportTable("every question asked, with the model that answered it and `correct`",
                                      _question_rows, ("model", *record_columns(QuestionRecord)))}


def _question_rows(store: Store, run: dict[str, Any]) -> Rows:
    """The questions, each with `model`: the model evaluated (for `qa score`, the predictions file), so
    runs of several models concatenate into one frame that still says whose answer each row is."""
    info = read_record(store, run["id"], EvalInfo)
    model = info.model if info is not None else (run.get("config") or {}).get("model")
    return [{"model": model, **row} for row in record_rows(QuestionRecord)(store, run)]
