"""The report formats, all renderings of the one dict `memegauge.report.build_report` makes of a run:
JSON (the full report), CSV and Markdown (the run's leaderboard: its headline rows with 95% intervals,
`memegauge.report.leaderboard`; Markdown adds the "People vs judges" figures of a rated run) and HTML. A
method without headline rows (the demo's screen) gets the long form in CSV and Markdown: one dotted field
per row, dates as ISO strings."""

from __future__ import annotations

import csv
import io
import json
from typing import Any

from memegauge.engine.store import Store
from memegauge.report import build_report
from memegauge.report.sections import present_sections
from memegauge.types import InputError

FORMATS = ("json", "csv", "md", "html")


def render_report(store: Store, name: str, fmt: str) -> str:
    if fmt not in FORMATS:
        raise InputError(f"unknown format {fmt!r}", where="--format", fix=f"use one of {FORMATS}")
    report = build_report(store, name)
    if fmt == "json":
        return json.dumps(report, indent=2, ensure_ascii=False, default=str)
    if fmt in ("csv", "md"):
        return leaderboard_text(report, fmt)
    from memegauge.report.html import to_html

    return to_html(store, report)


def leaderboard_text(report: dict[str, Any], fmt: str) -> str:
    """CSV or Markdown: the leaderboard of the headline rows, or the long form without any."""
    from memegauge.report import leaderboard
    from memegauge.report.headline import headline_rows, iso_date

    rows = headline_rows(report)
    if not rows:
        return to_csv(report) if fmt == "csv" else to_markdown(report)
    if fmt == "csv":
        return leaderboard.to_csv(rows)
    run = report["run"]
    facts = [("method", run["method"]), ("status", run["status"]), ("date", iso_date(run.get("created"))),
             ("calls", f"{run.get('calls')} ({run.get('failed_calls')} failed)")]
    if report.get("format_warning"):  # a run whose answers mostly could not be read (MemeQA)
        facts.insert(0, ("WARNING", report["format_warning"]))
    facts += [(f"task {task}", line) for task, line in (report.get("asked") or {}).items()]  # n of N, left out
    text = leaderboard.to_markdown(rows, f"MemeGauge report: {run['name']} ({run['method']})", facts)
    for name, title in present_sections(report):  # what other packages show (memegauge.report.sections)
        lines = ["", f"## {title}", "", "| field | value |", "|---|---|"]
        lines += [f"| {_md_cell(k)} | {_md_cell(v)} |" for k, v in flatten({name: report[name]})]
        text += "\n".join(lines) + "\n"
    return text


def _md_cell(value: Any) -> str:
    return str(value).replace("|", "\\|").replace("\n", " ")


def _iso_dates(report: dict[str, Any]) -> dict[str, Any]:
    from memegauge.report.headline import iso_date

    run = {**report["run"], **{k: iso_date(report["run"].get(k)) for k in ("created", "updated")}}
    return {**report, "run": run}


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
    writer.writerows(flatten({k: v for k, v in _iso_dates(report).items() if k != "details"}))
    return buffer.getvalue()


def to_markdown(report: dict[str, Any]) -> str:
    lines = [f"# MemeGauge report: {report['run']['name']} ({report['run']['method']})", "",
             "| field | value |", "|---|---|"]
    for key, value in flatten({k: v for k, v in _iso_dates(report).items() if k != "details"}):
        lines.append(f"| {key} | {_md_cell(value)} |")
    return "\n".join(lines) + "\n"


RUNS_COLUMNS = ("name", "method", "status", "calls", "made", "cached", "last rerun new", "failed", "tokens", "cost $")
RUNS_DROPPED_FIRST = ("last rerun new", "made", "cached", "tokens", "method", "calls", "cost $")
"""`memegauge runs` on a narrow terminal leaves these out, first ones first, so that a run's name is never cut."""


def runs_table(headers: list[Any], width: int, title: str) -> tuple[Any, list[str]]:
    """(`memegauge runs`' table, the columns left out to fit `width`): the name column is never cut or wrapped;
    other columns are dropped (`RUNS_DROPPED_FIRST`) until the table fits."""
    from rich.table import Table

    from memegauge.clikit import safe

    rows = [{"name": h.name, "method": h.method, "status": h.status, "calls": str(h.calls), "made": str(h.calls_made),
             "cached": str(h.cached_calls), "last rerun new": str(h.last_execution_new_calls),
             "failed": str(h.failed_calls), "tokens": str(h.tokens), "cost $": f"{h.cost:.4f}"} for h in headers]
    kept = list(RUNS_COLUMNS)

    def needed() -> int:  # rich's box: one border per column and a space of padding on each side of a cell
        return 1 + sum(max(len(c), *(len(r[c]) for r in rows)) + 3 for c in kept)

    dropped = []
    for column in RUNS_DROPPED_FIRST:
        if needed() <= width:
            break
        kept.remove(column)
        dropped.append(column)
    table = Table(title=title)
    for column in kept:
        table.add_column(column, no_wrap=column == "name", overflow="ignore" if column == "name" else "fold",
                         min_width=max(len(column), *(len(r[column]) for r in rows)) if column == "name" else None)
    for r in rows:
        table.add_row(*(safe(r[c]) for c in kept))
    return table, dropped
