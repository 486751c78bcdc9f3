"""`memegauge compare RUN...`: one leaderboard across runs of one method, every figure with its 95%
interval, from the runs' headline rows (`memegauge.report.headline`).

AdamMeme targets run in different runs become rows of one leaderboard (target × category); Arena and
MemeQA models likewise (an Arena rating is relative to its own run's opponents: the run column says
which). Runs of different methods are refused: their figures do not share a scale — except benchmark runs that
`eval` makes (MemeQA's and the kit's), which become the suite leaderboard (`_suite`): a row per benchmark, split,
task and metric, a column per model, the papers' figures beside. Runs of one method
that asked different questions (`differences`: the version of their method when the runs' differ — a
benchmark's `version:` — then every stored config key whose value differs — data set or version, split, limit,
types, seed, meme set, prompts and their hashes, judges, settings — except the keys that name the models being
compared) are refused too, with one message that names each difference, unless the caller allows them
(`--allow-different`); then the comparison lists them. Formats: `table`
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


def _targets(report: dict[str, Any]) -> set[str]:
    """The models a run evaluates (its method's `models` hook, role ``targets``)."""
    from memegauge.methods import method

    found = method(report["run"]["method"])
    config = report["run"].get("config") or {}
    return set((found.models(config) if found and found.models else {}).get("targets", []))


def _names_targets(value: Any, targets: set[str]) -> bool:
    """Whether a config value names only evaluated models (a model, or a list of them)."""
    if isinstance(value, str):
        return value in targets
    return isinstance(value, list) and all(isinstance(v, str) and v in targets for v in value)


def differences(reports: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """[{key, values: {run: value or None (not set)}}] for every config key whose value differs between
    the runs, leaving out the keys that name the models compared (in every run where they are set)."""
    configs = [(r["run"]["name"], r["run"].get("config") or {}, _targets(r)) for r in reports]
    keys = sorted({k for _, config, _ in configs for k in config})
    found = []
    for key in keys:
        values = {name: config.get(key) for name, config, _ in configs}
        if len({json.dumps(v, sort_keys=True) for v in values.values()}) < 2:
            continue
        if all(_names_targets(config[key], targets) for _, config, targets in configs if key in config):
            continue  # the models being compared (MemeQA's model, AdamMeme's and Arena's targets)
        found.append({"key": key, "values": values})
    return _version_difference(reports) + found


def _version_difference(reports: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """[{key: "version of METHOD", values: {run: version}}] when the runs were made by different versions of their
    method (a benchmark's `version:`, a method's `Method.version`: bumped when its reading, prompts or scoring
    change, so the runs asked different questions); [] when they agree. A run stored before versions were
    (no `method_version`) differs from none: its version is unknown, not another one."""
    versions = {r["run"]["name"]: r["run"].get("method_version") for r in reports}
    if len({v for v in versions.values() if v is not None}) < 2:
        return []
    return [{"key": f"version of {reports[0]['run']['method']}", "values": versions}]



def comparison(store: Store, names: list[str], allow_different: bool = False) -> dict[str, Any]:
    """{method, runs: [{name, method, status, date, models}], differences, rows: [Headline]} for the
    named runs (in leaderboard order); refuses no runs, unknown runs, mixed methods, runs without a
    leaderboard and, unless `allow_different`, runs that asked different questions (`differences`)."""
    names = list(dict.fromkeys(names))
    if not names:
        raise InputError("no run to compare", where="memegauge compare", fix="name two or more runs")
    reports = [build_report(store, name) for name in names]  # an unknown name fails here, naming it
    methods = {r["run"]["method"] for r in reports}
    if len(methods) > 1 and (board := _suite(store, reports)) is not None:  # eval runs of several benchmarks
        return {"method": "benchmarks", "runs": board.runs, "differences": [], "rows": [], "board": board}
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
    different = differences(reports)
    if different and not allow_different:
        raise InputError(f"these runs asked different questions, so their figures are not one leaderboard "
                         f"— {leaderboard.describe(different)}", where="memegauge compare",
                         fix="compare runs made with the same settings, or pass --allow-different to put "
                             "them side by side anyway (each difference is then listed with the table)")
    runs = [{"name": r["run"]["name"], "method": r["run"]["method"], "status": r["run"]["status"],
             "date": iso_date(r["run"].get("created")), "models": sorted({h.model for h in rows
                                                                          if h.run == r["run"]["name"]})}
            for r in reports]
    return {"method": methods.pop(), "runs": runs, "differences": different, "rows": leaderboard.ordered(rows)}


def _suite(store: Store, reports: list[dict[str, Any]]) -> Any:
    """The suite leaderboard of these runs when every one is a benchmark run `eval` makes (MemeQA's and the kit's;
    `memegauge.benchmarks.kit.entries`): a row per benchmark, split, task and metric, a column per model. None
    when any run is of another kind (AdamMeme, Arena, a MemeQA build)."""
    from memegauge.registry import SUITE_BOARD, provided

    board_of = provided(SUITE_BOARD)  # the benchmark kit's, by entry point: the report imports no benchmark
    return board_of(store, reports) if board_of is not None else None


def render_board(board: Any, fmt: str) -> str:
    """A suite leaderboard in one of `FORMATS` (table: plain text, one line per row)."""
    from dataclasses import asdict

    if fmt == "json":
        return json.dumps({"title": board.title, "models": board.models, "runs": board.runs, "notes": board.notes,
                           "skipped": board.skipped,
                           "rows": [{**{k: v for k, v in asdict(line).items() if k != "cells"},
                                     "cells": {m: r.model_dump() for m, r in line.cells.items()}}
                                    for line in board.lines]}, indent=2, ensure_ascii=False, default=str)
    if fmt == "csv":
        return leaderboard.board_csv(board)
    if fmt == "md":
        return leaderboard.board_markdown(board)
    if fmt == "html":
        from memegauge.report.pages import board_page

        return board_page(board)
    header, lines = leaderboard.board_text_rows(board)
    widths = [max(len(str(c)) for c in column) for column in zip(header, *lines, strict=True)]
    return "\n".join("  ".join(str(c).ljust(w) for c, w in zip(line, widths, strict=True)).rstrip()
                     for line in [header, *lines]) + "\n" + "".join(f"not computed: {n}\n" for n in board.notes)


def render(store: Store, names: list[str], fmt: str, allow_different: bool = False) -> str:
    """The comparison in one of `FORMATS` (`table` is rendered by the CLI; here it is plain text). Runs
    that asked different questions are refused unless `allow_different`; then every format but CSV (a
    plain leaderboard for `pandas.read_csv`) lists the differences."""
    if fmt not in FORMATS:
        raise InputError(f"unknown format {fmt!r}", where="--format", fix=f"use one of {', '.join(FORMATS)}")
    return render_found(comparison(store, names, allow_different), fmt)


def warning(found: dict[str, Any]) -> str | None:
    """The line that names an allowed comparison's differences; None when the runs asked the same."""
    return (f"runs asked different questions (--allow-different): {leaderboard.describe(found['differences'])}"
            if found.get("differences") else None)


def render_found(found: dict[str, Any], fmt: str) -> str:
    """A built comparison (`comparison`) in one of `FORMATS`."""
    if found.get("board") is not None:
        return render_board(found["board"], fmt)
    rows = found["rows"]
    warning_line = warning(found)
    if fmt == "json":
        return json.dumps({**found, "rows": [r.model_dump() for r in rows]}, indent=2, ensure_ascii=False)
    if fmt == "csv":
        return leaderboard.to_csv(rows)
    if fmt == "md":
        facts = [(r["name"], f"{r['method']}, {r['status']}, {r['date']}") for r in found["runs"]]
        facts += [("differences", warning_line)] if warning_line else []
        return leaderboard.to_markdown(rows, f"MemeGauge comparison ({found['method']})", facts)
    if fmt == "html":
        from memegauge.report.pages import compare_page

        return compare_page(found)
    header, lines = leaderboard.text_table(rows)
    widths = [max(len(str(c)) for c in column) for column in zip(header, *lines, strict=True)]
    return ("" if warning_line is None else warning_line + "\n") + "\n".join(
        "  ".join(str(c).ljust(w) for c, w in zip(line, widths, strict=True)).rstrip()
        for line in [header, *lines]) + "\n"
