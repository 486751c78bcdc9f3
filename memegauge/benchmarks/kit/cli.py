"""`memegauge eval NAME... --model M...` (or `--suite memes`): one run per benchmark and model on the one run
path (`run_checked`), then the suite leaderboard: a row per benchmark, split, task and metric, a column per model
(each figure with its 95% interval and n, or why it was not computed), the papers' figures for the same split and
metric beside them (marked published, with the paper's n). `--list` lists what eval runs: every benchmark folder
of the kit and every declared benchmark (MemeQA; `memegauge.benchmarks.kit.entries`).

Every benchmark's data is looked for, and every run's inputs checked, before the first run starts. With
`--suite`, a benchmark whose data set is not installed is skipped (one line with the command that installs it,
and a line of the leaderboard), the others run, and the command exits `SKIPPED_EXIT` after the leaderboard;
benchmarks named one by one are refused (exit 2) when any of their data sets is missing, one line for each.
The run options are those of every run command (`memegauge.clikit`): `--run`, `--dry-run`, `--budget`, `-o`, `-c`,
`--max-failure-rate`, `--skip-preflight`."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import typer

from memegauge.clikit import BUDGET, DRY_RUN, MAX_FAILURE_RATE, RUN, SET, SKIP_PREFLIGHT, config_option

OUT_SUFFIXES = (".html", ".htm", ".csv", ".md")
SKIPPED_EXIT = 4
"""`eval --suite`'s exit status when it ran and showed the leaderboard but skipped benchmarks whose data set is not
installed (a run that failed calls still exits 1; docs/benchmarks.md)."""
UNREADABLE_EXIT = 3
"""`eval`'s exit status when a run's answers mostly could not be read (`EvalEntry.unreadable`: more than half; its
figures measure the output format), as `qa eval`'s; after the leaderboard; a failed run (1) takes precedence and it
takes precedence over `SKIPPED_EXIT`."""


def register(app: typer.Typer) -> None:
    app.command("eval")(eval_command)


def eval_command(ctx: typer.Context,
                 names: list[str] | None = typer.Argument(None, help="Benchmarks to run (see --list)."),
                 model: list[str] | None = typer.Option(None, "--model", "-m", help="A model to evaluate "
                                                        "(repeat for several)."),
                 suite: str | None = typer.Option(None, "--suite", help="Every installed benchmark of this "
                                                  "suite (e.g. memes)."),
                 list_: bool = typer.Option(False, "--list", help="List the benchmarks eval runs (those named, or "
                                            "--suite's, when given) and exit."),
                 split: list[str] | None = typer.Option(None, "--split", help="The split (default: each "
                                                        "benchmark's; in a suite, benchmarks without it take their "
                                                        "default), or NAME=SPLIT for one benchmark (repeatable)."),
                 limit: int | None = typer.Option(None, "--limit", min=1, help="Only the first N items."),
                 seed: int = typer.Option(0, "--seed", help="Seeds the bootstrap intervals (and MemeQA's sample)."),
                 data: Path | None = typer.Option(None, "--data", help="The release's folder (one benchmark), "
                                                  "or a folder holding one per benchmark name (several); "
                                                  "default: the data catalogue's copy."),
                 run: str | None = RUN,
                 config: Path | None = config_option("Eval (keys of the benchmarks' configs, e.g. max_tokens)"),
                 sets: list[str] | None = SET,
                 dry: bool = DRY_RUN,
                 budget: float | None = BUDGET,
                 max_failure_rate: float = MAX_FAILURE_RATE,
                 skip_preflight: bool = SKIP_PREFLIGHT,
                 out_path: Path | None = typer.Option(None, "--out", help="Also write the leaderboard: .html (a "
                                                      "page with the table and plots), .csv or .md.")) -> None:
    """Run meme benchmarks (`memegauge eval --list` names them; MemeQA included) on models."""
    from memegauge.benchmarks.kit.entries import eval_entries  # lazy: the registry when the command runs
    from memegauge.clikit import console, finish_all, out, print_commands, safe, settings, use_budget  # lazy
    from memegauge.errors import InputError  # lazy: as above

    if list_:  # `--list NAME…` (or `--suite S`): those alone; an unknown name is refused as a run of it would be
        _list(out, _chosen(eval_entries(), names, suite) if names or suite else eval_entries())
        return
    chosen = _chosen(eval_entries(), names or [], suite)
    if out_path is not None and out_path.suffix.lower() not in OUT_SUFFIXES:  # refused before any run
        raise InputError(f"unknown leaderboard format {out_path.suffix!r}", "--out",
                         "end the file name in .html, .csv or .md")
    if not model:
        raise InputError("no model named", "--model", "name a model of the registry: --model M (repeatable)")
    several = len(chosen) > 1  # --data then holds a folder per benchmark (also when all but one are skipped)
    missing = {entry.name: why for entry in chosen if (why := _missing(entry, data, several))}
    absent = "data not installed" if data is None else f"no folder of theirs in --data {data}"
    uncatalogued = {e.name for e in chosen if e.data is not None and missing.get(e.name) == _NEEDS_DATA.format(
        data=e.data)}
    chosen = [entry for entry in chosen if entry.name not in missing]
    if missing and (suite is None or not chosen) and set(missing) == uncatalogued:  # nothing to install: one line
        raise InputError(f"the data of {', '.join(missing)} is in no data catalogue, so there is no installed copy "
                         "to read", "eval", f"give its release folder: memegauge eval {' '.join(missing)} --data DIR "
                         "(docs/benchmarks.md)")
    if missing and suite is not None and chosen:  # said once in full, under the leaderboard (`print_board`)
        console.print(f"[yellow]skipping[/] {', '.join(missing)} ({safe(absent)}: the leaderboard lists the commands "
                      "that install them)", highlight=False)
    else:  # nothing will run: each one's lines now, then the refusal
        for name, why in missing.items():
            label = "skipped" if suite is not None else "not installed"
            print_commands(console, f"{name}: {why}", lead=f"[yellow]{label}:[/] ")
    if missing and (suite is None or not chosen) and data is not None:  # a --data folder, not the catalogue
        raise InputError(f"--data {data} holds no folder for {', '.join(missing)}", "--data",
                         "put each benchmark's release in DIR/NAME (docs/benchmarks.md), or leave out --data to read "
                         "the copies `memegauge data` installed")
    if missing and (suite is None or not chosen):
        raise InputError(f"the data of {', '.join(missing)} is not installed", "eval",
                         "install it with the line(s) above" + (", or leave those benchmarks out" if chosen else ""))
    s = settings(ctx)
    planned = _planned(s, chosen, list(dict.fromkeys(model)), _splits(split or [], chosen), limit, seed, data,
                       _sets(config, sets, chosen), run, several)
    if dry:
        _dry(s, planned)
        return
    use_budget(budget)
    if not skip_preflight:  # every model of every run checked once, then asked whether it returns log-probabilities
        _preflight(s, planned)
        _logprob_preflight(s, planned)
    import asyncio  # lazy: `memegauge --help` imports no asyncio

    runs = asyncio.run(_run_all(s, planned))
    store = s.store()
    found = suite_board(store, runs, skipped=list(missing.items()),
                        title=f"MemeGauge {'suite ' + suite if suite else 'benchmarks'}: "
                              f"{', '.join(e.name for e in chosen)}")
    print_board(out, found)
    if out_path is not None:
        from memegauge.files import write_text_atomic  # lazy: only when a file is written

        write_text_atomic(out_path, board_page(found, out_path.suffix.lower()))
    finish_all(store, runs, max_failure_rate)
    if missing:
        console.print(f"[yellow]skipped[/] ({safe(absent)}): {', '.join(missing)}", highlight=False, soft_wrap=True)
    if found.warnings:  # most answers unreadable: the figures measure the output format (as `qa eval`: exit 3)
        said = ", ".join(w.split(": ", 1)[0] for w in found.warnings)
        console.print("[red]unreadable:[/] " + safe(f"most answers of {said} could not be read: their figures measure "
                                                   "the output format, not the model (the WARNING above says what to "
                                                   "check; exit 3)"), highlight=False, soft_wrap=True)
        raise typer.Exit(UNREADABLE_EXIT)
    if missing:
        raise typer.Exit(SKIPPED_EXIT)


def _splits(given: list[str], chosen: list) -> dict[str | None, str]:
    """`--split SPLIT` (key None: every benchmark that has it) and `--split NAME=SPLIT` (that benchmark's)."""
    from memegauge.errors import InputError

    out: dict[str | None, str] = {}
    names = {entry.name for entry in chosen}
    for value in given:
        name, _, split = value.rpartition("=")
        if name and name not in names:
            raise InputError(f"--split {value}: {name!r} is not among the benchmarks run", "--split",
                             f"use NAME=SPLIT with one of: {', '.join(sorted(names))}")
        out[name or None] = split
    return out


def _sets(config: Path | None, sets: list[str] | None, chosen: list) -> dict[str, Any]:
    """`-c` then `-o` (later wins): config keys for the chosen benchmarks; a key none of them has is refused."""
    import yaml

    from memegauge.clikit import overrides
    from memegauge.errors import InputError

    given: dict[str, Any] = {}
    if config is not None:
        try:
            given = yaml.safe_load(config.read_text(encoding="utf-8")) or {}
        except (OSError, yaml.YAMLError) as exc:
            raise InputError(f"cannot read the config: {exc}", str(config), "give a YAML file of config keys") from None
        if not isinstance(given, dict):
            raise InputError("the config is not a mapping of keys", str(config), "write `key: value` lines")
    given = {**given, **overrides(sets)}
    known = set().union(*(entry.keys() for entry in chosen)) if chosen else set()
    unknown = sorted(set(given) - known)
    if unknown:
        raise InputError(f"no chosen benchmark has the config key(s) {', '.join(unknown)}", "-o/-c",
                         f"use some of: {', '.join(sorted(known))}")
    return given


def _missing(entry, data: Path | None, several: bool) -> str | None:
    """Why `entry`'s data is not at hand, with the command that installs it; None when it is (or when only its
    run's own input check can tell: a `--data` folder for one benchmark, a MemeGauge without the catalogue)."""
    if data is not None:
        folder = data / entry.name
        return None if not several or folder.is_dir() else _no_folder(entry, folder)
    if entry.data is None:
        return None
    try:
        from memegauge.data.catalogue import entry as catalogue_entry  # lazy: optional for --data runs
        from memegauge.data.store import missing_sources
    except ImportError:
        return None
    from memegauge.errors import InputError  # lazy: as in eval_command

    try:
        absent = [name for name in (entry.data, *catalogue_entry(entry.data).needs) if missing_sources(name)]
    except InputError:  # not a catalogue name: nothing `memegauge data` can install; only --data reads it
        return _NEEDS_DATA.format(data=entry.data)
    if not absent:
        return None
    commands = [line for name in absent for line in install_lines(name)]
    return (f"data set{'s' if len(absent) > 1 else ''} {', '.join(map(repr, absent))} "
            f"{'are' if len(absent) > 1 else 'is'} not installed; install with:\n" + "\n".join(
                f"    {line}" for line in commands))


_NEEDS_DATA = ("its data set {data!r} is in no data catalogue (`memegauge data list`), so there is no installed copy "
               "to read: give its release folder with --data DIR (docs/benchmarks.md)")
"""Why a benchmark whose `data:` names no catalogue entry (a third-party one, say) cannot run without `--data`."""


def _no_folder(entry, folder: Path) -> str:
    """Why a `--data` folder lacks `entry`, then the commands that help, one per line (shell comments saying what
    each is for): the ones that install its data set (or find its installed copy), else the folder to make."""
    from memegauge.files import shell_command  # lazy: as in eval_command

    lines: list[str] = []
    if entry.data is not None:
        try:
            lines = install_lines(entry.data) or [
                f"{shell_command('memegauge', 'data', 'path', entry.data)}  # the installed copy: leave out --data "
                "to read it"]
        except Exception:  # noqa: BLE001 — no catalogue (or not its name): the folder to make instead
            lines = []
    lines = lines or [f"{shell_command('mkdir', '-p', str(folder))}  # then put its release there "
                      "(docs/benchmarks.md)"]
    return (f"no folder {folder}: put its release there, or leave out --data to read `memegauge data`'s copy; "
            "commands:\n" + "\n".join(f"    {line}" for line in lines))


def install_lines(name: str) -> list[str]:
    """The commands that install data set `name`, one per line (`memegauge data`'s own)."""
    from memegauge.data.cli import install_lines as lines  # lazy: the data catalogue only when asked

    return lines(name)


def _list(out, found) -> None:
    """One line per benchmark (its splits, default, tasks, suites, data set and whether it is installed); the same
    names `memegauge data list` marks as evaluated by `eval`. Under a benchmark whose data set is not installed, the
    commands that install it, one pasteable command per line (a copy you must request: where, as a shell comment)."""
    from memegauge.clikit import print_commands  # lazy: as in eval_command

    for entry in found:
        why = _missing(entry, None, True)
        uncatalogued = entry.data is not None and why == _NEEDS_DATA.format(data=entry.data)
        commands = install_lines(entry.data) if entry.data and why and not uncatalogued else []
        data = (f"data {entry.data}: " + ("installed" if why is None else "in no data catalogue: run it with "
                                          "--data DIR (its release folder)" if uncatalogued
                                          else "not installed; install with:")
                if entry.data else "")
        print_commands(out, f"{entry.name}: {entry.title} — splits {', '.join(entry.splits)} (default {entry.split}); "
                       f"tasks {entry.tasks}; suites {', '.join(entry.suites)}; {data}")  # prose: wraps
        if commands:  # never wrapped; a command's comment on its own lines before it
            print_commands(out, "\n".join(f"    {command}" for command in commands))


def _chosen(found, names: list[str], suite: str | None):
    from memegauge.errors import InputError  # lazy: as in eval_command

    by_name = {entry.name: entry for entry in found}
    if suite is not None:
        if names:
            raise InputError("both benchmark names and --suite given", "eval", "give names or --suite, not both")
        members = [entry for entry in found if suite in entry.suites]
        if not members:
            raise InputError(f"no benchmark is in suite {suite!r}", "--suite",
                             f"use one of: {', '.join(sorted({s for e in found for s in e.suites}))}")
        return members
    unknown = [n for n in names if n not in by_name]
    if unknown:
        from memegauge.methods import BENCHMARKS  # a declared benchmark that failed to load: its own message

        for name in unknown:
            BENCHMARKS.get(name)  # raises the load error (named, with its fix) rather than "unknown"
    if unknown or not names:
        raise InputError(f"unknown benchmark {', '.join(unknown)}" if unknown else "no benchmark named", "eval",
                         f"name one of: {', '.join(by_name)} (or --suite memes); `memegauge eval --list` lists them")
    return [by_name[n] for n in dict.fromkeys(names)]


def _planned(s, chosen, models: list[str], split, limit, seed, data, sets, run: str | None,
             several: bool | None = None) -> list:
    """[(entry, [(config, `Checked`, run name)])]: every run's inputs checked before the first starts."""
    from memegauge.benchmarks.kit.entries import EvalOptions

    planned = []
    for entry in chosen:
        folder = data if data is None or not (len(chosen) > 1 if several is None else several) else data / entry.name
        mine = {k: v for k, v in sets.items() if k in entry.keys()}
        runs = []
        for m in models:
            cfg = entry.config(EvalOptions(model=m, split=split.get(entry.name, split.get(None)), limit=limit,
                                           seed=seed, data=folder, sets=mine,
                                           only=len(chosen) == 1 or entry.name in split))
            checked = entry.method().check(cfg, s.registry())
            runs.append((cfg, checked, _name(run, entry, m, len(chosen), len(models))
                         or entry.run_name(cfg, checked.inputs)))
        planned.append((entry, runs))
    return planned


def _name(run: str | None, entry, model: str, benchmarks: int, models: int) -> str | None:
    """`--run NAME`: the run's name (one run), else NAME-<benchmark>-<model> for what varies."""
    if run is None:
        return None
    return "-".join([run] + ([entry.name] if benchmarks > 1 else []) + ([model] if models > 1 else []))


def _dry(s, planned) -> None:
    from memegauge.clikit import dry_run

    for entry, runs in planned:
        for cfg, checked, name in runs:
            dry_run(s, name, entry.plan(cfg, checked.inputs))


def _preflight(s, planned) -> None:
    """The preflight of every model the runs call (`memegauge.engine.preflight`), once for all benchmarks."""
    from memegauge.clikit import preflight

    checked = [c for _, runs in planned for _, c, _ in runs]
    preflight(s, list(dict.fromkeys(m for c in checked for m in c.models)),
              list(dict.fromkeys(m for c in checked for m in c.pictures)))


def _logprob_preflight(s, planned) -> None:
    """Before the run: each model whose benchmarks need log-probabilities (AUROC) is asked one tiny question with
    them (cached in the store); a server that returns none is named, with the fix, and the figure will say so."""
    from memegauge.benchmarks.kit.probe import without_logprobs
    from memegauge.clikit import console, safe

    needing = {}
    for entry, runs in planned:
        if entry.logprobs():
            for cfg, _, _ in runs:
                needing.setdefault(cfg.model, []).append(entry.name)
    import asyncio  # lazy: `memegauge --help` imports no asyncio

    for model in asyncio.run(without_logprobs(s.registry(), list(needing), s.store)):
        console.print(safe(f"note: the server of model {model!r} returns no log-probabilities: AUROC of "
                           f"{', '.join(needing[model])} will not be computed (the other figures will)."),
                      highlight=False, soft_wrap=True)
        console.print(safe("  fix: serve it where chat completions return `logprobs` (vLLM, SGLang, OpenAI's API)"),
                      highlight=False, soft_wrap=True)


async def _run_all(s, planned) -> list[str]:
    from memegauge.run_path import run_checked  # lazy: the engine when a run is made

    names = []
    for entry, runs in planned:  # the preflight was made for all of them (`_preflight`), unless skipped
        results = await run_checked(entry.method(), [(cfg, name) for cfg, _, name in runs], store=s.store,
                                    registry=s.registry(), progress=s.progress, preflight=False)
        names += [r.name for r in results]
    return names


def suite_board(store, runs: list[str], skipped: list[tuple[str, str]] = (), title: str = "MemeGauge benchmarks"):
    """The suite leaderboard of stored eval runs (`memegauge.report.leaderboard.Board`), read from the store only."""
    from memegauge.benchmarks.kit.entries import entry_of_method
    from memegauge.report import build_report
    from memegauge.report.headline import headline_rows, iso_date
    from memegauge.report.leaderboard import Board, BoardLine, not_computed, not_computed_line

    lines: dict[tuple[str, str, str, str], BoardLine] = {}
    asked: dict[tuple[str, str, str], dict[str, str]] = {}
    described, warnings = [], []
    found = []
    for name in runs:
        report = build_report(store, name)
        config = report["run"].get("config") or {}
        entry = entry_of_method(report["run"]["method"], config)
        rows = headline_rows(report) + (entry.more_rows(report) if entry is not None else [])
        if entry is not None and rows:
            found.append((name, report, entry, entry.split_of(config), rows))
            if warning := entry.unreadable(report):
                warnings.append(f"{name}: {warning}")
    # one model with two runs of one benchmark and split (a --limit run beside the full one): a column for each run
    seen: dict[tuple[str, str, str], set[str]] = {}
    for name, _, entry, split, rows in found:
        for r in rows:
            seen.setdefault((entry.name, split, r.model), set()).add(name)
    for name, report, entry, split, rows in found:
        for r in rows:
            column = r.model if len(seen[(entry.name, split, r.model)]) == 1 else f"{r.model} ({name})"
            key = (entry.name, split, entry.task_of(r.group), r.figure)
            line = lines.setdefault(key, BoardLine(*key, cells={}, published=entry.published(split, key[2], r.figure)))
            line.cells[column] = r
            for task, said in (report.get("asked") or {}).items():  # asked n of N, each reason left out (docs)
                if task == key[2]:
                    asked.setdefault((entry.name, split, task), {})[column] = said
        described.append({"name": name, "method": report["run"]["method"], "status": report["run"]["status"],
                          "date": iso_date(report["run"].get("created")), "models": sorted({r.model for r in rows})})
    notes = [not_computed_line(*found) for found in not_computed(lines.values())]
    models = list(dict.fromkeys(m for line in lines.values() for m in line.cells))
    return Board(title=title, models=models, lines=list(lines.values()), runs=described, skipped=list(skipped),
                 notes=notes, warnings=warnings, asked=asked)


def board_page(board, suffix: str) -> str:
    """The leaderboard as a page (.html), CSV or Markdown."""
    from memegauge.report import leaderboard  # lazy: as in eval_command
    from memegauge.errors import InputError  # lazy: as in eval_command

    if suffix == ".csv":
        return leaderboard.board_csv(board)
    if suffix == ".md":
        return leaderboard.board_markdown(board)
    if suffix not in (".html", ".htm"):
        raise InputError(f"unknown leaderboard format {suffix!r}", "--out", "end the file name in .html, .csv or .md")
    from memegauge.report.pages import board_page as html  # lazy: jinja when a page is written

    return html(board)


WIDE = 140  # columns from which the published figures are a column of each table (else lines below it)


def print_board(out, board) -> None:
    """The leaderboard in the terminal: a table per benchmark and split (task, metric, a column per model, and the
    published figures: a column on a wide terminal, lines below the table on a narrow one); then each figure not
    computed (reason and fix) and each skipped benchmark (with the line that installs it)."""
    from rich.table import Table  # lazy: only when printing

    from memegauge.clikit import print_commands, safe  # lazy: as in eval_command
    from memegauge.report.leaderboard import asked_lines, board_cell, few_published

    wide = out.width >= WIDE
    sections: dict[tuple[str, str], list] = {}
    for line in board.lines:
        sections.setdefault((line.benchmark, line.split), []).append(line)
    out.print(safe(f"{board.title} — 95% intervals and n; published: the papers' figures (their n)"),
              highlight=False)
    for (benchmark, split), lines in sections.items():
        table = Table("task", "metric", *map(safe, board.models), *(["published (paper's n)"] if wide else []),
                      title=safe(f"{benchmark} · {split}"), title_justify="left")
        for line in lines:
            table.add_row(safe(line.task), safe(line.metric),
                          *(safe(board_cell(line.cells.get(m))) for m in board.models),
                          *([safe(few_published(line.published))] if wide else []))
        out.print(table)
        for said in asked_lines(board, benchmark, split):  # what was asked of the split, and what was left out why
            out.print(safe(f"  {said}"), highlight=False)  # prose: wraps
        if not wide:
            for line in lines:
                if line.published:
                    out.print(safe(f"  published, {line.task} {line.metric}: {few_published(line.published)}"),
                              highlight=False)
    for note in board.notes:
        out.print(safe(f"not computed: {note}"), highlight=False)
    for warning in board.warnings:
        out.print(safe(f"WARNING: {warning}"), highlight=False)
    for name, why in board.skipped:  # the commands that install it never wrapped, their comments before them
        print_commands(out, f"skipped: {name}: {why}")


def compared_suite_board(store, reports: list[dict]):
    """The suite leaderboard of these reported runs when every one is a benchmark run `eval` makes (MemeQA's and
    the kit's): a row per benchmark, split, task and metric, a column per model. None when any run is of another
    kind (AdamMeme, Arena, a MemeQA build). `compare` asks for it through the registry's providers
    (`memegauge.registry.SUITE_BOARD`)."""
    from memegauge.benchmarks.kit.entries import entry_of_method

    if any(entry_of_method(r["run"]["method"], r["run"].get("config") or {}) is None for r in reports):
        return None
    names = [r["run"]["name"] for r in reports]
    return suite_board(store, names, title=f"MemeGauge comparison (benchmarks: "
                                           f"{', '.join(dict.fromkeys(r['run']['method'] for r in reports))})")
