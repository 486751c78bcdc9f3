"""The report formats: JSON, CSV and Markdown (long form: one dotted field per row) and HTML, all
renderings of the one dict `memegauge.report.build_report` makes of a run."""

from __future__ import annotations

import csv
import io
import json
from typing import Any

from memegauge.engine.store import Store
from memegauge.report import build_report
from memegauge.types import InputError

FORMATS = ("json", "csv", "md", "html")


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
    from memegauge.report.html import to_html

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
    lines = [f"# MemeGauge report: {report['run']['name']} ({report['run']['method']})", "",
             "| field | value |", "|---|---|"]
    for key, value in flatten({k: v for k, v in report.items() if k != "details"}):
        text = str(value).replace("|", "\\|").replace("\n", " ")
        lines.append(f"| {key} | {text} |")
    return "\n".join(lines) + "\n"
