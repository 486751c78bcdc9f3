"""MemeQA's table for `memegauge export`: every question asked, with `correct`."""

from __future__ import annotations

from memegauge.export import ExportTable, record_columns, record_rows
from memegauge.memeqa.records import QuestionRecord


def tables() -> dict[str, ExportTable]:
    return {"questions": ExportTable("every question asked, with `correct`", record_rows(QuestionRecord),
                                      record_columns(QuestionRecord))}
