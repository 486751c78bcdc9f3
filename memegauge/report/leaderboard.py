"""Leaderboard tables from headline rows (`memegauge.report.headline`): what `report --format csv|md`
and `memegauge compare` print.

The rows are long (one per figure); a leaderboard is wide: one line per run × model × group (an
AdamMeme target × category, an Arena model, a MemeQA model × question type), and per figure its value,
the ends of its 95% interval and its n. In CSV the numbers are plain (rates as fractions 0–1, so
pandas reads them as numbers); in Markdown and in the terminal they are shown as "25.0% [10.3, 49.4]",
or with the reason there is no interval ("6.20 (too few items, n=1)": a mean of one item; a rate always has
one). Dates are ISO 8601 (UTC).
"""

from __future__ import annotations

import csv
import io
import json
from dataclasses import dataclass, field
from typing import Any
from collections.abc import Iterable

from memegauge.report.headline import Headline
from memegauge.report.intervals import figure, shown

KEY_COLUMNS = ("method", "run", "date", "model", "group")


def figures_of(rows: Iterable[Headline]) -> list[str]:
    """The figure names in first-seen order."""
    return list(dict.fromkeys(r.figure for r in rows))


def grouped(rows: list[Headline]) -> dict[tuple[str, ...], dict[str, Headline]]:
    """{(method, run, date, model, group): {figure: row}} in first-seen order."""
    out: dict[tuple[str, ...], dict[str, Headline]] = {}
    for r in rows:
        out.setdefault(tuple(getattr(r, k) for k in KEY_COLUMNS), {})[r.figure] = r
    return out


def ordered(rows: list[Headline]) -> list[Headline]:
    """Rows sorted for a leaderboard across runs: by group (`overall…` groups first, then first-seen
    order), then best first on the first figure (None last), then by run and model."""
    seen = list(dict.fromkeys(r.group for r in rows))
    groups = [g for g in seen if g.startswith("overall")] + [g for g in seen if not g.startswith("overall")]
    lead = figures_of(rows)[:1]
    best: dict[tuple[str, ...], float] = {}
    for key, figs in grouped(rows).items():
        first = figs.get(lead[0]) if lead else None
        if first is not None and first.value is not None:
            best[key] = -first.value if first.higher_is_better else first.value
    order = sorted(grouped(rows), key=lambda k: (groups.index(k[4]), k not in best, best.get(k, 0.0), k[1], k[3]))
    by_key = grouped(rows)
    return [r for key in order for r in by_key[key].values()]


def wide(rows: list[Headline]) -> tuple[list[str], list[dict[str, Any]]]:
    """(columns, one dict per run × model × group): per figure `<f>`, `<f>_ci95_lo`, `<f>_ci95_hi`,
    `<f>_n`, and `<f>_note` when some row of that figure has no interval."""
    names = figures_of(rows)
    noted = {r.figure for r in rows if r.note}
    columns = list(KEY_COLUMNS)
    for f in names:
        columns += [f, f"{f}_ci95_lo", f"{f}_ci95_hi", f"{f}_n"] + ([f"{f}_note"] if f in noted else [])
    out = []
    for key, figs in grouped(rows).items():
        line: dict[str, Any] = dict(zip(KEY_COLUMNS, key, strict=True))
        for f in names:
            r = figs.get(f)
            line.update({f: r and r.value, f"{f}_ci95_lo": r and r.ci95_lo, f"{f}_ci95_hi": r and r.ci95_hi,
                         f"{f}_n": r and r.n})
            if f in noted:
                line[f"{f}_note"] = r.note if r else None
        out.append(line)
    return columns, out


def to_csv(rows: list[Headline]) -> str:
    columns, lines = wide(rows)
    buffer = io.StringIO()
    writer = csv.DictWriter(buffer, columns, lineterminator="\n")
    writer.writeheader()
    writer.writerows({k: "" if v is None else v for k, v in line.items()} for line in lines)
    return buffer.getvalue()


def cell(r: Headline | None) -> str:
    """One figure as text with its interval (or the reason it has none)."""
    if r is None:
        return "–"
    if r.value is None and r.note:  # a figure that could not be computed: the reason, where the value would be
        return f"not computed: {r.note.split(':')[0]}"
    fig = figure(r.value, None if r.ci95_lo is None else (r.ci95_lo, r.ci95_hi), r.n, r.memes, r.interval, r.note)
    return shown(fig, percent=r.unit == "rate", digits=1 if r.unit == "rating" else 2)


def n_cell(r: Headline | None) -> str:
    """A figure's n; with why, where the figure has its interval and still a note (AUROC over fewer items than were
    answered: "36 (4 answers without yes/no log-probabilities left out)")."""
    if r is None:
        return "–"
    return f"{r.n} ({r.note})" if r.value is not None and r.ci95_lo is not None and r.note else str(r.n)


def text_table(rows: list[Headline], with_run: bool = True) -> tuple[list[str], list[list[str]]]:
    """(header, lines) of shown cells: run, model, group, then per figure "value [lo, hi]" and its n."""
    names = figures_of(rows)
    header = (["run", "date"] if with_run else []) + ["model", "group"]
    header += [c for f in names for c in (f"{f} (95% CI)", f"{f} n")]
    lines = []
    for (_, run, date, model, group), figs in grouped(rows).items():
        line = ([run, date] if with_run else []) + [model, group]
        for f in names:
            r = figs.get(f)
            line += [cell(r), n_cell(r)]
        lines.append(line)
    return header, lines


def _md_escape(value: str) -> str:
    """A cell of a Markdown table: pipes escaped, and a model or run name's markup shown as text by any
    Markdown renderer that passes HTML through (`<script>` becomes `&lt;script&gt;`)."""
    text = value.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;")
    return text.replace("\\", "\\\\").replace("|", "\\|").replace("\n", " ")


def to_markdown(rows: list[Headline], title: str, facts: list[tuple[str, str]] = ()) -> str:
    header, lines = text_table(rows)
    out = [f"# {_md_escape(title)}", ""]
    out += [f"- {_md_escape(k)}: {_md_escape(v)}" for k, v in facts]
    out += ([""] if facts else []) + ["| " + " | ".join(map(_md_escape, header)) + " |",
                                      "|" + "|".join("---" for _ in header) + "|"]
    out += ["| " + " | ".join(map(_md_escape, line)) + " |" for line in lines]
    if not lines:
        out.append("| " + " | ".join(["–"] * len(header)) + " |")
    reasons = list(dict.fromkeys(f"{r.figure} of {r.model} ({r.group}): {r.note}" for r in rows
                                 if r.value is None and r.note))
    if reasons:  # each figure shown as not computed: the reason and the fix in full
        out += ["", "Not computed:"] + [f"- {_md_escape(reason)}" for reason in reasons]
    out += ["", "95% intervals: Wilson for rates (clustered by meme where items share one), cluster "
                "bootstrap for means and ratings; see docs/reports.md."]
    return "\n".join(out) + "\n"

def describe(found: list[dict[str, Any]]) -> str:
    """The differences in one line: "version: a none-minus, b none-plus; limit: a 20, b (not set)"."""
    def value(v: Any) -> str:
        if isinstance(v, str):  # a path or a name: its end tells runs apart
            return v if len(v) <= 60 else "…" + v[-59:]
        text = "(not set)" if v is None else json.dumps(v, ensure_ascii=False)
        return text if len(text) <= 60 else text[:59] + "…"

    return "; ".join(f"{d['key']}: " + ", ".join(f"{run} {value(v)}" for run, v in d["values"].items())
                     for d in found)


# ---- the suite leaderboard: a row per benchmark, split, task and metric; a column per model ---------------------

@dataclass
class BoardLine:
    """One row of a suite leaderboard: a figure of one task of one benchmark on one split, per model."""

    benchmark: str
    split: str
    task: str
    metric: str
    cells: dict[str, Headline]  # model -> its figure (value None with a note: not computed, and why)
    published: list[Any] = field(default_factory=list)  # `memegauge.benchmarks.kit.entries.Published`


@dataclass
class Board:
    """A suite leaderboard (`eval`, `compare` of eval runs): its rows, models, runs and skipped benchmarks."""

    title: str
    models: list[str]
    lines: list[BoardLine]
    runs: list[dict[str, Any]] = field(default_factory=list)  # {name, method, status, date, models}
    skipped: list[tuple[str, str]] = field(default_factory=list)  # (benchmark, why, with the line that installs it)
    notes: list[str] = field(default_factory=list)  # each figure not computed: where, the reason and the fix
    # (`not_computed_line`)
    warnings: list[str] = field(default_factory=list)  # "RUN: …" for each run whose answers mostly could not be read
    # (benchmark, split, task) -> model column -> "asked n of N; left out: reason (count), …" (docs/benchmarks.md)
    asked: dict[tuple[str, str, str], dict[str, str]] = field(default_factory=dict)

    def systems(self) -> list[str]:
        """The published systems, in first-seen order (a column each in CSV, Markdown and HTML)."""
        return list(dict.fromkeys(p.system for line in self.lines for p in line.published))


def asked_lines(board: Board, benchmark: str | None = None, split: str | None = None) -> list[str]:
    """"TASK: asked n of N; left out: reason (count), …" per task (of one benchmark and split, or every one:
    "benchmark · split · TASK: …"), the models named where their counts differ."""
    out = []
    for (b, s, task), by_model in board.asked.items():
        if benchmark is not None and (b, s) != (benchmark, split):
            continue
        where = task if benchmark is not None else f"{b} · {s} · {task}"
        if len(set(by_model.values())) == 1 and len(by_model) == len(board.models):
            out.append(f"{where}: {next(iter(by_model.values()))}")
        else:
            out += [f"{where} ({model}): {said}" for model, said in by_model.items()]
    return out


def not_computed(lines: Iterable[BoardLine]) -> list[tuple[str, str, str, str, list[str], str]]:
    """(benchmark, split, task, metric, models, reason and fix) of each figure that was not computed, the models with
    one reason for one figure together, in the board's order."""
    found: dict[tuple[str, ...], list[str]] = {}
    for line in lines:
        for model, r in line.cells.items():
            if r.value is None and r.note:
                found.setdefault((line.benchmark, line.split, line.task, line.metric, r.note), []).append(model)
    return [(b, split, task, metric, models, note) for (b, split, task, metric, note), models in found.items()]


def not_computed_line(benchmark: str, split: str, task: str, metric: str, models: list[str], note: str) -> str:
    """One `Board.notes` line: which benchmark, split, figure and models, then the reason and the fix."""
    return f"{benchmark} · {split} · {task} {metric} of {', '.join(models)}: {note}"


def published_cell(p: Any) -> str:
    """A published figure as text, marked with the paper's n (or what the paper says of it)."""
    n = f"n={p.n}" if p.n is not None else "n not stated"
    return f"{100 * p.value:.1f}% ({n})"


def board_cell(r: Headline | None, with_n: bool = True) -> str:
    """A model's figure in a suite leaderboard: value [interval] n=…, or '–' with why it was not computed."""
    if r is None:
        return "–"
    return cell(r) + (f" n={n_cell(r)}" if with_n and r.ci95_lo is not None else "")


def board_csv(board: Board) -> str:
    """One line per (benchmark, split, task, metric): per model its value, interval, n and note; per published
    system its value and n (columns `published: SYSTEM`); then a line per skipped benchmark (`status`)."""
    systems = board.systems()
    columns = ["benchmark", "split", "task", "metric"]
    for m in board.models:
        columns += [m, f"{m}_ci95_lo", f"{m}_ci95_hi", f"{m}_n", f"{m}_note"] + ([f"{m}_asked"] if board.asked else [])
    columns += [c for s in systems for c in (f"published: {s}", f"published: {s} n")]
    columns += ["published_sources", "status"]
    buffer = io.StringIO()
    writer = csv.DictWriter(buffer, columns, lineterminator="\n")
    writer.writeheader()
    for line in board.lines:
        out: dict[str, Any] = {"benchmark": line.benchmark, "split": line.split, "task": line.task,
                               "metric": line.metric, "status": "measured",
                               "published_sources": "; ".join(dict.fromkeys(p.source for p in line.published))}
        for m in board.models:
            r = line.cells.get(m)
            out.update({m: r and r.value, f"{m}_ci95_lo": r and r.ci95_lo, f"{m}_ci95_hi": r and r.ci95_hi,
                        f"{m}_n": r and r.n, f"{m}_note": r and r.note})
            if board.asked:  # the task's "asked n of N; left out: reason (count), …", on each of its lines
                out[f"{m}_asked"] = board.asked.get((line.benchmark, line.split, line.task), {}).get(m)
        for p in line.published:
            out.update({f"published: {p.system}": p.value,  # the source's n, or that it states none (every format)
                        f"published: {p.system} n": p.n if p.n is not None else "n not stated"})
        writer.writerow({k: "" if v is None else v for k, v in out.items()})
    for name, why in board.skipped:
        writer.writerow({"benchmark": name, "status": f"skipped: {why}"})
    return buffer.getvalue()


TERMINAL_PUBLISHED = 3  # published figures shown per row in the terminal (all of them in CSV, Markdown, HTML)


def few_published(published: list[Any], limit: int = TERMINAL_PUBLISHED, where: str = "--out") -> str:
    """The published figures of a row in a few words: human first, then the best system, then random; '+k more
    (WHERE)' saying where the others are."""
    if not published:
        return "–"
    human = [p for p in published if "human" in p.system.lower()]
    chance = [p for p in published if p.system.lower().startswith("random")]
    others = sorted((p for p in published if p not in human and p not in chance), key=lambda p: -p.value)
    chosen = (human[:1] + others[:1] + chance[:1] + others[1:])[:limit]
    more = len(published) - len(chosen)
    return "; ".join(f"{p.system}: {published_cell(p)}" for p in chosen) + (f"; +{more} more ({where})" if more else "")


def board_text_rows(board: Board, every_published: bool = False) -> tuple[list[str], list[list[str]]]:
    """(header, rows) of the terminal's (a few published figures per row) and Markdown's table (all of them)."""
    header = ["benchmark", "split", "task", "metric", *board.models, "published (paper's n)"]
    rows = [[line.benchmark, line.split, line.task, line.metric, *(board_cell(line.cells.get(m)) for m in board.models),
             few_published(line.published, len(line.published) if every_published else TERMINAL_PUBLISHED)]
            for line in board.lines]
    return header, rows


def board_markdown(board: Board) -> str:
    header, rows = board_text_rows(board, every_published=True)
    out = [f"# {_md_escape(board.title)}", ""]
    out += [f"- run {_md_escape(r['name'])}: {_md_escape(r['method'])}, {_md_escape(r['status'])}, {r['date']}"
            for r in board.runs]
    out += [""] if board.runs else []
    out += ["| " + " | ".join(map(_md_escape, header)) + " |", "|" + "|".join("---" for _ in header) + "|"]
    out += ["| " + " | ".join(map(_md_escape, row)) + " |" for row in rows]
    if board.asked:
        out += ["", "Asked n of N (rows left out, and why):"] + [f"- {_md_escape(a)}" for a in asked_lines(board)]
    if board.warnings:
        out += ["", "WARNING (most answers could not be read):"] + [f"- {_md_escape(w)}" for w in board.warnings]
    if board.notes:
        out += ["", "Not computed:"] + [f"- {_md_escape(n)}" for n in board.notes]
    if board.skipped:
        out += ["", "Skipped (data not installed):"] + [f"- {_md_escape(name)}: {_md_escape(why)}"
                                                        for name, why in board.skipped]
    out += ["", "95% intervals: Wilson for rates (clustered by meme where items share one), bootstrap for F1 and "
                "AUROC; `published` columns are the papers' figures (their split, metric and n), never ours."]
    return "\n".join(out) + "\n"
