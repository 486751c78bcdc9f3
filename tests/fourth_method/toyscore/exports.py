"""Toyscore's table for `memegauge export`: one row per meme, `funny` its correctness/score column."""

from __future__ import annotations

from toyscore.records import FunnyRecord

from memegauge.export import ExportTable, record_rows


def tables() -> dict[str, ExportTable]:
    return {"answers": ExportTable("every meme's answer, with `funny` (None when the call failed)",
                                   record_rows(FunnyRecord))}
