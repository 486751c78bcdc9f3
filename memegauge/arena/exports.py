"""MemeArena's tables for `memegauge export`: its battles (with the panel's joint verdict) and every
judge's judgment (with that judge's verdict)."""

from __future__ import annotations

from memegauge.arena.records import BattleRecord, JudgmentRecord
from memegauge.export import ExportTable, record_columns, record_rows


def tables() -> dict[str, ExportTable]:
    return {
        "battles": ExportTable("every battle, with `winner` (the panel's overall verdict)", record_rows(
            BattleRecord, lambda row: {"winner": (row.get("joint") or {}).get("overall")}),
            record_columns(BattleRecord, "winner")),
        "judgments": ExportTable("every judge's verdict in each order, with `winner`", record_rows(
            JudgmentRecord, lambda row: {"winner": (row.get("verdicts") or {}).get("overall")}),
            record_columns(JudgmentRecord, "winner")),
    }
