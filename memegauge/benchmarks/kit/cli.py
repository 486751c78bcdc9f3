"""`memegauge eval NAME... --model M...` (or `--suite memes`): one run per benchmark and model on the one run
path (`run_checked`), then one table with a column per model: each task's accuracy, macro-F1 and AUROC (and per
group), each with its 95% interval and n. `--list` lists the installed benchmarks.

Every benchmark's data is looked for, and every run's inputs checked, before the first run starts. With
`--suite`, a benchmark whose data set is not installed is skipped (one line with the command that installs it),
the others run, and the command exits `SKIPPED_EXIT` after the leaderboard; benchmarks named one by one are
refused (exit 2) when any of their data sets is missing, one line for each."""

from __future__ import annotations

import asyncio
from pathlib import Path

import typer

SKIPPED_EXIT = 4
"""`eval --suite`'s exit status when it ran and showed the leaderboard but skipped benchmarks whose data set is not
installed (a run that failed calls still exits 1; docs/benchmarks.md)."""


def register(app: typer.Typer) -> None:
    app.command("eval")(eval_command)


def eval_command(ctx: typer.Context,
                 names: list[str] | None = typer.Argument(None, help="Benchmarks to run (see --list)."),
                 model: list[str] | None = typer.Option(None, "--model", "-m", help="A model to evaluate "
                                                        "(repeat for several)."),
                 suite: str | None = typer.Option(None, "--suite", help="Every installed benchmark of this "
                                                  "suite (e.g. memes)."),
                 list_: bool = typer.Option(False, "--list", help="List the installed benchmarks and exit."),
                 split: str | None = typer.Option(None, "--split", help="The split (default: each benchmark's)."),
                 limit: int | None = typer.Option(None, "--limit", min=1, help="Only the first N items."),
                 seed: int = typer.Option(0, "--seed", help="Seeds the bootstrap intervals."),
                 data: Path | None = typer.Option(None, "--data", help="The release's folder (one benchmark), "
                                                  "or a folder holding one per benchmark name (several); "
                                                  "default: the data catalogue's copy."),
                 max_failure_rate: float = typer.Option(0.0, "--max-failure-rate", help="Accept runs with up "
                                                        "to this share of failed calls."),
                 skip_preflight: bool = typer.Option(False, "--skip-preflight", help="Start without checking "
                                                     "the models first."),
                 out_path: Path | None = typer.Option(None, "--out", help="Also write the leaderboard: .html (a "
                                                      "page with the table and plots), .csv or .md.")) -> None:
    """Run the installed meme benchmarks (`memegauge eval --list` names them) on models."""
    from memegauge.benchmarks.kit.family import benchmarks  # lazy: the registry when the command runs
    from memegauge.clikit import console, finish_all, out, safe, settings  # lazy: as above
    from memegauge.types import InputError  # lazy: as above

    if list_:
        _list(out, benchmarks())
        return
    chosen = _chosen(benchmarks(), names or [], suite)
    if not model:
        raise InputError("no model named", "--model", "name a model of the registry: --model M (repeatable)")
    missing = {spec.name: why for spec in chosen if (why := _missing(spec, data, len(chosen) > 1))}
    for name, why in missing.items():
        label = "skipped" if suite is not None else "not installed"
        console.print(f"[yellow]{label}:[/] {name}: {safe(why)}", highlight=False, soft_wrap=True)
    chosen = [spec for spec in chosen if spec.name not in missing]
    if missing and (suite is None or not chosen):
        raise InputError(f"the data of {', '.join(missing)} is not installed", "eval",
                         "install it with the line(s) above" + (", or leave those benchmarks out" if chosen else ""))
    s = settings(ctx)
    runs = asyncio.run(_run_all(s, chosen, model, split, limit, seed, data, not skip_preflight))
    store = s.store()
    rows = _rows(store, runs)
    _print_table(out, rows)
    if out_path is not None:
        out_path.write_text(leaderboard_page(rows, runs, store, out_path.suffix.lower()), encoding="utf-8")
    finish_all(store, runs, max_failure_rate)
    if missing:
        console.print(f"[yellow]skipped[/] (data not installed): {', '.join(missing)}", highlight=False)
        raise typer.Exit(SKIPPED_EXIT)


def _missing(spec, data: Path | None, several: bool) -> str | None:
    """Why `spec`'s data is not at hand, with the command that installs it; None when it is (or when only its
    run's own input check can tell: a `--data` folder for one benchmark, a MemeGauge without the catalogue)."""
    if data is not None:
        folder = data / spec.name
        return None if not several or folder.is_dir() else (
            f"no folder {folder}: put its release there, or leave out --data to read `memegauge data`'s copy")
    try:
        from memegauge.data.catalogue import entry  # lazy: the data catalogue is optional for --data runs
        from memegauge.data.store import get_line, missing_sources
    except ImportError:
        return None
    from memegauge.types import InputError  # lazy: as in eval_command

    try:
        absent = [name for name in (spec.data, *entry(spec.data).needs) if missing_sources(name)]
    except InputError:  # not a catalogue name: the run's own check says what to give
        return None
    return "; ".join(f"data set {name!r} is not installed: run `{get_line(name)}`" for name in absent) or None


def _list(out, found) -> None:
    for spec in found:
        tasks = ", ".join(f"{n} ({t.answer})" for n, t in spec.tasks.items())
        out.print(f"{spec.name}: {spec.title} — splits {', '.join(spec.splits)} (default {spec.split}); "
                  f"tasks {tasks}; suites {', '.join(spec.suites)}", highlight=False, markup=False)


def _chosen(found, names: list[str], suite: str | None):
    from memegauge.types import InputError  # lazy: as in eval_command

    by_name = {spec.name: spec for spec in found}
    if suite is not None:
        if names:
            raise InputError("both benchmark names and --suite given", "eval", "give names or --suite, not both")
        members = [spec for spec in found if suite in spec.suites]
        if not members:
            raise InputError(f"no installed benchmark is in suite {suite!r}", "--suite",
                             f"use one of: {', '.join(sorted({s for spec in found for s in spec.suites}))}")
        return members
    unknown = [n for n in names if n not in by_name]
    if unknown or not names:
        raise InputError(f"unknown benchmark {', '.join(unknown)}" if unknown else "no benchmark named", "eval",
                         f"name one of: {', '.join(by_name)} (or --suite memes); `memegauge eval --list` lists them")
    return [by_name[n] for n in dict.fromkeys(names)]


async def _run_all(s, chosen, models, split, limit, seed, data, preflight) -> list[str]:
    from memegauge.methods import method  # lazy: as in eval_command
    from memegauge.run_path import run_checked  # lazy: the engine when a run is made

    planned = []
    for spec in chosen:
        described = method(spec.name)
        folder = data if data is None or len(chosen) == 1 else data / spec.name
        configs = [(described.config({"model": m, "split": split if split in spec.splits or len(chosen) == 1
                                      else None, "limit": limit, "seed": seed, "data": folder}), None)
                   for m in models]
        planned.append((described, configs))
    for described, configs in planned:  # every benchmark's inputs checked before the first run (read again there)
        for config, _ in configs:
            described.check(config, s.registry())
    names = []
    for described, configs in planned:
        results = await run_checked(described, configs, store=s.store, registry=s.registry(),
                                    progress=s.progress, preflight=preflight)
        names += [r.name for r in results]
    return names


def _rows(store, runs: list[str]) -> list:
    """Every run's headline rows, each group named with its benchmark (``fhm: hateful``)."""
    from memegauge.report import build_report  # lazy: as in eval_command
    from memegauge.report.headline import headline_rows  # lazy: as in eval_command

    return [r.model_copy(update={"group": f"{r.method}: {r.group}"})
            for name in runs for r in headline_rows(build_report(store, name))]


def leaderboard_page(rows: list, runs: list[str], store, suffix: str) -> str:
    """The eval's leaderboard as a page (.html: `memegauge.report.pages.compare_page`), CSV or Markdown."""
    from memegauge.report import leaderboard  # lazy: as in eval_command
    from memegauge.report.headline import iso_date  # lazy: as in eval_command
    from memegauge.report.pages import compare_page  # lazy: as in eval_command
    from memegauge.types import InputError  # lazy: as in eval_command

    benchmarks = ", ".join(dict.fromkeys(r.method for r in rows))
    if suffix == ".csv":
        return leaderboard.to_csv(rows)
    if suffix == ".md":
        return leaderboard.to_markdown(rows, f"MemeGauge benchmarks ({benchmarks})")
    if suffix not in (".html", ".htm"):
        raise InputError(f"unknown leaderboard format {suffix!r}", "--out", "end the file name in .html, .csv or .md")
    described = []
    for name in runs:
        run = store.run_row(name)
        described.append({"name": name, "method": run["method"], "status": run["status"],
                          "date": iso_date(run["created"]), "models": sorted({r.model for r in rows if r.run == name})})
    return compare_page({"method": f"benchmarks: {benchmarks}", "runs": described, "rows": leaderboard.ordered(rows)})


def _print_table(out, rows: list) -> None:
    """One table: a line per (benchmark, task or group, figure), a column per model."""
    from rich.table import Table  # lazy: only when printing

    from memegauge.clikit import safe  # lazy: as in eval_command
    from memegauge.report.leaderboard import cell  # lazy: as in eval_command

    models = list(dict.fromkeys(r.model for r in rows))
    lines: dict[tuple[str, str, str], dict[str, str]] = {}
    for r in rows:
        lines.setdefault((r.method, r.group, r.figure), {})[r.model] = f"{cell(r)} n={r.n}"
    table = Table("task", "figure", *map(safe, models), title="95% intervals, n items")
    for (_, group, figure), by_model in lines.items():
        table.add_row(safe(group), figure, *(by_model.get(m, "–") for m in models))
    out.print(table)
