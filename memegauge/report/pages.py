"""The pages around single reports: the comparison page (`memegauge compare --format html`, `memegauge
view`'s `/compare`) and `memegauge view`'s list of every run in the store. Rendered with the report's
Jinja2 environment (autoescape on, StrictUndefined) and blocks; no script.
"""

from __future__ import annotations

import json
import math
from typing import Any
from urllib.parse import quote, urlencode

from markupsafe import Markup

from memegauge.engine.store import Store
from memegauge.report import leaderboard, plots
from memegauge.report.headline import Headline, iso_date
from memegauge.report.blocks import Block, Cell, count, table, text
from memegauge.report.html import _environment, _static, run_models
from memegauge.types import MemeGaugeError


def run_link(name: str) -> str:
    """The served path of a run's report (any character of a run name is quoted)."""
    return "/run/" + quote(name, safe="")


def compare_link(names: list[str]) -> str:
    return "/compare?" + urlencode([("runs", n) for n in names])


def render_page(title: str, blocks: list[Block], facts: list[tuple[str, str]] = (), subtitle: str = "",
                form: dict[str, list[str]] | None = None, home: bool = False) -> str:
    return _environment().get_template("page.html.j2").render(
        title=title, subtitle=subtitle, facts=list(facts), blocks=blocks, form=form, home=home,
        style=Markup(_static("report.css")))


def leaderboard_table(rows: list[Headline], links: bool) -> Any:
    """The leaderboard as an HTML table: run (a link when served), date, model, group, then per figure
    "value [lo, hi]" and n."""
    header, lines = leaderboard.text_table(rows)
    grouped = list(leaderboard.grouped(rows).values())
    body = []
    for line, figs in zip(lines, grouped, strict=True):
        cells = [Cell(line[0], line[0], href=run_link(line[0]) if links else None)] + [text(v) for v in line[1:4]]
        for f, shown in zip(leaderboard.figures_of(rows), line[4::2], strict=True):  # line: 4 keys, (shown, n)...
            r = figs.get(f)
            cells += [Cell(shown, r.value if r else None), Cell(leaderboard.n_cell(r), r.n) if r else count(None)]
        body.append(cells)
    return table(header, body)


PLOT_GROUPS = 5  # groups per comparison plot beyond the overall one


def comparison_plot(rows: list[Headline], overall_only: bool = False,
                    groups: list[str] | None = None) -> str | None:
    """Bars of the first rate figure (FR, win rate, accuracy) per group (only the `overall…` groups
    with `overall_only`, only `groups` when given), one series per model of a run, each with its 95%
    interval and n."""
    every = [r for r in rows if r.unit == "rate"]
    if not every:
        return None
    figure = every[0].figure
    every = [r for r in every if r.figure == figure]
    chosen = [r for r in every if (r.group.startswith("overall") or not overall_only)
              and (groups is None or r.group in groups)]
    if not chosen:
        return None
    groups = list(dict.fromkeys(r.group for r in chosen))
    runs_per_model = {m: {r.run for r in every if r.model == m} for m in {r.model for r in every}}

    def label(r: Headline) -> str:
        return r.model if len(runs_per_model[r.model]) == 1 else f"{r.model} ({r.run})"

    # every series in every plot of a page, in one order: a model keeps its colour from plot to plot
    series: dict[str, dict[str, Headline]] = {label(r): {} for r in every}
    for r in chosen:
        series[label(r)][r.group] = r
    values = {s: [by.get(g).value if by.get(g) else None for g in groups] for s, by in series.items()}
    intervals = {s: [None if by.get(g) is None or by[g].ci95_lo is None else (by[g].ci95_lo, by[g].ci95_hi)
                     for g in groups] for s, by in series.items()}
    counts = {s: [by[g].n if by.get(g) else None for g in groups] for s, by in series.items()}
    return plots.grouped_bars(groups, values, figure.replace("_", " "), f"{figure.replace('_', ' ')} with 95% "
                              "intervals", percent=True, intervals=intervals, counts=counts)


def compare_page(found: dict[str, Any], links: bool = False) -> str:
    """The comparison (`memegauge.report.compare.comparison`) as a page: runs, table, plot (a suite's
    benchmark runs: the suite leaderboard, `board_page`)."""
    if found.get("board") is not None:
        return board_page(found["board"], links)
    rows = found["rows"]
    facts = [(r["name"], f"{r['method']} · {r['status']} · {r['date']} · {', '.join(r['models'])}")
             for r in found["runs"]]
    if found.get("differences"):  # allowed by the caller: every difference named above the table
        facts.append(("asked different questions", leaderboard.describe(found["differences"])))
    blocks = [Block("table", "Leaderboard (95% intervals; n = items behind each figure)",
                    table=leaderboard_table(rows, links))]
    overall = comparison_plot(rows, overall_only=True)
    if overall:
        blocks.append(Block("plot", "Overall, with 95% intervals", src=overall))
    # the other groups a few at a time: 13 question types × 3 models in one plot shrink to unreadable bars
    others = list(dict.fromkeys(r.group for r in rows if not r.group.startswith("overall")))
    size = math.ceil(len(others) / math.ceil(len(others) / PLOT_GROUPS)) if others else 1  # even chunks
    for start in range(0, len(others), size):
        chunk = others[start:start + size]
        if src := comparison_plot(rows, groups=chunk):
            title = ("Every group" if len(chunk) == len(others) else
                     f"Groups {start + 1}–{start + len(chunk)} of {len(others)}")
            blocks.append(Block("plot", f"{title}, with 95% intervals", src=src))
    return render_page(f"MemeGauge comparison ({found['method']})", blocks, facts,
                       subtitle=f"{len(found['runs'])} run(s)", home=links)


def key_figures(store: Store, name: str) -> tuple[list[str], str]:
    """(models, key figures text) of a run: its overall headline figures, first figure per model;
    a run whose report cannot be built says why instead."""
    from memegauge.report import build_report
    from memegauge.report.headline import headline_rows

    try:
        rows = headline_rows(build_report(store, name))
    except MemeGaugeError as exc:
        return [], f"no report: {exc}"
    overall = [r for r in rows if r.group.startswith("overall")]
    if not overall:
        return sorted({r.model for r in rows}), "–"
    lead = [r for r in overall if r.group == overall[0].group and r.figure == overall[0].figure]
    shown = [f"{r.model}: {r.figure.replace('_', ' ')} {leaderboard.cell(r)}" + ("" if "n=" in leaderboard.cell(r)
                                                                                else f" n={r.n}") for r in lead]
    return sorted({r.model for r in rows}), f"{overall[0].group}: " + "; ".join(shown)


BENCHMARK_RUNS = "benchmark runs (eval: any benchmarks together, as one suite leaderboard)"
"""The compare form's group of the runs `eval` makes (MemeQA's and the kit's), which `compare` accepts across
benchmarks (`memegauge.report.compare`); every other run is offered with the runs of its own method."""


def runs_page(store: Store) -> str:
    """Every run in the store: name (a link to its report), method, models, status, ISO date, key
    figures; and a form to compare runs: of one method, or benchmark runs of any benchmarks together."""
    from memegauge.registry import EVAL_BENCHMARKS, provided

    runs = store.list_runs()
    benchmark_of = provided(EVAL_BENCHMARKS)
    benchmarks = benchmark_of([(run["method"], json.loads(run["config_json"] or "{}")) for run in runs]) \
        if benchmark_of and runs else [None] * len(runs)
    rows, choices = [], {}
    for run, benchmark in zip(runs, benchmarks, strict=True):
        models, figures = key_figures(store, run["name"])
        if not models:
            roles = run_models(run["method"], json.loads(run["config_json"]),
                               json.loads(run["roles_json"]) if run.get("roles_json") else None)
            models = sorted({m for ms in roles.values() for m in ms})
        rows.append([Cell(run["name"], run["name"], href=run_link(run["name"])), text(run["method"]),
                     text(", ".join(models) or None), text(run["status"]), text(iso_date(run.get("created"))),
                     text(figures), count(run.get("calls")), count(run.get("failed_calls"))])
        choices.setdefault(run["method"] if benchmark is None else BENCHMARK_RUNS, []).append(run["name"])
    blocks = [Block("table", "Runs", table=table(["run", "method", "models", "status", "date (UTC)",
                                                  "key figures (95% CI)", "calls", "failed calls"], rows))]
    if not runs:
        blocks = [Block("note", "No runs yet", text="This store has no run: run a method first.")]
    return render_page("MemeGauge runs", blocks, [("store", str(store.path)), ("runs", str(len(runs)))],
                       form=choices or None)


PUBLISHED_COLUMNS = 4
"""Published systems a benchmark's table shows as columns beside the models; a benchmark with more (MemeQA's Tables
2–3: some twenty) gets a compact column (human, best, random) and the full set as tables of their own, a row per
system and a column per task (`PUBLISHED_TASKS` at most per table), so no table is wider than a 1200 px page."""
PUBLISHED_TASKS = 7


def board_tables(board: Any) -> list[Block]:
    """A suite leaderboard (`memegauge.report.leaderboard.Board`) as HTML tables, one per benchmark and split: task,
    metric, a column per model (value [interval] n, or why it was not computed), and a column per published system
    of that benchmark, marked published, with the paper's n in its header (in the cell where it varies by row); with
    more than `PUBLISHED_COLUMNS` systems, the published figures as tables of their own (`_published_tables`)."""
    sections: dict[tuple[str, str], list[Any]] = {}
    for line in board.lines:
        sections.setdefault((line.benchmark, line.split), []).append(line)
    blocks = []
    for (benchmark, split), lines in sections.items():
        systems = list(dict.fromkeys(p.system for line in lines for p in line.published))
        notes = " ".join(sorted({p.n_note for line in lines for p in line.published if p.n_note}))
        compact = len(systems) > PUBLISHED_COLUMNS
        ns = {s: {(p.n, p.n_note != "") for line in lines for p in line.published if p.system == s} for s in systems}
        shared = {s: next(iter(found)) for s, found in ns.items() if len(found) == 1}

        def header(system: str, shared: dict = shared) -> str:
            if system not in shared:
                return f"published: {system}"
            n, _ = shared[system]
            return f"published: {system} ({'n=' + str(n) if n is not None else 'n not stated'})"

        body = []
        for line in lines:
            cells = [text(line.task), text(line.metric)]
            for m in board.models:
                r = line.cells.get(m)
                cells.append(Cell(leaderboard.board_cell(r), r.value if r else None))
            by_system = {p.system: p for p in line.published}
            if compact:
                cells.append(text(leaderboard.few_published(line.published, 2, "in the tables below")
                                  if line.published else None))
            else:
                cells += [text(None) if s not in by_system else
                          Cell(f"{100 * by_system[s].value:.1f}%" if s in shared else
                               leaderboard.published_cell(by_system[s]), by_system[s].value) for s in systems]
            body.append(cells)
        columns = ["task", "metric", *board.models,
                   *(["published (paper's n)"] if compact else
                     map(header, systems))]
        blocks.append(Block("table", f"{benchmark} · {split}", text=notes, table=table(columns, body)))
        if compact:
            blocks += _published_tables(benchmark, split, lines, systems, notes)
    return blocks


def _published_tables(benchmark: str, split: str, lines: list[Any], systems: list[str], notes: str) -> list[Block]:
    """A benchmark's published figures as the paper prints them: a row per system, a column per task and metric
    (`PUBLISHED_TASKS` at most per table), each cell the paper's figure (marked published; its n in the note)."""
    shown = [line for line in lines if line.published]
    metrics = {line.metric for line in shown}
    blocks = []
    for start in range(0, len(shown), PUBLISHED_TASKS):
        chunk = shown[start:start + PUBLISHED_TASKS]
        columns = ["published system", *(line.task if len(metrics) == 1 else f"{line.task} ({line.metric})"
                                         for line in chunk)]
        rows = []
        for system in systems:
            found = [{p.system: p for p in line.published}.get(system) for line in chunk]
            if any(found):
                rows.append([text(system), *(text(None) if p is None else Cell(f"{100 * p.value:.1f}%", p.value)
                                             for p in found)])
        part = "" if len(shown) <= PUBLISHED_TASKS else f", tasks {start + 1}–{start + len(chunk)} of {len(shown)}"
        blocks.append(Block("table", f"{benchmark} · {split}: published figures ({', '.join(sorted(metrics))}{part})",
                            text=("The papers' own figures, never ours. " + notes).strip(), table=table(columns, rows)))
    return blocks


def board_page(board: Any, links: bool = False) -> str:
    """The suite leaderboard as a page: its runs, a table per benchmark and split, what was not computed and why,
    the skipped benchmarks with the commands that install them, and a plot of each benchmark's overall figure."""
    facts = [(r["name"], f"{r['method']} · {r['status']} · {r['date']} · {', '.join(r['models'])}")
             for r in board.runs]
    blocks = [Block("note", "Leaderboard", text="Each figure with its 95% interval and n (items behind it); "
                                                "published: the papers' own figures on the same split and metric, "
                                                "never ours, with the paper's n.")]
    blocks += [Block("note", "These figures measure the output format, not the model", text=warning)
               for warning in board.warnings]
    blocks += board_tables(board)
    if unscored := leaderboard.not_computed(board.lines):  # which benchmark, split, figure and model, and why
        blocks.append(Block("table", "Not computed", table=table(
            ["benchmark", "split", "task", "metric", "model", "why, and the fix"],
            [[text(b), text(split), text(task), text(metric), text(", ".join(models)), text(note)]
             for b, split, task, metric, models, note in unscored])))
    if board.asked:  # asked n of N per task and model, and each reason a row was left out, with its count
        blocks.append(Block("table", "Asked n of N (rows left out, and why)", table=table(
            ["benchmark", "split", "task", "model", "asked"],
            [[text(b), text(split), text(task), text(model), text(said)]
             for (b, split, task), by_model in board.asked.items() for model, said in by_model.items()])))
    if board.skipped:
        rows = []
        for name, why in board.skipped:
            reason, *commands = why.split("\n")
            reason = reason.removesuffix("; install with:").removesuffix("; commands:")
            rows += [[text(name), text(reason), text(c.strip() or None)] for c in (commands or [""])]
        blocks.append(Block("table", "Skipped benchmarks (data not installed)", table=table(
            ["benchmark", "why", "command (one per line)"], rows)))
    rows = [r for line in board.lines for r in line.cells.values() if r.value is not None]
    lead = [r.model_copy(update={"group": f"{line.benchmark}: {line.task} ({line.metric})", "run": r.model})
            for line in board.lines if line.metric == board.lines[0].metric
            for r in line.cells.values() if r.value is not None and r.group.startswith("overall")]
    if rows and (src := comparison_plot(lead, groups=list(dict.fromkeys(r.group for r in lead))[:PLOT_GROUPS * 2])):
        blocks.append(Block("plot", f"Each benchmark's overall {board.lines[0].metric}, with 95% intervals", src=src))
    subtitle = f"{len(board.runs)} run(s), {len(board.models)} model(s)" + (
        f", {len(board.skipped)} benchmark(s) skipped" if board.skipped else "")
    return render_page(board.title, blocks, facts, subtitle=subtitle, home=links)
