"""Reports read only the store: a run's header plus its method's figures, in JSON/CSV/Markdown/HTML.

Each method registers a builder `build(store, run) -> dict` (lazily imported); the formats are
renderings of that one dict, so every format shows the same numbers.
"""

from __future__ import annotations

import csv
import importlib
import io
import json
from typing import Any, Callable

from memelens.engine.store import Store
from memelens.types import InputError

BUILDERS: dict[str, str] = {
    "demo": "memelens.report.demo:build",
    "adammeme": "memelens.report.adammeme:build",
    "arena": "memelens.report.arena:build",
    "memeqa": "memelens.report.memeqa:build",
}
FORMATS = ("json", "csv", "md", "html")


def register_builder(method: str, target: str) -> None:
    BUILDERS[method] = target


def run_header(store: Store, name: str) -> dict[str, Any]:
    """The `run` section every report starts with (DESIGN §3)."""
    r = store.run_summary(name)
    truncated = store.truncated_counts(r["id"])
    return {
        "name": r["name"], "method": r["method"], "status": r["status"], "created": r["created"],
        "updated": r["updated"], "config_hash": r["config_hash"], "seed": r["seed"],
        "package_version": r["version"], "calls": r["calls"], "calls_made": r["calls_made"],
        "cached_calls": r["cached"], "tokens": r["tokens"], "cost": r["cost"],
        "failed_calls": r["failed_calls"],
        "failed_calls_by_class": store.failed_call_counts(r["id"]),
        "failed_attempts_by_class": store.attempt_counts(r["id"]),
        # outputs cut at max_tokens, by stage: flagged and counted beside failures, never hidden
        "truncated_calls": sum(truncated.values()),
        "truncated_by_stage": truncated,
        # per model: its calls, and how many carried the meme picture (0 for a text-only model)
        "images_by_model": store.image_counts(r["id"]),
        "config": json.loads(r["config_json"]), "error": r["error"],
    }


def build_report(store: Store, name: str) -> dict[str, Any]:
    header = run_header(store, name)
    method = header["method"]
    if method not in BUILDERS:
        raise InputError(f"no report builder for method {method!r}", where=f"run {name!r}",
                         fix="upgrade MemeLens, or report with the version that made the run")
    module_name, _, func = BUILDERS[method].partition(":")
    build: Callable[[Store, dict[str, Any]], dict[str, Any]] = getattr(
        importlib.import_module(module_name), func)
    run_id = store.run_row(name)["id"]
    return {"run": header, **build(store, {**header, "id": run_id})}


def render_report(store: Store, name: str, fmt: str) -> str:
    if fmt not in FORMATS:
        raise InputError(f"unknown format {fmt!r}", where="--format", fix=f"use one of {FORMATS}")
    report = build_report(store, name)
    if fmt == "json":
        return json.dumps(report, indent=2, ensure_ascii=False, default=str)
    if fmt == "csv":
        return to_csv(report)
    if fmt == "md":
        return to_markdown(report)
    from memelens.report.html import to_html

    return to_html(store, report)


def flatten(value: Any, prefix: str = "") -> list[tuple[str, Any]]:
    """Nested dicts/lists → (dotted.path, scalar) rows; the long form CSV and Markdown share."""
    if isinstance(value, dict):
        return [row for k, v in value.items() for row in flatten(v, f"{prefix}.{k}" if prefix else str(k))]
    if isinstance(value, list):
        return [row for i, v in enumerate(value) for row in flatten(v, f"{prefix}[{i}]")]
    return [(prefix, value)]


def to_csv(report: dict[str, Any]) -> str:
    buffer = io.StringIO()
    writer = csv.writer(buffer)
    writer.writerow(["field", "value"])
    writer.writerows(flatten({k: v for k, v in report.items() if k != "details"}))
    return buffer.getvalue()


def to_markdown(report: dict[str, Any]) -> str:
    lines = [f"# MemeLens report: {report['run']['name']} ({report['run']['method']})", "",
             "| field | value |", "|---|---|"]
    for key, value in flatten({k: v for k, v in report.items() if k != "details"}):
        text = str(value).replace("|", "\\|").replace("\n", " ")
        lines.append(f"| {key} | {text} |")
    return "\n".join(lines) + "\n"
