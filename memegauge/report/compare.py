"""`memegauge compare RUN...`: one leaderboard across runs of one method, every figure with its 95%
interval, from the runs' headline rows (`memegauge.report.headline`).

AdamMeme targets run in different runs become rows of one leaderboard (target × category); Arena and
MemeQA models likewise (an Arena rating is relative to its own run's opponents: the run column says
which). Runs of different methods are refused: their figures do not share a scale. Formats: `table`
(the terminal), `json` ({method, runs, rows}: the long headline rows), `csv` and `md` (the wide
leaderboard, `memegauge.report.leaderboard`) and `html` (a page with the table and a bar plot with
error bars; every value escaped by the template engine).
"""

from __future__ import annotations

import json
from typing import Any

from memegauge.engine.store import Store
from memegauge.report import build_report, leaderboard
from memegauge.report.headline import Headline, headline_rows, iso_date
from memegauge.types import InputError

FORMATS = ("table", "json", "csv", "md", "html")


def comparison(store: Store, names: list[str]) -> dict[str, Any]:
    """{method, runs: [{name, method, status, date, models}], rows: [Headline]} for the named runs (in
    leaderboard order); refuses no runs, unknown runs, mixed methods and runs without a leaderboard."""
    names = list(dict.fromkeys(names))
    if not names:
        raise InputError("no run to compare", where="memegauge compare", fix="name two or more runs")
    reports = [build_report(store, name) for name in names]  # an unknown name fails here, naming it
    methods = {r["run"]["method"] for r in reports}
    if len(methods) > 1:
        listed = ", ".join(f"{r['run']['name']} ({r['run']['method']})" for r in reports)
        raise InputError(f"runs of different methods cannot share a leaderboard: {listed}",
                         where="memegauge compare", fix="compare runs of one method at a time")
    rows: list[Headline] = []
    for report in reports:
        found = headline_rows(report)
        if not found:
            raise InputError(f"run {report['run']['name']!r} has no leaderboard figures (a "
                             f"{report['run']['method']} {report.get('task') or 'run'} reports what it stored)",
                             where="memegauge compare", fix="compare runs that evaluate models")
        rows += found
    runs = [{"name": r["run"]["name"], "method": r["run"]["method"], "status": r["run"]["status"],
             "date": iso_date(r["run"].get("created")), "models": sorted({h.model for h in rows
                                                                          if h.run == r["run"]["name"]})}
            for r in reports]
    return {"method": methods.pop(), "runs": runs, "rows": leaderboard.ordered(rows)}


def render(store: Store, names: list[str], fmt: str) -> str:
    """The comparison in one of `FORMATS` (`table` is rendered by the CLI; here it is plain text)."""
    if fmt not in FORMATS:
        raise InputError(f"unknown format {fmt!r}", where="--format", fix=f"use one of {', '.join(FORMATS)}")
    found = comparison(store, names)
    rows = found["rows"]
    if fmt == "json":
        return json.dumps({**found, "rows": [r.model_dump() for r in rows]}, indent=2, ensure_ascii=False)
    if fmt == "csv":
        return leaderboard.to_csv(rows)
    if fmt == "md":
        facts = [(r["name"], f"{r['method']}, {r['status']}, {r['date']}") for r in found["runs"]]
        return leaderboard.to_markdown(rows, f"MemeGauge comparison ({found['method']})", facts)
    if fmt == "html":
        from memegauge.report.pages import compare_page

        return compare_page(found)
    header, lines = leaderboard.text_table(rows)
    widths = [max(len(str(c)) for c in column) for column in zip(header, *lines, strict=True)]
    return "\n".join("  ".join(str(c).ljust(w) for c, w in zip(line, widths, strict=True)).rstrip()
                     for line in [header, *lines]) + "\n"
