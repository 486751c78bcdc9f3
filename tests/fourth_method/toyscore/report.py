"""Toyscore's report: read from the store only (`Method.report`, `tables`, `models`)."""

from __future__ import annotations

from typing import Any

from memegauge.engine.store import Store
from memegauge.records import read_checked
from toyscore.records import FunnyRecord


def build(store: Store, run: dict[str, Any]) -> dict[str, Any]:
    rows = read_checked(store, run["id"], FunnyRecord)
    answered = [r for r in rows if r["ok"]]
    funny = sum(1 for r in answered if r["funny"])
    return {"memes": len(rows), "answered": len(answered),
            "funny_share": funny / len(answered) if answered else None, "details": rows}


def tables(report: dict[str, Any]) -> dict[str, list[dict[str, Any]]]:
    return {"answers": report["details"]}


def models(config: dict[str, Any]) -> dict[str, list[str]]:
    return {"targets": [config["model"]]}
